"""``/metrics`` of ``netheat serve``: request counts and latency, telemetry age and refresh outcomes.

Each app has a registry of its own (not prometheus_client's global one), so
that several apps in one process (tests) do not collide. The request
metrics are kept by a plain ASGI middleware, cheaper per request than a
Starlette ``BaseHTTPMiddleware``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Seconds; dense below 10 ms, the latency target of the decision endpoints."""

OTHER = "other"
"""Endpoint label of paths the app does not serve (404s), to keep the label set bounded."""


class ServeMetrics:
    """The service's metrics in a registry of their own."""

    def __init__(self, telemetry_age: Callable[[], float]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "netheat_serve_requests",
            "HTTP requests answered, by endpoint (path) and status code",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "netheat_serve_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by endpoint (path)",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.telemetry_age = Gauge(
            "netheat_serve_telemetry_age_seconds",
            "Age of the telemetry snapshot in use (NaN before the first one)",
            registry=self.registry,
        )
        self.telemetry_age.set_function(telemetry_age)
        self.refreshes = Counter(
            "netheat_serve_telemetry_refreshes",
            "Telemetry refreshes that succeeded",
            registry=self.registry,
        )
        self.refresh_failures = Counter(
            "netheat_serve_telemetry_refresh_failures",
            "Telemetry refreshes that failed (the previous snapshot stayed in force)",
            registry=self.registry,
        )

    def refreshed(self, ok: bool) -> None:
        """Count one refresh outcome (the :class:`~netheat.serve.telemetry.Refresher` hook)."""
        (self.refreshes if ok else self.refresh_failures).inc()


class RequestMetrics:
    """Counts and times requests by endpoint and status, with the label children resolved once."""

    def __init__(self, metrics: ServeMetrics, endpoints: Iterable[str]) -> None:
        self.metrics = metrics
        self.endpoints = frozenset(endpoints)
        # `labels()` is a dict look-up plus locking: done once per (endpoint, status).
        self._timers: dict[str, Any] = {}
        self._counters: dict[tuple[str, int], Any] = {}

    def observe(self, path: str, status: int, seconds: float) -> None:
        """One request to ``path`` answered ``status`` after ``seconds``."""
        endpoint = path if path in self.endpoints else OTHER
        timer = self._timers.get(endpoint)
        if timer is None:
            timer = self._timers[endpoint] = self.metrics.latency.labels(endpoint)
        counter = self._counters.get((endpoint, status))
        if counter is None:
            counter = self._counters[(endpoint, status)] = self.metrics.requests.labels(endpoint, str(status))
        timer.observe(seconds)
        counter.inc()


class MetricsMiddleware:
    """ASGI middleware counting each HTTP request and timing it, by endpoint and status."""

    def __init__(self, app: Any, requests: RequestMetrics) -> None:
        self.app = app
        self.requests = requests

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            self.requests.observe(scope.get("path", ""), status, time.perf_counter() - start)
