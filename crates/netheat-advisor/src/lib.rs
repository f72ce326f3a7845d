//! Placement decisions for live clusters, with the simulator's own code.
//!
//! An [`Advisor`] holds a datacenter (the same file `netheat topo` reads)
//! and the latest telemetry snapshot (a measured rate per directed link,
//! from Prometheus or a `links` table), and answers the decisions the
//! simulator takes, on that snapshot:
//!
//! * **task placement** ([`Advisor::place_task`]): the hotspot paper's UTP
//!   (§5.1): candidates ranked lexicographically by the scheduler's
//!   objectives and, lowest, the projected utilization of their ToR, by
//!   [`netheat_sched::rank_hosts`], the function the scenario layer's
//!   `[placement]` calls on the engine's live rates;
//! * **replica placement** ([`Advisor::place_replicas`]): Sinbad
//!   (SIGCOMM'13 §4: EWMA of reported link loads, hysteresis between
//!   reports, racks then hosts by expected capacity, fault domains and
//!   storage balance first) or CCP (the hotspot paper §5.2: racks by uplink
//!   class), the [`netheat_storage::ReplicaPlacement`] objects the
//!   scenario layer's `[storage]` uses, fed the same reports;
//! * **migration** ([`Advisor::migrate`]): the fewest latency-tolerant
//!   tasks with the largest rates that bring a hot ToR below the threshold
//!   ([`netheat_sched::pick_migrations`]);
//! * the **Kubernetes extender**'s filter and scores ([`Advisor::extender`]).
//!
//! Every answer gives the reason per candidate. Telemetry older than
//! `advisor.stale-after` makes answers say `stale` and fall back to the
//! policy's telemetry-free choice. The test `tests/advisor.rs` records the
//! state of every decision inside a scenario run and checks that the
//! advisor, given that state, decides the same.

pub mod api;
pub mod config;
pub mod extender;
mod text;

use std::path::Path;

use netheat_core::{HostId, LinkId};
use netheat_scenario::placement::PlacementParams;
use netheat_scenario::StoragePolicy;
use netheat_sched::{
    outbound_utilization, pick_migrations, placement_policy, rank_hosts, Candidate, MigrationCandidate, Objective,
    PlacementPolicy, TaskAsk, TorLoad,
};
use netheat_storage::placement::{place_checked, rack_eligibility, PlacementRequest, Uniform, View};
use netheat_storage::{make_policy, Cluster, Redundancy, ReplicaPlacement};
use netheat_topology::Topology;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use text::{Gbps, Num, Pct};
use thiserror::Error;

pub use api::*;
pub use config::{AdvisorFile, AdvisorSection};
pub use extender::{ExtenderOptions, ExtenderReply};

/// Why an advisor could not be built or a request not answered.
#[derive(Debug, Error)]
pub enum AdvisorError {
    /// The datacenter or advisor file is wrong.
    #[error(transparent)]
    Config(#[from] netheat_config::ConfigError),
    /// The datacenter has no storage view.
    #[error(transparent)]
    Storage(#[from] netheat_storage::StorageError),
    /// A placement policy could not be built.
    #[error(transparent)]
    Sched(#[from] netheat_sched::SchedError),
    /// The request is wrong (unknown host, bad value).
    #[error("{0}")]
    Request(String),
    /// The request is not what the endpoint reads: not JSON, not an object,
    /// or (extender) not an `ExtenderArgs` (HTTP 400 in the service).
    #[error("{0}")]
    Malformed(String),
}

fn bad(msg: impl Into<String>) -> AdvisorError {
    AdvisorError::Request(msg.into())
}

/// The advisor: a datacenter, its telemetry, and the policies.
pub struct Advisor {
    topo: Topology,
    params: PlacementParams,
    task: Box<dyn PlacementPolicy>,
    /// The same objectives without the ToR's (the telemetry-free choice).
    oblivious: Box<dyn PlacementPolicy>,
    storage_policy: StoragePolicy,
    replica: Box<dyn ReplicaPlacement>,
    balance: f64,
    cluster: Cluster,
    live: Vec<bool>,
    used: Vec<f64>,
    cap: Vec<f64>,
    rate: Vec<Option<f64>>,
    /// Per ToR, from `cap` and `rate`: (rate, capacity, measured) of its
    /// uplinks, summed once per snapshot rather than per ranked host.
    tor_sums: Vec<TorSum>,
    at_s: Option<f64>,
    snapshots: u64,
    /// Per ToR: time of the first snapshot of its current streak above the
    /// threshold.
    above_since: Vec<Option<f64>>,
    rng: ChaCha8Rng,
    stale_after_s: f64,
}

/// A ToR's uplinks in a snapshot: summed rate (a missing uplink counts as
/// fully loaded, Sinbad's rule for a missing report, §4.1), summed
/// capacity, and whether any of them was measured.
type TorSum = (f64, f64, bool);

fn tor_sums(topo: &Topology, cap: &[f64], rate: &[Option<f64>]) -> Vec<TorSum> {
    topo.tors()
        .iter()
        .map(|t| {
            let cap_sum: f64 = t.up.iter().map(|&l| cap[l as usize]).sum();
            let rate_sum: f64 = t.up.iter().map(|&l| rate[l as usize].unwrap_or(cap[l as usize])).sum();
            (rate_sum, cap_sum, t.up.iter().any(|&l| rate[l as usize].is_some()))
        })
        .collect()
}

/// The snapshot as the ranking reads it.
struct Snapshot<'a> {
    tors: &'a [TorSum],
}

impl Snapshot<'_> {
    fn tor(&self, t: usize) -> TorSum {
        self.tors[t]
    }
}

impl TorLoad for Snapshot<'_> {
    fn utilization(&self, tor: usize) -> f64 {
        let (rate, cap, _) = self.tor(tor);
        outbound_utilization(rate, cap)
    }
    fn capacity_bps(&self, tor: usize) -> f64 {
        self.tor(tor).1
    }
}

/// Why a host ranks where it does: one clause per objective of the policy,
/// in its order (`"0 task(s) of the job in its rack; 6 cores free after;
/// max(CPU 25% after, tor3 at 40% + 1.00 Gbps demand over 100.00 Gbps
/// uplinks = 41% projected)"`). Written when the answer is serialized;
/// `to_string()` gives the text.
#[derive(Debug, Clone, Copy)]
pub struct TaskReason<'a> {
    objectives: &'a [Objective],
    candidate: Candidate,
    tor: &'a str,
    tor_util: f64,
    demand_bps: f64,
    capacity_bps: f64,
}

impl TaskReason<'_> {
    /// `tor3 at 40% + 1.00 Gbps demand over 100.00 Gbps uplinks = 41% projected`.
    fn push_projection(&self, out: &mut String) {
        out.push_str(self.tor);
        out.push_str(" at ");
        Pct(self.tor_util).push(out);
        out.push_str(" + ");
        Gbps(self.demand_bps).push(out);
        out.push_str(" demand over ");
        Gbps(self.capacity_bps).push(out);
        out.push_str(" uplinks = ");
        Pct(self.candidate.projected_tor).push(out);
        out.push_str(" projected");
    }

    /// Appends the text to `out` (the answer's hot path: no `core::fmt`).
    pub(crate) fn push(&self, out: &mut String) {
        let c = &self.candidate;
        for (i, o) in self.objectives.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            match o {
                Objective::SpreadJob => {
                    out.push_str(itoa::Buffer::new().format(c.job_tasks_in_rack));
                    out.push_str(" task(s) of the job in its rack");
                }
                Objective::BinPack => {
                    Num(c.free_cores_after).push(out);
                    out.push_str(" cores free after");
                }
                Objective::CpuBalance => {
                    out.push_str("CPU ");
                    Pct(c.cpu_after).push(out);
                    out.push_str(" after");
                }
                Objective::UtpBalance => {
                    out.push_str("max(CPU ");
                    Pct(c.cpu_after).push(out);
                    out.push_str(" after, ");
                    self.push_projection(out);
                    out.push(')');
                }
                Objective::TorUtilization => self.push_projection(out),
            }
        }
    }

    /// Whether the text needs no JSON escaping (only the ToR's name can).
    pub(crate) fn is_plain(&self) -> bool {
        text::is_plain(self.tor)
    }
}

impl std::fmt::Display for TaskReason<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = String::with_capacity(192);
        self.push(&mut text);
        f.write_str(&text)
    }
}

impl serde::Serialize for TaskReason<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(192);
        self.push(&mut text);
        s.serialize_str(&text)
    }
}

/// The extender's verdict on one host, before its reason is written.
struct Verdict {
    score: u32,
    kind: VerdictKind,
}

enum VerdictKind {
    /// Telemetry is stale: passes, score 0.
    Stale,
    /// None of the ToR's uplinks is measured: passes, score 0.
    Unmeasured,
    /// The ToR is hot (above the threshold for the detection window): fails.
    Hot,
    /// The pod's demand would take the ToR above the threshold: fails.
    Over { util: f64, projected: f64 },
    /// Fits.
    Fits { util: f64, projected: f64 },
}

impl Advisor {
    /// An advisor for the datacenter file `topology` with the advisor file
    /// `config` (`None`: UTP and Sinbad with their defaults).
    pub fn from_paths(topology: &Path, config: Option<&Path>) -> Result<Self, AdvisorError> {
        let topo = netheat_config::load_topology(topology)?;
        let file = match config {
            Some(p) => AdvisorFile::read(p)?,
            None => AdvisorFile::default(),
        };
        Self::new(topo, &file)
    }

    /// An advisor for a built datacenter.
    pub fn new(topo: Topology, file: &AdvisorFile) -> Result<Self, AdvisorError> {
        let d = AdvisorFile::default();
        let pl = file.placement.as_ref().or(d.placement.as_ref()).expect("a default");
        let st = file.storage.as_ref().or(d.storage.as_ref()).expect("a default");
        let (params, objectives) = pl.resolve().map_err(|(key, reason)| bad(format!("{key}: {reason}")))?;
        let task = placement_policy(pl.policy.tag(), &objectives)?;
        let oblivious = placement_policy("bandwidth-oblivious", &objectives)?;
        let cfg = st.policy_config();
        let cluster = Cluster::from_topology(&topo)?;
        let mut replica = make_policy(st.policy.tag(), &cfg)?;
        replica.bind(&cluster);
        let n_links = topo.links().len();
        let n_hosts = topo.hosts().len();
        let stale_after_s = file.stale_after_s();
        if !(stale_after_s.is_finite() && stale_after_s > 0.0) {
            return Err(bad("advisor.stale-after: must be a positive duration"));
        }
        let cap: Vec<f64> = topo.links().iter().map(|l| l.capacity_bps).collect();
        let rate = vec![None; n_links];
        Ok(Self {
            params,
            task,
            oblivious,
            storage_policy: st.policy,
            replica,
            balance: st.balance_threshold,
            live: vec![true; n_hosts],
            used: vec![0.0; n_hosts],
            tor_sums: tor_sums(&topo, &cap, &rate),
            cap,
            rate,
            at_s: None,
            snapshots: 0,
            above_since: vec![None; topo.tors().len()],
            rng: ChaCha8Rng::seed_from_u64(file.advisor.seed),
            stale_after_s,
            cluster,
            topo,
        })
    }

    /// The datacenter.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The placement parameters in force.
    pub fn params(&self) -> &PlacementParams {
        &self.params
    }

    fn node_name(&self, n: u32) -> &str {
        &self.topo.nodes()[n as usize].name
    }

    /// A host's name.
    pub fn host_name(&self, h: HostId) -> &str {
        self.node_name(self.topo.hosts()[h as usize].node)
    }

    /// A ToR's name.
    pub fn tor_name(&self, t: usize) -> &str {
        self.node_name(self.topo.tors()[t].node)
    }

    /// A host by name or id.
    pub fn host(&self, r: &Ref) -> Result<HostId, AdvisorError> {
        let found = match r {
            Ref::Index(i) => (*i < self.topo.hosts().len() as u64).then_some(*i as HostId),
            Ref::Name(s) => self.topo.host_ref(s),
        };
        found.ok_or_else(|| {
            bad(format!(
                "unknown host {r}: the datacenter has hosts 0-{} (named like {:?})",
                self.topo.hosts().len().saturating_sub(1),
                self.host_name(0)
            ))
        })
    }

    /// A ToR by name or rack index.
    pub fn tor(&self, r: &Ref) -> Result<usize, AdvisorError> {
        let n = self.topo.tors().len();
        let found = match r {
            Ref::Index(i) => (*i < n as u64).then_some(*i as usize),
            Ref::Name(s) => match s.trim().parse::<usize>() {
                Ok(i) => (i < n).then_some(i),
                Err(_) => (0..n).find(|&t| self.tor_name(t) == s.trim()),
            },
        };
        found.ok_or_else(|| bad(format!("unknown ToR {r}: the datacenter has {n} ToRs, tor0-tor{}", n - 1)))
    }

    /// Directed link ids of every ToR uplink (what telemetry must cover).
    pub fn uplinks(&self) -> Vec<LinkId> {
        self.topo.tors().iter().flat_map(|t| t.up.iter().copied()).collect()
    }

    /// A telemetry snapshot at `at_s`: the measured rate of each listed
    /// directed link (the others are missing), and optionally its capacity
    /// in force. Replaces the previous snapshot; feeds Sinbad's EWMA.
    pub fn observe(
        &mut self,
        at_s: f64,
        links: &[LinkId],
        rates_bps: &[f64],
        capacities_bps: Option<&[f64]>,
    ) -> Result<(), AdvisorError> {
        if !at_s.is_finite() {
            return Err(bad("observe: the snapshot time is not finite"));
        }
        if links.len() != rates_bps.len() || capacities_bps.is_some_and(|c| c.len() != links.len()) {
            return Err(bad("observe: links, rates and capacities differ in length"));
        }
        let n = self.rate.len();
        if let Some(&l) = links.iter().find(|&&l| l as usize >= n) {
            return Err(bad(format!("observe: unknown link {l}: the datacenter has links 0-{}", n - 1)));
        }
        if let Some(r) = rates_bps.iter().find(|r| !(r.is_finite() && **r >= 0.0)) {
            return Err(bad(format!("observe: a rate of {r} bits/s")));
        }
        if let Some(c) = capacities_bps.and_then(|c| c.iter().find(|c| !(c.is_finite() && **c >= 0.0))) {
            return Err(bad(format!("observe: a capacity of {c} bits/s")));
        }
        self.rate.iter_mut().for_each(|r| *r = None);
        for (i, &l) in links.iter().enumerate() {
            self.rate[l as usize] = Some(rates_bps[i]);
            if let Some(c) = capacities_bps {
                self.cap[l as usize] = c[i];
            }
        }
        self.tor_sums = tor_sums(&self.topo, &self.cap, &self.rate);
        self.at_s = Some(at_s);
        self.snapshots += 1;
        self.replica.observe(at_s, &self.rate);
        for t in 0..self.topo.tors().len() {
            let (rate, cap, measured) = self.snapshot().tor(t);
            let above = measured && outbound_utilization(rate, cap) > self.params.hot_threshold;
            self.above_since[t] = if above { self.above_since[t].or(Some(at_s)) } else { None };
        }
        Ok(())
    }

    /// Bytes stored per host and which hosts are live (storage balance and
    /// fault domains of replica placement).
    pub fn set_storage(&mut self, used_bytes: Option<&[f64]>, live: Option<&[bool]>) -> Result<(), AdvisorError> {
        let n = self.used.len();
        if used_bytes.is_some_and(|u| u.len() != n) || live.is_some_and(|l| l.len() != n) {
            return Err(bad(format!("set_storage: give one value per host ({n})")));
        }
        if let Some(u) = used_bytes {
            self.used.copy_from_slice(u);
        }
        if let Some(l) = live {
            self.live.copy_from_slice(l);
        }
        Ok(())
    }

    fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { tors: &self.tor_sums }
    }

    /// Age of the snapshot at `now_s`, and whether it is stale.
    fn age(&self, now_s: f64) -> (Option<f64>, bool) {
        match self.at_s {
            None => (None, true),
            Some(t) => {
                let age = (now_s - t).max(0.0);
                (Some(age), age > self.stale_after_s)
            }
        }
    }

    fn stale_reason(&self, now_s: f64) -> String {
        match self.age(now_s).0 {
            None => "no telemetry yet".into(),
            Some(a) => format!("telemetry is {a:.0} s old (stale after {:.0} s)", self.stale_after_s),
        }
    }

    /// The advisor in brief.
    pub fn status(&self, now_s: f64) -> Status {
        let (age_s, stale) = self.age(now_s);
        Status {
            telemetry_at_s: self.at_s,
            age_s,
            stale,
            stale_after_s: self.stale_after_s,
            hot_threshold: self.params.hot_threshold,
            task_policy: self.task.name().into(),
            replica_policy: self.replica.name().into(),
            hosts: self.topo.hosts().len(),
            tors: self.topo.tors().len(),
            snapshots: self.snapshots,
        }
    }

    /// Whether ToR `t`, at measured utilization `util`, is hot: above the
    /// threshold in every snapshot for a whole detection window.
    fn is_hot(&self, t: usize, util: f64) -> bool {
        util > self.params.hot_threshold
            && self.at_s.zip(self.above_since[t]).is_some_and(|(now, since)| now - since >= self.params.detect_s)
    }

    /// Every ToR and its uplinks now.
    pub fn tors(&self, now_s: f64) -> TorsAnswer {
        let (age_s, stale) = self.age(now_s);
        let snap = self.snapshot();
        let tors = (0..self.topo.tors().len())
            .map(|t| {
                let up = &self.topo.tors()[t].up;
                let cap: f64 = up.iter().map(|&l| self.cap[l as usize]).sum();
                let measured: Vec<f64> = up.iter().filter_map(|&l| self.rate[l as usize]).collect();
                // (+ 0.0: the empty sum is -0.0.)
                let rate: f64 = measured.iter().sum::<f64>() + 0.0;
                let util = (!measured.is_empty()).then(|| snap.utilization(t));
                let above = util.is_some_and(|u| u > self.params.hot_threshold);
                let hot = above
                    && self
                        .at_s
                        .zip(self.above_since[t])
                        .is_some_and(|(now, since)| now - since >= self.params.detect_s);
                TorNow {
                    tor: self.tor_name(t).into(),
                    index: t as u32,
                    utilization: util,
                    rate_bps: rate,
                    capacity_bps: cap,
                    above,
                    hot,
                    uplinks: up
                        .iter()
                        .map(|&l| {
                            let link = &self.topo.links()[l as usize];
                            let c = self.cap[l as usize];
                            let r = self.rate[l as usize];
                            UplinkNow {
                                link: l,
                                src: self.node_name(link.src).into(),
                                dst: self.node_name(link.dst).into(),
                                rate_bps: r,
                                capacity_bps: c,
                                utilization: r.map(|r| outbound_utilization(r, c)),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        TorsAnswer { stale, age_s, hot_threshold: self.params.hot_threshold, detect_s: self.params.detect_s, tors }
    }

    /// Ranks hosts for a task (see the crate docs).
    pub fn place_task(&self, now_s: f64, req: &TaskRequest) -> Result<TaskAnswer<'_>, AdvisorError> {
        let n = self.topo.hosts().len();
        if !(req.demand_bps.is_finite() && req.demand_bps >= 0.0) {
            return Err(bad("demand_bps: must be a rate of at least 0 bits/s"));
        }
        if !(req.memory_bytes.is_finite() && req.memory_bytes >= 0.0) {
            return Err(bad("memory_bytes: must be at least 0"));
        }
        let cands: Vec<HostId> = match &req.candidates {
            None => (0..n as HostId).collect(),
            Some(c) => c.iter().map(|r| self.host(r)).collect::<Result<_, _>>()?,
        };
        for (key, v) in [("free_cores", req.free_cores.as_ref()), ("free_memory_bytes", req.free_memory_bytes.as_ref())]
        {
            if let Some(v) = v {
                if v.len() != cands.len() {
                    return Err(bad(format!("{key}: {} values for {} candidates", v.len(), cands.len())));
                }
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(bad(format!("{key}: values must be finite")));
                }
            }
        }
        let others: Vec<HostId> = req.job_hosts.iter().map(|r| self.host(r)).collect::<Result<_, _>>()?;
        let avoid: Vec<usize> = req.avoid_tors.iter().map(|r| self.tor(r)).collect::<Result<_, _>>()?;
        let (_, stale) = self.age(now_s);
        let policy = if stale { self.oblivious.as_ref() } else { self.task.as_ref() };
        let fallback = (stale && self.task.network_aware()).then(|| {
            format!("{}: ranked by `{}`'s objectives without the ToR's", self.stale_reason(now_s), self.task.name())
        });
        let hosts = self.topo.hosts();
        let mut sample = Vec::with_capacity(cands.len());
        let mut excluded = Vec::new();
        for (i, &h) in cands.iter().enumerate() {
            let host = &hosts[h as usize];
            let free = req.free_cores.as_ref().map_or(f64::from(host.cores), |v| v[i]);
            let mem = req.free_memory_bytes.as_ref().map_or(host.memory_bytes, |v| v[i]);
            let reason = if others.contains(&h) {
                Some("runs another task of the job".to_string())
            } else if avoid.contains(&(host.rack as usize)) {
                Some(format!("under {}, which is to be avoided", self.tor_name(host.rack as usize)))
            } else if free < f64::from(req.cores) {
                Some(format!("{free} free cores, the task asks {}", req.cores))
            } else if mem < req.memory_bytes {
                Some(format!("{mem:.0} bytes of memory free, the task asks {:.0}", req.memory_bytes))
            } else {
                None
            };
            match reason {
                Some(r) => excluded.push(Excluded { host: self.host_name(h), reason: r }),
                None => sample.push((h, free)),
            }
        }
        let ask = TaskAsk { cores: req.cores, memory_bytes: req.memory_bytes, estimate_bps: req.demand_bps };
        let snap = self.snapshot();
        let ranked = rank_hosts(policy, &self.topo, &snap, &ask, &others, &sample);
        let limit = req.limit.unwrap_or(100);
        let objectives = policy.objectives();
        let out: Vec<RankedHost> = ranked
            .iter()
            .take(limit)
            .map(|r| {
                let c = &r.candidate;
                let t = hosts[c.server as usize].rack as usize;
                let keys = objectives.iter().zip(&r.keys).map(|(o, k)| (objective_name(*o), *k)).collect();
                let reason = TaskReason {
                    objectives,
                    candidate: *c,
                    tor: self.tor_name(t),
                    tor_util: r.tor_util,
                    demand_bps: req.demand_bps,
                    capacity_bps: snap.capacity_bps(t),
                };
                RankedHost {
                    host: self.host_name(c.server),
                    id: c.server,
                    tor: self.tor_name(t),
                    tor_util: r.tor_util,
                    projected_tor: c.projected_tor,
                    keys: ObjectiveKeys(keys),
                    reason,
                }
            })
            .collect();
        Ok(TaskAnswer {
            policy: policy.name().into(),
            stale,
            fallback,
            chosen: out.first().map(|r| r.host),
            ranked: out,
            excluded,
        })
    }

    /// Places a block's pieces with the advisor's own random state.
    pub fn place_replicas(&mut self, now_s: f64, req: &ReplicaRequest) -> Result<ReplicaAnswer, AdvisorError> {
        let mut rng = self.rng.clone();
        let out = self.place_replicas_with(now_s, req, &mut rng);
        self.rng = rng;
        out
    }

    /// Places a block's pieces, drawing ties from `rng` (a test replays a
    /// simulation's draws with it).
    pub fn place_replicas_with(
        &mut self,
        now_s: f64,
        req: &ReplicaRequest,
        rng: &mut ChaCha8Rng,
    ) -> Result<ReplicaAnswer, AdvisorError> {
        if !(req.bytes.is_finite() && req.bytes > 0.0) {
            return Err(bad("bytes: must be a block size above 0"));
        }
        let redundancy = match req.erasure {
            Some(e) => Redundancy::Erasure { k: e.data, m: e.parity },
            None => {
                let d = req.fault_domains.unwrap_or(2.min(req.replicas));
                if d == 0 {
                    return Err(bad("fault_domains: must be at least 1"));
                }
                Redundancy::Replicate { r: req.replicas, f: d - 1 }
            }
        };
        let writer = req.writer.as_ref().map(|r| self.host(r)).transpose()?;
        // A writer that stores nothing is an external client (as in the
        // scenario layer's `[storage]`).
        let writer = writer.filter(|&w| self.cluster.hosts[w as usize].stores);
        let request = PlacementRequest { file: 0, block: 0, bytes: req.bytes, writer, redundancy, time_s: now_s };
        let (_, stale) = self.age(now_s);
        let uses_telemetry = self.storage_policy == StoragePolicy::Sinbad;
        let fall_back = stale && uses_telemetry;
        let view =
            View { cluster: &self.cluster, live: &self.live, host_used: &self.used, balance_threshold: self.balance };
        let hosts = if fall_back {
            place_checked(&mut Uniform, &request, &view, rng)
        } else {
            place_checked(self.replica.as_mut(), &request, &view, rng)
        }
        .map_err(|e| bad(format!("the block cannot be placed: {e}")))?;
        let chosen_racks: Vec<u32> = hosts.iter().map(|&h| self.cluster.rack_of(h)).collect();
        let view =
            View { cluster: &self.cluster, live: &self.live, host_used: &self.used, balance_threshold: self.balance };
        let local_rack = writer.map(|w| self.cluster.rack_of(w));
        let mut racks: Vec<RackScore> = (0..self.cluster.racks.len())
            .map(|r| {
                let score = if fall_back { 0.0 } else { self.replica.rack_score(&view, r) };
                let (eligible, _) = rack_eligibility(&view, &request, r);
                let rack = &self.cluster.racks[r];
                let reason = if Some(r as u32) == local_rack {
                    "the writer's rack: it keeps the local copy".to_string()
                } else if fall_back {
                    format!("{}: uniform among eligible racks", self.stale_reason(now_s))
                } else {
                    match self.storage_policy {
                        StoragePolicy::Sinbad => {
                            let cap: f64 = rack.down.iter().map(|&l| self.cluster.link_bps[l as usize]).sum();
                            format!(
                                "expected capacity {}: the spare of its {} downlink by the EWMA of reports, at most its disks' {}",
                                Gbps(score),
                                Gbps(cap),
                                Gbps(self.cluster.rack_disk_bps(r))
                            )
                        }
                        StoragePolicy::Ccp => format!("uplink class {:?}", rack.class),
                        StoragePolicy::CcpBalance => format!(
                            "drawn with weight {score:.3e} (its uplink bits/s per byte of storage; uplink class {:?})",
                            rack.class
                        ),
                        StoragePolicy::Uniform => "uniform among eligible racks".into(),
                    }
                };
                RackScore {
                    rack: self.topo.racks()[r].name.clone(),
                    tor: self.tor_name(r).into(),
                    score,
                    chosen: chosen_racks.contains(&(r as u32)),
                    eligible,
                    reason,
                }
            })
            .collect();
        racks.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(ReplicaAnswer {
            policy: if fall_back { "uniform".into() } else { self.replica.name().into() },
            stale,
            fallback: fall_back.then(|| format!("{}: uniform rack-aware placement", self.stale_reason(now_s))),
            hosts: hosts.iter().map(|&h| self.host_name(h).to_string()).collect(),
            racks,
        })
    }

    /// Which tasks to move off a ToR (see the crate docs).
    pub fn migrate(&self, now_s: f64, req: &MigrateRequest) -> Result<MigrateAnswer, AdvisorError> {
        let t = self.tor(&req.tor)?;
        let threshold = req.threshold.unwrap_or(self.params.hot_threshold);
        if !(threshold.is_finite() && threshold > 0.0) {
            return Err(bad("threshold: must be a utilization above 0"));
        }
        if let Some(x) = req.tasks.iter().find(|x| !(x.rate_bps.is_finite() && x.rate_bps >= 0.0)) {
            return Err(bad(format!("tasks: {:?} has a rate of {} bits/s", x.id, x.rate_bps)));
        }
        let (_, stale) = self.age(now_s);
        let (rate, cap, _) = self.snapshot().tor(t);
        let util = outbound_utilization(rate, cap);
        let cands: Vec<MigrationCandidate> = req
            .tasks
            .iter()
            .enumerate()
            .map(|(i, x)| MigrationCandidate {
                task: i,
                rate_bps: x.rate_bps,
                latency_sensitive: x.latency_sensitive,
                budget_left: x.budget_left,
            })
            .collect();
        let picked = if stale { Vec::new() } else { pick_migrations(&cands, rate, cap, threshold) };
        let moved: f64 = picked.iter().map(|&i| req.tasks[i].rate_bps).sum();
        let after = outbound_utilization((rate - moved).max(0.0), cap);
        let name = self.tor_name(t).to_string();
        let tasks = req
            .tasks
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let moves = picked.contains(&i);
                let reason = if stale {
                    format!("{}: nothing moves without telemetry", self.stale_reason(now_s))
                } else if moves {
                    format!(
                        "sends {} off the rack; among the largest that bring {name} below {}",
                        Gbps(x.rate_bps),
                        Pct(threshold)
                    )
                } else if util <= threshold {
                    format!("{name} at {} is not above {}", Pct(util), Pct(threshold))
                } else if x.latency_sensitive {
                    "latency-sensitive: never moved".into()
                } else if !x.budget_left {
                    "its job has no migration budget left this window".into()
                } else if x.rate_bps <= 0.0 {
                    "sends nothing off the rack".into()
                } else {
                    format!("not needed: the larger ones bring {name} to {}", Pct(after))
                };
                TaskVerdict { id: x.id.clone(), moves, reason }
            })
            .collect();
        Ok(MigrateAnswer {
            tor: name,
            stale,
            utilization: util,
            rate_bps: rate,
            capacity_bps: cap,
            threshold,
            moves: picked.iter().map(|&i| req.tasks[i].id.clone()).collect(),
            after_utilization: after,
            tasks,
        })
    }

    /// The Kubernetes extender's filter and priorities for hosts, a pod
    /// demanding `demand_bps`: a host fails when its ToR is hot or its
    /// projected utilization (UTP's, [`netheat_sched::projected_tor`])
    /// exceeds the hot threshold; its score is
    /// `floor(10 * (1 - projected))` within 0-10 (the protocol's range).
    pub fn extender(&self, now_s: f64, hosts: &[HostId], demand_bps: f64) -> Result<ExtenderAnswer, AdvisorError> {
        let verdicts = self.verdicts(now_s, hosts, demand_bps)?;
        let thr = self.params.hot_threshold;
        let nodes = hosts
            .iter()
            .zip(verdicts)
            .map(|(&h, v)| {
                let name = self.tor_name(self.topo.hosts()[h as usize].rack as usize);
                let (pass, reason) = match v.kind {
                    VerdictKind::Stale => (true, self.stale_reason(now_s)),
                    VerdictKind::Unmeasured => (true, format!("no telemetry for {name}'s uplinks")),
                    VerdictKind::Hot => {
                        (false, format!("{name} is hot: above {} for {:.0} s", Pct(thr), self.params.detect_s))
                    }
                    VerdictKind::Over { util, projected } => (
                        false,
                        format!(
                            "{name} at {} + {} would be {}, above {}",
                            Pct(util),
                            Gbps(demand_bps),
                            Pct(projected),
                            Pct(thr)
                        ),
                    ),
                    VerdictKind::Fits { util, projected } => {
                        (true, format!("{name} at {} + {} = {} projected", Pct(util), Gbps(demand_bps), Pct(projected)))
                    }
                };
                NodeVerdict { host: h, pass, score: v.score, reason }
            })
            .collect();
        let (_, stale) = self.age(now_s);
        Ok(ExtenderAnswer { stale, nodes })
    }

    /// The extender's scores alone (those of [`Advisor::extender`], in the
    /// order of `hosts`), for the prioritize call, which returns no reasons.
    pub fn extender_scores(&self, now_s: f64, hosts: &[HostId], demand_bps: f64) -> Result<Vec<u32>, AdvisorError> {
        Ok(self.verdicts(now_s, hosts, demand_bps)?.into_iter().map(|v| v.score).collect())
    }

    fn verdicts(&self, now_s: f64, hosts: &[HostId], demand_bps: f64) -> Result<Vec<Verdict>, AdvisorError> {
        if !(demand_bps.is_finite() && demand_bps >= 0.0) {
            return Err(bad("the pod's network demand must be a rate of at least 0 bits/s"));
        }
        let n = self.topo.hosts().len();
        if let Some(&h) = hosts.iter().find(|&&h| h as usize >= n) {
            return Err(bad(format!("unknown host {h}: the datacenter has hosts 0-{}", n - 1)));
        }
        let (_, stale) = self.age(now_s);
        let snap = self.snapshot();
        let thr = self.params.hot_threshold;
        Ok(hosts
            .iter()
            .map(|&h| {
                let t = self.topo.hosts()[h as usize].rack as usize;
                if stale {
                    return Verdict { score: 0, kind: VerdictKind::Stale };
                }
                let (_, cap, measured) = snap.tor(t);
                if !measured {
                    return Verdict { score: 0, kind: VerdictKind::Unmeasured };
                }
                let util = snap.utilization(t);
                let projected = netheat_sched::projected_tor(util, demand_bps, cap);
                // (1e-9: 0.8 + 0.1 is 0.9000000000000001 in floating point; a score
                // must not drop a step for that.)
                let score = (10.0 * (1.0 - projected) + 1e-9).floor().clamp(0.0, 10.0) as u32;
                let kind = if self.is_hot(t, util) {
                    VerdictKind::Hot
                } else if projected > thr {
                    VerdictKind::Over { util, projected }
                } else {
                    VerdictKind::Fits { util, projected }
                };
                Verdict { score, kind }
            })
            .collect())
    }

    /// The load report of netheat's HDFS placement policy
    /// (`java/hdfs-placement`, `docs/hdfs.md`): per host with a measured
    /// ToR-to-host link, `host,utilization,timestamp`, the utilization being
    /// the received rate over the capacity of the host's downlinks (summed
    /// over its NIC ports) in the snapshot taken at `timestamp`. Hosts
    /// without a measured downlink are left out (unknown to the policy).
    /// The policy judges staleness itself from the timestamps.
    pub fn hdfs_loads(&self) -> String {
        let mut out = String::from(
            "# netheat: ToR-to-host utilization per host (docs/hdfs.md, Load reports)\nhost,utilization,timestamp\n",
        );
        let Some(at) = self.at_s else { return out };
        for (h, host) in self.topo.hosts().iter().enumerate() {
            let downs: Vec<LinkId> = host.ports.iter().map(|p| p.down).collect();
            let measured: Vec<f64> = downs.iter().filter_map(|&l| self.rate[l as usize]).collect();
            if measured.is_empty() {
                continue;
            }
            let cap: f64 = downs.iter().map(|&l| self.cap[l as usize]).sum();
            let util = outbound_utilization(measured.iter().sum(), cap);
            out.push_str(&format!("{},{util:.6},{at:.3}\n", self.host_name(h as HostId)));
        }
        out
    }

    /// `place_task` from and to JSON (the answer's UTF-8 bytes, what the
    /// service sends).
    pub fn place_task_json(&self, now_s: f64, request: &[u8]) -> Result<Vec<u8>, AdvisorError> {
        let req: TaskRequest = parse(request)?;
        let mut out = Vec::with_capacity(ANSWER_BYTES);
        self.place_task(now_s, &req)?.write_json(&mut out);
        Ok(out)
    }

    /// `place_replicas` from and to JSON (UTF-8 bytes).
    pub fn place_replicas_json(&mut self, now_s: f64, request: &[u8]) -> Result<Vec<u8>, AdvisorError> {
        let req: ReplicaRequest = parse(request)?;
        Ok(json_bytes(&self.place_replicas(now_s, &req)?))
    }

    /// `migrate` from and to JSON (UTF-8 bytes).
    pub fn migrate_json(&self, now_s: f64, request: &[u8]) -> Result<Vec<u8>, AdvisorError> {
        let req: MigrateRequest = parse(request)?;
        Ok(json_bytes(&self.migrate(now_s, &req)?))
    }
}

/// The name of an objective in answers (the `placement.objectives` tags).
pub fn objective_name(o: Objective) -> &'static str {
    match o {
        Objective::SpreadJob => "spread-job",
        Objective::BinPack => "bin-pack",
        Objective::CpuBalance => "cpu-balance",
        Objective::UtpBalance => "utp-balance",
        Objective::TorUtilization => "tor-utilization",
    }
}

/// A request from JSON: [`AdvisorError::Malformed`] if the body is not JSON or
/// not an object, [`AdvisorError::Request`] if the object is not the request.
fn parse<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> Result<T, AdvisorError> {
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => match extender::json_object(body) {
            Err(not_an_object) => not_an_object,
            Ok(_) => bad(format!("the request body: {e}")),
        },
        _ => AdvisorError::Malformed(format!("malformed JSON: {e}")),
    })
}

/// Room for a typical answer: they run to tens of kilobytes (a reason per
/// ranked host), cheaper to allocate once than to grow from empty.
const ANSWER_BYTES: usize = 32 * 1024;

/// JSON text of an answer.
pub fn to_json<T: serde::Serialize>(v: &T) -> String {
    String::from_utf8(json_bytes(v)).expect("serde_json writes UTF-8")
}

/// JSON of an answer as UTF-8 bytes.
pub fn json_bytes<T: serde::Serialize>(v: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(ANSWER_BYTES);
    serde_json::to_writer(&mut out, v).expect("answers serialize");
    out
}
