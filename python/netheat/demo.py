"""The demo behind ``make demo``: a simulated hotspot, then the bundled datacenters.

Part 1 simulates a Poisson workload on a small datacenter with two
Low-uplink racks and an incident that halves two ToRs' uplinks, and shows
where and when ToR uplinks run hot (above 75%). Part 2 draws and describes
every bundled datacenter. As capabilities land (generators, analytics,
policies) the demo grows to use them.
"""

from __future__ import annotations

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from netheat import __version__
from netheat._netheat import Topology
from netheat.draw import draw
from netheat.experiments.runner import ROOT as BUNDLE_ROOT
from netheat.metrics import quantile
from netheat.output import OutputDir, save_png
from netheat.report import Figure, Section, Table, write_report
from netheat.simulate import SimulationResult, simulate
from netheat.units import fmt_bps, fmt_seconds

ROOT = BUNDLE_ROOT
"""The checkout, or the bundled data of an installed wheel (``examples/`` lives under it)."""
DEMO_DC = ROOT / "examples" / "demo" / "datacenter.toml"
HOT = 0.75

EXAMPLES = ROOT / "examples" / "topologies"

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
    rel = path.relative_to(EXAMPLES.parents[1])
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
        code=f"netheat topo show {rel}\nnetheat topo draw {rel} -o {path.stem}.png",
    )


def demo_flows(topo: Topology, duration_s: float, load: float, seed: int) -> dict[str, list[float]]:
    """Poisson flows between random hosts of different racks at a target ToR-uplink load.

    Sizes are log-normal with a 10 MB mean. The arrival rate makes the mean
    offered load on the ToR uplinks ``load`` times their total capacity
    (every inter-rack flow crosses exactly one uplink each way).
    """
    rng = np.random.default_rng(seed)
    racks = topo.racks()
    uplink_total = float(np.sum(racks["uplink_bps"]))
    mean_bytes = 10e6
    sigma = 1.5
    rate = load * uplink_total / (mean_bytes * 8)
    n = rng.poisson(rate * duration_s)
    start = np.sort(rng.uniform(0, duration_s, n))
    hosts = topo.num_hosts
    per_rack = hosts // topo.num_racks
    src = rng.integers(0, hosts, n)
    # Destination in another rack, uniformly.
    other = rng.integers(0, hosts - per_rack, n)
    dst = np.where(other >= (src // per_rack) * per_rack, other + per_rack, other)
    size = rng.lognormal(np.log(mean_bytes) - sigma**2 / 2, sigma, n)
    return {"start_s": start.tolist(), "src": src.tolist(), "dst": dst.tolist(), "bytes": size.tolist()}


def _hotspot_section(out: Path) -> Section:
    topo = Topology.load(DEMO_DC)
    flows = demo_flows(topo, duration_s=60.0, load=0.45, seed=1)
    res: SimulationResult = simulate(topo, flows, window="1s", seed=1)
    res.write(out / "demo-run")
    links = res.links
    src_node = links.column("src_node").to_numpy(zero_copy_only=False)
    dst_node = links.column("dst_node").to_numpy(zero_copy_only=False)
    up = dst_node == "core"
    n_racks = topo.num_racks
    windows = int(res.stats["windows"])
    util = links.column("utilization").to_numpy()[up].reshape(n_racks, windows)
    order = np.argsort([int(str(s)[3:]) for s in src_node[up][::windows]])
    util = util[order]

    fig, (ax1, ax2) = plt.subplots(
        2, 1, figsize=(10, 6), sharex=True, height_ratios=[3, 1], layout="constrained"
    )
    im = ax1.imshow(
        util,
        aspect="auto",
        cmap="inferno",
        vmin=0,
        vmax=1,
        interpolation="nearest",
        extent=(0, windows, n_racks - 0.5, -0.5),
    )
    ax1.set_ylabel("ToR uplink (rack)")
    ax1.set_yticks(range(n_racks))
    fig.colorbar(im, ax=[ax1, ax2], label="utilization (1 s windows)")
    ax1.axvline(20, color="cyan", ls="--", lw=1)
    ax1.axvline(40, color="cyan", ls="--", lw=1)
    hot_share = (util > HOT).mean(axis=0)
    ax2.plot(np.arange(windows) + 0.5, 100 * hot_share, color="#c44")
    ax2.set_ylabel("% ToRs hot")
    ax2.set_xlabel("time (s)")
    heat = out / "hotspots.png"
    try:
        save_png(fig, heat, dpi=110)
    finally:
        plt.close(fig)

    fct = res.flows.column("fct_s").to_numpy()
    src = res.flows.column("src").to_numpy()
    cls = np.asarray(topo.racks()["uplink_class"])[src // (topo.num_hosts // n_racks)]
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in ("medium", "low"):
        v = np.sort(fct[(cls == name) & ~np.isnan(fct)])
        if len(v):
            ax.plot(
                v, np.arange(1, len(v) + 1) / len(v), label=f"{name}-uplink source racks ({len(v)} flows)"
            )
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (s)")
    ax.set_ylabel("CDF")
    ax.legend()
    fig.tight_layout()
    cdf = out / "fct_cdf.png"
    try:
        save_png(fig, cdf, dpi=110)
    finally:
        plt.close(fig)

    hot_by_rack = (util > HOT).mean(axis=1)
    rows = [
        [
            f"rack{r}",
            fmt_bps(topo.racks()["uplink_bps"][r]),
            topo.racks()["uplink_class"][r],
            f"{100 * h:.1f}%",
        ]
        for r, h in enumerate(hot_by_rack)
    ]
    s = res.stats
    text = (
        f"{s['flows']} Poisson flows (log-normal sizes, mean 10 MB) between racks for 60 s at 45% of the "
        f"total ToR-uplink capacity, simulated exactly (max-min sharing) in {s['wall_s']:.2f} s. "
        f"Racks 6-7 have half the uplink of the others (Low-uplink class); between 20 s and 40 s "
        f"(dashed lines) racks 0 and 1 lose half their uplink. A ToR uplink is hot in a 1 s window when "
        f"its average utilization exceeds 75%."
    )
    done = fct[~np.isnan(fct)]
    summary = Table(
        ["flows", "completed", "mean FCT", "p99 FCT", "ToR-uplink windows hot"],
        [
            [
                str(s["flows"]),
                str(s["completed"]),
                fmt_seconds(float(done.mean())),
                fmt_seconds(quantile(done, 0.99)),
                f"{100 * float((util > HOT).mean()):.1f}%",
            ]
        ],
    )
    return Section(
        title="A simulated hotspot",
        text=text,
        tables=[summary, Table(["rack", "uplink", "uplink class", "share of windows hot"], rows)],
        figures=[
            Figure(
                heat,
                "Top: utilization of each ToR uplink (ToR to core) per 1 s window, from the engine's exact "
                "per-link integration of flow rates. Bottom: share of ToRs above 75% in each window.",
            ),
            Figure(cdf, "Flow completion times by the uplink class of the source rack (empirical CDF)."),
        ],
        code=f"netheat simulate --topology {DEMO_DC.relative_to(ROOT)} --flows FLOWS.csv --out run/",
    )


def run_demo(out: Path, force: bool = False) -> Path:
    """Run the demo into ``out`` (under the output rule of :mod:`netheat.output`) and return the report."""
    with OutputDir.open(out, "demo", force=force) as od, od.transaction("demo") as stage:
        sections = [_hotspot_section(stage)]
        sections += [_topology_section(EXAMPLES / name, blurb, stage) for name, blurb in DATACENTERS]
        write_report(
            stage / "report.html",
            "netheat demo",
            sections,
            meta=f"netheat {__version__}",
        )
    return Path(out) / "report.html"
