//! Packet-level engine for Python (`netheat.experiments.cloudburst`).

use netheat_packet::transport::PIAS_WEB_SEARCH_THRESHOLDS;
use netheat_packet::{NetConfig, TransportConfig};
use netheat_repro::cloudburst::{mean_p99, p99_by_size, run_incast_point, IncastParams, Isolation};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;

/// One CloudBurst-experiment point (leaf-spine, web-search background load,
/// incasts) for one variant: `{"mct_mean_s", "mct_p99_s", "mct_s",
/// "mct_bytes", "mct_p99_by_size": {bytes: p99}, "cb_timeout_s",
/// "unfinished", "events", "drops", "flows": {columns}, "ports": {columns}}`.
///
/// `isolation` (`none`, `priority`, `small-queue`) is the queue treatment of
/// the baselines' incast messages. Switches have a shared buffer of
/// `shared_buffer_per_port` bytes per port with dynamic threshold `alpha`
/// (0 = static per-port buffers of `port_buffer_bytes`). `cb_timeout_s`
/// `None` = the a-priori re-burst timeout
/// ([`IncastParams::reburst_timeout_s`]); `pias_thresholds` `None` = the
/// PIAS authors' web-search thresholds.
#[pyfunction]
#[pyo3(signature = (variant, racks, hosts_per_rack, spines, host_bps, uplink_bps, load, fanin, msg_bytes, incasts, incast_gap_s, drain_s, seed, ecn_threshold_bytes = 30000, port_buffer_bytes = 150000, cloudburst_queue_bytes = 12000, rto_min_s = 0.005, prop_delay_s = 1e-6, isolation = "priority", shared_buffer_per_port = 192000, alpha = 1.0, cb_timeout_s = None, pias_thresholds = None))]
#[allow(clippy::too_many_arguments)]
pub fn packet_cloudburst_point<'py>(
    py: Python<'py>,
    variant: &str,
    racks: usize,
    hosts_per_rack: usize,
    spines: usize,
    host_bps: f64,
    uplink_bps: f64,
    load: f64,
    fanin: usize,
    msg_bytes: Vec<u64>,
    incasts: usize,
    incast_gap_s: f64,
    drain_s: f64,
    seed: u64,
    ecn_threshold_bytes: u64,
    port_buffer_bytes: u64,
    cloudburst_queue_bytes: u64,
    rto_min_s: f64,
    prop_delay_s: f64,
    isolation: &str,
    shared_buffer_per_port: u64,
    alpha: f64,
    cb_timeout_s: Option<f64>,
    pias_thresholds: Option<Vec<u64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let isolation = Isolation::parse(isolation).map_err(|e| errors::input(py, e.to_string()))?;
    let p = IncastParams {
        racks,
        hosts_per_rack,
        spines,
        host_bps,
        uplink_bps,
        load,
        fanin,
        msg_bytes,
        incasts,
        incast_gap_s,
        drain_s,
        seed,
        isolation,
    };
    let net = NetConfig {
        port_buffer_bytes,
        shared_buffer_per_port_bytes: (shared_buffer_per_port > 0).then_some(shared_buffer_per_port),
        alpha,
        ..IncastParams::net_config(ecn_threshold_bytes, cloudburst_queue_bytes, prop_delay_s)
    };
    let tcfg = TransportConfig {
        rto_min_s,
        cb_timeout_s: cb_timeout_s.unwrap_or_else(|| p.reburst_timeout_s(&net)),
        pias_thresholds: pias_thresholds.unwrap_or_else(|| PIAS_WEB_SEARCH_THRESHOLDS.to_vec()),
        ..Default::default()
    };
    let timeout = tcfg.cb_timeout_s;
    let variant = variant.to_string();
    let o = py
        .allow_threads(move || run_incast_point(&p, &variant, &net, &tcfg))
        .map_err(|e| errors::input(py, e.to_string()))?;
    let (mean, p99) = mean_p99(&o.mct_s);
    let d = PyDict::new(py);
    d.set_item("mct_mean_s", mean)?;
    d.set_item("mct_p99_s", p99)?;
    d.set_item("mct_s", &o.mct_s)?;
    d.set_item("mct_bytes", &o.mct_bytes)?;
    let by = PyDict::new(py);
    for (b, q) in p99_by_size(&o) {
        by.set_item(b, q)?;
    }
    d.set_item("mct_p99_by_size", by)?;
    d.set_item("cb_timeout_s", timeout)?;
    d.set_item("unfinished", o.unfinished)?;
    d.set_item("events", o.result.events)?;
    d.set_item("drops", o.result.ports.iter().map(|s| s.drops).sum::<u64>())?;
    let r = &o.result;
    let f = PyDict::new(py);
    f.set_item("flow_id", r.flows.iter().map(|x| x.flow_id).collect::<Vec<_>>())?;
    f.set_item("src", r.flows.iter().map(|x| x.src).collect::<Vec<_>>())?;
    f.set_item("dst", r.flows.iter().map(|x| x.dst).collect::<Vec<_>>())?;
    f.set_item("bytes", r.flows.iter().map(|x| x.bytes).collect::<Vec<_>>())?;
    f.set_item("start_s", r.flows.iter().map(|x| x.start_s).collect::<Vec<_>>())?;
    f.set_item("finish_s", r.flows.iter().map(|x| x.finish_s).collect::<Vec<_>>())?;
    f.set_item("fct_s", r.flows.iter().map(|x| x.fct_s).collect::<Vec<_>>())?;
    f.set_item("task_id", r.flows.iter().map(|x| x.task_id).collect::<Vec<_>>())?;
    f.set_item("priority", r.flows.iter().map(|x| x.priority).collect::<Vec<_>>())?;
    f.set_item("path_id", r.flows.iter().map(|x| x.path_id).collect::<Vec<_>>())?;
    d.set_item("flows", f)?;
    let q = PyDict::new(py);
    q.set_item("link", (0..r.ports.len() as u32).collect::<Vec<_>>())?;
    q.set_item("mean_queue_bytes", r.ports.iter().map(|x| x.mean_queue_bytes).collect::<Vec<_>>())?;
    q.set_item("max_queue_bytes", r.ports.iter().map(|x| x.max_queue_bytes).collect::<Vec<_>>())?;
    q.set_item("drops", r.ports.iter().map(|x| x.drops).collect::<Vec<_>>())?;
    q.set_item("marks", r.ports.iter().map(|x| x.marks).collect::<Vec<_>>())?;
    d.set_item("ports", q)?;
    // Link utilization per window (the packet engine's telemetry), for the
    // same links table as the flow-level engine.
    let w = NetConfig::default().window_s;
    let l = PyDict::new(py);
    l.set_item("link", r.links.iter().map(|x| x.link).collect::<Vec<_>>())?;
    l.set_item("window", r.links.iter().map(|x| (x.window_start_s / w).round() as u32).collect::<Vec<_>>())?;
    l.set_item("utilization", r.links.iter().map(|x| x.utilization).collect::<Vec<_>>())?;
    d.set_item("links", l)?;
    d.set_item("window_s", w)?;
    d.set_item("end_s", r.end_s)?;
    Ok(d)
}

/// The Subways memcache experiment for one variant (`type0`, `type1`,
/// `type1-lb`, `type1-detour`) and ToR oversubscription: the largest
/// request rate whose mean latency stays at or below `target_s`
/// (`{"max_rate_per_s", "mean_latency_s", "p99_latency_s", "requests",
/// "events"}` at that rate).
#[pyfunction]
#[pyo3(signature = (variant, oversubscription, seed, racks = 8, hosts_per_rack = 8, ports = 2, host_bps = 10e9,
    request_bytes = 50, response_bytes = 1500, duration_s = 0.01, rto_min_s = 0.005, target_s = 0.001,
    start_per_s = 1e5))]
#[allow(clippy::too_many_arguments)]
pub fn packet_memcache_max_rate<'py>(
    py: Python<'py>,
    variant: &str,
    oversubscription: f64,
    seed: u64,
    racks: usize,
    hosts_per_rack: usize,
    ports: usize,
    host_bps: f64,
    request_bytes: u64,
    response_bytes: u64,
    duration_s: f64,
    rto_min_s: f64,
    target_s: f64,
    start_per_s: f64,
) -> PyResult<Bound<'py, PyDict>> {
    use netheat_repro::memcache::{max_rate, MemcacheParams};
    let p = MemcacheParams {
        racks,
        hosts_per_rack,
        ports,
        host_bps,
        oversubscription,
        request_bytes,
        response_bytes,
        duration_s,
        rto_min_s,
        seed,
        ..MemcacheParams::default()
    };
    let variant = variant.to_string();
    let (rate, x) = py
        .allow_threads(move || max_rate(&p, &variant, target_s, start_per_s))
        .map_err(|e| errors::input(py, e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("max_rate_per_s", rate)?;
    d.set_item("mean_latency_s", x.mean_latency_s)?;
    d.set_item("p99_latency_s", x.p99_latency_s)?;
    d.set_item("requests", x.requests)?;
    d.set_item("events", x.events)?;
    Ok(d)
}
