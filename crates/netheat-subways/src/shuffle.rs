//! Shuffle jobs on contiguous servers, load-balanced by a Subways policy.
//!
//! A job is `nodes` consecutive servers starting at the first server of rack
//! `first_rack`; every server is both a mapper and a reducer and sends
//! `bytes_per_pair` to every other server of the job, all at time 0. The
//! job completes with its last flow. The policy routes each flow when it
//! starts and, for adaptive policies, re-binds running flows every period.
//!
//! With `failed_tor`, that ToR is down from time 0 (every link of it at
//! capacity 0): ECMP flows are re-routed by the engine, the other policies
//! route around it, and flows between servers left without a live port are
//! *stranded*: the job then never completes (`completion_s` is NaN) and
//! [`ShuffleResult::stranded`] counts them.

use netheat_core::{HostId, Routing};
use netheat_engine::{Controller, Ctx, EngineError, FlowRecord, FlowSpec, Network, SimConfig, Simulation};
use netheat_topology::Topology;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::lb::{load_balancer, ActiveFlow, LbParams, LoadBalancer, Net};
use crate::SubwaysError;

/// A shuffle job.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleJob {
    /// Rack of the first server.
    pub first_rack: u32,
    /// Servers in the job (consecutive host ids).
    pub nodes: usize,
    /// Bytes from each server to each other server.
    pub bytes_per_pair: f64,
    /// A ToR that is down for the whole job.
    pub failed_tor: Option<u32>,
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
}

impl Controller for Runner<'_, '_> {
    fn on_flow_complete(&mut self, _: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if let Some(slot) = self.flows.get_mut(flow.id as usize) {
            if slot.take().is_some() {
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
        let moves = {
            let rate = |l| ctx.link_rate_bps(l);
            self.lb.on_period(self.net, now, &rate, &active, &mut self.rng)
        };
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
/// [`crate::lb::POLICIES`]), seeded.
pub fn run_shuffle(
    topo: &Topology,
    job: &ShuffleJob,
    policy: &str,
    params: &LbParams,
    seed: u64,
) -> Result<ShuffleResult, SubwaysError> {
    let hosts = topo.hosts().len();
    let first = topo
        .racks()
        .get(job.first_rack as usize)
        .ok_or_else(|| SubwaysError::param("first_rack", format!("rack {} does not exist", job.first_rack)))?
        .first_host as usize;
    if job.nodes < 2 || first + job.nodes > hosts {
        return Err(SubwaysError::param(
            "nodes",
            format!("{} servers from host {first} do not fit in {hosts} hosts (need at least 2)", job.nodes),
        ));
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
    let members: Vec<HostId> = (first..first + job.nodes).map(|h| h as HostId).collect();
    for &s in &members {
        for &d in &members {
            if s == d {
                continue;
            }
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
    }
    if let Some(p) = lb.period_s() {
        sim.schedule_timer(p, 0)?;
    }
    let n = flows.len();
    let mut runner = Runner { net: &net, lb, rng, flows, running: n, rebinds: 0, error: None };
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
    })
}
