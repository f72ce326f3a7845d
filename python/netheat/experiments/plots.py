"""Plots of scenario kinds, drawn from a finished run directory's Parquet tables.

Each function reads ``DIR/<table>.parquet`` (written by the runner, one row
per point with a ``variant`` column), writes PNGs into ``DIR`` and returns
``[(png, caption)]`` for the report. Several seeds of a variant are averaged
per time window; CDFs pool them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from netheat.output import save_png


def _params(run_dir: Path, kind: str) -> dict[str, Any]:
    """Parameters of the first finished point of ``kind`` (all variants share time parameters)."""
    for meta in sorted((run_dir / "points").glob("*/point.json")):
        m = json.loads(meta.read_text())
        if m.get("kind") == kind:
            return dict(m["params"])
    return {}


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    try:
        return save_png(fig, path)
    finally:
        plt.close(fig)


def _placement_load_figure(pts: pl.DataFrame, run_dir: Path) -> tuple[Path, str]:
    """A cluster load sweep: each placement policy's measures against the baseline's cell-level
    utilization."""
    ok = pts.filter(pl.col("status") == "ok")
    load = (
        ok.filter(pl.col("variant") == "bandwidth-oblivious")
        .group_by("point")
        .agg(pl.col("stats.placement_cell_util").mean().alias("load"))
    )
    panels: tuple[tuple[str, str, float], ...] = (
        ("stats.placement_hot_tor_share", "hot ToR-windows (%)", 100.0),
        ("stats.placement_p98_tor_util", "p98 ToR utilization (%)", 100.0),
        ("stats.measured_migrations", "tasks migrated after the warm-up", 1.0),
        ("stats.measured_net_intensive_on_hot_share", "net-intensive placements on hot ToRs (%)", 100.0),
        ("query-small.tct_p95_s", "small query p95 (s)", 1.0),
        ("query-large.tct_p95_s", "large query p95 (s)", 1.0),
    )
    panels = tuple(p for p in panels if p[0] in ok.columns)
    m = (
        ok.join(load, on="point")
        .group_by("variant", "load")
        .agg(*(pl.col(c).mean() for c, _, _ in panels))
        .sort("variant", "load")
    )
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(9, 3 * rows), sharex=True, squeeze=False)
    for ax, (col, label, scale) in zip(axes.flat, panels, strict=False):
        for v in m["variant"].unique(maintain_order=True).to_list():
            d = m.filter(pl.col("variant") == v)
            ax.plot(100.0 * d["load"].to_numpy(), scale * d[col].to_numpy(), marker="o", ms=3, lw=1, label=v)
        ax.set_ylabel(label, fontsize=8)
    axes[0, 1].axhline(75.0, color="#888", ls="--", lw=1)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("cell-level utilization, bandwidth-oblivious (%)", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    return (
        _save(fig, run_dir / "placement_load.png"),
        "Load sweep: per placement policy, the share of hot ToR-windows, the p98 ToR utilization (dashed: "
        "the 75% hot threshold), tasks migrated, the share of network-intensive placements on hot ToRs and "
        "the analytical queries' p95 completion times (Figure 19's measure), against the average "
        "cell-level utilization (the hotspot paper's Figure 16 definition) of the bandwidth-oblivious run "
        "at the same load (mean over seeds).",
    )


def placement_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Scenario experiments over a ``cluster`` app: a load sweep's measures against the cell-level
    utilization, or migrations per hour and the analytical queries' completion-time CDFs."""
    points_path = run_dir / "points.parquet"
    if not points_path.is_file():
        return []
    pts = pl.read_parquet(points_path).with_columns(pl.col("variant").cast(pl.Utf8))
    if "stats.placement_cell_util" not in pts.columns:
        return []
    load_columns = (
        "stats.placement_hot_tor_share",
        "stats.placement_p98_tor_util",
        "stats.measured_migrations",
        "stats.measured_net_intensive_on_hot_share",
    )
    if (
        pts["point"].n_unique() > 1
        and "bandwidth-oblivious" in pts["variant"].to_list()
        and all(c in pts.columns for c in load_columns)
    ):
        # A load sweep: migrations over time and query CDFs would mix loads.
        return [_placement_load_figure(pts, run_dir)]
    out: list[tuple[Path, str]] = []
    seeds = pts.group_by("variant").agg(pl.col("seed").n_unique().alias("seeds"))
    migrations_path = run_dir / "migrations.parquet"
    if migrations_path.is_file():
        per_hour = (
            pl.read_parquet(migrations_path, columns=["variant", "time_s"])
            .with_columns(
                pl.col("variant").cast(pl.Utf8), (pl.col("time_s") // 3600).cast(pl.Int64).alias("hour")
            )
            .group_by("variant", "hour")
            .agg(pl.len().alias("n"))
            .join(seeds, on="variant")
            .with_columns((pl.col("n") / pl.col("seeds")).alias("per_seed"))
            .sort("variant", "hour")
        )
        variants = per_hour["variant"].unique(maintain_order=True).to_list()
        if variants:
            fig, ax = plt.subplots(figsize=(8, 3.2))
            width = 0.8 / len(variants)
            for k, v in enumerate(variants):
                d = per_hour.filter(pl.col("variant") == v)
                ax.bar(d["hour"].to_numpy() + k * width, d["per_seed"].to_numpy(), width, label=v)
            ax.set_xlabel("hour")
            ax.set_ylabel("migrations per hour")
            ax.legend(fontsize=8)
            out.append(
                (
                    _save(fig, run_dir / "placement_migrations.png"),
                    "Tasks migrated off hot ToRs per hour, per migrating policy (mean over seeds).",
                )
            )
    tasks_path = run_dir / "tasks.parquet"
    if tasks_path.is_file():
        warmups = pts["stats.warmup_s"].drop_nulls().to_list() if "stats.warmup_s" in pts.columns else []
        warmup = float(max(warmups, default=0.0))
        q = pl.read_parquet(tasks_path, columns=["variant", "kind", "start_s", "tct_s"]).with_columns(
            pl.col("variant").cast(pl.Utf8), pl.col("kind").cast(pl.Utf8)
        )
        q = q.filter(
            pl.col("kind").str.starts_with("query-")
            & (pl.col("start_s") >= warmup)
            & pl.col("tct_s").is_not_nan()
        )
        for kind in sorted(set(q["kind"].to_list())):
            out.append(
                (
                    _cdf_per_variant(
                        q.filter(pl.col("kind") == kind),
                        "tct_s",
                        1.0,
                        f"{kind} completion time (s)",
                        "CDF of queries",
                        run_dir / f"placement_{kind}_cdf.png",
                    ),
                    f"Completion times of the {kind} analytical queries after the warm-up, per policy "
                    "(all seeds pooled).",
                )
            )
    return out


def search_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Scenario experiments with a capacity search (``search.*``) swept over one numeric key:
    ``search.found`` against that key, one line per variant (mean over seeds)."""
    found: dict[tuple[str, float], list[float]] = {}
    axes: set[str] = set()
    key = value = ""
    for meta in sorted((run_dir / "points").glob("*/point.json")):
        m = json.loads(meta.read_text())
        sweep = m.get("sweep") or {}
        if m.get("kind") != "scenario" or len(sweep) != 1:
            continue
        v = json.loads((meta.parent / "values.json").read_text())
        ((axis, x),) = sweep.items()
        if "search.found" not in v or not isinstance(x, int | float):
            continue
        axes.add(axis)
        key, value = str(m["params"].get("search.key")), str(m["params"].get("search.value"))
        limit = m["params"].get("search.at-most")
        found.setdefault((str(m["variant"]), float(x)), []).append(float(v["search.found"]))
    if not found or len(axes) != 1:
        return []
    (axis,) = axes
    fig, ax = plt.subplots(figsize=(7, 4))
    for variant in sorted({k[0] for k in found}):
        xs = sorted((o, float(np.mean(r))) for (v, o), r in found.items() if v == variant)
        ax.plot([o for o, _ in xs], [r for _, r in xs], marker="o", label=variant)
    ax.set_xlabel(axis)
    ax.set_ylabel(f"largest {key}")
    ax.legend(fontsize=8)
    return [
        (
            _save(fig, run_dir / "search_found.png"),
            f"Largest {key} at which {value} stays at or below {limit} with every measured task "
            f"finished (mean over seeds), per variant, against {axis}.",
        )
    ]


BARAAT_POLICIES = ("fair-share", "sff", "stf", "fifo", "fifo-lm", "spc", "rcp")
"""The one-stage policy variants of ``experiments/baraat.toml`` (same tasks per workload and seed)."""


APP = "workload.app.0."
"""Prefix of the aggregation app's keys in a scenario experiment's points (``experiments/baraat.toml``)."""


def _aggregation_params(p: dict[str, Any]) -> dict[str, Any]:
    """A scenario point's aggregation-app keys in the baraat kind's names (the scenario
    file's own values where the point does not override them: one-stage, 0.8, no batch)."""
    from netheat._netheat import parse_duration

    compute = p.get(APP + "compute", 0.0)
    return {
        "workload": str(p[APP + "task-sizes"]).replace("-", "_"),
        "app": p.get(APP + "structure", "one-stage"),
        "load": p.get(APP + "load", 0.8),
        "batch": p.get(APP + "batch", False),
        "compute": parse_duration(compute) if isinstance(compute, str) else float(compute),
        "policy": str(p.get("scheduling.policy", "")),
    }


def _baraat_tasks(run_dir: Path) -> pl.DataFrame:
    """Every finished Baraat task (a ``baraat`` point's, or a scenario point's whose app is the
    aggregation workload) with its point's workload, app, load and policy."""
    params: dict[str, dict[str, Any]] = {}
    for meta in sorted((run_dir / "points").glob("*/point.json")):
        m = json.loads(meta.read_text())
        if m.get("kind") == "baraat":
            params[meta.parent.name] = m["params"]
        elif m.get("kind") == "scenario" and APP + "task-sizes" in m["params"]:
            params[meta.parent.name] = _aggregation_params(m["params"])
    path = run_dir / "tasks.parquet"
    if not params or not path.exists():
        return pl.DataFrame()
    info = pl.DataFrame(
        {
            "point_hash": list(params),
            "workload": [str(p["workload"]) for p in params.values()],
            "app": [str(p["app"]) for p in params.values()],
            "load": [float(p["load"]) for p in params.values()],
            "batch": [bool(p["batch"]) for p in params.values()],
            "compute": [float(p["compute"]) for p in params.values()],
            "policy": [str(p.get("policy", "")) for p in params.values()],
        }
    )
    tasks = pl.read_parquet(path, columns=["variant", "point_hash", "seed", "task_id", "bytes", "tct_s"])
    tasks = tasks.with_columns(pl.col("variant").cast(pl.Utf8), pl.col("point_hash").cast(pl.Utf8))
    return tasks.join(info, on="point_hash").filter(pl.col("tct_s").is_not_nan())


def gain_by_size(size: np.ndarray, base_s: np.ndarray, new_s: np.ndarray) -> pl.DataFrame:
    """``1 - mean(new) / mean(base)`` per task-size bin, with the bin's median size (``bytes``).

    A bin per size when there are at most ten distinct sizes (Bing-like
    workloads), else ten bins of equal task count (fewer when quantiles
    coincide); ``base_s`` and ``new_s`` are the same tasks' times.
    """
    sizes = np.unique(size)
    if len(sizes) <= 10:
        idx = np.searchsorted(sizes, size)
    else:
        edges = np.unique(np.quantile(size, np.linspace(0, 1, 11)))
        idx = np.clip(np.searchsorted(edges, size, side="right") - 1, 0, len(edges) - 2)
    df = pl.DataFrame({"bin": idx, "bytes": size, "base": base_s, "new": new_s})
    return (
        df.group_by("bin")
        .agg(pl.col("bytes").median(), pl.len().alias("tasks"), pl.col("base").mean(), pl.col("new").mean())
        .sort("bin")
        .with_columns((1.0 - pl.col("new") / pl.col("base")).alias("reduction"))
    )


def block_write_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Block write times per variant (a storage scenario's ``blocks``; Sinbad's Figure 8 form: the
    CDF of block write times, counted from placement, all seeds and sweep points pooled)."""
    path = run_dir / "blocks.parquet"
    if not path.exists():
        return []
    blocks = pl.read_parquet(path, columns=["variant", "write_s"]).filter(pl.col("write_s").is_not_nan())
    if blocks.is_empty():
        return []
    return [
        (
            _cdf_per_variant(
                blocks,
                "write_s",
                1.0,
                "block write time (s, from placement)",
                "CDF of blocks",
                run_dir / "block_write_cdf.png",
            ),
            "Block write times per variant, counted from each block's placement (all seeds pooled).",
        )
    ]


WRITE_BINS = (0.0, 0.25, 0.5, 0.75, 0.9)
"""Lower edges of the Sinbad paper's job bins by the share of a job's duration spent writing
(SIGCOMM'13 Table 3: < 25%, 25-49%, 50-74%, 75-89%, >= 90%)."""

JOB_KINDS = ("mr-job", "write-job")
"""Task kinds of jobs that write to the file system (``sinbad-ec2-jobs.toml``)."""


def job_write_bins(base: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Sinbad's Figure 6 form: jobs binned by the share of their duration spent writing (Table 3's
    bins, :data:`WRITE_BINS`), and per bin the improvement of the average end-to-end completion
    time and of the average time in writes, ``mean(base) / mean(new)`` over the bin's jobs.

    The paper bins jobs by their durations in the original trace, a run apart from the ones
    compared. Binning by one of the compared runs would favour the other (a job whose writes
    happened to be short under ``base`` lands in a low bin and looks slower under ``new``), so a
    job's share here is over both runs: ``(write_s + write_s_new) / (tct_s + tct_s_new)``.

    Both frames have a row per job with ``seed``, ``task_id``, ``tct_s`` and ``write_s`` (the
    time from the job's first block request to its end); jobs are paired on ``seed`` and
    ``task_id``. Bins without jobs are left out.
    """
    j = base.join(new, on=["seed", "task_id"], suffix="_new").filter(
        pl.col("tct_s").is_not_nan() & pl.col("tct_s_new").is_not_nan() & (pl.col("tct_s") > 0)
    )
    share = ((j["write_s"] + j["write_s_new"]) / (j["tct_s"] + j["tct_s_new"])).to_numpy()
    writes = (pl.col("write_s").sum() / pl.col("write_s_new").sum()).alias("writes")
    return _paired_classes(j, "bin", share, WRITE_BINS, writes)


def _paired_classes(
    j: pl.DataFrame, name: str, values: np.ndarray, lower: tuple[float, ...], *more: pl.Expr
) -> pl.DataFrame:
    """Rows of paired jobs ``j`` classed by ``values`` against the classes' lower edges ``lower``
    (class 1 from the first; an edge is in the class above it), and per class the share of the
    jobs, the end-to-end improvement ``sum(tct_s) / sum(tct_s_new)`` and the aggregations ``more``."""
    cls = np.searchsorted(np.asarray(lower[1:]), values, side="right") + 1
    n = max(j.height, 1)
    return (
        j.with_columns(pl.Series(name, cls))
        .group_by(name)
        .agg(
            (pl.len() / n).alias("share"),
            (pl.col("tct_s").sum() / pl.col("tct_s_new").sum()).alias("end_to_end"),
            *more,
        )
        .sort(name)
    )


WRITE_SIZES = (0.0, 1e8, 1e9, 1e10)
"""Lower edges of the job classes by bytes written (decades from 100 MB; replicas not counted), for
Sinbad's Figure 7 form. The paper's own class edges are not legible in our copy; these were chosen
once, before any run of the figure."""


def job_size_bins(base: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Sinbad's Figure 7 form: jobs classed by the bytes they write (``written``, the same under
    both policies; :data:`WRITE_SIZES`), and per class the share of jobs and the improvement of
    the average end-to-end completion time, ``mean(base) / mean(new)``. Frames as
    :func:`job_write_bins`, with ``written``; empty classes are left out."""
    j = base.join(new.select("seed", "task_id", "tct_s"), on=["seed", "task_id"], suffix="_new").filter(
        pl.col("tct_s").is_not_nan() & pl.col("tct_s_new").is_not_nan()
    )
    return _paired_classes(j, "size_class", j["written"].to_numpy(), WRITE_SIZES)


def _job_times(run_dir: Path) -> pl.DataFrame:
    """Every job of :data:`JOB_KINDS` with its variant, seed, completion time, time in writes and
    bytes written."""
    tasks_path, blocks_path = run_dir / "tasks.parquet", run_dir / "blocks.parquet"
    if not tasks_path.exists() or not blocks_path.exists():
        return pl.DataFrame()
    tasks = pl.read_parquet(
        tasks_path, columns=["variant", "point_hash", "seed", "task_id", "kind", "finish_s", "tct_s"]
    )
    tasks = tasks.filter(pl.col("kind").cast(pl.Utf8).is_in(JOB_KINDS))
    if tasks.is_empty():
        return pl.DataFrame()
    from netheat.experiments.scenario import write_times

    blocks = pl.read_parquet(blocks_path, columns=["point_hash", "task_id", "requested_s", "bytes"])
    tasks = tasks.with_columns(pl.col("variant").cast(pl.Utf8), pl.col("point_hash").cast(pl.Utf8))
    blocks = blocks.with_columns(pl.col("point_hash").cast(pl.Utf8))
    return write_times(tasks, blocks, ["point_hash", "task_id"]).filter(pl.col("requested_s").is_not_null())


def job_bin_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Sinbad's Figure 6 form for runs with jobs that write (``mr-job``, ``write-job``): per pair of
    variants named ``...uniform...`` and the same with ``sinbad``, the improvements by bin of
    :func:`job_write_bins`."""
    jobs = _job_times(run_dir)
    if jobs.is_empty():
        return []
    variants = set(jobs["variant"].to_list())
    pairs = sorted((v, v.replace("uniform", "sinbad")) for v in variants if "uniform" in v)
    pairs = [(a, b) for a, b in pairs if b in variants]
    if not pairs:
        return []
    fig, axes = plt.subplots(2, len(pairs), figsize=(5.0 * len(pairs), 7.4), squeeze=False)
    labels = ["< 100 MB", "0.1-1 GB", "1-10 GB", ">= 10 GB"]
    for ax, (a, b) in zip(axes[1], pairs, strict=True):
        cols = ["seed", "task_id", "tct_s", "written"]
        sizes = job_size_bins(
            jobs.filter(pl.col("variant") == a).select(cols), jobs.filter(pl.col("variant") == b).select(cols)
        )
        x = sizes["size_class"].to_numpy()
        ax.bar(x, sizes["end_to_end"].to_numpy(), 0.6, color="tab:green")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(
            x,
            [f"{labels[k - 1]}\n{100 * s:.0f}%" for k, s in zip(x, sizes["share"].to_numpy(), strict=True)],
        )
        ax.set_ylabel("end-to-end improvement")
        ax.set_xlabel("bytes written by the job (share of jobs)")
        ax.grid(alpha=0.3, axis="y")
    for ax, (a, b) in zip(axes[0], pairs, strict=True):
        cols = ["seed", "task_id", "tct_s", "write_s"]
        bins = job_write_bins(
            jobs.filter(pl.col("variant") == a).select(cols), jobs.filter(pl.col("variant") == b).select(cols)
        )
        x = bins["bin"].to_numpy()
        ax.bar(x - 0.2, bins["end_to_end"].to_numpy(), 0.4, label="end to end")
        ax.bar(x + 0.2, bins["writes"].to_numpy(), 0.4, label="time in writes")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xticks(
            x, [f"bin {k}\n{100 * s:.0f}%" for k, s in zip(x, bins["share"].to_numpy(), strict=True)]
        )
        ax.set_ylabel("improvement (uniform / sinbad)")
        ax.set_title(f"{a} / {b}", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    return [
        (
            _save(fig, run_dir / "job_write_bins.png"),
            "Top: improvement of the average job completion time and time in writes by bin (Sinbad's "
            "Figure 6 form): jobs binned by the share of their duration spent writing, over both policies' "
            "runs (Table 3's bins; the share of jobs under each bin). Bottom: the end-to-end improvement by "
            "the bytes a job writes (Figure 7's form; decades from 100 MB). The same jobs paired across the "
            "two policies, all seeds pooled.",
        )
    ]


def chunk_read_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Chunk read latencies per variant (a ``chunk-store`` scenario's reads; the hotspot paper's
    Figure 20 reports their p95, network and total): one CDF of the network seconds on each
    read's critical path and one of the total, all seeds pooled."""
    path = run_dir / "tasks.parquet"
    if not path.exists():
        return []
    reads = pl.read_parquet(path, columns=["variant", "kind", "tct_s", "network_s"]).filter(
        (pl.col("kind") == "chunk-read") & pl.col("tct_s").is_not_nan()
    )
    if reads.is_empty():
        return []
    out = []
    for column, what, name in (
        ("network_s", "network", "chunk_read_network_cdf.png"),
        ("tct_s", "total (network + disk)", "chunk_read_total_cdf.png"),
    ):
        out.append(
            (
                _cdf_per_variant(
                    reads.filter(pl.col(column) > 0),
                    column,
                    1e3,
                    f"chunk read latency, {what} (ms)",
                    "CDF of reads",
                    run_dir / name,
                ),
                f"Chunk read latency per variant, {what}: the hotspot paper's Figure 20 gives its p95 "
                "(all seeds pooled).",
            )
        )
    return out


_SIZED_P99 = re.compile(r"^(?P<kind>[^.]+)\.(?P<bytes>\d+)B\.tct_p99_s$")


def task_size_p99(pts: pl.DataFrame) -> dict[tuple[str, str], pl.DataFrame]:
    """Per (task kind, sweep point) whose tasks come in two to eight sizes: the p99 task time per
    variant and size (``<kind>.<bytes>B.tct_p99_s``), the mean over seeds; columns variant, bytes,
    p99_s."""
    sized: dict[str, list[tuple[int, str]]] = {}
    for c in pts.columns:
        m = _SIZED_P99.match(c)
        if m:
            sized.setdefault(m["kind"], []).append((int(m["bytes"]), c))
    out: dict[tuple[str, str], pl.DataFrame] = {}
    for kind, cols in sized.items():
        if not 2 <= len(cols) <= 8:
            continue
        cols.sort()
        long = pl.concat(
            [
                pts.select(
                    pl.col("variant").cast(pl.Utf8),
                    pl.col("point").cast(pl.Utf8),
                    pl.lit(b, dtype=pl.Int64).alias("bytes"),
                    pl.col(c).alias("p99_s"),
                )
                for b, c in cols
            ]
        )
        means = long.group_by("variant", "point", "bytes", maintain_order=True).agg(pl.col("p99_s").mean())
        for point in means["point"].unique(maintain_order=True).to_list():
            # The sizes this point's tasks have (a column of another point's size is NaN here).
            here = means.filter((pl.col("point") == point) & pl.col("p99_s").is_not_nan()).drop("point")
            if here["bytes"].n_unique() >= 2:
                out[(kind, point)] = here
    return out


def task_size_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """The p99 task completion time per variant and task size (:func:`task_size_p99`), grouped
    bars on a log axis: CloudBurst's per-size incast p99 (the slides' Figs. 9 and 11), and any
    workload whose tasks come in a few sizes."""
    points_path = run_dir / "points.parquet"
    if not points_path.is_file():
        return []
    out: list[tuple[Path, str]] = []
    for i, ((kind, point), t) in enumerate(task_size_p99(pl.read_parquet(points_path)).items()):
        variants = t["variant"].unique(maintain_order=True).to_list()
        sizes = sorted(set(t["bytes"].to_list()))
        fig, ax = plt.subplots(figsize=(max(7.0, 0.5 * len(variants) * len(sizes) + 2), 4))
        width = 0.8 / len(variants)
        for k, v in enumerate(variants):
            row = t.filter(pl.col("variant") == v)
            by = dict(zip(row["bytes"].to_list(), row["p99_s"].to_list(), strict=True))
            ys = [by.get(b, np.nan) * 1e3 for b in sizes]
            x = np.arange(len(sizes)) + (k - (len(variants) - 1) / 2) * width
            ax.bar(x, ys, width, label=v, color=plt.get_cmap("tab20")(k % 20))
        ax.set_xticks(range(len(sizes)), [f"{b:,} B" for b in sizes])
        ax.set_yscale("log")
        ax.set_ylabel(f"p99 {kind} completion time (ms)")
        ax.set_title(point if point != "-" else kind, fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(alpha=0.3, axis="y")
        out.append(
            (
                _save(fig, run_dir / f"task_size_p99_{i}.png"),
                f"p99 completion time of the `{kind}` tasks per variant and task size at {point} (mean "
                "over seeds).",
            )
        )
    return out


def _cdf_per_variant(
    rows: pl.DataFrame, column: str, scale: float, xlabel: str, ylabel: str, path: Path
) -> Path:
    """One CDF of ``column`` (times ``scale``) per variant of ``rows``, on a log x axis, saved to ``path``."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for v in sorted(set(rows["variant"].to_list())):
        t = np.sort(rows.filter(pl.col("variant") == v)[column].to_numpy())
        ax.plot(t * scale, np.arange(1, len(t) + 1) / len(t), label=v)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def _reduction_axes(ax: Any, xlabel: str, base: int = 10, legend: bool = True) -> None:
    """A Baraat gain plot's axes: a log x axis, a zero line, the reduction of the mean task time
    and, with ``legend``, the lines' labels."""
    if legend:
        ax.legend(fontsize=8)
    ax.set_xscale("log", base=base)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("reduction of mean task time (%)")
    ax.grid(alpha=0.3)


def baraat_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Baraat in the paper's forms: task-time CDFs per policy (Figure 7), gains by task size (Figure 12)."""
    tasks = _baraat_tasks(run_dir)
    if tasks.is_empty():
        return []
    one = tasks.filter(
        (pl.col("app") == "one-stage")
        & ~pl.col("batch")
        & (pl.col("compute") == 0.0)
        & pl.col("variant").is_in(BARAAT_POLICIES)
    )
    workloads = sorted(set(one["workload"].to_list()))
    out: list[tuple[Path, str]] = []
    if workloads:
        fig, axes = plt.subplots(1, len(workloads), figsize=(4.2 * len(workloads), 3.8), squeeze=False)
        for ax, w in zip(axes[0], workloads, strict=True):
            for v in BARAAT_POLICIES:
                t = np.sort(
                    one.filter((pl.col("workload") == w) & (pl.col("variant") == v))["tct_s"].to_numpy()
                )
                if len(t):
                    ax.plot(t * 1e3, np.arange(1, len(t) + 1) / len(t), label=v)
            ax.set_xscale("log")
            ax.set_xlabel("task completion time (ms)")
            ax.set_title(w)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("CDF of tasks")
        axes[0][0].legend(fontsize=8)
        out.append(
            (
                _save(fig, run_dir / "baraat_tct_cdf.png"),
                "Task completion times per policy and workload (one-stage tasks, the paper's Figure 7 form; "
                "all seeds pooled). FIFO-LM and SPC serve tasks in arrival order with limited multiplexing.",
            )
        )
    # Gains by task size: FIFO-LM against fair share on the same tasks (same workload, seed and id).
    fs = one.filter(pl.col("variant") == "fair-share").select("workload", "seed", "task_id", "bytes", "tct_s")
    lm = one.filter(pl.col("variant") == "fifo-lm").select(
        "workload", "seed", "task_id", pl.col("tct_s").alias("lm_s")
    )
    paired = fs.join(lm, on=["workload", "seed", "task_id"])
    if not paired.is_empty():
        fig, ax = plt.subplots(figsize=(7, 4))
        for w in workloads:
            p = paired.filter(pl.col("workload") == w)
            if p.height < 10:
                continue
            g = gain_by_size(p["bytes"].to_numpy(), p["tct_s"].to_numpy(), p["lm_s"].to_numpy())
            red = g["reduction"].to_numpy()
            ax.plot(g["bytes"].to_numpy() / 1e3, 100 * red, marker="o", label=w)
        _reduction_axes(ax, "task size (KB, median of the bin)")
        out.append(
            (
                _save(fig, run_dir / "baraat_gain_by_size.png"),
                "FIFO-LM against fair share by task size (the paper's Figure 12 form): the same tasks under "
                "both policies, a point per task size (at most ten sizes) or per tenth of the tasks by size; "
                "1 - mean(FIFO-LM) / mean(fair share).",
            )
        )
    out += _testbed_figures(tasks, run_dir)
    out += protocol_round_figures(run_dir)
    two = tasks.filter(pl.col("app") == "two-stage")
    if not two.is_empty():
        out.append(
            (
                _cdf_per_variant(
                    two,
                    "tct_s",
                    1e3,
                    "request completion time (ms)",
                    "CDF of requests",
                    run_dir / "baraat_two_stage_cdf.png",
                ),
                "Two-level partition-aggregate requests per variant (section 5.2.2): time from a request's "
                "arrival to the top-level aggregator's last answer, all seeds pooled.",
            )
        )
    return out


def _testbed_figures(tasks: pl.DataFrame, run_dir: Path) -> list[tuple[Path, str]]:
    """Baraat's section 5.1 testbed (``experiments/baraat-testbed.toml``, fixed task sizes):
    Table 3's request times per variant, and Figure 6's mean time per number of concurrent
    requests and policy."""
    out: list[tuple[Path, str]] = []
    online = tasks.filter((pl.col("workload") == "fixed") & ~pl.col("batch"))
    if not online.is_empty():
        out.append(
            (
                _cdf_per_variant(
                    online,
                    "tct_s",
                    1e3,
                    "request completion time (ms)",
                    "CDF of requests",
                    run_dir / "baraat_testbed_cdf.png",
                ),
                "Memcached requests per variant (Table 3's setting, section 5.1): time from a request's "
                "arrival at its client to its last byte, the wait in the client's queue included; all "
                "seeds pooled.",
            )
        )
    batched = tasks.filter((pl.col("workload") == "fixed") & pl.col("batch"))
    # Figure 6's form is for one task size (its N concurrent 1.2 MB reads); runs over several
    # sizes (experiments/baraat-task-size.toml) are drawn by protocol_round_figures.
    if not batched.is_empty() and batched["bytes"].n_unique() == 1:
        per = (
            batched.group_by("policy", "point_hash", "seed")
            .agg(pl.len().alias("n"), pl.col("tct_s").mean().alias("mean_s"))
            .group_by("policy", "n")
            .agg(pl.col("mean_s").mean())
            .sort("policy", "n")
        )
        ns = sorted(set(per["n"].to_list()))
        policies = sorted(set(per["policy"].to_list()))
        fig, ax = plt.subplots(figsize=(7, 4))
        width = 0.8 / max(len(policies), 1)
        for k, pol in enumerate(policies):
            rows = per.filter(pl.col("policy") == pol)
            means = dict(zip(rows["n"].to_list(), rows["mean_s"].to_list(), strict=True))
            xs = [i + (k - (len(policies) - 1) / 2) * width for i in range(len(ns))]
            ax.bar(xs, [1e3 * means.get(n, float("nan")) for n in ns], width, label=pol or "?")
        ax.set_xticks(range(len(ns)), [str(n) for n in ns])
        ax.set_xlabel("concurrent requests")
        ax.set_ylabel("mean request time (ms)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
        out.append(
            (
                _save(fig, run_dir / "baraat_batched.png"),
                "Concurrent 3 x 400 KB reads in one rack (Figure 6's form): mean request time per "
                "number of requests and policy. Hand answers: fair share N x 9.6 ms, FIFO-LM "
                "(N + 1) / 2 x 9.6 ms.",
            )
        )
    return out


PROTOCOL_KEYS = ("scheduling.policy", "scheduling.class-size", "scheduling.class-unit")
"""The keys that tell a protocol run's variants apart; points equal in every other key are paired
(so runs with virtual capacity pair with each other)."""


def protocol_pairs(run_dir: Path) -> pl.DataFrame:
    """Every ``spc`` point with its ``rcp`` partner (same seed and every other parameter): the
    point's mean task time and task size, its class size and unit, whether ports run virtual
    capacity, and the partner's mean time
    (Baraat §5.3's micro-benchmarks: ``experiments/baraat-task-size.toml``,
    ``baraat-tiny-flows.toml``, ``baraat-task-aggregation.toml``)."""
    path = run_dir / "tasks.parquet"
    if not path.exists():
        return pl.DataFrame()
    rows = []
    for meta in sorted((run_dir / "points").glob("*/point.json")):
        m = json.loads(meta.read_text())
        p = m.get("params", {})
        if m.get("kind") != "scenario" or p.get("scheduling.policy") not in ("spc", "rcp"):
            continue
        rest = {k: v for k, v in p.items() if k not in PROTOCOL_KEYS}
        rows.append(
            {
                "point_hash": meta.parent.name,
                "key": json.dumps(rest, sort_keys=True, default=str),
                "policy": p["scheduling.policy"],
                "class_size": int(p.get("scheduling.class-size", 1)),
                "class_unit": str(p.get("scheduling.class-unit", "task")),
                "vc": bool(p.get("scheduling.virtual-capacity", False)),
                "tasks": int(p.get(APP + "tasks", 0)),
            }
        )
    if not rows:
        return pl.DataFrame()
    info = pl.DataFrame(rows)
    tasks = pl.read_parquet(path, columns=["point_hash", "seed", "bytes", "tct_s"]).with_columns(
        pl.col("point_hash").cast(pl.Utf8)
    )
    per = (
        tasks.join(info, on="point_hash")
        .group_by("point_hash", "key", "seed", "policy", "class_size", "class_unit", "vc", "tasks")
        .agg(pl.col("tct_s").mean().alias("mean_s"), pl.col("bytes").mean().alias("task_bytes"))
    )
    rcp = per.filter(pl.col("policy") == "rcp").select("key", "seed", pl.col("mean_s").alias("rcp_s"))
    return per.filter(pl.col("policy") == "spc").join(rcp, on=["key", "seed"])


def protocol_round_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Baraat §5.3 in the paper's forms: the SPC protocol's gain over fair share at the same
    rounds (``rcp``) against the task size (Figures 12 and 13) and against the tasks a class
    shares (Figure 14)."""
    pairs = protocol_pairs(run_dir)
    if pairs.is_empty():
        return []
    pairs = pairs.with_columns((1 - pl.col("mean_s") / pl.col("rcp_s")).alias("reduction"))
    out: list[tuple[Path, str]] = []
    by_size = (
        pairs.filter((pl.col("class_size") == 1) & (pl.col("class_unit") == "task"))
        .group_by("tasks", "vc", "task_bytes")
        .agg(pl.col("reduction").mean())
        .sort("tasks", "vc", "task_bytes")
    )
    if by_size["task_bytes"].n_unique() > 1:
        fig, ax = plt.subplots(figsize=(7, 4))
        for n, vc in by_size.select("tasks", "vc").unique().sort("tasks", "vc").iter_rows():
            r = by_size.filter((pl.col("tasks") == n) & (pl.col("vc") == vc))
            ax.plot(
                r["task_bytes"].to_numpy() / 1e3,
                100 * r["reduction"].to_numpy(),
                marker="o",
                linestyle="--" if vc else "-",
                label=f"{n} tasks at once" + (", virtual capacity" if vc else ""),
            )
        _reduction_axes(ax, "task size (KB)")
        out.append(
            (
                _save(fig, run_dir / "baraat_protocol_by_size.png"),
                "The SPC protocol (Baraat) against per-flow fair share at the same rounds (rcp, the "
                "paper's optimized RCP) by task size, the paper's Figures 12 and 13 form: "
                "1 - mean(SPC) / mean(RCP), mean over seeds; dashed: with virtual capacity "
                "(§4.3.2) in both protocols.",
            )
        )
    by_class = (
        pairs.filter(pl.col("class_unit") == "task")
        .group_by("vc", "class_size")
        .agg(pl.col("reduction").mean())
        .sort("vc", "class_size")
    )
    if by_class["class_size"].n_unique() > 1:
        fig, ax = plt.subplots(figsize=(7, 4))
        for vc in sorted(set(by_class["vc"].to_list())):
            r = by_class.filter(pl.col("vc") == vc)
            ax.plot(
                r["class_size"].to_numpy(),
                100 * r["reduction"].to_numpy(),
                marker="o",
                linestyle="--" if vc else "-",
                label="virtual capacity" if vc else "ports hand out C",
            )
        _reduction_axes(ax, "tasks a class", base=2, legend=by_class["vc"].n_unique() > 1)
        sizes = sorted(set(by_class["class_size"].to_list()))
        ax.set_xticks(sizes, [str(c) for c in sizes])
        out.append(
            (
                _save(fig, run_dir / "baraat_protocol_by_class_size.png"),
                "The SPC protocol with several tasks mapped onto one class against per-flow fair "
                "share at the same rounds (rcp), the paper's Figure 14 form: 1 - mean(SPC) / "
                "mean(RCP) per number of tasks a class, mean over seeds; dashed: with virtual "
                "capacity (§4.3.2) in both protocols.",
            )
        )
    return out
