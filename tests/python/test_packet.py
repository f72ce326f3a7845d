"""Packet-level engine through the binding and the ``cloudburst`` scenario kind."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

from netheat._columns import arrow_table
from netheat.errors import NetheatError
from netheat.experiments import points
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
)


_KEYS = {
    "host_bps": "host-speed",
    "uplink_bps": "uplink-speed",
    "incast_gap_s": "incast-gap",
    "drain_s": "drain",
    "duration_s": "duration",
}


def cloudburst_point(variant: str, seed: int = 1, **kw: Any) -> dict[str, Any]:
    """One ``cloudburst`` point through ``run_point``: its values, ``mct_s`` (finished incast
    messages), and the ``flows`` and ``ports`` columns."""
    params = {_KEYS.get(k, k.replace("_", "-")): v for k, v in kw.items()}
    params["variant"] = variant
    if "msg-bytes" in params:
        params["msg-bytes"] = ",".join(str(b) for b in params["msg-bytes"])
    out = points.run("cloudburst", params, seed)
    t = {name: arrow_table(cols).to_pydict() for name, cols in out["tables"].items()}
    return {**out["values"], "mct_s": t["messages"]["mct_s"], "flows": t["flows"], "ports": t["queues"]}


def test_incast_messages_complete_no_faster_than_the_receiver_link() -> None:
    for variant in ("dctcp", "cloudburst-d"):
        r = cloudburst_point(variant, **SMALL)
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
        cloudburst_point("bbr", **SMALL)


def test_scenario_kind_runs_a_quick_point() -> None:
    kind = get_kind("cloudburst")
    params = {p.name: p.default for p in kind.params}
    params.update({"racks": 2, "hosts-per-rack": 4, "spines": 2, "fanin": 4, "incasts": 4, "load": 0.1})
    res = kind.run_point(params, 1)
    assert res.values["unfinished"] == 0
    assert res.values["mct_p99_s"] >= res.values["mct_mean_s"] > 0


def test_memcache_max_rate_type0_is_bounded_by_the_memcache_uplinks(tmp_path: Any) -> None:
    def memcache_max_rate(variant: str, oversubscription: float, seed: int, **kw: Any) -> dict[str, Any]:
        params = {_KEYS.get(k, k.replace("_", "-")): v for k, v in kw.items()}
        params.update(variant=variant, oversubscription=oversubscription)
        values: dict[str, Any] = points.run("memcache", params, seed)["values"]
        return values

    # 8 racks of 2 servers, 2 x 10 Gbps ports, ToRs 10:1: the two memcache
    # ToRs have 4 Gbps of uplink each, and every response (1,540 B) plus
    # the ACK of its request (64 B) crosses one of them.
    bound = 2 * 4e9 / ((1540 + 64) * 8)
    kw: dict[str, Any] = dict(hosts_per_rack=2, duration_s=4e-3)
    t0 = memcache_max_rate("type0", 10.0, 1, **kw)
    # The 1 ms target tolerates some loss (5 ms RTO) past saturation.
    assert bound <= t0["max_rate_per_s"] <= 1.3 * bound
    assert t0["mean_latency_s"] <= 1e-3
    t1 = memcache_max_rate("type1", 10.0, 1, **kw)
    assert t1["max_rate_per_s"] > 1.8 * t0["max_rate_per_s"]
    with pytest.raises(NetheatError, match="type0, type1, type1-lb, type1-detour"):
        memcache_max_rate("type3", 10.0, 1, **kw)
    assert get_kind("memcache").figures is not None


def test_cloudburst_point_writes_flow_link_and_queue_tables() -> None:
    from netheat.experiments.cloudburst import run_cloudburst

    kind = get_kind("cloudburst")
    params = {p.name: p.default for p in kind.params}
    params.update({"racks": 2, "hosts-per-rack": 4, "spines": 2, "load": 0.0, "fanin": 4, "incasts": 3})
    params["uplink-speed"] = 20e9
    res = run_cloudburst(params, 1)
    flows, links, queues = res.tables["flows"], res.tables["links"], res.tables["queues"]
    # The same columns as the flow-level engine's tables.
    assert flows.column_names == [
        "flow_id",
        "src",
        "dst",
        "bytes",
        "start_s",
        "finish_s",
        "fct_s",
        "task_id",
        "priority",
        "path_id",
    ]
    assert links.column_names[:6] == ["link", "layer", "direction", "src_node", "dst_node", "capacity_bps"]
    assert flows.num_rows == 3 * 4
    # Every queue row is a directed link of the leaf-spine, and bytes delivered
    # to the receivers show up as utilization of their host downlinks.
    from netheat.experiments.cloudburst import topology as kind_topology

    topo = kind_topology(params)
    assert queues.num_rows == topo.num_links
    down = pl.from_arrow(links).filter((pl.col("layer") == "host-tor") & (pl.col("direction") == "down"))
    carried = (
        down.select(
            (
                pl.col("utilization")
                * pl.col("capacity_bps")
                * (pl.col("window_end_s") - pl.col("window_start_s"))
            ).sum()
        ).item()
        / 8
    )
    payload = sum(flows["bytes"].to_pylist())
    # Wire bytes include 40 B of headers per 1,460 B segment (and retransmissions).
    assert payload <= carried <= payload * 1.2


def _small_kind_params(**over: Any) -> dict[str, Any]:
    kind = get_kind("cloudburst")
    params = {p.name: p.default for p in kind.params}
    params.update({"racks": 2, "hosts-per-rack": 4, "spines": 2, "load": 0.0, "fanin": 4, "incasts": 4})
    params["uplink-speed"] = 20e9
    params.update(over)
    return params


def test_cloudburst_point_reports_p99_per_message_size_and_the_a_priori_timeout() -> None:
    from netheat.experiments.cloudburst import run_cloudburst

    res = run_cloudburst(_small_kind_params(), 1)
    v = res.values
    # 4 x 93 KB into one 10 Gbps port: the last needs >= 297.6 us; a 5 KB
    # message needs >= 4 us of serialization.
    assert v["mct_p99_large_s"] >= 4 * 93000 * 8 / 10e9
    assert 5000 * 8 / 10e9 <= v["mct_p99_small_s"] < v["mct_p99_large_s"]
    # Re-burst timeout (all links 10 Gbps, 1 us each, 12 KB CloudBurst queue):
    # per hop 2 x 1 us + 2 x 13,500 B / 10 Gbps + (1,500 + 64) B / 10 Gbps
    # = 24.8512 us, four hops: 99.4048 us.
    assert v["cloudburst_timeout_s"] == pytest.approx(99.4048e-6, rel=1e-9)
    # An explicit timeout is used as given.
    res = run_cloudburst(_small_kind_params(**{"cloudburst-timeout": 3e-4}), 1)
    assert res.values["cloudburst_timeout_s"] == pytest.approx(3e-4)


def test_isolation_moves_baseline_incast_messages_to_cloudburst_class() -> None:
    from netheat.experiments.cloudburst import run_cloudburst

    for iso, prio in (("priority", 0), ("small-queue", 0), ("none", 1)):
        for variant in ("dctcp", "pias"):
            res = run_cloudburst(_small_kind_params(variant=variant, isolation=iso), 1)
            df = pl.from_arrow(res.tables["flows"])
            assert isinstance(df, pl.DataFrame)
            flows = df.filter(pl.col("task_id") >= 0)
            assert flows.height == 4 * 4
            assert flows["priority"].unique().to_list() == [prio], (iso, variant)
    with pytest.raises(NetheatError, match="small-queue"):
        run_cloudburst(_small_kind_params(isolation="strict"), 1)
