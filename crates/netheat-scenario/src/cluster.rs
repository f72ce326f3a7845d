//! `[placement]` over a `cluster` application: a Borg-like scheduler
//! placing the jobs the workload drew
//! ([`netheat_workloads::apps::cluster`]) on the flow engine, the hotspot
//! paper's setting for UTP (§5.1).
//!
//! * **Tasks.** A task asks cores and memory; once placed it runs for its
//!   drawn time and, while it runs, sends a flow capped at its demand to its
//!   peer server (moved to the next rack's server when the peer shares its
//!   rack), carrying `demand x time left` bytes, so ToR utilization is what
//!   the engine measures. When the task ends, a flow still sending is cut.
//! * **Placement** (when a job arrives, task by task): `candidates` uniform
//!   draws of servers with the task's free cores and memory
//!   ([`netheat_sched::sample_servers`]), ranked by the policy
//!   ([`netheat_sched::PlacementPolicy::choose`]); UTP's ToR objective is the
//!   candidate ToR's last sampled outbound utilization plus the task's
//!   historical estimate over the capacity in force. A job without an
//!   estimate uses the mean demand of its running tasks (counted as
//!   `estimate_fallbacks`). A task that fits nowhere waits **pending** and
//!   is retried every tick.
//! * **Detection** every `tick` (from `tick / 2`), as
//!   [`netheat_sched::HotTors`]: hot = the mean of a detection window of
//!   samples above `hot-threshold` (the paper's 5-minute average, §3.1).
//! * **Drift and migration** every `detect`: a share of the running tasks'
//!   demands drift by a log-normal factor (their flows' caps follow); then
//!   migrating policies move, off each hot ToR, the latency-tolerant tasks
//!   with the largest measured rates, fewest first
//!   ([`netheat_sched::pick_migrations`]), within each job's budget of
//!   migrations per window, to the best server under another ToR. A
//!   migrated task is *restarted*: it loses the work done since it last
//!   started and, after `placement.restart-delay`, runs again in full (the
//!   paper gives no migration cost; see [`crate::config::PlacementSection`]).
//! * **Queries**: every `query-period` one query of each kind, its workers
//!   placed by the same path as the tasks (the paper's QuerySys workers are
//!   Borg tasks UTP places), reading partitions from random storage servers,
//!   shuffling through random in-memory servers and writing their output
//!   ([`netheat_workloads::apps::analytics::AnalyticalQuery`]); each is a
//!   `query-<name>` row of `tasks`.
//!
//! The tasks' and the queries' flows go through the scenario's routing
//! policy (`ecmp`, or a load balancer that routes and re-binds them:
//! `adaptive`, `detour`, `subways-ecmp`): [`ClusterHooks`].
//!
//! Measured from the engine's link windows (`scenario.window`) after
//! `scenario.warmup`, in `stats.json`: `placement_hot_tor_share` (share of
//! ToR-windows whose outbound utilization, over the uplink capacity in
//! force, is above `hot-threshold`), `placement_p98_tor_util`,
//! `placement_cell_util` (the paper's Figure 16 average cell-level
//! utilization: egress bytes of every ToR over their uplink capacity),
//! besides `migrations`, `net_intensive_on_hot_share` (over the run) and
//! `measured_migrations`, `measured_net_intensive_on_hot_share` (from the
//! warm-up on, as the ToR measures) and, of those placements on hot ToRs,
//! `measured_on_hot_calm_now_share` (the ToR's instantaneous utilization,
//! which the policy ranks by, at or below the threshold) and
//! `measured_on_hot_<why>_share` for each [`HotChoice`] (why the chosen
//! server beat the sampled candidates under ToRs not hot), `servers_used`
//! and `cpu_imbalance`
//! (means over the ticks after the warm-up), `max_tasks_per_rack`,
//! `pending` and `estimate_fallbacks`.

use std::collections::HashMap;

use netheat_core::{stats, HostId, LinkId, Routing};
use netheat_engine::{Ctx, FlowRecord, FlowSpec, LinkWindows, Route};
use netheat_sched::{
    pick_migrations, projected_tor, sample_servers, tor_capacity_bps, Candidate, HotTors, MigrationCandidate,
    Objective, PlacementPolicy,
};
use netheat_topology::Topology;
use netheat_workloads::apps::analytics::AnalyticalQuery;
use netheat_workloads::apps::cluster::{ClusterJobs, ClusterWorkload};
use netheat_workloads::storage::WriteModel;
use netheat_workloads::{DagRunner, FlowHooks, StepId, TaskDag};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::placement::PlacementParams;
use crate::result::{MigrationOut, PlacementOut, ScenarioResult, TaskOut};

/// `placement.restart-delay` by default: Borg's median task startup
/// latency (see [`crate::config::PlacementSection::restart_delay`]).
pub const RESTART_DELAY_S: f64 = 25.0;

/// Flow ids of the cluster's tasks start here (above the runner's, below
/// [`crate::placement::MIGRATED_FLOW_BASE`]).
pub const FLOW_BASE: u64 = 1 << 60;
/// Flow ids of its queries.
const QUERY_FLOW_BASE: u64 = FLOW_BASE + (1 << 58);
/// Its timer tokens: `[TOKEN_BASE, TOKEN_BASE + 2^51)` (the runner's count
/// up from 0; the scenario's own are at the top of the range).
pub const TOKEN_BASE: u64 = 1 << 56;
const T_TICK: u64 = TOKEN_BASE;
const T_DETECT: u64 = TOKEN_BASE + 1;
const T_QUERY: u64 = TOKEN_BASE + 2;
/// `[T_END, T_JOB)`: task `token - T_END` ends.
const T_END: u64 = TOKEN_BASE + (1 << 20);
/// `[T_JOB, T_READY)`: job `token - T_JOB` arrives.
const T_JOB: u64 = TOKEN_BASE + (1 << 40);
/// `[T_READY, Q_TOKEN_BASE)`: restarted task `token - T_READY` sends again.
const T_READY: u64 = TOKEN_BASE + (1 << 45);
/// The query runner's timers.
const Q_TOKEN_BASE: u64 = TOKEN_BASE + (1 << 50);
const TOKEN_END: u64 = TOKEN_BASE + (1 << 51);

#[derive(Debug, Clone)]
struct Task {
    job: usize,
    /// Index in its job.
    index: u32,
    cores: u32,
    mem: f64,
    demand: f64,
    estimate: Option<f64>,
    end_s: f64,
    server: Option<u32>,
    flow: Option<u64>,
    peer: u32,
    done: bool,
    last_rack: Option<u32>,
    /// When its current run started (the progress a restart loses), s.
    run_start_s: f64,
    /// It sends nothing before this time (restart delay), s.
    ready_s: f64,
    /// Its open row in `placements`.
    row: Option<usize>,
    finish_s: f64,
}

#[derive(Debug, Clone)]
struct Job {
    start_s: f64,
    latency_sensitive: bool,
    tasks: Vec<usize>,
    migrations_this_window: u32,
    flows: u64,
    bytes: f64,
}

/// A running query: its runner task, the servers (and cores) its workers
/// hold, and its first row in `placements`.
type RunningQuery = (usize, Vec<(u32, u32)>, usize);

/// How the cluster's flows enter and leave the run: the scenario's
/// routing policy routes them (a load balancer re-binds them like any
/// other flow).
pub trait ClusterHooks {
    /// Starts `spec`, a flow of the job whose row of `tasks` is `task_id`.
    fn start(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, spec: FlowSpec);
    /// Flow `id` was cut after delivering `sent` bytes.
    fn cut(&mut self, id: u64, sent: f64);
    /// The route (and class) of `spec`, a flow of the query whose row of
    /// `tasks` is `task_id`, which the query runner starts.
    fn route(&mut self, task_id: u64, spec: &mut FlowSpec);
}

/// The query runner's hooks: each query flow routed by [`ClusterHooks`].
struct QueryRoutes<'a>(&'a mut dyn ClusterHooks);

impl FlowHooks for QueryRoutes<'_> {
    fn flow(&mut self, _: &mut Ctx<'_, '_>, task_id: u64, _: &TaskDag, _: StepId, spec: &mut FlowSpec) {
        self.0.route(task_id, spec);
    }
}

/// What one placement asks for.
struct Ask {
    cores: u32,
    mem: f64,
    /// Peak demand estimate, bits/s (read only by network-aware policies).
    est: f64,
}

/// The cluster of a run: its jobs, the scheduler's state and what it
/// measured (see the module docs).
pub struct ClusterRun<'t> {
    topo: &'t Topology,
    jobs_params: ClusterJobs,
    params: PlacementParams,
    restart_delay_s: f64,
    until_s: f64,
    warmup_s: f64,
    policy: Box<dyn PlacementPolicy>,
    rng: ChaCha8Rng,
    tasks: Vec<Task>,
    jobs: Vec<Job>,
    /// Workload table of the app.
    table: usize,
    /// Task id (row of `tasks`) of job 0; queries follow the jobs.
    job_id_base: u64,
    free_cores: Vec<f64>,
    free_mem: Vec<f64>,
    server_tasks: Vec<Vec<usize>>,
    next_flow: u64,
    /// Flow id -> task.
    flow_task: HashMap<u64, usize>,
    /// Flows cut when their task ended or moved: when, and bytes delivered.
    pub cut: HashMap<u64, (f64, f64)>,
    tors: HotTors,
    pending: Vec<usize>,
    intensive_cut: f64,
    queries: DagRunner,
    query_type: Vec<usize>,
    active_queries: Vec<RunningQuery>,
    worker_peak_bps: f64,
    /// Stays of tasks on servers.
    pub placements: Vec<PlacementOut>,
    /// Migrations, in order.
    pub migrations: Vec<MigrationOut>,
    placed: u64,
    net_intensive: u64,
    net_intensive_on_hot: u64,
    /// The same two counts from the warm-up on.
    measured_net_intensive: u64,
    measured_net_intensive_on_hot: u64,
    /// Of those on hot ToRs: how many the ToR's instantaneous utilization
    /// (what the policy ranks by) put at or below the hot threshold, and
    /// how many of each [`HotChoice`].
    measured_on_hot_calm_now: u64,
    measured_on_hot_by_choice: [u64; 5],
    /// Why the last choice, if on a hot ToR, beat the candidates under
    /// ToRs not hot.
    last_choice: HotChoice,
    estimate_fallbacks: u64,
    queries_unplaced: u64,
    lost_work_s: f64,
    ticks: u64,
    servers_used: f64,
    cpu_imbalance: f64,
    /// The first error, if any.
    pub error: Option<String>,
}

impl<'t> ClusterRun<'t> {
    /// The cluster of workload table `table` on `topo`, scheduled by
    /// `policy` with `params` until `until_s`, measured after `warmup_s`.
    pub fn new(
        topo: &'t Topology,
        (table, w): (usize, ClusterWorkload),
        (policy, params): (Box<dyn PlacementPolicy>, PlacementParams),
        restart_delay_s: f64,
        (until_s, warmup_s): (f64, f64),
        seed: u64,
    ) -> Self {
        let job_id_base = 0;
        let jobs_params = w.params.clone().unwrap_or_default();
        let mut tasks = Vec::with_capacity(w.num_tasks());
        let mut jobs = Vec::with_capacity(w.jobs.len());
        let mut estimates = Vec::new();
        for (j, job) in w.jobs.into_iter().enumerate() {
            let mut ids = Vec::with_capacity(job.tasks.len());
            for (k, t) in job.tasks.into_iter().enumerate() {
                estimates.extend(t.estimate_bps);
                ids.push(tasks.len());
                tasks.push(Task {
                    job: j,
                    index: k as u32,
                    cores: t.cores,
                    mem: t.memory_bytes,
                    demand: t.demand_bps,
                    estimate: t.estimate_bps,
                    end_s: job.start_s + t.duration_s,
                    server: None,
                    flow: None,
                    peer: t.peer,
                    done: false,
                    last_rack: None,
                    run_start_s: job.start_s,
                    ready_s: job.start_s,
                    row: None,
                    finish_s: f64::NAN,
                });
            }
            jobs.push(Job {
                start_s: job.start_s,
                latency_sensitive: job.latency_sensitive,
                tasks: ids,
                migrations_this_window: 0,
                flows: 0,
                bytes: 0.0,
            });
        }
        // Network-intensive: a demand estimate in the top decile.
        estimates.sort_by(f64::total_cmp);
        let intensive_cut = estimates.get(estimates.len() * 9 / 10).copied().unwrap_or(f64::INFINITY);
        let hosts = topo.hosts();
        let query_base = job_id_base + jobs.len() as u64;
        Self {
            topo,
            tors: HotTors::new(topo.tors().len(), params.hot_threshold, params.tick_s, params.detect_s),
            jobs_params,
            restart_delay_s,
            until_s,
            warmup_s,
            policy,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5C4E_D000),
            tasks,
            jobs,
            table,
            job_id_base,
            free_cores: hosts.iter().map(|h| f64::from(h.cores)).collect(),
            free_mem: hosts.iter().map(|h| h.memory_bytes).collect(),
            server_tasks: vec![Vec::new(); hosts.len()],
            next_flow: FLOW_BASE,
            flow_task: HashMap::new(),
            cut: HashMap::new(),
            pending: Vec::new(),
            intensive_cut,
            queries: DagRunner::with_id_bases(QUERY_FLOW_BASE, Q_TOKEN_BASE, query_base),
            query_type: Vec::new(),
            active_queries: Vec::new(),
            worker_peak_bps: hosts.iter().map(|h| h.ports.iter().map(|p| p.speed_bps).sum::<f64>()).fold(0.0, f64::max),
            placements: Vec::new(),
            migrations: Vec::new(),
            params,
            placed: 0,
            net_intensive: 0,
            net_intensive_on_hot: 0,
            measured_net_intensive: 0,
            measured_net_intensive_on_hot: 0,
            measured_on_hot_calm_now: 0,
            measured_on_hot_by_choice: [0; 5],
            last_choice: HotChoice::NoCool,
            estimate_fallbacks: 0,
            queries_unplaced: 0,
            lost_work_s: 0.0,
            ticks: 0,
            servers_used: 0.0,
            cpu_imbalance: 0.0,
            error: None,
        }
    }

    /// Tasks of every job.
    pub fn num_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Its jobs' rows of `tasks` get ids from `base` on, its queries' after
    /// them (before the run).
    pub fn set_task_id_base(&mut self, base: u64) {
        self.job_id_base = base;
        self.queries = DagRunner::with_id_bases(QUERY_FLOW_BASE, Q_TOKEN_BASE, base + self.jobs.len() as u64);
    }

    /// The timers that start it: every job's arrival, the first tick
    /// (half a tick in), detection and query launches.
    pub fn install(&self, sim: &mut netheat_engine::Simulation<'_>) -> Result<(), netheat_engine::EngineError> {
        for (j, job) in self.jobs.iter().enumerate() {
            sim.schedule_timer(job.start_s, T_JOB + j as u64)?;
        }
        sim.schedule_timer(self.params.tick_s / 2.0, T_TICK)?;
        sim.schedule_timer(self.params.detect_s, T_DETECT)?;
        if !self.jobs_params.queries.is_empty() {
            sim.schedule_timer(self.jobs_params.query_period_s, T_QUERY)?;
        }
        Ok(())
    }

    /// When it stops: no timer of its fires after this, seconds.
    pub fn until_s(&self) -> f64 {
        self.until_s
    }

    /// Whether flow `id` is the cluster's.
    pub fn owns_flow(id: u64) -> bool {
        (FLOW_BASE..crate::placement::MIGRATED_FLOW_BASE).contains(&id)
    }

    /// Whether timer `token` is the cluster's.
    pub fn owns_timer(token: u64) -> bool {
        (TOKEN_BASE..TOKEN_END).contains(&token)
    }

    fn fail(&mut self, e: impl ToString) {
        self.error.get_or_insert_with(|| e.to_string());
    }

    /// The peak estimate the scheduler uses for task `i`.
    fn estimate(&mut self, i: usize) -> f64 {
        if let Some(e) = self.tasks[i].estimate {
            return e;
        }
        self.estimate_fallbacks += 1;
        // Observed usage: the mean demand of the job's running tasks.
        let job = &self.jobs[self.tasks[i].job];
        let running: Vec<f64> = job
            .tasks
            .iter()
            .filter(|&&t| t != i && self.tasks[t].server.is_some() && !self.tasks[t].done)
            .map(|&t| self.tasks[t].demand)
            .collect();
        if running.is_empty() {
            0.0
        } else {
            running.iter().sum::<f64>() / running.len() as f64
        }
    }

    /// The one placement path of every task (jobs' tasks, migrations and
    /// query workers): samples servers that fit `ask` (not under
    /// `avoid_rack`) and returns the policy's choice; `None` when nothing
    /// fits.
    fn choose_server(
        &mut self,
        ctx: &Ctx<'_, '_>,
        ask: &Ask,
        others_racks: &[u32],
        avoid_rack: Option<u32>,
    ) -> Option<u32> {
        let topo = self.topo;
        let n = topo.hosts().len() as u32;
        let (free_cores, free_mem) = (&self.free_cores, &self.free_mem);
        let fits = |s: u32| {
            free_cores[s as usize] >= f64::from(ask.cores)
                && free_mem[s as usize] >= ask.mem
                && avoid_rack != Some(topo.hosts()[s as usize].rack)
        };
        let sample = sample_servers(&mut self.rng, n, self.params.candidates, fits);
        if sample.is_empty() {
            return None;
        }
        let cands: Vec<Candidate> = sample
            .iter()
            .map(|&s| {
                let h = &topo.hosts()[s as usize];
                let in_rack = others_racks.iter().filter(|&&r| r == h.rack).count() as u32;
                let cap = tor_capacity_bps(topo, ctx, h.rack as usize);
                let projected = projected_tor(self.tors.util(h.rack as usize), ask.est, cap);
                Candidate::new(s, in_rack, h.cores, self.free_cores[s as usize], ask.cores, projected)
            })
            .collect();
        let k = self.policy.choose(&cands)?;
        // For the diagnostics of placements on hot ToRs: the candidates
        // under ToRs not hot (5-minute average), and whether the choice beat
        // all of them on an objective above the load-balance one.
        let threshold = self.params.hot_threshold;
        self.last_choice = HotChoice::NoCool;
        if self.tors.avg(topo.hosts()[cands[k].server as usize].rack as usize) <= threshold {
            return Some(cands[k].server);
        }
        let cool: Vec<bool> =
            cands.iter().map(|c| self.tors.avg(topo.hosts()[c.server as usize].rack as usize) <= threshold).collect();
        self.last_choice = HotChoice::of(&cands, k, &cool, self.policy.as_ref());
        Some(cands[k].server)
    }

    /// Places task `i` (not under `avoid_rack`); false when nothing fits.
    fn place(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        h: &mut dyn ClusterHooks,
        i: usize,
        avoid_rack: Option<u32>,
        migrated: bool,
    ) -> Option<u32> {
        let est = if self.policy.network_aware() { self.estimate(i) } else { self.tasks[i].estimate.unwrap_or(0.0) };
        let ask = Ask { cores: self.tasks[i].cores, mem: self.tasks[i].mem, est };
        let hosts = self.topo.hosts();
        let others: Vec<u32> = self.jobs[self.tasks[i].job]
            .tasks
            .iter()
            .filter(|&&t| t != i && !self.tasks[t].done)
            .filter_map(|&t| self.tasks[t].server.map(|x| hosts[x as usize].rack))
            .collect();
        let s = self.choose_server(ctx, &ask, &others, avoid_rack)?;
        self.start_on(ctx, h, i, s, migrated);
        Some(s)
    }

    fn start_on(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks, i: usize, s: u32, migrated: bool) {
        let now = ctx.now();
        let rack = self.topo.hosts()[s as usize].rack;
        self.free_cores[s as usize] -= f64::from(self.tasks[i].cores);
        self.free_mem[s as usize] -= self.tasks[i].mem;
        self.server_tasks[s as usize].push(i);
        self.placed += 1;
        if self.tasks[i].estimate.unwrap_or(self.tasks[i].demand) >= self.intensive_cut {
            // Hot as the paper defines a hotspot: the 5-minute average
            // above the threshold (§3.1).
            let hot = self.tors.avg(rack as usize) > self.params.hot_threshold;
            self.net_intensive += 1;
            self.net_intensive_on_hot += u64::from(hot);
            if now >= self.warmup_s {
                self.measured_net_intensive += 1;
                self.measured_net_intensive_on_hot += u64::from(hot);
                if hot {
                    let calm = self.tors.util(rack as usize) <= self.params.hot_threshold;
                    self.measured_on_hot_calm_now += u64::from(calm);
                    self.measured_on_hot_by_choice[self.last_choice as usize] += 1;
                }
            }
        }
        let t = &self.tasks[i];
        self.placements.push(PlacementOut {
            task_id: self.job_id_base + t.job as u64,
            job: t.job as u32,
            task: t.index,
            host: s,
            rack,
            tor_util: self.tors.util(rack as usize),
            start_s: now,
            finish_s: f64::NAN,
            migrated,
        });
        let row = self.placements.len() - 1;
        let t = &mut self.tasks[i];
        t.server = Some(s);
        t.last_rack = Some(rack);
        t.row = Some(row);
        if now < t.ready_s {
            // Restarting: its traffic starts after the restart delay.
            let at = t.ready_s;
            if let Err(e) = ctx.schedule_timer(at, T_READY + i as u64) {
                self.fail(e);
            }
        } else {
            t.run_start_s = now;
            self.start_flow(ctx, h, i);
        }
    }

    /// Starts the traffic of task `i` on its server, to its end.
    fn start_flow(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks, i: usize) {
        let now = ctx.now();
        let Some(s) = self.tasks[i].server else { return };
        // The peer lives in another rack (storage / shuffle traffic).
        let topo = self.topo;
        let rack = topo.hosts()[s as usize].rack;
        let n = topo.hosts().len() as u32;
        let mut peer = self.tasks[i].peer % n;
        if topo.hosts()[peer as usize].rack == rack {
            peer = (peer + topo.hosts_per_rack()) % n;
        }
        let t = &mut self.tasks[i];
        let bytes = t.demand * (t.end_s - now).max(0.0) / 8.0;
        let id = self.next_flow;
        self.next_flow += 1;
        t.flow = Some(id);
        if bytes > 0.0 && peer != s {
            let job = t.job;
            let f = FlowSpec::new(id, s, peer, bytes, now, Route::Ecmp)
                .with_rate_cap(t.demand.max(1.0))
                .with_task(self.job_id_base + job as u64);
            self.flow_task.insert(id, i);
            self.jobs[job].flows += 1;
            h.start(ctx, self.job_id_base + job as u64, f);
        }
    }

    /// Frees task `i`'s server and cuts its flow, if still sending.
    fn stop(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks, i: usize) {
        let now = ctx.now();
        if let Some(s) = self.tasks[i].server.take() {
            self.free_cores[s as usize] += f64::from(self.tasks[i].cores);
            self.free_mem[s as usize] += self.tasks[i].mem;
            self.server_tasks[s as usize].retain(|&t| t != i);
        }
        if let Some(r) = self.tasks[i].row.take() {
            self.placements[r].finish_s = now;
        }
        if let Some(f) = self.tasks[i].flow.take() {
            if ctx.flow_rate_bps(f).is_some() && self.flow_task.remove(&f).is_some() {
                let sent = ctx.flow_bytes_sent(f).unwrap_or(0.0);
                self.jobs[self.tasks[i].job].bytes += sent;
                self.cut.insert(f, (now, sent));
                h.cut(f, sent);
                if let Err(e) = ctx.cancel_flow(f) {
                    self.fail(e);
                }
            }
        }
    }

    /// Restarts task `i` (stopped by a migration) now: the work done since
    /// it last started is lost, and it runs again in full after the restart
    /// delay, so its end moves by `lost work + delay`.
    fn restart(&mut self, ctx: &mut Ctx<'_, '_>, i: usize) {
        let now = ctx.now();
        let delay = self.restart_delay_s;
        let t = &mut self.tasks[i];
        let work = t.end_s - t.run_start_s;
        self.lost_work_s += now - t.run_start_s;
        t.end_s = now + delay + work;
        t.ready_s = now + delay;
        t.run_start_s = t.ready_s;
        let end = t.end_s;
        if let Err(e) = ctx.schedule_timer(end, T_END + i as u64) {
            self.fail(e);
        }
    }

    fn start_job(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks, j: usize) {
        for k in 0..self.jobs[j].tasks.len() {
            let i = self.jobs[j].tasks[k];
            if self.place(ctx, h, i, None, false).is_none() {
                self.pending.push(i);
            }
            let end = self.tasks[i].end_s;
            if let Err(e) = ctx.schedule_timer(end, T_END + i as u64) {
                self.fail(e);
            }
        }
    }

    fn detect(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks) {
        // Demand drifts away from its estimate.
        let (sigma, share) = (self.jobs_params.drift_sigma, self.jobs_params.drift_share);
        for i in 0..self.tasks.len() {
            if self.tasks[i].server.is_some() && !self.tasks[i].done && sigma > 0.0 && self.rng.gen::<f64>() < share {
                let z = netheat_workloads::sizes::std_normal(&mut self.rng);
                self.tasks[i].demand *= (sigma * z).exp();
                if let Some(f) = self.tasks[i].flow {
                    if ctx.flow_rate_bps(f).is_some() {
                        if let Err(e) = ctx.set_rate_cap(f, Some(self.tasks[i].demand.max(1.0))) {
                            self.fail(e);
                        }
                    }
                }
            }
        }
        if self.policy.migrates() {
            let topo = self.topo;
            let budget = self.params.budget_per_window;
            for t in 0..topo.tors().len() {
                if !self.tors.is_hot(t) {
                    continue;
                }
                let first = topo.racks()[t].first_host;
                let mut cands = Vec::new();
                for s in first..first + topo.hosts_per_rack() {
                    for &i in &self.server_tasks[s as usize] {
                        let job = &self.jobs[self.tasks[i].job];
                        cands.push(MigrationCandidate {
                            task: i,
                            rate_bps: self.tasks[i].flow.and_then(|f| ctx.flow_rate_bps(f)).unwrap_or(0.0),
                            latency_sensitive: job.latency_sensitive,
                            budget_left: job.migrations_this_window < budget,
                        });
                    }
                }
                let cap = tor_capacity_bps(topo, ctx, t);
                // The excess over the threshold of the 5-minute average (the
                // hotspot measure) is what the migrations remove.
                let rate = self.tors.avg(t) * cap;
                let mut moved = 0;
                for i in pick_migrations(&cands, rate, cap, self.params.hot_threshold) {
                    let j = self.tasks[i].job;
                    if self.jobs[j].migrations_this_window >= budget {
                        continue;
                    }
                    let from = self.tasks[i].server.unwrap_or(0);
                    let rate_bps = cands.iter().find(|c| c.task == i).map_or(0.0, |c| c.rate_bps);
                    self.stop(ctx, h, i);
                    self.restart(ctx, i);
                    match self.place(ctx, h, i, Some(t as u32), true) {
                        Some(to) => {
                            self.jobs[j].migrations_this_window += 1;
                            self.migrations.push(MigrationOut {
                                time_s: ctx.now(),
                                task_id: self.job_id_base + j as u64,
                                job: j as u32,
                                task: self.tasks[i].index,
                                from_host: from,
                                to_host: to,
                                tor: t as u32,
                                rate_bps,
                                bytes_moved: 0.0,
                            });
                            moved += 1;
                        }
                        None => self.pending.push(i),
                    }
                }
                if moved > 0 {
                    self.tors.clear(t);
                }
            }
        }
        for j in &mut self.jobs {
            j.migrations_this_window = 0;
        }
    }

    fn tick(&mut self, ctx: &mut Ctx<'_, '_>, h: &mut dyn ClusterHooks) {
        self.tors.sample(self.topo, ctx);
        // Retry pending tasks.
        for i in std::mem::take(&mut self.pending) {
            if !self.tasks[i].done && self.place(ctx, h, i, None, false).is_none() {
                self.pending.push(i);
            }
        }
        if ctx.now() >= self.warmup_s {
            self.ticks += 1;
            let mut used = 0;
            let mut utils = Vec::with_capacity(self.free_cores.len());
            for (s, h) in self.topo.hosts().iter().enumerate() {
                let u = 1.0 - self.free_cores[s] / f64::from(h.cores.max(1));
                used += u64::from(u > 0.0);
                utils.push(u);
            }
            let m = utils.iter().sum::<f64>() / utils.len() as f64;
            let sd = (utils.iter().map(|u| (u - m) * (u - m)).sum::<f64>() / utils.len() as f64).sqrt();
            self.servers_used += used as f64;
            self.cpu_imbalance += sd;
        }
    }

    fn launch_queries(&mut self, ctx: &mut Ctx<'_, '_>) {
        let topo = self.topo;
        let n = topo.hosts().len() as u32;
        for (k, q) in self.jobs_params.queries.clone().iter().enumerate() {
            // Workers: tasks placed by the policy, spread like a job's.
            let ask = Ask {
                cores: q.worker_cores,
                mem: self.jobs_params.memory_per_core * f64::from(q.worker_cores),
                est: self.worker_peak_bps,
            };
            let mut held: Vec<(u32, u32)> = Vec::with_capacity(q.workers);
            let mut racks: Vec<u32> = Vec::with_capacity(q.workers);
            for _ in 0..q.workers {
                let Some(s) = self.choose_server(ctx, &ask, &racks, None) else { break };
                self.free_cores[s as usize] -= f64::from(ask.cores);
                self.free_mem[s as usize] -= ask.mem;
                held.push((s, ask.cores));
                racks.push(topo.hosts()[s as usize].rack);
            }
            if held.len() < q.workers {
                self.queries_unplaced += 1;
                self.release(&held);
                continue;
            }
            let workers: Vec<HostId> = held.iter().map(|&(s, _)| s).collect();
            let mut pick = |m: usize| -> Vec<HostId> { (0..m).map(|_| self.rng.gen_range(0..n)).collect() };
            let storage = pick(q.workers);
            let shuffle = pick(q.workers.div_ceil(2));
            let aq = AnalyticalQuery {
                partition_bytes: q.partition_bytes,
                compute1_s: q.compute_s,
                intermediate_bytes: q.intermediate_bytes,
                compute2_s: q.compute_s,
                output_bytes: q.output_bytes,
                storage_kind: netheat_topology::StorageKind::Hdd,
                write_model: WriteModel::WriteBack { ack_s: 0.0 },
            };
            let started = aq
                .task(topo, &workers, &storage, &shuffle)
                .map_err(|e| e.to_string())
                .and_then(|dag| self.queries.add_task_now(ctx, ctx.now(), dag).map_err(|e| e.to_string()));
            match started {
                Ok(task) => {
                    // Each worker's stay, until the query finishes.
                    let first = self.placements.len();
                    for (w, &(s, _)) in held.iter().enumerate() {
                        let rack = topo.hosts()[s as usize].rack;
                        self.placements.push(PlacementOut {
                            task_id: self.queries.task_id_base() + task as u64,
                            job: task as u32,
                            task: w as u32,
                            host: s,
                            rack,
                            tor_util: self.tors.util(rack as usize),
                            start_s: ctx.now(),
                            finish_s: f64::NAN,
                            migrated: false,
                        });
                    }
                    self.query_type.push(k);
                    self.active_queries.push((task, held, first));
                }
                Err(e) => {
                    self.release(&held);
                    self.fail(format!("a query could not start: {e}"));
                }
            }
        }
    }

    /// Frees the cores and memory query workers held.
    fn release(&mut self, held: &[(u32, u32)]) {
        for &(s, c) in held {
            self.free_cores[s as usize] += f64::from(c);
            self.free_mem[s as usize] += self.jobs_params.memory_per_core * f64::from(c);
        }
    }

    /// Frees the workers of the queries that finished.
    fn reap_queries(&mut self) {
        let mut k = 0;
        while k < self.active_queries.len() {
            let finish = self.queries.record(self.active_queries[k].0).finish_s;
            if finish.is_finite() {
                let (_, held, first) = self.active_queries.swap_remove(k);
                for row in &mut self.placements[first..first + held.len()] {
                    row.finish_s = finish;
                }
                self.release(&held);
            } else {
                k += 1;
            }
        }
    }

    /// What it measured, into `out`: a `tasks` row per job and query, the
    /// placements (when `placements` is recorded) and migrations, and the
    /// stats of the module docs, read from the engine's link windows of
    /// `window_s` (`None`: not recorded).
    pub fn finish(
        mut self,
        out: &mut ScenarioResult,
        windows: Option<&LinkWindows>,
        window_s: f64,
        keep_placements: bool,
    ) {
        for (j, job) in self.jobs.iter().enumerate() {
            let finish = job.tasks.iter().map(|&i| self.tasks[i].finish_s).fold(job.start_s, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            });
            out.tasks.push(TaskOut {
                task_id: self.job_id_base + j as u64,
                kind: "cluster-job".into(),
                table: self.table as i64,
                start_s: job.start_s,
                finish_s: finish,
                flows: job.flows,
                bytes: job.bytes,
                floor_s: f64::NAN,
                network_s: f64::NAN,
                io_s: f64::NAN,
                queued_s: 0.0,
            });
        }
        for (qi, rec) in self.queries.iter_records().enumerate() {
            out.tasks.push(TaskOut {
                task_id: self.queries.task_id_base() + qi as u64,
                kind: format!("query-{}", self.jobs_params.queries[self.query_type[qi]].name),
                table: self.table as i64,
                start_s: rec.start_s,
                finish_s: rec.finish_s,
                flows: rec.flows as u64,
                bytes: rec.bytes,
                floor_s: f64::NAN,
                network_s: f64::NAN,
                io_s: f64::NAN,
                queued_s: 0.0,
            });
        }
        let pending: Vec<usize> = self.pending.iter().copied().filter(|&i| !self.tasks[i].done).collect();
        if let Some(&i) = pending.first() {
            out.notes.push(format!(
                "{} cluster tasks still pending at the end: no server has {} free cores and {:.0} bytes of free memory",
                pending.len(),
                self.tasks[i].cores,
                self.tasks[i].mem
            ));
        }
        if self.estimate_fallbacks > 0 {
            out.notes.push(format!(
                "{} placements had no network-demand estimate and used the job's observed usage instead",
                self.estimate_fallbacks
            ));
        }
        let ticks = self.ticks.max(1) as f64;
        let s = |out: &mut ScenarioResult, k: &str, v: f64| out.stat(k, v);
        s(out, "cluster_jobs", self.jobs.len() as f64);
        s(out, "cluster_tasks", self.tasks.len() as f64);
        s(out, "placements", out.stats.get("placements").copied().unwrap_or(0.0) + self.placed as f64);
        s(out, "migrations", out.stats.get("migrations").copied().unwrap_or(0.0) + self.migrations.len() as f64);
        s(out, "migration_lost_work_s", self.lost_work_s);
        s(out, "net_intensive_placements", self.net_intensive as f64);
        s(out, "net_intensive_on_hot", self.net_intensive_on_hot as f64);
        s(out, "net_intensive_on_hot_share", self.net_intensive_on_hot as f64 / self.net_intensive.max(1) as f64);
        // From the warm-up on, as the ToR measures: the cold start (the
        // steady-state population placed at time 0, before any ToR sample)
        // is left out.
        let warm = self.warmup_s;
        s(out, "measured_migrations", self.migrations.iter().filter(|m| m.time_s >= warm).count() as f64);
        s(out, "measured_net_intensive_placements", self.measured_net_intensive as f64);
        s(
            out,
            "measured_net_intensive_on_hot_share",
            self.measured_net_intensive_on_hot as f64 / self.measured_net_intensive.max(1) as f64,
        );
        // Why network-intensive tasks land on hot ToRs: each such placement's
        // `HotChoice`, and how many of them the policy saw below the threshold
        // (instantaneous utilization, not the 5-minute average).
        let on_hot = self.measured_net_intensive_on_hot.max(1) as f64;
        s(out, "measured_on_hot_calm_now_share", self.measured_on_hot_calm_now as f64 / on_hot);
        for (c, name) in HotChoice::NAMES.iter().enumerate() {
            s(out, &format!("measured_on_hot_{name}_share"), self.measured_on_hot_by_choice[c] as f64 / on_hot);
        }
        s(out, "servers_used", self.servers_used / ticks);
        s(out, "cpu_imbalance", self.cpu_imbalance / ticks);
        s(out, "max_tasks_per_rack", self.max_tasks_per_rack());
        s(out, "pending", pending.len() as f64);
        s(out, "estimate_fallbacks", self.estimate_fallbacks as f64);
        s(out, "queries_unplaced", self.queries_unplaced as f64);
        if let Some(w) = windows {
            let m = tor_outbound(self.topo, w, window_s, self.until_s, self.warmup_s, self.params.hot_threshold);
            s(out, "placement_hot_tor_share", m.hot_share);
            s(out, "placement_p98_tor_util", m.p98);
            s(out, "placement_cell_util", m.cell_util);
        }
        if keep_placements {
            out.placements.append(&mut self.placements);
        }
        out.migrations.append(&mut self.migrations);
    }

    /// Mean over jobs with two or more placed tasks of the largest number of
    /// its tasks in one rack (where each last ran).
    fn max_tasks_per_rack(&self) -> f64 {
        let (mut sum, mut n) = (0.0, 0.0);
        for j in &self.jobs {
            let mut racks: Vec<u32> = j.tasks.iter().filter_map(|&i| self.tasks[i].last_rack).collect();
            if racks.len() < 2 {
                continue;
            }
            racks.sort_unstable();
            let (mut best, mut run) = (1, 1);
            for w in racks.windows(2) {
                run = if w[0] == w[1] { run + 1 } else { 1 };
                best = best.max(run);
            }
            sum += f64::from(best);
            n += 1.0;
        }
        if n > 0.0 {
            sum / n
        } else {
            0.0
        }
    }
}

impl ClusterRun<'_> {
    /// A flow of the cluster finished; the queries' next flows start
    /// through `h`.
    pub fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord, h: &mut dyn ClusterHooks) {
        if flow.id >= QUERY_FLOW_BASE {
            self.queries.on_flow_complete_with(ctx, flow, &mut QueryRoutes(h));
            self.reap_queries();
        } else if let Some(i) = self.flow_task.remove(&flow.id) {
            self.jobs[self.tasks[i].job].bytes += flow.bytes;
        }
    }

    /// A timer of the cluster fired; its flows start and end through `h`.
    pub fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64, h: &mut dyn ClusterHooks) {
        let now = ctx.now();
        let until = self.until_s;
        let more = |period: f64| now + period < until;
        if token >= Q_TOKEN_BASE {
            self.queries.on_timer_with(ctx, token, &mut QueryRoutes(h));
            self.reap_queries();
        } else if token >= T_READY {
            let i = (token - T_READY) as usize;
            let t = &self.tasks[i];
            if !t.done && t.server.is_some() && t.flow.is_none() && now >= t.ready_s {
                self.tasks[i].run_start_s = now;
                self.start_flow(ctx, h, i);
            }
        } else if token >= T_JOB {
            self.start_job(ctx, h, (token - T_JOB) as usize);
        } else if token >= T_END {
            let i = (token - T_END) as usize;
            // A restart moved the end later: the first timer is stale.
            if !self.tasks[i].done && now >= self.tasks[i].end_s {
                self.tasks[i].done = true;
                self.tasks[i].finish_s = now;
                self.stop(ctx, h, i);
            }
        } else if token == T_QUERY {
            self.launch_queries(ctx);
            if more(self.jobs_params.query_period_s) {
                if let Err(e) = ctx.schedule_timer(now + self.jobs_params.query_period_s, T_QUERY) {
                    self.fail(e);
                }
            }
        } else if token == T_TICK {
            self.tick(ctx, h);
            if more(self.params.tick_s) {
                if let Err(e) = ctx.schedule_timer(now + self.params.tick_s, T_TICK) {
                    self.fail(e);
                }
            }
        } else if token == T_DETECT {
            self.detect(ctx, h);
            if more(self.params.detect_s) {
                if let Err(e) = ctx.schedule_timer(now + self.params.detect_s, T_DETECT) {
                    self.fail(e);
                }
            }
        }
    }
}

/// Outbound ToR utilization over the windows after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TorOutbound {
    /// Share of (ToR, window) pairs above the threshold.
    pub hot_share: f64,
    /// 98th percentile of their utilization (the linear quantile of
    /// [`netheat_core::stats`]); NaN without a window.
    pub p98: f64,
    /// Egress bytes of every ToR over their uplink capacity (the hotspot
    /// paper's Figure 16 cell-level utilization); NaN without a window.
    pub cell_util: f64,
}

/// Each ToR's outbound utilization per window of `window_s` up to `end_s`
/// (its uplinks' bytes over their capacity in force: the datacenter's
/// capacity events lower it), over the windows that start at or after
/// `warmup_s`.
pub fn tor_outbound(
    topo: &Topology,
    windows: &LinkWindows,
    window_s: f64,
    end_s: f64,
    warmup_s: f64,
    threshold: f64,
) -> TorOutbound {
    let n_windows = (end_s / window_s).ceil() as u32;
    // Capacity changes per link, in time order.
    let mut changes: HashMap<LinkId, Vec<(f64, f64)>> = HashMap::new();
    for e in topo.events() {
        changes.entry(e.link).or_default().push((e.time_s, e.capacity_bps));
    }
    for v in changes.values_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    // Bit-seconds link `l` could carry over [t0, t1).
    let cap_s = |l: LinkId, t0: f64, t1: f64| -> f64 {
        let mut cap = topo.link_capacity_bps(l);
        let mut at = t0;
        let mut sum = 0.0;
        for &(t, c) in changes.get(&l).map_or(&[][..], Vec::as_slice) {
            if t <= t0 {
                cap = c;
                continue;
            }
            if t >= t1 {
                break;
            }
            sum += cap * (t - at);
            at = t;
            cap = c;
        }
        sum + cap * (t1 - at)
    };
    let (mut all, mut bytes_sum, mut cap_sum) = (Vec::new(), 0.0, 0.0);
    for win in 0..n_windows {
        let t0 = f64::from(win) * window_s;
        if t0 < warmup_s {
            continue;
        }
        let t1 = (t0 + window_s).min(end_s);
        for tor in topo.tors() {
            let (mut bytes, mut cs) = (0.0, 0.0);
            for &l in &tor.up {
                bytes += windows.bytes(l, win);
                cs += cap_s(l, t0, t1);
            }
            all.push(if cs > 0.0 { bytes * 8.0 / cs } else { 0.0 });
            bytes_sum += bytes;
            cap_sum += cs;
        }
    }
    let n = all.len().max(1) as f64;
    TorOutbound {
        hot_share: all.iter().filter(|&&u| u > threshold).count() as f64 / n,
        p98: stats::quantile(&all, 0.98),
        cell_util: if cap_sum > 0.0 { bytes_sum * 8.0 / cap_sum } else { f64::NAN },
    }
}

/// Why a placement on a hot ToR (5-minute average above the threshold) beat
/// the sampled candidates under ToRs that were not hot: a diagnostic of
/// UTP's low-priority tweak (hotspot paper §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HotChoice {
    /// No sampled candidate was under a ToR not hot.
    NoCool = 0,
    /// It beat every one of them on an objective ranked above load balance
    /// (spreading the job, packing).
    Above = 1,
    /// The best of them level with it scored the same on every objective
    /// (the same 5% bucket): the sample order chose.
    Tie = 2,
    /// The best of them scored worse on load balance, by its server's CPU.
    CoolBusierCpu = 3,
    /// The best of them scored worse on load balance, by its ToR's
    /// instantaneous utilization plus the task's demand.
    CoolBusierTor = 4,
}

impl HotChoice {
    /// Stat names, by discriminant.
    const NAMES: [&'static str; 5] = ["no_cool", "above_balance", "tie", "cool_busier_cpu", "cool_busier_tor"];

    /// Why `policy` chose candidate `k` over the candidates flagged `cool`
    /// (under ToRs not hot): the cool candidates level with it on the
    /// objectives above load balance, and the best of them on every
    /// objective, decide.
    fn of(cands: &[Candidate], k: usize, cool: &[bool], policy: &dyn PlacementPolicy) -> HotChoice {
        let obj = policy.objectives();
        let above = obj
            .iter()
            .position(|o| matches!(o, Objective::CpuBalance | Objective::UtpBalance | Objective::TorUtilization))
            .unwrap_or(obj.len());
        let key = |c: &Candidate, n: usize| obj[..n].iter().map(|o| o.key(c)).collect::<Vec<i64>>();
        let cools: Vec<&Candidate> = cands.iter().zip(cool).filter(|(_, &c)| c).map(|(c, _)| c).collect();
        let best = cools.iter().filter(|c| key(c, above) == key(&cands[k], above)).min_by_key(|c| key(c, obj.len()));
        match best {
            _ if cools.is_empty() => HotChoice::NoCool,
            None => HotChoice::Above,
            Some(c) if key(c, obj.len()) == key(&cands[k], obj.len()) => HotChoice::Tie,
            Some(c) if c.cpu_after >= c.projected_tor || !policy.network_aware() => HotChoice::CoolBusierCpu,
            Some(_) => HotChoice::CoolBusierTor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netheat_sched::placement_policy;

    #[test]
    fn a_choice_on_a_hot_tor_is_classed_by_the_objective_that_decided() {
        // UTP over spread, pack, balance: the chosen candidate 0 is under a
        // hot ToR (projected 0.80, CPU 0.50: balance key 16); candidate 1 is
        // under a cool one.
        let base = [Objective::SpreadJob, Objective::BinPack, Objective::CpuBalance];
        let utp = placement_policy("utp", &base).unwrap();
        let obliv = placement_policy("bandwidth-oblivious", &base).unwrap();
        let hot = Candidate::new(0, 0, 32, 16.0, 0, 0.80);
        let with = |c: Candidate, in_rack: u32, cpu: f64, tor: f64| Candidate {
            job_tasks_in_rack: in_rack,
            cpu_after: cpu,
            projected_tor: tor,
            ..c
        };
        let cool = Candidate::new(1, 0, 32, 16.0, 0, 0.0);
        let cases = [
            // The cool one has a task of the job in its rack: spreading decided.
            (with(cool, 1, 0.5, 0.1), HotChoice::Above),
            // Same buckets everywhere (0.80 and 0.82 are both 16): a tie.
            (with(cool, 0, 0.82, 0.1), HotChoice::Tie),
            // The cool one's server is busier (0.90, key 18).
            (with(cool, 0, 0.90, 0.1), HotChoice::CoolBusierCpu),
            // Its ToR is busier now (0.95, key 19).
            (with(cool, 0, 0.5, 0.95), HotChoice::CoolBusierTor),
        ];
        for (other, want) in cases {
            let cands = [hot, other];
            assert_eq!(utp.choose(&cands), Some(0), "{other:?}");
            assert_eq!(HotChoice::of(&cands, 0, &[false, true], utp.as_ref()), want, "{other:?}");
        }
        // No cool candidate in the sample.
        assert_eq!(HotChoice::of(&[hot], 0, &[false], utp.as_ref()), HotChoice::NoCool);
        // Without the ToR in the objective, a busier cool ToR does not count:
        // the oblivious policy saw CPU only (0.50 against 0.50: a tie).
        let cands = [hot, with(cool, 0, 0.5, 0.95)];
        assert_eq!(HotChoice::of(&cands, 0, &[false, true], obliv.as_ref()), HotChoice::Tie);
    }
}
