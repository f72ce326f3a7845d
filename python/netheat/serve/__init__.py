"""``netheat serve``: the advisor's decisions over HTTP, fed by live telemetry.

- :mod:`netheat.serve.app`: :func:`create_app` (FastAPI), the endpoints;
- :mod:`netheat.serve.telemetry`: snapshot sources (Prometheus, a links
  Parquet file) and the background :class:`Refresher`;
- :mod:`netheat.serve.extender`: the Kubernetes scheduler extender protocol;
- :mod:`netheat.serve.metrics`: ``/metrics``;
- :mod:`netheat.serve.cli`: the command.

The web stack is the optional ``serve`` extra (``pip install
'netheat[serve]'``); importing this package does not need it, importing
:mod:`netheat.serve.app` does. See ``docs/serve.md``.
"""

from __future__ import annotations

from netheat.serve.telemetry import LinksFileSource, PrometheusSource, Refresher, Snapshot, latest_windows

__all__ = ["LinksFileSource", "PrometheusSource", "Refresher", "Snapshot", "latest_windows"]
