"""Experiment files: bad input fails before any point runs, naming the file, key and valid names."""

from __future__ import annotations

from pathlib import Path

import pytest

from netheat.cli import main
from netheat.errors import ConfigError
from netheat.experiments import load_experiment, run_experiment
from netheat.experiments.runner import expand_points

TOPO = """[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "{speed}"
tor-uplink = "100Gbps"
"""

GOOD = """[experiment]
name = "t"
seeds = [3]

[base]
topology = "dc.toml"
duration = "2s"
load = 0.1

[[variant]]
name = "a"

[[variant]]
name = "b"
load = 0.2

[sweep]
mean-size = ["1MB", "2MB"]

[[metric]]
name = "r"
kind = "ratio"
of = "mean_fct_s"
numerator = "a"
denominator = "b"
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "dc.toml").write_text(TOPO.format(speed="10Gbps"))
    f = tmp_path / "exp.toml"
    f.write_text(text)
    return f


def test_good_file_expands_to_paired_points(tmp_path: Path) -> None:
    """Sweep x seeds x variants; paired points share the seed; hashes are content addresses."""
    exp = load_experiment(_write(tmp_path, GOOD))
    points = expand_points(exp)
    assert [(p.variant, p.label, p.seed) for p in points] == [
        ("a", "mean-size=1MB", 3),
        ("b", "mean-size=1MB", 3),
        ("a", "mean-size=2MB", 3),
        ("b", "mean-size=2MB", 3),
    ]
    assert points[0].params["mean-size"] == 1e6 and points[0].params["duration"] == 2.0
    assert points[0].params["topology"] == str(tmp_path / "dc.toml")
    assert len({p.hash for p in points}) == 4
    # Moving the files elsewhere keeps the hashes (files enter by content).
    other = tmp_path / "moved"
    other.mkdir()
    again = expand_points(load_experiment(_write(other, GOOD)))
    assert [p.hash for p in again] == [p.hash for p in points]
    # Changing the topology file's content changes them.
    (other / "dc.toml").write_text(TOPO.format(speed="20Gbps"))
    assert expand_points(load_experiment(other / "exp.toml"))[0].hash != points[0].hash


def test_variant_restricted_to_sweep_values(tmp_path: Path) -> None:
    """A variant's `where` keeps only its points at those sweep values; metrics must pin them."""
    text = GOOD.replace("load = 0.2\n", 'load = 0.2\nwhere = { mean-size = "2MB" }\n', 1)
    metric_where = 'denominator = "b"\nwhere = { mean-size = "2MB" }\n'
    exp = load_experiment(_write(tmp_path, text.replace('denominator = "b"\n', metric_where)))
    points = expand_points(exp)
    assert [(p.variant, p.label) for p in points] == [
        ("a", "mean-size=1MB"),
        ("a", "mean-size=2MB"),
        ("b", "mean-size=2MB"),
    ]
    # The paired point keeps its hash (same parameters and seed as unrestricted).
    full = expand_points(load_experiment(_write(tmp_path, GOOD)))
    assert points[2].hash == full[3].hash
    # A list of values is accepted too.
    listed = text.replace('"2MB" }', '["1MB", "2MB"] }').replace('denominator = "b"\n', metric_where)
    assert len(expand_points(load_experiment(_write(tmp_path, listed)))) == 4
    # The metric does not pin the restricted value: its means would cover
    # different points of a and b.
    msg = r"variant 'b' runs only at mean-size in \['2MB'\]; set `where.mean-size`"
    with pytest.raises(ConfigError, match=msg):
        load_experiment(_write(tmp_path, text))
    # Values that are not swept.
    bad = text.replace('"2MB" }', '"3MB" }')
    msg = r"variant\[1\]\.where\.mean-size`: '3MB' is not one of the swept values"
    with pytest.raises(ConfigError, match=msg):
        load_experiment(_write(tmp_path, bad))
    msg = r"variant\[1\]\.where\.size`: not a swept parameter; swept: mean-size"
    with pytest.raises(ConfigError, match=msg):
        load_experiment(_write(tmp_path, text.replace("{ mean-size", "{ size")))


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        # Unknown scenario kind (policy): lists the known kinds.
        (('name = "a"\n', 'name = "a"\nkind = "utp-magic"\n'), ["utp-magic", "flow-sim", "variant[0].kind"]),
        # Unknown metric: lists the known metrics.
        (
            ('kind = "ratio"', 'kind = "p42"'),
            ["p42", "mean_fct_s", "hot_tor_share", "ratio", "metric[0].kind"],
        ),
        # Unknown parameter: lists the kind's parameters.
        (("load = 0.2\n", "lod = 0.2\n"), ["lod", "load", "mean-size", "topology", "variant[1].lod"]),
        # Unknown swept parameter.
        (("mean-size = [", "meansize = ["), ["meansize", "mean-size", "sweep.meansize"]),
        # Unknown variant in a metric.
        (('numerator = "a"', 'numerator = "zz"'), ["zz", "variants: a, b"]),
        # Bad unit string.
        (('duration = "2s"', 'duration = "2 parsecs"'), ["base.duration"]),
        # Missing file.
        (('topology = "dc.toml"', 'topology = "nope.toml"'), ["nope.toml", "base.topology"]),
        # Unknown section.
        (("[sweep]", "[sweeep]"), ["sweeep", "sweep", "metric"]),
    ],
)
def test_bad_input_fails_before_any_point_runs(
    tmp_path: Path, edit: tuple[str, str], needles: list[str]
) -> None:
    """Each mistake is a ConfigError naming the file, a line and the key, listing the valid names."""
    old, new = edit
    assert old in GOOD
    f = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError) as ei:
        load_experiment(f)
    msg = str(ei.value)
    assert msg.startswith(f"{f}:"), msg
    for n in needles:
        assert n in msg, (n, msg)


def test_error_names_the_line(tmp_path: Path) -> None:
    """The best-effort line points at the offending key."""
    f = _write(tmp_path, GOOD.replace("load = 0.2\n", "lod = 0.2\n"))
    with pytest.raises(ConfigError) as ei:
        load_experiment(f)
    line = f.read_text().splitlines().index("lod = 0.2") + 1
    assert ei.value.line == line
    assert str(ei.value).startswith(f"{f}:{line}:")


def test_errors_in_a_variant_or_metric_table_name_its_line(tmp_path: Path) -> None:
    """A key of the i-th [[variant]] or [[metric]] table is looked up in that table, not the first."""
    where = 'where = { mean-size = "3MB" }\n'
    pin = 'where = { mean-size = "1MB" }\n'
    text = GOOD.replace('name = "a"\n', 'name = "a"\n' + pin, 1)
    text = text.replace('denominator = "b"\n', 'denominator = "b"\n' + pin)
    cases = [
        # The second variant's `where`, after the first variant's.
        text.replace("load = 0.2\n", "load = 0.2\n" + where, 1),
        # A second metric's `where`, after a variant's.
        text + '\n[[metric]]\nname = "s"\nkind = "mean_fct_s"\nvariant = "b"\n' + where,
    ]
    for bad in cases:
        f = _write(tmp_path, bad)
        with pytest.raises(ConfigError, match="3MB") as ei:
            load_experiment(f)
        line = bad.splitlines().index(where.strip()) + 1
        assert ei.value.line == line, (str(ei.value), line)


def test_cli_bad_file_exits_2_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`netheat experiment run` prints one error line, exits 2 and writes no point."""
    f = _write(tmp_path, GOOD.replace('kind = "ratio"', 'kind = "p42"'))
    out = tmp_path / "out"
    assert main(["experiment", "run", str(f), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "p42" in err and "mean_fct_s" in err
    assert not out.exists()


def test_bad_workers_and_backend_arguments(tmp_path: Path) -> None:
    """--ray-address without --backend ray and --workers 0 are input errors."""
    from netheat.errors import InputError

    exp = load_experiment(_write(tmp_path, GOOD))
    with pytest.raises(InputError, match="--backend ray"):
        run_experiment(exp, tmp_path / "o", ray_address="127.0.0.1:1")
    with pytest.raises(InputError, match="at least 1"):
        run_experiment(exp, tmp_path / "o", workers=0)


def test_a_variant_has_its_own_quick_form(tmp_path: Path) -> None:
    """`quick = {...}` in a variant overrides [quick] for that variant, in quick runs only."""
    text = GOOD.replace('name = "b"\nload = 0.2', 'name = "b"\nload = 0.2\nquick = { load = 0.05 }') + (
        "\n[quick]\nload = 0.3\n"
    )
    path = _write(tmp_path, text)
    full = {p.variant: p.params["load"] for p in expand_points(load_experiment(path))}
    quick = {p.variant: p.params["load"] for p in expand_points(load_experiment(path, quick=True))}
    assert full == {"a": 0.1, "b": 0.2}
    assert quick == {"a": 0.3, "b": 0.05}
    bad = _write(tmp_path, GOOD.replace('name = "b"\nload = 0.2', 'name = "b"\nquick = 3'))
    with pytest.raises(ConfigError, match=r"variant\[1\]\.quick"):
        load_experiment(bad, quick=True)
    typo = _write(tmp_path, GOOD.replace('name = "b"\nload = 0.2', 'name = "b"\nquick = { lod = 0.05 }'))
    with pytest.raises(ConfigError, match=r"variant\[1\]\.quick\.lod") as e:
        load_experiment(typo, quick=True)
    assert "load" in str(e.value)


@pytest.mark.parametrize(
    ("target", "needles"),
    [
        # Two forms at once.
        ("{ rel = 0.2, abs = 0.1 }", ["metric[0].target`", "exactly one of", "rel and abs"]),
        # A range and a tolerance.
        ("{ rel = 0.2, min = 1 }", ["exactly one of", "rel and min/max"]),
        # None.
        ("{}", ["exactly one of", "got none"]),
        # A negative tolerance.
        ("{ abs = -0.1 }", ["metric[0].target.abs`", "not negative"]),
        # Not a number.
        ('{ rel = "20%" }', ["metric[0].target.rel`", "finite number", "'20%'"]),
        # An unknown key lists the valid ones.
        ("{ within = 0.2 }", ["metric[0].target.within`", "rel", "abs", "min", "max"]),
        # Not a table.
        ("0.2", ["metric[0].target`", "expected a table"]),
        # An empty range.
        ("{ min = 80, max = 50 }", ["`min` 80 is above `max` 50"]),
    ],
)
def test_bad_targets_are_refused(tmp_path: Path, target: str, needles: list[str]) -> None:
    """A metric's `target` is checked like every other key: file, line, key and what is wrong."""
    text = GOOD.replace('denominator = "b"\n', f'denominator = "b"\npaper = 1.5\ntarget = {target}\n')
    f = _write(tmp_path, text)
    with pytest.raises(ConfigError) as ei:
        load_experiment(f)
    msg = str(ei.value)
    line = text.splitlines().index(f"target = {target}") + 1
    assert msg.startswith(f"{f}:{line}:"), msg
    for n in needles:
        assert n in msg, (n, msg)


def test_a_target_relative_to_the_paper_needs_a_paper_number(tmp_path: Path) -> None:
    """`rel` and `abs` measure from the paper's number: without one (or `rel` with 0) they mean nothing."""
    for paper, target, needle in [
        ("", "{ rel = 0.2 }", "needs the metric's `paper` number"),
        ("", "{ abs = 0.2 }", "needs the metric's `paper` number"),
        ("paper = 0\n", "{ rel = 0.2 }", "the paper's number is 0"),
    ]:
        text = GOOD.replace('denominator = "b"\n', f'denominator = "b"\n{paper}target = {target}\n')
        with pytest.raises(ConfigError, match=needle):
            load_experiment(_write(tmp_path, text))
    # A range needs no paper number, and `abs` around a paper number of 0 is fine.
    for paper, target in [("", "{ min = 1 }"), ("paper = 0\n", "{ abs = 0.1 }")]:
        text = GOOD.replace('denominator = "b"\n', f'denominator = "b"\n{paper}target = {target}\n')
        (spec,) = load_experiment(_write(tmp_path, text)).metrics
        assert spec.target is not None


def test_a_metric_at_a_point_quick_drops_is_left_out_of_quick_runs(tmp_path: Path) -> None:
    """A metric pinned to a sweep value only the full grid has loads in full and is absent under
    --quick; a value in neither grid is still an error, in both modes."""
    text = GOOD + '\n[quick.sweep]\nmean-size = ["1MB"]\n'
    pinned = text + (
        '\n[[metric]]\nname = "r2"\nkind = "ratio"\nof = "mean_fct_s"\nnumerator = "a"\n'
        'denominator = "b"\nwhere = { mean-size = "2MB" }\n'
    )
    f = _write(tmp_path, pinned)
    assert [m.name for m in load_experiment(f).metrics] == ["r", "r2"]
    assert [m.name for m in load_experiment(f, quick=True).metrics] == ["r"]
    # The quick grid runs 2 points (1 size x 2 variants), the full one 4.
    assert len(expand_points(load_experiment(f, quick=True))) == 2
    bad = _write(tmp_path, pinned.replace('where = { mean-size = "2MB" }', 'where = { mean-size = "3MB" }'))
    msg = r"metric\[1\]\.where\.mean-size`: '3MB' is not one of the swept"
    for quick in (False, True):
        with pytest.raises(ConfigError, match=msg):
            load_experiment(bad, quick=quick)
