//! `run_point`: the one entry point of the paper experiment points
//! (`netheat_repro::points`: `baraat`), plus `point_kinds`, `point_schema` and
//! `point_check`.
//!
//! Parameters cross as JSON (kebab-case keys, SI numbers or unit strings);
//! the output is `{"values": {name: number}, "tables": {name: {column:
//! (numpy dtype, little-endian bytes) | [str]}}, "notes": [str], "extra":
//! {name: number}}`. The point runs on its own thread with the GIL
//! released; every 0.25 s the GIL is taken back to let Ctrl-C through.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use netheat_repro::points::{self, Column, PointEnv, PointOutput};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::errors;
use crate::simulate::column;

fn parse_json(py: Python<'_>, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| errors::input(py, format!("point parameters are not JSON: {e}")))
}

fn table<'py>(py: Python<'py>, cols: &[(String, Column)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, c) in cols {
        match c {
            Column::F64(v) => d.set_item(name, column(py, "<f8", v)?)?,
            Column::I64(v) => d.set_item(name, column(py, "<i8", v)?)?,
            Column::U64(v) => d.set_item(name, column(py, "<u8", v)?)?,
            Column::U32(v) => d.set_item(name, column(py, "<u4", v)?)?,
            Column::I32(v) => d.set_item(name, column(py, "<i4", v)?)?,
            Column::Bool(v) => {
                d.set_item(name, column(py, "|b1", &v.iter().map(|&b| u8::from(b)).collect::<Vec<_>>())?)?
            }
            Column::Str(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

fn output<'py>(py: Python<'py>, o: &PointOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let values = PyDict::new(py);
    for (k, v) in &o.values {
        values.set_item(k, v)?;
    }
    d.set_item("values", values)?;
    let tables = PyDict::new(py);
    for (k, t) in &o.tables {
        tables.set_item(k, table(py, t)?)?;
    }
    d.set_item("tables", tables)?;
    d.set_item("notes", &o.notes)?;
    let extra = PyDict::new(py);
    for (k, v) in &o.extra {
        extra.set_item(k, v)?;
    }
    d.set_item("extra", extra)?;
    Ok(d)
}

/// Runs one point of kind `kind` with `params_json` (a JSON object of the
/// kind's parameters; `point_schema(kind)` lists them) and `seed`; returns
/// `{"values", "tables", "notes", "extra"}`. `extra_roots` are project
/// roots tried for the data directory. Ctrl-C raises `KeyboardInterrupt`
/// (the point's thread is left to finish on its own).
#[pyfunction]
#[pyo3(signature = (kind, params_json, seed, extra_roots = Vec::new()))]
pub fn run_point<'py>(
    py: Python<'py>,
    kind: &str,
    params_json: &str,
    seed: u64,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let params = parse_json(py, params_json)?;
    let tag = points::kind(kind).map_err(|e| errors::point(py, e))?.tag;
    let env = PointEnv { extra_roots };
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("netheat-point-{tag}"))
        .spawn(move || {
            let _ = tx.send(points::run_point(tag, params, seed, &env));
        })
        .map_err(|e| errors::engine(py, format!("cannot start the point's thread: {e}")))?;
    let mut rx = rx;
    loop {
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(Duration::from_millis(250)), rx));
        rx = back;
        match got {
            Ok(Ok(o)) => return output(py, &o),
            Ok(Err(e)) => return Err(errors::point(py, e)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    return Err(if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                        PyKeyboardInterrupt::new_err("interrupted")
                    } else {
                        e
                    });
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(errors::engine(py, format!("the {tag} point stopped without a result (a panic)")))
            }
        }
    }
}

/// Checks a point's parameters (names, types, units) without running it;
/// a bad key raises `ConfigError` whose `key` names it.
#[pyfunction]
pub fn point_check(py: Python<'_>, kind: &str, params_json: &str) -> PyResult<()> {
    let params = parse_json(py, params_json)?;
    points::check_point(kind, params).map(|_| ()).map_err(|e| errors::point(py, e))
}

/// The registered point kinds.
#[pyfunction]
pub fn point_kinds() -> Vec<&'static str> {
    points::tags()
}

/// The JSON Schema of a point kind's parameters (descriptions are the Rust
/// doc comments; `format` `bandwidth`, `bytes`, `duration` or `path` marks
/// unit-bearing keys and file paths; `required` lists keys without default).
#[pyfunction]
pub fn point_schema(py: Python<'_>, kind: &str) -> PyResult<String> {
    let s = points::schema(kind).map_err(|e| errors::point(py, e))?;
    Ok(serde_json::to_string_pretty(&s).unwrap_or_default())
}
