"""``netheat reproduce``: run the bundled experiments and write ``DIR/report.html``.

The bundled experiments live in ``experiments/*.toml`` at the project root,
one per reproduced paper result (``utp``, ``ccp``, ``sinbad``, ``baraat``,
``subways``, ``cloudburst`` as they land) plus examples; an installed wheel
ships them, and the ``examples/`` they reference, as package data in
``netheat/_bundled/`` (see :data:`netheat.experiments.runner.ROOT`). Every selected
file is validated before anything runs. The report has, for each
experiment, the paper's numbers and ours side by side, a plot, the exact
command that re-runs it, and the notes on where and why they differ; it
says which paper results are not reproduced yet. Every metric with a paper
number shows ours against it as a signed relative difference; a metric with a
``target`` (the agreement the project holds itself to) says whether it is met,
and a scorecard at the top lists every target of the experiments that ran, then the missed
ones again with their metrics' notes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pyarrow.parquet as pq

from netheat import __version__
from netheat.errors import InputError
from netheat.experiments.config import Experiment, load_experiment
from netheat.experiments.curves import comparison_curves
from netheat.experiments.registry import get_kind
from netheat.experiments.runner import ROOT, SOURCE_ROOT, RunResult, run_experiment
from netheat.experiments.summary import ci_text, has_intervals, rel_text, verdict
from netheat.output import OutputDir, save_png
from netheat.report import Figure, Section, Table, write_report

EXPERIMENTS_DIR = ROOT / "experiments"
PAPER_RESULTS = ("utp", "ccp", "sinbad", "baraat", "subways", "cloudburst", "memcache")
"""Names of the paper results netheat will reproduce (one experiment file each)."""


def available(directory: Path = EXPERIMENTS_DIR) -> dict[str, Path]:
    """Bundled experiment files by name (file stem)."""
    return {p.stem: p for p in sorted(directory.glob("*.toml"))}


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}" if isinstance(x, float | int) else str(x)


def _metrics_figure(summary: dict[str, Any], path: Path) -> Path:
    names = list(summary["metrics"])
    ours = [summary["metrics"][n]["ours"] for n in names]
    paper = [summary["metrics"][n]["paper"] for n in names]
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(max(3.0 * len(names), 4.0), 3.2), squeeze=False)
    for (
        ax,
        n,
        o,
        p,
    ) in zip(axes[0], names, ours, paper, strict=False):
        vals = [np.nan if o is None else o, np.nan if p is None else p]
        ci = summary["metrics"][n].get("ci95")
        # Our bar carries the 95% interval over seeds when there is one.
        err = None
        if ci is not None and o is not None:
            err = [[max(o - ci[0], 0.0), 0.0], [max(ci[1] - o, 0.0), 0.0]]
        ax.bar(["ours", "paper"], vals, color=["#c44", "#888"], yerr=err, capsize=4)
        band = summary["metrics"][n].get("target_range")
        if band is not None:  # the values that meet the target, shaded
            lo, hi = ax.get_ylim()
            band_lo = lo if band[0] is None else band[0]  # an open end: to the axis' edge
            band_hi = hi if band[1] is None else band[1]
            ax.axhspan(band_lo, band_hi, color="#4a4", alpha=0.15, zorder=0)
            ax.set_ylim(min(lo, band_lo), max(hi, band_hi))
        if p is None:
            ax.text(1, 0, "n/a", ha="center", va="bottom", color="#888")
        ax.set_xlim(-0.6, 1.6)
        ax.set_title(textwrap.fill(n, 26), fontsize=9)
        ax.set_ylabel(summary["metrics"][n]["unit"], fontsize=8)
        ax.tick_params(labelsize=8)
    if not names:
        axes[0][0].text(0.5, 0.5, "no metrics", ha="center")
    fig.tight_layout()
    try:
        save_png(fig, path)
    finally:
        plt.close(fig)
    return path


def _fct_figure(run_dir: Path, path: Path) -> Path | None:
    flows = run_dir / "flows.parquet"
    if not flows.is_file():
        return None
    t = pq.read_table(flows, columns=["variant", "fct_s"])
    variant = t.column("variant").to_numpy(zero_copy_only=False).astype(str)
    fct = t.column("fct_s").to_numpy(zero_copy_only=False).astype(float)
    fig, ax = plt.subplots(figsize=(7, 4))
    for v in dict.fromkeys(variant):
        x = np.sort(fct[(variant == v) & ~np.isnan(fct)])
        if len(x):
            ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"{v} ({len(x)} flows)")
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (s)")
    ax.set_ylabel("CDF")
    ax.legend()
    fig.tight_layout()
    try:
        save_png(fig, path)
    finally:
        plt.close(fig)
    return path


def run_figures(res: RunResult) -> list[Figure]:
    """The figures of a finished run beyond its metrics' bars: the file's comparisons as curves
    along numeric sweeps, then its scenario kinds' own plots."""
    curves = [Figure(png, caption) for png, caption in comparison_curves(res)]
    return curves + kind_figures(res.experiment, res.out)


def kind_figures(exp: Experiment, run_dir: Path) -> list[Figure]:
    """The plots each scenario kind of ``exp`` draws from its finished run in ``run_dir``."""
    figures: list[Figure] = []
    for name in dict.fromkeys(v.kind for v in exp.variants):
        kind = get_kind(name)
        if kind.figures is not None:
            figures.extend(Figure(png, caption) for png, caption in kind.figures(run_dir))
    return figures


def command_for(exp: Experiment, out: Path, quick: bool) -> str:
    """The exact command that re-runs one experiment (a checkout's file relative to its root,
    others, such as an installed wheel's, by absolute path)."""
    rel = exp.path
    if SOURCE_ROOT is not None and exp.path.is_relative_to(SOURCE_ROOT):
        rel = exp.path.relative_to(SOURCE_ROOT)
    return f"netheat experiment run {rel} --out {out}" + (" --quick" if quick else "")


def _section(name: str, exp: Experiment, res: RunResult, quick: bool) -> Section:
    s = res.summary
    with_ci = has_intervals(s)
    ci_head = ["95% CI over seeds"] if with_ci else []
    head = ["metric", "paper", "ours", *ci_head, "unit", "vs paper", "target", "note"]
    rows = [
        [
            m,
            _fmt(e["paper"]),
            _fmt(e["ours"]),
            *([ci_text(e)] if with_ci else []),
            e["unit"],
            rel_text(e),
            "-" if not e.get("target") else f"{e['target']}: {verdict(e)}",
            e["note"] or ("no paper number" if e["paper"] is None else ""),
        ]
        for m, e in s["metrics"].items()
    ]
    # More than 10% off, on the scorecard's measure (a paper number of 0: anything but 0).
    differ = [
        m
        for m, e in s["metrics"].items()
        if e["paper"] is not None
        and (
            e["ours"] is None
            or (abs(e["rel_diff"]) > 0.1 if e.get("rel_diff") is not None else e["ours"] != e["paper"])
        )
    ]
    pts = s["points"]
    ref = exp.reference.rstrip(".")
    text = " ".join(
        t
        for t in (
            exp.description,
            f"Reproduces: {ref}." if ref else "Not a paper result (no paper numbers).",
            f"{pts['completed']} of {pts['total']} points completed"
            + (f", {pts['failed']} failed (see points.parquet)." if pts["failed"] else "."),
            f"Differs from the paper (>10%): {', '.join(differ)}." if differ else "",
            exp.note,
            " ".join(f"Note: {n.rstrip('.')}." for n in s.get("notes", [])),
            "Run with --quick: smaller and fewer points than the full experiment." if quick else "",
        )
        if t
    )
    figures = [
        Figure(
            _metrics_figure(s, res.out / "metrics.png"),
            f"{name}: each metric, ours (red, with its 95% interval over seeds when the run has several) "
            "and the paper's (grey; n/a when the paper gives no number); green shading: the values "
            "that meet the metric's target, where it has one.",
        )
    ]
    figures.extend(run_figures(res))
    fct = _fct_figure(res.out, res.out / "fct_cdf.png")
    if fct is not None:
        figures.append(Figure(fct, f"{name}: flow completion times per variant (empirical CDF, all points)."))
    return Section(
        title=name,
        text=text,
        tables=[Table(head, rows, left=(len(head) - 4, len(head) - 2, len(head) - 1))],
        figures=figures,
        code=command_for(exp, res.out, quick),
    )


def scorecard(summaries: dict[str, dict[str, Any]], quick: bool = False) -> Section:
    """Every paper number of the runs counted by how close ours is, and every target listed with
    its verdict (the table a reader checks first)."""
    entries = [(n, m, e) for n, s in summaries.items() for m, e in s["metrics"].items()]
    with_paper = [e for _, _, e in entries if e["paper"] is not None]
    rel = [abs(e["rel_diff"]) for e in with_paper if e.get("rel_diff") is not None]
    targets = [(n, m, e) for n, m, e in entries if e.get("target")]
    met = [e for _, _, e in targets if e.get("met")]
    sure = [e for e in met if e.get("met_over_seeds")]
    text = (
        f"{len(with_paper)} metric(s) of the runs have a paper number; "
        f"{sum(r <= 0.1 for r in rel)} are within 10% of it and {sum(r <= 0.25 for r in rel)} within 25% "
        f"({len(with_paper) - len(rel)} without a relative difference: no value, or a paper number of 0). "
        f"{len(targets)} have a target, the agreement this project holds itself to; "
        f"{len(met)} are met"
        + (f", {len(sure)} of them with the whole 95% interval over seeds inside" if sure else "")
        + ". Relative difference: (ours - paper) / |paper|. A target met by the mean but not by "
        "the whole interval says so; the experiments' sections give every metric and the notes on "
        "why ours differs."
        + (
            " These are --quick runs, smaller than the experiments' own settings: a verdict here is "
            "not the full experiment's."
            if quick
            else ""
        )
    )
    rows = [
        [n, m, _fmt(e["paper"]), _fmt(e["ours"]), rel_text(e), e["unit"], e["target"], verdict(e)]
        for n, m, e in targets
    ]
    head = ["experiment", "metric", "paper", "ours", "vs paper", "unit", "target", "verdict"]
    tables = [Table(head, rows, left=(1, 5, 6, 7))] if rows else []
    # The targets missed, each with its metric's note (the paper's number and, where the bundled
    # file knows it, why ours differs), so the reason sits beside the verdict.
    missed = [[n, m, e.get("note") or "-"] for n, m, e in targets if e.get("met") is False]
    if missed:
        tables.append(
            Table(
                ["experiment", "target not met", "note: the paper's number and why ours differs"],
                missed,
                left=(1, 2),
            )
        )
    return Section(title="Scorecard", text=text, tables=tables)


def reproduce(
    names: list[str],
    out: Path,
    quick: bool = False,
    backend: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    directory: Path = EXPERIMENTS_DIR,
    progress: bool = True,
    force: bool = False,
) -> Path:
    """Run the named bundled experiments (all without names) and write ``out/report.html``."""
    files = available(directory)
    unknown = [n for n in names if n not in files]
    if unknown:
        raise InputError(
            f"unknown experiment(s) {', '.join(unknown)}; available in {directory}: "
            f"{', '.join(files) or '(none)'}"
        )
    chosen = names or list(files)
    exps = {n: load_experiment(files[n], quick=quick) for n in chosen}  # validate everything first
    sections: list[Section] = []
    present = [n for n in PAPER_RESULTS if n in files]
    missing = [n for n in PAPER_RESULTS if n not in files]
    status = (
        f"Paper results with an experiment: {', '.join(present) or 'none yet'}. "
        + (f"Not reproduced yet: {', '.join(missing)}. " if missing else "")
        + f"This report ran: {', '.join(chosen) or 'nothing (no experiment files)'}."
    )
    sections.append(
        Section(
            title="What is reproduced",
            text=status,
            code="netheat reproduce" + (" --quick" if quick else "") + f" --out {out}",
        )
    )
    with OutputDir.open(out, "reproduce", force=force):
        summaries: dict[str, dict[str, Any]] = {}
        for n, exp in exps.items():
            res = run_experiment(
                exp, out / n, backend=backend, workers=workers, ray_address=ray_address, progress=progress
            )
            summaries[n] = res.summary
            sections.append(_section(n, exp, res, quick))
        sections.insert(1, scorecard(summaries, quick))
        return write_report(
            out / "report.html",
            "netheat: reproduced results",
            sections,
            meta=f"netheat {__version__}" + (", quick mode" if quick else ""),
        )
