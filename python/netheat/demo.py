"""The demo behind ``make demo``: the bundled datacenters, drawn and described.

As capabilities land (simulation, hotspot analytics, policies) the demo
grows to run them on the embedded default and report the results.
"""

from __future__ import annotations

import time
from pathlib import Path

from netheat import __version__
from netheat._netheat import Topology
from netheat.draw import draw
from netheat.report import Figure, Section, Table, write_report
from netheat.units import fmt_bps

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "topologies"

DATACENTERS = [
    ("two-tier-4x4.toml", "The smallest two-tier datacenter: 4 racks of 4 hosts, 4:1 at the ToR."),
    (
        "storage-mixed.toml",
        "Compute, disk and mixed racks with uplinks classed against a provisioning guideline.",
    ),
    ("subways-type1.toml", "The Subways paper's fabric with Type 1 wiring (p=2, l=12)."),
    ("subways-type2.toml", "Type 2 Subways: loops interleave two clusters; 10G+25G server ports."),
    ("baraat-36k.toml", "Baraat's 36,000-host three-tier datacenter (hosts not drawn)."),
]


def _topology_section(path: Path, blurb: str, out: Path) -> Section:
    t0 = time.perf_counter()
    topo = Topology.load(path)
    build_s = time.perf_counter() - t0
    s = topo.summary()
    png = draw(topo, out / f"{path.stem}.png")
    rows = [[layer, str(e["links"]), fmt_bps(e["capacity_bps"])] for layer, e in s["layers"].items()]
    over = ", ".join(f"{tier} {med:.2f}:1" for tier, (_, med, _) in s["oversubscription"].items())
    text = (
        f"{blurb} {topo.num_hosts} hosts, {topo.num_racks} racks, {topo.num_links} directed links; "
        f"oversubscription {over}; bisection {fmt_bps(s['bisection_bps'])} "
        f"(balanced cut along the tree). Built in {build_s * 1e3:.1f} ms."
    )
    return Section(
        title=path.stem,
        text=text,
        tables=[Table(["layer", "physical links", "capacity (each way)"], rows)],
        figures=[
            Figure(
                png,
                f"{path.name}: layers bottom-up (hosts, ToRs, aggregation/core, spines); hosts and ToRs "
                "coloured by rack type; orange lines are server ports wired to another rack's ToR.",
            )
        ],
        code=f"netheat topo show {path}\nnetheat topo draw {path} -o {path.stem}.png",
    )


def run_demo(out: Path) -> Path:
    """Run the demo into ``out`` and return the report path."""
    out.mkdir(parents=True, exist_ok=True)
    sections = [_topology_section(EXAMPLES / name, blurb, out) for name, blurb in DATACENTERS]
    return write_report(
        out / "report.html",
        "netheat demo",
        sections,
        meta=f"netheat {__version__}",
    )
