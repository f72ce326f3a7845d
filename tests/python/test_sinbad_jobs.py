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
