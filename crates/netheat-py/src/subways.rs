//! Subways shuffle runs and ToR-failure analysis for Python (`netheat.experiments.subways`).

use netheat_repro::subways::{run_shuffle, Pattern, Placement, ShuffleJob};
use netheat_subways::{failures::tor_failure, LbParams, SubwaysError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::topology::PyTopology;

fn err(py: Python<'_>, e: SubwaysError) -> PyErr {
    match e {
        SubwaysError::Engine(e) => errors::engine(py, e.to_string()),
        other => errors::input(py, other.to_string()),
    }
}

/// One shuffle job (all-to-all among `nodes` servers from rack `first_rack`,
/// `flows_per_pair` flows of `bytes_per_pair` each way) under a
/// load-balancing policy: `{"completion_s", "flows", "rebinds", "detours",
/// "events", "stranded", "first_detour_s"}`; `failed_tor` is down for the
/// whole job. `placement` is `contiguous` or `two-loops` (half the servers
/// in each of two Subways loops); `pattern` is `all-to-all` or
/// `into-last-rack` (the servers of the job's last rack receive from all
/// others, the Subways testbed run).
#[pyfunction]
#[pyo3(signature = (topology, first_rack, nodes, bytes_per_pair, policy, seed, t_rebind_s = 0.01, aggressiveness = 0.5, failed_tor = None, placement = "contiguous", pattern = "all-to-all", flows_per_pair = 1))]
#[allow(clippy::too_many_arguments)]
pub fn subways_shuffle<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    first_rack: u32,
    nodes: usize,
    bytes_per_pair: f64,
    policy: &str,
    seed: u64,
    t_rebind_s: f64,
    aggressiveness: f64,
    failed_tor: Option<u32>,
    placement: &str,
    pattern: &str,
    flows_per_pair: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let topo = topology.inner.clone();
    let placement = match placement {
        "contiguous" => Placement::Contiguous,
        "two-loops" => Placement::TwoLoops,
        o => return Err(errors::input(py, format!("unknown placement {o:?} (contiguous, two-loops)"))),
    };
    let pattern = match pattern {
        "all-to-all" => Pattern::AllToAll,
        "into-last-rack" => Pattern::IntoLastRack,
        o => return Err(errors::input(py, format!("unknown pattern {o:?} (all-to-all, into-last-rack)"))),
    };
    let job = ShuffleJob { first_rack, nodes, bytes_per_pair, flows_per_pair, placement, pattern, failed_tor };
    let params = LbParams { t_rebind_s, aggressiveness, ..LbParams::default() };
    let policy = policy.to_string();
    let r = py.allow_threads(move || run_shuffle(&topo, &job, &policy, &params, seed)).map_err(|e| err(py, e))?;
    let d = PyDict::new(py);
    d.set_item("completion_s", r.completion_s)?;
    d.set_item("flows", r.flows)?;
    d.set_item("rebinds", r.rebinds)?;
    d.set_item("detours", r.detours)?;
    d.set_item("events", r.events)?;
    d.set_item("stranded", r.stranded)?;
    d.set_item("first_detour_s", r.first_detour_s.unwrap_or(f64::NAN))?;
    Ok(d)
}

/// What the failure of ToR `tor` does: `{"disconnected": [hosts], "degraded": [hosts], "lost_port_bps"}`.
#[pyfunction]
pub fn subways_tor_failure<'py>(py: Python<'py>, topology: &PyTopology, tor: u32) -> PyResult<Bound<'py, PyDict>> {
    if tor as usize >= topology.inner.tors().len() {
        return Err(errors::input(py, format!("ToR {tor} does not exist ({} ToRs)", topology.inner.tors().len())));
    }
    let f = tor_failure(&topology.inner, tor);
    let d = PyDict::new(py);
    d.set_item("disconnected", f.disconnected)?;
    d.set_item("degraded", f.degraded)?;
    d.set_item("lost_port_bps", f.lost_port_bps)?;
    Ok(d)
}
