"""The ``baraat`` scenario kind: task-aware flow scheduling (Baraat, SIGCOMM 2014).

One point runs one policy (``fair-share``, ``sff``, ``stf``, ``fifo``,
``fifo-lm``, or ``spc``: FIFO-LM through the SPC protocol simulator) on a
three-tier datacenter with a generated task workload; everything heavy
happens in Rust (``netheat._netheat.baraat_point``). Tasks and paths depend
only on the seed and the workload parameters, so variants that change only
the policy see identical tasks (paired comparisons).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from netheat import _netheat
from netheat.data import _roots
from netheat.experiments.registry import (
    MetricKind,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
    register_metric,
)
from netheat.metrics import mean, quantile, quantiles

VALUES = ("mean_tct_s", "median_tct_s", "p95_tct_s", "p99_tct_s", "max_tct_s", "p99_floor", "tasks", "flows")


def run_baraat(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``baraat`` point and summarise its task completion times."""
    policy = params["policy"]
    spc = policy == "spc"
    cols = _netheat.baraat_point(
        workload=params["workload"],
        policy="fifo-lm" if spc else policy,
        load=params["load"],
        tasks=params["batch-tasks"] if params["batch"] else params["tasks"],
        seed=seed,
        app=params["app"],
        fanout=params["fanout"],
        mids=params["mids"],
        pods=params["pods"],
        racks_per_pod=params["racks-per-pod"],
        hosts_per_rack=params["hosts-per-rack"],
        host_bps=params["host-link"],
        oversubscription=params["oversubscription"],
        aggregators=params["aggregators"],
        workers=params["workers"],
        batch=params["batch"],
        heavy_percentile=params["heavy-percentile"],
        lbs=params["load-balancers"],
        spc=spc,
        rtt_s=params["rtt"],
        flow_cv=params["flow-cv"],
        compute_s=params["compute"],
        placement=params["placement"],
        selectivity=params["selectivity"],
        data_dir=None if params["data-dir"] is None else str(params["data-dir"]),
        extra_roots=_roots(),
    )
    tct = np.asarray(cols["tct_s"], dtype=float)
    done = tct[~np.isnan(tct)]

    # Every byte of a one-stage or storage task crosses its receiver's host
    # link, so no scheduler finishes a task before bytes * 8 / capacity: the
    # 99th percentile of those times over this point's p99 is the lowest
    # p99 ratio any policy can reach against this one (two-stage tasks
    # spread their bytes over mid-levels: no such bound here).
    floor = float("nan")
    if params["app"] != "two-stage" and len(done):
        least = np.asarray(cols["bytes"], dtype=float)[~np.isnan(tct)] * 8.0 / params["host-link"]
        floor = quantile(least, 0.99) / quantile(done, 0.99)
    median, p95, p99 = quantiles(done, (0.5, 0.95, 0.99))
    values = {
        "mean_tct_s": mean(done),
        "median_tct_s": median,
        "p95_tct_s": p95,
        "p99_tct_s": p99,
        "max_tct_s": float(done.max()) if len(done) else float("nan"),
        "p99_floor": floor,
        "tasks": float(len(tct)),
        "flows": float(cols["flows"]),
    }
    table = pa.table({k: cols[k] for k in ("task_id", "bytes", "start_s", "finish_s", "tct_s")})
    return PointResult(tables={"tasks": table}, values=values)


def figures(run_dir: Path) -> list[tuple[Path, str]]:
    """Task-time CDFs per policy and workload, and FIFO-LM's gain over fair share by task size."""
    from netheat.experiments.plots import baraat_figures

    return baraat_figures(run_dir)


BARAAT = register_kind(
    ScenarioKind(
        name="baraat",
        run_point=run_baraat,
        params=(
            Param("policy", "str", "fifo-lm", "fair-share, sff, stf, fifo, fifo-lm or spc (SPC protocol)"),
            Param(
                "workload",
                "str",
                "bing",
                "task sizes: bing, data_analytics (Facebook 2010 trace, from the data directory), "
                "uniform, or pareto (ours)",
            ),
            Param("app", "str", "one-stage", "one-stage, two-stage (partition-aggregate) or storage"),
            Param(
                "placement",
                "str",
                "rack",
                "rack (the paper's, §5.2: workers are the other hosts of the aggregator's rack) "
                "or pool (ours: workers from a pool spread over the datacenter)",
            ),
            Param("fanout", "int", 39, "flows per task, or workers per mid-level aggregator (two-stage)"),
            Param("selectivity", "float", 0.03, "share of its inputs' bytes a two-stage mid-level forwards"),
            Param(
                "data-dir",
                "path",
                help="data directory for data_analytics (default: $NETHEAT_DATA, else ../shared/data)",
            ),
            Param("mids", "int", 0, "mid-level aggregators of a two-stage task (0: fanout)"),
            Param(
                "flow-cv",
                "float",
                0.0,
                "skew of the flows within a task: coefficient of variation of log-normal factors "
                "of mean 1 (0: none; 0.389 is the Facebook 2010 shuffles' median)",
            ),
            Param("load", "float", 0.8, "load of the aggregators' host links"),
            Param("tasks", "int", 10000, "tasks per point"),
            Param("aggregators", "int", 30, "hosts receiving tasks, spread evenly (30: one per pod; 0: all)"),
            Param("workers", "int", 0, "hosts sending task flows, pool placement only (0: all)"),
            Param(
                "compute",
                "duration",
                0.0,
                "mean compute time (exponential) before a worker answers, and before a two-stage "
                "mid-level aggregator forwards once it has its inputs",
            ),
            Param("batch", "bool", False, "all tasks arrive at once (data-parallel batch)"),
            Param("batch-tasks", "int", 400, "tasks of a batch (with `batch`)"),
            Param("pods", "int", 30, "pods"),
            Param("racks-per-pod", "int", 30, "racks per pod"),
            Param("hosts-per-rack", "int", 40, "hosts per rack"),
            Param("host-link", "bandwidth", 1e9, "host link capacity"),
            Param("oversubscription", "float", 2.0, "ToR oversubscription"),
            Param(
                "heavy-percentile",
                "float",
                0.8,
                "FIFO-LM heavy threshold: task-size percentile (0-1), nearest rank (one of the task sizes; "
                "a policy parameter, not a reported metric)",
            ),
            Param("load-balancers", "int", 1, "task-id counters (stride = their number)"),
            Param("rtt", "duration", 100e-6, "SPC round length"),
        ),
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
    MetricKind(
        "reduction",
        "fraction",
        "1 - (value metric `of` of `numerator`) / (that of `denominator`)",
        combine=lambda a, b: 1.0 - a / b if b != 0 else float("nan"),
    ),
):
    if _m.name != "flows":
        register_metric(_m)
