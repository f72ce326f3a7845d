"""Inspecting datacenters: the text of ``netheat topo show``."""

from __future__ import annotations

from typing import Any

from netheat._netheat import Topology
from netheat.units import fmt_bps


def _counts(d: dict[str, int], plural: bool = True) -> str:
    return ", ".join(f"{n} {k}{'s' if plural and n != 1 else ''}" for k, n in d.items())


def describe(topo: Topology, source: str = "") -> str:
    """Return the one-screen description printed by ``netheat topo show``."""
    s: dict[str, Any] = topo.summary()
    lines = []
    if source:
        lines.append(f"datacenter        {source}")
    lines.append(f"kind              {s['kind']}")
    lines.append(f"nodes             {_counts(s['nodes'])}")
    lines.append(
        f"racks             {s['racks']} ({_counts(s['rack_kinds'], plural=False)}) in {s['pods']} pod(s)"
    )
    lines.append(f"uplink classes    {_counts(s['uplink_classes'], plural=False)}")
    if "subways" in s:
        w = s["subways"]
        lines.append(
            f"subways           {w['wiring']}, p={w['ports_per_host']} ports/server, "
            f"loop size l={w['loop_size']}, clusters per loop c={w['clusters_per_loop']}"
        )
    lines.append("")
    lines.append(f"{'layer':<12}{'links':>8}  {'capacity (each way)':>20}")
    for layer, e in s["layers"].items():
        lines.append(f"{layer:<12}{e['links']:>8}  {fmt_bps(e['capacity_bps']):>20}")
    lines.append("")
    for tier, (lo, med, hi) in s["oversubscription"].items():
        lines.append(f"oversubscription  {tier:<5} {med:.2f}:1 (min {lo:.2f}, max {hi:.2f})")
    lines.append(f"bisection         {fmt_bps(s['bisection_bps'])} (balanced cut along the tree)")
    lines.append(f"capacity events   {s['events']} directed-link changes")
    return "\n".join(lines)
