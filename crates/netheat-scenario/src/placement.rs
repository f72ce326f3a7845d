//! `[placement]` on the flow engine: the hosts of the tasks of
//! `compute-job` applications, chosen by a netheat-sched placement policy
//! (the hotspot paper's UTP, §5.1) when each job starts, and moved off hot
//! ToRs while it runs.
//!
//! The scheduler model is that of the UTP cluster experiment
//! ([`crate::cluster`], which runs a `cluster` app's jobs), applied to the DAGs of the
//! workload instead of its own jobs:
//!
//! * **Placement** (at a job's `task_started`, task by task in job order):
//!   `candidates` uniform draws of hosts, kept if they have the task's free
//!   cores and memory and run no other task of the job (the whole cluster
//!   when none of the sample does: [`netheat_sched::sample_servers`]),
//!   ranked lexicographically by the policy's objectives
//!   ([`netheat_sched::PlacementPolicy::choose`]). UTP's ToR objective is
//!   the *live* outbound utilization of the candidate's ToR (rates on its
//!   uplinks now over their capacity in force) plus the task's historical
//!   demand estimate over that capacity. When no host has room (the
//!   cluster is full) the task still starts, on the best-ranked host
//!   without a task of its job (counted as `placement_overcommits`;
//!   the cluster would keep it pending, which a DAG whose flows start
//!   now cannot). The flow steps of the DAG are rewritten to the chosen
//!   hosts. A task holds its cores and memory until every flow it sends or
//!   receives has finished (or its job has).
//! * **Detection** (policies that migrate): every `tick` (from `tick / 2`)
//!   each ToR's outbound utilization is sampled; a ToR above
//!   `hot-threshold` for `detect / tick` samples in a row is hot
//!   ([`netheat_sched::HotTors`]).
//! * **Migration** (every `detect`): off each hot ToR, the tasks with the
//!   largest measured outbound rate leaving the rack, fewest first, until
//!   the ToR's sampled rate would fall below the threshold
//!   ([`netheat_sched::pick_migrations`]), within each job's budget of
//!   `budget-per-window` migrations per window (compute jobs are latency
//!   tolerant). A task moves to the best host by the same policy, never
//!   under the same ToR; when none has room it stays (in the cluster it
//!   would wait as pending). Moving a task cancels every running flow it
//!   sends or receives and starts, from or to its new host, a flow of the
//!   bytes not yet delivered, with the same rate cap (the cluster's
//!   tasks instead last a fixed time, so a moved task there sends its
//!   demand for the time left). A ToR tasks were moved off starts its
//!   detection over.

use std::collections::{BTreeMap, HashMap};

use netheat_core::HostId;
use netheat_engine::Ctx;
use netheat_sched::{
    pick_migrations, rank_hosts, sample_servers, tor_capacity_bps, EngineTors, HotTors, MigrationCandidate,
    PlacementPolicy, TaskAsk,
};
use netheat_topology::Topology;
use netheat_workloads::{Step, TaskDag};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::result::{Decision, MigrationOut, PlacementOut};

/// Ids of the flows that carry on a moved task's bytes start here (clear of
/// open-loop flows and of the runner's, which count up from small bases).
pub const MIGRATED_FLOW_BASE: u64 = 1 << 62;

/// The parameters of a placement run (resolved from `[placement]`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementParams {
    /// Hosts sampled per placement.
    pub candidates: usize,
    /// Utilization above which a ToR is hot.
    pub hot_threshold: f64,
    /// Sampling period of ToR utilization, seconds.
    pub tick_s: f64,
    /// Detection window and migration period, seconds.
    pub detect_s: f64,
    /// Migrations per job per detection window.
    pub budget_per_window: u32,
}

/// A running flow of a compute task.
#[derive(Debug, Clone)]
struct PFlow {
    /// Runner task id of its job.
    job: u64,
    /// Sending and receiving task (indices in the job).
    src: usize,
    dst: usize,
    /// Size of this flow, bytes.
    bytes: f64,
    cap: Option<f64>,
}

/// A placed job.
#[derive(Debug, Clone)]
struct Job {
    ordinal: u32,
    /// Current host of each task.
    hosts: Vec<HostId>,
    cores: u32,
    mem: f64,
    estimate_bps: f64,
    /// Running flows each task sends or receives (engine ids).
    flows: Vec<Vec<u64>>,
    /// Whether each task holds its cores and memory.
    live: Vec<bool>,
    /// Its row in `placements`, per task.
    rows: Vec<usize>,
    migrations_this_window: u32,
}

/// A flow to cancel and the one that carries on its bytes (see the module
/// docs); `Decisions` routes, classes and starts it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    /// Runner task id of the job.
    pub task_id: u64,
    /// The running flow to cancel.
    pub old: u64,
    /// Bytes it delivered until now.
    pub sent: f64,
    /// The new flow: id, endpoints, bytes left, rate cap.
    pub new: u64,
    /// Source host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// Bytes not yet delivered.
    pub bytes: f64,
    /// Rate cap, bits/s.
    pub cap: Option<f64>,
}

/// The placement policy of a run (see the module docs).
pub struct PlacementRun {
    policy: Box<dyn PlacementPolicy>,
    /// Its parameters.
    pub params: PlacementParams,
    rng: ChaCha8Rng,
    free_cores: Vec<f64>,
    free_mem: Vec<f64>,
    rack_hosts: Vec<Vec<HostId>>,
    /// Tasks holding resources on each host: (runner task id, task index).
    on_host: Vec<Vec<(u64, usize)>>,
    tors: HotTors,
    jobs: BTreeMap<u64, Job>,
    /// Compute jobs placed so far.
    placed_jobs: u32,
    flows: HashMap<u64, PFlow>,
    /// Flow carrying on a moved flow's bytes -> the runner's flow.
    root: HashMap<u64, u64>,
    /// Flows cut by a migration: (time, bytes delivered).
    pub(crate) cut: HashMap<u64, (f64, f64)>,
    next_id: u64,
    pub(crate) placements: Vec<PlacementOut>,
    pub(crate) migrations: Vec<MigrationOut>,
    pub(crate) overcommits: u64,
    /// The decisions and the state each was taken on, when recorded.
    pub(crate) record: Option<Vec<Decision>>,
}

impl PlacementRun {
    /// A run of `policy` on `topo`.
    pub fn new(policy: Box<dyn PlacementPolicy>, params: PlacementParams, topo: &Topology, seed: u64) -> Self {
        let hosts = topo.hosts();
        let mut rack_hosts = vec![Vec::new(); topo.racks().len()];
        for (h, host) in hosts.iter().enumerate() {
            rack_hosts[host.rack as usize].push(h as HostId);
        }
        Self {
            tors: HotTors::new(topo.tors().len(), params.hot_threshold, params.tick_s, params.detect_s),
            policy,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x9_1ace_0e57),
            free_cores: hosts.iter().map(|h| f64::from(h.cores)).collect(),
            free_mem: hosts.iter().map(|h| h.memory_bytes).collect(),
            rack_hosts,
            on_host: vec![Vec::new(); hosts.len()],
            jobs: BTreeMap::new(),
            placed_jobs: 0,
            flows: HashMap::new(),
            root: HashMap::new(),
            cut: HashMap::new(),
            next_id: MIGRATED_FLOW_BASE,
            placements: Vec::new(),
            migrations: Vec::new(),
            overcommits: 0,
            record: None,
        }
    }

    /// Whether the policy moves tasks off hot ToRs.
    pub fn migrates(&self) -> bool {
        self.policy.migrates()
    }

    /// The best host for a task of `cores` cores and `mem` bytes with demand
    /// estimate `est`, next to the job's other tasks on `others`, on none
    /// of `exclude` and not under ToR `avoid`; with `overcommit`, a host
    /// without room when none has it. Returns the host, the live
    /// utilization of its ToR and whether it had no room.
    #[allow(clippy::too_many_arguments)]
    fn choose(
        &mut self,
        topo: &Topology,
        ctx: &Ctx<'_, '_>,
        (cores, mem, est): (u32, f64, f64),
        others: &[HostId],
        exclude: &[HostId],
        avoid: Option<u32>,
        overcommit: bool,
    ) -> Option<(HostId, f64, bool)> {
        let n = topo.hosts().len() as u32;
        let (fc, fm) = (&self.free_cores, &self.free_mem);
        let allowed = |s: u32| !exclude.contains(&s) && avoid != Some(topo.hosts()[s as usize].rack);
        let fits = |s: u32| fc[s as usize] >= f64::from(cores) && fm[s as usize] >= mem && allowed(s);
        let mut sample = sample_servers(&mut self.rng, n, self.params.candidates, fits);
        let mut over = false;
        if sample.is_empty() && overcommit {
            sample = (0..n).filter(|&s| allowed(s)).collect();
            over = true;
        }
        if sample.is_empty() {
            return None;
        }
        let ask = TaskAsk { cores, memory_bytes: mem, estimate_bps: est };
        let sample: Vec<(HostId, f64)> = sample.iter().map(|&s| (s, self.free_cores[s as usize])).collect();
        let ranked = rank_hosts(self.policy.as_ref(), topo, &EngineTors { topo, ctx }, &ask, others, &sample);
        let best = ranked.first()?;
        let (s, u) = (best.candidate.server, best.tor_util);
        if let Some(log) = self.record.as_mut() {
            let mut racks: Vec<usize> = sample.iter().map(|&(h, _)| topo.hosts()[h as usize].rack as usize).collect();
            racks.sort_unstable();
            racks.dedup();
            let uplinks = racks
                .iter()
                .flat_map(|&r| topo.tors()[r].up.iter())
                .map(|&l| (l, ctx.link_rate_bps(l), ctx.link_capacity_bps(l)))
                .collect();
            log.push(Decision::Task { time_s: ctx.now(), ask, others: others.to_vec(), sample, uplinks, chosen: s });
        }
        Some((s, u, over))
    }

    fn hold(&mut self, h: HostId, job: u64, k: usize, cores: u32, mem: f64) {
        self.free_cores[h as usize] -= f64::from(cores);
        self.free_mem[h as usize] -= mem;
        self.on_host[h as usize].push((job, k));
    }

    fn release_host(&mut self, h: HostId, job: u64, k: usize, cores: u32, mem: f64) {
        self.free_cores[h as usize] += f64::from(cores);
        self.free_mem[h as usize] += mem;
        self.on_host[h as usize].retain(|&x| x != (job, k));
    }

    /// Places the tasks of the compute job `task_id` starting now and
    /// rewrites its flow steps to their hosts. Other DAGs are left alone.
    pub fn place_job(
        &mut self,
        topo: &Topology,
        ctx: &Ctx<'_, '_>,
        task_id: u64,
        dag: &mut TaskDag,
    ) -> Result<(), String> {
        let Some(jt) = dag.job.as_deref() else { return Ok(()) };
        let (generated, cores, mem, est) = (jt.hosts.clone(), jt.cores, jt.memory_bytes, jt.estimate_bps);
        let now = ctx.now();
        let ordinal = self.placed_jobs;
        self.placed_jobs += 1;
        let mut hosts: Vec<HostId> = Vec::with_capacity(generated.len());
        let mut rows = Vec::with_capacity(generated.len());
        for k in 0..generated.len() {
            let Some((h, util, over)) = self.choose(topo, ctx, (cores, mem, est), &hosts, &hosts, None, true) else {
                return Err(format!(
                    "placement.policy: task {k} of job {task_id} has no host left without another task of its job ({} hosts)",
                    topo.hosts().len()
                ));
            };
            self.overcommits += u64::from(over);
            self.hold(h, task_id, k, cores, mem);
            hosts.push(h);
            rows.push(self.placements.len());
            self.placements.push(PlacementOut {
                task_id,
                job: ordinal,
                task: k as u32,
                host: h,
                rack: topo.hosts()[h as usize].rack,
                tor_util: util,
                start_s: now,
                finish_s: f64::NAN,
                migrated: false,
            });
        }
        let index = |h: HostId| generated.iter().position(|&g| g == h);
        for s in dag.steps.iter_mut() {
            if let Step::Flow { src, dst, .. } = s {
                if let (Some(a), Some(b)) = (index(*src), index(*dst)) {
                    *src = hosts[a];
                    *dst = hosts[b];
                }
            }
        }
        let n = hosts.len();
        self.jobs.insert(
            task_id,
            Job {
                ordinal,
                hosts,
                cores,
                mem,
                estimate_bps: est,
                flows: vec![Vec::new(); n],
                live: vec![true; n],
                rows,
                migrations_this_window: 0,
            },
        );
        Ok(())
    }

    /// A flow of job `task_id` entered the engine (from the runner).
    pub fn flow_started(&mut self, task_id: u64, id: u64, src: HostId, dst: HostId, bytes: f64, cap: Option<f64>) {
        let Some(job) = self.jobs.get_mut(&task_id) else { return };
        let (Some(a), Some(b)) = (job.hosts.iter().position(|&h| h == src), job.hosts.iter().position(|&h| h == dst))
        else {
            return;
        };
        job.flows[a].push(id);
        job.flows[b].push(id);
        self.flows.insert(id, PFlow { job: task_id, src: a, dst: b, bytes, cap });
    }

    /// The runner's id of a flow (itself, or the flow whose bytes it carries on).
    pub fn runner_flow(&self, id: u64) -> u64 {
        self.root.get(&id).copied().unwrap_or(id)
    }

    /// Flow `id` finished at `now`: a task whose flows have all finished
    /// releases its cores and memory.
    pub fn flow_done(&mut self, now: f64, id: u64) {
        let Some(f) = self.flows.remove(&id) else { return };
        let Some(job) = self.jobs.get_mut(&f.job) else { return };
        let mut done = Vec::new();
        for k in [f.src, f.dst] {
            job.flows[k].retain(|&x| x != id);
            if job.flows[k].is_empty() && job.live[k] {
                done.push(k);
            }
        }
        for k in done {
            self.release(now, f.job, k);
        }
    }

    fn release(&mut self, now: f64, job_id: u64, k: usize) {
        let Some(job) = self.jobs.get_mut(&job_id) else { return };
        if !job.live[k] {
            return;
        }
        job.live[k] = false;
        let (h, cores, mem, row) = (job.hosts[k], job.cores, job.mem, job.rows[k]);
        self.placements[row].finish_s = now;
        self.release_host(h, job_id, k, cores, mem);
    }

    /// Every step of runner task `task_id` finished: a compute job releases
    /// what its tasks still hold.
    pub fn job_finished(&mut self, now: f64, task_id: u64) {
        let Some(job) = self.jobs.get(&task_id) else { return };
        for k in 0..job.live.len() {
            self.release(now, task_id, k);
        }
        self.jobs.remove(&task_id);
    }

    /// Samples ToR utilization (the `tick` timer). Returns whether compute
    /// flows still move (ticking is worth it).
    pub fn tick(&mut self, topo: &Topology, ctx: &Ctx<'_, '_>) -> bool {
        self.tors.sample(topo, ctx);
        self.flows.keys().any(|&f| ctx.flow_rate_bps(f).is_some_and(|r| r > 0.0))
    }

    /// Moves tasks off hot ToRs (the `detect` timer); returns the flows to
    /// cancel and start again.
    pub fn detect(&mut self, topo: &Topology, ctx: &Ctx<'_, '_>) -> Vec<Rewrite> {
        let mut out = Vec::new();
        if !self.policy.migrates() {
            return out;
        }
        let budget = self.params.budget_per_window;
        for t in 0..topo.tors().len() {
            if !self.tors.is_hot(t) {
                continue;
            }
            let mut cands = Vec::new();
            let mut refs = Vec::new();
            for &h in &self.rack_hosts[t] {
                for &(jid, k) in &self.on_host[h as usize] {
                    let job = &self.jobs[&jid];
                    let rate: f64 = job.flows[k]
                        .iter()
                        .filter_map(|f| self.flows.get(f).map(|p| (f, p)))
                        .filter(|(_, p)| p.src == k && topo.hosts()[job.hosts[p.dst] as usize].rack as usize != t)
                        .filter_map(|(f, _)| ctx.flow_rate_bps(*f))
                        .sum();
                    cands.push(MigrationCandidate {
                        task: refs.len(),
                        rate_bps: rate,
                        latency_sensitive: false,
                        budget_left: job.migrations_this_window < budget,
                    });
                    refs.push((jid, k, rate));
                }
            }
            let cap = tor_capacity_bps(topo, ctx, t);
            let rate = self.tors.util(t) * cap;
            let mut moved = 0;
            let picked = pick_migrations(&cands, rate, cap, self.params.hot_threshold);
            if let Some(log) = self.record.as_mut() {
                log.push(Decision::Migration {
                    time_s: ctx.now(),
                    tor: t as u32,
                    tor_rate_bps: rate,
                    tor_capacity_bps: cap,
                    threshold: self.params.hot_threshold,
                    candidates: cands.clone(),
                    picked: picked.clone(),
                });
            }
            for i in picked {
                let (jid, k, rate) = refs[i];
                if self.jobs[&jid].migrations_this_window >= budget {
                    continue;
                }
                if let Some(mut rw) = self.migrate(topo, ctx, jid, k, t as u32, rate) {
                    self.jobs.get_mut(&jid).expect("placed").migrations_this_window += 1;
                    moved += 1;
                    out.append(&mut rw);
                }
            }
            if moved > 0 {
                self.tors.clear(t);
            }
        }
        for j in self.jobs.values_mut() {
            j.migrations_this_window = 0;
        }
        out
    }

    /// Moves task `k` of job `jid` off ToR `tor`; `None` when no host off
    /// it has room.
    fn migrate(
        &mut self,
        topo: &Topology,
        ctx: &Ctx<'_, '_>,
        jid: u64,
        k: usize,
        tor: u32,
        rate: f64,
    ) -> Option<Vec<Rewrite>> {
        let job = &self.jobs[&jid];
        let (cores, mem, est, from) = (job.cores, job.mem, job.estimate_bps, job.hosts[k]);
        let others: Vec<HostId> =
            job.hosts.iter().enumerate().filter(|&(i, _)| i != k && job.live[i]).map(|(_, &h)| h).collect();
        let exclude = job.hosts.clone();
        let (to, util, _) = self.choose(topo, ctx, (cores, mem, est), &others, &exclude, Some(tor), false)?;
        let now = ctx.now();
        self.release_host(from, jid, k, cores, mem);
        self.hold(to, jid, k, cores, mem);
        let job = self.jobs.get_mut(&jid).expect("placed");
        job.hosts[k] = to;
        let ordinal = job.ordinal;
        // The task's stay on `from` ends; one on `to` begins.
        self.placements[job.rows[k]].finish_s = now;
        job.rows[k] = self.placements.len();
        self.placements.push(PlacementOut {
            task_id: jid,
            job: ordinal,
            task: k as u32,
            host: to,
            rack: topo.hosts()[to as usize].rack,
            tor_util: util,
            start_s: now,
            finish_s: f64::NAN,
            migrated: true,
        });
        let mut out = Vec::new();
        for old in job.flows[k].clone() {
            let Some(f) = self.flows.get(&old).cloned() else { continue };
            let sent = ctx.flow_bytes_sent(old).unwrap_or(0.0);
            let left = f.bytes - sent;
            if left <= 0.0 {
                continue; // finishing this instant
            }
            let new = self.next_id;
            self.next_id += 1;
            let (src, dst) = (job.hosts[f.src], job.hosts[f.dst]);
            for e in [f.src, f.dst] {
                for x in job.flows[e].iter_mut().filter(|x| **x == old) {
                    *x = new;
                }
            }
            self.flows.remove(&old);
            self.flows.insert(new, PFlow { bytes: left, ..f.clone() });
            let root = self.root.remove(&old).unwrap_or(old);
            self.root.insert(new, root);
            self.cut.insert(old, (now, sent));
            out.push(Rewrite { task_id: jid, old, sent, new, src, dst, bytes: left, cap: f.cap });
        }
        self.migrations.push(MigrationOut {
            time_s: now,
            task_id: jid,
            job: ordinal,
            task: k as u32,
            from_host: from,
            to_host: to,
            tor,
            rate_bps: rate,
            bytes_moved: out.iter().map(|r| r.bytes).sum(),
        });
        Some(out)
    }
}
