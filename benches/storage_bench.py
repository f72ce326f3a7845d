"""Sinbad experiment timing: one point (uniform, sinbad at q = 10 s, optimistic run) per duration.

Prints a table of wall-clock seconds; the issue's target is the Sinbad
experiment (1 simulated hour of the Facebook coflow trace, 150 racks x 20
machines) in under 3 minutes on 2 cores. The last row times the whole
``experiments/sinbad.toml`` (the simulation point with q = 0 and the
optimistic run, the in-memory pair, the scaled-background point) through the
experiment runner on 2 workers. Run with
``python benches/storage_bench.py [--quick]`` (``--quick`` stops at 10
simulated minutes and skips the whole-experiment row).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from netheat.experiments import points


def main() -> None:
    """Time Sinbad points for growing simulated durations and print the table."""
    durations = [300.0, 600.0] if "--quick" in sys.argv else [300.0, 1200.0, 3600.0]
    print(f"{'simulated_s':>12} {'blocks':>8} {'speedup':>8} {'wall_s':>8} {'target':>8}")
    for d in durations:
        t0 = time.perf_counter()
        out = points.run("sinbad", {"duration": d, "drain": 600.0}, 1)
        wall = time.perf_counter() - t0
        v = out["values"]
        target = "<180" if d == 3600.0 else ""
        print(f"{d:12.0f} {v['blocks']:8.0f} {v['block_write_speedup']:8.3f} {wall:8.1f} {target:>8}")
    if "--quick" not in sys.argv:
        toml = Path(__file__).resolve().parents[1] / "experiments" / "sinbad.toml"
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            run = ["experiment", "run", str(toml), "--out", out, "--workers", "2"]
            cmd = [sys.executable, "-m", "netheat.cli", *run]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
        print(f"{'sinbad.toml':>12} {'':>8} {'':>8} {wall:8.1f} {'<180':>8}")


if __name__ == "__main__":
    main()
