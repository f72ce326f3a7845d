//! `run_simulation`: a topology and a flow trace (a CSV file or columns
//! from Python) or a workload file, read and checked here (rows named by
//! their CSV line or data row in messages, the memory budget, the end time's
//! lower bound), then run by the scenario layer's flow run with no policy
//! (`netheat_scenario::flow::FlowRun::plain`: per-flow ECMP, fair share),
//! the loop `netheat run` uses too; `generate_workload`: a workload file's
//! open-loop flows as columns.
//!
//! The run happens with the GIL released; every ~0.25 s of wall time the
//! GIL is taken back briefly to report progress and to let Ctrl-C through
//! (`crate::scenario::with_progress`).

use std::path::PathBuf;

use netheat_core::budget::{self, BYTES_PER_FLOW};
use netheat_core::clip;
use netheat_engine::DenseMode;
use netheat_scenario::flow::{self, FlowRun};
use netheat_workloads::flows_csv::QUOTE;
use netheat_workloads::{end_lower_bound, read_flow_trace, same_host_note, FlowColumns, FlowRow, RunBudget, TaskDag};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors;
use crate::topology::PyTopology;

/// Where the rows of a run came from, to name a flow in messages.
enum Source {
    /// A workload file's generators.
    Workload,
    /// A flow CSV file and the line of every row.
    Csv(String, Vec<u64>),
    /// Columns from Python.
    Columns,
}

impl Source {
    /// `f.csv:7`, `data row 7` or `flow 6` (a generated flow's id is its
    /// index) for row `i`.
    fn place(&self, i: usize) -> String {
        match self {
            Source::Csv(path, lines) => format!("{path}:{}", lines.get(i).copied().unwrap_or(0)),
            Source::Columns => format!("data row {}", i + 1),
            Source::Workload => format!("flow {i}"),
        }
    }

    /// `flow 12 (f.csv:7)`, `flow 12 (data row 7)` or `flow 6`.
    fn who(&self, i: usize, flow_id: u64) -> String {
        match self {
            Source::Workload => format!("flow {flow_id}"),
            _ => format!("flow {flow_id} ({})", self.place(i)),
        }
    }
}

/// Numbers that can be handed to numpy as little-endian bytes.
pub(crate) trait LeBytes: Copy {
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
le_bytes!(u8, u32, u64, i32, i64, f64);

/// A column handed to Python as (numpy dtype string, raw little-endian bytes);
/// `numpy.frombuffer` turns it into an array without a per-element loop.
pub(crate) fn column<'py, T: LeBytes>(py: Python<'py>, dtype: &str, v: &[T]) -> PyResult<Bound<'py, PyAny>> {
    let mut bytes = Vec::with_capacity(std::mem::size_of_val(v));
    for x in v {
        x.put(&mut bytes);
    }
    (dtype, PyBytes::new(py, &bytes)).into_pyobject(py).map(|t| t.into_any())
}

/// Flows given as columns from Python (a dict of sequences: what
/// `netheat.simulate` passes for dicts and Parquet files), checked like a
/// flow CSV; refused before anything is extracted when their count does not
/// fit the memory budget. Messages name the column and the data row.
fn rows_from_columns(topo: &PyTopology, cols: &Bound<'_, PyDict>, budget: u64) -> Result<Vec<FlowRow>, String> {
    let n = match cols.get_item("start_s").map_err(|e| e.to_string())? {
        None => return Err("missing column `start_s`".into()),
        Some(v) => v.len().map_err(|_| "column `start_s` must be a sequence of numbers".to_string())?,
    };
    budget::check_against(
        budget,
        &format!("the {} flows of the columns", budget::format_count(n as f64)),
        n as f64 * BYTES_PER_FLOW as f64,
        "simulate a part of the flows",
    )
    .map_err(|e| e.to_string())?;
    let get = |name: &str| -> Result<Option<Vec<f64>>, String> {
        match cols.get_item(name).map_err(|e| e.to_string())? {
            None => Ok(None),
            Some(v) => v.extract::<Vec<f64>>().map(Some).map_err(|_| format!("column `{name}` must be numbers")),
        }
    };
    let hosts = |name: &str| -> Result<Vec<u32>, String> {
        let v = cols.get_item(name).map_err(|e| e.to_string())?.ok_or(format!("missing column `{name}`"))?;
        let items = v.try_iter().map_err(|_| format!("column `{name}` must be host indices or names"))?;
        let mut out = Vec::with_capacity(n);
        for (i, h) in items.enumerate() {
            let h = h.map_err(|e| e.to_string())?;
            let text = if let Ok(k) = h.extract::<i64>() {
                k.to_string()
            } else if let Ok(s) = h.extract::<String>() {
                s
            } else {
                let shown = h.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
                return Err(format!(
                    "data row {}: column `{name}`: {} is not a host index or name",
                    i + 1,
                    clip(&shown, QUOTE)
                ));
            };
            let id = topo
                .inner
                .host_ref(&text)
                .ok_or_else(|| format!("data row {}: column `{name}`: unknown host `{}`", i + 1, clip(&text, QUOTE)))?;
            out.push(id);
        }
        Ok(out)
    };
    let columns = FlowColumns {
        start_s: get("start_s")?.ok_or("missing column `start_s`")?,
        bytes: get("bytes")?.ok_or("missing column `bytes`")?,
        src: hosts("src")?,
        dst: hosts("dst")?,
        flow_id: get("flow_id")?,
        task_id: get("task_id")?,
        priority: get("priority")?,
        weight: get("weight")?,
        rate_cap_bps: get("rate_cap_bps")?,
    };
    columns.rows()
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
    // Outside a scenario, precalculated traffic runs like any other.
    py.allow_threads(move || netheat_config::load_workload(std::path::Path::new(&path), &topo, seed, &dir))
        .map(netheat_config::Workload::with_background_as_flows)
        .map_err(|e| errors::config(py, e))
}

/// The table of the workload's first `chunk-store` app, if any.
fn chunk_store_table(w: &netheat_config::Workload) -> Option<usize> {
    if w.stores.is_empty() {
        return None;
    }
    w.tasks.iter().find(|t| t.2.kind == "chunk-read" || t.2.kind == "chunk-write").map(|t| t.1)
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
    let mut w = load_workload(py, topology, workload, seed, data_dir, &extra_roots)?;
    for (table, c) in &w.clusters {
        w.notes.push(format!(
            "app[{table}] (cluster): {} jobs of {} tasks, placed and run by a scenario's [placement] policy (netheat run)",
            c.jobs.len(),
            c.num_tasks()
        ));
    }
    if let Some(table) = chunk_store_table(&w) {
        w.notes.push(format!(
            "app[{table}] (chunk-store): its chunks are placed and its reads resolved by a scenario's [storage] policy (netheat run)"
        ));
    }
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
    let budget = budget::memory_budget().map_err(|e| errors::input(py, e.to_string()))?;
    let topo = topology.inner.clone();
    let mut tasks: Vec<(f64, usize, TaskDag)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    // Where each row came from, to name a flow in messages.
    let mut source = Source::Workload;
    let rows = match (flows_csv, flows, workload) {
        (None, None, Some(path)) => {
            let w = load_workload(py, topology, path, seed, data_dir, &extra_roots)?;
            if let Some((table, _)) = w.clusters.first() {
                return Err(errors::input(
                    py,
                    format!("app[{table}]: a `cluster` app's jobs need a scheduler: run them in a scenario with a [placement] policy (netheat run)"),
                ));
            }
            if let Some(table) = chunk_store_table(&w) {
                return Err(errors::input(
                    py,
                    format!("app[{table}]: a `chunk-store` app's chunks need a replica placement and its reads a store: run it in a scenario with a [storage] policy (netheat run)"),
                ));
            }
            tasks = w.tasks;
            notes = w.notes;
            w.flows
        }
        (Some(path), None, None) => {
            let t = topo.clone();
            let p = path.clone();
            let trace = py
                .allow_threads(move || read_flow_trace(std::path::Path::new(&p), &|s| t.host_ref(s)))
                .map_err(|e| errors::input(py, e.to_string()))?;
            source = Source::Csv(path, trace.lines);
            trace.rows
        }
        (None, Some(cols), None) => {
            source = Source::Columns;
            rows_from_columns(topology, &cols, budget).map_err(|e| errors::input(py, e))?
        }
        _ => return Err(errors::input(py, "give exactly one of a flow CSV path, flow columns or a workload file")),
    };
    notes.extend(same_host_note(&rows, &|i| source.place(i)));
    let total = rows.len() as u64 + tasks.iter().map(|t| t.2.num_flows() as u64).sum::<u64>();
    // Within the budget: every flow, and every link in every window until
    // the last flow can end at the earliest.
    let plan = RunBudget::new(&topo, total, budget).map_err(|e| errors::input(py, e.to_string()))?;
    if let Some(b) = end_lower_bound(&topo, &rows) {
        let who = source.who(b.index, rows[b.index].flow_id);
        plan.check_bound(&b, &who, window_s).map_err(|e| errors::input(py, e))?;
    }
    // The scenario layer's flow run with no policy: one engine loop for
    // `netheat simulate` and `netheat run`.
    let (outcome, pending) = crate::scenario::with_progress(py, progress, move |tick| {
        let mut run = FlowRun::plain(&topo, &rows, tasks, window_s, seed, plan);
        run.dense = dense;
        flow::run_flow(run, tick)
    });
    if let Some(e) = pending {
        return Err(e);
    }
    let mut res = outcome.map_err(|e| crate::scenario::to_py(py, e))?;
    res.notes = notes;
    crate::scenario::result_dict(py, &res)
}
