"""``netheat compare DIR_A DIR_B``: metric-by-metric table of two runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netheat.experiments.summary import read_summary


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float | int):
        return f"{x:.6g}"
    return str(x)


def compare_rows(a: dict[str, Any], b: dict[str, Any]) -> list[list[str]]:
    """Rows ``metric, A, B, B-A, B/A, unit`` over the union of both runs' metrics (A's order first)."""
    ma, mb = a["metrics"], b["metrics"]
    names = list(ma) + [n for n in mb if n not in ma]
    rows = []
    for n in names:
        va = ma.get(n, {}).get("ours")
        vb = mb.get(n, {}).get("ours")
        unit = ma.get(n, mb.get(n, {})).get("unit", "")
        diff = vb - va if va is not None and vb is not None else None
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        rows.append([n, _fmt(va), _fmt(vb), _fmt(diff), _fmt(ratio), unit])
    return rows


def compare_text(dir_a: str | Path, dir_b: str | Path) -> str:
    """The table printed by ``netheat compare``."""
    a, b = read_summary(dir_a), read_summary(dir_b)
    header = ["metric", "A", "B", "B-A", "B/A", "unit"]
    rows = compare_rows(a, b)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in (0, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )

    lines = [
        f"A: {dir_a} ({a.get('experiment', '?')}, {a.get('git_revision', '?')[:10]})",
        f"B: {dir_b} ({b.get('experiment', '?')}, {b.get('git_revision', '?')[:10]})",
        line(header),
        line(["-" * w for w in widths]),
        *(line(r) for r in rows),
    ]
    return "\n".join(lines)
