"""The ccp point kind: quick runs through the binding. (Sinbad is a scenario experiment: tests in
test_experiments_scenario.py and netheat-scenario's.)"""

from __future__ import annotations

from typing import Any

import pytest

from netheat.errors import InputError
from netheat.experiments import points
from netheat.experiments.registry import get_kind, metrics

_KEYS = {
    "duration_s": "duration",
    "drain_s": "drain",
    "seek_s": "disk-access",
    "disk_bytes_per_s": "disk-rate",
    "capacity_bytes": "capacity",
}


def _params(kw: dict[str, Any]) -> dict[str, Any]:
    return {_KEYS.get(k, k.replace("_", "-")): v for k, v in kw.items()}


def ccp(**kw: Any) -> dict[str, float]:
    """One ``ccp`` point's values (keyword names with underscores, as Python spells them)."""
    values: dict[str, float] = points.run("ccp", _params(kw), 1)["values"]
    return values


def test_bad_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="known: ccp, ccp-balance, sinbad, uniform"):
        ccp(policy="nope")


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
