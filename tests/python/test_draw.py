"""Topology drawing: layout invariants."""

from __future__ import annotations

from pathlib import Path

from netheat import Topology
from netheat.draw import layout


def test_layout_levels_and_rack_order(examples: Path) -> None:
    t = Topology.load(examples / "two-tier-4x4.toml")
    lay = layout(t)
    pos = lay["pos"]
    kinds = lay["kinds"]
    assert lay["with_hosts"]
    assert {pos[i][1] for i, k in enumerate(kinds) if k == "host"} == {0.0}
    assert {pos[i][1] for i, k in enumerate(kinds) if k == "tor"} == {1.0}
    # Hosts of rack 0 lie left of rack 1's; each ToR sits over its rack.
    assert max(pos[i][0] for i in range(4)) < min(pos[i][0] for i in range(4, 8))
    tor0 = 16
    assert min(pos[i][0] for i in range(4)) < pos[tor0][0] < max(pos[i][0] for i in range(4))


def test_large_topology_starts_at_tors(examples: Path) -> None:
    t = Topology.load(examples / "baraat-36k.toml")
    lay = layout(t)
    assert not lay["with_hosts"]
    assert all(k != "host" for i, k in enumerate(lay["kinds"]) if i in lay["pos"])
