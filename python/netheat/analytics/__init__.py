"""Hotspot analytics: ``netheat analyze``.

Turns link-utilization and latency telemetry (from ``netheat simulate`` or
from real switches and traces, as CSV or Parquet) into the hotspot
characterization of the hotspot-aware placement paper: hotspot rates per
layer, hotspot durations, hotspots by rack type and Mixed-rack attribution
by each traffic's throughput over its provisioned capacity (§3.2), latency
inflation against utilization (Load-tolerance, Hotspot-inflation; per op,
QoS and the paper's size buckets), Hotspot-inflation against compute ratio
(Figure 12b), the share of each uplink class per utilization level (Figure
14), the QoS weighted-effective utilization (Appendix C), and imbalance /
stability of bottleneck links.

Modules:

- :mod:`netheat.analytics.io`: reading and validating telemetry lazily (Polars);
- :mod:`netheat.analytics.hotspots`: window re-aggregation, hotspots, durations, rack types;
- :mod:`netheat.analytics.latency`: latency vs utilization;
- :mod:`netheat.analytics.imbalance`: coefficient of variation and utilization stability;
- :mod:`netheat.analytics.plots`: one matplotlib figure per analysis;
- :mod:`netheat.analytics.report`: the whole pipeline, Parquet tables and the HTML report;
- :mod:`netheat.analytics.cli`: the ``analyze`` subcommand.

Every analysis is a function returning a :class:`polars.DataFrame`.
"""

from __future__ import annotations

from netheat.analytics.report import AnalysisConfig, AnalysisResult, analyze

__all__ = ["AnalysisConfig", "AnalysisResult", "analyze"]
