"""Live telemetry in: link utilization from where operators keep it.

- :mod:`netheat.telemetry.prometheus`: ``netheat ingest prometheus``, per-port
  byte counters (node_exporter NICs, snmp_exporter IF-MIB switch ports) read
  from Prometheus' HTTP API into netheat's ``links`` table;
- :mod:`netheat.telemetry.portmap`: the port map tying series labels to the
  directed links of a datacenter file;
- :mod:`netheat.telemetry.counters`: counter arithmetic (resets, 2^64 wraps,
  NaN and stale samples, gaps) and per-window bytes.

See ``docs/telemetry.md`` for the command, the port map and the edge cases.
"""

from __future__ import annotations

from netheat.telemetry.portmap import PortMap, load_port_map
from netheat.telemetry.prometheus import IngestResult, ingest_prometheus

__all__ = ["IngestResult", "PortMap", "ingest_prometheus", "load_port_map"]
