"""Drawing a datacenter (``netheat topo draw``).

Layers are drawn bottom-up (hosts, ToRs, aggregation or core, spines,
fabric border).
Hosts and ToRs are coloured by rack type; a server port wired to another
rack's ToR (Subways cross-wiring) is drawn in orange so the wiring pattern
is visible. Above ``max_hosts`` hosts the hosts are left out and the picture
starts at the ToRs.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from netheat._netheat import Topology
from netheat.errors import InputError
from netheat.output import atomic_write, save_figure

RACK_COLOURS = {"compute": "#4C72B0", "disk": "#55A868", "mixed": "#8172B2"}
LEVEL = {"host": 0.0, "tor": 1.0, "agg": 2.0, "core": 2.0, "spine": 3.0, "border": 4.0}
CROSS = "#DD8452"


def layout(topo: Topology, max_hosts: int = 400) -> dict[str, Any]:
    """Compute node positions; returns positions, kinds and whether hosts are drawn."""
    nodes = topo.nodes()
    with_hosts = topo.num_hosts <= max_hosts
    kinds: list[str] = nodes["kind"]
    pods: list[int] = nodes["pod"]
    racks: list[int] = nodes["rack"]
    n_racks = topo.num_racks
    pos: dict[int, tuple[float, float]] = {}
    hosts_per_rack = max(1, topo.num_hosts // max(1, n_racks))
    # One unit of width per rack, with a gap between pods.
    rack_x: dict[int, float] = {}
    pod_of_rack = topo.racks()["pod"]
    for r in range(n_racks):
        rack_x[r] = r + 0.6 * pod_of_rack[r]
    for i, kind in enumerate(kinds):
        if kind == "host" and with_hosts:
            slot = i - racks[i] * hosts_per_rack
            pos[i] = (rack_x[racks[i]] - 0.4 + 0.8 * (slot + 0.5) / hosts_per_rack, LEVEL["host"])
        elif kind == "tor":
            pos[i] = (rack_x[racks[i]], LEVEL["tor"])
    by_pod: dict[int, list[int]] = defaultdict(list)
    for i, kind in enumerate(kinds):
        if kind in ("agg", "core"):
            by_pod[pods[i]].append(i)
    for pod, members in by_pod.items():
        xs = (
            [rack_x[r] for r in range(n_racks) if pod_of_rack[r] == pod]
            if kinds[members[0]] == "agg"
            else [rack_x[r] for r in range(n_racks)]
        )
        lo, hi = min(xs), max(xs)
        for j, i in enumerate(members):
            pos[i] = (lo + (hi - lo) * (j + 0.5) / len(members), LEVEL[kinds[i]])
    lo, hi = min(rack_x.values()), max(rack_x.values())
    for top in ("spine", "border"):
        members = [i for i, k in enumerate(kinds) if k == top]
        for j, i in enumerate(members):
            pos[i] = (lo + (hi - lo) * (j + 0.5) / len(members), LEVEL[top])
    return {"pos": pos, "kinds": kinds, "with_hosts": with_hosts}


def _draw_shared_tors(ax: Any, topo: Topology, pos: dict[int, tuple[float, float]]) -> bool:
    """Draw an arc under the ToR row between every two ToRs that share a server."""
    ports = topo.host_ports()
    tors_of: dict[int, set[int]] = defaultdict(set)
    for host, tor in zip(ports["host"], ports["tor"], strict=True):
        tors_of[host].add(tor)
    pairs = {(a, b) for ts in tors_of.values() for a in ts for b in ts if a < b}
    first_tor = topo.num_hosts  # ToR node ids follow the hosts
    for a, b in sorted(pairs):
        (x0, y0), (x1, _) = pos[first_tor + a], pos[first_tor + b]
        xs = [x0 + (x1 - x0) * t / 20 for t in range(21)]
        ys = [y0 - 0.35 * (1 - (2 * t / 20 - 1) ** 2) for t in range(21)]
        ax.plot(xs, ys, color=CROSS, lw=0.8, alpha=0.8, zorder=1)
    return bool(pairs)


def draw(topo: Topology, out: str | Path, title: str = "", max_hosts: int = 400) -> Path:
    """Draw the datacenter to a PNG file and return its path."""
    lay = layout(topo, max_hosts)
    pos: dict[int, tuple[float, float]] = lay["pos"]
    kinds: list[str] = lay["kinds"]
    racks = topo.racks()
    node_rack: list[int] = topo.nodes()["rack"]
    links = topo.links()
    width = min(40.0, max(8.0, 0.35 * topo.num_racks + 4))
    fig, ax = plt.subplots(figsize=(width, 6))
    cross_seen = False
    for src, dst, direction, layer in zip(
        links["src"], links["dst"], links["direction"], links["layer"], strict=True
    ):
        if direction != "up" or src not in pos or dst not in pos:
            continue
        (x0, y0), (x1, y1) = pos[src], pos[dst]
        crossed = layer == "host-tor" and node_rack[src] != node_rack[dst]
        cross_seen |= crossed
        ax.plot(
            [x0, x1],
            [y0, y1],
            color=CROSS if crossed else "#999999",
            lw=1.0 if crossed else 0.5,
            alpha=0.9 if crossed else 0.5,
            zorder=1,
        )
    if not lay["with_hosts"]:
        cross_seen |= _draw_shared_tors(ax, topo, pos)
    for i, (x, y) in pos.items():
        kind = kinds[i]
        colour = RACK_COLOURS[racks["kind"][node_rack[i]]] if kind in ("host", "tor") else "#333333"
        marker = {"host": "o", "tor": "s", "agg": "D", "core": "D", "spine": "^", "border": "p"}[kind]
        ax.scatter([x], [y], s=18 if kind == "host" else 60, c=colour, marker=marker, zorder=2)
    levels = sorted({y for _, y in pos.values()})
    names = {0.0: "hosts", 1.0: "ToRs", 2.0: "agg / core", 3.0: "spines", 4.0: "border"}
    ax.set_yticks(levels, [names[y] for y in levels])
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [
        Line2D([], [], marker="s", ls="", color=c, label=f"{k} rack")
        for k, c in RACK_COLOURS.items()
        if k in racks["kind"]
    ]
    if cross_seen:
        label = (
            "port wired to another rack's ToR" if lay["with_hosts"] else "ToRs sharing servers (cross-wiring)"
        )
        handles.append(Line2D([], [], color=CROSS, label=label))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    s = topo.summary()
    note = "" if lay["with_hosts"] else f"  ({topo.num_hosts} hosts not drawn)"
    ax.set_title((title or f"{s['kind']}: {topo.num_hosts} hosts, {topo.num_racks} racks") + note)
    fig.tight_layout()
    out = Path(out)
    fmt = check_format(out)
    try:
        atomic_write(out, lambda tmp: save_figure(fig, tmp, fmt, dpi=110))
    finally:
        plt.close(fig)
    return out


FORMATS = ("png", "svg", "pdf")
"""Image formats ``topo draw`` writes, told by the file name's suffix."""


def check_format(path: str | Path) -> str:
    """The image format of ``path`` by its suffix; :class:`InputError` for any other."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        shown = f"`.{suffix}`" if suffix else "no suffix"
        raise InputError(f"{path}: {shown} is not an image format netheat draws; use .png, .svg or .pdf")
    return suffix
