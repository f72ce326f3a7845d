"""Analytics benchmark: ``netheat analyze`` on 100 million link samples.

Generates 10,000 directed links x 10,000 windows of 5 s (5,000 ToR-aggregation
links of 1,250 racks and 5,000 aggregation-spine links) as one Parquet file,
in chunks with numpy (a few hundred MB at a time), plus 1,000,000 latency
samples naming the ToR each operation used, in a temporary directory. Then
runs ``netheat analyze`` in a child process and prints rows, wall time and
peak RSS (``resource.getrusage`` of this process and of its children)
against the targets (< 60 s, < 8 GB).

Usage: ``python benches/analytics_bench.py [--links N] [--windows N] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

INTERVAL_S = 5.0
TARGET_S = 60.0
TARGET_GB = 8.0


def _dict(codes: np.ndarray, values: list[str]) -> pa.DictionaryArray:  # type: ignore[type-arg]
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(values))


def generate_links(path: Path, n_links: int, n_windows: int, seed: int = 0) -> int:
    """Write ``n_links x n_windows`` link samples to ``path`` (time-major chunks); return the row count."""
    rng = np.random.default_rng(seed)
    half = n_links // 2
    link = np.arange(n_links, dtype=np.uint32)
    layer = (link >= half).astype(np.int32)  # 0 tor-agg, 1 agg-spine
    direction = (link % 2).astype(np.int32)  # 0 up, 1 down
    n_racks = max(half // 4, 1)
    rack = np.where(layer == 0, (link.astype(np.int64) // 4) % n_racks, -1)
    rack_names = [f"tor{r}" for r in range(n_racks)]
    rack_type = np.asarray(rng.integers(0, 3, n_racks))  # compute, disk, mixed
    uplink = np.asarray(rng.integers(0, 3, n_racks))  # High, Medium, Low
    base = rng.beta(2.0, 5.0, n_links) * 0.9
    phase = rng.uniform(0, 2 * np.pi, n_links)
    period = 6 * 3600.0
    rows = 0
    chunk = max(1, 5_000_000 // n_links)
    schema = pa.schema(
        [
            ("timestamp", pa.float64()),
            ("link", pa.uint32()),
            ("direction", pa.dictionary(pa.int32(), pa.string())),
            ("layer", pa.dictionary(pa.int32(), pa.string())),
            ("rack", pa.dictionary(pa.int32(), pa.string())),
            ("rack_type", pa.dictionary(pa.int32(), pa.string())),
            ("uplink_class", pa.dictionary(pa.int32(), pa.string())),
            ("utilization", pa.float64()),
        ]
    )
    rack_codes = np.where(rack >= 0, rack, 0)
    rack_mask = rack < 0
    with pq.ParquetWriter(path, schema, compression="zstd") as w:
        for w0 in range(0, n_windows, chunk):
            nw = min(chunk, n_windows - w0)
            t = (np.arange(w0, w0 + nw, dtype=np.float64) * INTERVAL_S)[:, None]
            u = base[None, :] + 0.3 * np.sin(2 * np.pi * t / period + phase[None, :])
            u += rng.normal(0.0, 0.03, (nw, n_links))
            u = np.clip(u, 0.0, 1.0).reshape(-1)
            tiled = np.tile
            cols = [
                pa.array(np.repeat(t[:, 0], n_links)),
                pa.array(tiled(link, nw)),
                _dict(tiled(direction, nw), ["up", "down"]),
                _dict(tiled(layer, nw), ["tor-agg", "agg-spine"]),
                pa.DictionaryArray.from_arrays(
                    pa.array(tiled(rack_codes, nw).astype(np.int32), mask=tiled(rack_mask, nw)),
                    pa.array(rack_names),
                ),
                pa.DictionaryArray.from_arrays(
                    pa.array(tiled(rack_type[rack_codes], nw).astype(np.int32), mask=tiled(rack_mask, nw)),
                    pa.array(["compute", "disk", "mixed"]),
                ),
                pa.DictionaryArray.from_arrays(
                    pa.array(tiled(uplink[rack_codes], nw).astype(np.int32), mask=tiled(rack_mask, nw)),
                    pa.array(["High", "Medium", "Low"]),
                ),
                pa.array(u),
            ]
            w.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=1_000_000)
            rows += nw * n_links
    return rows


def generate_latency(path: Path, n: int, n_links: int, n_windows: int, seed: int = 1) -> None:
    """Write ``n`` latency samples, each naming one ToR, to ``path``."""
    rng = np.random.default_rng(seed)
    n_racks = max(n_links // 2 // 4, 1)
    ops = np.array(["hdd-read", "ssd-read", "hdd-write", "ramstore-read"])
    table = pa.table(
        {
            "start_s": rng.uniform(0, n_windows * INTERVAL_S, n),
            "latency_s": rng.lognormal(-5.0, 0.5, n),
            "network_latency_s": rng.lognormal(-7.0, 0.5, n),
            "op": pa.array(ops[rng.integers(0, len(ops), n)]),
            "tors": pa.array(np.char.add("tor", rng.integers(0, n_racks, n).astype(str))),
        }
    )
    pq.write_table(table, path)


def _rss_gb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024**2  # KiB on Linux


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--links", type=int, default=10_000)
    ap.add_argument("--windows", type=int, default=10_000)
    ap.add_argument("--latency", type=int, default=1_000_000)
    ap.add_argument("--keep", default=None, help="directory to keep the inputs and outputs in")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="netheat-analytics-bench-") as tmp:
        d = Path(args.keep) if args.keep else Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        rows = generate_links(d / "links.parquet", args.links, args.windows)
        generate_latency(d / "latency.parquet", args.latency, args.links, args.windows)
        gen_s = time.perf_counter() - t0
        cmd = [
            sys.executable,
            "-m",
            "netheat.cli",
            "analyze",
            "--links",
            str(d / "links.parquet"),
            "--latency",
            str(d / "latency.parquet"),
            "--out",
            str(d / "out"),
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return 1
    rss = max(_rss_gb(resource.RUSAGE_CHILDREN), 0.0)
    self_rss = _rss_gb(resource.RUSAGE_SELF)
    ok = wall < TARGET_S and rss < TARGET_GB
    print(f"(inputs generated in {gen_s:.1f} s; generator peak RSS {self_rss:.2f} GB)")
    print(f"{'analytics benchmark':<44} {'rows':>13} {'wall':>9} {'peak RSS':>10} {'targets':>18} {'ok':>4}")
    print("-" * 103)
    name = f"netheat analyze, {args.links:,} links x {args.windows:,} windows"
    print(
        f"{name:<44} {rows:>13,} {wall:>7.1f} s {rss:>7.2f} GB "
        f"{f'< {TARGET_S:g} s, < {TARGET_GB:g} GB':>18} {'yes' if ok else 'NO':>4}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
