"""The generic ``scenario`` kind: an experiment is a scenario file plus overrides of its keys.

A point runs ``Scenario.from_toml(scenario).with_overrides(...)`` (see
:mod:`netheat.scenario` and ``docs/scenarios.md``) with every other
parameter of the point as a dotted-key override (``"routing.policy" =
"adaptive"``, ``"topology.loop-size" = 4``) and the point's seed as
``scenario.seed``, so paired variants see the same generated workload.
Overrides are validated in Rust: the config loader calls
:func:`check_scenario` (the scenario read, built and checked, not run) for
every variant at every sweep point before anything runs, and a bad key is
an error naming the experiment file and the key.

Values per point (the kind's own metric scope, see
:mod:`netheat.experiments.registry`; quantiles by :mod:`netheat.metrics`),
over the flows, tasks and blocks that start after ``scenario.warmup``:

- ``fct_mean_s``, ``fct_p50_s``, ``fct_p99_s`` over finished flows and
  ``unfinished_flows``, when the run records its flows (``scenario.record``;
  without them these values are absent, so a metric over them is null);
- ``unfinished_tasks``: tasks still running when the run stopped;
- ``tct_p99_floor``: the p99 of the finished tasks' ``floor_s`` (the least time any schedule
  needs: a task's bytes into a host over that host's NIC capacity) over their p99 task time,
  the lowest p99 ratio any scheduler can reach against this run;
- ``search.found`` and ``search.runs`` for a point with ``search.*`` parameters: the largest
  value of the scenario key ``search.key`` at which ``search.value`` stays at or below
  ``search.at-most`` with every measured task finished (a capacity: the largest request rate
  at a latency target), found by doubling from ``search.start`` and geometric bisection to
  ``search.precision``; the point's other values and tables are those of the run there;
- ``tct_max_s``: the completion time of the task that finished last, NaN
  when a task did not finish (or there is none): a single job's completion
  time (the ``shuffle-job`` app of the Subways experiments);
- ``<kind>.network_p95_s``, ``<kind>.io_p95_s`` (and ``_mean_s``, ``_p50_s``, ``_p99_s``): the
  network and device seconds on the critical path of the finished tasks of a kind (the tasks
  table's ``network_s`` and ``io_s``; a chunk read's network latency and its disk time), on the
  flow engine;
- ``tct_bytes_weighted_mean_s``: the finished tasks' mean time weighted by their bytes (the
  tasks table's ``bytes``, precalculated flows included): Sinbad's job communication times
  weighted by their sizes (section 7.2);
- ``tct_min_s`` (Baraat Table 3's "Min") and ``queued_mean_s`` (the mean wait in a client's
  queue, the tasks table's ``queued_s``) over finished tasks;
- ``tct_mean_s``, ``tct_p50_s``, ``tct_p95_s``, ``tct_p99_s`` over finished tasks, and the
  same per task kind as ``<kind>.tct_p99_s`` (``partition-aggregate``,
  ``file-write``, ``trace``, a cluster's ``query-small``...; a kind that did not run has no value, so its
  metric is null), and per task size as ``<kind>.<bytes>B.tct_p99_s`` for a
  kind whose tasks come in at most ``MAX_SIZE_CLASSES`` whole-byte sizes
  (``incast.5000B.tct_p99_s``: the 99th percentile completion time of the
  5,000-byte incast messages);
- ``block_write_mean_s``, ``block_write_p50_s``, ``block_write_p95_s`` over finished blocks, when
  the run has a ``blocks`` table (a storage policy);
- ``write_mean_s``, ``write_p50_s``, ``write_p95_s`` and per task kind ``<kind>.write_mean_s``...:
  the time the finished tasks that wrote blocks spent in distributed writes, from their first
  block request (the ``blocks`` table's ``requested_s``) to their end (Sinbad's Figure 6);
- ``hot_tor_share``: the fraction of ToR-windows whose outbound uplink
  utilization (all uplinks of the ToR together) is at or above 0.7, as the
  scenario report's heat map computes it
  (:func:`netheat.scenario_report.hot_tor_share`), when the run records its
  links;
- ``tor_up_cv_median``, ``tor_down_cv_median`` (and, with precalculated traffic,
  ``background.tor_up_cv_median``, ``background.tor_down_cv_median`` of its load alone and
  ``background.tor_p95_hot_pct``), over the windows before the last task arrival, when the run
  records its links (:func:`netheat.scenario_report.tor_balance`: the Sinbad paper's imbalance);
- ``stats.<name>``: every numeric entry of the run's ``stats``
  (``stats.rebinds``, ``stats.completed``, ``stats.end_s``...).

Tables: every table of the run but ``links`` (``flows``, ``tasks`` and,
when the run has them, ``queues``, ``blocks``, ``placements``,
``migrations``). The ``links`` table is not kept: the runner holds every point's
tables in memory until its pool finishes, and a links table has a row per
link and window; ``hot_tor_share`` is computed from it inside the point.
Run one point with ``netheat run`` for its links.

A point's identity (the runner's content hash) covers the scenario file's
content, the overrides and the seed, not the files the scenario refers to
(a datacenter file, a flow CSV): after editing those, run into a fresh
output directory, or the points already there are reused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from netheat.data import resolve_data_dir
from netheat.errors import ConfigError, NetheatError
from netheat.experiments.registry import (
    MetricFamily,
    MetricKind,
    MetricScope,
    Param,
    PointResult,
    ScenarioKind,
    register_kind,
)
from netheat.metrics import mean, quantiles, weighted_mean
from netheat.scenario import TABLES as SCENARIO_TABLES
from netheat.scenario import Scenario, ScenarioResult
from netheat.scenario_report import hot_tor_share, tor_balance

SEED_KEY = "scenario.seed"
"""The override that carries the point's seed (an experiment sets seeds in ``[experiment]``)."""

TABLES = tuple(t for t in SCENARIO_TABLES if t != "links")
"""Tables of a point that go to the run (when the scenario produces them): all but ``links``."""


SEARCH_PARAMS = (
    Param(
        "search.key",
        "str",
        None,
        "a numeric dotted scenario key to search (e.g. workload.app.0.rate): the point reports the "
        "largest value at which `search.value` stays at or below `search.at-most`, and the values of "
        "the run there",
    ),
    Param("search.start", "float", None, "the search's first value; it must meet the condition"),
    Param("search.value", "str", None, "the point value the condition is on (e.g. memcache.tct_mean_s)"),
    Param("search.at-most", "float", None, "the condition: `search.value` at or below this"),
    Param(
        "search.precision",
        "float",
        None,
        "relative precision (default 0.02): the value doubles from `search.start` while the condition holds, "
        "then halves the interval geometrically until its ends are within this of each other",
    ),
)
"""The capacity search of a point (all of them, or none but ``search.precision``)."""


def _overrides(params: dict[str, Any]) -> dict[str, Any]:
    skip = {"scenario", *(p.name for p in SEARCH_PARAMS)}
    return {k: v for k, v in params.items() if k not in skip}


def _search(params: dict[str, Any]) -> tuple[str, float, str, float, float] | None:
    """The point's search, checked, or ``None`` when it has none."""
    given: dict[str, Any] = {
        p.name: params.get(p.name) for p in SEARCH_PARAMS if p.name != "search.precision"
    }
    if all(v is None for v in given.values()):
        return None
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise ConfigError(
            f"{missing[0]}: a search needs search.key, search.start, search.value and search.at-most",
            key=missing[0],
            reason="a search needs search.key, search.start, search.value and search.at-most",
        )
    start, limit = float(given["search.start"]), float(given["search.at-most"])
    precision = float(params.get("search.precision") or 0.02)
    if not (start > 0 and np.isfinite(start)):
        raise ConfigError(
            f"search.start: must be positive, got {start}", key="search.start", reason="must be positive"
        )
    if not (0 < precision < 1):
        raise ConfigError(
            f"search.precision: must be in (0, 1), got {precision}",
            key="search.precision",
            reason="must be in (0, 1)",
        )
    value = str(given["search.value"])
    if SCOPE.get(value) is None:
        raise ConfigError(
            f"search.value: {value!r} is not a value of the scenario kind; known: {', '.join(SCOPE.names())}",
            key="search.value",
            reason=f"{value!r} is not a value of the scenario kind",
        )
    return str(given["search.key"]), start, value, limit, precision


def _scenario(params: dict[str, Any], seed: int | None) -> Scenario:
    """The point's scenario: the file plus the overrides, one at a time so a bad value names its key."""
    scn = Scenario.from_toml(params["scenario"])
    over = _overrides(params)
    if SEED_KEY in over:
        raise ConfigError(
            f"{SEED_KEY}: set by the experiment (the point's seed); use [experiment] seeds",
            key=SEED_KEY,
            reason="set by the experiment (the point's seed), not a parameter; use `seeds` in [experiment]",
        )
    for k, v in over.items():
        try:
            scn = scn.with_overrides({k: v})
        except NetheatError as e:
            raise ConfigError(f"{k}: {e}", key=k, reason=str(e)) from None
    return scn if seed is None else scn.with_overrides({SEED_KEY: seed})


OVER_BUDGET = "over the memory budget"
"""The fixed words of every memory-budget refusal (netheat_core's ``BudgetError::Over``)."""


def check_scenario(params: dict[str, Any]) -> None:
    """Read, build and check the point's scenario without running it.

    A bad override raises :class:`ConfigError` keyed by the override's
    dotted key; any other problem (the scenario file itself, a missing
    dataset) is keyed ``scenario``. Without a data directory at all, a
    point whose workload reads a dataset is left to fail when it runs (with
    the same message, naming the directory and how to point netheat at a
    copy), as the paper kinds' points do, so the experiment's other points
    still run. A point over this machine's memory budget is left to fail
    when it runs too (with the budget's message): the budget belongs to the
    machine, not to the file (``baraat-two-stage.toml``'s paper-scale points
    need a larger one than a 24 GB machine's default).
    """
    scn = _scenario(params, None)
    over = _overrides(params)
    search = _search(params)
    if search is not None:
        try:
            scn = scn.with_overrides({search[0]: search[1]})
        except NetheatError as e:
            raise ConfigError(f"search.key: {e}", key="search.key", reason=str(e)) from None
    try:
        scn.check()
    except ConfigError as e:
        if "data directory" in str(e) and not resolve_data_dir().exists:
            return
        if OVER_BUDGET in str(e):
            return
        if e.file == "<override>" and e.key in over:
            raise ConfigError(str(e), key=e.key, reason=e.reason) from None
        raise ConfigError(str(e), key="scenario", reason=str(e)) from None
    except NetheatError as e:
        raise ConfigError(str(e), key="scenario", reason=str(e)) from None


MAX_SIZE_CLASSES = 16
"""Task kinds with at most this many distinct (whole-byte) task sizes get per-size values
(``incast.5000B.tct_p99_s``); kinds with more (trace tasks) would flood the summary."""


def _times(column: Any) -> np.ndarray:
    """An Arrow column of times as floats (NaN: unfinished)."""
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=float)


def _tails(prefix: str, times: np.ndarray, qs: tuple[float, ...] = (0.99,)) -> dict[str, float]:
    """Mean, median and the ``qs`` quantiles of the finished ``times`` (NaN when none finished)."""
    done = times[~np.isnan(times)]
    p50, *tail = quantiles(done, (0.5, *qs))
    out = {f"{prefix}_mean_s": mean(done), f"{prefix}_p50_s": p50}
    out.update({f"{prefix}_p{round(q * 100)}_s": v for q, v in zip(qs, tail, strict=True)})
    return out


def point_values(res: ScenarioResult) -> dict[str, float]:
    """The values of one run (see the module docs)."""
    values: dict[str, float] = {}
    if "flows" in res.tables:
        fct = _times(res.measured("flows").column("fct_s"))
        values.update(_tails("fct", fct))
        values["unfinished_flows"] = float(np.count_nonzero(np.isnan(fct)))
    tasks = res.measured("tasks")
    tct = _times(tasks.column("tct_s"))
    values["unfinished_tasks"] = float(np.count_nonzero(np.isnan(tct)))
    values["tct_max_s"] = float(np.max(tct)) if tct.size and not np.isnan(tct).any() else float("nan")
    values.update(_tails("tct", tct, (0.95, 0.99)))
    done = ~np.isnan(tct)
    values["tct_min_s"] = float(np.min(tct[done])) if done.any() else float("nan")
    sizes = _times(tasks.column("bytes"))
    values["tct_bytes_weighted_mean_s"] = weighted_mean(tct[done], sizes[done])
    if "queued_s" in tasks.column_names:
        values["queued_mean_s"] = mean(_times(tasks.column("queued_s"))[done])
    floor = _times(tasks.column("floor_s"))[~np.isnan(tct)]
    floor_p99 = quantiles(floor, (0.99,))[0] if floor.size and not np.isnan(floor).any() else float("nan")
    values["tct_p99_floor"] = floor_p99 / values["tct_p99_s"]
    kinds = np.asarray(tasks.column("kind").to_pylist(), dtype=object)
    network = _times(tasks.column("network_s"))
    io = _times(tasks.column("io_s"))
    for kind in sorted(set(kinds.tolist())):
        of_kind = kinds == kind
        values.update(_tails(f"{kind}.tct", tct[of_kind], (0.95, 0.99)))
        # The critical path's network and device parts, where the engine
        # keeps step times (NaN elsewhere: no value).
        for part, col in (("network", network), ("io", io)):
            done = col[of_kind & ~np.isnan(tct)]
            if done.size and not np.isnan(done).any():
                values.update(_tails(f"{kind}.{part}", done, (0.95, 0.99)))
        distinct = np.unique(sizes[of_kind])
        if distinct.size <= MAX_SIZE_CLASSES and np.all(distinct == np.round(distinct)):
            for b in distinct:
                values.update(_tails(f"{kind}.{int(b)}B.tct", tct[of_kind & (sizes == b)]))
    if "blocks" in res.tables:
        values.update(_tails("block_write", _times(res.measured("blocks").column("write_s")), (0.95,)))
        timed = write_times(
            pl.DataFrame(tasks.select(["task_id", "finish_s"])),
            pl.DataFrame(res.table("blocks")),
            ["task_id"],
        )
        write = timed["write_s"].to_numpy().astype(float)
        wrote = ~np.isnan(timed["requested_s"].to_numpy().astype(float))
        if wrote.any():
            values.update(_tails("write", write[wrote], (0.95,)))
            for kind in sorted(set(kinds[wrote].tolist())):
                values.update(_tails(f"{kind}.write", write[wrote & (kinds == kind)], (0.95,)))
    if "links" in res.tables:
        values["hot_tor_share"] = hot_tor_share(res)
        starts = _times(res.tasks.column("start_s"))
        if starts.size:
            values.update(tor_balance(res, float(np.max(starts))))
    for k, v in res.stats.items():
        if isinstance(v, int | float) and not isinstance(v, bool):
            values[f"stats.{k}"] = float(v)
    return values


def write_times(tasks: pl.DataFrame, blocks: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """``tasks`` (with ``finish_s`` and the key columns ``on``), in their order, with per task its
    first block's request (``requested_s``), the bytes its blocks carry (``written``, replicas not
    counted) and its time in distributed writes, from that request to its end (``write_s``);
    null for a task without blocks."""
    first = blocks.group_by(on).agg(pl.col("requested_s").min(), pl.col("bytes").sum().alias("written"))
    return tasks.join(first, on=on, how="left", maintain_order="left").with_columns(
        (pl.col("finish_s") - pl.col("requested_s")).alias("write_s")
    )


def run_scenario_point(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``scenario`` point: the scenario with the point's overrides and seed, or, with
    ``search.*`` parameters, the capacity search over ``search.key``."""
    search = _search(params)
    if search is not None:
        return _run_search(params, seed, search)
    res = _scenario(params, seed).run()
    return _point(res, point_values(res))


def _point(res: ScenarioResult, values: dict[str, float]) -> PointResult:
    tables = {k: res.tables[k] for k in TABLES if k in res.tables}
    # The run's "datacenter: <file>" note repeats the scenario file's reference on every point.
    notes = [n for n in res.notes if not n.startswith("datacenter: ")]
    return PointResult(tables=tables, values=values, notes=notes)


def _run_search(
    params: dict[str, Any], seed: int, search: tuple[str, float, str, float, float]
) -> PointResult:
    """The largest value of the key meeting the condition (the value at or below the limit, and
    every measured task finished: a run that cannot keep up fails it): doubling from the start
    while it holds, then geometric bisection to the precision. The point's values and tables are the
    run's at that value, plus ``search.found`` and ``search.runs``."""
    key, start, value, limit, precision = search
    base = _scenario(params, seed)
    runs = 0

    def run(x: float) -> tuple[bool, ScenarioResult, dict[str, float]]:
        nonlocal runs
        runs += 1
        res = base.with_overrides({key: x}).run()
        v = point_values(res)
        got = v.get(value, float("nan"))
        return bool(got <= limit and v["unfinished_tasks"] == 0), res, v

    ok, res, v = run(start)
    if not ok:
        raise ConfigError(
            f"search.start: {value} = {v.get(value)} is above {limit} already at {key} = {start}",
            key="search.start",
            reason=f"{value} is above search.at-most already at the start",
        )
    lo, best = start, (res, v)
    hi = 2.0 * start
    while True:
        ok, res, v = run(hi)
        if not ok:
            break
        lo, best, hi = hi, (res, v), 2.0 * hi
    while hi / lo > 1.0 + precision:
        mid = math.sqrt(lo * hi)
        ok, res, v = run(mid)
        if ok:
            lo, best = mid, (res, v)
        else:
            hi = mid
    res, v = best
    return _point(res, {**v, "search.found": lo, "search.runs": float(runs)})


def _figures(run_dir: Path) -> list[tuple[Path, str]]:
    """A capacity search's results against the swept key (:func:`plots.search_figures`),
    Baraat's figures for runs of its aggregation workload (:func:`plots.baraat_figures`),
    block write times per variant for runs with a storage policy (:func:`plots.block_write_figures`),
    Sinbad's job bins for runs with jobs that write (:func:`plots.job_bin_figures`),
    chunk read latencies for runs of a ``chunk-store`` (:func:`plots.chunk_read_figures`),
    a cluster's placement measures (:func:`plots.placement_figures`) and the p99 task time per
    task size where tasks come in a few sizes (:func:`plots.task_size_figures`)."""
    from netheat.experiments.plots import (
        baraat_figures,
        block_write_figures,
        chunk_read_figures,
        job_bin_figures,
        placement_figures,
        search_figures,
        task_size_figures,
    )

    return (
        search_figures(run_dir)
        + baraat_figures(run_dir)
        + block_write_figures(run_dir)
        + job_bin_figures(run_dir)
        + chunk_read_figures(run_dir)
        + placement_figures(run_dir)
        + task_size_figures(run_dir)
    )


SCOPE = MetricScope(
    metrics=(
        MetricKind(
            "fct_mean_s", "s", "mean flow completion time of the finished flows (runs that record flows)"
        ),
        MetricKind(
            "fct_p50_s", "s", "median flow completion time of the finished flows (runs that record flows)"
        ),
        MetricKind(
            "fct_p99_s",
            "s",
            "99th percentile flow completion time of the finished flows (runs that record flows)",
        ),
        MetricKind(
            "unfinished_flows", "flows", "flows still running when the run stopped (runs that record flows)"
        ),
        MetricKind("unfinished_tasks", "tasks", "tasks still running when the run stopped"),
        MetricKind(
            "tct_p99_floor",
            "x",
            "lowest p99 task completion time any schedule can reach, relative to the run's own p99: the "
            "p99 of the finished tasks' floor_s (bytes into a host over its NIC capacity) over their p99",
        ),
        MetricKind(
            "tct_max_s",
            "s",
            "completion time of the task that finished last, NaN when a task did not finish "
            "(a single job's completion time)",
        ),
        MetricKind(
            "tct_min_s",
            "s",
            "shortest task completion time of the finished tasks (every kind; Baraat Table 3)",
        ),
        MetricKind(
            "queued_mean_s",
            "s",
            "mean wait of the finished tasks in their client's queue (an aggregation app's client-queue)",
        ),
        MetricKind("tct_mean_s", "s", "mean task completion time of the finished tasks (every kind)"),
        MetricKind(
            "tct_bytes_weighted_mean_s",
            "s",
            "mean task completion time of the finished tasks weighted by their bytes (the tasks "
            "table's bytes, precalculated flows included; Sinbad's job communication times "
            "weighted by their sizes, section 7.2)",
        ),
        MetricKind("tct_p50_s", "s", "median task completion time of the finished tasks (every kind)"),
        MetricKind(
            "tct_p95_s", "s", "95th percentile task completion time of the finished tasks (every kind)"
        ),
        MetricKind(
            "tct_p99_s", "s", "99th percentile task completion time of the finished tasks (every kind)"
        ),
        MetricKind("block_write_mean_s", "s", "mean block write time (storage policies)"),
        *(
            MetricKind(
                f"write_{q}_s",
                "s",
                f"{what} time the finished tasks that wrote blocks spent in distributed writes: from "
                "their first block request to their end (storage policies; Sinbad's Figure 6)",
            )
            for q, what in (("mean", "mean"), ("p50", "median"), ("p95", "95th percentile"))
        ),
        MetricKind("block_write_p50_s", "s", "median block write time (storage policies)"),
        MetricKind("block_write_p95_s", "s", "95th percentile block write time (storage policies)"),
        MetricKind(
            "search.found",
            "",
            "the largest value of search.key at which search.value stayed at or below search.at-most "
            "(a point with search.* parameters)",
        ),
        MetricKind("search.runs", "runs", "scenario runs the point's search took"),
        MetricKind(
            "hot_tor_share",
            "fraction",
            "share of ToR-windows whose uplink utilization (all uplinks of the ToR together) is >= 0.7 "
            "(runs that record links)",
        ),
        *(
            MetricKind(
                f"{pre}tor_{d}_cv_median",
                "Cv",
                f"median over the windows before the last task arrival of the coefficient of variation "
                f"across ToRs of their {d}link utilization{what} (runs that record links)",
            )
            for pre, what in (("", ""), ("background.", " by precalculated traffic alone"))
            for d in ("up", "down")
        ),
        MetricKind(
            "background.tor_p95_hot_pct",
            "%",
            "percentage of the windows before the last task arrival in which the 95th percentile over "
            "every ToR uplink and downlink of the precalculated traffic's utilization is above 0.75 "
            "(Sinbad section 4.3's statistic)",
        ),
    ),
    families=(
        MetricFamily(
            "<task-kind>.tct_{mean,p50,p95,p99}_s",
            r"([a-z][a-z0-9-]*)\.tct_(mean|p50|p95|p99)_s",
            "s",
            "task completion time ({1}) of the finished tasks of kind {0}",
            "mean, median, 95th and 99th percentile task completion time of the finished tasks of one kind "
            "(partition-aggregate, file-write, trace, query-small...); null when no task of that kind ran",
        ),
        MetricFamily(
            "<task-kind>.write_{mean,p50,p95}_s",
            r"([a-z][a-z0-9-]*)\.write_(mean|p50|p95)_s",
            "s",
            "time in distributed writes ({1}) of the finished tasks of kind {0} that wrote blocks",
            "mean, median and 95th percentile time the finished tasks of one kind spent in distributed "
            "writes, from their first block request to their end (mr-job.write_mean_s: Sinbad's Figure 6); "
            "null when no task of that kind wrote a block",
        ),
        MetricFamily(
            "<task-kind>.{network,io}_{mean,p50,p95,p99}_s",
            r"([a-z][a-z0-9-]*)\.(network|io)_(mean|p50|p95|p99)_s",
            "s",
            "{1} seconds on the critical path ({2}) of the finished tasks of kind {0}",
            "mean, median, 95th and 99th percentile of the network (flow steps) or device (io steps) "
            "seconds on the critical path of the finished tasks of one kind (chunk-read.network_p95_s: "
            "the p95 network latency of chunk reads); flow engine only, null elsewhere",
        ),
        MetricFamily(
            "<task-kind>.<bytes>B.tct_{mean,p50,p99}_s",
            r"([a-z][a-z0-9-]*)\.([0-9]+)B\.tct_(mean|p50|p99)_s",
            "s",
            "task completion time ({2}) of the finished {1}-byte tasks of kind {0}",
            "mean, median and 99th percentile task completion time of the finished tasks of one kind and "
            f"size, for kinds whose tasks come in at most {MAX_SIZE_CLASSES} sizes (incast.5000B.tct_p99_s); "
            "null when no such task ran",
        ),
        MetricFamily(
            "stats.<name>",
            r"stats\.([A-Za-z0-9_]+)",
            "",
            "entry {0} of the run's stats",
            "every numeric entry of the run's stats (stats.rebinds, stats.completed, stats.end_s...)",
        ),
    ),
)

SCENARIO = register_kind(
    ScenarioKind(
        name="scenario",
        run_point=run_scenario_point,
        params=(
            Param(
                "scenario",
                "path",
                help="scenario TOML file (relative to the experiment file); every other key is a dotted "
                'scenario key overriding it, written quoted ("routing.policy" = "adaptive")',
                required=True,
            ),
            *SEARCH_PARAMS,
        ),
        values=("fct_mean_s", "fct_p50_s", "fct_p99_s", "unfinished_flows", "tct_p99_s", "hot_tor_share"),
        tables=TABLES,
        description=(
            "a scenario file (datacenter + workload + policies) with variants and sweeps over its "
            "dotted keys; the point's seed is scenario.seed. Tables: all of the run's except links "
            "(not kept: the runner holds every point's tables in memory; hot_tor_share is computed "
            "from them inside the point)"
        ),
        open_params=True,
        check=check_scenario,
        figures=_figures,
        metric_scope=SCOPE,
    )
)
