"""netheat: find, explain and remove datacenter network hotspots.

The heavy lifting is in Rust (``netheat._netheat``); this package loads
configs, runs simulations and experiments, and writes tables, plots and
reports.
"""

from __future__ import annotations

from netheat._netheat import Topology, __version__
from netheat.errors import ConfigError, EngineError, InputError, NetheatError

__all__ = [
    "Advisor",
    "ConfigError",
    "EngineError",
    "InputError",
    "NetheatError",
    "Scenario",
    "Topology",
    "__version__",
    "load_topology",
]


def load_topology(path: str) -> Topology:
    """Load and validate a datacenter TOML file."""
    return Topology.load(path)


def __getattr__(name: str) -> object:
    # `netheat.Scenario` without importing pyarrow and matplotlib at `import netheat`.
    if name == "Scenario":
        from netheat.scenario import Scenario

        return Scenario
    if name == "Advisor":
        from netheat.advisor import Advisor

        return Advisor
    raise AttributeError(f"module 'netheat' has no attribute {name!r}")
