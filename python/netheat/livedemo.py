"""``make demo-live``: watch one hotspot appear and the advisor steer around it.

Everything runs on this machine and listens on 127.0.0.1 only, for about a
minute:

1. a *fake fleet*: an HTTP exporter serving node_exporter and snmp_exporter
   style byte counters for examples/topologies/two-tier-4x4.toml (every host
   NIC and every ToR's uplink port), whose rates follow a script: ToR
   uplinks at 35%, 25%, 10% and 30%, then a shuffle makes tor2's uplink,
   the coolest, hot (92%) from second 20 to second 45;
2. a real Prometheus (``make prometheus`` installs it) scraping the exporter
   every second;
3. ``netheat serve`` reading Prometheus every 2 s through the port map,
   exactly as it would in production;
4. a watcher that, every 2 seconds, asks the service the questions a
   scheduler asks: ``GET /v1/hotspots``, ``POST /v1/place/task`` for a
   2 Gbps task with one candidate host per rack, and the Kubernetes
   extender's ``/scheduler/filter`` for the same four nodes; and prints one
   line per answer.

Before the shuffle the task goes under tor2 (the coolest); while tor2 is
hot the advisor places it under tor1 and the extender filters r2h0; when
the shuffle ends both return. The counters, scrapes and
answers are real; only the traffic is scripted.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from netheat.errors import InputError

GBPS10_BYTES = 1.25e9
"""10 Gbps in bytes per second (every link of two-tier-4x4.toml)."""

Rates = Callable[[float], dict[str, float]]
"""Seconds since start -> utilization per counter name (``tor<r>-tx``, ``r<r>h<i>-rx``...)."""


class TextExporter:
    """A Prometheus exporter on 127.0.0.1 (a free port): ``GET path`` answers ``text(path)``, 404 when empty.

    Subclasses set their state, then call ``super().__init__()``, which starts serving.
    """

    def __init__(self) -> None:
        ex = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = ex.text(self.path).encode()
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def text(self, path: str) -> str:
        """The exposition text of ``path`` ("" for an unknown path)."""
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def free_port() -> int:
    """A TCP port of 127.0.0.1 free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CounterExporter(TextExporter):
    """node_exporter (``/node``) and snmp_exporter (``/snmp``) text for two-tier-4x4.toml.

    Counters are integrated exactly from ``rates(t)`` (utilizations of 10 Gbps,
    piecewise constant between scrapes), so they only ever grow.
    """

    def __init__(self, rates: Rates) -> None:
        self.rates = rates
        self.t0 = time.time()
        self.last = 0.0
        self.bytes: dict[str, float] = {}
        self.lock = threading.Lock()
        super().__init__()

    def _advance(self) -> None:
        now = time.time() - self.t0
        dt = now - self.last
        for name, util in self.rates(self.last).items():
            self.bytes[name] = self.bytes.get(name, 0.0) + util * GBPS10_BYTES * dt
        self.last = now

    def text(self, path: str) -> str:
        with self.lock:
            self._advance()
            b = {k: int(v) for k, v in self.bytes.items()}
        lines: list[str] = []
        if path.startswith("/node"):
            for metric, d in (("transmit", "tx"), ("receive", "rx")):
                lines.append(f"# TYPE node_network_{metric}_bytes_total counter")
                for r in range(4):
                    for i in range(4):
                        labels = f'instance="r{r}h{i}:9100",device="eth0"'
                        lines.append(
                            f"node_network_{metric}_bytes_total{{{labels}}} {b.get(f'r{r}h{i}-{d}', 0)}"
                        )
        elif path.startswith("/snmp"):
            for metric, d in (("ifHCOutOctets", "tx"), ("ifHCInOctets", "rx")):
                lines.append(f"# TYPE {metric} counter")
                for r in range(4):
                    labels = f'instance="tor{r}",ifIndex="49",ifName="Ethernet48"'
                    lines.append(f"{metric}{{{labels}}} {b.get(f'tor{r}-{d}', 0)}")
            lines.append("# TYPE ifHighSpeed gauge")
            for r in range(4):
                lines.append(f'ifHighSpeed{{instance="tor{r}",ifIndex="49",ifName="Ethernet48"}} 10000')
        else:
            return ""
        return "\n".join(lines) + "\n"


def port_map() -> str:
    """The port map of everything :class:`CounterExporter` serves (docs/telemetry.md)."""
    parts = ['[prometheus]\ncapacity = "if-high-speed"\n']
    for r in range(4):
        parts.append(f'[[port]]\nlink = "tor{r}->core"\ninstance = "tor{r}"\nif-name = "Ethernet48"\n')
        for i in range(4):
            parts.append(f'[[port]]\nhost = "r{r}h{i}"\ninstance = "r{r}h{i}:9100"\ndevice = "eth0"\n')
    return "\n".join(parts)


HOT_FROM_S, HOT_UNTIL_S = 20.0, 45.0


def script(t: float) -> dict[str, float]:
    """The demo's traffic: tor2's uplink, the coolest, is hot between HOT_FROM_S and HOT_UNTIL_S."""
    hot = HOT_FROM_S <= t < HOT_UNTIL_S
    tor_tx = {0: 0.35, 1: 0.25, 2: 0.92 if hot else 0.10, 3: 0.30}
    out: dict[str, float] = {}
    for r in range(4):
        out[f"tor{r}-tx"] = tor_tx[r]
        out[f"tor{r}-rx"] = 0.2
        for i in range(4):
            # Each host sends a quarter of what leaves its rack, plus 5% inside it.
            out[f"r{r}h{i}-tx"] = tor_tx[r] / 4 + 0.05
            out[f"r{r}h{i}-rx"] = 0.1
    return out


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=2) as r:
        return json.loads(r.read())


def _ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as r:
        return int(r.status) == 200


def _post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=2) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def _process(cmd: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield p
        finally:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)


def _wait(what: str, check: Callable[[], bool], deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError, KeyError, urllib.error.URLError):
            if check():
                return
        time.sleep(0.5)
    raise InputError(f"demo-live: {what} did not come up within {deadline_s:g} s")


def _line(
    t: float, links: dict[str, Any], hot: dict[str, Any], place: dict[str, Any], filt: dict[str, Any]
) -> str:
    above = {tor["tor"] for tor in hot["tors"]}
    tors = []
    for link in links["links"]:  # one uplink per ToR in two-tier-4x4.toml
        u = link["utilization"]
        if u is None:  # not measured yet: the advisor counts it as fully loaded
            tors.append(f"{link['tor']} {'?':<10}  ?%    ")
            continue
        pct = round(100 * u)  # the bar is drawn from the printed percentage
        bar = "#" * min(10, (pct + 5) // 10)
        flag = "HOT" if link["tor"] in above else ""
        tors.append(f"{link['tor']} {bar:<10}{pct:3d}% {flag:<3}")
    chosen = place.get("chosen")
    top = place["ranked"][0] if place.get("ranked") else {}
    failed = ",".join(sorted(filt.get("FailedNodes") or {})) or "-"
    stale = " (stale)" if place.get("stale") else ""
    return (
        f"t={t:4.0f}s  " + "  ".join(tors) + f" | 2 Gbps task -> {chosen} "
        f"({top.get('tor', '?')} {100 * top.get('projected_tor', 0):.0f}% projected){stale}"
        f" | extender filters: {failed}"
    )


def run(duration_s: float = 60.0, out: Any = sys.stdout) -> int:
    """Run the live demo (see the module docs); 0 on success."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise InputError("demo-live needs the `prometheus` binary: `make prometheus` installs it")
    root = Path(__file__).resolve().parent
    topo = root / "_bundled" / "examples" / "topologies" / "two-tier-4x4.toml"
    if not topo.exists():  # a checkout without the bundled symlinks
        topo = root.parents[1] / "examples" / "topologies" / "two-tier-4x4.toml"
    exporter = CounterExporter(script)
    with tempfile.TemporaryDirectory(prefix="netheat-demo-live-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "ports.toml").write_text(port_map())
        prom_port, serve_port = free_port(), free_port()
        (tmp / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n"
            + "".join(
                f"  - job_name: {job}\n    honor_labels: true\n    metrics_path: /{job}\n"
                f"    static_configs: [{{targets: ['127.0.0.1:{exporter.port}']}}]\n"
                for job in ("node", "snmp")
            )
        )
        prom = f"http://127.0.0.1:{prom_port}"
        serve = f"http://127.0.0.1:{serve_port}"
        prom_cmd = [
            binary,
            f"--config.file={tmp / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
            "--log.level=warn",
        ]
        serve_cmd = [
            sys.executable, "-m", "netheat.cli", "serve", "--topology", str(topo),
            "--prometheus", prom, "--map", str(tmp / "ports.toml"),
            "--port", str(serve_port), "--refresh", "2s", "--window", "10s", "--step", "2s",
        ]  # fmt: skip
        try:
            with _process(prom_cmd, tmp / "prometheus.log"), _process(serve_cmd, tmp / "serve.log"):
                print(
                    f"exporter 127.0.0.1:{exporter.port} -> Prometheus {prom} -> netheat serve {serve}",
                    file=out,
                )
                _wait("Prometheus", lambda: _ok(f"{prom}/-/ready"), 30)
                _wait("netheat serve", lambda: _ok(f"{serve}/healthz"), 60)
                _wait(
                    "telemetry of every ToR uplink",
                    lambda: all(x["utilization"] is not None for x in _get(f"{serve}/v1/links")["links"]),
                    60,
                )
                t0 = exporter.t0
                task = {"cores": 2, "demand_bps": 2e9, "candidates": ["r0h0", "r1h0", "r2h0", "r3h0"]}
                pod = {"metadata": {"name": "demo", "annotations": {"netheat.io/network-demand": "2Gbps"}}}
                args = {"Pod": pod, "NodeNames": ["r0h0", "r1h0", "r2h0", "r3h0"]}
                seen_hot = seen_steer = False
                while time.time() - t0 < duration_s:
                    hot = _get(f"{serve}/v1/hotspots")
                    links = _get(f"{serve}/v1/links")
                    place = _post(f"{serve}/v1/place/task", task)
                    filt = _post(f"{serve}/scheduler/filter", args)
                    print(_line(time.time() - t0, links, hot, place, filt), file=out, flush=True)
                    tor2_hot = any(t["tor"] == "tor2" for t in hot["tors"])
                    seen_hot |= tor2_hot
                    seen_steer |= (
                        tor2_hot
                        and place.get("chosen") != "r2h0"
                        and "r2h0" in (filt.get("FailedNodes") or {})
                    )
                    time.sleep(2.0)
        finally:
            exporter.close()
    if not (seen_hot and seen_steer):
        print("demo-live: the hotspot was not seen or not steered around; see the lines above", file=out)
        return 1
    print("tor2 became hot and the advisor steered the task and the extender around it.", file=out)
    return 0


if __name__ == "__main__":  # pragma: no cover - `python -m netheat.livedemo`
    sys.exit(run())
