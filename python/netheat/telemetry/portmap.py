"""Port maps: which Prometheus series measure which directed link of a datacenter file.

A port map is a TOML file (kebab-case keys, unknown keys rejected) with an
optional ``[prometheus]`` table and one ``[[port]]`` table per port::

    [prometheus]
    target-label = "instance"        # label naming the switch in snmp_exporter series
    capacity = "datacenter"          # or "if-high-speed": switch-port capacity from ifHighSpeed
    node-labels = { job = "node" }   # extra label = value matchers of node_exporter queries
    snmp-labels = { job = "snmp" }   # ... of snmp_exporter queries
    ignore-devices = ["lo"]          # node_exporter devices never reported as unmapped (globs)
    ignore-interfaces = []           # switch interfaces (ifName or ifDescr) never reported (globs)

    [[port]]                         # a switch port, from snmp_exporter's IF-MIB series
    link = "tor3->core"              # the port is on tor3 and cabled to core
    instance = "10.0.0.3"            # value of the target label
    if-name = "Ethernet48"           # or if-index = 49, or if-descr = "..."
    direction = "both"               # both (default), out or in

    [[port]]                         # a host NIC, from node_exporter's series
    host = "r3h0"                    # the host's link to its ToR
    instance = "10.0.3.10:9100"
    device = "eth0"

A port is on the source node of its link and faces the destination: its
transmit counter (``ifHCOutOctets``, ``node_network_transmit_bytes_total``)
measures the directed link leaving the node (``src -> dst``), its receive
counter (``ifHCInOctets``, ``node_network_receive_bytes_total``) the link
entering it (``dst -> src``). ``direction`` chooses the counters used:
``out`` only the transmit one, ``in`` only the receive one, ``both`` both.
The link is ``link = "A->B"`` (node names), ``src``/``dst``, a link id
(``link = 32``, needed only between parallel links), or ``host`` (a host
name or index with exactly one link to a ToR).

Every mistake is a :class:`~netheat.errors.ConfigError` reading
``file:line:col: key `port[2].if-name`: reason``; the position is found by
a small line locator over the TOML text (``tomllib`` keeps none).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netheat._netheat import Topology
from netheat.errors import ConfigError
from netheat.textfile import read_config_text

TOP_KEYS = ("prometheus", "port")
PROMETHEUS_KEYS = (
    "target-label",
    "capacity",
    "node-labels",
    "snmp-labels",
    "ignore-devices",
    "ignore-interfaces",
)
PORT_KEYS = (
    "link",
    "src",
    "dst",
    "host",
    "instance",
    "device",
    "if-name",
    "if-index",
    "if-descr",
    "direction",
    "capacity",
)
DIRECTIONS = ("both", "out", "in")
CAPACITIES = ("datacenter", "if-high-speed")
DEFAULT_IGNORE_DEVICES = ("lo",)
"""node_exporter devices left out of the unmapped-series report by default."""

"""Largest port map read (16 MiB; a map of 100,000 ports is about 10 MiB)."""

NODE_TX = "node_network_transmit_bytes_total"
NODE_RX = "node_network_receive_bytes_total"
SNMP_TX = "ifHCOutOctets"
SNMP_RX = "ifHCInOctets"
SNMP_SPEED = "ifHighSpeed"

_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = r"[A-Za-z0-9_-]+"
_QUOTED_KEY = r"\"(?:[^\"\\]|\\.)*\"|'[^']*'"
_KEY_PART = rf"(?:{_BARE_KEY}|{_QUOTED_KEY})"
_KEY_LINE = re.compile(rf"^(\s*)({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*\]\]?")


def _unquote(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'":
        return part[1:-1]
    return part


def _split_key(text: str) -> list[str]:
    return [_unquote(p) for p in re.findall(rf"{_KEY_PART}", text)]


_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")


def _bracket_balance(text: str) -> int:
    """``[`` minus ``]`` in a line of TOML, outside strings and comments."""
    bare = _STRING.sub("", text).split("#", 1)[0]
    return bare.count("[") - bare.count("]")


class _Locator:
    """Line and column of keys in TOML text (best effort; the text already parsed).

    Keys are addressed like the error messages name them: ``port[2].if-name``,
    ``prometheus.node-labels.job``. Array-of-tables headers are counted, so
    ``port[2]`` is the third ``[[port]]``.
    """

    def __init__(self, text: str) -> None:
        self.where: dict[str, tuple[int, int]] = {}
        counts: dict[str, int] = {}
        prefix = ""
        in_multiline: str | None = None
        depth = 0  # open brackets of a multi-line array value
        for lineno, line in enumerate(text.splitlines(), 1):
            if in_multiline is not None:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            if depth > 0:
                depth += _bracket_balance(line)
                continue
            header = _HEADER.match(line)
            if header and not _KEY_LINE.match(line):
                parts = _split_key(header.group(2))
                name = ".".join(parts)
                col = header.start(1) + 1
                if header.group(1) == "[[":
                    i = counts.get(name, 0)
                    counts[name] = i + 1
                    prefix = f"{name}[{i}]"
                else:
                    prefix = name
                self.where.setdefault(prefix, (lineno, col))
                continue
            m = _KEY_LINE.match(line)
            if not m:
                continue
            parts = _split_key(m.group(2))
            key = ".".join([prefix, *parts]) if prefix else ".".join(parts)
            self.where.setdefault(key, (lineno, len(m.group(1)) + 1))
            rest = line[m.end() :]
            # Keys of an inline table on the same line: `labels = { job = "node" }`.
            if rest.lstrip().startswith("{"):
                offset = m.end()
                for im in re.finditer(rf"({_KEY_PART})\s*=", rest):
                    sub = _unquote(im.group(1))
                    self.where.setdefault(f"{key}.{sub}", (lineno, offset + im.start(1) + 1))
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
            else:
                depth = max(0, _bracket_balance(rest))

    def locate(self, key: str) -> tuple[int, int]:
        """``(line, column)`` of ``key`` or of its nearest located ancestor; ``(0, 0)`` if none."""
        k = key
        while k:
            if k in self.where:
                return self.where[k]
            k = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", k) if ("." in k or "[" in k) else ""
        return (0, 0)


class _Ctx:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.loc = _Locator(text)

    def error(self, key: str, reason: str) -> ConfigError:
        line, col = self.loc.locate(key)
        where = f"{self.path}:{line}:{col}" if line else f"{self.path}"
        return ConfigError(
            f"{where}: key `{key}`: {reason}",
            file=str(self.path),
            line=line,
            column=col,
            key=key,
            reason=reason,
        )

    def line(self, key: str) -> int:
        return self.loc.locate(key)[0]


@dataclass(frozen=True)
class Port:
    """One ``[[port]]`` of a map, resolved against the datacenter.

    ``node`` is the node the port is on and ``peer`` the node it is cabled
    to; ``out_link`` (``node -> peer``) is what its transmit counter
    measures, ``in_link`` (``peer -> node``) its receive counter.
    """

    index: int
    line: int
    kind: str
    """``node`` (node_exporter: ``instance``, ``device``) or ``snmp`` (snmp_exporter IF-MIB)."""
    instance: str
    match: tuple[tuple[str, str], ...]
    """Label = value pairs that pick the port's series (besides the metric name)."""
    node: str
    peer: str
    out_link: int
    in_link: int
    directions: tuple[str, ...]
    capacity: str

    @property
    def key(self) -> str:
        """The port's key path in the map (``port[2]``)."""
        return f"port[{self.index}]"

    def describe(self) -> str:
        """``tor3 Ethernet48 (instance="10.0.0.3")``."""
        sel = ", ".join(f'{k}="{v}"' for k, v in self.match)
        return f"{self.node} -> {self.peer} port {{{sel}}}"

    def link(self, direction: str) -> int:
        """The directed link the ``out`` (transmit) or ``in`` (receive) counter measures."""
        return self.out_link if direction == "out" else self.in_link

    def metric(self, direction: str) -> str:
        """The counter metric of one direction."""
        if self.kind == "node":
            return NODE_TX if direction == "out" else NODE_RX
        return SNMP_TX if direction == "out" else SNMP_RX

    def matches(self, labels: dict[str, str]) -> bool:
        """Whether a series with these labels is this port's."""
        return all(labels.get(k) == v for k, v in self.match)


@dataclass
class PortMap:
    """A validated port map: its ports and the ``[prometheus]`` settings."""

    path: Path
    ports: list[Port]
    target_label: str = "instance"
    capacity: str = "datacenter"
    node_labels: dict[str, str] = field(default_factory=dict)
    snmp_labels: dict[str, str] = field(default_factory=dict)
    ignore_devices: tuple[str, ...] = DEFAULT_IGNORE_DEVICES
    ignore_interfaces: tuple[str, ...] = ()

    def kinds(self) -> set[str]:
        """Kinds of port in the map (``node``, ``snmp``)."""
        return {p.kind for p in self.ports}

    def ignored(self, kind: str, labels: dict[str, str]) -> bool:
        """Whether a series the map does not cover is left out of the report by an ignore glob."""
        if kind == "node":
            dev = labels.get("device", "")
            return any(fnmatch.fnmatchcase(dev, g) for g in self.ignore_devices)
        names = [labels[k] for k in ("ifName", "ifDescr") if k in labels]
        return any(fnmatch.fnmatchcase(n, g) for n in names for g in self.ignore_interfaces)


def _suggest(key: str, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key.replace("_", "-").lower(), allowed, n=1, cutoff=0.6)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    return f"unknown key{hint} (known keys: {', '.join(allowed)})"


def _check_keys(ctx: _Ctx, table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for k in table:
        if k not in allowed:
            raise ctx.error(f"{where}.{k}" if where else k, _suggest(k, allowed))


def _string(ctx: _Ctx, key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ctx.error(key, f"expected a non-empty string, got {v!r}")
    return v


def _labels(ctx: _Ctx, key: str, v: Any) -> dict[str, str]:
    if not isinstance(v, dict):
        raise ctx.error(key, f'expected a table of label = "value", got {v!r}')
    out: dict[str, str] = {}
    for name, value in v.items():
        if not _LABEL_NAME.match(name) or name == "__name__":
            raise ctx.error(f"{key}.{name}", "not a Prometheus label name ([A-Za-z_][A-Za-z0-9_]*)")
        if not isinstance(value, str):
            raise ctx.error(f"{key}.{name}", f"expected a string, got {value!r}")
        out[name] = value
    return out


def _globs(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(g, str) for g in v):
        raise ctx.error(key, f"expected a list of glob strings, got {v!r}")
    return tuple(v)


class _Topo:
    """Name and link lookups of a datacenter for resolving ports."""

    def __init__(self, topo: Topology, topo_name: str) -> None:
        nodes = topo.nodes()
        links = topo.links()
        self.topo = topo
        self.name = topo_name
        self.names: list[str] = list(nodes["name"])
        self.kinds: list[str] = list(nodes["kind"])
        self.ids = {n: i for i, n in enumerate(self.names)}
        self.src: list[int] = list(links["src"])
        self.dst: list[int] = list(links["dst"])
        self.reverse: list[int] = list(links["reverse"])
        self.layer: list[str] = list(links["layer"])
        self.by_pair: dict[tuple[int, int], list[int]] = {}
        self.out_of: dict[int, list[int]] = {}
        for i, (s, d) in enumerate(zip(self.src, self.dst, strict=True)):
            self.by_pair.setdefault((s, d), []).append(i)
            self.out_of.setdefault(s, []).append(i)

    def link_name(self, link: int) -> str:
        return f"{self.names[self.src[link]]}->{self.names[self.dst[link]]}"

    def node(self, ctx: _Ctx, key: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise ctx.error(key, f"expected a node name, got {v!r}")
        if isinstance(v, str) and v.strip() in self.ids:
            return self.ids[v.strip()]
        if isinstance(v, int) or v.strip().isdigit():
            n = int(v)
            hosts = self.topo.num_hosts
            if 0 <= n < hosts:
                return n  # a host index is its node id
            raise ctx.error(
                key, f"host index {n} is out of range: {self.name} has {hosts} hosts (0..{hosts - 1})"
            )
        close = difflib.get_close_matches(v.strip(), self.names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ctx.error(
            key,
            f"{self.name} has no node `{v}`{hint} (hosts are r<rack>h<slot>, switches tor<r>, agg<pod>-<j>, "
            "spine<s>, core, border<b>)",
        )

    def pair(self, ctx: _Ctx, key: str, s: int, d: int) -> int:
        ids = self.by_pair.get((s, d), [])
        if len(ids) == 1:
            return ids[0]
        name = f"{self.names[s]}->{self.names[d]}"
        if not ids:
            mine = ", ".join(self.link_name(i) for i in self.out_of.get(s, [])[:8]) or "none"
            raise ctx.error(key, f"{self.name} has no link {name} (links leaving {self.names[s]}: {mine})")
        raise ctx.error(
            key,
            f"{self.name} has {len(ids)} parallel links {name} (ids {', '.join(map(str, ids))}); "
            "name one with `link = <id>`",
        )


def _resolve_link(ctx: _Ctx, t: _Topo, key: str, port: dict[str, Any]) -> int:
    """The link id of a port: the directed link from the node it is on to the node it faces."""
    given = [k for k in ("link", "src", "host") if k in port]
    if "dst" in port and "src" not in port:
        raise ctx.error(f"{key}.dst", '`dst` needs `src` (or give `link = "src->dst"`)')
    if len(given) != 1:
        what = "none" if not given else ", ".join(f"`{g}`" for g in given)
        raise ctx.error(
            key,
            f'give exactly one of `link = "A->B"` (or a link id), `src` with `dst`, or `host`; got {what}',
        )
    which = given[0]
    if which == "link":
        v = port["link"]
        if isinstance(v, int) and not isinstance(v, bool):
            if not 0 <= v < len(t.src):
                raise ctx.error(
                    f"{key}.link", f"link id {v} is out of range: {t.name} has {len(t.src)} links"
                )
            return v
        if not isinstance(v, str) or "->" not in v:
            raise ctx.error(f"{key}.link", f'expected "A->B" (node names) or a link id, got {v!r}')
        a, b = (x.strip() for x in v.split("->", 1))
        return t.pair(ctx, f"{key}.link", t.node(ctx, f"{key}.link", a), t.node(ctx, f"{key}.link", b))
    if which == "src":
        if "dst" not in port:
            raise ctx.error(f"{key}.src", "`src` needs `dst` (the node the port is cabled to)")
        s = t.node(ctx, f"{key}.src", port["src"])
        d = t.node(ctx, f"{key}.dst", port["dst"])
        return t.pair(ctx, f"{key}.src", s, d)
    h = t.node(ctx, f"{key}.host", port["host"])
    if t.kinds[h] != "host":
        raise ctx.error(
            f"{key}.host", f"`{t.names[h]}` is a {t.kinds[h]}, not a host; use `link` for switch ports"
        )
    ups = [i for i in t.out_of.get(h, []) if t.layer[i] == "host-tor"]
    if len(ups) != 1:
        listed = ", ".join(f"{t.link_name(i)} (id {i})" for i in ups)
        raise ctx.error(
            f"{key}.host",
            f"host {t.names[h]} has {len(ups)} links to ToRs ({listed}); name the port's with `link`",
        )
    return ups[0]


def _port(ctx: _Ctx, t: _Topo, i: int, raw: Any, pm: PortMap) -> Port:
    key = f"port[{i}]"
    if not isinstance(raw, dict):
        raise ctx.error(key, "expected a table ([[port]])")
    _check_keys(ctx, raw, PORT_KEYS, key)
    instance = _string(ctx, f"{key}.instance", raw.get("instance")) if "instance" in raw else None
    if instance is None:
        raise ctx.error(key, "missing `instance` (the value of the series' instance/target label)")
    sources = [k for k in ("device", "if-name", "if-index", "if-descr") if k in raw]
    if len(sources) != 1:
        what = "none" if not sources else ", ".join(f"`{s}`" for s in sources)
        raise ctx.error(
            key,
            "give exactly one of `device` (a node_exporter NIC) or `if-name`, `if-index`, `if-descr` (a "
            f"switch port from snmp_exporter); got {what}",
        )
    src = sources[0]
    match: list[tuple[str, str]]
    if src == "device":
        kind = "node"
        match = [("instance", instance), ("device", _string(ctx, f"{key}.device", raw["device"]))]
    else:
        kind = "snmp"
        v = raw[src]
        if src == "if-index":
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ctx.error(f"{key}.if-index", f"expected a non-negative integer, got {v!r}")
            value = str(v)
        else:
            value = _string(ctx, f"{key}.{src}", v)
        label = {"if-name": "ifName", "if-index": "ifIndex", "if-descr": "ifDescr"}[src]
        match = [(pm.target_label, instance), (label, value)]
    direction = raw.get("direction", "both")
    if direction not in DIRECTIONS:
        raise ctx.error(f"{key}.direction", f"expected one of {', '.join(DIRECTIONS)}, got {direction!r}")
    capacity = raw.get("capacity", pm.capacity if kind == "snmp" else "datacenter")
    if capacity not in CAPACITIES:
        raise ctx.error(f"{key}.capacity", f"expected one of {', '.join(CAPACITIES)}, got {capacity!r}")
    if kind == "node" and capacity == "if-high-speed":
        raise ctx.error(
            f"{key}.capacity",
            "`if-high-speed` needs a switch port (snmp_exporter's ifHighSpeed); NICs use the datacenter's",
        )
    link = _resolve_link(ctx, t, key, raw)
    dirs = ("out", "in") if direction == "both" else (direction,)
    return Port(
        index=i,
        line=ctx.line(key),
        kind=kind,
        instance=instance,
        match=tuple(match),
        node=t.names[t.src[link]],
        peer=t.names[t.dst[link]],
        out_link=link,
        in_link=t.reverse[link],
        directions=dirs,
        capacity=capacity,
    )


def load_port_map(path: str | Path, topology: Topology, topology_name: str = "the datacenter") -> PortMap:
    """Read, validate and resolve a port map against a datacenter (see the module docs)."""
    p = Path(path)
    text = read_config_text(p, "a port map")
    return parse_port_map(text, p, topology, topology_name)


_TOML_AT = re.compile(r"^(.*?)\s*\(at line (\d+), column (\d+)\)$")


def parse_port_map(
    text: str, path: Path, topology: Topology, topology_name: str = "the datacenter"
) -> PortMap:
    """Validate the port map in ``text`` (named ``path`` in errors) against ``topology``."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _TOML_AT.match(str(e))
        if m:
            reason, line, col = m.group(1), int(m.group(2)), int(m.group(3))
            raise ConfigError(
                f"{path}:{line}:{col}: invalid TOML: {reason}",
                file=str(path),
                line=line,
                column=col,
                reason=reason,
            ) from None
        raise ConfigError(f"{path}: invalid TOML: {e}", file=str(path), reason=str(e)) from None
    ctx = _Ctx(path, text)
    _check_keys(ctx, doc, TOP_KEYS, "")
    pm = PortMap(path=path, ports=[])
    prom = doc.get("prometheus", {})
    if not isinstance(prom, dict):
        raise ctx.error("prometheus", "expected a table ([prometheus])")
    _check_keys(ctx, prom, PROMETHEUS_KEYS, "prometheus")
    if "target-label" in prom:
        tl = _string(ctx, "prometheus.target-label", prom["target-label"])
        if not _LABEL_NAME.match(tl):
            raise ctx.error("prometheus.target-label", f"not a Prometheus label name: {tl!r}")
        pm.target_label = tl
    cap = prom.get("capacity", "datacenter")
    if cap not in CAPACITIES:
        raise ctx.error("prometheus.capacity", f"expected one of {', '.join(CAPACITIES)}, got {cap!r}")
    pm.capacity = cap
    if "node-labels" in prom:
        pm.node_labels = _labels(ctx, "prometheus.node-labels", prom["node-labels"])
    if "snmp-labels" in prom:
        pm.snmp_labels = _labels(ctx, "prometheus.snmp-labels", prom["snmp-labels"])
    if "ignore-devices" in prom:
        pm.ignore_devices = _globs(ctx, "prometheus.ignore-devices", prom["ignore-devices"])
    if "ignore-interfaces" in prom:
        pm.ignore_interfaces = _globs(ctx, "prometheus.ignore-interfaces", prom["ignore-interfaces"])

    ports = doc.get("port")
    if ports is None:
        raise ConfigError(
            f"{path}: no [[port]] entries; a port map ties series to links with them", file=str(path)
        )
    if not isinstance(ports, list):
        raise ctx.error("port", "expected an array of tables ([[port]])")
    t = _Topo(topology, topology_name)
    seen_series: dict[tuple[str, tuple[tuple[str, str], ...]], Port] = {}
    measured: dict[int, tuple[Port, str]] = {}
    for i, raw in enumerate(ports):
        port = _port(ctx, t, i, raw, pm)
        ident = (port.kind, port.match)
        if ident in seen_series:
            first = seen_series[ident]
            raise ctx.error(
                port.key,
                f"the same series ({port.describe()}) is already mapped by port[{first.index}] "
                f"(line {first.line})",
            )
        seen_series[ident] = port
        for d in port.directions:
            link = port.link(d)
            if link in measured:
                other, od = measured[link]
                raise ctx.error(
                    port.key,
                    f"link {t.link_name(link)} is already measured by port[{other.index}] "
                    f"(line {other.line}, its {'transmit' if od == 'out' else 'receive'} counter); "
                    'measure each directed link once, e.g. with `direction = "out"` at both ends of a cable',
                )
            measured[link] = (port, d)
        pm.ports.append(port)
    if not pm.ports:
        raise ConfigError(
            f"{path}: no [[port]] entries; a port map ties series to links with them", file=str(path)
        )
    return pm
