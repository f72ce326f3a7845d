"""Sinbad scenario kind: quick runs through the binding and the runner."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from netheat.data import resolve_data_dir
from netheat.errors import InputError
from netheat.experiments import points
from netheat.experiments.registry import get_kind, metrics

needs_data = pytest.mark.skipif(
    not resolve_data_dir().exists, reason="data directory absent (the Sinbad point replays the coflow trace)"
)


_KEYS = {
    "duration_s": "duration",
    "drain_s": "drain",
    "seek_s": "disk-access",
    "disk_bytes_per_s": "disk-rate",
    "capacity_bytes": "capacity",
}


def _params(kw: dict[str, Any]) -> dict[str, Any]:
    return {_KEYS.get(k, k.replace("_", "-")): v for k, v in kw.items()}


def small(**kw: Any) -> dict[str, Any]:
    """A small point: 12 racks x 4 hosts, 5 simulated minutes."""
    args: dict[str, Any] = dict(
        racks=12, hosts_per_rack=4, duration_s=300.0, drain_s=300.0, block_requests_per_s=0.5
    )
    args.update(kw)
    out = points.run("sinbad", _params(args), 1)
    blocks = {k: np.frombuffer(raw, dtype=np.dtype(d)) for k, (d, raw) in out["tables"]["blocks"].items()}
    return {"values": out["values"], **blocks}


def ccp(**kw: Any) -> dict[str, float]:
    """One ``ccp`` point's values (keyword names with underscores, as Python spells them)."""
    values: dict[str, float] = points.run("ccp", _params(kw), 1)["values"]
    return values


@needs_data
def test_point_pairs_blocks_and_shares_add_up() -> None:
    out = small()
    v = out["values"]
    assert v["blocks"] == len(out["uniform_s"]) == len(out["policy_s"]) > 0
    assert v["blocks_faster_pct"] + v["blocks_same_pct"] + v["blocks_slower_pct"] == pytest.approx(100.0)
    # Speedup is the ratio of the two mean write times reported.
    assert v["block_write_speedup"] == pytest.approx(
        v["mean_block_write_s_uniform"] / v["mean_block_write_s_policy"]
    )
    # No write beats the disk: a 256 MiB block at 50 MB/s takes >= 5.37 s.
    full = [t for t, b in zip(out["uniform_s"], out["bytes"], strict=True) if b == 256 * 2**20]
    assert min(full) >= 256 * 2**20 / 50e6 - 1e-6
    assert v["placement_failures"] == 0
    assert v["storage_imbalance_pct"] < 10.0
    # The paper's metrics: absolute Cv decreases, up and down; the optimistic
    # run; the wait for q = 10 s only counts in the `with_wait` speedup.
    assert v["median_cv_decrease_up"] == pytest.approx(v["median_cv_up_uniform"] - v["median_cv_up_policy"])
    assert v["median_cv_decrease_down"] == pytest.approx(
        v["median_cv_down_uniform"] - v["median_cv_down_policy"]
    )
    assert v["block_write_speedup_optimistic"] > 0
    assert v["block_write_speedup_with_wait"] < v["block_write_speedup"]


@needs_data
def test_uniform_against_itself_is_identical() -> None:
    v = small(policy="uniform", optimistic=False)["values"]
    assert v["block_write_speedup"] == pytest.approx(1.0)
    assert v["blocks_same_pct"] == pytest.approx(100.0)


def test_bad_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="known: ccp, ccp-balance, sinbad, uniform"):
        small(policy="nope")
    with pytest.raises(InputError, match="`f`"):
        small(replicas=1, fault_domains=2)


def test_kind_and_metrics_registered() -> None:
    assert get_kind("sinbad").name == "sinbad"
    assert "block_write_speedup" in metrics()


def test_ccp_point_cuts_network_latency() -> None:
    v = ccp(racks=6, hosts_per_rack=4, client_racks=2, prepopulate=2000, ops=5000)
    # Low racks get a quarter of a Medium uplink: uniform puts a third of the
    # reads there, CCP none while High/Medium hosts are within the balance
    # threshold, so the p95 network latency must drop.
    assert v["p95_network_latency_reduction_pct"] > 0
    assert v["placement_failures"] == 0
    assert v["ops"] == 5000


def test_ccp_paper_setting_through_the_binding() -> None:
    v = ccp(
        racks=6,
        hosts_per_rack=4,
        client_racks=2,
        prepopulate=2000,
        ops=5000,
        uplink_spread=2.0,
        uplink_load=0.75,
        prepopulate_policy="uniform",
        read_written=True,
        write_fanout=True,
        seek_s=11.56e-3,
        disk_bytes_per_s=200e6,
        disks_per_host=12,
        capacity_bytes=48e12,
    )
    # Factors 0.667 .. 1.333 in 6 steps, guideline the median 1.067 (element
    # 3 of 6): High at >= 1.28 (one rack), Low below 0.853 (two racks).
    assert (v["racks_high"], v["racks_medium"], v["racks_low"]) == (1.0, 3.0, 2.0)
    # Uniform: the smallest uplink at 75% of reads; the Low class averages
    # 2 x 0.75 x 0.667 / (0.667 + 0.8) = 0.682.
    assert abs(v["read_uplink_util_low_uniform"] - 0.682) < 0.1
    assert 0.0 < v["read_new_share"] < 1.0


def test_ccp_kind_registered() -> None:
    assert get_kind("ccp").name == "ccp"
    assert "p95_network_latency_reduction_pct" in metrics()
