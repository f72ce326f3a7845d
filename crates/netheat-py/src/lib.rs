//! Python bindings of netheat, built by maturin as `netheat._netheat`.
//!
//! This is the only crate that depends on PyO3. Each Python-facing type holds
//! a handle to a Rust value and each method delegates to the core crates;
//! long calls release the GIL. Errors become the exception hierarchy of
//! `netheat.errors` in one place ([`errors`]).
#![warn(missing_docs)]

mod errors;
mod topology;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _netheat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<topology::PyTopology>()?;
    Ok(())
}
