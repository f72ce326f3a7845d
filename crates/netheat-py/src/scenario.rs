//! `run_scenario`: the one entry point that runs a scenario file (any
//! datacenter, workload and stack of policies; see `netheat-scenario`),
//! and `scenario_schema`, the JSON Schema its sections are read with.
//!
//! Tables cross as `{name: {column: (numpy dtype, little-endian bytes)}}`
//! (strings as lists); `netheat.scenario` turns them into Arrow tables.
//! The run happens with the GIL released; every ~0.25 s of wall time the
//! GIL is taken back to report progress and let Ctrl-C through.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use netheat_scenario::{Scenario, ScenarioError, ScenarioResult};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::simulate::column;
use crate::topology::PyTopology;

/// Turns a scenario error into the matching `netheat.errors` exception.
pub(crate) fn to_py(py: Python<'_>, e: ScenarioError) -> PyErr {
    match e {
        ScenarioError::Config(c) => errors::config(py, c),
        ScenarioError::Budget(m) => errors::input(py, m),
        ScenarioError::BudgetSetting(b) => errors::input(py, b.to_string()),
        ScenarioError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        other => errors::engine(py, other.to_string()),
    }
}

fn tables<'py>(py: Python<'py>, r: &ScenarioResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    // Tables left out of `scenario.record` are absent, not empty.
    let f = &r.flows;
    let flows = PyDict::new(py);
    flows.set_item("flow_id", column(py, "<u8", &f.iter().map(|x| x.flow_id).collect::<Vec<_>>())?)?;
    flows.set_item("src", column(py, "<u4", &f.iter().map(|x| x.src).collect::<Vec<_>>())?)?;
    flows.set_item("dst", column(py, "<u4", &f.iter().map(|x| x.dst).collect::<Vec<_>>())?)?;
    flows.set_item("bytes", column(py, "<f8", &f.iter().map(|x| x.bytes).collect::<Vec<_>>())?)?;
    flows.set_item("start_s", column(py, "<f8", &f.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
    flows.set_item("finish_s", column(py, "<f8", &f.iter().map(|x| x.finish_s).collect::<Vec<_>>())?)?;
    flows.set_item("fct_s", column(py, "<f8", &f.iter().map(|x| x.fct_s).collect::<Vec<_>>())?)?;
    flows.set_item("task_id", column(py, "<i8", &f.iter().map(|x| x.task_id).collect::<Vec<_>>())?)?;
    flows.set_item("priority", column(py, "<i4", &f.iter().map(|x| x.priority).collect::<Vec<_>>())?)?;
    flows.set_item("path_id", column(py, "<i8", &f.iter().map(|x| x.path_id).collect::<Vec<_>>())?)?;
    if r.recorded.flows {
        out.set_item("flows", flows)?;
    }

    let t = &r.tasks;
    let tasks = PyDict::new(py);
    tasks.set_item("task_id", column(py, "<u8", &t.iter().map(|x| x.task_id).collect::<Vec<_>>())?)?;
    tasks.set_item("kind", t.iter().map(|x| x.kind.as_str()).collect::<Vec<_>>())?;
    tasks.set_item("table", column(py, "<i8", &t.iter().map(|x| x.table).collect::<Vec<_>>())?)?;
    tasks.set_item("start_s", column(py, "<f8", &t.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
    tasks.set_item("finish_s", column(py, "<f8", &t.iter().map(|x| x.finish_s).collect::<Vec<_>>())?)?;
    tasks.set_item("tct_s", column(py, "<f8", &t.iter().map(|x| x.finish_s - x.start_s).collect::<Vec<_>>())?)?;
    tasks.set_item("flows", column(py, "<u8", &t.iter().map(|x| x.flows).collect::<Vec<_>>())?)?;
    tasks.set_item("bytes", column(py, "<f8", &t.iter().map(|x| x.bytes).collect::<Vec<_>>())?)?;
    tasks.set_item("floor_s", column(py, "<f8", &t.iter().map(|x| x.floor_s).collect::<Vec<_>>())?)?;
    tasks.set_item("network_s", column(py, "<f8", &t.iter().map(|x| x.network_s).collect::<Vec<_>>())?)?;
    tasks.set_item("io_s", column(py, "<f8", &t.iter().map(|x| x.io_s).collect::<Vec<_>>())?)?;
    tasks.set_item("queued_s", column(py, "<f8", &t.iter().map(|x| x.queued_s).collect::<Vec<_>>())?)?;
    out.set_item("tasks", tasks)?;

    let links = PyDict::new(py);
    links.set_item("link", column(py, "<u4", &r.links.iter().map(|x| x.0).collect::<Vec<_>>())?)?;
    links.set_item("window", column(py, "<u4", &r.links.iter().map(|x| x.1).collect::<Vec<_>>())?)?;
    links.set_item("utilization", column(py, "<f8", &r.links.iter().map(|x| x.2).collect::<Vec<_>>())?)?;
    let background: Vec<f64> =
        if r.links_background.len() == r.links.len() { r.links_background.clone() } else { vec![0.0; r.links.len()] };
    links.set_item("background", column(py, "<f8", &background)?)?;
    if r.recorded.links {
        out.set_item("links", links)?;
    }

    if r.recorded.queues && !r.queues.is_empty() {
        let q = &r.queues;
        let queues = PyDict::new(py);
        queues.set_item("link", column(py, "<u4", &q.iter().map(|x| x.link).collect::<Vec<_>>())?)?;
        queues.set_item(
            "mean_queue_bytes",
            column(py, "<f8", &q.iter().map(|x| x.mean_queue_bytes).collect::<Vec<_>>())?,
        )?;
        queues.set_item(
            "max_queue_bytes",
            column(py, "<u8", &q.iter().map(|x| x.max_queue_bytes).collect::<Vec<_>>())?,
        )?;
        queues.set_item("drops", column(py, "<u8", &q.iter().map(|x| x.drops).collect::<Vec<_>>())?)?;
        queues.set_item("marks", column(py, "<u8", &q.iter().map(|x| x.marks).collect::<Vec<_>>())?)?;
        queues.set_item("tx_bytes", column(py, "<u8", &q.iter().map(|x| x.tx_bytes).collect::<Vec<_>>())?)?;
        out.set_item("queues", queues)?;
    }
    if !r.blocks.is_empty() {
        let b = &r.blocks;
        let blocks = PyDict::new(py);
        blocks.set_item("task_id", column(py, "<u8", &b.iter().map(|x| x.task_id).collect::<Vec<_>>())?)?;
        blocks.set_item("block", column(py, "<u4", &b.iter().map(|x| x.block).collect::<Vec<_>>())?)?;
        blocks.set_item("bytes", column(py, "<f8", &b.iter().map(|x| x.bytes).collect::<Vec<_>>())?)?;
        blocks.set_item("writer", column(py, "<u4", &b.iter().map(|x| x.writer).collect::<Vec<_>>())?)?;
        blocks.set_item("replicas", b.iter().map(|x| x.replicas.as_str()).collect::<Vec<_>>())?;
        blocks.set_item("racks", column(py, "<u4", &b.iter().map(|x| x.racks).collect::<Vec<_>>())?)?;
        blocks.set_item("requested_s", column(py, "<f8", &b.iter().map(|x| x.requested_s).collect::<Vec<_>>())?)?;
        blocks.set_item("start_s", column(py, "<f8", &b.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
        blocks.set_item("finish_s", column(py, "<f8", &b.iter().map(|x| x.finish_s).collect::<Vec<_>>())?)?;
        blocks
            .set_item("write_s", column(py, "<f8", &b.iter().map(|x| x.finish_s - x.start_s).collect::<Vec<_>>())?)?;
        blocks.set_item(
            "write_from_request_s",
            column(py, "<f8", &b.iter().map(|x| x.finish_s - x.requested_s).collect::<Vec<_>>())?,
        )?;
        out.set_item("blocks", blocks)?;
    }
    if r.recorded.placements && !r.placements.is_empty() {
        let p = &r.placements;
        let placements = PyDict::new(py);
        placements.set_item("task_id", column(py, "<u8", &p.iter().map(|x| x.task_id).collect::<Vec<_>>())?)?;
        placements.set_item("job", column(py, "<u4", &p.iter().map(|x| x.job).collect::<Vec<_>>())?)?;
        placements.set_item("task", column(py, "<u4", &p.iter().map(|x| x.task).collect::<Vec<_>>())?)?;
        placements.set_item("host", column(py, "<u4", &p.iter().map(|x| x.host).collect::<Vec<_>>())?)?;
        placements.set_item("rack", column(py, "<u4", &p.iter().map(|x| x.rack).collect::<Vec<_>>())?)?;
        placements.set_item("tor_util", column(py, "<f8", &p.iter().map(|x| x.tor_util).collect::<Vec<_>>())?)?;
        placements.set_item("start_s", column(py, "<f8", &p.iter().map(|x| x.start_s).collect::<Vec<_>>())?)?;
        placements.set_item("finish_s", column(py, "<f8", &p.iter().map(|x| x.finish_s).collect::<Vec<_>>())?)?;
        placements
            .set_item("migrated", column(py, "|b1", &p.iter().map(|x| u8::from(x.migrated)).collect::<Vec<_>>())?)?;
        out.set_item("placements", placements)?;
    }
    if !r.migrations.is_empty() {
        let m = &r.migrations;
        let migrations = PyDict::new(py);
        migrations.set_item("time_s", column(py, "<f8", &m.iter().map(|x| x.time_s).collect::<Vec<_>>())?)?;
        migrations.set_item("task_id", column(py, "<u8", &m.iter().map(|x| x.task_id).collect::<Vec<_>>())?)?;
        migrations.set_item("job", column(py, "<u4", &m.iter().map(|x| x.job).collect::<Vec<_>>())?)?;
        migrations.set_item("task", column(py, "<u4", &m.iter().map(|x| x.task).collect::<Vec<_>>())?)?;
        migrations.set_item("from_host", column(py, "<u4", &m.iter().map(|x| x.from_host).collect::<Vec<_>>())?)?;
        migrations.set_item("to_host", column(py, "<u4", &m.iter().map(|x| x.to_host).collect::<Vec<_>>())?)?;
        migrations.set_item("tor", column(py, "<u4", &m.iter().map(|x| x.tor).collect::<Vec<_>>())?)?;
        migrations.set_item("rate_bps", column(py, "<f8", &m.iter().map(|x| x.rate_bps).collect::<Vec<_>>())?)?;
        migrations.set_item("bytes_moved", column(py, "<f8", &m.iter().map(|x| x.bytes_moved).collect::<Vec<_>>())?)?;
        out.set_item("migrations", migrations)?;
    }
    Ok(out)
}

/// Runs a scenario (with `check_only`, reads, builds and checks it and
/// returns its size: `{"hosts", "links", "flows", "tasks", "engine",
/// "datacenter"}`): the file at `path`, or `text` (named `file` in
/// messages, relative paths from `base`), with `overrides` (dotted key,
/// TOML value text) applied in order. Returns `{"tables": {...}, "stats":
/// {...}, "notes": [...], "engine": str, "window_s": float, "topology":
/// Topology}`.
#[pyfunction]
#[pyo3(signature = (path = None, text = None, file = "<scenario>".to_string(), base = None, overrides = Vec::new(), data_dir = None, extra_roots = Vec::new(), progress = None, check_only = false))]
#[allow(clippy::too_many_arguments)]
pub fn run_scenario<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    file: String,
    base: Option<PathBuf>,
    overrides: Vec<(String, String)>,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
    progress: Option<PyObject>,
    check_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let mut s = match (path, text) {
        (Some(p), None) => Scenario::from_path(&p).map_err(|e| to_py(py, e))?,
        (None, Some(t)) => Scenario::from_text(&t, &file, &base.unwrap_or_default()),
        _ => return Err(errors::input(py, "give exactly one of a scenario path or its text")),
    };
    for (k, v) in &overrides {
        s = s.with_override(k, v).map_err(|e| to_py(py, e))?;
    }
    let dir = crate::data::resolve(data_dir, &extra_roots);
    if check_only {
        // Read, build and check; run nothing.
        let parts = py.allow_threads(|| s.parts(&dir)).map_err(|e| to_py(py, e))?;
        let out = PyDict::new(py);
        out.set_item("hosts", parts.topology.hosts().len())?;
        out.set_item("links", parts.topology.links().len())?;
        out.set_item("flows", parts.workload.flows.len())?;
        out.set_item("tasks", parts.workload.tasks.len())?;
        out.set_item("engine", format!("{:?}", parts.sections.scenario.engine).to_lowercase())?;
        out.set_item("datacenter", parts.topology_source)?;
        return Ok(out);
    }
    let (outcome, pending) = with_progress(py, progress, move |tick| {
        s.parts(&dir).and_then(|parts| {
            let topo = parts.topology.clone();
            s.run_parts(parts, tick).map(|r| (r, topo))
        })
    });
    if let Some(e) = pending {
        return Err(e);
    }
    let (res, topo) = outcome.map_err(|e| to_py(py, e))?;
    let out = result_dict(py, &res)?;
    out.set_item("engine", &res.engine)?;
    out.set_item("window_s", res.window_s)?;
    out.set_item("topology", Py::new(py, PyTopology { inner: topo })?)?;
    Ok(out)
}

/// Runs `run` with the GIL released, handing it a progress callback that,
/// every ~0.25 s of wall time, takes the GIL to call `progress(done, total)`
/// and let Ctrl-C through; a Python error there stops the run and is
/// returned beside its outcome.
pub(crate) fn with_progress<T: Send>(
    py: Python<'_>,
    progress: Option<PyObject>,
    run: impl FnOnce(&mut dyn FnMut(u64, u64) -> bool) -> T + Send,
) -> (T, Option<PyErr>) {
    py.allow_threads(move || {
        let mut last = Instant::now();
        let mut pending: Option<PyErr> = None;
        let mut tick = |done: u64, total: u64| -> bool {
            if last.elapsed() < Duration::from_millis(250) {
                return true;
            }
            last = Instant::now();
            Python::with_gil(|py| {
                let r = match &progress {
                    Some(cb) => cb.call1(py, (done, total)).map(|_| ()),
                    None => Ok(()),
                }
                .and_then(|()| py.check_signals());
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        pending = Some(e);
                        false
                    }
                }
            })
        };
        let out = run(&mut tick);
        (out, pending)
    })
}

/// `{"tables": {...}, "stats": {...}, "notes": [...]}` of a run.
pub(crate) fn result_dict<'py>(py: Python<'py>, res: &ScenarioResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("tables", tables(py, res)?)?;
    let stats = PyDict::new(py);
    for (k, v) in &res.stats {
        stats.set_item(k, v)?;
    }
    out.set_item("stats", stats)?;
    out.set_item("notes", &res.notes)?;
    Ok(out)
}

/// The JSON Schema of a scenario file's sections (descriptions are the
/// Rust doc comments of `netheat_scenario::config`).
#[pyfunction]
pub fn scenario_schema() -> String {
    netheat_scenario::schema()
}
