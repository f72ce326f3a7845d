"""Running experiments: known results, pairing, resume after a kill, failing points, compare."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from netheat.cli import main
from netheat.experiments import load_experiment, run_experiment
from netheat.experiments.cli import _summary_lines
from netheat.experiments.runner import PROVENANCE
from netheat.experiments.summary import ci95, t975

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "experiments" / "example-flow-sim.toml"

TOPO = """[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "{speed}"
tor-uplink = "100Gbps"
"""

SINGLE_FLOW = """[experiment]
name = "single-flow"

[base]
topology = "dc10.toml"
flows = "one.csv"

[[variant]]
name = "10G"

[[variant]]
name = "20G"
topology = "dc20.toml"

[[metric]]
name = "fct 10G"
kind = "mean_fct_s"
variant = "10G"
paper = 1.0
note = "bytes * 8 / 10 Gbps"

[[metric]]
name = "speedup"
kind = "ratio"
of = "mean_fct_s"
numerator = "10G"
denominator = "20G"
paper = 2.0
"""


def _single_flow(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "dc10.toml").write_text(TOPO.format(speed="10Gbps"))
    (tmp_path / "dc20.toml").write_text(TOPO.format(speed="20Gbps"))
    (tmp_path / "one.csv").write_text("start_s,src,dst,bytes\n0,0,1,1250000000\n")
    (tmp_path / "bad.csv").write_text("start_s,src,dst,bytes\n0,0,nohost,5\n")
    f = tmp_path / "exp.toml"
    f.write_text(SINGLE_FLOW + extra)
    return f


def test_single_flow_known_result(tmp_path: Path) -> None:
    """One flow alone on a 10 Gbps path takes bytes*8/1e10 s exactly; 20 Gbps halves it (ratio 2)."""
    exp = load_experiment(_single_flow(tmp_path))
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["experiment"] == "single-flow"
    assert summary["metrics"]["fct 10G"] == {
        "ours": 1.25e9 * 8 / 1e10,
        "paper": 1.0,
        "unit": "s",
        "note": "bytes * 8 / 10 Gbps",
        "per_seed": [1.0],
        "ci95": None,
        "rel_diff": 0.0,  # 1.0 s against the paper's 1.0 s
        "target": None,
        "target_range": None,
        "met": None,
        "met_over_seeds": None,
    }
    assert summary["metrics"]["speedup"]["ours"] == 2.0
    assert summary["metrics"]["speedup"]["unit"] == "x"
    assert summary["points"] == {"total": 2, "completed": 2, "failed": 0}
    flows = pq.read_table(tmp_path / "out" / "flows.parquet")
    assert flows.column_names[: len(PROVENANCE)] == list(PROVENANCE)
    assert flows.column("variant").to_pylist() == ["10G", "20G"]
    assert flows.column("fct_s").to_pylist() == [1.0, 0.5]
    assert set(flows.column("experiment_hash").to_pylist()) == {res.experiment_hash}
    assert flows.column("git_revision")[0].as_py() != ""
    links = pq.read_table(tmp_path / "out" / "links.parquet")
    assert set(links.column("variant").to_pylist()) == {"10G", "20G"}
    points = pq.read_table(tmp_path / "out" / "points.parquet")
    assert points.column("status").to_pylist() == ["ok", "ok"]
    assert points.column("mean_fct_s").to_pylist() == [1.0, 0.5]


def _same(a: pa.Table, b: pa.Table) -> bool:
    """Equal tables, NaN equal to NaN (a value with no finished sample is NaN in every run)."""
    return a.schema == b.schema and json.dumps(a.to_pylist(), default=str) == json.dumps(
        b.to_pylist(), default=str
    )


def test_example_paired_and_pool_equals_serial(tmp_path: Path) -> None:
    """The example (quick) in a 2-process pool: identical flows per variant; same tables as serial."""
    exp = load_experiment(EXAMPLE, quick=True)
    a = run_experiment(exp, tmp_path / "pool", workers=2, progress=False)
    b = run_experiment(exp, tmp_path / "serial", workers=1, progress=False)
    assert not a.errors and not b.errors
    for name in ("flows", "tasks", "points"):
        ta = pq.read_table(tmp_path / "pool" / f"{name}.parquet")
        tb = pq.read_table(tmp_path / "serial" / f"{name}.parquet")
        assert _same(ta, tb), name
    flows = pq.read_table(tmp_path / "pool" / "flows.parquet")
    cols = ["point", "seed", "start_s", "src", "dst", "bytes"]
    by_variant = [
        flows.filter(pc.equal(flows.column("variant").cast("string"), v))
        .select(cols)
        .cast(flows.select(cols).schema)
        for v in ("4:1", "2:1")
    ]
    assert by_variant[0].num_rows > 100
    assert by_variant[0].equals(by_variant[1])
    s = a.summary["metrics"]
    assert s["mean FCT 4:1 / 2:1 at load 0.2"]["ours"] > 1.0
    assert s["hot ToR-uplink windows 4:1"]["ours"] > s["hot ToR-uplink windows 2:1"]["ours"]


def _t_cdf(x: float, df: int) -> float:
    """Student t distribution function from its density (trapezoids on a fine grid)."""
    lnc = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    t = np.linspace(0.0, x, 200_001)
    f = np.exp(lnc - (df + 1) / 2 * np.log1p(t * t / df))
    return 0.5 + float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(t)))


def test_t_quantiles_match_the_t_distribution() -> None:
    """The tabulated (and interpolated) 97.5% quantiles put 97.5% of Student's t below them."""
    for df in [*range(1, 31), 35, 40, 50, 60, 90, 120, 200, 1000]:
        assert abs(_t_cdf(t975(df), df) - 0.975) < 3e-4, df
    with pytest.raises(ValueError):
        t975(0)


def test_ci95_hand_computed() -> None:
    """[1, 2, 3]: mean 2, sample sd 1, t(2) = 4.303, so 2 -/+ 4.303 / sqrt(3); none below 2 values."""
    ci = ci95([1.0, 2.0, 3.0])
    assert ci is not None
    lo, hi = ci
    assert math.isclose(lo, 2 - 4.303 / math.sqrt(3)) and math.isclose(hi, 2 + 4.303 / math.sqrt(3))
    assert ci95([5.0, 5.0]) == (5.0, 5.0)
    assert ci95([1.0]) is None and ci95([]) is None


def test_metrics_per_seed_and_interval(tmp_path: Path) -> None:
    """With three seeds, each metric is also computed from each seed's points alone (a ratio of
    that seed's paired points, recomputed here from points.parquet), with their 95% interval."""
    exp = dataclasses.replace(load_experiment(EXAMPLE, quick=True), seeds=[1, 2, 3])
    res = run_experiment(exp, tmp_path / "out", workers=2, progress=False)
    assert not res.errors
    points = pq.read_table(tmp_path / "out" / "points.parquet").to_pylist()

    def mean_fct(variant: str, seed: int) -> float:
        (p,) = [
            p for p in points if p["variant"] == variant and p["seed"] == seed and "load=0.2" in p["point"]
        ]
        return float(p["fct_mean_s"])

    m = res.summary["metrics"]["mean FCT 4:1 / 2:1 at load 0.2"]
    want = [mean_fct("4:1", s) / mean_fct("2:1", s) for s in (1, 2, 3)]
    assert m["per_seed"] == pytest.approx(want, rel=1e-12)
    assert len(set(want)) == 3  # the seeds draw different workloads
    mean, sd = float(np.mean(want)), float(np.std(want, ddof=1))
    assert m["ci95"] == pytest.approx([mean - 4.303 * sd / math.sqrt(3), mean + 4.303 * sd / math.sqrt(3)])
    # "ours" is still the ratio of the means over every seed.
    num = np.mean([mean_fct("4:1", s) for s in (1, 2, 3)])
    den = np.mean([mean_fct("2:1", s) for s in (1, 2, 3)])
    assert m["ours"] == pytest.approx(num / den, rel=1e-12)
    head, row = _summary_lines(res.summary)[:2]
    assert head.endswith("95% CI over seeds") and row.endswith("(3 seeds)")


def test_one_seed_prints_no_interval(tmp_path: Path) -> None:
    """A single-seed run has no interval, and its summary table has no interval column."""
    exp = load_experiment(_single_flow(tmp_path))
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    assert all(m["ci95"] is None for m in res.summary["metrics"].values())
    assert "CI" not in _summary_lines(res.summary)[0]


def test_seeds_flag_reruns_and_reuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--seeds` replaces the file's seeds; extending the list reuses the points already run; a bad
    list exits 2 naming the flag."""
    f = _single_flow(tmp_path)
    out = tmp_path / "out"
    assert main(["experiment", "run", str(f), "--out", str(out), "--seeds", "1,2"]) == 0
    m = json.loads((out / "summary.json").read_text())["metrics"]["speedup"]
    # One flow alone on its path: every seed gives the same ratio, so the interval is a point.
    assert m["per_seed"] == [2.0, 2.0] and m["ci95"] == [2.0, 2.0]
    capsys.readouterr()
    assert main(["experiment", "run", str(f), "--out", str(out), "--seeds", "1,2,3"]) == 0
    printed = capsys.readouterr().out
    assert "(4 reused)" in printed and "[2, 2] (3 seeds)" in printed
    for bad in ("1,1", "-1", "x", ""):
        with pytest.raises(SystemExit) as e:
            main(["experiment", "run", str(f), "--out", str(out), "--seeds", bad])
        assert e.value.code == 2
        assert "--seeds" in capsys.readouterr().err


DYING = """
import os, sys
from dataclasses import replace
from pathlib import Path
from netheat.experiments import load_experiment, register_kind, run_experiment
from netheat.experiments.scenario import SCENARIO, run_scenario_point

counter = Path(sys.argv[3])
K = int(sys.argv[4])

def dying(params, seed):
    n = int(counter.read_text()) if counter.exists() else 0
    if n >= K:
        os._exit(9)  # killed mid-run: no cleanup, nothing flushed
    counter.write_text(str(n + 1))
    return run_scenario_point(params, seed)

register_kind(replace(SCENARIO, run_point=dying), replace=True)
run_experiment(load_experiment(sys.argv[1], quick=True), sys.argv[2], workers=1, progress=False)
"""


def test_resume_after_kill_equals_uninterrupted_run(tmp_path: Path) -> None:
    """A run killed after k points keeps exactly those; the re-run reuses them; tables are identical."""
    script = tmp_path / "dying.py"
    script.write_text(textwrap.dedent(DYING))
    killed = tmp_path / "killed"
    k = 2
    r = subprocess.run(
        [sys.executable, str(script), str(EXAMPLE), str(killed), str(tmp_path / "count"), str(k)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 9, r.stderr
    done = [d for d in (killed / "points").iterdir() if not d.name.startswith(".")]
    assert len(done) == k
    assert not (killed / "summary.json").exists()
    exp = load_experiment(EXAMPLE, quick=True)
    resumed = run_experiment(exp, killed, workers=2, progress=False)
    assert resumed.skipped == k
    fresh = run_experiment(exp, tmp_path / "fresh", workers=1, progress=False)
    assert fresh.skipped == 0
    for name in ("flows", "tasks", "points"):
        assert _same(
            pq.read_table(killed / f"{name}.parquet"), pq.read_table(tmp_path / "fresh" / f"{name}.parquet")
        ), name
    assert json.loads((killed / "summary.json").read_text()) == json.loads(
        (tmp_path / "fresh" / "summary.json").read_text()
    )
    # A third run has nothing to do.
    assert run_experiment(exp, killed, progress=False).skipped == len(resumed.points)


def test_failing_point_is_recorded_and_others_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A point whose input is broken is recorded with its error; the others complete; exit code 1."""
    extra = '\n[[variant]]\nname = "broken"\nflows = "bad.csv"\n'
    f = _single_flow(tmp_path, extra)
    out = tmp_path / "out"
    assert main(["experiment", "run", str(f), "--out", str(out), "--workers", "2"]) == 1
    captured = capsys.readouterr()
    assert "failed: broken" in captured.out and "bad.csv" in captured.out
    points = pq.read_table(out / "points.parquet").to_pylist()
    status = {p["variant"]: (p["status"], p["error"]) for p in points}
    assert status["10G"] == ("ok", None) and status["20G"] == ("ok", None)
    assert status["broken"][0] == "failed" and "bad.csv" in status["broken"][1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["points"] == {"total": 3, "completed": 2, "failed": 1}
    assert summary["metrics"]["speedup"]["ours"] == 2.0
    # The failed point is retried next time (and fails again); completed ones are reused.
    assert main(["experiment", "run", str(f), "--out", str(out)]) == 1
    assert "(2 reused)" in capsys.readouterr().out


def test_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`netheat compare` prints both runs' metrics side by side with difference and ratio."""
    f = _single_flow(tmp_path)
    exp = load_experiment(f)
    run_experiment(exp, tmp_path / "a", workers=1, progress=False)
    (tmp_path / "dc10.toml").write_text(TOPO.format(speed="40Gbps"))
    run_experiment(load_experiment(f), tmp_path / "b", workers=1, progress=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("fct 10G"))
    assert row.split() == ["fct", "10G", "1", "0.25", "-0.75", "0.25", "s"]
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "nope")]) == 2
    assert "no summary.json" in capsys.readouterr().err


def test_targets_against_the_paper_by_hand(tmp_path: Path) -> None:
    """One 10 Gbps flow takes 1.0 s and the 20 Gbps one 0.5 s (ratio 2). Against papers of 0.8 s,
    1.25 s and 2.5x: differences +25%, -20% and -20%, with targets met exactly at their bounds."""
    extra = "".join(
        f'\n[[metric]]\nname = "{n}"\nkind = "mean_fct_s"\nvariant = "10G"\npaper = {p}\ntarget = {t}\n'
        for n, p, t in [
            ("over by 25%", 0.8, "{ rel = 0.2 }"),  # |1.0 - 0.8| = 0.2 > 0.16
            ("under by 20%", 1.25, "{ rel = 0.2 }"),  # |1.0 - 1.25| = 0.25 = 0.2 x 1.25
            ("abs miss", 1.25, "{ abs = 0.2 }"),  # 0.25 > 0.2
            ("in range", 0.0, "{ min = 0.9, max = 1.1 }"),
            ("below range", 3.0, "{ min = 1.5 }"),
        ]
    ) + (
        '\n[[metric]]\nname = "speedup vs 2.5"\nkind = "ratio"\nof = "mean_fct_s"\n'
        'numerator = "10G"\ndenominator = "20G"\npaper = 2.5\ntarget = { abs = 0.5 }\n'
    )
    exp = load_experiment(_single_flow(tmp_path, extra))
    res = run_experiment(exp, tmp_path / "out", workers=1, progress=False)
    m = res.summary["metrics"]
    want = {
        "over by 25%": (0.25, "within 20% of the paper", False),
        "under by 20%": (-0.2, "within 20% of the paper", True),
        "abs miss": (-0.2, "within 0.2 of the paper", False),
        "in range": (None, "in [0.9, 1.1]", True),
        "below range": (-2 / 3, "at least 1.5", False),
        "speedup vs 2.5": (-0.2, "within 0.5 of the paper", True),
    }
    for name, (rel, text, met) in want.items():
        e = m[name]
        assert (e["rel_diff"] is None) == (rel is None), name
        if rel is not None:
            assert e["rel_diff"] == pytest.approx(rel, abs=1e-12), name
        assert (e["target"], e["met"], e["met_over_seeds"]) == (text, met, None), name
    # The values that meet each target: 0.8 -/+ 0.16, 1.25 -/+ 0.25 and -/+ 0.2, the ranges as
    # written (an open end is null), 2.5 -/+ 0.5.
    ranges = {n: m[n]["target_range"] for n in want}
    assert ranges["over by 25%"] == pytest.approx([0.64, 0.96])
    assert ranges["under by 20%"] == pytest.approx([1.0, 1.5])
    assert ranges["abs miss"] == pytest.approx([1.05, 1.45])
    assert ranges["in range"] == [0.9, 1.1] and ranges["below range"] == [1.5, None]
    assert ranges["speedup vs 2.5"] == pytest.approx([2.0, 3.0])
    # No target: the difference only; 1.0 against 1.0.
    assert (m["fct 10G"]["rel_diff"], m["fct 10G"]["target"], m["fct 10G"]["met"]) == (0.0, None, None)
    lines = _summary_lines(res.summary)
    assert lines[0].split() == ["metric", "ours", "paper", "vs", "paper", "unit", "target", "met"]
    (row,) = [r for r in lines if r.startswith("over by 25%")]
    assert "+25.0%" in row and row.endswith("within 20% of the paper  not met")
    (row,) = [r for r in lines if r.startswith("under by 20%")]
    assert "-20.0%" in row and row.endswith("met") and "not met" not in row


def test_a_target_over_seeds_says_whether_the_interval_decides() -> None:
    """The 95% interval wholly inside the target, wholly outside, or across a bound."""
    from netheat.experiments.config import Target

    rel = Target(rel=0.2)  # paper 1.0: [0.8, 1.2]
    assert rel.holds_for_interval(0.85, 1.15, 1.0) is True
    assert rel.holds_for_interval(1.25, 1.4, 1.0) is False
    assert rel.holds_for_interval(0.7, 0.9, 1.0) is None
    rng = Target(low=50.0, high=80.0)
    assert rng.holds_for_interval(55, 79, None) is True
    assert rng.holds_for_interval(-20, 10, None) is False
    assert rng.holds_for_interval(45, 60, None) is None
    assert Target(high=3.0).holds(3.0, None) and not Target(high=3.0).holds(3.1, None)
    assert Target(abs=0.1).holds(0.49, 0.38) is False and Target(abs=0.1).holds(0.48, 0.38) is True


ACROSS_POINTS = """[experiment]
name = "across"

[base]
flows = "one.csv"

[[variant]]
name = "a"

[[variant]]
name = "b"

[sweep]
topology = ["dc10.toml", "dc20.toml"]
"""


def test_a_ratio_across_sweep_points_by_hand(tmp_path: Path) -> None:
    """``denominator-where`` compares two sweep points: one 1.25 GB flow over 10 Gbps (1.0 s)
    against the same flow over 20 Gbps (0.5 s) is 2.0 (difference 0.5 s), and a point against
    itself 1.0. Only a ratio or difference of two points takes it, at swept values."""
    from netheat.errors import ConfigError

    def metric(name: str, kind: str, extra: str = "") -> str:
        return (
            f'\n[[metric]]\nname = "{name}"\nkind = "{kind}"\nof = "mean_fct_s"\nnumerator = "a"\n'
            f'denominator = "b"\nwhere = {{ topology = "dc10.toml" }}\n{extra}'
        )

    at20 = 'denominator-where = { topology = "dc20.toml" }\n'
    metrics = metric("10G over 20G", "ratio", at20) + metric("same point", "ratio")
    metrics += metric("10G minus 20G", "difference", at20)
    f = _single_flow(tmp_path)
    f.write_text(ACROSS_POINTS + metrics)
    m = run_experiment(load_experiment(f), tmp_path / "out", workers=1, progress=False).summary["metrics"]
    assert m["10G over 20G"]["ours"] == 2.0
    assert m["same point"]["ours"] == 1.0
    assert m["10G minus 20G"]["ours"] == 0.5
    f.write_text(ACROSS_POINTS + metrics.replace("dc20.toml", "dc40.toml"))
    msg = r"metric\[0\]\.denominator-where\.topology`: 'dc40.toml' is not one of the swept values"
    with pytest.raises(ConfigError, match=msg):
        load_experiment(f)
    value = '\n[[metric]]\nname = "v"\nkind = "mean_fct_s"\nvariant = "a"\n'
    value += 'where = { topology = "dc10.toml" }\n'
    f.write_text(ACROSS_POINTS + value + at20)
    with pytest.raises(ConfigError, match=r"metric\[0\]\.denominator-where`: only a `ratio` or `difference`"):
        load_experiment(f)


def test_variants_option_runs_some_variants_and_a_later_run_reuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--variants a,b`` runs a and b only (2 sweep values each); the ratio of a to b is
    computed by hand (1.0 s over 10 Gbps against 0.5 s over 20 Gbps: 2.0), c's metric is left
    out; the whole file into the same directory then adds c's points and keeps a's and b's."""
    f = _single_flow(tmp_path)
    ratio = '\n[[metric]]\nname = "a10 over b20"\nkind = "ratio"\nof = "mean_fct_s"\nnumerator = "a"\n'
    ratio += 'denominator = "b"\nwhere = { topology = "dc10.toml" }\n'
    ratio += 'denominator-where = { topology = "dc20.toml" }\n'
    value = '\n[[metric]]\nname = "c at 10G"\nkind = "mean_fct_s"\nvariant = "c"\n'
    value += 'where = { topology = "dc10.toml" }\n'
    f.write_text(ACROSS_POINTS.replace("[sweep]", '[[variant]]\nname = "c"\n\n[sweep]') + ratio + value)
    out = tmp_path / "out"
    assert main(["experiment", "run", str(f), "--out", str(out), "--variants", "a,b", "--workers", "1"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["metrics"]) == ["a10 over b20"]
    assert summary["metrics"]["a10 over b20"]["ours"] == 2.0
    assert sorted(pq.read_table(out / "points.parquet").column("variant").to_pylist()) == ["a", "a", "b", "b"]
    assert main(["experiment", "run", str(f), "--out", str(out), "--workers", "1"]) == 0
    variants = sorted(pq.read_table(out / "points.parquet").column("variant").to_pylist())
    assert variants == ["a", "a", "b", "b", "c", "c"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["c at 10G"]["ours"] == 1.0
    assert main(["experiment", "run", str(f), "--out", str(out), "--variants", "a,d"]) == 2
    assert "--variants: unknown variant 'd'; variants: a, b, c" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["experiment", "run", str(f), "--out", str(out), "--variants", "a,a"])
    assert e.value.code == 2
    assert "distinct variant names" in capsys.readouterr().err


def test_comparison_curves_by_hand(tmp_path: Path) -> None:
    """A file's comparisons drawn along a numeric sweep: one 1.25 GB flow alone ("one") takes
    8 * 1.25e9 / speed s, and two such flows sharing the same host link ("two") take twice that
    each, so at host links of 10 / 20 / 40 Gbps the difference one - two of the mean FCT is
    -1.0 / -0.5 / -0.25 s and the ratio two / one 2.0 everywhere, whichever sweep value the
    metric is pinned to (or over all of them); the paper's number sits at its metric's sweep
    value."""
    from netheat.experiments.curves import comparison_curves, comparison_data

    _single_flow(tmp_path)
    (tmp_path / "two.csv").write_text("start_s,src,dst,bytes\n0,0,1,1250000000\n0,0,1,1250000000\n")
    f = tmp_path / "curves.toml"
    f.write_text(
        textwrap.dedent(
            """\
            [experiment]
            name = "curves"
            [base]
            topology = "dc10.toml"
            flows = "one.csv"
            [[variant]]
            name = "one"
            [[variant]]
            name = "two"
            flows = "two.csv"
            [sweep]
            "topology.host-link" = ["40Gbps", "10Gbps", "20Gbps"]
            [[metric]]
            name = "one minus two at 10G"
            kind = "difference"
            of = "mean_fct_s"
            numerator = "one"
            denominator = "two"
            where = { "topology.host-link" = "10Gbps" }
            paper = -1.2
            [[metric]]
            name = "two over one at 20G"
            kind = "ratio"
            of = "mean_fct_s"
            numerator = "two"
            denominator = "one"
            where = { "topology.host-link" = "20Gbps" }
            [[metric]]
            name = "two over one, all speeds"
            kind = "ratio"
            of = "mean_fct_s"
            numerator = "two"
            denominator = "one"
            paper = 2.5
            [[metric]]
            name = "p99 two over one at 40G"
            kind = "ratio"
            of = "p99_fct_s"
            numerator = "two"
            denominator = "one"
            where = { "topology.host-link" = "40Gbps" }
            """
        )
    )
    res = run_experiment(load_experiment(f), tmp_path / "out", workers=1, progress=False)
    (curves,) = comparison_data(res).values()
    diff, ratio, p99 = curves
    assert diff.values == ["10Gbps", "20Gbps", "40Gbps"] and diff.xs == [1e10, 2e10, 4e10]
    assert diff.label == "one - two" and diff.ys == pytest.approx([-1.0, -0.5, -0.25], rel=1e-12)
    assert diff.paper == [(1e10, -1.2)]
    # Two quantities share the ratio panel, so each label names its own.
    assert ratio.label == "mean_fct_s: two / one" and ratio.ys == pytest.approx([2.0, 2.0, 2.0], rel=1e-12)
    assert ratio.paper == []  # the metric over every speed has no place on the curve
    assert p99.label == "p99_fct_s: two / one" and p99.ys == pytest.approx([2.0, 2.0, 2.0], rel=1e-12)
    ((png, caption),) = comparison_curves(res)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "topology.host-link" in caption


def test_task_size_p99_is_the_mean_over_seeds_per_variant_and_size() -> None:
    """Two variants, two seeds, tasks of 5,000 and 93,000 B: each bar is the mean of the seeds'
    p99 (a: (1 + 3) / 2 = 2 ms and (10 + 20) / 2 = 15 ms; b: 4 and 40 ms); a kind with one size,
    or one size at each sweep point, has no figure."""
    import polars as pl

    from netheat.experiments.plots import task_size_p99

    nan = float("nan")
    pts = pl.DataFrame(
        {
            "variant": ["a", "a", "b", "b", "a", "a"],
            "point": ["-"] * 4 + ["n=1", "n=2"],
            "incast.5000B.tct_p99_s": [1e-3, 3e-3, 4e-3, 4e-3, nan, nan],
            "incast.93000B.tct_p99_s": [10e-3, 20e-3, 40e-3, 40e-3, nan, nan],
            "job.7B.tct_p99_s": [1.0] * 6,
            # One size a point, as a sweep over job sizes gives: no figure either.
            "shuffle.1B.tct_p99_s": [nan] * 4 + [1.0, nan],
            "shuffle.2B.tct_p99_s": [nan] * 4 + [nan, 1.0],
        }
    )
    got = task_size_p99(pts)
    assert list(got) == [("incast", "-")]
    rows = {(r["variant"], r["bytes"]): r["p99_s"] for r in got[("incast", "-")].to_dicts()}
    want = {("a", 5000): 2e-3, ("a", 93000): 15e-3, ("b", 5000): 4e-3, ("b", 93000): 40e-3}
    assert rows == pytest.approx(want)
    # Sizes on both sides of 2^31 B (a 1.25 GB and a 2.5 GB task) make one integer column.
    sizes = {"job.1250000000B.tct_p99_s": [1.0], "job.2500000000B.tct_p99_s": [2.0]}
    big = pl.DataFrame({"variant": ["a"], "point": ["-"], **sizes})
    rows = {r["bytes"]: r["p99_s"] for r in task_size_p99(big)[("job", "-")].to_dicts()}
    assert rows == {1_250_000_000: 1.0, 2_500_000_000: 2.0}
