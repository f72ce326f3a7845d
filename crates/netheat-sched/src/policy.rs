//! Placement policies: the objectives they rank candidate servers by, and
//! the choice of tasks to migrate off a hot ToR.
//!
//! Candidates are compared lexicographically on a vector of objectives, each
//! *quantised* (whole tasks for spreading, 4-core steps for bin packing, 5%
//! steps for load balance and ToR utilization) so that a lower objective
//! breaks the ties of the ones above it, as in Borg-like schedulers where
//! scores are bucketed (hotspot paper §5.1, "Background": a vector of scores
//! per server, objectives prioritised).
//!
//! **UTP as a tweak of the load-balance objective (the paper's reading).**
//! §5.1 ("Proactive UTP placement") says UTP does not add network as a new
//! resource or objective: it modifies the scheduler's low-priority
//! objective of balancing load across servers, so that the score of each
//! candidate reflects the utilization its ToR would have with the task
//! placed there (instantaneous ToR utilization plus the task's peak
//! demand). The scheduler's
//! load-balance objective here is [`Objective::CpuBalance`] (CPU
//! utilization of the server after placement, lowest priority in
//! [`crate::SchedulerParams::default`]). The `utp` policy replaces it by
//! [`Objective::UtpBalance`], whose score is the larger of the two loads
//! the candidate would carry: `max(cpu_after, projected_tor)`. Reading of
//! "tweak" (ours, chosen before any run): the maximum leaves the CPU
//! balance score unchanged wherever the ToR is less loaded than the server
//! (the common case, since average ToR utilization is low, §5.1), which is
//! requirement (b) of §5.1 (no existing cluster objective may regress),
//! and makes the ToR dominate exactly where it is the more loaded
//! resource. When the scheduler's objectives contain no load-balance
//! objective, the tweaked objective is the projected ToR alone, at the
//! lowest priority.
//!
//! `utp-tiebreak` (ours, the project's earlier form) keeps the scheduler's
//! objectives untouched and appends [`Objective::TorUtilization`] as a new
//! last tie-breaker.

use rand::Rng;

use crate::SchedError;

/// One objective of the ranking (serde: `spread-job`, `bin-pack`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// Fewer tasks of the same job already in the candidate's rack first.
    SpreadJob,
    /// Fewer free cores left after placement first (packs servers).
    BinPack,
    /// Lower CPU utilization of the server after placement first: the
    /// scheduler's low-priority load balance across servers (§5.1).
    CpuBalance,
    /// The load-balance objective as UTP tweaks it (§5.1): lower
    /// `max(cpu_after, projected_tor)` first (see the module docs).
    UtpBalance,
    /// Lower projected ToR outbound utilization first, as a separate last
    /// objective (ours: the `utp-tiebreak` form).
    TorUtilization,
}

/// What the ranking knows about one feasible candidate server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Server (host id).
    pub server: u32,
    /// Tasks of the same job already in the server's rack.
    pub job_tasks_in_rack: u32,
    /// Cores left free on the server after placing the task.
    pub free_cores_after: f64,
    /// CPU utilization of the server after placing the task, in [0, 1].
    pub cpu_after: f64,
    /// Measured ToR outbound utilization plus the task's peak estimate over
    /// the ToR's uplink capacity.
    pub projected_tor: f64,
}

impl Candidate {
    /// Server `server` with `host_cores` cores of which `free_cores` are
    /// free, for a task of `task_cores` cores; `job_tasks_in_rack` and
    /// `projected_tor` (see [`projected_tor`]) as in the fields.
    pub fn new(
        server: u32,
        job_tasks_in_rack: u32,
        host_cores: u32,
        free_cores: f64,
        task_cores: u32,
        projected_tor: f64,
    ) -> Self {
        let cores = host_cores.max(1) as f64;
        let free_after = free_cores - task_cores as f64;
        Candidate {
            server,
            job_tasks_in_rack,
            free_cores_after: free_after,
            cpu_after: 1.0 - free_after / cores,
            projected_tor,
        }
    }
}

/// UTP's score of a ToR for a task: its measured outbound utilization plus
/// the task's peak demand estimate over the ToR's uplink capacity (at least
/// 1 bit/s).
pub fn projected_tor(tor_util: f64, estimate_bps: f64, tor_cap_bps: f64) -> f64 {
    tor_util + estimate_bps / tor_cap_bps.max(1.0)
}

/// The candidate servers of one placement: `draws` uniform draws among
/// `n_hosts` servers, deduplicated (ascending), those that `fits`; when none
/// of the sample fits, every server that does (empty: the task fits
/// nowhere).
pub fn sample_servers<R: Rng + ?Sized>(
    rng: &mut R,
    n_hosts: u32,
    draws: usize,
    fits: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let mut sample: Vec<u32> = (0..draws).map(|_| rng.gen_range(0..n_hosts)).collect();
    sample.sort_unstable();
    sample.dedup();
    sample.retain(|&s| fits(s));
    if sample.is_empty() {
        sample = (0..n_hosts).filter(|&s| fits(s)).collect();
    }
    sample
}

impl Objective {
    /// The quantised key of a candidate on this objective (lower is better).
    pub fn key(self, c: &Candidate) -> i64 {
        match self {
            Objective::SpreadJob => c.job_tasks_in_rack as i64,
            Objective::BinPack => (c.free_cores_after / 4.0).floor() as i64,
            Objective::CpuBalance => (c.cpu_after * 20.0).floor() as i64,
            Objective::UtpBalance => (c.cpu_after.max(c.projected_tor) * 20.0).floor() as i64,
            Objective::TorUtilization => (c.projected_tor * 20.0).floor() as i64,
        }
    }
}

/// A placement policy.
pub trait PlacementPolicy: Send + Sync {
    /// Its tag.
    fn name(&self) -> &'static str;
    /// Objectives, most important first.
    fn objectives(&self) -> &[Objective];
    /// Whether it migrates tasks off hot ToRs.
    fn migrates(&self) -> bool;
    /// Whether placement reads ToR utilization.
    fn network_aware(&self) -> bool {
        self.objectives().iter().any(|o| matches!(o, Objective::TorUtilization | Objective::UtpBalance))
    }
    /// The best candidate (ties: the first in sample order), or `None`.
    fn choose(&self, cands: &[Candidate]) -> Option<usize> {
        let obj = self.objectives();
        let mut best: Option<(usize, Vec<i64>)> = None;
        for (i, c) in cands.iter().enumerate() {
            let k: Vec<i64> = obj.iter().map(|o| o.key(c)).collect();
            if best.as_ref().is_none_or(|(_, b)| k < *b) {
                best = Some((i, k));
            }
        }
        best.map(|b| b.0)
    }
}

struct Policy {
    name: &'static str,
    objectives: Vec<Objective>,
    migrates: bool,
}

impl PlacementPolicy for Policy {
    fn name(&self) -> &'static str {
        self.name
    }
    fn objectives(&self) -> &[Objective] {
        &self.objectives
    }
    fn migrates(&self) -> bool {
        self.migrates
    }
}

netheat_core::registry! {
    /// Registered placement tags.
    pub const POLICIES;
    /// The policy of a tag with the scheduler's own objectives `base`
    /// (`None`: unknown tag).
    fn build(base: &[Objective]) -> Box<dyn PlacementPolicy> {
        "bandwidth-oblivious" => Policy::boxed("bandwidth-oblivious", base.to_vec(), false),
        "reactive-only" => Policy::boxed("reactive-only", base.to_vec(), true),
        "utp" => Policy::boxed("utp", utp_objectives(base), true),
        "utp-tiebreak" => Policy::boxed("utp-tiebreak", [base, &[Objective::TorUtilization]].concat(), true),
    }
}

impl Policy {
    fn boxed(name: &'static str, objectives: Vec<Objective>, migrates: bool) -> Box<dyn PlacementPolicy> {
        Box::new(Self { name, objectives, migrates })
    }
}

/// UTP's tweak of the scheduler's objectives (§5.1): the load-balance
/// objective ([`Objective::CpuBalance`]) becomes [`Objective::UtpBalance`]
/// in place; without one, the tweaked score is the projected ToR alone
/// ([`Objective::TorUtilization`] appended).
fn utp_objectives(base: &[Objective]) -> Vec<Objective> {
    let mut objectives = base.to_vec();
    match objectives.iter().position(|&o| o == Objective::CpuBalance) {
        Some(k) => objectives[k] = Objective::UtpBalance,
        None => objectives.push(Objective::TorUtilization),
    }
    objectives
}

/// The policy `tag` with the scheduler's own objectives `base` (most
/// important first): `utp` turns the load-balance objective
/// ([`Objective::CpuBalance`]) into [`Objective::UtpBalance`] in place
/// (when `base` has none, the tweaked score is the projected ToR alone:
/// [`Objective::TorUtilization`] appended); `utp-tiebreak` (ours) always
/// appends [`Objective::TorUtilization`].
pub fn placement_policy(tag: &str, base: &[Objective]) -> Result<Box<dyn PlacementPolicy>, SchedError> {
    build(tag, base).ok_or_else(|| SchedError::UnknownPolicy { name: tag.to_string(), known: POLICIES.join(", ") })
}

/// A task on a hot ToR, as the migration choice sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MigrationCandidate {
    /// Task index.
    pub task: usize,
    /// Its measured outbound rate, bits/s.
    pub rate_bps: f64,
    /// Latency-sensitive tasks are never migrated.
    pub latency_sensitive: bool,
    /// Whether its job still has migration budget.
    pub budget_left: bool,
}

/// The fewest tasks whose removal brings a ToR carrying `tor_rate_bps` on
/// `tor_cap_bps` below `threshold`: latency-tolerant tasks with budget, the
/// largest measured rate first (greedy is optimal for the count). Returns
/// what it can when even all of them are not enough.
pub fn pick_migrations(
    cands: &[MigrationCandidate],
    tor_rate_bps: f64,
    tor_cap_bps: f64,
    threshold: f64,
) -> Vec<usize> {
    let mut eligible: Vec<&MigrationCandidate> =
        cands.iter().filter(|c| !c.latency_sensitive && c.budget_left && c.rate_bps > 0.0).collect();
    eligible.sort_by(|a, b| b.rate_bps.total_cmp(&a.rate_bps).then(a.task.cmp(&b.task)));
    let mut rate = tor_rate_bps;
    let mut out = Vec::new();
    for c in eligible {
        if rate < threshold * tor_cap_bps {
            break;
        }
        rate -= c.rate_bps;
        out.push(c.task);
    }
    out
}
