"""The paper experiment kinds that run in Rust (``netheat_repro::points``).

Each kind (``baraat``) declares its parameters once, as a
Rust struct; this module turns that struct's JSON Schema (``_netheat.point_schema``) into the kind's
:class:`Param` list (name, type, default, help: what the experiment loader
validates and ``netheat experiment kinds`` shows), checks a point's
parameters in Rust at load time (``_netheat.point_check``), and runs points
through the one entry point ``_netheat.run_point(kind, params_json, seed)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from netheat import _netheat
from netheat._columns import arrow_table
from netheat.data import _roots
from netheat.experiments.registry import CheckPoint, Param, PointResult, RunPoint

_FORMATS = ("duration", "bytes", "bandwidth", "path")
_TYPES = {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "array": "list"}


@cache
def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind``'s parameters (descriptions from the Rust doc comments)."""
    out: dict[str, Any] = json.loads(_netheat.point_schema(kind))
    return out


def _type(prop: dict[str, Any]) -> str:
    fmt = prop.get("format")
    if fmt in _FORMATS:
        return str(fmt)
    ty = prop.get("type")
    if isinstance(ty, list):
        ty = next((t for t in ty if t != "null"), None)
    if ty is None:  # an enum or a reference to a definition: a string
        return "str"
    return _TYPES[ty]


def params(kind: str) -> tuple[Param, ...]:
    """``kind``'s parameters as :class:`Param`s, in the schema's order."""
    s = schema(kind)
    required = set(s.get("required", []))
    return tuple(
        Param(
            name,
            _type(prop),
            prop.get("default"),
            " ".join(str(prop.get("description", "")).split()),
            required=name in required,
        )
        for name, prop in s.get("properties", {}).items()
    )


@dataclass(frozen=True)
class _Check:
    """Validate a point's parameters in Rust (names, types, units) without running it."""

    kind: str

    def __call__(self, p: dict[str, Any]) -> None:
        _netheat.point_check(self.kind, json.dumps(p))


def check(kind: str) -> CheckPoint:
    """Validate a point's parameters in Rust (names, types, units) without running it."""
    return _Check(kind)


def run(kind: str, p: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run one point in Rust: ``{"values", "tables", "notes", "extra"}`` (see ``_netheat.run_point``)."""
    return _netheat.run_point(kind, json.dumps(p), seed, _roots())


def result(out: dict[str, Any]) -> PointResult:
    """A :class:`PointResult` from :func:`run`'s output (tables through ``arrow_table``)."""
    return PointResult(
        tables={k: arrow_table(t) for k, t in out["tables"].items()},
        values={k: float(v) for k, v in out["values"].items()},
        notes=list(out["notes"]),
    )


@dataclass(frozen=True)
class _Run:
    """``run_point(params, seed)`` of one Rust kind (a class, so worker processes can unpickle it)."""

    kind: str

    def __call__(self, p: dict[str, Any], seed: int) -> PointResult:
        return result(run(self.kind, p, seed))


def runner(kind: str) -> RunPoint:
    """``run_point(params, seed)`` of a kind whose output needs no finishing in Python."""
    return _Run(kind)
