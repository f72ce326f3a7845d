"""The ``sinbad`` scenario kind: network-aware replica placement.

One point runs the rack-aware ``uniform`` default and the policy under test
(``sinbad`` by default) on the same generated workload: background shuffles
replayed from the Facebook coflow trace plus write-heavy ingestion and job
outputs, on a two-tier cluster whose disks are links (concurrent writes
share them). Block writes are paired across the two runs, so speedups and
the faster/same/slower split are per block. Everything heavy happens in
Rust (``netheat._netheat.sinbad_point``); see ``crates/netheat-storage``.
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
    "blocks_faster_pct",
    "blocks_same_pct",
    "blocks_slower_pct",
    "block_write_speedup_no_source_bottleneck",
    "median_cv_reduction",
    "median_cv_uniform",
    "median_cv_policy",
    "disk_usage_std_ratio",
    "storage_imbalance_pct",
    "mean_block_write_s_uniform",
    "mean_block_write_s_policy",
    "blocks",
    "blocks_unpaired",
    "placement_failures",
    "block_write_speedup_q1",
    "block_write_speedup_q10",
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
        ingest_blocks_per_s=params["ingest-blocks-per-s"],
        max_file_blocks=params["max-file-blocks"],
        output_ratio=params["output-ratio"],
        max_mapper_racks=params["max-mapper-racks"],
        delta_s=params["delta"],
        alpha=params["alpha"],
        threshold_bytes=params["threshold"],
        q_s=params["q"],
        also_q_s=[parse_duration(q.strip()) for q in str(params["also-q"]).split(",") if q.strip()],
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
                "policy", "str", "sinbad", "placement policy compared against uniform: sinbad, ccp or uniform"
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
            Param("ingest-blocks-per-s", "float", 20.0, "ingestion rate in blocks per second"),
            Param("max-file-blocks", "int", 8, "largest ingested file in blocks"),
            Param("output-ratio", "float", 0.3, "job output bytes per shuffle byte"),
            Param("max-mapper-racks", "int", 6, "aggregated mapper flows per reducer rack (weighted)"),
            Param("delta", "duration", 1.0, "Sinbad report interval Delta"),
            Param("alpha", "float", 0.2, "Sinbad EWMA weight"),
            Param("threshold", "bytes", 10e6, "blocks below this use the default policy"),
            Param("q", "duration", 0.0, "decision interval (0: immediate)"),
            Param(
                "also-q",
                "str",
                "",
                "more decision intervals run against the same uniform baseline, e.g. '1s,10s' "
                "(values block_write_speedup_q1, ..._q10)",
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
        "block_write_speedup", "x", "mean block write time of uniform over the policy's (paired blocks)"
    ),
    MetricKind("blocks_faster_pct", "%", "blocks written >5% faster than under uniform"),
    MetricKind("blocks_same_pct", "%", "blocks written within 5% of uniform's time"),
    MetricKind("blocks_slower_pct", "%", "blocks written >5% slower than under uniform"),
    MetricKind(
        "block_write_speedup_no_source_bottleneck",
        "x",
        "block_write_speedup over blocks whose writer host/rack uplink was below 50% utilization",
    ),
    MetricKind(
        "median_cv_reduction", "fraction", "1 - median CV of rack-downlink utilization (policy / uniform)"
    ),
    MetricKind("disk_usage_std_ratio", "x", "std of bytes per host, policy over uniform"),
    MetricKind(
        "storage_imbalance_pct", "%", "largest host deviation from the mean used fraction (of capacity)"
    ),
    MetricKind(
        "block_write_speedup_q1", "x", "block_write_speedup with decision interval q = 1 s (also-q = '1s')"
    ),
    MetricKind(
        "block_write_speedup_q10", "x", "block_write_speedup with decision interval q = 10 s (also-q = '10s')"
    ),
):
    register_metric(_m)


_CCP_REDUCTIONS = tuple(
    f"p95_{what}_latency_reduction_pct{tag}"
    for tag in ("", "_read", "_write")
    for what in ("network", "total")
)
CCP_VALUES = (
    *_CCP_REDUCTIONS,
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
        load=params["load"],
        read_fraction=params["read-fraction"],
        chunk_min=params["chunk-min"],
        chunk_max=params["chunk-max"],
        prepopulate=params["prepopulate"],
        ops=params["ops"],
        replicas=params["replicas"],
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
            Param("policy", "str", "ccp", "placement policy compared against uniform"),
            Param("racks", "int", 30, "storage racks (classes cycle High, Medium, Low)"),
            Param("hosts-per-rack", "int", 10, "hosts per rack"),
            Param("client-racks", "int", 10, "client racks (High uplinks)"),
            Param("host-link", "bandwidth", 10e9, "host link capacity"),
            Param("oversubscription", "float", 4.0, "oversubscription of a Medium rack"),
            Param("high-factor", "float", 4.0, "High uplink per TB relative to Medium"),
            Param("low-factor", "float", 0.25, "Low uplink per TB relative to Medium"),
            Param("load", "float", 0.7, "offered throughput as a fraction of the summed Low uplinks"),
            Param("read-fraction", "float", 0.7, "fraction of ops that read"),
            Param("chunk-min", "bytes", 100e3, "smallest chunk"),
            Param("chunk-max", "bytes", 1e6, "largest chunk"),
            Param("prepopulate", "int", 20000, "chunks stored before the run"),
            Param("ops", "int", 100000, "chunk reads and writes"),
            Param("replicas", "int", 3, "replicas, one per rack"),
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
