"""Plots of scenario kinds, drawn from a finished run directory's Parquet tables.

Each function reads ``DIR/<table>.parquet`` (written by the runner, one row
per point with a ``variant`` column), writes PNGs into ``DIR`` and returns
``[(png, caption)]`` for the report. Several seeds of a variant are averaged
per time window; CDFs pool them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.ticker import NullFormatter

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


def _utp_load_figure(pts: pl.DataFrame, run_dir: Path) -> tuple[Path, str]:
    """UTP load sweep: each policy's metrics against the baseline's cell-level utilization."""
    ok = pts.filter(pl.col("status") == "ok")
    load = (
        ok.filter(pl.col("variant") == "bandwidth-oblivious")
        .group_by("point")
        .agg(pl.col("cell_util").mean().alias("load"))
    )
    m = (
        ok.join(load, on="point")
        .group_by("variant", "load")
        .agg(
            pl.col("hot_tor_share").mean(),
            pl.col("p98_tor_util").mean(),
            pl.col("migrations").mean(),
            pl.col("net_intensive_on_hot_share").mean(),
        )
        .sort("variant", "load")
    )
    panels = (
        ("hot_tor_share", "hot ToR-windows (%)", 100.0),
        ("p98_tor_util", "p98 ToR utilization (%)", 100.0),
        ("migrations", "tasks migrated", 1.0),
        ("net_intensive_on_hot_share", "net-intensive placements on hot ToRs (%)", 100.0),
    )
    fig, axes = plt.subplots(2, 2, figsize=(9, 6), sharex=True)
    for ax, (col, label, scale) in zip(axes.flat, panels, strict=True):
        for v in m["variant"].unique(maintain_order=True).to_list():
            d = m.filter(pl.col("variant") == v)
            ax.plot(100.0 * d["load"].to_numpy(), scale * d[col].to_numpy(), marker="o", ms=3, lw=1, label=v)
        ax.set_ylabel(label, fontsize=8)
    axes[0, 1].axhline(75.0, color="#888", ls="--", lw=1)
    for ax in axes[1]:
        ax.set_xlabel("cell-level utilization, bandwidth-oblivious (%)", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    return (
        _save(fig, run_dir / "utp_load.png"),
        "UTP load sweep: per policy, the share of hot ToR-windows, the p98 ToR utilization (dashed: the 75% "
        "hot threshold), tasks migrated and the share of network-intensive placements on hot ToRs, against "
        "the average cell-level utilization (Figure 16's definition) of the bandwidth-oblivious run at the "
        "same load (mean over seeds).",
    )


def utp_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """UTP: hot-ToR share and p98 over time, migrations per hour, query latency CDFs."""
    out: list[tuple[Path, str]] = []
    series_path = run_dir / "series.parquet"
    params = _params(run_dir, "utp")
    hours = 1.0 / 3600.0
    incident_h = float(params.get("duration", 0.0)) / 2.0 * hours if params.get("incident-every", 0) else None
    warmup_h = float(params.get("warmup", 0.0)) * hours
    points_path = run_dir / "points.parquet"
    if points_path.is_file():
        pts = pl.read_parquet(points_path)
        if "cell_util" in pts.columns and pts["point"].n_unique() > 1:
            out.append(_utp_load_figure(pts, run_dir))
            return out  # a load sweep: over-time curves and CDFs would mix loads
    if series_path.is_file():
        s = (
            pl.read_parquet(series_path)
            .group_by("variant", "window_start_s")
            .agg(pl.col("hot_tor_share").mean(), pl.col("p98_tor_util").mean(), pl.col("migrations").mean())
            .sort("variant", "window_start_s")
        )
        fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        for v in s["variant"].unique(maintain_order=True).to_list():
            d = s.filter(pl.col("variant") == v)
            t = d["window_start_s"].to_numpy() * hours
            axes[0].plot(t, 100.0 * d["hot_tor_share"].to_numpy(), label=v, lw=1)
            axes[1].plot(t, 100.0 * d["p98_tor_util"].to_numpy(), label=v, lw=1)
        axes[0].set_ylabel("hot ToRs (%)")
        axes[1].set_ylabel("p98 ToR utilization (%)")
        axes[1].set_xlabel("time (h)")
        for ax in axes:
            ax.axvspan(0.0, warmup_h, color="#ddd", lw=0)
            if incident_h is not None:
                ax.axvline(incident_h, color="#888", ls="--", lw=1)
        axes[0].legend(fontsize=8)
        out.append(
            (
                _save(fig, run_dir / "utp_over_time.png"),
                "Share of compute ToRs hot (outbound, 5-minute windows) and the 98th percentile of ToR "
                "utilization over time, per policy. Grey: warm-up (excluded from the metrics); dashed: the "
                "incident where ToRs lose part of their uplink.",
            )
        )
        per_hour = (
            s.with_columns((pl.col("window_start_s") // 3600).alias("hour"))
            .group_by("variant", "hour")
            .agg(pl.col("migrations").sum())
            .sort("variant", "hour")
        )
        migrating = [
            v
            for v in per_hour["variant"].unique(maintain_order=True).to_list()
            if per_hour.filter(pl.col("variant") == v)["migrations"].sum() > 0
        ]
        if migrating:
            fig, ax = plt.subplots(figsize=(8, 3.2))
            width = 0.8 / len(migrating)
            for k, v in enumerate(migrating):
                d = per_hour.filter(pl.col("variant") == v)
                ax.bar(d["hour"].to_numpy() + k * width, d["migrations"].to_numpy(), width, label=v)
            if incident_h is not None:
                ax.axvline(incident_h, color="#888", ls="--", lw=1)
            ax.set_xlabel("hour")
            ax.set_ylabel("migrations per hour")
            ax.legend(fontsize=8)
            out.append(
                (
                    _save(fig, run_dir / "utp_migrations.png"),
                    "Tasks migrated off hot ToRs per hour, per migrating policy (mean over seeds).",
                )
            )
    queries_path = run_dir / "queries.parquet"
    if queries_path.is_file():
        q = pl.read_parquet(queries_path)
        types = q["query"].unique(maintain_order=True).to_list()
        if types:
            fig, axes = plt.subplots(1, len(types), figsize=(4.0 * len(types), 3.2), squeeze=False)
            for ax, name in zip(axes[0], types, strict=True):
                for v in q["variant"].unique(maintain_order=True).to_list():
                    x = np.sort(q.filter((pl.col("query") == name) & (pl.col("variant") == v))["latency_s"])
                    if len(x):
                        ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"{v} ({len(x)})", lw=1)
                ax.set_xscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())
                ax.set_xlabel(f"{name} query latency (s)")
                ax.set_ylabel("CDF")
                ax.legend(fontsize=7)
            out.append(
                (
                    _save(fig, run_dir / "utp_query_cdf.png"),
                    "Completion times of the analytical queries after the warm-up, per query type and policy "
                    "(empirical CDF; number of queries in brackets).",
                )
            )
    return out


def memcache_figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Subways memcache: max request rate at the latency target against ToR oversubscription."""
    rates: dict[tuple[str, float], list[float]] = {}
    for meta in sorted((run_dir / "points").glob("*/point.json")):
        m = json.loads(meta.read_text())
        if m.get("kind") != "memcache":
            continue
        v = json.loads((meta.parent / "values.json").read_text())
        key = (str(m["variant"]), float(m["params"]["oversubscription"]))
        rates.setdefault(key, []).append(float(v["max_rate_per_s"]))
    if not rates:
        return []
    fig, ax = plt.subplots(figsize=(7, 4))
    for variant in dict.fromkeys(k[0] for k in rates):
        xs = sorted((o, float(np.mean(r))) for (v, o), r in rates.items() if v == variant)
        ax.plot([o for o, _ in xs], [r / 1e6 for _, r in xs], marker="o", label=variant)
    ax.set_xlabel("ToR oversubscription")
    ax.set_ylabel("max requests/s at 1 ms mean latency (millions)")
    ax.legend(fontsize=8)
    return [
        (
            _save(fig, run_dir / "memcache_max_rate.png"),
            "Largest request rate whose mean latency stays at or below the target (mean over seeds), per "
            "wiring and balancing, against ToR oversubscription.",
        )
    ]
