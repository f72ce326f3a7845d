"""The netheat command: success paths and one clear error per bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from netheat.cli import build_parser, main

BASE = """[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"""

SUBWAYS = """[topology]
kind = "subways"
wiring = "type1"
pods = 1
racks-per-pod = 12
hosts-per-rack = 2
host-link = "10Gbps"
ports-per-host = 3
loop-size = 2
tor-uplink = "10Gbps"
"""

# (name, file text, expected "line:col: key `...`" prefix, words in the reason)
BAD = [
    ("unknown-key", BASE + 'uplink = "1Gbps"\n', "7:1: key `topology.uplink`", "unknown key"),
    (
        "wrong-unit",
        BASE.replace('host-link = "10Gbps"', 'host-link = "10Gbs"'),
        "5:13: key `topology.host-link`",
        "unknown unit",
    ),
    (
        "negative",
        BASE.replace('tor-uplink = "10Gbps"', 'tor-uplink = "-1Gbps"'),
        "6:14: key `topology.tor-uplink`",
        "negative",
    ),
    (
        "zero",
        BASE.replace('host-link = "10Gbps"', 'host-link = "0Gbps"'),
        "5:1: key `topology.host-link`",
        "positive",
    ),
    ("tor-ports", BASE + "tor-ports = 3\n", "7:1: key `topology.tor-ports`", "only 3"),
    ("subways-l-lt-p", SUBWAYS, "9:1: key `topology.loop-size`", "l >= p"),
    (
        "missing-rack",
        BASE + '\n[[rack-group]]\nracks = [2, 4]\nkind = "disk"\n',
        "9:1: key `rack-group[0].racks`",
        "rack 4 does not exist",
    ),
]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netheat.cli", *args], capture_output=True, text=True, check=False
    )


def test_check_ok(examples: Path) -> None:
    r = run_cli("topo", "check", str(examples / "two-tier-4x4.toml"))
    assert r.returncode == 0, r.stderr
    assert "ok (two-tier, 16 hosts, 4 racks, 40 links)" in r.stdout


@pytest.mark.parametrize(("name", "text", "where", "why"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_exits_2_with_one_message(
    tmp_path: Path, name: str, text: str, where: str, why: str
) -> None:
    f = tmp_path / f"{name}.toml"
    f.write_text(text)
    r = run_cli("topo", "check", str(f))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {f}:{where}: "), lines[0]
    assert why in lines[0]
    assert "Traceback" not in r.stderr


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topo", "show", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert "nope.toml: cannot read" in err


def test_show_and_json(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topo", "show", str(examples / "baraat-36k.toml")]) == 0
    out = capsys.readouterr().out
    assert "36000 hosts, 900 tors, 120 aggs, 16 spines" in out
    assert "tor   2.00:1" in out
    assert main(["topo", "show", "--json", str(examples / "two-tier-4x4.toml")]) == 0
    assert '"bisection_bps": 20000000000.0' in capsys.readouterr().out


def test_draw(examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.png"
    assert main(["topo", "draw", str(examples / "subways-type2.toml"), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_help_lists_commands() -> None:
    text = build_parser().format_help()
    for cmd in ("topo", "simulate", "demo"):
        assert cmd in text
    r = run_cli("topo", "--help")
    assert r.returncode == 0 and "check" in r.stdout and "draw" in r.stdout
    r = run_cli("frobnicate")
    assert r.returncode == 2
