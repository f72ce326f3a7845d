"""The paper experiment kinds run in Rust: parameters from the Rust schema, one entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from netheat import _netheat
from netheat.errors import ConfigError, InputError
from netheat.experiments import load_experiment, points
from netheat.experiments.registry import get_kind

KINDS = ["baraat"]


def test_every_rust_kind_takes_its_params_from_the_schema() -> None:
    assert _netheat.point_kinds() == KINDS
    for name in KINDS:
        schema = json.loads(_netheat.point_schema(name))
        kind = get_kind(name)
        assert kind.param_names() == list(schema["properties"])
        for p in kind.params:
            assert p.help, f"{name}.{p.name} has no help"
    # Unit-bearing keys keep their unit types (the loader parses "10Gbps" etc.).
    baraat = get_kind("baraat")
    assert (baraat.param("host-link").type, baraat.param("host-link").default) == ("bandwidth", 1e9)  # type: ignore[union-attr]
    assert baraat.param("rtt").type == "duration"  # type: ignore[union-attr]


def test_point_check_names_the_key() -> None:
    _netheat.point_check("baraat", json.dumps({"host-link": "10Gbps", "compute": "5ms"}))
    with pytest.raises(ConfigError) as e:
        _netheat.point_check("baraat", json.dumps({"host-lnik": 1e9}))
    assert e.value.key == "host-lnik"
    assert "did you mean `host-link`?" in e.value.reason
    with pytest.raises(ConfigError) as e:
        _netheat.point_check("baraat", json.dumps({"host-link": "10 parsecs"}))
    assert e.value.key == "host-link"
    with pytest.raises(InputError, match="known: baraat"):
        _netheat.point_check("baraats", "{}")


def _write(tmp_path: Path, base: str) -> Path:
    exp = tmp_path / "b.toml"
    exp.write_text(
        '[experiment]\nname = "baraat-keys"\nkind = "baraat"\n'
        f"[base]\npods = 1\n{base}\n"
        '[[variant]]\nname = "fifo"\npolicy = "fifo"\n'
    )
    return exp


def test_unit_strings_load_from_an_experiment_file(tmp_path: Path) -> None:
    exp = _write(tmp_path, 'rtt = "100us"\nhost-link = "10Gbps"')
    loaded = load_experiment(exp)
    assert loaded.variants[0].params["rtt"] == "100us"


@pytest.mark.parametrize(
    ("line", "key", "reason"),
    [
        ('rtt = "1 parsec"', "base.rtt", "invalid duration"),
        ("hosts-per-rak = 10", "base.hosts-per-rak", "did you mean 'hosts-per-rack'?"),
        ('fanout = "many"', "base.fanout", "expected an integer"),
    ],
)
def test_bad_keys_are_located_in_the_file(tmp_path: Path, line: str, key: str, reason: str) -> None:
    exp = _write(tmp_path, line)
    with pytest.raises(ConfigError) as e:
        load_experiment(exp)
    # Line 6 of the file: [experiment] x3, [base], pods, then the key.
    assert str(e.value).startswith(f"{exp}:6: key `{key}`: ")
    assert reason in str(e.value)


def test_cli_exits_2_on_a_misspelt_key(tmp_path: Path) -> None:
    exp = tmp_path / "b.toml"
    exp.write_text(
        '[experiment]\nname = "b"\nkind = "baraat"\n[base]\nhost-lnik = "10Gbps"\n'
        '[[variant]]\nname = "fifo"\npolicy = "fifo"\n'
    )
    r = subprocess.run(
        [sys.executable, "-m", "netheat.cli", "experiment", "run", str(exp), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert f"{exp}:5: key `base.host-lnik`" in r.stderr
    assert "did you mean 'host-link'?" in r.stderr


def test_run_point_returns_values_tables_and_notes() -> None:
    # Two tasks of one flow each onto one 1 Gbps link, FIFO, all at t = 0:
    # the task table has both, and the mean of their times is the mean of the table's.
    params = {
        "pods": 1,
        "racks-per-pod": 2,
        "hosts-per-rack": 10,
        "aggregators": 1,
        "batch": True,
        "batch-tasks": 2,
        "fanout": 1,
        "policy": "fifo",
        "host-link": "1Gbps",
    }
    out = points.run("baraat", params, 1)
    res = points.result(out)
    tct = res.tables["tasks"]["tct_s"].to_pylist()
    assert len(tct) == 2 and res.values["tasks"] == 2.0
    assert res.values["mean_tct_s"] == sum(tct) / 2
    assert res.notes == []
