"""Registries of scenario kinds and metrics.

A *scenario kind* is a string tag naming a Python function
``run_point(params, seed) -> PointResult`` plus the schema of the
parameters it accepts, the per-point values it reports and the tables it
returns. Policies (later issues) register their own kinds with
:func:`register_kind`; experiment files name them by tag.

A *metric* is a string tag naming how one number of ``summary.json`` is
computed from the per-point values of the variants: a value metric
(``mean_fct_s``) is the mean of that value over the selected points of one
variant; ``ratio`` and ``difference`` combine a value metric of two
variants, so paired comparisons read directly off the summary.

Metric namespaces: the value metrics registered with :func:`register_metric`
share one global namespace, which the paper kinds use. A kind may instead
bring its own :class:`MetricScope` (``ScenarioKind.metric_scope``, e.g. the
generic ``scenario`` kind): for variants of that kind, value-metric names
(``kind`` of a value ``[[metric]]``, ``of`` of a ratio) are looked up in the
scope only, never in the global registry, so a scope may reuse a name
(``hot_tor_share``) with its own definition without colliding, and may
name whole families by pattern (``stats.<name>``). Combining metrics
(``ratio``, ``difference``, ...) stay global and work across variants of
any kind, as long as ``of`` means the same value for both variants.

A kind with ``open_params`` accepts any parameter name besides its
declared ones (the ``scenario`` kind: any dotted scenario key); its
``check`` validates a point's parameters without running it, and the
config loader calls it for every variant at every sweep point before
anything runs.

Unknown tags are errors listing the known ones (:func:`known`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from netheat.errors import ConfigError
from netheat.metrics import quantiles

PARAM_TYPES = ("path", "float", "int", "bool", "str", "duration", "bytes", "bandwidth", "list")
"""Parameter types: ``duration``/``bytes``/``bandwidth`` accept unit strings and become floats;
``list`` is a TOML array passed on as written (the Rust kinds check its items)."""


@dataclass
class PointResult:
    """What one point of an experiment produced.

    ``tables`` maps an output kind (``"flows"``, ``"links"``) to an Arrow
    table; the runner concatenates each kind over all points into
    ``DIR/<kind>.parquet`` with provenance columns. ``values`` are the
    point's scalar results (``mean_fct_s``...) that metrics aggregate;
    ``notes`` end up in ``summary.json`` and are printed after the run.
    """

    tables: dict[str, pa.Table] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the user should know about the point (a fallback taken, tasks left pending...)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a scenario kind: type, default (``None``: required) and help."""

    name: str
    type: str
    default: Any = None
    help: str = ""
    required: bool = False


RunPoint = Callable[[dict[str, Any], int], PointResult]
"""``run_point(params, seed)``: params are validated and converted (paths absolute, units in SI)."""

CheckPoint = Callable[[dict[str, Any]], None]
"""``check(params)``: validate one point's converted params without running it; raise a
:class:`ConfigError` whose ``key`` is the offending parameter's name (and ``reason`` says why)."""


@dataclass(frozen=True)
class MetricKind:
    """A registered metric: unit, how it combines variants, and a description.

    ``combine`` is ``None`` for value metrics (mean of the point value named
    like the metric over the selected points of one variant), else a
    function of the two variant-level numbers (numerator, denominator).
    """

    name: str
    unit: str
    description: str
    combine: Callable[[float, float], float] | None = None
    peak: bool = False
    """Combine per sweep point and report the largest value (a curve's peak)."""
    paired: Callable[[np.ndarray, np.ndarray, float], float] | None = None
    """A paired metric: a function of the column ``of`` of the rows of ``table`` that the
    numerator's and the denominator's points both have (joined on the key columns ``on``, points
    of the same seed and sweep point), and of ``band``."""


@dataclass(frozen=True)
class MetricFamily:
    """Value metrics named by a pattern, e.g. ``stats.<name>`` or ``<task-kind>.tct_p99_s``.

    ``pattern`` is a regular expression a name must match in full;
    ``description`` (of one member) may use its groups (``{0}``, ``{1}``...).
    """

    label: str
    """How listings and errors show the family (``stats.<name>``)."""
    pattern: str
    unit: str
    description: str
    help: str = ""
    """What the family is, for listings."""

    def get(self, name: str) -> MetricKind | None:
        """The value metric ``name`` if it belongs to the family, else ``None``."""
        m = re.fullmatch(self.pattern, name)
        if m is None:
            return None
        return MetricKind(name, self.unit, self.description.format(*m.groups()))


@dataclass(frozen=True)
class MetricScope:
    """The value metrics of one scenario kind, in their own namespace (see the module docs)."""

    metrics: tuple[MetricKind, ...] = ()
    families: tuple[MetricFamily, ...] = ()

    def get(self, name: str) -> MetricKind | None:
        """The scope's value metric ``name`` (exact names first, then the families), or ``None``."""
        for m in self.metrics:
            if m.name == name:
                return m
        for f in self.families:
            found = f.get(name)
            if found is not None:
                return found
        return None

    def names(self) -> list[str]:
        """The exact names and the families' labels, for listings and errors."""
        return [m.name for m in self.metrics] + [f.label for f in self.families]


@dataclass(frozen=True)
class ScenarioKind:
    """A registered scenario kind: its point function, parameter schema, values and tables."""

    name: str
    run_point: RunPoint
    params: tuple[Param, ...]
    values: tuple[str, ...]
    tables: tuple[str, ...] = ()
    description: str = ""
    figures: Callable[[Path], list[tuple[Path, str]]] | None = None
    """Draw the kind's own plots from a finished run directory's tables into it: ``[(png, caption)]``."""
    open_params: bool = False
    """Accept any parameter name besides ``params``, passed to ``run_point`` as written (no
    conversion); ``check`` validates them."""
    check: CheckPoint | None = None
    """Validate a point without running it; called for every variant and sweep point at load time."""
    metric_scope: MetricScope | None = None
    """The kind's own value metrics (looked up instead of the global registry); ``None``: global."""

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or ``None``."""
        for p in self.params:
            if p.name == name:
                return p
        return None

    def param_names(self) -> list[str]:
        """Parameter names in declaration order."""
        return [p.name for p in self.params]

    @property
    def topology_overrides(self) -> bool:
        """Whether the kind reads a datacenter file from a ``topology`` path parameter, and so
        accepts ``topology.<key>`` parameters: overrides of that file's ``[topology]`` keys."""
        p = self.param("topology")
        return p is not None and p.type == "path" and not self.open_params

    def accepts(self, name: str) -> bool:
        """Whether ``name`` is a parameter of the kind: declared, any name (open parameters),
        or a ``topology.<key>`` override."""
        if self.open_params or self.param(name) is not None:
            return True
        prefix = TOPOLOGY_PREFIX
        return self.topology_overrides and name.startswith(prefix) and len(name) > len(prefix)

    def check_point(self, params: dict[str, Any]) -> None:
        """Validate one point's converted parameters without running it: the datacenter file
        with its overrides (when there are any), then the kind's own ``check``."""
        if self.topology_overrides and topology_overrides(params):
            load_topology(params)
        if self.check is not None:
            self.check(params)


TOPOLOGY_PREFIX = "topology."
"""Prefix of the parameters that override keys of a kind's datacenter file."""


def topology_overrides(params: dict[str, Any]) -> dict[str, Any]:
    """The ``topology.<key>`` parameters of a point, as ``{key: value}``."""
    n = len(TOPOLOGY_PREFIX)
    return {k[n:]: v for k, v in params.items() if k.startswith(TOPOLOGY_PREFIX)}


def load_topology(params: dict[str, Any]) -> Any:
    """The point's datacenter: the ``topology`` file with its ``topology.<key>`` overrides.

    An override the datacenter rejects raises :class:`ConfigError` whose ``key`` is the
    parameter (``topology.loop-size``) and whose ``reason`` says why.
    """
    from netheat._netheat import Topology

    overrides = topology_overrides(params)
    try:
        return Topology.load(params["topology"], overrides or None)
    except ConfigError as e:
        if e.file == "<override>":
            raise ConfigError(f"key `{e.key}`: {e.reason}", key=e.key, reason=e.reason) from None
        raise


_KINDS: dict[str, ScenarioKind] = {}
_METRICS: dict[str, MetricKind] = {}
_BUILTINS_LOADED = False


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        from netheat.experiments import flowsim  # registers "flow-sim"

        del flowsim
        from netheat.experiments import baraat  # registers "baraat"

        del baraat
        from netheat.experiments import scenario  # registers "scenario"

        del scenario


def register_kind(kind: ScenarioKind, replace: bool = False) -> ScenarioKind:
    """Register a scenario kind under ``kind.name`` (an existing tag is an error unless ``replace``)."""
    for p in kind.params:
        if p.type not in PARAM_TYPES:
            raise ValueError(f"parameter {p.name!r} of {kind.name!r}: unknown type {p.type!r}")
    if kind.name in _KINDS and not replace:
        raise ValueError(f"scenario kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def register_metric(metric: MetricKind, replace: bool = False) -> MetricKind:
    """Register a metric under ``metric.name`` (an existing tag is an error unless ``replace``)."""
    if metric.name in _METRICS and not replace:
        raise ValueError(f"metric {metric.name!r} is already registered")
    _METRICS[metric.name] = metric
    return metric


def known(names: Sequence[str]) -> str:
    """``"a, b, c"``: the valid names, sorted, for error messages."""
    return ", ".join(sorted(names)) or "(none)"


def kinds() -> dict[str, ScenarioKind]:
    """Every registered scenario kind by tag."""
    _load_builtins()
    return dict(_KINDS)


def metrics() -> dict[str, MetricKind]:
    """Every registered metric by tag."""
    _load_builtins()
    return dict(_METRICS)


def get_kind(name: str, where: str = "") -> ScenarioKind:
    """The scenario kind ``name``, or a :class:`ConfigError` listing the known ones."""
    all_kinds = kinds()
    if name not in all_kinds:
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}unknown scenario kind (policy) {name!r}; known: {known(list(all_kinds))}",
            key="kind",
        )
    return all_kinds[name]


def value_metric(kind: ScenarioKind, name: str) -> MetricKind | None:
    """The value metric ``name`` as variants of ``kind`` report it, or ``None``: from the kind's
    own scope if it has one, else the global metric of that name if the kind reports it."""
    if kind.metric_scope is not None:
        return kind.metric_scope.get(name)
    m = metrics().get(name)
    return m if m is not None and m.combine is None and name in kind.values else None


def get_metric(name: str, where: str = "") -> MetricKind:
    """The metric ``name``, or a :class:`ConfigError` listing the known ones."""
    all_metrics = metrics()
    if name not in all_metrics:
        prefix = f"{where}: " if where else ""
        raise ConfigError(f"{prefix}unknown metric {name!r}; known: {known(list(all_metrics))}", key="kind")
    return all_metrics[name]


def _ratio_quantile_at(q: float) -> Callable[[np.ndarray, np.ndarray, float], float]:
    """A paired metric: quantile ``q`` of ``a / b`` row by row (rows with ``b == 0`` left out), as
    :func:`netheat.metrics.quantiles` defines it; NaN without rows."""

    def paired(a: np.ndarray, b: np.ndarray, band: float) -> float:
        ok = b != 0
        return quantiles(a[ok] / b[ok], (q,))[0] if ok.any() else float("nan")

    return paired


for _m in (
    MetricKind("mean_fct_s", "s", "mean flow completion time of the completed flows"),
    MetricKind("p99_fct_s", "s", "99th percentile flow completion time of the completed flows"),
    MetricKind(
        "hot_tor_share",
        "fraction",
        "share of ToR-uplink link-windows (layer tor-agg, direction up) above the hot threshold",
    ),
    MetricKind("completed_share", "fraction", "share of flows that completed"),
    MetricKind("flows", "flows", "number of flows"),
    MetricKind(
        "ratio",
        "x",
        "value metric `of` of variant `numerator` divided by that of `denominator`",
        combine=lambda a, b: a / b if b != 0 else float("nan"),
    ),
    MetricKind(
        "difference",
        "",
        "value metric `of` of variant `numerator` minus that of `denominator`",
        combine=lambda a, b: a - b,
    ),
    MetricKind(
        "reduction",
        "fraction",
        "1 - (value metric `of` of `numerator`) / (that of `denominator`)",
        combine=lambda a, b: 1.0 - a / b if b != 0 else float("nan"),
    ),
    MetricKind(
        "reduction_pct",
        "%",
        "100 x (1 - value `of` of `numerator` / that of `denominator`): how much smaller `numerator` is",
        combine=lambda a, b: 100.0 * (1.0 - a / b) if b != 0 else float("nan"),
    ),
    MetricKind(
        "paired_mean_ratio",
        "x",
        "mean of column `of` of table `table` over the rows both variants have (joined on `on`, "
        "same seed and sweep point): `numerator`'s over `denominator`'s (Sinbad's block write "
        "speedup: uniform over sinbad)",
        paired=lambda a, b, band: (
            float(np.mean(a) / np.mean(b)) if len(a) and np.mean(b) != 0 else float("nan")
        ),
    ),
    MetricKind(
        "paired_faster_pct",
        "%",
        "percentage of the rows both variants have whose `of` is below (1 - `band`) times "
        "`denominator`'s (band default 0.05)",
        paired=lambda a, b, band: 100.0 * float(np.mean(a < (1.0 - band) * b)) if len(a) else float("nan"),
    ),
    MetricKind(
        "paired_same_pct",
        "%",
        "percentage of the rows both variants have whose `of` is within `band` of `denominator`'s",
        paired=lambda a, b, band: (
            100.0 * float(np.mean((a >= (1.0 - band) * b) & (a <= (1.0 + band) * b)))
            if len(a)
            else float("nan")
        ),
    ),
    MetricKind(
        "paired_slower_pct",
        "%",
        "percentage of the rows both variants have whose `of` is above (1 + `band`) times `denominator`'s",
        paired=lambda a, b, band: 100.0 * float(np.mean(a > (1.0 + band) * b)) if len(a) else float("nan"),
    ),
    *(
        MetricKind(
            f"paired_ratio_p{round(q * 100)}",
            "x",
            f"{what} over the rows both variants have of the per-row ratio of `of`, `numerator`'s over "
            "`denominator`'s (Sinbad's 'the top 15% of jobs improved by at least 1.4x': "
            "paired_ratio_p85 of uniform over sinbad)",
            paired=_ratio_quantile_at(q),
        )
        for q, what in ((0.5, "median"), (0.85, "85th percentile"), (0.95, "95th percentile"))
    ),
    MetricKind(
        "peak_ratio",
        "x",
        "largest over the selected sweep points of: value `of` of `numerator` / that of `denominator` "
        "(e.g. the peak speedup of a curve)",
        combine=lambda a, b: a / b if b != 0 else float("nan"),
        peak=True,
    ),
):
    register_metric(_m)
