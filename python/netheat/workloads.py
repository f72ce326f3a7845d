"""Workload files: generate their flows, and the ``netheat workload`` command.

A workload file (TOML, see ``examples/workloads/``) lists open-loop
generators (``[[traffic]]``: Poisson at a target load, on-off, batches,
trace replay, the coflow trace on hosts; sizes from laws or dataset CDFs;
background from a traffic-matrix dataset; a CDF or coflow trace file of
your own by a path where a dataset name goes) and application structures
(``[[app]]``). Generation happens in Rust; application tasks only exist in
a simulation (their flows start when earlier ones finish), so
:func:`generate` returns the open-loop flows and ``netheat simulate
--workload`` runs everything.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from netheat import __version__
from netheat._columns import column
from netheat._netheat import Topology, generate_workload
from netheat.data import _arg, _roots
from netheat.output import add_force, atomic_write, output_file


def generate(
    topology: Topology, workload: str | Path, seed: int = 0, data_dir: str | Path | None = None
) -> tuple[pa.Table, int, list[str]]:
    """The open-loop flows of ``workload`` on ``topology`` (columns of the flow CSV).

    Returns ``(flows, application tasks, notes)``: the flows table
    (``flow_id, start_s, src, dst, bytes, task_id, priority``), how many
    application tasks the file defines (run them with ``netheat simulate
    --workload``) and notes on how the workload was placed.
    """
    raw = generate_workload(topology, os.fspath(workload), seed, _arg(data_dir), _roots())
    cols = raw["flows"]
    task = column(cols["task_id"])
    table = pa.table(
        {
            "start_s": column(cols["start_s"]),
            "src": column(cols["src"]),
            "dst": column(cols["dst"]),
            "bytes": column(cols["bytes"]),
            "flow_id": column(cols["flow_id"]),
            "task_id": pa.array(task, mask=task < 0),
            "priority": column(cols["priority"]),
        }
    )
    return table, int(raw["tasks"]), list(raw["notes"])


def write_flows(table: pa.Table, out: str | Path, force: bool = False) -> Path:
    """Write ``table`` as CSV (``.csv``) or Parquet (anything else), atomically.

    ``out`` follows the file output rule of :mod:`netheat.output`: a path
    that is not a regular file is refused; an existing file is replaced only
    if netheat wrote it (Parquet carries ``netheat_version``) or with
    ``force``.
    """
    target = output_file(out, force=force, flag="--output")
    meta = {b"netheat_version": __version__.encode()}

    def write(tmp: Path) -> None:
        if target.suffix.lower() == ".csv":
            pacsv.write_csv(table, tmp, pacsv.WriteOptions(quoting_style="none", quoting_header="none"))
        else:
            pq.write_table(table.replace_schema_metadata(meta), tmp)

    atomic_write(target, write)
    return Path(out)


def _cli_generate(args: argparse.Namespace) -> int:
    output_file(args.output, force=args.force, flag="--output")  # before generating, not after
    topo = Topology.load(args.topology)
    table, tasks, notes = generate(topo, args.workload, seed=args.seed, data_dir=args.data_dir)
    out = write_flows(table, args.output, force=args.force)
    for n in notes:
        print(f"note: {n}")
    if tasks:
        # A chunk store needs a scenario's [storage]: its note says so.
        scenario_only = any("(chunk-store)" in n for n in notes)
        hint = "run them with `netheat " + ("run`" if scenario_only else "simulate --workload`")
        print(f"note: {tasks} application tasks are not in {out.name}; {hint}")
    total = float(pc.sum(table.column("bytes")).as_py() or 0.0) if table.num_rows else 0.0
    print(f"wrote {table.num_rows:,} flows ({total:,.0f} bytes) to {out}")
    return 0


def add_cli(sub: Any) -> None:
    """Add the ``workload`` command to the top-level subparsers ``sub``."""
    p = sub.add_parser(
        "workload",
        help="generate flows from a workload file (generators, traces, datasets)",
        description=(
            "Workload files (TOML) describe open-loop traffic ([[traffic]]: poisson, on-off, batches, "
            "replay, coflow) and application structures ([[app]]); see examples/workloads/."
        ),
    )
    wsub = p.add_subparsers(dest="workload_command", required=True, metavar="ACTION")
    g = wsub.add_parser(
        "generate",
        help="write the open-loop flows of a workload file as a flow CSV or Parquet file",
        description=(
            "Generate a workload file's open-loop flows on a topology, seeded, and write them with the "
            "columns netheat simulate --flows reads (CSV for .csv, else Parquet)."
        ),
    )
    g.add_argument("--topology", required=True, help="datacenter TOML file")
    g.add_argument("--workload", required=True, help="workload TOML file")
    g.add_argument("-o", "--output", required=True, help="output file: flows.csv or flows.parquet")
    add_force(g, file=True)
    g.add_argument("--seed", type=int, default=0, help="seed of the generators (default: 0)")
    g.add_argument(
        "--data-dir", default=None, help="data directory (default: $NETHEAT_DATA, else ../shared/data)"
    )
    g.set_defaults(func=_cli_generate)
