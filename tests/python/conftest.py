"""Shared fixtures of the Python tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from promtest import Exporter, run_prometheus

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "topologies"


@pytest.fixture
def examples() -> Path:
    """Directory of the bundled example datacenters."""
    return EXAMPLES


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[str, Exporter]]:
    """A real Prometheus scraping the test exporter of ``promtest`` every second (skips if absent)."""
    with run_prometheus(tmp_path) as running:
        yield running
