"""`netheat ingest prometheus` and `netheat analyze --prometheus`.

Three parts:

1. Counter edge cases on hand-written answers of Prometheus' HTTP API
   (``tests/python/fixtures/prometheus/*.json``), served by a small fake
   Prometheus on 127.0.0.1 that answers ``/api/v1/query`` of a range
   selector with the fixture's samples inside the range (boundaries
   included, as Prometheus 2 does); every utilization is computed by hand.
2. Bad input: exit 2, one clear line, no traceback, no output file.
3. End to end with a real Prometheus (the Debian package; skipped only if
   the ``prometheus`` binary is absent): a test exporter on 127.0.0.1
   serves node_exporter and snmp_exporter style counters growing at chosen
   rates, Prometheus scrapes it every second, and the ingested table and
   the analysis must find the one hot ToR uplink. The exporter and the
   ``prometheus`` fixture are shared with test_serve.py (``promtest.py``,
   ``conftest.py``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from promtest import TOR_RX, TOR_TX, Exporter, e2e_map, host_rx, host_tx, wait_for_scrapes

from netheat.cli import main
from netheat.errors import ConfigError
from netheat.telemetry import ingest_prometheus

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "prometheus"
TOPO = ROOT / "examples" / "topologies" / "two-tier-4x4.toml"
T0 = 1_699_999_980.0
"""Start of the fixtures' first window (a multiple of 30 s)."""
UNTIL = T0 + 90
NOW = T0 + 3600

# Link ids of two-tier-4x4.toml: host r<r>h<i> up = 8r + 2i, down = +1; tor<r> -> core = 32 + 2r.
TOR_UP = {r: 32 + 2 * r for r in range(4)}


# ---------------------------------------------------------------------------------------------
# A fake Prometheus serving recorded answers


_QUERY = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\[(\d+)ms\]$")
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*")')


class FakePrometheus:
    """``/api/v1/query`` of ``metric{l="v",...}[Nms]`` at ``time``, from a fixture's full-range answers."""

    def __init__(self, answers: dict[str, Any], mode: str = "ok") -> None:
        self.answers = answers
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                u = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(u.query))
                code, body = fake.answer(u.path, q)
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def answer(self, path: str, q: dict[str, str]) -> tuple[int, str]:
        if self.mode == "error400":
            return 400, (FIXTURES / "error_400.json").read_text()
        if self.mode == "malformed":
            return 200, (FIXTURES / "malformed.json").read_text()
        assert path == "/api/v1/query", path
        m = _QUERY.match(q["query"])
        assert m, q["query"]
        metric, matchers, span_ms = m.group(1), m.group(2) or "", int(m.group(3))
        want = {k: json.loads(v) for k, v in _MATCHER.findall(matchers)}
        at = float(q["time"])
        lo = at - span_ms / 1000
        result = []
        counts = []
        empty = {"status": "success", "data": {"resultType": "matrix", "result": []}}
        answer = self.answers.get(metric, empty)
        for s in answer["data"]["result"]:
            if any(s["metric"].get(k) != v for k, v in want.items()):
                continue
            values = [v for v in s["values"] if lo - 1e-6 <= float(v[0]) <= at + 1e-6]
            if values:
                result.append({"metric": s["metric"], "values": values})
                counts.append(len(values))
        self.requests.append({"metric": metric, "time": at, "span_s": span_ms / 1000, "counts": counts})
        return 200, json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def fake() -> Iterator[Any]:
    started: list[FakePrometheus] = []

    def start(fixture: str | None = None, mode: str = "ok") -> FakePrometheus:
        answers = json.loads((FIXTURES / fixture).read_text()) if fixture else {}
        fp = FakePrometheus(answers, mode)
        started.append(fp)
        return fp

    yield start
    for fp in started:
        fp.close()


EDGE_MAP = """\
[prometheus]
ignore-interfaces = ["Management*"]

[[port]]
link = "tor0->core"
instance = "tor0"
if-name = "Ethernet48"
direction = "out"

[[port]]
src = "tor1"
dst = "core"
instance = "tor1"
if-name = "Ethernet48"
direction = "out"

[[port]]
link = "tor2->core"
instance = "tor2"
if-index = 49
direction = "out"

[[port]]
link = "tor3->core"
instance = "tor3"
if-name = "Ethernet48"
direction = "out"

[[port]]   # named here, absent from Prometheus
link = "core->tor1"
instance = "core"
if-name = "Ethernet2"
direction = "out"
"""


def write_map(tmp_path: Path, text: str, name: str = "ports.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def rows(table: Any, link: int) -> list[tuple[float, float]]:
    """``(window_start_s - T0, utilization)`` of one link."""
    return [(r["window_start_s"] - T0, r["utilization"]) for r in table.to_pylist() if r["link"] == link]


def assert_rows(table: Any, link: int, expected: list[tuple[float, float]], tol: float) -> None:
    """The link's rows are exactly the expected windows, with utilizations within ``tol``."""
    got = rows(table, link)
    assert [w for w, _ in got] == [w for w, _ in expected], got
    assert all(abs(u - e) <= tol for (_, u), (_, e) in zip(got, expected, strict=True)), got


def ingest(fp: FakePrometheus, port_map: Path, **kw: Any) -> Any:
    args: dict[str, Any] = {"since": T0, "until": UNTIL, "step_s": 30.0, "now": NOW}
    args.update(kw)
    return ingest_prometheus(fp.url, TOPO, port_map, **args)


# ---------------------------------------------------------------------------------------------
# 1. Counter edge cases


def test_reset_wrap_nan_gap_and_reports(fake: Any, tmp_path: Path) -> None:
    fp = fake("edge_cases.json")
    res = ingest(fp, write_map(tmp_path, EDGE_MAP))
    t = res.table
    assert t.column_names == [
        "link",
        "layer",
        "direction",
        "src_node",
        "dst_node",
        "capacity_bps",
        "window_start_s",
        "window_end_s",
        "utilization",
    ]
    # A reset between T0+40 and T0+50: that interval counts the 2e8 bytes since the reset, so the
    # middle window carries 5e8 + 2e8 + 5e8 = 1.2e9 bytes: 9.6e9 bits / (1e10 b/s x 30 s) = 0.032.
    assert_rows(t, TOR_UP[0], [(0, 0.04), (30, 0.032), (60, 0.04)], 1e-9)
    # A 2^64 wrap (2^64 - 1e8 -> 4e8) is 5e8 bytes like every other 10 s: 0.04 throughout.
    assert_rows(t, TOR_UP[1], [(0, 0.04), (30, 0.04), (60, 0.04)], 1e-6)
    # NaN, +Inf and a negative sample are dropped; the 20 s intervals around them are bridged.
    assert_rows(t, TOR_UP[2], [(0, 0.04), (30, 0.04), (60, 0.04)], 1e-9)
    # One missed scrape (T0+10) is bridged; the 70 s gap T0+20..T0+90 is not: the first window has
    # 20 s covered (1e9 bytes over 20 s = 0.04) and the two windows in the gap have no row.
    assert_rows(t, TOR_UP[3], [(0, 0.04)], 1e-9)
    # Only the four measured links have rows; every row is a whole 30 s window.
    assert set(t.column("link").to_pylist()) == set(TOR_UP.values())
    assert {r["window_end_s"] - r["window_start_s"] for r in t.to_pylist()} == {30.0}
    assert t.column("src_node").to_pylist()[0] == "tor0"
    assert t.column("layer").to_pylist()[0] == "tor-agg"
    assert t.column("direction").to_pylist()[0] == "up"
    assert set(t.column("capacity_bps").to_pylist()) == {1e10}

    notes = "\n".join(res.notes)
    assert "1 port counter(s) named in the map have no series" in notes
    assert 'ifHCOutOctets{ifName="Ethernet2", instance="core"}' in notes
    assert "1 ifHCOutOctets series are not in the map" in notes
    assert 'ifName="Ethernet1"' in notes
    assert "Management0" not in notes  # ignore-interfaces
    assert "36 of 40 directed links" in notes
    assert "their rows are absent, not zero" in notes
    assert "1 counter reset(s)" in notes
    assert "1 counter wrap(s) at 2^64" in notes
    assert "2 NaN/stale or infinite and 1 negative sample(s) dropped" in notes
    assert "1 gap(s)" in notes and "2 link-window(s) in them have no row" in notes
    assert res.stats["resets"] == 1 and res.stats["wraps"] == 1 and res.stats["gaps"] == 1

    # Written under the output rule, notes and version in the metadata; analyze reads it as is.
    out = tmp_path / "links.parquet"
    res.write(out)
    meta = pq.read_schema(out).metadata
    assert b"netheat_version" in meta
    assert json.loads(meta[b"netheat_notes"]) == res.notes
    assert json.loads(meta[b"netheat_ingest"])["step_s"] == 30.0
    from netheat.analytics.io import scan_links

    tel = scan_links(out)
    assert tel.rows == t.num_rows
    assert tel.interval_s == 30.0


def test_max_gap_option(fake: Any, tmp_path: Path) -> None:
    """`--max-gap 15s`: the bridged 20 s intervals become gaps too (tor2 around its dropped samples)."""
    fp = fake("edge_cases.json")
    res = ingest(fp, write_map(tmp_path, EDGE_MAP), max_gap_s=15.0)
    # tor2 usable samples: T0-10..T0+30 every 10 s, then T0+50, T0+70, T0+90 (20 s apart: gaps now).
    assert_rows(res.table, TOR_UP[2], [(0, 0.04)], 1e-9)
    # tor3: T0..T0+20 is now a gap as well; the first window keeps only (T0-10, T0] -> no coverage.
    assert rows(res.table, TOR_UP[3]) == []
    assert "directed link(s) have a series but no window" in "\n".join(res.notes)


def test_nics_and_if_high_speed(fake: Any, tmp_path: Path) -> None:
    fp = fake("nics_speed.json")
    m = write_map(
        tmp_path,
        """\
[prometheus]
capacity = "if-high-speed"

[[port]]
host = "r0h0"
instance = "r0h0:9100"
device = "eth0"

[[port]]
link = "tor0->core"
instance = "tor0"
if-name = "Ethernet48"
direction = "out"
""",
    )
    res = ingest(fp, m)
    t = res.table
    # Transmit counter of the host's NIC = the host's uplink r0h0->tor0 (link 0): 1.5e9 B / 30 s = 0.04.
    assert_rows(t, 0, [(0, 0.04), (30, 0.04), (60, 0.04)], 1e-9)
    # Receive counter = the downlink tor0->r0h0 (link 1): 3e9 B / 30 s = 0.08.
    assert_rows(t, 1, [(0, 0.08), (30, 0.08), (60, 0.08)], 1e-9)
    # ifHighSpeed 1000 Mbit/s: 1.5e9 B = 1.2e10 bits over 1e9 b/s x 30 s = 0.4.
    assert_rows(t, TOR_UP[0], [(0, 0.4), (30, 0.4), (60, 0.4)], 1e-9)
    caps = {r["link"]: r["capacity_bps"] for r in t.to_pylist()}
    assert caps == {0: 1e10, 1: 1e10, TOR_UP[0]: 1e9}
    notes = "\n".join(res.notes)
    assert 'device="docker0"' in notes
    assert 'device="lo"' not in notes  # ignored by default


def test_step_shorter_than_scrape_interval_widens(fake: Any, tmp_path: Path) -> None:
    fp = fake("short_step.json")
    m = write_map(tmp_path, '[[port]]\nlink = "tor0->core"\ninstance = "tor0"\nif-name = "Ethernet48"\n')
    res = ingest(fp, m, step_s=10.0)
    assert res.stats["step_s"] == 30.0 and res.stats["step_requested_s"] == 10.0
    assert res.stats["scrape_interval_s"] == 30.0
    # 1.5e9, 3e9, 1.5e9 bytes per 30 s window: 0.04, 0.08, 0.04 (not smeared into 10 s windows).
    assert_rows(res.table, TOR_UP[0], [(0, 0.04), (30, 0.08), (60, 0.04)], 1e-9)
    assert any("windows widened to 30 s" in n and n.startswith("warning: ") for n in res.notes)
    # direction = "both" (the default): the receive counter has no series, so core->tor0 is reported.
    assert any("ifHCInOctets" in n and "no series" in n for n in res.notes)


def test_multi_chunk_ranges_give_the_same_table(fake: Any, tmp_path: Path) -> None:
    m = write_map(tmp_path, EDGE_MAP)
    one = fake("edge_cases.json")
    whole = ingest(one, m)
    many = fake("edge_cases.json")
    chunked = ingest(many, m, max_points=4)
    assert len(one.requests) == 1  # one metric, one chunk
    assert len(many.requests) > 10
    # No answer holds more than max_points samples of a series.
    assert max(c for r in many.requests for c in r["counts"]) <= 4
    # Chunks tile the range without holes.
    times = sorted((r["time"] - r["span_s"], r["time"]) for r in many.requests)
    assert all(abs(b0 - a1) < 1e-6 for (_, a1), (b0, _) in itertools.pairwise(times))
    assert chunked.table.equals(whole.table)
    assert chunked.stats["chunks"] == len(many.requests)


def test_ingest_cli_writes_parquet(fake: Any, tmp_path: Path, capsys: Any) -> None:
    fp = fake("edge_cases.json")
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    args = ["ingest", "prometheus", "--url", fp.url, "--topology", str(TOPO), "--map", str(m)]
    args += ["--since", str(T0), "--until", str(UNTIL), "--step", "30s", "--out", str(out)]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert "warning: 36 of 40 directed links" in cap.err
    assert "note: 1 counter reset(s)" in cap.out
    assert f"wrote {out}" in cap.out
    assert pq.read_table(out).num_rows == 10
    # A second run replaces netheat's own file; a file netheat did not write needs --force.
    assert main(args) == 0
    other = tmp_path / "mine.parquet"
    other.write_text("not netheat's")
    assert main([*args[:-1], str(other)]) == 2
    assert "--force" in capsys.readouterr().err
    assert other.read_text() == "not netheat's"


# ---------------------------------------------------------------------------------------------
# 2. Bad input: exit 2, a clear message, no traceback, nothing written


def run_cli(capsys: Any, args: list[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return code, err


def ingest_args(url: str, m: Path, out: Path) -> list[str]:
    return [
        "ingest",
        "prometheus",
        "--url",
        url,
        "--topology",
        str(TOPO),
        "--map",
        str(m),
        "--since",
        str(T0),
        "--until",
        str(UNTIL),
        "--step",
        "30s",
        "--out",
        str(out),
    ]


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            '[[port]]\nlink = "tor3->agg0-0"\ninstance = "tor3"\nif-name = "Ethernet48"\n',
            ":2:1: key `port[0].link`",
            "has no node `agg0-0`",
        ),
        (
            '[[port]]\nlink = "tor3->tor2"\ninstance = "tor3"\nif-name = "Ethernet48"\n',
            ":2:1: key `port[0].link`",
            "has no link tor3->tor2 (links leaving tor3:",
        ),
        (
            '[[port]]\nsrc = "tor3"\ndst = "core"\ninstance = "tor3"\n  if_name = "Ethernet48"\n',
            ":5:3: key `port[0].if_name`",
            "unknown key; did you mean `if-name`?",
        ),
        (
            '[prometheus]\ntarget = "instance"\n[[port]]\nhost = "r0h0"\ninstance = "a"\ndevice = "eth0"\n',
            ":2:1: key `prometheus.target`",
            "unknown key; did you mean `target-label`?",
        ),
        (
            '[[port]]\nhost = "r0h0"\ninstance = "a"\ndevice = "eth0"\n\n'
            '[[port]]\nhost = "r0h1"\ninstance = "b"\ndevice = "eth0"\ndirection = "sideways"\n',
            ":10:1: key `port[1].direction`",
            "expected one of both, out, in",
        ),
        (
            '[[port]]\nhost = "r0h0"\ninstance = "a"\ndevice = "eth0"\n\n'
            '[[port]]\nlink = "tor0->r0h0"\ninstance = "tor0"\nif-name = "Ethernet1"\n',
            ":6:1: key `port[1]`",
            "link tor0->r0h0 is already measured by port[0] (line 1, its receive counter)",
        ),
        (
            '[[port]]\nhost = "tor0"\ninstance = "a"\ndevice = "eth0"\n',
            ":2:1: key `port[0].host`",
            "`tor0` is a tor, not a host",
        ),
        ('[[port]]\nlink = "tor0->core"\ninstance = "tor0"\n', ":1:1: key `port[0]`", "give exactly one of"),
        ("[[port]\n", ":1:7: invalid TOML", ""),
    ],
)
def test_bad_port_map(text: str, where: str, words: str, tmp_path: Path, capsys: Any, fake: Any) -> None:
    fp = fake("edge_cases.json")
    m = write_map(tmp_path, text)
    out = tmp_path / "links.parquet"
    code, err = run_cli(capsys, ingest_args(fp.url, m, out))
    assert code == 2, err
    assert err.startswith(f"error: {m}{where}"), err
    assert words in err
    assert err.count("\n") == 1
    assert not out.exists()
    assert fp.requests == []  # the map is checked before any query


def test_port_map_errors_are_config_errors(tmp_path: Path) -> None:
    from netheat._netheat import Topology
    from netheat.telemetry import load_port_map

    topo = Topology.load(TOPO)
    m = write_map(tmp_path, '[[port]]\nlink = 99\ninstance = "x"\nif-index = -1\n')
    with pytest.raises(ConfigError) as e:
        load_port_map(m, topo)
    assert e.value.line == 4 and e.value.column == 1 and e.value.key == "port[0].if-index"


def test_prometheus_unreachable(tmp_path: Path, capsys: Any) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    code, err = run_cli(capsys, ingest_args(f"http://127.0.0.1:{port}", m, out))
    assert code == 2
    assert f"error: cannot reach Prometheus at http://127.0.0.1:{port}" in err
    assert "refused" in err.lower()
    assert not out.exists()


def test_prometheus_http_400(fake: Any, tmp_path: Path, capsys: Any) -> None:
    fp = fake(mode="error400")
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    code, err = run_cli(capsys, ingest_args(fp.url, m, out))
    assert code == 2
    assert f"Prometheus at {fp.url}/api/v1/query" in err
    assert "answered HTTP 400: bad_data: invalid parameter" in err
    assert "parse error" in err
    assert not out.exists()


def test_prometheus_malformed_json(fake: Any, tmp_path: Path, capsys: Any) -> None:
    fp = fake(mode="malformed")
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    code, err = run_cli(capsys, ingest_args(fp.url, m, out))
    assert code == 2
    assert "the answer is not JSON" in err and "is --url a Prometheus server?" in err
    assert not out.exists()


def test_bad_times_and_urls(fake: Any, tmp_path: Path, capsys: Any) -> None:
    fp = fake("edge_cases.json")
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    base = ingest_args(fp.url, m, out)
    for flag, value, words in [
        ("--since", "yesterday", "--since 'yesterday': expected `now`"),
        ("--until", str(T0 - 60), "must be before --until"),
        ("--step", "0s", "--step must be a positive duration"),
        ("--url", "127.0.0.1:9090", "expected an http:// or https:// URL"),
    ]:
        args = list(base)
        args[args.index(flag) + 1] = value
        code, err = run_cli(capsys, args)
        assert code == 2 and words in err, err
    assert not out.exists()


def test_analyze_needs_exactly_one_source(tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit) as e:
        main(["analyze", "--out", str(tmp_path / "a")])
    assert e.value.code == 2
    assert "one of the arguments --links --prometheus is required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["analyze", "--links", "x.parquet", "--prometheus", "http://127.0.0.1:1", "--out", "a"])
    assert e.value.code == 2
    bare = ["analyze", "--prometheus", "http://127.0.0.1:1", "--out", str(tmp_path / "a")]
    code, err = run_cli(capsys, bare)
    assert code == 2 and "--prometheus needs --topology, --map, --since, --step" in err
    code, err = run_cli(
        capsys, ["analyze", "--links", "x.parquet", "--since", "6h", "--out", str(tmp_path / "a")]
    )
    assert code == 2 and "--since go with --prometheus" in err
    assert not (tmp_path / "a").exists()


def test_analyze_prometheus_error_leaves_no_directory(tmp_path: Path, capsys: Any, fake: Any) -> None:
    fp = fake(mode="error400")
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "analysis"
    args = ["analyze", "--prometheus", fp.url, "--topology", str(TOPO), "--map", str(m)]
    args += ["--since", str(T0), "--until", str(UNTIL), "--step", "30s", "--out", str(out)]
    code, err = run_cli(capsys, args)
    assert code == 2 and "answered HTTP 400" in err
    assert not out.exists()


def test_unreachable_in_a_subprocess_has_no_traceback(tmp_path: Path) -> None:
    """The real command line, as a user runs it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = write_map(tmp_path, EDGE_MAP)
    out = tmp_path / "links.parquet"
    env = {k: v for k, v in os.environ.items() if k != "NETHEAT_DEBUG"}
    r = subprocess.run(
        [sys.executable, "-m", "netheat.cli", *ingest_args(f"http://127.0.0.1:{port}", m, out)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 2
    assert r.stderr.startswith("error: cannot reach Prometheus") and "Traceback" not in r.stderr
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# 3. End to end with a real Prometheus


SCRAPES = 16
"""Samples of each series to wait for (1 s apart) before ingesting."""
TOLERANCE = 0.02
"""Absolute utilization tolerance: the exporter reads its clock a few ms after Prometheus stamps the
scrape, so each sample is off by (delay jitter x rate); over 5 s windows that is well under 1%."""


def test_end_to_end_real_prometheus(prometheus: tuple[str, Exporter], tmp_path: Path) -> None:
    url, _exporter = prometheus
    start = time.time()
    wait_for_scrapes(url, SCRAPES, deadline_s=35)
    m = write_map(tmp_path, e2e_map())
    since = f"{start:.3f}"
    env = {k: v for k, v in os.environ.items() if k != "NETHEAT_DEBUG"}

    # 1. ingest, then check every utilization against the exporter's rates.
    links = tmp_path / "links.parquet"
    args = ["ingest", "prometheus", "--url", url, "--topology", str(TOPO), "--map", str(m)]
    args += ["--since", since, "--step", "5s", "--out", str(links)]
    r = subprocess.run(
        [sys.executable, "-m", "netheat.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert 'ifName="Ethernet1"' in r.stderr  # the unmapped switch port is reported
    t = pq.read_table(links)
    assert pq.read_schema(links).metadata[b"netheat_version"]
    by_link: dict[int, list[float]] = {}
    for row in t.to_pylist():
        by_link.setdefault(row["link"], []).append(row["utilization"])
    assert set(by_link) == set(range(40))  # every directed link has a series
    expected: dict[int, float] = {}
    for rk in range(4):
        expected[TOR_UP[rk]] = TOR_TX[rk]
        expected[TOR_UP[rk] + 1] = TOR_RX[rk]
        for i in range(4):
            expected[8 * rk + 2 * i] = host_tx(rk, i)
            expected[8 * rk + 2 * i + 1] = host_rx(rk, i)
    for link, want in expected.items():
        got = by_link[link]
        assert len(got) >= 2
        assert all(abs(u - want) <= TOLERANCE for u in got), (link, want, got)

    # 2. analyze --prometheus: the hot ToR uplink is the one hotspot.
    out = tmp_path / "analysis"
    args = ["analyze", "--prometheus", url, "--topology", str(TOPO), "--map", str(m)]
    args += ["--since", since, "--step", "5s", "--window", "1min", "--out", str(out)]
    r = subprocess.run(
        [sys.executable, "-m", "netheat.cli", *args], capture_output=True, text=True, timeout=90, env=env
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["hotspots"] == 1
    runs = pq.read_table(out / "tables" / "hotspot_runs.parquet").to_pylist()
    assert len(runs) == 1
    assert int(runs[0]["link"]) == TOR_UP[2] and runs[0]["direction"] == "up"
    assert abs(runs[0]["peak_util"] - TOR_TX[2]) <= TOLERANCE
    assert (out / "links.parquet").exists() and (out / "report.html").exists()


def test_analyze_prometheus_with_recorded_answers(fake: Any, tmp_path: Path, capsys: Any) -> None:
    """`analyze --prometheus` keeps the ingested table as DIR/links.parquet and analyzes it."""
    fp = fake("nics_speed.json")
    m = write_map(
        tmp_path,
        '[prometheus]\ncapacity = "if-high-speed"\n\n'
        '[[port]]\nhost = "r0h0"\ninstance = "r0h0:9100"\ndevice = "eth0"\n\n'
        '[[port]]\nlink = "tor0->core"\ninstance = "tor0"\nif-name = "Ethernet48"\ndirection = "out"\n',
    )
    out = tmp_path / "analysis"
    args = ["analyze", "--prometheus", fp.url, "--topology", str(TOPO), "--map", str(m)]
    args += ["--since", str(T0), "--until", str(UNTIL), "--step", "30s", "--window", "30s"]
    args += ["--threshold", "0.3", "--out", str(out)]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert "37 of 40 directed links" in cap.err
    assert f"wrote {out / 'links.parquet'}: 9 rows from Prometheus" in cap.out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["link_samples"] == 9
    assert summary["hotspots"] == 1  # tor0 -> core at 0.4 of its 1 Gbps ifHighSpeed
    marker = json.loads((out / ".netheat.json").read_text())
    assert marker["files"]["links.parquet"]["group"] == "ingest"


def test_example_port_map_covers_the_example_datacenter() -> None:
    from netheat._netheat import Topology
    from netheat.telemetry import load_port_map

    pm = load_port_map(ROOT / "examples" / "ports" / "two-tier-4x4.toml", Topology.load(TOPO))
    measured = sorted(p.link(d) for p in pm.ports for d in p.directions)
    assert measured == list(range(40))
    assert {p.kind for p in pm.ports} == {"node", "snmp"}


def test_deploy_configs() -> None:
    """The Prometheus example passes promtool (when installed); the snmp_exporter module is complete."""
    promtool = shutil.which("promtool")
    if promtool is not None:
        r = subprocess.run(
            [promtool, "check", "config", str(ROOT / "deploy" / "prometheus" / "prometheus.yml")],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 0, r.stdout + r.stderr
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((ROOT / "deploy" / "snmp_exporter" / "if_mib.yml").read_text())
    module = doc["modules"]["netheat_if_mib"]
    assert "netheat_v2" in doc["auths"]
    oids = {
        "ifName": "1.3.6.1.2.1.31.1.1.1.1",
        "ifHCInOctets": "1.3.6.1.2.1.31.1.1.1.6",
        "ifHCOutOctets": "1.3.6.1.2.1.31.1.1.1.10",
        "ifHighSpeed": "1.3.6.1.2.1.31.1.1.1.15",
    }
    assert sorted(module["walk"]) == sorted(oids.values())
    for metric in module["metrics"]:
        assert metric["oid"] == oids[metric["name"]]
        assert metric["indexes"] == [{"labelname": "ifIndex", "type": "gauge"}]
        assert metric["lookups"][0]["labelname"] == "ifName"
        assert metric["lookups"][0]["oid"] == oids["ifName"]
    assert {m["name"]: m["type"] for m in module["metrics"]} == {
        "ifHCInOctets": "counter",
        "ifHCOutOctets": "counter",
        "ifHighSpeed": "gauge",
    }
