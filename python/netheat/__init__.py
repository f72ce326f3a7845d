"""netheat: find, explain and remove datacenter network hotspots.

The heavy lifting is in Rust (``netheat._netheat``); this package loads
configs, runs simulations and experiments, and writes tables, plots and
reports.
"""

from __future__ import annotations

from netheat._netheat import Topology, __version__
from netheat.errors import ConfigError, EngineError, InputError, NetheatError

__all__ = [
    "ConfigError",
    "EngineError",
    "InputError",
    "NetheatError",
    "Topology",
    "__version__",
    "load_topology",
]


def load_topology(path: str) -> Topology:
    """Load and validate a datacenter TOML file."""
    return Topology.load(path)
