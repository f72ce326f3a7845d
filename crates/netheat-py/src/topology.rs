//! `netheat.Topology`: a handle to a built datacenter.

use std::path::PathBuf;
use std::sync::Arc;

use netheat_core::Routing;
use netheat_topology::Topology;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;

/// A built datacenter (hosts, racks, switches, directed links, routing).
#[pyclass(module = "netheat._netheat", name = "Topology", frozen)]
pub struct PyTopology {
    pub(crate) inner: Arc<Topology>,
}

/// A Python value as a TOML value: str, bool, int, float or a list of them.
fn toml_value(v: &Bound<'_, PyAny>) -> Option<toml_edit::Value> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
    if v.is_instance_of::<PyBool>() {
        return v.extract::<bool>().ok().map(Into::into);
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().ok().map(Into::into);
    }
    if v.is_instance_of::<PyFloat>() {
        return v.extract::<f64>().ok().map(Into::into);
    }
    if v.is_instance_of::<PyString>() {
        return v.extract::<String>().ok().map(Into::into);
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut a = toml_edit::Array::new();
        for item in v.try_iter().ok()? {
            a.push(toml_value(&item.ok()?)?);
        }
        return Some(a.into());
    }
    None
}

impl PyTopology {
    fn host_id(&self, py: Python<'_>, h: &Bound<'_, PyAny>) -> PyResult<u32> {
        let text = if let Ok(i) = h.extract::<i64>() { i.to_string() } else { h.extract::<String>()? };
        self.inner.host_ref(&text).ok_or_else(|| {
            errors::input(
                py,
                format!(
                    "host {} does not exist (hosts are 0..{} or named r<rack>h<slot>)",
                    netheat_core::clip(&text, 60),
                    self.inner.hosts().len() - 1
                ),
            )
        })
    }
}

#[pymethods]
impl PyTopology {
    /// Loads and validates a datacenter TOML file; `overrides` replaces (or
    /// adds) keys of its `[topology]` table (`{"loop-size": 2}`). An error
    /// about an overridden key has `file` `"<override>"` and that key.
    #[staticmethod]
    #[pyo3(signature = (path, overrides = None))]
    fn load(py: Python<'_>, path: PathBuf, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut table = toml_edit::Table::new();
        for (k, v) in overrides.map(|d| d.iter().collect::<Vec<_>>()).unwrap_or_default() {
            let key: String = k.extract()?;
            let value = toml_value(&v).ok_or_else(|| {
                errors::input(
                    py,
                    format!(
                        "topology override `{key}`: {v} is not a TOML value (str, int, float, bool or a list of them)"
                    ),
                )
            })?;
            table.insert(&key, toml_edit::Item::Value(value));
        }
        let t = py
            .allow_threads(|| netheat_config::load_topology_overridden(&path, &table))
            .map_err(|e| errors::config(py, e))?;
        Ok(Self { inner: Arc::new(t) })
    }

    /// Builds a datacenter from TOML text (`file` names it in error messages).
    #[staticmethod]
    #[pyo3(signature = (text, file = "<string>"))]
    fn from_toml(py: Python<'_>, text: &str, file: &str) -> PyResult<Self> {
        let t = netheat_config::load_topology_str(text, file).map_err(|e| errors::config(py, e))?;
        Ok(Self { inner: Arc::new(t) })
    }

    /// `two-tier`, `three-tier` or `subways`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind().as_str()
    }

    /// Number of hosts.
    #[getter]
    fn num_hosts(&self) -> usize {
        self.inner.hosts().len()
    }

    /// Number of racks.
    #[getter]
    fn num_racks(&self) -> usize {
        self.inner.racks().len()
    }

    /// Number of directed links.
    #[getter]
    fn num_links(&self) -> usize {
        self.inner.links().len()
    }

    /// Counts, capacities, oversubscription and bisection as a dict.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.summary();
        let d = PyDict::new(py);
        d.set_item("kind", s.kind)?;
        let nodes = PyDict::new(py);
        for (k, n) in &s.nodes {
            nodes.set_item(k.as_str(), n)?;
        }
        d.set_item("nodes", nodes)?;
        d.set_item("pods", s.pods)?;
        d.set_item("racks", s.racks)?;
        let layers = PyDict::new(py);
        for l in &s.layers {
            let e = PyDict::new(py);
            e.set_item("links", l.physical_links)?;
            e.set_item("capacity_bps", l.capacity_bps)?;
            layers.set_item(l.layer.as_str(), e)?;
        }
        d.set_item("layers", layers)?;
        let over = PyDict::new(py);
        for o in &s.oversubscription {
            over.set_item(o.tier, (o.min, o.median, o.max))?;
        }
        d.set_item("oversubscription", over)?;
        d.set_item("bisection_bps", s.bisection_bps)?;
        let kinds = PyDict::new(py);
        for (k, n) in &s.rack_kinds {
            kinds.set_item(k.as_str(), n)?;
        }
        d.set_item("rack_kinds", kinds)?;
        let classes = PyDict::new(py);
        for (c, n) in &s.uplink_classes {
            classes.set_item(c.as_str(), n)?;
        }
        d.set_item("uplink_classes", classes)?;
        d.set_item("events", s.events)?;
        if let Some(sw) = self.inner.subways() {
            let w = PyDict::new(py);
            w.set_item("wiring", format!("{:?}", sw.wiring).to_lowercase())?;
            w.set_item("ports_per_host", self.inner.hosts()[0].ports.len())?;
            w.set_item("loop_size", sw.loop_size)?;
            w.set_item("clusters_per_loop", sw.clusters_per_loop)?;
            d.set_item("subways", w)?;
        }
        Ok(d)
    }

    /// Nodes as columns: id, kind, name, pod, rack (-1 when not applicable).
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let n = self.inner.nodes();
        let d = PyDict::new(py);
        d.set_item("id", (0..n.len() as u32).collect::<Vec<_>>())?;
        d.set_item("kind", n.iter().map(|x| x.kind.as_str()).collect::<Vec<_>>())?;
        d.set_item("name", n.iter().map(|x| x.name.as_str()).collect::<Vec<_>>())?;
        d.set_item("pod", n.iter().map(|x| x.pod.map_or(-1, |p| p as i64)).collect::<Vec<_>>())?;
        d.set_item("rack", n.iter().map(|x| x.rack.map_or(-1, |p| p as i64)).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Directed links as columns: id, src, dst, capacity_bps, layer, direction, reverse.
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = self.inner.links();
        let d = PyDict::new(py);
        d.set_item("id", (0..l.len() as u32).collect::<Vec<_>>())?;
        d.set_item("src", l.iter().map(|x| x.src).collect::<Vec<_>>())?;
        d.set_item("dst", l.iter().map(|x| x.dst).collect::<Vec<_>>())?;
        d.set_item("capacity_bps", l.iter().map(|x| x.capacity_bps).collect::<Vec<_>>())?;
        d.set_item("layer", l.iter().map(|x| x.layer.as_str()).collect::<Vec<_>>())?;
        d.set_item("direction", l.iter().map(|x| x.direction.as_str()).collect::<Vec<_>>())?;
        d.set_item("reverse", l.iter().map(|x| x.reverse).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Racks as columns: id, name, kind, pod, uplink_bps, uplink_class, uplink_ratio, loop.
    fn racks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.inner;
        let r = t.racks();
        let d = PyDict::new(py);
        d.set_item("id", (0..r.len() as u32).collect::<Vec<_>>())?;
        d.set_item("name", r.iter().map(|x| x.name.as_str()).collect::<Vec<_>>())?;
        d.set_item("kind", r.iter().map(|x| x.kind.as_str()).collect::<Vec<_>>())?;
        d.set_item("pod", r.iter().map(|x| x.pod).collect::<Vec<_>>())?;
        d.set_item("uplink_bps", (0..r.len() as u32).map(|i| t.tor_uplink_bps(i)).collect::<Vec<_>>())?;
        d.set_item("uplink_class", r.iter().map(|x| x.uplink_class.as_str()).collect::<Vec<_>>())?;
        d.set_item("uplink_ratio", r.iter().map(|x| x.uplink_ratio).collect::<Vec<_>>())?;
        d.set_item("loop", r.iter().map(|x| x.subways_loop.map_or(-1, |l| l as i64)).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Host NIC ports as columns: host, port, tor, speed_bps.
    fn host_ports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (mut host, mut port, mut tor, mut speed) = (vec![], vec![], vec![], vec![]);
        for (h, x) in self.inner.hosts().iter().enumerate() {
            for (j, p) in x.ports.iter().enumerate() {
                host.push(h as u32);
                port.push(j as u32);
                tor.push(p.tor);
                speed.push(p.speed_bps);
            }
        }
        let d = PyDict::new(py);
        d.set_item("host", host)?;
        d.set_item("port", port)?;
        d.set_item("tor", tor)?;
        d.set_item("speed_bps", speed)?;
        Ok(d)
    }

    /// Capacity events as columns: time_s, link, capacity_bps.
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = self.inner.events();
        let d = PyDict::new(py);
        d.set_item("time_s", e.iter().map(|x| x.time_s).collect::<Vec<_>>())?;
        d.set_item("link", e.iter().map(|x| x.link).collect::<Vec<_>>())?;
        d.set_item("capacity_bps", e.iter().map(|x| x.capacity_bps).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Resolves a host given by index or name (`"r4h1"`) to its index.
    fn host(&self, py: Python<'_>, host: &Bound<'_, PyAny>) -> PyResult<u32> {
        self.host_id(py, host)
    }

    /// Every shortest path (list of directed link ids) between two hosts.
    fn paths(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u32>>> {
        let (s, d) = (self.host_id(py, src)?, self.host_id(py, dst)?);
        Ok(self.inner.all_paths(s, d))
    }

    /// Number of shortest paths between two hosts.
    fn num_paths(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<usize> {
        let (s, d) = (self.host_id(py, src)?, self.host_id(py, dst)?);
        Ok(self.inner.num_paths(s, d))
    }

    fn __repr__(&self) -> String {
        format!(
            "<Topology {} hosts={} racks={} links={}>",
            self.inner.kind().as_str(),
            self.inner.hosts().len(),
            self.inner.racks().len(),
            self.inner.links().len()
        )
    }
}
