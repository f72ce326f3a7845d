"""The ``cloudburst`` scenario kind: packet-level incast under background load.

A point runs the packet-level engine (``crates/netheat-repro``'s ``cloudburst.rs``) on a
leaf-spine with web-search background traffic and repeated incasts of small
messages, for one transport variant (``dctcp``, ``pias``,
``dctcp-replication``, ``mptcp``, ``cloudburst-a`` .. ``cloudburst-d``), in
Rust with the GIL released, and reports the mean and 99th percentile message
completion time (MCT) of the incast messages, pooled and per message size.

``isolation`` sets the queue treatment of the baselines' incast messages:
``priority`` (CloudBurst's strict-priority class, the fair comparison),
``small-queue`` (that class and CloudBurst's small queue) or ``none`` (class 1
with the background; only CloudBurst is isolated). Switches have a shared
buffer (Broadcom Trident+: 192 KB per 10 Gbps port, dynamic threshold
alpha = 1); the CloudBurst re-burst timeout is derived from the topology
(``cloudburst-timeout = 0``); PIAS uses its authors' web-search thresholds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from netheat._netheat import Topology, packet_cloudburst_point
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)


def run_cloudburst(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``cloudburst`` point and report MCT statistics."""
    sizes = [int(s) for s in str(params["msg-bytes"]).split(",")]
    r = packet_cloudburst_point(
        str(params["variant"]),
        int(params["racks"]),
        int(params["hosts-per-rack"]),
        int(params["spines"]),
        float(params["host-speed"]),
        float(params["uplink-speed"]),
        float(params["load"]),
        int(params["fanin"]),
        sizes,
        int(params["incasts"]),
        float(params["incast-gap"]),
        float(params["drain"]),
        seed,
        int(params["ecn-threshold"]),
        int(params["port-buffer"]),
        int(params["cloudburst-queue"]),
        float(params["rto-min"]),
        1e-6,
        str(params["isolation"]),
        int(params["shared-buffer-per-port"]),
        float(params["alpha"]),
        float(params["cloudburst-timeout"]) or None,
    )
    return PointResult(values=_values(r), tables=_tables(params, r))


def topology(params: dict[str, Any]) -> Topology:
    """The leaf-spine a point runs on (the same links, in the same order, as the engine's)."""
    return Topology.from_toml(
        "[topology]\n"
        'kind = "three-tier"\n'
        "pods = 1\n"
        f"racks-per-pod = {int(params['racks'])}\n"
        f"hosts-per-rack = {int(params['hosts-per-rack'])}\n"
        f"aggs-per-pod = {int(params['spines'])}\n"
        "spines = 0\n"
        f'host-link = "{float(params["host-speed"]):.0f}bps"\n'
        f'tor-uplink = "{float(params["uplink-speed"]):.0f}bps"\n',
        file="<cloudburst leaf-spine>",
    )


def _col(values: list[Any] | bytes, dtype: str) -> tuple[str, bytes]:
    # PyO3 hands a Vec<u8> (priorities) over as bytes.
    arr = np.frombuffer(values, dtype=np.uint8) if isinstance(values, bytes) else np.asarray(values)
    return dtype, arr.astype(np.dtype(dtype)).tobytes()


def _tables(params: dict[str, Any], r: dict[str, Any]) -> dict[str, pa.Table]:
    """``flows`` and ``links`` as the flow-level engine writes them, plus per-port ``queues``."""
    from netheat.simulate import _flows_table, links_table

    f = r["flows"]
    flows = _flows_table(
        {
            "flow_id": _col(f["flow_id"], "<u8"),
            "src": _col(f["src"], "<u4"),
            "dst": _col(f["dst"], "<u4"),
            "bytes": _col(f["bytes"], "<f8"),
            "start_s": _col(f["start_s"], "<f8"),
            "finish_s": _col(f["finish_s"], "<f8"),
            "fct_s": _col(f["fct_s"], "<f8"),
            "task_id": _col(f["task_id"], "<i8"),
            "priority": _col(f["priority"], "<i4"),
            "path_id": _col(f["path_id"], "<i8"),
        }
    )
    lk = r["links"]
    window_s = float(r["window_s"])
    links = links_table(
        topology(params),
        {
            "link": _col(lk["link"], "<u4"),
            "window": _col(lk["window"], "<u4"),
            "utilization": _col(lk["utilization"], "<f8"),
        },
        window_s,
        max(1, math.ceil(float(r["end_s"]) / window_s - 1e-9)),
    )
    queues = pa.table({k: pa.array(v) for k, v in r["ports"].items()})
    return {"flows": flows, "links": links, "queues": queues}


def _values(r: dict[str, Any]) -> dict[str, float]:
    by_size = {int(b): float(q) for b, q in r["mct_p99_by_size"].items()}
    sizes = sorted(by_size)
    nan = float("nan")
    values = {
        "mct_mean_s": float(r["mct_mean_s"]),
        "mct_p99_s": float(r["mct_p99_s"]),
        "mct_p99_small_s": by_size[sizes[0]] if sizes else nan,
        "mct_p99_large_s": by_size[sizes[-1]] if sizes else nan,
        "cloudburst_timeout_s": float(r["cb_timeout_s"]),
        "unfinished": float(r["unfinished"]),
        "drops": float(r["drops"]),
        "events": float(r["events"]),
    }
    return values


for _m in (
    MetricKind("mct_mean_s", "s", "mean completion time of incast messages"),
    MetricKind("mct_p99_s", "s", "99th percentile completion time of incast messages"),
    MetricKind("mct_p99_small_s", "s", "99th percentile completion time of the smallest incast messages"),
    MetricKind("mct_p99_large_s", "s", "99th percentile completion time of the largest incast messages"),
    MetricKind("cloudburst_timeout_s", "s", "CloudBurst re-burst timeout used"),
    MetricKind("unfinished", "messages", "incast messages not completed by the end of the run"),
    MetricKind("drops", "packets", "packets dropped in all queues"),
    MetricKind("events", "events", "packet-engine events processed"),
):
    register_metric(_m, replace=True)

CLOUDBURST = register_kind(
    ScenarioKind(
        name="cloudburst",
        run_point=run_cloudburst,
        params=(
            Param("variant", "str", "dctcp", "transport variant of the incast messages"),
            Param("racks", "int", 4, "leaf switches"),
            Param("hosts-per-rack", "int", 8, "hosts per leaf"),
            Param("spines", "int", 4, "spine switches"),
            Param("host-speed", "bandwidth", 10e9, "host link speed"),
            Param("uplink-speed", "bandwidth", 40e9, "total uplink capacity per leaf"),
            Param("load", "float", 0.3, "web-search background load (fraction of host links)"),
            Param("fanin", "int", 16, "senders per incast"),
            Param("msg-bytes", "str", "5000,93000", "incast message sizes in bytes, cycled"),
            Param("incasts", "int", 40, "number of incasts"),
            Param("incast-gap", "duration", 1e-3, "mean time between incasts"),
            Param("drain", "duration", 0.1, "simulated time after the last incast"),
            Param("ecn-threshold", "int", 30000, "ECN marking threshold in bytes"),
            Param(
                "port-buffer",
                "int",
                150000,
                "static switch port buffer in bytes (if shared-buffer-per-port = 0)",
            ),
            Param(
                "shared-buffer-per-port",
                "int",
                192000,
                "shared switch buffer per port in bytes (Trident+: 192 KB); 0 = static port buffers",
            ),
            Param("alpha", "float", 1.0, "dynamic-threshold factor of the shared buffer"),
            Param(
                "isolation",
                "str",
                "priority",
                "queue of the baselines' incast messages: priority, small-queue or none",
            ),
            Param(
                "cloudburst-timeout",
                "duration",
                0.0,
                "CloudBurst re-burst timeout; 0 = derived from the topology (worst-case RTT of a symbol)",
            ),
            Param("cloudburst-queue", "int", 12000, "CloudBurst queue limit in bytes"),
            Param("rto-min", "duration", 0.005, "TCP minimum retransmission timeout"),
        ),
        values=(
            "mct_mean_s",
            "mct_p99_s",
            "mct_p99_small_s",
            "mct_p99_large_s",
            "cloudburst_timeout_s",
            "unfinished",
            "drops",
            "events",
        ),
        tables=("flows", "links", "queues"),
        description="packet-level incast of small messages under web-search load, per transport variant",
    )
)
