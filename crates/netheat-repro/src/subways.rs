//! Shuffle jobs on contiguous servers, load-balanced by a Subways policy.
//!
//! A job is `nodes` servers placed by [`Placement`]: consecutive servers
//! from the first server of rack `first_rack` (the Subways paper's
//! intra-cluster jobs, CoNEXT'15 §8.3), or split equally between two
//! Subways loops (its cross-cluster jobs). Under [`Pattern::AllToAll`]
//! every server is both a mapper and a reducer and sends to every other
//! server of the job; under [`Pattern::IntoLastRack`] the servers of the
//! job's last rack receive from all the others (the testbed run of §8.2,
//! Table 2). Each (sender, receiver) pair has `flows_per_pair` flows of
//! `bytes_per_pair` bytes each, all at time 0. The job completes with its
//! last flow. The policy routes each flow when it starts and, for adaptive
//! policies, re-binds running flows every period, given each link's average
//! rate over the period (measured from the flows' byte counters, as the
//! paper's controllers read switch packet counters every `T_rebind`, §8.1).
//!
//! With `failed_tor`, that ToR is down from time 0 (every link of it at
//! capacity 0): ECMP flows are re-routed by the engine, the other policies
//! route around it, and flows between servers left without a live port are
//! *stranded*: the job then never completes (`completion_s` is NaN) and
//! [`ShuffleResult::stranded`] counts them.

use netheat_core::{HostId, LinkId, Routing};
use netheat_engine::{Controller, Ctx, EngineError, FlowRecord, FlowSpec, Network, SimConfig, Simulation};
use netheat_topology::Topology;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use netheat_subways::lb::{load_balancer, ActiveFlow, LbParams, LoadBalancer, Net};
use netheat_subways::SubwaysError;

/// Where a job's servers sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// `nodes` consecutive servers from the first server of `first_rack`.
    #[default]
    Contiguous,
    /// Half the servers (rounded up) fill the racks of the loop of
    /// `first_rack` in loop order from its position 0, the rest those of the
    /// next loop
    /// (§8.3 "splits those servers equally between two different Subways
    /// loops"). Loops are the topology's Subways loops (Type 1/2); a Type 0
    /// datacenter has none, and its clusters play the part (they are the
    /// loops of Type 1 with loops as large as a cluster, as in §8.1).
    TwoLoops,
}

/// Who sends to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pattern {
    /// Every server to every other (a MapReduce shuffle, §8.3).
    #[default]
    AllToAll,
    /// The servers of the job's last rack receive from all the others
    /// (§8.2: three racks send to the fourth).
    IntoLastRack,
}

/// A shuffle job.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleJob {
    /// Rack of the first server.
    pub first_rack: u32,
    /// Servers in the job.
    pub nodes: usize,
    /// Bytes of each flow.
    pub bytes_per_pair: f64,
    /// Flows from each sender to each of its receivers (1 for a shuffle).
    pub flows_per_pair: usize,
    /// Where the servers sit.
    pub placement: Placement,
    /// Who sends to whom.
    pub pattern: Pattern,
    /// A ToR that is down for the whole job.
    pub failed_tor: Option<u32>,
}

impl ShuffleJob {
    /// An all-to-all job on `nodes` consecutive servers from `first_rack`,
    /// one flow of `bytes_per_pair` per ordered pair, nothing failed.
    pub fn new(first_rack: u32, nodes: usize, bytes_per_pair: f64) -> Self {
        Self {
            first_rack,
            nodes,
            bytes_per_pair,
            flows_per_pair: 1,
            placement: Placement::Contiguous,
            pattern: Pattern::AllToAll,
            failed_tor: None,
        }
    }

    /// The job's servers, in placement order.
    pub fn members(&self, topo: &Topology) -> Result<Vec<HostId>, SubwaysError> {
        let hosts = topo.hosts().len();
        let first = topo
            .racks()
            .get(self.first_rack as usize)
            .ok_or_else(|| SubwaysError::param("first_rack", format!("rack {} does not exist", self.first_rack)))?
            .first_host as usize;
        match self.placement {
            Placement::Contiguous => {
                if self.nodes < 2 || first + self.nodes > hosts {
                    return Err(SubwaysError::param(
                        "nodes",
                        format!(
                            "{} servers from host {first} do not fit in {hosts} hosts (need at least 2)",
                            self.nodes
                        ),
                    ));
                }
                Ok((first..first + self.nodes).map(|h| h as HostId).collect())
            }
            Placement::TwoLoops => {
                if self.nodes < 2 {
                    return Err(SubwaysError::param("nodes", format!("{} servers: need at least 2", self.nodes)));
                }
                let loops = loops_in_order(topo);
                let a = loops
                    .iter()
                    .position(|l| l.contains(&self.first_rack))
                    .ok_or_else(|| SubwaysError::param("first_rack", "rack is in no loop"))?;
                if loops.len() < 2 {
                    return Err(SubwaysError::param("placement", "two-loops needs at least two loops (or clusters)"));
                }
                let mut out = Vec::new();
                let halves = [self.nodes.div_ceil(2), self.nodes / 2];
                for (half, l) in halves.into_iter().zip([&loops[a], &loops[(a + 1) % loops.len()]]) {
                    let servers: Vec<HostId> = l
                        .iter()
                        .flat_map(|&r| {
                            let f = topo.racks()[r as usize].first_host;
                            (f..f + topo.hosts_per_rack() as HostId).collect::<Vec<_>>()
                        })
                        .collect();
                    if servers.len() < half {
                        return Err(SubwaysError::param(
                            "nodes",
                            format!("{half} servers do not fit in a loop of {}", servers.len()),
                        ));
                    }
                    out.extend(&servers[..half]);
                }
                Ok(out)
            }
        }
    }
}

/// The Subways loops of `topo` (each a list of racks in loop order from
/// position 0), or its clusters (racks in id order) when it has none.
pub fn loops_in_order(topo: &Topology) -> Vec<Vec<u32>> {
    let racks = topo.racks();
    let mut ids: Vec<u32> = racks.iter().filter_map(|r| r.subways_loop).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        let pods = racks.iter().map(|r| r.pod).max().map_or(0, |p| p + 1);
        return (0..pods).map(|p| (0..racks.len() as u32).filter(|&r| racks[r as usize].pod == p).collect()).collect();
    }
    ids.iter()
        .map(|&id| {
            let members: Vec<u32> =
                (0..racks.len() as u32).filter(|&r| racks[r as usize].subways_loop == Some(id)).collect();
            // Position 0 is the loop's lowest rack; a server's port 1 is on
            // the ToR one position on (`netheat-topology` wiring).
            let mut order = vec![members[0]];
            while order.len() < members.len() {
                let last = *order.last().expect("non-empty");
                let h = racks[last as usize].first_host;
                let next = topo.hosts()[h as usize].ports.get(1).map(|p| p.tor);
                match next {
                    Some(n) if !order.contains(&n) && members.contains(&n) => order.push(n),
                    _ => {
                        // Not a ring walk (p = 1 or l = p): fall back to id order.
                        order = members.clone();
                        break;
                    }
                }
            }
            order
        })
        .collect()
}

/// Bytes carried by each link over the current controller period, from the
/// flows' byte counters (exact in the fluid engine: paths change only at
/// period boundaries).
#[derive(Debug, Clone, Default)]
pub struct WindowMeter {
    /// Bytes per link since the period started.
    bytes: Vec<f64>,
    /// Byte counter of each flow at the period start.
    last: Vec<f64>,
}

impl WindowMeter {
    /// A meter over `links` links and `flows` flow ids.
    pub fn new(links: usize, flows: usize) -> Self {
        Self { bytes: vec![0.0; links], last: vec![0.0; flows] }
    }

    /// Flow `id` on `path` has sent `sent` bytes in total so far.
    pub fn record(&mut self, id: u64, path: &[LinkId], sent: f64) {
        let Some(last) = self.last.get_mut(id as usize) else { return };
        let d = (sent - *last).max(0.0);
        *last = sent;
        for &l in path {
            self.bytes[l as usize] += d;
        }
    }

    /// Average rate (bits/s) of each link over a period of `period_s`,
    /// then starts a new period.
    pub fn close(&mut self, period_s: f64) -> Vec<f64> {
        let out = self.bytes.iter().map(|b| b * 8.0 / period_s).collect();
        self.bytes.iter_mut().for_each(|b| *b = 0.0);
        out
    }
}

/// What a shuffle run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleResult {
    /// Job completion time (last flow), seconds.
    pub completion_s: f64,
    /// Flows in the job.
    pub flows: usize,
    /// Re-bindings applied by the policy.
    pub rebinds: u64,
    /// Flows moved onto detours.
    pub detours: u64,
    /// Engine events.
    pub events: u64,
    /// Flows that could not run (no live path): the job did not complete.
    pub stranded: usize,
    /// When the first detour was taken (`None`: never).
    pub first_detour_s: Option<f64>,
}

struct Runner<'n, 't> {
    net: &'n Net<'t>,
    lb: Box<dyn LoadBalancer>,
    rng: ChaCha8Rng,
    /// (src, dst, path) per flow id; `None` once finished.
    flows: Vec<Option<ActiveFlow>>,
    running: usize,
    rebinds: u64,
    error: Option<EngineError>,
    meter: WindowMeter,
    last_tick: f64,
    first_detour_s: Option<f64>,
}

impl Controller for Runner<'_, '_> {
    fn on_flow_complete(&mut self, _: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if let Some(slot) = self.flows.get_mut(flow.id as usize) {
            if let Some(f) = slot.take() {
                self.meter.record(f.id, &f.path, flow.bytes);
                self.running -= 1;
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, _: u64) {
        if self.running == 0 {
            return;
        }
        let active: Vec<ActiveFlow> = self.flows.iter().flatten().cloned().collect();
        let now = ctx.now();
        for f in &active {
            let sent = ctx.flow_bytes_sent(f.id).unwrap_or(0.0);
            self.meter.record(f.id, &f.path, sent);
        }
        let window = self.meter.close((now - self.last_tick).max(1e-12));
        self.last_tick = now;
        let before = self.lb.detours();
        let moves = {
            let rate = |l: LinkId| window[l as usize];
            self.lb.on_period(self.net, now, &rate, &active, &mut self.rng)
        };
        if self.lb.detours() > before && self.first_detour_s.is_none() {
            self.first_detour_s = Some(now);
        }
        for (id, path) in moves {
            match ctx.rebind_explicit(id, path.clone()) {
                Ok(()) => {
                    self.rebinds += 1;
                    if let Some(Some(f)) = self.flows.get_mut(id as usize) {
                        f.path = path;
                    }
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        if let Some(p) = self.lb.period_s() {
            if let Err(e) = ctx.schedule_timer(now + p, 0) {
                self.error.get_or_insert(e);
            }
        }
    }
}

/// Runs `job` on `topo` with load-balancing policy `policy` (a tag of
/// [`netheat_subways::lb::POLICIES`]), seeded.
pub fn run_shuffle(
    topo: &Topology,
    job: &ShuffleJob,
    policy: &str,
    params: &LbParams,
    seed: u64,
) -> Result<ShuffleResult, SubwaysError> {
    let members = job.members(topo)?;
    if job.flows_per_pair == 0 {
        return Err(SubwaysError::param("flows_per_pair", "must be at least 1"));
    }
    if !(job.bytes_per_pair.is_finite() && job.bytes_per_pair > 0.0) {
        return Err(SubwaysError::param("bytes_per_pair", format!("{} must be > 0", job.bytes_per_pair)));
    }
    if let Some(t) = job.failed_tor {
        if t as usize >= topo.tors().len() {
            return Err(SubwaysError::param("failed_tor", format!("ToR {t} does not exist")));
        }
    }
    let net = Net::with_failed_tor(topo, job.failed_tor);
    let mut lb = load_balancer(policy, params)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let routing: &dyn Routing = topo;
    let cfg = SimConfig { window_s: 1e6, seed, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
    if let Some(t) = job.failed_tor {
        let tor = &topo.tors()[t as usize];
        let mut dead: Vec<netheat_core::LinkId> = tor.up.iter().chain(&tor.down).copied().collect();
        for h in topo.hosts() {
            for p in h.ports.iter().filter(|p| p.tor == t) {
                dead.extend([p.up, p.down]);
            }
        }
        for l in dead {
            sim.schedule_capacity(0.0, l, 0.0)?;
        }
    }
    let mut flows = Vec::new();
    let mut skipped = 0;
    let receivers: Vec<HostId> = match job.pattern {
        Pattern::AllToAll => members.clone(),
        Pattern::IntoLastRack => {
            let rack_of = |h: HostId| topo.nodes()[h as usize].rack;
            let last = rack_of(*members.last().expect("at least 2 members"));
            members.iter().copied().filter(|&h| rack_of(h) == last).collect()
        }
    };
    let senders: Vec<HostId> = match job.pattern {
        Pattern::AllToAll => members.clone(),
        Pattern::IntoLastRack => members.iter().copied().filter(|h| !receivers.contains(h)).collect(),
    };
    if senders.is_empty() {
        return Err(SubwaysError::param("nodes", "into-last-rack needs servers outside the last rack"));
    }
    let pairs: Vec<(HostId, HostId)> = senders
        .iter()
        .flat_map(|&s| receivers.iter().map(move |&d| (s, d)))
        .filter(|(s, d)| s != d)
        .flat_map(|p| std::iter::repeat_n(p, job.flows_per_pair))
        .collect();
    for (s, d) in pairs {
        if lb.period_s().is_some() && (net.ports(s).is_empty() || net.ports(d).is_empty()) {
            skipped += 1; // no live port: this pair cannot talk
            continue;
        }
        let id = flows.len() as u64;
        let route = lb.route(&net, s, d, &mut rng);
        let path = match &route {
            netheat_engine::Route::Explicit(p) => p.clone(),
            _ => Vec::new(),
        };
        sim.add_flow(FlowSpec::new(id, s, d, job.bytes_per_pair, 0.0, route))?;
        flows.push(Some(ActiveFlow { id, src: s, dst: d, path }));
    }
    if let Some(p) = lb.period_s() {
        sim.schedule_timer(p, 0)?;
    }
    let n = flows.len();
    let meter = WindowMeter::new(topo.links().len(), n);
    let mut runner = Runner {
        net: &net,
        lb,
        rng,
        flows,
        running: n,
        rebinds: 0,
        error: None,
        meter,
        last_tick: 0.0,
        first_detour_s: None,
    };
    let res = sim.run_with(&mut runner);
    if let Some(e) = runner.error {
        return Err(SubwaysError::Engine(e));
    }
    let stranded = skipped + res.flows.iter().filter(|f| !f.finished()).count();
    let completion_s = if stranded > 0 { f64::NAN } else { res.flows.iter().map(|f| f.finish_s).fold(0.0, f64::max) };
    Ok(ShuffleResult {
        completion_s,
        flows: n,
        rebinds: runner.rebinds,
        detours: runner.lb.detours(),
        events: res.stats.events,
        stranded,
        first_detour_s: runner.first_detour_s,
    })
}
