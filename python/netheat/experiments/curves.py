"""Paper-style curves of an experiment's comparisons along a numeric sweep.

A file declares its comparisons as ``ratio``, ``reduction`` and ``difference``
metrics, each pinned by ``where`` to one sweep point (Subways' speedup at 60
servers, memcache's rate at a ToR oversubscription of 10). The papers draw the
same comparisons as curves over the swept quantity (Subways Figure 6: speedup
against the job's servers). :func:`comparison_curves` draws them so: every
comparison (numerator, denominator, quantity, and the other sweep values it is
pinned to) is computed with the summary's own definition
(:func:`netheat.experiments.summary.metric_value`) at every value of each
numeric swept key with at least three values, one line per comparison, and
each metric's paper number as an open marker at its sweep value.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from netheat._netheat import parse_bandwidth, parse_bytes, parse_duration
from netheat.errors import NetheatError
from netheat.experiments.config import MetricSpec
from netheat.experiments.registry import get_metric
from netheat.experiments.runner import RunResult
from netheat.experiments.summary import metric_value
from netheat.output import save_png

MAX_LINES = 10
"""Most comparisons drawn in one panel (the file's first ones)."""


def _positions(values: list[Any]) -> list[float] | None:
    """Where each sweep value sits on the x axis: numbers as they are, unit strings (all of one
    kind: "10Gbps", "256MiB", "5min") by their value; None when the values are not quantities."""
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    if not all(isinstance(v, str) for v in values):
        return None
    for parse in (parse_bandwidth, parse_bytes, parse_duration):
        try:
            return [float(parse(v)) for v in values]
        except (NetheatError, ValueError, TypeError):
            continue
    return None


def _curve_key(spec: MetricSpec, key: str) -> tuple[Any, ...]:
    rest = tuple(sorted((k, repr(v)) for k, v in spec.where.items() if k != key))
    return (spec.kind, spec.of, spec.numerator, spec.denominator, rest)


def _label(spec: MetricSpec, key: str) -> str:
    rest = ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in spec.where.items() if k != key)
    op = {"ratio": "/", "difference": "-"}.get(spec.kind, "vs")
    return f"{spec.numerator} {op} {spec.denominator}" + (f" ({rest})" if rest else "")


def _curves_for(res: RunResult, key: str) -> dict[str, list[tuple[MetricSpec, list[MetricSpec]]]]:
    """Per metric kind, the comparisons that run along ``key``: a representative spec and the
    file's metrics of that comparison (for their paper numbers)."""
    sweep = res.experiment.sweep
    others = [k for k in sweep if k != key]
    groups: dict[tuple[Any, ...], tuple[MetricSpec, list[MetricSpec]]] = {}
    for spec in res.experiment.metrics:
        if spec.of is None or spec.numerator is None or spec.denominator is None or spec.denominator_where:
            continue
        mk = get_metric(spec.kind)
        if mk.combine is None or mk.paired is not None or mk.peak:
            continue
        # Every other swept key pinned: a point of the curve is one sweep point.
        if any(k not in spec.where for k in others):
            continue
        g = groups.setdefault(_curve_key(spec, key), (spec, []))
        g[1].append(spec)
    by_kind: dict[str, list[tuple[MetricSpec, list[MetricSpec]]]] = {}
    for spec, specs in groups.values():
        by_kind.setdefault(spec.kind, []).append((spec, specs))
    return by_kind


@dataclass
class Curve:
    """One comparison along a swept key: its metric kind, label, the key's values (as given and as
    positions on the axis), the comparison at each (NaN where a variant has no point) and the
    paper's numbers as (position, value)."""

    kind: str
    label: str
    values: list[Any]
    xs: list[float]
    ys: list[float]
    paper: list[tuple[float, float]] = field(default_factory=list)


def comparison_data(res: RunResult) -> dict[str, list[Curve]]:
    """Per numeric swept key (at least three values in this run), the curves of the comparisons
    the file declares (see the module docs), the file's first :data:`MAX_LINES` of each kind."""
    out: dict[str, list[Curve]] = {}
    for key in res.experiment.sweep:
        run_values = list(dict.fromkeys(p.sweep[key] for p in res.points if key in p.sweep))
        pos = _positions(run_values) if len(run_values) >= 3 else None
        if pos is None:
            continue
        order = sorted(range(len(pos)), key=pos.__getitem__)
        values, xs = [run_values[i] for i in order], [pos[i] for i in order]
        at_x = dict(zip(map(repr, values), xs, strict=True))
        curves: list[Curve] = []
        for kind, groups in _curves_for(res, key).items():
            # Comparisons of several quantities in one panel say which quantity each is.
            several = len({spec.of for spec, _ in groups[:MAX_LINES]}) > 1
            for spec, specs in groups[:MAX_LINES]:
                ys = [metric_value(replace(spec, where={**spec.where, key: v}), res)[0] for v in values]
                if all(math.isnan(y) for y in ys):
                    continue
                # A metric pinned to a value of `key` has its paper number there (one that
                # averages over every value of `key` has no place on the curve).
                paper = [
                    (at_x[repr(m.where[key])], m.paper)
                    for m in specs
                    if m.paper is not None and key in m.where and repr(m.where[key]) in at_x
                ]
                label = _label(spec, key)
                if several and spec.of is not None:
                    label = f"{spec.of.removeprefix('stats.')}: {label}"
                curves.append(Curve(kind, label, values, xs, ys, paper))
        if curves:
            out[key] = curves
    return out


def comparison_curves(res: RunResult) -> list[tuple[Path, str]]:
    """One figure per numeric swept key: :func:`comparison_data`'s curves, a panel per metric kind,
    the paper's numbers as open markers."""
    out: list[tuple[Path, str]] = []
    for key, curves in comparison_data(res).items():
        kinds = list(dict.fromkeys(c.kind for c in curves))
        fig, axes = plt.subplots(1, len(kinds), figsize=(6.4 * len(kinds), 4.0), squeeze=False)
        for ax, kind in zip(axes[0], kinds, strict=True):
            mine = [c for c in curves if c.kind == kind]
            for i, c in enumerate(mine):
                color = f"C{i % 10}"
                ax.plot(c.xs, c.ys, marker="o", ms=3, color=color, label=c.label)
                for x, y in c.paper:
                    ax.plot([x], [y], marker="o", ms=8, mfc="none", color=color)
            xs, values = mine[0].xs, mine[0].values
            ax.set_xlabel(key)
            if xs[0] > 0 and xs[-1] / xs[0] >= 20:  # values over decades: a log axis
                ax.set_xscale("log")
                ax.minorticks_off()
                ax.set_xticks(xs, [str(v) for v in values], fontsize=7)
            elif any(isinstance(v, str) for v in values):  # unit strings: their own ticks
                ax.set_xticks(xs, [str(v) for v in values], fontsize=7)
            unit = get_metric(kind).unit
            ax.set_ylabel(f"{kind} ({unit})" if unit else kind)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        path = res.out / f"curves_{key.replace('.', '_')}.png"
        fig.tight_layout()
        try:
            save_png(fig, path)
        finally:
            plt.close(fig)
        caption = (
            f"{res.experiment.name}: the file's comparisons at every value of {key} (computed as the "
            "summary computes the metric, from the means over seeds), one line each; open markers: the "
            f"paper's numbers at their {key}."
        )
        out.append((path, textwrap.shorten(caption, 400)))
    return out
