"""Experiment files: the TOML schema, loading and validation.

An experiment file (kebab-case keys) has:

- ``[experiment]``: ``name``, ``kind`` (the scenario kind, i.e. the policy
  choice, default ``flow-sim``), ``seeds`` (default ``[0]``), optional
  ``description``, ``reference`` (the paper) and ``note``;
- ``[base]``: parameters of the scenario shared by every variant;
- ``[[variant]]``: ``name``, optional ``kind``, optional ``where`` (swept
  parameter -> the value or list of values at which the variant runs; by
  default it runs at every sweep point), and parameters overriding
  ``[base]`` (no variants: one variant called ``base``);
- ``[sweep]``: parameter -> list of values (a grid), and optionally
  ``seeds``;
- ``[quick]``: parameter overrides, ``seeds`` and a ``[quick.sweep]`` used
  by ``--quick``;
- ``[[metric]]``: ``name``, ``kind`` (a metric tag), ``variant`` (value
  metrics) or ``of``/``numerator``/``denominator`` (``ratio``,
  ``difference``), optional ``where`` (sweep values; ``denominator-where``
  moves the denominator to other sweep values; a metric at a value
  that ``[quick.sweep]`` drops is left out of ``--quick`` runs), ``paper``, ``unit``,
  ``note`` and ``target`` (what agreement with the paper counts as met:
  ``{ rel = 0.2 }`` within 20% of ``paper``, ``{ abs = 0.1 }`` within 0.1
  of it in the metric's unit, or ``{ min = 50, max = 80 }`` a range; see
  :class:`Target`).

Every point of every variant with the same sweep values and seed gets the
same seed, so variants see identical generated workloads (paired).
Everything is checked before any point runs: unknown kinds, metrics,
parameters, variants and sweep values are errors naming the file, line
(best effort) and key, and listing the valid names. :func:`only_variants`
narrows a loaded experiment to some of its variants (``experiment run
--variants``), leaving out the metrics that read the others.

A kind with *open parameters* (``kind = "scenario"``) takes any key in
``[base]``, ``[[variant]]``, ``[sweep]`` and ``[quick]`` besides its
declared ones: dotted scenario keys, written quoted
(``"routing.policy" = "ecmp"``) and passed to the kind as they are. The
kind's ``check`` then validates every variant at every sweep point it runs
at (for ``scenario``: the scenario is read, built and checked with those
overrides, without running); an error names this file and the section and
key it came from (``variant[1].routing.polcy``, ``sweep.topology.loop-size``).
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from netheat._netheat import parse_bandwidth, parse_bytes, parse_duration
from netheat.errors import ConfigError, InputError
from netheat.experiments.registry import (
    MetricKind,
    Param,
    ScenarioKind,
    get_kind,
    get_metric,
    known,
    metrics,
    value_metric,
)
from netheat.textfile import read_config_text

EXPERIMENT_KEYS = ("name", "kind", "seeds", "description", "reference", "note")
VARIANT_KEYS = ("name", "kind", "where", "quick")
METRIC_KEYS = (
    "name",
    "kind",
    "variant",
    "of",
    "numerator",
    "denominator",
    "where",
    "denominator-where",
    "paper",
    "unit",
    "note",
    "table",
    "on",
    "band",
    "target",
)
TARGET_KEYS = ("rel", "abs", "min", "max")
TOP_KEYS = ("experiment", "base", "variant", "sweep", "quick", "metric")


@dataclass(frozen=True)
class Variant:
    """A named variant: its scenario kind, its raw parameters (base merged with overrides)
    and the sweep values it is restricted to (empty: every sweep point)."""

    name: str
    kind: str
    params: dict[str, Any]
    where: dict[str, list[Any]] = field(default_factory=dict)

    def runs_at(self, sweep: dict[str, Any]) -> bool:
        """Whether the variant has a point at these sweep values."""
        return all(sweep.get(k) in vals for k, vals in self.where.items())


@dataclass(frozen=True)
class Target:
    """What agreement with the paper's number counts as reproduced, for one metric.

    Exactly one form: ``rel`` (|ours - paper| <= rel x |paper|), ``abs`` (|ours - paper| <= abs,
    in the metric's unit) or a range ``[min, max]`` (either end may be open). Bounds are
    inclusive. The report and ``summary.json`` say for each metric with a target whether ours
    meets it, and whether the 95% interval over seeds lies wholly inside or outside it.
    """

    rel: float | None = None
    abs: float | None = None
    low: float | None = None
    high: float | None = None

    def bounds(self, paper: float | None) -> tuple[float, float]:
        """The values that meet the target, ``[low, high]`` (infinite for an open end); ``paper``
        is required by ``rel`` and ``abs``."""
        if self.rel is None and self.abs is None:
            return (-math.inf if self.low is None else self.low, math.inf if self.high is None else self.high)
        assert paper is not None
        tol = self.rel * abs(paper) if self.rel is not None else self.abs or 0.0
        return paper - tol, paper + tol

    def _within(self, paper: float | None) -> tuple[float, float]:
        # A tolerance gets 1e-12 of itself as slack, so that 1.2 against 1.0 at 20% meets it
        # despite floating point.
        low, high = self.bounds(paper)
        slack = (high - low) * 0.5e-12 if math.isfinite(high - low) else 0.0
        return low - slack, high + slack

    def holds(self, value: float, paper: float | None) -> bool:
        """Whether ``value`` meets the target."""
        low, high = self._within(paper)
        return low <= value <= high

    def holds_for_interval(self, lo: float, hi: float, paper: float | None) -> bool | None:
        """True when the whole interval ``[lo, hi]`` meets the target, False when none of it does,
        None when it straddles a bound (the draw decides)."""
        low, high = self._within(paper)
        if lo >= low and hi <= high:
            return True
        if hi < low or lo > high:
            return False
        return None

    def describe(self) -> str:
        """The target in words: ``within 20% of the paper``, ``within 0.1 of the paper``,
        ``in [50, 80]``, ``at least 1.2``."""
        if self.rel is not None:
            return f"within {self.rel * 100:g}% of the paper"
        if self.abs is not None:
            return f"within {self.abs:g} of the paper"
        if self.low is not None and self.high is not None:
            return f"in [{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"at least {self.low:g}"
        return f"at most {self.high:g}"


@dataclass(frozen=True)
class MetricSpec:
    """One metric of the summary, as declared by a ``[[metric]]`` table (or by default)."""

    name: str
    kind: str
    unit: str
    variant: str | None = None
    of: str | None = None
    numerator: str | None = None
    denominator: str | None = None
    where: dict[str, Any] = field(default_factory=dict)
    denominator_where: dict[str, Any] = field(default_factory=dict)
    """``ratio``/``difference``: sweep values the denominator takes instead of ``where``'s (a
    comparison across sweep points, e.g. one variant at 10:1 against another at 5:1)."""
    paper: float | None = None
    note: str = ""
    table: str | None = None
    """Paired metrics: the table whose rows are paired (``blocks``)."""
    on: tuple[str, ...] = ()
    """Paired metrics: the key columns rows are joined on."""
    band: float = 0.05
    """Paired metrics: the relative band of "the same"."""
    target: Target | None = None
    """What agreement with ``paper`` counts as reproduced (None: no target, only the difference)."""


@dataclass
class Experiment:
    """A validated experiment: variants, sweep grid, seeds and metrics."""

    name: str
    path: Path
    text: str
    variants: list[Variant]
    sweep: dict[str, list[Any]]
    seeds: list[int]
    metrics: list[MetricSpec]
    quick: bool = False
    description: str = ""
    reference: str = ""
    note: str = ""

    @property
    def base_dir(self) -> Path:
        """Directory that relative paths of the file are resolved against."""
        return self.path.parent


class _Ctx:
    """The file being validated: builds errors with file, best-effort line and key."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, key: str) -> int:
        """Best-effort line of a dotted key (the last component that appears as ``k =`` or ``[k]``)."""
        quoted = self._quoted_line(key) or self._table_line(key)
        if quoted:
            return quoted
        parts = [re.sub(r"\[\d+\]$", "", p) for p in key.split(".") if p]
        for part in reversed(parts):
            pat = re.compile(rf"^\s*(\[\[?\s*)?(\"?){re.escape(part)}\2\s*(=|\]|\.)")
            for i, line in enumerate(self.lines, 1):
                if pat.search(line):
                    return i
        return 0

    def _in_table(self, section: str, nth: int, entry: re.Pattern[str]) -> tuple[int, int]:
        """Lines of the ``nth`` ``[section]`` / ``[[section]]`` table's header and of its first line
        matching ``entry`` (0 when absent); the table ends at the next header."""
        header = re.compile(rf"^\s*\[\[?\s*{re.escape(section)}\s*\]\]?\s*(#.*)?$")
        seen, at = -1, 0
        for i, line in enumerate(self.lines, 1):
            if header.search(line):
                seen += 1
                if seen == nth:
                    at = i
                elif seen > nth:
                    break
            elif at and line.lstrip().startswith("["):
                break
            elif at and entry.search(line):
                return at, i
        return at, 0

    def _quoted_line(self, key: str) -> int:
        """Line of an open parameter: ``section[.sub][i].a.b`` written as ``"a.b" =`` in that section."""
        m = re.fullmatch(r"(variant|base|sweep|quick(?:\.sweep)?)(?:\[(\d+)\])?\.(.+\..+)", key)
        if m is None:
            return 0
        quoted = re.compile(rf"^\s*([\"']){re.escape(m.group(3))}\1\s*=")
        return self._in_table(m.group(1), int(m.group(2) or 0), quoted)[1]

    def _table_line(self, key: str) -> int:
        """Line of ``variant[i].k...`` / ``metric[i].k...``: ``k`` in the i-th such table, else its header."""
        m = re.fullmatch(r"(variant|metric)\[(\d+)\](?:\.([^.]+).*)?", key)
        if m is None:
            return 0
        first = m.group(3)
        entry = re.compile(rf"^\s*([\"']?){re.escape(first)}\1\s*=" if first else r"(?!)")
        header, line = self._in_table(m.group(1), int(m.group(2)), entry)
        return line or header

    def error(self, key: str, reason: str) -> ConfigError:
        """A :class:`ConfigError` reading ``file:line: key `k`: reason``."""
        line = self.line_of(key)
        loc = f"{self.path}:{line}" if line else f"{self.path}"
        return ConfigError(
            f"{loc}: key `{key}`: {reason}", file=str(self.path), line=line, key=key, reason=reason
        )


def convert_param(p: Param, value: Any, base_dir: Path) -> Any:
    """Check and convert one parameter value (units to SI floats, paths absolute); raises ValueError."""
    if value is None:
        return None
    t = p.type
    if t == "path":
        if not isinstance(value, str):
            raise ValueError(f"expected a path string, got {value!r}")
        path = (base_dir / value).resolve()
        if not path.is_file():
            raise ValueError(f"file not found: {path}")
        return str(path)
    if t == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value
    if t == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        return value
    if t == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    if t == "str":
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        return value
    if t == "list":
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {value!r}")
        return value
    parse = {"duration": parse_duration, "bytes": parse_bytes, "bandwidth": parse_bandwidth}[t]
    if isinstance(value, bool):
        raise ValueError(f"expected a {t}, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"expected a {t} string such as {_EXAMPLES[t]!r}, got {value!r}")
    try:
        return parse(value)
    except Exception as e:
        raise ValueError(str(e)) from None


_EXAMPLES = {"duration": "30s", "bytes": "10MB", "bandwidth": "10Gbps"}


def _did_you_mean(key: str, valid: list[str]) -> str:
    """``"; did you mean 'x'?"`` naming the valid key closest to ``key``, or ``""``."""
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def resolve_params(kind: ScenarioKind, raw: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """Every parameter of ``kind``: defaults filled in, values converted (raises ValueError/KeyError);
    then, for a kind with open parameters, the other keys of ``raw`` as they are."""
    out: dict[str, Any] = {}
    for p in kind.params:
        if p.name in raw:
            out[p.name] = convert_param(p, raw[p.name], base_dir)
        elif p.required:
            raise KeyError(p.name)
        elif p.default is not None or not kind.open_params:
            # (A kind with open parameters gets only what was given, so an optional
            # parameter it adds does not change the points, or hashes, of files without it.)
            out[p.name] = p.default
    out.update((k, v) for k, v in raw.items() if k not in out and kind.accepts(k))
    return out


def _open_value(ctx: _Ctx, key: str, value: Any) -> None:
    """An open parameter's value must be a value, not a table (an unquoted dotted key)."""
    if isinstance(value, dict):
        name = key.rsplit(".", 1)[-1]
        raise ctx.error(
            key,
            f"a table, not a value: write scenario keys quoted and dotted, e.g. "
            f'"{name}.{next(iter(value), "key")}" = ...',
        )


def _table(ctx: _Ctx, doc: dict[str, Any], key: str) -> dict[str, Any]:
    v = doc.get(key, {})
    if not isinstance(v, dict):
        raise ctx.error(key, "expected a table")
    return v


def _check_keys(
    ctx: _Ctx, table: dict[str, Any], allowed: list[str] | tuple[str, ...], where: str, what: str = "key"
) -> None:
    for k in table:
        if k not in allowed:
            raise ctx.error(f"{where}.{k}" if where else k, f"unknown {what} {k!r}; valid: {known(allowed)}")


def _seeds(ctx: _Ctx, value: Any, key: str) -> list[int]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    ):
        raise ctx.error(key, f"expected a non-empty list of non-negative integers, got {value!r}")
    return list(value)


def only_variants(exp: Experiment, names: list[str]) -> Experiment:
    """``exp`` with only the variants ``names`` (``experiment run --variants``).

    The metrics that read another variant are left out; the points keep their seeds and hashes,
    so a later run of the whole file in the same directory reuses them.
    """
    known_names = [v.name for v in exp.variants]
    for n in names:
        if n not in known_names:
            raise InputError(f"--variants: unknown variant {n!r}; variants: {known(known_names)}")
    keep = set(names)
    metrics = [m for m in exp.metrics if {m.variant, m.numerator, m.denominator} - {None} <= keep]
    return replace(exp, variants=[v for v in exp.variants if v.name in keep], metrics=metrics)


def load_experiment(path: str | Path, quick: bool = False, variants: list[str] | None = None) -> Experiment:
    """Read and validate an experiment file; ``quick`` applies its ``[quick]`` overrides.

    ``variants``: the variants about to run (``experiment run --variants``): only their points
    are built and checked (a scenario point's check generates its whole workload, seconds and
    gigabytes at the paper's scale); the file itself is validated whole. ``None``: every variant.
    """
    path = Path(path).resolve()
    text = read_config_text(path, "an experiment file")
    return parse_experiment(text, path, quick, only=variants)


def parse_experiment(text: str, path: Path, quick: bool = False, only: list[str] | None = None) -> Experiment:
    """Validate the experiment in ``text`` (relative paths resolve against ``path``'s directory);
    ``only``: the variants whose points are checked, as ``variants`` in :func:`load_experiment`."""
    ctx = _Ctx(path, text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}", file=str(path), reason=str(e)) from None
    _check_keys(ctx, doc, TOP_KEYS, "", "section")
    exp = _table(ctx, doc, "experiment")
    _check_keys(ctx, exp, EXPERIMENT_KEYS, "experiment")
    name = exp.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise ctx.error("experiment.name", "expected a non-empty string")
    default_kind = exp.get("kind", "flow-sim")
    if not isinstance(default_kind, str):
        raise ctx.error("experiment.kind", "expected a string")
    seeds = _seeds(ctx, exp.get("seeds", [0]), "experiment.seeds")

    base = _table(ctx, doc, "base")
    sweep_raw = dict(_table(ctx, doc, "sweep"))
    quick_raw = dict(_table(ctx, doc, "quick"))
    if "seeds" in sweep_raw:
        seeds = _seeds(ctx, sweep_raw.pop("seeds"), "sweep.seeds")
    full_sweep = dict(sweep_raw)
    quick_params: dict[str, Any] = {}
    if quick:
        if "seeds" in quick_raw:
            seeds = _seeds(ctx, quick_raw["seeds"], "quick.seeds")
        qs = quick_raw.get("sweep", {})
        if not isinstance(qs, dict):
            raise ctx.error("quick.sweep", "expected a table")
        for k, v in qs.items():
            if k not in sweep_raw:
                raise ctx.error(f"quick.sweep.{k}", f"not a swept parameter; swept: {known(list(sweep_raw))}")
            sweep_raw[k] = v
        quick_params = {k: v for k, v in quick_raw.items() if k not in ("seeds", "sweep")}

    variant_docs = doc.get("variant", [])
    if not isinstance(variant_docs, list) or not all(isinstance(v, dict) for v in variant_docs):
        raise ctx.error("variant", "expected [[variant]] tables")
    if not variant_docs:
        variant_docs = [{"name": "base"}]
    variants: list[Variant] = []
    sections: list[dict[str, str]] = []
    for i, vd in enumerate(variant_docs):
        where = f"variant[{i}]"
        vname = vd.get("name")
        if not isinstance(vname, str) or not vname:
            raise ctx.error(f"{where}.name", "every variant needs a non-empty string `name`")
        if any(v.name == vname for v in variants):
            raise ctx.error(f"{where}.name", f"duplicate variant name {vname!r}")
        kname = vd.get("kind", default_kind)
        try:
            kind = get_kind(kname)
        except ConfigError as e:
            key = f"{where}.kind" if "kind" in vd else "experiment.kind"
            raise ctx.error(key, str(e)) from None
        # A variant's own `quick = {...}` overrides [quick] for that variant (its quick form).
        vquick = vd.get("quick", {})
        if not isinstance(vquick, dict):
            raise ctx.error(f"{where}.quick", "expected a table of parameters, e.g. quick = { tasks = 50 }")
        if not quick:
            vquick = {}
        params = {**base, **{k: v for k, v in vd.items() if k not in VARIANT_KEYS}, **quick_params, **vquick}
        section_of = (
            {k: "base" for k in base}
            | {k: where for k in vd}
            | {k: "quick" for k in quick_params}
            | {k: f"{where}.quick" for k in vquick}
        )
        valid = kind.param_names()
        if kind.topology_overrides:
            valid = [*valid, "topology.<key> (an override of the datacenter file's [topology] key)"]
        for k in params:
            if k not in valid and kind.accepts(k):
                _open_value(ctx, f"{section_of[k]}.{k}", params[k])
            elif not kind.accepts(k):
                raise ctx.error(
                    f"{section_of[k]}.{k}",
                    f"unknown parameter {k!r} of scenario kind {kind.name!r}{_did_you_mean(k, valid)}; "
                    f"valid: {known(valid)}",
                )
        for k in sweep_raw:
            if not kind.accepts(k):
                raise ctx.error(
                    f"sweep.{k}",
                    f"unknown parameter {k!r} of scenario kind {kind.name!r}{_did_you_mean(k, valid)}; "
                    f"valid: {known(valid)}",
                )
        for p in kind.params:
            if p.name in params and p.name not in sweep_raw:
                try:
                    convert_param(p, params[p.name], path.parent)
                except ValueError as e:
                    raise ctx.error(f"{section_of[p.name]}.{p.name}", str(e)) from None
            elif p.required and p.name not in sweep_raw:
                raise ctx.error(
                    "base" if "base" in doc else where,
                    f"missing required parameter {p.name!r} of scenario kind {kind.name!r} ({where})",
                )
        variants.append(Variant(vname, kind.name, params))
        sections.append(section_of)

    sweep: dict[str, list[Any]] = {}
    for k, values in sweep_raw.items():
        if not isinstance(values, list) or not values:
            raise ctx.error(f"sweep.{k}", f"expected a non-empty list of values, got {values!r}")
        for v in variants:
            sp = get_kind(v.kind).param(k)
            if sp is None:  # an open parameter: the kind's check validates it below
                for val in values:
                    _open_value(ctx, f"sweep.{k}", val)
                continue
            for val in values:
                try:
                    convert_param(sp, val, path.parent)
                except ValueError as e:
                    raise ctx.error(f"sweep.{k}", f"value {val!r}: {e}") from None
        sweep[k] = list(values)

    for i, vd in enumerate(variant_docs):
        if "where" in vd:
            variants[i].where.update(_variant_where(ctx, f"variant[{i}].where", vd["where"], sweep))
    checked = [only is None or v.name in only for v in variants]
    _check_points(ctx, variants, sections, sweep, path.parent, checked)
    metric_specs = _metrics(ctx, doc, variants, sweep, full_sweep)
    return Experiment(
        name=name,
        path=path,
        text=text,
        variants=variants,
        sweep=sweep,
        seeds=seeds,
        metrics=metric_specs,
        quick=quick,
        description=str(exp.get("description", "")),
        reference=str(exp.get("reference", "")),
        note=str(exp.get("note", "")),
    )


def _check_points(
    ctx: _Ctx,
    variants: list[Variant],
    sections: list[dict[str, str]],
    sweep: dict[str, list[Any]],
    base_dir: Path,
    checked: list[bool],
) -> None:
    """Run the ``check`` of kinds that have one on every variant (those ``checked``) at every
    sweep point it runs at (each distinct parameter set once), so a bad open parameter fails
    before any point runs."""
    keys = list(sweep)
    grid = [dict(zip(keys, c, strict=True)) for c in itertools.product(*(sweep[k] for k in keys))]
    for i, (v, section_of, check) in enumerate(zip(variants, sections, checked, strict=True)):
        kind = get_kind(v.kind)
        if not check or (kind.check is None and not kind.topology_overrides):
            continue
        seen: set[str] = set()
        for at in grid:
            if not v.runs_at(at):
                continue
            params = resolve_params(kind, {**v.params, **at}, base_dir)
            sig = json.dumps(params, sort_keys=True, default=str)
            if sig in seen:
                continue
            seen.add(sig)
            try:
                kind.check_point(params)
            except ConfigError as e:
                point = f"variant {v.name!r}" + (
                    " at " + ", ".join(f"{k}={x!r}" for k, x in at.items()) if at else ""
                )
                if e.key in at:
                    raise ctx.error(f"sweep.{e.key}", f"{e.reason} ({point})") from None
                if e.key in section_of:
                    raise ctx.error(f"{section_of[e.key]}.{e.key}", f"{e.reason} ({point})") from None
                raise ctx.error(f"variant[{i}]", f"{e} ({point})") from None


def _variant_where(ctx: _Ctx, key: str, raw: Any, sweep: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A variant's ``where``: swept parameter -> the values (a subset of the sweep's) it runs at."""
    if not isinstance(raw, dict) or not raw:
        raise ctx.error(key, "expected a non-empty table of swept parameters")
    out: dict[str, list[Any]] = {}
    for k, val in raw.items():
        if k not in sweep:
            raise ctx.error(f"{key}.{k}", f"not a swept parameter; swept: {known(list(sweep))}")
        vals = val if isinstance(val, list) else [val]
        if not vals:
            raise ctx.error(f"{key}.{k}", "expected a value or a non-empty list of values")
        for x in vals:
            if x not in sweep[k]:
                raise ctx.error(f"{key}.{k}", f"{x!r} is not one of the swept values {sweep[k]!r}")
        out[k] = list(vals)
    return out


def _metrics(
    ctx: _Ctx,
    doc: dict[str, Any],
    variants: list[Variant],
    sweep: dict[str, list[Any]],
    full_sweep: dict[str, list[Any]],
) -> list[MetricSpec]:
    """The ``[[metric]]`` specs. ``sweep`` is the grid that runs (``[quick.sweep]`` applied under
    ``--quick``); a metric at a sweep value only the full grid has is left out of a quick run."""
    names = [v.name for v in variants]
    produced = {v.name: set(get_kind(v.kind).values) for v in variants}
    value_metrics = [m for m, mk in metrics().items() if mk.combine is None]
    scoped = {k.name: k.metric_scope for k in map(get_kind, dict.fromkeys(v.kind for v in variants))}
    scopes = {k: sc for k, sc in scoped.items() if sc is not None}
    docs = doc.get("metric", [])
    if not isinstance(docs, list) or not all(isinstance(m, dict) for m in docs):
        raise ctx.error("metric", "expected [[metric]] tables")
    if not docs:
        # Default: every value metric each variant produces.
        return [
            MetricSpec(f"{m} [{v.name}]", m, vm.unit, variant=v.name)
            for v in variants
            for m in get_kind(v.kind).values
            if (vm := value_metric(get_kind(v.kind), m)) is not None
        ]
    out: list[MetricSpec] = []

    by_name = {v.name: v for v in variants}

    def sweep_values(where: str, key: str, wh: Any) -> dict[str, Any]:
        """A metric's ``where``-like table: swept parameters at values of the full grid."""
        if not isinstance(wh, dict):
            raise ctx.error(f"{where}.{key}", "expected a table of sweep values")
        for k, val in wh.items():
            if k not in sweep:
                raise ctx.error(f"{where}.{key}.{k}", f"not a swept parameter; swept: {known(list(sweep))}")
            if val not in full_sweep[k]:
                msg = f"{val!r} is not one of the swept values {full_sweep[k]!r}"
                raise ctx.error(f"{where}.{key}.{k}", msg)
        return dict(wh)

    def variant_ref(where: str, key: str, value: Any, wh: dict[str, Any]) -> str:
        if value not in names:
            raise ctx.error(f"{where}.{key}", f"unknown variant {value!r}; variants: {known(names)}")
        # A variant restricted to some sweep values: the metric must pin
        # them, or its mean would cover other points than its partner's.
        for k, vals in by_name[value].where.items():
            if k not in wh or wh[k] not in vals:
                raise ctx.error(
                    f"{where}.where",
                    f"variant {value!r} runs only at {k} in {vals!r}; set `where.{k}` to one of them",
                )
        return str(value)

    def value_metric_of(where: str, key: str, tag: Any, variant: str) -> MetricKind:
        kind = get_kind(by_name[variant].kind)
        if kind.metric_scope is not None:  # the kind's own namespace only
            vm = kind.metric_scope.get(tag) if isinstance(tag, str) else None
            if vm is None:
                raise ctx.error(
                    f"{where}.{key}",
                    f"unknown value metric {tag!r} of scenario kind {kind.name!r} (variant {variant!r}); "
                    f"known: {known(kind.metric_scope.names())}",
                )
            return vm
        if tag not in value_metrics:
            raise ctx.error(f"{where}.{key}", f"unknown value metric {tag!r}; known: {known(value_metrics)}")
        if tag not in produced[variant]:
            raise ctx.error(
                f"{where}.{key}",
                f"variant {variant!r} does not report {tag!r}; it reports: {known(list(produced[variant]))}",
            )
        return metrics()[str(tag)]

    for i, md in enumerate(docs):
        where = f"metric[{i}]"
        _check_keys(ctx, md, METRIC_KEYS, where)
        tag = md.get("kind")
        if not isinstance(tag, str):
            raise ctx.error(f"{where}.kind", f"every metric needs a `kind`; known: {known(list(metrics()))}")
        mk: MetricKind | None = metrics().get(tag)
        if mk is None and not scopes:
            try:
                get_metric(tag)
            except ConfigError as e:
                raise ctx.error(f"{where}.kind", str(e)) from None
        if mk is None and not any(sc.get(tag) is not None for sc in scopes.values()):
            # Some variant's kind has its own value metrics: list what applies to this experiment.
            usable = [m for m, k in metrics().items() if k.combine is not None or len(scopes) < len(scoped)]
            own = "".join(
                f"; value metrics of scenario kind {k!r}: {known(sc.names())}" for k, sc in scopes.items()
            )
            raise ctx.error(f"{where}.kind", f"unknown metric {tag!r}; known: {known(usable)}{own}")
        paper = md.get("paper")
        if paper is not None and (isinstance(paper, bool) or not isinstance(paper, int | float)):
            raise ctx.error(f"{where}.paper", f"expected a number, got {paper!r}")
        wh = sweep_values(where, "where", md.get("where", {}))
        den_wh = {**wh, **sweep_values(where, "denominator-where", md.get("denominator-where", {}))}
        if any(val not in sweep[k] for k, val in [*wh.items(), *den_wh.items()]):
            continue  # a point of the full grid that [quick.sweep] leaves out
        if "denominator-where" in md and (mk is None or mk.combine is None or mk.paired or mk.peak):
            raise ctx.error(
                f"{where}.denominator-where", "only a `ratio` or `difference` of two points takes it"
            )
        if mk is not None and mk.paired is not None:
            spec = _paired_spec(ctx, where, md, mk, wh, paper, variant_ref, by_name)
        elif mk is None or mk.combine is None:  # a value metric, global or of a kind's own scope
            if "variant" in md:
                var = variant_ref(where, "variant", md["variant"], wh)
            elif len(names) == 1:
                var = variant_ref(where, "variant", names[0], wh)
            else:
                raise ctx.error(where, f"metric {tag!r} needs `variant`; variants: {known(names)}")
            vm = value_metric_of(where, "kind", tag, var)
            spec = MetricSpec(
                str(md.get("name", f"{tag} [{var}]")),
                tag,
                str(md.get("unit", vm.unit)),
                variant=var,
                where=dict(wh),
                paper=_num(paper),
                note=str(md.get("note", "")),
            )
        else:
            for key in ("of", "numerator", "denominator"):
                if key not in md:
                    raise ctx.error(where, f"metric {tag!r} needs `{key}`")
            num = variant_ref(where, "numerator", md["numerator"], wh)
            den = variant_ref(where, "denominator", md["denominator"], den_wh)
            of = value_metric_of(where, "of", md["of"], num)
            if value_metric_of(where, "of", md["of"], den) != of:
                raise ctx.error(
                    f"{where}.of",
                    f"value {md['of']!r} means different things for variants {num!r} "
                    f"({by_name[num].kind}) and {den!r} ({by_name[den].kind}); compare variants of one kind",
                )
            unit = mk.unit or of.unit
            spec = MetricSpec(
                str(md.get("name", f"{tag} {md['of']} {num}/{den}")),
                tag,
                str(md.get("unit", unit)),
                of=of.name,
                numerator=num,
                denominator=den,
                where=dict(wh),
                denominator_where=den_wh if "denominator-where" in md else {},
                paper=_num(paper),
                note=str(md.get("note", "")),
            )
        if "target" in md:
            spec = replace(spec, target=_target(ctx, f"{where}.target", md["target"], spec.paper))
        if any(s.name == spec.name for s in out):
            raise ctx.error(f"{where}.name", f"duplicate metric name {spec.name!r}")
        out.append(spec)
    return out


def _paired_spec(
    ctx: _Ctx,
    where: str,
    md: dict[str, Any],
    mk: MetricKind,
    wh: dict[str, Any],
    paper: Any,
    variant_ref: Callable[[str, str, Any, dict[str, Any]], str],
    by_name: dict[str, Variant],
) -> MetricSpec:
    """A paired metric's spec: a table of both variants' points, its key and value columns."""
    for key in ("table", "on", "of", "numerator", "denominator"):
        if key not in md:
            raise ctx.error(where, f"metric {mk.name!r} needs `{key}`")
    num = variant_ref(where, "numerator", md["numerator"], wh)
    den = variant_ref(where, "denominator", md["denominator"], wh)
    tables = {t for v in (num, den) for t in get_kind(by_name[v].kind).tables}
    table = md["table"]
    if table not in tables:
        raise ctx.error(
            f"{where}.table", f"unknown table {table!r}; the variants' points have: {known(sorted(tables))}"
        )
    on = md["on"]
    if not (isinstance(on, list) and on and all(isinstance(c, str) for c in on)):
        raise ctx.error(f"{where}.on", "expected a non-empty list of key column names")
    if not isinstance(md["of"], str):
        raise ctx.error(f"{where}.of", "expected a column name")
    band = md.get("band", 0.05)
    if isinstance(band, bool) or not isinstance(band, int | float) or not 0.0 <= band < 1.0:
        raise ctx.error(f"{where}.band", f"expected a fraction in [0, 1), got {band!r}")
    return MetricSpec(
        str(md.get("name", f"{mk.name} {md['of']} {num}/{den}")),
        mk.name,
        str(md.get("unit", mk.unit)),
        of=md["of"],
        numerator=num,
        denominator=den,
        where=dict(wh),
        paper=_num(paper),
        note=str(md.get("note", "")),
        table=str(table),
        on=tuple(on),
        band=float(band),
    )


def _target(ctx: _Ctx, where: str, t: Any, paper: float | None) -> Target:
    """A metric's ``target`` table, checked: one form, finite non-negative tolerances, a paper
    number for ``rel`` / ``abs`` (non-zero for ``rel``), ``min <= max``."""
    if not isinstance(t, dict):
        raise ctx.error(
            where,
            "expected a table such as { rel = 0.2 }, { abs = 0.1 } or { min = 50, max = 80 }, "
            f"got {t!r}",
        )
    _check_keys(ctx, t, TARGET_KEYS, where)
    vals: dict[str, float] = {}
    for k, v in t.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ctx.error(f"{where}.{k}", f"expected a finite number, got {v!r}")
        vals[k] = float(v)
    forms = [k for k in ("rel", "abs") if k in vals] + (["min/max"] if {"min", "max"} & vals.keys() else [])
    if len(forms) != 1:
        raise ctx.error(
            where,
            "give exactly one of `rel` (within a share of the paper), `abs` (within an amount of it) "
            f"or `min` / `max` (a range); got {' and '.join(forms) or 'none'}",
        )
    for k in ("rel", "abs"):
        if k in vals:
            if vals[k] < 0:
                raise ctx.error(f"{where}.{k}", f"a tolerance is not negative, got {vals[k]:g}")
            if paper is None:
                raise ctx.error(
                    f"{where}.{k}", "a target relative to the paper needs the metric's `paper` number"
                )
    if "rel" in vals and paper == 0:
        raise ctx.error(
            f"{where}.rel", "the paper's number is 0, so no share of it is a tolerance; use `abs`"
        )
    if "min" in vals and "max" in vals and vals["min"] > vals["max"]:
        raise ctx.error(where, f"`min` {vals['min']:g} is above `max` {vals['max']:g}")
    return Target(rel=vals.get("rel"), abs=vals.get("abs"), low=vals.get("min"), high=vals.get("max"))


def _num(v: Any) -> float | None:
    return None if v is None else float(v) if math.isfinite(float(v)) else None
