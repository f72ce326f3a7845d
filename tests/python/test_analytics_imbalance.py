"""netheat.analytics.imbalance (Cv, stability) and the HTML report rendered in headless Chromium."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from netheat.analytics import imbalance as im
from netheat.analytics.io import scan_links
from netheat.analytics.report import analyze
from netheat.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from test_analytics_latency import build


def test_cv_of_known_vectors() -> None:
    assert im.coefficient_of_variation([1.0, 1.0, 1.0]) == 0.0
    assert im.coefficient_of_variation([1.0, 3.0]) == pytest.approx(0.5)  # mean 2, population std 1
    assert im.coefficient_of_variation([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == pytest.approx(2.0 / 5.0)
    assert math.isnan(im.coefficient_of_variation([0.0, 0.0]))
    assert math.isnan(im.coefficient_of_variation([]))


def test_cv_per_interval(tmp_path: Path) -> None:
    p = tmp_path / "l.csv"
    p.write_text(
        "timestamp,link,direction,layer,utilization\n"
        "0,a,up,tor-agg,0.2\n0,b,up,tor-agg,0.6\n0,c,up,agg-spine,0.9\n"
        "5,a,up,tor-agg,0.5\n5,b,up,tor-agg,0.5\n5,c,up,agg-spine,0.1\n"
    )
    tel = scan_links(p)
    cv = im.imbalance(tel, im.bottleneck_links(tel))
    assert cv["links"].to_list() == [2, 2]
    assert cv["cv"].to_list() == pytest.approx([0.5, 0.0])


def test_stability_of_constructed_series() -> None:
    # dt = 5 s; relative tolerance 5%. Hand count (see the docstring of netheat.analytics.imbalance):
    # h=5 (k=1): 7 of 8 samples stable; h=10 (k=2): 5 of 7; h=20 (k=4): 2 of 5; h=40 (k=8): 0 of 1.
    u = [0.50, 0.51, 0.52, 0.60, 0.60, 0.60, 0.60, 0.60, 0.60]
    series = pl.DataFrame(
        {"lk": [1] * len(u), "timestamp": [5.0 * i for i in range(len(u))], "utilization": u}
    )
    # A second link interleaved must not leak into the first one's windows.
    other = pl.DataFrame({"lk": [2] * 3, "timestamp": [0.0, 5.0, 10.0], "utilization": [0.6, 0.6, 0.6]})
    s = im.stability_series(
        pl.concat([series, other]).sample(fraction=1.0, shuffle=True, seed=1),
        5.0,
        (5.0, 10.0, 20.0, 40.0, 7.0),
    )
    rows = {r["horizon_s"]: r for r in s.iter_rows(named=True)}
    assert (rows[5.0]["stable"], rows[5.0]["samples"]) == (7 + 2, 8 + 2)
    assert (rows[10.0]["stable"], rows[10.0]["samples"]) == (5 + 1, 7 + 1)
    assert (rows[20.0]["stable"], rows[20.0]["samples"]) == (2, 5)
    assert (rows[40.0]["stable"], rows[40.0]["samples"]) == (0, 1)
    assert rows[7.0]["probability"] is None
    only = im.stability_series(series, 5.0, (5.0, 10.0))
    assert only["probability"].to_list() == pytest.approx([7 / 8, 5 / 7])


def test_gap_breaks_stability_window() -> None:
    series = pl.DataFrame({"lk": [1, 1, 1], "timestamp": [0.0, 5.0, 15.0], "utilization": [0.5, 0.5, 0.5]})
    s = im.stability_series(series, 5.0, (5.0, 10.0))
    assert s["samples"].to_list() == [1, 0]


def test_cli_reports_skips_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lp, sp = build(tmp_path)
    assert main(["analyze", "--links", str(lp), "--latency", str(sp), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "skipped 1: no link or ToR listed" in out
    html = (tmp_path / "o" / "report.html").read_text()
    assert "no link or ToR listed" in html and "Load-tolerance" in html
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,link,direction,utilization\n0,a,up,1.7\n")
    assert main(["analyze", "--links", str(bad), "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "1.7" in err and err.count("\n") == 1


def test_report_figures_render_in_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium not installed (make test-python installs it)")
    lp, sp = build(tmp_path)
    res = analyze(lp, sp, tmp_path / "out")
    assert res.report is not None
    html = res.report.read_text()
    n_fig = html.count("<figure>")
    assert n_fig == len(res.figures) >= 9
    assert "<figcaption>" in html and "http://" not in html and "https://" not in html
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        res.report.resolve().as_uri(),
    ]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    assert f'data-figures="{n_fig}"' in dom
    assert len(re.findall(r'data-rendered="1"', dom)) == n_fig
    assert 'data-rendered="0"' not in dom
