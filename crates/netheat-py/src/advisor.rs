//! `Advisor`: the live placement advisor of `netheat-advisor` (the
//! simulator's UTP, Sinbad and CCP code on a telemetry snapshot), behind a
//! mutex so that `netheat serve`'s request handlers and its telemetry
//! refresher can share it; every call releases the GIL. Answers cross as
//! JSON text, which the service returns as it is.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use netheat_advisor::extender::DEFAULT_DEMAND_ANNOTATION;
use netheat_advisor::{to_json, Advisor, AdvisorError, ExtenderOptions, ExtenderReply};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

fn to_py(py: Python<'_>, e: AdvisorError) -> PyErr {
    match e {
        AdvisorError::Config(c) => errors::config(py, c),
        AdvisorError::Malformed(m) => errors::malformed(py, m),
        other => errors::input(py, other.to_string()),
    }
}

/// A request body given as `bytes` or `str`.
fn body_bytes<'a>(body: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    match body.downcast::<pyo3::types::PyBytes>() {
        Ok(b) => Ok(b.as_bytes()),
        Err(_) => Ok(body.downcast::<pyo3::types::PyString>()?.to_str()?.as_bytes()),
    }
}

/// Placement decisions for a live cluster (see `netheat serve`).
#[pyclass(frozen, name = "Advisor", module = "netheat._netheat")]
pub struct PyAdvisor {
    inner: Mutex<Advisor>,
}

impl PyAdvisor {
    /// An extender call on the body, GIL released: the answer and the warning to log.
    fn extender_call(
        &self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        call: impl FnOnce(&Advisor, &[u8]) -> Result<ExtenderReply, AdvisorError> + Send,
    ) -> PyResult<(String, Option<String>)> {
        let body = body_bytes(body)?;
        py.allow_threads(|| call(&self.lock(), body)).map(|r| (r.json, r.warning)).map_err(|e| to_py(py, e))
    }

    /// A decision: the JSON request's bytes in, the JSON answer out as
    /// bytes (what the service sends as is), without the GIL.
    fn decide<'py>(
        &self,
        py: Python<'py>,
        request_json: &Bound<'_, PyAny>,
        call: impl FnOnce(&mut Advisor, &[u8]) -> Result<Vec<u8>, AdvisorError> + Send,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let body = body_bytes(request_json)?;
        let answer = py.allow_threads(|| call(&mut self.lock(), body)).map_err(|e| to_py(py, e))?;
        Ok(PyBytes::new(py, &answer))
    }

    fn lock(&self) -> MutexGuard<'_, Advisor> {
        // A panic inside a call cannot leave the advisor half-updated in a
        // way later calls could see as wrong: every update is a whole
        // snapshot, so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl PyAdvisor {
    /// An advisor for the datacenter file `topology` and the advisor file
    /// `config` (`None`: UTP and Sinbad with their defaults).
    #[new]
    #[pyo3(signature = (topology, config=None))]
    fn new(py: Python<'_>, topology: PathBuf, config: Option<PathBuf>) -> PyResult<Self> {
        let a = py.allow_threads(|| Advisor::from_paths(&topology, config.as_deref())).map_err(|e| to_py(py, e))?;
        Ok(Self { inner: Mutex::new(a) })
    }

    /// Hosts in the datacenter.
    #[getter]
    fn num_hosts(&self) -> usize {
        self.lock().topology().hosts().len()
    }

    /// Host names by id.
    fn host_names(&self) -> Vec<String> {
        let a = self.lock();
        (0..a.topology().hosts().len() as u32).map(|h| a.host_name(h).to_string()).collect()
    }

    /// ToR names by rack index.
    fn tor_names(&self) -> Vec<String> {
        let a = self.lock();
        (0..a.topology().tors().len()).map(|t| a.tor_name(t).to_string()).collect()
    }

    /// The ToR (rack index) of a host.
    fn host_tor(&self, py: Python<'_>, host: u32) -> PyResult<u32> {
        let a = self.lock();
        let h = a.host(&netheat_advisor::Ref::Index(host.into())).map_err(|e| to_py(py, e))?;
        Ok(a.topology().hosts()[h as usize].rack)
    }

    /// A host id from its name (`"r0h1"`) or index (`"4"`); `None` if unknown.
    fn resolve_host(&self, text: &str) -> Option<u32> {
        self.lock().topology().host_ref(text)
    }

    /// Directed link ids of every ToR uplink.
    fn uplinks(&self) -> Vec<u32> {
        self.lock().uplinks()
    }

    /// One telemetry snapshot at `at_s` (Unix seconds): the measured rate
    /// of each listed directed link, optionally its capacity in force.
    #[pyo3(signature = (at_s, links, rates_bps, capacities_bps=None))]
    fn observe(
        &self,
        py: Python<'_>,
        at_s: f64,
        links: Vec<u32>,
        rates_bps: Vec<f64>,
        capacities_bps: Option<Vec<f64>>,
    ) -> PyResult<()> {
        py.allow_threads(|| self.lock().observe(at_s, &links, &rates_bps, capacities_bps.as_deref()))
            .map_err(|e| to_py(py, e))
    }

    /// Bytes stored per host and which hosts are live (replica placement).
    #[pyo3(signature = (used_bytes=None, live=None))]
    fn set_storage(&self, py: Python<'_>, used_bytes: Option<Vec<f64>>, live: Option<Vec<bool>>) -> PyResult<()> {
        self.lock().set_storage(used_bytes.as_deref(), live.as_deref()).map_err(|e| to_py(py, e))
    }

    /// The advisor in brief, as JSON.
    fn status_json(&self, now_s: f64) -> String {
        to_json(&self.lock().status(now_s))
    }

    /// Every ToR and its uplinks now, as JSON.
    fn tors_json(&self, py: Python<'_>, now_s: f64) -> String {
        py.allow_threads(|| to_json(&self.lock().tors(now_s)))
    }

    /// The load report of netheat's HDFS placement policy (`docs/hdfs.md`).
    fn hdfs_loads(&self, py: Python<'_>) -> String {
        py.allow_threads(|| self.lock().hdfs_loads())
    }

    /// Ranks hosts for a task; request (text or bytes) and answer (bytes,
    /// what the service sends as is) are JSON.
    fn place_task_json<'py>(
        &self,
        py: Python<'py>,
        now_s: f64,
        request_json: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.decide(py, request_json, |a, body| a.place_task_json(now_s, body))
    }

    /// Places a block's pieces; request and answer are JSON.
    fn place_replicas_json<'py>(
        &self,
        py: Python<'py>,
        now_s: f64,
        request_json: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.decide(py, request_json, |a, body| a.place_replicas_json(now_s, body))
    }

    /// Which tasks to move off a ToR; request and answer are JSON.
    fn migrate_json<'py>(
        &self,
        py: Python<'py>,
        now_s: f64,
        request_json: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.decide(py, request_json, |a, body| a.migrate_json(now_s, body))
    }

    /// The Kubernetes extender's verdict per host for a pod demanding
    /// `demand_bps`, as JSON.
    fn extender_json(&self, py: Python<'_>, now_s: f64, hosts: Vec<u32>, demand_bps: f64) -> PyResult<String> {
        py.allow_threads(|| self.lock().extender(now_s, &hosts, demand_bps).map(|a| to_json(&a)))
            .map_err(|e| to_py(py, e))
    }

    /// `POST /scheduler/filter`: an `ExtenderArgs` body to the
    /// `ExtenderFilterResult` JSON, and the warning to log about nodes that
    /// map to no host (`None`: all map).
    #[pyo3(signature = (now_s, body, node_label = None, demand_annotation = DEFAULT_DEMAND_ANNOTATION, datacenter = ""))]
    fn extender_filter_json(
        &self,
        py: Python<'_>,
        now_s: f64,
        body: &Bound<'_, PyAny>,
        node_label: Option<String>,
        demand_annotation: &str,
        datacenter: &str,
    ) -> PyResult<(String, Option<String>)> {
        let opts =
            ExtenderOptions { node_label, demand_annotation: demand_annotation.into(), datacenter: datacenter.into() };
        self.extender_call(py, body, |a, b| a.extender_filter_json(now_s, b, &opts))
    }

    /// `POST /scheduler/prioritize`: an `ExtenderArgs` body to the
    /// `HostPriorityList` JSON, and the warning to log (as
    /// `extender_filter_json`).
    #[pyo3(signature = (now_s, body, node_label = None, demand_annotation = DEFAULT_DEMAND_ANNOTATION, datacenter = ""))]
    fn extender_prioritize_json(
        &self,
        py: Python<'_>,
        now_s: f64,
        body: &Bound<'_, PyAny>,
        node_label: Option<String>,
        demand_annotation: &str,
        datacenter: &str,
    ) -> PyResult<(String, Option<String>)> {
        let opts =
            ExtenderOptions { node_label, demand_annotation: demand_annotation.into(), datacenter: datacenter.into() };
        self.extender_call(py, body, |a, b| a.extender_prioritize_json(now_s, b, &opts))
    }
}

/// The JSON Schema of the advisor file (`[placement]`, `[storage]`,
/// `[advisor]`), as text.
#[pyfunction]
pub fn advisor_schema() -> String {
    netheat_advisor::config::schema().to_string()
}
