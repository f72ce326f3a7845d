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
- **Size buckets** (hotspot paper, Appendix B / Figure 21): 10 KB-100 KB,
  100 KB-1 MB and 1 MB-10 MB (decimal units), plus ``< 10 KB`` and
  ``>= 10 MB`` for operations outside the paper's range.
- **Compute ratio** (§4.2, Figure 12b): the share of a sample's time spent
  computing. The paper's is per query: the summed processing time of the
  10 slowest workers of each stage over the sum of their worker time,
  across stages; give it as ``compute_ratio``, or give ``compute_s`` and it
  is ``compute_s / latency_s`` of the operation. Samples are grouped by the
  ratio rounded to 0.1 (the resolution the paper quotes ratios at: 0.1,
  0.8) and each (op, group) gets its own Hotspot-inflation.
- **Requests by uplink class** (§4.3, Figure 14): for each utilization
  bucket, the share of its operations that went to each uplink class (the
  shares of a bucket add up to 1).
- **Weighted-effective utilization** (Appendix C): the utilization a QoS
  class ``q`` sees at a link in an interval, ``sum_c (w_c / w_q) u_c`` over
  the QoS classes ``c`` with traffic there, where ``u_c`` is class ``c``'s
  utilization and ``w`` the weights of the weighted queues: lower classes
  count less than 1, higher classes more.

Operations that cannot be associated are not dropped silently: they are
counted per reason in :attr:`Association.skips`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from netheat.analytics.hotspots import KEYS, REFERENCE_LAYER, window_utilization
from netheat.analytics.io import LatencyTelemetry, LinkTelemetry
from netheat.errors import InputError

LATENCY_WINDOW_S = 30.0
BUCKET_PCT = 5
MIN_SAMPLES = 20
TAUS = (1.5, 2.0)
HOTSPOT_PCT = 75.0

SIZE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("< 10 KB", 10e3),
    ("10-100 KB", 100e3),
    ("100 KB-1 MB", 1e6),
    ("1-10 MB", 10e6),
    (">= 10 MB", float("inf")),
)
"""Operation-size buckets ``(label, upper bound in bytes, exclusive)``: the hotspot paper's three
(Appendix B, Figure 21: 10 KB-100 KB, 100 KB-1 MB, 1 MB-10 MB; decimal units) and the two outside."""

COMPUTE_RATIO_STEP = 0.1
"""Compute-ratio groups of Figure 12b: the ratio rounded to this step (the paper quotes 0.1, 0.8)."""

SKIP_NO_LINK = "no link or ToR listed"
SKIP_UNKNOWN = "links/ToRs not in the link samples"
SKIP_NO_WINDOW = "no link sample in the operation's window"
SKIP_NO_QOS = "no QoS class, or a class without a weight (--qos-weights)"


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
    qos_weights: dict[str, float] | None = None,
) -> Association:
    """Associate every operation with the maximum utilization of its links in its window.

    Only the directed links some operation used are re-aggregated (a
    semi-join pushed into the scan). See the module docstring.

    With ``qos_weights`` (queue weight per QoS class) and link samples with
    ``utilization_<class>`` columns, an operation of QoS class ``q`` sees
    the weighted-effective utilization of ``q`` (Appendix C): ``sum_c
    (w_c / w_q) u_c`` of the window means of the class columns (a class
    without a value in a window counts 0). Operations without a QoS class
    or with a class that has no weight are counted in :data:`SKIP_NO_QOS`.
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

    n_no_qos = 0
    if qos_weights:
        pairs, n_no_qos = _qos_pairs(pairs, df, qos_weights)
    qcols = tel.qos_columns() if qos_weights else {}
    win = window_utilization(tel, window_s, pairs["lk"].unique(), tuple(qcols.values()))
    if qos_weights:
        win = _effective_windows(win, qcols, qos_weights)
        keys = [*KEYS, "window", "qos"]
    else:
        keys = [*KEYS, "window"]
    matched = pairs.join(win, on=keys, how="inner").join(extra, on=KEYS, how="left")
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
        SKIP_UNKNOWN: n_listed - n_known - n_no_qos,
        SKIP_NO_QOS: n_no_qos,
        SKIP_NO_WINDOW: n_known - out.height,
    }
    return Association(df=out.sort("sid"), skips={k: v for k, v in skips.items() if v}, window_s=window_s)


def _qos_pairs(pairs: pl.DataFrame, ops: pl.DataFrame, weights: dict[str, float]) -> tuple[pl.DataFrame, int]:
    """``pairs`` with each operation's QoS class; drops (and counts) operations without a weighted class."""
    if "qos" not in ops.columns:
        n = int(pairs["sid"].n_unique()) if pairs.height else 0
        return pairs.head(0).with_columns(pl.lit(None, dtype=pl.String).alias("qos")), n
    p = pairs.join(ops.select("sid", "qos"), on="sid", how="left")
    ok = pl.col("qos").is_in(list(weights))
    n = int(p.filter(~ok.fill_null(False))["sid"].n_unique())
    return p.filter(ok.fill_null(False)), n


def _effective_windows(win: pl.DataFrame, qcols: dict[str, str], weights: dict[str, float]) -> pl.DataFrame:
    """``lk, window, qos, utilization``: the weighted-effective utilization of each weighted class.

    ``win`` has the window means of the ``utilization_<class>`` columns;
    see :func:`weighted_effective_utilization` (same formula, one row per
    weighted class, a missing class value counting 0).
    """
    unknown = sorted(set(qcols) - set(weights))
    if unknown:
        raise InputError(
            f"link samples have utilization of QoS class(es) {', '.join(unknown)} without a weight; "
            f"weights given: {weights}"
        )
    bad = {k: v for k, v in weights.items() if not v > 0}
    if bad:
        raise InputError(f"QoS weights must be positive: {bad}")
    if not qcols:
        raise InputError("QoS weights need per-class link utilization columns utilization_<class>")
    total = pl.sum_horizontal([pl.col(c).fill_null(0.0) * weights[q] for q, c in qcols.items()])
    parts = [
        win.select(*KEYS, "window", pl.lit(q).alias("qos"), (total / w).alias("utilization"))
        for q, w in sorted(weights.items())
    ]
    return pl.concat(parts)


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
    """Operations per utilization bucket and uplink class (of the most utilized link used), Figure 14.

    Columns: ``bucket_pct, uplink_class, requests, share``: ``share`` is
    the fraction of the bucket's operations that went to that class (the
    shares of a bucket add up to 1; hotspot paper §4.3, Figure 14).
    Operations whose link has no uplink class are under ``unknown``.
    """
    d = assoc.df.with_columns(pl.col("uplink_class").fill_null("unknown"))
    t = d.group_by("bucket_pct", "uplink_class").agg(pl.len().alias("requests"))
    return t.with_columns(
        (pl.col("requests") / pl.col("requests").sum().over("bucket_pct")).alias("share")
    ).sort("bucket_pct", "uplink_class")


def compute_ratio_expr(df: pl.DataFrame) -> pl.Expr | None:
    """Expression: each sample's compute ratio (``compute_ratio``, else ``compute_s / latency_s``)."""
    if "compute_ratio" in df.columns:
        return pl.col("compute_ratio")
    if "compute_s" in df.columns:
        return pl.when(pl.col("latency_s") > 0).then(pl.col("compute_s") / pl.col("latency_s"))
    return None


def hotspot_inflation_by_compute_ratio(
    df: pl.DataFrame,
    width_pct: int = BUCKET_PCT,
    min_samples: int = MIN_SAMPLES,
    step: float = COMPUTE_RATIO_STEP,
) -> pl.DataFrame:
    """Figure 12b: Hotspot-inflation per op and compute-ratio group.

    Input: an associated frame (``bucket_pct``, ``latency_s``, ``op``) with
    ``compute_ratio`` or ``compute_s``. Each sample's ratio is rounded to
    ``step``; within each (``op``, ``compute_ratio``) group the inflation
    table, base bucket and Hotspot-inflation are computed as for any other
    view. Columns: ``op, compute_ratio, samples, base_bucket_pct,
    hotspot_inflation`` (null when the group has no base bucket or too few
    samples at 75%). Empty without a compute column.
    """
    schema = {
        "op": pl.String,
        "compute_ratio": pl.Float64,
        "samples": pl.UInt32,
        "base_bucket_pct": pl.Int64,
        "hotspot_inflation": pl.Float64,
    }
    ratio = compute_ratio_expr(df)
    if ratio is None:
        return pl.DataFrame(schema=schema)
    steps = (ratio / step + 0.5 + 1e-9).floor()
    d = df.with_columns((steps * step).round(6).alias("compute_ratio")).filter(
        pl.col("compute_ratio").is_not_null() & pl.col("compute_ratio").is_not_nan()
    )
    if d.height == 0:
        return pl.DataFrame(schema=schema)
    by = ["op", "compute_ratio"]
    t = inflation_table(d, "latency_s", by, min_samples)
    out = (
        t.group_by(by)
        .agg(pl.col("n").sum().alias("samples"), pl.col("base_bucket_pct").first())
        .join(hotspot_inflation(t, by, width_pct), on=by, how="left")
    )
    return out.select(list(schema)).cast(schema).sort(by)  # type: ignore[arg-type]


def weighted_effective_utilization(per_qos: pl.DataFrame, weights: dict[str, float]) -> pl.DataFrame:
    """Appendix C: the weighted-effective utilization each QoS class sees.

    ``per_qos`` has one row per (link, interval, QoS class) with ``qos``,
    ``utilization`` (that class's traffic over the link's capacity) and any
    key columns (e.g. ``lk, window``); ``weights`` maps each QoS class to
    the weight of its queue. For every key and every class ``q`` with a
    row there: ``sum_c (weights[c] / weights[q]) * u_c`` over the classes
    at that key, so a class's own traffic counts 1, lower classes (smaller
    weight) less and higher classes more, as the paper defines it. Columns:
    the keys, ``qos`` and ``effective_utilization``. A class without a
    positive weight raises :class:`netheat.errors.InputError`.
    """
    unknown = sorted(set(per_qos["qos"].drop_nulls().unique().to_list()) - set(weights))
    if unknown:
        raise InputError(f"no QoS weight for class(es) {', '.join(unknown)}; weights given: {weights}")
    bad = {k: v for k, v in weights.items() if not v > 0}
    if bad:
        raise InputError(f"QoS weights must be positive: {bad}")
    keys = [c for c in per_qos.columns if c not in ("qos", "utilization")]
    w = pl.col("qos").replace_strict(weights, return_dtype=pl.Float64)
    d = per_qos.filter(pl.col("qos").is_not_null()).with_columns(w.alias("__w"))
    weighted = (pl.col("__w") * pl.col("utilization")).sum()
    if keys:
        d = d.with_columns(weighted.over(keys).alias("__sum"))
    else:
        d = d.with_columns(weighted.alias("__sum"))
    return d.select(*keys, "qos", (pl.col("__sum") / pl.col("__w")).alias("effective_utilization")).sort(
        [*keys, "qos"]
    )
