"""The engine issue's benchmark table: netheat beside SimGrid 3.32 on the same input.

Scenarios (64 racks x 16 hosts, 10 Gbps hosts, 4:1 ToR oversubscription,
bounded-Pareto sizes, shape 1.1, 10 KB..1 GB, whole bytes):

* ``a``: 10,000 flows all starting at t = 0 (target: >= 100x faster than SimGrid);
* ``b``: 50,000 Poisson-arriving flows at 60% of the ToR uplinks (target: >= 20x).

Both simulators get the same flow list; the table shows each one's wall time
(netheat: the whole ``netheat.simulate`` call; SimGrid: platform build plus
``Engine.run``), the speedup, the largest relative difference of flow
completion times, and netheat's events/s and flows/s. SimGrid runs twice,
with each of its solver modes (``network/optim`` ``Lazy``, its default, and
``Full``): which is faster depends on the workload (``Full`` is about twice
as fast on the simultaneous batch), and the speedup is taken against the
faster one. SimGrid is installed with apt when missing (see
``validation/crosscheck_simgrid.py``).

Usage: ``python benches/engine_vs_simgrid.py [a] [b] [--timeout S]`` (``make bench-simgrid``).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))

from crosscheck_simgrid import (
    Scenario,
    ensure_simgrid,
    max_rel_fct_diff,
    run_netheat_stats,
    run_simgrid,
)
from simgrid_runner import bounded_pareto_flows

RACKS, HOSTS, HOST_BPS = 64, 16, 10e9
UPLINK_BPS = HOSTS * HOST_BPS / 4
TARGETS = {"a": 100.0, "b": 20.0}


def pareto_mean(a: float = 1.1, lo: float = 1e4, hi: float = 1e9) -> float:
    """Mean of the bounded Pareto law (closed form)."""
    return a * lo**a / (1 - (lo / hi) ** a) * (hi ** (1 - a) - lo ** (1 - a)) / (1 - a)


def scenario(name: str) -> Scenario:
    """The flows of scenario ``a`` or ``b``, reproducible."""
    if name == "a":
        flows = bounded_pareto_flows(10_000, RACKS, HOSTS, seed=1)
        return Scenario("a: 10,000 flows at t=0", RACKS, HOSTS, HOST_BPS, UPLINK_BPS, flows)
    n_hosts = RACKS * HOSTS
    p_inter = (n_hosts - HOSTS) / (n_hosts - 1)
    rate = 0.6 * UPLINK_BPS * RACKS / (8 * pareto_mean() * p_inter)
    base = bounded_pareto_flows(50_000, RACKS, HOSTS, seed=2)
    rng = random.Random(22)
    t = 0.0
    flows = []
    for _, s, d, b in base:
        t += rng.expovariate(rate)
        flows.append((t, s, d, b))
    return Scenario("b: 50,000 Poisson flows, load 0.6", RACKS, HOSTS, HOST_BPS, UPLINK_BPS, flows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["a", "b"], choices=["a", "b"])
    ap.add_argument("--timeout", type=float, default=3600.0, help="SimGrid time limit per scenario, s")
    args = ap.parse_args()
    have_simgrid = ensure_simgrid()
    if not have_simgrid:
        print("note: SimGrid unavailable; netheat columns only")
    head = (
        f"{'scenario':<36} {'netheat s':>10} {'SG Lazy s':>10} {'SG Full s':>10} {'speedup':>9} "
        f"{'target':>7} {'max rel FCT diff':>17} {'events/s':>11} {'flows/s':>10} {'ok':>4}"
    )
    print(head)
    print("-" * len(head))
    all_ok = True
    for name in args.scenarios:
        s = scenario(name)
        ours, wall, stats = run_netheat_stats(s)
        ev = stats["events"] / wall
        fl = len(s.flows) / wall
        if have_simgrid:
            walls = {}
            err = 0.0
            for optim in ("Lazy", "Full"):
                theirs, walls[optim] = run_simgrid(s, timeout=args.timeout, optim=optim)
                err = max(err, max_rel_fct_diff(s, ours, theirs))
            speed = min(walls.values()) / wall
            ok = speed >= TARGETS[name] and err <= 1e-6
            all_ok &= ok
            print(
                f"{s.name:<36} {wall:>10.2f} {walls['Lazy']:>10.2f} {walls['Full']:>10.2f} "
                f"{speed:>8.1f}x {TARGETS[name]:>6.0f}x "
                f"{err:>17.2e} {ev:>11,.0f} {fl:>10,.0f} {'yes' if ok else 'NO':>4}"
            )
        else:
            print(
                f"{s.name:<36} {wall:>10.2f} {'-':>10} {'-':>10} {'-':>9} {TARGETS[name]:>6.0f}x {'-':>17} "
                f"{ev:>11,.0f} {fl:>10,.0f}"
            )
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
