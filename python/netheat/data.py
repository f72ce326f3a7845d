"""Public datasets: the data directory, the registry, checksums and loaders.

netheat never bundles third-party data. It reads it from a data directory:
the ``--data-dir`` flag (or the ``data_dir`` argument), else the
``NETHEAT_DATA`` environment variable, else ``../shared/data`` next to the
project root. The registry (in Rust, ``netheat-data``) records each file's
upstream repository, commit, path and SHA-256; loaders verify the checksum
(once per file per process) before parsing, and every failure is a
:class:`netheat.errors.DataError` naming the file, where netheat looked and
how to point it at a copy.

This module also provides the ``netheat data list`` and ``netheat data
check`` commands (:func:`add_cli`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from netheat import _netheat
from netheat._columns import column
from netheat.errors import DataError
from netheat.units import fmt_bytes

ENV_VAR = "NETHEAT_DATA"
"""The environment variable naming the data directory."""

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""Project root of a source checkout (``python/netheat/data.py`` -> root)."""

PathArg = str | os.PathLike[str] | None
"""A data directory argument: a path, or ``None`` to use env/default."""

JOB_DATASETS = ("cloudsimpy-jobs", "alibaba-gpu-v2023-pods")
"""Datasets :func:`load_jobs` accepts (scheduler input rows)."""


def _roots() -> list[str]:
    return [str(_PACKAGE_ROOT)]


def _arg(data_dir: PathArg) -> str | None:
    return None if data_dir is None else os.fspath(data_dir)


@dataclass(frozen=True)
class DataDirInfo:
    """A resolved data directory and how it was chosen."""

    path: Path
    """The directory (it may not exist)."""
    source: str
    """``flag``, ``env``, ``default`` or ``none``."""
    description: str
    """How it was chosen, in words (used in messages)."""
    exists: bool
    """Whether the directory exists."""


def resolve_data_dir(explicit: PathArg = None) -> DataDirInfo:
    """Resolve the data directory: ``explicit`` > ``NETHEAT_DATA`` > ``../shared/data``."""
    path, source, description, exists = _netheat.data_resolve_dir(_arg(explicit), _roots())
    return DataDirInfo(Path(path), source, description, exists)


def data_dir(explicit: PathArg = None) -> Path:
    """The data directory path (``explicit`` > ``NETHEAT_DATA`` > default); it may not exist."""
    return resolve_data_dir(explicit).path


def list_datasets(data_dir: PathArg = None) -> list[dict[str, Any]]:
    """Every registered dataset with its provenance and its status in the data directory.

    Each dict has ``name``, ``path`` (relative), ``repo``, ``commit``,
    ``upstream_path``, ``url``, ``sha256``, ``format``, ``kind``,
    ``description``, ``status`` (``present``, ``missing`` or
    ``checksum-mismatch``), ``file`` (full path), ``size`` (registered
    bytes) and ``size_on_disk`` (``None`` when missing).
    """
    registry = _netheat.data_registry()
    status = {s["name"]: s for s in _netheat.data_status([], _arg(data_dir), _roots())}
    out = []
    for entry in registry:
        s = status[entry["name"]]
        out.append(
            {
                **entry,
                "status": s["status"],
                "file": s["path"],
                "size_on_disk": s["size"],
                "actual_sha256": s["actual_sha256"],
            }
        )
    return out


def check(names: list[str] | None = None, data_dir: PathArg = None) -> list[dict[str, Any]]:
    """Verify checksums of ``names`` (all registered datasets when empty).

    Raises :class:`DataError` if the data directory does not exist or a name
    is unknown; returns one status dict per dataset (see :func:`list_datasets`
    for the status values) and leaves deciding what is fatal to the caller.
    """
    _netheat.data_require_dir(_arg(data_dir), _roots())
    return list(_netheat.data_status(list(names or []), _arg(data_dir), _roots()))


def load_cdf(name: str, data_dir: PathArg = None) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A flow-size CDF: ``(sizes_bytes, cum_prob)`` float64 arrays, ending at probability 1."""
    sizes, probs = _netheat.data_load_cdf(name, _arg(data_dir), _roots())
    return column(sizes), column(probs)


def load_coflows(name: str = "coflow-fb2010", data_dir: PathArg = None) -> pa.Table:
    """A coflow trace, one row per coflow.

    Columns: ``id``, ``arrival_ms``, ``mapper_racks`` (list), ``reducer_racks``
    (list), ``reducer_mb`` (list, MB received per reducer) and ``shuffle_mb``.
    The rack count is in the table metadata (``racks``).
    """
    d = _netheat.data_load_coflows(name, _arg(data_dir), _roots())
    table = pa.table(
        {
            "id": pa.array(d["id"], pa.uint32()),
            "arrival_ms": pa.array(d["arrival_ms"], pa.uint64()),
            "mapper_racks": pa.array(d["mapper_racks"], pa.list_(pa.uint32())),
            "reducer_racks": pa.array(d["reducer_racks"], pa.list_(pa.uint32())),
            "reducer_mb": pa.array(d["reducer_mb"], pa.list_(pa.float64())),
            "shuffle_mb": pa.array(d["shuffle_mb"], pa.float64()),
        }
    )
    return table.replace_schema_metadata({"dataset": name, "racks": str(d["racks"])})


@dataclass(frozen=True)
class TrafficMatrix:
    """A rack-to-rack traffic matrix (sampled packet counts)."""

    matrix: np.ndarray[Any, Any]
    """``matrix[src, dst]``, shape ``(n_racks, n_racks)``, float64."""
    rack_names: list[str]
    """ToR name of each rack index."""
    pods: dict[str, list[int]]
    """Pod name -> rack indices."""
    rack_pod: np.ndarray[Any, Any]
    """Pod index (into ``list(pods)``) of each rack."""

    @property
    def n_racks(self) -> int:
        """Number of racks."""
        return len(self.rack_names)


def load_traffic_matrix(name: str, data_dir: PathArg = None) -> TrafficMatrix:
    """A Meta rack-to-rack traffic matrix (``tm-cluster-a``, ``tm-cluster-b``, ...)."""
    d = _netheat.data_load_traffic_matrix(name, _arg(data_dir), _roots())
    n = int(d["n_racks"])
    matrix = column(d["matrix"]).reshape(n, n)
    pods = {str(p): [int(r) for r in racks] for p, racks in zip(d["pod_names"], d["pod_racks"], strict=True)}
    rack_pod = np.asarray(d["rack_pod"], dtype=np.uint32)
    return TrafficMatrix(matrix, [str(x) for x in d["rack_names"]], pods, rack_pod)


def load_table(name: str, data_dir: PathArg = None) -> pa.Table:
    """Any tabular dataset (jobs, pods, nodes, machine meta/usage) as an Arrow table."""
    fmt, cols = _netheat.data_load_table(name, _arg(data_dir), _roots())
    table = pa.table(cols)
    return table.replace_schema_metadata({"dataset": name, "format": fmt})


def load_jobs(name: str = "cloudsimpy-jobs", data_dir: PathArg = None) -> pa.Table:
    """Scheduler input rows: CloudSimPy tasks or Alibaba gpu-v2023 pods.

    ``cloudsimpy-jobs`` gives ``job_id, task_id, submit_time_s, duration_s,
    cpu, memory, instances, disk``; ``alibaba-gpu-v2023-pods`` gives
    ``name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
    pod_phase, creation_time_s, deletion_time_s, scheduled_time_s``.
    """
    if name not in JOB_DATASETS:
        raise DataError(f"dataset `{name}` is not a job trace; use one of: {', '.join(JOB_DATASETS)}")
    return load_table(name, data_dir)


# ---------------------------------------------------------------- CLI


def _header(info: DataDirInfo) -> str:
    state = "" if info.exists else " [does not exist]"
    return f"data directory: {info.path}{state} ({info.description})"


def _how_to_fix() -> str:
    return f"point netheat at a copy with --data-dir DIR or {ENV_VAR}=DIR"


def _cli_list(args: argparse.Namespace) -> int:
    info = resolve_data_dir(args.data_dir)
    rows = list_datasets(args.data_dir)
    print(_header(info))
    width = max(len(r["name"]) for r in rows)
    print(f"{'NAME':<{width}}  {'STATUS':<17}  {'SIZE':>9}  DESCRIPTION")
    for r in rows:
        size = r["size_on_disk"] if r["size_on_disk"] is not None else r["size"]
        print(f"{r['name']:<{width}}  {r['status']:<17}  {fmt_bytes(size):>9}  {r['description']}")
    counts = {s: sum(r["status"] == s for r in rows) for s in ("present", "missing", "checksum-mismatch")}
    print(
        f"{len(rows)} datasets: {counts['present']} present, {counts['missing']} missing, "
        f"{counts['checksum-mismatch']} checksum mismatches"
    )
    if not info.exists:
        print(f"note: data directory {info.path} does not exist; {_how_to_fix()}", file=sys.stderr)
    return 0


def _cli_check(args: argparse.Namespace) -> int:
    info = resolve_data_dir(args.data_dir)
    results = check(args.names, args.data_dir)
    registry = {r["name"]: r for r in _netheat.data_registry()}
    print(_header(info))
    failures: list[str] = []
    for r in results:
        name = r["name"]
        if r["status"] == "present":
            print(f"ok        {name}")
        elif r["status"] == "missing":
            print(f"missing   {name}  ({r['path']})")
            if args.names:
                up = registry[name]
                failures.append(
                    f"dataset `{name}` is missing: no file {up['path']} in data directory {info.path} "
                    f"(chosen by {info.description}); {_how_to_fix()} "
                    f"(upstream: {up['repo']}@{up['commit']} {up['upstream_path']})"
                )
        else:
            print(f"MISMATCH  {name}  ({r['path']})")
            failures.append(
                f"dataset `{name}`: checksum mismatch for {r['path']}: expected sha256 "
                f"{r['expected_sha256']}, found {r['actual_sha256']}"
            )
    n_ok = sum(r["status"] == "present" for r in results)
    n_missing = sum(r["status"] == "missing" for r in results)
    print(f"{n_ok} verified, {n_missing} missing, {len(results) - n_ok - n_missing} checksum mismatches")
    if not args.names and results and n_ok == 0 and not failures:
        failures.append(
            f"data directory {info.path} (chosen by {info.description}) holds none of the "
            f"{len(results)} datasets netheat reads; {_how_to_fix()}"
        )
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    return 2 if failures else 0


def add_cli(sub: Any) -> None:
    """Add the ``data`` command (``list``, ``check``) to the top-level subparsers ``sub``."""
    dir_help = f"data directory (default: ${ENV_VAR}, else ../shared/data next to the project root)"
    data = sub.add_parser(
        "data",
        help="list and verify the public datasets netheat reads",
        description=(
            "Public datasets are read from a data directory, never bundled: --data-dir, "
            f"else ${ENV_VAR}, else ../shared/data next to the project root."
        ),
    )
    data.add_argument("--data-dir", default=None, help=dir_help)
    dsub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    lst = dsub.add_parser("list", help="name, status (present/missing/checksum-mismatch), size, description")
    lst.add_argument("--data-dir", default=argparse.SUPPRESS, help=dir_help)
    lst.set_defaults(func=_cli_list)
    chk = dsub.add_parser(
        "check",
        help="verify checksums (exit 0 if all named/present datasets verify, else 2)",
        description=(
            "Verify SHA-256 checksums. With names, each must be present and verify; without, every "
            "present dataset must verify (missing ones are listed) and at least one must be present. "
            "Exit 0 or 2."
        ),
    )
    chk.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all)")
    chk.add_argument("--data-dir", default=argparse.SUPPRESS, help=dir_help)
    chk.set_defaults(func=_cli_check)
