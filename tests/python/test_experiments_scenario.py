"""The generic `scenario` experiment kind: a scenario file plus [[variant]] overrides and a [sweep]
over its dotted keys, with metrics declared in the file.

Numbers are derived by hand on two racks of two hosts: a 1 GB and a 3 GB
flow from rack 0 to rack 1 start together and share rack 0's ToR uplink.
At 8 Gbit/s, fair sharing gives 4 Gbit/s each until the 1 GB flow ends at
2 s, then the 3 GB flow alone ends at 4 s; FIFO sends them one after the
other: 1 s and 4 s. At 4 Gbit/s every time doubles. Both flows cross rack
0's uplink, so it is full in every 1 s window and rack 1's is idle: half
of the ToR-windows are hot.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from netheat.cli import main
from netheat.errors import ConfigError
from netheat.experiments import load_experiment, run_experiment
from netheat.experiments.registry import get_kind
from netheat.experiments.runner import PROVENANCE, expand_points
from netheat.experiments.scenario import SCOPE

ROOT = Path(__file__).resolve().parents[2]

FLOWS = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,0\n1,3,3000000000,0,1\n"

SCENARIO = """[scenario]
seed = 3

[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "8Gbps"
tor-uplink = "8Gbps"

[workload]
[[workload.traffic]]
kind = "replay"
file = "flows.csv"
"""

EXPERIMENT = """[experiment]
name = "fifo-vs-fair"
kind = "scenario"
seeds = [5]

[base]
scenario = "scn/s.toml"
"scheduling.policy" = "fair-share"

[[variant]]
name = "fair"

[[variant]]
name = "fifo"
"scheduling.policy" = "fifo"

[sweep]
"topology.tor-uplink" = ["8Gbps", "4Gbps"]

[[metric]]
name = "p99 ratio"
kind = "ratio"
of = "fct_p99_s"
numerator = "fifo"
denominator = "fair"

[[metric]]
name = "mean ratio at 8G"
kind = "ratio"
of = "fct_mean_s"
numerator = "fifo"
denominator = "fair"
where = { "topology.tor-uplink" = "8Gbps" }

[[metric]]
name = "trace p99 [fifo]"
kind = "trace.tct_p99_s"
variant = "fifo"

[[metric]]
name = "hot [fair]"
kind = "hot_tor_share"
variant = "fair"

[[metric]]
name = "completed [fair]"
kind = "stats.completed"
variant = "fair"
"""


def _write(tmp_path: Path, text: str = EXPERIMENT) -> Path:
    scn = tmp_path / "scn"
    scn.mkdir(exist_ok=True)
    (scn / "flows.csv").write_text(FLOWS)
    (scn / "s.toml").write_text(SCENARIO)
    f = tmp_path / "exp.toml"
    f.write_text(text)
    return f


def test_open_keys_are_parameters(tmp_path: Path) -> None:
    """Any dotted scenario key is a parameter of the kind, in [base], variants, [sweep] and [quick]."""
    text = EXPERIMENT + '\n[quick]\n"scenario.duration" = "3s"\n'
    exp = load_experiment(_write(tmp_path, text))
    points = expand_points(exp)
    assert [(p.variant, p.label, p.seed) for p in points] == [
        ("fair", "topology.tor-uplink=8Gbps", 5),
        ("fifo", "topology.tor-uplink=8Gbps", 5),
        ("fair", "topology.tor-uplink=4Gbps", 5),
        ("fifo", "topology.tor-uplink=4Gbps", 5),
    ]
    assert points[1].params == {
        "scenario": str(tmp_path / "scn" / "s.toml"),
        "scheduling.policy": "fifo",
        "topology.tor-uplink": "8Gbps",
    }
    assert len({p.hash for p in points}) == 4
    quick = expand_points(load_experiment(tmp_path / "exp.toml", quick=True))
    assert quick[0].params["scenario.duration"] == "3s"
    assert quick[0].hash != points[0].hash
    # The kind's open parameters do not open the other kinds'.
    assert not get_kind("flow-sim").open_params and get_kind("scenario").open_params


POLICY = '"scheduling.policy" = "fair-share"'
UPLINK = '"topology.tor-uplink" = ['


@pytest.mark.parametrize(
    ("old", "new", "key", "words"),
    [
        # A misspelt key in a variant: the Rust reader's reason, keyed by where it is written.
        ('"scheduling.policy" = "fifo"', '"scheduling.polcy" = "fifo"', "variant[1].scheduling.polcy",
         ["did you mean `policy`"]),
        # A misspelt key in the sweep.
        (UPLINK, '"topology.tor-uplnk" = [', "sweep.topology.tor-uplnk", ["did you mean `tor-uplink`"]),
        # A bad value at one sweep point only.
        ('"4Gbps"]', '"fast"]', "sweep.topology.tor-uplink", ["fast", "topology.tor-uplink='fast'"]),
        # A bad value in [base].
        (POLICY, '"scheduling.policy" = "fair"', "base.scheduling.policy", ["fair-share"]),
        # The point's seed is the experiment's.
        (POLICY, '"scenario.seed" = 1', "base.scenario.seed", ["seeds"]),
        # An unquoted dotted key is a TOML table.
        (POLICY, 'scheduling.policy = "fair-share"', "base.scheduling", ["quoted"]),
        # Value metrics live in the kind's own scope: the flow-sim kind's name is not one of them.
        ('of = "fct_p99_s"', 'of = "p99_fct_s"', "metric[0].of", ["scenario", "fct_p99_s"]),
        ('kind = "stats.completed"', 'kind = "stat.completed"', "metric[4].kind", ["stats.<name>"]),
    ],
)  # fmt: skip
def test_bad_keys_fail_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, key: str, words: list[str]
) -> None:
    assert old in EXPERIMENT
    f = _write(tmp_path, EXPERIMENT.replace(old, new, 1))
    with pytest.raises(ConfigError) as e:
        load_experiment(f)
    msg = str(e.value)
    assert e.value.file == str(f) and e.value.key == key, msg
    assert msg.startswith(f"{f}:") and f"key `{key}`" in msg
    for w in words:
        assert w in msg, msg
    # A quoted dotted key is found on its own line (in its own variant's table).
    dotted = key.partition(".")[2]
    if "." in dotted:
        assert f.read_text().splitlines()[e.value.line - 1].startswith(f'"{dotted}" ='), msg
    # From the command line: exit 2, nothing written.
    out = tmp_path / "out"
    assert main(["experiment", "run", str(f), "--out", str(out)]) == 2
    assert key in capsys.readouterr().err
    assert not out.exists()


def test_variants_to_run_are_the_only_ones_built_and_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A point's check builds its scenario, workload included (seconds and gigabytes for a
    paper-scale point), so ``--variants`` checks only the variants it runs: a variant whose
    scheduling policy does not exist fails the whole file, and is never built when the run
    leaves it out; the file's own keys are still validated whole."""
    bad = EXPERIMENT.replace("[sweep]", '[[variant]]\nname = "bad"\n"scheduling.policy" = "nope"\n\n[sweep]')
    f = _write(tmp_path, bad)
    with pytest.raises(ConfigError, match="variant 'bad'") as e:
        load_experiment(f)
    assert "nope" in str(e.value)
    exp = load_experiment(f, variants=["fair", "fifo"])
    assert [v.name for v in exp.variants] == ["fair", "fifo", "bad"]
    out = tmp_path / "out"
    run = ["experiment", "run", str(f), "--out", str(out), "--variants", "fair,fifo", "--workers", "1"]
    assert main(run) == 0
    ran = set(pq.read_table(out / "points.parquet").column("variant").to_pylist())
    assert sorted(ran) == ["fair", "fifo"]
    assert main(["experiment", "run", str(f), "--out", str(tmp_path / "out2"), "--variants", "bad"]) == 2
    assert "nope" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="metric"):
        load_experiment(_write(tmp_path, bad.replace('of = "fct_p99_s"', 'of = "p99"')), variants=["fair"])


def test_sweep_end_to_end(tmp_path: Path) -> None:
    """Each point's values by hand; the metrics across variants; the tables of the run."""
    exp = load_experiment(_write(tmp_path))
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    assert not res.errors
    by = {(p.variant, p.sweep["topology.tor-uplink"]): res.values[p.hash] for p in res.points}
    # FCTs (s): fair [2, 4], fifo [1, 4] at 8 Gbit/s; doubled at 4 Gbit/s. Quantiles interpolate
    # linearly between the two (netheat.metrics): p50 = the mean, p99 = lo + 0.99 (hi - lo).
    for (variant, uplink), (lo, hi) in {
        ("fair", "8Gbps"): (2.0, 4.0),
        ("fifo", "8Gbps"): (1.0, 4.0),
        ("fair", "4Gbps"): (4.0, 8.0),
        ("fifo", "4Gbps"): (2.0, 8.0),
    }.items():
        v = by[(variant, uplink)]
        assert v["fct_mean_s"] == pytest.approx((lo + hi) / 2, abs=1e-9)
        assert v["fct_p50_s"] == pytest.approx((lo + hi) / 2, abs=1e-9)
        assert v["fct_p99_s"] == pytest.approx(lo + 0.99 * (hi - lo), abs=1e-9)
        # Every flow is its own trace task (its task_id).
        assert v["trace.tct_p99_s"] == pytest.approx(v["fct_p99_s"], abs=1e-9)
        assert v["tct_mean_s"] == pytest.approx(v["fct_mean_s"], abs=1e-9)
        assert v["unfinished_flows"] == 0.0
        assert v["hot_tor_share"] == 0.5
        assert v["stats.completed"] == 2.0 and v["stats.seed"] == 5.0  # the point's seed
        assert "block_write_mean_s" not in v  # no storage policy, no blocks table
    m = res.summary["metrics"]
    p99 = {v: (3.98 + 7.96) / 2 if v == "fair" else (3.97 + 7.94) / 2 for v in ("fair", "fifo")}
    assert m["p99 ratio"]["ours"] == pytest.approx(p99["fifo"] / p99["fair"], abs=1e-9)
    assert m["mean ratio at 8G"]["ours"] == pytest.approx(2.5 / 3.0, abs=1e-9)
    assert m["trace p99 [fifo]"]["ours"] == pytest.approx(p99["fifo"], abs=1e-9)
    assert m["trace p99 [fifo]"]["unit"] == "s"
    assert m["hot [fair]"]["ours"] == 0.5 and m["completed [fair]"]["ours"] == 2.0
    # Tables: flows and tasks with provenance; no links (see the kind's description).
    out = tmp_path / "out"
    assert {p.name for p in res.tables} == {"points.parquet", "flows.parquet", "tasks.parquet"}
    assert not (out / "links.parquet").exists()
    flows = pq.read_table(out / "flows.parquet")
    assert flows.num_rows == 8 and set(PROVENANCE) <= set(flows.column_names)
    assert pq.read_table(out / "tasks.parquet").num_rows == 8
    # Resumable like every kind: a second run reuses every point.
    again = run_experiment(exp, out, workers=1, progress=False)
    assert again.skipped == 4 and again.summary["metrics"] == res.summary["metrics"]


def test_unfinished_flows_and_default_metrics(tmp_path: Path) -> None:
    """A run stopped at 3 s leaves the 3 GB flow unfinished; without [[metric]] every variant
    gets the kind's default metrics."""
    text = EXPERIMENT.split("[[metric]]")[0].replace(
        '"scheduling.policy" = "fair-share"', '"scheduling.policy" = "fair-share"\n"scenario.duration" = "3s"'
    )
    exp = load_experiment(_write(tmp_path, text))
    assert [s.name for s in exp.metrics][:3] == ["fct_mean_s [fair]", "fct_p50_s [fair]", "fct_p99_s [fair]"]
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    fair8 = next(res.values[p.hash] for p in res.points if p.variant == "fair" and p.label.endswith("8Gbps"))
    assert fair8["unfinished_flows"] == 1.0 and fair8["fct_p99_s"] == pytest.approx(2.0, abs=1e-9)
    fair4 = next(res.values[p.hash] for p in res.points if p.variant == "fair" and p.label.endswith("4Gbps"))
    assert fair4["unfinished_flows"] == 2.0 and math.isnan(fair4["fct_p99_s"])
    assert res.summary["metrics"]["unfinished_flows [fair]"]["ours"] == pytest.approx(1.5)


def test_a_value_means_one_thing_per_ratio(tmp_path: Path) -> None:
    """`hot_tor_share` of the scenario kind (ToR-windows >= 0.7) is not flow-sim's (link-windows
    above its threshold): a ratio across the two kinds is refused."""
    (tmp_path / "dc.toml").write_text('[topology]\nkind = "two-tier"\nracks = 2\nhosts-per-rack = 2\n')
    text = """[experiment]
name = "mixed"
kind = "scenario"

[[variant]]
name = "scn"
scenario = "scn/s.toml"

[[variant]]
name = "sim"
kind = "flow-sim"
topology = "dc.toml"

[[metric]]
name = "r"
kind = "ratio"
of = "hot_tor_share"
numerator = "scn"
denominator = "sim"
"""
    with pytest.raises(ConfigError) as e:
        load_experiment(_write(tmp_path, text))
    assert e.value.key == "metric[0].of" and "means different things" in str(e.value)
    # Each alone is fine: the names are scoped by kind.
    assert SCOPE.get("hot_tor_share") is not None and SCOPE.get("stats.rebinds") is not None
    assert SCOPE.get("mean_fct_s") is None


def test_bundled_experiment_validates() -> None:
    """experiments/scenario-subways-loops.toml: its scenario is data-free and every loop size checks."""
    for quick in (False, True):
        exp = load_experiment(ROOT / "experiments" / "scenario-subways-loops.toml", quick=quick)
        assert exp.sweep == {"topology.loop-size": [2, 3, 4]}
        assert [v.name for v in exp.variants] == ["ecmp", "adaptive"]


def test_without_a_data_directory_points_that_read_a_dataset_fail_when_they_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """baraat.toml loads without the public data; its data-analytics points fail at run time
    naming the data directory, and the others run."""
    from netheat.errors import NetheatError

    monkeypatch.setenv("NETHEAT_DATA", str(tmp_path / "no-data"))
    exp = load_experiment(ROOT / "experiments" / "baraat.toml", quick=True)
    points = expand_points(exp)
    analytics = [p for p in points if p.params.get("workload.app.0.task-sizes") == "data-analytics"]
    assert analytics and len(analytics) < len(points)
    kind = get_kind("scenario")
    with pytest.raises(NetheatError, match="data directory") as e:
        kind.run_point(analytics[0].params, analytics[0].seed)
    assert "NETHEAT_DATA" in str(e.value)
    # A bad key is still an error at load time.
    bad = (
        (ROOT / "experiments" / "baraat.toml")
        .read_text()
        .replace('"workload.app.0.load" = 0.8', '"workload.app.0.lod" = 0.8', 1)
    )
    f = tmp_path / "baraat.toml"
    f.write_text(bad.replace('"../examples/', f'"{ROOT}/examples/'))
    with pytest.raises(ConfigError, match="lod"):
        load_experiment(f, quick=True)


def test_points_over_the_memory_budget_fail_when_they_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """baraat-two-stage.toml's paper-scale points (57.6 million flows, estimated at 6.9 GiB) load
    under any budget, since the budget is the machine's; under one too small they fail when they
    run, with the budget's message, and the quick points still check. The estimate by hand, with
    the flows unkept (`scenario.record = []`): 57.6e6 flows x 64 B + 48,000 tasks x 1,024 B +
    57.6e6 steps x 64 B = 7,421,952,000 B = 6.91 GiB."""
    from netheat.errors import NetheatError

    monkeypatch.setenv("NETHEAT_MEMORY_BUDGET", "2GiB")
    exp = load_experiment(ROOT / "experiments" / "baraat-two-stage.toml")
    point = expand_points(exp)[0]
    assert point.params["workload.app.0.tasks"] == 48000
    with pytest.raises(NetheatError, match=r"6\.91 GiB, over the memory budget of 2\.00 GiB"):
        get_kind("scenario").run_point(point.params, point.seed)
    assert (
        load_experiment(ROOT / "experiments" / "baraat-two-stage.toml", quick=True).name == "baraat-two-stage"
    )


STORAGE = """[scenario]
seed = 1

[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "1Gbps"
tor-uplink = "1Gbps"

[hosts]
storage = [{ kind = "hdd", count = 1, capacity = "4TB", write = "100MB/s" }]

[workload]
duration = "30s"

[[workload.traffic]]
kind = "poisson"
load = 0.5
pattern = "inter-rack"
sizes = { dist = "web-search" }

[[workload.app]]
kind = "file-write"
rate = 2.0
file-size = "128MiB"
block = "64MiB"
"""

PAIRED = """[experiment]
name = "paired"
kind = "scenario"
seeds = [1, 2]

[base]
scenario = "scn/s.toml"

[[variant]]
name = "uniform"
"storage.policy" = "uniform"

[[variant]]
name = "sinbad"
"storage.policy" = "sinbad"

"""

PAIRED += "".join(
    f"""
[[metric]]
name = "{name}"
kind = "{kind}"
table = "blocks"
on = ["task_id", "block"]
of = "write_s"
numerator = "{num}"
denominator = "{den}"
{extra}
"""
    for name, kind, num, den, extra in (
        ("speedup", "paired_mean_ratio", "uniform", "sinbad", ""),
        ("faster", "paired_faster_pct", "sinbad", "uniform", "band = 0.1"),
        ("same", "paired_same_pct", "sinbad", "uniform", "band = 0.1"),
        ("slower", "paired_slower_pct", "sinbad", "uniform", "band = 0.1"),
    )
)


def test_paired_metrics_join_the_blocks_of_both_variants(tmp_path: Path) -> None:
    """Paired metrics pair each block of a seed's sinbad run with the same block (task, block)
    of that seed's uniform run: recomputed here from the points' own tables by a dict join."""
    scn = tmp_path / "scn"
    scn.mkdir()
    (scn / "s.toml").write_text(STORAGE)
    (tmp_path / "exp.toml").write_text(PAIRED)
    exp = load_experiment(tmp_path / "exp.toml")
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    assert not res.errors

    def blocks(p: object) -> dict[tuple[int, int], float]:
        t = pq.read_table(tmp_path / "out" / "points" / p.hash / "blocks.parquet").to_pylist()  # type: ignore[attr-defined]
        return {(r["task_id"], r["block"]): r["write_s"] for r in t}

    pts = {(p.variant, p.seed): p for p in res.points}
    per_seed: dict[str, list[float]] = {k: [] for k in ("speedup", "faster", "same", "slower")}
    pooled: list[tuple[float, float]] = []
    for seed in (1, 2):
        u, s = blocks(pts[("uniform", seed)]), blocks(pts[("sinbad", seed)])
        pairs = [(s[k], u[k]) for k in s if k in u and not math.isnan(s[k]) and not math.isnan(u[k])]
        assert len(pairs) > 50
        pooled += pairs
        a = [x for x, _ in pairs]
        b = [y for _, y in pairs]
        per_seed["speedup"].append(sum(b) / sum(a))
        per_seed["faster"].append(100.0 * sum(x < 0.9 * y for x, y in pairs) / len(pairs))
        per_seed["same"].append(100.0 * sum(0.9 * y <= x <= 1.1 * y for x, y in pairs) / len(pairs))
        per_seed["slower"].append(100.0 * sum(x > 1.1 * y for x, y in pairs) / len(pairs))
    m = res.summary["metrics"]
    for name, vals in per_seed.items():
        assert m[name]["per_seed"] == pytest.approx(vals, rel=1e-12)
    # Every block falls in one class; over both seeds the rows are pooled.
    assert m["faster"]["ours"] + m["same"]["ours"] + m["slower"]["ours"] == pytest.approx(100.0)
    assert m["speedup"]["ours"] == pytest.approx(
        sum(y for _, y in pooled) / sum(x for x, _ in pooled), rel=1e-12
    )
    # The kind's figures include the block write time CDF per variant.
    from netheat.experiments.plots import block_write_figures

    [(png, _)] = block_write_figures(tmp_path / "out")
    assert png.name == "block_write_cdf.png" and png.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ('table = "blocks"', 'table = "blocs"'),
        ('on = ["task_id", "block"]', 'on = "task_id"'),
        ("band = 0.1", "band = 1.5"),
    ],
)
def test_bad_paired_metrics_are_refused(tmp_path: Path, change: str, key: str) -> None:
    scn = tmp_path / "scn"
    scn.mkdir()
    (scn / "s.toml").write_text(STORAGE)
    (tmp_path / "exp.toml").write_text(PAIRED.replace(change, key, 1))
    with pytest.raises(ConfigError) as e:
        load_experiment(tmp_path / "exp.toml")
    assert change.split(" ")[0] in str(e.value)
