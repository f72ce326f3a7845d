"""`netheat serve`: the decision service and its Kubernetes scheduler extender.

On examples/topologies/two-tier-4x4.toml (4 racks x 4 hosts, 10 Gbps ToR
uplinks; host r<r>h<i> is host 4r + i, the uplink tor<r> -> core is link
32 + 2r). Most tests drive the FastAPI app in process (TestClient, no
socket) with a fake clock and a snapshot in which tor2 is hot:

    tor0 0.33, tor1 0.52, tor2 0.91, tor3 0.14 of 10 Gbps

and a pod or task demand of 0.5 Gbps (+0.05), so the projected ToR
utilizations are 0.38, 0.57, 0.96 and 0.19: tor2 is above the 0.75 hot
threshold, and the extender scores floor(10 x (1 - projected)) are 6, 4,
0 (clamped) and 8. The last test runs `netheat serve` as a process against
a real Prometheus scraping a test exporter on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("fastapi", reason="netheat serve needs the `serve` extra (fastapi, uvicorn, ...)")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():  # Starlette's notice about its next test-client backend
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
from promtest import TOR_TX, e2e_map, free_port, http_json, stop_process, wait_for_scrapes

from netheat._netheat import Advisor
from netheat.cli import main
from netheat.errors import InputError
from netheat.serve.app import ServeSettings, create_app
from netheat.serve.telemetry import LinksFileSource, PrometheusSource, Snapshot

ROOT = Path(__file__).resolve().parents[2]
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
NOW = 1_700_000_000.0
UTIL = {0: 0.33, 1: 0.52, 2: 0.91, 3: 0.14}
"""Utilization of each ToR's uplink in the test snapshot: tor2 is hot."""
CAP = 1e10
DEMAND = "500Mbps"
PROJECTED = {r: UTIL[r] + 0.05 for r in range(4)}
"""Each ToR with the 0.5 Gbps demand: 0.38, 0.57, 0.96, 0.19."""
SCORES = {0: 6, 1: 4, 2: 0, 3: 8}
"""floor(10 x (1 - projected)): 6.2, 4.3, 0.4 and 8.1."""
HOSTS = [f"r{r}h{i}" for r in range(4) for i in range(4)]


def uplink(r: int) -> int:
    return 32 + 2 * r


def snapshot(util: dict[int, float], at_s: float) -> Snapshot:
    return Snapshot(at_s, [uplink(r) for r in util], [u * CAP for u in util.values()], [CAP] * len(util))


class Clock:
    """A settable clock (Unix seconds)."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_client(advisor: Any, clock: Clock, source: Any = None, **settings: Any) -> Iterator[TestClient]:
    app = create_app(advisor, source, ServeSettings(clock=clock, datacenter=TOPO.name, **settings))
    with TestClient(app) as client:
        yield client


@pytest.fixture
def advisor() -> Any:
    """An advisor on the 4x4 datacenter that saw the hot-tor2 snapshot 5 s before NOW."""
    a = Advisor(str(TOPO))
    s = snapshot(UTIL, NOW - 5)
    a.observe(s.at_s, s.links, s.rates_bps, s.capacities_bps)
    return a


@pytest.fixture(params=[True, False], ids=["fast-path", "routed"])
def client(advisor: Any, clock: Clock, request: pytest.FixtureRequest) -> Iterator[TestClient]:
    """The app on the hot-tor2 advisor; POSTs answered before FastAPI's routing, or by its routes."""
    yield from make_client(advisor, clock, fast_path=request.param)


def pod(demand: str | None = DEMAND, name: str = "web-1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": "6f1d"}
    if demand is not None:
        meta["annotations"] = {"netheat.io/network-demand": demand, "other": "x"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A v1.Node as kube-scheduler sends it (abridged, but with the fields the service must pass through)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {"kubernetes.io/os": "linux"}},
        "spec": {"podCIDR": "10.244.0.0/24"},
        "status": {"capacity": {"cpu": "32", "memory": "256Gi"}, "conditions": [{"type": "Ready"}]},
    }


def node_list(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "42"}, "items": nodes}


def post(client: TestClient, path: str, body: Any) -> Any:
    r = client.post(path, content=json.dumps(body))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    return r.json()


# ---------------------------------------------------------------------------------------------
# Decision endpoints


def test_hotspots_lists_the_hot_tor(client: TestClient) -> None:
    doc = client.get("/v1/hotspots").json()
    assert doc["stale"] is False and doc["age_s"] == 5.0 and doc["hot_threshold"] == 0.75
    assert [t["tor"] for t in doc["tors"]] == ["tor2"]
    (tor2,) = doc["tors"]
    assert tor2["above"] is True
    assert tor2["utilization"] == pytest.approx(0.91)
    assert tor2["uplinks"][0]["link"] == uplink(2)


def test_links_gives_every_tor_uplink(client: TestClient) -> None:
    doc = client.get("/v1/links").json()
    assert doc["stale"] is False
    got = {row["link"]: (row["tor"], row["src"], row["dst"], row["utilization"]) for row in doc["links"]}
    assert got == {uplink(r): (f"tor{r}", f"tor{r}", "core", pytest.approx(UTIL[r])) for r in range(4)}
    assert all(row["capacity_bps"] == CAP for row in doc["links"])
    assert {row["link"]: row["rate_bps"] for row in doc["links"]} == {
        uplink(r): pytest.approx(UTIL[r] * CAP) for r in range(4)
    }


def test_hdfs_loads_is_the_policys_report_format(advisor: Any, clock: Clock) -> None:
    # Host downlinks (ToR -> host: 8r + 2i + 1): r1h2 at 40% of 10 Gbps.
    advisor.observe(NOW - 1, [8 * 1 + 2 * 2 + 1], [0.4 * CAP], [CAP])
    for c in make_client(advisor, clock):
        r = c.get("/v1/hdfs/loads")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        lines = [x for x in r.text.splitlines() if not x.startswith("#")]
        assert lines == ["host,utilization,timestamp", f"r1h2,0.400000,{NOW - 1:.3f}"]


def test_place_task_avoids_the_hot_tor_and_ranks_by_projected_utilization(client: TestClient) -> None:
    candidates = ["r0h1", "r1h0", "r2h0", "r3h0"]
    doc = post(client, "/v1/place/task", {"cores": 1, "demand_bps": 5e8, "candidates": candidates})
    assert doc["policy"] == "utp" and doc["stale"] is False and doc["fallback"] is None
    # Same job spread and cores everywhere: the ToR key decides, lowest projected utilization first.
    order = sorted(range(4), key=lambda r: PROJECTED[r])
    assert (
        [c["host"] for c in doc["ranked"]]
        == [candidates[r] for r in order]
        == ["r3h0", "r0h1", "r1h0", "r2h0"]
    )
    assert doc["chosen"] == "r3h0"
    for c in doc["ranked"]:
        r = int(c["tor"].removeprefix("tor"))
        assert c["tor_util"] == pytest.approx(UTIL[r])
        assert c["projected_tor"] == pytest.approx(PROJECTED[r])
    # Told to avoid tor3, the next coolest ToR wins; tor2 is never chosen.
    doc = post(
        client, "/v1/place/task", {"demand_bps": 5e8, "candidates": candidates, "avoid_tors": ["tor3"]}
    )
    assert doc["chosen"] == "r0h1"


def test_place_replicas_and_migrate(client: TestClient) -> None:
    doc = post(client, "/v1/place/replicas", {"bytes": 268435456, "writer": "r0h1", "replicas": 3})
    # The decision is the Rust policy's (tested there); here: the answer comes through whole.
    assert doc["policy"] == "sinbad" and doc["stale"] is False and doc["fallback"] is None
    assert len(doc["hosts"]) == 3 and doc["hosts"][0] == "r0h1"  # the writer keeps the local copy
    assert [r["tor"] for r in doc["racks"]] == ["tor0", "tor1", "tor2", "tor3"]
    doc = post(
        client,
        "/v1/migrate",
        {"tor": "tor2", "tasks": [{"id": "a", "rate_bps": 3e9}, {"id": "b", "rate_bps": 1e8}]},
    )
    # 0.91 - 0.30 = 0.61 is below 0.75: moving `a` is enough.
    assert doc["move"] == ["a"] and doc["after_utilization"] == pytest.approx(0.61)


# ---------------------------------------------------------------------------------------------
# The Kubernetes scheduler extender


def test_filter_with_node_names(client: TestClient) -> None:
    doc = post(client, "/scheduler/filter", {"Pod": pod(), "NodeNames": HOSTS})
    assert set(doc) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
    hot = [h for h in HOSTS if h.startswith("r2")]
    assert doc["NodeNames"] == [h for h in HOSTS if h not in hot]  # in the order sent
    assert doc["Nodes"] is None
    assert sorted(doc["FailedNodes"]) == hot
    assert all("tor2" in why and "96%" in why for why in doc["FailedNodes"].values())
    assert doc["FailedAndUnresolvableNodes"] == {} and doc["Error"] == ""


def test_filter_with_full_nodes_and_a_node_label(advisor: Any, clock: Clock) -> None:
    """Nodes named as Kubernetes names them, tied to hosts by a label; passing Nodes come back whole."""
    nodes = [node(f"k8s-{i:02d}", {"topology.netheat.io/host": h, "zone": "a"}) for i, h in enumerate(HOSTS)]
    for c in make_client(advisor, clock, node_label="topology.netheat.io/host"):
        doc = post(c, "/scheduler/filter", {"Pod": pod(), "Nodes": node_list(nodes)})
        assert doc["NodeNames"] is None
        assert doc["Nodes"]["kind"] == "NodeList" and doc["Nodes"]["metadata"] == {"resourceVersion": "42"}
        assert doc["Nodes"]["items"] == [
            n for n, h in zip(nodes, HOSTS, strict=True) if not h.startswith("r2")
        ]
        assert sorted(doc["FailedNodes"]) == ["k8s-08", "k8s-09", "k8s-10", "k8s-11"]
        scores = post(c, "/scheduler/prioritize", {"Pod": pod(), "Nodes": node_list(nodes)})
        assert scores == [{"Host": f"k8s-{i:02d}", "Score": SCORES[i // 4]} for i in range(16)]
        # Names only (nodeCacheCapable): mapped by name, so these names are no hosts.
        doc = post(c, "/scheduler/filter", {"Pod": pod(), "NodeNames": ["k8s-00", "r1h1"]})
        assert doc["NodeNames"] == ["r1h1"]
        assert "k8s-00 is not a host of two-tier-4x4.toml" in doc["FailedNodes"]["k8s-00"]


def test_prioritize_scores_are_floor_of_ten_times_headroom(client: TestClient) -> None:
    doc = post(client, "/scheduler/prioritize", {"Pod": pod(), "NodeNames": HOSTS})
    assert doc == [{"Host": h, "Score": SCORES[int(h[1])]} for h in HOSTS]
    # Without a demand annotation: floor(10 x (1 - measured)): 6.7, 4.8, 0.9, 8.6.
    doc = post(
        client,
        "/scheduler/prioritize",
        {"Pod": pod(demand=None), "NodeNames": ["r0h0", "r1h0", "r2h0", "r3h0"]},
    )
    assert [d["Score"] for d in doc] == [6, 4, 0, 8]
    # A larger demand: 2 Gbps (+0.2) takes tor1 to 0.72 (score 2) and tor0 to 0.53 (4).
    doc = post(client, "/scheduler/prioritize", {"Pod": pod("2Gbps"), "NodeNames": ["r0h0", "r1h0", "r3h0"]})
    assert [d["Score"] for d in doc] == [4, 2, 6]


def test_extender_accepts_lower_case_keys_and_full_nodes(client: TestClient) -> None:
    """Go decodes keys case-insensitively: older schedulers send `pod`/`nodes`/`nodenames`."""
    doc = post(client, "/scheduler/prioritize", {"pod": pod(), "nodenames": ["r3h0", "r2h3"]})
    assert doc == [{"Host": "r3h0", "Score": 8}, {"Host": "r2h3", "Score": 0}]
    nodes = [node("r0h2"), node("r2h2")]
    doc = post(client, "/scheduler/filter", {"pod": pod(), "nodes": node_list(nodes)})
    assert doc["Nodes"]["items"] == [nodes[0]] and list(doc["FailedNodes"]) == ["r2h2"]


def test_nodes_that_map_to_no_host(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    names = ["r0h0", "gpu-7", "r2h0"]
    with caplog.at_level(logging.WARNING, logger="netheat.serve"):
        doc = post(client, "/scheduler/filter", {"Pod": pod(), "NodeNames": names})
        scores = post(client, "/scheduler/prioritize", {"Pod": pod(), "NodeNames": names})
    assert doc["NodeNames"] == ["r0h0"]
    assert doc["FailedNodes"]["gpu-7"] == (
        "netheat: node gpu-7 is not a host of two-tier-4x4.toml (hosts are named like r0h0)"
    )
    assert scores == [
        {"Host": "r0h0", "Score": 6},
        {"Host": "gpu-7", "Score": 0},
        {"Host": "r2h0", "Score": 0},
    ]
    lines = [r.getMessage() for r in caplog.records if "map to no datacenter host" in r.getMessage()]
    assert len(lines) == 2 and all("1 of 3 node(s)" in x and "gpu-7" in x and "\n" not in x for x in lines)


# ---------------------------------------------------------------------------------------------
# Staleness, health, metrics


def test_stale_after_the_configured_age(tmp_path: Path, clock: Clock) -> None:
    config = tmp_path / "advisor.toml"
    config.write_text('[advisor]\nstale-after = "30s"\n')
    a = Advisor(str(TOPO), str(config))
    s = snapshot(UTIL, NOW)
    a.observe(s.at_s, s.links, s.rates_bps, s.capacities_bps)
    for c in make_client(a, clock):
        clock.now = NOW + 29
        assert c.get("/healthz").json()["stale"] is False
        assert post(c, "/scheduler/filter", {"Pod": pod(), "NodeNames": HOSTS})["NodeNames"] == [
            h for h in HOSTS if not h.startswith("r2")
        ]
        clock.now = NOW + 31
        health = c.get("/healthz").json()
        assert health["stale"] is True and health["age_s"] == 31.0 and health["stale_after_s"] == 30.0
        assert c.get("/v1/hotspots").json()["stale"] is True
        assert c.get("/v1/links").json()["stale"] is True
        # The fallback: every node passes with score 0; placement without the ToR key.
        doc = post(c, "/scheduler/filter", {"Pod": pod(), "NodeNames": HOSTS})
        assert doc["NodeNames"] == HOSTS and doc["FailedNodes"] == {}
        scores = post(c, "/scheduler/prioritize", {"Pod": pod(), "NodeNames": HOSTS})
        assert {d["Score"] for d in scores} == {0}
        task = post(c, "/v1/place/task", {"demand_bps": 5e8, "candidates": ["r2h0", "r3h0"]})
        assert task["stale"] is True and "stale" in task["fallback"]
        assert "netheat_serve_telemetry_age_seconds 31.0" in c.get("/metrics").text


def test_healthz(client: TestClient) -> None:
    doc = client.get("/healthz").json()
    assert doc["status"] == "ok" and doc["stale"] is False and doc["snapshots"] == 1
    assert doc["telemetry_at_s"] == NOW - 5 and doc["hosts"] == 16 and doc["tors"] == 4
    assert doc["task_policy"] == "utp" and doc["replica_policy"] == "sinbad"
    assert doc["telemetry_source"] is None and doc["refresh_failures"] == 0
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/place/task", "/scheduler/filter", "/scheduler/prioritize", "/healthz"} <= set(paths)


def test_metrics(client: TestClient) -> None:
    post(client, "/v1/place/task", {"demand_bps": 5e8, "candidates": ["r0h0"]})
    post(client, "/v1/place/task", {"demand_bps": 5e8, "candidates": ["r1h0"]})
    client.post("/v1/place/task", content="{")
    client.get("/no/such/path")
    text = client.get("/metrics").text
    assert 'netheat_serve_requests_total{endpoint="/v1/place/task",status="200"} 2.0' in text
    assert 'netheat_serve_requests_total{endpoint="/v1/place/task",status="400"} 1.0' in text
    assert 'netheat_serve_requests_total{endpoint="other",status="404"} 1.0' in text
    assert 'netheat_serve_request_duration_seconds_count{endpoint="/v1/place/task"} 3.0' in text
    assert 'netheat_serve_request_duration_seconds_bucket{endpoint="/v1/place/task",le="0.01"}' in text
    assert "netheat_serve_telemetry_age_seconds 5.0" in text
    assert "netheat_serve_telemetry_refresh_failures_total 0.0" in text


# ---------------------------------------------------------------------------------------------
# Bad input: 400 for what is not JSON (or not what the endpoint reads), 422 for what the advisor refuses


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/v1/place/task", "{not json", 400, "malformed JSON"),
        ("/v1/place/task", "[1, 2]", 400, "must be a JSON object, got list"),
        ("/v1/place/replicas", "", 400, "malformed JSON"),
        ("/v1/migrate", b"\xff\xfe", 400, "malformed JSON"),
        ("/v1/place/task", '{"candidates": ["r9h9"]}', 422, 'unknown host "r9h9"'),
        ("/v1/place/task", '{"cpus": 2}', 422, "unknown field `cpus`"),
        ("/v1/place/replicas", '{"bytes": 1, "writer": "nowhere"}', 422, "unknown host"),
        ("/v1/migrate", '{"tor": "tor9", "tasks": []}', 422, "tor9"),
        ("/scheduler/filter", "{", 400, "malformed JSON"),
        ("/scheduler/filter", '{"NodeNames": ["r0h0"]}', 400, "ExtenderArgs has no Pod object"),
        ("/scheduler/filter", '{"Pod": {}}', 400, "neither Nodes nor NodeNames"),
        ("/scheduler/prioritize", '{"Pod": {}, "NodeNames": "r0h0"}', 400, "NodeNames must be a list"),
        (
            "/scheduler/prioritize",
            '{"Pod": {}, "Nodes": {"items": [{}]}}',
            400,
            "items[0] has no metadata.name",
        ),
    ],
)
def test_bad_requests(
    client: TestClient,
    caplog: pytest.LogCaptureFixture,
    path: str,
    body: str | bytes,
    status: int,
    words: str,
) -> None:
    with caplog.at_level(logging.WARNING, logger="netheat.serve"):
        r = client.post(path, content=body)
    assert r.status_code == status, r.text
    key = "Error" if path.startswith("/scheduler") else "error"
    message = r.json()[key]
    assert words in message and "\n" not in message
    (line,) = [rec.getMessage() for rec in caplog.records if rec.levelno == logging.WARNING]
    assert line == f"POST {path} -> {status}: {message}"


def test_bad_demand_annotation_is_422(client: TestClient) -> None:
    for value, words in (
        ("2 apples", "unknown unit `apples`"),
        ("-1Gbps", "negative"),
        ("2000", "unknown unit"),
    ):
        r = client.post("/scheduler/prioritize", json={"Pod": pod(value), "NodeNames": ["r0h0"]})
        assert r.status_code == 422
        assert r.json()["Error"].startswith("pod shop/web-1: annotation netheat.io/network-demand: ")
        assert words in r.json()["Error"]
    r = client.post("/scheduler/filter", json={"Pod": pod(), "NodeNames": ["r0h0"]})
    assert r.status_code == 200


# ---------------------------------------------------------------------------------------------
# Telemetry: the refresher, the links file, Prometheus failures


class ScriptedSource:
    """Hands out the given snapshots and exceptions in turn (then nothing new)."""

    description = "scripted test source"

    def __init__(self, steps: list[Snapshot | Exception | None]) -> None:
        self.steps = list(steps)

    def fetch(self, now_s: float) -> Snapshot | None:
        step = self.steps.pop(0) if self.steps else None
        if isinstance(step, Exception):
            raise step
        return step


def test_failed_refresh_keeps_the_previous_snapshot(clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    cool = {0: 0.1, 1: 0.2, 2: 0.3, 3: 0.4}
    source = ScriptedSource(
        [
            snapshot(cool, NOW - 2),
            InputError("cannot reach Prometheus at http://127.0.0.1:1: connection refused"),
            InputError("cannot reach Prometheus at http://127.0.0.1:1: connection refused"),
            snapshot(UTIL, NOW - 1),
        ]
    )
    a = Advisor(str(TOPO))
    # A long interval: the background thread's first refresh happens at start, the rest are driven here.
    for c in make_client(a, clock, source, refresh_s=3600.0):
        refresher = c.app.state.refresher  # type: ignore[attr-defined]
        deadline = time.monotonic() + 10
        while refresher.refreshes < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert refresher.refreshes == 1
        assert c.get("/v1/hotspots").json()["tors"] == []
        with caplog.at_level(logging.WARNING, logger="netheat.serve"):
            assert refresher.refresh_once() is False
            assert refresher.refresh_once() is False
        # One warning line for the two identical failures; the old snapshot is still answered from.
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == [
            "telemetry refresh failed, keeping the previous snapshot: cannot reach Prometheus at "
            "http://127.0.0.1:1: connection refused (scripted test source)"
        ]
        health = c.get("/healthz").json()
        assert health["refresh_failures"] == 2 and "connection refused" in health["last_refresh_error"]
        assert health["telemetry_at_s"] == NOW - 2 and health["stale"] is False
        links = c.get("/v1/links").json()["links"]
        assert [x["utilization"] for x in links] == pytest.approx([0.1, 0.2, 0.3, 0.4])
        text = c.get("/metrics").text
        assert "netheat_serve_telemetry_refresh_failures_total 2.0" in text
        assert "netheat_serve_telemetry_refreshes_total 1.0" in text
        assert refresher.refresh_once() is True
        assert [t["tor"] for t in c.get("/v1/hotspots").json()["tors"]] == ["tor2"]
        assert c.get("/healthz").json()["last_refresh_error"] is None


def write_links(path: Path, rows: list[tuple[int, float, float, float]]) -> None:
    """A links table: (link, window_start_s, window_end_s, utilization), 10 Gbps links."""
    link, start, end, util = zip(*rows, strict=True)
    table = pa.table(
        {
            "link": pa.array(link, pa.int32()),
            "layer": ["tor-agg"] * len(rows),
            "capacity_bps": [CAP] * len(rows),
            "window_start_s": start,
            "window_end_s": end,
            "utilization": util,
        }
    )
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def test_links_file_source_takes_each_links_last_window(tmp_path: Path) -> None:
    path = tmp_path / "links.parquet"
    rows = [
        (uplink(2), NOW - 20, NOW - 10, 0.5),
        (uplink(0), NOW - 10, NOW, 0.33),
        (uplink(2), NOW - 10, NOW, 0.91),  # the later window of link 36 wins
        (uplink(1), NOW - 20, NOW - 10, 0.52),  # link 34's only (earlier) window
        (uplink(3), NOW - 10, NOW, float("nan")),  # skipped
    ]
    write_links(path, rows)
    src = LinksFileSource(path)
    snap = src.fetch(NOW)
    assert snap is not None and snap.at_s == NOW
    assert snap.links == [uplink(0), uplink(1), uplink(2)]
    assert snap.rates_bps == pytest.approx([0.33 * CAP, 0.52 * CAP, 0.91 * CAP])
    assert snap.capacities_bps == [CAP] * 3
    assert src.fetch(NOW) is None  # unchanged file: nothing new
    write_links(path, [(uplink(0), NOW, NOW + 10, 0.8)])
    snap = src.fetch(NOW + 10)
    assert snap is not None and snap.links == [uplink(0)] and snap.at_s == NOW + 10
    pq.write_table(pa.table({"link": [1], "utilization": [0.5]}), path)
    with pytest.raises(InputError, match="no column capacity_bps, window_start_s, window_end_s"):
        src.fetch(NOW)
    path.write_text("not parquet")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        src.fetch(NOW)


def test_links_file_is_read_again_when_it_changes(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "links.parquet"
    write_links(path, [(uplink(r), NOW - 10, NOW, 0.2) for r in range(4)])
    a = Advisor(str(TOPO))
    for c in make_client(a, clock, LinksFileSource(path), refresh_s=0.05):
        wait_until(lambda c=c: c.get("/healthz").json()["snapshots"] >= 1)
        assert c.get("/v1/hotspots").json()["tors"] == []
        write_links(path, [(uplink(r), NOW - 5, NOW, UTIL[r]) for r in range(4)])
        wait_until(lambda c=c: [t["tor"] for t in c.get("/v1/hotspots").json()["tors"]] == ["tor2"])
        assert c.get("/healthz").json()["telemetry_at_s"] == NOW


def wait_until(cond: Callable[[], bool], deadline_s: float = 10.0) -> None:
    end = time.monotonic() + deadline_s
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"condition not met within {deadline_s:g} s")
        time.sleep(0.02)


def test_unreachable_prometheus_keeps_serving(
    tmp_path: Path, advisor: Any, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    m = tmp_path / "ports.toml"
    m.write_text(e2e_map())
    source = PrometheusSource(f"http://127.0.0.1:{free_port()}", TOPO, m, window_s=60, step_s=15, timeout_s=2)
    source.check()
    with caplog.at_level(logging.WARNING, logger="netheat.serve"):
        for c in make_client(advisor, clock, source, refresh_s=3600.0):
            refresher = c.app.state.refresher  # type: ignore[attr-defined]
            wait_until(lambda r=refresher: r.failures >= 1)
            # Still answering from the snapshot it had.
            assert [t["tor"] for t in c.get("/v1/hotspots").json()["tors"]] == ["tor2"]
            assert "cannot reach Prometheus" in c.get("/healthz").json()["last_refresh_error"]
    (line,) = [r.getMessage() for r in caplog.records if "refresh failed" in r.getMessage()]
    assert "cannot reach Prometheus" in line and "\n" not in line


# ---------------------------------------------------------------------------------------------
# The command line: startup errors are one line and exit 2


def run_cli(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return code, err


def test_serve_startup_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good_map = tmp_path / "ports.toml"
    good_map.write_text(e2e_map())
    bad_map = tmp_path / "bad.toml"
    bad_map.write_text('[[port]]\nlink = "tor3->tor2"\ninstance = "tor3"\nif-name = "Ethernet48"\n')
    bad_config = tmp_path / "advisor.toml"
    bad_config.write_text('[advisor]\nstale_after = "30s"\n')
    not_parquet = tmp_path / "links.parquet"
    not_parquet.write_text("x")
    base = ["serve", "--topology", str(TOPO), "--port", str(free_port())]
    prom = ["--prometheus", "http://127.0.0.1:9", "--map"]
    cases = [
        (["serve", "--topology", str(tmp_path / "none.toml")], "none.toml"),
        (
            [*base, "--config", str(bad_config)],
            "key `advisor.stale_after`: unknown key; did you mean `stale-after`?",
        ),
        ([*base, *prom, str(bad_map)], "bad.toml:2:1: key `port[0].link`"),
        (
            [*base, "--prometheus", "127.0.0.1:9090", "--map", str(good_map)],
            "expected an http:// or https:// URL",
        ),
        ([*base, "--prometheus", "http://127.0.0.1:9"], "--prometheus needs --map"),
        ([*base, "--map", str(good_map)], "--map goes with --prometheus"),
        ([*base, "--links", str(tmp_path / "missing.parquet")], "no such file"),
        ([*base, "--links", str(not_parquet)], "not a readable Parquet file"),
        ([*base, "--refresh", "soon"], "--refresh 'soon'"),
        ([*base, "--window", "10s", "--step", "10s"], "must hold at least two --step windows"),
        ([*base, "--workers", "0"], "--workers must be at least 1, got 0"),
    ]
    for args, words in cases:
        code, err = run_cli(capsys, args)
        assert code == 2 and err.startswith("error: ") and words in err, (args, err)
        assert err.count("\n") == 1, err


def test_serve_refuses_a_taken_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        code, err = run_cli(capsys, ["serve", "--topology", str(TOPO), "--port", str(port)])
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


# ---------------------------------------------------------------------------------------------
# End to end: `netheat serve` as a process, telemetry from a real Prometheus


def http_post(url: str, body: Any) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def test_serve_end_to_end_with_real_prometheus(prometheus: tuple[str, Any], tmp_path: Path) -> None:
    url, _exporter = prometheus
    wait_for_scrapes(url, 6, deadline_s=35)
    m = tmp_path / "ports.toml"
    m.write_text(e2e_map())
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    env = {k: v for k, v in os.environ.items() if k != "NETHEAT_DEBUG"}
    args = ["serve", "--topology", str(TOPO), "--prometheus", url, "--map", str(m), "--host", "127.0.0.1"]
    args += ["--port", str(port), "--refresh", "1s", "--window", "10s", "--step", "2s"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "netheat.cli", *args], stdout=log, stderr=subprocess.STDOUT, env=env
    )
    base = f"http://127.0.0.1:{port}"
    try:
        health: Any = None
        end = time.monotonic() + 40
        while time.monotonic() < end:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                health = http_json(f"{base}/healthz")
            except (OSError, ValueError):
                health = None
            if health and health["snapshots"] >= 1:
                break
            time.sleep(0.25)
        else:
            pytest.fail(f"no telemetry in 40 s: {health}; log: {(tmp_path / 'serve.log').read_text()}")
        assert health["stale"] is False and health["telemetry_source"] == f"prometheus {url}"

        hot = http_json(f"{base}/v1/hotspots")
        assert [t["tor"] for t in hot["tors"]] == ["tor2"]
        # The exporter's tor -> core rates: 0.30, 0.40, 0.90, 0.20 (within the ingest test's 0.02).
        links = {row["tor"]: row["utilization"] for row in http_json(f"{base}/v1/links")["links"]}
        assert links == {f"tor{r}": pytest.approx(TOR_TX[r], abs=0.02) for r in range(4)}

        args_k8s = {"Pod": pod(DEMAND), "NodeNames": HOSTS}
        doc = http_post(f"{base}/scheduler/filter", args_k8s)
        assert sorted(doc["FailedNodes"]) == ["r2h0", "r2h1", "r2h2", "r2h3"]
        assert doc["NodeNames"] == [h for h in HOSTS if not h.startswith("r2")]
        # With 0.5 Gbps: 0.35, 0.45, 0.25 projected (+-0.02): scores 6, 5, 7 for the cool ToRs.
        scores = http_post(
            f"{base}/scheduler/prioritize", {"Pod": pod(DEMAND), "NodeNames": doc["NodeNames"]}
        )
        assert scores == [{"Host": h, "Score": {0: 6, 1: 5, 3: 7}[int(h[1])]} for h in doc["NodeNames"]]
        text = urllib.request.urlopen(f"{base}/metrics", timeout=5).read().decode()
        assert 'netheat_serve_requests_total{endpoint="/scheduler/filter",status="200"} 1.0' in text
        with pytest.raises(urllib.error.HTTPError) as e:
            http_post(f"{base}/v1/place/task", {"candidates": ["nowhere"]})
        assert e.value.code == 422
    finally:
        stop_process(proc)
        log.close()
    out = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in out
    assert "POST /v1/place/task -> 422: unknown host" in out


def test_serve_with_two_worker_processes(tmp_path: Path) -> None:
    """``--workers 2``: two processes answer on the one port, each from its own advisor, the same way."""
    now = time.time()
    path = tmp_path / "links.parquet"
    write_links(path, [(uplink(r), now - 10, now, UTIL[r]) for r in range(4)])
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    args = ["serve", "--topology", str(TOPO), "--links", str(path), "--host", "127.0.0.1"]
    args += ["--port", str(port), "--workers", "2", "--log-level", "warning"]
    # A new session: if the test fails before the supervisor stops its workers, they go with it.
    proc = subprocess.Popen(
        [sys.executable, "-m", "netheat.cli", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    expected = [{"Host": h, "Score": SCORES[int(h[1])]} for h in HOSTS]
    pids: set[int] = set()
    answers = 0
    try:
        end = time.monotonic() + 60
        while len(pids) < 2 or answers < 20:
            assert time.monotonic() < end, f"workers seen {pids}; log: {(tmp_path / 'serve.log').read_text()}"
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                health = http_json(f"{base}/healthz")  # each call is a new connection
            except (OSError, ValueError):
                time.sleep(0.1)
                continue
            assert health["stale"] is False and health["snapshots"] == 1
            pids.add(health["pid"])
            # Whichever worker takes it, the answer is the hand-computed one.
            assert (
                http_post(f"{base}/scheduler/prioritize", {"Pod": pod(DEMAND), "NodeNames": HOSTS})
                == expected
            )
            answers += 1
        assert proc.pid not in pids  # the supervisor only supervises
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
