"""``summary.json``: the metrics of a run, with the paper's numbers next to ours.

Format::

    {"experiment": name,
     "metrics": {metric_name: {"ours": number|null, "paper": number|null, "unit": str, "note": str}},
     "points": {"total": n, "completed": n, "failed": n},
     "experiment_hash": ..., "netheat_version": ..., "git_revision": ..., "quick": bool}

A value metric is the mean of the point value over the selected points of
its variant (every seed, and every sweep point matching ``where``); a
``ratio`` or ``difference`` combines those means of two variants. A metric
whose points failed is ``null`` with a note saying so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from netheat.errors import InputError
from netheat.experiments.config import Experiment, MetricSpec
from netheat.experiments.registry import get_metric

if TYPE_CHECKING:
    from netheat.experiments.runner import RunResult


def _variant_value(res: RunResult, variant: str, value: str, where: dict[str, Any]) -> tuple[float, int, int]:
    """Mean of ``value`` over the matching points of ``variant``: (mean, points used, points missing)."""
    got: list[float] = []
    missing = 0
    for p in res.points:
        if p.variant != variant or any(p.sweep.get(k) != v for k, v in where.items()):
            continue
        if p.hash in res.values:
            got.append(res.values[p.hash].get(value, float("nan")))
        else:
            missing += 1
    arr = np.asarray(got, dtype=float)
    arr = arr[~np.isnan(arr)]
    return (float(arr.mean()) if len(arr) and not missing else float("nan")), len(got), missing


def metric_value(spec: MetricSpec, res: RunResult) -> tuple[float, str]:
    """The number of one metric and a note on missing points (empty when complete)."""
    mk = get_metric(spec.kind)
    if mk.combine is None:
        assert spec.variant is not None
        v, _, missing = _variant_value(res, spec.variant, spec.kind, spec.where)
        note = f"{missing} point(s) of {spec.variant} failed" if missing else ""
        return v, note
    assert spec.of is not None and spec.numerator is not None and spec.denominator is not None
    if mk.peak:
        return _peak(spec, res, mk.combine)
    a, _, ma = _variant_value(res, spec.numerator, spec.of, spec.where)
    b, _, mb = _variant_value(res, spec.denominator, spec.of, spec.where)
    note = f"{ma + mb} point(s) failed" if ma + mb else ""
    if math.isnan(a) or math.isnan(b):
        return float("nan"), note
    return mk.combine(a, b), note


def _peak(spec: MetricSpec, res: RunResult, combine: Callable[[float, float], float]) -> tuple[float, str]:
    """Largest per-sweep-point combination of numerator and denominator, and where it is."""
    assert spec.of is not None and spec.numerator is not None and spec.denominator is not None
    points: list[dict[str, Any]] = []
    for p in res.points:
        if all(p.sweep.get(k) == v for k, v in spec.where.items()) and p.sweep not in points:
            points.append(dict(p.sweep))
    best, at, failed = float("nan"), "", 0
    for sw in points:
        a, _, ma = _variant_value(res, spec.numerator, spec.of, sw)
        b, _, mb = _variant_value(res, spec.denominator, spec.of, sw)
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


def compute_summary(exp: Experiment, res: RunResult, version: str, revision: str) -> dict[str, Any]:
    """The ``summary.json`` object of a run."""
    out: dict[str, dict[str, Any]] = {}
    for spec in exp.metrics:
        value, missing = metric_value(spec, res)
        note = "; ".join(n for n in (spec.note, missing) if n)
        out[spec.name] = {"ours": _finite(value), "paper": spec.paper, "unit": spec.unit, "note": note}
    unique = {p.hash for p in res.points}
    notes = [f"{p.describe()}: {n}" for p in res.points for n in res.notes.get(p.hash, [])]
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
        "notes": list(dict.fromkeys(notes)),
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
    return obj
