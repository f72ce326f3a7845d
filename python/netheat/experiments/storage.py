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
(``netheat._netheat.sinbad_point``); see
``crates/netheat-repro/src/sinbad.rs`` for the setup and its
sources.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from netheat import _netheat
from netheat._netheat import parse_duration
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
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


def run_sinbad(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``sinbad`` point (uniform and the policy, paired per block)."""
    out = _netheat.sinbad_point(
        policy=params["policy"],
        seed=seed,
        racks=params["racks"],
        hosts_per_rack=params["hosts-per-rack"],
        host_bps=params["host-link"],
        oversubscription=params["oversubscription"],
        disk_write_bps=None if params["in-memory"] else params["disk-write"],
        block_bytes=params["block-size"],
        replicas=params["replicas"],
        faults=params["fault-domains"] - 1,
        duration_s=params["duration"],
        drain_s=params["drain"],
        block_requests_per_s=params["block-requests-per-s"],
        mean_file_blocks=params["mean-file-blocks"],
        shuffle_scale=params["shuffle-scale"],
        max_mapper_racks=params["max-mapper-racks"],
        delta_s=params["delta"],
        alpha=params["alpha"],
        threshold_bytes=params["threshold"],
        q_s=params["q"],
        also_q_s=[parse_duration(q.strip()) for q in str(params["also-q"]).split(",") if q.strip()],
        optimistic=params["optimistic"],
        report_loss=params["report-loss"],
        balance_threshold=params["balance-threshold"],
    )
    values = {k: float(v) for k, v in out["values"].items()}
    table = pa.table({k: out[k] for k in ("uniform_s", "policy_s", "bytes")})
    return PointResult(tables={"blocks": table}, values=values)


SINBAD = register_kind(
    ScenarioKind(
        name="sinbad",
        run_point=run_sinbad,
        params=(
            Param(
                "policy",
                "str",
                "sinbad",
                "placement policy compared against uniform: sinbad, ccp, ccp-balance or uniform",
            ),
            Param("racks", "int", 150, "racks"),
            Param("hosts-per-rack", "int", 20, "hosts per rack"),
            Param("host-link", "bandwidth", 1e9, "host link capacity"),
            Param("oversubscription", "float", 10.0, "core-to-rack oversubscription"),
            Param("disk-write", "bandwidth", 400e6, "disk write throughput"),
            Param("in-memory", "bool", False, "no disk cap (writes to memory)"),
            Param("block-size", "bytes", 256 * 2**20, "block size"),
            Param("replicas", "int", 3, "replicas per block"),
            Param("fault-domains", "int", 2, "racks the replicas span"),
            Param("duration", "duration", 3600.0, "simulated time of arrivals"),
            Param("drain", "duration", 600.0, "extra time for writes to finish"),
            Param(
                "block-requests-per-s",
                "float",
                4.0,
                "block write requests per second (Sinbad section 7.2: 4 large blocks per second)",
            ),
            Param(
                "mean-file-blocks",
                "float",
                1.47,
                "mean blocks per file, geometric on 1, 2, ... (1.47 from section 4.3's 32% full-size blocks)",
            ),
            Param("shuffle-scale", "float", 1.0, "scale of the replayed shuffle bytes (the background)"),
            Param(
                "max-mapper-racks",
                "int",
                6,
                "background simulation: aggregated mapper flows per reducer rack (weighted)",
            ),
            Param("delta", "duration", 1.0, "Sinbad report interval Delta"),
            Param("alpha", "float", 0.2, "Sinbad EWMA weight"),
            Param("threshold", "bytes", 10e6, "blocks below this use the default policy"),
            Param(
                "q",
                "duration",
                10.0,
                "decision interval of the policy run, OPT' order (0: immediate; paper's simulation: 10 s)",
            ),
            Param(
                "also-q",
                "str",
                "",
                "more decision intervals run against the same uniform baseline, e.g. '0s,1s' "
                "(values block_write_speedup_q0, ..._q1)",
            ),
            Param(
                "optimistic",
                "bool",
                True,
                "also run the policy at q with no bottleneck at sources (block_write_speedup_optimistic)",
            ),
            Param("report-loss", "float", 0.0, "probability a host report is missing"),
            Param("balance-threshold", "float", 0.1, "storage-balance threshold (fraction of capacity)"),
        ),
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


def run_ccp(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``ccp`` point (uniform and the policy on the same chunk ops)."""
    v = _netheat.ccp_point(
        policy=params["policy"],
        seed=seed,
        racks=params["racks"],
        hosts_per_rack=params["hosts-per-rack"],
        client_racks=params["client-racks"],
        host_bps=params["host-link"],
        oversubscription=params["oversubscription"],
        class_factor=(params["high-factor"], 1.0, params["low-factor"]),
        uplink_spread=params["uplink-spread"],
        load=params["load"],
        uplink_load=params["uplink-load"],
        read_fraction=params["read-fraction"],
        chunk_min=params["chunk-min"],
        chunk_max=params["chunk-max"],
        prepopulate=params["prepopulate"],
        prepopulate_policy=params["prepopulate-policy"] or None,
        read_written=params["read-written"],
        write_fanout=params["write-fanout"],
        ops=params["ops"],
        replicas=params["replicas"],
        seek_s=params["disk-access"],
        disk_bytes_per_s=params["disk-rate"],
        disks_per_host=params["disks-per-host"],
        capacity_bytes=params["capacity"],
        balance_threshold=params["balance-threshold"],
        rebalance_every_ops=params["rebalance-every"],
        rebalance_target=params["rebalance-target"],
    )
    return PointResult(values={k: float(x) for k, x in v.items()})


CCP = register_kind(
    ScenarioKind(
        name="ccp",
        run_point=run_ccp,
        params=(
            Param(
                "policy",
                "str",
                "ccp",
                "placement policy compared against uniform: ccp, ccp-balance, sinbad or uniform",
            ),
            Param(
                "racks", "int", 30, "storage racks (classes cycle High, Medium, Low unless uplink-spread > 0)"
            ),
            Param("hosts-per-rack", "int", 10, "hosts per rack"),
            Param("client-racks", "int", 10, "client racks (High uplinks)"),
            Param("host-link", "bandwidth", 10e9, "host link capacity"),
            Param("oversubscription", "float", 4.0, "oversubscription of a Medium rack"),
            Param("high-factor", "float", 4.0, "High uplink per TB relative to Medium"),
            Param("low-factor", "float", 0.25, "Low uplink per TB relative to Medium"),
            Param(
                "uplink-spread",
                "float",
                0.0,
                "largest / smallest uplink per TB over the storage racks, spaced evenly around the "
                "guideline (Figure 9: 2); classes then come from the datacenter model (0: the factors)",
            ),
            Param("load", "float", 0.7, "offered throughput as a fraction of the summed smallest uplinks"),
            Param(
                "uplink-load",
                "float",
                0.0,
                "if > 0: mean utilization of the smallest storage uplink under uniform (reads and "
                "write hops leaving storage racks); replaces load",
            ),
            Param("read-fraction", "float", 0.7, "fraction of ops that read"),
            Param("chunk-min", "bytes", 100e3, "smallest chunk"),
            Param("chunk-max", "bytes", 1e6, "largest chunk"),
            Param("prepopulate", "int", 20000, "chunks stored before the run"),
            Param(
                "prepopulate-policy",
                "str",
                "",
                "policy that placed the chunks stored before the run (empty: the policy under test)",
            ),
            Param(
                "read-written",
                "bool",
                False,
                "reads pick among every chunk stored so far (else the prepopulated ones only)",
            ),
            Param(
                "write-fanout",
                "bool",
                False,
                "writes go from the client to each replica (else a pipeline through the replicas)",
            ),
            Param("ops", "int", 100000, "chunk reads and writes"),
            Param("replicas", "int", 3, "replicas, one per rack"),
            Param("disk-access", "duration", 100e-6, "disk positioning time per op (seek + rotation)"),
            Param("disk-rate", "float", 1e9, "disk transfer rate, bytes/s"),
            Param("disks-per-host", "int", 1, "disks per storage host (a FIFO each)"),
            Param("capacity", "bytes", 1e9, "storage per host"),
            Param("balance-threshold", "float", 0.1, "storage-balance threshold (fraction of capacity)"),
            Param(
                "rebalance-every",
                "int",
                1000,
                "ops between storage-balance checks of the rebalancer; it acts when a host is past the "
                "threshold or would be by the next check (its moves are flows; 0: off)",
            ),
            Param(
                "rebalance-target",
                "float",
                0.08,
                "a triggered rebalancer moves chunks until every host is this close to the mean "
                "(fraction of capacity, at most the threshold)",
            ),
        ),
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
