"""netheat.workloads, ``netheat workload generate`` and ``netheat simulate --workload``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import netheat
from netheat.cli import main
from netheat.simulate import simulate
from netheat.workloads import generate

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT.parent / "shared" / "data").resolve()
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
EXAMPLES = ROOT / "examples" / "workloads"

needs_data = pytest.mark.skipif(
    not DEFAULT.is_dir(), reason=f"data directory {DEFAULT} absent (set NETHEAT_DATA to run)"
)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NETHEAT_DATA", raising=False)


def _topology(tmp_path: Path, racks: int, hosts: int) -> Path:
    p = tmp_path / f"dc-{racks}x{hosts}.toml"
    p.write_text(
        f'[topology]\nkind = "two-tier"\nracks = {racks}\nhosts-per-rack = {hosts}\n'
        'host-link = "10Gbps"\ntor-uplink = "10Gbps"\n'
    )
    return p


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "w.toml"
    p.write_text(text)
    return p


def test_offered_load_within_two_percent(tmp_path: Path) -> None:
    # Two-tier: an inter-rack flow crosses exactly one of the 4 ToR uplinks (10 Gbps each).
    w = _write(
        tmp_path,
        '[[traffic]]\nkind = "poisson"\nload = 0.6\nduration = "100s"\n'
        'sizes = { dist = "exponential", mean = "1MB" }\n',
    )
    flows, tasks, _ = generate(netheat.load_topology(TOPO), w, seed=11)
    src = flows.column("src").to_numpy()
    dst = flows.column("dst").to_numpy()
    size = flows.column("bytes").to_numpy()
    load = float(np.sum(size[src // 4 != dst // 4])) * 8 / (4 * 10e9 * 100)
    assert tasks == 0
    assert load == pytest.approx(0.6, rel=0.02)


def test_cli_generate_then_simulate_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = _write(
        tmp_path,
        '[[traffic]]\nkind = "batches"\nk = 5\nbatches = 2\nperiod = "1s"\npattern = "inter-rack"\n'
        'sizes = { dist = "constant", size = "1.25GB" }\n',
    )
    csv = tmp_path / "flows.csv"
    assert main(["workload", "generate", "--topology", str(TOPO), "--workload", str(w), "-o", str(csv)]) == 0
    assert "wrote 10 flows" in capsys.readouterr().out
    res = simulate(netheat.load_topology(TOPO), csv)
    assert res.flows.num_rows == 10
    # 1.25 GB at <= 10 Gbps takes at least 1 s.
    assert float(np.min(res.flows.column("fct_s").to_numpy())) >= 1.0 - 1e-9


def test_memcache_task_time_is_hand_computed(tmp_path: Path) -> None:
    # Alone on the network: 50 B request at 10 Gbps, 10 us service, 1500 B response at 10 Gbps.
    w = _write(tmp_path, '[[app]]\nkind = "memcache"\nrate = 10.0\nduration = "1s"\ntasks = 1\n')
    res = simulate(netheat.load_topology(TOPO), workload=w)
    assert res.tasks is not None and res.tasks.num_rows == 1
    expected = 50 * 8 / 10e9 + 10e-6 + 1500 * 8 / 10e9
    assert res.tasks.column("tct_s")[0].as_py() == pytest.approx(expected, rel=1e-9)
    assert res.tasks.column("kind")[0].as_py() == "memcache"


def test_simulate_workload_writes_tasks_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = [
        "simulate",
        "--topology",
        str(TOPO),
        "--workload",
        str(EXAMPLES / "applications.toml"),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    tasks = pq.read_table(out / "tasks.parquet")
    kinds = set(tasks.column("kind").to_pylist())
    assert kinds == {"partition-aggregate-1", "storage-retrieval", "shuffle", "memcache"}
    assert not np.isnan(tasks.column("tct_s").to_numpy()).any()
    assert "tasks" in capsys.readouterr().out


@needs_data
def test_coflow_on_hosts_reproduces_the_trace_totals(tmp_path: Path) -> None:
    topo = netheat.load_topology(_topology(tmp_path, 150, 2))
    w = _write(tmp_path, '[[traffic]]\nkind = "coflow"\n')
    flows, _, notes = generate(topo, w, seed=3)
    local = sum(float(n.split(": ")[1].split()[0]) for n in notes if "stay local" in n)
    total_mb = (float(np.sum(flows.column("bytes").to_numpy())) + local) / 2**20
    assert total_mb == pytest.approx(35_533_534, abs=1.0)
    # Task id = coflow id (1..526); a coflow whose every pair landed on one host has no flow.
    ids = set(flows.column("task_id").to_pylist())
    assert min(ids) == 1 and max(ids) == 526 and len(ids) > 500
    assert float(np.max(flows.column("start_s").to_numpy())) == pytest.approx(3629.235)


@needs_data
def test_every_example_workload_generates(tmp_path: Path) -> None:
    topo = netheat.load_topology(_topology(tmp_path, 32, 4))
    for f in sorted(EXAMPLES.glob("*.toml")):
        flows, tasks, _ = generate(topo, f, seed=1)
        assert flows.num_rows + tasks > 0, f.name


def test_missing_dataset_says_which_file_where_and_how(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "workload",
        "generate",
        "--topology",
        str(TOPO),
        "--workload",
        str(EXAMPLES / "web-search.toml"),
        "-o",
        str(tmp_path / "f.csv"),
        "--data-dir",
        str(tmp_path / "nowhere"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "web-search.toml" in err and "traffic[0].sizes.cdf" in err
    assert str(tmp_path / "nowhere") in err
    assert "NETHEAT_DATA" in err or "--data-dir" in err
    assert not (tmp_path / "f.csv").exists()


def test_bad_workload_key_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = _write(tmp_path, '[[traffic]]\nkind = "poisson"\nload = 0.5\nduration = "1s"\nrate = 3\n')
    args = [
        "workload",
        "generate",
        "--topology",
        str(TOPO),
        "--workload",
        str(w),
        "-o",
        str(tmp_path / "f.csv"),
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "w.toml:5" in err and "rate" in err and "unknown key" in err
