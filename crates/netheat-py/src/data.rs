//! `netheat.data` bindings: the dataset registry, checksum status and loaders.
//!
//! Every function takes `data_dir` (the explicit directory, i.e. the
//! `--data-dir` flag, or `None`) and `extra_roots` (candidate project roots
//! for the default `../shared/data`, e.g. the Python package's own root) and
//! resolves flag > `NETHEAT_DATA` > default in Rust, so error messages say
//! how the directory was chosen. Hashing and parsing run with the GIL
//! released; every failure becomes `netheat.errors.DataError`.

use std::path::PathBuf;

use netheat_data::{DataDir, DataError, Status, DATASETS};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors;

pub(crate) fn resolve(data_dir: Option<PathBuf>, extra_roots: &[PathBuf]) -> DataDir {
    DataDir::resolve_with(data_dir.as_deref(), std::env::var_os(netheat_data::ENV_VAR), extra_roots)
}

fn err(py: Python<'_>, e: DataError) -> PyErr {
    errors::data(py, e.to_string())
}

/// `(dtype, little-endian bytes)` for `numpy.frombuffer`.
fn f64_column<'py>(py: Python<'py>, v: impl Iterator<Item = f64>) -> PyResult<Bound<'py, PyAny>> {
    let bytes: Vec<u8> = v.flat_map(f64::to_le_bytes).collect();
    ("<f8", PyBytes::new(py, &bytes)).into_pyobject(py).map(|t| t.into_any())
}

/// Resolves the data directory: `(path, source, description, exists)`, where
/// source is `flag`, `env`, `default` or `none`.
#[pyfunction]
#[pyo3(signature = (data_dir = None, extra_roots = Vec::new()))]
pub fn data_resolve_dir(data_dir: Option<PathBuf>, extra_roots: Vec<PathBuf>) -> (String, String, String, bool) {
    let d = resolve(data_dir, &extra_roots);
    (d.path.display().to_string(), d.source.as_str().to_string(), d.source.to_string(), d.exists())
}

/// Raises `DataError` (where it looked, how to fix) unless the data directory exists.
#[pyfunction]
#[pyo3(signature = (data_dir = None, extra_roots = Vec::new()))]
pub fn data_require_dir(py: Python<'_>, data_dir: Option<PathBuf>, extra_roots: Vec<PathBuf>) -> PyResult<String> {
    let d = resolve(data_dir, &extra_roots);
    d.require().map_err(|e| err(py, e))?;
    Ok(d.path.display().to_string())
}

/// The registry: one dict per dataset with its provenance.
#[pyfunction]
pub fn data_registry(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for d in DATASETS {
        let e = PyDict::new(py);
        e.set_item("name", d.name)?;
        e.set_item("path", d.path)?;
        e.set_item("repo", d.upstream.repo)?;
        e.set_item("commit", d.upstream.commit)?;
        e.set_item("upstream_path", d.upstream.path)?;
        e.set_item("url", d.upstream.url())?;
        e.set_item("sha256", d.sha256)?;
        e.set_item("size", d.size)?;
        e.set_item("format", d.format.as_str())?;
        e.set_item("kind", d.format.kind())?;
        e.set_item("description", d.description)?;
        out.append(e)?;
    }
    Ok(out)
}

/// Status of the named datasets (all when `names` is empty): one dict each
/// with `name`, `path` (full), `status` (`present`, `missing`,
/// `checksum-mismatch`), `expected_sha256`, `actual_sha256` (mismatches only)
/// and `size` (bytes on disk, or `None` when missing).
#[pyfunction]
#[pyo3(signature = (names = Vec::new(), data_dir = None, extra_roots = Vec::new()))]
pub fn data_status<'py>(
    py: Python<'py>,
    names: Vec<String>,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyList>> {
    let dir = resolve(data_dir, &extra_roots);
    let sets = if names.is_empty() {
        DATASETS.iter().collect::<Vec<_>>()
    } else {
        names.iter().map(|n| netheat_data::find(n)).collect::<Result<Vec<_>, _>>().map_err(|e| err(py, e))?
    };
    let results = py.allow_threads(|| {
        sets.iter()
            .map(|d| {
                let path = dir.join(d.path);
                let size = std::fs::metadata(&path).ok().map(|m| m.len());
                netheat_data::status(&dir, d).map(|s| (d, path, s, size))
            })
            .collect::<Result<Vec<_>, _>>()
    });
    let out = PyList::empty(py);
    for (d, path, s, size) in results.map_err(|e| err(py, e))? {
        let e = PyDict::new(py);
        e.set_item("name", d.name)?;
        e.set_item("path", path.display().to_string())?;
        e.set_item("status", s.as_str())?;
        e.set_item("expected_sha256", d.sha256)?;
        let actual = match &s {
            Status::ChecksumMismatch { actual } => Some(actual.clone()),
            _ => None,
        };
        e.set_item("actual_sha256", actual)?;
        e.set_item("size", size)?;
        e.set_item("description", d.description)?;
        out.append(e)?;
    }
    Ok(out)
}

/// A flow-size CDF: `((dtype, bytes) sizes in bytes, (dtype, bytes) cumulative probabilities)`.
#[pyfunction]
#[pyo3(signature = (name, data_dir = None, extra_roots = Vec::new()))]
pub fn data_load_cdf<'py>(
    py: Python<'py>,
    name: &str,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let dir = resolve(data_dir, &extra_roots);
    let c = py.allow_threads(|| netheat_data::load_cdf(&dir, name)).map_err(|e| err(py, e))?;
    Ok((f64_column(py, c.points.iter().map(|p| p.0))?, f64_column(py, c.points.iter().map(|p| p.1))?))
}

/// A coflow trace as columns: `racks` and lists `id`, `arrival_ms`,
/// `mapper_racks`, `reducer_racks`, `reducer_mb`, `shuffle_mb`.
#[pyfunction]
#[pyo3(signature = (name, data_dir = None, extra_roots = Vec::new()))]
pub fn data_load_coflows<'py>(
    py: Python<'py>,
    name: &str,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let dir = resolve(data_dir, &extra_roots);
    let t = py.allow_threads(|| netheat_data::load_coflows(&dir, name)).map_err(|e| err(py, e))?;
    let d = PyDict::new(py);
    d.set_item("racks", t.racks)?;
    d.set_item("id", t.coflows.iter().map(|c| c.id).collect::<Vec<_>>())?;
    d.set_item("arrival_ms", t.coflows.iter().map(|c| c.arrival_ms).collect::<Vec<_>>())?;
    d.set_item("mapper_racks", t.coflows.iter().map(|c| c.mapper_racks.clone()).collect::<Vec<_>>())?;
    let reducer_racks: Vec<Vec<u32>> = t.coflows.iter().map(|c| c.reducers.iter().map(|r| r.0).collect()).collect();
    let reducer_mb: Vec<Vec<f64>> = t.coflows.iter().map(|c| c.reducers.iter().map(|r| r.1).collect()).collect();
    d.set_item("reducer_racks", reducer_racks)?;
    d.set_item("reducer_mb", reducer_mb)?;
    d.set_item("shuffle_mb", t.coflows.iter().map(|c| c.shuffle_mb()).collect::<Vec<_>>())?;
    Ok(d)
}

/// A rack-to-rack traffic matrix: `n_racks`, `matrix` (`(dtype, bytes)`,
/// row-major n x n), `rack_names`, `pod_names`, `pod_racks`, `rack_pod`.
#[pyfunction]
#[pyo3(signature = (name, data_dir = None, extra_roots = Vec::new()))]
pub fn data_load_traffic_matrix<'py>(
    py: Python<'py>,
    name: &str,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let dir = resolve(data_dir, &extra_roots);
    let m = py.allow_threads(|| netheat_data::load_traffic_matrix(&dir, name)).map_err(|e| err(py, e))?;
    let d = PyDict::new(py);
    d.set_item("n_racks", m.n_racks())?;
    d.set_item("matrix", f64_column(py, m.matrix.iter().flatten().copied())?)?;
    d.set_item("rack_names", &m.rack_names)?;
    d.set_item("pod_names", m.pods.iter().map(|p| p.name.clone()).collect::<Vec<_>>())?;
    d.set_item("pod_racks", m.pods.iter().map(|p| p.racks.clone()).collect::<Vec<_>>())?;
    d.set_item("rack_pod", m.rack_pods())?;
    Ok(d)
}

/// A tabular dataset (jobs, pods, nodes, machine meta/usage): `(format, {column: list})`.
#[pyfunction]
#[pyo3(signature = (name, data_dir = None, extra_roots = Vec::new()))]
pub fn data_load_table<'py>(
    py: Python<'py>,
    name: &str,
    data_dir: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    use netheat_data::Format;
    let ds = netheat_data::find(name).map_err(|e| err(py, e))?;
    let dir = resolve(data_dir, &extra_roots);
    let d = PyDict::new(py);
    macro_rules! cols {
        ($rows:expr, $($col:literal => |$r:ident| $e:expr),* $(,)?) => {{
            let rows = $rows;
            $( d.set_item($col, rows.iter().map(|$r| $e).collect::<Vec<_>>())?; )*
        }};
    }
    match ds.format {
        Format::CloudSimPyJobs => cols!(
            py.allow_threads(|| netheat_data::load_cloudsimpy_jobs(&dir, name)).map_err(|e| err(py, e))?,
            "job_id" => |r| r.job_id,
            "task_id" => |r| r.task_id,
            "submit_time_s" => |r| r.submit_time_s,
            "duration_s" => |r| r.duration_s,
            "cpu" => |r| r.cpu,
            "memory" => |r| r.memory,
            "instances" => |r| r.instances,
            "disk" => |r| r.disk,
        ),
        Format::GpuPods => cols!(
            py.allow_threads(|| netheat_data::load_gpu_pods(&dir, name)).map_err(|e| err(py, e))?,
            "name" => |r| r.name.clone(),
            "cpu_milli" => |r| r.cpu_milli,
            "memory_mib" => |r| r.memory_mib,
            "num_gpu" => |r| r.num_gpu,
            "gpu_milli" => |r| r.gpu_milli,
            "gpu_spec" => |r| r.gpu_spec.clone(),
            "qos" => |r| r.qos.clone(),
            "pod_phase" => |r| r.pod_phase.clone(),
            "creation_time_s" => |r| r.creation_time_s,
            "deletion_time_s" => |r| r.deletion_time_s,
            "scheduled_time_s" => |r| r.scheduled_time_s,
        ),
        Format::GpuNodes => cols!(
            py.allow_threads(|| netheat_data::load_gpu_nodes(&dir, name)).map_err(|e| err(py, e))?,
            "sn" => |r| r.sn.clone(),
            "cpu_milli" => |r| r.cpu_milli,
            "memory_mib" => |r| r.memory_mib,
            "gpu" => |r| r.gpu,
            "model" => |r| r.model.clone(),
        ),
        Format::MachineMeta => cols!(
            py.allow_threads(|| netheat_data::load_machine_meta(&dir, name)).map_err(|e| err(py, e))?,
            "machine_id" => |r| r.machine_id.clone(),
            "time_s" => |r| r.time_s,
            "failure_domain_1" => |r| r.failure_domain_1,
            "failure_domain_2" => |r| r.failure_domain_2.clone(),
            "cpu_num" => |r| r.cpu_num,
            "mem_size" => |r| r.mem_size,
            "status" => |r| r.status.clone(),
        ),
        Format::MachineUsage => cols!(
            py.allow_threads(|| netheat_data::load_machine_usage(&dir, name)).map_err(|e| err(py, e))?,
            "machine_id" => |r| r.machine_id.clone(),
            "time_s" => |r| r.time_s,
            "cpu_util_percent" => |r| r.cpu_util_percent,
            "mem_util_percent" => |r| r.mem_util_percent,
            "mem_gps" => |r| r.mem_gps,
            "mkpi" => |r| r.mkpi,
            "net_in" => |r| r.net_in,
            "net_out" => |r| r.net_out,
            "disk_io_percent" => |r| r.disk_io_percent,
        ),
        other => {
            return Err(errors::data(
                py,
                format!("dataset `{name}` is a {} dataset (format {}), not a table", other.kind(), other.as_str()),
            ))
        }
    }
    Ok((ds.format.as_str().to_string(), d))
}
