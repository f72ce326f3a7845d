"""The ``flow-sim`` kind: shorthand for a one-generator scenario on a datacenter file.

A point is the scenario (``netheat.scenario``, ECMP with fair sharing on the
exact flow engine) that this kind's parameters spell: the ``topology``
file with its ``topology.<key>`` overrides, and either the flows of a CSV
(``flows``, replayed) or the workload schema's Poisson generator: flows
between hosts of different racks arriving over ``duration`` at ``load``
times the host links' capacity, with log-normal sizes of mean
``mean-size`` and ``size-sigma`` (constant sizes at 0). The workload
depends on the seed and the datacenter's hosts and host links, so variants
that change only the fabric (a 4:1 vs a 2:1 ToR uplink) see identical
flows. For anything else (other generators, applications, policies), use
the ``scenario`` kind over a scenario file (``experiments/example-flow-sim.toml``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from netheat.experiments.registry import Param, PointResult, ScenarioKind, register_kind, topology_overrides
from netheat.metrics import mean, quantile
from netheat.scenario import Scenario, toml_value


def scenario_text(params: dict[str, Any], seed: int) -> str:
    """The scenario a ``flow-sim`` point runs, as TOML text."""
    lines = [
        "[scenario]",
        f"seed = {seed}",
        f'window = "{params["window"]!r}s"',
        "[topology]",
        f"file = {toml_value(params['topology'])}",
        *(f"{k} = {toml_value(v)}" for k, v in topology_overrides(params).items()),
        "[[workload.traffic]]",
    ]
    if params["flows"] is not None:
        lines += ['kind = "replay"', f"file = {toml_value(params['flows'])}"]
    else:
        lines += [
            'kind = "poisson"',
            f'duration = "{params["duration"]!r}s"',
            f"load = {params['load']!r}",
            'links = "host-uplinks"',
            f'sizes = {{ dist = "lognormal", mean = "{params["mean-size"]!r}B", '
            f"sigma = {params['size-sigma']!r} }}",
            'pattern = "inter-rack"',
        ]
    return "\n".join(lines) + "\n"


def run_flow_sim(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``flow-sim`` point: generate (or read) flows and simulate them."""
    res = Scenario.from_text(scenario_text(params, seed)).run()
    fct = res.flows.column("fct_s").to_numpy(zero_copy_only=False).astype(float)
    done = fct[~np.isnan(fct)]
    links = res.links
    tor_up = pc.and_(
        pc.equal(links.column("layer").cast("string"), "tor-agg"),
        pc.equal(links.column("direction").cast("string"), "up"),
    )
    if params["flows"] is None:
        tor_up = pc.and_(tor_up, pc.less(links.column("window_start_s"), params["duration"]))
    util = links.filter(tor_up).column("utilization").to_numpy()
    n = res.flows.num_rows
    values = {
        "flows": float(n),
        "completed_share": float(len(done) / n) if n else float("nan"),
        "mean_fct_s": mean(done),
        "p99_fct_s": quantile(done, 0.99),
        "hot_tor_share": float(np.mean(util > params["hot-threshold"])) if len(util) else float("nan"),
    }
    return PointResult(tables={"flows": res.flows, "links": links}, values=values)


FLOW_SIM = register_kind(
    ScenarioKind(
        name="flow-sim",
        run_point=run_flow_sim,
        params=(
            Param(
                "topology",
                "path",
                help="datacenter TOML file (relative to the experiment file)",
                required=True,
            ),
            Param("flows", "path", help="flow CSV to simulate instead of the Poisson generator"),
            Param("load", "float", 0.3, "offered load per host, as a fraction of its host-link capacity"),
            Param("duration", "duration", 30.0, "arrival period of the generated flows"),
            Param("mean-size", "bytes", 10e6, "mean flow size"),
            Param("size-sigma", "float", 1.5, "sigma of the log-normal flow sizes (0: constant sizes)"),
            Param("window", "duration", 1.0, "link-utilization window"),
            Param("hot-threshold", "float", 0.75, "utilization above which a link-window is hot"),
        ),
        values=("mean_fct_s", "p99_fct_s", "hot_tor_share", "completed_share", "flows"),
        tables=("flows", "links"),
        description=(
            "shorthand scenario: Poisson inter-rack flows (or a flow CSV) on a datacenter file, "
            "ECMP and fair sharing"
        ),
    )
)
