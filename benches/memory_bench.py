"""Memory benchmark: what the memory budget charges for application tasks against what a run holds.

Every workload table is checked against the memory budget before it is generated, with per-item
costs (`netheat-core/src/budget.rs`: a flow, a task, a step). This benchmark keeps those costs
honest: for each task shape it runs `netheat run` at two sizes on the 36,000-host datacenter,
measures the growth of the process's peak RSS (the engine, the runner, the tables in Rust and in
Python, the Parquet output), and compares it with the growth of the scenario's own
`workload_estimate_bytes` (stats.json). An estimate under the measured growth would let a run
exhaust a machine the budget says it fits; one far over it refuses runs that fit. The target: the
estimate at least the measured growth and, for tasks whose flows are not kept, at most 4 times
it (a kept flow is charged for a run whose flows are all in flight at once).

Run by ``make bench``; about five minutes on one core. ``python benches/memory_bench.py SPC``
runs only the cases whose name holds ``SPC``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETHEAT = [sys.executable, "-m", "netheat.cli"]
TOPOLOGY = ROOT / "examples" / "topologies" / "baraat-36k.toml"

MEMCACHE = """[scenario]
seed = 1
record = {record}
[topology]
file = "{topology}"
[workload]
duration = "{size}s"
[[workload.app]]
kind = "memcache"
rate = 10000.0
server-racks = [3]
"""

AGGREGATION = """[scenario]
seed = 1
record = {record}
[topology]
file = "{topology}"
[[workload.app]]
kind = "aggregation"
task-sizes = "uniform"
structure = "{structure}"
placement = "rack"
{two_stage}fanout = 39
load = 0.8
aggregators = 30
tasks = {size}
[scheduling]
policy = "{policy}"
"""

TWO_STAGE = "mid-aggregators = 30\nselectivity = 0.03\n"

HIGH = 4.0
"""Largest estimate growth over measured growth for tasks whose flows are not kept."""

# (name, template, fields, the two sizes, tasks per size unit, largest ratio). A kept flow is
# charged `BYTES_PER_FLOW` (2 KiB), what it holds when every flow of a run is in flight at once
# (950 B measured); these runs have few in flight, so only the lower bound applies to them.
CASES: list[tuple[str, str, dict[str, str], tuple[int, int], int, float]] = [
    (
        "memcache requests (3 steps, 2 flows), flows unkept",
        MEMCACHE,
        {"record": "[]"},
        (10, 40),
        10_000,
        HIGH,
    ),
    (
        "one-stage aggregation (39 flows), flows unkept",
        AGGREGATION,
        {"record": "[]", "structure": "one-stage", "two_stage": "", "policy": "fair-share"},
        (5_000, 20_000),
        1,
        HIGH,
    ),
    (
        "two-stage aggregation (1,200 flows), flows unkept",
        AGGREGATION,
        {"record": "[]", "structure": "two-stage", "two_stage": TWO_STAGE, "policy": "fair-share"},
        (600, 2_400),
        1,
        HIGH,
    ),
    (
        "one-stage aggregation (39 flows), every table kept",
        AGGREGATION,
        {"record": '["flows", "links"]', "structure": "one-stage", "two_stage": "", "policy": "fair-share"},
        (5_000, 20_000),
        1,
        float("inf"),
    ),
    # Baraat's SPC protocol simulator holds every flow to the end whatever is recorded
    # (`BYTES_PER_PROTOCOL_FLOW`), so its flows get both bounds.
    (
        "two-stage aggregation (1,230 flows), SPC protocol",
        AGGREGATION,
        {"record": "[]", "structure": "two-stage", "two_stage": TWO_STAGE, "policy": "spc"},
        (600, 2_400),
        1,
        HIGH,
    ),
    (
        "one-stage aggregation (39 flows), SPC protocol",
        AGGREGATION,
        {"record": "[]", "structure": "one-stage", "two_stage": "", "policy": "spc"},
        (5_000, 20_000),
        1,
        HIGH,
    ),
    (
        "one-stage aggregation (39 flows), SPC, every table kept",
        AGGREGATION,
        {"record": '["flows", "links"]', "structure": "one-stage", "two_stage": "", "policy": "spc"},
        (5_000, 20_000),
        1,
        HIGH,
    ),
]


def run(text: str, work: Path) -> tuple[float, float]:
    """Peak RSS (bytes) of `netheat run` on `text`, and its workload estimate (bytes)."""
    scenario = work / "s.toml"
    scenario.write_text(text)
    out = work / "out"
    # The runs hold at most about 1 GB; a fixed budget keeps a small machine's default (half its
    # memory) from refusing the largest estimate, which is what is being measured.
    env = {**os.environ, "NETHEAT_MEMORY_BUDGET": "16GiB"}
    log = work / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [*NETHEAT, "run", str(scenario), "--out", str(out), "--force"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"netheat run failed:\n{log.read_text()}")
    stats = json.loads((out / "stats.json").read_text())
    return usage.ru_maxrss * 1024.0, float(stats["workload_estimate_bytes"])


def main(only: str = "") -> int:
    print(
        f"{'memory benchmark (growth per task)':<52} {'measured':>11} {'estimate':>11} {'ratio':>7} {'ok':>4}"
    )
    print("-" * 89)
    ok_all = True
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, template, fields, sizes, per_unit, high in CASES:
            if only not in name:
                continue
            peaks = []
            for size in sizes:
                text = template.format(topology=TOPOLOGY, size=size, **fields)
                peaks.append(run(text, work))
            tasks = (sizes[1] - sizes[0]) * per_unit
            measured = (peaks[1][0] - peaks[0][0]) / tasks
            estimate = (peaks[1][1] - peaks[0][1]) / tasks
            ratio = estimate / measured if measured > 0 else float("inf")
            ok = 1.0 <= ratio <= high
            ok_all &= ok
            print(
                f"{name:<52} {measured:>9.0f} B {estimate:>9.0f} B {ratio:>7.2f} {'yes' if ok else 'NO':>4}"
            )
    print(f"target: the estimate 1 to {HIGH:g} times the measured growth (kept flows: at least 1 time)")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main(" ".join(sys.argv[1:])))
