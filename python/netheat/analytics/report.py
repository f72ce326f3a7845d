"""The whole hotspot analysis: tables (Parquet), plots (PNG) and a self-contained HTML report.

:func:`analyze` reads the telemetry (:mod:`netheat.analytics.io`), runs
every analysis, writes ``DIR/tables/<name>.parquet``,
``DIR/plots/<name>.png``, ``DIR/summary.json`` and ``DIR/report.html``
(figures embedded as base64 PNG, so it opens offline; every figure says
what it shows and how it was computed, and every metric is defined).
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from netheat.analytics import hotspots as hs
from netheat.analytics import imbalance as im
from netheat.analytics import latency as lt
from netheat.analytics import plots
from netheat.analytics.io import (
    LINK_TRAFFIC_COLUMNS,
    MAX_UTILIZATION,
    LinkTelemetry,
    scan_latency,
    scan_links,
)
from netheat.output import OutputDir
from netheat.report import Figure, Section, Table, write_report
from netheat.units import fmt_seconds

MAX_TABLE_ROWS = 40
"""Rows of a table shown in the report; the Parquet file has all of them."""

RENDER_CHECK = """<script>
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('figure img');
  imgs.forEach(function (img) {
    img.setAttribute('data-rendered', img.complete && img.naturalWidth > 0 ? '1' : '0');
  });
  document.body.setAttribute('data-figures', String(imgs.length));
});
</script>"""
"""Marks each figure ``data-rendered="1"`` once the browser has decoded it (used by the tests)."""


@dataclass
class AnalysisConfig:
    """Parameters of :func:`analyze` (defaults are the paper's)."""

    threshold: float = hs.HOT_THRESHOLD
    hotspot_window_s: float = 300.0
    latency_window_s: float = lt.LATENCY_WINDOW_S
    bucket_pct: int = lt.BUCKET_PCT
    min_samples: int = lt.MIN_SAMPLES
    taus: tuple[float, ...] = lt.TAUS
    reference_layer: str = hs.REFERENCE_LAYER
    interval_s: float | None = None
    horizons_s: tuple[float, ...] = im.HORIZONS_S
    stability_tolerance: float = im.TOLERANCE
    stability_relative: bool = True
    stability_max_links: int | None = im.STABILITY_MAX_LINKS
    qos_weights: dict[str, float] | None = None
    """Queue weight per QoS class: latency samples then see the weighted-effective utilization of
    their class (hotspot paper Appendix C) from ``utilization_<class>`` link columns."""


@dataclass
class AnalysisResult:
    """Every table of the analysis, by name, and what was written."""

    tables: dict[str, pl.DataFrame]
    summary: dict[str, Any]
    out: Path | None = None
    report: Path | None = None
    figures: list[Path] = field(default_factory=list)


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.4g}"
    return str(v)


def _table(df: pl.DataFrame, name: str = "") -> Table:
    rows = [[_fmt(v) for v in r] for r in df.head(MAX_TABLE_ROWS).iter_rows()]
    if df.height > MAX_TABLE_ROWS:
        more = f"... {df.height - MAX_TABLE_ROWS} more rows in tables/{name}.parquet"
        rows.append([more] + [""] * (df.width - 1))
    return Table(header=list(df.columns), rows=rows)


def _printable(df: pl.DataFrame) -> pl.DataFrame:
    """Categorical/enum columns as text, for Parquet files readable everywhere."""
    return df.with_columns(
        [pl.col(c).cast(pl.String) for c, t in df.schema.items() if isinstance(t, pl.Categorical | pl.Enum)]
    )


def run_analyses(
    tel: LinkTelemetry, lat_path: str | os.PathLike[str] | None, cfg: AnalysisConfig
) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Run every analysis on validated link telemetry (and latency samples, if given).

    Returns the tables by name and a summary (inputs, windows, skips, key numbers).
    """
    timings: dict[str, float] = {}
    notes = list(tel.notes)
    t0 = time.perf_counter()
    w = cfg.hotspot_window_s
    if w < tel.interval_s:
        notes.append(
            f"hotspot window {w:g} s is shorter than the sample interval; using {tel.interval_s:g} s"
        )
        w = tel.interval_s
    win = hs.window_utilization(tel, w)
    stats = hs.link_stats(win, cfg.threshold)
    tel.ensure_attrs(stats["lk"])
    timings["windows"] = time.perf_counter() - t0
    tables: dict[str, pl.DataFrame] = {}
    tables["hotspot_rate_by_layer"] = hs.hotspot_rate_by_layer(stats, tel.attrs, cfg.reference_layer)
    runs = hs.hotspot_runs(win, w, cfg.threshold)
    n_windows = int(win["window"].n_unique()) if win.height else 0
    del win
    tables["hotspot_runs"] = hs.named(runs, tel.attrs).drop("lk")
    tables["hotspot_durations"] = hs.duration_distribution(runs)
    tables["hotspots_by_rack_type"] = hs.hotspots_by_rack_type(stats, tel.attrs, cfg.reference_layer)
    mixed = hs.mixed_links(tel.attrs, cfg.reference_layer)
    extra = tuple(c for c in LINK_TRAFFIC_COLUMNS if c in tel.lf.collect_schema().names())
    traffic = (
        hs.window_utilization(tel, w, mixed, extra)
        if mixed.len() and "storage_utilization" in extra
        else pl.DataFrame()
    )
    tables["mixed_rack_attribution"] = hs.mixed_attribution(
        traffic, tel.attrs, cfg.threshold, hs.HOT_THRESHOLD, cfg.reference_layer
    )
    racks = hs.rack_stats(stats, tel.attrs, cfg.reference_layer)
    tables["rack_stats"] = racks
    tables["tor_utilization_vs_tasks"] = hs.tor_utilization_vs_tasks(racks)
    tables["disk_link_capacity"] = hs.disk_link_capacity(racks)
    tables["link_stats"] = hs.named(stats.sort("lk"), tel.attrs).drop("lk")
    timings["hotspots"] = time.perf_counter() - t0

    bottleneck = im.bottleneck_links(tel, cfg.reference_layer)
    cv = im.imbalance(tel, bottleneck)
    tables["imbalance_cv"] = cv
    tables["imbalance_cv_summary"] = im.cv_summary(cv)
    tables["stability"] = im.stability(
        tel,
        bottleneck,
        cfg.horizons_s,
        cfg.stability_tolerance,
        cfg.stability_relative,
        cfg.stability_max_links,
    )
    timings["imbalance"] = time.perf_counter() - t0

    skips: dict[str, int] = {}
    lat_rows = 0
    lw = cfg.latency_window_s
    if lat_path is not None:
        lat = scan_latency(lat_path)
        lat_rows = lat.rows
        if lw < tel.interval_s:
            notes.append(
                f"latency window {lw:g} s is shorter than the sample interval; using {tel.interval_s:g} s"
            )
            lw = tel.interval_s
        assoc = lt.associate(tel, lat, lw, cfg.bucket_pct, cfg.reference_layer, cfg.qos_weights)
        skips = assoc.skips
        tables["latency_associated"] = assoc.df.drop([c for c in ("links", "tors") if c in assoc.df.columns])
        buckets, summary = lt.latency_analysis(assoc, cfg.bucket_pct, cfg.min_samples, cfg.taus)
        tables["latency_buckets"] = buckets
        tables["latency_summary"] = summary
        tables["requests_by_uplink_class"] = lt.requests_by_uplink_class(assoc)
        if lt.compute_ratio_expr(assoc.df) is not None:
            tables["hotspot_inflation_by_compute_ratio"] = lt.hotspot_inflation_by_compute_ratio(
                assoc.df, cfg.bucket_pct, cfg.min_samples
            )
        timings["latency"] = time.perf_counter() - t0

    rate = tables["hotspot_rate_by_layer"]
    summary_info: dict[str, Any] = {
        "links_file": tel.source,
        "link_samples": tel.rows,
        "directed_links": tel.attrs.height,
        "sample_interval_s": tel.interval_s,
        "time_span_s": [tel.start_s, tel.end_s],
        "hotspot_window_s": w,
        "hotspot_windows": n_windows,
        "threshold": cfg.threshold,
        "hot_link_windows": int(rate["hot_link_windows"].sum()) if rate.height else 0,
        "hotspots": runs.height,
        "latency_file": None if lat_path is None else os.fspath(lat_path),
        "latency_samples": lat_rows,
        "latency_window_s": lw,
        "latency_associated": tables["latency_associated"].height if "latency_associated" in tables else 0,
        "latency_skipped": skips,
        "notes": notes,
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "config": asdict(cfg),
    }
    return tables, summary_info


def _caption_how(cfg: AnalysisConfig, w: float) -> str:
    return f"{fmt_seconds(w)} windows, hot = window utilization > {cfg.threshold:g}"


def _sections(
    tables: dict[str, pl.DataFrame], summary: dict[str, Any], cfg: AnalysisConfig, figs: dict[str, Path]
) -> list[Section]:
    w = float(summary["hotspot_window_s"])
    how = _caption_how(cfg, w)
    skipped = summary["latency_skipped"]
    inputs = Table(
        header=["input", "value"],
        rows=[
            ["link samples", f"{summary['links_file']} ({summary['link_samples']:,} rows)"],
            ["directed links", f"{summary['directed_links']:,}"],
            ["sample interval", fmt_seconds(summary["sample_interval_s"])],
            ["time span", f"{summary['time_span_s'][0]:g} s to {summary['time_span_s'][1]:g} s"],
            [
                "latency samples",
                f"{summary['latency_file']} ({summary['latency_samples']:,} rows)"
                if summary["latency_file"]
                else "none",
            ],
            ["latency samples associated", f"{summary['latency_associated']:,}"],
            ["latency samples skipped", f"{sum(skipped.values()):,}"],
        ],
    )
    skip_table = Table(header=["skip reason", "operations"], rows=[[k, f"{v:,}"] for k, v in skipped.items()])
    secs = [
        Section(
            "Inputs",
            "What was read. Link samples with missing or unparsable values or utilization outside "
            f"[0, {MAX_UTILIZATION}] stop the analysis with an error; latency samples that cannot be "
            "associated with a link sample are counted here by reason, never dropped silently. "
            + " ".join(summary["notes"]),
            tables=[inputs, *([skip_table] if skipped else [])],
        ),
        Section(
            "Hotspot rate per layer",
            f"Window utilization of a directed link = mean of its samples whose timestamp falls in the "
            f"window ({fmt_seconds(w)} windows aligned at t = 0). A hotspot is a directed link whose window "
            f"utilization is strictly above {cfg.threshold:g}. Hotspot rate of a layer = hot link-windows / "
            f"link-windows with data; normalized rate = that rate / the rate of layer {cfg.reference_layer}.",
            tables=[_table(tables["hotspot_rate_by_layer"], "hotspot_rate_by_layer")],
            figures=[
                Figure(
                    figs["hotspot_rate"],
                    f"Hotspot rate per layer, normalized to {cfg.reference_layer} (raw rate if that "
                    "layer has "
                    f"no hotspots). Computed from {how}.",
                )
            ],
        ),
        Section(
            "Hotspot durations",
            "A hotspot's duration is a maximal run of consecutive hot windows of one directed link (a window "
            "without data ends the run) times the window length. Buckets (lower bound inclusive): < 1 h, "
            "1-12 h, 12 h-1 day, 1 day-2 weeks, and > 2 weeks when present. time_fraction = "
            "share of hot time.",
            tables=[_table(tables["hotspot_durations"], "hotspot_durations")],
            figures=[
                Figure(
                    figs["durations"],
                    f"Fraction of hotspots per duration bucket (count above each bar); runs of consecutive "
                    f"hot windows per directed link, {how}.",
                )
            ],
        ),
        Section(
            "Hotspots by rack type",
            f"Hotspot rate of the {cfg.reference_layer} links of racks of each type (rack_type column). "
            "Mixed-rack attribution (hotspot paper §3.2): a hot link-window of a Mixed rack is attributed "
            "to storage if its mean storage traffic (storage_utilization) over the storage part of the "
            "capacity (storage_share) is above 75%, and to compute if its compute traffic "
            "(compute_utilization, else the rest of the utilization) over the compute part "
            "(1 - storage_share) is; rows: storage only, compute only, both, neither (fractions of the "
            "attributed hot link-windows; the paper's share attributed to storage = storage + both). "
            "Empty without per-sample storage_utilization.",
            tables=[
                _table(tables["hotspots_by_rack_type"], "hotspots_by_rack_type"),
                _table(tables["mixed_rack_attribution"], "mixed_rack_attribution"),
            ],
            figures=[
                Figure(
                    figs["rack_types"],
                    f"Left: hotspot rate of ToR links per rack type. Right: Mixed-rack hot link-windows "
                    f"attributed by each traffic's throughput over its provisioned capacity (> 75%). {how}.",
                )
            ],
        ),
        Section(
            "ToR utilization, tasks and storage",
            f"Per rack (its {cfg.reference_layer} links): ToR capacity each way = sum of "
            "capacity_bps over the "
            "rack's ToR links / number of directions; tasks_per_gbps = net_tasks / ToR capacity in Gbps; "
            "gbps_per_tb = ToR capacity in Gbps / storage_tb (Disk racks). mean_util is the mean window "
            "utilization of the rack's ToR links.",
            tables=[
                _table(tables["tor_utilization_vs_tasks"], "tor_utilization_vs_tasks"),
                _table(tables["disk_link_capacity"], "disk_link_capacity"),
            ],
            figures=[
                Figure(
                    figs["tor_tasks"],
                    "Left: mean ToR utilization vs network-intensive tasks per Gbps of ToR capacity, one dot "
                    "per rack. Right: histogram of ToR capacity per TB of storage across Disk racks.",
                )
            ],
        ),
    ]
    if "latency_summary" in tables:
        lw = float(summary["latency_window_s"])
        defs = (
            f"Each operation falls in the {fmt_seconds(lw)} window containing its start and "
            "is associated with "
            "the maximum window utilization of the links it used (listed links, or the "
            f"{cfg.reference_layer} "
            f"links of its ToRs, both directions). Buckets of {cfg.bucket_pct} points named by their lower "
            "edge. inflation(b) = p95 latency in bucket b / p95 latency in the base bucket, "
            "the lowest bucket "
            f"with at least N = {cfg.min_samples} samples (median inflation likewise with the median). "
            "Load-tolerance(tau) = lower edge (%) of the first bucket at or above the base, with at least N "
            "samples, whose p95 inflation >= tau (- if never reached). Hotspot-inflation = p95 inflation of "
            "the bucket containing 75% (p50 variant alongside). Views: all operations, per op type, per QoS "
            "class, per operation-size bucket (the hotspot paper's 10 KB-100 KB, 100 KB-1 MB, 1 MB-10 MB, "
            "plus < 10 KB and >= 10 MB); metric latency (latency_s) or network latency alone "
            "(network_latency_s)."
        )
        if cfg.qos_weights:
            weights = ", ".join(f"{k} {v:g}" for k, v in sorted(cfg.qos_weights.items()))
            defs += (
                " Utilization here is the weighted-effective utilization of the operation's QoS class "
                "(hotspot paper Appendix C): sum over classes c of (w_c / w_q) x utilization of c, with "
                f"queue weights {weights}."
            )
        overall = tables["latency_buckets"].filter(pl.col("view") == "all")
        lat_figs = [
            Figure(
                figs["inflation_all"],
                "p95 (solid) and median (dashed) latency inflation vs the maximum utilization of the links "
                f"each operation used, {cfg.bucket_pct}% buckets with at least {cfg.min_samples} samples; "
                "dotted lines: tau = 1.5, 2 and the 75% hotspot bucket.",
            )
        ]
        for key, text in (
            ("inflation_network", "network latency alone (network_latency_s)"),
            ("inflation_op", "per op type"),
            ("inflation_qos", "per QoS class"),
            ("inflation_size", "per operation-size bucket"),
        ):
            if key in figs:
                lat_figs.append(
                    Figure(
                        figs[key],
                        f"p95 (solid) and median (dashed) inflation, {text}, vs utilization bucket; same "
                        "association and base-bucket rule as above (up to 10 groups drawn; all in the "
                        "table).",
                    )
                )
        secs.append(
            Section(
                "Latency vs utilization",
                defs,
                tables=[
                    _table(tables["latency_summary"], "latency_summary"),
                    _table(overall, "latency_buckets"),
                ],
                figures=lat_figs,
            )
        )
        if "hotspot_inflation_by_compute_ratio" in tables:
            secs.append(
                Section(
                    "Hotspot-inflation vs compute ratio",
                    "Hotspot paper Figure 12b: each sample's compute ratio (compute_ratio, else compute_s / "
                    "latency_s) rounded to 0.1; within each op and compute-ratio group, the inflation table "
                    "and base bucket as above, and Hotspot-inflation = p95 inflation of the 75% bucket "
                    f"(needs at least N = {cfg.min_samples} samples there and in a base bucket).",
                    tables=[
                        _table(
                            tables["hotspot_inflation_by_compute_ratio"], "hotspot_inflation_by_compute_ratio"
                        )
                    ],
                    figures=[
                        Figure(
                            figs["compute_ratio"],
                            "Hotspot-inflation per compute-ratio group, one line per op (groups without "
                            "enough samples omitted).",
                        )
                    ],
                )
            )
        secs.append(
            Section(
                "Requests by uplink class",
                "Hotspot paper Figure 14: operations per utilization bucket, split by the uplink class "
                "(High/Medium/Low) of the most utilized link each used; share = fraction of the bucket's "
                "operations that went to that class (the shares of a bucket add up to 1).",
                tables=[_table(tables["requests_by_uplink_class"], "requests_by_uplink_class")],
                figures=[
                    Figure(
                        figs["uplink"],
                        "For each utilization bucket, the share of its operations per uplink class, stacked "
                        "(association as in the latency section).",
                    )
                ],
            )
        )
    mode = "relative: |u(t+j dt) - u(t)| <= tol * u(t)" if cfg.stability_relative else "absolute: <= tol"
    secs.append(
        Section(
            "Imbalance and stability of bottleneck links",
            f"Bottleneck links = the directed {cfg.reference_layer} links (all links without "
            "a layer column). "
            "Cv per sample interval = population standard deviation / mean of their utilization at that "
            "timestamp. Stability at horizon h = probability that a link's next h/dt samples "
            "all stay within "
            f"{cfg.stability_tolerance:g} of its current value ({mode}), over samples whose "
            "next h/dt samples "
            f"exist; at most {cfg.stability_max_links} links, evenly sampled, are used.",
            tables=[
                _table(tables["imbalance_cv_summary"], "imbalance_cv_summary"),
                _table(tables["stability"], "stability"),
            ],
            figures=[
                Figure(
                    figs["imbalance"],
                    "Left: CDF over sample intervals of the Cv of bottleneck-link utilization. Right: "
                    "probability that a link's utilization stays within 5% of its current value for the "
                    "next 5/10/20/40 s.",
                )
            ],
        )
    )
    return secs


def write_tables(tables: dict[str, pl.DataFrame], out: Path) -> None:
    """Write every table as ``out/tables/<name>.parquet``."""
    d = out / "tables"
    d.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        _printable(df).write_parquet(d / f"{name}.parquet")


def make_figures(tables: dict[str, pl.DataFrame], out: Path) -> dict[str, Path]:
    """Draw every figure into ``out/plots`` and return their paths by key."""
    d = out / "plots"
    figs = {
        "hotspot_rate": plots.plot_hotspot_rate(tables["hotspot_rate_by_layer"], d / "hotspot_rate.png"),
        "durations": plots.plot_durations(tables["hotspot_durations"], d / "hotspot_durations.png"),
        "rack_types": plots.plot_rack_types(
            tables["hotspots_by_rack_type"], tables["mixed_rack_attribution"], d / "rack_types.png"
        ),
        "tor_tasks": plots.plot_tor_tasks(
            tables["tor_utilization_vs_tasks"], tables["disk_link_capacity"], d / "tor_tasks.png"
        ),
        "imbalance": plots.plot_imbalance(tables["imbalance_cv"], tables["stability"], d / "imbalance.png"),
    }
    if "latency_buckets" in tables:
        b = tables["latency_buckets"]
        figs["inflation_all"] = plots.plot_inflation(b, d / "inflation_all.png")
        have = b.select(["metric", "view"]).unique() if b.height else b
        if have.filter(pl.col("metric") == "network latency").height:
            figs["inflation_network"] = plots.plot_inflation(
                b, d / "inflation_network.png", metric="network latency"
            )
        for view in ("op", "qos", "size"):
            if have.filter((pl.col("metric") == "latency") & (pl.col("view") == view)).height:
                figs[f"inflation_{view}"] = plots.plot_inflation(b, d / f"inflation_{view}.png", view=view)
        figs["uplink"] = plots.plot_uplink_requests(
            tables["requests_by_uplink_class"], d / "uplink_requests.png"
        )
    if "hotspot_inflation_by_compute_ratio" in tables:
        figs["compute_ratio"] = plots.plot_compute_ratio(
            tables["hotspot_inflation_by_compute_ratio"], d / "compute_ratio.png"
        )
    return figs


def analyze(
    links: str | os.PathLike[str],
    latency: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    config: AnalysisConfig | None = None,
    force: bool = False,
) -> AnalysisResult:
    """Analyze link (and latency) telemetry; with ``out``, write tables, plots and ``report.html``.

    ``out`` follows the output rule of :mod:`netheat.output` (checked and
    locked before the analysis starts; ``force`` to use a directory netheat
    did not write); every file is staged and the set is moved into place
    together. Raises :class:`netheat.errors.InputError` for unusable input.
    """
    cfg = config or AnalysisConfig()
    if out is None:
        tel = scan_links(links, cfg.interval_s)
        tables, summary = run_analyses(tel, latency, cfg)
        return AnalysisResult(tables=tables, summary=summary)
    o = Path(out)
    with OutputDir.open(o, "analyze", force=force) as od:
        tel = scan_links(links, cfg.interval_s)
        tables, summary = run_analyses(tel, latency, cfg)
        res = AnalysisResult(tables=tables, summary=summary)
        with od.transaction("analyze") as stage:
            write_tables(tables, stage)
            figs = make_figures(tables, stage)
            sections = _sections(tables, summary, cfg, figs)
            meta = (
                f"{summary['link_samples']:,} link samples, {summary['directed_links']:,} directed links, "
                f"{summary['hotspots']:,} hotspots; {summary['latency_samples']:,} latency samples "
                f"({sum(summary['latency_skipped'].values()):,} skipped)"
            )
            report = write_report(stage / "report.html", "netheat hotspot analytics", sections, meta=meta)
            text = report.read_text(encoding="utf-8").replace("</body>", RENDER_CHECK + "</body>", 1)
            report.write_text(text, encoding="utf-8")
            (stage / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    res.out, res.report = o, o / "report.html"
    res.figures = [o / p.relative_to(stage) for p in figs.values()]
    return res
