"""Sinbad experiment timing: the uniform and sinbad (q = 10 s) runs of the scenario per duration.

Prints a table of wall-clock seconds; the target is the Sinbad experiment
(1 simulated hour of the Facebook coflow trace, 150 racks x 20 machines) in
under 3 minutes on 2 cores. Each row runs ``experiments/scenarios/sinbad-fb2010.toml``
under uniform (immediate decisions) and under sinbad in one process, so the
second run reuses the first's precalculated background (the shuffles alone;
``precalculate_cached``), and reports the paired block write speedup. The
last row times the whole ``experiments/sinbad.toml`` (six variants) through
the experiment runner on 2 workers. Run with
``python benches/storage_bench.py [--quick]`` (``--quick`` stops at 10
simulated minutes and skips the whole-experiment row).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from netheat import Scenario

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Time the Sinbad scenario for growing simulated durations and print the table."""
    durations = [300.0, 600.0] if "--quick" in sys.argv else [300.0, 1200.0, 3600.0]
    scenario = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "sinbad-fb2010.toml")
    print(f"{'simulated_s':>12} {'blocks':>8} {'speedup':>8} {'wall_s':>8} {'target':>8}")
    for d in durations:
        t0 = time.perf_counter()
        base = scenario.with_overrides({"workload.duration": f"{d}s", "scenario.record": []})
        uniform = base.with_overrides({"storage.policy": "uniform", "storage.decision-interval": "0s"}).run()
        sinbad = base.run()
        wall = time.perf_counter() - t0
        u = uniform.table("blocks")
        s = sinbad.table("blocks")
        j = u.join(s, keys=["task_id", "block"], right_suffix="_sinbad")
        a = j["write_s"].to_numpy(zero_copy_only=False)
        b = j["write_s_sinbad"].to_numpy(zero_copy_only=False)
        ok = ~(np.isnan(a) | np.isnan(b))
        speedup = float(a[ok].mean() / b[ok].mean())
        target = "<180" if d == 3600.0 else ""
        print(f"{d:12.0f} {int(ok.sum()):8d} {speedup:8.3f} {wall:8.1f} {target:>8}")
    if "--quick" not in sys.argv:
        toml = ROOT / "experiments" / "sinbad.toml"
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            run = ["experiment", "run", str(toml), "--out", out, "--workers", "2", "--seeds", "1"]
            cmd = [sys.executable, "-m", "netheat.cli", *run]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
        print(f"{'sinbad.toml, 1 seed':>12} {'':>8} {'':>8} {wall:8.1f} {'<180':>8}")


if __name__ == "__main__":
    main()
