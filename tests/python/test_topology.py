"""The Topology binding: summary figures and paths, checked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import netheat
from netheat import ConfigError, InputError, Topology

EXAMPLE = """
[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"""


def test_issue_example() -> None:
    t = Topology.from_toml(EXAMPLE)
    assert (t.kind, t.num_hosts, t.num_racks, t.num_links) == ("two-tier", 16, 4, 40)
    s = t.summary()
    assert s["nodes"] == {"host": 16, "tor": 4, "core": 1}
    assert s["oversubscription"]["tor"] == (4.0, 4.0, 4.0)
    assert s["bisection_bps"] == 20e9
    assert s["layers"]["tor-agg"] == {"links": 4, "capacity_bps": 40e9}


def test_hosts_by_index_or_name() -> None:
    t = Topology.from_toml(EXAMPLE)
    assert t.host("r2h1") == 9
    assert t.host(9) == 9
    assert t.num_paths("r0h0", 13) == 1
    (path,) = t.paths(0, "r3h1")
    links = t.links()
    names = t.nodes()["name"]
    hops = [names[links["src"][path[0]]]] + [names[links["dst"][link]] for link in path]
    assert hops == ["r0h0", "tor0", "core", "tor3", "r3h1"]
    with pytest.raises(InputError, match="host r9h0 does not exist"):
        t.host("r9h0")


def test_config_error_attributes(tmp_path: Path) -> None:
    bad = tmp_path / "dc.toml"
    bad.write_text(EXAMPLE.replace('tor-uplink = "10Gbps"', 'tor-uplink = "10Gbs"'))
    with pytest.raises(ConfigError) as info:
        netheat.load_topology(str(bad))
    e = info.value
    assert (e.file, e.line, e.key) == (str(bad), 7, "topology.tor-uplink")
    assert "unknown unit `Gbs`" in e.reason
    assert isinstance(e, netheat.NetheatError)


def test_subways_summary(examples: Path) -> None:
    t = Topology.load(examples / "subways-type1.toml")
    s = t.summary()
    assert s["subways"] == {"wiring": "type1", "ports_per_host": 2, "loop_size": 12, "clusters_per_loop": 1}
    ports = t.host_ports()
    # Rack 11's servers wrap around to ToR 0 of the same loop.
    host = t.host("r11h0")
    assert [tor for h, tor in zip(ports["host"], ports["tor"], strict=True) if h == host] == [11, 0]


def test_racks_and_events(examples: Path) -> None:
    t = Topology.load(examples / "storage-mixed.toml")
    r = t.racks()
    assert r["kind"] == ["compute"] * 3 + ["mixed"] + ["disk"] * 4
    assert r["uplink_bps"][6] == 10e9
    e = t.events()
    assert e["time_s"] == [7200.0] * 4 + [10800.0] * 4
    assert e["capacity_bps"][:4] == [20e9] * 4
