"""Sinbad's EC2 experiment with its jobs (SIGCOMM'13 sections 7.1-7.2): MapReduce jobs that write
their output after their shuffle and write-only jobs, their blocks placed by the storage policy.

The job values are recomputed here from the run's own tables: a job's time in distributed
writes runs from its first block's request to its end.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from netheat.data import resolve_data_dir
from netheat.experiments.scenario import point_values
from netheat.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "experiments" / "scenarios" / "sinbad-ec2-jobs.toml"

needs_data = pytest.mark.skipif(not resolve_data_dir().exists, reason="no data directory")


@needs_data
@pytest.mark.parametrize("policy", ["uniform", "sinbad"])
def test_jobs_write_their_blocks_and_report_their_write_time(policy: str) -> None:
    res = (
        Scenario.from_toml(JOBS).with_overrides({"workload.duration": "150s", "storage.policy": policy}).run()
    )
    tasks = res.table("tasks").to_pylist()
    blocks = res.table("blocks").to_pylist()
    kinds = {t["task_id"]: t["kind"] for t in tasks}
    assert set(kinds.values()) == {"mr-job", "write-job"}
    assert all(not math.isnan(t["finish_s"]) for t in tasks)
    # Every job wrote blocks (the trace's shuffles all carry bytes), three replicas each on
    # three distinct machines, the first on the writer (HDFS's local replica: every machine
    # stores), and finished with its last block.
    by_task: dict[int, list[dict]] = {}
    for b in blocks:
        by_task.setdefault(b["task_id"], []).append(b)
        hosts = [int(h) for h in b["replicas"].split(";")]
        assert len(set(hosts)) == 3 and hosts[0] == b["writer"]
        assert b["start_s"] == b["requested_s"]  # q = 0: placed when requested
    assert set(by_task) == set(kinds)
    for t in tasks:
        mine = by_task[t["task_id"]]
        assert max(b["finish_s"] for b in mine) <= t["finish_s"] + 1e-9
        if t["kind"] == "write-job":
            # Nothing but writes: the job ends with its last block, and starts writing at once.
            assert max(b["finish_s"] for b in mine) == pytest.approx(t["finish_s"], abs=1e-9)
            assert min(b["requested_s"] for b in mine) == pytest.approx(t["start_s"], abs=1e-9)
    # A job's time in writes: from its first request to its end, per kind and over all jobs.
    write = {
        t["task_id"]: t["finish_s"] - min(b["requested_s"] for b in by_task[t["task_id"]]) for t in tasks
    }
    v = point_values(res)
    for kind in ("mr-job", "write-job"):
        times = [w for tid, w in write.items() if kinds[tid] == kind]
        assert v[f"{kind}.write_mean_s"] == pytest.approx(sum(times) / len(times), rel=1e-12)
    assert v["write_mean_s"] == pytest.approx(sum(write.values()) / len(write), rel=1e-12)
    # MapReduce jobs shuffle before they write: their first request comes after their start.
    mr = [t for t in tasks if t["kind"] == "mr-job"]
    assert sum(min(b["requested_s"] for b in by_task[t["task_id"]]) > t["start_s"] for t in mr) > len(mr) / 2


def test_job_write_bins_by_hand() -> None:
    """Table 3's bins over both runs' shares, improvements as ratios of the bins' means."""
    import polars as pl

    from netheat.experiments.plots import job_write_bins

    base = pl.DataFrame(
        {
            "seed": [1, 1, 1, 1, 1],
            "task_id": [1, 2, 3, 4, 5],
            "tct_s": [10.0, 10.0, 4.0, 6.0, 1.0],
            "write_s": [1.0, 10.0, 4.0, 3.0, 1.0],
        }
    )
    new = pl.DataFrame(
        {
            "seed": [1, 1, 1, 1],
            "task_id": [1, 2, 3, 4],
            "tct_s": [8.0, 5.0, 4.0, 2.0],
            "write_s": [1.0, 5.0, 3.0, 1.0],
        }
    )
    # Shares: 2/18 (bin 1), 15/15 (bin 5), 7/8 (bin 4), 4/8 = 0.5 (bin 3: a bin's lower edge is in it);
    # job 5 ran under one policy only and is left out.
    got = job_write_bins(base, new).to_dicts()
    assert [r["bin"] for r in got] == [1, 3, 4, 5]
    assert [r["share"] for r in got] == pytest.approx([0.25] * 4)
    assert [r["end_to_end"] for r in got] == pytest.approx([10 / 8, 6 / 2, 4 / 4, 10 / 5])
    assert [r["writes"] for r in got] == pytest.approx([1.0, 3.0, 4 / 3, 2.0])


@needs_data
def test_the_jobs_experiment_reports_job_speedups_and_bins(tmp_path: Path) -> None:
    """Two variants of the jobs scenario for 60 s: the job metrics are the ratios of the points'
    values, and the run draws Figure 6's bins."""
    from netheat.experiments import load_experiment, run_experiment

    exp = tmp_path / "exp.toml"
    exp.write_text(
        f"""[experiment]
name = "jobs"
kind = "scenario"
seeds = [1]

[base]
scenario = "{JOBS}"
"workload.duration" = "60s"

[[variant]]
name = "uniform"
"storage.policy" = "uniform"

[[variant]]
name = "sinbad"

[[metric]]
name = "jobs"
kind = "ratio"
of = "tct_mean_s"
numerator = "uniform"
denominator = "sinbad"

[[metric]]
name = "write_only"
kind = "ratio"
of = "write-job.write_mean_s"
numerator = "uniform"
denominator = "sinbad"
"""
    )
    res = run_experiment(load_experiment(exp), tmp_path / "out", workers=1, progress=False)
    assert not res.errors
    vals = {p.variant: res.values[p.hash] for p in res.points}
    m = res.summary["metrics"]
    assert m["jobs"]["ours"] == pytest.approx(vals["uniform"]["tct_mean_s"] / vals["sinbad"]["tct_mean_s"])
    assert m["write_only"]["ours"] == pytest.approx(
        vals["uniform"]["write-job.write_mean_s"] / vals["sinbad"]["write-job.write_mean_s"]
    )
    from netheat.experiments.plots import job_bin_figures

    [(png, _)] = job_bin_figures(tmp_path / "out")
    assert png.name == "job_write_bins.png" and png.stat().st_size > 10_000


def test_paired_ratio_quantiles_by_hand() -> None:
    """Per-row ratios [2, 4, 3, 4], sorted [2, 3, 4, 4]: the median interpolates to 3.5, the 85th
    percentile (position 2.55) is 4; a row whose denominator is 0 is left out."""
    import numpy as np

    from netheat.experiments.registry import metrics

    a, b = np.array([2.0, 4.0, 6.0, 8.0, 5.0]), np.array([1.0, 1.0, 2.0, 2.0, 0.0])
    kinds = metrics()
    assert kinds["paired_ratio_p50"].paired(a, b, 0.05) == pytest.approx(3.5)
    assert kinds["paired_ratio_p85"].paired(a, b, 0.05) == pytest.approx(4.0)
    assert math.isnan(kinds["paired_ratio_p95"].paired(a[4:], b[4:], 0.05))


def test_job_size_bins_by_hand() -> None:
    """Figure 7's classes by bytes written, decades from 100 MB (an edge is in the class above
    it): 50 MB and 100 MB jobs fall apart, and each class's improvement is a ratio of its means."""
    import polars as pl

    from netheat.experiments.plots import job_size_bins

    base = pl.DataFrame(
        {
            "seed": [1] * 5,
            "task_id": [1, 2, 3, 4, 5],
            "tct_s": [2.0, 6.0, 9.0, 12.0, 4.0],
            "written": [5e7, 1e8, 2e8, 3e10, 2e9],
        }
    )
    new = base.with_columns(pl.Series("tct_s", [1.0, 3.0, 6.0, 8.0, 4.0]))
    got = job_size_bins(base, new).to_dicts()
    assert [r["size_class"] for r in got] == [1, 2, 3, 4]
    assert [r["share"] for r in got] == pytest.approx([0.2, 0.4, 0.2, 0.2])
    assert [r["end_to_end"] for r in got] == pytest.approx([2.0, (6 + 9) / (3 + 6), 1.0, 1.5])
