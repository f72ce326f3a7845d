"""Hotspots: window re-aggregation, hotspot rates, durations and rack types.

Definitions (also printed in the report):

- **Window utilization** of a directed link (``link`` + ``direction``) in
  window ``w`` of length ``W``: the mean utilization of its samples whose
  timestamp ``t`` has ``floor(t / W) = w`` (samples of one link are assumed to
  be of equal length, as telemetry is). Windows without samples are absent.
- **Hotspot**: a directed link whose window utilization is strictly above the
  threshold (default 0.75) in a window; a *hot link-window*.
- **Hotspot rate** of a layer: hot link-windows / link-windows with data in
  that layer. **Normalized rate**: that rate divided by the rate of the
  ToR-aggregation layer (``tor-agg``).
- **Hotspot duration**: a maximal run of consecutive hot windows of one
  directed link (a missing window ends a run); duration = windows x ``W``.
- **Rack-type rate**: the hotspot rate of the ToR-layer links of racks of
  each type.
- **Mixed attribution** (hotspot paper §3.2): a hot link-window of a Mixed
  rack's ToR link is attributed to storage when the window's mean storage
  traffic (``storage_utilization``, a fraction of the link's capacity)
  divided by the storage part of the capacity (``storage_share``, the
  fraction of the rack's uplink provisioned for its storage) is above the
  attribution threshold (75%, the paper's), and to compute when the compute
  traffic over the compute part (``1 - storage_share``) is. The paper states
  the two tests independently, so a window passing both is attributed to
  both (row ``both``, counted once, not split) and one passing neither is
  ``neither`` (it cannot happen when storage and compute traffic make up
  the whole utilization: both ratios at most 75% bound the total by 75%).
"""

from __future__ import annotations

import math

import polars as pl

from netheat.analytics.io import LinkTelemetry
from netheat.errors import InputError

HOT_THRESHOLD = 0.75
"""Default hotspot threshold (window utilization strictly above it is hot)."""

REFERENCE_LAYER = "tor-agg"
"""The ToR-aggregation layer: hotspot rates are normalized to it; its links are a rack's ToR links."""

HOUR = 3600.0
DAY = 24 * HOUR
WEEK = 7 * DAY
DURATION_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("< 1 h", 0.0, HOUR),
    ("1-12 h", HOUR, 12 * HOUR),
    ("12 h-1 day", 12 * HOUR, DAY),
    ("1 day-2 weeks", DAY, 2 * WEEK),
    ("> 2 weeks", 2 * WEEK, math.inf),
)
"""The paper's duration buckets ``(label, lower, upper)`` in seconds, lower bound inclusive."""

KEYS = ["lk"]
"""Key of a directed link in every table (see :class:`netheat.analytics.io.LinkTelemetry`)."""

NAMES = ["link", "direction"]
_EPS = 1e-9
_WINDOW_BITS = 22


def window_index(window_s: float) -> pl.Expr:
    """Expression: the index ``floor(timestamp / window_s)`` of each sample's window."""
    return (pl.col("timestamp") / window_s + _EPS).floor().cast(pl.Int64).alias("window")


def window_utilization(
    tel: LinkTelemetry, window_s: float, keys: pl.Series | None = None, extra: tuple[str, ...] = ()
) -> pl.DataFrame:
    """Re-aggregate link samples to windows of ``window_s`` seconds (streaming).

    Returns ``lk, window, utilization``: the mean utilization of each
    directed link's samples in each window (only the directed links whose
    ``lk`` is in ``keys`` when given), plus the window mean of each
    per-sample column in ``extra`` (nulls ignored). The group key is one
    integer (``lk`` and the window packed together), which hashes much
    faster than several columns.
    """
    w0 = math.floor(tel.start_s / window_s + _EPS)
    n = math.floor(tel.end_s / window_s + _EPS) - w0 + 1
    if n >= 1 << _WINDOW_BITS:
        raise InputError(
            f"{tel.source}: {n:,} windows of {window_s:g} s; at most {(1 << _WINDOW_BITS) - 1:,}"
        )
    lf = tel.lf
    if keys is not None:
        lf = lf.filter(pl.col("lk").is_in(keys.implode()))
    gk = (pl.col("lk") * (1 << _WINDOW_BITS) + (window_index(window_s) - w0)).alias("__gk")
    agg = lf.group_by(gk).agg(pl.col("utilization", *extra).mean()).collect(engine="streaming")
    return agg.select(
        (pl.col("__gk") // (1 << _WINDOW_BITS)).alias("lk"),
        (pl.col("__gk") % (1 << _WINDOW_BITS) + w0).alias("window"),
        pl.col("utilization"),
        *(pl.col(c) for c in extra),
    )


def named(df: pl.DataFrame, attrs: pl.DataFrame) -> pl.DataFrame:
    """``df`` with the ``link`` and ``direction`` of its ``lk`` in front (for output tables)."""
    return attrs.select("lk", *NAMES).join(df, on="lk", how="right").select(*NAMES, pl.exclude(*NAMES))


def link_stats(win: pl.DataFrame, threshold: float = HOT_THRESHOLD) -> pl.DataFrame:
    """Per directed link: ``windows`` with data, ``hot_windows``, ``mean_util``, ``max_util``."""
    return win.group_by(KEYS).agg(
        pl.len().alias("windows"),
        (pl.col("utilization") > threshold).sum().alias("hot_windows"),
        pl.col("utilization").mean().alias("mean_util"),
        pl.col("utilization").max().alias("max_util"),
    )


def _with_attrs(stats: pl.DataFrame, attrs: pl.DataFrame, cols: list[str]) -> pl.DataFrame:
    have = [c for c in cols if c in attrs.columns]
    out = stats.join(attrs.select([*KEYS, *have]), on=KEYS, how="left")
    for c in cols:
        if c not in have:
            out = out.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    return out


def hotspot_rate_by_layer(
    stats: pl.DataFrame, attrs: pl.DataFrame, reference_layer: str = REFERENCE_LAYER
) -> pl.DataFrame:
    """Hotspot rate per layer, normalized to ``reference_layer``.

    Columns: ``layer, links, link_windows, hot_link_windows, hotspot_rate,
    normalized_rate``; ``normalized_rate`` is null when the reference layer
    has no data or no hotspots. Links without a layer are in layer ``all``.
    """
    s = _with_attrs(stats, attrs, ["layer"]).with_columns(pl.col("layer").fill_null("all"))
    t = (
        s.group_by("layer")
        .agg(
            pl.len().alias("links"),
            pl.col("windows").sum().alias("link_windows"),
            pl.col("hot_windows").sum().alias("hot_link_windows"),
        )
        .with_columns((pl.col("hot_link_windows") / pl.col("link_windows")).alias("hotspot_rate"))
        .sort("layer")
    )
    ref = t.filter(pl.col("layer") == reference_layer)["hotspot_rate"]
    ref_rate = float(ref[0]) if ref.len() and ref[0] else None
    if ref_rate:
        return t.with_columns((pl.col("hotspot_rate") / ref_rate).alias("normalized_rate"))
    return t.with_columns(pl.lit(None, dtype=pl.Float64).alias("normalized_rate"))


def hotspot_runs(win: pl.DataFrame, window_s: float, threshold: float = HOT_THRESHOLD) -> pl.DataFrame:
    """Every hotspot as a run of consecutive hot windows of one directed link.

    Columns: ``link, direction, first_window, windows, start_s, duration_s,
    peak_util, mean_util``. Runs are found without row loops: among a
    link's hot windows sorted by index, ``window - rank`` is constant
    exactly within a run of consecutive windows.
    """
    hot = win.filter(pl.col("utilization") > threshold).sort([*KEYS, "window"])
    runs = (
        hot.with_columns((pl.col("window") - pl.int_range(pl.len()).over(KEYS)).alias("__run"))
        .group_by([*KEYS, "__run"])
        .agg(
            pl.col("window").min().alias("first_window"),
            pl.len().alias("windows"),
            pl.col("utilization").max().alias("peak_util"),
            pl.col("utilization").mean().alias("mean_util"),
        )
        .drop("__run")
        .with_columns(
            (pl.col("first_window") * window_s).alias("start_s"),
            (pl.col("windows") * window_s).alias("duration_s"),
        )
    )
    return runs.select(
        *KEYS, "first_window", "windows", "start_s", "duration_s", "peak_util", "mean_util"
    ).sort([*KEYS, "first_window"])


def duration_label() -> pl.Expr:
    """Expression: the duration bucket label of ``duration_s``."""
    expr: pl.Expr = pl.lit(DURATION_BUCKETS[-1][0])
    for label, _, hi in reversed(DURATION_BUCKETS[:-1]):
        expr = pl.when(pl.col("duration_s") < hi).then(pl.lit(label)).otherwise(expr)
    return expr.alias("bucket")


def duration_distribution(runs: pl.DataFrame) -> pl.DataFrame:
    """Hotspot durations in the paper's buckets.

    Columns: ``bucket, lower_s, upper_s, hotspots, fraction`` (of hotspots)
    and ``time_fraction`` (of hot time). The ``> 2 weeks`` bucket appears
    only if some hotspot is that long.
    """
    order = pl.DataFrame(
        {
            "bucket": [b[0] for b in DURATION_BUCKETS],
            "lower_s": [b[1] for b in DURATION_BUCKETS],
            "upper_s": [b[2] for b in DURATION_BUCKETS],
        }
    )
    counts = (
        runs.with_columns(duration_label())
        .group_by("bucket")
        .agg(pl.len().alias("hotspots"), pl.col("duration_s").sum().alias("__time"))
    )
    t = order.join(counts, on="bucket", how="left").with_columns(
        pl.col("hotspots").fill_null(0).cast(pl.Int64), pl.col("__time").fill_null(0.0)
    )
    total = max(int(t["hotspots"].sum()), 1)
    total_time = float(t["__time"].sum()) or 1.0
    t = t.with_columns(
        (pl.col("hotspots") / total).alias("fraction"), (pl.col("__time") / total_time).alias("time_fraction")
    ).drop("__time")
    last = DURATION_BUCKETS[-1][0]
    return t.filter((pl.col("bucket") != last) | (pl.col("hotspots") > 0))


def _tor_links(stats: pl.DataFrame, attrs: pl.DataFrame, reference_layer: str) -> pl.DataFrame:
    s = _with_attrs(stats, attrs, ["layer", "rack", "rack_type", "uplink_class"])
    s = s.join(attrs.select("lk", "direction"), on="lk", how="left")
    for c in ("capacity_bps", "storage_share", "storage_tb", "net_tasks"):
        if c in attrs.columns:
            s = s.join(attrs.select([*KEYS, c]), on=KEYS, how="left")
        else:
            s = s.with_columns(pl.lit(None, dtype=pl.Float64).alias(c))
    if s["layer"].null_count() < s.height:
        s = s.filter(pl.col("layer") == reference_layer)
    return s


def hotspots_by_rack_type(
    stats: pl.DataFrame, attrs: pl.DataFrame, reference_layer: str = REFERENCE_LAYER
) -> pl.DataFrame:
    """Hotspot rate of the ToR-layer links per rack type.

    Columns: ``rack_type, racks, links, link_windows, hot_link_windows,
    hotspot_rate, share_of_hotspots``. Empty when no link has a ``rack_type``.
    """
    s = _tor_links(stats, attrs, reference_layer).filter(pl.col("rack_type").is_not_null())
    t = (
        s.group_by("rack_type")
        .agg(
            pl.col("rack").n_unique().alias("racks"),
            pl.len().alias("links"),
            pl.col("windows").sum().alias("link_windows"),
            pl.col("hot_windows").sum().alias("hot_link_windows"),
        )
        .with_columns((pl.col("hot_link_windows") / pl.col("link_windows")).alias("hotspot_rate"))
    )
    total = max(int(t["hot_link_windows"].sum()) if t.height else 0, 1)
    return t.with_columns((pl.col("hot_link_windows") / total).alias("share_of_hotspots")).sort("rack_type")


MIXED_TRAFFIC = ("storage", "compute", "both", "neither")
"""Rows of :func:`mixed_attribution`, in order."""


def mixed_links(attrs: pl.DataFrame, reference_layer: str = REFERENCE_LAYER) -> pl.Series:
    """``lk`` of the ToR-layer links of Mixed racks that have a ``storage_share`` (empty otherwise)."""
    if "rack_type" not in attrs.columns or "storage_share" not in attrs.columns:
        return pl.Series("lk", [], dtype=pl.Int64)
    a = attrs
    if "layer" in a.columns and a["layer"].null_count() < a.height:
        a = a.filter(pl.col("layer") == reference_layer)
    return a.filter(
        (pl.col("rack_type").str.to_lowercase() == "mixed") & pl.col("storage_share").is_not_null()
    )["lk"]


def mixed_attribution(
    traffic: pl.DataFrame,
    attrs: pl.DataFrame,
    threshold: float = HOT_THRESHOLD,
    attribution_threshold: float = HOT_THRESHOLD,
    reference_layer: str = REFERENCE_LAYER,
) -> pl.DataFrame:
    """Attribute the hot link-windows of Mixed racks to storage and/or compute by their traffic (§3.2).

    ``traffic``: window means ``lk, window, utilization,
    storage_utilization`` and optionally ``compute_utilization``, from
    :func:`window_utilization` with ``extra`` (for the links of
    :func:`mixed_links`). Without ``compute_utilization``, compute traffic
    is the rest of the utilization (``utilization - storage_utilization``,
    at least 0; also where a row's ``compute_utilization`` is null): a
    Mixed rack carries only the two. Each hot window
    (``utilization > threshold``) is tested on ``storage_utilization /
    storage_share`` and ``compute_utilization / (1 - storage_share)``
    against ``attribution_threshold`` (strictly above; a share of 0 makes
    that ratio infinite if the traffic is positive, 0 otherwise), and lands
    in exactly one row of :data:`MIXED_TRAFFIC`: ``storage`` (only the
    storage test passes), ``compute`` (only compute), ``both`` or
    ``neither``; windows without storage traffic data are not counted.

    Columns: ``traffic, hot_link_windows, fraction`` (of the counted
    Mixed-rack hot link-windows). The paper's "attributed to storage" is
    ``storage + both``. Empty when no Mixed-rack link has a
    ``storage_share`` or ``traffic`` has no ``storage_utilization``.
    """
    schema = {"traffic": pl.String, "hot_link_windows": pl.Int64, "fraction": pl.Float64}
    links = mixed_links(attrs, reference_layer)
    if links.len() == 0 or "storage_utilization" not in traffic.columns:
        return pl.DataFrame(schema=schema)
    share = attrs.select("lk", pl.col("storage_share").clip(0.0, 1.0).alias("__share"))
    rest = (pl.col("utilization") - pl.col("storage_utilization")).clip(lower_bound=0.0)
    compute = (
        pl.coalesce(pl.col("compute_utilization"), rest) if "compute_utilization" in traffic.columns else rest
    )

    def ratio(used: pl.Expr, provisioned: pl.Expr) -> pl.Expr:
        return (
            pl.when(provisioned > 0).then(used / provisioned).when(used > 0).then(float("inf")).otherwise(0.0)
        )

    hot = (
        traffic.filter(
            pl.col("lk").is_in(links.implode())
            & (pl.col("utilization") > threshold)
            & pl.col("storage_utilization").is_not_null()
        )
        .join(share, on="lk", how="inner")
        .with_columns(compute.alias("__compute"))
        .select(
            (ratio(pl.col("storage_utilization"), pl.col("__share")) > attribution_threshold).alias("s"),
            (ratio(pl.col("__compute"), 1.0 - pl.col("__share")) > attribution_threshold).alias("c"),
        )
    )
    s, c = hot["s"], hot["c"]
    counts = [
        int((s & ~c).sum()),
        int((~s & c).sum()),
        int((s & c).sum()),
        int((~s & ~c).sum()),
    ]
    total = sum(counts)
    return pl.DataFrame(
        {
            "traffic": list(MIXED_TRAFFIC),
            "hot_link_windows": counts,
            "fraction": [n / total if total else None for n in counts],
        },
        schema=schema,
    )


def rack_stats(
    stats: pl.DataFrame, attrs: pl.DataFrame, reference_layer: str = REFERENCE_LAYER
) -> pl.DataFrame:
    """Per rack (its ToR-layer links): utilization, capacity, tasks and storage.

    Columns: ``rack, rack_type, uplink_class, links, mean_util, hotspot_rate,
    tor_capacity_bps`` (capacity each way: the sum over the rack's ToR links
    divided by the number of directions), ``net_tasks``,
    ``tasks_per_gbps`` (network-intensive tasks per Gbps of ToR capacity),
    ``storage_tb`` and ``gbps_per_tb`` (ToR capacity per TB of storage).
    """
    s = _tor_links(stats, attrs, reference_layer).filter(pl.col("rack").is_not_null())
    t = s.group_by("rack").agg(
        pl.col("rack_type").first(),
        pl.col("uplink_class").first(),
        pl.len().alias("links"),
        ((pl.col("mean_util") * pl.col("windows")).sum() / pl.col("windows").sum()).alias("mean_util"),
        (pl.col("hot_windows").sum() / pl.col("windows").sum()).alias("hotspot_rate"),
        (pl.col("capacity_bps").sum() / pl.col("direction").n_unique()).alias("tor_capacity_bps"),
        pl.col("net_tasks").first(),
        pl.col("storage_tb").first(),
    )
    gbps = pl.col("tor_capacity_bps") / 1e9
    return t.with_columns(
        (pl.col("net_tasks") / gbps).alias("tasks_per_gbps"),
        pl.when(pl.col("storage_tb") > 0).then(gbps / pl.col("storage_tb")).alias("gbps_per_tb"),
    ).sort("rack")


def tor_utilization_vs_tasks(rack: pl.DataFrame) -> pl.DataFrame:
    """Racks with ``net_tasks`` and a ToR capacity: utilization against tasks per Gbps of ToR capacity."""
    return rack.filter(pl.col("tasks_per_gbps").is_not_null()).select(
        "rack", "rack_type", "net_tasks", "tor_capacity_bps", "tasks_per_gbps", "mean_util", "hotspot_rate"
    )


def disk_link_capacity(rack: pl.DataFrame) -> pl.DataFrame:
    """Disk racks: ToR link capacity per TB of storage (``gbps_per_tb``) and their hotspot rate."""
    return rack.filter(
        (pl.col("rack_type").str.to_lowercase() == "disk") & pl.col("gbps_per_tb").is_not_null()
    ).select(
        "rack", "uplink_class", "storage_tb", "tor_capacity_bps", "gbps_per_tb", "mean_util", "hotspot_rate"
    )
