"""Running the flow-level engine from Python and the ``simulate`` command.

The engine runs in Rust with the GIL released; this module turns its
columnar output into Arrow tables, writes Parquet atomically (a temporary
directory renamed into place, so an interrupted run leaves nothing half
written) and prints the one-screen summary.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat import __version__
from netheat._netheat import Topology, parse_duration, run_simulation
from netheat.errors import InputError
from netheat.units import fmt_bps, fmt_bytes, fmt_seconds

FLOW_COLUMNS = "flow_id, src, dst, bytes, start_s, finish_s, fct_s, task_id, priority, path_id"
LINK_COLUMNS = (
    "link, layer, direction, src_node, dst_node, capacity_bps, window_start_s, window_end_s, utilization"
)


def _array(spec: tuple[str, bytes]) -> np.ndarray[Any, Any]:
    dtype, raw = spec
    return np.frombuffer(raw, dtype=np.dtype(dtype))


TASK_COLUMNS = "task_id, kind, table, start_s, finish_s, tct_s, flows, bytes"


@dataclass
class SimulationResult:
    """Per-flow records, per-link utilization windows, application tasks and run statistics.

    ``tasks`` has one row per application task of a workload file (empty
    for flow traces); ``notes`` are facts about how the workload was placed.
    """

    flows: pa.Table
    links: pa.Table
    stats: dict[str, Any]
    provenance: dict[str, str] = field(default_factory=dict)
    tasks: pa.Table | None = None
    notes: list[str] = field(default_factory=list)

    def write(self, out: str | Path) -> Path:
        """Write ``flows.parquet``, ``links.parquet`` and ``stats.json`` atomically into ``out``."""
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            meta = {k.encode(): v.encode() for k, v in self.provenance.items()}
            pq.write_table(self.flows.replace_schema_metadata(meta), tmp / "flows.parquet")
            pq.write_table(self.links.replace_schema_metadata(meta), tmp / "links.parquet")
            if self.tasks is not None and self.tasks.num_rows:
                pq.write_table(self.tasks.replace_schema_metadata(meta), tmp / "tasks.parquet")
            (tmp / "stats.json").write_text(json.dumps({**self.stats, **self.provenance}, indent=2))
            if out.exists():
                old = out.with_name(f".{out.name}.old")
                shutil.rmtree(old, ignore_errors=True)
                out.rename(old)
                tmp.rename(out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


def _tasks_table(cols: dict[str, Any]) -> pa.Table:
    return pa.table(
        {
            "task_id": _array(cols["task_id"]),
            "kind": pa.array(cols["kind"], pa.string()),
            "table": _array(cols["table"]),
            "start_s": _array(cols["start_s"]),
            "finish_s": _array(cols["finish_s"]),
            "tct_s": _array(cols["tct_s"]),
            "flows": _array(cols["flows"]),
            "bytes": _array(cols["bytes"]),
        }
    )


def _flows_table(cols: dict[str, Any]) -> pa.Table:
    task = _array(cols["task_id"])
    path = _array(cols["path_id"])
    return pa.table(
        {
            "flow_id": _array(cols["flow_id"]),
            "src": _array(cols["src"]),
            "dst": _array(cols["dst"]),
            "bytes": _array(cols["bytes"]),
            "start_s": _array(cols["start_s"]),
            "finish_s": _array(cols["finish_s"]),
            "fct_s": _array(cols["fct_s"]),
            "task_id": pa.array(task, mask=task < 0),
            "priority": _array(cols["priority"]),
            "path_id": pa.array(path, mask=path < 0),
        }
    )


def capacity_seconds(topo: Topology, n_windows: int, window_s: float) -> dict[int, np.ndarray[Any, Any]]:
    """Integral of each changed link's capacity over every window (bit), from the capacity events.

    Only links with events appear; the others carry their nominal capacity
    throughout, so their integral is ``capacity * window``.
    """
    ev = topo.events()
    nominal = topo.links()["capacity_bps"]
    edges = np.arange(n_windows + 1) * window_s
    out: dict[int, np.ndarray[Any, Any]] = {}
    for link in sorted(set(ev["link"])):
        times = [0.0] + [t for t, li in zip(ev["time_s"], ev["link"], strict=True) if li == link]
        caps = [nominal[link]] + [
            c for c, li in zip(ev["capacity_bps"], ev["link"], strict=True) if li == link
        ]
        # Cumulative integral of the step function at each window edge.
        t = np.asarray(times)
        c = np.asarray(caps)
        idx = np.searchsorted(t, edges, side="right") - 1
        seg = np.concatenate([[0.0], np.cumsum(c[:-1] * np.diff(t))])
        cum = seg[idx] + c[idx] * (edges - t[idx])
        out[link] = np.diff(cum)
    return out


def _links_table(topo: Topology, cols: dict[str, Any], window_s: float, n_windows: int) -> pa.Table:
    """Dense table: every directed link in every window (idle links are 0, not missing).

    ``utilization`` is bytes carried over the capacity in force during the
    window (so a link cut to half its capacity and carrying half its nominal
    rate is 100% utilized); ``capacity_bps`` is that capacity's window average.
    """
    links = topo.links()
    names = topo.nodes()["name"]
    n_links = len(links["id"])
    nominal = np.asarray(links["capacity_bps"], dtype=np.float64)
    util = np.zeros((n_links, n_windows))
    cap = np.repeat(nominal[:, None], n_windows, axis=1)
    if n_windows:
        # The engine reports bytes over nominal capacity; rescale changed links.
        util[_array(cols["link"]), _array(cols["window"])] = _array(cols["utilization"])
        for link, bits in capacity_seconds(topo, n_windows, window_s).items():
            carried = util[link] * nominal[link] * window_s
            with np.errstate(divide="ignore", invalid="ignore"):
                util[link] = np.where(bits > 0, carried / bits, 0.0)
            cap[link] = bits / window_s
    link_ids = np.repeat(np.arange(n_links, dtype=np.uint32), n_windows)
    win = np.tile(np.arange(n_windows, dtype=np.float64), n_links)

    def per_link(values: list[Any], dictionary: list[str] | None = None) -> pa.Array:
        if dictionary is None:
            return pa.array(np.repeat(np.asarray(values), n_windows))
        index = {v: i for i, v in enumerate(dictionary)}
        codes = np.repeat(np.asarray([index[v] for v in values], dtype=np.int32), n_windows)
        return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(dictionary))

    return pa.table(
        {
            "link": link_ids,
            "layer": per_link(links["layer"], ["host-tor", "tor-agg", "agg-spine"]),
            "direction": per_link(links["direction"], ["up", "down"]),
            "src_node": pa.DictionaryArray.from_arrays(
                pa.array(np.repeat(np.asarray(links["src"], dtype=np.int32), n_windows)), pa.array(names)
            ),
            "dst_node": pa.DictionaryArray.from_arrays(
                pa.array(np.repeat(np.asarray(links["dst"], dtype=np.int32), n_windows)), pa.array(names)
            ),
            "capacity_bps": cap.reshape(-1),
            "window_start_s": win * window_s,
            "window_end_s": (win + 1) * window_s,
            "utilization": util.reshape(-1),
        }
    )


class _Progress:
    """A one-line progress bar on stderr, shown only after a few seconds."""

    def __init__(self, enabled: bool, delay_s: float = 3.0) -> None:
        self.enabled = enabled
        self.delay_s = delay_s
        self.t0 = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.t0
        if not self.enabled or elapsed < self.delay_s or total == 0:
            return
        frac = done / total
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {done}/{total} flows  {elapsed:.0f}s elapsed, ETA {eta:.0f}s ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def simulate(
    topology: Topology,
    flows: str | Path | dict[str, Any] | None = None,
    window: str | float = "1s",
    seed: int = 0,
    progress: bool = False,
    *,
    workload: str | Path | None = None,
    data_dir: str | Path | None = None,
    dense: str = "auto",
) -> SimulationResult:
    """Simulate flows on a datacenter with exact max-min sharing.

    Give exactly one of ``flows``, a CSV path (header
    ``start_s,src,dst,bytes`` plus optional
    ``flow_id,task_id,priority,weight,rate_cap_bps``) or a dict of columns
    with the same names, and ``workload``, a workload TOML file (generators
    and application structures, generated with ``seed``; datasets come from
    ``data_dir``, else ``$NETHEAT_DATA``, else ``../shared/data``).
    ``window`` is the link-utilization window (a duration string such as
    ``"30s"`` or seconds). Flows are routed by a per-flow ECMP hash (seeded
    by ``seed``) over the shortest-path set. ``dense`` is ``"auto"`` (switch to
    dense mode, one rate per bottleneck group of flow classes, where one
    event moves many rates), ``"off"`` or ``"always"``; the allocation is the
    same either way (see ``docs/architecture.md``).
    """
    from netheat.data import _arg, _roots

    window_s = parse_duration(window) if isinstance(window, str) else float(window)
    if (flows is None) == (workload is None):
        raise InputError("give exactly one of flows (a CSV or columns) and workload (a TOML file)")
    bar = _Progress(progress)
    t0 = time.perf_counter()
    try:
        if workload is not None:
            raw = run_simulation(
                topology,
                None,
                None,
                window_s,
                seed,
                bar,
                os.fspath(workload),
                _arg(data_dir),
                _roots(),
                dense=dense,
            )
        elif isinstance(flows, dict):
            raw = run_simulation(topology, None, flows, window_s, seed, bar, dense=dense)
        else:
            assert flows is not None
            raw = run_simulation(topology, os.fspath(flows), None, window_s, seed, bar, dense=dense)
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    stats = dict(raw["stats"])
    stats["wall_s"] = wall
    stats["window_s"] = window_s
    provenance = {"netheat_version": __version__, "seed": str(seed)}
    return SimulationResult(
        flows=_flows_table(raw["flows"]),
        links=_links_table(topology, raw["links"], window_s, int(stats["windows"])),
        stats=stats,
        provenance=provenance,
        tasks=_tasks_table(raw["tasks"]),
        notes=list(raw["notes"]),
    )


def summary_text(res: SimulationResult) -> str:
    """The one-screen summary printed by ``netheat simulate``."""
    s = res.stats
    wall = max(s["wall_s"], 1e-9)
    fct = res.flows.column("fct_s").to_numpy()
    done = fct[~np.isnan(fct)]
    lines = [
        f"flows             {s['flows']} ({s['completed']} completed, {s['stranded']} stranded)",
        f"bytes             {fmt_bytes(float(np.sum(res.flows.column('bytes').to_numpy())))}",
        f"simulated         {fmt_seconds(s['end_s'])} in {s['wall_s']:.2f} s wall "
        f"({s['events'] / wall:,.0f} events/s, {s['flows'] / wall:,.0f} flows/s)",
    ]
    if res.tasks is not None and res.tasks.num_rows:
        tct = res.tasks.column("tct_s").to_numpy()
        ok = tct[~np.isnan(tct)]
        line = f"tasks             {res.tasks.num_rows} ({len(ok)} completed)"
        if len(ok):
            line += f", completion time mean {fmt_seconds(float(ok.mean()))}, p99 "
            line += fmt_seconds(float(np.percentile(ok, 99)))
        lines.append(line)
    for n in res.notes:
        lines.append(f"note: {n}")
    if len(done):
        q = np.percentile(done, [50, 99])
        lines.append(
            f"FCT               mean {fmt_seconds(float(done.mean()))}, p50 {fmt_seconds(float(q[0]))}, "
            f"p99 {fmt_seconds(float(q[1]))}, max {fmt_seconds(float(done.max()))}"
        )
    links = res.links
    if links.num_rows:
        util = links.column("utilization").to_numpy()
        layer = links.column("layer").to_numpy(zero_copy_only=False)
        cap = links.column("capacity_bps").to_numpy()
        lines.append(f"link windows      {s['windows']} x {fmt_seconds(s['window_s'])}")
        for name in ("host-tor", "tor-agg", "agg-spine"):
            m = layer == name
            if m.any():
                hot = float(np.mean(util[m] > 0.75)) * 100
                lines.append(
                    f"  {name:<10}      max {util[m].max():.1%}, mean {util[m].mean():.1%}, "
                    f"{hot:.2f}% of link-windows above 75% (capacity {fmt_bps(float(cap[m].max()))})"
                )
    return "\n".join(lines)


def simulate_cli(args: argparse.Namespace) -> int:
    """``netheat simulate``: run, write outputs atomically, print the summary."""
    topo = Topology.load(args.topology)
    res = simulate(
        topo,
        args.flows,
        window=args.window,
        seed=args.seed,
        progress=sys.stderr.isatty(),
        workload=args.workload,
        data_dir=args.data_dir,
        dense=args.dense,
    )
    out = res.write(args.out)
    print(summary_text(res))
    wrote = ["flows.parquet", "links.parquet"]
    if res.tasks is not None and res.tasks.num_rows:
        wrote.append("tasks.parquet")
    print("wrote " + ", ".join(str(out / w) for w in wrote))
    return 0
