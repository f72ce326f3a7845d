"""The report of one scenario run: what ran, and the plots users expect for it.

Flow completion times (CDF, log scale), task times per application kind,
the ToR uplink heat map (utilization per ToR and window, the hotspot view),
block write times under a storage policy, where tasks went and the
migrations over time under a placement policy, and queue peaks on the
packet engine. Every plot says what it shows and how it was computed.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from netheat.metrics import quantile
from netheat.report import Figure, Section, Table, write_report
from netheat.units import fmt_seconds

if TYPE_CHECKING:
    from netheat.scenario import ScenarioResult


def _cdf(ax, values: np.ndarray, label: str) -> None:  # type: ignore[no-untyped-def]
    v = np.sort(values[~np.isnan(values)])
    if len(v) == 0:
        return
    y = np.arange(1, len(v) + 1) / len(v)
    ax.step(v, y, where="post", label=f"{label} (n={len(v)})")


def _cdf_png(
    path: Path, series: list[tuple[str, np.ndarray]], xlabel: str, ylabel: str, log: bool = True
) -> None:
    """One CDF plot of several samples (NaNs, i.e. unfinished, left out) saved as ``path``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, values in series:
        _cdf(ax, values, label)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _tail_rows(name: str, v: np.ndarray) -> list[str]:
    ok = v[~np.isnan(v)]
    if len(ok) == 0:
        return [name, "0", "-", "-", "-", f"{len(v)}"]
    return [
        name,
        f"{len(ok)}",
        fmt_seconds(float(np.mean(ok))),
        fmt_seconds(quantile(ok, 0.5)),
        fmt_seconds(quantile(ok, 0.99)),
        f"{len(v) - len(ok)}",
    ]


def write_scenario_report(res: ScenarioResult, path: Path) -> Path:
    """Write ``report.html`` for ``res`` at ``path`` (self-contained)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sections: list[Section] = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        stats = res.stats
        sections.append(
            Section(
                "What ran",
                f"Engine: {res.engine}. Scenario: {res.provenance.get('scenario')}; overrides: "
                f"{res.provenance.get('overrides')}. Notes: " + ("; ".join(res.notes) or "none") + ".",
                tables=[Table(["statistic", "value"], [[k, f"{v}"] for k, v in sorted(stats.items())])],
            )
        )
        if "flows" in res.tables:
            fct = res.flows["fct_s"].to_numpy(zero_copy_only=False)
            rows = [_tail_rows("all flows", fct)]
            _cdf_png(tmp / "fct.png", [("flows", fct)], "flow completion time (s)", "fraction of flows")
            sections.append(
                Section(
                    "Flow completion times",
                    "CDF of flow completion times (finish minus start) of finished flows; unfinished flows "
                    "are counted in the table, not plotted. Percentiles: linear interpolation "
                    "(netheat.metrics).",
                    tables=[Table(["flows", "finished", "mean", "p50", "p99", "unfinished"], rows)],
                    figures=[Figure(tmp / "fct.png", "Flow completion time CDF")],
                )
            )
        else:
            sections.append(
                Section(
                    "Flow completion times",
                    "Not recorded: the run left the flows table out of scenario.record "
                    f"({stats.get('flows', 0)} flows, {stats.get('completed', 0)} finished).",
                )
            )
        tasks = res.tasks
        if tasks.num_rows:
            kinds = tasks["kind"].to_pylist()
            tct = tasks["tct_s"].to_numpy(zero_copy_only=False)
            series = [(k, tct[np.asarray([x == k for x in kinds])]) for k in sorted(set(kinds))]
            trows = [_tail_rows(k, v) for k, v in series]
            _cdf_png(tmp / "tct.png", series, "task completion time (s)", "fraction of tasks")
            sections.append(
                Section(
                    "Task completion times",
                    "Per task kind: time from the task's start to its last flow or step.",
                    tables=[Table(["kind", "finished", "mean", "p50", "p99", "unfinished"], trows)],
                    figures=[Figure(tmp / "tct.png", "Task completion time CDF per kind")],
                )
            )
        heat = _tor_heat(res)
        if heat is not None:
            grid, window_s = heat
            fig, ax = plt.subplots(figsize=(8, max(2.5, min(8, 0.25 * grid.shape[0]))))
            im = ax.imshow(grid, aspect="auto", vmin=0, vmax=1, cmap="inferno", interpolation="nearest")
            ax.set_xlabel(f"window ({fmt_seconds(window_s)} each)")
            ax.set_ylabel("ToR")
            fig.colorbar(im, ax=ax, label="uplink utilization")
            fig.tight_layout()
            fig.savefig(tmp / "heat.png", dpi=110)
            plt.close(fig)
            hot = hot_share(grid)
            sections.append(
                Section(
                    "ToR uplink heat map",
                    "Outbound utilization of each ToR's uplinks (bytes carried over capacity, all "
                    f"uplinks of the ToR together) in each window; {hot:.1%} of ToR-windows are at or "
                    f"above {HOT:.0%} (hot, as in the hotspot paper's analysis).",
                    figures=[Figure(tmp / "heat.png", "ToR uplink utilization per window")],
                )
            )
        if "blocks" in res.tables:
            b = res.tables["blocks"]
            w = b["write_s"].to_numpy(zero_copy_only=False)
            _cdf_png(
                tmp / "blocks.png", [("blocks", w)], "block write time (s)", "fraction of blocks", log=False
            )
            sections.append(
                Section(
                    "Block writes",
                    "Time from the start of a block's replication pipeline to the end of its last hop.",
                    tables=[
                        Table(
                            ["blocks", "finished", "mean", "p50", "p99", "unfinished"], [_tail_rows("all", w)]
                        )
                    ],
                    figures=[Figure(tmp / "blocks.png", "Block write time CDF")],
                )
            )
        if "placements" in res.tables:
            sections.append(_placement_section(res, tmp))
        if "queues" in res.tables:
            q = res.tables["queues"].sort_by([("max_queue_bytes", "descending")]).slice(0, 10)
            sections.append(
                Section(
                    "Deepest queues",
                    "The ten output ports with the highest peak occupancy (packet engine).",
                    tables=[
                        Table(
                            ["link", "peak bytes", "mean bytes", "drops", "ECN marks"],
                            [
                                [
                                    str(r["link"]),
                                    str(r["max_queue_bytes"]),
                                    f"{r['mean_queue_bytes']:.0f}",
                                    str(r["drops"]),
                                    str(r["marks"]),
                                ]
                                for r in q.to_pylist()
                            ],
                        )
                    ],
                )
            )
        return write_report(
            path, "netheat scenario run", sections, meta=f"netheat {res.provenance.get('netheat_version')}"
        )


def _placement_section(res: ScenarioResult, tmp: Path) -> Section:
    """Where compute tasks went (the ToR utilization each was placed under) and the migrations
    over time, from the ``placements`` and ``migrations`` tables."""
    import matplotlib.pyplot as plt

    p = res.tables["placements"]
    util = p["tor_util"].to_numpy(zero_copy_only=False)
    moved_in = np.asarray(p["migrated"].to_pylist(), dtype=bool)
    m = res.tables.get("migrations")
    times = np.sort(m["time_s"].to_numpy(zero_copy_only=False)) if m is not None else np.zeros(0)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    _cdf(left, util[~moved_in], "placed at start")
    if moved_in.any():
        _cdf(left, util[moved_in], "placed by a migration")
    left.set_xlabel("outbound utilization of the chosen host's ToR when chosen")
    left.set_ylabel("fraction of placements")
    left.grid(alpha=0.3)
    left.legend()
    end = float(res.stats.get("end_s", times[-1] if len(times) else 0.0))
    right.step(
        np.concatenate([[0.0], times, [max(end, times[-1] if len(times) else 0.0)]]),
        np.concatenate([np.arange(len(times) + 1), [len(times)]]),
        where="post",
    )
    right.set_xlabel("simulated time (s)")
    right.set_ylabel("migrations so far")
    right.set_title(f"{len(times)} migrations")
    right.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(tmp / "placement.png", dpi=110)
    plt.close(fig)
    rows = [
        ["task placements", f"{len(util)}"],
        ["of them by a migration", f"{int(moved_in.sum())}"],
        [
            f"placed under a ToR at or above {HOT:.0%}",
            f"{float(np.mean(util >= HOT)) if len(util) else 0:.1%}",
        ],
        ["migrations", f"{len(times)}"],
    ]
    if m is not None and m.num_rows:
        tors = m["tor"].to_pylist()
        busiest = sorted(set(tors), key=lambda t: (-tors.count(t), t))[:5]
        rows.append(
            ["ToRs migrated off most (rack: moves)", ", ".join(f"{t}: {tors.count(t)}" for t in busiest)]
        )
    return Section(
        "Task placement and migrations",
        "Left: the outbound utilization of the ToR of each host chosen for a compute task, when it was "
        "chosen (`placements.tor_util`), for first placements and for placements by a migration. "
        "Right: migrations off hot ToRs over time (`migrations.time_s`).",
        tables=[Table(["placement", "value"], rows)],
        figures=[Figure(tmp / "placement.png", "ToR utilization at placement; migrations over time")],
    )


HOT = 0.7
"""Uplink utilization at or above which a ToR-window is hot (the hotspot paper's analysis)."""


def hot_share(grid: np.ndarray) -> float:
    """Fraction of the ToR-windows of a :func:`_tor_heat` grid that are hot (0 for an empty grid)."""
    return float(np.mean(grid >= HOT)) if grid.size else 0.0


def tor_balance(res: ScenarioResult, until_s: float) -> dict[str, float]:
    """How evenly the ToR links are loaded (the Sinbad paper's imbalance, SIGCOMM'13 sections 4.3
    and 7.3), over the windows that begin before ``until_s`` (a run's last arrival):

    - ``tor_up_cv_median`` / ``tor_down_cv_median``: the median over windows of the coefficient
      of variation (population standard deviation over mean; windows with no load left out)
      across ToRs of their uplink (downlink) utilization;
    - with precalculated traffic, the same of its part alone (``background.tor_up_cv_median``,
      ``background.tor_down_cv_median``) and ``background.tor_p95_hot_pct``: the percentage of
      windows in which the 95th percentile over every ToR uplink and downlink of its utilization
      is above 0.75 (section 4.3: 25% of the time in Facebook's cluster).
    """
    out: dict[str, float] = {}
    grids: dict[str, np.ndarray] = {}
    for prefix, column in (("", "utilization"), ("background.", "background")):
        for direction in ("up", "down"):
            heat = _tor_heat(res, direction, column)
            if heat is None:
                continue
            grid, window_s = heat
            n = min(grid.shape[1], math.ceil(until_s / window_s))
            grid = grid[:, :n]
            grids[f"{prefix}{direction}"] = grid
            mean = grid.mean(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                cv = grid.std(axis=0)[mean > 0] / mean[mean > 0]
            out[f"{prefix}tor_{direction}_cv_median"] = quantile(cv, 0.5) if cv.size else math.nan
    if "background.up" in grids and "background.down" in grids:
        both = np.vstack([grids["background.up"], grids["background.down"]])
        if not both.any():
            for k in [k for k in out if k.startswith("background.")]:
                del out[k]
        elif both.shape[1]:
            p95 = np.asarray([quantile(both[:, w], 0.95) for w in range(both.shape[1])])
            out["background.tor_p95_hot_pct"] = 100.0 * float(np.mean(p95 > 0.75))
    return out


def hot_tor_share(res: ScenarioResult) -> float:
    """Fraction of ToR-windows whose outbound uplink utilization (all uplinks of the ToR together,
    as in the report's heat map) is at or above :data:`HOT`; NaN without ToR uplink windows."""
    heat = _tor_heat(res)
    return math.nan if heat is None or heat[0].size == 0 else hot_share(heat[0])


def _tor_heat(
    res: ScenarioResult, direction: str = "up", column: str = "utilization"
) -> tuple[np.ndarray, float] | None:
    """ToR x window utilization of the ToRs' uplinks (``direction="up"``, outbound) or downlinks
    (``"down"``, inbound), all of a ToR's together, from ``column`` (``utilization``, or
    ``background``: the precalculated traffic's part); None without windows (or without a links
    table: left out of ``scenario.record``, or without the column)."""
    if "links" not in res.tables:
        return None
    links = res.links
    if links.num_rows == 0 or column not in links.column_names:
        return None
    import pyarrow.compute as pc

    sel = pc.and_(pc.equal(links["layer"], "tor-agg"), pc.equal(links["direction"], direction))
    part = links.filter(sel)
    if part.num_rows == 0:
        return None
    tor_end = "src_node" if direction == "up" else "dst_node"
    # Node ids (dictionary indices: one per node name), without a Python object per row.
    src = pc.dictionary_encode(part[tor_end]).combine_chunks().indices.to_numpy(zero_copy_only=False)
    start = part["window_start_s"].to_numpy()
    cap = part["capacity_bps"].to_numpy()
    util = part[column].to_numpy()
    window_s = float(links["window_end_s"][0].as_py() - links["window_start_s"][0].as_py())
    tors, rows = np.unique(src, return_inverse=True)
    win = np.rint(start / window_s).astype(int)
    n_w = int(win.max()) + 1
    carried = np.zeros((len(tors), n_w))
    total = np.zeros((len(tors), n_w))
    np.add.at(carried, (rows, win), util * cap)
    np.add.at(total, (rows, win), cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        grid = np.where(total > 0, carried / total, 0.0)
    return grid, window_s
