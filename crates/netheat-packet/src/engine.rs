//! The event loop, ports, queues and switch buffers.
//!
//! Every directed link of the topology has an output port at its transmitting
//! node: strict-priority FIFO queues, one packet on the wire at a time. A
//! packet carries its path (an index into a path arena) and hop count, so
//! forwarding is an array lookup. Admission is drop-tail against the port's
//! own limit (per class) and, for switches with a shared buffer, against the
//! dynamic threshold `alpha * (free shared buffer)`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use netheat_core::{LinkId, Routing};
use netheat_topology::{NodeKind, Topology};

use crate::transport::{make_transport, Action, Coupling, PathSel, Transport, TransportConfig};
use crate::{PacketError, PS};

/// Network parameters.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Propagation delay per link, seconds.
    pub prop_delay_s: f64,
    /// Switching (processing) delay per switch hop, seconds.
    pub switch_delay_s: f64,
    /// Buffer of each switch port, bytes (drop-tail limit when not shared).
    pub port_buffer_bytes: u64,
    /// Shared buffer per switch in bytes; `None` means static per-port buffers.
    pub shared_buffer_bytes: Option<u64>,
    /// Shared buffer per switch *port* in bytes: when set, each switch has a
    /// shared buffer of this many bytes times its number of ports (as ASIC
    /// data sheets quote buffer per port), overriding `shared_buffer_bytes`.
    pub shared_buffer_per_port_bytes: Option<u64>,
    /// Dynamic-threshold factor alpha of shared buffers.
    pub alpha: f64,
    /// ECN marking threshold K in bytes (instantaneous queue); `None` = no ECN.
    pub ecn_threshold_bytes: Option<u64>,
    /// Limit in bytes of the CloudBurst class queue (aggressive dropping).
    pub cloudburst_queue_bytes: u64,
    /// Number of strict priority classes per port (class 0 served first).
    pub priorities: usize,
    /// Window of the link-utilization table, seconds.
    pub window_s: f64,
    /// Seed for ECMP hashing.
    pub seed: u64,
    /// Adaptive load balancing: every data packet takes the path of its
    /// flow with the fewest bytes queued along it (plus one packet per hop,
    /// so longer detour paths are used only when the direct ones are
    /// backed up), ties to the flow's ECMP path; ACKs return on the reverse.
    pub adaptive: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            prop_delay_s: 1e-6,
            switch_delay_s: 0.0,
            port_buffer_bytes: 300_000,
            shared_buffer_bytes: None,
            shared_buffer_per_port_bytes: None,
            alpha: 1.0,
            ecn_threshold_bytes: None,
            cloudburst_queue_bytes: 12_000,
            priorities: 8,
            window_s: 1e-3,
            seed: 1,
            adaptive: false,
        }
    }
}

/// One flow (or message) to simulate.
#[derive(Debug, Clone)]
pub struct FlowSpec {
    /// Flow id.
    pub id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes of payload.
    pub bytes: u64,
    /// Start time, seconds.
    pub start_s: f64,
    /// Transport tag (see [`crate::transport_tags`]).
    pub transport: String,
    /// Task / message group id (replicas and subflows share it), or -1.
    pub task_id: i64,
    /// Priority class for transports that do not choose one.
    pub priority: u8,
    /// Path offset from the flow's ECMP path (replicas/subflows use 0, 1, ...).
    pub path_offset: usize,
    /// MPTCP connection: flows with the same value are one connection's
    /// subflows and couple their windows (a [`crate::transport::LiaGroup`]);
    /// their transport must couple (`lia`, `lia-cbq`).
    pub coupling: Option<u64>,
}

impl FlowSpec {
    /// A flow of `bytes` from `src` to `dst` over `transport` starting at
    /// time 0, in class 1 on its ECMP path, in no task or connection.
    pub fn new(id: u64, src: u32, dst: u32, bytes: u64, transport: &str) -> Self {
        Self {
            id,
            src,
            dst,
            bytes,
            start_s: 0.0,
            transport: transport.into(),
            task_id: -1,
            priority: 1,
            path_offset: 0,
            coupling: None,
        }
    }
}

/// Per-flow outcome, same columns as the flow engine's `flows.parquet`.
#[derive(Debug, Clone)]
pub struct FlowRecord {
    /// Flow id.
    pub flow_id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Start, seconds.
    pub start_s: f64,
    /// Completion (receiver has everything), seconds; NaN if unfinished.
    pub finish_s: f64,
    /// Completion time, seconds.
    pub fct_s: f64,
    /// Task id.
    pub task_id: i64,
    /// Priority given.
    pub priority: u8,
    /// ECMP path index of the flow (first path used).
    pub path_id: u32,
    /// Data packets sent including retransmissions / extra symbols.
    pub packets_sent: u64,
    /// Retransmission timeouts.
    pub timeouts: u32,
    /// DCTCP: times the sender updated its congestion estimate alpha (once
    /// per observation window); 0 for other transports.
    pub alpha_updates: u64,
    /// DCTCP: the mean of alpha after those updates; NaN without any.
    pub alpha_mean: f64,
}

/// Per-port queue statistics.
#[derive(Debug, Clone, Default)]
pub struct PortStats {
    /// Time-averaged queue occupancy in bytes.
    pub mean_queue_bytes: f64,
    /// Maximum queue occupancy in bytes.
    pub max_queue_bytes: u64,
    /// Packets dropped at this port.
    pub drops: u64,
    /// Packets ECN-marked at this port.
    pub marks: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
}

/// Utilization of one directed link over one window.
#[derive(Debug, Clone)]
pub struct LinkWindow {
    /// Link id.
    pub link: u32,
    /// Window start, seconds.
    pub window_start_s: f64,
    /// Window end, seconds.
    pub window_end_s: f64,
    /// Fraction of capacity used.
    pub utilization: f64,
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// Per-flow records in input order.
    pub flows: Vec<FlowRecord>,
    /// Per-port statistics indexed by link id.
    pub ports: Vec<PortStats>,
    /// Link utilization windows (only links that carried traffic).
    pub links: Vec<LinkWindow>,
    /// Events processed.
    pub events: u64,
    /// Simulated end time, seconds.
    pub end_s: f64,
}

/// A packet on the wire or in a queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Packet {
    pub flow: u32,
    /// Segment number (TCP) or symbol id (CloudBurst); for ACKs the value acked.
    pub seq: u64,
    /// Wire size in bytes.
    pub size: u32,
    pub path: u32,
    pub hop: u8,
    pub prio: u8,
    pub ack: bool,
    pub ecn: bool,
    /// ECN echo on ACKs.
    pub ece: bool,
    /// Packet belongs to the small CloudBurst queue.
    pub cb_class: bool,
    /// Timestamp (ps) of the data packet echoed by its ACK, for RTT samples.
    pub ts: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Port of link finished serializing its packet.
    TxDone(u32),
    /// Packet (index in the in-flight slab) arrives at the far end of its current hop.
    Arrive(u32),
    /// Flow timer with generation.
    Timer(u32, u32),
    /// Flow starts.
    Start(u32),
    /// The path policy's controller period ends.
    Period,
}

struct Port {
    queues: Vec<std::collections::VecDeque<Packet>>,
    /// Bytes waiting per class.
    qbytes: Vec<u64>,
    total: u64,
    /// Bytes waiting in the CloudBurst class.
    cb_bytes: u64,
    busy: bool,
    cur: Option<Packet>,
    node: u32,
    is_switch: bool,
    ser_ps_per_byte: f64,
    // stats
    area: f64,
    last_t: u64,
    stats: PortStats,
    win_bytes: Vec<u64>,
}

struct FlowState {
    spec: FlowSpec,
    paths: Vec<u32>,
    ack_paths: Vec<u32>,
    ecmp: usize,
    spray_next: usize,
    tp: Box<dyn Transport>,
    timer_gen: u32,
    finish_ps: Option<u64>,
    sent: u64,
    started: bool,
}

/// The simulator.
pub struct Simulator<'a> {
    topo: &'a Topology,
    cfg: NetConfig,
    ports: Vec<Port>,
    switch_used: Vec<u64>,
    /// Shared buffer of each node (switches only), bytes; `None` = static.
    switch_cap: Vec<Option<u64>>,
    /// Every distinct path a packet may take, each stored once: flows and
    /// packets refer to them by index.
    path_arena: Vec<Vec<LinkId>>,
    /// The index of each path in `path_arena`.
    path_ids: HashMap<Vec<LinkId>, u32>,
    /// The topology's paths between two hosts and their reverses (for
    /// ACKs), as `path_arena` indices, per (source, destination).
    pair_paths: HashMap<(u32, u32), (Vec<u32>, Vec<u32>)>,
    flows: Vec<FlowState>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    now: u64,
    inflight: Vec<Packet>,
    free_slots: Vec<u32>,
    prop_ps: u64,
    switch_ps: u64,
    events: u64,
    actions: Vec<Action>,
    window_ps: u64,
    /// Flows finished since the controller last heard (indices).
    done: Vec<u32>,
    /// MPTCP connections by [`FlowSpec::coupling`].
    connections: HashMap<u64, Coupling>,
    /// The load balancer choosing paths, if any ([`Simulator::set_path_policy`]).
    policy: Option<Box<dyn PathPolicy + 'a>>,
    /// Each port's `tx_bytes` at the last controller period.
    tx_at_period: Vec<u64>,
}

/// Flows a [`Simulator::run_with`] controller starts: each with the extra
/// paths it may use (see [`Simulator::add_flow_with_paths`]).
pub type NewFlows = Vec<(FlowSpec, Vec<Vec<LinkId>>)>;

/// A flow that has started and not finished, as a [`PathPolicy`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct RunningFlow<'p> {
    /// Flow id ([`FlowSpec::id`]).
    pub id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Links its data packets take now.
    pub path: &'p [LinkId],
}

/// A load balancer outside the engine that picks each flow's path as the
/// flow starts and hears link counters once a controller period: the
/// Subways paper's controller (CoNEXT'15 §5.2, §8.1), which reads the
/// ToRs' packet counters every `T_rebind` and re-weights the servers' path
/// choices. The engine asks it instead of hashing the flow onto a path; a
/// path it returns that is not among the flow's paths is added to them.
pub trait PathPolicy {
    /// The controller period, seconds.
    fn period_s(&self) -> f64;
    /// The links of the path of flow `spec` as it starts (`None`: its ECMP
    /// path).
    fn route(&mut self, spec: &FlowSpec) -> Option<Vec<LinkId>>;
    /// The period ending at `now_s`: `rate_bps[l]` is the rate link `l`
    /// carried on average over it (bytes sent times 8 over the period).
    /// Returns flows to move, by id, with the links their next data packets
    /// take (packets already sent keep theirs).
    fn on_period(&mut self, now_s: f64, rate_bps: &[f64], running: &[RunningFlow<'_>]) -> Vec<(u64, Vec<LinkId>)>;
}

impl<'a> Simulator<'a> {
    /// A simulator over `topo` with `cfg`.
    pub fn new(topo: &'a Topology, cfg: NetConfig) -> Result<Self, PacketError> {
        if cfg.priorities == 0 || cfg.priorities > 16 {
            return Err(PacketError::Config(format!("priorities must be 1..=16, got {}", cfg.priorities)));
        }
        let ok = cfg.window_s > 0.0 && cfg.prop_delay_s >= 0.0 && cfg.switch_delay_s >= 0.0 && cfg.alpha > 0.0;
        if !ok {
            return Err(PacketError::Config("window must be > 0, delays >= 0, alpha > 0".into()));
        }
        let nodes = topo.nodes();
        let ports = topo
            .links()
            .iter()
            .map(|l| Port {
                queues: vec![Default::default(); cfg.priorities],
                qbytes: vec![0; cfg.priorities],
                total: 0,
                cb_bytes: 0,
                busy: false,
                cur: None,
                node: l.src,
                is_switch: nodes[l.src as usize].kind != NodeKind::Host,
                ser_ps_per_byte: 8.0 * PS / l.capacity_bps,
                area: 0.0,
                last_t: 0,
                stats: PortStats::default(),
                win_bytes: Vec::new(),
            })
            .collect();
        let switch_cap = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if n.kind == NodeKind::Host {
                    return None;
                }
                match cfg.shared_buffer_per_port_bytes {
                    Some(b) => {
                        let ports = topo.links().iter().filter(|l| l.src as usize == i).count() as u64;
                        Some(b * ports)
                    }
                    None => cfg.shared_buffer_bytes,
                }
            })
            .collect();
        Ok(Self {
            topo,
            switch_cap,
            prop_ps: (cfg.prop_delay_s * PS).round() as u64,
            switch_ps: (cfg.switch_delay_s * PS).round() as u64,
            window_ps: (cfg.window_s * PS).round().max(1.0) as u64,
            cfg,
            ports,
            switch_used: vec![0; nodes.len()],
            path_arena: Vec::new(),
            path_ids: HashMap::new(),
            pair_paths: HashMap::new(),
            flows: Vec::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            inflight: Vec::new(),
            free_slots: Vec::new(),
            events: 0,
            actions: Vec::new(),
            done: Vec::new(),
            connections: HashMap::new(),
            policy: None,
            tx_at_period: Vec::new(),
        })
    }

    /// Lets `policy` choose every flow's path as it starts, and hear the
    /// links' counters every [`PathPolicy::period_s`] from time 0 while
    /// anything else is still to happen.
    pub fn set_path_policy(&mut self, policy: Box<dyn PathPolicy + 'a>) -> Result<(), PacketError> {
        let p = policy.period_s();
        if !(p.is_finite() && p > 0.0) {
            return Err(PacketError::Config(format!("path policy period must be > 0 s, got {p}")));
        }
        self.policy = Some(policy);
        self.tx_at_period = vec![0; self.ports.len()];
        let at = (p * PS).round() as u64;
        self.push(at.max(self.now + 1), Ev::Period);
        Ok(())
    }

    /// Adds a flow with its transport configuration.
    pub fn add_flow(&mut self, spec: FlowSpec, tcfg: &TransportConfig) -> Result<(), PacketError> {
        self.add_flow_with_paths(spec, tcfg, &[])
    }

    /// Adds a flow that may also use `extra` paths (directed link lists from
    /// its source to its destination host, e.g. Subways detours through
    /// another server) after the topology's; each must be a connected walk.
    pub fn add_flow_with_paths(
        &mut self,
        spec: FlowSpec,
        tcfg: &TransportConfig,
        extra: &[Vec<LinkId>],
    ) -> Result<(), PacketError> {
        let n = self.topo.num_hosts() as u32;
        if spec.src >= n || spec.dst >= n || spec.src == spec.dst {
            return Err(PacketError::BadFlow {
                flow: spec.id,
                reason: format!("hosts {} -> {} invalid (have {n})", spec.src, spec.dst),
            });
        }
        if spec.start_s.is_nan() || spec.start_s < 0.0 {
            return Err(PacketError::BadFlow { flow: spec.id, reason: "negative start".into() });
        }
        let np = self.topo.num_paths(spec.src, spec.dst);
        if np == 0 {
            return Err(PacketError::BadFlow { flow: spec.id, reason: "no path".into() });
        }
        let (mut paths, mut ack_paths) = match self.pair_paths.get(&(spec.src, spec.dst)) {
            Some((p, a)) => (p.clone(), a.clone()),
            None => {
                let mut paths = Vec::with_capacity(np);
                let mut ack_paths = Vec::with_capacity(np);
                for k in 0..np {
                    let mut p = Vec::new();
                    self.topo.path(spec.src, spec.dst, k, &mut p);
                    let (data, ack) = self.intern_both(p);
                    paths.push(data);
                    ack_paths.push(ack);
                }
                self.pair_paths.insert((spec.src, spec.dst), (paths.clone(), ack_paths.clone()));
                (paths, ack_paths)
            }
        };
        for p in extra {
            if !self.is_walk(spec.src, spec.dst, p) {
                return Err(PacketError::BadFlow {
                    flow: spec.id,
                    reason: format!("extra path {p:?} is not a walk from host {} to host {}", spec.src, spec.dst),
                });
            }
            let (data, ack) = self.intern_both(p.clone());
            paths.push(data);
            ack_paths.push(ack);
        }
        let ecmp = (splitmix(spec.id ^ self.cfg.seed.rotate_left(17)) % np as u64) as usize;
        let mut tp = make_transport(&spec.transport, tcfg, spec.bytes, spec.priority, spec.id, spec.path_offset)?;
        if let Some(c) = spec.coupling {
            let group = self.connections.entry(c).or_default();
            if !tp.couple(group) {
                return Err(PacketError::BadFlow {
                    flow: spec.id,
                    reason: format!("transport '{}' does not couple subflows (use `lia`)", spec.transport),
                });
            }
        }
        let idx = self.flows.len() as u32;
        let t = ((spec.start_s * PS).round() as u64).max(self.now);
        self.flows.push(FlowState {
            spec,
            paths,
            ack_paths,
            ecmp,
            spray_next: ecmp,
            tp,
            timer_gen: 0,
            finish_ps: None,
            sent: 0,
            started: false,
        });
        self.push(t, Ev::Start(idx));
        Ok(())
    }

    /// Distinct paths stored: each path a packet may take, and each one's
    /// reverse, once, however many flows use it (a flow holds indices).
    pub fn stored_paths(&self) -> usize {
        self.path_arena.len()
    }

    /// The arena index of path `p`, stored if new.
    fn intern(&mut self, p: Vec<LinkId>) -> u32 {
        if let Some(&i) = self.path_ids.get(&p) {
            return i;
        }
        let i = self.path_arena.len() as u32;
        self.path_arena.push(p.clone());
        self.path_ids.insert(p, i);
        i
    }

    /// The arena indices of path `p` and of its reverse (its ACKs' path).
    fn intern_both(&mut self, p: Vec<LinkId>) -> (u32, u32) {
        let links = self.topo.links();
        let rev: Vec<LinkId> = p.iter().rev().map(|&l| links[l as usize].reverse).collect();
        (self.intern(p), self.intern(rev))
    }

    #[inline]
    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// Runs until no events remain or `until_s` is reached.
    pub fn run(self, until_s: f64) -> SimResult {
        self.run_with(until_s, &TransportConfig::default(), &mut |_, _, _| {}).expect("no flow is added during the run")
    }

    /// Runs until no events remain or `until_s` is reached, telling
    /// `on_done(flow_id, finish_s, new)` of every flow as it finishes (in
    /// the order they finish) so it can start others (with `tcfg`), at that
    /// instant or later: how tasks whose steps wait for other steps run.
    pub fn run_with(
        mut self,
        until_s: f64,
        tcfg: &TransportConfig,
        on_done: &mut dyn FnMut(u64, f64, &mut NewFlows),
    ) -> Result<SimResult, PacketError> {
        let until = if until_s.is_finite() { (until_s * PS) as u64 } else { u64::MAX };
        let mut new: NewFlows = Vec::new();
        loop {
            // Flows that finished at the last event start what waits for
            // them (`now` is still that event's time); flows started at
            // this instant come after the events already due at it.
            for f in std::mem::take(&mut self.done) {
                let fs = &self.flows[f as usize];
                let (id, at) = (fs.spec.id, fs.finish_ps.unwrap_or(self.now) as f64 / PS);
                on_done(id, at, &mut new);
                for (spec, extra) in new.drain(..) {
                    self.add_flow_with_paths(spec, tcfg, &extra)?;
                }
            }
            let Some(Reverse((t, _, ev))) = self.heap.pop() else { break };
            if t > until {
                break;
            }
            self.now = t;
            self.events += 1;
            match ev {
                Ev::TxDone(l) => self.tx_done(l),
                Ev::Arrive(slot) => self.arrive(slot),
                Ev::Timer(f, g) => {
                    if self.flows[f as usize].timer_gen == g && self.flows[f as usize].finish_ps.is_none() {
                        let mut acts = std::mem::take(&mut self.actions);
                        self.flows[f as usize].tp.on_timer(self.now, &mut acts);
                        self.apply(f, &mut acts);
                        self.actions = acts;
                    }
                }
                Ev::Period => self.period()?,
                Ev::Start(f) => {
                    self.flows[f as usize].started = true;
                    if let Some(links) = self.policy.as_mut().and_then(|p| p.route(&self.flows[f as usize].spec)) {
                        self.use_path(f, links)?;
                    }
                    let mut acts = std::mem::take(&mut self.actions);
                    self.flows[f as usize].tp.on_start(self.now, &mut acts);
                    self.apply(f, &mut acts);
                    self.actions = acts;
                }
            }
        }
        Ok(self.finish())
    }

    /// Whether `links` is a connected walk from host `src` to host `dst`.
    fn is_walk(&self, src: u32, dst: u32, links: &[LinkId]) -> bool {
        let all = self.topo.links();
        let (src, dst) = (self.topo.hosts()[src as usize].node, self.topo.hosts()[dst as usize].node);
        !links.is_empty()
            && links.iter().all(|&l| (l as usize) < all.len())
            && all[links[0] as usize].src == src
            && all[links[links.len() - 1] as usize].dst == dst
            && links.windows(2).all(|w| all[w[0] as usize].dst == all[w[1] as usize].src)
    }

    /// Flow `f`'s data packets take `links` from now on (added to its paths,
    /// with the reverse for its ACKs, when it is not one of them).
    fn use_path(&mut self, f: u32, links: Vec<LinkId>) -> Result<(), PacketError> {
        let fs = &self.flows[f as usize];
        let known = self.path_ids.get(&links).and_then(|&i| fs.paths.iter().position(|&p| p == i));
        let k = match known {
            Some(k) => k,
            None => {
                if !self.is_walk(fs.spec.src, fs.spec.dst, &links) {
                    return Err(PacketError::BadFlow {
                        flow: fs.spec.id,
                        reason: format!(
                            "path policy's path {links:?} is not a walk from its source to its destination"
                        ),
                    });
                }
                let (p, a) = self.intern_both(links);
                let fs = &mut self.flows[f as usize];
                fs.paths.push(p);
                fs.ack_paths.push(a);
                fs.paths.len() - 1
            }
        };
        let fs = &mut self.flows[f as usize];
        fs.ecmp = k;
        fs.spray_next = k;
        Ok(())
    }

    /// A controller period ends: the policy hears each link's rate over it
    /// and may move running flows; the next period is due unless nothing
    /// else is left to happen.
    fn period(&mut self) -> Result<(), PacketError> {
        let Some(mut policy) = self.policy.take() else { return Ok(()) };
        let p = policy.period_s();
        let rate: Vec<f64> = self
            .ports
            .iter()
            .zip(&self.tx_at_period)
            .map(|(port, &before)| (port.stats.tx_bytes - before) as f64 * 8.0 / p)
            .collect();
        self.tx_at_period = self.ports.iter().map(|port| port.stats.tx_bytes).collect();
        let running: Vec<RunningFlow<'_>> = self
            .flows
            .iter()
            .filter(|fs| fs.started && fs.finish_ps.is_none())
            .map(|fs| RunningFlow {
                id: fs.spec.id,
                src: fs.spec.src,
                dst: fs.spec.dst,
                path: &self.path_arena[fs.paths[fs.ecmp] as usize],
            })
            .collect();
        let moves = policy.on_period(self.now as f64 / PS, &rate, &running);
        drop(running);
        let mut moved = Ok(());
        if !moves.is_empty() {
            let by_id: HashMap<u64, u32> =
                self.flows.iter().enumerate().map(|(i, fs)| (fs.spec.id, i as u32)).collect();
            for (id, links) in moves {
                if let Some(&f) = by_id.get(&id) {
                    moved = moved.and(self.use_path(f, links));
                }
            }
        }
        if !self.heap.is_empty() {
            let at = self.now + (p * PS).round() as u64;
            self.push(at, Ev::Period);
        }
        self.policy = Some(policy);
        moved
    }

    /// Index of flow `f`'s path with the fewest bytes queued along it plus
    /// 1500 bytes per hop (ties: the ECMP path, then the lowest index).
    fn least_queued(&self, f: u32) -> usize {
        let fs = &self.flows[f as usize];
        let cost = |k: usize| -> u64 {
            let p = &self.path_arena[fs.paths[k] as usize];
            p.iter().map(|&l| self.ports[l as usize].total).sum::<u64>() + 1500 * p.len() as u64
        };
        let mut best = (cost(fs.ecmp), fs.ecmp);
        for k in 0..fs.paths.len() {
            let c = cost(k);
            if c < best.0 {
                best = (c, k);
            }
        }
        best.1
    }

    fn apply(&mut self, f: u32, acts: &mut Vec<Action>) {
        for a in acts.drain(..) {
            match a {
                Action::Send { seq, size, prio, sel, cb_class } => {
                    let adaptive = self.cfg.adaptive.then(|| self.least_queued(f));
                    let fs = &mut self.flows[f as usize];
                    let k = match (adaptive, sel) {
                        (Some(k), _) => k,
                        (None, PathSel::Flow) => fs.ecmp,
                        (None, PathSel::Spray) => {
                            fs.spray_next = (fs.spray_next + 1) % fs.paths.len();
                            fs.spray_next
                        }
                        (None, PathSel::Index(i)) => (fs.ecmp + i) % fs.paths.len(),
                    };
                    fs.sent += 1;
                    let pkt = Packet {
                        flow: f,
                        seq,
                        size,
                        path: fs.paths[k],
                        hop: 0,
                        prio,
                        ack: false,
                        ecn: false,
                        ece: false,
                        cb_class,
                        ts: self.now,
                    };
                    self.enqueue(pkt);
                }
                Action::Timer { at } => {
                    let fs = &mut self.flows[f as usize];
                    fs.timer_gen = fs.timer_gen.wrapping_add(1);
                    let g = fs.timer_gen;
                    self.push(at.max(self.now), Ev::Timer(f, g));
                }
                Action::CancelTimer => {
                    let fs = &mut self.flows[f as usize];
                    fs.timer_gen = fs.timer_gen.wrapping_add(1);
                }
                Action::Done => {
                    let fs = &mut self.flows[f as usize];
                    if fs.finish_ps.is_none() {
                        fs.finish_ps = Some(self.now);
                        self.done.push(f);
                    }
                }
                Action::Ack { seq, ece, ts, prio, path_of, cb_class } => {
                    let fs = &self.flows[f as usize];
                    // The ACK returns on the reverse of the data packet's path.
                    let pos = fs.paths.iter().position(|&p| p == path_of).unwrap_or(fs.ecmp);
                    let pkt = Packet {
                        flow: f,
                        seq,
                        size: 64,
                        path: fs.ack_paths[pos],
                        hop: 0,
                        prio,
                        ack: true,
                        ecn: false,
                        ece,
                        cb_class,
                        ts,
                    };
                    self.enqueue(pkt);
                }
            }
        }
    }

    fn enqueue(&mut self, mut pkt: Packet) {
        let l = self.path_arena[pkt.path as usize][pkt.hop as usize] as usize;
        let now = self.now;
        let port = &mut self.ports[l];
        if !port.busy {
            port.busy = true;
            let d = (pkt.size as f64 * port.ser_ps_per_byte) as u64;
            port.cur = Some(pkt);
            self.push(now + d, Ev::TxDone(l as u32));
            return;
        }
        let size = pkt.size as u64;
        if port.is_switch {
            // Admission: CloudBurst class has its own small limit; others the
            // port buffer, or the dynamic threshold of the shared buffer.
            let ok = if pkt.cb_class {
                port.cb_bytes + size <= self.cfg.cloudburst_queue_bytes
            } else if let Some(shared) = self.switch_cap[port.node as usize] {
                let used = self.switch_used[port.node as usize];
                let free = shared.saturating_sub(used) as f64;
                used + size <= shared && ((port.total + size) as f64) <= self.cfg.alpha * free
            } else {
                port.total - port.cb_bytes + size <= self.cfg.port_buffer_bytes
            };
            if !ok {
                port.stats.drops += 1;
                return;
            }
            if let Some(k) = self.cfg.ecn_threshold_bytes {
                if !pkt.ack && port.total > k {
                    pkt.ecn = true;
                    port.stats.marks += 1;
                }
            }
            self.switch_used[port.node as usize] += size;
        }
        port.area += port.total as f64 * (now - port.last_t) as f64;
        port.last_t = now;
        let c = (pkt.prio as usize).min(port.queues.len() - 1);
        port.queues[c].push_back(pkt);
        port.qbytes[c] += size;
        port.total += size;
        if pkt.cb_class {
            port.cb_bytes += size;
        }
        port.stats.max_queue_bytes = port.stats.max_queue_bytes.max(port.total);
    }

    fn tx_done(&mut self, l: u32) {
        let now = self.now;
        let win = (now / self.window_ps) as usize;
        let port = &mut self.ports[l as usize];
        let pkt = port.cur.take().expect("busy port has a packet");
        port.stats.tx_bytes += pkt.size as u64;
        if port.win_bytes.len() <= win {
            port.win_bytes.resize(win + 1, 0);
        }
        port.win_bytes[win] += pkt.size as u64;
        // Next packet, highest class first.
        let mut next = None;
        for (c, q) in port.queues.iter_mut().enumerate() {
            if let Some(p) = q.pop_front() {
                port.qbytes[c] -= p.size as u64;
                next = Some(p);
                break;
            }
        }
        if let Some(p) = next {
            port.area += port.total as f64 * (now - port.last_t) as f64;
            port.last_t = now;
            port.total -= p.size as u64;
            if p.cb_class {
                port.cb_bytes -= p.size as u64;
            }
            if port.is_switch {
                self.switch_used[port.node as usize] -= p.size as u64;
            }
            let d = (p.size as f64 * port.ser_ps_per_byte) as u64;
            port.cur = Some(p);
            self.push(now + d, Ev::TxDone(l));
        } else {
            port.busy = false;
        }
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.inflight[s as usize] = pkt;
                s
            }
            None => {
                self.inflight.push(pkt);
                (self.inflight.len() - 1) as u32
            }
        };
        let extra = if (pkt.hop as usize) + 1 < self.path_arena[pkt.path as usize].len() { self.switch_ps } else { 0 };
        self.push(now + self.prop_ps + extra, Ev::Arrive(slot));
    }

    fn arrive(&mut self, slot: u32) {
        let mut pkt = self.inflight[slot as usize];
        self.free_slots.push(slot);
        pkt.hop += 1;
        if (pkt.hop as usize) < self.path_arena[pkt.path as usize].len() {
            self.enqueue(pkt);
            return;
        }
        let f = pkt.flow;
        if self.flows[f as usize].finish_ps.is_some() && !pkt.ack {
            // Late copies after completion still get ACKed so senders stop.
        }
        let mut acts = std::mem::take(&mut self.actions);
        let tp = &mut self.flows[f as usize].tp;
        if pkt.ack {
            tp.on_ack(self.now, pkt.seq, pkt.ece, pkt.ts, &mut acts);
        } else {
            tp.on_data(self.now, pkt.seq, pkt.ecn, pkt.ts, pkt.path, &mut acts);
        }
        self.apply(f, &mut acts);
        self.actions = acts;
    }

    fn finish(self) -> SimResult {
        let end = self.now;
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let finish = f.finish_ps.map(|t| t as f64 / PS).unwrap_or(f64::NAN);
                let (alpha_updates, alpha_sum) = f.tp.alpha_updates();
                FlowRecord {
                    flow_id: f.spec.id,
                    src: f.spec.src,
                    dst: f.spec.dst,
                    bytes: f.spec.bytes,
                    start_s: f.spec.start_s,
                    finish_s: finish,
                    fct_s: finish - f.spec.start_s,
                    task_id: f.spec.task_id,
                    priority: f.spec.priority,
                    path_id: f.ecmp as u32,
                    packets_sent: f.sent,
                    timeouts: f.tp.timeouts(),
                    alpha_updates,
                    alpha_mean: if alpha_updates > 0 { alpha_sum / alpha_updates as f64 } else { f64::NAN },
                }
            })
            .collect();
        let mut links = Vec::new();
        let ws = self.window_ps as f64 / PS;
        let ports = self
            .ports
            .iter()
            .enumerate()
            .map(|(l, p)| {
                let cap = self.topo.links()[l].capacity_bps;
                for (w, &b) in p.win_bytes.iter().enumerate() {
                    if b > 0 {
                        links.push(LinkWindow {
                            link: l as u32,
                            window_start_s: w as f64 * ws,
                            window_end_s: (w + 1) as f64 * ws,
                            utilization: b as f64 * 8.0 / (cap * ws),
                        });
                    }
                }
                let area = p.area + p.total as f64 * (end - p.last_t) as f64;
                let mut s = p.stats.clone();
                s.mean_queue_bytes = if end > 0 { area / end as f64 } else { 0.0 };
                s
            })
            .collect();
        SimResult { flows, ports, links, events: self.events, end_s: end as f64 / PS }
    }
}

/// A fast integer hash (SplitMix64 finalizer).
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
