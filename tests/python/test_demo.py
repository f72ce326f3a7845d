"""The demo writes a self-contained report with every figure embedded."""

from __future__ import annotations

import re
from pathlib import Path

from netheat.demo import DATACENTERS, run_demo


def test_demo_report(tmp_path: Path) -> None:
    report = run_demo(tmp_path)
    html = report.read_text()
    assert html.startswith("<!doctype html>")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) >= len(DATACENTERS)
    assert all(len(i) > 1000 for i in images)
    assert "http://" not in html and "https://" not in html
