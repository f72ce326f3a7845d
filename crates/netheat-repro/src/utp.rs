//! A Borg-like cluster scheduler run on the flow-level engine.
//!
//! Jobs arrive as a Poisson process (plus a steady-state population at time
//! 0) with `tasks` tasks each. A task requests cores and memory, has a
//! latency-sensitivity flag and a network demand: a rate-capped flow from its
//! server to a peer server in another rack (storage or shuffle traffic),
//! carrying `demand x duration` bytes, so ToR utilization is measured by the
//! engine, not assumed. Demand per core is log-normal per job, and a share of
//! jobs is `heavy_factor` times heavier (the heavy tail: some jobs > 10x the
//! median). The scheduler sees a *historical estimate* of each task's peak
//! demand with a log-normal error, or none for a share of jobs (it then
//! falls back to the observed usage of the job's running tasks, and counts
//! it); actual demand drifts by a log-normal factor every detection window.
//!
//! Placement samples `candidates` servers, filters those with the cores and
//! memory (all servers when none in the sample fits; a task that fits
//! nowhere waits as pending, with its reason, and is retried every tick),
//! and ranks them with the policy ([`netheat_sched::policy`]; the default
//! objectives end with the scheduler's low-priority load balance, which
//! `utp` tweaks with the projected ToR utilization, §5.1). Every `tick_s`
//! the scheduler samples each ToR's outbound utilization (rates over the
//! capacity in force). A ToR whose mean over the last detection window
//! (`detect_s`, 5 minutes: the paper's 5-minute average, §3.1) is above
//! `hot_threshold` is hot ([`HotTors`]); migrating policies then move the
//! latency-tolerant tasks with the largest measured rates off it, fewest
//! first, within each job's budget of migrations per window, re-placing them
//! with the active policy (never on the same ToR). A migrated task is
//! *restarted*: it loses the work done since it last started and runs again
//! in full after `restart_delay_s` (see [`ClusterParams::restart_delay_s`]).
//!
//! Multi-stage analytical queries run alongside (every `query_period_s`,
//! one of each [`QueryType`]): their workers are tasks placed by the same
//! policy path as the jobs' tasks (the paper's QuerySys workers are Borg
//! tasks that UTP places, §5 item 1), each asking
//! `worker_cores` cores and carrying its host link's line rate as its peak
//! demand estimate; they read partitions from storage servers (random: the
//! data lives where it lives), compute, write intermediate data to
//! in-memory shuffle servers (random), read it back, compute and write the
//! output, as task DAGs of the `netheat-workloads` runner sharing the
//! network with the tasks; their completion times after the warm-up are
//! reported per type.
//!
//! Outputs are measured from the engine's exact per-window link telemetry
//! (`window_s`, 5 min): outbound utilization of each compute ToR per window
//! relative to the capacity in force (an incident can halve uplinks), the
//! share of hot ToR-windows, the 98th percentile, migrations, placements of
//! network-intensive tasks on hot ToRs, and the other objectives (servers
//! used, tasks of a job per rack, CPU imbalance).

use netheat_core::{stats, LinkId, Routing};
use netheat_engine::{Controller, Ctx, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_topology::Topology;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use netheat_sched::policy::{
    pick_migrations, placement_policy, projected_tor, sample_servers, Candidate, MigrationCandidate, PlacementPolicy,
};
use netheat_sched::tors::{tor_capacity_bps, HotTors};
use netheat_sched::{SchedError, SchedulerParams};
use netheat_workloads::apps::analytics::AnalyticalQuery;
use netheat_workloads::storage::WriteModel;
use netheat_workloads::DagRunner;

/// One kind of analytical query run alongside the tasks.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct QueryType {
    /// Name in the results (`small`, `large`, ...).
    pub name: String,
    /// Workers (and storage servers, and half as many shuffle servers).
    pub workers: usize,
    /// Input partition per worker, bytes.
    #[serde(with = "netheat_config::units::si::bytes")]
    #[schemars(schema_with = "netheat_config::units::si::bytes::schema")]
    pub partition_bytes: f64,
    /// Intermediate data per worker, bytes.
    #[serde(with = "netheat_config::units::si::bytes")]
    #[schemars(schema_with = "netheat_config::units::si::bytes::schema")]
    pub intermediate_bytes: f64,
    /// Output per worker, bytes.
    #[serde(with = "netheat_config::units::si::bytes")]
    #[schemars(schema_with = "netheat_config::units::si::bytes::schema")]
    pub output_bytes: f64,
    /// Compute per stage, seconds.
    #[serde(rename = "compute", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub compute_s: f64,
    /// Cores each worker task asks the scheduler for (the compute stages
    /// are single-threaded delays: 1).
    pub worker_cores: u32,
}

/// Several ToRs lose part of their uplink capacity at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct Incident {
    /// When, seconds.
    pub at_s: f64,
    /// Racks (ToRs) affected.
    pub tors: Vec<u32>,
    /// Remaining fraction of their uplink capacity (0.5 = lose half).
    pub factor: f64,
}

/// Parameters of a cluster run. Read by serde (the `utp` experiment point)
/// with kebab-case keys; unit-bearing keys take a number in SI units or a
/// unit string; the scheduler's own keys are netheat-sched's
/// [`SchedulerParams`], embedded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", default)]
pub struct ClusterParams {
    /// Simulated time, seconds.
    #[serde(rename = "duration", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub duration_s: f64,
    /// Target share of all cores requested by running tasks.
    pub cpu_load: f64,
    /// Tasks per job (uniform in `1..=tasks_max`).
    pub tasks_max: u32,
    /// Cores per task (uniform in `1..=cores_max`).
    pub cores_max: u32,
    /// Memory per core requested, bytes.
    #[serde(with = "netheat_config::units::si::bytes")]
    #[schemars(schema_with = "netheat_config::units::si::bytes::schema")]
    pub memory_per_core: f64,
    /// Mean task duration, seconds (exponential).
    #[serde(rename = "task-mean", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub task_mean_s: f64,
    /// Median network demand per core, bits/s.
    #[serde(with = "netheat_config::units::si::bandwidth")]
    #[schemars(schema_with = "netheat_config::units::si::bandwidth::schema")]
    pub bw_median_per_core: f64,
    /// Sigma of ln(demand per core) across jobs.
    pub bw_sigma: f64,
    /// Share of jobs `heavy_factor` times heavier.
    pub heavy_share: f64,
    /// Demand multiplier of heavy jobs.
    pub heavy_factor: f64,
    /// Sigma of ln(estimate / actual) of the peak estimate.
    pub estimate_sigma: f64,
    /// Peak over mean of the estimate.
    pub peak_factor: f64,
    /// Share of jobs without a demand estimate.
    pub missing_estimate_share: f64,
    /// Sigma of ln of the drift factor of actual demand.
    pub drift_sigma: f64,
    /// Share of running tasks whose demand drifts in each detection window.
    pub drift_share: f64,
    /// Share of latency-sensitive jobs (never migrated).
    pub latency_sensitive_share: f64,
    /// The scheduler's own parameters (budget, candidates, objectives,
    /// sampling, hot threshold).
    #[serde(flatten)]
    pub sched: SchedulerParams,
    /// Telemetry window of the outputs, seconds.
    #[serde(rename = "window", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub window_s: f64,
    /// Metrics ignore windows before this time (warm-up), seconds.
    #[serde(rename = "warmup", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub warmup_s: f64,
    /// Optional uplink incident (the `utp` point sets it from its
    /// `incident-every` and `incident-factor`).
    #[serde(skip)]
    pub incident: Option<Incident>,
    /// Analytical query kinds, one of each launched every `query_period_s`.
    pub queries: Vec<QueryType>,
    /// Period of query launches, seconds.
    #[serde(rename = "query-period", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub query_period_s: f64,
    /// What a migration costs, seconds: the hotspot paper gives no cost
    /// (§5.1 only says migrations must stay within availability budgets),
    /// so a migrated task is restarted: it loses the work done since it
    /// last started and, on its new server, sends nothing for this delay
    /// before running again in full. 25 s is Borg's median task startup
    /// latency (Verma et al., "Large-scale cluster management at Google
    /// with Borg", EuroSys 2015, §3.2: a median of about 25 s, most of it
    /// package installation), the cost of starting a task anew.
    #[serde(rename = "restart-delay", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub restart_delay_s: f64,
}

impl Default for ClusterParams {
    /// The scheduler's own keys (budget, candidates, objectives, sampling,
    /// hot threshold) are netheat-sched's [`SchedulerParams::default`].
    fn default() -> Self {
        Self {
            duration_s: 6.0 * 3600.0,
            cpu_load: 0.6,
            tasks_max: 20,
            cores_max: 4,
            memory_per_core: 4e9,
            task_mean_s: 3600.0,
            bw_median_per_core: 10e6,
            bw_sigma: 1.0,
            heavy_share: 0.05,
            heavy_factor: 12.0,
            estimate_sigma: 0.3,
            peak_factor: 1.5,
            missing_estimate_share: 0.0,
            drift_sigma: 0.3,
            drift_share: 0.1,
            latency_sensitive_share: 0.3,
            sched: SchedulerParams::default(),
            window_s: 300.0,
            warmup_s: 3600.0,
            incident: None,
            queries: vec![
                QueryType {
                    name: "small".into(),
                    workers: 4,
                    partition_bytes: 20e6,
                    intermediate_bytes: 10e6,
                    output_bytes: 2e6,
                    compute_s: 0.05,
                    worker_cores: 1,
                },
                QueryType {
                    name: "large".into(),
                    workers: 16,
                    partition_bytes: 100e6,
                    intermediate_bytes: 50e6,
                    output_bytes: 10e6,
                    compute_s: 0.2,
                    worker_cores: 1,
                },
            ],
            query_period_s: 60.0,
            restart_delay_s: 25.0,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterResult {
    /// Share of (compute ToR, window) pairs above the hot threshold, outbound.
    pub hot_tor_share: f64,
    /// 98th percentile of ToR-window outbound utilization (the linear
    /// quantile of [`netheat_core::stats`]); NaN when no window is past
    /// the warm-up.
    pub p98_tor_util: f64,
    /// Average cell-level utilization after the warm-up, as the hotspot
    /// paper's Figure 16 defines it: the egress bytes of every compute ToR
    /// over their uplink capacity (in force: an incident lowers it), summed
    /// over all windows past the warm-up. The x axis of a load sweep. NaN
    /// when no window is past the warm-up.
    pub cell_util: f64,
    /// Every window of the run, the warm-up included (the scalar metrics
    /// exclude it), for plots over time.
    pub series: Vec<WindowStats>,
    /// Tasks migrated.
    pub migrations: u64,
    /// Placements of network-intensive tasks (demand estimate in the top
    /// decile) and how many landed on a ToR hot at that moment.
    pub net_intensive_placements: u64,
    /// Of those, on a hot ToR.
    pub net_intensive_on_hot: u64,
    /// Mean over ticks of servers running at least one task.
    pub servers_used: f64,
    /// Mean over jobs of the largest number of its tasks in one rack.
    pub max_tasks_per_rack: f64,
    /// Mean over ticks of the standard deviation of server CPU utilization.
    pub cpu_imbalance: f64,
    /// Tasks placed.
    pub placements: u64,
    /// Tasks still pending at the end, and why the first one waits.
    pub pending: u64,
    /// Reason of the first pending task (empty if none).
    pub pending_reason: String,
    /// Placements that had no demand estimate and used observed usage.
    pub estimate_fallbacks: u64,
    /// Per query type (in [`ClusterParams::queries`] order): `(name,
    /// completed queries, mean s, p95 s)` after the warm-up (p95: the
    /// linear quantile of [`netheat_core::stats`]; NaN without queries).
    pub queries: Vec<(String, usize, f64, f64)>,
    /// Every query that finished after the warm-up: `(query type index,
    /// start s, completion time s)`, for latency CDFs.
    pub query_latencies: Vec<(usize, f64, f64)>,
    /// Query worker tasks placed under each ToR (rack index), warm-up
    /// included.
    pub query_workers_per_tor: Vec<u64>,
    /// Queries not launched because a worker fitted on no server.
    pub queries_unplaced: u64,
    /// Every migration, in order.
    pub migration_log: Vec<MigrationRecord>,
    /// Per task: when it was first placed, s (`None` if never).
    pub task_start_s: Vec<Option<f64>>,
    /// Per task: when it finished, s (`None` if not by the end of the run).
    pub task_finish_s: Vec<Option<f64>>,
    /// Engine events.
    pub events: u64,
}

/// One migration (a restart of the task on another ToR).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MigrationRecord {
    /// Task index.
    pub task: usize,
    /// When, s.
    pub at_s: f64,
    /// Work lost: time since the task last started running, s.
    pub lost_work_s: f64,
    /// Its planned end before the migration, s.
    pub end_before_s: f64,
    /// Its planned end after it (`at_s + restart delay + work`), s.
    pub end_after_s: f64,
}

/// One telemetry window of a run (outbound ToR utilization).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WindowStats {
    /// Window start, s.
    pub start_s: f64,
    /// Share of ToRs above the hot threshold.
    pub hot_share: f64,
    /// 98th percentile of ToR utilization (linear quantile, as
    /// [`ClusterResult::p98_tor_util`]).
    pub p98_util: f64,
    /// Tasks migrated during the window.
    pub migrations: u64,
    /// Whether the window starts in the warm-up (excluded from the metrics).
    pub warmup: bool,
}

#[derive(Debug, Clone)]
struct Task {
    job: usize,
    cores: u32,
    mem: f64,
    demand: f64,
    estimate: Option<f64>,
    end_s: f64,
    server: Option<u32>,
    flow: Option<u64>,
    peer: u32,
    done: bool,
    /// Rack it last ran in.
    last_rack: Option<u32>,
    /// When its current run started (the progress a restart loses), s.
    run_start_s: f64,
    /// It sends nothing before this time (restart delay), s.
    ready_s: f64,
}

#[derive(Debug, Clone)]
struct Job {
    latency_sensitive: bool,
    tasks: Vec<usize>,
    migrations_this_window: u32,
}

const T_TICK: u64 = 0;
const T_DETECT: u64 = 1;
const T_QUERY: u64 = 2;
/// Flow ids and timer tokens of the query runner start here.
const Q_BASE: u64 = 1 << 50;
/// Timer tokens in [T_READY, Q_BASE) start the traffic of restarted task
/// `token - T_READY`.
const T_READY: u64 = 1 << 45;
/// Timer tokens in [T_JOB, T_READY) start job `token - T_JOB`.
const T_JOB: u64 = 1 << 40;
/// Timer tokens in [T_END, T_JOB) end task `token - T_END`.
const T_END: u64 = 1 << 20;

struct Sched<'t> {
    topo: &'t Topology,
    p: ClusterParams,
    policy: Box<dyn PlacementPolicy>,
    rng: ChaCha8Rng,
    tasks: Vec<Task>,
    jobs: Vec<Job>,
    free_cores: Vec<f64>,
    free_mem: Vec<f64>,
    server_tasks: Vec<Vec<usize>>,
    next_flow: u64,
    tors: HotTors,
    pending: Vec<usize>,
    intensive_cut: f64,
    res: ClusterResult,
    ticks: u64,
    err: Option<SchedError>,
    queries: DagRunner,
    /// Query type of each query task.
    query_type: Vec<usize>,
    /// When each migration happened, s.
    migration_times: Vec<f64>,
    /// Running queries: runner task index and the servers (with cores)
    /// their workers hold.
    active_queries: Vec<(usize, Vec<(u32, u32)>)>,
    /// Peak demand estimate of a query worker: the largest host line rate.
    worker_peak_bps: f64,
}

/// What one placement asks for.
struct Ask {
    cores: u32,
    mem: f64,
    /// Peak demand estimate, bits/s (read only by network-aware policies).
    est: f64,
}

impl Sched<'_> {
    fn tor_cap(&self, ctx: &Ctx<'_, '_>, t: usize) -> f64 {
        tor_capacity_bps(self.topo, ctx, t)
    }

    fn sample_tors(&mut self, ctx: &Ctx<'_, '_>) {
        self.tors.sample(self.topo, ctx);
    }

    /// The peak estimate the scheduler uses for task `i`.
    fn estimate(&mut self, i: usize) -> f64 {
        if let Some(e) = self.tasks[i].estimate {
            return e;
        }
        self.res.estimate_fallbacks += 1;
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

    /// The candidate server `s` for `ask`, beside the racks of the other
    /// tasks of its job (or query) `others_racks`.
    fn candidate(&self, ctx: &Ctx<'_, '_>, ask: &Ask, others_racks: &[u32], s: u32) -> Candidate {
        let h = &self.topo.hosts()[s as usize];
        let rack = h.rack;
        let in_rack = others_racks.iter().filter(|&&r| r == rack).count() as u32;
        let projected = projected_tor(self.tors.util(rack as usize), ask.est, self.tor_cap(ctx, rack as usize));
        Candidate::new(s, in_rack, h.cores, self.free_cores[s as usize], ask.cores, projected)
    }

    /// The one placement path of every task (jobs' tasks, migrations and
    /// query workers): samples candidates that fit `ask` (not on
    /// `avoid_rack`) and returns the policy's choice; `None` when nothing
    /// fits.
    fn choose_server(
        &mut self,
        ctx: &Ctx<'_, '_>,
        ask: &Ask,
        others_racks: &[u32],
        avoid_rack: Option<u32>,
    ) -> Option<u32> {
        let n = self.topo.hosts().len() as u32;
        let (free_cores, free_mem, topo) = (&self.free_cores, &self.free_mem, self.topo);
        let fits = |s: u32| {
            free_cores[s as usize] >= ask.cores as f64
                && free_mem[s as usize] >= ask.mem
                && avoid_rack != Some(topo.hosts()[s as usize].rack)
        };
        let sample = sample_servers(&mut self.rng, n, self.p.sched.candidates, fits);
        if sample.is_empty() {
            return None;
        }
        let cands: Vec<Candidate> = sample.iter().map(|&s| self.candidate(ctx, ask, others_racks, s)).collect();
        let k = self.policy.choose(&cands).expect("non-empty");
        Some(cands[k].server)
    }

    /// Places task `i` (not on `avoid_rack`); false when nothing fits.
    fn place(&mut self, ctx: &mut Ctx<'_, '_>, i: usize, avoid_rack: Option<u32>) -> bool {
        let est = if self.policy.network_aware() { self.estimate(i) } else { self.tasks[i].estimate.unwrap_or(0.0) };
        let ask = Ask { cores: self.tasks[i].cores, mem: self.tasks[i].mem, est };
        let hosts = self.topo.hosts();
        let others: Vec<u32> = self.jobs[self.tasks[i].job]
            .tasks
            .iter()
            .filter(|&&t| t != i && !self.tasks[t].done)
            .filter_map(|&t| self.tasks[t].server.map(|x| hosts[x as usize].rack))
            .collect();
        match self.choose_server(ctx, &ask, &others, avoid_rack) {
            Some(s) => {
                self.start_on(ctx, i, s);
                true
            }
            None => false,
        }
    }

    fn start_on(&mut self, ctx: &mut Ctx<'_, '_>, i: usize, s: u32) {
        let now = ctx.now();
        let rack = self.topo.hosts()[s as usize].rack as usize;
        self.free_cores[s as usize] -= self.tasks[i].cores as f64;
        self.free_mem[s as usize] -= self.tasks[i].mem;
        self.server_tasks[s as usize].push(i);
        self.res.placements += 1;
        self.res.task_start_s[i].get_or_insert(now);
        if self.tasks[i].estimate.unwrap_or(self.tasks[i].demand) >= self.intensive_cut {
            self.res.net_intensive_placements += 1;
            // Hot as the paper defines a hotspot: 5-minute average above
            // the threshold (§3.1).
            if self.tors.avg(rack) > self.p.sched.hot_threshold {
                self.res.net_intensive_on_hot += 1;
            }
        }
        let t = &mut self.tasks[i];
        t.server = Some(s);
        t.last_rack = Some(rack as u32);
        if now < t.ready_s {
            // Restarting: its traffic starts after the restart delay.
            if let Err(e) = ctx.schedule_timer(t.ready_s, T_READY + i as u64) {
                self.err.get_or_insert(e.into());
            }
        } else {
            t.run_start_s = now;
            self.start_flow(ctx, i);
        }
    }

    /// Starts the traffic of task `i` on its server, to its end.
    fn start_flow(&mut self, ctx: &mut Ctx<'_, '_>, i: usize) {
        let now = ctx.now();
        let Some(s) = self.tasks[i].server else { return };
        // The peer lives in another rack (storage / shuffle traffic).
        let rack = self.topo.hosts()[s as usize].rack;
        let per_rack = self.topo.hosts_per_rack();
        let n = self.topo.hosts().len() as u32;
        let mut peer = self.tasks[i].peer % n;
        if self.topo.hosts()[peer as usize].rack == rack {
            peer = (peer + per_rack) % n;
        }
        let t = &mut self.tasks[i];
        let left = (t.end_s - now).max(0.0);
        let bytes = t.demand * left / 8.0;
        let id = self.next_flow;
        self.next_flow += 1;
        t.flow = Some(id);
        if bytes > 0.0 && peer != s {
            let f = FlowSpec::new(id, s, peer, bytes, now, Route::Ecmp).with_rate_cap(t.demand.max(1.0));
            if let Err(e) = ctx.add_flow(f) {
                self.err.get_or_insert(e.into());
            }
        }
    }

    /// Restarts task `i` (stopped by a migration) at `now`: the work done
    /// since it last started is lost, and it runs again in full after the
    /// restart delay, so its end moves by `lost work + delay`.
    fn restart(&mut self, ctx: &mut Ctx<'_, '_>, i: usize) -> MigrationRecord {
        let now = ctx.now();
        let delay = self.p.restart_delay_s;
        let t = &mut self.tasks[i];
        let work = t.end_s - t.run_start_s;
        let rec = MigrationRecord {
            task: i,
            at_s: now,
            lost_work_s: now - t.run_start_s,
            end_before_s: t.end_s,
            end_after_s: now + delay + work,
        };
        t.end_s = rec.end_after_s;
        t.ready_s = now + delay;
        t.run_start_s = t.ready_s;
        if let Err(e) = ctx.schedule_timer(t.end_s, T_END + i as u64) {
            self.err.get_or_insert(e.into());
        }
        rec
    }

    fn stop(&mut self, ctx: &mut Ctx<'_, '_>, i: usize) {
        if let Some(s) = self.tasks[i].server.take() {
            self.free_cores[s as usize] += self.tasks[i].cores as f64;
            self.free_mem[s as usize] += self.tasks[i].mem;
            self.server_tasks[s as usize].retain(|&t| t != i);
        }
        if let Some(f) = self.tasks[i].flow.take() {
            // Still sending (throttled, or stopped early): the task's traffic ends with it.
            if ctx.flow_rate_bps(f).is_some() {
                let _ = ctx.cancel_flow(f);
            }
        }
    }

    fn start_job(&mut self, ctx: &mut Ctx<'_, '_>, j: usize) {
        for k in 0..self.jobs[j].tasks.len() {
            let i = self.jobs[j].tasks[k];
            if !self.place(ctx, i, None) {
                self.pending.push(i);
            }
            let end = self.tasks[i].end_s;
            if let Err(e) = ctx.schedule_timer(end, T_END + i as u64) {
                self.err.get_or_insert(e.into());
            }
        }
    }

    fn detect(&mut self, ctx: &mut Ctx<'_, '_>) {
        // Demand drifts away from its estimate.
        for i in 0..self.tasks.len() {
            if self.tasks[i].server.is_some()
                && !self.tasks[i].done
                && self.p.drift_sigma > 0.0
                && self.rng.gen::<f64>() < self.p.drift_share
            {
                let z: f64 = normal(&mut self.rng);
                self.tasks[i].demand *= (self.p.drift_sigma * z).exp();
                if let Some(f) = self.tasks[i].flow {
                    if ctx.flow_rate_bps(f).is_some() {
                        let _ = ctx.set_rate_cap(f, Some(self.tasks[i].demand.max(1.0)));
                    }
                }
            }
        }
        if self.policy.migrates() {
            for t in 0..self.topo.tors().len() {
                if !self.tors.is_hot(t) {
                    continue;
                }
                let first = self.topo.racks()[t].first_host;
                let mut cands = Vec::new();
                for s in first..first + self.topo.hosts_per_rack() {
                    for &i in &self.server_tasks[s as usize] {
                        let rate = self.tasks[i].flow.and_then(|f| ctx.flow_rate_bps(f)).unwrap_or(0.0);
                        let job = &self.jobs[self.tasks[i].job];
                        cands.push(MigrationCandidate {
                            task: i,
                            rate_bps: rate,
                            latency_sensitive: job.latency_sensitive,
                            budget_left: job.migrations_this_window < self.p.sched.budget_per_window,
                        });
                    }
                }
                let cap = self.tor_cap(ctx, t);
                // The excess over the threshold of the 5-minute average
                // (the hotspot measure) is what the migrations remove.
                let rate = self.tors.avg(t) * cap;
                let mut moved = 0;
                for i in pick_migrations(&cands, rate, cap, self.p.sched.hot_threshold) {
                    let j = self.tasks[i].job;
                    if self.jobs[j].migrations_this_window >= self.p.sched.budget_per_window {
                        continue;
                    }
                    self.stop(ctx, i);
                    let rec = self.restart(ctx, i);
                    if self.place(ctx, i, Some(t as u32)) {
                        self.jobs[j].migrations_this_window += 1;
                        self.res.migrations += 1;
                        self.migration_times.push(ctx.now());
                        self.res.migration_log.push(rec);
                        moved += 1;
                    } else {
                        self.pending.push(i);
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

    fn tick(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.sample_tors(ctx);
        // Retry pending tasks.
        let pending = std::mem::take(&mut self.pending);
        for i in pending {
            if self.tasks[i].done {
                continue;
            }
            if !self.place(ctx, i, None) {
                self.pending.push(i);
            }
        }
        if ctx.now() >= self.p.warmup_s {
            self.ticks += 1;
            let mut used = 0;
            let mut utils = Vec::with_capacity(self.free_cores.len());
            for (s, h) in self.topo.hosts().iter().enumerate() {
                let c = h.cores.max(1) as f64;
                let u = 1.0 - self.free_cores[s] / c;
                used += (u > 0.0) as u64;
                utils.push(u);
            }
            let m = utils.iter().sum::<f64>() / utils.len() as f64;
            let sd = (utils.iter().map(|u| (u - m) * (u - m)).sum::<f64>() / utils.len() as f64).sqrt();
            self.res.servers_used += used as f64;
            self.res.cpu_imbalance += sd;
        }
    }
}

impl Sched<'_> {
    fn launch_queries(&mut self, ctx: &mut Ctx<'_, '_>) {
        let n = self.topo.hosts().len() as u32;
        for (k, q) in self.p.queries.clone().iter().enumerate() {
            // Workers: tasks placed by the policy, spread like a job's.
            let ask = Ask {
                cores: q.worker_cores,
                mem: self.p.memory_per_core * q.worker_cores as f64,
                est: self.worker_peak_bps,
            };
            let mut held: Vec<(u32, u32)> = Vec::with_capacity(q.workers);
            let mut racks: Vec<u32> = Vec::with_capacity(q.workers);
            for _ in 0..q.workers {
                let Some(s) = self.choose_server(ctx, &ask, &racks, None) else { break };
                self.free_cores[s as usize] -= ask.cores as f64;
                self.free_mem[s as usize] -= ask.mem;
                held.push((s, ask.cores));
                racks.push(self.topo.hosts()[s as usize].rack);
            }
            if held.len() < q.workers {
                self.res.queries_unplaced += 1;
                self.release(&held);
                continue;
            }
            for &r in &racks {
                self.res.query_workers_per_tor[r as usize] += 1;
            }
            let workers: Vec<u32> = held.iter().map(|&(s, _)| s).collect();
            let mut pick = |m: usize| -> Vec<u32> { (0..m).map(|_| self.rng.gen_range(0..n)).collect() };
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
            match aq.task(self.topo, &workers, &storage, &shuffle) {
                Ok(dag) => match self.queries.add_task_now(ctx, ctx.now(), dag) {
                    Ok(task) => {
                        self.query_type.push(k);
                        self.active_queries.push((task, held));
                    }
                    Err(e) => {
                        self.release(&held);
                        self.err.get_or_insert(e.into());
                    }
                },
                Err(e) => {
                    self.release(&held);
                    self.err.get_or_insert(SchedError::Query(e));
                }
            }
        }
    }

    /// Frees the cores and memory query workers held.
    fn release(&mut self, held: &[(u32, u32)]) {
        for &(s, c) in held {
            self.free_cores[s as usize] += c as f64;
            self.free_mem[s as usize] += self.p.memory_per_core * c as f64;
        }
    }

    /// Frees the workers of the queries that finished.
    fn reap_queries(&mut self) {
        let mut k = 0;
        while k < self.active_queries.len() {
            let task = self.active_queries[k].0;
            if self.queries.record(task).finish_s.is_finite() {
                let (_, held) = self.active_queries.swap_remove(k);
                self.release(&held);
            } else {
                k += 1;
            }
        }
    }
}

impl Controller for Sched<'_> {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if flow.id >= Q_BASE {
            self.queries.on_flow_complete(ctx, flow);
            self.reap_queries();
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let now = ctx.now();
        if token >= Q_BASE {
            self.queries.on_timer(ctx, token);
            self.reap_queries();
        } else if token >= T_READY {
            let i = (token - T_READY) as usize;
            let t = &self.tasks[i];
            if !t.done && t.server.is_some() && t.flow.is_none() && now >= t.ready_s {
                self.tasks[i].run_start_s = now;
                self.start_flow(ctx, i);
            }
        } else if token == T_QUERY {
            self.launch_queries(ctx);
            if now + self.p.query_period_s < self.p.duration_s {
                let _ = ctx.schedule_timer(now + self.p.query_period_s, T_QUERY);
            }
        } else if token >= T_JOB {
            self.start_job(ctx, (token - T_JOB) as usize);
        } else if token >= T_END {
            let i = (token - T_END) as usize;
            // A restart moved the end later: the first timer is stale.
            if !self.tasks[i].done && now >= self.tasks[i].end_s {
                self.tasks[i].done = true;
                self.res.task_finish_s[i] = Some(now);
                self.stop(ctx, i);
            }
        } else if token == T_TICK {
            self.tick(ctx);
            if now + self.p.sched.tick_s < self.p.duration_s {
                let _ = ctx.schedule_timer(now + self.p.sched.tick_s, T_TICK);
            }
        } else if token == T_DETECT {
            self.detect(ctx);
            if now + self.p.sched.detect_s < self.p.duration_s {
                let _ = ctx.schedule_timer(now + self.p.sched.detect_s, T_DETECT);
            }
        }
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn check(p: &ClusterParams) -> Result<(), SchedError> {
    let pos = |n: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(SchedError::param(n, format!("{v} must be > 0")))
        }
    };
    pos("duration_s", p.duration_s)?;
    pos("cpu_load", p.cpu_load)?;
    pos("task_mean_s", p.task_mean_s)?;
    pos("tick_s", p.sched.tick_s)?;
    pos("detect_s", p.sched.detect_s)?;
    pos("window_s", p.window_s)?;
    pos("hot_threshold", p.sched.hot_threshold)?;
    if !(p.restart_delay_s.is_finite() && p.restart_delay_s >= 0.0) {
        return Err(SchedError::param("restart_delay_s", format!("{} must be >= 0", p.restart_delay_s)));
    }
    if p.queries.iter().any(|q| q.worker_cores == 0) {
        return Err(SchedError::param("queries.worker_cores", "must be at least 1"));
    }
    if p.tasks_max == 0 || p.cores_max == 0 || p.sched.candidates == 0 {
        return Err(SchedError::param("tasks_max/cores_max/candidates", "must be at least 1"));
    }
    for (n, v) in [
        ("heavy_share", p.heavy_share),
        ("drift_share", p.drift_share),
        ("missing_estimate_share", p.missing_estimate_share),
        ("latency_sensitive_share", p.latency_sensitive_share),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(SchedError::param(n, format!("{v} is outside [0, 1]")));
        }
    }
    if let Some(inc) = &p.incident {
        if !(0.0..=1.0).contains(&inc.factor) {
            return Err(SchedError::param("incident.factor", format!("{} is outside [0, 1]", inc.factor)));
        }
    }
    Ok(())
}

/// Runs the cluster on `topo` with placement policy `policy` (a tag of
/// [`netheat_sched::POLICIES`]), seeded. Jobs and demands depend only on the seed
/// and `p`, so policies compared with one seed see the same jobs.
pub fn run_cluster(topo: &Topology, policy: &str, p: &ClusterParams, seed: u64) -> Result<ClusterResult, SchedError> {
    check(p)?;
    let policy = placement_policy(policy, &p.sched.objectives)?;
    if let Some(inc) = &p.incident {
        if let Some(t) = inc.tors.iter().find(|&&t| t as usize >= topo.tors().len()) {
            return Err(SchedError::param("incident.tors", format!("ToR {t} does not exist")));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let total_cores: f64 = topo.hosts().iter().map(|h| h.cores as f64).sum();
    let mean_tasks = (p.tasks_max as f64 + 1.0) / 2.0;
    let mean_cores = (p.cores_max as f64 + 1.0) / 2.0;
    let steady_jobs = p.cpu_load * total_cores / (mean_tasks * mean_cores);
    let rate = steady_jobs / p.task_mean_s;
    // Jobs: a steady-state population at t = 0 (exponential durations are
    // memoryless), then Poisson arrivals.
    let mut starts: Vec<f64> = vec![0.0; steady_jobs.round() as usize];
    let mut t = 0.0;
    loop {
        t += -(1.0 - rng.gen::<f64>()).ln() / rate;
        if t >= p.duration_s {
            break;
        }
        starts.push(t);
    }
    let n_hosts = topo.hosts().len() as u32;
    let mut tasks = Vec::new();
    let mut jobs = Vec::new();
    let mut estimates = Vec::new();
    for &st in &starts {
        let heavy = rng.gen::<f64>() < p.heavy_share;
        let per_core =
            p.bw_median_per_core * (p.bw_sigma * normal(&mut rng)).exp() * if heavy { p.heavy_factor } else { 1.0 };
        let missing = rng.gen::<f64>() < p.missing_estimate_share;
        let err = (p.estimate_sigma * normal(&mut rng)).exp();
        let n = rng.gen_range(1..=p.tasks_max);
        let j = jobs.len();
        let mut ids = Vec::new();
        for _ in 0..n {
            let cores = rng.gen_range(1..=p.cores_max);
            let demand = per_core * cores as f64;
            let dur = -(1.0 - rng.gen::<f64>()).ln() * p.task_mean_s;
            let estimate = (!missing).then_some(demand * err * p.peak_factor);
            if let Some(e) = estimate {
                estimates.push(e);
            }
            ids.push(tasks.len());
            tasks.push(Task {
                job: j,
                cores,
                mem: p.memory_per_core * cores as f64,
                demand,
                estimate,
                end_s: st + dur,
                server: None,
                flow: None,
                peer: rng.gen_range(0..n_hosts),
                done: false,
                last_rack: None,
                run_start_s: st,
                ready_s: st,
            });
        }
        jobs.push(Job {
            latency_sensitive: rng.gen::<f64>() < p.latency_sensitive_share,
            tasks: ids,
            migrations_this_window: 0,
        });
    }
    if tasks.len() as u64 >= T_JOB - T_END {
        return Err(SchedError::param("duration_s", "too many tasks for one run"));
    }
    estimates.sort_by(f64::total_cmp);
    let intensive_cut = estimates.get(estimates.len() * 9 / 10).copied().unwrap_or(f64::INFINITY);

    let routing: &dyn Routing = topo;
    let cfg = SimConfig { window_s: p.window_s, seed, end_s: Some(p.duration_s), ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
    for (j, &st) in starts.iter().enumerate() {
        sim.schedule_timer(st, T_JOB + j as u64)?;
    }
    sim.schedule_timer(p.sched.tick_s / 2.0, T_TICK)?;
    sim.schedule_timer(p.sched.detect_s, T_DETECT)?;
    if !p.queries.is_empty() {
        sim.schedule_timer(p.query_period_s, T_QUERY)?;
    }
    let mut incident_links: Vec<LinkId> = Vec::new();
    if let Some(inc) = &p.incident {
        for &t in &inc.tors {
            for &l in &topo.tors()[t as usize].up {
                incident_links.push(l);
                let c = topo.link_capacity_bps(l) * inc.factor;
                sim.schedule_capacity(inc.at_s, l, c)?;
            }
        }
    }
    let ntor = topo.tors().len();
    let hosts = topo.hosts();
    let n_tasks = tasks.len();
    let worker_peak_bps = hosts.iter().map(|h| h.ports.iter().map(|p| p.speed_bps).sum::<f64>()).fold(0.0, f64::max);
    let mut s = Sched {
        topo,
        p: p.clone(),
        policy,
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5C4E_D000),
        tasks,
        jobs,
        free_cores: hosts.iter().map(|h| h.cores as f64).collect(),
        free_mem: hosts.iter().map(|h| h.memory_bytes).collect(),
        server_tasks: vec![Vec::new(); hosts.len()],
        next_flow: 0,
        tors: HotTors::new(ntor, p.sched.hot_threshold, p.sched.tick_s, p.sched.detect_s),
        pending: Vec::new(),
        intensive_cut,
        res: ClusterResult {
            query_workers_per_tor: vec![0; ntor],
            task_start_s: vec![None; n_tasks],
            task_finish_s: vec![None; n_tasks],
            ..ClusterResult::default()
        },
        ticks: 0,
        err: None,
        queries: DagRunner::with_id_bases(Q_BASE, Q_BASE, 0),
        query_type: Vec::new(),
        migration_times: Vec::new(),
        active_queries: Vec::new(),
        worker_peak_bps,
    };
    let out = sim.run_with(&mut s);
    if let Some(e) = s.err {
        return Err(e);
    }
    let mut res = s.res;
    res.events = out.stats.events;
    for (k, q) in p.queries.iter().enumerate() {
        let d: Vec<f64> = s
            .queries
            .records()
            .iter()
            .filter(|r| s.query_type[r.task] == k && r.start_s >= p.warmup_s && r.finish_s.is_finite())
            .map(|r| r.duration_s())
            .collect();
        res.queries.push((q.name.clone(), d.len(), stats::mean(&d), stats::quantile(&d, 0.95)));
    }
    res.query_latencies = s
        .queries
        .records()
        .iter()
        .filter(|r| r.start_s >= p.warmup_s && r.finish_s.is_finite())
        .map(|r| (s.query_type[r.task], r.start_s, r.duration_s()))
        .collect();
    let ticks = s.ticks.max(1) as f64;
    res.servers_used /= ticks;
    res.cpu_imbalance /= ticks;
    res.pending = s.pending.iter().filter(|&&i| !s.tasks[i].done).count() as u64;
    if let Some(&i) = s.pending.iter().find(|&&i| !s.tasks[i].done) {
        res.pending_reason =
            format!("no server has {} free cores and {:.0} bytes of free memory", s.tasks[i].cores, s.tasks[i].mem);
    }
    // Max tasks of a job in one rack (where each task last ran), averaged
    // over jobs with 2+ placed tasks.
    let mut sum = 0.0;
    let mut njobs = 0.0;
    for j in &s.jobs {
        let mut racks: Vec<u32> = j.tasks.iter().filter_map(|&i| s.tasks[i].last_rack).collect();
        if racks.len() < 2 {
            continue;
        }
        racks.sort_unstable();
        let mut best = 1;
        let mut run = 1;
        for w in racks.windows(2) {
            run = if w[0] == w[1] { run + 1 } else { 1 };
            best = best.max(run);
        }
        sum += best as f64;
        njobs += 1.0;
    }
    res.max_tasks_per_rack = if njobs > 0.0 { sum / njobs } else { 0.0 };
    // Outbound utilization of each ToR per window, over the capacity in force.
    let w = p.window_s;
    let n_windows = (p.duration_s / w).ceil() as u32;
    let mut all = Vec::new();
    let (mut cell_bytes, mut cell_cap_s) = (0.0, 0.0);
    let mut migrations_per_window = vec![0u64; n_windows as usize];
    for &t in &s.migration_times {
        let k = ((t / w) as usize).min(migrations_per_window.len().saturating_sub(1));
        if let Some(c) = migrations_per_window.get_mut(k) {
            *c += 1;
        }
    }
    for win in 0..n_windows {
        let t0 = win as f64 * w;
        let warmup = t0 < p.warmup_s;
        let t1 = (t0 + w).min(p.duration_s);
        let mut utils = Vec::with_capacity(ntor);
        for (t, tor) in topo.tors().iter().enumerate() {
            let mut bytes = 0.0;
            let mut cap_s = 0.0;
            for &l in &tor.up {
                bytes += out.link_windows.bytes(l, win);
                let nominal = topo.link_capacity_bps(l);
                let factor = match &p.incident {
                    Some(inc) if inc.tors.contains(&(t as u32)) => {
                        // Seconds of the window at reduced capacity.
                        let reduced = (t1 - inc.at_s.max(t0)).clamp(0.0, t1 - t0);
                        (reduced * inc.factor + (t1 - t0 - reduced)) / (t1 - t0)
                    }
                    _ => 1.0,
                };
                cap_s += nominal * factor * (t1 - t0);
            }
            utils.push(if cap_s > 0.0 { bytes * 8.0 / cap_s } else { 0.0 });
            if !warmup {
                cell_bytes += bytes;
                cell_cap_s += cap_s;
            }
        }
        let hot = utils.iter().filter(|&&u| u > p.sched.hot_threshold).count() as f64 / ntor.max(1) as f64;
        let p98 = stats::quantile(&utils, 0.98);
        res.series.push(WindowStats {
            start_s: t0,
            hot_share: hot,
            p98_util: p98,
            migrations: migrations_per_window[win as usize],
            warmup,
        });
        if !warmup {
            all.extend(utils);
        }
    }
    let nall = all.len().max(1) as f64;
    res.hot_tor_share = all.iter().filter(|&&u| u > p.sched.hot_threshold).count() as f64 / nall;
    res.p98_tor_util = stats::quantile(&all, 0.98);
    res.cell_util = if cell_cap_s > 0.0 { cell_bytes * 8.0 / cell_cap_s } else { f64::NAN };
    Ok(res)
}

/// The parameters of a `utp` point: the datacenter file, the policy, the
/// uplink incident, and every key of [`ClusterParams`] (embedded).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", default)]
pub struct UtpParams {
    /// datacenter TOML file (hosts need cores and memory)
    #[schemars(schema_with = "crate::points::path_schema")]
    pub topology: std::path::PathBuf,
    /// placement policy: bandwidth-oblivious, reactive-only, utp
    pub policy: String,
    /// every k-th ToR loses uplink capacity halfway (0: none)
    pub incident_every: usize,
    /// uplink capacity those ToRs keep
    pub incident_factor: f64,
    /// The cluster run's own keys.
    #[serde(flatten)]
    pub cluster: ClusterParams,
}

impl Default for UtpParams {
    fn default() -> Self {
        Self {
            topology: std::path::PathBuf::new(),
            policy: "bandwidth-oblivious".into(),
            incident_every: 10,
            incident_factor: 0.5,
            cluster: ClusterParams::default(),
        }
    }
}

/// Runs one `utp` point: the cluster values, the `series` (per window) and
/// `queries` (per finished query) tables, and notes on fallbacks and
/// pending tasks.
pub fn run(
    p: UtpParams,
    overrides: &crate::points::TopologyOverrides,
    seed: u64,
    _: &crate::points::PointEnv,
) -> Result<crate::points::PointOutput, crate::points::PointError> {
    use crate::points::{Column, PointError, PointOutput};
    if p.topology.as_os_str().is_empty() {
        return Err(PointError::Param { key: "topology".into(), reason: "a datacenter file is required".into() });
    }
    let topo = netheat_config::load_topology_overridden(&p.topology, overrides)?;
    let every = p.incident_every;
    let tors: Vec<u32> = if every > 0 { (0..topo.racks().len() as u32).step_by(every).collect() } else { Vec::new() };
    let cp = ClusterParams {
        incident: (!tors.is_empty()).then(|| Incident {
            at_s: p.cluster.duration_s / 2.0,
            tors,
            factor: p.incident_factor,
        }),
        ..p.cluster
    };
    let r = run_cluster(&topo, &p.policy, &cp, seed).map_err(|e| match e {
        e @ (SchedError::Engine(_) | SchedError::Query(_)) => PointError::Engine(e.into()),
        other => PointError::Input(other.into()),
    })?;
    let placed = r.net_intensive_placements.max(1);
    let mut values = vec![
        ("hot_tor_share".to_string(), r.hot_tor_share),
        ("p98_tor_util".to_string(), r.p98_tor_util),
        ("cell_util".to_string(), r.cell_util),
        ("migrations".to_string(), r.migrations as f64),
        ("servers_used".to_string(), r.servers_used),
        ("max_tasks_per_rack".to_string(), r.max_tasks_per_rack),
        ("cpu_imbalance".to_string(), r.cpu_imbalance),
        ("pending".to_string(), r.pending as f64),
        ("estimate_fallbacks".to_string(), r.estimate_fallbacks as f64),
        ("net_intensive_on_hot_share".to_string(), r.net_intensive_on_hot as f64 / placed as f64),
    ];
    for (name, _, _, p95) in &r.queries {
        values.push((format!("query_p95_{name}_s"), *p95));
    }
    let w = &r.series;
    let series = vec![
        ("window_start_s".to_string(), Column::F64(w.iter().map(|x| x.start_s).collect())),
        ("hot_tor_share".to_string(), Column::F64(w.iter().map(|x| x.hot_share).collect())),
        ("p98_tor_util".to_string(), Column::F64(w.iter().map(|x| x.p98_util).collect())),
        ("migrations".to_string(), Column::I64(w.iter().map(|x| x.migrations as i64).collect())),
        ("warmup".to_string(), Column::Bool(w.iter().map(|x| x.warmup).collect())),
    ];
    let lat = &r.query_latencies;
    let queries = vec![
        ("query".to_string(), Column::Str(lat.iter().map(|&(k, _, _)| r.queries[k].0.clone()).collect())),
        ("start_s".to_string(), Column::F64(lat.iter().map(|x| x.1).collect())),
        ("latency_s".to_string(), Column::F64(lat.iter().map(|x| x.2).collect())),
    ];
    let mut notes = Vec::new();
    if r.estimate_fallbacks > 0 {
        notes.push(format!(
            "{} placements had no network-demand estimate and used the task's observed usage instead",
            r.estimate_fallbacks
        ));
    }
    if r.pending > 0 {
        notes.push(format!("{} tasks still pending at the end: {}", r.pending, r.pending_reason));
    }
    Ok(PointOutput {
        values,
        tables: vec![("series".into(), series), ("queries".into(), queries)],
        notes,
        // For tests and callers that check the run's bookkeeping (not values).
        extra: [
            ("placements".to_string(), r.placements as f64),
            ("net_intensive_placements".to_string(), r.net_intensive_placements as f64),
            ("net_intensive_on_hot".to_string(), r.net_intensive_on_hot as f64),
            ("events".to_string(), r.events as f64),
        ]
        .into_iter()
        .chain(r.queries.iter().map(|(name, n, _, _)| (format!("query_count_{name}"), *n as f64)))
        .collect(),
    })
}

crate::point_kind!("utp", UtpParams, run, required = ["topology"]);
