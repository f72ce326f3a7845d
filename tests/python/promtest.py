"""A real Prometheus scraping a test exporter on 127.0.0.1, for end-to-end tests.

Shared by ``test_ingest_prometheus.py`` and ``test_serve.py``; the
``prometheus`` fixture of ``conftest.py`` runs :func:`run_prometheus`.

The exporter serves node_exporter (``/node``) and snmp_exporter (``/snmp``)
style counters for examples/topologies/two-tier-4x4.toml growing at set
utilizations of 10 Gbps: every host NIC and every ToR's uplink port
(``Ethernet48``, ``ifIndex`` 49, ``ifHighSpeed`` 10000). Prometheus scrapes
both every second. Everything listens on 127.0.0.1 only, and every wait is
bounded.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netheat.livedemo import TextExporter, free_port

GBPS10 = 1.25e9
"""10 Gbps in bytes per second."""
TOR_TX = {0: 0.30, 1: 0.40, 2: 0.90, 3: 0.20}
"""Utilization of each ToR's uplink (tor -> core) at the test exporter: tor2 is the one hot link."""
TOR_RX = {0: 0.25, 1: 0.35, 2: 0.45, 3: 0.15}
"""Utilization of core -> tor."""


def host_tx(r: int, i: int) -> float:
    return 0.05 + 0.1 * i + 0.02 * r


def host_rx(r: int, i: int) -> float:
    return 0.6 - 0.1 * i


class Exporter(TextExporter):
    """node_exporter (``/node``) and snmp_exporter (``/snmp``) text with counters growing at set rates."""

    def __init__(
        self, tor_tx: dict[int, float] | None = None, tor_rx: dict[int, float] | None = None
    ) -> None:
        self.t0 = time.time()
        self.tor_tx = dict(TOR_TX if tor_tx is None else tor_tx)
        self.tor_rx = dict(TOR_RX if tor_rx is None else tor_rx)
        super().__init__()

    def counter(self, util: float, base: float) -> int:
        return int(base + util * GBPS10 * (time.time() - self.t0))

    def text(self, path: str) -> str:
        lines: list[str] = []
        if path.startswith("/node"):
            lines.append("# TYPE node_network_transmit_bytes_total counter")
            for r in range(4):
                for i in range(4):
                    inst = f"r{r}h{i}:9100"
                    v = self.counter(host_tx(r, i), 1e9 * (r + 1))
                    lines.append(f'node_network_transmit_bytes_total{{instance="{inst}",device="eth0"}} {v}')
                lines.append(f'node_network_transmit_bytes_total{{instance="r{r}h0:9100",device="lo"}} 42')
            lines.append("# TYPE node_network_receive_bytes_total counter")
            for r in range(4):
                for i in range(4):
                    v = self.counter(host_rx(r, i), 5e8)
                    labels = f'instance="r{r}h{i}:9100",device="eth0"'
                    lines.append(f"node_network_receive_bytes_total{{{labels}}} {v}")
        elif path.startswith("/snmp"):
            for name, rates in (("ifHCOutOctets", self.tor_tx), ("ifHCInOctets", self.tor_rx)):
                lines.append(f"# TYPE {name} counter")
                for r, u in rates.items():
                    v = self.counter(u, 7e11)
                    lines.append(f'{name}{{instance="tor{r}",ifIndex="49",ifName="Ethernet48"}} {v}')
            lines.append('ifHCOutOctets{instance="tor0",ifIndex="1",ifName="Ethernet1"} 1000')
            lines.append("# TYPE ifHighSpeed gauge")
            for r in range(4):
                lines.append(f'ifHighSpeed{{instance="tor{r}",ifIndex="49",ifName="Ethernet48"}} 10000')
        else:
            return ""
        return "\n".join(lines) + "\n"


E2E_MAP_HEAD = """\
# Test port map: every ToR uplink port (snmp_exporter) and every host NIC (node_exporter).
[prometheus]
capacity = "if-high-speed"
"""


def e2e_map() -> str:
    """The port map of everything the exporter serves."""
    parts = [E2E_MAP_HEAD]
    for r in range(4):
        parts.append(f'[[port]]\nlink = "tor{r}->core"\ninstance = "tor{r}"\nif-name = "Ethernet48"\n')
        for i in range(4):
            parts.append(f'[[port]]\nhost = "r{r}h{i}"\ninstance = "r{r}h{i}:9100"\ndevice = "eth0"\n')
    return "\n".join(parts)


def http_json(url: str, timeout_s: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout_s) as r:
        return json.loads(r.read())


@contextlib.contextmanager
def run_prometheus(tmp_path: Path, exporter: Exporter | None = None) -> Iterator[tuple[str, Exporter]]:
    """A real Prometheus scraping a test exporter every second; both stopped afterwards, whatever happens.

    Skips the test if the ``prometheus`` binary is absent.
    """
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip(
            "the `prometheus` binary is absent (Debian package `prometheus`; `make prometheus` installs it)"
        )
    exporter = exporter or Exporter()
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        f"""\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: node
    honor_labels: true
    metrics_path: /node
    static_configs: [{{targets: ["127.0.0.1:{exporter.port}"]}}]
  - job_name: snmp
    honor_labels: true
    metrics_path: /snmp
    static_configs: [{{targets: ["127.0.0.1:{exporter.port}"]}}]
"""
    )
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield f"http://127.0.0.1:{port}", exporter
    finally:
        stop_process(proc)
        log.close()
        exporter.close()


def stop_process(proc: subprocess.Popen[Any], timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout_s``."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout_s)


def wait_for_scrapes(url: str, n: int, deadline_s: float, instance: str = "tor2") -> None:
    """Until Prometheus holds ``n`` samples of one ToR's uplink port (or fail at the deadline)."""
    port = f'ifHCOutOctets{{instance="{instance}",ifName="Ethernet48"}}'
    q = urllib.parse.urlencode({"query": f"count_over_time({port}[5m])"})
    end = time.monotonic() + deadline_s
    last: Any = None
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError):
            last = http_json(f"{url}/api/v1/query?{q}")
            result = last["data"]["result"]
            if result and float(result[0]["value"][1]) >= n:
                return
        time.sleep(0.5)
    pytest.fail(f"Prometheus did not collect {n} scrapes in {deadline_s:g} s (last answer: {last})")
