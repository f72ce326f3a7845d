"""The ``netheat ingest`` command (:func:`add_cli`) and the options ``analyze --prometheus`` shares."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from netheat.output import add_force, output_file
from netheat.telemetry.prometheus import DEFAULT_TIMEOUT_S, MAX_POINTS, IngestResult


def add_source_options(p: Any, required: bool) -> None:
    """The Prometheus options of ``ingest prometheus`` (``required``) and of ``analyze``.

    For ``analyze`` every default is None, so that options given without
    ``--prometheus`` can be refused; :func:`ingest_from_args` fills them in.
    """
    p.add_argument("--topology", required=required, help="datacenter TOML file whose links the map names")
    p.add_argument("--map", required=required, help="port map TOML file (see docs/telemetry.md)")
    p.add_argument(
        "--since",
        required=required,
        help="start: a duration before now (6h), Unix seconds or an ISO 8601 date-time",
    )
    p.add_argument("--until", default=None, help="end, in the same forms (default: now)")
    p.add_argument(
        "--step",
        required=required,
        help="window length, e.g. 30s (widened, with a warning, if shorter than the scrape interval)",
    )
    p.add_argument(
        "--max-gap",
        default=None,
        help="longest time between two samples that is bridged (default auto: 2.5 scrape intervals)",
    )
    p.add_argument(
        "--timeout",
        default=None,
        help=f"timeout of each HTTP request (default: {DEFAULT_TIMEOUT_S:g}s)",
    )
    p.add_argument(
        "--max-points",
        type=int,
        default=None,
        help=f"most samples per series in one answer; the range is queried in chunks (default: {MAX_POINTS})",
    )


def ingest_from_args(args: argparse.Namespace, url: str) -> IngestResult:
    """Run the ingestion the parsed options describe."""
    from netheat.telemetry.prometheus import ingest_prometheus, parse_seconds, parse_time

    now = time.time()
    since = parse_time(args.since, now, "--since")
    until = parse_time(args.until or "now", now, "--until")
    step = parse_seconds(args.step, "--step")
    max_gap = None if args.max_gap in (None, "auto") else parse_seconds(args.max_gap, "--max-gap")
    timeout = parse_seconds(args.timeout, "--timeout") if args.timeout else DEFAULT_TIMEOUT_S
    return ingest_prometheus(
        url,
        args.topology,
        args.map,
        since=since,
        until=until,
        step_s=step,
        max_gap_s=max_gap,
        timeout_s=timeout,
        max_points=args.max_points or MAX_POINTS,
        now=now,
    )


def print_notes(res: IngestResult) -> None:
    """Warnings on stderr, other notes on stdout."""
    for note in res.notes:
        if note.startswith("warning: "):
            print(note, file=sys.stderr)
        else:
            print(f"note: {note}")


def _prometheus(args: argparse.Namespace) -> int:
    target = output_file(args.out, force=args.force, flag="--out")  # checked before any query
    res = ingest_from_args(args, args.url)
    res.write_to(target)
    print_notes(res)
    s = res.stats
    print(
        f"{s['rows']:,} rows: {s['directed_links']:,} directed links x {s['windows']:,} windows of "
        f"{s['step_s']:g} s ({s['queries']} {'query' if s['queries'] == 1 else 'queries'} to Prometheus)"
    )
    print(f"wrote {args.out}")
    return 0


def add_cli(sub: Any) -> None:
    """Add the ``ingest`` command to the top-level subparsers ``sub``."""
    ingest = sub.add_parser("ingest", help="read link telemetry from monitoring systems into a links table")
    isub = ingest.add_subparsers(dest="ingest_command", required=True, metavar="SOURCE")
    p = isub.add_parser(
        "prometheus",
        help="per-port byte counters from Prometheus (node_exporter, snmp_exporter IF-MIB) to links.parquet",
        description=(
            "Read node_exporter NIC counters and snmp_exporter IF-MIB switch-port counters through "
            "Prometheus' HTTP API, tie them to the datacenter's directed links with a port map, and write "
            "the links table `netheat analyze` reads (one row per directed link per window). See "
            "docs/telemetry.md."
        ),
    )
    p.add_argument("--url", required=True, help="Prometheus base URL, e.g. http://127.0.0.1:9090")
    add_source_options(p, required=True)
    p.add_argument("--out", required=True, help="Parquet file to write (see `Outputs` in the README)")
    add_force(p, file=True)
    p.set_defaults(func=_prometheus)
