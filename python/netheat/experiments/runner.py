"""Running an experiment: points, hashing, backends, resumability and the output tables.

A *point* is one (variant, sweep values, seed). Its identity is the hash of
its scenario kind, converted parameters (files referenced by path enter by
their content hash, not their location) and seed; results live in
``DIR/points/<hash>/`` (one Parquet file per table, ``values.json``,
``point.json``), written to a temporary directory and renamed into place,
so a point directory either is complete or does not exist. Re-running skips
every point whose directory exists, so an interrupted run loses at most the
points in flight.

Backends: ``local`` runs points in a ``concurrent.futures`` process pool
(in-process when one worker suffices); ``ray`` submits them as Ray tasks to
a local Ray instance or a cluster. Either way the driver writes results as
they arrive. A point that raises is recorded with its error and does not
stop the others; failed points are retried by the next run.

When all points are done, each table kind is concatenated over the points
into ``DIR/<kind>.parquet`` with provenance columns (``experiment_hash,
variant, point, point_hash, seed, netheat_version, git_revision``),
``DIR/points.parquet`` lists every point with its status, error and values,
and ``DIR/summary.json`` holds the metrics.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat import __version__
from netheat.errors import ConfigError, InputError
from netheat.experiments.config import Experiment, resolve_params
from netheat.experiments.registry import PointResult, RunPoint, get_kind
from netheat.output import OutputDir, mkdirs, new_temp_dir


def _source_root() -> Path | None:
    """The project root when this module runs from a source checkout (``python/netheat/...``)."""
    here = Path(__file__).resolve()
    root = here.parents[3]
    checkout = here.parents[2] == root / "python" and (root / "Cargo.toml").is_file()
    return root if checkout and (root / "experiments").is_dir() else None


SOURCE_ROOT = _source_root()
"""Project root of the source checkout netheat runs from (``make build``, ``maturin develop``);
None when netheat is installed from a wheel."""
PACKAGE_DATA = Path(__file__).resolve().parents[1] / "_bundled"
"""The bundled ``experiments/`` and ``examples/`` inside the package. In a checkout they are
symlinks to the root's directories; a wheel ships them as package data (``[tool.maturin] include``),
so experiment files' relative references (``../examples/...``, ``topologies/...``) resolve alike."""
ROOT = SOURCE_ROOT if SOURCE_ROOT is not None else PACKAGE_DATA
"""Where the bundled experiments (``ROOT/experiments``) and examples (``ROOT/examples``) live."""

PROVENANCE = ("experiment_hash", "variant", "point", "point_hash", "seed", "netheat_version", "git_revision")
"""Provenance columns added to every output table."""

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class Point:
    """One run of one variant at one sweep point and seed."""

    index: int
    variant: str
    kind: str
    sweep: dict[str, Any]
    seed: int
    params: dict[str, Any]
    hash: str

    @property
    def label(self) -> str:
        """The sweep point as ``k=v,k=v`` (``-`` without a sweep)."""
        return ",".join(f"{k}={v}" for k, v in self.sweep.items()) or "-"

    def describe(self) -> str:
        """``variant @ point, seed s`` for messages."""
        return f"{self.variant} @ {self.label}, seed {self.seed}"


@dataclass
class RunResult:
    """What a run did: its points, which completed or failed, and the files written."""

    experiment: Experiment
    out: Path
    points: list[Point]
    experiment_hash: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    skipped: int = 0
    tables: list[Path] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> list[Point]:
        """Points that raised (in point order)."""
        return [p for p in self.points if p.hash in self.errors]


def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def point_hash(kind: str, params: dict[str, Any], seed: int) -> str:
    """Content hash of a point: kind, converted params (path params by file content) and seed."""
    k = get_kind(kind)
    canon: dict[str, Any] = {}
    for name, value in sorted(params.items()):
        p = k.param(name)
        if p is not None and p.type == "path" and value is not None:
            canon[name] = {"sha256": _file_digest(value)}
        else:
            canon[name] = value
    blob = json.dumps({"kind": kind, "params": canon, "seed": seed}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def expand_points(exp: Experiment) -> list[Point]:
    """Every point of the experiment: sweep grid x seeds x variants (those that run at
    the sweep point), in a stable order."""
    keys = list(exp.sweep)
    grid = list(itertools.product(*(exp.sweep[k] for k in keys))) if keys else [()]
    points: list[Point] = []
    for combo in grid:
        sweep = dict(zip(keys, combo, strict=True))
        for seed in exp.seeds:
            for v in exp.variants:
                if not v.runs_at(sweep):
                    continue
                kind = get_kind(v.kind)
                try:
                    params = resolve_params(kind, {**v.params, **sweep}, exp.base_dir)
                except (KeyError, ValueError) as e:  # validated already; defensive
                    raise ConfigError(f"{exp.path}: variant {v.name!r}: {e}", file=str(exp.path)) from None
                h = point_hash(v.kind, params, seed)
                points.append(Point(len(points), v.name, v.kind, sweep, seed, params, h))
    return points


def experiment_hash(exp: Experiment, points: Sequence[Point]) -> str:
    """Hash of the experiment: its name and the hashes of its points (with their variant labels)."""
    blob = json.dumps([exp.name, [(p.variant, p.label, p.hash) for p in points]])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def git_revision() -> str:
    """``git rev-parse HEAD`` of the source checkout, or ``unknown`` (also for an installed wheel,
    whose site-packages may sit inside some unrelated repository)."""
    if SOURCE_ROOT is None:
        return "unknown"
    try:
        r = subprocess.run(
            ["git", "-C", str(SOURCE_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"


def execute_point(run_point: RunPoint, params: dict[str, Any], seed: int) -> tuple[bool, Any]:
    """Run one point: ``(True, PointResult)``, or ``(False, error text)`` when it raises an Exception."""
    try:
        res = run_point(params, seed)
        if not isinstance(res, PointResult):
            raise TypeError(f"run_point returned {type(res).__name__}, expected PointResult")
        return True, res
    except Exception as e:
        tb = traceback.format_exc(limit=-3)
        return False, f"{type(e).__name__}: {e}\n{tb}"


# ---------------------------------------------------------------------------------------------
# Point directories


def _point_dir(out: Path, p: Point) -> Path:
    return out / "points" / p.hash


def _load_point(out: Path, p: Point) -> tuple[dict[str, float], list[str]] | None:
    """The values and notes of a finished point, or None if it has not run.

    A point directory that does not read back (a damaged ``point.json`` or
    ``values.json``, a missing or unreadable table) is reported, removed
    (it is netheat's own) and treated as not run, so the run redoes it.
    """
    d = _point_dir(out, p)
    if not d.exists():
        return None
    try:
        meta = json.loads((d / "point.json").read_text())
        raw = json.loads((d / "values.json").read_text())
        if not isinstance(meta, dict) or not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        values = {str(k): float("nan") if v is None else float(v) for k, v in raw.items()}
        for name in meta["tables"]:
            pq.read_metadata(d / f"{name}.parquet")
        notes = [str(n) for n in meta.get("notes", [])]
    except Exception as e:  # any damage: JSON, types, missing keys, Parquet footers
        reason = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        sys.stderr.write(
            f"warning: point {p.describe()} in {d} does not read back ({reason}); running it again\n"
        )
        shutil.rmtree(d, ignore_errors=True)
        return None
    return values, notes


def _write_point(out: Path, p: Point, res: PointResult) -> None:
    final = _point_dir(out, p)
    mkdirs(final.parent)
    tmp = new_temp_dir(final.parent)
    try:
        for name, table in res.tables.items():
            pq.write_table(table, tmp / f"{name}.parquet")
        (tmp / "values.json").write_text(json.dumps(res.values, indent=1))
        meta = {
            "variant": p.variant,
            "kind": p.kind,
            "sweep": p.sweep,
            "seed": p.seed,
            "params": p.params,
            "tables": sorted(res.tables),
            "notes": list(res.notes),
            "netheat_version": __version__,
        }
        (tmp / "point.json").write_text(json.dumps(meta, indent=1, default=str))
        if final.exists():
            shutil.rmtree(tmp)  # an identical point finished meanwhile
        else:
            tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    """Write strict JSON (no NaN) to ``path``."""
    path.write_text(json.dumps(obj, indent=2, allow_nan=False, default=str) + "\n")


# ---------------------------------------------------------------------------------------------
# Progress


class Progress:
    """A progress bar with ETA on stderr (one line per point when stderr is not a terminal)."""

    def __init__(self, total: int, skipped: int, enabled: bool = True) -> None:
        self.total = total
        self.skipped = skipped
        self.done = 0
        self.failed = 0
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.t0 = time.monotonic()

    def start(self, name: str, todo: int, backend: str, workers: int) -> None:
        """Announce the run."""
        if self.enabled:
            resumed = f", {self.skipped} already done" if self.skipped else ""
            sys.stderr.write(
                f"{name}: {self.total} points{resumed}, running {todo} on {backend} ({workers} workers)\n"
            )
            sys.stderr.flush()

    def update(self, ok: bool, what: str) -> None:
        """Record one finished point and redraw."""
        self.done += 1
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.t0
        todo = self.total - self.skipped
        eta = elapsed / self.done * (todo - self.done)
        frac = (self.skipped + self.done) / max(self.total, 1)
        bar = "#" * int(30 * frac)
        failed = f", {self.failed} failed" if self.failed else ""
        line = (
            f"[{bar:<30}] {self.skipped + self.done}/{self.total} points{failed}  "
            f"{elapsed:.0f}s elapsed, ETA {eta:.0f}s"
        )
        if self.tty:
            sys.stderr.write("\r" + line + " ")
        else:
            sys.stderr.write(f"{line}  ({'ok' if ok else 'FAILED'}: {what})\n")
        sys.stderr.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled and self.tty and self.done:
            sys.stderr.write("\n")


# ---------------------------------------------------------------------------------------------
# Backends

OnDone = Callable[[Point, bool, Any], None]

WORKER_DIED = (
    "its worker process died (killed by the OS, most likely out of memory: see `dmesg`; or a crash), "
    "also when it ran alone"
)


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _watch_driver(driver_pid: int) -> None:
    """Block until the driver process exits, then kill this worker (a daemon thread's body)."""
    try:
        fd = os.pidfd_open(driver_pid)
    except (AttributeError, OSError):
        while True:  # no pidfd: poll the pid
            time.sleep(1.0)
            try:
                os.kill(driver_pid, 0)
            except ProcessLookupError:
                _kill_self()
            except PermissionError:
                pass
    else:
        select.select([fd], [], [])
        _kill_self()


def worker_init(driver_pid: int) -> None:
    """Make a pool worker die with the run that started it, even after ``kill -9`` of the driver.

    The kernel sends SIGKILL when the worker's parent (the fork server)
    exits (``PR_SET_PDEATHSIG``), and a daemon thread waits on the driver's
    pidfd and kills the worker when the driver exits (the point's Rust code
    releases the GIL, so the thread runs even in a long point).
    """
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    watch = threading.Thread(target=_watch_driver, args=(driver_pid,), daemon=True, name="netheat-watch")
    watch.start()


def _run_local(todo: list[Point], fns: dict[str, RunPoint], workers: int, on_done: OnDone) -> None:
    if workers <= 1 or len(todo) <= 1:
        for p in todo:
            ok, payload = execute_point(fns[p.kind], p.params, p.seed)
            on_done(p, ok, payload)
        return
    ctx = multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")

    def pool(n: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=n, mp_context=ctx, initializer=worker_init, initargs=(os.getpid(),)
        )

    # A worker that dies (killed by the OS's out-of-memory killer, or a
    # crash in native code) breaks the whole pool, and every point it had
    # not finished fails with it. Those run again, each in a process of its
    # own, so that only a point that kills its worker fails.
    broken: list[Point] = []
    ex = pool(workers)
    try:
        futures: dict[Future[tuple[bool, Any]], Point] = {
            ex.submit(execute_point, fns[p.kind], p.params, p.seed): p for p in todo
        }
        for fut in as_completed(futures):
            p = futures[fut]
            try:
                ok, payload = fut.result()
            except BrokenProcessPool:
                broken.append(p)
                continue
            except Exception as e:
                ok, payload = False, f"{type(e).__name__}: {e}"
            on_done(p, ok, payload)
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    for p in sorted(broken, key=lambda q: q.index):
        one = pool(1)
        try:
            ok, payload = one.submit(execute_point, fns[p.kind], p.params, p.seed).result()
        except BrokenProcessPool:
            ok, payload = False, WORKER_DIED
        except Exception as e:
            ok, payload = False, f"{type(e).__name__}: {e}"
        except BaseException:
            one.shutdown(wait=False, cancel_futures=True)
            raise
        one.shutdown(wait=True)
        on_done(p, ok, payload)


def _split_address(address: str) -> tuple[str, int]:
    rest = address.removeprefix("ray://")
    host, _, port = rest.rpartition(":")
    if not host:
        return rest, 10001 if address.startswith("ray://") else 6379
    try:
        return host, int(port)
    except ValueError:
        raise InputError(f"invalid Ray address {address!r}: expected HOST:PORT or ray://HOST:PORT") from None


RAY_HINT = (
    "hint: start a cluster with `ray start --head` and pass the GCS address it prints (HOST:6379), "
    "or use --ray-address local (or omit it) to start a local Ray instance"
)


def check_ray_address(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast (``InputError`` with the address and a hint) when nothing listens at ``address``."""
    host, port = _split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as e:
        raise InputError(f"cannot reach Ray at {address} ({e.strerror or e}); {RAY_HINT}") from None


def _ray_preflight(address: str | None) -> None:
    """Before anything runs: Ray must be importable and a cluster address reachable."""
    try:
        import ray

        del ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray, which is not installed: pip install 'netheat[ray]'"
        ) from None
    if address not in (None, "", "local", "auto"):
        assert address is not None
        check_ray_address(address)


def _run_ray(
    todo: list[Point], fns: dict[str, RunPoint], workers: int, address: str | None, on_done: OnDone
) -> None:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray, which is not installed: pip install 'netheat[ray]'"
        ) from None
    started = False
    if not ray.is_initialized():
        local = address in (None, "", "local")
        if not local and address != "auto":
            assert address is not None
            check_ray_address(address)
        try:
            if local:
                ray.init(
                    num_cpus=workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as e:
            raise InputError(f"cannot connect to Ray at {address}: {e}; {RAY_HINT}") from None
        started = True
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(execute_point)
        refs = {task.remote(fns[p.kind], p.params, p.seed): p for p in todo}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                p = refs[ref]
                try:
                    ok, payload = ray.get(ref)
                except Exception as e:
                    ok, payload = False, f"{type(e).__name__}: {e}"
                on_done(p, ok, payload)
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------------------
# Merging


def _const(value: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


def _with_provenance(table: pa.Table, prov: dict[str, Any]) -> pa.Table:
    n = table.num_rows
    cols: list[pa.Array] = []
    for name in PROVENANCE:
        v = prov[name]
        cols.append(pa.array(np.full(n, v, dtype=np.int64)) if name == "seed" else _const(str(v), n))
    extra = pa.table(dict(zip(PROVENANCE, cols, strict=True)))
    for name, col in zip(table.column_names, table.columns, strict=True):
        extra = extra.append_column(name, col)
    return extra


def _merge(res: RunResult, version: str, revision: str, stage: Path) -> None:
    out = res.out
    base = {"experiment_hash": res.experiment_hash, "netheat_version": version, "git_revision": revision}
    per_kind: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    rows: dict[str, list[Any]] = {k: [] for k in (*PROVENANCE, "status", "error")}
    value_names = sorted({k for v in res.values.values() for k in v})
    vals: dict[str, list[float]] = {k: [] for k in value_names}
    for p in res.points:
        prov = {**base, "variant": p.variant, "point": p.label, "point_hash": p.hash, "seed": p.seed}
        for k in PROVENANCE:
            rows[k].append(prov[k])
        ok = p.hash in res.values
        rows["status"].append("ok" if ok else "failed" if p.hash in res.errors else "missing")
        rows["error"].append(res.errors.get(p.hash))
        for k in value_names:
            vals[k].append(res.values[p.hash].get(k, float("nan")) if ok else float("nan"))
        if not ok:
            continue
        meta = json.loads((_point_dir(out, p) / "point.json").read_text())
        for name in meta["tables"]:
            per_kind.setdefault(name, []).append((_point_dir(out, p) / f"{name}.parquet", prov))
    points = pa.table({**rows, **{k: pa.array(v, type=pa.float64()) for k, v in vals.items()}})
    pq.write_table(points, stage / "points.parquet")
    res.tables = [out / "points.parquet"]
    for name, parts in sorted(per_kind.items()):
        _concat_to(parts, stage / f"{name}.parquet")
        res.tables.append(out / f"{name}.parquet")


def _concat_to(parts: list[tuple[Path, dict[str, Any]]], path: Path) -> None:
    """Concatenate point tables (with provenance) into one Parquet file, one point in memory at a time.

    Schemas are unified first (a column missing from a point is null
    there, numeric types are promoted), as ``pa.concat_tables`` with
    ``promote_options="default"`` would; each point becomes one row group.
    """
    probe = [_with_provenance(pq.read_schema(f).empty_table(), prov) for f, prov in parts]
    schema = pa.unify_schemas([t.schema for t in probe], promote_options="default")
    with pq.ParquetWriter(path, schema) as writer:
        for f, prov in parts:
            t = _with_provenance(pq.read_table(f), prov)
            cols = [
                t.column(fld.name).cast(fld.type)
                if fld.name in t.column_names
                else pa.nulls(t.num_rows, fld.type)
                for fld in schema
            ]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema))


# ---------------------------------------------------------------------------------------------
# Entry point


def run_experiment(
    exp: Experiment,
    out: str | Path | OutputDir,
    backend: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    force: bool = False,
) -> RunResult:
    """Run every point not already done, then write the tables and ``summary.json`` into ``out``.

    ``out`` is a path (opened under the output rule of :mod:`netheat.output`,
    ``force`` to use a directory netheat did not write) or an already open
    :class:`OutputDir`. The merged tables and ``summary.json`` are staged and
    moved into place together.
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    if ray_address is not None and backend != "ray":
        raise InputError("--ray-address needs --backend ray")
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if backend == "ray":
        _ray_preflight(ray_address)
    if isinstance(out, OutputDir):
        return _run_in(exp, out, backend, workers, ray_address, progress)
    with OutputDir.open(out, "experiment run", force=force) as od:
        return _run_in(exp, od, backend, workers, ray_address, progress)


def _run_in(
    exp: Experiment, od: OutputDir, backend: str, workers: int | None, ray_address: str | None, progress: bool
) -> RunResult:
    from netheat.experiments.summary import compute_summary

    out = od.path
    points = expand_points(exp)
    res = RunResult(exp, out, points, experiment_hash(exp, points))
    todo: list[Point] = []
    seen: set[str] = set()
    for p in points:
        if p.hash in seen:
            continue
        seen.add(p.hash)
        done = _load_point(out, p)
        if done is None:
            todo.append(p)
        else:
            res.values[p.hash], res.notes[p.hash] = done
    res.skipped = len(seen) - len(todo)
    n_workers = workers or max(1, min(os.cpu_count() or 1, len(todo)))
    fns = {p.kind: get_kind(p.kind).run_point for p in todo}
    bar = Progress(len(seen), res.skipped, progress)

    def on_done(p: Point, ok: bool, payload: Any) -> None:
        if ok:
            _write_point(out, p, payload)
            res.values[p.hash] = {k: float(v) for k, v in payload.values.items()}
            res.notes[p.hash] = list(payload.notes)
        else:
            res.errors[p.hash] = str(payload)
        bar.update(ok, p.describe() if ok else f"{p.describe()}: {str(payload).splitlines()[0]}")

    if todo:
        bar.start(exp.name, len(todo), backend, n_workers)
        try:
            if backend == "local":
                _run_local(todo, fns, n_workers, on_done)
            else:
                _run_ray(todo, fns, n_workers, ray_address, on_done)
        finally:
            bar.close()
    # Identical points (same hash in two variants) share one result.
    version, revision = __version__, git_revision()
    with od.transaction("tables") as stage:
        _merge(res, version, revision, stage)
        res.summary = compute_summary(exp, res, version, revision)
        write_json(stage / "summary.json", res.summary)
    return res
