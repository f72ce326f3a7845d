"""``summary.json``: the metrics of a run, with the paper's numbers next to ours.

Format::

    {"experiment": name,
     "metrics": {metric_name: {"ours": number|null, "paper": number|null, "unit": str, "note": str,
                               "per_seed": [number|null, ...], "ci95": [low, high]|null,
                               "rel_diff": number|null, "target": str|null,
                               "target_range": [low|null, high|null]|null, "met": bool|null,
                               "met_over_seeds": bool|null}},
     "points": {"total": n, "completed": n, "failed": n},
     "experiment_hash": ..., "netheat_version": ..., "git_revision": ..., "quick": bool}

A value metric is the mean of the point value over the selected points of
its variant (every seed, and every sweep point matching ``where``); a
``ratio`` or ``difference`` combines those means of two variants. A paired
metric (``paired_mean_ratio``, ``paired_faster_pct``...) reads a table of
both variants' points instead: the rows the numerator's and the
denominator's points of one seed and sweep point both have, joined on the
key columns ``on`` (Sinbad's blocks: ``["task_id", "block"]``), pooled over
the selected points. A metric whose points failed is ``null`` with a note
saying so.

How much a metric owes to the draw: ``per_seed`` is the metric computed
from each seed's points alone (in the order of the experiment's seeds;
variants share a seed, so a ratio stays paired), and ``ci95`` the 95%
confidence interval of their mean (Student t), or ``null`` with fewer than
two finite per-seed values. A target read off ``ours`` holds for the
workload, not just one draw of it, only if the interval is on its side.

Against the paper: ``rel_diff`` is (ours - paper) / |paper| (``null`` without
both numbers or when the paper's is 0). A metric declared with a ``target``
(:class:`~netheat.experiments.config.Target`) says it in words (``target``)
and as the values that meet it (``target_range``, ``null`` for an open end),
whether ours meets it (``met``), and whether its 95% interval lies wholly
inside the target (``met_over_seeds`` true), wholly outside (false) or across
a bound or absent (``null``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from netheat.errors import InputError
from netheat.experiments.config import Experiment, MetricSpec
from netheat.experiments.registry import get_metric
from netheat.output import is_complete

if TYPE_CHECKING:
    from netheat.experiments.runner import RunResult


# Two-sided 95% quantiles of Student's t by degrees of freedom (1-30, then
# 40, 60, 120 and the normal limit); between anchors above 30, linear in 1/df.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
_T975_TAIL = ((30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980), (math.inf, 1.960))


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (``df >= 1``)."""
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    if df <= len(_T975):
        return _T975[df - 1]
    for (d0, t0), (d1, t1) in itertools.pairwise(_T975_TAIL):
        if df <= d1:
            x, x0, x1 = 1.0 / df, 1.0 / d0, 1.0 / d1
            return t0 + (t1 - t0) * (x - x0) / (x1 - x0)
    return _T975_TAIL[-1][1]


def ci95(values: list[float]) -> tuple[float, float] | None:
    """95% confidence interval of the mean of ``values`` (Student t); ``None`` below two values."""
    n = len(values)
    if n < 2:
        return None
    arr = np.asarray(values, dtype=float)
    half = t975(n - 1) * float(arr.std(ddof=1)) / math.sqrt(n)
    mean = float(arr.mean())
    return mean - half, mean + half


def has_intervals(summary: dict[str, Any]) -> bool:
    """Whether some metric of a ``summary.json`` object has a 95% interval (two seeds or more)."""
    return any(m.get("ci95") is not None for m in summary["metrics"].values())


def ci_text(m: dict[str, Any]) -> str:
    """A ``summary.json`` metric's 95% interval over seeds as ``[low, high] (n seeds)``, or ``-``."""
    ci = m.get("ci95")
    if ci is None:
        return "-"
    n = sum(v is not None for v in m.get("per_seed", []))
    return f"[{ci[0]:.4g}, {ci[1]:.4g}] ({n} seeds)"


def _variant_value(
    res: RunResult, variant: str, value: str, where: dict[str, Any], seed: int | None = None
) -> tuple[float, int, int]:
    """Mean of ``value`` over the matching points of ``variant`` (of one seed, or all):
    (mean, points used, points missing)."""
    got: list[float] = []
    missing = 0
    for p in res.points:
        if p.variant != variant or any(p.sweep.get(k) != v for k, v in where.items()):
            continue
        if seed is not None and p.seed != seed:
            continue
        if p.hash in res.values:
            got.append(res.values[p.hash].get(value, float("nan")))
        else:
            missing += 1
    arr = np.asarray(got, dtype=float)
    arr = arr[~np.isnan(arr)]
    return (float(arr.mean()) if len(arr) and not missing else float("nan")), len(got), missing


def metric_value(spec: MetricSpec, res: RunResult, seed: int | None = None) -> tuple[float, str]:
    """The number of one metric (from one seed's points, or all) and a note on missing points
    (empty when complete)."""
    if spec.of is None:
        # A value metric: the point value named like it (its tag may be of a kind's own
        # metric scope, so it is not looked up in the global registry).
        assert spec.variant is not None
        v, _, missing = _variant_value(res, spec.variant, spec.kind, spec.where, seed)
        note = f"{missing} point(s) of {spec.variant} failed" if missing else ""
        return v, note
    mk = get_metric(spec.kind)
    if mk.paired is not None:
        return _paired(spec, res, mk.paired, seed)
    assert mk.combine is not None and spec.numerator is not None and spec.denominator is not None
    if mk.peak:
        return _peak(spec, res, mk.combine, seed)
    a, _, ma = _variant_value(res, spec.numerator, spec.of, spec.where, seed)
    b, _, mb = _variant_value(res, spec.denominator, spec.of, spec.denominator_where or spec.where, seed)
    note = f"{ma + mb} point(s) failed" if ma + mb else ""
    if math.isnan(a) or math.isnan(b):
        return float("nan"), note
    return mk.combine(a, b), note


def _paired(
    spec: MetricSpec,
    res: RunResult,
    fn: Callable[[np.ndarray, np.ndarray, float], float],
    seed: int | None = None,
) -> tuple[float, str]:
    """A paired metric: the rows of ``spec.table`` that the numerator's and the denominator's
    points of one seed and sweep point both have (inner join on ``spec.on``, rows whose value is
    NaN in either left out), pooled over the selected points."""
    import pyarrow.parquet as pq

    from netheat.experiments.runner import _point_dir

    assert spec.table is not None and spec.of is not None and spec.denominator is not None
    points = {(p.variant, p.seed, tuple(sorted(p.sweep.items()))): p for p in res.points}
    a_all: list[np.ndarray] = []
    b_all: list[np.ndarray] = []
    failed = 0
    for p in res.points:
        if p.variant != spec.numerator or any(p.sweep.get(k) != v for k, v in spec.where.items()):
            continue
        if seed is not None and p.seed != seed:
            continue
        q = points.get((spec.denominator, p.seed, tuple(sorted(p.sweep.items()))))
        if q is None or p.hash not in res.values or q.hash not in res.values:
            failed += 1
            continue
        cols = [*spec.on, spec.of]
        ta = pq.read_table(_point_dir(res.out, p) / f"{spec.table}.parquet", columns=cols)
        tb = pq.read_table(_point_dir(res.out, q) / f"{spec.table}.parquet", columns=cols)
        joined = ta.join(tb, keys=list(spec.on), right_suffix="__den", join_type="inner")
        a = joined[spec.of].to_numpy(zero_copy_only=False).astype(float)
        b = joined[f"{spec.of}__den"].to_numpy(zero_copy_only=False).astype(float)
        ok = ~(np.isnan(a) | np.isnan(b))
        a_all.append(a[ok])
        b_all.append(b[ok])
    note = f"{failed} point pair(s) missing or failed" if failed else ""
    if failed or not a_all:
        return float("nan"), note
    return fn(np.concatenate(a_all), np.concatenate(b_all), spec.band), note


def _peak(
    spec: MetricSpec, res: RunResult, combine: Callable[[float, float], float], seed: int | None = None
) -> tuple[float, str]:
    """Largest per-sweep-point combination of numerator and denominator, and where it is."""
    assert spec.of is not None and spec.numerator is not None and spec.denominator is not None
    points: list[dict[str, Any]] = []
    for p in res.points:
        if all(p.sweep.get(k) == v for k, v in spec.where.items()) and p.sweep not in points:
            points.append(dict(p.sweep))
    best, at, failed = float("nan"), "", 0
    for sw in points:
        a, _, ma = _variant_value(res, spec.numerator, spec.of, sw, seed)
        b, _, mb = _variant_value(res, spec.denominator, spec.of, sw, seed)
        failed += ma + mb
        if math.isnan(a) or math.isnan(b):
            continue
        v = combine(a, b)
        if math.isnan(best) or v > best:
            best, at = v, ", ".join(f"{k}={x}" for k, x in sw.items())
    notes = [f"peak at {at}" if at else ""]
    if failed:
        notes.append(f"{failed} point(s) failed")
    return best, "; ".join(n for n in notes if n)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def against_paper(spec: MetricSpec, ours: float | None, ci: tuple[float, float] | None) -> dict[str, Any]:
    """``rel_diff``, ``target``, ``target_range``, ``met`` and ``met_over_seeds`` of one metric
    (see the module doc)."""
    paper, t = spec.paper, spec.target
    rel = None if ours is None or paper is None or paper == 0 else (ours - paper) / abs(paper)
    return {
        "rel_diff": rel,
        "target": None if t is None else t.describe(),
        "target_range": None if t is None else [_finite(b) for b in t.bounds(paper)],
        "met": None if t is None or ours is None else t.holds(ours, paper),
        "met_over_seeds": None if t is None or ci is None else t.holds_for_interval(*ci, paper),
    }


def verdict(m: dict[str, Any]) -> str:
    """A metric's target in a few words: ``met`` or ``not met``, with ``(its interval straddles
    the target)`` when the seeds disagree; ``-`` without a target or a value."""
    if m.get("met") is None:
        return "-"
    word = "met" if m["met"] else "not met"
    if m.get("ci95") is not None and m.get("met_over_seeds") is None:
        word += " (its interval straddles the target)"
    return word


def rel_text(m: dict[str, Any]) -> str:
    """``rel_diff`` as a signed percentage (``+5.3%``), ``-`` when there is none."""
    r = m.get("rel_diff")
    return "-" if r is None else f"{r * 100:+.1f}%"


def compute_summary(exp: Experiment, res: RunResult, version: str, revision: str) -> dict[str, Any]:
    """The ``summary.json`` object of a run."""
    out: dict[str, dict[str, Any]] = {}
    for spec in exp.metrics:
        value, missing = metric_value(spec, res)
        note = "; ".join(n for n in (spec.note, missing) if n)
        per_seed = [_finite(metric_value(spec, res, seed)[0]) for seed in exp.seeds]
        ci = ci95([v for v in per_seed if v is not None])
        ours = _finite(value)
        out[spec.name] = {
            "ours": ours,
            "paper": spec.paper,
            "unit": spec.unit,
            "note": note,
            "per_seed": per_seed,
            "ci95": None if ci is None else list(ci),
            **against_paper(spec, ours, ci),
        }
    unique = {p.hash for p in res.points}
    # A note several points share (a protocol's, a fallback's) is listed once, with its first
    # point and how many others gave it.
    by_text: dict[str, list[str]] = {}
    for p in res.points:
        for n in res.notes.get(p.hash, []):
            where = by_text.setdefault(n, [])
            if p.describe() not in where:
                where.append(p.describe())
    notes = [
        f"{where[0]}{f' and {len(where) - 1} other point(s)' if len(where) > 1 else ''}: {n}"
        for n, where in by_text.items()
    ]
    return {
        "experiment": exp.name,
        "metrics": out,
        "points": {
            "total": len(unique),
            "completed": len(unique & set(res.values)),
            "failed": len(unique & set(res.errors)),
        },
        "experiment_hash": res.experiment_hash,
        "netheat_version": version,
        "git_revision": revision,
        "quick": exp.quick,
        "notes": notes,
    }


def read_summary(path: str | Path) -> dict[str, Any]:
    """Read ``summary.json`` from a run directory (or the file itself); ``InputError`` when unusable."""
    p = Path(path)
    if p.is_dir():
        p = p / "summary.json"
    try:
        obj = json.loads(p.read_text())
    except FileNotFoundError:
        raise InputError(
            f"{p}: no summary.json (is this the --out directory of `netheat experiment run`?)"
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{p}: cannot read summary: {e}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
        raise InputError(f"{p}: not an experiment summary (no `metrics` object)")
    if is_complete(p.parent) is False:
        raise InputError(
            f"{p.parent}: a run was interrupted while writing its results (its marker says incomplete); "
            "run it again to finish them"
        )
    return obj
