//! Load balancing over Subways' redundant server-ToR links.
//!
//! A server with ports on several ToRs can send through any of them. A path
//! picks a source port (hence a source ToR), a destination port and one of
//! the fabric routes between the two ToRs; when both ports sit on the same
//! ToR the flow crosses only that ToR (a *shortcut*, 2 links).
//!
//! * `subways-ecmp`: vanilla Type 1/2 ECMP of the Subways paper (CoNEXT'15 §4.2,
//!   §4.3). The server has one rule with `p` options, one per ToR: the
//!   source port is drawn per flow in proportion to port speed (2/7 and 5/7
//!   for 10G + 25G, §4.3). In Type 0 and Type 1 the chosen ToR delivers
//!   directly when the destination is attached to it, else the aggregation
//!   layer picks one of the destination's ToRs (its `p` options, by speed);
//!   in Type 2 the destination address (ToR) is drawn independently by the
//!   source, so a shortcut is taken only when both draws land on the same
//!   ToR. Shortcuts are therefore *not* always taken; a fabric route is
//!   drawn uniformly. With a failed ToR, the same rule over live ports.
//! * `adaptive` (Type 1LB/2LB, §5.2): a per-loop controller reads link
//!   counters every `t_rebind` (10 ms, §8.1) into an EWMA of utilization.
//!   New flows take a shortcut when one exists (uniformly), else pick the
//!   source port with probability proportional to the remaining outbound
//!   capacity `V = B (1 - U)` of its ToR's uplinks, and the destination
//!   port by the remaining inbound capacity `E = B (1 - D)` likewise (§5.2,
//!   "Initial flow placement"; the server-ToR link bounds only the
//!   re-binding split below). Every `t_rebind`
//!   each server re-binds all its running non-shortcut flows: with `u_i` its
//!   current share of traffic on ToR `i` (NIC counters), `U_i` ToR `i`'s
//!   uplink EWMA and `U_target = sum B_i U_i / sum B_i`, the target share is
//!   `t_i = c u_i U_target / U_i + (1 - c) u_i` (`c` = `aggressiveness`,
//!   0.5), each flow is re-bound to ToR `i` with probability
//!   `P[i] = t_i / sum t_j`, and `P[i]` is capped at `b_i / S` (`S` the
//!   server's sending rate, `b_i` its link speed) with the excess spread
//!   evenly over the other links. Destination ToRs are re-bound the same way
//!   on downlink utilizations (by the aggregation switches in Type 1, by the
//!   source in Type 2: the same rule either way).
//! * `detour` (Type 1D/2D, §6): `adaptive` plus detours. A ToR whose uplink
//!   (or downlink) utilization averaged over a whole `t_detect` window (the
//!   controller period) is above `hot_threshold` (60%) is hot for at least
//!   `t_duration` (100 ms). When every ToR of a server is hot, its flows
//!   (those running at a period, and those that start before the next one:
//!   the servers route along the detours they were notified of) may leave
//!   through a *remote* ToR of a neighbouring rack, reached
//!   through at most `max_intermediate` (2) intermediate servers that have
//!   ports on both ToRs of each hop. A detour never passes through another
//!   hot ToR or through a server of a hot rack (all of whose ToRs are hot,
//!   §6 "Detouring for groups of racks"); every non-hot ToR on the way is an
//!   egress point. Each remote ToR offers `detour_share` (60%) of its
//!   measured residual uplink capacity to at most one hotspot; a flow of the
//!   hotspot is detoured with probability `offered / (offered + own uplink
//!   capacity)` through a remote ToR chosen in proportion to its offer.
//!   Inbound detours are symmetric (outbound detours are tried first).
//!   *Groups of hot racks* (§6 "Detouring for groups of racks": more than
//!   `p` contiguous hot ToRs). (1) Only the racks at the edges of a group
//!   can detour: that follows from the rule above, as a detour never enters
//!   another hot ToR. With `p = 2` (every detour variant of the bundled
//!   experiments) these are exactly the paper's `floor(p/2)` leftmost and
//!   rightmost racks; with `p >= 3` the rack next to an edge can also reach
//!   a ToR outside the group through a server of the rack just outside it
//!   (which has ports on that ToR and on the group's first ToRs), so more
//!   than `floor(p/2)` racks may detour. (2) Fairness (`group_fairness`, on
//!   by default):
//!   an edge rack whose detour is active (its plan has a detour probability
//!   above 0 in this period) sends no direct traffic through its ToRs that a
//!   member of the group that cannot detour also has ports on; see
//!   [`LbParams::group_fairness`] for the precise rule.
//!
//! Policies implement [`LoadBalancer`] and are created by tag with
//! [`load_balancer`]; an unknown tag lists the known ones. ECMP over
//! shortest paths only (a shortcut is always taken when one exists) is not
//! a policy here: it is the flow engine's static hash (`Route::Ecmp`), a
//! scenario's `routing.policy = "ecmp"`. The `rate` passed to
//! [`LoadBalancer::on_period`] is each link's average rate over the period
//! just ended, as packet counters read every `t_rebind` would give (§8.1);
//! [`WindowMeter`] measures it from the flows' byte counters.

use std::collections::{BTreeMap, HashMap};

use netheat_core::{HostId, LinkId};
use netheat_engine::Route;
use netheat_topology::{Port, Topology, Wiring};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::SubwaysError;

/// Parameters of the adaptive and detour policies (the paper's defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct LbParams {
    /// Controller period, seconds: the re-binding period `T_rebind` and the
    /// hot-detection window `T_detect` (both 10 ms in §8.1).
    pub t_rebind_s: f64,
    /// Weight of the newest sample in the utilization EWMA, in (0, 1].
    pub ewma_weight: f64,
    /// The scaling factor `c` of the re-binding rule (§5.2: "c = 0.5"): how
    /// far each period moves a server's split toward the target.
    pub aggressiveness: f64,
    /// Utilization above which a ToR uplink is hot.
    pub hot_threshold: f64,
    /// A ToR stays hot at least this long once detected, seconds.
    pub t_duration_s: f64,
    /// Share of a remote ToR's residual uplink capacity it offers to detours.
    pub detour_share: f64,
    /// Most intermediate servers on a detour.
    pub max_intermediate: usize,
    /// The fairness modification for groups of hot racks (Subways §6,
    /// "Detouring for groups of racks", second modification; on by
    /// default, `false` gives the detours without it). In one direction
    /// (outbound: sources' ToR uplinks; inbound: destinations' ToR
    /// downlinks), per controller period:
    ///
    /// * a *member* is a hot rack (all its ToRs hot) with a running
    ///   non-shortcut flow in that direction; members sharing a ToR form a
    ///   group of more than `p` contiguous hot ToRs (a rack is the set of
    ///   servers on the same ToRs: in Type 1/2, rack `k` on loop positions
    ///   `(k + j) mod loop`, `j < p`);
    /// * an *edge* is a member whose detour is active (detour probability
    ///   above 0 this period); the other members cannot detour and their
    ///   ToRs are *protected*;
    /// * an edge's direct traffic (new flows and re-bound flows) may use only
    ///   its ToRs that are not protected: its share through protected ToRs is
    ///   0 while its detour is active, and the detour probability uses the
    ///   capacity of those ToRs alone as its own capacity,
    ///   `offered / (offered + own allowed)`, so each of its flows still gets
    ///   an equal share of what it may use (§6: "an equal share of the
    ///   available capacity").
    ///
    /// Reading of the paper's "directly connected ToRs that other members of
    /// the group could use": only members that cannot detour count. A ToR
    /// shared by two edges only (the middle ToR of a 2-rack group with
    /// `p = 2`) stays in use by both: forbidding it to both would idle it
    /// and lower every member's throughput, the opposite of the stated aim
    /// (a more even division, a better tail). With `p = 2` the left edge of a
    /// group keeps its leftmost ToR (where its detours start) and gives its
    /// other ToR to its neighbour in the group. Shortcuts (both servers on
    /// one ToR) are exempt: they use no ToR uplink or downlink, the capacity
    /// the detour scheduler divides, and §5.2 always prefers them. If an
    /// edge has no unprotected ToR (possible when `p >= 3`), it detours every
    /// flow it can and a flow without a detour falls back to the plain split.
    /// No parameter is involved.
    pub group_fairness: bool,
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
            group_fairness: true,
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
    /// Controller period, seconds (`None`, the default: static, no
    /// controller).
    fn period_s(&self) -> Option<f64> {
        None
    }
    /// The route of a new flow.
    fn route(&mut self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Route;
    /// One controller period: `rate(l)` is link `l`'s current rate (bits/s).
    /// Returns the flows to move, with their new links (the default, for
    /// static policies: none).
    fn on_period(
        &mut self,
        _net: &Net<'_>,
        _now: f64,
        _rate: &dyn Fn(LinkId) -> f64,
        _active: &[ActiveFlow],
        _rng: &mut ChaCha8Rng,
    ) -> Vec<(u64, Vec<LinkId>)> {
        Vec::new()
    }
    /// Flows sent or moved onto a detour so far.
    fn detours(&self) -> u64 {
        0
    }
}

/// Bytes carried by each link over the current controller period, from the
/// flows' byte counters: what [`LoadBalancer::on_period`] reads as each
/// link's rate (exact in the fluid engine, where paths change only at
/// period boundaries).
#[derive(Debug, Clone, Default)]
pub struct WindowMeter {
    /// Bytes per link since the period started.
    bytes: Vec<f64>,
    /// Byte counter of each flow at its last record.
    last: HashMap<u64, f64>,
}

impl WindowMeter {
    /// A meter over `links` links.
    pub fn new(links: usize) -> Self {
        Self { bytes: vec![0.0; links], last: HashMap::new() }
    }

    /// Flow `id` on `path` has sent `sent` bytes in total so far: the
    /// bytes since its last record count on every link of `path`.
    pub fn record(&mut self, id: u64, path: &[LinkId], sent: f64) {
        let last = self.last.entry(id).or_insert(0.0);
        let d = (sent - *last).max(0.0);
        *last = sent;
        for &l in path {
            if let Some(b) = self.bytes.get_mut(l as usize) {
                *b += d;
            }
        }
    }

    /// Flow `id` finished with `bytes` in total on `path`: records its last
    /// bytes and forgets it.
    pub fn finish(&mut self, id: u64, path: &[LinkId], bytes: f64) {
        self.record(id, path, bytes);
        self.last.remove(&id);
    }

    /// Average rate (bits/s) of each link over a period of `period_s`,
    /// then starts a new period.
    pub fn close(&mut self, period_s: f64) -> Vec<f64> {
        let out = self.bytes.iter().map(|b| b * 8.0 / period_s).collect();
        self.bytes.iter_mut().for_each(|b| *b = 0.0);
        out
    }
}

/// Creates the policy `tag` (one of [`POLICIES`]).
pub fn load_balancer(tag: &str, params: &LbParams) -> Result<Box<dyn LoadBalancer>, SubwaysError> {
    params.validate()?;
    build(tag, params).ok_or_else(|| SubwaysError::UnknownPolicy { name: tag.to_string(), known: POLICIES.join(", ") })
}

netheat_core::registry! {
    /// Registered load-balancing tags.
    pub const POLICIES;
    /// The policy of a tag (`None`: unknown).
    fn build(params: &LbParams) -> Box<dyn LoadBalancer> {
        "adaptive" => Box::new(Adaptive::new(params.clone(), false)),
        "detour" => Box::new(Adaptive::new(params.clone(), true)),
        "subways-ecmp" => Box::new(Ecmp),
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
    /// Failed ToRs, sorted: their ports and routes are never used.
    failed: Vec<u32>,
}

impl<'a> Net<'a> {
    /// Precomputes capacities and the ToR graph of `topo`.
    pub fn new(topo: &'a Topology) -> Self {
        Self::with_failed_tors(topo, &[])
    }

    /// Like [`Net::new`] with the ToRs `failed` down: policies route around
    /// them.
    pub fn with_failed_tors(topo: &'a Topology, failed: &[u32]) -> Self {
        let mut failed = failed.to_vec();
        failed.sort_unstable();
        failed.dedup();
        let links = topo.links();
        let cap = |v: &[LinkId]| v.iter().map(|l| links[*l as usize].capacity_bps).sum::<f64>();
        let tor_up_bps = topo.tors().iter().map(|t| cap(&t.up)).collect();
        let tor_down_bps = topo.tors().iter().map(|t| cap(&t.down)).collect();
        let mut bridges: BTreeMap<(u32, u32), Vec<HostId>> = BTreeMap::new();
        for (h, host) in topo.hosts().iter().enumerate() {
            let tors: Vec<u32> = topo.host_tors(h as HostId).into_iter().filter(|t| !failed.contains(t)).collect();
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
        for &t in &failed {
            tor_up_bps[t as usize] = 0.0;
            tor_down_bps[t as usize] = 0.0;
        }
        Self { topo, tor_up_bps, tor_down_bps, bridges, neighbours, failed }
    }

    /// The live ports of host `h` (not on a failed ToR).
    pub fn ports(&self, h: HostId) -> Vec<Port> {
        self.topo.hosts()[h as usize].ports.iter().copied().filter(|p| !self.failed.contains(&p.tor)).collect()
    }

    /// The failed ToRs, sorted.
    pub fn failed_tors(&self) -> &[u32] {
        &self.failed
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

/// Vanilla Subways ECMP (§4.2 Type 0/1, §4.3 Type 2): see the module docs.
struct Ecmp;

/// The links of a vanilla ECMP path from `src` to `dst`, or `None` when one
/// of them has no live port.
pub fn vanilla_ecmp_path(net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Option<Vec<LinkId>> {
    let sps = net.ports(src);
    let dps = net.ports(dst);
    if sps.is_empty() || dps.is_empty() {
        return None;
    }
    let speeds = |v: &[Port]| v.iter().map(|p| p.speed_bps).collect::<Vec<f64>>();
    // The server's one rule with p options, one per ToR (weighted by speed, §4.3).
    let sp = sps[pick(&speeds(&sps), rng)];
    let type2 = net.topo.subways().is_some_and(|w| w.wiring == Wiring::Type2);
    // Type 0/1: the chosen ToR delivers locally when the destination is
    // attached to it (its own servers); Type 2: the source picks one of the
    // destination's p addresses independently (§4.3), so only a matching
    // draw stays on one ToR.
    let local: Vec<Port> = if type2 { Vec::new() } else { dps.iter().copied().filter(|d| d.tor == sp.tor).collect() };
    let dp = if local.is_empty() { dps[pick(&speeds(&dps), rng)] } else { local[pick(&speeds(&local), rng)] };
    if dp.tor == sp.tor {
        return Some(vec![sp.up, dp.down]);
    }
    let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, dp.tor));
    Some(net.direct(&sp, &dp, i))
}

impl LoadBalancer for Ecmp {
    fn name(&self) -> &'static str {
        "subways-ecmp"
    }
    fn route(&mut self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Route {
        match vanilla_ecmp_path(net, src, dst, rng) {
            Some(p) => Route::Explicit(p),
            None => Route::Ecmp, // no live port: the engine strands it
        }
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

/// Edge racks of groups restricted by [`LbParams::group_fairness`]: each
/// one's (sorted) ToRs and the ToRs its direct traffic may use.
type FairMap = BTreeMap<Vec<u32>, Vec<u32>>;

/// The sorted ToRs of host `h` (a rack's key in the detour plans).
fn rack_key(net: &Net<'_>, h: HostId) -> Vec<u32> {
    let mut tors = net.topo.host_tors(h);
    tors.sort_unstable();
    tors
}

/// `w` with the entries of `ports` not on an `allowed` ToR set to 0; when
/// nothing is left, the allowed ports weighted by speed; unchanged when no
/// port is allowed.
fn mask_ports(w: &[f64], ports: &[Port], allowed: &[u32]) -> Vec<f64> {
    let ok: Vec<bool> = ports.iter().map(|p| allowed.contains(&p.tor)).collect();
    if !ok.contains(&true) {
        return w.to_vec();
    }
    let masked: Vec<f64> = w.iter().zip(&ok).map(|(&x, &o)| if o { x } else { 0.0 }).collect();
    if masked.iter().sum::<f64>() > 0.0 {
        return masked;
    }
    ports.iter().zip(&ok).map(|(p, &o)| if o { p.speed_bps } else { 0.0 }).collect()
}

/// The adaptive policy, optionally with detours.
struct Adaptive {
    p: LbParams,
    detour: bool,
    /// EWMA utilization per directed link (only server-ToR and ToR links are read).
    util: Vec<f64>,
    /// Hot until this time, per ToR, outbound ([0]) and inbound ([1]).
    hot_until: [Vec<f64>; 2],
    detours: u64,
    /// Group fairness of the last period, outbound ([0]) and inbound ([1]).
    fair: [FairMap; 2],
    /// Detour plans of the last period, outbound ([0]) and inbound ([1]),
    /// keyed by the hot rack's sorted ToRs: what the scheduler notified the
    /// hot racks' servers of (§6: "notifications continue to arrive every
    /// Tdetect ms until the congestion subsides"), used for running flows at
    /// the period and for new flows until the next one.
    notified: [BTreeMap<Vec<u32>, DetourPlan>; 2],
    /// Servers that must not relay detours (hot racks), per direction, as of
    /// the last period.
    avoid: [Vec<HostId>; 2],
}

impl Adaptive {
    fn new(p: LbParams, detour: bool) -> Self {
        Self {
            p,
            detour,
            util: Vec::new(),
            hot_until: [Vec::new(), Vec::new()],
            detours: 0,
            fair: [FairMap::new(), FairMap::new()],
            notified: [BTreeMap::new(), BTreeMap::new()],
            avoid: [Vec::new(), Vec::new()],
        }
    }

    fn ensure(&mut self, net: &Net<'_>) {
        if self.util.is_empty() {
            self.util = vec![0.0; net.topo.links().len()];
            let n = net.topo.tors().len();
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
        let sps = net.ports(src);
        let dps = net.ports(dst);
        // §5.1-5.2: a new flow's ToR is drawn by the ToR's remaining
        // capacity alone, V = B (1 - U) out of the source and E = B (1 - D)
        // into the destination; the server-ToR link bounds only the
        // re-binding split (`rebind_split`).
        let ws: Vec<f64> = sps
            .iter()
            .map(|p| net.tor_up_bps[p.tor as usize] * (1.0 - self.tor_out_util(net, p.tor)).max(0.0))
            .collect();
        let wd: Vec<f64> = dps
            .iter()
            .map(|p| net.tor_down_bps[p.tor as usize] * (1.0 - self.tor_in_util(net, p.tor)).max(0.0))
            .collect();
        // Group fairness: an edge rack's new flows avoid the protected ToRs.
        let ws = match self.fair[0].get(&rack_key(net, src)) {
            Some(allowed) => mask_ports(&ws, &sps, allowed),
            None => ws,
        };
        let wd = match self.fair[1].get(&rack_key(net, dst)) {
            Some(allowed) => mask_ports(&wd, &dps, allowed),
            None => wd,
        };
        let sp = &sps[pick(&ws, rng)];
        let dp = &dps[pick(&wd, rng)];
        let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, dp.tor));
        net.direct(sp, dp, i)
    }

    /// A port of host `h` drawn uniformly for the far end of a detour
    /// (`dir` 0: `h` sends; 1: `h` receives), only among its allowed ports
    /// when its rack is a restricted edge in `dir` (group fairness).
    fn fair_port(&self, net: &Net<'_>, dir: usize, h: HostId, ports: &[Port], rng: &mut ChaCha8Rng) -> usize {
        match self.fair[dir].get(&rack_key(net, h)) {
            Some(allowed) if ports.iter().any(|p| allowed.contains(&p.tor)) => {
                pick(&mask_ports(&vec![1.0; ports.len()], ports, allowed), rng)
            }
            _ => rng.gen_range(0..ports.len()),
        }
    }

    /// A detour from `src` out through remote ToR `chain.last()`, the chain
    /// starting at one of `src`'s ToRs; then on to `dst`.
    fn detour_path(
        &self,
        net: &Net<'_>,
        src: HostId,
        dst: HostId,
        chain: &[u32],
        avoid: &[HostId],
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<LinkId>> {
        let sp = net.ports(src).into_iter().find(|p| p.tor == chain[0])?;
        let mut out = vec![sp.up];
        for w in chain.windows(2) {
            out.extend(net.bridge(w[0], w[1], avoid, rng)?);
        }
        let remote = *chain.last()?;
        let dps = net.ports(dst);
        let dp = &dps[self.fair_port(net, 1, dst, &dps, rng)];
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
        avoid: &[HostId],
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<LinkId>> {
        let dp = net.ports(dst).into_iter().find(|p| p.tor == chain[0])?;
        let remote = *chain.last()?;
        let sps = net.ports(src);
        let sp = &sps[self.fair_port(net, 0, src, &sps, rng)];
        let mut out = vec![sp.up];
        let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, remote));
        net.topo.tor_route(sp.tor, remote, i, &mut out);
        for w in chain.windows(2).rev() {
            out.extend(net.bridge(w[1], w[0], avoid, rng)?);
        }
        out.push(dp.down);
        Some(out)
    }

    /// A detour for a flow from `src` to `dst` under the last period's
    /// plans: when `src`'s rack has an outbound plan, with the plan's
    /// probability a path out through one of its remote ToRs (chosen in
    /// proportion to their offers); else likewise inbound when `dst`'s rack
    /// has one; `None` when the flow goes direct.
    fn planned_detour(&self, net: &Net<'_>, src: HostId, dst: HostId, rng: &mut ChaCha8Rng) -> Option<Vec<LinkId>> {
        if let Some((chains, offers, prob)) = self.notified[0].get(&rack_key(net, src)).filter(|p| p.2 > 0.0) {
            if rng.gen::<f64>() < *prob {
                let c = &chains[pick(offers, rng)];
                let mut av = self.avoid[0].clone();
                av.extend([src, dst]);
                return self.detour_path(net, src, dst, c, &av, rng);
            }
        } else if let Some((chains, offers, prob)) = self.notified[1].get(&rack_key(net, dst)).filter(|p| p.2 > 0.0) {
            if rng.gen::<f64>() < *prob {
                let c = &chains[pick(offers, rng)];
                let mut av = self.avoid[1].clone();
                av.extend([src, dst]);
                return self.inbound_path(net, src, dst, c, &av, rng);
            }
        }
        None
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
    /// `max_intermediate` intermediate servers of the hotspot `hot`. Chains
    /// never enter a hot ToR (§6: detours must not pass through other loaded
    /// racks); every non-hot ToR reached is an egress point and may feed the
    /// next one.
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
                    if self.hot_until[dir][n as usize] > now {
                        continue; // another hot ToR: never a way through
                    }
                    let mut c = chain.clone();
                    c.push(n);
                    out.push(c.clone());
                    next.push(c);
                }
            }
            frontier = next;
        }
        out
    }

    /// Servers that must not relay detours at `now`: those of a hot rack
    /// (every ToR of theirs hot in `dir`).
    fn hot_servers(&self, net: &Net<'_>, now: f64, dir: usize) -> Vec<HostId> {
        (0..net.topo.hosts().len() as HostId)
            .filter(|&h| {
                let tors = net.topo.host_tors(h);
                !tors.is_empty() && tors.iter().all(|&t| self.hot_until[dir][t as usize] > now)
            })
            .collect()
    }

    /// The fairness modification for groups of hot racks in `dir` (see
    /// [`LbParams::group_fairness`], Subways §6 "Detouring for groups of
    /// racks"): the edges' allowed ToRs; lowers the `own` capacity in their
    /// plans' detour probability to those ToRs'.
    fn group_fairness(
        net: &Net<'_>,
        dir: usize,
        plans: &mut BTreeMap<Vec<u32>, DetourPlan>,
        active: &[ActiveFlow],
    ) -> FairMap {
        // Members: hot racks (a plan exists only for those) with a running
        // flow that uses ToR uplinks (downlinks) in `dir`.
        let mut members: Vec<Vec<u32>> = Vec::new();
        for f in active.iter().filter(|f| f.path.len() > 2) {
            let key = rack_key(net, if dir == 0 { f.src } else { f.dst });
            if plans.contains_key(&key) && !members.contains(&key) {
                members.push(key);
            }
        }
        // ToRs of members that cannot detour now.
        let mut protected: Vec<u32> = Vec::new();
        for m in members.iter().filter(|m| plans[*m].2 <= 0.0) {
            protected.extend(m.iter().copied());
        }
        let cap = if dir == 0 { &net.tor_up_bps } else { &net.tor_down_bps };
        let mut fair = FairMap::new();
        for m in &members {
            let plan = plans.get_mut(m).expect("a member has a plan");
            if plan.2 <= 0.0 || !m.iter().any(|t| protected.contains(t)) {
                continue; // not an edge, or alone: unchanged
            }
            let allowed: Vec<u32> = m.iter().copied().filter(|t| !protected.contains(t)).collect();
            let offered: f64 = plan.1.iter().sum();
            let own: f64 = allowed.iter().map(|&t| cap[t as usize]).sum();
            plan.2 = offered / (offered + own);
            fair.insert(m.clone(), allowed);
        }
        fair
    }

    /// Server `h`'s re-binding split over `ports` (`split`, §5.2), with the
    /// ports on protected ToRs given share 0 when `h`'s rack is an edge in
    /// `fair` (the rest renormalized; by port speed when the server measured
    /// nothing on its allowed ports).
    fn fair_split(
        fair: &FairMap,
        net: &Net<'_>,
        h: HostId,
        ports: Vec<Port>,
        split: Option<Vec<f64>>,
    ) -> Option<Split> {
        let Some(allowed) = fair.get(&rack_key(net, h)) else {
            return split.map(|s| Split::new(ports, s));
        };
        let w = mask_ports(&split.unwrap_or_else(|| vec![0.0; ports.len()]), &ports, allowed);
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return None; // no allowed port: the plain split's fallback
        }
        Some(Split::new(ports, w.iter().map(|x| x / total).collect()))
    }
}

/// The re-binding rule of the Subways paper (§5.2, "Subsequent load
/// balancing") for one server and direction. `ports` are its live ports,
/// `port_rate` the rate it measured on each over the last period,
/// `tor_util` the EWMA utilization `U_i` of each port's ToR (uplinks
/// outbound, downlinks inbound) and `tor_cap` that ToR's capacity `B_i` in
/// the same direction. With `u_i = port_rate_i / sum`, `U_target = sum B_i
/// U_i / sum B_i`, the target share is `t_i = c u_i U_target / U_i + (1 - c)
/// u_i` and `P[i] = t_i / sum t_j`; `P[i]` is capped at `b_i / S` (`S` the
/// total measured rate, `b_i` the port speed) with the excess spread evenly
/// over the uncapped ports. A ToR measured at 0 while the server uses it is
/// taken as 1e-9 utilized (the formula's limit: it attracts all it can, up
/// to the cap). `None` when the server sent nothing.
pub fn rebind_split(c: f64, ports: &[Port], port_rate: &[f64], tor_util: &[f64], tor_cap: &[f64]) -> Option<Vec<f64>> {
    let total: f64 = port_rate.iter().sum();
    if ports.is_empty() || total <= 0.0 || !total.is_finite() {
        return None;
    }
    let bsum: f64 = tor_cap.iter().sum();
    if bsum <= 0.0 {
        return None;
    }
    let target = tor_cap.iter().zip(tor_util).map(|(b, u)| b * u).sum::<f64>() / bsum;
    let t: Vec<f64> = port_rate
        .iter()
        .zip(tor_util)
        .map(|(&r, &u)| {
            let ui = r / total;
            c * ui * target / u.max(1e-9) + (1.0 - c) * ui
        })
        .collect();
    let tsum: f64 = t.iter().sum();
    if tsum <= 0.0 || !tsum.is_finite() {
        return None;
    }
    let mut prob: Vec<f64> = t.iter().map(|x| x / tsum).collect();
    // Cap by the server-ToR link (P[i] S <= b_i); spread the excess evenly.
    let mut capped = vec![false; prob.len()];
    for _ in 0..prob.len() {
        let mut excess = 0.0;
        for (i, p) in prob.iter_mut().enumerate() {
            let cap = ports[i].speed_bps / total;
            if !capped[i] && *p > cap {
                excess += *p - cap;
                *p = cap;
                capped[i] = true;
            }
        }
        let free = capped.iter().filter(|c| !**c).count();
        if excess <= 0.0 || free == 0 {
            break;
        }
        for (i, p) in prob.iter_mut().enumerate() {
            if !capped[i] {
                *p += excess / free as f64;
            }
        }
    }
    Some(prob)
}

/// One server's re-binding split: its live ports, the probability `P[i]`
/// of §5.2 for each, and how many of its running non-shortcut flows sit on
/// each now. Each flow ends on port `i` with probability `P[i]` (as when
/// every flow is redrawn), moving as few flows as that allows: a flow on
/// port `i` stays with probability `min(1, P[i] / c_i)` (`c_i` the share
/// of the flows on `i`), otherwise it moves to a port `j` with probability
/// proportional to `P[j] - c_j > 0`.
struct Split {
    ports: Vec<Port>,
    prob: Vec<f64>,
    on: Vec<f64>,
}

impl Split {
    fn new(ports: Vec<Port>, prob: Vec<f64>) -> Self {
        let on = vec![0.0; ports.len()];
        Self { ports, prob, on }
    }

    fn count(&mut self, is: impl Fn(&Port) -> bool) {
        if let Some(i) = self.ports.iter().position(is) {
            self.on[i] += 1.0;
        }
    }

    fn rebind(&self, cur: usize, rng: &mut ChaCha8Rng) -> usize {
        let n: f64 = self.on.iter().sum();
        if n <= 0.0 {
            return pick(&self.prob, rng);
        }
        let c = |i: usize| self.on[i] / n;
        if c(cur) <= 0.0 || rng.gen::<f64>() < (self.prob[cur] / c(cur)).min(1.0) {
            return cur;
        }
        let deficit: Vec<f64> = (0..self.prob.len()).map(|j| (self.prob[j] - c(j)).max(0.0)).collect();
        if deficit.iter().sum::<f64>() <= 0.0 {
            return cur;
        }
        pick(&deficit, rng)
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
        // §6: the servers of a hot rack source-route along the detour paths
        // the scheduler allocated them, new flows as well as running ones
        // (a flow with a shortcut keeps it, as at the periods).
        if self.detour && net.shortcuts(src, dst).is_empty() {
            if let Some(p) = self.planned_detour(net, src, dst, rng) {
                self.detours += 1;
                return Route::Explicit(p);
            }
        }
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
        // Hot detection (§6 "When to detour"): ToR uplink (downlink)
        // utilization averaged over the whole window just ended (`rate` is
        // the window average) above the threshold.
        let ntor = net.topo.tors().len();
        let mut win = [vec![0.0; ntor], vec![0.0; ntor]];
        for (t, tor) in net.topo.tors().iter().enumerate() {
            // (At most 1: a full link can read a hair above from rounding.)
            win[0][t] = (tor.up.iter().map(|&l| rate(l)).sum::<f64>() / net.tor_up_bps[t].max(1.0)).min(1.0);
            win[1][t] = (tor.down.iter().map(|&l| rate(l)).sum::<f64>() / net.tor_down_bps[t].max(1.0)).min(1.0);
            for (dir, sample) in win.iter().enumerate() {
                if self.detour && sample[t] > self.p.hot_threshold {
                    self.hot_until[dir][t] = self.hot_until[dir][t].max(now + self.p.t_duration_s);
                }
            }
        }
        let (mut out_plans, mut in_plans) = if self.detour {
            (self.plans(net, now, 0, &win[0], active), self.plans(net, now, 1, &win[1], active))
        } else {
            (BTreeMap::new(), BTreeMap::new())
        };
        self.fair = if self.detour && self.p.group_fairness {
            [Self::group_fairness(net, 0, &mut out_plans, active), Self::group_fairness(net, 1, &mut in_plans, active)]
        } else {
            [FairMap::new(), FairMap::new()]
        };
        self.notified = [out_plans, in_plans];
        self.avoid = [
            if self.detour { self.hot_servers(net, now, 0) } else { Vec::new() },
            if self.detour { self.hot_servers(net, now, 1) } else { Vec::new() },
        ];

        // Re-binding splits (§5.2), per source (outbound) and destination
        // (inbound) server of a running non-shortcut flow, with the share of
        // that server's flows now on each port.
        let mut out_split: BTreeMap<HostId, Option<Split>> = BTreeMap::new();
        let mut in_split: BTreeMap<HostId, Option<Split>> = BTreeMap::new();
        for f in active.iter().filter(|f| f.path.len() > 2) {
            out_split.entry(f.src).or_insert_with(|| {
                let ports = net.ports(f.src);
                let r: Vec<f64> = ports.iter().map(|p| rate(p.up)).collect();
                let u: Vec<f64> = ports.iter().map(|p| self.tor_out_util(net, p.tor)).collect();
                let b: Vec<f64> = ports.iter().map(|p| net.tor_up_bps[p.tor as usize]).collect();
                let split = rebind_split(self.p.aggressiveness, &ports, &r, &u, &b);
                Self::fair_split(&self.fair[0], net, f.src, ports, split)
            });
            in_split.entry(f.dst).or_insert_with(|| {
                let ports = net.ports(f.dst);
                let r: Vec<f64> = ports.iter().map(|p| rate(p.down)).collect();
                let u: Vec<f64> = ports.iter().map(|p| self.tor_in_util(net, p.tor)).collect();
                let b: Vec<f64> = ports.iter().map(|p| net.tor_down_bps[p.tor as usize]).collect();
                let split = rebind_split(self.p.aggressiveness, &ports, &r, &u, &b);
                Self::fair_split(&self.fair[1], net, f.dst, ports, split)
            });
        }
        for f in active.iter().filter(|f| f.path.len() > 2) {
            if let Some(Some(sp)) = out_split.get_mut(&f.src) {
                sp.count(|p| p.up == f.path[0]);
            }
            if let Some(Some(sp)) = in_split.get_mut(&f.dst) {
                sp.count(|p| Some(&p.down) == f.path.last());
            }
        }

        let mut moves = Vec::new();
        for f in active {
            if f.path.len() <= 2 {
                continue; // shortcut (or engine-routed): nothing better to do
            }
            // Outbound detours first; else inbound; else a re-bound direct path.
            let path = match self.planned_detour(net, f.src, f.dst, rng) {
                Some(p) => {
                    self.detours += 1;
                    p
                }
                None => {
                    let sps = net.ports(f.src);
                    let dps = net.ports(f.dst);
                    let cur_s = sps.iter().position(|p| p.up == f.path[0]);
                    let cur_d = dps.iter().position(|p| Some(&p.down) == f.path.last());
                    let si = match (out_split.get(&f.src), cur_s) {
                        (Some(Some(sp)), Some(c)) => sp.rebind(c, rng),
                        (_, Some(c)) => c,
                        _ => rng.gen_range(0..sps.len()),
                    };
                    let di = match (in_split.get(&f.dst), cur_d) {
                        (Some(Some(sp)), Some(c)) => sp.rebind(c, rng),
                        (_, Some(c)) => c,
                        _ => rng.gen_range(0..dps.len()),
                    };
                    let (sp, dp) = (sps[si], dps[di]);
                    let mut fabric = Vec::new();
                    net.topo.tor_route(sp.tor, dp.tor, 0, &mut fabric);
                    let direct_len = 2 + fabric.len();
                    if Some(si) == cur_s && Some(di) == cur_d && f.path.len() == direct_len {
                        f.path.clone() // same ports, already direct: stays
                    } else if sp.tor == dp.tor {
                        vec![sp.up, dp.down]
                    } else {
                        let i = rng.gen_range(0..net.topo.tor_routes(sp.tor, dp.tor));
                        net.direct(&sp, &dp, i)
                    }
                }
            };
            if path != f.path {
                moves.push((f.id, path));
            }
        }
        moves
    }
}
