//! A scenario on the packet-level engine: the workload's open-loop flows
//! and the steps of its application tasks, each flow with the transport of
//! `[transport]`, through switches with the buffers of `[packet]`.
//!
//! Application tasks run as on the flow engine: a step starts when the
//! steps it depends on have finished (a delay step finishes its length
//! later), and a task finishes with its last step. Flows get ids after the
//! open-loop flows': first those that start with their task, in task
//! order, then the others in the order they start.
//!
//! `mptcp` and `dctcp-replication` are built here from two DCTCP flows on
//! ECMP path offsets 0 and 1 (the engine's transports are single-path TCP
//! and CloudBurst); the `flows` table has one row per message all the
//! same, finished when both halves are (`mptcp`) or the first copy is
//! (`dctcp-replication`).
//!
//! `routing.policy = "adaptive"` and `"detour"` are the Subways
//! controller of `netheat-subways` (CoNEXT'15 §5.2 and §6), the same code
//! as on the flow engine, through the engine's [`PathPolicy`]: it draws
//! each flow's ports and path as the flow starts, from the ToRs' residual
//! capacity, and every `routing.period` hears each link's bytes over the
//! period (§8.1's counters) and re-binds or detours running flows, whose
//! next packets take the new path; under `detour` a flow that starts while
//! its rack is hot takes the rack's detours as a running one would. With
//! `routing.least-queued = true` (ours) every data packet instead takes its
//! flow's path with the fewest bytes queued along it, a hop costing a
//! packet; for `detour` the paths are the shortest ones and detours through
//! a neighbouring server: for each ToR `a` of the source, one server (chosen
//! by the flow id) with a port on `a` and another on a ToR `b` the source
//! does not reach, then from `b` through the fabric to the destination.
//!
//! Flow sizes are rounded to whole bytes (at least one). A flow between
//! two ports of one host never enters the network and is reported finished
//! at its start, as on the flow engine.

use netheat_core::LinkId;
use netheat_engine::Route;
use netheat_packet::transport::{HDR, MSS};
use netheat_packet::{FlowSpec, NetConfig, NewFlows, PathPolicy, RunningFlow, Simulator, TransportConfig};
use netheat_subways::lb::ActiveFlow;
use netheat_subways::{LoadBalancer, Net};
use netheat_topology::Topology;
use netheat_workloads::dag::Step;
use netheat_workloads::{FlowRow, TaskDag};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;
use std::rc::Rc;

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

/// Detour paths from `src` to `dst` through one neighbouring server per
/// ToR of `src` (see the module docs); `pick` chooses among the candidates.
pub fn detours(topo: &Topology, src: u32, dst: u32, pick: u64) -> Vec<Vec<LinkId>> {
    let hosts = topo.hosts();
    let own: Vec<u32> = hosts[src as usize].ports.iter().map(|q| q.tor).collect();
    let mut out = Vec::new();
    for mp in &hosts[src as usize].ports {
        let via: Vec<(usize, usize, usize)> = hosts
            .iter()
            .enumerate()
            .filter(|&(x, _)| x as u32 != src && x as u32 != dst)
            .filter_map(|(x, h)| {
                let a = h.ports.iter().position(|q| q.tor == mp.tor)?;
                let b = h.ports.iter().position(|q| !own.contains(&q.tor))?;
                Some((x, a, b))
            })
            .collect();
        if via.is_empty() {
            continue;
        }
        let (x, a, b) = via[(pick % via.len() as u64) as usize];
        let (xa, xb) = (&hosts[x].ports[a], &hosts[x].ports[b]);
        for wp in &hosts[dst as usize].ports {
            for i in 0..topo.tor_routes(xb.tor, wp.tor) {
                let mut path = vec![mp.up, xa.down, xb.up];
                topo.tor_route(xb.tor, wp.tor, i, &mut path);
                path.push(wp.down);
                out.push(path);
            }
        }
    }
    out
}

/// A Subways load balancer choosing the packet engine's paths: each flow's
/// route as it starts, and each period's re-binding and detours.
struct Controller<'a> {
    lb: Box<dyn LoadBalancer>,
    net: Net<'a>,
    rng: ChaCha8Rng,
    /// Flows the load balancer has sent or moved onto a detour (read after
    /// the run, when the engine has dropped the controller).
    detours: Rc<Cell<u64>>,
}

impl PathPolicy for Controller<'_> {
    fn period_s(&self) -> f64 {
        // `adaptive` and `detour` have one; a static policy would be refused.
        self.lb.period_s().unwrap_or(f64::NAN)
    }

    fn route(&mut self, spec: &FlowSpec) -> Option<Vec<LinkId>> {
        let route = self.lb.route(&self.net, spec.src, spec.dst, &mut self.rng);
        self.detours.set(self.lb.detours());
        match route {
            Route::Explicit(p) => Some(p),
            _ => None,
        }
    }

    fn on_period(&mut self, now_s: f64, rate_bps: &[f64], running: &[RunningFlow<'_>]) -> Vec<(u64, Vec<LinkId>)> {
        let active: Vec<ActiveFlow> =
            running.iter().map(|f| ActiveFlow { id: f.id, src: f.src, dst: f.dst, path: f.path.to_vec() }).collect();
        let rate = |l: LinkId| rate_bps.get(l as usize).copied().unwrap_or(0.0);
        let moves = self.lb.on_period(&self.net, now_s, &rate, &active, &mut self.rng);
        self.detours.set(self.lb.detours());
        moves
    }
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
    /// Engine flow ids (one or two).
    engine: [u64; 2],
    /// Engine flows finished so far.
    parts_done: u8,
    finish_s: f64,
    /// `(task, step)` of an application task's flow.
    step: Option<(usize, usize)>,
}

/// The transports and paths messages get.
struct Sender<'a> {
    topo: &'a Topology,
    detour: bool,
    messages: Vec<Message>,
    /// Engine flow id -> message index.
    owner: Vec<usize>,
}

impl Sender<'_> {
    /// Engine flows of one message, recorded; returns them to be added.
    fn send(&mut self, mut m: Message, tp: TransportKind, tag: &'static str, prio: u8, out: &mut NewFlows) {
        m.split = match tp {
            TransportKind::Mptcp if m.bytes >= 2 => Split::Halves,
            TransportKind::DctcpReplication => Split::Copies,
            _ => Split::One,
        };
        let sizes: &[(u64, usize)] = match m.split {
            Split::One => &[(m.bytes, 0)],
            Split::Halves => &[(m.bytes.div_ceil(2), 0), (m.bytes / 2, 1)],
            Split::Copies => &[(m.bytes, 0), (m.bytes, 1)],
        };
        let extra = if self.detour { detours(self.topo, m.src, m.dst, m.flow_id) } else { Vec::new() };
        let idx = self.messages.len();
        for (k, &(bytes, off)) in sizes.iter().enumerate() {
            let id = self.owner.len() as u64;
            self.owner.push(idx);
            m.engine[k] = id;
            let spec = FlowSpec {
                id,
                src: m.src,
                dst: m.dst,
                bytes,
                start_s: m.start_s,
                transport: tag.into(),
                task_id: m.task_id,
                priority: prio,
                path_offset: off,
                // One connection per message: its two halves' windows.
                coupling: (m.split == Split::Halves && netheat_packet::transport::couples(tag)).then_some(idx as u64),
            };
            out.push((spec, extra.clone()));
        }
        self.messages.push(m);
    }

    /// Engine flow `id` finished at `t`: the message's finish when this
    /// completes it.
    fn part_done(&mut self, id: u64, t: f64) -> Option<usize> {
        let i = self.owner[id as usize];
        let m = &mut self.messages[i];
        m.parts_done += 1;
        let complete = match m.split {
            Split::One | Split::Copies => m.parts_done == 1,
            Split::Halves => m.parts_done == 2,
        };
        if complete {
            m.finish_s = t;
            Some(i)
        } else {
            None
        }
    }
}

/// The application tasks' steps: what each waits for and when it finished.
struct Tasks<'a> {
    tasks: &'a [(f64, usize, TaskDag)],
    task_base: u64,
    waiting: Vec<Vec<u32>>,
    children: Vec<Vec<Vec<usize>>>,
    ready_at: Vec<Vec<f64>>,
    step_finish: Vec<Vec<f64>>,
    next_flow: u64,
}

/// What a step start produces: engine flows, and flows between two ports
/// of one host (finished at once).
struct Started {
    new: NewFlows,
    local: Vec<FlowOut>,
}

/// How application tasks' messages are sent.
#[derive(Clone, Copy)]
struct TaskTransport {
    kind: TransportKind,
    /// The engine's transport tag of each of a message's flows.
    tag: &'static str,
    class: u8,
}

impl<'a> Tasks<'a> {
    fn new(tasks: &'a [(f64, usize, TaskDag)], task_base: u64, flow_base: u64) -> Self {
        let mut children = Vec::with_capacity(tasks.len());
        for (_, _, dag) in tasks {
            let mut c = vec![Vec::new(); dag.steps.len()];
            for (s, ds) in dag.dep_lists().enumerate() {
                for &d in ds {
                    c[d].push(s);
                }
            }
            children.push(c);
        }
        Self {
            tasks,
            task_base,
            waiting: tasks.iter().map(|t| t.2.dep_lists().map(|d| d.len() as u32).collect()).collect(),
            children,
            ready_at: tasks.iter().map(|t| vec![t.0; t.2.steps.len()]).collect(),
            step_finish: tasks.iter().map(|t| vec![f64::NAN; t.2.steps.len()]).collect(),
            next_flow: flow_base,
        }
    }

    /// Starts step `si` of task `ti` at `t` and, through delays and local
    /// flows that finish at once, whatever that releases.
    fn start(&mut self, ti: usize, si: usize, t: f64, tt: TaskTransport, snd: &mut Sender<'_>, out: &mut Started) {
        let mut work = vec![(si, t)];
        while let Some((s, t)) = work.pop() {
            match self.tasks[ti].2.steps[s] {
                Step::Delay { seconds } => {
                    self.finish(ti, s, t + seconds, &mut work);
                }
                // No device model on the packet engine: a `chunk-store`,
                // whose tasks have device steps, needs a storage policy,
                // which the packet engine refuses before it runs.
                Step::Io { .. } => {
                    self.finish(ti, s, t, &mut work);
                }
                Step::Flow { src, dst, bytes, .. } => {
                    let flow_id = self.next_flow;
                    self.next_flow += 1;
                    let task_id = (self.task_base + ti as u64) as i64;
                    if src == dst {
                        out.local.push(FlowOut::local(flow_id, src, bytes, t, task_id, i32::from(tt.class)));
                        self.finish(ti, s, t, &mut work);
                        continue;
                    }
                    let m = Message {
                        flow_id,
                        src,
                        dst,
                        bytes: (bytes.round() as u64).max(1),
                        start_s: t,
                        task_id,
                        split: Split::One,
                        engine: [0; 2],
                        parts_done: 0,
                        finish_s: f64::NAN,
                        step: Some((ti, s)),
                    };
                    snd.send(m, tt.kind, tt.tag, tt.class, &mut out.new);
                }
            }
        }
    }

    /// Step `s` of task `ti` finished at `t`: its dependants whose last
    /// wait this was become ready (pushed to `work` with their start).
    fn finish(&mut self, ti: usize, s: usize, t: f64, work: &mut Vec<(usize, f64)>) {
        self.step_finish[ti][s] = t;
        for k in 0..self.children[ti][s].len() {
            let c = self.children[ti][s][k];
            self.waiting[ti][c] -= 1;
            self.ready_at[ti][c] = self.ready_at[ti][c].max(t);
            if self.waiting[ti][c] == 0 {
                work.push((c, self.ready_at[ti][c]));
            }
        }
    }

    /// The `tasks` rows: a task finishes with its last step (NaN when one
    /// did not finish).
    fn rows(&self, flows: &[FlowOut]) -> Vec<TaskOut> {
        let mut rows: Vec<TaskOut> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, (start, table, dag))| {
                let f = &self.step_finish[i];
                let finish_s =
                    if f.iter().any(|x| x.is_nan()) { f64::NAN } else { f.iter().fold(*start, |a, &b| a.max(b)) };
                TaskOut {
                    task_id: self.task_base + i as u64,
                    kind: dag.kind.to_string(),
                    table: *table as i64,
                    start_s: *start,
                    finish_s,
                    flows: 0,
                    bytes: 0.0,
                    floor_s: f64::NAN,
                    network_s: f64::NAN,
                    io_s: f64::NAN,
                    queued_s: 0.0,
                }
            })
            .collect();
        for f in flows.iter().filter(|f| f.task_id >= self.task_base as i64) {
            let t = &mut rows[(f.task_id as u64 - self.task_base) as usize];
            t.flows += 1;
            t.bytes += f.bytes;
        }
        rows
    }
}

/// Runs the open-loop `flows` and the application `tasks` on the packet
/// engine.
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
    let subflows = t.and_then(|t| t.mptcp_subflows).unwrap_or_default();
    let tt = TaskTransport {
        kind,
        tag: kind.engine_tag(t.and_then(|t| t.small_queue), t.and_then(|t| t.spray), subflows),
        class: t.and_then(|t| t.task_class).unwrap_or(0).min(7),
    };
    let traffic_tag = traffic_kind.engine_tag(None, None, subflows);
    let d = NetConfig::default();
    let p = s.packet.as_ref();
    let dctcp_in_use = (!flows.is_empty() && traffic_kind.uses_ecn()) || (!tasks.is_empty() && kind.uses_ecn());
    let window_s = s.scenario.window.map_or(1e-3, |w| w.0);
    let routing = s.routing.as_ref().map_or(RoutingPolicy::Ecmp, |r| r.policy);
    let balanced = matches!(routing, RoutingPolicy::Adaptive | RoutingPolicy::Detour);
    let least_queued = balanced && s.routing.as_ref().is_some_and(|r| r.least_queued == Some(true));
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
        adaptive: least_queued,
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
    let controller = balanced && !least_queued;
    let detours = Rc::new(Cell::new(0));
    if controller {
        let lb = s.routing.as_ref().map(crate::config::RoutingSection::lb_params).unwrap_or_default();
        let lb = netheat_subways::load_balancer(routing.tag(), &lb)?;
        let rng = ChaCha8Rng::seed_from_u64(s.scenario.seed);
        sim.set_path_policy(Box::new(Controller { lb, net: Net::new(topo), rng, detours: Rc::clone(&detours) }))?;
    }
    let detour_paths = least_queued && routing == RoutingPolicy::Detour;
    let mut snd = Sender { topo, detour: detour_paths, messages: Vec::new(), owner: Vec::new() };
    let mut local: Vec<FlowOut> = Vec::new();
    let mut new: NewFlows = Vec::new();
    for f in flows {
        let task_id = f.task_id.map_or(-1, |t| t as i64);
        if f.src == f.dst {
            local.push(FlowOut::local(f.flow_id, f.src, f.bytes, f.start_s, task_id, f.priority));
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
            parts_done: 0,
            finish_s: f64::NAN,
            step: None,
        };
        snd.send(m, traffic_kind, traffic_tag, f.priority.clamp(0, 7) as u8, &mut new);
    }
    // Application tasks: ids after the open-loop flows' and tasks', as the
    // flow engine's task runner numbers them.
    let flow_base = flows.iter().map(|f| f.flow_id + 1).max().unwrap_or(0);
    let task_base = flows.iter().filter_map(|f| f.task_id).map(|t| t + 1).max().unwrap_or(0);
    let mut dag = Tasks::new(tasks, task_base, flow_base);
    let mut started = Started { new, local: Vec::new() };
    for (ti, (start, _, task)) in tasks.iter().enumerate() {
        for si in (0..task.steps.len()).filter(|&si| task.deps(si).is_empty()) {
            dag.start(ti, si, *start, tt, &mut snd, &mut started);
        }
    }
    for (spec, extra) in started.new.drain(..) {
        sim.add_flow_with_paths(spec, &tcfg, &extra)?;
    }
    local.append(&mut started.local);
    let last = flows.iter().map(|f| f.start_s).chain(tasks.iter().map(|t| t.0)).fold(0.0, f64::max);
    let until = s.scenario.duration.map_or(last + DRAIN_S, |d| d.0);
    let total = flows.len() as u64 + tasks.iter().map(|t| t.2.num_flows() as u64).sum::<u64>();
    if !progress(0, total) {
        return Err(ScenarioError::Interrupted);
    }
    let res = sim.run_with(until, &tcfg, &mut |id, at, out| {
        if let Some(i) = snd.part_done(id, at) {
            if let Some((ti, si)) = snd.messages[i].step {
                let mut work = Vec::new();
                dag.finish(ti, si, at, &mut work);
                let mut st = Started { new: std::mem::take(out), local: Vec::new() };
                for (c, t) in work {
                    dag.start(ti, c, t, tt, &mut snd, &mut st);
                }
                *out = st.new;
                local.append(&mut st.local);
            }
        }
    })?;
    let mut out = ScenarioResult::new("packet");
    out.window_s = window_s;
    for m in &snd.messages {
        let a = &res.flows[m.engine[0] as usize];
        out.flows.push(FlowOut {
            flow_id: m.flow_id,
            src: m.src,
            dst: m.dst,
            bytes: m.bytes as f64,
            start_s: m.start_s,
            finish_s: m.finish_s,
            fct_s: m.finish_s - m.start_s,
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
    out.tasks.extend(dag.rows(&out.flows));
    crate::result::set_floors(&mut out, topo);
    let done = out.flows.iter().filter(|f| !f.finish_s.is_nan()).count();
    out.stat("flows", out.flows.len() as f64);
    out.stat("completed", done as f64);
    out.stat("events", res.events as f64);
    out.stat("end_s", res.end_s);
    out.stat("drops", res.ports.iter().map(|q| q.drops as f64).sum());
    out.stat("marks", res.ports.iter().map(|q| q.marks as f64).sum());
    out.stat("timeouts", res.flows.iter().map(|f| f64::from(f.timeouts)).sum());
    if controller {
        out.stat("detours", detours.get() as f64);
    }
    if kind.is_cloudburst() || traffic_kind.is_cloudburst() {
        out.stat("reburst_timeout_s", reburst);
    }
    Ok(out)
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
    fn a_step_starts_when_what_it_waits_for_has_finished() {
        // Request 0 -> 5 (50 B), 10 us of service, response 5 -> 0 (1,500 B),
        // on an idle two-rack network; a second task's lone flow 1 -> 6.
        let topo = Topology::build(&TopologySpec::three_tier(1, 2, 4, 2, 0, 10e9, 20e9, None)).unwrap();
        let mut mc = TaskDag::new("memcache");
        let q = mc.flow(0, 5, 50.0, &[]);
        let w = mc.delay(10e-6, &[q]);
        mc.flow(5, 0, 1500.0, &[w]);
        let mut one = TaskDag::new("one");
        one.flow(1, 6, 1000.0, &[]);
        let tasks = vec![(1e-3, 0, mc), (2e-3, 1, one)];
        let s = Sections::default();
        let out = run_packet(&topo, &[], &tasks, &s, &mut |_, _| true).unwrap();
        // Flow ids in start order: the request (0), the lone flow (1),
        // then the response (2), released during the run.
        let ids: Vec<u64> = out.flows.iter().map(|f| f.flow_id).collect();
        assert_eq!(ids, [0, 1, 2]);
        let (req, resp) = (&out.flows[0], &out.flows[2]);
        assert_eq!((req.start_s, req.task_id, resp.task_id), (1e-3, 0, 0));
        assert!(req.finish_s > req.start_s);
        assert!((resp.start_s - (req.finish_s + 10e-6)).abs() < 1e-12, "{} vs {}", resp.start_s, req.finish_s);
        // The request crosses 4 links of 10 Gbps store-and-forward, 1 us
        // each: at least 4 x (90 B x 8 / 10 Gbps + 1 us) = 4.288 us.
        assert!(req.fct_s >= 4.288e-6, "{}", req.fct_s);
        assert_eq!(out.tasks.len(), 2);
        let t = &out.tasks[0];
        assert_eq!((t.kind.as_str(), t.flows, t.bytes, t.finish_s), ("memcache", 2, 1550.0, resp.finish_s));
        assert_eq!(out.tasks[1].finish_s, out.flows[1].finish_s);
    }

    #[test]
    fn detour_paths_are_walks_through_a_neighbouring_server() {
        use netheat_topology::{FabricSpec, HostSpec, SubwaysSpec, Wiring};
        // 8 racks of 2 servers, 2 ports each, Type 1 wiring in one loop.
        let spec = TopologySpec::uniform(
            FabricSpec::Clos {
                pods: 1,
                aggs_per_pod: 2,
                spines: 0,
                agg_uplink_bps: None,
                subways: Some(SubwaysSpec { wiring: Wiring::Type1, loop_size: 8, clusters_per_loop: 1 }),
            },
            8,
            2,
            HostSpec::with_ports(2, 10e9),
            4e9,
        );
        let topo = Topology::build(&spec).unwrap();
        let links = topo.links();
        let (src, dst) = (0u32, 6u32);
        let ds = detours(&topo, src, dst, 3);
        assert!(!ds.is_empty());
        let own: Vec<u32> = topo.hosts()[0].ports.iter().map(|q| q.tor).collect();
        for d in &ds {
            assert!(d.windows(2).all(|w| links[w[0] as usize].dst == links[w[1] as usize].src));
            assert_eq!(links[d[0] as usize].src, topo.hosts()[src as usize].node);
            assert_eq!(links[d[d.len() - 1] as usize].dst, topo.hosts()[dst as usize].node);
            // The third link leaves the intermediate server towards a ToR
            // the source does not reach.
            let x = links[d[1] as usize].dst;
            let hx = topo.hosts().iter().find(|h| h.node == x).expect("a server");
            let b = hx.ports.iter().find(|q| q.up == d[2]).expect("its port").tor;
            assert!(!own.contains(&b));
        }
    }
}
