"""benches/hdfs/predict.py: the simulator's input is the emulated bench's (same draws),
and the pipeline-write model on a hand-computed case."""

from __future__ import annotations

import importlib
import math
import os
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches" / "hdfs"))
predict = importlib.import_module("predict")
bench = importlib.import_module("run")


def test_java_random_matches_java() -> None:
    # Values printed by Java 17's jshell: new Random(42).nextDouble(),
    # new Random(42).nextInt().
    assert predict.JavaRandom(42).next_double() == 0.7275636800328681
    assert predict.JavaRandom(42).next_int() == -1170105035


def test_writer_draws_are_blockwriters() -> None:
    # jshell: r = new Random(100000L); r.nextBytes(new byte[1 << 20]); then five times
    # (long) (-Math.log(1 - r.nextDouble()) * 1.0 * 1000): 182 320 1074 40 208 (ms).
    assert predict.writer_draws(100000, 1.0, 1.0, 5) == ([0.182, 0.32, 1.074, 0.04, 0.208], [1] * 5)
    # With files of 1.47 blocks on average, each think draw is followed by the block
    # count's, 1 + (int) Math.floor(Math.log(1 - r.nextDouble()) / Math.log(0.47 / 1.47)):
    # jshell prints 182 1, 1074 1, 208 2, 615 1, 675 1, 377 3.
    thinks, blocks = predict.writer_draws(100000, 1.0, 1.47, 6)
    assert thinks == [0.182, 1.074, 0.208, 0.615, 0.675, 0.377]
    assert blocks == [1, 1, 2, 1, 1, 3]


def test_round_spec_is_run_pys_round() -> None:
    args = bench.arg_parser().parse_args([])
    text, phases = predict.round_spec(args, 1001, "hops")
    assert phases == bench.schedule(args, random.Random(1001))
    lines = text.splitlines()
    writers = [ln.split() for ln in lines if ln.startswith("writer ")]
    # run.py: writer w on DataNode w * 8 // 4; seed 1001 * 100 + w.
    assert [int(w[1]) for w in writers] == [0, 2, 4, 6]
    thinks, blocks = predict.writer_draws(100101, 1.0, 1.47, 5)
    assert [float(x) for x in writers[1][2:7]] == thinks
    # run.py's files: 1.47 blocks on average (Sinbad section 4.3).
    per_writer = [ln.split() for ln in lines if ln.startswith("writer-blocks ")]
    assert [int(w[1]) for w in per_writer] == [0, 2, 4, 6]
    assert [int(x) for x in per_writer[1][2:7]] == blocks
    counts = [int(x) for w in per_writer for x in w[2:]]
    assert abs(sum(counts) / len(counts) - 1.47) < 0.05
    assert "bg-rate-bps 42500000.0" in lines
    assert "block-bytes 8388608" in lines
    assert "small-block-bytes 4194304" in lines
    assert next(ln for ln in lines if ln.startswith("phase ")) == "phase " + " ".join(
        map(str, [phases[0][0], *phases[0][1]])
    )


def one_block_spec(model: list[str] | None = None) -> str:
    """One writer on DataNode 0 of 4 racks x 2 at 50 Mbit/s, one 8 MiB block at 0.5 s,
    DataNode 2 hot (4 flows paced at 10.625 Mbit/s); `model`: extra setting lines."""
    lines = [
        "racks 4",
        "hosts-per-rack 2",
        "host-bps 50e6",
        "classes High High Medium Low",
        "block-bytes 8388608",
        "bg-rate-bps 42.5e6",
        "bg-flows 4",
        "bg-end-s 100",
        "writes-start-s 0",
        "writes-duration-s 60",
        "report-s 1",
        "small-block-bytes 4194304",
        "pipeline hops",
        *(model or []),
        "phase 0 2",
        "writer 0 0.5",
    ]
    return "\n".join(lines)


@pytest.mark.skipif(
    not os.path.exists(predict.BIN), reason="hdfs_predict not built (make bench-hdfs-predict)"
)
def test_one_block_behind_one_loaded_link_by_hand() -> None:
    # One writer on DataNode 0, DataNode 2 loaded by 4 flows paced at 10.625 Mbit/s
    # on its 50 Mbit/s link; `ccp` sends the block to rack 1 (DataNodes 2 and 3, the
    # only High rack but the writer's). The hop into DataNode 2 gets the max-min share
    # 50 / 5 = 10 Mbit/s: 8 MiB = 67,108,864 bits take 6.7108864 s; the other hop
    # 1.342 s at 50 Mbit/s. The block: 6.7108864 s after its start at 0.5 s.
    rows = predict.simulate(one_block_spec(), ["ccp"], [1])
    assert len(rows) == 1
    assert sorted(rows[0]["replicas"][1:]) == [2, 3]
    assert math.isclose(rows[0]["start_s"], 0.5, abs_tol=1e-6)
    assert math.isclose(rows[0]["write_s"], 67108864 / 10e6, abs_tol=1e-5)


@pytest.mark.skipif(
    not os.path.exists(predict.BIN), reason="hdfs_predict not built (make bench-hdfs-predict)"
)
def test_the_calibrated_models_lines_reach_the_simulator() -> None:
    # The same block as above with the calibrated model's two settings: background
    # weight 0.5 shares the hot link 1 : 4 x 0.5, so the hop gets 50 / 3 Mbit/s
    # (each background flow 8.33, under its 10.625 cap): 67,108,864 / (50e6 / 3) =
    # 4.0265 s; a 0.3 s per-block overhead comes after the last hop: 4.3265 s.
    args = bench.arg_parser().parse_args([])
    text, _ = predict.round_spec(args, 1000, "hops", {"block-overhead-s": 0.3, "bg-weight": 0.5})
    lines = text.splitlines()
    assert "block-overhead-s 0.3" in lines and "bg-weight 0.5" in lines
    rows = predict.simulate(one_block_spec(["block-overhead-s 0.3", "bg-weight 0.5"]), ["ccp"], [1])
    assert math.isclose(rows[0]["write_s"], 67108864 / (50e6 / 3) + 0.3, abs_tol=1e-5)


def test_calibration_runs_are_other_runs_than_the_measurement() -> None:
    # The calibration runs use the default policy only and other seeds than every
    # recorded measurement, and run.py accepts their arguments.
    measured_seeds = {b + r for (_, b) in predict.EMULATED for r in range(3)}
    for name, cal in predict.CALIBRATION.items():
        a = bench.arg_parser().parse_args(["--modes", "default", *cal["argv"]])
        assert a.modes == "default"
        assert not {a.seed_base + r for r in range(a.rounds)} & measured_seeds, name
    idle = bench.arg_parser().parse_args(predict.CALIBRATION["idle"]["argv"])
    assert idle.hot_max == 0
    # The default form is one DataNode per rack (the Sinbad paper's EC2 form).
    d = bench.arg_parser().parse_args([])
    assert d.racks == d.datanodes == 8
    text, _ = predict.round_spec(d, 1000, "hops")
    assert "racks 8" in text.splitlines() and "hosts-per-rack 1" in text.splitlines()


def test_pooled_measurements_weight_each_by_its_blocks() -> None:
    # One DataNode per rack, four measurements: default (120 x 4.42 + 123 x 4.44 +
    # 128 x 4.56 + 122 x 4.38) / 493 = 4.45144 s, sinbad (158 x 3.58 + 153 x 3.45 +
    # 169 x 3.40 + 134 x 3.83) / 614 = 3.55262 s: 1.2530x together.
    d = predict.pooled_emulated_avg(8, "default")
    s = predict.pooled_emulated_avg(8, "sinbad")
    assert math.isclose(d, (120 * 4.42 + 123 * 4.44 + 128 * 4.56 + 122 * 4.38) / 493, rel_tol=1e-12)
    assert math.isclose(d / s, 1.2530, abs_tol=5e-5)
    # A form with one measurement: its own average.
    assert predict.pooled_emulated_avg(4, "sinbad") == 3.80


def test_the_report_lag_is_half_the_policys_refresh_period() -> None:
    # The HDFS policy's refresh period: PlacementKeys.REFRESH_MS_DEFAULT, which run.py
    # does not override; a report waits for the next refresh, half a period on average.
    keys = (
        ROOT
        / "java"
        / "hdfs-placement"
        / "src"
        / "main"
        / "java"
        / "io"
        / "netheat"
        / "hdfs"
        / "PlacementKeys.java"
    ).read_text()
    ms = int(keys.split("REFRESH_MS_DEFAULT =", 1)[1].split(";", 1)[0].strip().rstrip("L").replace("_", ""))
    assert ms / 1000 == predict.REFRESH_S
    assert "netheat.placement.refresh.ms" not in (ROOT / "benches" / "hdfs" / "run.py").read_text()
    args = bench.arg_parser().parse_args([])
    text, _ = predict.round_spec(args, 1000, "hops")
    assert f"report-lag-s {ms / 2000}" in text.splitlines()
