"""The ``utp`` scenario kind: a Borg-like cluster under a placement policy, simulated exactly.

A point runs ``crates/netheat-repro`` (``utp.rs``, in Rust, GIL released): jobs arrive
with tasks requesting cores and memory and carrying rate-capped network
demand to peers, the scheduler places them with ``policy``
(``bandwidth-oblivious``, ``utp`` or ``reactive-only``) and migrating
policies move tasks off hot ToRs. Every ``incident-every``-th ToR loses
``1 - incident-factor`` of its uplink halfway through. Values are measured
from the engine's exact 5-minute link telemetry after ``warmup``. The
parameters are ``netheat_repro::utp::UtpParams``: every key of the cluster
run (``ClusterParams``, with the scheduler's own ``SchedulerParams``) can be
set from an experiment file.
"""

from __future__ import annotations

from pathlib import Path

from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    ScenarioKind,
    register_kind,
    register_metric,
)

POLICIES = ("bandwidth-oblivious", "reactive-only", "utp")
VALUES = (
    "hot_tor_share",
    "p98_tor_util",
    "cell_util",
    "migrations",
    "net_intensive_on_hot_share",
    "servers_used",
    "max_tasks_per_rack",
    "cpu_imbalance",
    "pending",
    "estimate_fallbacks",
    "query_p95_small_s",
    "query_p95_large_s",
)


def figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Hot-ToR share and p98 utilization over time, migrations per hour and query latency CDFs."""
    from netheat.experiments.plots import utp_figures

    return utp_figures(run_dir)


for _m in (
    MetricKind("hot_tor_share", "fraction", "share of ToR-windows (5 min, outbound) above the hot threshold"),
    MetricKind("p98_tor_util", "fraction", "98th percentile of ToR-window outbound utilization"),
    MetricKind(
        "cell_util",
        "fraction",
        "average cell-level utilization (Figure 16): compute-ToR egress over their uplink capacity",
    ),
    MetricKind("migrations", "tasks", "tasks migrated off hot ToRs"),
    MetricKind(
        "net_intensive_on_hot_share",
        "fraction",
        "share of network-intensive placements (top-decile demand) landing on a hot ToR",
    ),
    MetricKind("servers_used", "servers", "mean number of servers running at least one task"),
    MetricKind("max_tasks_per_rack", "tasks", "mean over jobs of its largest number of tasks in one rack"),
    MetricKind("cpu_imbalance", "fraction", "mean standard deviation of server CPU utilization"),
    MetricKind("pending", "tasks", "tasks that fit nowhere at the end"),
    MetricKind(
        "estimate_fallbacks", "placements", "placements without a demand estimate (observed usage used)"
    ),
    MetricKind("query_p95_small_s", "s", "p95 completion time of the small analytical queries (4 workers)"),
    MetricKind("query_p95_large_s", "s", "p95 completion time of the large analytical queries (16 workers)"),
):
    register_metric(_m, replace=True)

run_utp = points.runner("utp")
"""Run one ``utp`` point (in Rust, ``netheat._netheat.run_point``)."""

UTP = register_kind(
    ScenarioKind(
        name="utp",
        run_point=run_utp,
        params=points.params("utp"),
        check=points.check("utp"),
        values=VALUES,
        tables=("series", "queries"),
        figures=figures,
        description="a Borg-like cluster with network demand under a placement policy (UTP and baselines)",
    )
)
