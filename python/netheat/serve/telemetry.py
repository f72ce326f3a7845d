"""The telemetry behind ``netheat serve``: sources of link-rate snapshots and their refresher.

A *source* turns whatever the operator has into a :class:`Snapshot`, the
measured rate and capacity of each directed link it covers:

- :class:`PrometheusSource` ingests the last ``window`` of counters with
  :func:`netheat.telemetry.prometheus.ingest_prometheus` (same port map,
  same counter handling as ``netheat ingest prometheus``) and keeps each
  link's last window;
- :class:`LinksFileSource` reads a ``links`` table (Parquet, as netheat
  writes it) and keeps each link's last window, again whenever the file's
  modification time or size changes.

The :class:`Refresher` asks the source in a background thread every
``refresh`` seconds and hands each new snapshot to ``advisor.observe``. A
failed refresh keeps the advisor's previous snapshot and logs one warning
line (a failure repeating the previous one's message is logged again only
after :data:`REPEAT_LOG_S`; the ``/metrics`` counter counts every one), so
requests never wait for telemetry: they are answered from the snapshot in
hand, marked stale by the advisor once it is older than its stale-after.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat.errors import InputError, NetheatError
from netheat.serve.advisor import AdvisorLike

log = logging.getLogger("netheat.serve")

LINK_COLUMNS = ("link", "capacity_bps", "window_start_s", "window_end_s", "utilization")
"""Columns of a links table the service reads."""

REPEAT_LOG_S = 300.0
"""A refresh failure with the same message as the previous one is logged again only this much later."""


@dataclass(frozen=True)
class Snapshot:
    """Measured rate (and capacity in force) of each covered directed link at ``at_s`` (Unix seconds)."""

    at_s: float
    links: list[int]
    rates_bps: list[float]
    capacities_bps: list[float]


class TelemetrySource(Protocol):
    """Where snapshots come from."""

    @property
    def description(self) -> str:
        """What the source reads, for logs and ``/healthz`` (e.g. ``prometheus http://...``)."""
        ...

    def fetch(self, now_s: float) -> Snapshot | None:
        """A new snapshot, or None when nothing changed; raises on failure."""
        ...


def latest_windows(table: pa.Table, where: str) -> Snapshot:
    """Each link's last window of a ``links`` table: rate = utilization x capacity_bps.

    Rows with a missing or non-finite value, or no capacity, are skipped;
    the snapshot's time is the end of the latest window taken.
    """
    missing = [c for c in LINK_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(
            f"{where}: no column {', '.join(missing)} (a links table has {', '.join(LINK_COLUMNS)})"
        )
    t = table.select(list(LINK_COLUMNS)).drop_null()
    try:
        link = np.asarray(t.column("link").to_numpy(), dtype=np.int64)
        cols = {c: np.asarray(t.column(c).to_numpy(), dtype=np.float64) for c in LINK_COLUMNS[1:]}
    except (TypeError, ValueError, pa.ArrowException) as e:
        raise InputError(f"{where}: columns {', '.join(LINK_COLUMNS)} must be numbers: {e}") from None
    cap, start, end, util = (
        cols["capacity_bps"],
        cols["window_start_s"],
        cols["window_end_s"],
        cols["utilization"],
    )
    ok = np.isfinite(util) & np.isfinite(cap) & (cap > 0) & np.isfinite(start) & np.isfinite(end)
    rows = np.flatnonzero(ok)
    if rows.size == 0:
        raise InputError(f"{where}: no row with a finite utilization and a positive capacity")
    # Sort by (link, window start); the last row of each link's run is its latest window.
    order = rows[np.lexsort((start[rows], link[rows]))]
    by_link = link[order]
    last = np.ones(order.size, dtype=bool)
    last[:-1] = by_link[1:] != by_link[:-1]
    pick = order[last]
    return Snapshot(
        at_s=float(end[pick].max()),
        links=[int(x) for x in link[pick]],
        rates_bps=(util[pick] * cap[pick]).tolist(),
        capacities_bps=cap[pick].tolist(),
    )


class LinksFileSource:
    """A ``links`` Parquet file, read again whenever its modification time or size changes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._seen: tuple[int, int] | None = None

    @property
    def description(self) -> str:
        return f"links file {self.path}"

    def fetch(self, now_s: float) -> Snapshot | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise InputError(f"--links {self.path}: no such file") from None
        key = (st.st_mtime_ns, st.st_size)
        if key == self._seen:
            return None
        try:
            names = pq.read_schema(self.path).names
            table = pq.read_table(self.path, columns=[c for c in LINK_COLUMNS if c in names])
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"--links {self.path}: not a readable Parquet file: {e}") from None
        snap = latest_windows(table, f"--links {self.path}")
        # Only now: a file caught half-written is read again at the next refresh.
        self._seen = key
        return snap


def _ingest_latest(
    url: str, topology: str, port_map: str, window_s: float, step_s: float, timeout_s: float, now_s: float
) -> tuple[Snapshot, list[str]]:
    """One Prometheus ingestion's latest windows, and its warnings (runs in the worker process)."""
    from netheat.telemetry.prometheus import ingest_prometheus

    res = ingest_prometheus(
        url,
        topology,
        port_map,
        since=now_s - window_s,
        until=now_s,
        step_s=step_s,
        timeout_s=timeout_s,
        now=now_s,
    )
    warnings = [n.removeprefix("warning: ") for n in res.notes if n.startswith("warning: ")]
    return latest_windows(res.table, f"Prometheus at {url}"), warnings


class PrometheusSource:
    """The last ``window_s`` of the port map's counters from Prometheus, in windows of ``step_s``.

    With ``isolate`` (the default) each ingestion runs in a worker process
    of its own (started at the first refresh, kept, started again if it
    dies): parsing thousands of series is CPU work that, in the serving
    process, would hold the GIL against the requests.
    """

    def __init__(
        self,
        url: str,
        topology: str | os.PathLike[str],
        port_map: str | os.PathLike[str],
        window_s: float,
        step_s: float,
        timeout_s: float,
        isolate: bool = True,
    ) -> None:
        self.url = url
        self.topology = os.fspath(topology)
        self.port_map = os.fspath(port_map)
        self.window_s = window_s
        self.step_s = step_s
        self.timeout_s = timeout_s
        self.isolate = isolate
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False
        self._noted: set[str] = set()

    @property
    def description(self) -> str:
        return f"prometheus {self.url}"

    def check(self) -> None:
        """Startup checks, without asking Prometheus anything: the URL's form, the datacenter and the map."""
        from netheat._netheat import Topology
        from netheat.telemetry.portmap import load_port_map
        from netheat.telemetry.prometheus import PrometheusClient

        PrometheusClient(self.url)
        load_port_map(self.port_map, Topology.load(self.topology), self.topology)

    def fetch(self, now_s: float) -> Snapshot:
        args = (self.url, self.topology, self.port_map, self.window_s, self.step_s, self.timeout_s, now_s)
        if not self.isolate:
            snap, warnings = _ingest_latest(*args)
        else:
            if self._closed:
                raise InputError("the service is stopping")
            if self._pool is None:
                # spawn: a fresh interpreter, not a fork of this threaded process.
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn")
                )
            try:
                snap, warnings = self._pool.submit(_ingest_latest, *args).result()
            except BrokenProcessPool:
                self._pool = None
                raise InputError(
                    "the telemetry worker process died; a new one starts at the next refresh"
                ) from None
        # Ingestion warnings (unmapped series, links without series, widened windows...) once each.
        for w in warnings:
            if w not in self._noted:
                self._noted.add(w)
                log.warning("telemetry: %s", w)
        return snap

    def close(self, wait: bool = True) -> None:
        """Stop the worker process; with ``wait=False`` an ingestion under way is left to finish alone."""
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None


def error_line(e: BaseException) -> str:
    """One line describing ``e`` (netheat's own messages as they are, others with their type)."""
    text = str(e) if isinstance(e, NetheatError) else f"{type(e).__name__}: {e}"
    return " ".join(text.split())


class Refresher:
    """Feeds the advisor from a source, in a background thread or one call at a time."""

    def __init__(
        self,
        advisor: AdvisorLike,
        source: TelemetrySource,
        interval_s: float,
        clock: Callable[[], float] = time.time,
        on_result: Callable[[bool], Any] | None = None,
    ) -> None:
        self.advisor = advisor
        self.source = source
        self.interval_s = interval_s
        self.clock = clock
        self.on_result = on_result
        self.refreshes = 0
        """Successful refreshes (including those where the source had nothing new)."""
        self.failures = 0
        self.last_error: str | None = None
        """Message of the latest failure, None once a refresh succeeds again."""
        self._failing_since: int | None = None
        self._last_logged: tuple[str, float] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh_once(self) -> bool:
        """Fetch and observe one snapshot; True on success. Never raises (failures are logged)."""
        with self._lock:
            now = self.clock()
            try:
                snap = self.source.fetch(now)
                if snap is not None:
                    self.advisor.observe(snap.at_s, snap.links, snap.rates_bps, snap.capacities_bps)
            except Exception as e:  # any failure leaves the previous snapshot in force
                self._failed(error_line(e))
                ok = False
            else:
                if self.failures and self._failing_since is not None:
                    n = self.failures - self._failing_since
                    log.info(
                        "telemetry refresh from %s works again after %d failure(s)",
                        self.source.description,
                        n,
                    )
                self._failing_since = None
                self.last_error = None
                self._last_logged = None
                self.refreshes += 1
                ok = True
        if self.on_result is not None:
            self.on_result(ok)
        return ok

    def _failed(self, message: str) -> None:
        if self._failing_since is None:
            self._failing_since = self.failures
        self.failures += 1
        self.last_error = message
        at = time.monotonic()
        last = self._last_logged
        if last is None or last[0] != message or at - last[1] >= REPEAT_LOG_S:
            self._last_logged = (message, at)
            log.warning(
                "telemetry refresh failed, keeping the previous snapshot: %s (%s)",
                message,
                self.source.description,
            )

    def start(self) -> None:
        """Refresh now and then every ``interval_s`` in a daemon thread, until :meth:`stop`."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="netheat-telemetry", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            self.refresh_once()
            # A fixed schedule: a slow refresh delays the next one only if it overran the interval.
            next_at = max(next_at + self.interval_s, time.monotonic())
            self._stop.wait(next_at - time.monotonic())

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the thread (a refresh under way finishes first, up to ``timeout_s``), then the source."""
        self._stop.set()
        busy = False
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
            busy = self._thread.is_alive()
            self._thread = None
        close = getattr(self.source, "close", None)
        if close is not None:
            close(wait=not busy)
