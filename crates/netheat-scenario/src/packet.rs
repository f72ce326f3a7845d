//! A scenario on the packet-level engine: the workload's open-loop flows
//! and the flows of its application tasks, each with the transport of
//! `[transport]`, through switches with the buffers of `[packet]`.
//!
//! Application tasks run here when every step is a flow that starts with
//! its task (one wave of messages, such as the `incast` app's): the packet
//! engine takes each flow's start time before the run and cannot start a
//! step when another finishes (checked before the run, naming the table).
//!
//! `mptcp` and `dctcp-replication` are built here from two DCTCP flows on
//! ECMP path offsets 0 and 1 (the engine's transports are single-path TCP
//! and CloudBurst); the `flows` table has one row per message all the
//! same, finished when both halves are (`mptcp`) or the first copy is
//! (`dctcp-replication`).
//!
//! Flow sizes are rounded to whole bytes (at least one). A flow between
//! two ports of one host never enters the network and is reported finished
//! at its start, as on the flow engine.

use netheat_packet::transport::{HDR, MSS};
use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_topology::Topology;
use netheat_workloads::dag::Step;
use netheat_workloads::{FlowRow, TaskDag};

use crate::config::{RoutingPolicy, Sections, TransportKind};
use crate::result::{FlowOut, QueueOut, ScenarioResult, TaskOut};
use crate::ScenarioError;

/// DCTCP's marking threshold for 10 Gbit/s links: 65 packets of 1,500
/// bytes (Alizadeh et al., SIGCOMM'10, §3.4), used when a DCTCP-based
/// transport runs and `packet.ecn-threshold` is not given.
pub const DCTCP_K_BYTES: u64 = 65 * 1500;

/// Seconds simulated after the last flow starts when `scenario.duration`
/// is not given.
pub const DRAIN_S: f64 = 1.0;

/// Bytes of an ACK on the wire, for the derived re-burst timeout.
const ACK_BYTES: f64 = 64.0;

/// The index of the first step of `dag` that is not a flow starting with
/// its task, if any: such a task cannot run on the packet engine.
pub fn first_dependent_step(dag: &TaskDag) -> Option<usize> {
    (0..dag.steps.len()).find(|&i| !matches!(dag.steps[i], Step::Flow { .. }) || !dag.deps[i].is_empty())
}

/// CloudBurst's re-burst timeout derived from the datacenter: the longest,
/// over the first host of every rack to every other host (path 0 of each
/// pair), of the time a symbol that is not dropped can take to be
/// acknowledged. Per link each way: propagation, a full CloudBurst queue
/// plus one packet of a lower class already on the wire (strict priority
/// does not preempt), and the packet's own serialization; the ACK returns
/// on the reverse link at class 0. So the timer fires only when every
/// symbol in flight was lost, the RTO rule; the slides give no value.
pub fn reburst_timeout_s(topo: &Topology, net: &NetConfig) -> f64 {
    use netheat_core::Routing;
    let pkt = (MSS + HDR) as f64;
    let wait = (net.cloudburst_queue_bytes as f64 + pkt) * 8.0;
    let links = topo.links();
    let per_link = |c: f64| 2.0 * net.prop_delay_s + 2.0 * wait / c + (pkt + ACK_BYTES) * 8.0 / c;
    let n = topo.hosts().len() as u32;
    let mut path = Vec::new();
    let mut worst = 0.0f64;
    for r in topo.racks() {
        let src = r.first_host;
        for dst in (0..n).filter(|&d| d != src) {
            path.clear();
            topo.path(src, dst, 0, &mut path);
            let t: f64 = path.iter().map(|&l| per_link(links[l as usize].capacity_bps)).sum();
            worst = worst.max(t);
        }
    }
    worst
}

/// How a message becomes engine flows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Split {
    One,
    /// Two halves (`mptcp`): done when both are.
    Halves,
    /// Two copies (`dctcp-replication`): done when the first is.
    Copies,
}

/// One row of the `flows` table and the engine flows that carry it.
struct Message {
    flow_id: u64,
    src: u32,
    dst: u32,
    bytes: u64,
    start_s: f64,
    task_id: i64,
    split: Split,
    /// Engine flow indices (one or two).
    engine: [usize; 2],
}

/// Runs the open-loop `flows` and the one-wave application `tasks` on the
/// packet engine.
pub fn run_packet(
    topo: &Topology,
    flows: &[FlowRow],
    tasks: &[(f64, usize, TaskDag)],
    s: &Sections,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<ScenarioResult, ScenarioError> {
    let t = s.transport.as_ref();
    let kind = t.map_or(TransportKind::Newreno, |t| t.kind);
    let traffic_kind = t.and_then(|t| t.traffic_kind).unwrap_or(kind);
    let small_queue = t.and_then(|t| t.small_queue).unwrap_or(false);
    let task_class = t.and_then(|t| t.task_class).unwrap_or(0);
    let d = NetConfig::default();
    let p = s.packet.as_ref();
    let dctcp_in_use = (!flows.is_empty() && traffic_kind.uses_ecn()) || (!tasks.is_empty() && kind.uses_ecn());
    let window_s = s.scenario.window.map_or(1e-3, |w| w.0);
    let net = NetConfig {
        prop_delay_s: p.and_then(|p| p.propagation_delay).map_or(d.prop_delay_s, |x| x.0),
        switch_delay_s: p.and_then(|p| p.switch_delay).map_or(d.switch_delay_s, |x| x.0),
        port_buffer_bytes: p.and_then(|p| p.port_buffer).map_or(d.port_buffer_bytes, |x| x.0 as u64),
        shared_buffer_per_port_bytes: p.and_then(|p| p.shared_buffer).map(|x| x.0 as u64),
        alpha: p.and_then(|p| p.buffer_alpha).unwrap_or(d.alpha),
        cloudburst_queue_bytes: p.and_then(|p| p.cloudburst_queue).map_or(d.cloudburst_queue_bytes, |x| x.0 as u64),
        ecn_threshold_bytes: p
            .and_then(|p| p.ecn_threshold)
            .map(|x| x.0 as u64)
            .or(dctcp_in_use.then_some(DCTCP_K_BYTES)),
        window_s,
        seed: s.scenario.seed,
        adaptive: s.routing.as_ref().is_some_and(|r| r.policy == RoutingPolicy::Adaptive),
        ..d
    };
    let td = TransportConfig::default();
    let reburst = match t.and_then(|t| t.reburst_timeout) {
        Some(x) => x.0,
        None => reburst_timeout_s(topo, &net),
    };
    let tcfg = TransportConfig {
        init_cwnd: t.and_then(|t| t.init_cwnd).unwrap_or(td.init_cwnd),
        rto_min_s: t.and_then(|t| t.min_rto).map_or(td.rto_min_s, |x| x.0),
        dctcp_g: t.and_then(|t| t.dctcp_gain).unwrap_or(td.dctcp_g),
        pias_thresholds: t
            .and_then(|t| t.pias_thresholds.as_ref())
            .map_or(td.pias_thresholds.clone(), |v| v.iter().map(|b| b.0 as u64).collect()),
        cb_timeout_s: reburst,
        ..td
    };
    let mut sim = Simulator::new(topo, net)?;
    let mut local: Vec<FlowOut> = Vec::new();
    let mut msgs: Vec<Message> = Vec::new();
    let mut engine_flows = 0usize;
    let mut add = |sim: &mut Simulator,
                   m: Message,
                   tp: TransportKind,
                   prio: u8,
                   small: bool,
                   msgs: &mut Vec<Message>|
     -> Result<(), ScenarioError> {
        let tag = tp.engine_tag(small);
        let spec = |bytes: u64, off: usize| FlowSpec {
            id: 0,
            src: m.src,
            dst: m.dst,
            bytes,
            start_s: m.start_s,
            transport: tag.into(),
            task_id: m.task_id,
            priority: prio,
            path_offset: off,
        };
        let split = match tp {
            TransportKind::Mptcp if m.bytes >= 2 => Split::Halves,
            TransportKind::DctcpReplication => Split::Copies,
            _ => Split::One,
        };
        let parts: Vec<FlowSpec> = match split {
            Split::One => vec![spec(m.bytes, 0)],
            Split::Halves => vec![spec(m.bytes.div_ceil(2), 0), spec(m.bytes / 2, 1)],
            Split::Copies => vec![spec(m.bytes, 0), spec(m.bytes, 1)],
        };
        let mut engine = [engine_flows; 2];
        for (k, mut f) in parts.into_iter().enumerate() {
            f.id = engine_flows as u64;
            engine[k] = engine_flows;
            sim.add_flow(f, &tcfg)?;
            engine_flows += 1;
        }
        msgs.push(Message { split, engine, ..m });
        Ok(())
    };
    let local_row = |flow_id: u64, src: u32, bytes: f64, start_s: f64, task_id: i64, priority: i32| FlowOut {
        flow_id,
        src,
        dst: src,
        bytes,
        start_s,
        finish_s: start_s,
        fct_s: 0.0,
        task_id,
        priority,
        path_id: -1,
    };
    for f in flows {
        let task_id = f.task_id.map_or(-1, |t| t as i64);
        if f.src == f.dst {
            local.push(local_row(f.flow_id, f.src, f.bytes, f.start_s, task_id, f.priority));
            continue;
        }
        let m = Message {
            flow_id: f.flow_id,
            src: f.src,
            dst: f.dst,
            bytes: (f.bytes.round() as u64).max(1),
            start_s: f.start_s,
            task_id,
            split: Split::One,
            engine: [0; 2],
        };
        add(&mut sim, m, traffic_kind, f.priority.clamp(0, 7) as u8, false, &mut msgs)?;
    }
    // Application tasks: ids after the open-loop flows' and tasks', as the
    // flow engine's task runner numbers them.
    let flow_base = flows.iter().map(|f| f.flow_id + 1).max().unwrap_or(0);
    let task_base = flows.iter().filter_map(|f| f.task_id).map(|t| t + 1).max().unwrap_or(0);
    let mut next_flow = flow_base;
    for (i, (start, _, dag)) in tasks.iter().enumerate() {
        let task_id = (task_base + i as u64) as i64;
        for step in &dag.steps {
            let Step::Flow { src, dst, bytes, .. } = *step else {
                return Err(ScenarioError::Run(format!(
                    "task {task_id} has a step that is not a flow starting with it (checked before the run)"
                )));
            };
            let flow_id = next_flow;
            next_flow += 1;
            if src == dst {
                local.push(local_row(flow_id, src, bytes, *start, task_id, i32::from(task_class)));
                continue;
            }
            let m = Message {
                flow_id,
                src,
                dst,
                bytes: (bytes.round() as u64).max(1),
                start_s: *start,
                task_id,
                split: Split::One,
                engine: [0; 2],
            };
            add(&mut sim, m, kind, task_class.min(7), small_queue, &mut msgs)?;
        }
    }
    let last = flows.iter().map(|f| f.start_s).chain(tasks.iter().map(|t| t.0)).fold(0.0, f64::max);
    let until = s.scenario.duration.map_or(last + DRAIN_S, |d| d.0);
    let total = (msgs.len() + local.len()) as u64;
    if !progress(0, total) {
        return Err(ScenarioError::Interrupted);
    }
    let res = sim.run(until);
    let mut out = ScenarioResult::new("packet");
    out.window_s = window_s;
    for m in &msgs {
        let a = &res.flows[m.engine[0]];
        let finish_s = match m.split {
            Split::One => a.finish_s,
            Split::Halves | Split::Copies => {
                let b = &res.flows[m.engine[1]];
                let (x, y) = (a.finish_s, b.finish_s);
                match (m.split, x.is_nan(), y.is_nan()) {
                    (Split::Halves, false, false) => x.max(y),
                    (Split::Halves, _, _) => f64::NAN,
                    (_, true, true) => f64::NAN,
                    (_, true, false) => y,
                    (_, false, true) => x,
                    _ => x.min(y),
                }
            }
        };
        out.flows.push(FlowOut {
            flow_id: m.flow_id,
            src: m.src,
            dst: m.dst,
            bytes: m.bytes as f64,
            start_s: m.start_s,
            finish_s,
            fct_s: finish_s - m.start_s,
            task_id: m.task_id,
            priority: i32::from(a.priority),
            path_id: i64::from(a.path_id),
        });
    }
    out.flows.extend(local);
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
    out.tasks = crate::result::trace_tasks(&out.flows, task_base);
    out.tasks.extend(app_tasks(&out.flows, tasks, task_base));
    let done = out.flows.iter().filter(|f| !f.finish_s.is_nan()).count();
    out.stat("flows", out.flows.len() as f64);
    out.stat("completed", done as f64);
    out.stat("events", res.events as f64);
    out.stat("end_s", res.end_s);
    out.stat("drops", res.ports.iter().map(|q| q.drops as f64).sum());
    out.stat("marks", res.ports.iter().map(|q| q.marks as f64).sum());
    out.stat("timeouts", res.flows.iter().map(|f| f64::from(f.timeouts)).sum());
    if kind.is_cloudburst() || traffic_kind.is_cloudburst() {
        out.stat("reburst_timeout_s", reburst);
    }
    Ok(out)
}

/// The `tasks` rows of the application tasks, from their flows' rows: a
/// task finishes with its last flow (NaN when one did not finish).
fn app_tasks(flows: &[FlowOut], tasks: &[(f64, usize, TaskDag)], task_base: u64) -> Vec<TaskOut> {
    let mut rows: Vec<TaskOut> = tasks
        .iter()
        .enumerate()
        .map(|(i, (start, table, dag))| TaskOut {
            task_id: task_base + i as u64,
            kind: dag.kind.to_string(),
            table: *table as i64,
            start_s: *start,
            finish_s: if dag.steps.is_empty() { *start } else { f64::NEG_INFINITY },
            flows: 0,
            bytes: 0.0,
        })
        .collect();
    for f in flows.iter().filter(|f| f.task_id >= task_base as i64) {
        let t = &mut rows[(f.task_id as u64 - task_base) as usize];
        t.finish_s = if f.finish_s.is_nan() || t.finish_s.is_nan() { f64::NAN } else { t.finish_s.max(f.finish_s) };
        t.flows += 1;
        t.bytes += f.bytes;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use netheat_topology::TopologySpec;

    #[test]
    fn derived_reburst_timeout_is_the_worst_case_rtt_of_a_kept_symbol() {
        // Leaf-spine of 10 Gbps links (4 leaves, 4 spines, 40 Gbps of leaf
        // uplink), 1 us per link, 12 KB CloudBurst queue. Per link: data
        // 2 x 1 us + 2 x (12,000 + 1,500) B x 8 / 10 Gbps = 23.6 us, plus
        // (1,500 + 64) B x 8 / 10 Gbps = 1.2512 us: 24.8512 us; four links
        // between racks: 99.4048 us (the CloudBurst point's hand value).
        let topo = Topology::build(&TopologySpec::three_tier(1, 4, 8, 4, 0, 10e9, 40e9, None)).unwrap();
        let net = NetConfig { cloudburst_queue_bytes: 12_000, prop_delay_s: 1e-6, ..NetConfig::default() };
        assert!((reburst_timeout_s(&topo, &net) - 99.4048e-6).abs() < 1e-12, "{}", reburst_timeout_s(&topo, &net));
        // One spine of 40 Gbps: the two middle links take 2 us + 2 x 2.7 us
        // + 0.3128 us = 7.7128 us each: 2 x 24.8512 + 2 x 7.7128 = 65.128 us.
        let topo = Topology::build(&TopologySpec::three_tier(1, 4, 8, 1, 0, 10e9, 40e9, None)).unwrap();
        assert!((reburst_timeout_s(&topo, &net) - 65.128e-6).abs() < 1e-12, "{}", reburst_timeout_s(&topo, &net));
    }

    #[test]
    fn only_tasks_of_flows_starting_with_the_task_run_on_the_packet_engine() {
        let mut wave = TaskDag::new("incast");
        wave.flow(0, 1, 10.0, &[]);
        wave.flow(2, 1, 10.0, &[]);
        assert_eq!(first_dependent_step(&wave), None);
        let mut chain = TaskDag::new("memcache");
        let q = chain.flow(0, 1, 50.0, &[]);
        chain.flow(1, 0, 1500.0, &[q]);
        assert_eq!(first_dependent_step(&chain), Some(1));
        let mut delayed = TaskDag::new("x");
        delayed.delay(1e-3, &[]);
        assert_eq!(first_dependent_step(&delayed), Some(0));
    }

    #[test]
    fn a_task_finishes_with_its_last_flow_and_not_at_all_if_one_is_unfinished() {
        let row = |flow_id: u64, task_id: i64, bytes: f64, finish_s: f64| FlowOut {
            flow_id,
            src: 0,
            dst: 1,
            bytes,
            start_s: 0.5,
            finish_s,
            fct_s: finish_s - 0.5,
            task_id,
            priority: 0,
            path_id: 0,
        };
        let mut two = TaskDag::new("incast");
        two.flow(0, 1, 10.0, &[]);
        two.flow(2, 1, 20.0, &[]);
        let tasks = vec![(0.5, 0, two.clone()), (0.5, 0, two)];
        // Task ids from 3 (open-loop task ids 0-2 before them).
        let flows = [row(7, 3, 10.0, 0.9), row(8, 3, 20.0, 0.7), row(9, 4, 10.0, 0.8), row(10, 4, 20.0, f64::NAN)];
        let out = app_tasks(&flows, &tasks, 3);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].task_id, out[0].flows, out[0].bytes, out[0].finish_s), (3, 2, 30.0, 0.9));
        assert!(out[1].finish_s.is_nan());
        assert_eq!(out[1].kind, "incast");
    }
}
