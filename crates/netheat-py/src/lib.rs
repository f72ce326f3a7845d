//! Python bindings of netheat, built by maturin as `netheat._netheat`.
//!
//! This is the only crate that depends on PyO3. Each Python-facing type holds
//! a handle to a Rust value and each method delegates to the core crates;
//! long calls release the GIL. Errors become the exception hierarchy of
//! `netheat.errors` in one place ([`errors`]).
#![warn(missing_docs)]

mod advisor;
mod data;
mod errors;
mod points;
mod scenario;
mod simulate;
mod subways;
mod topology;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _netheat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<topology::PyTopology>()?;
    m.add_class::<advisor::PyAdvisor>()?;
    m.add_function(wrap_pyfunction!(advisor::advisor_schema, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::run_simulation, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(points::run_point, m)?)?;
    m.add_function(wrap_pyfunction!(points::point_check, m)?)?;
    m.add_function(wrap_pyfunction!(points::point_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(points::point_schema, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::generate_workload, m)?)?;
    m.add_function(wrap_pyfunction!(subways::subways_tor_failure, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bandwidth, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(memory_budget, m)?)?;
    m.add_function(wrap_pyfunction!(set_memory_budget, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_resolve_dir, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_require_dir, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_registry, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_status, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_load_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_load_coflows, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_load_traffic_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(data::data_load_table, m)?)?;
    Ok(())
}

/// Seconds in a duration string such as `"5min"`.
#[pyfunction]
fn parse_duration(py: Python<'_>, text: &str) -> PyResult<f64> {
    netheat_core::parse_duration(text).map_err(|e| errors::input(py, format!("invalid duration: {e}")))
}

/// Bits per second in a bandwidth string such as `"10Gbps"`.
#[pyfunction]
fn parse_bandwidth(py: Python<'_>, text: &str) -> PyResult<f64> {
    netheat_core::parse_bandwidth(text).map_err(|e| errors::input(py, format!("invalid bandwidth: {e}")))
}

/// Bytes in a size string such as `"256MiB"`.
#[pyfunction]
fn parse_bytes(py: Python<'_>, text: &str) -> PyResult<f64> {
    netheat_core::parse_bytes(text).map_err(|e| errors::input(py, format!("invalid size: {e}")))
}

/// The memory budget in bytes: what `set_memory_budget` set, else
/// `$NETHEAT_MEMORY_BUDGET`, else half of the physical memory (see
/// `netheat_core::budget`). An invalid `$NETHEAT_MEMORY_BUDGET` raises
/// `InputError`.
#[pyfunction]
fn memory_budget(py: Python<'_>) -> PyResult<u64> {
    netheat_core::memory_budget().map_err(|e| errors::input(py, e.to_string()))
}

/// Sets the memory budget of this process in bytes (overrides
/// `$NETHEAT_MEMORY_BUDGET`); 0 raises `InputError`.
#[pyfunction]
fn set_memory_budget(py: Python<'_>, bytes: u64) -> PyResult<()> {
    netheat_core::set_memory_budget(bytes).map_err(|e| errors::input(py, e.to_string()))
}
