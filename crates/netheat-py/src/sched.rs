//! Cluster-scheduling runs (UTP) for Python (`netheat.experiments.utp`).

use netheat_repro::utp::{run_cluster, ClusterParams, Incident};
use netheat_sched::SchedError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::topology::PyTopology;

/// One cluster run: `{"hot_tor_share", "p98_tor_util", "migrations", ...,
/// "series": [(window_start_s, hot_share, p98, migrations, warmup)],
/// "query_latencies": [(query type index, start_s, latency_s)]}`. `incident_tors` lose
/// `1 - incident_factor` of their uplink at `incident_at_s` (no incident when empty).
#[pyfunction]
#[pyo3(signature = (topology, policy, seed, hours, cpu_load = 0.6, bw_median_per_core = 10e6,
    heavy_share = 0.05, heavy_factor = 12.0, estimate_sigma = 0.3, missing_estimate_share = 0.0,
    candidates = 32, incident_at_s = 0.0, incident_tors = Vec::new(), incident_factor = 0.5, warmup_s = 3600.0))]
#[allow(clippy::too_many_arguments)]
pub fn utp_cluster<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    policy: &str,
    seed: u64,
    hours: f64,
    cpu_load: f64,
    bw_median_per_core: f64,
    heavy_share: f64,
    heavy_factor: f64,
    estimate_sigma: f64,
    missing_estimate_share: f64,
    candidates: usize,
    incident_at_s: f64,
    incident_tors: Vec<u32>,
    incident_factor: f64,
    warmup_s: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let p = ClusterParams {
        duration_s: hours * 3600.0,
        cpu_load,
        bw_median_per_core,
        heavy_share,
        heavy_factor,
        estimate_sigma,
        missing_estimate_share,
        candidates,
        warmup_s,
        incident: (!incident_tors.is_empty()).then_some(Incident {
            at_s: incident_at_s,
            tors: incident_tors,
            factor: incident_factor,
        }),
        ..ClusterParams::default()
    };
    let topo = topology.inner.clone();
    let policy = policy.to_string();
    let r = py.allow_threads(move || run_cluster(&topo, &policy, &p, seed)).map_err(|e| match e {
        e @ (SchedError::Engine(_) | SchedError::Query(_)) => errors::engine(py, e.to_string()),
        other => errors::input(py, other.to_string()),
    })?;
    let d = PyDict::new(py);
    d.set_item("hot_tor_share", r.hot_tor_share)?;
    d.set_item("p98_tor_util", r.p98_tor_util)?;
    d.set_item("cell_util", r.cell_util)?;
    d.set_item("migrations", r.migrations)?;
    d.set_item("net_intensive_placements", r.net_intensive_placements)?;
    d.set_item("net_intensive_on_hot", r.net_intensive_on_hot)?;
    d.set_item("servers_used", r.servers_used)?;
    d.set_item("max_tasks_per_rack", r.max_tasks_per_rack)?;
    d.set_item("cpu_imbalance", r.cpu_imbalance)?;
    d.set_item("placements", r.placements)?;
    d.set_item("pending", r.pending)?;
    d.set_item("pending_reason", r.pending_reason)?;
    d.set_item("estimate_fallbacks", r.estimate_fallbacks)?;
    d.set_item("events", r.events)?;
    let series: Vec<(f64, f64, f64, u64, bool)> =
        r.series.iter().map(|w| (w.start_s, w.hot_share, w.p98_util, w.migrations, w.warmup)).collect();
    d.set_item("series", series)?;
    d.set_item("query_latencies", r.query_latencies)?;
    d.set_item("queries", r.queries)?;
    Ok(d)
}
