"""The bad-input suite: hostile but ordinary inputs get exit 2, a clear message and no damage.

Every case runs the real command line in a subprocess under an address-space
cap (``prlimit --as``), so an unbounded allocation fails the test (an abort,
a MemoryError) instead of the machine, and under a time limit. Each case
asserts the exit code, words of the message, that no Python traceback is
shown, and that nothing outside the command's output path changed (a
snapshot of every file's type, size, mode and content digest in the test
directory, taken before and after).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from netheat.output import LOCK

ROOT = Path(__file__).resolve().parents[2]
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
AS_CAP = 2 << 30
"""Address-space cap of every case (2 GiB): far below this machine's memory, far above a sane run."""
BUDGET = "256MiB"
"""Memory budget of every case (NETHEAT_MEMORY_BUDGET), well under the cap."""
TIMEOUT_S = 120


@dataclass
class Run:
    code: int
    out: str
    err: str


def netheat(
    args: Sequence[str], cwd: Path, env: dict[str, str] | None = None, umask: int | None = None
) -> Run:
    """Run ``netheat ARGS`` in ``cwd`` under the address-space cap and the memory budget."""
    e = {**os.environ, "NETHEAT_MEMORY_BUDGET": BUDGET, **(env or {})}
    e.pop("NETHEAT_DEBUG", None)
    cmd = [sys.executable, "-m", "netheat.cli", *args]
    if shutil.which("prlimit"):
        cmd = ["prlimit", f"--as={AS_CAP}", *cmd]

    def pre() -> None:
        if umask is not None:
            os.umask(umask)

    r = subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=pre)
    return Run(r.returncode, r.stdout, r.stderr)


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple[str, int, int, str]]:
    """Type, size, mode and content digest of everything under ``root`` (except ``skip`` and the lock).

    The lock file of a netheat directory holds the pid of the last command
    that ran there; it is netheat's bookkeeping, not a result.
    """
    out: dict[str, tuple[str, int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if name == LOCK:
                continue
            if skip is not None and (p == skip or skip in p.parents):
                continue
            st = os.lstat(p)
            digest = ""
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
            out[str(p.relative_to(root))] = (kind, st.st_size if kind == "file" else 0, st.st_mode, digest)
    return out


def expect_error(r: Run, *words: str, code: int = 2) -> None:
    assert r.code == code, f"exit {r.code}, stderr:\n{r.err}"
    assert "Traceback" not in r.err, r.err
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error: "), r.err
    for w in words:
        assert w in r.err, f"{w!r} not in:\n{r.err}"
    assert len(r.err) < 2000, f"message of {len(r.err)} characters"


POISSON = """[workload]
duration = "2s"

[[traffic]]
kind = "poisson"
load = 0.2
sizes = { dist = "constant", size = "1MB" }
"""

FLOWS = "start_s,src,dst,bytes\n0,0,5,1000000\n0.1,1,6,2000000\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "flows.csv").write_text(FLOWS)
    return tmp_path


def sim(out: str, *extra: str, flows: str = "flows.csv", topo: Path | str = TOPO) -> list[str]:
    return ["simulate", "--topology", str(topo), "--flows", flows, "--out", out, *extra]


# ---------------------------------------------------------------------------------------------
# 1. Outputs: nothing that is not netheat's is ever removed or replaced


def test_simulate_refuses_a_directory_it_did_not_write(work: Path) -> None:
    user = work / "mine"
    user.mkdir()
    (user / "thesis.tex").write_text("years of work")
    (user / "sub").mkdir()
    (user / "sub" / "data.bin").write_bytes(b"\x00" * 10)
    before = snapshot(work)
    r = netheat(sim("mine"), work)
    expect_error(r, "mine", "netheat did not write it", "--force")
    assert snapshot(work) == before


def test_force_writes_beside_the_users_files_and_never_replaces_them(work: Path) -> None:
    user = work / "mine"
    user.mkdir()
    (user / "thesis.tex").write_text("years of work")
    r = netheat(sim("mine", "--force"), work)
    assert r.code == 0, r.err
    assert (user / "thesis.tex").read_text() == "years of work"
    assert (user / "flows.parquet").is_file()
    # A user's file under a name netheat writes is never replaced, --force or not.
    (user / "stats.json").unlink()
    (user / "stats.json").write_text("mine")
    before = snapshot(work)
    r = netheat(sim("mine", "--force"), work)
    expect_error(r, "stats.json", "changed since")
    assert snapshot(work) == before
    # Nor is a file of the user's that was never netheat's.
    other = work / "other"
    other.mkdir()
    (other / "flows.parquet").write_text("the user's own")
    before = snapshot(work)
    expect_error(netheat(sim("other", "--force"), work), "flows.parquet", "did not write")
    assert snapshot(work) == before


def test_force_never_replaces_a_users_file_named_like_a_figure(work: Path) -> None:
    """An experiment's figures are written after its tables: a user's file under a figure's name in
    a --force directory is refused with exit 2 and left as it was."""
    user = work / "mine"
    user.mkdir()
    (user / "baraat_protocol_by_size.png").write_text("the user's own")
    exp = ROOT / "experiments" / "baraat-task-size.toml"
    # Without the address-space cap of `netheat()`: a process pool does not start under it.
    args = ["experiment", "run", str(exp), "--quick", "--out", "mine", "--force", "--workers", "1"]
    p = subprocess.run([sys.executable, "-m", "netheat.cli", *args], cwd=work, capture_output=True, text=True)
    # The points ran (their progress lines come first); the run then stops at the figure.
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "baraat_protocol_by_size.png" in last and "did not write" in last
    assert (user / "baraat_protocol_by_size.png").read_text() == "the user's own"


@pytest.mark.parametrize("what", ["file", "fifo", "socket", "devnull", "symlink-devnull"])
def test_a_path_that_is_not_a_directory_is_refused_even_with_force(work: Path, what: str) -> None:
    target = work / "target"
    if what == "file":
        target.write_text("precious")
    elif what == "fifo":
        os.mkfifo(target)
    elif what == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(target))
        s.close()
    elif what == "devnull":
        target = Path("/dev/null")
    else:
        target.symlink_to("/dev/null")
    before = snapshot(work)
    dev = os.stat("/dev/null")
    for force in ([], ["--force"]):
        r = netheat(sim(str(target), *force), work)
        expect_error(r, str(target), "not a directory")
    assert snapshot(work) == before
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == dev.st_rdev


@pytest.mark.parametrize("what", ["devnull", "dir", "fifo", "user-csv"])
def test_workload_generate_output_file_rule(work: Path, what: str) -> None:
    wl = work / "wl.toml"
    wl.write_text(
        textwrap.dedent(
            """\
            [workload]
            duration = "1s"
            [[traffic]]
            kind = "poisson"
            load = 0.1
            sizes = { dist = "constant", size = "1MB" }
            """
        )
    )
    target = {"devnull": "/dev/null", "dir": "d", "fifo": "p", "user-csv": "mine.csv"}[what]
    if what == "dir":
        (work / "d").mkdir()
    elif what == "fifo":
        os.mkfifo(work / "p")
    elif what == "user-csv":
        (work / "mine.csv").write_text("start_s,src,dst,bytes\n0,0,1,5\n")
    before = snapshot(work)
    r = netheat(
        ["workload", "generate", "--topology", str(TOPO), "--workload", "wl.toml", "-o", target], work
    )
    expect_error(r, target)
    assert snapshot(work) == before
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    if what == "user-csv":
        r = netheat(
            [
                "workload",
                "generate",
                "--topology",
                str(TOPO),
                "--workload",
                "wl.toml",
                "-o",
                target,
                "--force",
            ],
            work,
        )
        assert r.code == 0, r.err
        assert (work / "mine.csv").read_text() != "start_s,src,dst,bytes\n0,0,1,5\n"


def test_every_directory_command_follows_the_same_rule(work: Path) -> None:
    """analyze, experiment run, reproduce and demo refuse a foreign directory like simulate."""
    user = work / "mine"
    user.mkdir()
    (user / "keep.txt").write_text("keep")
    links = work / "links.csv"
    links.write_text("timestamp,link,direction,utilization\n0,a,up,0.5\n1,a,up,0.9\n")
    exp = ROOT / "experiments" / "example-flow-sim.toml"
    before = snapshot(work)
    for args in (
        ["analyze", "--links", "links.csv", "--out", "mine"],
        ["experiment", "run", str(exp), "--quick", "--out", "mine"],
        ["reproduce", "example-flow-sim", "--quick", "--out", "mine"],
        ["demo", "--out", "mine"],
    ):
        r = netheat(args, work)
        expect_error(r, "mine", "--force")
        assert snapshot(work) == before, args
    for args in (
        ["analyze", "--links", "links.csv", "--out", "links.csv"],
        ["experiment", "run", str(exp), "--quick", "--out", "links.csv"],
    ):
        r = netheat(args, work)
        expect_error(r, "links.csv", "not a directory")
        assert snapshot(work) == before, args


def test_outputs_follow_the_umask(work: Path) -> None:
    for mask, fmode, dmode in ((0o022, 0o644, 0o755), (0o027, 0o640, 0o750)):
        out = f"run-{mask:o}"
        r = netheat(sim(out), work, umask=mask)
        assert r.code == 0, r.err
        assert stat.S_IMODE(os.stat(work / out).st_mode) == dmode
        for f in (work / out).iterdir():
            assert stat.S_IMODE(os.stat(f).st_mode) == fmode, f
        g = f"flows-{mask:o}.parquet"
        r = netheat(
            ["workload", "generate", "--topology", str(TOPO), "--workload", str(_poisson(work)), "-o", g],
            work,
            umask=mask,
        )
        assert r.code == 0, r.err
        assert stat.S_IMODE(os.stat(work / g).st_mode) == fmode


def _poisson(work: Path) -> Path:
    wl = work / "poisson.toml"
    wl.write_text(POISSON)
    return wl


def test_rerun_replaces_its_own_files_and_removes_its_stale_ones(work: Path) -> None:
    """A netheat directory is reused; files of the earlier run that the new one does not write go."""
    apps = work / "apps.toml"
    apps.write_text((ROOT / "examples" / "workloads" / "applications.toml").read_text())
    r = netheat(["simulate", "--topology", str(TOPO), "--workload", "apps.toml", "--out", "run"], work)
    if r.code != 0:
        pytest.skip(f"applications workload needs data: {r.err.strip()[:200]}")
    assert (work / "run" / "tasks.parquet").is_file()
    (work / "run" / "my-notes.txt").write_text("mine")
    r = netheat(sim("run"), work)
    assert r.code == 0, r.err
    assert not (work / "run" / "tasks.parquet").exists()  # netheat's, stale
    assert (work / "run" / "my-notes.txt").read_text() == "mine"  # the user's, kept


# ---------------------------------------------------------------------------------------------
# 5. No traceback for a user error


def test_empty_and_dot_outputs(work: Path) -> None:
    expect_error(netheat(sim(""), work), "empty path")
    before = snapshot(work)
    expect_error(netheat(sim("."), work), "--force")
    assert snapshot(work) == before


def test_output_under_a_file_or_an_unwritable_parent(work: Path) -> None:
    expect_error(netheat(sim("flows.csv/run"), work), "flows.csv")
    ro = work / "ro"
    ro.mkdir()
    with _read_only(ro):
        r = netheat(sim(str(ro / "run")), work)
        expect_error(r, str(ro / "run"))
        assert "permission denied" in r.err or "read-only file system" in r.err, r.err
        assert list(ro.iterdir()) == []


@contextlib.contextmanager
def _read_only(d: Path) -> Iterator[None]:
    """Make ``d`` unwritable: chmod for a normal user; for root (who ignores modes) a read-only tmpfs."""
    if os.geteuid() != 0:
        d.chmod(0o555)
        try:
            yield
        finally:
            d.chmod(0o755)
        return
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"running as root and cannot mount a read-only tmpfs: {r.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(d)], check=True)


def test_experiment_file_that_is_binary(work: Path) -> None:
    (work / "exp.toml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    expect_error(netheat(["experiment", "run", "exp.toml", "--out", "o"], work), "exp.toml", "UTF-8")
    assert not (work / "o").exists()


def test_topo_draw_unknown_format(work: Path) -> None:
    expect_error(netheat(["topo", "draw", str(TOPO), "-o", "t.xyz"], work), "t.xyz", ".png")
    assert not (work / "t.xyz").exists()


def test_analyze_nan_timestamp(work: Path) -> None:
    (work / "l.csv").write_text("timestamp,link,direction,utilization\n0,a,up,0.5\nnan,a,up,0.6\n")
    r = netheat(["analyze", "--links", "l.csv", "--out", "an"], work)
    expect_error(r, "l.csv", "timestamp", "data row 2")
    assert not (work / "an").exists()


def test_bad_rows_write_nothing(work: Path) -> None:
    (work / "bad.csv").write_text("start_s,src,dst,bytes\n0,1,r9h9,5\n")
    expect_error(netheat(sim("out", flows="bad.csv"), work), "bad.csv:2", "r9h9")
    assert not (work / "out").exists()


def test_config_errors_of_earlier_issues(work: Path) -> None:
    (work / "dc.toml").write_text(
        '[topology]\nkind = "two-tier"\nracks = 2\nhosts-per-rack = 2\nhost-link = "10Gbs"\n'
    )
    expect_error(netheat(["topo", "check", "dc.toml"], work), "dc.toml:5", "host-link")
    (work / "dc.toml").write_text('[topology]\nkind = "two-tier"\nrack = 2\n')
    expect_error(netheat(["topo", "check", "dc.toml"], work), "dc.toml:3", "rack")


# ---------------------------------------------------------------------------------------------
# 7. Every reader accepts what every writer writes


def test_simulate_reads_the_parquet_workload_generate_writes(work: Path) -> None:
    wl = _poisson(work)
    r = netheat(
        ["workload", "generate", "--topology", str(TOPO), "--workload", str(wl), "-o", "f.parquet"], work
    )
    assert r.code == 0, r.err
    r = netheat(["workload", "generate", "--topology", str(TOPO), "--workload", str(wl), "-o", "f.csv"], work)
    assert r.code == 0, r.err
    a = netheat(sim("a", flows="f.parquet"), work)
    b = netheat(sim("b", flows="f.csv"), work)
    assert a.code == 0 and b.code == 0, a.err + b.err
    fa, fb = pq.read_table(work / "a" / "flows.parquet"), pq.read_table(work / "b" / "flows.parquet")
    assert fa.num_rows > 10
    assert fa.select(["flow_id", "src", "dst", "bytes", "start_s", "finish_s"]).equals(
        fb.select(["flow_id", "src", "dst", "bytes", "start_s", "finish_s"])
    )
    # The format is told by content: a Parquet file named .csv still reads.
    shutil.copy(work / "f.parquet", work / "renamed.csv")
    assert netheat(sim("c", flows="renamed.csv"), work).code == 0


def test_bom_is_stripped(work: Path) -> None:
    (work / "bom.csv").write_bytes(b"\xef\xbb\xbf" + FLOWS.encode())
    r = netheat(sim("out", flows="bom.csv"), work)
    assert r.code == 0, r.err
    assert pq.read_table(work / "out" / "flows.parquet").num_rows == 2
    (work / "l.csv").write_bytes(
        b"\xef\xbb\xbftimestamp,link,direction,utilization\n0,a,up,0.5\n1,a,up,0.9\n"
    )
    assert netheat(["analyze", "--links", "l.csv", "--out", "an"], work).code == 0


def test_data_check_on_an_empty_directory(work: Path) -> None:
    (work / "empty").mkdir()
    r = netheat(["data", "--data-dir", "empty", "check"], work)
    expect_error(r, "holds none of the")


def test_duplicate_samples_warn(work: Path) -> None:
    (work / "l.csv").write_text("timestamp,link,direction,utilization\n0,a,up,0.5\n1,a,up,0.9\n1,a,up,0.9\n")
    r = netheat(["analyze", "--links", "l.csv", "--out", "an"], work)
    assert r.code == 0, r.err
    assert "warning: 1 duplicate samples" in r.err


# ---------------------------------------------------------------------------------------------
# 2. Memory: inputs that would need more than the budget are refused quickly, naming the input


def _timed(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[Run, float]:
    t0 = time.monotonic()
    r = netheat(args, cwd, env)
    return r, time.monotonic() - t0


QUICK_S = 30.0
"""A refusal must come well before the run would have done anything large."""


def test_a_flow_of_1e30_bytes(work: Path) -> None:
    (work / "big.csv").write_text("start_s,src,dst,bytes\n0,0,5,1e30\n")
    r, dt = _timed(sim("out", flows="big.csv"), work)
    expect_error(r, "big.csv:2", "8e20 s", "budget", "start time and size")
    assert dt < QUICK_S
    assert not (work / "out").exists()


def test_a_start_time_of_1e300(work: Path) -> None:
    (work / "late.csv").write_text("start_s,src,dst,bytes\n1e300,0,5,1000\n")
    r, dt = _timed(sim("out", flows="late.csv"), work)
    expect_error(r, "budget")
    assert dt < QUICK_S


def test_a_one_nanosecond_window(work: Path) -> None:
    r, dt = _timed(sim("out", "--window", "1ns"), work)
    expect_error(r, "budget", "--window")
    assert dt < QUICK_S


def test_a_one_bps_host_link(work: Path) -> None:
    (work / "slow.toml").write_text(
        '[topology]\nkind = "two-tier"\nracks = 2\nhosts-per-rack = 2\n'
        'host-link = "1bps"\ntor-uplink = "10Gbps"\n'
    )
    (work / "f.csv").write_text("start_s,src,dst,bytes\n0,0,3,1000000000\n")
    r, dt = _timed(sim("out", flows="f.csv", topo="slow.toml"), work)
    expect_error(r, "budget")
    assert dt < QUICK_S


def test_a_trillion_racks(work: Path) -> None:
    (work / "huge.toml").write_text(
        '[topology]\nkind = "two-tier"\nracks = 1000000000000\nhosts-per-rack = 4\n'
        'host-link = "10Gbps"\ntor-uplink = "10Gbps"\n'
    )
    r, dt = _timed(["topo", "check", "huge.toml"], work)
    expect_error(r, "huge.toml:3", "racks")
    assert dt < QUICK_S


@pytest.mark.parametrize(("key", "value"), [("load", "1e30"), ("duration", '"1e9s"')])
def test_a_workload_that_would_not_fit(work: Path, key: str, value: str) -> None:
    text = POISSON.replace("load = 0.2", "load = 1e30" if key == "load" else "load = 0.2")
    if key == "duration":
        text = text.replace('duration = "2s"', f"duration = {value}")
    (work / "w.toml").write_text(text)
    line = 1 + text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith(key)))
    for args in (
        ["workload", "generate", "--topology", str(TOPO), "--workload", "w.toml", "-o", "f.parquet"],
        ["simulate", "--topology", str(TOPO), "--workload", "w.toml", "--out", "out"],
    ):
        r, dt = _timed(args, work)
        expect_error(r, f"w.toml:{line}", key)
        assert dt < QUICK_S
        assert not (work / "f.parquet").exists() and not (work / "out").exists()


def test_a_one_gigabyte_line(work: Path) -> None:
    """1 GiB without a newline (sparse, so the test writes almost nothing): refused after 1 MiB."""
    p = work / "line.csv"
    with p.open("wb") as f:
        f.write(b"start_s,src,dst,bytes,")
        f.truncate(1 << 30)
    r, dt = _timed(sim("out", flows="line.csv"), work)
    expect_error(r, "line.csv", "longer than")
    assert len(r.err) < 500
    assert dt < QUICK_S


def test_the_budget_flag(work: Path) -> None:
    expect_error(netheat(["--memory-budget", "lots", *sim("out")], work), "--memory-budget")
    # A budget too small for even this small run refuses it, naming the flag to raise.
    r = netheat(["--memory-budget", "1KiB", *sim("out", "--window", "1ms")], work)
    expect_error(r, "budget")
    assert netheat(["--memory-budget", "1GiB", *sim("out")], work).code == 0
