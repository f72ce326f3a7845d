"""Concurrent runs and kill -9: one writer per output, interrupted runs leave nothing wrong.

- Two ``experiment run``s on one directory: the second exits 2 at once
  naming the first's pid; the first finishes as if alone.
- ``kill -9`` of ``simulate``, ``analyze`` and ``experiment run`` at seeded
  random moments, then a re-run: the results equal an uninterrupted run's
  and nothing temporary is left.
- ``kill -9`` of a two-worker ``experiment run``: its workers die too.

Every process here runs on this machine and is bounded in time.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from netheat.experiments.registry import PointResult
from netheat.experiments.runner import WORKER_DIED, Point, _run_local
from netheat.output import MARKER, TMP_PREFIX, fingerprint

ROOT = Path(__file__).resolve().parents[2]
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
EXAMPLE = ROOT / "experiments" / "example-flow-sim.toml"
KILLS = 4
"""Random kill moments per command (seeded)."""


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "netheat.cli", *args]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def long_experiment(tmp: Path, duration: str) -> Path:
    """The example experiment with a longer simulated duration (absolute paths)."""
    text = EXAMPLE.read_text()
    assert '[base]\nscenario = "../examples/scenarios/' in text
    text = text.replace(
        '[base]\nscenario = "../examples/scenarios/',
        f'[base]\n"workload.duration" = "{duration}"\nscenario = "{ROOT}/examples/scenarios/',
    )
    p = tmp / "long.toml"
    p.write_text(text)
    return p


def start_run(exp: Path, cwd: Path, workers: int, capture: bool) -> subprocess.Popen[str]:
    """``netheat experiment run EXP --out out`` in the background."""
    pipe = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(
        cli("experiment", "run", str(exp), "--out", "out", "--workers", str(workers)),
        cwd=cwd,
        stdout=pipe,
        stderr=pipe,
        text=True,
    )


def wait_for(cond: object, timeout_s: float = 60.0) -> None:
    t0 = time.monotonic()
    while not cond():  # type: ignore[operator]
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def descendants(pid: int) -> set[int]:
    """Pids of every live descendant of ``pid`` (from /proc)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                parent[int(d.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    out: set[int] = set()
    frontier = [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.update(kids)
        frontier.extend(kids)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def no_temporaries(d: Path) -> None:
    left = [p for p in d.rglob(f"{TMP_PREFIX}*")]
    assert left == [], left
    assert json.loads((d / MARKER).read_text())["complete"] is True


def same_tables(a: Path, b: Path, names: list[str], float_rtol: float = 0.0) -> None:
    """Tables equal; with ``float_rtol``, float columns may differ by that relative amount."""
    for n in names:
        ta, tb = pq.read_table(a / n), pq.read_table(b / n)
        if float_rtol == 0.0:
            # NaN equal to NaN: a value with no finished sample is NaN in both runs.
            assert ta.schema == tb.schema, n
            assert json.dumps(ta.to_pylist(), default=str) == json.dumps(tb.to_pylist(), default=str), n
            continue
        assert ta.schema == tb.schema and ta.num_rows == tb.num_rows, n
        for c in ta.column_names:
            if pa.types.is_floating(ta.schema.field(c).type):
                x = ta.column(c).to_numpy(zero_copy_only=False)
                y = tb.column(c).to_numpy(zero_copy_only=False)
                np.testing.assert_allclose(
                    x, y, rtol=float_rtol, atol=0.0, equal_nan=True, err_msg=f"{n}: {c}"
                )
            else:
                assert ta.column(c).equals(tb.column(c)), f"{n}: {c}"


def test_two_experiment_runs_on_one_directory(tmp_path: Path) -> None:
    exp = long_experiment(tmp_path, "100s")
    first = start_run(exp, tmp_path, workers=1, capture=True)
    try:
        wait_for(
            lambda: (
                (tmp_path / "out" / ".netheat.lock").is_file()
                and str(first.pid) in (tmp_path / "out" / ".netheat.lock").read_text()
            )
        )
        # Stopped, the first run still holds the directory however long the
        # second takes to start, without a long simulation to keep it busy.
        first.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        try:
            second = run(cli("experiment", "run", str(exp), "--out", "out", "--workers", "1"), tmp_path)
        finally:
            first.send_signal(signal.SIGCONT)
        assert time.monotonic() - t0 < 30
        assert second.returncode == 2, second.stderr
        assert f"pid {first.pid}" in second.stderr and "in use" in second.stderr
        assert "Traceback" not in second.stderr
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            first.kill()
    alone = run(cli("experiment", "run", str(exp), "--out", "alone", "--workers", "1"), tmp_path)
    assert alone.returncode == 0, alone.stderr
    same_tables(tmp_path / "out", tmp_path / "alone", ["points.parquet", "flows.parquet", "tasks.parquet"])
    sa = json.loads((tmp_path / "out" / "summary.json").read_text())
    sb = json.loads((tmp_path / "alone" / "summary.json").read_text())
    assert sa["metrics"] == sb["metrics"]
    no_temporaries(tmp_path / "out")


def _kill_at(args: list[str], cwd: Path, delay_s: float) -> None:
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay_s)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)


def _timed(args: list[str], cwd: Path) -> float:
    t0 = time.monotonic()
    r = run(args, cwd)
    assert r.returncode == 0, r.stderr
    return time.monotonic() - t0


@pytest.mark.parametrize("command", ["simulate", "analyze", "experiment"])
def test_kill_9_at_random_moments_then_rerun(tmp_path: Path, command: str) -> None:
    flows = tmp_path / "flows.csv"
    rng = random.Random(26)
    lines = ["start_s,src,dst,bytes"]
    for i in range(3000):
        lines.append(
            f"{i * 0.01:.2f},{rng.randrange(16)},{rng.randrange(16)},{rng.randrange(1, 50) * 100000}"
        )
    flows.write_text("\n".join(lines) + "\n")
    if command == "simulate":

        def args(out):
            return cli(
                "simulate",
                "--topology",
                str(TOPO),
                "--flows",
                str(flows),
                "--out",
                out,
                "--window",
                "10ms",
            )

        tables = ["flows.parquet", "links.parquet"]
    elif command == "analyze":
        base = run(
            cli(
                "simulate", "--topology", str(TOPO), "--flows", str(flows), "--out", "sim", "--window", "10ms"
            ),
            tmp_path,
        )
        assert base.returncode == 0, base.stderr

        def args(out):
            return cli(
                "analyze",
                "--links",
                str(tmp_path / "sim" / "links.parquet"),
                "--out",
                out,
                "--window",
                "1s",
            )

        tables = [
            f"tables/{n}.parquet"
            for n in ("hotspot_runs", "hotspot_rate_by_layer", "link_stats", "stability")
        ]
    else:
        args = lambda out: cli("experiment", "run", str(EXAMPLE), "--out", out, "--workers", "2")  # noqa: E731
        tables = ["points.parquet", "flows.parquet", "tasks.parquet"]
    full = _timed(args("ref"), tmp_path)
    for k in range(KILLS):
        out = f"killed{k}"
        _kill_at(args(out), tmp_path, rng.uniform(0.0, full))
        killed = tmp_path / out
        if (killed / MARKER).is_file():
            # Right after the kill: a complete marker vouches for every file it lists.
            marker = json.loads((killed / MARKER).read_text())
            if marker["complete"]:
                for rel in marker.get("files", {}):
                    assert fingerprint(killed / rel) == marker["files"][rel]["fingerprint"], rel
                listed = [t for t in tables if t in marker.get("files", {})]
                same_tables(tmp_path / "ref", killed, listed, 1e-12 if command == "analyze" else 0.0)
        rerun = run(args(out), tmp_path)
        assert rerun.returncode == 0, rerun.stderr
        # analyze's float reductions run in parallel (Polars) and can differ in the last bit between
        # runs, killed or not; everything else is byte-for-byte.
        same_tables(tmp_path / "ref", tmp_path / out, tables, 1e-12 if command == "analyze" else 0.0)
        no_temporaries(tmp_path / out)
    if command == "analyze":
        ref = json.loads((tmp_path / "ref" / "summary.json").read_text())
        got = json.loads((tmp_path / "killed0" / "summary.json").read_text())
        assert ref["hotspots"] == got["hotspots"] and ref["link_samples"] == got["link_samples"]


def test_kill_9_of_a_two_worker_run_kills_its_workers(tmp_path: Path) -> None:
    exp = long_experiment(tmp_path, "3000s")
    driver = start_run(exp, tmp_path, workers=2, capture=False)
    try:
        # Wait until the pool's workers (forked by the fork server) exist.
        wait_for(lambda: len(descendants(driver.pid)) >= 3, timeout_s=60)
        time.sleep(1.0)
        family = descendants(driver.pid)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        t0 = time.monotonic()
        while any(alive(p) for p in family) and time.monotonic() - t0 < 15:
            time.sleep(0.1)
        left = [p for p in family if alive(p)]
        assert left == [], f"processes of the killed run still alive: {left}"
    finally:
        if driver.poll() is None:
            driver.kill()
        for p in descendants(driver.pid):
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)


def test_a_damaged_point_is_run_again(tmp_path: Path) -> None:
    """A point whose files do not read back is reported, run again, and the run equals a clean one."""
    ref = run(cli("experiment", "run", str(EXAMPLE), "--quick", "--out", "ref"), tmp_path)
    assert ref.returncode == 0, ref.stderr
    first = run(cli("experiment", "run", str(EXAMPLE), "--quick", "--out", "out"), tmp_path)
    assert first.returncode == 0, first.stderr
    points = sorted(d for d in (tmp_path / "out" / "points").iterdir())
    assert len(points) == 4
    (points[0] / "values.json").write_text("{not json")
    flows = points[1] / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[:100])  # truncated: the footer is gone
    (points[2] / "point.json").unlink()
    again = run(cli("experiment", "run", str(EXAMPLE), "--quick", "--out", "out"), tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    for d in points[:3]:
        assert f"points/{d.name} does not read back" in again.stderr, again.stderr
    assert "1 reused" in again.stdout, again.stdout
    same_tables(tmp_path / "ref", tmp_path / "out", ["points.parquet", "flows.parquet", "tasks.parquet"])


def test_a_run_writing_its_marker_still_reads_as_in_use(tmp_path: Path) -> None:
    """A run that holds the lock may be between creating its marker's temporary file and renaming
    it into place: the directory holds only netheat's lock and temporary then. Another run must
    say the directory is in use, not that netheat did not write it; and once the first is gone,
    the temporary is an interrupted run's, cleaned away."""
    from netheat.errors import InputError
    from netheat.output import OutputDir

    out = tmp_path / "out"
    first = OutputDir.open(out, "experiment run")
    try:
        for e in out.iterdir():
            if e.name != ".netheat.lock":
                e.unlink()
        (out / ".netheat-tmp-marker.json").write_text("{}")
        with pytest.raises(InputError, match="in use by another netheat run"):
            OutputDir.open(out, "experiment run")
    finally:
        first.close()
    again = OutputDir.open(out, "experiment run")
    again.close()
    assert not (out / ".netheat-tmp-marker.json").exists()


def _point_that_may_kill_its_worker(params: dict[str, Any], seed: int) -> PointResult:
    """A point kind for the runner: point 3 kills its own process (as the OOM killer would)."""
    if params["i"] == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return PointResult(values={"i": float(params["i"]), "seed": float(seed)})


def test_a_point_that_kills_its_worker_fails_alone() -> None:
    """A dead worker breaks the whole process pool; the points it took down run again, each in a
    process of its own, so only the point that kills its worker fails (and the run does not hang)."""
    todo = [Point(i, "v", "k", {}, 1, {"i": i}, f"h{i}") for i in range(8)]
    done: dict[int, tuple[bool, Any]] = {}

    def on_done(p: Point, ok: bool, x: Any) -> None:
        done[p.index] = (ok, x)

    _run_local(todo, {"k": _point_that_may_kill_its_worker}, 2, on_done)
    assert sorted(done) == list(range(8))
    assert done[3] == (False, WORKER_DIED)
    for i in set(range(8)) - {3}:
        ok, res = done[i]
        assert ok and res.values == {"i": float(i), "seed": 1.0}, (i, res)
