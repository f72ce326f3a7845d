"""netheat.simulate and `netheat simulate`: hand-computed max-min answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from netheat import InputError, Topology
from netheat.simulate import capacity_seconds, simulate

DC = """
[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"""

THREE = "start_s,src,dst,bytes\n0,r0h0,r1h0,1.25e9\n0,r0h1,r1h1,2.5e9\n0,r0h2,r1h2,3.75e9\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_three_flows_share_one_uplink(tmp_path: Path) -> None:
    # 10 Gbps shared three ways: after 3 s the first (1.25 GB) is done, the
    # second has 2.5 - 1.25 = 1.25 GB left at 5 Gbps -> 5 s, the third 6 s.
    res = simulate(Topology.from_toml(DC), write(tmp_path, "f.csv", THREE))
    assert res.flows.column("finish_s").to_pylist() == pytest.approx([3.0, 5.0, 6.0], rel=1e-9)
    assert res.stats["completed"] == 3
    links = res.links
    # tor0's uplink (tor0 -> core) is full for 6 one-second windows.
    m = (links.column("src_node").to_numpy(zero_copy_only=False) == "tor0") & (
        links.column("dst_node").to_numpy(zero_copy_only=False) == "core"
    )
    util = links.column("utilization").to_numpy()[m]
    assert util == pytest.approx([1.0] * 6)
    # Every directed link appears in every window.
    topo = Topology.from_toml(DC)
    assert links.num_rows == topo.num_links * 6


def test_columns_input_and_windows() -> None:
    # One 1.25 GB flow at 10 Gbps starting at 0.5 s: half of window 0, half of window 1.
    flows = {"start_s": [0.5], "src": ["r0h0"], "dst": [5], "bytes": [1.25e9]}
    res = simulate(Topology.from_toml(DC), flows, window="1s")
    assert res.flows.column("fct_s").to_pylist() == pytest.approx([1.0])
    host_up = res.links.filter(
        res.links.column("link").to_numpy() == 0  # r0h0's uplink is link 0
    )
    assert host_up.column("utilization").to_pylist() == pytest.approx([0.5, 0.5])


def test_priorities_weights_caps(tmp_path: Path) -> None:
    csv = (
        "flow_id,start_s,src,dst,bytes,priority,weight,rate_cap_bps\n"
        # Same uplink: priority 0 capped at 4 Gbps, priority 1 gets the other 6.
        "10,0,r0h0,r1h0,0.5e9,0,1,4e9\n"
        "11,0,r0h1,r1h1,0.75e9,1,1,\n"
        # Another rack: weights 2:1 on one uplink -> 20/3 and 10/3 Gbps.
        "20,0,r2h0,r3h0,2.5e9,0,2,\n"
        "21,0,r2h1,r3h1,2.5e9,0,1,\n"
    )
    res = simulate(Topology.from_toml(DC), write(tmp_path, "f.csv", csv))
    fin = dict(
        zip(res.flows.column("flow_id").to_pylist(), res.flows.column("finish_s").to_pylist(), strict=True)
    )
    # 0.5 GB at 4 Gbps = 1 s; 0.75 GB at 6 Gbps = 1 s.
    assert fin[10] == pytest.approx(1.0)
    assert fin[11] == pytest.approx(1.0)
    # 2.5 GB at 20/3 Gbps = 3 s; then flow 21 has 2.5 - 1.25 = 1.25 GB left at 10 Gbps: 1 s more.
    assert fin[20] == pytest.approx(3.0)
    assert fin[21] == pytest.approx(4.0)


def test_capacity_events_are_replayed(tmp_path: Path) -> None:
    incident = DC + '\n[[events]]\nat = "1s"\naction = "scale"\nfactor = 0.5\nracks = [0]\n'
    flows = {"start_s": [0.0], "src": [0], "dst": [4], "bytes": [2.5e9]}
    # 1 s at 10 Gbps (1.25 GB), then 1.25 GB at 5 Gbps: 2 s more.
    res = simulate(Topology.from_toml(incident), flows)
    assert res.flows.column("finish_s").to_pylist() == pytest.approx([3.0])
    # Utilization is measured against the capacity in force: the halved
    # uplink carrying 5 Gbps is full, not 50% used.
    uplink = res.links.filter(
        pc.and_(
            pc.equal(res.links.column("src_node"), "tor0"), pc.equal(res.links.column("dst_node"), "core")
        )
    )
    assert uplink.column("utilization").to_pylist() == pytest.approx([1.0, 1.0, 1.0])
    assert uplink.column("capacity_bps").to_pylist() == pytest.approx([10e9, 5e9, 5e9])
    outage = (
        DC
        + '\n[[events]]\nat = "1s"\naction = "fail"\nracks = [0]\n'
        + '\n[[events]]\nat = "2s"\naction = "restore"\nracks = [0]\n'
    )
    # Stranded during [1, 2): finishes at 3 s; it was never dropped.
    res = simulate(Topology.from_toml(outage), flows)
    assert res.flows.column("finish_s").to_pylist() == pytest.approx([3.0])


def test_deterministic_for_a_seed(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 300
    flows = {
        "start_s": np.sort(rng.uniform(0, 1, n)).tolist(),
        "src": rng.integers(0, 16, n).tolist(),
        "dst": rng.integers(0, 16, n).tolist(),
        "bytes": rng.uniform(1e5, 1e8, n).tolist(),
    }
    topo = Topology.load(Path(__file__).parents[2] / "examples/topologies/subways-type1.toml")
    a = simulate(topo, flows, seed=5)
    b = simulate(topo, flows, seed=5)
    assert a.flows.equals(b.flows)
    assert a.links.equals(b.links)


def test_simulate_is_a_scenario_run_with_no_policy(tmp_path: Path) -> None:
    # The same flows (priorities, weights, a cap, task ids) through `simulate` and through a
    # scenario replaying them with no policy: one engine loop, so the same tables to the bit.
    from netheat.scenario import Scenario

    rng = np.random.default_rng(11)
    n = 400
    csv = tmp_path / "flows.csv"
    rows = ["start_s,src,dst,bytes,task_id,priority,weight,rate_cap_bps"]
    # Sorted by start, the first at 0: a replayed trace is renumbered in start order and shifted
    # to start at its `offset` (0); the CSV keeps its row order and times.
    starts = np.sort(rng.uniform(0, 0.5, n))
    starts -= starts[0]
    for i in range(n):
        src, dst = rng.choice(16, size=2, replace=False)
        cap = "2e9" if i % 7 == 0 else ""
        task = str(i % 25) if i % 3 else ""
        size = rng.uniform(1e4, 5e7)
        rows.append(f"{starts[i]:.6f},{src},{dst},{size:.0f},{task},{i % 3},{1 + i % 2},{cap}")
    csv.write_text("\n".join(rows) + "\n")
    dc = Path(__file__).parents[2] / "examples/topologies/two-tier-4x4.toml"
    a = simulate(Topology.load(dc), str(csv), window="50ms", seed=4)
    text = f"""
[scenario]
seed = 4
window = "50ms"
[topology]
file = "{dc}"
[[workload.traffic]]
kind = "replay"
file = "{csv}"
"""
    b = Scenario.from_text(text, tmp_path).run()
    assert a.flows.num_rows == n and a.stats["completed"] == n
    for col in ("flow_id", "src", "dst", "bytes", "start_s", "finish_s", "fct_s", "priority"):
        assert a.flows.column(col).to_numpy().tolist() == b.flows.column(col).to_numpy().tolist(), col
    # A flow without a task has a null task_id in both.
    assert a.flows.column("task_id").to_pylist() == b.flows.column("task_id").to_pylist()
    assert b.flows.column("task_id").null_count == sum(1 for i in range(n) if not i % 3)
    util = b.links.column("utilization").to_numpy()
    assert np.array_equal(a.links.column("utilization").to_numpy(), util)
    # Trace tasks: the 25 task ids, each spanning its flows (a third of the flows carry none).
    assert a.tasks is not None and a.tasks.num_rows == 25
    assert a.tasks.column("task_id").to_pylist() == b.tasks.column("task_id").to_pylist()
    assert set(a.tasks.column("kind").to_pylist()) == {"trace"}
    assert sum(a.tasks.column("flows").to_pylist()) == sum(1 for i in range(n) if i % 3)


def test_bad_rows_exit_2_and_write_nothing(tmp_path: Path) -> None:
    topo = write(tmp_path, "dc.toml", DC)
    cases = {
        "columns": ("start_s,src,dst,bytes\n0,1,2\n", "bad.csv:2: 3 columns, but the header has 4"),
        "negative": (
            "start_s,src,dst,bytes\n0,1,2,5\n0,1,2,-5\n",
            "bad.csv:3: column `bytes`: size -5 is negative",
        ),
        "host": ("start_s,src,dst,bytes\n0,1,r7h0,5\n", "bad.csv:2: column `dst`: unknown host `r7h0`"),
        "start": (
            "start_s,src,dst,bytes\nnoon,1,2,5\n",
            "bad.csv:2: column `start_s`: `noon` is not a number",
        ),
    }
    for name, (text, message) in cases.items():
        flows = write(tmp_path, "bad.csv", text)
        out = tmp_path / f"out-{name}"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "netheat.cli",
                "simulate",
                "--topology",
                str(topo),
                "--flows",
                str(flows),
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 2, r.stderr
        assert message in r.stderr
        assert "Traceback" not in r.stderr
        assert not out.exists()
        assert not any(p.name.startswith(f".{out.name}") for p in tmp_path.iterdir())


def test_cli_writes_tables(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "netheat.cli",
            "simulate",
            "--topology",
            str(write(tmp_path, "dc.toml", DC)),
            "--flows",
            str(write(tmp_path, "f.csv", THREE)),
            "--out",
            str(out),
            "--window",
            "500ms",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "3 (3 completed, 0 stranded)" in r.stdout
    flows = pq.read_table(out / "flows.parquet")
    assert flows.column_names == [
        "flow_id",
        "src",
        "dst",
        "bytes",
        "start_s",
        "finish_s",
        "fct_s",
        "task_id",
        "priority",
        "path_id",
    ]
    links = pq.read_table(out / "links.parquet")
    assert links.column_names == [
        "link",
        "layer",
        "direction",
        "src_node",
        "dst_node",
        "capacity_bps",
        "window_start_s",
        "window_end_s",
        "utilization",
        "background",
    ]
    assert links.column("window_end_s").to_numpy().max() == pytest.approx(6.0)
    assert flows.schema.metadata[b"netheat_version"]


def test_dense_mode_gives_the_same_answer(tmp_path: Path) -> None:
    # Forced dense mode (one class per heavy-link set, one rate per
    # bottleneck group) gives the hand-computed 3, 5, 6 s and the same link
    # utilization as the local repair; `off` never enters it.
    topo = Topology.from_toml(DC)
    csv = write(tmp_path, "f.csv", THREE)
    off = simulate(topo, csv, dense="off")
    on = simulate(topo, csv, dense="always")
    assert off.stats["dense_instants"] == 0
    assert on.stats["dense_instants"] > 0
    assert on.flows.column("finish_s").to_pylist() == pytest.approx([3.0, 5.0, 6.0], rel=1e-9)
    u_off = off.links.column("utilization").to_numpy()
    u_on = on.links.column("utilization").to_numpy()
    assert np.allclose(u_off, u_on, rtol=1e-9, atol=1e-12)
    with pytest.raises(InputError, match="unknown dense mode `sometimes`; known: auto, off, always"):
        simulate(topo, csv, dense="sometimes")


def test_bad_arguments() -> None:
    topo = Topology.from_toml(DC)
    with pytest.raises(InputError, match="invalid duration"):
        simulate(topo, {"start_s": [0], "src": [0], "dst": [1], "bytes": [1]}, window="1 fortnight")
    with pytest.raises(InputError, match="unknown host"):
        simulate(topo, {"start_s": [0], "src": [0], "dst": [99], "bytes": [1]})


def test_capacity_integral_with_a_mid_window_change() -> None:
    dc = DC + '\n[[events]]\nat = "1.5s"\naction = "set"\ncapacity = "5Gbps"\nracks = [2]\n'
    topo = Topology.from_toml(dc)
    bits = capacity_seconds(topo, 3, 1.0)
    # Both directions of rack 2's uplink: 10 Gb, then 0.5 s x 10 + 0.5 s x 5, then 5 Gb.
    assert len(bits) == 2
    for v in bits.values():
        assert v.tolist() == pytest.approx([10e9, 7.5e9, 5e9])
