"""The ``netheat`` command line.

Every subcommand is a thin layer over the library: parse arguments, call
into ``netheat``, print. User mistakes (bad configs, bad input files) print
one ``error:`` line and exit with code 2; argparse usage errors also exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from netheat import __version__
from netheat.errors import NetheatError

EPILOG = "Docs: README.md and docs/architecture.md. Examples: examples/topologies/*.toml."


def _topo_check(args: argparse.Namespace) -> int:
    from netheat._netheat import Topology

    topo = Topology.load(args.file)
    shape = f"{topo.kind}, {topo.num_hosts} hosts, {topo.num_racks} racks, {topo.num_links} links"
    print(f"{args.file}: ok ({shape})")
    return 0


def _topo_show(args: argparse.Namespace) -> int:
    from netheat._netheat import Topology
    from netheat.topo import describe

    topo = Topology.load(args.file)
    if args.json:
        print(json.dumps(topo.summary(), indent=2))
    else:
        print(describe(topo, args.file))
    return 0


def _topo_draw(args: argparse.Namespace) -> int:
    from netheat._netheat import Topology
    from netheat.draw import draw

    topo = Topology.load(args.file)
    out = draw(topo, args.output, max_hosts=args.max_hosts)
    print(f"wrote {out}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from netheat.simulate import simulate_cli

    return simulate_cli(args)


def _demo(args: argparse.Namespace) -> int:
    from netheat.demo import run_demo

    report = run_demo(Path(args.out))
    print(f"wrote {report}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = argparse.ArgumentParser(
        prog="netheat",
        description="Find, explain and remove datacenter network hotspots.",
        epilog=EPILOG,
    )
    p.add_argument("--version", action="version", version=f"netheat {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    topo = sub.add_parser("topo", help="validate, inspect and draw datacenter files", epilog=EPILOG)
    tsub = topo.add_subparsers(dest="topo_command", required=True, metavar="ACTION")
    c = tsub.add_parser("check", help="validate a datacenter file (exit 0, or 2 with the first error)")
    c.add_argument("file", help="datacenter TOML file")
    c.set_defaults(func=_topo_check)
    s = tsub.add_parser(
        "show",
        help="counts per layer, oversubscription, bisection bandwidth, rack types and uplink classes",
    )
    s.add_argument("file", help="datacenter TOML file")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=_topo_show)
    d = tsub.add_parser("draw", help="draw the layers, racks coloured by type, Subways cross-wiring visible")
    d.add_argument("file", help="datacenter TOML file")
    d.add_argument("-o", "--output", default="topo.png", help="PNG file to write (default: topo.png)")
    d.add_argument(
        "--max-hosts",
        type=int,
        default=400,
        help="above this many hosts, draw from the ToRs up (default: 400)",
    )
    d.set_defaults(func=_topo_draw)

    sim = sub.add_parser(
        "simulate",
        help="run the flow-level engine on a topology and a flow CSV or a workload file",
        description=(
            "Simulate flows (CSV with header start_s,src,dst,bytes and optional "
            "flow_id,task_id,priority,weight,rate_cap_bps) or a workload TOML file (generators and "
            "application structures) on a datacenter with exact max-min sharing; writes "
            "DIR/flows.parquet, DIR/links.parquet and, for application tasks, DIR/tasks.parquet."
        ),
    )
    sim.add_argument("--topology", required=True, help="datacenter TOML file")
    src = sim.add_mutually_exclusive_group(required=True)
    src.add_argument("--flows", help="flow CSV file")
    src.add_argument("--workload", help="workload TOML file (see examples/workloads/)")
    sim.add_argument("--data-dir", default=None, help="data directory for datasets a workload names")
    sim.add_argument("--out", required=True, help="output directory")
    sim.add_argument("--window", default="1s", help="link-utilization window (default: 1s)")
    sim.add_argument(
        "--seed", type=int, default=0, help="seed of the workload generators and the ECMP hash (default: 0)"
    )
    sim.add_argument(
        "--dense",
        choices=["auto", "off", "always"],
        default="auto",
        help=(
            "dense mode, one rate per bottleneck group of flow classes for batches where one event moves "
            "many rates: auto (default), off or always; the allocation is the same"
        ),
    )
    sim.set_defaults(func=_simulate)

    demo = sub.add_parser("demo", help="run the demo scenario and write an HTML report")
    demo.add_argument("--out", default="demo-out", help="output directory (default: demo-out)")
    demo.set_defaults(func=_demo)

    from netheat.data import add_cli as add_data_cli

    add_data_cli(sub)
    from netheat.workloads import add_cli as add_workload_cli

    add_workload_cli(sub)
    from netheat.analytics.cli import add_cli as add_analyze_cli

    add_analyze_cli(sub)
    from netheat.experiments.cli import add_cli as add_experiments_cli

    add_experiments_cli(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``netheat`` command."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except NetheatError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
