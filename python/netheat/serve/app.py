"""The ``netheat serve`` web application: :func:`create_app`.

Every decision is the advisor's (Rust, ``netheat._netheat.Advisor``); this
layer reads requests, asks it with the current time and returns its JSON
text as is. Requests never wait for telemetry: the :class:`Refresher`
feeds the advisor from a background thread, and answers use the snapshot
in hand (``"stale": true`` with the advisor's fallback once it is older
than the advisor's stale-after).

Errors: a body that is not a JSON object (or not what an endpoint reads)
is 400; content the advisor refuses (an unknown host, a bad value: its
:class:`~netheat.errors.InputError`) is 422; both with a one-line
``{"error": ...}`` (``{"Error": ...}`` on the scheduler endpoints, the
field of ``ExtenderFilterResult``) and one warning line in the log.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import Receive, Scope, Send

from netheat import __version__
from netheat.errors import MalformedRequest, NetheatError
from netheat.serve.advisor import AdvisorLike
from netheat.serve.extender import DEFAULT_DEMAND_ANNOTATION, Extender
from netheat.serve.metrics import MetricsMiddleware, RequestMetrics, ServeMetrics
from netheat.serve.telemetry import Refresher, TelemetrySource, error_line

log = logging.getLogger("netheat.serve")

JSON = "application/json"
JSON_BYTES = JSON.encode()


@dataclass(frozen=True)
class ServeSettings:
    """How the app runs (the web server's address is the caller's business)."""

    refresh_s: float = 15.0
    """Seconds between telemetry refreshes."""
    node_label: str | None = None
    """Node label whose value is the node's datacenter host (default: the node's name)."""
    demand_annotation: str = DEFAULT_DEMAND_ANNOTATION
    """Pod annotation holding its network demand, e.g. ``2Gbps``."""
    datacenter: str = "the datacenter file"
    """How messages name the datacenter (its file)."""
    clock: Callable[[], float] = field(default=time.time)
    """Unix seconds now; tests pass a fake clock."""
    fast_path: bool = True
    """Answer the POST endpoints in :class:`ServeApp`'s call, before FastAPI's middleware and routing
    (same answers)."""


def _example(doc: Any) -> dict[str, Any]:
    return {
        "requestBody": {"required": True, "content": {JSON: {"schema": {"type": "object"}, "example": doc}}}
    }


PLACE_TASK_EXAMPLE = {
    "cores": 2,
    "memory_bytes": 4_000_000_000,
    "demand_bps": 1e9,
    "job_hosts": ["r0h1"],
    "candidates": ["r0h2", "r1h0", "r2h0", "r3h0"],
    "avoid_tors": [],
}
PLACE_REPLICAS_EXAMPLE = {"bytes": 268435456, "writer": "r0h1", "replicas": 3, "fault_domains": 2}
MIGRATE_EXAMPLE = {
    "tor": "tor2",
    "tasks": [
        {"id": "pod-a", "rate_bps": 3e9, "latency_sensitive": False, "budget_left": True},
        {"id": "pod-b", "rate_bps": 1e9, "latency_sensitive": True, "budget_left": True},
    ],
}
EXTENDER_EXAMPLE = {
    "Pod": {
        "metadata": {
            "name": "web-1",
            "namespace": "default",
            "annotations": {DEFAULT_DEMAND_ANNOTATION: "1Gbps"},
        }
    },
    "NodeNames": ["r0h0", "r1h0", "r2h0", "r3h0"],
}

PATHS = (
    "/healthz",
    "/metrics",
    "/v1/hotspots",
    "/v1/links",
    "/v1/hdfs/loads",
    "/v1/place/task",
    "/v1/place/replicas",
    "/v1/migrate",
    "/scheduler/filter",
    "/scheduler/prioritize",
    "/docs",
    "/openapi.json",
)
"""Paths with an endpoint label of their own in ``/metrics``."""


Answer = tuple[int, bytes]
"""An HTTP status and a JSON body."""

PostHandler = Callable[[bytes], Answer]
"""A POST endpoint: the request body in, the answer out (never raises)."""


def _answer(method: str, path: str, key: str, compute: Callable[[bytes], bytes], body: bytes) -> Answer:
    """``compute(body)``; bad input is 400/422 and anything else 500, each logged on one line."""
    try:
        return 200, compute(body)
    except MalformedRequest as e:
        status, message = 400, str(e)
    except NetheatError as e:
        status, message = 422, error_line(e)
    except Exception as e:  # a bug: still one line to the client and the log
        status, message = 500, f"internal error: {error_line(e)}"
    log.warning("%s %s -> %d: %s", method, path, status, message)
    return status, json.dumps({key: message}).encode()


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None if the client went away first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class ServeApp(FastAPI):
    """The FastAPI app, answering the POST endpoints called at rate before its own routing.

    Placement and the scheduler extender are called at rate; their handlers
    run straight from the ASGI call, without FastAPI's middleware stack,
    routing and request objects. The same handlers back the FastAPI routes,
    which document them in ``/openapi.json`` and serve them when the fast
    path is off (``ServeSettings.fast_path``), so the answers are identical
    either way. This saves about a fifth of the CPU per request (docs/serve.md,
    load benchmark).
    """

    fast_posts: Mapping[str, PostHandler] = MappingProxyType({})
    """Path to handler of the POST endpoints answered first (empty: none)."""
    request_metrics: RequestMetrics | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            handler = self.fast_posts.get(scope["path"])
            if handler is not None:
                start = time.perf_counter()
                body = await _read_body(receive)
                if body is None:
                    return
                status, data = handler(body)
                headers = [(b"content-type", JSON_BYTES), (b"content-length", str(len(data)).encode())]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": data})
                if self.request_metrics is not None:
                    self.request_metrics.observe(scope["path"], status, time.perf_counter() - start)
                return
        await super().__call__(scope, receive, send)


def create_app(
    advisor: AdvisorLike,
    telemetry_source: TelemetrySource | None,
    settings: ServeSettings | None = None,
) -> ServeApp:
    """The FastAPI app answering from ``advisor``, fed by ``telemetry_source`` (None: no telemetry).

    The refresher starts with the app (its lifespan) and stops with it;
    ``app.state.refresher`` (None without a source) and ``app.state.metrics``
    are there for tests and embedding.
    """
    cfg = settings or ServeSettings()
    clock = cfg.clock

    def telemetry_age() -> float:
        age = json.loads(advisor.status_json(clock())).get("age_s")
        return math.nan if age is None else float(age)

    metrics = ServeMetrics(telemetry_age)
    refresher = (
        Refresher(advisor, telemetry_source, cfg.refresh_s, clock, on_result=metrics.refreshed)
        if telemetry_source is not None
        else None
    )
    extender = Extender(advisor, cfg.node_label, cfg.demand_annotation, cfg.datacenter)

    # -- What each endpoint computes, from the request body to the answer's bytes.

    def advise(decide: Callable[[float, bytes], bytes]) -> Callable[[bytes], bytes]:
        # The advisor reads the body itself (not JSON, not an object: MalformedRequest) and answers the
        # bytes to send.
        def compute(body: bytes) -> bytes:
            return decide(clock(), body)

        return compute

    def scheduler_filter(body: bytes) -> bytes:
        return extender.filter(clock(), body)

    def scheduler_prioritize(body: bytes) -> bytes:
        return extender.prioritize(clock(), body)

    def healthz(_: bytes) -> bytes:
        status = json.loads(advisor.status_json(clock()))
        body = {
            "status": "ok",
            "pid": os.getpid(),
            **status,
            "telemetry_source": telemetry_source.description if telemetry_source else None,
            "refreshes": refresher.refreshes if refresher else 0,
            "refresh_failures": refresher.failures if refresher else 0,
            "last_refresh_error": refresher.last_error if refresher else None,
        }
        return json.dumps(body).encode()

    def hotspots(_: bytes) -> bytes:
        doc = json.loads(advisor.tors_json(clock()))
        doc["tors"] = [t for t in doc["tors"] if t["above"] or t["hot"]]
        return json.dumps(doc).encode()

    def links(_: bytes) -> bytes:
        doc = json.loads(advisor.tors_json(clock()))
        rows = [{"tor": t["tor"], **u} for t in doc.pop("tors") for u in t["uplinks"]]
        return json.dumps({**doc, "links": rows}).encode()

    # path: (compute, error key, summary, example body)
    posts: dict[str, tuple[Callable[[bytes], bytes], str, str, Any]] = {
        "/v1/place/task": (
            advise(advisor.place_task_json),
            "error",
            "Rank candidate hosts for a task (UTP by default)",
            PLACE_TASK_EXAMPLE,
        ),
        "/v1/place/replicas": (
            advise(advisor.place_replicas_json),
            "error",
            "Choose hosts for a block's replicas (Sinbad by default)",
            PLACE_REPLICAS_EXAMPLE,
        ),
        "/v1/migrate": (
            advise(advisor.migrate_json),
            "error",
            "Which tasks to move off a hot ToR",
            MIGRATE_EXAMPLE,
        ),
        "/scheduler/filter": (
            scheduler_filter,
            "Error",
            "Kubernetes scheduler extender: filter (ExtenderArgs -> ExtenderFilterResult)",
            EXTENDER_EXAMPLE,
        ),
        "/scheduler/prioritize": (
            scheduler_prioritize,
            "Error",
            "Kubernetes scheduler extender: prioritize (ExtenderArgs -> HostPriorityList, scores 0-10)",
            EXTENDER_EXAMPLE,
        ),
    }
    gets: dict[str, tuple[Callable[[bytes], bytes], str]] = {
        "/healthz": (healthz, "Liveness, and the state of the telemetry in use"),
        "/v1/hotspots": (hotspots, "ToRs above the hot threshold now, or hot for the detection window"),
        "/v1/links": (links, "Current rate and utilization of every ToR uplink"),
    }

    def post_handler(path: str, key: str, compute: Callable[[bytes], bytes]) -> PostHandler:
        def handle(body: bytes) -> Answer:
            return _answer("POST", path, key, compute, body)

        return handle

    handlers = {path: post_handler(path, key, compute) for path, (compute, key, _, _) in posts.items()}

    # -- The FastAPI app: lifespan, routes (and so the OpenAPI document), middleware.

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if refresher is not None:
            refresher.start()
        else:
            log.warning("no telemetry source (--prometheus or --links): every answer is stale")
        try:
            yield
        finally:
            if refresher is not None:
                refresher.stop()

    app = ServeApp(
        title="netheat serve",
        version=__version__,
        description=(
            "Network-aware placement decisions from live link telemetry: hot ToRs, task and replica "
            "placement, migration, and a Kubernetes scheduler extender. Request and answer fields: "
            "docs/serve.md."
        ),
        lifespan=lifespan,
    )
    app.state.refresher = refresher
    app.state.metrics = metrics
    request_metrics = RequestMetrics(metrics, PATHS)
    app.request_metrics = request_metrics
    app.fast_posts = handlers if cfg.fast_path else {}

    def post_route(handle: PostHandler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            status, data = handle(await request.body())
            return Response(data, status_code=status, media_type=JSON)

        return endpoint

    def get_route(path: str, compute: Callable[[bytes], bytes]) -> Callable[[], Awaitable[Response]]:
        async def endpoint() -> Response:
            status, data = _answer("GET", path, "error", compute, b"")
            return Response(data, status_code=status, media_type=JSON)

        return endpoint

    def operation(path: str) -> str:
        return path.strip("/").replace("/", "_")

    for path, (compute, summary) in gets.items():
        app.add_api_route(
            path, get_route(path, compute), methods=["GET"], summary=summary, name=operation(path)
        )

    async def hdfs_loads() -> Response:
        # Plain text, the format java/hdfs-placement reads (docs/hdfs.md, "Load reports").
        return Response(advisor.hdfs_loads(), media_type="text/plain; charset=utf-8")

    app.add_api_route(
        "/v1/hdfs/loads",
        hdfs_loads,
        methods=["GET"],
        summary="Load report of netheat's HDFS placement policy (host,utilization,timestamp)",
        name="v1_hdfs_loads",
    )
    for path, (_, _, summary, example) in posts.items():
        app.add_api_route(
            path,
            post_route(handlers[path]),
            methods=["POST"],
            summary=summary,
            name=operation(path),
            openapi_extra=_example(example),
        )

    @app.get("/metrics", summary="Prometheus metrics of the service")
    async def prometheus_metrics() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # Counts everything that goes through FastAPI (the fast path counts its own).
    app.add_middleware(MetricsMiddleware, requests=request_metrics)
    return app
