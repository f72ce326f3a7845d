"""The wheel, installed into a clean virtualenv outside the checkout, runs `netheat reproduce`.

Builds the wheel with ``maturin build --release`` (into a temporary directory,
reusing ``target/``, so after ``make build`` cargo has nothing to compile),
checks it ships every bundled experiment and example file (TOML and CSV),
installs it into a new virtualenv (``python -m venv --without-pip``, no site
packages), and runs ``netheat reproduce --quick`` on one small experiment
from a directory outside the checkout.

Dependencies (numpy, pyarrow, matplotlib, polars and theirs, about 200 MB)
come from a wheelhouse kept in ``target/wheel-test/wheelhouse`` and filled
by ``pip download`` from the index the first time, or again when the
wheel's requirements no longer resolve from it; the install itself is
offline (``--no-index``). pip's own cache stays empty on this machine
(the registry's responses are not cacheable), so without the wheelhouse
every run would download them again. ``--no-compile`` skips writing
bytecode for them, which is most of the install time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MATURIN = shutil.which("maturin", path=str(BIN)) or shutil.which("maturin")
WHEELHOUSE = ROOT / "target" / "wheel-test" / "wheelhouse"
BUILD_LOCK = Path("/tmp/netheat-maturin.lock")
"""The lock ``make build`` holds around maturin, so the two do not build into ``target/`` at once."""
EXPERIMENT = "example-flow-sim"
"""A small bundled experiment that needs no dataset and references an ``examples/`` file."""

pytestmark = pytest.mark.skipif(
    MATURIN is None, reason="maturin is not installed (`make venv` installs it): cannot build the wheel"
)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(
    cmd: list[str | Path], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    args = [str(c) for c in cmd]
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def _check(r: subprocess.CompletedProcess[str]) -> None:
    tail = f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert r.returncode == 0, f"{' '.join(r.args)} exited {r.returncode}\n{tail}"


def _build_wheel(out: Path) -> Path:
    env = {**os.environ, "VIRTUAL_ENV": str(BIN.parent), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with _locked(BUILD_LOCK):
        r = _run(
            [MATURIN, "build", "--release", "--quiet", "--interpreter", sys.executable, "--out", out],
            timeout=3600,
            cwd=ROOT,
            env=env,
        )
    _check(r)
    wheels = list(out.glob("netheat-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _install(venv_python: Path, wheel: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", venv_python]
    install = [*pip, "install", "-q", "--no-compile", "--no-index", "--find-links", WHEELHOUSE, wheel]
    with _locked(WHEELHOUSE / ".lock"):
        if _run(install, timeout=600).returncode != 0:
            # First run, or the requirements changed: fetch them, then install offline.
            _check(_run([*pip, "download", "-q", "--dest", WHEELHOUSE, wheel], timeout=900))
            for stale in WHEELHOUSE.glob("netheat-*.whl"):
                stale.unlink()
            _check(_run(install, timeout=600))


def test_installed_wheel_reproduces_outside_the_checkout(tmp_path: Path) -> None:
    """`pip install` of the wheel, then `netheat reproduce --quick` in another directory, writes the
    report and the results; the experiments, and the example files they reference, come from the
    installed package."""
    wheel = _build_wheel(tmp_path / "wheels")

    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = [
        f"netheat/_bundled/{p.relative_to(ROOT).as_posix()}"
        for d in ("experiments", "examples")
        for p in sorted((ROOT / d).rglob("*"))
        if p.suffix in (".toml", ".csv")
    ]
    missing = [n for n in bundled if n not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert not [n for n in names if n.split("/")[0] in ("experiments", "examples")], "top-level data in wheel"

    venv = tmp_path / "venv"
    _check(_run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=120))
    python = venv / "bin" / "python"
    _install(python, wheel)

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", PYTHONNOUSERSITE="1")

    r = _run([python, "-c", "import netheat; print(netheat.__file__)"], timeout=120, cwd=work, env=env)
    _check(r)
    package = Path(r.stdout.strip()).parent
    assert package.is_relative_to(venv), f"netheat imported from {package}"

    r = _run(
        [venv / "bin" / "netheat", "reproduce", "--quick", "--out", "x/", "--workers", "2", EXPERIMENT],
        timeout=600,
        cwd=work,
        env=env,
    )
    _check(r)
    out = work / "x"
    report = (out / "report.html").read_text()
    assert (out / EXPERIMENT / "summary.json").is_file()
    assert (out / EXPERIMENT / "flows.parquet").is_file()
    assert (out / EXPERIMENT / "points.parquet").is_file()
    # The re-run command names the installed file, by absolute path.
    assert f"netheat experiment run {package}/_bundled/experiments/{EXPERIMENT}.toml --out " in report
    # No git checkout around the installed package: provenance says so.
    flows = pq.read_table(out / EXPERIMENT / "flows.parquet", columns=["git_revision"])
    assert set(flows.column(0).to_pylist()) == {"unknown"}
    shutil.rmtree(venv)  # about 250 MB; kept when the test fails
