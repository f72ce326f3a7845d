"""The ``subways`` scenario kind: one shuffle job under a Subways load-balancing policy.

A point runs a shuffle among ``nodes`` servers starting at rack
``first-rack`` on a datacenter file: ``placement = "contiguous"``
(consecutive servers, the Subways paper's intra-cluster jobs) or
``"two-loops"`` (half in each of two Subways loops, its cross-cluster
jobs); ``pattern = "all-to-all"`` (every server to every other) or
``"into-last-rack"`` (the job's last rack receives from the others, its
testbed run of Table 2); ``flows-per-pair`` flows of ``bytes-per-pair``
each, all at once; completion = last flow. Flows are routed by ``policy``
(``ecmp`` = vanilla Subways ECMP, ``ecmp-shortest`` = ECMP over shortest
paths only (ours), ``adaptive`` or ``detour``, see
``crates/netheat-subways``), in Rust with the GIL released. Speedups are
ratios of ``completion_s`` between variants (``ratio`` and ``peak_ratio``
metrics), e.g. Type 0 over Type 1 with adaptive load balancing.
"""

from __future__ import annotations

from typing import Any

from netheat._netheat import subways_shuffle
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    load_topology,
    register_kind,
    register_metric,
)

POLICIES = ("adaptive", "detour", "ecmp", "ecmp-shortest")


def run_subways(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``subways`` point and report the job's completion time."""
    topo = load_topology(params)
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
        str(params["placement"]),
        str(params["pattern"]),
        int(params["flows-per-pair"]),
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
            Param("bytes-per-pair", "bytes", 15e6, "bytes of each flow from a sender to a receiver"),
            Param("flows-per-pair", "int", 1, "flows from each sender to each receiver"),
            Param("placement", "str", "contiguous", "contiguous, or two-loops (half in each of 2 loops)"),
            Param("pattern", "str", "all-to-all", "all-to-all, or into-last-rack (the last rack receives)"),
            Param("t-rebind", "duration", 0.01, "controller period of adaptive/detour"),
            Param("aggressiveness", "float", 0.5, "the re-binding factor c of the Subways paper (Sec. 5.2)"),
            Param("failed-tor", "int", -1, "a ToR that is down for the whole job (-1: none)"),
        ),
        values=("completion_s", "rebinds", "detours", "flows", "stranded"),
        description="a shuffle job on contiguous servers under a Subways load-balancing policy",
    )
)
