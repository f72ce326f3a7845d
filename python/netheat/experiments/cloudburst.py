"""The ``cloudburst`` scenario kind: packet-level incast under background load.

A point runs the packet-level engine (``crates/netheat-packet``) on a
leaf-spine with web-search background traffic and repeated incasts of small
messages, for one transport variant (``dctcp``, ``pias``,
``dctcp-replication``, ``mptcp``, ``cloudburst-a`` .. ``cloudburst-d``), in
Rust with the GIL released, and reports the mean and 99th percentile message
completion time (MCT) of the incast messages.
"""

from __future__ import annotations

from typing import Any

from netheat._netheat import packet_cloudburst_point
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
    )
    values = {
        "mct_mean_s": float(r["mct_mean_s"]),
        "mct_p99_s": float(r["mct_p99_s"]),
        "unfinished": float(r["unfinished"]),
        "drops": float(r["drops"]),
        "events": float(r["events"]),
    }
    return PointResult(values=values)


for _m in (
    MetricKind("mct_mean_s", "s", "mean completion time of incast messages"),
    MetricKind("mct_p99_s", "s", "99th percentile completion time of incast messages"),
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
            Param("port-buffer", "int", 150000, "switch port buffer in bytes"),
            Param("cloudburst-queue", "int", 12000, "CloudBurst queue limit in bytes"),
            Param("rto-min", "duration", 0.005, "TCP minimum retransmission timeout"),
        ),
        values=("mct_mean_s", "mct_p99_s", "unfinished", "drops", "events"),
        description="packet-level incast of small messages under web-search load, per transport variant",
    )
)
