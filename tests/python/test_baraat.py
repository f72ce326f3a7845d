"""Baraat scenario kind: hand-checkable single-aggregator cases and a tiny experiment run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from netheat.errors import InputError
from netheat.experiments import load_experiment, points, run_experiment

# One pod of 2 racks x 10 hosts (1 Gbps, 2:1); every task goes to the single
# aggregator host, all at t = 0, so its 1 Gbps downlink is the bottleneck.
SMALL = {"pods": 1, "racks_per_pod": 2, "hosts_per_rack": 10, "aggregators": 1, "batch": True}


def point(policy: str, **kw: object) -> dict[str, Any]:
    """One ``baraat`` point through ``run_point``: the task columns, plus the value ``flows``."""
    args: dict[str, Any] = {
        "workload": "bing",
        "policy": policy,
        "load": 0.5,
        "tasks": 5,
        "fanout": 4,
        **SMALL,
        **kw,
    }
    params = {_KEYS.get(k, k.replace("_", "-")): v for k, v in args.items()}
    if params.get("batch"):
        params["batch-tasks"] = params["tasks"]
    out = points.run("baraat", params, 3)
    cols: dict[str, Any] = {
        k: np.frombuffer(raw, dtype=np.dtype(dtype)) for k, (dtype, raw) in out["tables"]["tasks"].items()
    }
    cols["flows"] = out["values"]["flows"]
    return cols


_KEYS = {"compute_s": "compute"}


def test_fifo_serialises_tasks_on_the_aggregator_link() -> None:
    r = point("fifo")
    # Work-conserving, strict task order: task k ends when the bytes of
    # tasks 0..k have crossed the 1 Gbps link.
    want = np.cumsum(r["bytes"]) * 8 / 1e9
    assert np.allclose(r["finish_s"], want, rtol=1e-9)
    # FIFO-LM with the threshold above every task (100th percentile) is FIFO.
    lm = point("fifo-lm", heavy_percentile=1.0)
    assert np.allclose(lm["finish_s"], want, rtol=1e-9)


def test_fair_share_finishes_last_task_at_total_bytes_and_is_slower_on_average() -> None:
    fs = point("fair-share")
    fifo = point("fifo")
    assert max(fs["finish_s"]) == pytest.approx(sum(fs["bytes"]) * 8 / 1e9, rel=1e-9)
    assert np.mean(fifo["tct_s"]) < np.mean(fs["tct_s"])


def test_flow_cv_skews_the_flows_of_a_task() -> None:
    # FIFO on one link finishes the last task when all bytes have crossed,
    # whatever the skew; skewed tasks carry different bytes than equal ones.
    even = point("fifo", tasks=40)
    skewed = point("fifo", tasks=40, flow_cv=0.389)
    assert not np.allclose(even["bytes"], skewed["bytes"])
    assert max(skewed["finish_s"]) == pytest.approx(sum(skewed["bytes"]) * 8 / 1e9, rel=1e-9)
    # A Bing-like task is 4 x 20 KB or 4 x 200 KB without skew; skewed ones
    # are neither.
    assert set(even["bytes"]) <= {80e3, 800e3}
    assert not set(skewed["bytes"]) & {80e3, 800e3}
    with pytest.raises(InputError, match="flow-cv"):
        point("fifo", flow_cv=-1.0)


def test_compute_time_delays_tasks_at_every_stage() -> None:
    # The same tasks (compute times have their own random stream). A task
    # waits at least for the slowest of its 4 workers: the mean of the
    # largest of 4 exponentials of mean 10 ms is 10 ms x (1 + 1/2 + 1/3 +
    # 1/4) = 20.8 ms, so the mean TCT grows by well over 10 ms.
    now = point("fifo", batch=False, tasks=20)
    later = point("fifo", batch=False, tasks=20, compute_s=0.01)
    assert list(later["bytes"]) == list(now["bytes"])
    assert np.mean(later["tct_s"]) > np.mean(now["tct_s"]) + 0.01
    # Two stages: a mid-level aggregator forwards after its slowest worker
    # (20.8 ms on average) and its own compute time (10 ms), so a task
    # takes over 30.8 ms more on average.
    two = {"app": "two-stage", "placement": "pool"}
    now = point("fifo", batch=False, tasks=20, **two)
    later = point("fifo", batch=False, tasks=20, compute_s=0.01, **two)
    assert list(later["bytes"]) == list(now["bytes"])
    assert np.mean(later["tct_s"]) > np.mean(now["tct_s"]) + 0.0308
    with pytest.raises(InputError, match="compute"):
        point("fifo", compute_s=-1.0)


def test_mids_sets_the_mid_level_aggregators_of_two_stage_tasks() -> None:
    # 5 tasks of `mids` mid-levels, each with 4 workers and its own flow up.
    two = {"app": "two-stage", "placement": "pool"}
    assert point("fifo", **two)["flows"] == 5 * 4 * (4 + 1)
    assert point("fifo", mids=2, **two)["flows"] == 5 * 2 * (4 + 1)
    with pytest.raises(InputError, match="mids"):
        point("fifo", mids=2)


def test_rack_placement_workers_are_the_aggregators_rack_mates() -> None:
    # The paper's placement: one aggregator (host 0), its 4 workers are
    # hosts 1-4 of its rack, so FIFO still ends task k when tasks 0..k have
    # crossed the aggregator's link; placement is validated.
    r = point("fifo", placement="rack")
    assert np.allclose(r["finish_s"], np.cumsum(r["bytes"]) * 8 / 1e9, rtol=1e-9)
    with pytest.raises(InputError, match="placement"):
        point("fifo", placement="everywhere")
    with pytest.raises(InputError, match="other hosts of a rack"):
        point("fifo", placement="rack", fanout=10)


def test_data_analytics_sizes_come_from_the_facebook_trace() -> None:
    from netheat.data import resolve_data_dir

    if not (resolve_data_dir().path / "coflow-benchmark/FB2010-1Hr-150-0.txt").exists():
        pytest.skip("no data directory")
    # Every task's bytes are a coflow shuffle size of the trace (MB, 10^6
    # bytes, split over the 4 flows and rounded): the trace's sizes are whole
    # MB from 1 MB to 8,501,205 MB.
    r = point("fifo", workload="data_analytics", tasks=50)
    mb = np.asarray(r["bytes"]) / 1e6
    assert np.all((mb >= 1.0 - 1e-6) & (mb <= 8_501_205 + 1e-6))
    assert np.allclose(mb, np.round(mb), atol=1e-5)


def test_unknown_policy_is_an_input_error() -> None:
    with pytest.raises(InputError, match="known: fair-share"):
        point("edf")


def test_p99_floor_is_one_for_a_lone_task_and_below_one_under_contention() -> None:
    from netheat.experiments.baraat import BARAAT, run_baraat

    base = {p.name: p.default for p in BARAAT.params}
    small = {
        "pods": 1,
        "racks-per-pod": 2,
        "hosts-per-rack": 10,
        "aggregators": 1,
        "fanout": 4,
        "batch": True,
    }
    # Alone, a task's 4 flows share its aggregator's 1 Gbps link and take
    # exactly its bytes over that link: the floor is the task's own time.
    lone = run_baraat({**base, **small, "batch-tasks": 1, "policy": "fair-share"}, 3)
    assert lone.values["p99_floor"] == pytest.approx(1.0, rel=1e-9)
    # 40 tasks at once on that link: FIFO's p99 task waits for about 39
    # others, so it is far above its own transfer time.
    busy = run_baraat({**base, **small, "batch-tasks": 40, "policy": "fifo"}, 3)
    assert busy.values["p99_floor"] < 0.2
    # Two-stage tasks spread their bytes over mid-levels: no floor.
    pool2 = {"app": "two-stage", "placement": "pool", "mids": 2}
    two = run_baraat({**base, **small, "batch-tasks": 2, **pool2, "policy": "fifo"}, 3)
    assert np.isnan(two.values["p99_floor"])


EXP = """
[experiment]
name = "baraat-tiny"
kind = "baraat"
seeds = [1]

[base]
pods = 2
racks-per-pod = 2
hosts-per-rack = 10
tasks = 300
aggregators = 4
fanout = 8
load = 0.8

[[variant]]
name = "fifo-lm"
policy = "fifo-lm"

[[variant]]
name = "fair-share"
policy = "fair-share"

[sweep]
workload = ["uniform"]

[[metric]]
name = "rel_tct_uniform_vs_fair_share_p99"
kind = "ratio"
of = "p99_tct_s"
numerator = "fifo-lm"
denominator = "fair-share"
paper = 0.60

[[metric]]
name = "pa_mean_reduction"
kind = "reduction"
of = "mean_tct_s"
numerator = "fifo-lm"
denominator = "fair-share"
"""


def test_tiny_experiment_reports_metrics(tmp_path: Path) -> None:
    f = tmp_path / "b.toml"
    f.write_text(textwrap.dedent(EXP))
    run_experiment(load_experiment(f), tmp_path / "out", workers=1, progress=False)
    s = json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]
    rel = s["rel_tct_uniform_vs_fair_share_p99"]
    assert rel["paper"] == 0.60
    # Tasks of nearly equal size (sums of 8 uniform flows) queue at four
    # aggregators at 80% load: serving them one after the other (FIFO-LM)
    # finishes most earlier than sharing the link among all of them.
    assert 0 < rel["ours"] < 1
    assert 0 < s["pa_mean_reduction"]["ours"] < 1


def test_gain_by_size_bins_paired_tasks_by_size() -> None:
    from netheat.experiments.plots import gain_by_size

    # Two sizes (a bin each): 1 KB tasks take 4 and 6 ms under the base and
    # 2 and 3 ms under the new policy (mean 5 -> 2.5: 50% less); 10 KB tasks
    # take 10 ms and 15 ms (mean 10 -> 15: 50% more).
    g = gain_by_size(
        np.array([1e3, 10e3, 1e3, 10e3]),
        np.array([4e-3, 10e-3, 6e-3, 10e-3]),
        np.array([2e-3, 15e-3, 3e-3, 15e-3]),
    )
    assert g["bytes"].to_list() == [1e3, 10e3]
    assert g["tasks"].to_list() == [2, 2]
    assert g["reduction"].to_list() == pytest.approx([0.5, -0.5])
    # Eleven or more sizes: ten bins of equal task count. Sizes 1..100 with the new
    # policy at half the base time for sizes above 50: bins 0-4 gain 0, bins 5-9 gain 50%.
    size = np.arange(1.0, 101.0)
    base = np.ones(100)
    new = np.where(size > 50, 0.5, 1.0)
    g = gain_by_size(size, base, new)
    assert g["tasks"].to_list() == [10] * 9 + [10]
    assert g["reduction"].to_list() == pytest.approx([0.0] * 5 + [0.5] * 5)


def test_baraat_figures_from_a_run(tmp_path: Path) -> None:
    from netheat.experiments.plots import baraat_figures

    exp = tmp_path / "exp.toml"
    exp.write_text(
        textwrap.dedent(
            """
            [experiment]
            name = "b"
            kind = "baraat"
            seeds = [1]
            [base]
            workload = "uniform"
            tasks = 60
            pods = 1
            racks-per-pod = 2
            hosts-per-rack = 5
            fanout = 4
            aggregators = 2
            [[variant]]
            name = "fair-share"
            policy = "fair-share"
            [[variant]]
            name = "fifo-lm"
            policy = "fifo-lm"
            """
        )
    )
    run_experiment(load_experiment(exp), tmp_path / "run")
    figs = baraat_figures(tmp_path / "run")
    assert [p.name for p, _ in figs] == ["baraat_tct_cdf.png", "baraat_gain_by_size.png"]
    assert all(p.stat().st_size > 1000 for p, _ in figs)


def test_two_stage_figure_from_the_quick_experiment(tmp_path: Path) -> None:
    """baraat-two-stage.toml (a scenario experiment) gets a request-time CDF per variant."""
    from netheat.experiments.plots import baraat_figures

    root = Path(__file__).resolve().parents[2]
    run_experiment(
        load_experiment(root / "experiments" / "baraat-two-stage.toml", quick=True), tmp_path / "run"
    )
    figs = baraat_figures(tmp_path / "run")
    assert [p.name for p, _ in figs] == ["baraat_two_stage_cdf.png"]
    assert figs[0][0].stat().st_size > 1000


def test_testbed_experiment_gives_the_hand_answers_of_figure_6(tmp_path: Path) -> None:
    # Baraat Sec. 5.1 (experiments/baraat-testbed.toml). Figure 6: N requests of
    # 3 x 400 KB into one 1 Gbps client link, 9.6 ms each: fair share ends all N at
    # N x 9.6 ms, FIFO-LM one after the other, a mean of (N + 1) / 2 x 9.6 ms.
    root = Path(__file__).resolve().parents[2] / "experiments"
    exp = load_experiment(root / "baraat-testbed.toml", quick=True)
    exp.seeds = [1]
    run_experiment(exp, tmp_path / "run", workers=1, progress=False)
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    for n in (1, 2, 4, 8):
        assert m[f"figure6_{n}_fair_share_mean_s"]["ours"] == pytest.approx(n * 9.6e-3)
        assert m[f"figure6_{n}_mean_reduction"]["ours"] == pytest.approx(1 - (n + 1) / (2 * n))
    assert m["figure6_8_mean_reduction"]["paper"] == pytest.approx(0.40)
    # Table 3: no request is faster than 800 KB over 1 Gbps, under either policy;
    # FIFO-LM's mean is below fair share's; the requests waited in their clients' queues.
    for var in ("fair_share", "fifo_lm"):
        assert m[f"table3_min_{var}_s"]["ours"] == pytest.approx(6.4e-3)
    assert 0 < m["table3_mean_reduction"]["ours"] < 1
    assert m["table3_queued_mean_fair_share_s"]["ours"] > 0
    # Non-blocking uplinks: the clients share no link, the policies cannot differ.
    assert m["ours_nonblocking_mean_reduction"]["ours"] == pytest.approx(0.0, abs=1e-12)


def test_testbed_figures_from_the_quick_experiment(tmp_path: Path) -> None:
    from netheat.experiments.plots import baraat_figures

    root = Path(__file__).resolve().parents[2] / "experiments"
    exp = load_experiment(root / "baraat-testbed.toml", quick=True)
    exp.seeds = [1]
    run_experiment(exp, tmp_path / "run", workers=1, progress=False)
    names = [p.name for p, _ in baraat_figures(tmp_path / "run")]
    assert names == ["baraat_testbed_cdf.png", "baraat_batched.png"]
    assert all((tmp_path / "run" / n).stat().st_size > 1000 for n in names)


def _serialized_by_class(sizes: np.ndarray, c_bytes: float) -> np.ndarray:
    """Completion times of jobs of ``sizes`` (sorted) all started at 0 on one link of ``c_bytes``
    bytes/s, served smallest class first, where a class is a 1% step of size (the engine's
    ``size_class``), and by processor sharing within a class."""
    cls = np.floor(np.log(sizes) / np.log(1.01))
    out = np.empty_like(sizes)
    t0 = 0.0
    for c in np.unique(cls):
        g = sizes[cls == c]
        m = len(g)
        j = np.arange(1, m + 1)
        out[cls == c] = t0 + (np.cumsum(g) - g + (m - j + 1) * g) / c_bytes
        t0 += g.sum() / c_bytes
    return out


def test_flows_per_task_experiment_gives_the_batch_answers_of_figure_3(tmp_path: Path) -> None:
    # Baraat Sec. 2.2, Figure 3 (experiments/baraat-flows-per-task.toml): 40 tasks
    # at once into one aggregator's 1 Gbps link. With one flow a task and sizes
    # s_1 <= ... <= s_40 (read from the run's tasks table), fair share ends the k-th
    # at (s_1 + ... + s_{k-1} + (41 - k) s_k) / C; SFF serves the smallest first (flows
    # within 1% of each other share, the engine's size classes). STF does the same
    # with whole tasks (here at 10 flows a task).
    import polars as pl

    root = Path(__file__).resolve().parents[2] / "experiments"
    exp = load_experiment(root / "baraat-flows-per-task.toml", quick=True)
    run_experiment(exp, tmp_path / "run", workers=1, progress=False)
    tasks = pl.read_parquet(tmp_path / "run" / "tasks.parquet")
    c_bytes = 1e9 / 8

    def run(variant: str, flows: int) -> pl.DataFrame:
        sel = tasks.filter((pl.col("variant") == variant) & (pl.col("flows") == flows))
        assert sel.height == 40
        return sel.sort("bytes")

    sff = run("sff", 1)
    s = sff["bytes"].to_numpy().astype(float)
    assert np.all((s >= 5e3) & (s <= 40e3))
    np.testing.assert_allclose(sff["tct_s"].to_numpy(), _serialized_by_class(s, c_bytes), rtol=1e-9)
    fs = run("fair-share", 1)
    np.testing.assert_array_equal(fs["bytes"].to_numpy(), s)
    k = np.arange(1, 41)
    ps = (np.cumsum(s) - s + (41 - k) * s) / c_bytes
    np.testing.assert_allclose(fs["tct_s"].to_numpy(), ps, rtol=1e-9)
    # STF: each class of tasks (tasks within 1% of each other) ends when the link
    # has carried its bytes and all smaller classes' (inside a class, flows share).
    stf = run("stf", 10)
    t = stf["bytes"].to_numpy().astype(float)
    cls = np.floor(np.log(t) / np.log(1.01))
    ends = [stf["tct_s"].to_numpy()[cls == c].max() for c in np.unique(cls)]
    want_ends = [t[cls <= c].sum() / c_bytes for c in np.unique(cls)]
    np.testing.assert_allclose(ends, want_ends, rtol=1e-9)
    assert len(ends) > 20
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    want = 1 - _serialized_by_class(s, c_bytes).mean() / ps.mean()
    assert m["sff_1flows_mean_reduction"]["ours"] == pytest.approx(want, rel=1e-9)
    assert m["sff_1flows_mean_reduction"]["paper"] == pytest.approx(0.5)


def test_protocol_micro_benchmarks_give_the_hand_answers_and_the_papers_shapes(tmp_path: Path) -> None:
    # Baraat Sec. 5.3 in the protocol's 100 us rounds (experiments/baraat-task-size.toml,
    # baraat-tiny-flows.toml, baraat-task-aggregation.toml; quick: one seed). Hand answers at
    # 1 Gbps for n tasks of S bytes at once into one client, T = 8 S / C: `rcp` (every flow in one
    # class) ends all of them at RTT + n T, the flow engine's fair share at n T, idealized FIFO
    # task k at k T; `spc` with all n tasks in one class is `rcp`. The paper's shapes: SPC's gain
    # over RCP grows with the task size (Figure 12) and the flows a task (Figure 13), and is
    # largest at 8 tasks a class (Figure 14).
    import polars as pl

    root = Path(__file__).resolve().parents[2] / "experiments"
    runs = {}
    for name in ("baraat-task-size", "baraat-tiny-flows", "baraat-task-aggregation"):
        exp = load_experiment(root / f"{name}.toml", quick=True)
        run_experiment(exp, tmp_path / name, workers=1, progress=False)
        tasks = pl.read_parquet(tmp_path / name / "tasks.parquet")
        m = json.loads((tmp_path / name / "summary.json").read_text())["metrics"]
        runs[name] = (tasks, {k: v["ours"] for k, v in m.items()})
    rtt, c = 100e-6, 1e9

    def means(tasks: pl.DataFrame, variant: str) -> dict[float, tuple[int, float]]:
        g = tasks.filter(pl.col("variant") == variant).group_by("bytes").agg(pl.len(), pl.col("tct_s").mean())
        return {b: (n, t) for b, n, t in g.iter_rows()}

    tasks, m = runs["baraat-task-size"]
    sizes = [13.5e3, 45e3, 135e3, 400e3, 1.2e6]
    for variant, want in (
        ("rcp", lambda t: rtt + 8 * t),
        ("fair-share", lambda t: 8 * t),
        ("fifo-lm", lambda t: 4.5 * t),
    ):
        got = means(tasks, variant)
        # A task's bytes are whole bytes a flow: 400 KB is 3 x 133,333 B.
        assert sorted(got) == pytest.approx(sizes, abs=3)
        for s, (n, mean) in got.items():
            assert n == 8 and mean == pytest.approx(want(8 * s / c), rel=1e-9), (variant, s)
    gains = [m[f"fig12_{k}_mean_reduction"] for k in ("13_5kb", "45kb", "135kb", "400kb", "1_2mb")]
    assert gains == sorted(gains) and gains[0] < 0.05 and gains[-1] < 0.4375
    assert m["ours_fig12_1_2mb_ideal_reduction"] == pytest.approx(1 - 4.5 / 8, rel=1e-12)

    tasks, m = runs["baraat-tiny-flows"]
    # The protocol's note, the same for every rcp point, is listed once with the count.
    notes = json.loads((tmp_path / "baraat-tiny-flows" / "summary.json").read_text())["notes"]
    one_class = [n for n in notes if "every flow in one class" in n and "no virtual capacity" in n]
    assert len(one_class) == 1 and "and 5 other point(s):" in one_class[0], notes
    assert len(notes) == len(set(notes))
    got = means(tasks, "rcp")
    for n_flows in (3, 5, 10, 20, 40):
        n, mean = got[n_flows * 4.5e3]
        assert n == 8 and mean == pytest.approx(rtt + 8 * n_flows * 36e-6, rel=1e-9)
    gains = [m[f"fig13_{k}flows_mean_reduction"] for k in (3, 5, 10, 20, 40)]
    assert gains == sorted(gains)
    # Three flows of 4.5 KB are Figure 12's 13.5 KB task: the same protocol answer.
    assert gains[0] == pytest.approx(runs["baraat-task-size"][1]["fig12_13_5kb_mean_reduction"], rel=1e-9)
    # Figure 16: a class per flow is slower than a class per task.
    assert m["fig16_flow_over_task_classes_mean"] > 1 and m["fig16_flow_over_task_classes_makespan"] > 1
    # With virtual capacity (`*-vc`) a port may hand out more than C for a while, but the
    # client link still carries n T of work after the first round, so RCP's last task ends no
    # earlier than without it; and 3 flows of 4.5 KB are still Figure 12's 13.5 KB task.
    last = tasks.filter(pl.col("variant") == "rcp-vc").group_by("bytes").agg(pl.col("tct_s").max())
    for b, t in last.iter_rows():
        assert t >= rtt + 8 * b * 8 / c - 1e-12, (b, t)
    assert m["vc_fig13_3flows_mean_reduction"] == pytest.approx(
        runs["baraat-task-size"][1]["vc_fig12_13_5kb_mean_reduction"], rel=1e-9
    )

    tasks, m = runs["baraat-task-aggregation"]
    rcp = tasks.filter(pl.col("variant") == "rcp")
    assert rcp.height == 40
    np.testing.assert_allclose(rcp["tct_s"].to_numpy(), rtt + 40 * 108e-6, rtol=1e-9)
    one = tasks.filter(pl.col("variant") == "spc-40").sort("task_id")["tct_s"].to_numpy()
    np.testing.assert_array_equal(one, rcp.sort("task_id")["tct_s"].to_numpy())
    assert m["fig14_40tasks_mean_reduction"] == 0.0
    # One class of 40 is RCP with virtual capacity too.
    one_vc = tasks.filter(pl.col("variant") == "spc-40-vc").sort("task_id")["tct_s"].to_numpy()
    rcp_vc = tasks.filter(pl.col("variant") == "rcp-vc").sort("task_id")["tct_s"].to_numpy()
    np.testing.assert_array_equal(one_vc, rcp_vc)
    assert m["vc_fig14_40tasks_mean_reduction"] == 0.0
    by_k = {k: m[f"fig14_{k}tasks_mean_reduction"] for k in (1, 2, 4, 8, 16)}
    assert max(by_k, key=lambda k: by_k[k]) == 8
    assert m["ours_fig14_ideal_reduction"] == pytest.approx(1 - 20.5 / 40, rel=1e-12)
    # The paper's forms: SPC's gain by task size (Figures 12-13) and by tasks a class (Figure 14).
    from netheat.experiments.plots import baraat_figures

    for name, want in (
        ("baraat-task-size", ["baraat_protocol_by_size.png"]),
        ("baraat-tiny-flows", ["baraat_protocol_by_size.png"]),
        ("baraat-task-aggregation", ["baraat_protocol_by_class_size.png"]),
    ):
        figs = baraat_figures(tmp_path / name)
        assert [p.name for p, _ in figs] == want, name
        assert all(p.stat().st_size > 1000 for p, _ in figs)
