"""Subways shuffle jobs as scenarios (the ``shuffle-job`` workload app under each
routing policy), the ToR-failure binding and the ``peak_ratio`` metric."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

import netheat
from netheat._netheat import subways_tor_failure
from netheat.errors import ConfigError, NetheatError
from netheat.experiments import load_experiment, run_experiment
from netheat.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]

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


def _scenario(tmp_path: Path, topo: str, job: str = 'nodes = 2\nbytes-per-pair = "1.25GB"\n') -> Path:
    """A scenario of one shuffle job on datacenter file ``topo`` under vanilla Subways ECMP."""
    p = tmp_path / "shuffle.toml"
    p.write_text(
        f'[topology]\nfile = "{topo}"\n[workload]\n[[workload.app]]\nkind = "shuffle-job"\n{job}'
        '[routing]\npolicy = "subways-ecmp"\n'
    )
    return p


def _completion(scn: Scenario) -> float:
    tct = scn.run().tasks.column("tct_s").to_pylist()
    assert len(tct) == 1
    return float(tct[0])


def test_shortcut_halves_the_pair_shuffle(tmp_path: Path) -> None:
    # 1.25 GB each way: Type 0 crosses the 5G uplinks (2 s), Type 1 shortcuts a shared ToR at 10G (1 s).
    _topo(tmp_path, "t0", "type0")
    _topo(tmp_path, "t1", "type1")
    scn = Scenario.from_toml(_scenario(tmp_path, "t0.toml"))
    for policy in ("subways-ecmp", "ecmp", "adaptive", "detour"):
        s = scn.with_overrides({"routing.policy": policy})
        assert _completion(s) == pytest.approx(2.0)
        assert _completion(s.with_overrides({"topology.file": "t1.toml"})) == pytest.approx(1.0)


def test_unknown_policy_lists_the_known_ones(tmp_path: Path) -> None:
    _topo(tmp_path, "t1", "type1")
    scn = Scenario.from_toml(_scenario(tmp_path, "t1.toml")).with_overrides({"routing.policy": "spray"})
    with pytest.raises(NetheatError, match="subways-ecmp"):
        scn.run()


def test_tor_failure_type0_vs_type1() -> None:
    fabric = Path(__file__).resolve().parents[2] / "experiments" / "topologies" / "subways-fabric.toml"
    t0 = netheat.load_topology(fabric)
    t1 = netheat.Topology.load(fabric, {"wiring": "type1", "loop-size": 12})
    assert subways_tor_failure(t0, 3)["disconnected"] == list(range(45, 60))
    f1 = subways_tor_failure(t1, 3)
    assert f1["disconnected"] == [] and len(f1["degraded"]) == 30


def _type0_vs_type1lb(tmp_path: Path, base: str, tail: str) -> Path:
    """An experiment over the shuffle scenario: Type 0 against Type 1 (loop of 2) with adaptive balancing."""
    _topo(tmp_path, "t0", "type0")
    _topo(tmp_path, "t1", "type1")
    _scenario(tmp_path, "t0.toml")
    exp = tmp_path / "exp.toml"
    exp.write_text(
        '[experiment]\nname = "pair"\nkind = "scenario"\n'
        '[base]\nscenario = "shuffle.toml"\n' + base + '[[variant]]\nname = "type0"\n'
        '[[variant]]\nname = "type1lb"\n"topology.file" = "t1.toml"\n"routing.policy" = "adaptive"\n' + tail
    )
    return exp


def test_experiment_peak_ratio_is_the_hand_computed_speedup(tmp_path: Path) -> None:
    exp = _type0_vs_type1lb(
        tmp_path,
        "",
        '[sweep]\n"workload.app.0.first-rack" = [0]\n'
        '[[metric]]\nname = "peak"\nkind = "peak_ratio"\nof = "tct_max_s"\n'
        'numerator = "type0"\ndenominator = "type1lb"\npaper = 2.0\n',
    )
    run_experiment(load_experiment(exp), tmp_path / "run", workers=1, progress=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["peak"]["ours"] == pytest.approx(2.0)
    assert "workload.app.0.first-rack=0" in summary["metrics"]["peak"]["note"]


def test_variant_overrides_the_datacenter_file(tmp_path: Path) -> None:
    # The same hand-computed 2x as above, with Type 1 as overrides of the Type 0 file.
    _topo(tmp_path, "t0", "type0")
    _scenario(tmp_path, "t0.toml")
    exp = tmp_path / "exp.toml"
    head = (
        '[experiment]\nname = "pair"\nkind = "scenario"\n'
        '[base]\nscenario = "shuffle.toml"\n'
        '[[variant]]\nname = "type0"\n'
        '[[variant]]\nname = "type1lb"\n"routing.policy" = "adaptive"\n"topology.wiring" = "type1"\n'
    )
    metric = (
        '[[metric]]\nname = "speedup"\nkind = "ratio"\nof = "tct_max_s"\n'
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
    assert e.value.key == "variant[1].topology.loop-sise" and e.value.line == 12
    assert "did you mean `loop-size`" in str(e.value)
    # A value the datacenter rejects: located the same way, before any point runs.
    exp.write_text(head + '[sweep]\n"topology.loop-size" = [2, 0]\n' + metric)
    with pytest.raises(ConfigError, match=r"sweep.topology.loop-size.*loop-size"):
        load_experiment(exp)
    # Type 1 without its loop size: the override is incomplete, the wiring key says why.
    exp.write_text(head + metric)
    with pytest.raises(ConfigError, match=r"variant\[1\]\.topology\.wiring.*need key `loop-size`"):
        load_experiment(exp)


def test_a_failed_tor_from_time_0_strands_the_job(tmp_path: Path) -> None:
    # Type 0, ToR 1 down from the start (a variant's `events`): its server
    # loses both ports, so both flows of the 2-server job are stranded and
    # the job never completes; Type 1 (loop of 2) keeps a port on ToR 0 for
    # each server: 1.25 GB each way through it at 10G, 1 s.
    exp = _type0_vs_type1lb(
        tmp_path,
        'events = [{ at = "0s", nodes = ["tor1"], action = "fail" }]\n',
        '[[metric]]\nname = "stranded [type0]"\nkind = "stats.stranded"\nvariant = "type0"\n'
        '[[metric]]\nname = "completion [type0]"\nkind = "tct_max_s"\nvariant = "type0"\n'
        '[[metric]]\nname = "completion [type1lb]"\nkind = "tct_max_s"\nvariant = "type1lb"\n',
    )
    run_experiment(load_experiment(exp), tmp_path / "run", workers=1, progress=False)
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert m["stranded [type0]"]["ours"] == 2
    assert m["completion [type0]"]["ours"] is None or math.isnan(m["completion [type0]"]["ours"])
    assert m["completion [type1lb]"]["ours"] == pytest.approx(1.0)


def test_testbed_experiment_respects_its_bottlenecks(tmp_path: Path) -> None:
    # Table 2 (Subways Sec. 8.2): 192 flows of 100 MB = 153.6 Gb into rack 3.
    # Type 0: through the receiver ToR's 2 x 500 Mbps downlinks, >= 153.6 s;
    # Type 1: through the receivers' 8 x 500 Mbps ports, >= 38.4 s.
    root = Path(__file__).resolve().parents[2] / "experiments"
    exp = load_experiment(root / "subways-testbed.toml", quick=True)
    # The packet-engine points (about 50 s) run in `make demo`, not here.
    exp = replace(
        exp,
        variants=[v for v in exp.variants if not v.name.endswith("-packet")],
        metrics=[m for m in exp.metrics if not m.name.endswith("_packet")],
    )
    run_experiment(exp, tmp_path / "run", workers=1, progress=False)
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert m["tail_fct_type0"]["paper"] == pytest.approx(179.1)
    assert m["tail_fct_type0"]["ours"] >= 153.6 - 1e-6
    # Type 1 under section 8.2's shortest paths and under section 4.2's vanilla rule.
    for name in ("tail_fct_type1", "tail_fct_type1_vanilla"):
        assert m[name]["paper"] == pytest.approx(47.5)
        assert m[name]["ours"] >= 38.4 - 1e-6
        assert m[name]["ours"] < m["tail_fct_type0"]["ours"] / 2


def test_two_loops_and_into_last_rack(tmp_path: Path) -> None:
    # Two racks of one server (loop of 2): two-loops has no second loop here.
    _topo(tmp_path, "t1", "type1")
    scn = Scenario.from_toml(_scenario(tmp_path, "t1.toml"))
    with pytest.raises(NetheatError, match="two loops"):
        scn.with_overrides({"workload.app.0.placement": "two-loops"}).run()
    with pytest.raises(ConfigError, match="unknown placement `scattered`"):
        scn.with_overrides({"workload.app.0.placement": "scattered"}).run()
    # Server 0 sends 3 flows of 1.25 GB to server 1 over the shared ToRs:
    # 3.75 GB through its 2 x 10G ports is at least 1.5 s.
    s = scn.with_overrides({"workload.app.0.pattern": "into-last-rack", "workload.app.0.flows-per-pair": 3})
    res = s.run()
    assert res.flows.num_rows == 3
    assert res.tasks.column("tct_s").to_pylist()[0] >= 1.5 - 1e-9


def test_figure_8_loop_of_3_sends_what_the_hand_count_says_up_its_tors() -> None:
    """Figure 8's 90-server shuffle (6 racks of 15, 15 MB a pair) with loops of 3 racks: the bytes
    the job's ToRs send up to the aggregation layer, against the hand count, and the bounds they
    give. Every two racks of a loop share one ToR. Shortest paths send only the traffic to the
    other loop up: 90 x 45 x 15 MB = 60.75 GB. Section 4.2's vanilla rule hashes a connection
    over the sender's 2 ToRs, so half of the other-rack traffic inside a loop goes up too:
    + 90 x 30 x 15 MB / 2 = 81.0 GB expected (2,700 flows of 15 MB, each up with probability
    1/2: sd 0.39 GB). Type 0 sends everything that leaves a rack: 90 x 75 x 15 MB = 101.25 GB.
    Through 60 Gbit/s a ToR (5:1), the job takes at least 101.25 GB / 360 Gbit/s = 2.25 s under
    Type 0, 81.0 / 360 = 1.80 s under vanilla and 60.75 / 360 = 1.35 s on shortest paths: the
    paper's 1.64x at l = 3 needs the shortcuts (1.67x at best), vanilla gives 1.25x at best."""
    import polars as pl

    base = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "subways-shuffle.toml").with_overrides(
        {"workload.app.0.nodes": 90, "workload.app.0.bytes-per-pair": "15MB", "workload.app.0.first-rack": 0}
    )
    loop3 = {"topology.wiring": "type1", "topology.loop-size": 3}
    cases = {
        "type0": ({"routing.policy": "subways-ecmp"}, 101.25e9, 0.0),
        "vanilla": ({**loop3, "routing.policy": "subways-ecmp"}, 81.0e9, 3 * 0.39e9),
        "shortest": ({**loop3, "routing.policy": "ecmp"}, 60.75e9, 0.0),
    }
    times = {}
    for name, (over, want, tol) in cases.items():
        r = base.with_overrides(over).run()
        links = pl.from_arrow(r.links)
        up = links.filter(
            (pl.col("layer") == "tor-agg")
            & (pl.col("direction") == "up")
            & pl.col("src_node").cast(pl.String).is_in([f"tor{i}" for i in range(6)])
        )
        sent = float(
            (up["utilization"] * up["capacity_bps"] * (up["window_end_s"] - up["window_start_s"])).sum() / 8
        )
        assert sent == pytest.approx(want, abs=tol + 1e-6 * want), name
        (t,) = r.tasks.column("tct_s").to_pylist()
        assert t >= sent / (6 * 60e9 / 8) * (1 - 1e-9), name
        times[name] = t
    assert times["shortest"] < times["vanilla"] < times["type0"]
