//! `run_simulation`: the flow-level engine on a topology and a flow trace
//! or a workload file (whose application tasks run through the
//! [`DagRunner`] controller); `generate_workload`: a workload file's
//! open-loop flows as columns.
//!
//! The run happens with the GIL released. Every ~0.25 s of wall time the
//! GIL is taken back briefly to report progress and to let Ctrl-C through
//! (`check_signals`), so a long run can be interrupted.

use std::time::{Duration, Instant};

use netheat_core::Routing;
use std::path::PathBuf;

use netheat_engine::{DenseMode, FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_workloads::{read_flows_csv, DagRunner, FlowRow, TaskDag, WorkloadError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors;
use crate::topology::PyTopology;

/// Numbers that can be handed to numpy as little-endian bytes.
trait LeBytes: Copy {
    /// Appends the little-endian encoding.
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(u32, u64, i32, i64, f64);

/// A column handed to Python as (numpy dtype string, raw little-endian bytes);
/// `numpy.frombuffer` turns it into an array without a per-element loop.
fn column<'py, T: LeBytes>(py: Python<'py>, dtype: &str, v: &[T]) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(std::mem::size_of_val(v));
    for x in v {
        x.put(&mut bytes);
    }
    (dtype, PyBytes::new(py, &bytes)).into_pyobject(py).map(|t| t.into_any())
}

fn rows_from_columns(topo: &PyTopology, cols: &Bound<'_, PyDict>) -> Result<Vec<FlowRow>, String> {
    let get = |name: &str| -> Result<Option<Vec<f64>>, String> {
        match cols.get_item(name).map_err(|e| e.to_string())? {
            None => Ok(None),
            Some(v) => v.extract::<Vec<f64>>().map(Some).map_err(|_| format!("column `{name}` must be numbers")),
        }
    };
    let hosts = |name: &str| -> Result<Vec<u32>, String> {
        let v = cols.get_item(name).map_err(|e| e.to_string())?.ok_or(format!("missing column `{name}`"))?;
        let items: Vec<Bound<'_, PyAny>> =
            v.try_iter().map_err(|e| e.to_string())?.collect::<Result<_, _>>().map_err(|e| e.to_string())?;
        items
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let text = if let Ok(n) = h.extract::<i64>() {
                    n.to_string()
                } else {
                    h.extract::<String>().unwrap_or_default()
                };
                topo.inner.host_ref(&text).ok_or(format!("row {i}: column `{name}`: unknown host `{text}`"))
            })
            .collect()
    };
    let start = get("start_s")?.ok_or("missing column `start_s`")?;
    let bytes = get("bytes")?.ok_or("missing column `bytes`")?;
    let (src, dst) = (hosts("src")?, hosts("dst")?);
    let n = start.len();
    if [bytes.len(), src.len(), dst.len()].iter().any(|l| *l != n) {
        return Err("columns start_s, src, dst and bytes must have the same length".into());
    }
    let opt = |name: &str| -> Result<Option<Vec<f64>>, String> {
        let v = get(name)?;
        if v.as_ref().is_some_and(|v| v.len() != n) {
            return Err(format!("column `{name}` has a different length"));
        }
        Ok(v)
    };
    let (ids, tasks, prio, weight, cap) =
        (opt("flow_id")?, opt("task_id")?, opt("priority")?, opt("weight")?, opt("rate_cap_bps")?);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if !(start[i].is_finite() && start[i] >= 0.0) {
            return Err(format!("row {i}: column `start_s`: {} is not a time >= 0", start[i]));
        }
        if !(bytes[i].is_finite() && bytes[i] >= 0.0) {
            return Err(format!("row {i}: column `bytes`: {} is not a size >= 0", bytes[i]));
        }
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        if w.is_nan() || w <= 0.0 {
            return Err(format!("row {i}: column `weight`: {w} must be positive"));
        }
        out.push(FlowRow {
            flow_id: ids.as_ref().map_or(i as u64, |v| v[i] as u64),
            start_s: start[i],
            src: src[i],
            dst: dst[i],
            bytes: bytes[i],
            task_id: tasks.as_ref().and_then(|v| (v[i] >= 0.0).then_some(v[i] as u64)),
            priority: prio.as_ref().map_or(0, |v| v[i] as i32),
            weight: w,
            rate_cap_bps: cap.as_ref().and_then(|v| (v[i] > 0.0).then_some(v[i])),
        });
    }
    Ok(out)
}

/// Generates a workload file on a topology (released GIL).
fn load_workload(
    py: Python<'_>,
    topology: &PyTopology,
    path: String,
    seed: u64,
    data_dir: Option<PathBuf>,
    extra_roots: &[PathBuf],
) -> PyResult<netheat_config::Workload> {
    let dir = crate::data::resolve(data_dir, extra_roots);
    let topo = topology.inner.clone();
    py.allow_threads(move || netheat_config::load_workload(std::path::Path::new(&path), &topo, seed, &dir))
        .map_err(|e| errors::config(py, e))
}

/// Open-loop flows of a workload file: `{"flows": {col: (dtype, bytes)}, "tasks": n, "notes": [..]}`.
/// Application tasks are not expanded here (their flows depend on the run);
/// `tasks` counts them.
#[pyfunction]
#[pyo3(signature = (topology, workload, seed, data_dir = None, extra_roots = Vec::new()))]
pub fn generate_workload<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    workload: String,
    seed: u64,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let w = load_workload(py, topology, workload, seed, data_dir, &extra_roots)?;
    let r = &w.flows;
    let flows = PyDict::new(py);
    flows.set_item("flow_id", column(py, "<u8", &r.iter().map(|x| x.flow_id).collect::<Vec<_>>())?)?;
    flows.set_item("start_s", column(py, "<f8", &r.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
    flows.set_item("src", column(py, "<u4", &r.iter().map(|x| x.src).collect::<Vec<_>>())?)?;
    flows.set_item("dst", column(py, "<u4", &r.iter().map(|x| x.dst).collect::<Vec<_>>())?)?;
    flows.set_item("bytes", column(py, "<f8", &r.iter().map(|x| x.bytes).collect::<Vec<_>>())?)?;
    flows.set_item(
        "task_id",
        column(py, "<i8", &r.iter().map(|x| x.task_id.map_or(-1, |t| t as i64)).collect::<Vec<_>>())?,
    )?;
    flows.set_item("priority", column(py, "<i4", &r.iter().map(|x| x.priority).collect::<Vec<_>>())?)?;
    let out = PyDict::new(py);
    out.set_item("flows", flows)?;
    out.set_item("tasks", w.tasks.len())?;
    out.set_item("notes", &w.notes)?;
    Ok(out)
}

/// Runs the engine on exactly one of a flow CSV, flow columns or a workload
/// file; returns `{"flows": {col: (dtype, bytes)}, "links": {...},
/// "tasks": {...}, "stats": {...}, "notes": [..]}`.
#[pyfunction]
#[pyo3(signature = (topology, flows_csv, flows, window_s, seed, progress, workload = None, data_dir = None, extra_roots = Vec::new(), dense = "auto"))]
#[allow(clippy::too_many_arguments)]
pub fn run_simulation<'py>(
    py: Python<'py>,
    topology: &PyTopology,
    flows_csv: Option<String>,
    flows: Option<Bound<'py, PyDict>>,
    window_s: f64,
    seed: u64,
    progress: Option<PyObject>,
    workload: Option<String>,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
    dense: &str,
) -> PyResult<Bound<'py, PyDict>> {
    if !(window_s.is_finite() && window_s > 0.0) {
        return Err(errors::input(py, format!("the window must be a positive duration, got {window_s} s")));
    }
    let dense = DenseMode::parse(dense).map_err(|e| errors::input(py, e))?;
    let topo = topology.inner.clone();
    let mut tasks: Vec<(f64, usize, TaskDag)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let rows = match (flows_csv, flows, workload) {
        (None, None, Some(path)) => {
            let w = load_workload(py, topology, path, seed, data_dir, &extra_roots)?;
            tasks = w.tasks;
            notes = w.notes;
            w.flows
        }
        (Some(path), None, None) => {
            let t = topo.clone();
            py.allow_threads(move || read_flows_csv(std::path::Path::new(&path), &|s| t.host_ref(s))).map_err(|e| {
                match e {
                    WorkloadError::Io { .. } | WorkloadError::Malformed { .. } => errors::input(py, e.to_string()),
                }
            })?
        }
        (None, Some(cols), None) => rows_from_columns(topology, &cols).map_err(|e| errors::input(py, e))?,
        _ => return Err(errors::input(py, "give exactly one of a flow CSV path, flow columns or a workload file")),
    };
    // Application tasks: flow ids after the trace's, task ids after its task ids.
    let mut runner = DagRunner::with_id_bases(
        rows.iter().map(|r| r.flow_id + 1).max().unwrap_or(0),
        0,
        rows.iter().filter_map(|r| r.task_id).map(|t| t + 1).max().unwrap_or(0),
    );
    let task_table: Vec<usize> = tasks.iter().map(|t| t.1).collect();
    let total = rows.len() as u64 + tasks.iter().map(|t| t.2.num_flows() as u64).sum::<u64>();
    for (start, _, dag) in tasks {
        runner.add_task(start, dag);
    }
    let cb = progress.as_ref().map(|p| p.clone_ref(py));
    let outcome = py.allow_threads(move || -> Result<_, String> {
        let routing: &dyn Routing = &*topo;
        let cfg = SimConfig { window_s, seed, dense, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
        for e in topo.events() {
            sim.schedule_capacity(e.time_s, e.link, e.capacity_bps).map_err(|e| e.to_string())?;
        }
        for r in &rows {
            let mut f = FlowSpec::new(r.flow_id, r.src, r.dst, r.bytes, r.start_s, Route::Ecmp)
                .with_priority(r.priority)
                .with_weight(r.weight);
            if let Some(c) = r.rate_cap_bps {
                f = f.with_rate_cap(c);
            }
            if let Some(t) = r.task_id {
                f = f.with_task(t);
            }
            sim.add_flow(f).map_err(|e| e.to_string())?;
        }
        runner.install(&mut sim).map_err(|e| e.to_string())?;
        // Step one timestamp at a time (run_until never moves the clock past
        // the last event this way) and look at the wall clock every 1024 steps.
        let mut last = Instant::now();
        let mut steps = 0u32;
        while let Some(t) = sim.next_event_time() {
            sim.run_until(&mut runner, t);
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(1024) && last.elapsed() >= Duration::from_millis(250) {
                last = Instant::now();
                let done = sim.stats().flows_completed;
                let stop = Python::with_gil(|py| -> PyResult<()> {
                    if let Some(cb) = &cb {
                        cb.call1(py, (done, total))?;
                    }
                    py.check_signals()
                });
                if let Err(e) = stop {
                    return Ok(Err(e));
                }
            }
        }
        if let Some(e) = runner.error() {
            return Err(format!("an application task could not start a step: {e}"));
        }
        Ok(Ok((sim.finish(), runner)))
    });
    let res = match outcome {
        Err(msg) => return Err(errors::engine(py, msg)),
        Ok(Err(pyerr)) => return Err(pyerr),
        Ok(Ok(r)) => r,
    };
    let (res, runner) = res;
    if let Some(cb) = &progress {
        cb.call1(py, (res.stats.flows_completed, total))?;
    }

    let f = &res.flows;
    let flows = PyDict::new(py);
    flows.set_item("flow_id", column(py, "<u8", &f.iter().map(|x| x.id).collect::<Vec<_>>())?)?;
    flows.set_item("src", column(py, "<u4", &f.iter().map(|x| x.src).collect::<Vec<_>>())?)?;
    flows.set_item("dst", column(py, "<u4", &f.iter().map(|x| x.dst).collect::<Vec<_>>())?)?;
    flows.set_item("bytes", column(py, "<f8", &f.iter().map(|x| x.bytes).collect::<Vec<_>>())?)?;
    flows.set_item("start_s", column(py, "<f8", &f.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
    flows.set_item("finish_s", column(py, "<f8", &f.iter().map(|x| x.finish_s).collect::<Vec<_>>())?)?;
    flows.set_item("fct_s", column(py, "<f8", &f.iter().map(|x| x.fct_s).collect::<Vec<_>>())?)?;
    flows.set_item(
        "task_id",
        column(py, "<i8", &f.iter().map(|x| x.task_id.map_or(-1, |t| t as i64)).collect::<Vec<_>>())?,
    )?;
    flows.set_item("priority", column(py, "<i4", &f.iter().map(|x| x.priority).collect::<Vec<_>>())?)?;
    flows.set_item(
        "path_id",
        column(py, "<i8", &f.iter().map(|x| x.path_id.map_or(-1, |p| p as i64)).collect::<Vec<_>>())?,
    )?;

    let (mut link, mut window, mut util) = (Vec::new(), Vec::new(), Vec::new());
    for s in res.link_windows.iter() {
        link.push(s.link);
        window.push(s.window);
        util.push(s.utilization);
    }
    let n_windows = if res.end_s > 0.0 { (res.end_s / window_s).ceil() as u64 } else { 0 };
    let links = PyDict::new(py);
    links.set_item("link", column(py, "<u4", &link)?)?;
    links.set_item("window", column(py, "<u4", &window)?)?;
    links.set_item("utilization", column(py, "<f8", &util)?)?;

    let s = &res.stats;
    let stats = PyDict::new(py);
    stats.set_item("flows", total)?;
    stats.set_item("completed", s.flows_completed)?;
    stats.set_item("stranded", s.stranded)?;
    stats.set_item("events", s.events)?;
    stats.set_item("recomputations", s.recomputations)?;
    stats.set_item("dense_instants", s.dense_instants)?;
    stats.set_item("reroutes", s.reroutes)?;
    stats.set_item("end_s", res.end_s)?;
    stats.set_item("windows", n_windows)?;

    let recs = runner.records();
    let tasks = PyDict::new(py);
    let base = runner.task_id_base();
    tasks.set_item("task_id", column(py, "<u8", &recs.iter().map(|r| base + r.task as u64).collect::<Vec<_>>())?)?;
    tasks.set_item("kind", recs.iter().map(|r| r.kind).collect::<Vec<_>>())?;
    tasks.set_item("table", column(py, "<u4", &task_table.iter().map(|&t| t as u32).collect::<Vec<_>>())?)?;
    tasks.set_item("start_s", column(py, "<f8", &recs.iter().map(|r| r.start_s).collect::<Vec<_>>())?)?;
    tasks.set_item("finish_s", column(py, "<f8", &recs.iter().map(|r| r.finish_s).collect::<Vec<_>>())?)?;
    tasks.set_item("tct_s", column(py, "<f8", &recs.iter().map(|r| r.duration_s()).collect::<Vec<_>>())?)?;
    tasks.set_item("flows", column(py, "<u8", &recs.iter().map(|r| r.flows as u64).collect::<Vec<_>>())?)?;
    tasks.set_item("bytes", column(py, "<f8", &recs.iter().map(|r| r.bytes).collect::<Vec<_>>())?)?;

    let out = PyDict::new(py);
    out.set_item("flows", flows)?;
    out.set_item("links", links)?;
    out.set_item("tasks", tasks)?;
    out.set_item("stats", stats)?;
    out.set_item("notes", notes)?;
    Ok(out)
}
