"""Packet-level engine through the binding and the ``cloudburst`` scenario kind."""

from __future__ import annotations

import math
from typing import Any

import pytest

from netheat._netheat import packet_cloudburst_point
from netheat.errors import NetheatError
from netheat.experiments.registry import get_kind

SMALL: dict[str, Any] = dict(
    racks=2,
    hosts_per_rack=4,
    spines=2,
    host_bps=10e9,
    uplink_bps=20e9,
    load=0.0,
    fanin=4,
    msg_bytes=[93000],
    incasts=3,
    incast_gap_s=1e-3,
    drain_s=0.05,
    seed=1,
)


def test_incast_messages_complete_no_faster_than_the_receiver_link() -> None:
    for variant in ("dctcp", "cloudburst-d"):
        r = packet_cloudburst_point(variant, **SMALL)
        assert r["unfinished"] == 0
        assert len(r["mct_s"]) == 12
        # 4 x 93 KB into one 10 Gbps port: the last message needs >= 4 * 74.4 us.
        assert max(r["mct_s"]) >= 4 * 93000 * 8 / 10e9
        assert set(r["flows"]) >= {
            "flow_id",
            "src",
            "dst",
            "bytes",
            "start_s",
            "finish_s",
            "fct_s",
            "path_id",
        }
        assert len(r["ports"]["drops"]) == len(r["ports"]["mean_queue_bytes"])
        assert not math.isnan(r["mct_p99_s"])


def test_unknown_variant_is_an_error() -> None:
    with pytest.raises(NetheatError, match="dctcp"):
        packet_cloudburst_point("bbr", **SMALL)


def test_scenario_kind_runs_a_quick_point() -> None:
    kind = get_kind("cloudburst")
    params = {p.name: p.default for p in kind.params}
    params.update({"racks": 2, "hosts-per-rack": 4, "spines": 2, "fanin": 4, "incasts": 4, "load": 0.1})
    res = kind.run_point(params, 1)
    assert res.values["unfinished"] == 0
    assert res.values["mct_p99_s"] >= res.values["mct_mean_s"] > 0
