"""Imbalance across bottleneck links and utilization stability.

Definitions (also printed in the report):

- **Bottleneck links**: the directed links of the ToR-aggregation layer
  (``tor-agg``; every link when the samples have no ``layer``).
- **Coefficient of variation** (Cv) of an interval: population standard
  deviation / mean of the bottleneck links' utilization samples with that
  timestamp (null when the mean is 0). 0 is perfectly balanced.
- **Stability** at horizon ``h``: the probability, over samples ``(link,
  t)`` whose next ``k = h / dt`` samples exist and are contiguous (``dt`` =
  sample interval), that every one of them is within 5% of ``u(t)``:
  ``|u(t + j dt) - u(t)| <= 0.05 u(t)`` for ``j = 1..k`` (relative; with
  ``relative=False`` the bound is 0.05 in absolute utilization). Horizons
  that are not a whole number of intervals are reported as not computable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from netheat.analytics.hotspots import KEYS, REFERENCE_LAYER
from netheat.analytics.io import LinkTelemetry

HORIZONS_S = (5.0, 10.0, 20.0, 40.0)
TOLERANCE = 0.05
STABILITY_MAX_LINKS = 1000


def coefficient_of_variation(values: Sequence[float] | np.ndarray[Any, Any]) -> float:
    """Population standard deviation over mean of ``values`` (nan if empty or the mean is 0)."""
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return float("nan")
    mean = float(a.mean())
    return float(a.std()) / mean if mean != 0 else float("nan")


def bottleneck_links(tel: LinkTelemetry, layer: str = REFERENCE_LAYER) -> pl.Series:
    """The ``lk`` keys of the directed links of ``layer``; every link when there is no layer column."""
    if tel.has("layer"):
        return tel.attrs.filter(pl.col("layer") == layer)["lk"]
    return tel.attrs["lk"]


def imbalance(tel: LinkTelemetry, keys: pl.Series) -> pl.DataFrame:
    """Cv across the links in ``keys`` per sample interval (streaming).

    Columns: ``timestamp, links, mean_util, std_util, cv``.
    """
    return (
        tel.lf.filter(pl.col("lk").is_in(keys.implode()))
        .group_by("timestamp")
        .agg(
            pl.len().alias("links"),
            pl.col("utilization").mean().alias("mean_util"),
            pl.col("utilization").std(ddof=0).alias("std_util"),
        )
        .with_columns(
            pl.when(pl.col("mean_util") > 0).then(pl.col("std_util") / pl.col("mean_util")).alias("cv")
        )
        .sort("timestamp")
        .collect(engine="streaming")
    )


def cv_summary(cv: pl.DataFrame) -> pl.DataFrame:
    """Distribution of the per-interval Cv: intervals, mean, p50, p90, p99, max."""
    c = pl.col("cv").drop_nulls()
    return cv.select(
        c.len().alias("intervals"),
        c.mean().alias("mean"),
        c.quantile(0.5, "linear").alias("p50"),
        c.quantile(0.9, "linear").alias("p90"),
        c.quantile(0.99, "linear").alias("p99"),
        c.max().alias("max"),
    )


def sample_links(keys: pl.Series, max_links: int | None) -> pl.Series:
    """Every ``ceil(n / max_links)``-th of the ``lk`` keys, in order (all if None)."""
    k = keys.sort()
    if max_links is None or k.len() <= max_links:
        return k
    step = -(-k.len() // max_links)
    return k.gather_every(step)


def stability_series(
    series: pl.DataFrame,
    interval_s: float,
    horizons_s: Sequence[float] = HORIZONS_S,
    tolerance: float = TOLERANCE,
    relative: bool = True,
) -> pl.DataFrame:
    """Stability of utilization series ``lk, timestamp, utilization`` (see module docstring).

    Columns: ``horizon_s, steps, samples, stable, probability`` (steps,
    samples and probability null when the horizon is not a whole number of
    intervals).
    """
    s = series.sort([*KEYS, "timestamp"])
    u, t, lk = pl.col("utilization"), pl.col("timestamp"), pl.col("lk")
    bound = tolerance * u if relative else pl.lit(tolerance)
    rows: list[dict[str, object]] = []
    for h in horizons_s:
        k = round(h / interval_s)
        if k < 1 or abs(k * interval_s - h) > 1e-6 * h:
            rows.append({"horizon_s": h, "steps": None, "samples": None, "stable": None, "probability": None})
            continue
        # Rolling over the whole sorted column: a window is valid when sample i + k is the same link,
        # exactly k intervals later (then samples i+1..i+k are that link's next k samples).
        ahead_max = u.rolling_max(k).shift(-k)
        ahead_min = u.rolling_min(k).shift(-k)
        complete = (lk.shift(-k) == lk) & ((t.shift(-k) - t - k * interval_s).abs() <= 1e-6 * interval_s * k)
        r = s.select(
            complete.sum().alias("samples"),
            (complete & (ahead_max - u <= bound + 1e-12) & (u - ahead_min <= bound + 1e-12))
            .sum()
            .alias("stable"),
        )
        n, ok = int(r["samples"][0]), int(r["stable"][0])
        rows.append(
            {"horizon_s": h, "steps": k, "samples": n, "stable": ok, "probability": ok / n if n else None}
        )
    return pl.DataFrame(
        rows,
        schema={
            "horizon_s": pl.Float64,
            "steps": pl.Int64,
            "samples": pl.Int64,
            "stable": pl.Int64,
            "probability": pl.Float64,
        },
        orient="row",
    )


def stability(
    tel: LinkTelemetry,
    keys: pl.Series,
    horizons_s: Sequence[float] = HORIZONS_S,
    tolerance: float = TOLERANCE,
    relative: bool = True,
    max_links: int | None = STABILITY_MAX_LINKS,
) -> pl.DataFrame:
    """Stability of the links in ``keys`` (at most ``max_links`` of them, evenly sampled) at each horizon."""
    chosen = sample_links(keys, max_links)
    series = tel.lf.filter(pl.col("lk").is_in(chosen.implode())).collect(engine="streaming")
    return stability_series(series, tel.interval_s, horizons_s, tolerance, relative)
