"""The ``memcache`` scenario kind: the Subways paper's memcache experiment on the packet engine.

A point runs ``crates/netheat-repro`` (``memcache.rs``, GIL released): web
servers of a loop of racks query memcache servers in two racks (50 B
requests, 1,500 B responses, one-packet TCP messages), and a doubling plus
bisection search finds the largest request rate whose mean latency stays at
or below ``target`` for one wiring/balancing ``variant`` (``type0``,
``type1``, ``type1-lb``, ``type1-detour``) and ToR ``oversubscription``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netheat._netheat import packet_memcache_max_rate
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)

VARIANTS = ("type0", "type1", "type1-lb", "type1-detour")


def run_memcache(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``memcache`` point: the max request rate at the latency target."""
    r = packet_memcache_max_rate(
        str(params["variant"]),
        float(params["oversubscription"]),
        seed,
        racks=int(params["racks"]),
        hosts_per_rack=int(params["hosts-per-rack"]),
        ports=int(params["ports"]),
        host_bps=float(params["host-speed"]),
        duration_s=float(params["duration"]),
        target_s=float(params["target"]),
    )
    values = {k: float(r[k]) for k in ("max_rate_per_s", "mean_latency_s", "p99_latency_s", "events")}
    return PointResult(values=values)


def figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Max request rate against ToR oversubscription, one line per variant."""
    from netheat.experiments.plots import memcache_figures

    return memcache_figures(run_dir)


for _m in (
    MetricKind(
        "max_rate_per_s", "requests/s", "largest request rate with mean latency at or below the target"
    ),
    MetricKind("mean_latency_s", "s", "mean request latency at that rate"),
    MetricKind("p99_latency_s", "s", "99th percentile request latency at that rate"),
):
    register_metric(_m, replace=True)

MEMCACHE = register_kind(
    ScenarioKind(
        name="memcache",
        run_point=run_memcache,
        params=(
            Param("variant", "str", "type0", f"wiring and balancing: {', '.join(VARIANTS)}"),
            Param(
                "oversubscription", "float", 5.0, "ToR oversubscription (server-facing over uplink capacity)"
            ),
            Param("racks", "int", 8, "racks in the loop (memcache racks: 0 and racks/2)"),
            Param("hosts-per-rack", "int", 8, "servers per rack"),
            Param("ports", "int", 2, "ports per server"),
            Param("host-speed", "bandwidth", 10e9, "port speed"),
            Param("duration", "duration", 0.01, "seconds of arrivals per rate tried (second half measured)"),
            Param("target", "duration", 1e-3, "mean latency target"),
        ),
        values=("max_rate_per_s", "mean_latency_s", "p99_latency_s", "events"),
        figures=figures,
        description=(
            "Subways memcache: max request rate at 1 ms mean latency per wiring and ToR oversubscription"
        ),
    )
)
