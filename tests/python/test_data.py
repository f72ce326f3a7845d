"""netheat.data and ``netheat data``: data directory, registry, checksums, loaders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from netheat import data
from netheat.cli import main
from netheat.errors import DataError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT.parent / "shared" / "data").resolve()
SMALL = "cdf-dctcp-hkust"
SMALL_PATH = "hkust_trafficgenerator/DCTCP_CDF.txt"
OTHER = "cdf-vl2-hkust"

needs_data = pytest.mark.skipif(
    not DEFAULT.is_dir(), reason=f"data directory {DEFAULT} absent (set NETHEAT_DATA to run)"
)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without NETHEAT_DATA so the default applies."""
    monkeypatch.delenv("NETHEAT_DATA", raising=False)


def _copy(tmp_path: Path, modify: bool) -> Path:
    """A data dir holding one copy of the small HKUST CDF, optionally altered (still a valid CDF)."""
    text = (DEFAULT / SMALL_PATH).read_text()
    if modify:
        text = text.replace("0.15", "0.16")
    dst = tmp_path / "data" / SMALL_PATH
    dst.parent.mkdir(parents=True)
    dst.write_text(text)
    return tmp_path / "data"


# ------------------------------------------------------------ data directory


@needs_data
def test_default_is_shared_data_next_to_the_project_root() -> None:
    info = data.resolve_data_dir()
    assert (info.path, info.source, info.exists) == (DEFAULT, "default", True)
    assert str(ROOT) in info.description
    assert data.data_dir() == DEFAULT


def test_flag_beats_env_beats_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir, flag_dir = tmp_path / "env", tmp_path / "flag"
    monkeypatch.setenv("NETHEAT_DATA", str(env_dir))
    info = data.resolve_data_dir()
    assert (info.path, info.source) == (env_dir, "env")
    info = data.resolve_data_dir(flag_dir)
    assert (info.path, info.source) == (flag_dir, "flag")
    monkeypatch.setenv("NETHEAT_DATA", "")
    assert data.resolve_data_dir().source == "default"


# ------------------------------------------------------------ CLI: list


@needs_data
def test_list_shows_every_dataset_present(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert f"data directory: {DEFAULT}" in out
    for name in ["coflow-fb2010", "cdf-websearch-hpcc", "tm-cluster-a", "cloudsimpy-jobs"]:
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert "present" in line
    assert "137.7 KB" in out
    assert "0 missing, 0 checksum mismatches" in out


def test_list_with_missing_dir_marks_all_missing_and_says_how_to_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["data", "list", "--data-dir", str(missing)]) == 0
    cap = capsys.readouterr()
    assert f"{missing} [does not exist] (the --data-dir flag)" in cap.out
    assert "coflow-fb2010" in cap.out and " 0 present" in cap.out
    assert str(missing) in cap.err and "NETHEAT_DATA=DIR" in cap.err


@needs_data
def test_list_reports_checksum_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _copy(tmp_path, modify=True)
    assert main(["data", "--data-dir", str(d), "list"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith(SMALL + " "))
    assert "checksum-mismatch" in line
    assert "1 checksum mismatches" in out


# ------------------------------------------------------------ CLI: check


@needs_data
def test_check_all_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check"]) == 0
    out = capsys.readouterr().out
    assert "ok        coflow-fb2010" in out
    assert "40 verified, 0 missing, 0 checksum mismatches" in out


@needs_data
def test_check_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "coflow-fb2010", SMALL]) == 0
    assert "2 verified" in capsys.readouterr().out


def test_check_unknown_name_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "no-such-dataset"]) == 2
    err = capsys.readouterr().err
    assert "unknown dataset `no-such-dataset`" in err or "does not exist" in err


def test_check_missing_dir_exits_2_with_where_and_how(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    assert main(["data", "check", "--data-dir", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"data directory {missing} does not exist" in err
    assert "chosen by the --data-dir flag" in err
    assert "--data-dir DIR or NETHEAT_DATA=DIR" in err


def test_check_missing_dir_from_env_says_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NETHEAT_DATA", str(tmp_path / "from-env"))
    assert main(["data", "check"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "from-env") in err and "NETHEAT_DATA environment variable" in err


@needs_data
def test_flag_overrides_env_in_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NETHEAT_DATA", str(tmp_path / "bad-env"))
    assert main(["data", "check", SMALL, "--data-dir", str(DEFAULT)]) == 0
    assert "(the --data-dir flag)" in capsys.readouterr().out


@needs_data
def test_env_overrides_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NETHEAT_DATA", str(_copy(tmp_path, modify=False)))
    assert main(["data", "check"]) == 0
    out = capsys.readouterr().out
    assert "NETHEAT_DATA environment variable" in out
    assert "1 verified, 39 missing" in out
    # Named but missing is an error naming the file, the directory and the fix.
    assert main(["data", "check", SMALL, OTHER]) == 2
    cap = capsys.readouterr()
    assert f"dataset `{OTHER}` is missing: no file hkust_trafficgenerator/VL2_CDF.txt" in cap.err
    assert str(tmp_path / "data") in cap.err and "NETHEAT_DATA=DIR" in cap.err


@needs_data
def test_check_mismatch_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _copy(tmp_path, modify=True)
    assert main(["data", "check", "--data-dir", str(d)]) == 2
    cap = capsys.readouterr()
    assert f"MISMATCH  {SMALL}" in cap.out
    assert "checksum mismatch" in cap.err and str(d / SMALL_PATH) in cap.err


@needs_data
def test_loader_refuses_a_mismatched_file(tmp_path: Path) -> None:
    d = _copy(tmp_path, modify=True)
    with pytest.raises(DataError, match="checksum mismatch"):
        data.load_cdf(SMALL, data_dir=d)
    _sizes, probs = data.load_cdf(SMALL, data_dir=_copy(tmp_path / "ok", modify=False))
    assert probs[1] == 0.15


def test_loader_missing_file_message(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError) as e:
        data.load_cdf(SMALL, data_dir=tmp_path / "empty")
    msg = str(e.value)
    assert SMALL_PATH in msg and str(tmp_path / "empty") in msg and "--data-dir" in msg


def test_cli_subprocess_exit_code(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "netheat.cli", "data", "check", "--data-dir", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2
    assert r.stderr.startswith("error: data directory")


# ------------------------------------------------------------ loaders


@needs_data
def test_load_cdf_arrays() -> None:
    sizes, probs = data.load_cdf("cdf-websearch-hpcc")
    assert sizes.dtype == np.float64 and probs.dtype == np.float64
    assert sizes[-1] == 30e6 and probs[-1] == 1.0
    assert np.all(np.diff(sizes) > 0) and np.all(np.diff(probs) >= 0)


@needs_data
def test_load_coflows_reproduces_totals() -> None:
    t = data.load_coflows()
    assert t.num_rows == 526
    assert sum(t.column("shuffle_mb").to_pylist()) == 35_533_534.0
    arrivals = t.column("arrival_ms").to_pylist()
    assert (min(arrivals), max(arrivals)) == (0, 3_629_235)
    assert t.schema.metadata[b"racks"] == b"150"
    assert t.column("reducer_racks").to_pylist()[0] == [65]


@needs_data
def test_load_traffic_matrix() -> None:
    m = data.load_traffic_matrix("tm-cluster-a")
    assert m.matrix.shape == (155, 155) and m.n_racks == 155
    assert len(m.pods) == 4 and sum(len(r) for r in m.pods.values()) == 155
    assert m.matrix.sum() == 47_876_518
    assert m.rack_pod.shape == (155,)


@needs_data
def test_load_jobs_and_tables() -> None:
    jobs = data.load_jobs()
    assert jobs.num_rows == 31_756 and "submit_time_s" in jobs.column_names
    pods = data.load_jobs("alibaba-gpu-v2023-pods")
    assert pods.num_rows == 8_152 and pods.column("scheduled_time_s").null_count == 897
    meta = data.load_table("alibaba-v2018-machine-meta")
    assert len(set(meta.column("machine_id").to_pylist())) == 4_034
    with pytest.raises(DataError, match="not a job trace"):
        data.load_jobs("alibaba-v2018-machine-meta")
    with pytest.raises(DataError, match="not a table"):
        data.load_table("coflow-fb2010")


def test_registry_lists_provenance() -> None:
    rows = {r["name"]: r for r in data.list_datasets(data_dir="/nonexistent-netheat-data")}
    fb = rows["coflow-fb2010"]
    assert fb["repo"] == "coflow/coflow-benchmark" and fb["commit"] == "90fc587167b8"
    assert fb["sha256"].startswith("cdd0d94d") and fb["status"] == "missing"
    assert fb["url"].startswith("https://github.com/coflow/coflow-benchmark/blob/")
