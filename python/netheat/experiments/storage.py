"""The ``sinbad`` scenario kind: network-aware replica placement.

One point is the Sinbad paper's trace-driven simulation (SIGCOMM'13,
sections 7.1-7.3) as far as the public trace allows: the shuffles of the
Facebook coflow trace are simulated once, alone, and their per-second rate on
every rack link becomes a background that placement cannot change (it lowers
the capacity left to writes); 256 MiB block writes arrive at the paper's 4 per
second. The rack-aware ``uniform`` default (immediate decisions) and the
policy under test (``sinbad`` by default, decision interval ``q`` = 10 s with
OPT' order) write the same blocks; block writes are paired, so speedups and
the faster/same/slower split are per block. A third run keeps ``q`` and frees
the writers' uplinks (the paper's optimistic bound). Imbalance is the
absolute decrease of the median Cv of 10-s rack-link utilizations, uplinks
and downlinks separately. Everything heavy happens in Rust
(``netheat._netheat.run_point``, which also declares the parameters); see
``crates/netheat-repro/src/sinbad.rs`` for the setup and its
sources.
"""

from __future__ import annotations

from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    ScenarioKind,
    register_kind,
    register_metric,
)

SINBAD_VALUES = (
    "block_write_speedup",
    "block_write_speedup_with_wait",
    "block_write_speedup_optimistic",
    "blocks_faster_pct",
    "blocks_same_pct",
    "blocks_slower_pct",
    "median_cv_decrease_up",
    "median_cv_decrease_down",
    "median_cv_up_uniform",
    "median_cv_up_policy",
    "median_cv_down_uniform",
    "median_cv_down_policy",
    "median_cv_up_background",
    "median_cv_down_background",
    "disk_usage_std_ratio",
    "disk_usage_std_increase_pct",
    "storage_imbalance_pct",
    "mean_block_write_s_uniform",
    "mean_block_write_s_policy",
    "blocks",
    "blocks_unpaired",
    "block_requests_per_s",
    "placement_failures",
    "background_down_util_mean",
    "background_down_floor_pct",
    "background_p95_above_75_pct",
    "write_to_shuffle_bytes",
    "block_write_speedup_q0",
    "block_write_speedup_q1",
)


run_sinbad = points.runner("sinbad")
"""Run one ``sinbad`` point (in Rust, ``netheat._netheat.run_point``)."""

SINBAD = register_kind(
    ScenarioKind(
        name="sinbad",
        run_point=run_sinbad,
        params=points.params("sinbad"),
        check=points.check("sinbad"),
        values=SINBAD_VALUES,
        tables=("blocks",),
        description="Sinbad network-balanced replica placement against the uniform rack-aware default",
    )
)

for _m in (
    MetricKind(
        "block_write_speedup",
        "x",
        "mean block write time (from placement) of uniform over the policy's at q (paired blocks)",
    ),
    MetricKind(
        "block_write_speedup_with_wait",
        "x",
        "block_write_speedup with the policy's write times from the request (the wait for q included)",
    ),
    MetricKind(
        "block_write_speedup_optimistic",
        "x",
        "block_write_speedup of the policy at q with no bottleneck at sources (writer uplinks left out)",
    ),
    MetricKind("blocks_faster_pct", "%", "blocks written >5% faster than under uniform"),
    MetricKind("blocks_same_pct", "%", "blocks written within 5% of uniform's time"),
    MetricKind("blocks_slower_pct", "%", "blocks written >5% slower than under uniform"),
    MetricKind(
        "median_cv_decrease_up",
        "Cv",
        "median Cv of the 10-s rack uplink utilizations, uniform minus the policy (absolute)",
    ),
    MetricKind(
        "median_cv_decrease_down",
        "Cv",
        "median Cv of the 10-s rack downlink utilizations, uniform minus the policy (absolute)",
    ),
    MetricKind("disk_usage_std_ratio", "x", "std of bytes per host, policy over uniform"),
    MetricKind(
        "disk_usage_std_increase_pct",
        "%",
        "std of bytes per host, policy minus uniform, as a share of a host's capacity",
    ),
    MetricKind(
        "storage_imbalance_pct", "%", "largest host deviation from the mean used fraction (of capacity)"
    ),
    MetricKind(
        "block_write_speedup_q0", "x", "block_write_speedup with decision interval q = 0 (also-q = '0s')"
    ),
    MetricKind(
        "block_write_speedup_q1", "x", "block_write_speedup with decision interval q = 1 s (also-q = '1s')"
    ),
    MetricKind(
        "background_p95_above_75_pct",
        "%",
        "10-s windows whose 95th percentile of background rack-link utilization is above 75%",
    ),
    MetricKind(
        "write_to_shuffle_bytes", "x", "cross-rack write bytes over the background's cross-rack shuffle bytes"
    ),
    MetricKind(
        "median_cv_up_background", "Cv", "median Cv of the 10-s rack uplink utilizations, background alone"
    ),
    MetricKind(
        "median_cv_down_background",
        "Cv",
        "median Cv of the 10-s rack downlink utilizations of the background alone",
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
