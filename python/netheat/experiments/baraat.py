"""The ``baraat`` scenario kind: task-aware flow scheduling (Baraat, SIGCOMM 2014).

One point runs one policy (``fair-share``, ``sff``, ``stf``, ``fifo``,
``fifo-lm``, or ``spc``: FIFO-LM through the SPC protocol simulator) on a
three-tier datacenter with a generated task workload; everything heavy
happens in Rust (``netheat_repro::baraat::point``, through
``netheat._netheat.run_point``), which also declares the parameters and
summarises the task completion times. Tasks and paths depend
only on the seed and the workload parameters, so variants that change only
the policy see identical tasks (paired comparisons).
"""

from __future__ import annotations

from pathlib import Path

from netheat.experiments import points
from netheat.experiments.registry import (
    MetricKind,
    ScenarioKind,
    register_kind,
    register_metric,
)

VALUES = ("mean_tct_s", "median_tct_s", "p95_tct_s", "p99_tct_s", "max_tct_s", "p99_floor", "tasks", "flows")


def figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Task-time CDFs per policy and workload, and FIFO-LM's gain over fair share by task size."""
    from netheat.experiments.plots import baraat_figures

    return baraat_figures(run_dir)


run_baraat = points.runner("baraat")
"""Run one ``baraat`` point (in Rust, ``netheat._netheat.run_point``)."""

BARAAT = register_kind(
    ScenarioKind(
        name="baraat",
        run_point=run_baraat,
        params=points.params("baraat"),
        check=points.check("baraat"),
        values=VALUES,
        tables=("tasks",),
        description="task-aware flow scheduling policies and Baraat's FIFO-LM / SPC on a datacenter",
        figures=figures,
    )
)

for _m in (
    MetricKind("mean_tct_s", "s", "mean task completion time"),
    MetricKind("median_tct_s", "s", "median task completion time"),
    MetricKind("p95_tct_s", "s", "95th percentile task completion time"),
    MetricKind("p99_tct_s", "s", "99th percentile task completion time"),
    MetricKind("max_tct_s", "s", "largest task completion time"),
    MetricKind(
        "p99_floor",
        "x",
        "lowest p99 task completion time any scheduler can reach, relative to the variant's own p99 "
        "(one-stage and storage tasks: each task needs at least its bytes over its receiver's host link)",
    ),
    MetricKind("tasks", "tasks", "number of tasks"),
):
    if _m.name != "flows":
        register_metric(_m)
