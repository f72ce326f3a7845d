"""Experiments: declarative runs, sweeps, local and Ray backends, reproduction and reports.

- :mod:`netheat.experiments.config`: the experiment TOML schema and validation;
- :mod:`netheat.experiments.registry`: scenario kinds and metrics by tag;
- :mod:`netheat.experiments.runner`: points, hashing, backends, resumable runs;
- :mod:`netheat.experiments.summary`, :mod:`~netheat.experiments.compare`,
  :mod:`~netheat.experiments.reproduce`: ``summary.json``, ``netheat compare``,
  ``netheat reproduce``;
- :mod:`netheat.experiments.cli`: the commands.
"""

from __future__ import annotations

from netheat.experiments.config import Experiment, load_experiment, parse_experiment
from netheat.experiments.registry import (
    MetricFamily,
    MetricKind,
    MetricScope,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)
from netheat.experiments.runner import RunResult, run_experiment

__all__ = [
    "Experiment",
    "MetricFamily",
    "MetricKind",
    "MetricScope",
    "Param",
    "PointResult",
    "RunResult",
    "ScenarioKind",
    "load_experiment",
    "parse_experiment",
    "register_kind",
    "register_metric",
    "run_experiment",
]
