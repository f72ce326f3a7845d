"""The ``utp`` scenario kind: a Borg-like cluster under a placement policy, simulated exactly.

A point runs ``crates/netheat-repro`` (``utp.rs``, in Rust, GIL released): jobs arrive
with tasks requesting cores and memory and carrying rate-capped network
demand to peers, the scheduler places them with ``policy``
(``bandwidth-oblivious``, ``utp`` or ``reactive-only``) and migrating
policies move tasks off hot ToRs. Every ``incident-every``-th ToR loses
``1 - incident-factor`` of its uplink halfway through. Values are measured
from the engine's exact 5-minute link telemetry after ``warmup``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from netheat._netheat import utp_cluster
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    load_topology,
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


def run_utp(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``utp`` point."""
    topo = load_topology(params)
    hours = float(params["duration"]) / 3600.0
    every = int(params["incident-every"])
    tors = list(range(0, topo.num_racks, every)) if every > 0 else []
    r = utp_cluster(
        topo,
        str(params["policy"]),
        seed,
        hours,
        cpu_load=float(params["cpu-load"]),
        bw_median_per_core=float(params["bw-median-per-core"]),
        heavy_share=float(params["heavy-share"]),
        heavy_factor=float(params["heavy-factor"]),
        estimate_sigma=float(params["estimate-sigma"]),
        missing_estimate_share=float(params["missing-estimate-share"]),
        candidates=int(params["candidates"]),
        incident_at_s=float(params["duration"]) / 2.0,
        incident_tors=tors,
        incident_factor=float(params["incident-factor"]),
        warmup_s=float(params["warmup"]),
    )
    placed = max(int(r["net_intensive_placements"]), 1)
    values = {k: float(r[k]) for k in VALUES if k in r}
    values["net_intensive_on_hot_share"] = float(r["net_intensive_on_hot"]) / placed
    names = [str(q[0]) for q in r["queries"]]
    for name, _count, _mean, p95 in r["queries"]:
        values[f"query_p95_{name}_s"] = float(p95)
    cols: list[Any] = list(zip(*r["series"], strict=True)) if r["series"] else [()] * 5
    series = pa.table(
        {
            "window_start_s": pa.array(cols[0], pa.float64()),
            "hot_tor_share": pa.array(cols[1], pa.float64()),
            "p98_tor_util": pa.array(cols[2], pa.float64()),
            "migrations": pa.array(cols[3], pa.int64()),
            "warmup": pa.array(cols[4], pa.bool_()),
        }
    )
    lat = r["query_latencies"]
    queries = pa.table(
        {
            "query": pa.array([names[k] for k, _, _ in lat], pa.string()),
            "start_s": pa.array([s for _, s, _ in lat], pa.float64()),
            "latency_s": pa.array([d for _, _, d in lat], pa.float64()),
        }
    )
    notes = []
    if r["estimate_fallbacks"]:
        notes.append(
            f"{r['estimate_fallbacks']} placements had no network-demand estimate and used the "
            "task's observed usage instead"
        )
    if r["pending"]:
        notes.append(f"{r['pending']} tasks still pending at the end: {r['pending_reason']}")
    return PointResult(tables={"series": series, "queries": queries}, values=values, notes=notes)


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

UTP = register_kind(
    ScenarioKind(
        name="utp",
        run_point=run_utp,
        params=(
            Param(
                "topology", "path", help="datacenter TOML file (hosts need cores and memory)", required=True
            ),
            Param("policy", "str", "bandwidth-oblivious", f"placement policy: {', '.join(POLICIES)}"),
            Param("duration", "duration", 6 * 3600.0, "simulated time"),
            Param("warmup", "duration", 3600.0, "time excluded from the metrics"),
            Param("cpu-load", "float", 0.6, "share of all cores requested by running tasks"),
            Param("bw-median-per-core", "bandwidth", 10e6, "median network demand per requested core"),
            Param("heavy-share", "float", 0.05, "share of jobs heavy-factor times heavier"),
            Param("heavy-factor", "float", 12.0, "demand multiplier of heavy jobs"),
            Param("estimate-sigma", "float", 0.3, "sigma of ln(estimate / actual demand)"),
            Param("missing-estimate-share", "float", 0.0, "share of jobs without a demand estimate"),
            Param("candidates", "int", 32, "candidate servers sampled per placement"),
            Param("incident-every", "int", 10, "every k-th ToR loses uplink capacity halfway (0: none)"),
            Param("incident-factor", "float", 0.5, "uplink capacity those ToRs keep"),
        ),
        values=VALUES,
        tables=("series", "queries"),
        figures=figures,
        description="a Borg-like cluster with network demand under a placement policy (UTP and baselines)",
    )
)
