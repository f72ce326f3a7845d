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

from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    ScenarioKind,
    register_kind,
    register_metric,
)

VARIANTS = ("type0", "type1", "type1-lb", "type1-detour")


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

run_memcache = points.runner("memcache")
"""Run one ``memcache`` point (in Rust, ``netheat._netheat.run_point``)."""

MEMCACHE = register_kind(
    ScenarioKind(
        name="memcache",
        run_point=run_memcache,
        params=points.params("memcache"),
        check=points.check("memcache"),
        values=("max_rate_per_s", "mean_latency_s", "p99_latency_s", "events"),
        figures=figures,
        description=(
            "Subways memcache: max request rate at 1 ms mean latency per wiring and ToR oversubscription"
        ),
    )
)
