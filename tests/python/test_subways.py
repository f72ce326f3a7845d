"""The ``subways`` scenario kind, its binding and the ``peak_ratio`` metric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import netheat
from netheat._netheat import subways_shuffle, subways_tor_failure
from netheat.errors import ConfigError, NetheatError
from netheat.experiments import load_experiment, run_experiment

# Two racks of one server with two 10G ports, 5G ToR uplinks (see the Rust tests).
PAIR = (
    'pods = 1\nracks-per-pod = 2\nhosts-per-rack = 1\nhost-link = "10Gbps"\nports-per-host = 2\n'
    'tor-uplink = "5Gbps"\naggs-per-pod = 1\nspines = 1\n'
)


def _topo(tmp_path: Path, name: str, wiring: str) -> Path:
    p = tmp_path / f"{name}.toml"
    loop = "loop-size = 2\n" if wiring != "type0" else ""
    p.write_text(f'[topology]\nkind = "subways"\nwiring = "{wiring}"\n{loop}{PAIR}')
    return p


def test_shortcut_halves_the_pair_shuffle(tmp_path: Path) -> None:
    # 1.25 GB each way: Type 0 crosses the 5G uplinks (2 s), Type 1 shortcuts a shared ToR at 10G (1 s).
    t0 = netheat.load_topology(_topo(tmp_path, "t0", "type0"))
    t1 = netheat.load_topology(_topo(tmp_path, "t1", "type1"))
    for policy in ("ecmp", "adaptive", "detour"):
        assert subways_shuffle(t0, 0, 2, 1.25e9, policy, 1)["completion_s"] == pytest.approx(2.0)
        assert subways_shuffle(t1, 0, 2, 1.25e9, policy, 1)["completion_s"] == pytest.approx(1.0)


def test_unknown_policy_lists_the_known_ones(tmp_path: Path) -> None:
    t1 = netheat.load_topology(_topo(tmp_path, "t1", "type1"))
    with pytest.raises(NetheatError, match="adaptive, detour, ecmp"):
        subways_shuffle(t1, 0, 2, 1e6, "spray", 1)


def test_tor_failure_type0_vs_type1() -> None:
    fabric = Path(__file__).resolve().parents[2] / "experiments" / "topologies" / "subways-fabric.toml"
    t0 = netheat.load_topology(fabric)
    t1 = netheat.Topology.load(fabric, {"wiring": "type1", "loop-size": 12})
    assert subways_tor_failure(t0, 3)["disconnected"] == list(range(45, 60))
    f1 = subways_tor_failure(t1, 3)
    assert f1["disconnected"] == [] and len(f1["degraded"]) == 30


def test_experiment_peak_ratio_is_the_hand_computed_speedup(tmp_path: Path) -> None:
    _topo(tmp_path, "t0", "type0")
    _topo(tmp_path, "t1", "type1")
    exp = tmp_path / "exp.toml"
    exp.write_text(
        '[experiment]\nname = "pair"\nkind = "subways"\n'
        '[base]\ntopology = "t0.toml"\nbytes-per-pair = "1.25GB"\nnodes = 2\n'
        '[[variant]]\nname = "type0"\n'
        '[[variant]]\nname = "type1lb"\ntopology = "t1.toml"\npolicy = "adaptive"\n'
        "[sweep]\nfirst-rack = [0]\n"
        '[[metric]]\nname = "peak"\nkind = "peak_ratio"\nof = "completion_s"\n'
        'numerator = "type0"\ndenominator = "type1lb"\npaper = 2.0\n'
    )
    run_experiment(load_experiment(exp), tmp_path / "run", workers=1, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["peak"]["ours"] == pytest.approx(2.0)
    assert "first-rack=0" in summary["metrics"]["peak"]["note"]


def test_variant_overrides_the_datacenter_file(tmp_path: Path) -> None:
    # The same hand-computed 2x as above, with Type 1 as overrides of the Type 0 file.
    _topo(tmp_path, "t0", "type0")
    exp = tmp_path / "exp.toml"
    head = (
        '[experiment]\nname = "pair"\nkind = "subways"\n'
        '[base]\ntopology = "t0.toml"\nbytes-per-pair = "1.25GB"\nnodes = 2\n'
        '[[variant]]\nname = "type0"\n'
        '[[variant]]\nname = "type1lb"\npolicy = "adaptive"\n"topology.wiring" = "type1"\n'
    )
    metric = (
        '[[metric]]\nname = "speedup"\nkind = "ratio"\nof = "completion_s"\n'
        'numerator = "type0"\ndenominator = "type1lb"\n'
    )
    exp.write_text(head + '"topology.loop-size" = 2\n' + metric)
    run_experiment(load_experiment(exp), tmp_path / "run", workers=1, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["speedup"]["ours"] == pytest.approx(2.0)

    # A misspelt override key: the experiment's own line, the key, and the closest valid key.
    exp.write_text(head + '"topology.loop-sise" = 2\n' + metric)
    with pytest.raises(ConfigError) as e:
        load_experiment(exp)
    assert e.value.key == "variant[1].topology.loop-sise" and e.value.line == 14
    assert "did you mean `loop-size`" in str(e.value)
    # A value the datacenter rejects: located the same way, before any point runs.
    exp.write_text(head + '[sweep]\n"topology.loop-size" = [2, 0]\n' + metric)
    with pytest.raises(ConfigError, match=r"key `sweep.topology.loop-size`: .*loop-size.*=0"):
        load_experiment(exp)
    # Type 1 without its loop size: the override is incomplete, the wiring key says why.
    exp.write_text(head + metric)
    with pytest.raises(ConfigError, match=r"variant\[1\]\.topology\.wiring.*need key `loop-size`"):
        load_experiment(exp)
    # Only kinds that read a datacenter file take topology overrides.
    baraat = exp.read_text().replace('kind = "subways"', 'kind = "baraat"')
    exp.write_text(baraat)
    with pytest.raises(ConfigError, match="unknown parameter"):
        load_experiment(exp)


def test_testbed_experiment_respects_its_bottlenecks(tmp_path: Path) -> None:
    # Table 2 (Subways Sec. 8.2): 192 flows of 100 MB = 153.6 Gb into rack 3.
    # Type 0: through the receiver ToR's 2 x 500 Mbps downlinks, >= 153.6 s;
    # Type 1: through the receivers' 8 x 500 Mbps ports, >= 38.4 s.
    root = Path(__file__).resolve().parents[2] / "experiments"
    exp = load_experiment(root / "subways-testbed.toml", quick=True)
    run_experiment(exp, tmp_path / "run", workers=1, progress=False)
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert m["tail_fct_type0"]["paper"] == pytest.approx(179.1)
    assert m["tail_fct_type0"]["ours"] >= 153.6 - 1e-6
    assert m["tail_fct_type1"]["ours"] >= 38.4 - 1e-6
    assert m["tail_fct_type1"]["ours"] < m["tail_fct_type0"]["ours"] / 2


def test_two_loops_and_into_last_rack_reach_rust(tmp_path: Path) -> None:
    # Two racks of one server (loop of 2): two-loops has no second loop here.
    t1 = netheat.load_topology(str(_topo(tmp_path, "t1", "type1")))
    with pytest.raises(NetheatError, match="two loops"):
        subways_shuffle(t1, 0, 2, 1e6, "ecmp", 1, placement="two-loops")
    with pytest.raises(NetheatError, match="unknown placement"):
        subways_shuffle(t1, 0, 2, 1e6, "ecmp", 1, placement="scattered")
    # Server 0 sends 3 flows of 1.25 GB to server 1 over the shared ToRs:
    # 3.75 GB through its 2 x 10G ports is at least 1.5 s.
    r = subways_shuffle(t1, 0, 2, 1.25e9, "ecmp", 1, pattern="into-last-rack", flows_per_pair=3)
    assert r["flows"] == 3
    assert r["completion_s"] >= 1.5 - 1e-9
