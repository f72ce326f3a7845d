"""Link telemetry from Prometheus: per-port byte counters to netheat's ``links`` table.

``netheat ingest prometheus`` (and ``netheat analyze --prometheus``) read
host NIC counters from node_exporter (``node_network_transmit_bytes_total``,
``node_network_receive_bytes_total``) and switch-port counters from
snmp_exporter's IF-MIB module (``ifHCOutOctets``, ``ifHCInOctets``, and
``ifHighSpeed`` for capacities), tie them to the directed links of a
datacenter file through a port map (:mod:`netheat.telemetry.portmap`) and
write one row per directed link per window: ``link, layer, direction,
src_node, dst_node, capacity_bps, window_start_s, window_end_s,
utilization``, the table ``netheat simulate`` writes and ``netheat
analyze`` reads. ``utilization`` is the bits carried in the window over
``capacity_bps x`` the window's covered seconds (the whole window unless a
gap or the series' start or end falls in it).

**How samples are read.** Raw samples, not Prometheus' evaluated steps:
each query is an instant query (``/api/v1/query``) of a range selector,
``metric{labels}[<span>ms]`` at the end of a chunk of the time range, which
returns every sample in the chunk with its own timestamp. ``query_range``
was not used because it evaluates the counter at each step by taking the
latest sample within the 5-minute lookback: a missed scrape then looks like
an idle link followed by a burst, the real sample times (and so the scrape
interval) are lost, and a reset between two steps can hide. From raw
samples netheat computes every increment itself (see
:mod:`netheat.telemetry.counters`), so resets and 2^64 wraps are handled
exactly and gaps are seen as gaps.

**Chunks.** Prometheus refuses a ``query_range`` of more than 11,000 points
per series; netheat keeps every answer within the same bound
(``max_points``): a chunk spans 95% of ``(max_points - 1) x`` the shortest
scrape interval seen so far (1 s before any is seen), so no series returns
more than ``max_points`` samples. Samples on a chunk boundary may come twice
(Prometheus 2 selects ``[t - span, t]``, 3 ``(t - span, t]``) and are
de-duplicated.

**Windows.** Windows are ``step`` long and aligned to multiples of it
(epoch seconds); only whole windows within ``[since, until]`` are written.
Samples from 15 min before ``since`` (or the maximum gap, if longer) are
read so that the first window is covered. If ``step`` is shorter than the
scrape interval (the lower quartile of the sample spacings; the slowest
series decides), the windows are *widened* to the smallest multiple of
``step`` that is at least the scrape interval, with a warning: a shorter
window would hold no sample of its own, only bytes spread from its
neighbours' samples, i.e. invented detail. The maximum gap is, unless
given, 2.5 scrape intervals of each series (one missed scrape is bridged,
two are not). A window needs at least half of it covered to have a row.

**What is reported** (``notes``, printed as warnings, and stored in the
Parquet metadata as JSON under ``netheat_notes``): ports the map names that
Prometheus has no series for, series Prometheus has that the map does not
cover (minus ``ignore-devices``/``ignore-interfaces``), directed links of the
datacenter without series (their rows are absent, not zero), resets, wraps,
dropped NaN/stale/negative samples, gaps, widened windows, and
utilizations above 1 (a capacity in the datacenter file below the port's).

Errors (exit 2, no output written): Prometheus unreachable or timing out,
an HTTP error status (with Prometheus' ``errorType``/``error``), an answer
that is not JSON or not a Prometheus answer, a port whose labels match two
series (say, scraped by two jobs), no rows at all.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from netheat import __version__
from netheat._netheat import Topology, parse_duration
from netheat.errors import InputError
from netheat.output import atomic_write, output_file
from netheat.telemetry.counters import (
    CounterStats,
    FloatArray,
    clean,
    increments,
    scrape_interval,
    window_bytes,
)
from netheat.telemetry.portmap import SNMP_SPEED, Port, PortMap, load_port_map

MAX_POINTS = 11_000
"""Prometheus' limit of points per series in one ``query_range``; netheat keeps each answer within it."""

DEFAULT_TIMEOUT_S = 30.0
"""Timeout of one HTTP request to Prometheus."""

DEFAULT_LEAD_S = 900.0
"""Samples are read from this long before ``since`` (or the max gap, if longer) to cover the first window."""

MAX_GAP_INTERVALS = 2.5
"""Default maximum gap: this many scrape intervals of the series (one missed scrape is bridged)."""

MIN_COVERAGE = 0.5
"""Fraction of a window that usable sample intervals must cover for the window to have a row."""

STEP_TOLERANCE = 0.05
"""A step up to 5% shorter than the scrape interval is not widened (scrape timing jitter)."""

MIN_SCRAPE_S = 1.0
"""Scrape interval assumed for chunk sizes until the samples show one."""

MAX_LISTED = 5
"""Items named in one note before ``...``."""

LAYERS = ["host-tor", "tor-agg", "agg-spine", "spine-border"]
DIRECTIONS = ["up", "down"]


# ---------------------------------------------------------------------------------------------
# Times


def parse_time(text: str, now: float, flag: str) -> float:
    """Unix seconds from ``now``, a number of Unix seconds, an ISO 8601 date-time or a duration ago."""
    t = text.strip()
    if t == "now":
        return now
    try:
        v = float(t)
    except ValueError:
        pass
    else:
        if not math.isfinite(v) or v < 0:
            raise InputError(f"{flag} {text!r}: not a valid Unix time")
        return v
    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        pass
    else:
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()
    try:
        return now - float(parse_duration(t))
    except Exception:
        raise InputError(
            f"{flag} {text!r}: expected `now`, a duration before now (6h, 30min), Unix seconds or an "
            "ISO 8601 date-time (2024-05-01T12:00:00Z)"
        ) from None


def parse_seconds(text: str, flag: str) -> float:
    """A positive duration in seconds from ``"30s"``/``"5min"`` (a plain number is seconds)."""
    try:
        v = float(text)
    except ValueError:
        try:
            v = float(parse_duration(text))
        except Exception as e:
            raise InputError(f"{flag} {text!r}: {e}") from None
    if not (math.isfinite(v) and v > 0):
        raise InputError(f"{flag} must be a positive duration, got {text!r}")
    return v


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------------------------
# The HTTP API


@dataclass
class Series:
    """Raw samples of one series: its labels, timestamps (s) and values."""

    labels: dict[str, str]
    ts: FloatArray
    vs: FloatArray


class PrometheusClient:
    """Instant queries of range selectors over Prometheus' HTTP API (``urllib``, with a timeout)."""

    def __init__(self, url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        u = urllib.parse.urlsplit(url.strip())
        if u.scheme not in ("http", "https") or not u.netloc:
            raise InputError(f"--url {url!r}: expected an http:// or https:// URL of a Prometheus server")
        self.url = urllib.parse.urlunsplit((u.scheme, u.netloc, u.path.rstrip("/"), "", ""))
        self.timeout_s = timeout_s
        self.requests = 0
        self.warnings: list[str] = []

    def _get(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        full = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        shown = f"{self.url}{path} (query {params.get('query', '')!r})"
        req = urllib.request.Request(
            full, headers={"Accept": "application/json", "User-Agent": f"netheat/{__version__}"}
        )
        self.requests += 1
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = resp.read()
                status = resp.status
        except urllib.error.HTTPError as e:
            raise InputError(_http_error(shown, e.code, e.read() if e.fp is not None else b"")) from None
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, socket.timeout | TimeoutError):
                raise InputError(
                    f"Prometheus at {self.url} did not answer within {self.timeout_s:g} s ({shown})"
                ) from None
            raise InputError(
                f"cannot reach Prometheus at {self.url}: {getattr(reason, 'strerror', None) or reason}"
            ) from None
        except TimeoutError:
            raise InputError(
                f"Prometheus at {self.url} did not answer within {self.timeout_s:g} s ({shown})"
            ) from None
        except (OSError, ValueError) as e:  # connection reset mid-answer, bad status line...
            raise InputError(f"cannot read Prometheus' answer from {self.url}: {e}") from None
        doc = _json(shown, body)
        if doc.get("status") != "success":
            raise InputError(
                f"Prometheus at {shown} answered HTTP {status} with status {doc.get('status')!r}: "
                f"{doc.get('errorType', '?')}: {doc.get('error', 'no error message')}"
            )
        for w in doc.get("warnings") or []:
            self.warnings.append(str(w))
        return doc

    def range_selector(self, selector: str, at_ms: int, span_ms: int) -> list[Series]:
        """Raw samples of ``selector`` in ``[at - span, at]`` (in ms), one :class:`Series` per label set."""
        query = f"{selector}[{max(1, span_ms)}ms]"
        at = f"{at_ms // 1000}.{at_ms % 1000:03d}"
        doc = self._get("/api/v1/query", {"query": query, "time": at})
        return _matrix(f"{self.url}/api/v1/query (query {query!r})", doc)


def _json(shown: str, body: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        head = body[:80].decode("utf-8", "replace")
        raise InputError(
            f"Prometheus at {shown}: the answer is not JSON ({e}; it starts {head!r}); is --url a Prometheus "
            "server?"
        ) from None
    if not isinstance(doc, dict):
        raise InputError(
            f"Prometheus at {shown}: the answer is JSON but not a Prometheus API answer (an object)"
        )
    return doc


def _http_error(shown: str, code: int, body: bytes) -> str:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if isinstance(doc, dict) and "error" in doc:
        return f"Prometheus at {shown} answered HTTP {code}: {doc.get('errorType', 'error')}: {doc['error']}"
    head = body[:200].decode("utf-8", "replace").strip()
    return f"Prometheus at {shown} answered HTTP {code}" + (f": {head}" if head else "")


def _matrix(shown: str, doc: dict[str, Any]) -> list[Series]:
    data = doc.get("data")
    if (
        not isinstance(data, dict)
        or data.get("resultType") != "matrix"
        or not isinstance(data.get("result"), list)
    ):
        kind = data.get("resultType") if isinstance(data, dict) else None
        raise InputError(f"Prometheus at {shown}: expected a matrix of samples, got resultType {kind!r}")
    out = []
    for s in data["result"]:
        if not isinstance(s, dict) or not isinstance(s.get("metric"), dict):
            raise InputError(f"Prometheus at {shown}: a result without its `metric` labels")
        values = s.get("values", [])
        if not isinstance(values, list):
            raise InputError(f"Prometheus at {shown}: `values` of {s['metric']} is not a list")
        try:
            ts = np.fromiter((float(p[0]) for p in values), dtype=np.float64, count=len(values))
            # Values are strings: "1234", "NaN", "+Inf" (float() reads them all).
            vs = np.fromiter((float(p[1]) for p in values), dtype=np.float64, count=len(values))
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise InputError(
                f'Prometheus at {shown}: a sample of {s["metric"]} is not [time, "value"]: {e}'
            ) from None
        out.append(Series(labels={str(k): str(v) for k, v in s["metric"].items()}, ts=ts, vs=vs))
    return out


def _selector(metric: str, labels: dict[str, str]) -> str:
    if not labels:
        return metric
    inner = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
    return f"{metric}{{{inner}}}"


def fetch(
    client: PrometheusClient, selector: str, start: float, end: float, max_points: int = MAX_POINTS
) -> tuple[list[Series], int]:
    """Every raw sample of ``selector`` in ``[start, end]``, in chunks (module docs), and the chunk count."""
    if max_points < 2:
        raise InputError(f"--max-points must be at least 2, got {max_points}")
    parts: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list[FloatArray], list[FloatArray]]] = {}
    interval = MIN_SCRAPE_S
    shortest: float | None = None
    # Integer milliseconds (Prometheus' resolution), so that chunks tile the range exactly.
    t = math.floor(start * 1000)
    end_ms = math.ceil(end * 1000)
    chunks = 0
    while t < end_ms:
        # 5% short of max_points scrape intervals, so that scrape-time jitter cannot add a sample.
        span = max(1, min(math.floor((max_points - 1) * interval * 950), end_ms - t))
        for s in client.range_selector(selector, t + span, span):
            key = tuple(sorted(s.labels.items()))
            entry = parts.setdefault(key, (s.labels, [], []))
            entry[1].append(s.ts)
            entry[2].append(s.vs)
        chunks += 1
        t += span
        # The shortest scrape interval of any series so far (with its samples of the chunk before).
        for _labels, tss, _values in parts.values():
            iv = scrape_interval(np.unique(np.concatenate(tss[-2:])))
            if iv is not None and iv > 0:
                shortest = iv if shortest is None else min(shortest, iv)
        if shortest is not None:
            interval = max(shortest, 1e-3)
    series = [Series(labels, np.concatenate(ts), np.concatenate(vs)) for labels, ts, vs in parts.values()]
    return series, chunks


# ---------------------------------------------------------------------------------------------
# Ingestion


@dataclass
class IngestResult:
    """The ``links`` table built from Prometheus, with what was noticed on the way.

    ``notes`` start with ``warning: `` when something is missing or was
    changed (the CLI prints those on stderr); ``stats`` are counts and
    settings, stored with the notes in the Parquet metadata.
    """

    table: pa.Table
    notes: list[str]
    stats: dict[str, Any]
    metadata: dict[str, str] = field(default_factory=dict)

    def write(self, path: str | os.PathLike[str], force: bool = False, flag: str = "--out") -> Path:
        """Write the table as Parquet under the output rule (``output_file`` + ``atomic_write``)."""
        target = output_file(path, force=force, flag=flag)
        return self.write_to(target)

    def write_to(self, target: Path) -> Path:
        """Write the table to an already checked path, atomically."""
        meta = {k.encode(): v.encode() for k, v in self.metadata.items()}
        table = self.table.replace_schema_metadata(meta)
        return atomic_write(target, lambda tmp: pq.write_table(table, tmp))


@dataclass
class _Counter:
    port: Port
    direction: str
    link: int
    series: Series


def _warn(notes: list[str], text: str) -> None:
    notes.append(f"warning: {text}")


def _listed(items: list[str]) -> str:
    head = ", ".join(items[:MAX_LISTED])
    return head + (f", ... ({len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else "")


def _labels_text(labels: dict[str, str]) -> str:
    name = labels.get("__name__", "")
    inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{inner}}}"


def ingest_prometheus(
    url: str,
    topology: str | os.PathLike[str],
    port_map: str | os.PathLike[str],
    since: float,
    until: float,
    step_s: float,
    max_gap_s: float | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_points: int = MAX_POINTS,
    now: float | None = None,
) -> IngestResult:
    """Read the map's counters from Prometheus at ``url`` and build the ``links`` table (module docs).

    ``since``/``until`` are Unix seconds, ``step_s`` the window;
    ``max_gap_s`` the longest interval between two samples that is bridged
    (default: 2.5 scrape intervals of each series). Raises
    :class:`~netheat.errors.InputError` or ``ConfigError`` (exit 2) for
    unusable input, an unreachable or failing Prometheus, or no rows.
    """
    now = time.time() if now is None else now
    if not step_s > 0:
        raise InputError(f"--step must be positive, got {step_s}")
    if not until > since:
        raise InputError(f"--since ({_iso(since)}) must be before --until ({_iso(until)})")
    if max_gap_s is not None and not max_gap_s > 0:
        raise InputError(f"--max-gap must be positive, got {max_gap_s}")
    topo = Topology.load(topology)
    pm = load_port_map(os.fspath(port_map), topo, os.fspath(topology))
    client = PrometheusClient(url, timeout_s)
    notes: list[str] = []

    lead = max(DEFAULT_LEAD_S, max_gap_s or 0.0)
    fetch_start = since - lead
    fetch_end = max(until, min(until + lead, now))
    fetched, wanted, chunks = _fetch_all(client, pm, fetch_start, fetch_end, max_points)
    counters = _match(pm, fetched, wanted, notes, f"{_iso(fetch_start)} and {_iso(fetch_end)}")

    # The scrape interval, and windows no shorter than it.
    all_stats = CounterStats()
    cleaned = [clean(c.series.ts, c.series.vs, all_stats) for c in counters]
    intervals = [(iv, c) for (ts, _), c in zip(cleaned, counters, strict=True) if (iv := scrape_interval(ts))]
    step = step_s
    scrape = max((iv for iv, _ in intervals), default=None)
    if scrape is not None and step * (1 + STEP_TOLERANCE) < scrape:
        step = math.ceil(scrape / (step * (1 + STEP_TOLERANCE))) * step_s
        slowest = max(intervals, key=lambda x: x[0])[1]
        _warn(
            notes,
            f"--step {step_s:g} s is shorter than the scrape interval ({scrape:g} s, e.g. "
            f"{_labels_text(slowest.series.labels)}); windows widened to {step:g} s, since a shorter "
            "window holds no sample of its own and its bytes would only be spread from neighbouring samples",
        )
    t0 = math.ceil(since / step - 1e-9) * step
    t_end = math.floor(until / step + 1e-9) * step
    n = round((t_end - t0) / step)
    if n <= 0:
        raise InputError(
            f"no whole {step:g} s window between --since {_iso(since)} and --until {_iso(until)}; "
            "give a longer range or a shorter --step"
        )
    if scrape is not None:
        notes.append(f"scrape interval {scrape:g} s (from the sample spacing of the slowest series)")

    # Capacities and per-window utilization of each measured link.
    links = topo.links()
    names: list[str] = list(topo.nodes()["name"])
    nominal = np.asarray(links["capacity_bps"], dtype=np.float64)
    speeds = {_labels_key(s.labels): s for s in fetched.get(SNMP_SPEED, [])}
    edges_end = t0 + step * np.arange(1, n + 1, dtype=np.float64)
    per_link: dict[int, tuple[FloatArray, FloatArray]] = {}
    fallback: list[str] = []
    partial = 0
    gap_windows = 0
    for (ts, vs), c in zip(cleaned, counters, strict=True):
        cap_w = np.full(n, nominal[c.link])
        rate: FloatArray | float = nominal[c.link] / 8.0
        if c.port.capacity == "if-high-speed":
            sp = _speed_series(c, speeds)
            if sp is None:
                fallback.append(f"{c.port.key} ({c.port.describe()})")
            else:
                cap_w = _step_lookup(sp, edges_end, nominal[c.link])
                if len(ts) > 1:
                    rate = _step_lookup(sp, ts[1:], nominal[c.link]) / 8.0
        st = CounterStats()
        inc = increments(ts, vs, rate, st)
        gap = max_gap_s if max_gap_s is not None else MAX_GAP_INTERVALS * (scrape_interval(ts) or step)
        b, cov = window_bytes(ts, inc, gap, t0, step, n, st)
        all_stats.resets += st.resets
        all_stats.wraps += st.wraps
        all_stats.gaps += st.gaps
        all_stats.gap_seconds += st.gap_seconds
        ok = (cov >= MIN_COVERAGE * step * (1 - 1e-9)) & (cap_w > 0)
        partial += int((ok & (cov < step * (1 - 1e-6))).sum())
        if st.gaps and len(ts):
            inside = (edges_end > ts[0]) & (edges_end - step < ts[-1])
            gap_windows += int((inside & ~ok).sum())
        util = np.full(n, np.nan)
        util[ok] = b[ok] * 8.0 / (cap_w[ok] * cov[ok])
        per_link[c.link] = (util, cap_w)
    if fallback:
        _warn(
            notes,
            f'{len(fallback)} port(s) with capacity = "if-high-speed" have no usable {SNMP_SPEED} '
            f"series (missing or 0); the datacenter's capacity is used for them: {_listed(fallback)}",
        )

    table = _table(per_link, links, names, t0, step, n)
    if table.num_rows == 0:
        why = "; ".join(x for x in notes if x.startswith("warning: ")) or "the series have too few samples"
        raise InputError(f"no link has a usable window between {_iso(t0)} and {_iso(t_end)}: {why}")

    def link_names(ids: list[int]) -> list[str]:
        return [f"{names[links['src'][i]]}->{names[links['dst'][i]]}" for i in ids]

    empty = [i for i, (util, _) in sorted(per_link.items()) if not np.isfinite(util).any()]
    if empty:
        _warn(
            notes,
            f"{len(empty)} directed link(s) have a series but no window with enough samples (at least "
            f"{MIN_COVERAGE:.0%} of a window between samples at most the max gap apart): "
            f"{_listed(link_names(empty))}",
        )
    no_series = [i for i in range(len(nominal)) if i not in per_link]
    if no_series:
        by_layer: dict[str, int] = {}
        for i in no_series:
            by_layer[links["layer"][i]] = by_layer.get(links["layer"][i], 0) + 1
        layers = ", ".join(f"{k} {v}" for k, v in sorted(by_layer.items()))
        _warn(
            notes,
            f"{len(no_series)} of {len(nominal)} directed links of {os.fspath(topology)} have no series "
            f"({layers}); their rows are absent, not zero: {_listed(link_names(no_series))}",
        )
    _counter_notes(notes, all_stats, max_gap_s, gap_windows, partial)
    u = table.column("utilization").to_numpy()
    over = int((u > 1.0).sum())
    if over:
        at = int(np.argmax(u))
        worst = table.slice(at, 1).to_pylist()[0]
        _warn(
            notes,
            f"{over} link-window(s) above 100% utilization (max {u[at]:.3f} on {worst['src_node']}->"
            f"{worst['dst_node']}): is the capacity in the datacenter file below the port speed? "
            "`netheat analyze` rejects utilizations above 1.5",
        )
    for w in dict.fromkeys(client.warnings):  # once each, though every chunk may repeat them
        _warn(notes, f"Prometheus: {w}")

    stats: dict[str, Any] = {
        "source": "prometheus",
        "prometheus_url": client.url,
        "since_s": since,
        "until_s": until,
        "window_start_s": t0,
        "window_end_s": t_end,
        "step_s": step,
        "step_requested_s": step_s,
        "windows": n,
        "scrape_interval_s": scrape,
        "max_gap_s": max_gap_s,
        "max_points": max_points,
        "queries": client.requests,
        "chunks": chunks,
        "ports": len(pm.ports),
        "counters": len(counters),
        "directed_links": len(per_link) - len(empty),
        "rows": table.num_rows,
        "samples": all_stats.samples,
        "resets": all_stats.resets,
        "wraps": all_stats.wraps,
        "gaps": all_stats.gaps,
        "dropped_nonfinite": all_stats.dropped_nonfinite,
        "dropped_negative": all_stats.dropped_negative,
        "topology": os.fspath(topology),
        "port_map": os.fspath(port_map),
    }
    metadata = {
        "netheat_version": __version__,
        "netheat_source": "prometheus",
        "netheat_notes": json.dumps(notes),
        "netheat_ingest": json.dumps(stats),
    }
    return IngestResult(table=table, notes=notes, stats=stats, metadata=metadata)


def _fetch_all(
    client: PrometheusClient, pm: PortMap, start: float, end: float, max_points: int
) -> tuple[dict[str, list[Series]], dict[str, str], int]:
    """The series of every metric the map uses (``metric -> series``), each metric's port kind, chunks."""
    wanted: dict[str, str] = {}
    for p in pm.ports:
        for d in p.directions:
            wanted[p.metric(d)] = p.kind
    if any(p.kind == "snmp" and p.capacity == "if-high-speed" for p in pm.ports):
        wanted[SNMP_SPEED] = "snmp"
    fetched: dict[str, list[Series]] = {}
    chunks = 0
    for metric in sorted(wanted):
        labels = pm.node_labels if wanted[metric] == "node" else pm.snmp_labels
        fetched[metric], k = fetch(client, _selector(metric, labels), start, end, max_points)
        chunks += k
    return fetched, wanted, chunks


def _match(
    pm: PortMap, fetched: dict[str, list[Series]], wanted: dict[str, str], notes: list[str], between: str
) -> list[_Counter]:
    """Each port counter's series; notes on ports without series and series without ports."""
    counters: list[_Counter] = []
    missing: list[str] = []
    for p in pm.ports:
        for d in p.directions:
            metric = p.metric(d)
            hits = [s for s in fetched[metric] if p.matches(s.labels)]
            if len(hits) > 1:
                shown = "; ".join(_labels_text(s.labels) for s in hits[:3])
                extra = "node-labels" if p.kind == "node" else "snmp-labels"
                raise InputError(
                    f"{pm.path}:{p.line}: {p.key} ({p.describe()}) matches {len(hits)} {metric} series "
                    f"({shown}); pick one with `{extra}` in [prometheus] (e.g. the job label)"
                )
            if not hits:
                sel = _labels_text({"__name__": metric, **dict(p.match)})
                missing.append(f"{pm.path}:{p.line} {p.key} {sel}")
                continue
            counters.append(_Counter(p, d, p.link(d), hits[0]))
    if missing:
        _warn(
            notes,
            f"{len(missing)} port counter(s) named in the map have no series in Prometheus between "
            f"{between} (their links have no rows): {_listed(missing)}",
        )
    for metric, series in sorted(fetched.items()):
        if metric == SNMP_SPEED:
            continue
        kind = wanted[metric]
        kind_ports = [p for p in pm.ports if p.kind == kind]
        unused = sorted(
            _labels_text(s.labels)
            for s in series
            if not any(p.matches(s.labels) for p in kind_ports) and not pm.ignored(kind, s.labels)
        )
        if unused:
            _warn(notes, f"{len(unused)} {metric} series are not in the map (unused): {_listed(unused)}")
    return counters


def _counter_notes(
    notes: list[str], st: CounterStats, max_gap_s: float | None, gap_windows: int, partial: int
) -> None:
    if st.gaps:
        gap = f"{max_gap_s:g} s" if max_gap_s is not None else f"{MAX_GAP_INTERVALS:g} scrape intervals"
        _warn(
            notes,
            f"{st.gaps} gap(s) between samples longer than the max gap ({gap}; {st.gap_seconds:g} s in "
            f"all) were not interpolated; {gap_windows} link-window(s) in them have no row",
        )
    if st.resets:
        notes.append(
            f"{st.resets} counter reset(s): an interval ending in a reset counts the bytes since the reset "
            "(the new value), as Prometheus' rate() does"
        )
    if st.wraps:
        notes.append(f"{st.wraps} counter wrap(s) at 2^64 (counted as 2^64 - before + after)")
    if st.dropped_nonfinite or st.dropped_negative:
        notes.append(
            f"{st.dropped_nonfinite} NaN/stale or infinite and {st.dropped_negative} negative sample(s) "
            "dropped (the interval spans from the sample before to the sample after)"
        )
    if partial:
        notes.append(
            f"{partial} link-window(s) are partly covered (a series' start or end, or a gap, falls in "
            f"them); their utilization is over the covered seconds (at least {MIN_COVERAGE:.0%})"
        )


def _labels_key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in labels.items() if k != "__name__"))


def _speed_series(c: _Counter, speeds: dict[tuple[tuple[str, str], ...], Series]) -> Series | None:
    """The ifHighSpeed series of a counter's port: the counter's labels, or the same target and interface."""
    own = speeds.get(_labels_key(c.series.labels))
    if own is not None:
        return own
    hits = [s for s in speeds.values() if c.port.matches(s.labels)]
    return hits[0] if len(hits) == 1 else None


def _step_lookup(sp: Series, at: FloatArray, default: float) -> FloatArray:
    """Speed in bit/s at each time ``at`` from ifHighSpeed (Mbit/s): the last sample at or before it."""
    ok = np.isfinite(sp.vs) & (sp.vs > 0)
    ts, vs = sp.ts[ok], sp.vs[ok]
    if not len(ts):
        return np.full(len(at), default)
    order = np.argsort(ts)
    ts, vs = ts[order], vs[order]
    idx = np.clip(np.searchsorted(ts, at, side="right") - 1, 0, len(ts) - 1)
    return np.asarray(vs[idx] * 1e6, dtype=np.float64)


def _table(
    per_link: dict[int, tuple[FloatArray, FloatArray]],
    links: dict[str, list[Any]],
    names: list[str],
    t0: float,
    step: float,
    n: int,
) -> pa.Table:
    """The ``links`` table (types as ``netheat simulate`` writes them), link-major, present windows only."""
    ids, wins, caps, utils = [], [], [], []
    for link in sorted(per_link):
        util, cap = per_link[link]
        w = np.flatnonzero(np.isfinite(util))
        ids.append(np.full(len(w), link, dtype=np.uint32))
        wins.append(w.astype(np.float64))
        caps.append(cap[w])
        utils.append(util[w])
    link_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.uint32)
    win = np.concatenate(wins) if wins else np.zeros(0)

    def per(values: list[Any], dictionary: list[str]) -> pa.Array:
        index = {v: i for i, v in enumerate(dictionary)}
        codes = np.asarray([index[values[i]] for i in link_ids], dtype=np.int32)
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(dictionary))

    def node(values: list[Any]) -> pa.Array:
        codes = np.asarray([values[i] for i in link_ids], dtype=np.int32)
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(names))

    return pa.table(
        {
            "link": link_ids,
            "layer": per(links["layer"], LAYERS),
            "direction": per(links["direction"], DIRECTIONS),
            "src_node": node(links["src"]),
            "dst_node": node(links["dst"]),
            "capacity_bps": np.concatenate(caps) if caps else np.zeros(0),
            "window_start_s": t0 + win * step,
            "window_end_s": t0 + (win + 1) * step,
            "utilization": np.concatenate(utils) if utils else np.zeros(0),
        }
    )
