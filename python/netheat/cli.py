"""The ``netheat`` command line.

Every subcommand is a thin layer over the library: parse arguments, call
into ``netheat``, print. User mistakes (bad configs, bad input files) print
one ``error:`` line and exit with code 2; argparse usage errors also exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from netheat import __version__
from netheat.errors import InputError, NetheatError
from netheat.output import add_force

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
    from netheat.draw import check_format, draw
    from netheat.output import output_file

    check_format(args.output)
    target = output_file(args.output, force=args.force, flag="--output")
    topo = Topology.load(args.file)
    out = draw(topo, target, max_hosts=args.max_hosts)
    print(f"wrote {out}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from netheat.simulate import simulate_cli

    return simulate_cli(args)


def _demo(args: argparse.Namespace) -> int:
    if args.live:
        from netheat.livedemo import run

        return run()
    from netheat.demo import run_demo

    report = run_demo(Path(args.out), force=args.force)
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
    p.add_argument(
        "--memory-budget",
        metavar="SIZE",
        default=None,
        help=(
            "largest memory a run may plan to hold, e.g. 8GiB; runs estimated above it are refused before "
            "they start (default: $NETHEAT_MEMORY_BUDGET, else half of the physical memory)"
        ),
    )
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
    d.add_argument(
        "-o",
        "--output",
        default="topo.png",
        help="image file to write: .png, .svg or .pdf (default: topo.png)",
    )
    add_force(d, file=True)
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
            "DIR/flows.parquet, DIR/links.parquet and, for application tasks or flows with a task_id, "
            "DIR/tasks.parquet. This is `netheat run` with no policy (per-flow ECMP, fair share): for "
            "other routing, scheduling or placement, replay the flows in a scenario file."
        ),
    )
    sim.add_argument("--topology", required=True, help="datacenter TOML file")
    src = sim.add_mutually_exclusive_group(required=True)
    src.add_argument("--flows", help="flow CSV file")
    src.add_argument("--workload", help="workload TOML file (see examples/workloads/)")
    sim.add_argument("--data-dir", default=None, help="data directory for datasets a workload names")
    sim.add_argument("--out", required=True, help="output directory (see `Outputs` in the README)")
    add_force(sim)
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
    demo.add_argument(
        "--live",
        action="store_true",
        help="instead: one minute of a live hotspot on 127.0.0.1 (a fake fleet's counters, a real "
        "Prometheus, netheat serve) and the advisor steering around it; needs `prometheus`",
    )
    add_force(demo)
    demo.set_defaults(func=_demo)

    from netheat.scenario import add_cli as add_run_cli

    add_run_cli(sub)
    from netheat.data import add_cli as add_data_cli

    add_data_cli(sub)
    from netheat.workloads import add_cli as add_workload_cli

    add_workload_cli(sub)
    from netheat.analytics.cli import add_cli as add_analyze_cli

    add_analyze_cli(sub)
    from netheat.telemetry.cli import add_cli as add_ingest_cli

    add_ingest_cli(sub)
    from netheat.experiments.cli import add_cli as add_experiments_cli

    add_experiments_cli(sub)
    from netheat.serve.cli import add_cli as add_serve_cli

    add_serve_cli(sub)
    return p


def _crash_log(text: str) -> Path | None:
    """Write a full traceback to a log file and return its path (None if nowhere is writable)."""
    import tempfile
    import time

    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    for d in (Path(state) / "netheat", Path(tempfile.gettempdir()) / "netheat"):
        try:
            d.mkdir(parents=True, exist_ok=True)
            path = d / name
            path.write_text(text)
            return path
        except OSError:
            continue
    return None


def _set_budget(text: str | None) -> None:
    if text is None:
        return
    from netheat._netheat import parse_bytes, set_memory_budget

    try:
        size = parse_bytes(text)
    except (ValueError, NetheatError) as e:
        raise InputError(f"--memory-budget: {e}") from None
    if not size >= 1:
        raise InputError(f"--memory-budget must be at least 1 byte, got {text!r}")
    set_memory_budget(int(size))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``netheat`` command.

    Exit codes: 0 success; 1 some experiment points failed, or an
    unexpected internal error (a short message and the path of a log with
    the traceback; ``NETHEAT_DEBUG=1`` shows it instead); 2 a user error
    (bad arguments, configs, input files or output paths; one ``error:``
    line); 130 interrupted.
    """
    args = build_parser().parse_args(argv)
    try:
        _set_budget(args.memory_budget)
        code: int = args.func(args)
    except NetheatError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into a program that stopped reading (e.g. `| head`).
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep interpreter shutdown quiet
        return 0
    except OSError as e:
        if os.environ.get("NETHEAT_DEBUG"):
            raise
        where = f": {e.filename}" if e.filename else ""
        print(f"error: {e.strerror or e}{where}", file=sys.stderr)
        return 2
    except MemoryError:
        if os.environ.get("NETHEAT_DEBUG"):
            raise
        print(
            "error: out of memory; lower the run's size or set --memory-budget below the memory this "
            "machine can give",
            file=sys.stderr,
        )
        return 2
    except Exception as e:
        if os.environ.get("NETHEAT_DEBUG"):
            raise
        log = _crash_log(traceback.format_exc())
        where = f"; the full traceback is in {log}" if log else ""
        print(f"internal error: {type(e).__name__}: {str(e)[:300]}{where}", file=sys.stderr)
        print("This is a bug in netheat; please report it with that log.", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
