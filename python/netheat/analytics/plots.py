"""One matplotlib figure per analysis (Agg backend, PNG).

Every function takes the analysis's table and the PNG path, writes the
figure and returns the path. An empty table gives a figure that says which
input was missing, so every report section still has its figure.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from netheat.output import save_png


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    try:
        return save_png(fig, path)
    finally:
        plt.close(fig)


def _empty(ax: Axes, why: str) -> None:
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, fontsize=11, color="#666")
    ax.set_xticks([])
    ax.set_yticks([])


def plot_hotspot_rate(table: pl.DataFrame, path: Path) -> Path:
    """Bars: hotspot rate per layer, normalized to the ToR-aggregation layer (raw rate if it cannot be)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    if table.height == 0:
        _empty(ax, "no link samples")
    else:
        norm = table["normalized_rate"].null_count() < table.height
        col = "normalized_rate" if norm else "hotspot_rate"
        vals = table[col].fill_null(0.0).to_list()
        ax.bar(table["layer"].to_list(), vals, color="#c44")
        ax.set_ylabel("hotspot rate / tor-agg rate" if norm else "hotspot rate (hot link-windows)")
        ax.set_xlabel("layer")
        ax.set_title("Hotspot rate per layer")
    return _save(fig, path)


def plot_durations(table: pl.DataFrame, path: Path) -> Path:
    """Bars: fraction of hotspots in each duration bucket."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    if table.height == 0 or int(table["hotspots"].sum()) == 0:
        _empty(ax, "no hotspots")
    else:
        ax.bar(table["bucket"].to_list(), table["fraction"].to_list(), color="#c44")
        for i, n in enumerate(table["hotspots"].to_list()):
            ax.annotate(str(n), (i, 0), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=9)
        ax.set_ylabel("fraction of hotspots")
        ax.set_xlabel("hotspot duration")
        ax.set_title("Hotspot durations")
    return _save(fig, path)


def plot_rack_types(by_type: pl.DataFrame, mixed: pl.DataFrame, path: Path) -> Path:
    """Left: hotspot rate per rack type. Right: Mixed-rack hotspots attributed to storage vs compute."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.8))
    if by_type.height == 0:
        _empty(a, "no rack_type column")
    else:
        a.bar(by_type["rack_type"].to_list(), by_type["hotspot_rate"].to_list(), color="#c44")
        a.set_ylabel("hotspot rate (ToR links)")
        a.set_title("Hotspots by rack type")
    if mixed.height == 0:
        _empty(b, "no Mixed racks with storage_share\nand storage_utilization")
    else:
        colours = ["#48c", "#c84", "#8a5", "#aaa"][: mixed.height]
        b.bar(mixed["traffic"].to_list(), mixed["fraction"].fill_null(0.0).to_list(), color=colours)
        b.set_ylabel("fraction of Mixed-rack hotspots")
        b.set_title("Mixed racks: storage vs compute")
    return _save(fig, path)


def plot_tor_tasks(tasks: pl.DataFrame, disk: pl.DataFrame, path: Path) -> Path:
    """Left: ToR utilization vs network-intensive tasks per Gbps. Right: Disk racks' Gbps per TB."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.8))
    if tasks.height == 0:
        _empty(a, "needs net_tasks and capacity_bps")
    else:
        a.scatter(tasks["tasks_per_gbps"].to_list(), tasks["mean_util"].to_list(), s=12, color="#c44")
        a.set_xlabel("network-intensive tasks per Gbps of ToR capacity")
        a.set_ylabel("mean ToR utilization")
        a.set_title("ToR utilization vs tasks")
    if disk.height == 0:
        _empty(b, "needs Disk racks with storage_tb, capacity_bps")
    else:
        b.hist(disk["gbps_per_tb"].to_list(), bins=min(30, max(disk.height, 1)), color="#48c")
        b.set_xlabel("ToR capacity per storage (Gbps / TB)")
        b.set_ylabel("Disk racks")
        b.set_title("Link capacity per storage, Disk racks")
    return _save(fig, path)


def plot_inflation(buckets: pl.DataFrame, path: Path, view: str = "all", metric: str = "latency") -> Path:
    """Lines: p95 (solid) and median (dashed) inflation per utilization bucket, one line per group."""
    fig, ax = plt.subplots(figsize=(7, 4))
    t = buckets.filter((pl.col("view") == view) & (pl.col("metric") == metric)) if buckets.height else buckets
    if t.height == 0:
        _empty(ax, f"no {metric} samples for view '{view}'")
        return _save(fig, path)
    groups = t["group"].unique().sort().to_list()[:10]
    for i, g in enumerate(groups):
        d = t.filter((pl.col("group") == g) & pl.col("enough")).sort("bucket_pct")
        color = f"C{i}"
        ax.plot(
            d["bucket_pct"].to_list(), d["inflation_p95"].to_list(), "-o", ms=3, color=color, label=f"{g} p95"
        )
        ax.plot(d["bucket_pct"].to_list(), d["inflation_p50"].to_list(), "--", color=color, alpha=0.6)
    for tau in (1.5, 2.0):
        ax.axhline(tau, color="#999", lw=0.8, ls=":")
    ax.axvline(75, color="#c44", lw=0.8, ls=":")
    ax.set_xlabel("max utilization of the links used, bucket lower edge (%)")
    ax.set_ylabel(f"{metric} inflation")
    ax.set_title(f"{metric.capitalize()} inflation vs utilization ({view})")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_uplink_requests(table: pl.DataFrame, path: Path) -> Path:
    """Stacked bars (Figure 14): for each utilization bucket, the share of its requests per uplink class."""
    fig, ax = plt.subplots(figsize=(7, 4))
    if table.height == 0:
        _empty(ax, "no associated operations")
        return _save(fig, path)
    buckets = table["bucket_pct"].unique().sort().to_list()
    colours = {"high": "#4a4", "medium": "#da3", "low": "#c33"}
    bottom = [0.0] * len(buckets)
    for i, cls in enumerate(table["uplink_class"].unique().sort().to_list()):
        d = dict(table.filter(pl.col("uplink_class") == cls).select("bucket_pct", "share").iter_rows())
        vals = [float(d.get(b, 0.0)) for b in buckets]
        ax.bar(
            buckets,
            vals,
            width=4,
            align="edge",
            bottom=bottom,
            label=cls,
            color=colours.get(str(cls).lower(), f"C{i}"),
        )
        bottom = [a + v for a, v in zip(bottom, vals, strict=True)]
    ax.set_xlabel("utilization bucket lower edge (%)")
    ax.set_ylabel("share of the bucket's requests")
    ax.set_ylim(0, 1)
    ax.set_title("Requests by uplink class")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_compute_ratio(table: pl.DataFrame, path: Path) -> Path:
    """Lines (Figure 12b): Hotspot-inflation per compute-ratio group, one line per op."""
    fig, ax = plt.subplots(figsize=(7, 4))
    t = table.filter(pl.col("hotspot_inflation").is_not_null()) if table.height else table
    if t.height == 0:
        _empty(ax, "no compute-ratio group with enough samples at 75% and at a base bucket")
        return _save(fig, path)
    for op in t["op"].unique().sort().to_list()[:10]:
        d = t.filter(pl.col("op") == op).sort("compute_ratio")
        ax.plot(d["compute_ratio"].to_list(), d["hotspot_inflation"].to_list(), "-o", ms=3, label=op)
    ax.set_xlabel("compute ratio")
    ax.set_ylabel("Hotspot-inflation (p95 at 75%)")
    ax.set_title("Hotspot-inflation vs compute ratio")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_imbalance(cv: pl.DataFrame, stab: pl.DataFrame, path: Path) -> Path:
    """Left: CDF of the per-interval Cv across bottleneck links. Right: stability per horizon."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.8))
    vals = cv["cv"].drop_nulls().sort().to_list() if cv.height else []
    if not vals:
        _empty(a, "no bottleneck-link samples")
    else:
        n = len(vals)
        a.plot(vals, [(i + 1) / n for i in range(n)], color="#c44")
        a.set_xlabel("Cv of bottleneck-link utilization")
        a.set_ylabel("fraction of intervals")
        a.set_title("Imbalance across bottleneck links")
    s = stab.filter(pl.col("probability").is_not_null()) if stab.height else stab
    if s.height == 0:
        _empty(b, "no computable horizon")
    else:
        b.bar([f"{h:g} s" for h in s["horizon_s"].to_list()], s["probability"].to_list(), color="#48c")
        b.set_ylim(0, 1)
        b.set_xlabel("horizon")
        b.set_ylabel("P(stays within 5%)")
        b.set_title("Utilization stability")
    return _save(fig, path)
