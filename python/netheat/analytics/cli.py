"""The ``netheat analyze`` command (:func:`add_cli`)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from netheat.errors import InputError
from netheat.output import add_force


def _duration(text: str) -> float:
    """Seconds from ``"5min"``/``"30s"`` or a plain number of seconds."""
    try:
        return float(text)
    except ValueError:
        pass
    from netheat._netheat import parse_duration

    return float(parse_duration(text))


def _weights(text: str | None) -> dict[str, float] | None:
    """``{"PC": 2.0, ...}`` from ``"PC=2,NC=1,BE=0.5"`` (None when not given)."""
    if not text:
        return None
    out: dict[str, float] = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        try:
            w = float(value)
        except ValueError:
            w = math.nan
        if not eq or not name.strip() or not w > 0 or math.isinf(w):
            raise InputError(f"--qos-weights: expected CLASS=WEIGHT (a positive number), got {part!r}")
        out[name.strip()] = w
    return out


def _run(args: argparse.Namespace) -> int:
    from netheat.analytics.report import AnalysisConfig, analyze

    if not 0 < args.threshold <= 1.5:
        raise InputError(f"--threshold must be in (0, 1.5], got {args.threshold}")
    if args.bucket <= 0 or 100 % args.bucket:
        raise InputError(f"--bucket must divide 100, got {args.bucket}")
    if args.min_samples < 1:
        raise InputError(f"--min-samples must be at least 1, got {args.min_samples}")
    cfg = AnalysisConfig(
        threshold=args.threshold,
        hotspot_window_s=_duration(args.window),
        latency_window_s=_duration(args.latency_window),
        bucket_pct=args.bucket,
        min_samples=args.min_samples,
        reference_layer=args.layer,
        interval_s=_duration(args.interval) if args.interval else None,
        stability_max_links=args.stability_links or None,
        qos_weights=_weights(args.qos_weights),
    )
    for name, v in (("--window", cfg.hotspot_window_s), ("--latency-window", cfg.latency_window_s)):
        if not v > 0:
            raise InputError(f"{name} must be positive, got {v}")
    links = args.links
    if args.prometheus:
        links = _ingest(args)
    else:
        given = [f for f in _PROMETHEUS_ONLY if getattr(args, f.lstrip("-").replace("-", "_")) is not None]
        if given:
            raise InputError(
                f"{', '.join(given)} go with --prometheus (with --links the samples are read from the file)"
            )
    res = analyze(links, args.latency, args.out, cfg, force=args.force)
    s = res.summary
    print(
        f"{s['link_samples']:,} link samples ({s['directed_links']:,} directed links), "
        f"{s['hot_link_windows']:,} hot link-windows, {s['hotspots']:,} hotspots"
    )
    if s["latency_file"]:
        print(f"{s['latency_samples']:,} latency samples, {s['latency_associated']:,} associated")
        for reason, n in s["latency_skipped"].items():
            print(f"  skipped {n:,}: {reason}")
    for note in s["notes"]:
        if note.startswith("warning: "):
            print(note, file=sys.stderr)
    print(f"wrote {res.report}")
    return 0


_PROMETHEUS_ONLY = (
    "--topology",
    "--map",
    "--since",
    "--until",
    "--step",
    "--max-gap",
    "--timeout",
    "--max-points",
)
"""Options that only ``--prometheus`` uses."""


def _ingest(args: argparse.Namespace) -> Path:
    """``--prometheus``: read the links table from Prometheus into ``DIR/links.parquet``."""
    from netheat.output import OutputDir
    from netheat.telemetry.cli import ingest_from_args, print_notes

    missing = [f for f in ("--topology", "--map", "--since", "--step") if not getattr(args, f.lstrip("-"))]
    if missing:
        raise InputError(f"--prometheus needs {', '.join(missing)}")
    with OutputDir.open(args.out, "analyze", force=args.force) as od:
        res = ingest_from_args(args, args.prometheus)
        with od.transaction("ingest") as stage:
            res.write_to(stage / "links.parquet")
    print_notes(res)
    out = Path(args.out) / "links.parquet"
    print(
        f"wrote {out}: {res.stats['rows']:,} rows from Prometheus "
        f"({res.stats['directed_links']:,} directed links)"
    )
    return out


def add_cli(sub: Any) -> None:
    """Add the ``analyze`` command to the top-level subparsers ``sub``."""
    p = sub.add_parser(
        "analyze",
        help="hotspot analytics of link-utilization and latency telemetry, with an HTML report",
        description=(
            "Characterize hotspots from link samples (CSV/Parquet: timestamp, link, direction, utilization; "
            "or netheat's links.parquet) and optional latency samples (start_s, latency_s, op and the links "
            "or tors used). Writes DIR/tables/*.parquet, DIR/plots/*.png, DIR/summary.json and "
            "DIR/report.html."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--links", help="link samples: CSV, Parquet, or a directory of Parquet files")
    src.add_argument(
        "--prometheus",
        metavar="URL",
        help=(
            "read the link samples from Prometheus instead (needs --topology, --map, --since, --step; "
            "see docs/telemetry.md); the table is kept as DIR/links.parquet"
        ),
    )
    p.add_argument("--latency", default=None, help="latency samples: CSV or Parquet (optional)")
    p.add_argument("--out", required=True, help="output directory (see `Outputs` in the README)")
    add_force(p)
    p.add_argument("--threshold", type=float, default=0.75, help="hotspot threshold (default: 0.75)")
    p.add_argument("--window", default="5min", help="hotspot window (default: 5min)")
    p.add_argument("--latency-window", default="30s", help="latency association window (default: 30s)")
    p.add_argument("--bucket", type=int, default=5, help="utilization bucket width in %% (default: 5)")
    p.add_argument(
        "--min-samples",
        type=int,
        default=20,
        help="samples a bucket needs to be the base or count for Load-tolerance (default: 20)",
    )
    p.add_argument(
        "--qos-weights",
        default=None,
        metavar="CLASS=W,...",
        help=(
            "queue weight per QoS class, e.g. PC=2,NC=1,BE=0.5: latency samples then see the weighted-"
            "effective utilization of their class (hotspot paper Appendix C) from the link samples' "
            "utilization_<class> columns"
        ),
    )
    p.add_argument("--layer", default="tor-agg", help="the ToR-aggregation layer name (default: tor-agg)")
    p.add_argument("--interval", default=None, help="sample interval, for bytes-based samples without one")
    p.add_argument(
        "--stability-links",
        type=int,
        default=1000,
        help="at most this many bottleneck links for stability (0 = all; default: 1000)",
    )
    from netheat.telemetry.cli import add_source_options

    add_source_options(p.add_argument_group("with --prometheus"), required=False)
    p.set_defaults(func=_run)
