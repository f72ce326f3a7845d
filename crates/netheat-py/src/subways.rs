//! Subways ToR-failure analysis for Python (`subways_tor_failure`).

use netheat_subways::failures::tor_failure;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::topology::PyTopology;

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
