"""The ``subways`` scenario kind: one shuffle job under a Subways load-balancing policy.

A point runs an all-to-all shuffle among ``nodes`` consecutive servers
starting at rack ``first-rack`` (``bytes-per-pair`` from every server to
every other, all at once; completion = last flow) on a datacenter file,
routed by ``policy`` (``ecmp``, ``adaptive`` or ``detour``, see
``crates/netheat-subways``), in Rust with the GIL released. Speedups are
ratios of ``completion_s`` between variants (``ratio`` and ``peak_ratio``
metrics), e.g. Type 0 over Type 1 with adaptive load balancing.
"""

from __future__ import annotations

from typing import Any

from netheat._netheat import Topology, subways_shuffle
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)

POLICIES = ("adaptive", "detour", "ecmp")


def run_subways(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``subways`` point and report the job's completion time."""
    topo = Topology.load(params["topology"])
    r = subways_shuffle(
        topo,
        int(params["first-rack"]),
        int(params["nodes"]),
        float(params["bytes-per-pair"]),
        str(params["policy"]),
        seed,
        float(params["t-rebind"]),
        float(params["aggressiveness"]),
        None if int(params["failed-tor"]) < 0 else int(params["failed-tor"]),
    )
    values = {k: float(r[k]) for k in ("completion_s", "rebinds", "detours", "flows", "stranded")}
    return PointResult(values=values)


for _m in (
    MetricKind("completion_s", "s", "shuffle completion time (its last flow)"),
    MetricKind("rebinds", "flows", "flows re-bound by the load-balancing controller"),
    MetricKind("detours", "flows", "flows moved onto detour paths"),
    MetricKind("stranded", "flows", "flows without a live path (a failed ToR): the job cannot complete"),
):
    register_metric(_m, replace=True)

SUBWAYS = register_kind(
    ScenarioKind(
        name="subways",
        run_point=run_subways,
        params=(
            Param("topology", "path", help="datacenter TOML file (Subways or Type 0 wiring)", required=True),
            Param("policy", "str", "ecmp", f"load balancing: {', '.join(POLICIES)}"),
            Param("nodes", "int", 60, "servers in the shuffle job"),
            Param("first-rack", "int", 0, "rack of the job's first server"),
            Param("bytes-per-pair", "bytes", 15e6, "bytes from every server to every other"),
            Param("t-rebind", "duration", 0.01, "controller period of adaptive/detour"),
            Param("aggressiveness", "float", 0.5, "share of running flows re-drawn each period"),
            Param("failed-tor", "int", -1, "a ToR that is down for the whole job (-1: none)"),
        ),
        values=("completion_s", "rebinds", "detours", "flows", "stranded"),
        description="a shuffle job on contiguous servers under a Subways load-balancing policy",
    )
)
