#!/usr/bin/env python3
"""Cross-check netheat's flow-level engine against SimGrid 3.32 (pure max-min).

Random scenarios on a two-tier tree (racks, hosts per rack, oversubscription,
flow counts, simultaneous or staggered starts, bounded-Pareto or uniform
sizes) are run through netheat and through SimGrid configured as a pure
max-min model (see ``simgrid_runner.py`` and ``README.md``). Every flow's
completion time must agree within ``--tol`` (default 1e-6) relative. Prints
one row per scenario and exits 1 on any mismatch, 2 when SimGrid cannot be
installed.

Usage (from the project root, with the project's venv)::

    .venv/bin/python validation/crosscheck_simgrid.py [--scenarios 20] [--seed 1] [--tol 1e-6]

SimGrid comes from Debian's ``python3-simgrid``; the script installs it with
apt when ``/usr/bin/python3`` cannot import it (root needed).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import simgrid_runner  # noqa: E402

Flow = tuple[float, int, int, float]


def ensure_simgrid() -> bool:
    """True when SimGrid's Python module is importable, installing it with apt if needed."""
    py = simgrid_runner.SIMGRID_PYTHON

    def ok() -> bool:
        return subprocess.run([py, "-c", "import simgrid"], capture_output=True).returncode == 0

    if ok():
        return True
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
    subprocess.run(["apt-get", "install", "-y", "-qq", "python3-simgrid"], env=env, check=False)
    return ok()


@dataclass(frozen=True)
class Scenario:
    """A two-tier datacenter and a flow list."""

    name: str
    racks: int
    hosts_per_rack: int
    host_bps: float
    uplink_bps: float
    flows: list[Flow]


def random_scenario(rng: random.Random, index: int) -> Scenario:
    """A random two-tier scenario; sizes are whole bytes (SimGrid payloads are integers)."""
    racks = rng.randint(2, 8)
    hosts = rng.randint(2, 8)
    host_bps = rng.choice([1e9, 10e9, 25e9])
    oversub = rng.choice([1.0, 2.0, 3.0, 4.0, 8.0])
    uplink = hosts * host_bps / oversub
    n = rng.randint(5, 300)
    staggered = rng.random() < 0.7
    pareto = rng.random() < 0.5
    flows: list[Flow] = []
    t = 0.0
    mean_gap = rng.choice([1e-4, 1e-3, 1e-2])
    for _ in range(n):
        if staggered:
            t += rng.expovariate(1.0 / mean_gap)
        if pareto:
            a, lo, hi = 1.1, 1e4, 1e8
            u = rng.random()
            size = lo * (1 - u * (1 - (lo / hi) ** a)) ** (-1 / a)
        else:
            size = rng.uniform(1e3, 1e7)
        src = rng.randrange(racks * hosts)
        dst = rng.randrange(racks * hosts - 1)
        dst += dst >= src
        flows.append((t, src, dst, float(round(size))))
    name = (
        f"#{index}: {racks}x{hosts}, {oversub:g}:1, {n} flows, "
        f"{'staggered' if staggered else 'at once'}, {'pareto' if pareto else 'uniform'}"
    )
    return Scenario(name, racks, hosts, host_bps, uplink, flows)


def topology_toml(s: Scenario) -> str:
    """The netheat datacenter file of a scenario (one aggregated ToR uplink each way)."""
    return (
        f'[topology]\nkind = "two-tier"\nracks = {s.racks}\nhosts-per-rack = {s.hosts_per_rack}\n'
        f'host-link = "{s.host_bps:.0f}bps"\ntor-uplink = "{s.uplink_bps:.0f}bps"\n'
    )


def run_netheat_stats(s: Scenario) -> tuple[list[float], float, dict[str, float]]:
    """netheat's finish times (flow order), wall seconds of the simulation call and run statistics."""
    import netheat
    from netheat.simulate import simulate

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "dc.toml"
        path.write_text(topology_toml(s))
        topo = netheat.load_topology(path)
    cols = {
        "start_s": [f[0] for f in s.flows],
        "src": [f[1] for f in s.flows],
        "dst": [f[2] for f in s.flows],
        "bytes": [f[3] for f in s.flows],
    }
    t0 = time.perf_counter()
    # A window longer than any run keeps telemetry to one window per link.
    res = simulate(topo, cols, window=1e6)
    wall = time.perf_counter() - t0
    by_id = dict(
        zip(res.flows.column("flow_id").to_pylist(), res.flows.column("finish_s").to_pylist(), strict=True)
    )
    return [by_id[i] for i in range(len(s.flows))], wall, res.stats


def run_netheat(s: Scenario) -> tuple[list[float], float]:
    """netheat's finish times (flow order) and wall seconds of the simulation call."""
    finish, wall, _ = run_netheat_stats(s)
    return finish, wall


def run_simgrid(s: Scenario, timeout: float = 3600.0, optim: str = "Lazy") -> tuple[list[float], float]:
    """SimGrid's finish times (flow order) and its wall seconds (build + run),
    with SimGrid's ``network/optim`` solver mode ``optim`` ("Lazy" or "Full")."""
    finish, wall = simgrid_runner.run_simgrid(
        s.racks, s.hosts_per_rack, s.host_bps, s.uplink_bps, s.flows, optim=optim, timeout=timeout
    )
    return list(finish), float(wall)


def max_rel_fct_diff(s: Scenario, a: list[float], b: list[float]) -> float:
    """Largest relative difference of flow completion times (finish - start)."""
    worst = 0.0
    for f, x, y in zip(s.flows, a, b, strict=True):
        fa, fb = x - f[0], y - f[0]
        worst = max(worst, abs(fa - fb) / max(abs(fb), 1e-300))
    return worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=20, help="random scenarios (default: 20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the scenario generator (default: 1)")
    ap.add_argument("--tol", type=float, default=1e-6, help="relative FCT tolerance (default: 1e-6)")
    args = ap.parse_args()
    if not ensure_simgrid():
        print("error: SimGrid (python3-simgrid) is not available and could not be installed", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    bad = 0
    print(f"{'scenario':<62} {'flows':>6} {'max rel FCT diff':>17} {'ok':>4}")
    print("-" * 92)
    for i in range(args.scenarios):
        s = random_scenario(rng, i)
        ours, _ = run_netheat(s)
        theirs, _ = run_simgrid(s)
        err = max_rel_fct_diff(s, ours, theirs)
        ok = err <= args.tol
        bad += not ok
        print(f"{s.name:<62} {len(s.flows):>6} {err:>17.3e} {'yes' if ok else 'NO':>4}")
    print(f"{args.scenarios - bad}/{args.scenarios} scenarios agree within {args.tol:g} relative")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
