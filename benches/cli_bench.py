"""CLI benchmarks: end-to-end wall time of netheat commands, printed as a table.

Run by ``make bench`` after the Rust benchmark table.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETHEAT = [sys.executable, "-m", "netheat.cli"]

CASES = [
    ("topo check, 36,000 hosts", ["topo", "check", "examples/topologies/baraat-36k.toml"], 2.0),
    ("topo show, 36,000 hosts", ["topo", "show", "examples/topologies/baraat-36k.toml"], 2.0),
]


def main() -> int:
    print(f"{'CLI benchmark':<55} {'best of 3':>12} {'target':>16} {'ok':>6}")
    print("-" * 92)
    ok_all = True
    for name, args, target in CASES:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([*NETHEAT, *args], cwd=ROOT, check=True, capture_output=True)
            best = min(best, time.perf_counter() - t0)
        ok = best < target
        ok_all &= ok
        print(f"{name:<55} {best:>10.3f} s {'< ' + str(target) + ' s':>16} {'yes' if ok else 'NO':>6}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
