"""The one quantile definition of netheat, on the Python side.

Every percentile netheat reports (FCT and task-time tails, utilization
percentiles, latency tails) is the *linear-interpolation* quantile of the
sample, Hyndman and Fan's definition 7, the same definition as
``netheat_core::stats`` in Rust: sort the ``n`` values into
``x[0] <= ... <= x[n-1]``, let ``h = (n - 1) q`` and return
``x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])``. It is numpy's
default (``np.quantile(..., method="linear")``), pandas', R's and Polars'
``"linear"``. ``q`` is a fraction in ``[0, 1]`` (p99 is ``q = 0.99``).

The functions here follow the Rust code step for step, so a number computed
in Python and one computed in Rust agree to the bit (numpy computes the
upper half of each interval from the upper value, which can differ in the
last bit, and returns NaN where ``netheat_core::stats`` returns an infinity).

Callers decide what enters the sample (finished flows only, say); the
result is NaN for an empty sample, a sample holding a NaN, or a ``q``
outside ``[0, 1]``, rather than NaNs being skipped silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["mean", "quantile", "quantiles", "weighted_mean"]


def _sorted(values: ArrayLike) -> np.ndarray:
    return np.sort(np.asarray(values, dtype=np.float64).ravel())


def _quantile_sorted(v: np.ndarray, q: float) -> float:
    """:func:`quantile` of an ascending sample (``netheat_core::stats::quantile_sorted``)."""
    n = len(v)
    # np.sort puts NaNs last.
    if n == 0 or not 0.0 <= q <= 1.0 or math.isnan(v[-1]):
        return math.nan
    h = (n - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    a, b = float(v[lo]), float(v[hi])
    t = h - lo
    if a == b or t == 0.0:
        return a  # also keeps infinities exact (0 * inf would be NaN)
    return a + t * (b - a)


def quantile(values: ArrayLike, q: float) -> float:
    """The linear-interpolation quantile (see the module docs) of ``values`` for ``q`` in ``[0, 1]``.

    NaN for an empty sample, a NaN value or a ``q`` outside ``[0, 1]``.
    ``quantile(done, 0.99)`` is the p99 of ``done``.
    """
    return _quantile_sorted(_sorted(values), float(q))


def quantiles(values: ArrayLike, qs: Iterable[float]) -> list[float]:
    """Several quantiles of one sample (sorted once), as :func:`quantile`."""
    v = _sorted(values)
    return [_quantile_sorted(v, float(q)) for q in qs]


def mean(values: ArrayLike) -> float:
    """Arithmetic mean; NaN for an empty sample (``netheat_core::stats::mean``).

    Summed left to right like the Rust side (numpy's pairwise sum can differ in the last bit).
    """
    v = np.asarray(values, dtype=np.float64).ravel().tolist()
    return sum(v) / len(v) if v else math.nan


def weighted_mean(values: ArrayLike, weights: ArrayLike) -> float:
    """``sum(w v) / sum(w)``, summed left to right like :func:`mean`; NaN for an empty sample,
    weights that sum to zero, or a NaN among the values or weights."""
    v = np.asarray(values, dtype=np.float64).ravel().tolist()
    w = np.asarray(weights, dtype=np.float64).ravel().tolist()
    if len(v) != len(w):
        raise ValueError(f"{len(v)} values but {len(w)} weights")
    total = sum(w)
    if not v or total == 0 or math.isnan(total):
        return math.nan
    return sum(a * b for a, b in zip(v, w, strict=True)) / total
