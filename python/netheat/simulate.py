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
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat import __version__
from netheat._columns import column
from netheat._netheat import Topology, parse_duration, run_simulation
from netheat.errors import InputError
from netheat.metrics import quantile, quantiles
from netheat.output import OutputDir
from netheat.units import fmt_bps, fmt_bytes, fmt_seconds

FLOW_COLUMNS = "flow_id, src, dst, bytes, start_s, finish_s, fct_s, task_id, priority, path_id"
LINK_COLUMNS = (
    "link, layer, direction, src_node, dst_node, capacity_bps, window_start_s, window_end_s, utilization"
)


TASK_COLUMNS = "task_id, kind, table, start_s, finish_s, tct_s, flows, bytes, floor_s"


LINK_CHUNK_ROWS = 1 << 21
"""Rows of the links table built at a time when it is streamed to Parquet (about 100 MiB)."""


@dataclass
class SimulationResult:
    """Per-flow records, per-link utilization windows, tasks and run statistics.

    ``tasks`` has one row per application task of a workload file and per
    trace task (the flows that carry one ``task_id``; ``kind`` ``"trace"``,
    ``table`` -1); ``notes`` are facts about how the workload was placed.
    ``links`` (every directed link in every window) is built on first use;
    :meth:`write` streams it to Parquet a chunk of links at a time, so
    writing never holds the whole dense table.
    """

    flows: pa.Table
    stats: dict[str, Any]
    provenance: dict[str, str] = field(default_factory=dict)
    tasks: pa.Table | None = None
    notes: list[str] = field(default_factory=list)
    link_windows: _LinkWindows | None = None
    _links: pa.Table | None = field(default=None, repr=False)

    @property
    def links(self) -> pa.Table:
        """The dense links table (see :func:`_links_table`)."""
        if self._links is None:
            assert self.link_windows is not None
            self._links = self.link_windows.table()
        return self._links

    def _write_links(self, path: Path, meta: dict[bytes, bytes]) -> None:
        if self._links is not None or self.link_windows is None:
            pq.write_table(self.links.replace_schema_metadata(meta), path)
            return
        writer: pq.ParquetWriter | None = None
        try:
            for chunk in self.link_windows.chunks(LINK_CHUNK_ROWS):
                chunk = chunk.replace_schema_metadata(meta)
                if writer is None:
                    writer = pq.ParquetWriter(path, chunk.schema)
                writer.write_table(chunk)
        finally:
            if writer is not None:
                writer.close()

    def write(self, out: str | Path, force: bool = False) -> Path:
        """Write ``flows.parquet``, ``links.parquet``, ``tasks.parquet`` and ``stats.json`` into ``out``.

        ``out`` follows the output rule of :mod:`netheat.output`: created if
        missing, refused if it is not a directory or holds files netheat did
        not write (unless ``force``); the files are staged and moved into
        place together, replacing an earlier run's.
        """
        with OutputDir.open(out, "simulate", force=force) as od:
            self.write_into(od)
        return Path(out)

    def write_into(self, od: OutputDir) -> None:
        """Write the result files into an open output directory (one transaction)."""
        meta = {k.encode(): v.encode() for k, v in self.provenance.items()}
        with od.transaction("simulate") as tmp:
            pq.write_table(self.flows.replace_schema_metadata(meta), tmp / "flows.parquet")
            self._write_links(tmp / "links.parquet", meta)
            if self.tasks is not None and self.tasks.num_rows:
                pq.write_table(self.tasks.replace_schema_metadata(meta), tmp / "tasks.parquet")
            stats = {**self.stats, **self.provenance}
            (tmp / "stats.json").write_text(json.dumps(stats, indent=2, default=_json_num))


def _json_num(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def _tasks_table(cols: dict[str, Any]) -> pa.Table:
    return pa.table(
        {
            "task_id": column(cols["task_id"]),
            "kind": pa.array(cols["kind"], pa.string()),
            "table": column(cols["table"]),
            "start_s": column(cols["start_s"]),
            "finish_s": column(cols["finish_s"]),
            "tct_s": column(cols["tct_s"]),
            "flows": column(cols["flows"]),
            "bytes": column(cols["bytes"]),
            "floor_s": column(cols["floor_s"]),
        }
    )


def _flows_table(cols: dict[str, Any]) -> pa.Table:
    task = column(cols["task_id"])
    path = column(cols["path_id"])
    return pa.table(
        {
            "flow_id": column(cols["flow_id"]),
            "src": column(cols["src"]),
            "dst": column(cols["dst"]),
            "bytes": column(cols["bytes"]),
            "start_s": column(cols["start_s"]),
            "finish_s": column(cols["finish_s"]),
            "fct_s": column(cols["fct_s"]),
            "task_id": pa.array(task, mask=task < 0),
            "priority": column(cols["priority"]),
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


def links_table(topo: Topology, cols: dict[str, Any], window_s: float, n_windows: int) -> pa.Table:
    """The dense links table from the engine's sparse window columns (see :class:`_LinkWindows`)."""
    return _LinkWindows(topo, cols, window_s, n_windows).table()


class _LinkWindows:
    """The engine's sparse per-link window bytes, turned into the dense ``links`` table on demand.

    The table has every directed link in every window (idle links are 0,
    not missing), link-major. ``utilization`` is bytes carried over the
    capacity in force during the window (so a link cut to half its capacity
    and carrying half its nominal rate is 100% utilized); ``capacity_bps``
    is that capacity's window average.
    """

    def __init__(self, topo: Topology, cols: dict[str, Any], window_s: float, n_windows: int) -> None:
        self.topo = topo
        self.window_s = window_s
        self.n_windows = n_windows
        links = topo.links()
        self.links = links
        self.names = topo.nodes()["name"]
        self.n_links = len(links["id"])
        self.nominal = np.asarray(links["capacity_bps"], dtype=np.float64)
        link = column(cols["link"])
        order = np.argsort(link, kind="stable")
        self.link = link[order]
        self.window = column(cols["window"])[order]
        self.util = column(cols["utilization"])[order]
        # A scenario's precalculated traffic's part of the utilization.
        self.background = column(cols["background"])[order] if "background" in cols else None
        self.capacity = capacity_seconds(topo, n_windows, window_s) if n_windows else {}

    @property
    def rows(self) -> int:
        """Rows of the dense table."""
        return self.n_links * self.n_windows

    def table(self) -> pa.Table:
        """The whole dense table."""
        return self._slice(0, self.n_links)

    def chunks(self, max_rows: int) -> Iterator[pa.Table]:
        """The dense table in link-major slices of at most ``max_rows`` rows (at least one link)."""
        per = max(1, max_rows // max(self.n_windows, 1))
        for lo in range(0, self.n_links, per):
            yield self._slice(lo, min(lo + per, self.n_links))
        if self.n_links == 0:
            yield self._slice(0, 0)

    def _slice(self, lo: int, hi: int) -> pa.Table:
        n_windows, window_s = self.n_windows, self.window_s
        n = hi - lo
        util = np.zeros((n, n_windows))
        background = np.zeros((n, n_windows)) if self.background is not None else None
        nominal = self.nominal[lo:hi]
        cap = np.repeat(nominal[:, None], n_windows, axis=1)
        if n_windows and n:
            # The engine reports bytes over nominal capacity; rescale changed links.
            a, b = np.searchsorted(self.link, [lo, hi])
            util[self.link[a:b] - lo, self.window[a:b]] = self.util[a:b]
            if background is not None and self.background is not None:
                background[self.link[a:b] - lo, self.window[a:b]] = self.background[a:b]
            for link, bits in self.capacity.items():
                if lo <= link < hi:
                    i = link - lo
                    carried = util[i] * nominal[i] * window_s
                    with np.errstate(divide="ignore", invalid="ignore"):
                        util[i] = np.where(bits > 0, carried / bits, 0.0)
                    cap[i] = bits / window_s
        link_ids = np.repeat(np.arange(lo, hi, dtype=np.uint32), n_windows)
        win = np.tile(np.arange(n_windows, dtype=np.float64), n)
        links = self.links

        def per_link(values: list[Any], dictionary: list[str]) -> pa.Array:
            index = {v: i for i, v in enumerate(dictionary)}
            codes = np.repeat(np.asarray([index[v] for v in values[lo:hi]], dtype=np.int32), n_windows)
            return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(dictionary))

        def node(values: list[Any]) -> pa.Array:
            codes = np.repeat(np.asarray(values[lo:hi], dtype=np.int32), n_windows)
            return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(self.names))

        cols = {
            "link": link_ids,
            "layer": per_link(links["layer"], ["host-tor", "tor-agg", "agg-spine", "spine-border"]),
            "direction": per_link(links["direction"], ["up", "down"]),
            "src_node": node(links["src"]),
            "dst_node": node(links["dst"]),
            "capacity_bps": cap.reshape(-1),
            "window_start_s": win * window_s,
            "window_end_s": (win + 1) * window_s,
            "utilization": util.reshape(-1),
        }
        if background is not None:
            # Precalculated traffic's part of `utilization` (a scenario's; capacity events
            # do not combine with it, so nominal capacity is its base).
            cols["background"] = background.reshape(-1)
        return pa.table(cols)


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

    Give exactly one of ``flows``, a CSV or Parquet path (told by content; header
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
            source = read_flow_file(flows)
            if isinstance(source, dict):
                raw = run_simulation(topology, None, source, window_s, seed, bar, dense=dense)
            else:
                raw = run_simulation(topology, source, None, window_s, seed, bar, dense=dense)
        # The bar's last state: the run's own count (the engine reports progress only while it runs).
        bar(int(raw["stats"]["completed"]), int(raw["stats"]["flows"]))
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    tables = raw["tables"]
    stats = {k: (int(v) if float(v).is_integer() and abs(v) < 2**53 else v) for k, v in raw["stats"].items()}
    stats["wall_s"] = wall
    stats["window_s"] = window_s
    provenance = {"netheat_version": __version__, "seed": str(seed)}
    return SimulationResult(
        flows=_flows_table(tables["flows"]),
        link_windows=_LinkWindows(topology, tables["links"], window_s, int(stats["windows"])),
        stats=stats,
        provenance=provenance,
        tasks=_tasks_table(tables["tasks"]),
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
            line += fmt_seconds(quantile(ok, 0.99))
        lines.append(line)
    for n in res.notes:
        lines.append(f"note: {n}")
    if len(done):
        p50, p99 = quantiles(done, (0.5, 0.99))
        lines.append(
            f"FCT               mean {fmt_seconds(float(done.mean()))}, p50 {fmt_seconds(p50)}, "
            f"p99 {fmt_seconds(p99)}, max {fmt_seconds(float(done.max()))}"
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
    """``netheat simulate``: check the output, run, write outputs atomically, print the summary."""
    topo = Topology.load(args.topology)
    # The output directory is checked and locked before the run, not after it.
    with OutputDir.open(args.out, "simulate", force=args.force) as od:
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
        res.write_into(od)
    out = Path(args.out)
    print(summary_text(res))
    wrote = ["flows.parquet", "links.parquet"]
    if res.tasks is not None and res.tasks.num_rows:
        wrote.append("tasks.parquet")
    print("wrote " + ", ".join(str(out / w) for w in wrote))
    return 0


NULL_DEFAULTS = {"task_id": -1.0, "priority": 0.0, "rate_cap_bps": 0.0}
"""Values of missing entries in optional Parquet flow columns (no task, class 0, no cap)."""


def read_flow_file(path: str | Path) -> str | dict[str, Any]:
    """A flow file for :func:`simulate`: CSV (the path, read in Rust) or Parquet (its columns).

    The format is told by content, not by name: Parquet files start with
    ``PAR1``. Parquet is what ``netheat workload generate`` writes for names
    other than ``.csv``.
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise InputError(f"{p}: cannot read: {e.strerror or e}") from None
    if magic != b"PAR1":
        return os.fspath(p)
    try:
        table = pq.read_table(p)
    except Exception as e:  # pyarrow's errors for damaged files
        raise InputError(f"{p}: not a readable Parquet file: {_short(str(e))}") from None
    cols: dict[str, Any] = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            if col.null_count:
                if name not in NULL_DEFAULTS:
                    raise InputError(f"{p}: column `{name}` has {col.null_count} missing values")
                cols[name] = pc_fill(col, NULL_DEFAULTS[name])
            else:
                cols[name] = col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        elif (
            pa.types.is_string(col.type)
            or pa.types.is_large_string(col.type)
            or pa.types.is_dictionary(col.type)
        ):
            if name not in ("src", "dst"):
                raise InputError(f"{p}: column `{name}` must be numbers, found {col.type}")
            cols[name] = col.cast(pa.string()).to_pylist()
        else:
            raise InputError(f"{p}: column `{name}` has type {col.type}; expected numbers or host names")
    for name in ("src", "dst"):
        if name in cols and not isinstance(cols[name], list):
            cols[name] = [int(x) for x in cols[name]]
    return cols


def pc_fill(col: pa.ChunkedArray, value: float) -> np.ndarray[Any, Any]:
    """``col`` as float64 with nulls replaced by ``value``."""
    import pyarrow.compute as pc

    filled: np.ndarray[Any, Any] = pc.fill_null(col.cast(pa.float64()), value).to_numpy(zero_copy_only=False)
    return filled


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
