"""Subways benchmark: the whole ``experiments/subways.toml`` sweep with ``--quick``.

Runs ``netheat experiment run experiments/subways.toml --quick`` into a fresh
temporary directory (nothing reused) on the local backend and prints the
wall time against the issue's target (< 10 minutes on 2 cores) with the
headline metrics.

Usage: ``python benches/subways_bench.py [--full]`` (``--full``: the whole sweep, not quick).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 600.0
HEADLINE = (
    "shuffle_speedup_intracluster_peak",
    "shuffle_speedup_crosscluster_peak",
    "upgrade_speedup_type2d_10g_10g",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--full", action="store_true", help="run the full sweep instead of --quick")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="netheat-subways-bench-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "netheat.cli",
            "experiment",
            "run",
            str(ROOT / "experiments" / "subways.toml"),
        ]
        cmd += ["--out", tmp] + ([] if args.full else ["--quick"])
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
            return 1
        summary = json.loads((Path(tmp) / "summary.json").read_text())
    points = summary["points"]["total"]
    label = "subways sweep" + ("" if args.full else " --quick")
    ok = wall < TARGET_S or args.full
    print(f"{'benchmark':<28} {'points':>7} {'wall':>9} {'target':>9} {'ok':>4}")
    print("-" * 61)
    print(f"{label:<28} {points:>7} {wall:>7.1f} s {'< 600 s':>9} {'yes' if ok else 'NO':>4}")
    for name in HEADLINE:
        m = summary["metrics"][name]
        print(f"  {name:<40} ours {m['ours']:.3g}  paper {m['paper']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
