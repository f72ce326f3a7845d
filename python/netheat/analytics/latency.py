"""Latency against utilization: association, inflation, Load-tolerance, Hotspot-inflation.

Definitions (also printed in the report):

- **Association**: an operation starting at ``start_s`` falls in window
  ``floor(start_s / W)`` (``W`` = 30 s by default); its utilization ``u`` is
  the maximum window utilization (see :mod:`netheat.analytics.hotspots`),
  in that window, of the links it used: the links listed in its ``links``
  column, or else every ToR-layer (``tor-agg``) link, both directions, of the
  racks in its ``tors`` column.
- **Bucket**: ``u`` in percent, in buckets of 5 points; a bucket is named
  by its lower edge (bucket 60 holds 60% <= u < 65%).
- **Inflation** of bucket ``b``: ``p95(b) / p95(base)`` (and likewise with
  the median), where ``base`` is the lowest bucket with at least ``N``
  samples (``N`` = 20 by default). Percentiles interpolate linearly.
- **Load-tolerance(tau)**: the lower edge (in %) of the first bucket, at or
  above the base bucket and with at least ``N`` samples, whose p95 inflation
  is >= ``tau``; null ("not reached") if there is none.
- **Hotspot-inflation**: the p95 inflation of the bucket containing 75%
  (bucket 75), if it has at least ``N`` samples.

Operations that cannot be associated are not dropped silently: they are
counted per reason in :attr:`Association.skips`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from netheat.analytics.hotspots import KEYS, REFERENCE_LAYER, window_utilization
from netheat.analytics.io import LatencyTelemetry, LinkTelemetry

LATENCY_WINDOW_S = 30.0
BUCKET_PCT = 5
MIN_SAMPLES = 20
TAUS = (1.5, 2.0)
HOTSPOT_PCT = 75.0

SIZE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("< 64 KiB", 64 * 1024.0),
    ("64 KiB-1 MiB", 1024.0**2),
    ("1-16 MiB", 16 * 1024.0**2),
    (">= 16 MiB", float("inf")),
)
"""Operation-size buckets ``(label, upper bound in bytes, exclusive)``."""

SKIP_NO_LINK = "no link or ToR listed"
SKIP_UNKNOWN = "links/ToRs not in the link samples"
SKIP_NO_WINDOW = "no link sample in the operation's window"


@dataclass
class Association:
    """Operations with the utilization of the links they used.

    ``df`` holds the latency columns plus ``window``, ``utilization`` (max
    over the operation's links in its window), ``bucket_pct``, and the
    ``uplink_class`` and ``rack`` of the most utilized of those links.
    ``skips`` counts operations that could not be associated, per reason.
    """

    df: pl.DataFrame
    skips: dict[str, int] = field(default_factory=dict)
    window_s: float = LATENCY_WINDOW_S

    @property
    def skipped(self) -> int:
        """Total operations skipped."""
        return sum(self.skips.values())


def bucket_expr(column: str = "utilization", width_pct: int = BUCKET_PCT) -> pl.Expr:
    """Expression: the lower edge (integer %) of the utilization bucket of ``column``."""
    return ((pl.col(column) * 100.0 / width_pct + 1e-9).floor() * width_pct).cast(pl.Int64)


def associate(
    tel: LinkTelemetry,
    lat: LatencyTelemetry,
    window_s: float = LATENCY_WINDOW_S,
    width_pct: int = BUCKET_PCT,
    reference_layer: str = REFERENCE_LAYER,
) -> Association:
    """Associate every operation with the maximum utilization of its links in its window.

    Only the directed links some operation used are re-aggregated (a
    semi-join pushed into the scan). See the module docstring.
    """
    attrs = tel.attrs
    names = attrs.select("lk", pl.col("link").cast(pl.String).alias("__name"))
    for c in ("uplink_class", "rack", "layer"):
        if c not in attrs.columns:
            attrs = attrs.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    extra = attrs.select(*KEYS, "uplink_class", "rack")
    df = lat.df.with_columns((pl.col("start_s") / window_s + 1e-9).floor().cast(pl.Int64).alias("window"))

    has_links = pl.lit(False)
    parts: list[pl.DataFrame] = []
    if "links" in df.columns:
        has_links = pl.col("links").list.len().fill_null(0) > 0
        p = (
            df.filter(has_links)
            .select("sid", "window", pl.col("links").alias("__name"))
            .explode("__name")
            .join(names, on="__name", how="inner")
            .select("sid", "window", *KEYS)
        )
        parts.append(p)
    listed = has_links
    if "tors" in df.columns:
        has_tors = pl.col("tors").list.len().fill_null(0) > 0
        tor_links = attrs.filter(pl.col("rack").is_not_null())
        if tor_links["layer"].null_count() < tor_links.height:
            tor_links = tor_links.filter(pl.col("layer") == reference_layer)
        p = (
            df.filter(~has_links & has_tors)
            .select("sid", "window", pl.col("tors").alias("rack"))
            .explode("rack")
            .join(tor_links.select(*KEYS, "rack"), on="rack", how="inner")
            .select("sid", "window", *KEYS)
        )
        parts.append(p)
        listed = listed | has_tors
    empty = pl.DataFrame(schema={"sid": df["sid"].dtype, "window": pl.Int64, "lk": pl.Int64})
    pairs = pl.concat([empty, *parts])

    win = window_utilization(tel, window_s, pairs["lk"].unique())
    matched = pairs.join(win, on=[*KEYS, "window"], how="inner").join(extra, on=KEYS, how="left")
    per_op = matched.group_by("sid").agg(
        pl.col("utilization").max(),
        pl.col("uplink_class").sort_by("utilization").last(),
        pl.col("rack").sort_by("utilization").last(),
    )
    out = df.join(per_op, on="sid", how="inner").with_columns(
        bucket_expr("utilization", width_pct).alias("bucket_pct")
    )

    n_listed = int(df.select(listed.sum()).item())
    n_known = int(pairs["sid"].n_unique()) if pairs.height else 0
    skips = {
        SKIP_NO_LINK: df.height - n_listed,
        SKIP_UNKNOWN: n_listed - n_known,
        SKIP_NO_WINDOW: n_known - out.height,
    }
    return Association(df=out.sort("sid"), skips={k: v for k, v in skips.items() if v}, window_s=window_s)


def _grouped(df: pl.DataFrame, by: list[str]) -> tuple[pl.DataFrame, list[str]]:
    if by:
        return df, by
    return df.with_columns(pl.lit("all").alias("__all")), ["__all"]


def inflation_table(
    df: pl.DataFrame,
    value: str = "latency_s",
    by: list[str] | None = None,
    min_samples: int = MIN_SAMPLES,
) -> pl.DataFrame:
    """Latency percentiles and inflation per utilization bucket (per group of ``by``).

    Input: an associated frame with ``bucket_pct`` and the ``value``
    column. Columns: ``by..., bucket_pct, n, p50, p95, enough`` (``n >=
    min_samples``), ``base_bucket_pct`` and ``inflation_p50``,
    ``inflation_p95`` (relative to the base bucket: the lowest with enough
    samples; null when a group has no such bucket).
    """
    d, g = _grouped(df.filter(pl.col(value).is_not_null() & pl.col(value).is_not_nan()), by or [])
    t = (
        d.group_by([*g, "bucket_pct"])
        .agg(
            pl.len().alias("n"),
            pl.col(value).quantile(0.5, "linear").alias("p50"),
            pl.col(value).quantile(0.95, "linear").alias("p95"),
        )
        .with_columns((pl.col("n") >= min_samples).alias("enough"))
        .sort([*g, "bucket_pct"])
    )
    base = (
        t.filter(pl.col("enough"))
        .group_by(g)
        .agg(
            pl.col("bucket_pct").first().alias("base_bucket_pct"),
            pl.col("p50").first().alias("__b50"),
            pl.col("p95").first().alias("__b95"),
        )
    )
    t = t.join(base, on=g, how="left").with_columns(
        (pl.col("p50") / pl.col("__b50")).alias("inflation_p50"),
        (pl.col("p95") / pl.col("__b95")).alias("inflation_p95"),
    )
    t = t.drop("__b50", "__b95")
    return (t.drop("__all") if "__all" in t.columns else t).sort([*(by or []), "bucket_pct"])


def load_tolerance(
    table: pl.DataFrame, tau: float, by: list[str] | None = None, stat: str = "p95"
) -> pl.DataFrame:
    """Load-tolerance(tau) per group: lower edge (%) of the first bucket whose inflation reaches ``tau``.

    Only buckets at or above the base bucket with enough samples count.
    Columns: ``by..., load_tolerance`` (null if never reached).
    """
    t, g = _grouped(table, by or [])
    hit = t.filter(
        pl.col("enough")
        & (pl.col("bucket_pct") >= pl.col("base_bucket_pct"))
        & (pl.col(f"inflation_{stat}") >= tau)
    )
    groups = t.select(g).unique()
    lt = groups.join(
        hit.group_by(g).agg(pl.col("bucket_pct").min().alias("load_tolerance")), on=g, how="left"
    )
    return (lt.drop("__all") if "__all" in lt.columns else lt).sort(by or [])


def hotspot_inflation(
    table: pl.DataFrame,
    by: list[str] | None = None,
    width_pct: int = BUCKET_PCT,
    at_pct: float = HOTSPOT_PCT,
    stat: str = "p95",
) -> pl.DataFrame:
    """Hotspot-inflation per group: the inflation of the bucket containing ``at_pct`` (75%).

    Null when that bucket has fewer than the minimum samples. Columns:
    ``by..., hotspot_inflation``.
    """
    t, g = _grouped(table, by or [])
    edge = int((at_pct + 1e-9) // width_pct * width_pct)
    hit = t.filter((pl.col("bucket_pct") == edge) & pl.col("enough")).select(
        *g, pl.col(f"inflation_{stat}").alias("hotspot_inflation")
    )
    out = t.select(g).unique().join(hit, on=g, how="left")
    return (out.drop("__all") if "__all" in out.columns else out).sort(by or [])


def size_bucket() -> pl.Expr:
    """Expression: the operation-size bucket label of ``size_bytes``."""
    expr: pl.Expr = pl.lit(SIZE_BUCKETS[-1][0])
    for label, hi in reversed(SIZE_BUCKETS[:-1]):
        expr = pl.when(pl.col("size_bytes") < hi).then(pl.lit(label)).otherwise(expr)
    return pl.when(pl.col("size_bytes").is_null()).then(None).otherwise(expr).alias("size_bucket")


def latency_analysis(
    assoc: Association,
    width_pct: int = BUCKET_PCT,
    min_samples: int = MIN_SAMPLES,
    taus: tuple[float, ...] = TAUS,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All latency-vs-utilization views: (buckets, summary).

    Views: ``metric`` is ``latency`` (``latency_s``) or ``network latency``
    (``network_latency_s``); ``view`` is ``all``, ``op``, ``qos`` or
    ``size`` (operation-size bucket), with ``group`` its value. The bucket
    table is :func:`inflation_table` of each view; the summary has, per
    group, ``samples``, ``base_bucket_pct``, ``base_p95_s``,
    ``load_tolerance_<tau>`` for each tau and ``hotspot_inflation`` (p95)
    and ``hotspot_inflation_p50``.
    """
    df = assoc.df
    if "size_bytes" in df.columns:
        df = df.with_columns(size_bucket())
    views = [("all", None), ("op", "op"), ("qos", "qos"), ("size", "size_bucket")]
    metrics = [("latency", "latency_s"), ("network latency", "network_latency_s")]
    buckets: list[pl.DataFrame] = []
    summaries: list[pl.DataFrame] = []
    for metric, col in metrics:
        if col not in df.columns or df[col].null_count() == df.height:
            continue
        for view, gcol in views:
            if gcol is not None and (gcol not in df.columns or df[gcol].null_count() == df.height):
                continue
            d = df.with_columns(
                (pl.lit("all") if gcol is None else pl.col(gcol).cast(pl.String)).alias("group")
            )
            d = d.filter(pl.col("group").is_not_null())
            t = inflation_table(d, col, ["group"], min_samples)
            summary = (
                t.group_by("group")
                .agg(
                    pl.col("n").sum().alias("samples"),
                    pl.col("base_bucket_pct").first(),
                    pl.col("p95")
                    .filter(pl.col("bucket_pct") == pl.col("base_bucket_pct"))
                    .first()
                    .alias("base_p95_s"),
                )
                .sort("group")
            )
            for tau in taus:
                lt = load_tolerance(t, tau, ["group"]).rename({"load_tolerance": f"load_tolerance_{tau:g}"})
                summary = summary.join(lt, on="group", how="left")
            summary = summary.join(hotspot_inflation(t, ["group"], width_pct), on="group", how="left")
            hi50 = hotspot_inflation(t, ["group"], width_pct, stat="p50").rename(
                {"hotspot_inflation": "hotspot_inflation_p50"}
            )
            summary = summary.join(hi50, on="group", how="left")
            lead = [pl.lit(metric).alias("metric"), pl.lit(view).alias("view")]
            buckets.append(t.select(*lead, pl.all()))
            summaries.append(summary.select(*lead, pl.all()))
    if not buckets:
        return pl.DataFrame(), pl.DataFrame()
    return pl.concat(buckets, how="diagonal_relaxed"), pl.concat(summaries, how="diagonal_relaxed")


def requests_by_uplink_class(assoc: Association) -> pl.DataFrame:
    """Operations per uplink class (of the most utilized link used) and utilization bucket.

    Columns: ``uplink_class, bucket_pct, requests, share`` (of the class's
    requests). Operations whose link has no uplink class are under ``unknown``.
    """
    d = assoc.df.with_columns(pl.col("uplink_class").fill_null("unknown"))
    t = d.group_by("uplink_class", "bucket_pct").agg(pl.len().alias("requests"))
    return t.with_columns(
        (pl.col("requests") / pl.col("requests").sum().over("uplink_class")).alias("share")
    ).sort("uplink_class", "bucket_pct")
