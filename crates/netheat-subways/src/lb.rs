//! Load balancing over Subways' redundant server-ToR links.
//!
//! A server with ports on several ToRs can send through any of them. Every
//! policy first prefers a *shortcut*: when source and destination share a
//! ToR, the flow crosses only that ToR (uniform choice among shared ToRs).
//! Otherwise it picks a source port (hence a source ToR), a destination port
//! and one of the fabric routes between the two ToRs.
//!
//! * `ecmp`: a static per-flow hash over the shortest paths, weighted by port
//!   speed (the engine's weighted ECMP; 2/7 and 5/7 for 10G + 25G ports);
//!   with a failed ToR, a static weighted choice among the live shortest paths.
//! * `adaptive` (Type 1LB/2LB): a per-loop controller samples link rates
//!   every `t_rebind` (10 ms) into an EWMA of utilization. New flows pick the
//!   source port with probability proportional to the remaining outbound
//!   capacity `B (1 - U)` of its ToR's uplinks, capped by the remaining
//!   capacity of the server-ToR link itself, and the destination port by the
//!   remaining inbound capacity likewise. Every `t_rebind` each running
//!   non-shortcut flow is re-drawn from the current split with probability
//!   `c` (aggressiveness, 0.5), so the split moves a fraction `c` of the way
//!   to the target each period.
//! * `detour` (Type 1D/2D): `adaptive` plus outbound detours. A ToR whose
//!   uplink utilization is above `hot_threshold` (60%) at two consecutive
//!   samples `t_detect` apart (a whole period, exactly when rates did not
//!   change in between) is hot for at least `t_duration` (100 ms). When every
//!   ToR of a server is hot, its running flows may leave through a *remote*
//!   ToR of a neighbouring rack, reached through at most
//!   `max_intermediate` (2) intermediate servers that have ports on both
//!   ToRs of each hop. Each remote ToR offers `detour_share` (60%) of its
//!   residual uplink capacity to at most one hotspot (the set of hot ToRs a
//!   server sees); a flow of the hotspot is detoured with probability
//!   `offered / (offered + own uplink capacity)` through a remote ToR chosen
//!   in proportion to its offer. Inbound detours are symmetric: when every
//!   ToR of a destination is hot inbound, flows to it may come down into a
//!   remote ToR of a neighbouring rack and reach it through intermediate
//!   servers (outbound detours are tried first).
//!
//! Policies implement [`LoadBalancer`] and are created by tag with
//! [`load_balancer`]; an unknown tag lists the known ones.

use std::collections::BTreeMap;

use netheat_core::{HostId, LinkId};
use netheat_engine::Route;
use netheat_topology::{Port, Topology};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::SubwaysError;

/// Registered load-balancing tags.
pub const POLICIES: &[&str] = &["adaptive", "detour", "ecmp"];

/// Parameters of the adaptive and detour policies (the paper's defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct LbParams {
    /// Controller period (and re-binding period), seconds.
    pub t_rebind_s: f64,
    /// Weight of the newest sample in the utilization EWMA, in (0, 1].
    pub ewma_weight: f64,
    /// Probability that a running flow is re-drawn each period.
    pub aggressiveness: f64,
    /// Utilization above which a ToR uplink is hot.
    pub hot_threshold: f64,
    /// A ToR stays hot at least this long once detected, seconds.
    pub t_duration_s: f64,
    /// Share of a remote ToR's residual uplink capacity it offers to detours.
    pub detour_share: f64,
    /// Most intermediate servers on a detour.
    pub max_intermediate: usize,
}

impl Default for LbParams {
    fn default() -> Self {
        Self {
            t_rebind_s: 0.01,
            ewma_weight: 0.5,
            aggressiveness: 0.5,
            hot_threshold: 0.6,
            t_duration_s: 0.1,
            detour_share: 0.6,
            max_intermediate: 2,
        }
    }
}

impl LbParams {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), SubwaysError> {
        let unit = |n: &str, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(SubwaysError::param(n, format!("{v} is outside (0, 1]")))
            }
        };
        if !(self.t_rebind_s.is_finite() && self.t_rebind_s > 0.0) {
            return Err(SubwaysError::param("t_rebind_s", format!("{} must be > 0", self.t_rebind_s)));
        }
        unit("ewma_weight", self.ewma_weight)?;
        unit("aggressiveness", self.aggressiveness)?;
        unit("hot_threshold", self.hot_threshold)?;
        unit("detour_share", self.detour_share)?;
        if self.t_duration_s.is_nan() || self.t_duration_s < 0.0 {
            return Err(SubwaysError::param("t_duration_s", "must be >= 0"));
        }
        Ok(())
    }
}

/// A running flow as a policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveFlow {
    /// Engine flow id.
    pub id: u64,
    /// Source host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// Links it uses now (empty when routed by the engine's ECMP).
    pub path: Vec<LinkId>,
}

/// A load-balancing policy (see the module docs).
pub trait LoadBalancer {
    /// Its tag.
    fn name(&self) -> &'static str;
    /// Controller period, seconds (`None`: static, no controller).
    fn period_s(&self) -> Option<f64>;
    /// The route of a new flow.
    fn route(&mut self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Route;
    /// One controller period: `rate(l)` is link `l`'s current rate (bits/s).
    /// Returns the flows to move, with their new links.
    fn on_period(
        &mut self,
        net: &Net<'_>,
        now: f64,
        rate: &dyn Fn(LinkId) -> f64,
        active: &[ActiveFlow],
        rng: &mut ChaCha8Rng,
    ) -> Vec<(u64, Vec<LinkId>)>;
    /// Flows moved onto a detour so far.
    fn detours(&self) -> u64 {
        0
    }
}

/// Creates the policy `tag` (one of [`POLICIES`]).
pub fn load_balancer(tag: &str, params: &LbParams) -> Result<Box<dyn LoadBalancer>, SubwaysError> {
    params.validate()?;
    match tag {
        "ecmp" => Ok(Box::new(Ecmp)),
        "adaptive" => Ok(Box::new(Adaptive::new(params.clone(), false))),
        "detour" => Ok(Box::new(Adaptive::new(params.clone(), true))),
        _ => Err(SubwaysError::UnknownPolicy { name: tag.to_string(), known: POLICIES.join(", ") }),
    }
}

/// The topology plus what the policies look up often.
pub struct Net<'a> {
    /// The datacenter.
    pub topo: &'a Topology,
    /// Uplink capacity of each ToR (up direction), bits/s.
    tor_up_bps: Vec<f64>,
    /// Downlink capacity into each ToR, bits/s.
    tor_down_bps: Vec<f64>,
    /// For ToR pairs sharing servers: those servers (in host order).
    bridges: BTreeMap<(u32, u32), Vec<HostId>>,
    /// ToR adjacency (ToRs sharing a server), sorted.
    neighbours: Vec<Vec<u32>>,
    /// A failed ToR: its ports and routes are never used.
    failed: Option<u32>,
}

impl<'a> Net<'a> {
    /// Precomputes capacities and the ToR graph of `topo`.
    pub fn new(topo: &'a Topology) -> Self {
        Self::with_failed_tor(topo, None)
    }

    /// Like [`Net::new`] with ToR `failed` down: policies route around it.
    pub fn with_failed_tor(topo: &'a Topology, failed: Option<u32>) -> Self {
        let links = topo.links();
        let cap = |v: &[LinkId]| v.iter().map(|l| links[*l as usize].capacity_bps).sum::<f64>();
        let tor_up_bps = topo.tors().iter().map(|t| cap(&t.up)).collect();
        let tor_down_bps = topo.tors().iter().map(|t| cap(&t.down)).collect();
        let mut bridges: BTreeMap<(u32, u32), Vec<HostId>> = BTreeMap::new();
        for (h, host) in topo.hosts().iter().enumerate() {
            let tors: Vec<u32> = topo.host_tors(h as HostId).into_iter().filter(|&t| Some(t) != failed).collect();
            for &a in &tors {
                for &b in &tors {
                    if a != b {
                        bridges.entry((a, b)).or_default().push(h as HostId);
                    }
                }
            }
            let _ = host;
        }
        let mut neighbours = vec![Vec::new(); topo.tors().len()];
        for &(a, b) in bridges.keys() {
            neighbours[a as usize].push(b);
        }
        let mut tor_up_bps: Vec<f64> = tor_up_bps;
        let mut tor_down_bps: Vec<f64> = tor_down_bps;
        if let Some(t) = failed {
            tor_up_bps[t as usize] = 0.0;
            tor_down_bps[t as usize] = 0.0;
        }
        Self { topo, tor_up_bps, tor_down_bps, bridges, neighbours, failed }
    }

    /// The live ports of host `h` (not on the failed ToR).
    pub fn ports(&self, h: HostId) -> Vec<Port> {
        self.topo.hosts()[h as usize].ports.iter().copied().filter(|p| Some(p.tor) != self.failed).collect()
    }

    /// The links of the direct path through ports `sp` and `dp` and fabric route `i`.
    pub fn direct(&self, sp: &Port, dp: &Port, i: usize) -> Vec<LinkId> {
        let mut out = vec![sp.up];
        self.topo.tor_route(sp.tor, dp.tor, i, &mut out);
        out.push(dp.down);
        out
    }

    /// The two links that cross from ToR `a` to ToR `b` through a server
    /// with ports on both (drawn uniformly, never one of `avoid`): `a` down
    /// to the server, the server up to `b`.
    fn bridge(&self, a: u32, b: u32, avoid: &[HostId], rng: &mut ChaCha8Rng) -> Option<[LinkId; 2]> {
        let cands: Vec<HostId> = self.bridges.get(&(a, b))?.iter().copied().filter(|m| !avoid.contains(m)).collect();
        if cands.is_empty() {
            return None;
        }
        let m = cands[rng.gen_range(0..cands.len())];
        let down = self.ports(m).iter().find(|p| p.tor == a)?.down;
        let up = self.ports(m).iter().find(|p| p.tor == b)?.up;
        Some([down, up])
    }

    /// Shortcut paths: every (source port, destination port) pair on a ToR
    /// both hosts have a port on.
    pub fn shortcuts(&self, src: HostId, dst: HostId) -> Vec<Vec<LinkId>> {
        let mut out = Vec::new();
        for sp in self.ports(src) {
            for dp in self.ports(dst).iter().filter(|d| d.tor == sp.tor) {
                out.push(vec![sp.up, dp.down]);
            }
        }
        out
    }
}

/// Static weighted ECMP: the engine hashes each flow onto one shortest path.
struct Ecmp;

impl LoadBalancer for Ecmp {
    fn name(&self) -> &'static str {
        "ecmp"
    }
    fn period_s(&self) -> Option<f64> {
        None
    }
    fn route(&mut self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Route {
        if net.failed.is_none() {
            return Route::Ecmp;
        }
        // After a ToR failure routing reconverges: a static choice among the
        // live shortest paths (shortcuts first), weighted by port speeds.
        let short = net.shortcuts(src, dst);
        if !short.is_empty() {
            return Route::Explicit(short[rng.gen_range(0..short.len())].clone());
        }
        let mut paths = Vec::new();
        let mut w = Vec::new();
        for sp in net.ports(src) {
            for dp in net.ports(dst) {
                let n = net.topo.tor_routes(sp.tor, dp.tor);
                for i in 0..n {
                    paths.push((sp, dp, i));
                    w.push(sp.speed_bps * dp.speed_bps / n as f64);
                }
            }
        }
        if paths.is_empty() {
            return Route::Ecmp; // no live port: the engine strands it
        }
        let (sp, dp, i) = paths[pick(&w, rng)];
        Route::Explicit(net.direct(&sp, &dp, i))
    }
    fn on_period(
        &mut self,
        _: &Net<'_>,
        _: f64,
        _: &dyn Fn(LinkId) -> f64,
        _: &[ActiveFlow],
        _: &mut ChaCha8Rng,
    ) -> Vec<(u64, Vec<LinkId>)> {
        Vec::new()
    }
}

/// Draws an index with probability proportional to `w` (uniform when all are 0).
fn pick(w: &[f64], rng: &mut ChaCha8Rng) -> usize {
    let total: f64 = w.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        return rng.gen_range(0..w.len());
    }
    let mut x = rng.gen::<f64>() * total;
    for (i, &v) in w.iter().enumerate() {
        if x < v {
            return i;
        }
        x -= v;
    }
    w.len() - 1
}

/// Detours of one hotspot: ToR chains to the remote ToRs, their offers
/// (bits/s), and the probability that one of its flows takes a detour.
type DetourPlan = (Vec<Vec<u32>>, Vec<f64>, f64);

/// The adaptive policy, optionally with detours.
struct Adaptive {
    p: LbParams,
    detour: bool,
    /// EWMA utilization per directed link (only server-ToR and ToR links are read).
    util: Vec<f64>,
    /// Instantaneous ToR uplink / downlink utilization at the previous period.
    prev: [Vec<f64>; 2],
    /// Hot until this time, per ToR, outbound ([0]) and inbound ([1]).
    hot_until: [Vec<f64>; 2],
    detours: u64,
}

impl Adaptive {
    fn new(p: LbParams, detour: bool) -> Self {
        Self {
            p,
            detour,
            util: Vec::new(),
            prev: [Vec::new(), Vec::new()],
            hot_until: [Vec::new(), Vec::new()],
            detours: 0,
        }
    }

    fn ensure(&mut self, net: &Net<'_>) {
        if self.util.is_empty() {
            self.util = vec![0.0; net.topo.links().len()];
            let n = net.topo.tors().len();
            self.prev = [vec![0.0; n], vec![0.0; n]];
            self.hot_until = [vec![f64::NEG_INFINITY; n], vec![f64::NEG_INFINITY; n]];
        }
    }

    fn tor_out_util(&self, net: &Net<'_>, t: u32) -> f64 {
        let links = net.topo.links();
        let tor = &net.topo.tors()[t as usize];
        let used: f64 = tor.up.iter().map(|&l| self.util[l as usize] * links[l as usize].capacity_bps).sum();
        used / net.tor_up_bps[t as usize].max(1.0)
    }

    fn tor_in_util(&self, net: &Net<'_>, t: u32) -> f64 {
        let links = net.topo.links();
        let tor = &net.topo.tors()[t as usize];
        let used: f64 = tor.down.iter().map(|&l| self.util[l as usize] * links[l as usize].capacity_bps).sum();
        used / net.tor_down_bps[t as usize].max(1.0)
    }

    /// An adaptive direct (or shortcut) path.
    fn draw(&self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Vec<LinkId> {
        let short = net.shortcuts(src, dst);
        if !short.is_empty() {
            return short[rng.gen_range(0..short.len())].clone();
        }
        let u = |l: LinkId| self.util.get(l as usize).copied().unwrap_or(0.0);
        let sps = net.ports(src);
        let dps = net.ports(dst);
        let ws: Vec<f64> = sps
            .iter()
            .map(|p| {
                let tor = net.tor_up_bps[p.tor as usize] * (1.0 - self.tor_out_util(net, p.tor)).max(0.0);
                (p.speed_bps * (1.0 - u(p.up)).max(0.0)).min(tor)
            })
            .collect();
        let wd: Vec<f64> = dps
            .iter()
            .map(|p| {
                let tor = net.tor_down_bps[p.tor as usize] * (1.0 - self.tor_in_util(net, p.tor)).max(0.0);
                (p.speed_bps * (1.0 - u(p.down)).max(0.0)).min(tor)
            })
            .collect();
        let sp = &sps[pick(&ws, rng)];
        let dp = &dps[pick(&wd, rng)];
        let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, dp.tor));
        net.direct(sp, dp, i)
    }

    /// A detour from `src` out through remote ToR `chain.last()`, the chain
    /// starting at one of `src`'s ToRs; then on to `dst`.
    fn detour_path(
        &self,
        net: &Net<'_>,
        src: HostId,
        dst: HostId,
        chain: &[u32],
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<LinkId>> {
        let sp = net.ports(src).into_iter().find(|p| p.tor == chain[0])?;
        let mut out = vec![sp.up];
        for w in chain.windows(2) {
            out.extend(net.bridge(w[0], w[1], &[src, dst], rng)?);
        }
        let remote = *chain.last()?;
        let dps = net.ports(dst);
        let dp = &dps[rng.gen_range(0..dps.len())];
        let i = rng.gen_range(0..net.topo.tor_routes(remote, dp.tor));
        net.topo.tor_route(remote, dp.tor, i, &mut out);
        out.push(dp.down);
        Some(out)
    }

    /// An inbound detour to `dst`: from `src` through the fabric down into
    /// remote ToR `chain.last()`, then back along the chain (through
    /// intermediate servers) to `chain[0]`, one of `dst`'s ToRs.
    fn inbound_path(
        &self,
        net: &Net<'_>,
        src: HostId,
        dst: HostId,
        chain: &[u32],
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<LinkId>> {
        let dp = net.ports(dst).into_iter().find(|p| p.tor == chain[0])?;
        let remote = *chain.last()?;
        let sps = net.ports(src);
        let sp = &sps[rng.gen_range(0..sps.len())];
        let mut out = vec![sp.up];
        let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, remote));
        net.topo.tor_route(sp.tor, remote, i, &mut out);
        for w in chain.windows(2).rev() {
            out.extend(net.bridge(w[1], w[0], &[src, dst], rng)?);
        }
        out.push(dp.down);
        Some(out)
    }

    /// Detour plans of the hotspots of `dir` (0 outbound: the sources'
    /// ToRs; 1 inbound: the destinations').
    fn plans(
        &self,
        net: &Net<'_>,
        now: f64,
        dir: usize,
        inst: &[f64],
        active: &[ActiveFlow],
    ) -> BTreeMap<Vec<u32>, DetourPlan> {
        let mut plans: BTreeMap<Vec<u32>, DetourPlan> = BTreeMap::new();
        let cap = if dir == 0 { &net.tor_up_bps } else { &net.tor_down_bps };
        let mut claimed: Vec<bool> = vec![false; net.topo.tors().len()];
        for f in active {
            let mut hot = net.topo.host_tors(if dir == 0 { f.src } else { f.dst });
            if hot.iter().any(|&t| self.hot_until[dir][t as usize] <= now) {
                continue;
            }
            hot.sort_unstable();
            if plans.contains_key(&hot) {
                continue;
            }
            let mut chains = Vec::new();
            let mut offers = Vec::new();
            for c in self.remotes(net, &hot, now, dir) {
                let r = *c.last().expect("non-empty") as usize;
                if claimed[r] {
                    continue; // no remote ToR serves two hotspots
                }
                claimed[r] = true;
                offers.push(self.p.detour_share * cap[r] * (1.0 - inst[r]).max(0.0));
                chains.push(c);
            }
            let offered: f64 = offers.iter().sum();
            let own: f64 = hot.iter().map(|&t| cap[t as usize]).sum();
            let prob = if offered > 0.0 { offered / (offered + own) } else { 0.0 };
            plans.insert(hot, (chains, offers, prob));
        }
        plans
    }

    /// Remote ToRs (with the ToR chain reaching each) within
    /// `max_intermediate` intermediate servers of the hotspot `hot`.
    fn remotes(&self, net: &Net<'_>, hot: &[u32], now: f64, dir: usize) -> Vec<Vec<u32>> {
        let mut seen: Vec<u32> = hot.to_vec();
        let mut frontier: Vec<Vec<u32>> = hot.iter().map(|&t| vec![t]).collect();
        let mut out = Vec::new();
        for _ in 0..self.p.max_intermediate {
            let mut next = Vec::new();
            for chain in &frontier {
                let last = *chain.last().expect("non-empty chain");
                for &n in &net.neighbours[last as usize] {
                    if seen.contains(&n) {
                        continue;
                    }
                    seen.push(n);
                    let mut c = chain.clone();
                    c.push(n);
                    if self.hot_until[dir][n as usize] > now {
                        next.push(c); // hot: only a way through to the next ToR
                    } else {
                        out.push(c); // the first non-hot ToR each way is the remote
                    }
                }
            }
            frontier = next;
        }
        out
    }
}

impl LoadBalancer for Adaptive {
    fn name(&self) -> &'static str {
        if self.detour {
            "detour"
        } else {
            "adaptive"
        }
    }

    fn period_s(&self) -> Option<f64> {
        Some(self.p.t_rebind_s)
    }

    fn route(&mut self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Route {
        self.ensure(net);
        Route::Explicit(self.draw(net, src, dst, rng))
    }

    fn detours(&self) -> u64 {
        self.detours
    }

    fn on_period(
        &mut self,
        net: &Net<'_>,
        now: f64,
        rate: &dyn Fn(LinkId) -> f64,
        active: &[ActiveFlow],
        rng: &mut ChaCha8Rng,
    ) -> Vec<(u64, Vec<LinkId>)> {
        self.ensure(net);
        let links = net.topo.links();
        let a = self.p.ewma_weight;
        for (l, u) in self.util.iter_mut().enumerate() {
            let c = links[l].capacity_bps;
            let inst = if c > 0.0 { rate(l as LinkId) / c } else { 1.0 };
            *u = a * inst + (1.0 - a) * *u;
        }
        // Hot detection on instantaneous ToR uplink (and downlink) utilization,
        // two samples a period apart.
        let ntor = net.topo.tors().len();
        let mut inst = [vec![0.0; ntor], vec![0.0; ntor]];
        for (t, tor) in net.topo.tors().iter().enumerate() {
            inst[0][t] = tor.up.iter().map(|&l| rate(l)).sum::<f64>() / net.tor_up_bps[t].max(1.0);
            inst[1][t] = tor.down.iter().map(|&l| rate(l)).sum::<f64>() / net.tor_down_bps[t].max(1.0);
            for (dir, sample) in inst.iter().enumerate() {
                if self.detour && sample[t] > self.p.hot_threshold && self.prev[dir][t] > self.p.hot_threshold {
                    self.hot_until[dir][t] = self.hot_until[dir][t].max(now + self.p.t_duration_s);
                }
            }
        }
        let (out_plans, in_plans) = if self.detour {
            (self.plans(net, now, 0, &inst[0], active), self.plans(net, now, 1, &inst[1], active))
        } else {
            (BTreeMap::new(), BTreeMap::new())
        };
        self.prev = inst;

        let mut moves = Vec::new();
        for f in active {
            if f.path.len() <= 2 {
                continue; // shortcut (or engine-routed): nothing better to do
            }
            if rng.gen::<f64>() >= self.p.aggressiveness {
                continue;
            }
            let mut src_tors = net.topo.host_tors(f.src);
            src_tors.sort_unstable();
            let mut dst_tors = net.topo.host_tors(f.dst);
            dst_tors.sort_unstable();
            // Outbound detours first; else inbound; else an adaptive direct path.
            let mut detour = None;
            if let Some((chains, offers, prob)) = out_plans.get(&src_tors).filter(|p| p.2 > 0.0) {
                if rng.gen::<f64>() < *prob {
                    let c = &chains[pick(offers, rng)];
                    detour = self.detour_path(net, f.src, f.dst, c, rng);
                }
            } else if let Some((chains, offers, prob)) = in_plans.get(&dst_tors).filter(|p| p.2 > 0.0) {
                if rng.gen::<f64>() < *prob {
                    let c = &chains[pick(offers, rng)];
                    detour = self.inbound_path(net, f.src, f.dst, c, rng);
                }
            }
            let path = match detour {
                Some(p) => {
                    self.detours += 1;
                    p
                }
                None => self.draw(net, f.src, f.dst, rng),
            };
            if path != f.path {
                moves.push((f.id, path));
            }
        }
        moves
    }
}
