"""The ``cloudburst`` scenario kind: packet-level incast under background load.

A point runs the packet-level engine (``crates/netheat-repro``'s ``cloudburst.rs``, which
also declares the parameters) on a
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

import pyarrow as pa

from netheat._columns import arrow_table
from netheat._netheat import Topology
from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)


def run_cloudburst(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``cloudburst`` point (in Rust) and finish its tables."""
    r = points.run("cloudburst", params, seed)
    return PointResult(values={k: float(v) for k, v in r["values"].items()}, tables=_tables(params, r))


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


def _tables(params: dict[str, Any], r: dict[str, Any]) -> dict[str, pa.Table]:
    """``flows`` and ``links`` as the flow-level engine writes them, plus per-port ``queues``."""
    from netheat.simulate import _flows_table, links_table

    t = r["tables"]
    flows = _flows_table(t["flows"])
    window_s = float(r["extra"]["window_s"])
    links = links_table(
        topology(params),
        t["links"],
        window_s,
        max(1, math.ceil(float(r["extra"]["end_s"]) / window_s - 1e-9)),
    )
    queues = arrow_table(t["queues"])
    return {"flows": flows, "links": links, "queues": queues}


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
        params=points.params("cloudburst"),
        check=points.check("cloudburst"),
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
