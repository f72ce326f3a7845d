"""Self-contained HTML reports.

A report is a list of sections; each section has a heading, a short text
that says what is shown and how it was computed, optional tables and
figures. Figures are embedded as base64 PNG so the file opens offline.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

from netheat.output import atomic_write

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { border-bottom: 2px solid #c44; padding-bottom: .2em; }
h2 { margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child, th.l, td.l { text-align: left; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; }
.meta { color: #666; font-size: 13px; }
"""


@dataclass
class Figure:
    """A PNG figure and the caption saying what it shows and how."""

    path: Path
    caption: str


@dataclass
class Table:
    """A small table: header row and body rows of already formatted cells."""

    header: list[str]
    rows: list[list[str]]
    left: tuple[int, ...] = ()
    """Columns besides the first aligned left (text); the others are right-aligned (numbers)."""


@dataclass
class Section:
    """One part of a report."""

    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    code: str = ""


def _table(t: Table) -> str:
    def cls(i: int) -> str:
        return ' class="l"' if i in t.left else ""

    head = "".join(f"<th{cls(i)}>{html.escape(h)}</th>" for i, h in enumerate(t.header))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{html.escape(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in t.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(f: Figure) -> str:
    data = base64.b64encode(f.path.read_bytes()).decode("ascii")
    alt = html.escape(f.caption)
    return (
        f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(f.caption)}</figcaption></figure>"
    )


def write_report(path: Path, title: str, sections: list[Section], meta: str = "") -> Path:
    """Write a self-contained HTML report and return its path."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if meta:
        parts.append(f"<p class='meta'>{html.escape(meta)}</p>")
    for s in sections:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.text:
            parts.append(f"<p>{html.escape(s.text)}</p>")
        if s.code:
            parts.append(f"<pre>{html.escape(s.code)}</pre>")
        parts.extend(_table(t) for t in s.tables)
        parts.extend(_figure(f) for f in s.figures)
    parts.append("</body></html>")
    text = "\n".join(parts)
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
