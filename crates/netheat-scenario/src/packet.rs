//! A scenario on the packet-level engine: the workload's open-loop flows,
//! each with the transport of `[transport]`, through switches with the
//! buffers of `[packet]`.
//!
//! Flow sizes are rounded to whole bytes (at least one). A flow between
//! two ports of one host never enters the network and is reported finished
//! at its start, as on the flow engine.

use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_topology::Topology;
use netheat_workloads::FlowRow;

use crate::config::{RoutingPolicy, Sections, TransportKind};
use crate::result::{FlowOut, QueueOut, ScenarioResult};
use crate::ScenarioError;

/// DCTCP's marking threshold for 10 Gbit/s links: 65 packets of 1,500
/// bytes (Alizadeh et al., SIGCOMM'10, §3.4), used for `dctcp` and `pias`
/// when `packet.ecn-threshold` is not given.
pub const DCTCP_K_BYTES: u64 = 65 * 1500;

/// Seconds simulated after the last flow starts when `scenario.duration`
/// is not given.
pub const DRAIN_S: f64 = 1.0;

/// Runs the open-loop `flows` on the packet engine.
pub fn run_packet(
    topo: &Topology,
    flows: &[FlowRow],
    s: &Sections,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<ScenarioResult, ScenarioError> {
    let kind = s.transport.as_ref().map_or(TransportKind::Newreno, |t| t.kind);
    let d = NetConfig::default();
    let p = s.packet.as_ref();
    let ecn_default = matches!(kind, TransportKind::Dctcp | TransportKind::Pias).then_some(DCTCP_K_BYTES);
    let window_s = s.scenario.window.map_or(1e-3, |w| w.0);
    let net = NetConfig {
        prop_delay_s: p.and_then(|p| p.propagation_delay).map_or(d.prop_delay_s, |x| x.0),
        switch_delay_s: p.and_then(|p| p.switch_delay).map_or(d.switch_delay_s, |x| x.0),
        port_buffer_bytes: p.and_then(|p| p.port_buffer).map_or(d.port_buffer_bytes, |x| x.0 as u64),
        ecn_threshold_bytes: p.and_then(|p| p.ecn_threshold).map(|x| x.0 as u64).or(ecn_default),
        window_s,
        seed: s.scenario.seed,
        adaptive: s.routing.as_ref().is_some_and(|r| r.policy == RoutingPolicy::Adaptive),
        ..d
    };
    let td = TransportConfig::default();
    let t = s.transport.as_ref();
    let tcfg = TransportConfig {
        init_cwnd: t.and_then(|t| t.init_cwnd).unwrap_or(td.init_cwnd),
        rto_min_s: t.and_then(|t| t.min_rto).map_or(td.rto_min_s, |x| x.0),
        dctcp_g: t.and_then(|t| t.dctcp_gain).unwrap_or(td.dctcp_g),
        ..td
    };
    let mut sim = Simulator::new(topo, net)?;
    let mut local = Vec::new();
    for f in flows {
        if f.src == f.dst {
            local.push(f);
            continue;
        }
        let spec = FlowSpec {
            id: f.flow_id,
            src: f.src,
            dst: f.dst,
            bytes: (f.bytes.round() as u64).max(1),
            start_s: f.start_s,
            transport: kind.tag().into(),
            task_id: f.task_id.map_or(-1, |t| t as i64),
            priority: f.priority.clamp(0, 7) as u8,
            path_offset: 0,
        };
        sim.add_flow(spec, &tcfg)?;
    }
    let last = flows.iter().map(|f| f.start_s).fold(0.0, f64::max);
    let until = s.scenario.duration.map_or(last + DRAIN_S, |d| d.0);
    if !progress(0, flows.len() as u64) {
        return Err(ScenarioError::Interrupted);
    }
    let res = sim.run(until);
    let mut out = ScenarioResult::new("packet");
    out.window_s = window_s;
    for r in &res.flows {
        out.flows.push(FlowOut {
            flow_id: r.flow_id,
            src: r.src,
            dst: r.dst,
            bytes: r.bytes as f64,
            start_s: r.start_s,
            finish_s: r.finish_s,
            fct_s: r.fct_s,
            task_id: r.task_id,
            priority: i32::from(r.priority),
            path_id: i64::from(r.path_id),
        });
    }
    for f in local {
        out.flows.push(FlowOut {
            flow_id: f.flow_id,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start_s: f.start_s,
            finish_s: f.start_s,
            fct_s: 0.0,
            task_id: f.task_id.map_or(-1, |t| t as i64),
            priority: f.priority,
            path_id: -1,
        });
    }
    out.flows.sort_by_key(|f| f.flow_id);
    for w in &res.links {
        let window = (w.window_start_s / window_s).round() as u32;
        out.links.push((w.link, window, w.utilization));
    }
    for (l, q) in res.ports.iter().enumerate() {
        if q.tx_bytes == 0 && q.drops == 0 {
            continue;
        }
        out.queues.push(QueueOut {
            link: l as u32,
            mean_queue_bytes: q.mean_queue_bytes,
            max_queue_bytes: q.max_queue_bytes,
            drops: q.drops,
            marks: q.marks,
            tx_bytes: q.tx_bytes,
        });
    }
    out.tasks = crate::result::trace_tasks(&out.flows, u64::MAX);
    let done = out.flows.iter().filter(|f| !f.finish_s.is_nan()).count();
    out.stat("flows", out.flows.len() as f64);
    out.stat("completed", done as f64);
    out.stat("events", res.events as f64);
    out.stat("end_s", res.end_s);
    out.stat("drops", res.ports.iter().map(|q| q.drops as f64).sum());
    out.stat("marks", res.ports.iter().map(|q| q.marks as f64).sum());
    out.stat("timeouts", res.flows.iter().map(|f| f64::from(f.timeouts)).sum());
    Ok(out)
}
