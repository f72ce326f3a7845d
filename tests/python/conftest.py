"""Shared fixtures of the Python tests."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "topologies"


@pytest.fixture
def examples() -> Path:
    """Directory of the bundled example datacenters."""
    return EXAMPLES
