"""The Ray backend: same results as the local backend; an unreachable address fails fast."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from netheat.cli import main
from netheat.errors import InputError
from netheat.experiments import load_experiment, run_experiment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "experiments" / "example-flow-sim.toml"


def test_ray_equals_local(tmp_path: Path) -> None:
    """The example (quick) on a local Ray instance (2 CPUs) writes the same tables as the process pool."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'netheat[ray]')")
    exp = load_experiment(EXAMPLE, quick=True)
    r = run_experiment(exp, tmp_path / "ray", backend="ray", workers=2, progress=False)
    assert not r.errors
    run_experiment(exp, tmp_path / "local", backend="local", workers=2, progress=False)
    for name in ("flows", "tasks", "points"):
        a, b = (pq.read_table(tmp_path / d / f"{name}.parquet") for d in ("ray", "local"))
        # NaN equal to NaN (a value with no finished sample is NaN in both runs).
        assert a.schema == b.schema, name
        assert json.dumps(a.to_pylist(), default=str) == json.dumps(b.to_pylist(), default=str), name
    assert (tmp_path / "ray" / "summary.json").read_text() == (
        tmp_path / "local" / "summary.json"
    ).read_text()


def test_unreachable_ray_address_fails_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at 127.0.0.1:1: an InputError with the address and a hint, well under 20 s."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'netheat[ray]')")
    exp = load_experiment(EXAMPLE, quick=True)
    t0 = time.monotonic()
    with pytest.raises(InputError) as ei:
        run_experiment(exp, tmp_path / "o", backend="ray", ray_address="127.0.0.1:1", progress=False)
    assert time.monotonic() - t0 < 20
    assert "127.0.0.1:1" in str(ei.value) and "hint:" in str(ei.value)
    assert not (tmp_path / "o" / "points").exists()
    args = ["experiment", "run", str(EXAMPLE), "--out", str(tmp_path / "o"), "--quick"]
    assert main([*args, "--backend", "ray", "--ray-address", "ray://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach Ray at ray://127.0.0.1:1") and "ray start --head" in err
