"""Byte counters to per-window bytes: resets, 2^64 wraps, NaN and stale samples, gaps.

A counter series is a list of raw samples ``(t_i, v_i)`` (seconds, bytes).
Between two consecutive usable samples the port carried an *increment*:

- ``v_b - v_a`` when the counter did not decrease;
- after a decrease, ``2^64 - v_a + v_b`` when the counter wrapped at 2^64:
  ``v_a`` was so close to 2^64 that this many bytes fit in the interval at
  the link's capacity (times :data:`WRAP_SLACK`);
- otherwise the counter was reset (a reboot, a cleared interface, a new
  exporter process) and the increment is ``v_b``, the bytes counted since
  the reset, which is what Prometheus' ``rate()`` does. Bytes carried
  between ``t_a`` and the reset are unknown and lost.

Samples that are not finite (``NaN``, including Prometheus' stale markers
should a query return them, and infinities) or negative are dropped first:
they carry no count. The interval then spans from the last usable sample
to the next one.

An interval longer than the maximum gap is a *gap*: its bytes (known in
total, but not where they fell in time) are not attributed to any window.
Within an interval up to the maximum gap the increment is spread uniformly
over time, which is the only place netheat interpolates: a window edge
that falls between two samples splits their increment in proportion to
time. Each window records how many of its seconds lie in usable intervals
(its *coverage*); a window without coverage has no value (it is absent,
never zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from netheat.metrics import quantile

COUNTER_MAX = 2.0**64
"""Where 64-bit counters (``ifHCOutOctets``, node_exporter's byte counters) wrap."""

WRAP_SLACK = 1.5
"""A decrease is a wrap only if ``2^64 - v_a + v_b`` is at most this many times the line-rate bytes."""

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


@dataclass
class CounterStats:
    """What happened to one series' samples on the way to increments."""

    samples: int = 0
    """Samples received (after de-duplicating timestamps)."""
    dropped_nonfinite: int = 0
    dropped_negative: int = 0
    resets: int = 0
    wraps: int = 0
    gaps: int = 0
    gap_seconds: float = 0.0

    def add(self, other: CounterStats) -> None:
        """Accumulate another series' counts."""
        self.samples += other.samples
        self.dropped_nonfinite += other.dropped_nonfinite
        self.dropped_negative += other.dropped_negative
        self.resets += other.resets
        self.wraps += other.wraps
        self.gaps += other.gaps
        self.gap_seconds += other.gap_seconds


def clean(ts: FloatArray, vs: FloatArray, stats: CounterStats) -> tuple[FloatArray, FloatArray]:
    """Sorted samples with unique timestamps, without non-finite or negative values (counted in ``stats``)."""
    order = np.argsort(ts, kind="stable")
    ts, vs = ts[order], vs[order]
    if len(ts):
        keep = np.ones(len(ts), dtype=bool)
        keep[1:] = ts[1:] != ts[:-1]  # the same sample from two overlapping chunks
        ts, vs = ts[keep], vs[keep]
    stats.samples += len(ts)
    finite = np.isfinite(vs)
    stats.dropped_nonfinite += int((~finite).sum())
    negative = finite & (vs < 0)
    stats.dropped_negative += int(negative.sum())
    ok = finite & ~negative
    return ts[ok], vs[ok]


def scrape_interval(ts: FloatArray) -> float | None:
    """The series' scrape interval: the lower quartile of its sample spacings (None below two samples).

    Missed scrapes and gaps only lengthen spacings, so a low quantile finds
    the interval even when many scrapes are missing; it is a quantile
    rather than the minimum so that one early or doubled scrape does not
    decide it.
    """
    if len(ts) < 2:
        return None
    d = np.diff(ts)
    d = d[d > 0]
    return quantile(d, 0.25) if len(d) else None


def increments(
    ts: FloatArray, vs: FloatArray, line_rate_bytes_s: FloatArray | float | None, stats: CounterStats
) -> FloatArray:
    """Bytes carried in each interval ``(t_i, t_{i+1}]`` of clean samples (resets and wraps as documented).

    ``line_rate_bytes_s`` (per interval, or one value) bounds what a wrap can
    explain; ``None`` or 0 makes every decrease a reset.
    """
    if len(vs) < 2:
        return np.zeros(0)
    a, b = vs[:-1], vs[1:]
    inc = b - a
    down = inc < 0
    if not down.any():
        return inc
    dt = np.diff(ts)
    wrapped = COUNTER_MAX - a + b
    if line_rate_bytes_s is None:
        plausible = np.zeros(len(inc), dtype=bool)
    else:
        rate = np.broadcast_to(np.asarray(line_rate_bytes_s, dtype=np.float64), inc.shape)
        plausible = (rate > 0) & (wrapped <= rate * dt * WRAP_SLACK)
    wrap = down & plausible
    reset = down & ~plausible
    stats.wraps += int(wrap.sum())
    stats.resets += int(reset.sum())
    return np.where(wrap, wrapped, np.where(reset, b, inc))


def window_bytes(
    ts: FloatArray,
    inc: FloatArray,
    max_gap_s: float,
    t0: float,
    step_s: float,
    n: int,
    stats: CounterStats,
) -> tuple[FloatArray, FloatArray]:
    """Bytes and covered seconds of each window ``[t0 + k*step, t0 + (k+1)*step)``, ``k < n``.

    ``inc[i]`` is the increment of the interval ``(ts[i], ts[i+1]]``;
    intervals longer than ``max_gap_s`` are gaps (nothing attributed, no
    coverage). Computed from the cumulative bytes and coverage, piecewise
    linear between samples and flat across gaps, read at the window edges.
    """
    edges = t0 + step_s * np.arange(n + 1, dtype=np.float64)
    if len(ts) < 2:
        return np.zeros(n), np.zeros(n)
    dt = np.diff(ts)
    ok = dt <= max_gap_s
    gaps = ~ok
    stats.gaps += int(gaps.sum())
    stats.gap_seconds += float(dt[gaps].sum())
    cum_bytes = np.concatenate(([0.0], np.cumsum(np.where(ok, inc, 0.0))))
    cum_cover = np.concatenate(([0.0], np.cumsum(np.where(ok, dt, 0.0))))
    # Relative to t0 so that epoch timestamps keep their sub-millisecond precision in the subtraction.
    x = ts - t0
    e = edges - t0
    b = np.diff(np.interp(e, x, cum_bytes))
    c = np.diff(np.interp(e, x, cum_cover))
    return b, np.clip(c, 0.0, step_s)
