"""Hotspot analytics: ``netheat analyze``.

Turns link-utilization and latency telemetry (from ``netheat simulate`` or
from real switches and traces, as CSV or Parquet) into the hotspot
characterization of the hotspot-aware placement paper: hotspot rates per
layer, hotspot durations, hotspots by rack type, latency inflation against
utilization (Load-tolerance, Hotspot-inflation), requests by uplink class,
and imbalance / stability of bottleneck links.

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
