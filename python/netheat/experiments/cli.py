"""The ``experiment``, ``reproduce`` and ``compare`` commands (:func:`add_cli`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from netheat.experiments.runner import BACKENDS
from netheat.experiments.summary import ci_text, has_intervals, rel_text, verdict
from netheat.output import add_force


def _backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: process pool (default); ray: Ray tasks (pip install 'netheat[ray]')",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        help="Ray cluster address HOST:PORT or ray://HOST:PORT (default: start a local Ray)",
    )
    p.add_argument("--workers", type=int, default=None, help="parallel points (default: the number of CPUs)")
    p.add_argument("--quick", action="store_true", help="apply the files' [quick] overrides (smaller runs)")


def _summary_lines(summary: dict[str, Any]) -> list[str]:
    # The interval, difference and target columns only when some metric has one.
    ms = summary["metrics"].values()
    with_ci = has_intervals(summary)
    with_diff = any(m.get("rel_diff") is not None for m in ms)
    with_target = any(m.get("target") for m in ms)
    head = ["metric", "ours", "paper"] + (["vs paper"] if with_diff else []) + ["unit"]
    rows = [head + (["95% CI over seeds"] if with_ci else []) + (["target", "met"] if with_target else [])]
    for name, m in summary["metrics"].items():
        rows.append(
            [
                name,
                "-" if m["ours"] is None else f"{m['ours']:.6g}",
                "-" if m["paper"] is None else f"{m['paper']:.6g}",
            ]
            + ([rel_text(m)] if with_diff else [])
            + [m["unit"]]
            + ([ci_text(m)] if with_ci else [])
            + ([m.get("target") or "-", verdict(m)] if with_target else [])
        )
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    left = {0, len(head) - 1, *range(len(head), len(rows[0]))}
    cells = ((c.ljust(w[i]) if i in left else c.rjust(w[i]) for i, c in enumerate(r)) for r in rows)
    return ["  ".join(r).rstrip() for r in cells]


def seed_list(text: str) -> list[int]:
    """``--seeds``: comma-separated distinct non-negative integers."""
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(
            f"expected distinct non-negative integers separated by commas (e.g. 1,2,3), got {text!r}"
        )
    return seeds


def name_list(text: str) -> list[str]:
    """``--variants``: comma-separated distinct names."""
    names = [x.strip() for x in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"expected distinct variant names separated by commas (e.g. fifo-lm,fair-share), got {text!r}"
        )
    return names


def _run(args: argparse.Namespace) -> int:
    from netheat.experiments.config import load_experiment, only_variants
    from netheat.experiments.runner import run_experiment

    exp = load_experiment(args.file, quick=args.quick, variants=args.variants)
    if args.seeds is not None:
        exp.seeds = args.seeds
    if args.variants is not None:
        exp = only_variants(exp, args.variants)
    from netheat.experiments.reproduce import run_figures
    from netheat.output import OutputDir

    with OutputDir.open(args.out, "experiment run", force=args.force) as od:
        res = run_experiment(
            exp, od, backend=args.backend, workers=args.workers, ray_address=args.ray_address
        )
        figures = run_figures(res)
    print("\n".join(_summary_lines(res.summary)))
    pts = res.summary["points"]
    print(
        f"{pts['completed']}/{pts['total']} points done ({res.skipped} reused); wrote "
        + ", ".join(str(p) for p in [*res.tables, Path(args.out) / "summary.json"])
    )
    for note in res.summary.get("notes", []):
        print(f"note: {note}")
    if figures:
        print("plots: " + ", ".join(str(f.path) for f in figures))
    for p in res.failed:
        print(f"failed: {p.describe()}: {res.errors[p.hash].splitlines()[0]}")
    return 1 if res.failed else 0


def _kinds(args: argparse.Namespace) -> int:
    from netheat.experiments.registry import kinds, metrics

    for k in kinds().values():
        print(f"{k.name}: {k.description}")
        for p in k.params:
            req = "required" if p.required else f"default {p.default!r}"
            print(f"    {p.name} ({p.type}, {req}): {p.help}")
        if k.open_params:
            print("    any other key: passed to the kind as it is (validated before any point runs)")
        if k.topology_overrides:
            print(
                '    "topology.<key>": overrides that [topology] key of the `topology` file '
                "(validated before any point runs)"
            )
        if k.metric_scope is None:
            print(f"    reports: {', '.join(k.values)}; tables: {', '.join(k.tables)}")
        else:
            print(f"    default metrics: {', '.join(k.values)}; tables: {', '.join(k.tables)}")
            print("    its own value metrics (its names, not the global metrics below):")
            for m in k.metric_scope.metrics:
                print(f"        {m.name} ({m.unit}): {m.description}")
            for f in k.metric_scope.families:
                print(f"        {f.label}{f' ({f.unit})' if f.unit else ''}: {f.help}")
    print("metrics:")
    for m in metrics().values():
        print(f"    {m.name} ({m.unit or 'unit of `of`'}): {m.description}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from netheat.experiments.reproduce import reproduce

    report = reproduce(
        args.names,
        Path(args.out),
        quick=args.quick,
        backend=args.backend,
        workers=args.workers,
        ray_address=args.ray_address,
        force=args.force,
    )
    print(f"wrote {report}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from netheat.experiments.compare import compare_text

    print(compare_text(args.dir_a, args.dir_b))
    return 0


def add_cli(sub: Any) -> None:
    """Add ``experiment`` (``run``, ``kinds``), ``reproduce`` and ``compare`` to the subparsers ``sub``."""
    exp = sub.add_parser("experiment", help="run declarative experiments (variants, sweeps, seeds)")
    esub = exp.add_subparsers(dest="experiment_command", required=True, metavar="ACTION")
    run = esub.add_parser(
        "run",
        help=(
            "run every point of an experiment file (resumable) and write Parquet tables, "
            "summary.json and the kind's plots"
        ),
        description=(
            "Run every point (variant x sweep point x seed). Points already in DIR are reused; "
            "failed points are recorded in DIR/points.parquet and retried by the next run. "
            "Exit 0, 1 when some points failed, 2 on a bad experiment file."
        ),
    )
    run.add_argument("file", help="experiment TOML file")
    run.add_argument("--out", required=True, help="output directory (see `Outputs` in the README)")
    add_force(run)
    run.add_argument(
        "--seeds",
        type=seed_list,
        default=None,
        metavar="LIST",
        help=(
            "run these seeds instead of the file's (e.g. 1,2,3,4,5; points already in DIR are reused); "
            "with two or more, every metric also gets its 95%% interval over seeds"
        ),
    )
    run.add_argument(
        "--variants",
        type=name_list,
        default=None,
        metavar="LIST",
        help=(
            "run only these variants (e.g. spc,fifo-lm), and build and check only their points; "
            "the metrics that read other variants are left out, and a later run of the whole "
            "file into DIR reuses these points"
        ),
    )
    _backend_args(run)
    run.set_defaults(func=_run)
    kinds = esub.add_parser("kinds", help="list the scenario kinds (with parameters) and metrics")
    kinds.set_defaults(func=_kinds)

    rep = sub.add_parser(
        "reproduce",
        help="run the bundled experiments (experiments/*.toml) and write DIR/report.html",
    )
    rep.add_argument("names", nargs="*", metavar="NAME", help="experiments to run (default: all)")
    rep.add_argument("--out", required=True, help="output directory (see `Outputs` in the README)")
    add_force(rep)
    _backend_args(rep)
    rep.set_defaults(func=_reproduce)

    cmp = sub.add_parser("compare", help="metric-by-metric table of two experiment runs")
    cmp.add_argument("dir_a", metavar="DIR_A", help="output directory of the first run")
    cmp.add_argument("dir_b", metavar="DIR_B", help="output directory of the second run")
    cmp.set_defaults(func=_compare)
