"""The ``ccp`` scenario kind: ToR-capacity-aware chunk placement (the hotspot paper, NSDI'25,
section 5.2) against uniform placement on racks of mixed uplink classes; see
``crates/netheat-repro/src/ccp.rs`` for the setup and its sources.

Sinbad's simulation is a scenario experiment (``experiments/sinbad.toml`` over
``experiments/scenarios/sinbad-fb2010.toml``), not a kind of its own.
"""

from __future__ import annotations

from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    ScenarioKind,
    register_kind,
    register_metric,
)

for _m in (
    MetricKind("disk_usage_std_ratio", "x", "std of bytes per host, policy over uniform"),
    MetricKind(
        "storage_imbalance_pct", "%", "largest host deviation from the mean used fraction (of capacity)"
    ),
):
    register_metric(_m)


_CCP_REDUCTIONS = tuple(
    f"p95_{what}_latency_reduction_pct{tag}"
    for tag in ("", "_read", "_write", "_read_new")
    for what in ("network", "total")
)
_CCP_LATENCIES = tuple(
    f"p95_{what}_latency_s{tag}_{run}"
    for tag in ("", "_read", "_write", "_read_new")
    for what in ("network", "total")
    for run in ("uniform", "policy")
)
_CCP_CLASSES = ("high", "medium", "low")
_CCP_LOADS = tuple(
    f"{what}_{c}_{run}"
    for c in _CCP_CLASSES
    for what in ("read_uplink_util", "uplink_util")
    for run in ("uniform", "policy")
)
CCP_VALUES = (
    *_CCP_REDUCTIONS,
    *_CCP_LATENCIES,
    "read_new_share",
    "p95_read_network_over_total_uniform",
    "p95_read_network_over_total_policy",
    *(f"racks_{c}" for c in _CCP_CLASSES),
    *_CCP_LOADS,
    "disk_usage_std_ratio",
    "storage_imbalance_pct",
    "storage_imbalance_pct_uniform",
    "storage_imbalance_max_pct",
    "rebalance_moves",
    "rebalanced_bytes_pct",
    "rebalanced_bytes_pct_uniform",
    "placement_failures",
    "ops",
)


run_ccp = points.runner("ccp")
"""Run one ``ccp`` point (in Rust, ``netheat._netheat.run_point``)."""

CCP = register_kind(
    ScenarioKind(
        name="ccp",
        run_point=run_ccp,
        params=points.params("ccp"),
        check=points.check("ccp"),
        values=CCP_VALUES,
        tables=(),
        description="ToR-capacity-aware chunk placement (CCP) vs uniform placement on mixed uplink classes",
    )
)

for _name in _CCP_REDUCTIONS:
    register_metric(MetricKind(_name, "%", "reduction of the p95 latency, policy vs uniform (paired ops)"))
for _name in _CCP_LATENCIES:
    register_metric(MetricKind(_name, "s", "p95 latency of the ops named (network or network + disk)"))
for _c in _CCP_CLASSES:
    register_metric(MetricKind(f"racks_{_c}", "racks", f"storage racks of uplink class {_c}"))
    for _run in ("uniform", "policy"):
        register_metric(
            MetricKind(
                f"read_uplink_util_{_c}_{_run}",
                "fraction",
                f"read bytes out of the {_c}-uplink racks over their uplink capacity, {_run} run",
            )
        )
        register_metric(
            MetricKind(
                f"uplink_util_{_c}_{_run}",
                "fraction",
                f"op bytes (reads, write hops) on the {_c}-uplink racks' uplinks over their capacity, "
                f"{_run} run",
            )
        )
register_metric(MetricKind("read_new_share", "fraction", "share of reads of chunks written during the run"))
for _run in ("uniform", "policy"):
    register_metric(
        MetricKind(
            f"p95_read_network_over_total_{_run}",
            "fraction",
            f"p95 network over p95 total latency of reads, {_run} run",
        )
    )
register_metric(
    MetricKind("storage_imbalance_pct_uniform", "%", "storage_imbalance_pct of the uniform baseline")
)
register_metric(
    MetricKind(
        "storage_imbalance_max_pct",
        "%",
        "largest storage_imbalance_pct the rebalancer found at a check, before moving chunks",
    )
)
register_metric(MetricKind("rebalance_moves", "chunks", "chunk replicas the rebalancer moved"))
register_metric(
    MetricKind("rebalanced_bytes_pct", "%", "bytes the rebalancer moved, as a share of the bytes stored")
)
register_metric(
    MetricKind("rebalanced_bytes_pct_uniform", "%", "rebalanced_bytes_pct of the uniform baseline")
)
