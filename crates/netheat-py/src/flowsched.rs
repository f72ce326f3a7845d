//! `baraat_point`: one task-aware flow-scheduling experiment point (see
//! `netheat_repro::baraat::run_point`), run with the GIL released; returns the
//! per-task records as columns.

use std::path::PathBuf;

use netheat_flowsched::FlowschedError;
use netheat_repro::baraat::workload::load_fb2010_task_sizes;
use netheat_repro::baraat::{run_point, AppKind, Placement, PointSpec, WorkloadKind, WorkloadSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;

fn to_py(py: Python<'_>, e: FlowschedError) -> PyErr {
    match e {
        e @ (FlowschedError::Engine(_) | FlowschedError::Unfinished { .. }) => errors::engine(py, e.to_string()),
        other => errors::input(py, other.to_string()),
    }
}

/// Runs one Baraat point; returns a dict with the columns `task_id`,
/// `bytes`, `start_s`, `finish_s`, `tct_s` and the values `threshold`,
/// `flows`. The defaults are the paper's setting (§5.2): workers are the
/// other 39 hosts of the aggregator's rack, one aggregator per pod,
/// selectivity 3%. `data_analytics` reads the Facebook 2010 trace from the
/// data directory (`data_dir` > `NETHEAT_DATA` > `../shared/data` under one
/// of `extra_roots`).
#[pyfunction]
#[pyo3(signature = (
    *, workload, policy, load, tasks, seed, app = "one-stage", fanout = 39, mids = 0, pods = 30, racks_per_pod = 30,
    hosts_per_rack = 40, host_bps = 1e9, oversubscription = 2.0, aggregators = 30, workers = 0, batch = false,
    heavy_percentile = 0.8, lbs = 1, poll_s = 100e-6, spc = false, rtt_s = 100e-6, delta_frac = 0.02, flow_cv = 0.0, compute_s = 0.0,
    placement = "rack", selectivity = 0.03, data_dir = None, extra_roots = Vec::new()
))]
#[allow(clippy::too_many_arguments)]
pub fn baraat_point<'py>(
    py: Python<'py>,
    workload: &str,
    policy: &str,
    load: f64,
    tasks: usize,
    seed: u64,
    app: &str,
    fanout: usize,
    mids: usize,
    pods: usize,
    racks_per_pod: usize,
    hosts_per_rack: usize,
    host_bps: f64,
    oversubscription: f64,
    aggregators: usize,
    workers: usize,
    batch: bool,
    heavy_percentile: f64,
    lbs: usize,
    poll_s: f64,
    spc: bool,
    rtt_s: f64,
    delta_frac: f64,
    flow_cv: f64,
    compute_s: f64,
    placement: &str,
    selectivity: f64,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = WorkloadKind::parse(workload).map_err(|e| to_py(py, e))?;
    let app = AppKind::parse(app).map_err(|e| to_py(py, e))?;
    let placement = Placement::parse(placement).map_err(|e| to_py(py, e))?;
    let task_sizes = if kind == WorkloadKind::DataAnalytics {
        let dir = crate::data::resolve(data_dir, &extra_roots);
        Some(load_fb2010_task_sizes(&dir).map_err(|e| errors::data(py, e.to_string()))?)
    } else {
        None
    };
    let w = WorkloadSpec {
        kind,
        app,
        fanout,
        mids,
        load,
        tasks,
        aggregators,
        workers,
        batch,
        seed,
        flow_cv,
        compute_s,
        placement,
        hosts_per_rack,
        selectivity,
        task_sizes,
    };
    let mut p = PointSpec::new(pods, racks_per_pod, hosts_per_rack, w, policy);
    p.host_bps = host_bps;
    p.oversubscription = oversubscription;
    p.heavy_percentile = heavy_percentile;
    p.lbs = lbs;
    p.poll_s = poll_s;
    p.spc = spc;
    p.rtt_s = rtt_s;
    p.delta_frac = delta_frac;
    let r = py.allow_threads(|| run_point(&p)).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    d.set_item("task_id", r.tasks.iter().map(|t| t.id).collect::<Vec<u64>>())?;
    d.set_item("bytes", r.tasks.iter().map(|t| t.bytes).collect::<Vec<f64>>())?;
    d.set_item("start_s", r.tasks.iter().map(|t| t.start_s).collect::<Vec<f64>>())?;
    d.set_item("finish_s", r.tasks.iter().map(|t| t.finish_s).collect::<Vec<f64>>())?;
    d.set_item("tct_s", r.tasks.iter().map(|t| t.tct_s()).collect::<Vec<f64>>())?;
    d.set_item("threshold", r.threshold)?;
    d.set_item("flows", r.flows)?;
    Ok(d)
}
