"""The built-in ``flow-sim`` scenario kind: a Poisson workload on a datacenter, simulated exactly.

Flows arrive as a Poisson process over ``duration`` seconds between
uniformly random hosts of different racks, with log-normal sizes of mean
``mean-size`` (constant when ``size-sigma`` is 0). The arrival rate makes
every host send ``load`` times its host-link capacity on average. The
workload depends only on the seed, the number of hosts and racks, the host
link capacity and these parameters, so variants that change only the
fabric (e.g. a 4:1 vs a 2:1 ToR uplink) see identical flows. With
``flows`` (a CSV) the generator is bypassed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from netheat._netheat import Topology
from netheat.experiments.registry import Param, PointResult, ScenarioKind, load_topology, register_kind
from netheat.metrics import mean, quantile
from netheat.simulate import simulate


def poisson_flows(
    topo: Topology,
    duration_s: float,
    load: float,
    mean_bytes: float,
    sigma: float,
    seed: int,
) -> dict[str, list[Any]]:
    """Poisson inter-rack flows offering ``load`` times the total host-link capacity.

    Deterministic in ``seed`` and the topology's host count, rack count and
    host-link capacity.
    """
    rng = np.random.default_rng(seed)
    host_bps = float(np.sum(topo.host_ports()["speed_bps"]))
    rate = load * host_bps / (mean_bytes * 8)
    n = int(rng.poisson(rate * duration_s))
    start = np.sort(rng.uniform(0.0, duration_s, n))
    hosts = topo.num_hosts
    per_rack = hosts // max(topo.num_racks, 1)
    src = rng.integers(0, hosts, n)
    if topo.num_racks > 1:
        other = rng.integers(0, hosts - per_rack, n)
        dst = np.where(other >= (src // per_rack) * per_rack, other + per_rack, other)
    else:
        other = rng.integers(0, hosts - 1, n)
        dst = np.where(other >= src, other + 1, other)
    if sigma > 0:
        size = rng.lognormal(np.log(mean_bytes) - sigma**2 / 2, sigma, n)
    else:
        size = np.full(n, mean_bytes)
    size = np.maximum(np.round(size), 1.0)
    return {"start_s": start.tolist(), "src": src.tolist(), "dst": dst.tolist(), "bytes": size.tolist()}


def run_flow_sim(params: dict[str, Any], seed: int) -> PointResult:
    """Run one ``flow-sim`` point: generate (or read) flows and simulate them."""
    topo = load_topology(params)
    ecmp_seed = seed if params["ecmp-seed"] is None else int(params["ecmp-seed"])
    flows: Any
    if params["flows"] is not None:
        flows = params["flows"]
    else:
        flows = poisson_flows(
            topo,
            params["duration"],
            params["load"],
            params["mean-size"],
            params["size-sigma"],
            seed,
        )
    res = simulate(topo, flows, window=params["window"], seed=ecmp_seed)
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
    return PointResult(tables={"flows": res.flows, "links": res.links}, values=values)


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
            Param("ecmp-seed", "int", None, "seed of the per-flow ECMP hash (default: the point's seed)"),
            Param("hot-threshold", "float", 0.75, "utilization above which a link-window is hot"),
        ),
        values=("mean_fct_s", "p99_fct_s", "hot_tor_share", "completed_share", "flows"),
        tables=("flows", "links"),
        description="Poisson inter-rack flows on a datacenter, simulated by the exact flow-level engine",
    )
)
