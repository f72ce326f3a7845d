"""`netheat reproduce`: runs the bundled experiments and writes a report with every figure."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest

from netheat.cli import main
from netheat.experiments import load_experiment
from netheat.experiments.reproduce import PAPER_RESULTS, available


def test_every_bundled_experiment_validates() -> None:
    """Each bundled experiment file loads (kinds, parameters, metrics, paths) in both modes."""
    names = list(available())
    assert "example-flow-sim" in names
    for n, path in available().items():
        assert load_experiment(path).name == n
        assert load_experiment(path, quick=True).name == n


def test_reproduce_quick_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report has each run experiment's metrics, command, figures and the status of the others.

    One small experiment keeps this fast; ``make demo`` runs them all.
    """
    names = ["example-flow-sim"]
    out = tmp_path / "rep"
    assert main(["reproduce", *names, "--quick", "--out", str(out), "--workers", "2"]) == 0
    html = (out / "report.html").read_text()
    for n in names:
        assert (out / n / "summary.json").is_file()
        assert f"netheat experiment run experiments/{n}.toml --out {out / n} --quick" in html
    missing = [n for n in PAPER_RESULTS if n not in available()]
    if missing:
        assert "Not reproduced yet" in html and all(n in html for n in missing)
    assert "mean FCT 4:1 / 2:1 at load 0.2" in html
    figures = html.count('<img alt="')
    assert figures == 2 * len(names)
    for chunk in html.split('src="data:image/png;base64,')[1:]:
        assert base64.b64decode(chunk.split('"', 1)[0])[:8] == b"\x89PNG\r\n\x1a\n"


def test_reproduce_unknown_name_lists_available(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown name is an error listing the bundled experiments; nothing runs."""
    assert main(["reproduce", "nosuch", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "nosuch" in err and "example-flow-sim" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    """Headless Chromium loads the report and every figure is an image in the DOM."""
    out = tmp_path / "rep"
    assert main(["reproduce", "example-flow-sim", "--quick", "--out", str(out), "--workers", "2"]) == 0
    r = subprocess.run(
        [
            "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'chrome'}", "--dump-dom", (out / "report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "netheat: reproduced results" in dom
    assert dom.count("<img ") == 2
    assert dom.count('src="data:image/png;base64,') == 2


def test_no_bundled_datacenter_is_another_with_other_settings() -> None:
    # Settings a variant or sweep can give (`"topology.<key>"` overrides) are not separate files:
    # two files with the same tables and the same [topology] keys are one datacenter file with
    # overrides (as the loop sizes and port counts of subways-curves.toml are).
    import itertools
    import tomllib

    root = Path(__file__).resolve().parents[2] / "experiments" / "topologies"
    docs = {p.name: tomllib.loads(p.read_text()) for p in sorted(root.glob("*.toml"))}
    assert len(docs) >= 4

    def shape(doc: dict[str, object]) -> tuple[object, ...]:
        rest = {k: v for k, v in doc.items() if k != "topology"}
        top = doc["topology"]
        assert isinstance(top, dict)
        return (sorted(top), repr(sorted(rest.items())))

    for (a, da), (b, db) in itertools.combinations(docs.items(), 2):
        assert shape(da) != shape(db), f"{b} is {a} with other [topology] values: use overrides"


def test_scorecard_counts_paper_numbers_and_lists_targets() -> None:
    """Five paper numbers (+5%, -20%, +50%, one of 0 and +100%), three targets, one met with its
    interval inside, one met by the mean only and one missed: the counts and rows are those by
    hand, and the missed one is listed again with its note."""
    from netheat.experiments.reproduce import scorecard

    def e(ours: float, paper: float | None, **kw: object) -> dict[str, object]:
        rel = None if paper in (None, 0) else (ours - paper) / abs(paper)
        base = {"ours": ours, "paper": paper, "unit": "x", "rel_diff": rel, "ci95": None}
        base |= {"target": None, "met": None, "met_over_seeds": None}
        return base | kw

    summaries = {
        "a": {"metrics": {"m1": e(1.05, 1.0), "m2": e(0.8, 1.0, target="within 20% of the paper",
                                                         met=True, met_over_seeds=None, ci95=[0.7, 0.9])}},
        "b": {"metrics": {"m3": e(1.5, 1.0, target="within 0.6 of the paper", met=True, met_over_seeds=True,
                                  ci95=[1.4, 1.6]), "m4": e(0.2, 0.0), "m5": e(3.0, None),
                          "m6": e(2.0, 1.0, target="within 20% of the paper", met=False,
                                  note="Paper 1.0; ours is twice it because of a reason.")}},
    }  # fmt: skip
    sec = scorecard(summaries)
    assert "5 metric(s) of the runs have a paper number; 1 are within 10% of it and 2 within 25%" in sec.text
    assert "(1 without a relative difference" in sec.text
    assert "3 have a target" in sec.text and "2 are met, 1 of them with the whole 95% interval" in sec.text
    table, why = sec.tables
    assert [r[:2] for r in table.rows] == [["a", "m2"], ["b", "m3"], ["b", "m6"]]
    assert table.rows[2][4:] == ["+100.0%", "x", "within 20% of the paper", "not met"]
    # Only the missed target is listed again, with its note.
    assert why.rows == [["b", "m6", "Paper 1.0; ours is twice it because of a reason."]]
    straddles = "met (its interval straddles the target)"
    assert table.rows[0][4:] == ["-20.0%", "x", "within 20% of the paper", straddles]
    assert table.rows[1][4:] == ["+50.0%", "x", "within 0.6 of the paper", "met"]
