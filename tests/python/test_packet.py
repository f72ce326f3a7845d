"""Packet-level engine through scenarios: the ``incast`` app, the transports, CloudBurst's
queue and timeout, and the ``memcache`` point kind.

Numbers are derived by hand: a message cannot finish before its bytes cross
the receiver's 10 Gbit/s link; the re-burst timeout is the per-link sum
written in the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from netheat import Scenario
from netheat.errors import ConfigError, NetheatError
from netheat.experiments.registry import get_kind
from netheat.experiments.scenario import point_values

ROOT = Path(__file__).resolve().parents[2]
CLOUDBURST = ROOT / "experiments" / "scenarios" / "cloudburst-incast.toml"


# Two leaves of four hosts, two spines, 10 Gbit/s everywhere; no background:
# 3 incasts of 4 senders, 93 KB each.
SMALL = """
[scenario]
engine = "packet"
duration = "60ms"
[topology]
kind = "three-tier"
pods = 1
racks-per-pod = 2
hosts-per-rack = 4
aggs-per-pod = 2
host-link = "10Gbps"
tor-uplink = "20Gbps"
[packet]
propagation-delay = "1us"
cloudburst-queue = "12000B"
[transport]
kind = "{kind}"
[[workload.app]]
kind = "incast"
fanin = 4
message-sizes = {sizes}
incasts = 3
period = "1ms"
"""


def small(kind: str = "dctcp", sizes: str = '["93000B"]', **over: Any) -> Scenario:
    return Scenario.from_text(SMALL.format(kind=kind, sizes=sizes)).with_overrides(over)


def test_incast_messages_are_tasks_that_finish_no_faster_than_the_receiver_link() -> None:
    runs = [(k, {}) for k in ("dctcp", "cloudburst", "mptcp", "dctcp-replication", "newreno")]
    runs.append(("mptcp", {"transport.mptcp-subflows": "dctcp"}))
    for kind, over in runs:
        res = small(kind, **over).run()
        tasks = pl.from_arrow(res.tables["tasks"])
        flows = pl.from_arrow(res.tables["flows"])
        assert isinstance(tasks, pl.DataFrame) and isinstance(flows, pl.DataFrame)
        # One task and one flows row per message, whatever the transport
        # splits it into.
        assert tasks.height == flows.height == 3 * 4, kind
        assert tasks["kind"].unique().to_list() == ["incast"]
        assert tasks["tct_s"].null_count() == 0 and not tasks["tct_s"].is_nan().any(), kind
        assert (tasks["bytes"] == 93000).all()
        # The 4 messages of one incast share the receiver's 10 Gbps port:
        # the last needs at least 4 x 93,000 B x 8 / 10 Gbps = 297.6 us.
        last = tasks.group_by("start_s").agg(pl.col("tct_s").max())["tct_s"]
        assert (last >= 4 * 93000 * 8 / 10e9).all(), kind
        # Tasks' times are their flows' (one flow each).
        joined = tasks.join(flows, on="task_id")
        assert (joined["tct_s"] - joined["fct_s"]).abs().max() < 1e-12


def test_reburst_timeout_is_derived_from_the_datacenter_or_given() -> None:
    # All links 10 Gbps, 1 us each, 12 KB CloudBurst queue: per link 2 x 1 us
    # + 2 x 13,500 B / 10 Gbps + (1,500 + 64) B / 10 Gbps = 24.8512 us; four
    # links between racks: 99.4048 us.
    res = small("cloudburst").run()
    assert res.stats["reburst_timeout_s"] == pytest.approx(99.4048e-6, rel=1e-9)
    res = small("cloudburst", **{"transport.reburst-timeout": "300us"}).run()
    assert res.stats["reburst_timeout_s"] == pytest.approx(3e-4)
    assert "reburst_timeout_s" not in small("dctcp").run().stats


def test_task_class_sets_the_incast_messages_queue_class() -> None:
    for cls in (0, 1, 5):
        flows = pl.from_arrow(small("dctcp", **{"transport.task-class": cls}).run().tables["flows"])
        assert isinstance(flows, pl.DataFrame)
        assert flows["priority"].unique().to_list() == [cls]


def test_transport_combinations_that_mean_nothing_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"transport\.small-queue") as e:
        small("newreno", **{"transport.small-queue": True}).check()
    assert "`cloudburst`, `dctcp`" in str(e.value)
    with pytest.raises(ConfigError, match=r"transport\.mptcp-subflows"):
        small("dctcp", **{"transport.mptcp-subflows": "dctcp"}).check()
    with pytest.raises(ConfigError, match=r"transport\.mptcp-subflows"):
        small("mptcp", **{"transport.mptcp-subflows": "cubic"}).check()
    with pytest.raises(ConfigError, match=r"transport\.spray") as e:
        small("dctcp", **{"transport.spray": False}).check()
    assert "not `cloudburst`" in str(e.value)
    with pytest.raises(ConfigError, match=r"transport\.task-class"):
        small("dctcp", **{"transport.task-class": 8}).check()
    with pytest.raises(ConfigError, match=r"transport\.pias-thresholds"):
        small("pias", **{"transport.pias-thresholds": ["2MB", "1MB"]}).check()
    # UDP has no sender window, ACKs or timeouts to set.
    tcp_keys = (("transport.min-rto", "1ms"), ("transport.init-cwnd", 4.0), ("transport.dctcp-gain", 0.1))
    for key, value in tcp_keys:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as e:
            small("udp", **{key: value}).check()
        assert "datagrams" in str(e.value)
    small("udp", **{"transport.traffic-kind": "dctcp", "transport.min-rto": "1ms"}).check()
    with pytest.raises(ConfigError, match=r"packet\.buffer-alpha"):
        small("dctcp", **{"packet.buffer-alpha": 0.0}).check()
    # Per-packet balancing replaces the controller, for `adaptive` and `detour` only.
    with pytest.raises(ConfigError, match=r"routing\.least-queued") as e:
        small("dctcp", **{"routing.least-queued": True}).check()
    assert "not `ecmp`" in str(e.value)
    with pytest.raises(ConfigError, match=r"routing\.period"):
        small(
            "dctcp", **{"routing.policy": "adaptive", "routing.least-queued": True, "routing.period": "1ms"}
        ).check()
    small("dctcp", **{"routing.policy": "detour", "routing.least-queued": True}).check()
    with pytest.raises(ConfigError, match=r"routing\.least-queued") as e:
        Scenario.from_text(
            MEMCACHE.replace('engine = "packet"', 'engine = "flow"').replace(
                '[transport]\nkind = "newreno"\n', ""
            )
        ).with_overrides({"routing.policy": "adaptive", "routing.least-queued": False}).check()
    assert "packet by packet" in str(e.value)
    # The packet engine's links keep their capacity: failures are refused, not ignored.
    failing = (
        SMALL.format(kind="dctcp", sizes='["93000B"]')
        + '[[events]]\nat = "1ms"\nnodes = ["tor0"]\naction = "fail"\n'
    )
    with pytest.raises(ConfigError, match="events") as e:
        Scenario.from_text(failing).check()
    assert "flow" in str(e.value)
    # Subways' vanilla ECMP is a flow-engine policy.
    with pytest.raises(ConfigError, match=r"routing\.policy") as e:
        small("dctcp", **{"routing.policy": "subways-ecmp"}).check()
    assert "detour" in str(e.value)
    with pytest.raises(ConfigError, match="message-sizes"):
        small("dctcp", sizes="[]").check()
    with pytest.raises(ConfigError, match="fanin"):
        small("dctcp", **{"workload.app.0.fanin": 0}).check()


def test_cloudburst_spray_and_small_queue_are_its_two_mechanisms() -> None:
    """The slides' variants A-D are CloudBurst with spraying and its small
    queue each on or off."""

    def run(spray: bool, small_queue: bool, fanin: int) -> tuple[list[int], int]:
        res = small(
            "cloudburst",
            **{
                "workload.app.0.incasts": 1,
                "workload.app.0.fanin": fanin,
                "transport.spray": spray,
                "transport.small-queue": small_queue,
            },
        ).run()
        flows = pl.from_arrow(res.tables["flows"])
        queues = pl.from_arrow(res.tables["queues"])
        links = pl.from_arrow(res.tables["links"]).select("link", "layer", "direction", "src_node").unique()
        assert isinstance(flows, pl.DataFrame) and isinstance(queues, pl.DataFrame)
        # Data leaves the first sender's rack (4 hosts a rack) on its ToR's
        # two uplinks; ACKs come back down, so these carry data only.
        tor = f"tor{int(flows['src'][0]) // 4}"
        up = queues.join(links, on="link").filter(
            (pl.col("layer") == "tor-agg") & (pl.col("direction") == "up") & (pl.col("src_node") == tor)
        )
        return sorted(int(b) for b in up["tx_bytes"] if b > 0), int(queues["drops"].sum())

    # One message between racks: sprayed symbols take both uplinks about
    # equally; unsprayed ones all take the message's one ECMP path.
    for small_queue in (True, False):
        sprayed, _ = run(True, small_queue, 1)
        assert len(sprayed) == 2 and sprayed[0] >= 0.45 * sum(sprayed), sprayed
        one, _ = run(False, small_queue, 1)
        assert len(one) == 1, one
    # Four senders bursting 1.3 x 64 symbols of 1,500 B each at one 10 Gbps
    # port: the 12,000 B CloudBurst queue (8 packets) must drop; the
    # ordinary buffers drop fewer.
    for spray in (True, False):
        _, in_small = run(spray, True, 4)
        _, ordinary = run(spray, False, 4)
        assert in_small > ordinary, (spray, in_small, ordinary)


def test_per_size_values_are_quantiles_of_the_tasks_of_that_size() -> None:
    res = small("dctcp", sizes='["5000B", "93000B"]').run()
    v = point_values(res)
    tasks = pl.from_arrow(res.tables["tasks"])
    assert isinstance(tasks, pl.DataFrame)
    for b in (5000, 93000):
        t = tasks.filter(pl.col("bytes") == b)["tct_s"].to_numpy()
        assert len(t) == 4 * (2 if b == 5000 else 1)
        want = float(np.quantile(t, 0.99, method="linear"))
        assert v[f"incast.{b}B.tct_p99_s"] == pytest.approx(want, rel=1e-12)
        assert v[f"incast.{b}B.tct_mean_s"] == pytest.approx(float(np.mean(t)), rel=1e-12)
    assert v["incast.tct_p99_s"] == pytest.approx(
        float(np.quantile(tasks["tct_s"].to_numpy(), 0.99, method="linear")), rel=1e-12
    )


def test_the_cloudburst_experiment_scenario_runs_its_variants() -> None:
    # The experiment's own scenario, shortened: 6 incasts, 6 ms of background.
    base = Scenario.from_toml(CLOUDBURST).with_overrides(
        {"workload.app.0.incasts": 6, "workload.duration": "6ms", "scenario.duration": "60ms"}
    )
    dctcp = base.with_overrides({"transport.kind": "dctcp"}).run()
    cb = base.run()
    for res in (dctcp, cb):
        v = point_values(res)
        # Sizes alternate per incast, starting with 5 KB: 3 incasts of 16 messages each.
        sizes = pl.from_arrow(res.tables["tasks"]).filter(pl.col("kind") == "incast")["bytes"]
        assert sorted(sizes.value_counts().rows()) == [(5000.0, 48), (93000.0, 48)]
        assert np.isfinite(v["incast.5000B.tct_p99_s"]) and np.isfinite(v["incast.93000B.tct_p99_s"])
        assert v["incast.93000B.tct_p99_s"] >= 93000 * 8 / 10e9
    assert cb.stats["reburst_timeout_s"] == pytest.approx(99.4048e-6, rel=1e-9)
    # Background flows ran in class 1, DCTCP's incast messages in class 0.
    flows = pl.from_arrow(dctcp.tables["flows"])
    tasks = pl.from_arrow(dctcp.tables["tasks"])
    assert isinstance(flows, pl.DataFrame) and isinstance(tasks, pl.DataFrame)
    incast = flows.join(tasks.filter(pl.col("kind") == "incast").select("task_id"), on="task_id")
    assert incast["priority"].unique().to_list() == [0]
    background = flows.join(incast.select("flow_id"), on="flow_id", how="anti")
    assert background.height > 0
    assert background["priority"].unique().to_list() == [1]


MEMCACHE = """
[scenario]
engine = "packet"
warmup = "2ms"
duration = "24ms"
[topology]
kind = "subways"
wiring = "type0"
pods = 1
racks-per-pod = 8
hosts-per-rack = 2
host-link = "10Gbps"
ports-per-host = 2
loop-size = 8
aggs-per-pod = 2
spines = 0
oversubscription = 10.0
[transport]
kind = "newreno"
[workload]
duration = "4ms"
[[workload.app]]
kind = "memcache"
rate = 1e5
request = "50B"
response = "1500B"
service = "0s"
server-racks = [0, 4]
client-racks = [1, 2, 3, 5, 6, 7]
"""

SEARCH = {
    "search.key": "workload.app.0.rate",
    "search.start": 1e5,
    "search.value": "memcache.tct_mean_s",
    "search.at-most": 1e-3,
    "search.precision": 0.02,
}


def _search_point(tmp_path: Path, **over: Any) -> dict[str, float]:
    path = tmp_path / "mc.toml"
    path.write_text(MEMCACHE)
    kind = get_kind("scenario")
    params: dict[str, Any] = {p.name: p.default for p in kind.params}
    params.update({"scenario": path, **SEARCH, **over})
    return kind.run_point(params, 1).values


def test_oversubscription_sets_the_tor_uplinks() -> None:
    from netheat._netheat import Topology

    # 2 servers x 2 x 10 Gbps per rack at 10:1: 4 Gbps of ToR uplink,
    # 2 Gbps to each of the 2 aggregation switches.
    topo = Topology.from_toml(MEMCACHE[MEMCACHE.index("[topology]") : MEMCACHE.index("[transport]")])
    links = pl.DataFrame(topo.links())
    up = links.filter((pl.col("layer") == "tor-agg") & (pl.col("direction") == "up"))
    assert up.height == 8 * 2 and (up["capacity_bps"] == 2e9).all()
    both = MEMCACHE.replace("oversubscription = 10.0", 'oversubscription = 10.0\ntor-uplink = "4Gbps"')
    with pytest.raises(NetheatError, match="oversubscription"):
        Scenario.from_text(both).check()
    with pytest.raises(NetheatError, match="oversubscription"):
        Scenario.from_text(MEMCACHE.replace("oversubscription = 10.0", "oversubscription = -1.0")).check()


def test_warmup_leaves_early_tasks_out_of_the_values() -> None:
    res = Scenario.from_text(MEMCACHE).with_overrides({"workload.app.0.rate": 2e5}).run()
    tasks = pl.from_arrow(res.tables["tasks"])
    assert isinstance(tasks, pl.DataFrame)
    late = tasks.filter(pl.col("start_s") >= 2e-3)
    assert 0 < late.height < tasks.height
    v = point_values(res)
    assert v["memcache.tct_mean_s"] == pytest.approx(float(late["tct_s"].mean()), rel=1e-12)
    # A memcache task is its request, then its response once the request has arrived.
    flows = pl.from_arrow(res.tables["flows"]).sort("flow_id")
    assert isinstance(flows, pl.DataFrame)
    first = flows.filter(pl.col("task_id") == tasks["task_id"][0])
    assert first["bytes"].to_list() == [50.0, 1500.0]
    assert first["start_s"][1] == pytest.approx(first["finish_s"][0], abs=1e-12)
    # No schedule finishes a task faster than its largest delivery into one host over that
    # host's NIC: the 1,500 B response into a server of 2 x 10 Gbps ports, 0.6 us.
    assert (tasks["floor_s"] == 1500 * 8 / 20e9).all()
    assert v["tct_p99_floor"] == pytest.approx(0.6e-6 / v["tct_p99_s"], rel=1e-12)


def test_capacity_search_finds_the_memcache_uplink_bound(tmp_path: Path) -> None:
    # The two memcache ToRs have 4 Gbps of uplink each, and every response
    # (two NewReno segments of 1,460 + 40 and 40 + 40 B) plus the ACK of its
    # request (64 B) crosses one.
    bound = 2 * 4e9 / ((1500 + 80 + 64) * 8)
    t0 = _search_point(tmp_path)
    # The 1 ms target tolerates some queueing (and loss, 5 ms RTO) past saturation.
    assert bound <= t0["search.found"] <= 1.3 * bound
    assert t0["memcache.tct_mean_s"] <= 1e-3 and t0["unfinished_tasks"] == 0
    # Doubling from 1e5 to past 2.5e5, then bisection to 2%: 1 + 2 + 5 or so runs.
    assert 4 <= t0["search.runs"] <= 12
    # Type 1: each memcache server reaches two ToRs, twice the uplink.
    t1 = _search_point(tmp_path, **{"topology.wiring": "type1"})
    assert t1["search.found"] > 1.8 * t0["search.found"]


def test_udp_capacity_search_finds_the_response_bound(tmp_path: Path) -> None:
    # Over UDP a 1,472 B response is one 1,500 B packet and nothing is
    # acknowledged, so the two memcache ToRs' 2 x 4 Gbps of uplink carry
    # 2 x 4e9 / (1,500 x 8) = 666,667 responses a second. Below that the
    # queues stay short (M/D/1 at 98%: 24.5 packet times, 147 us at the
    # 2 Gbps agg links); above it a queue grows by the excess over the 4 ms
    # of arrivals, and a 300 KB port drops once it holds 1.2 ms, a lost
    # request or response leaving its task unfinished.
    over = {
        "transport.kind": "udp",
        "workload.app.0.request": "22B",
        "workload.app.0.response": "1472B",
    }
    bound = 2 * 4e9 / (1500 * 8)
    v = _search_point(tmp_path, **over)
    assert 0.95 * bound <= v["search.found"] <= 1.4 * bound, v["search.found"] / bound
    assert v["memcache.tct_mean_s"] <= 1e-3 and v["unfinished_tasks"] == 0
    # Far past the bound requests and responses are lost, and stay lost.
    res = Scenario.from_text(MEMCACHE).with_overrides({**over, "workload.app.0.rate": 3 * bound}).run()
    tasks = pl.from_arrow(res.tables["tasks"])
    flows = pl.from_arrow(res.tables["flows"])
    assert isinstance(tasks, pl.DataFrame) and isinstance(flows, pl.DataFrame)
    assert tasks["tct_s"].is_nan().sum() > 0
    assert sorted(flows["bytes"].unique().to_list()) == [22.0, 1472.0]


def test_a_search_needs_all_its_keys_and_a_feasible_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"search\.value"):
        _search_point(tmp_path, **{"search.value": None})
    with pytest.raises(ConfigError, match=r"search\.start"):
        _search_point(tmp_path, **{"search.at-most": 1e-9})
    with pytest.raises(ConfigError, match=r"search\.value"):
        _search_point(tmp_path, **{"search.value": "no_such_value"})


MEMCACHE_SCENARIO = ROOT / "experiments" / "scenarios" / "memcache.toml"


def _memcache_tor_uplinks(
    over: dict[str, Any], tors: tuple[str, ...] = ("tor0", "tor1", "tor2")
) -> pl.DataFrame:
    """Bytes `tors` sent up per 10 ms in the paper's memcache scenario
    (Type 1, memcache racks 0 and 1), a column per ToR."""
    sc = Scenario.from_toml(MEMCACHE_SCENARIO).with_overrides(
        {"scenario.warmup": "0s", "scenario.record": ["links"], **over}
    )
    return _tor_uplinks(sc.run(), tors)


def _tor_uplinks(res: Any, tors: tuple[str, ...]) -> pl.DataFrame:
    """Bytes `tors` sent up per 10 ms in a run that recorded `links`."""
    links = pl.from_arrow(res.tables["links"])
    assert isinstance(links, pl.DataFrame)
    of_tors = pl.col("src_node").is_in(list(tors))
    up = links.filter((pl.col("layer") == "tor-agg") & (pl.col("direction") == "up") & of_tors)
    window = pl.col("window_end_s") - pl.col("window_start_s")
    sent = up.with_columns(
        b=pl.col("utilization") * pl.col("capacity_bps") * window / 8,
        period=(pl.col("window_start_s") / 0.01).floor(),
    )
    return sent.pivot(values="b", index="period", on="src_node", aggregate_function="sum").sort("period")


def _memcache_tor_uplink_bytes(rate: float, policy: str) -> dict[str, float]:
    """Bytes each of ToRs 0-2 sent up over 4 ms of requests; `adaptive` is
    per-packet (`least-queued`)."""
    over: dict[str, Any] = {
        "workload.app.0.rate": rate,
        "workload.duration": "4ms",
        "scenario.duration": "12ms",
        "routing.policy": policy,
    }
    if policy != "ecmp":
        over["routing.least-queued"] = True
    up = _memcache_tor_uplinks(over)
    return {t: float(up[t].sum()) for t in ("tor0", "tor1", "tor2")}


def test_memcache_racks_sharing_a_tor_load_it_twice_under_ecmp_and_balancing_evens_it() -> None:
    # Racks 0 and 1 hold memcache; rack k is wired to ToRs k and k + 1, so
    # ToR 1 serves both. Of each memcache rack's 10 web racks one shares a
    # ToR with it (rack 11 ToR 0, rack 2 ToR 2); ECMP splits the responses to
    # the other 9 over the rack's two ToRs: ToRs 0 / 1 / 2 send 0.225 /
    # 0.45 / 0.225 of all responses up. At 4 M requests/s for 4 ms that is
    # 16,000 x 0.9 x 1,500 B = 21.6 MB, 10.8 MB through ToR 1.
    low = _memcache_tor_uplink_bytes(4e6, "ecmp")
    mc = low["tor0"] + low["tor1"] + low["tor2"]
    assert mc == pytest.approx(21.6e6, rel=0.03)
    assert low["tor1"] / mc == pytest.approx(0.5, abs=0.03)
    assert low["tor0"] / mc == pytest.approx(0.25, abs=0.03)
    # At 14 M/s ECMP would give ToR 1 0.45 x 14e6 x 12,000 bits = 75.6 Gbps
    # for its 60 Gbps of uplinks; balanced over the three ToRs each sends
    # 50.4 Gbps. Adaptive balancing moves ToR 1's excess to ToRs 0 and 2.
    hot = _memcache_tor_uplink_bytes(14e6, "ecmp")
    even = _memcache_tor_uplink_bytes(14e6, "adaptive")
    share = {k: v["tor1"] / (v["tor0"] + v["tor1"] + v["tor2"]) for k, v in (("ecmp", hot), ("lb", even))}
    assert share["ecmp"] > 0.45, share
    assert share["lb"] < 0.40, share


def test_the_subways_controller_moves_memcache_responses_off_the_shared_tor() -> None:
    # Ratio 10: 30 Gbps of uplink a ToR. At 7 M requests/s ECMP gives the
    # shared ToR 1 0.45 x 7e6 x 12,000 bits = 37.8 Gbps, over its uplinks,
    # and ToRs 0 and 2 18.9 Gbps each, so its share of the three ToRs'
    # bytes stays at 30 / 67.8 = 0.44. The controller (§5.2, the flow
    # engine's code) reads the links' counters every 10 ms and weights a
    # memcache server's two ToRs by their remaining uplink capacity
    # B (1 - U), U an EWMA of the counters, so its servers send less through
    # ToR 1 from the second period on.
    over = {
        "workload.app.0.rate": 7e6,
        "workload.duration": "50ms",
        "scenario.duration": "55ms",
        "topology.oversubscription": 10.0,
    }
    share = {}
    for policy in ("ecmp", "adaptive"):
        up = _memcache_tor_uplinks({**over, "routing.policy": policy}).filter(pl.col("period") < 5)
        share[policy] = (up["tor1"] / (up["tor0"] + up["tor1"] + up["tor2"])).to_list()
    assert all(0.43 < x < 0.46 for x in share["ecmp"]), share
    # The first period is ECMP's (no counters yet); by the fourth the
    # controller has moved a fifth of ToR 1's share to ToRs 0 and 2 (it then
    # swings back: the weights follow counters a period old).
    assert share["adaptive"][0] == pytest.approx(share["ecmp"][0], abs=0.01), share
    assert min(share["adaptive"][3:]) < 0.36, share


def test_memcache_responses_that_start_while_their_rack_is_hot_take_its_detours() -> None:
    # Ratio 10, 7 M requests/s: under ECMP ToRs 0 and 2 send 0.225 x 7e6 x
    # 12,000 bits = 18.9 Gbps of their 30 up (63%) and ToR 1 more than it
    # has, so from the first 10 ms window both memcache racks are hot (§6:
    # every ToR of theirs above 60% over a whole window, then hot for
    # T_duration = 100 ms). Rack 0 (ToRs 0, 1) detours left through ToRs 11
    # and 10, rack 1 (ToRs 1, 2) right through ToRs 3 and 4 (one and two
    # intermediate servers; never through the other's hot ToRs). Each remote
    # ToR offers 60% of its residual 30 Gbps, so with idle remotes a rack's
    # responses are detoured with probability 2 x 18 / (2 x 18 + 60) = 0.375,
    # less as the remotes fill; 1 of each rack's 10 client racks shares a
    # ToR with it and takes the shortcut. A response is one datagram, never
    # running at a period: only the detours planned for its rack's new flows
    # reach it.
    over: dict[str, Any] = {
        "scenario.warmup": "0s",
        "scenario.record": ["links", "flows"],
        "workload.app.0.rate": 7e6,
        "workload.duration": "50ms",
        "scenario.duration": "55ms",
        "topology.oversubscription": 10.0,
        "routing.policy": "detour",
    }
    res = Scenario.from_toml(MEMCACHE_SCENARIO).with_overrides(over).run()
    flows = pl.from_arrow(res.tables["flows"])
    assert isinstance(flows, pl.DataFrame)
    after = flows.filter((pl.col("bytes") == 1472.0) & (pl.col("start_s") >= 0.01)).height
    unfinished = int(flows["finish_s"].is_nan().sum())
    detours = res.stats["detours"]
    # Detours counts the new flows sent on one and the running flows moved
    # onto one; the only flows running at a period for long are datagrams
    # lost (never finished), re-drawn at each of the 4 later periods.
    most = 0.9 * 0.375 * after * 1.02 + 4 * unfinished
    assert 0.9 * 0.25 * after < detours <= most, (detours, after, unfinished)
    # Up through the remote ToRs: their racks' requests (about 1.8 MB each
    # under `adaptive`, which never detours) and the detoured responses
    # that leave the loop there (one to a client behind the remote ToR itself
    # goes down from it). At most 0.9 x 0.375 of the responses after 10 ms.
    remote = ("tor3", "tor4", "tor10", "tor11")
    up = _tor_uplinks(res, remote)
    adaptive = {**over, "routing.policy": "adaptive", "scenario.record": ["links"]}
    quiet = _memcache_tor_uplinks(adaptive, remote)
    assert all(float(quiet[t].sum()) < 3e6 for t in remote), quiet
    detoured = sum(float(up[t].sum()) - float(quiet[t].sum()) for t in remote)
    assert 0.9 * 0.2 * after * 1500 < detoured < 0.9 * 0.375 * after * 1500 * 1.02, (detoured, after)
