"""The ``netheat serve`` command (:func:`add_cli`)."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import socket
import sys
import time
from typing import Any

from netheat.errors import InputError
from netheat.serve.extender import DEFAULT_DEMAND_ANNOTATION

log = logging.getLogger("netheat.serve")


def _setup_logging(level: str) -> None:
    """One line per event on stderr: time, level, message."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("netheat")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a taken port is one `error:` line (exit 2)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise InputError(f"--host {host!r}: {e.strerror}") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


WORKER_ARGS_ENV = "NETHEAT_SERVE_ARGS"
"""Environment variable carrying the command's arguments (JSON) to the worker processes of ``--workers``."""


def _build(args: argparse.Namespace) -> tuple[Any, Any, Any, float]:
    """Check the arguments and build the app: (app, advisor, telemetry source or None, refresh seconds).

    Every input the user gave is checked here, before any port is opened:
    exit 2 with one line otherwise.
    """
    from netheat.telemetry.prometheus import parse_seconds

    try:
        import fastapi  # noqa: F401
        import prometheus_client  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise InputError(
            f"netheat serve needs the `serve` extra ({e.name} is missing): pip install 'netheat[serve]'"
        ) from None
    from netheat._netheat import Advisor
    from netheat.serve.app import ServeSettings, create_app
    from netheat.serve.telemetry import LinksFileSource, PrometheusSource, TelemetrySource

    refresh = parse_seconds(args.refresh, "--refresh")
    window = parse_seconds(args.window, "--window")
    step = parse_seconds(args.step, "--step") if args.step else min(refresh, window / 2)
    if args.map and not args.prometheus:
        raise InputError("--map goes with --prometheus")
    if args.prometheus and not args.map:
        raise InputError(
            "--prometheus needs --map (the port map tying series to links; see docs/telemetry.md)"
        )
    if step * 2 > window * (1 + 1e-9):
        raise InputError(f"--window ({window:g} s) must hold at least two --step windows ({step:g} s)")
    if not 0 < args.port < 65536:
        raise InputError(f"--port must be in 1..65535, got {args.port}")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")

    advisor = Advisor(args.topology, args.config)
    source: TelemetrySource | None = None
    if args.prometheus:
        prom = PrometheusSource(
            args.prometheus, args.topology, args.map, window, step, timeout_s=min(30.0, max(5.0, refresh))
        )
        prom.check()
        source = prom
    elif args.links:
        links = LinksFileSource(args.links)
        # First read now: a bad file is a startup error; later changes are read in the background.
        snap = links.fetch(time.time())
        if snap is not None:
            advisor.observe(snap.at_s, snap.links, snap.rates_bps, snap.capacities_bps)
        source = links

    settings = ServeSettings(
        refresh_s=refresh,
        node_label=args.node_label,
        demand_annotation=args.demand_annotation,
        datacenter=os.path.basename(args.topology),
    )
    return create_app(advisor, source, settings), advisor, source, refresh


def _freeze_heap() -> None:
    # Everything built so far lives as long as the process: keep it out of the garbage collector's
    # full passes, which would otherwise walk it (pauses of milliseconds at the tail of the latencies).
    gc.collect()
    gc.freeze()


def worker_app() -> Any:
    """The app of one worker process of ``netheat serve --workers N`` (uvicorn imports it by name).

    Each worker holds its own advisor and refreshes its own telemetry; the
    parent checked the same arguments before it started them.
    """
    args = argparse.Namespace(**json.loads(os.environ[WORKER_ARGS_ENV]))
    _setup_logging(args.log_level)
    app = _build(args)[0]
    _freeze_heap()
    return app


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    app, advisor, source, refresh = _build(args)
    _setup_logging(args.log_level)
    sock = _bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    log.info(
        "serving %s (%d hosts) on http://%s:%d (API docs at /docs), telemetry: %s, refresh every %g s%s",
        args.topology,
        advisor.num_hosts,
        host,
        port,
        source.description if source else "none",
        refresh,
        f", {args.workers} worker processes" if args.workers > 1 else "",
    )
    common: dict[str, Any] = {
        "log_level": args.log_level.lower(),
        "access_log": args.access_log,
        # X-Forwarded-For only matters to the access log; without it no proxy-header layer per request.
        "proxy_headers": args.access_log,
        "timeout_graceful_shutdown": 5,
        "lifespan": "on",
    }
    if args.workers == 1:
        _freeze_heap()
        uvicorn.Server(uvicorn.Config(app, **common)).run(sockets=[sock])
        return 0
    # Several processes accept on the one socket; each builds its app from the same arguments.
    from uvicorn.supervisors import Multiprocess

    del app, advisor, source
    os.environ[WORKER_ARGS_ENV] = json.dumps({k: v for k, v in vars(args).items() if k != "func"})
    config = uvicorn.Config(f"{__name__}:worker_app", factory=True, workers=args.workers, **common)
    Multiprocess(config, sockets=[sock]).run()
    return 0


def add_cli(sub: Any) -> None:
    """Add the ``serve`` command to the top-level subparsers ``sub``."""
    p = sub.add_parser(
        "serve",
        help="HTTP decision service: hot ToRs, placement, migration, Kubernetes scheduler extender",
        description=(
            "Serve the advisor's decisions over HTTP (FastAPI + uvicorn) from live link telemetry, "
            "refreshed in the background from Prometheus (--prometheus with --map) or a links Parquet "
            "file (--links). Endpoints: /v1/hotspots, /v1/links, /v1/place/task, /v1/place/replicas, "
            "/v1/migrate, /scheduler/filter, /scheduler/prioritize, /healthz, /metrics, /docs. "
            "See docs/serve.md."
        ),
    )
    p.add_argument("--topology", required=True, help="datacenter TOML file")
    p.add_argument(
        "--config",
        default=None,
        help=(
            "advisor TOML file: [placement], [storage] and [advisor] (stale-after, seed); "
            "default: UTP and Sinbad"
        ),
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--prometheus", metavar="URL", default=None, help="Prometheus base URL to read counters from"
    )
    src.add_argument(
        "--links",
        default=None,
        help=(
            "links Parquet file (as netheat writes it); each link's last window is used, read again "
            "when the file changes"
        ),
    )
    p.add_argument(
        "--map", default=None, help="port map TOML file, with --prometheus (see docs/telemetry.md)"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (default: 8080)")
    p.add_argument("--refresh", default="15s", help="time between telemetry refreshes (default: 15s)")
    p.add_argument(
        "--window",
        default="1min",
        help=(
            "span of Prometheus samples read at each refresh; each link's last window is used (default: 1min)"
        ),
    )
    p.add_argument(
        "--step",
        default=None,
        help="window length within --window (default: --refresh, at most half of --window)",
    )
    p.add_argument(
        "--node-label",
        metavar="KEY",
        default=None,
        help="Kubernetes node label whose value is the node's datacenter host (default: the node name)",
    )
    p.add_argument(
        "--demand-annotation",
        metavar="KEY",
        default=DEFAULT_DEMAND_ANNOTATION,
        help=f"pod annotation with its network demand, e.g. 2Gbps (default: {DEFAULT_DEMAND_ANNOTATION})",
    )
    p.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        default="info",
        help="log level (default: info)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help=(
            "worker processes answering on the one port, each with its own advisor and telemetry "
            "refresh (default: 1; see docs/serve.md for when more help)"
        ),
    )
    p.add_argument("--access-log", action="store_true", help="log every request (uvicorn's access log)")
    p.set_defaults(func=_run)
