//! `sinbad_point`: one Sinbad replica-placement point (uniform vs the
//! policy on the same writes over one precalculated background, see
//! `netheat_repro::sinbad`), run with
//! the GIL released; returns summary values and the paired block table.

use netheat_repro::sinbad::{sinbad_point as run_point, validate_sinbad, SinbadSpec};
use netheat_storage::{PolicyConfig, StorageError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

use crate::errors;

fn to_py(py: Python<'_>, e: StorageError) -> PyErr {
    match e {
        StorageError::Engine(e) => errors::engine(py, e.to_string()),
        other => errors::input(py, other.to_string()),
    }
}

/// Runs one Sinbad point; returns a dict with `values` (name -> number)
/// and the columns `uniform_s`, `policy_s`, `bytes` of paired blocks.
#[pyfunction]
#[pyo3(signature = (
    *, policy = "sinbad", seed = 1, racks = 150, hosts_per_rack = 20, host_bps = 1e9, oversubscription = 10.0,
    disk_write_bps = Some(400e6), block_bytes = 268435456.0, replicas = 3, faults = 1, duration_s = 3600.0,
    drain_s = 600.0, block_requests_per_s = 4.0, mean_file_blocks = 1.47, shuffle_scale = 1.0,
    max_mapper_racks = 6, delta_s = 1.0, alpha = 0.2, threshold_bytes = 10e6, q_s = 10.0, report_loss = 0.0,
    capacity_bytes = 4e12, balance_threshold = 0.1, trace = "coflow-fb2010", data_dir = None, also_q_s = Vec::new(),
    optimistic = true
))]
#[allow(clippy::too_many_arguments)]
pub fn sinbad_point<'py>(
    py: Python<'py>,
    policy: &str,
    seed: u64,
    racks: usize,
    hosts_per_rack: usize,
    host_bps: f64,
    oversubscription: f64,
    disk_write_bps: Option<f64>,
    block_bytes: f64,
    replicas: usize,
    faults: usize,
    duration_s: f64,
    drain_s: f64,
    block_requests_per_s: f64,
    mean_file_blocks: f64,
    shuffle_scale: f64,
    max_mapper_racks: usize,
    delta_s: f64,
    alpha: f64,
    threshold_bytes: f64,
    q_s: f64,
    report_loss: f64,
    capacity_bytes: f64,
    balance_threshold: f64,
    trace: &str,
    data_dir: Option<PathBuf>,
    also_q_s: Vec<f64>,
    optimistic: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let s = SinbadSpec {
        racks,
        hosts_per_rack,
        host_bps,
        oversub: oversubscription,
        disk_write_bps,
        block_bytes,
        r: replicas,
        f: faults,
        duration_s,
        drain_s,
        block_requests_per_s,
        mean_file_blocks,
        shuffle_scale,
        max_mapper_racks,
        policy_cfg: PolicyConfig { delta_s, alpha, threshold_bytes },
        q_s,
        also_q_s,
        optimistic,
        report_loss,
        capacity_bytes,
        balance_threshold,
        policy: policy.to_string(),
        seed,
    };
    let dir = crate::data::resolve(data_dir, &[]);
    validate_sinbad(&s).map_err(|e| to_py(py, e))?;
    let t =
        py.allow_threads(|| netheat_data::load_coflows(&dir, trace)).map_err(|e| errors::data(py, e.to_string()))?;
    let r = py.allow_threads(|| run_point(&s, &t)).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    let v = PyDict::new(py);
    for (k, x) in &r.values {
        v.set_item(k, x)?;
    }
    d.set_item("values", v)?;
    d.set_item("uniform_s", r.uniform_s)?;
    d.set_item("policy_s", r.policy_s)?;
    d.set_item("bytes", r.bytes)?;
    Ok(d)
}

/// Runs one CCP point (uniform vs the policy on the same chunk ops);
/// returns a dict name -> number.
#[pyfunction]
#[pyo3(signature = (
    *, policy = "ccp", seed = 1, racks = 30, hosts_per_rack = 10, client_racks = 10, host_bps = 10e9,
    oversubscription = 4.0, class_factor = (4.0, 1.0, 0.25), uplink_spread = 0.0, load = 0.7, uplink_load = 0.0,
    read_fraction = 0.7, chunk_min = 100e3, chunk_max = 1e6, prepopulate = 20000, prepopulate_policy = None,
    read_written = false, write_fanout = false, ops = 100000, replicas = 3, seek_s = 100e-6,
    disk_bytes_per_s = 1e9, disks_per_host = 1, capacity_bytes = 1e9, balance_threshold = 0.1,
    rebalance_every_ops = 1000, rebalance_target = 0.08
))]
#[allow(clippy::too_many_arguments)]
pub fn ccp_point<'py>(
    py: Python<'py>,
    policy: &str,
    seed: u64,
    racks: usize,
    hosts_per_rack: usize,
    client_racks: usize,
    host_bps: f64,
    oversubscription: f64,
    class_factor: (f64, f64, f64),
    uplink_spread: f64,
    load: f64,
    uplink_load: f64,
    read_fraction: f64,
    chunk_min: f64,
    chunk_max: f64,
    prepopulate: usize,
    prepopulate_policy: Option<String>,
    read_written: bool,
    write_fanout: bool,
    ops: usize,
    replicas: usize,
    seek_s: f64,
    disk_bytes_per_s: f64,
    disks_per_host: usize,
    capacity_bytes: f64,
    balance_threshold: f64,
    rebalance_every_ops: usize,
    rebalance_target: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let s = netheat_repro::ccp::CcpSpec {
        racks,
        hosts_per_rack,
        client_racks,
        host_bps,
        oversub: oversubscription,
        class_factor: [class_factor.0, class_factor.1, class_factor.2],
        uplink_spread,
        load,
        uplink_load,
        read_fraction,
        chunk_min,
        chunk_max,
        prepopulate,
        prepopulate_policy,
        read_written,
        write_fanout,
        ops,
        r: replicas,
        seek_s,
        disk_bytes_per_s,
        disks_per_host,
        capacity_bytes,
        balance_threshold,
        rebalance_every_ops,
        rebalance_target,
        policy: policy.to_string(),
        seed,
    };
    let r = py.allow_threads(|| netheat_repro::ccp::ccp_point(&s)).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    for (k, x) in &r {
        d.set_item(k, x)?;
    }
    Ok(d)
}
