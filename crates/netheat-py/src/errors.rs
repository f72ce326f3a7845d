//! The one place where Rust errors become Python exceptions.
//!
//! The exception classes live in `netheat.errors` (plain Python, so they can
//! carry attributes and be documented); this module instantiates them.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

fn raise<'py>(py: Python<'py>, class: &str, args: Bound<'py, PyTuple>) -> PyErr {
    let made = py.import("netheat.errors").and_then(|m| m.getattr(class)).and_then(|cls| cls.call1(args));
    match made {
        Ok(inst) => PyErr::from_value(inst),
        Err(e) => e,
    }
}

/// A config file that cannot be used -> `netheat.errors.ConfigError` (an
/// unreadable memory budget -> `netheat.errors.InputError`).
pub fn config(py: Python<'_>, e: netheat_config::ConfigError) -> PyErr {
    use netheat_config::ConfigError as E;
    let msg = e.to_string();
    let args = match &e {
        E::Budget(_) => return input(py, msg),
        E::Io { file, .. } => (msg, file.clone(), 0usize, 0usize, String::new(), String::new()),
        E::Invalid { file, line, column, key, reason } => {
            (msg, file.clone(), *line, *column, key.clone(), reason.clone())
        }
    };
    match args.into_pyobject(py) {
        Ok(t) => raise(py, "ConfigError", t),
        Err(err) => err,
    }
}

/// A bad argument from Python code -> `netheat.errors.InputError`.
pub fn input(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match (msg.into(),).into_pyobject(py) {
        Ok(t) => raise(py, "InputError", t),
        Err(err) => err,
    }
}

/// A request that is not what an endpoint reads -> `netheat.errors.MalformedRequest`.
pub fn malformed(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match (msg.into(),).into_pyobject(py) {
        Ok(t) => raise(py, "MalformedRequest", t),
        Err(err) => err,
    }
}

/// A simulation that cannot run -> `netheat.errors.EngineError`.
pub fn engine(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match (msg.into(),).into_pyobject(py) {
        Ok(t) => raise(py, "EngineError", t),
        Err(err) => err,
    }
}

/// A dataset that is missing, altered or malformed -> `netheat.errors.DataError`.
pub fn data(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    match (msg.into(),).into_pyobject(py) {
        Ok(t) => raise(py, "DataError", t),
        Err(err) => err,
    }
}

/// An experiment point that cannot run: a bad parameter ->
/// `netheat.errors.ConfigError` with its `key` (file `<point>`), a bad
/// datacenter file -> [`config`], else `InputError`, `EngineError` or
/// `DataError`.
pub fn point(py: Python<'_>, e: netheat_repro::points::PointError) -> PyErr {
    use netheat_repro::points::PointError as E;
    let msg = e.to_string();
    match e {
        E::Param { key, reason } => match (msg, "<point>".to_string(), 0usize, 0usize, key, reason).into_pyobject(py) {
            Ok(t) => raise(py, "ConfigError", t),
            Err(err) => err,
        },
        E::Config(c) => config(py, c),
        E::Engine(_) => engine(py, msg),
        E::Data(_) => data(py, msg),
        E::UnknownKind { .. } | E::Json(_) | E::Input(_) => input(py, msg),
    }
}
