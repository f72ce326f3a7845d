"""netheat.metrics: the one quantile definition, the same as netheat_core::stats."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netheat.metrics import mean, quantile, quantiles, weighted_mean


def test_linear_interpolation_by_hand() -> None:
    v = [4.0, 1.0, 3.0, 2.0]
    # h = 3 * 0.5 = 1.5 -> 2 + 0.5; h = 3 * 0.9 = 2.7 -> 3 + 0.7.
    assert quantile(v, 0.5) == 2.5
    assert quantile(v, 0.9) == pytest.approx(3.7, abs=1e-12)
    assert quantile(v, 0.0) == 1.0
    assert quantile(v, 1.0) == 4.0
    # p99 of 1..100: h = 99 * 0.99 = 98.01 -> 99 + 0.01 (nearest rank: 99).
    assert quantile(np.arange(1.0, 101.0), 0.99) == pytest.approx(99.01, abs=1e-9)
    # h = 2 * 0.99 = 1.98 -> 3 + 0.98 * (5 - 3) (nearest rank: 5).
    assert quantile([5.0, 1.0, 3.0], 0.99) == pytest.approx(4.96, abs=1e-12)
    assert quantiles([3.0, 1.0, 2.0], [0.0, 0.5, 1.0]) == [1.0, 2.0, 3.0]
    assert mean([1.0, 2.0, 6.0]) == 3.0


def test_edge_cases_follow_the_rust_rules() -> None:
    assert math.isnan(quantile([], 0.5))
    assert math.isnan(quantile(np.array([]), 0.99))
    assert math.isnan(quantile([1.0], 1.5))
    assert math.isnan(quantile([1.0], -0.1))
    assert math.isnan(quantile([1.0, math.nan], 0.5))
    assert quantile([7.0], 0.99) == 7.0
    # Equal neighbours are returned as they are, infinities included.
    assert quantile([1.0, math.inf, math.inf], 0.9) == math.inf
    assert math.isnan(mean([]))


def test_weighted_mean_by_hand() -> None:
    # A 1-byte task of 2 s and a 3-byte task of 4 s: (2 + 12) / 4.
    assert weighted_mean([2.0, 4.0], [1.0, 3.0]) == 3.5
    assert weighted_mean([2.0, 4.0], [1.0, 1.0]) == mean([2.0, 4.0])
    assert math.isnan(weighted_mean([], []))
    assert math.isnan(weighted_mean([1.0], [0.0]))
    assert math.isnan(weighted_mean([1.0, 2.0], [1.0, math.nan]))
    with pytest.raises(ValueError, match="2 values but 1 weights"):
        weighted_mean([1.0, 2.0], [1.0])


def test_agrees_with_numpy_linear() -> None:
    rng = np.random.default_rng(27)
    for n in (1, 2, 3, 10, 101, 1000):
        x = rng.lognormal(0.0, 2.0, n)
        for q in (0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.98, 0.99, 1.0):
            assert quantile(x, q) == pytest.approx(float(np.quantile(x, q, method="linear")), rel=1e-12)


def test_bit_identical_to_netheat_core_stats() -> None:
    # The baraat point reports the mean and quantiles of its task times
    # through netheat_core::stats, and returns the times themselves.
    from netheat.experiments import points

    params = {
        "workload": "bing",
        "policy": "fair-share",
        "load": 0.5,
        "tasks": 200,
        "fanout": 4,
        "pods": 1,
        "racks-per-pod": 2,
        "hosts-per-rack": 10,
        "aggregators": 2,
    }
    out = points.run("baraat", params, 3)
    dtype, raw = out["tables"]["tasks"]["tct_s"]
    tct = np.frombuffer(raw, dtype=np.dtype(dtype))
    done = tct[~np.isnan(tct)]
    assert len(done) == 200
    v = out["values"]
    assert quantile(done, 0.99) == v["p99_tct_s"]
    assert quantile(done, 0.95) == v["p95_tct_s"]
    assert quantile(done, 0.5) == v["median_tct_s"]
    assert mean(done) == v["mean_tct_s"]
