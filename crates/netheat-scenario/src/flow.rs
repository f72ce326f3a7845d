//! A scenario on the flow-level engine.
//!
//! Every flow of the scenario starts through one [`DagRunner`]: application
//! tasks are its DAGs, and open-loop flows become one-flow tasks (flows of a
//! trace sharing a `task_id`, one task with a delay before each flow). The
//! runner asks [`Decisions`] for every decision: the path (the routing
//! policy, at the moment the flow starts), the priority class (the flow
//! scheduler, which also hears task arrivals and completions and, for
//! `fifo-lm`, the bytes large tasks have sent), the replicas of each
//! block a `file-write` task writes (the storage policy) and the hosts of
//! the tasks of a `compute-job`, which a migrating placement policy moves
//! off hot ToRs while they run ([`crate::placement`]). When no decision
//! depends on the run (ECMP with `fair-share` or `sff`), open-loop flows go
//! straight into the engine instead, with the same route and class they
//! would have been given: the scenario layer then costs nothing per flow.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use netheat_core::{HostId, IdMap, LinkId, Routing};
use netheat_engine::{Controller, Ctx, DenseMode, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_flowsched::policy::{size_class, ClassChange, FlowScheduler, TaskIdAllocator, TaskMeta};
use netheat_flowsched::HeavyPoll;
use netheat_subways::lb::ActiveFlow;
use netheat_subways::{LoadBalancer, Net, WindowMeter};
use netheat_topology::Topology;
use netheat_workloads::{DagRunner, FlowHooks, FlowRow, RunBudget, StepId, TaskDag};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::background::Background;
use crate::config::{RoutingPolicy, SchedulingPolicy};
use crate::placement::{PlacementRun, Rewrite};
use crate::result::{Decision, Floors, FlowOut, Recorded, ScenarioResult, TaskOut, TraceTasks};
use crate::storage::{disk_links, storage_stats, StorageRun};
use crate::ScenarioError;

/// Timer tokens of the decisions (the runner's count up from 0).
const TOKEN_LB: u64 = u64::MAX;
const TOKEN_POLL: u64 = u64::MAX - 1;
/// Wall time between progress reports (and Ctrl-C checks).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
const TOKEN_REPORT: u64 = u64::MAX - 2;
const TOKEN_TICK: u64 = u64::MAX - 3;
const TOKEN_DETECT: u64 = u64::MAX - 4;
const TOKEN_DECIDE: u64 = u64::MAX - 5;
const TOKEN_BACKGROUND: u64 = u64::MAX - 6;
/// The storage rebalancer's checks.
const TOKEN_REBALANCE: u64 = u64::MAX - 7;
/// Flow ids of the rebalancer's moves start here (below a cluster's, 2^60).
const REBALANCE_FLOW_BASE: u64 = 1 << 59;
/// The hedge timer of the read that is the runner's task `i` (its index,
/// not its id, which a trace's task ids push up) is this plus `i` (below a
/// cluster's timers, 2^56; the runner's count up from 0).
const TOKEN_HEDGE_BASE: u64 = 1 << 55;

/// What the flow-engine run needs.
pub struct FlowRun<'a> {
    /// The datacenter.
    pub topo: &'a Topology,
    /// Open-loop flows, sorted by start.
    pub flows: &'a [FlowRow],
    /// Application tasks: (start, workload table, DAG).
    pub tasks: Vec<(f64, usize, TaskDag)>,
    /// Routing policy and its parameters.
    pub routing: RoutingPolicy,
    /// Load-balancing parameters.
    pub lb: netheat_subways::LbParams,
    /// Scheduling policy.
    pub scheduling: SchedulingPolicy,
    /// `fifo-lm` heavy threshold, bytes (resolved).
    pub heavy_bytes: f64,
    /// `fifo-lm` poll interval, seconds.
    pub poll_s: f64,
    /// Load balancers issuing task ids.
    pub lbs: usize,
    /// Whether each client (a task's queue, else the host its last flow
    /// reaches) keeps its own id counter instead (`lbs` unused).
    pub client_counters: bool,
    /// Utilization window, seconds.
    pub window_s: f64,
    /// Stop time, seconds.
    pub until_s: Option<f64>,
    /// Seed.
    pub seed: u64,
    /// Budget plan (windows the run may keep).
    pub plan: RunBudget,
    /// The storage policy, if any.
    pub storage: Option<StorageRun>,
    /// The placement policy, if any.
    pub placement: Option<PlacementRun>,
    /// A `cluster` app's jobs under the placement policy, if any.
    pub cluster: Option<crate::cluster::ClusterRun<'a>>,
    /// The engine's dense mode (the allocation is the same either way).
    pub dense: DenseMode,
    /// The large tables to keep (`scenario.record`): without flows the
    /// engine forgets each flow once it has finished, without links it
    /// keeps no utilization windows.
    pub recorded: Recorded,
    /// The load of precalculated traffic, taken off the links' capacity
    /// step by step ([`crate::background`]).
    pub background: Option<std::sync::Arc<Background>>,
}

impl<'a> FlowRun<'a> {
    /// `flows` and `tasks` on `topo` with no policy: per-flow ECMP, per-flow
    /// fair share (the flows' own priority classes), no storage or
    /// placement policy, until the last flow ends (`netheat simulate`).
    pub fn plain(
        topo: &'a Topology,
        flows: &'a [FlowRow],
        tasks: Vec<(f64, usize, TaskDag)>,
        window_s: f64,
        seed: u64,
        plan: RunBudget,
    ) -> Self {
        FlowRun {
            topo,
            flows,
            tasks,
            routing: RoutingPolicy::Ecmp,
            lb: netheat_subways::LbParams::default(),
            scheduling: SchedulingPolicy::FairShare,
            heavy_bytes: f64::INFINITY,
            poll_s: netheat_flowsched::IdealOptions::default().poll_s,
            lbs: 1,
            client_counters: false,
            window_s,
            until_s: None,
            seed,
            plan,
            storage: None,
            placement: None,
            cluster: None,
            dense: DenseMode::default(),
            recorded: Recorded::default(),
            background: None,
        }
    }
}

/// Per-task state the scheduler needs.
struct TaskSched {
    meta: TaskMeta,
    /// Running flows: (engine id, receiver), in start order; a finished
    /// one's receiver is [`GONE`] until the list is compacted (so a finish
    /// does not shift the rest of the list, and the ids stay in order).
    flows: Vec<(u64, HostId)>,
    /// Whether the ids of `flows` increase (the runner's ids do): a
    /// finished flow is then found by bisection, not by a scan.
    ascending: bool,
    /// Entries of `flows` that are [`GONE`].
    gone: usize,
    /// Bytes of completed flows.
    bytes_done: f64,
}

/// The receiver of a finished flow in [`TaskSched::flows`] (no host).
const GONE: HostId = HostId::MAX;

/// The policies of a run, asked by the runner (see the module docs).
pub struct Decisions<'n, 't> {
    net: &'n Net<'t>,
    lb: Option<Box<dyn LoadBalancer>>,
    rng: ChaCha8Rng,
    /// Running flows routed by the load balancer.
    active: BTreeMap<u64, ActiveFlow>,
    /// Bytes per link over the load balancer's current period.
    meter: WindowMeter,
    /// When that period started, seconds.
    period_start_s: f64,
    /// When the load balancer first sent or moved a flow onto a detour.
    first_detour_s: Option<f64>,
    /// Running flows the load balancer left to the engine (no live port).
    cut_off: BTreeSet<u64>,
    sched: Box<dyn FlowScheduler>,
    /// `sched.reclassifies()`, asked once (it is read for every flow).
    tracks_flows: bool,
    ids: TaskIdAllocator,
    tasks: IdMap<u64, TaskSched>,
    /// Scheduler id to runner task id.
    by_sched: IdMap<u64, u64>,
    changes: Vec<ClassChange>,
    /// `fifo-lm`'s reads of large tasks (the idealized runner's rule).
    poll: HeavyPoll,
    /// Per host: the most bits per second it can receive (its ports' down
    /// links at their highest capacity over the run), for the polls' cut.
    host_in_bps: Vec<f64>,
    heavy_bytes: f64,
    next_lb: usize,
    lbs: usize,
    /// With a counter per client: each client's counter.
    client_lb: Option<HashMap<u64, usize>>,
    /// Tasks in the runner, started, and started but not finished.
    total_tasks: usize,
    started: usize,
    running: usize,
    /// The storage policy, if any.
    storage: Option<StorageRun>,
    /// The placement policy, if any.
    placement: Option<PlacementRun>,
    /// Counters for `stats.json`.
    rebinds: u64,
    class_changes: u64,
    /// Whether the placement's utilization ticks go on.
    ticking: bool,
    /// The engine's seed (its ECMP draws).
    seed: u64,
    /// Per host, the engine link of its disk (hosts with a disk, in runs
    /// with file writes): see [`disk_links`].
    disk: Vec<Option<LinkId>>,
    /// Precalculated traffic, with per link the next entry of its load and
    /// the capacity in force.
    background: Option<BackgroundRun>,
    /// When a `cluster` app stops starting flows (0: none).
    cluster_until_s: f64,
    /// The storage run's periodic timers (reports, decisions, rebalancer
    /// checks, in that order) left unarmed while every flow was stranded,
    /// to be armed again when a task or step starts.
    storage_idle: [bool; 3],
    /// Flows cancelled because their task finished without them (a hedged
    /// read's): when, and the bytes they had sent.
    abandoned: BTreeMap<u64, (f64, f64)>,
    /// The runner's first task id (task ids are this plus the task's index).
    task_base: u64,
    error: Option<String>,
}

/// The precalculated traffic's load being taken off the links.
struct BackgroundRun {
    load: std::sync::Arc<Background>,
    /// Per link: its next entry in `load.per_link`, and its capacity now.
    next: Vec<usize>,
    cap: Vec<f64>,
    nominal: Vec<f64>,
    /// Links the background uses.
    used: Vec<LinkId>,
    /// The step applied last.
    step: u32,
}

impl BackgroundRun {
    fn new(load: std::sync::Arc<Background>, nominal: Vec<f64>) -> Self {
        let used = (0..load.per_link.len() as LinkId).filter(|&l| !load.per_link[l as usize].is_empty()).collect();
        Self { next: vec![0; load.per_link.len()], cap: nominal.clone(), nominal, used, step: 0, load }
    }

    /// Sets every used link's capacity for step `k`.
    fn apply(&mut self, ctx: &mut Ctx<'_, '_>, k: u32) -> Result<(), String> {
        self.step = k;
        for &l in &self.used {
            let li = l as usize;
            let v = &self.load.per_link[li];
            let (bg, n) = match v.get(self.next[li]) {
                Some(&(s, r, n)) if s == k => {
                    self.next[li] += 1;
                    (r, n)
                }
                _ => (0.0, 0.0),
            };
            let left = Background::left(self.nominal[li], bg, n);
            if left != self.cap[li] {
                self.cap[li] = left;
                ctx.set_capacity(ctx.now(), l, left).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

impl Decisions<'_, '_> {
    /// Whether the storage run's periodic timers go on: tasks are still to
    /// start, or some running task can move (not every flow is stranded by
    /// a failure: else they would tick for ever in a run that cannot end).
    fn storage_busy(&self, ctx: &Ctx<'_, '_>) -> bool {
        self.started < self.total_tasks || (self.running > 0 && !ctx.all_flows_stranded())
    }

    /// Arms again, on their cadence, the storage timers left unarmed while
    /// every flow was stranded (before any block's wait for the next
    /// decision is set, so that the decision comes first at its instant).
    fn rearm_storage(&mut self, ctx: &mut Ctx<'_, '_>) {
        if !self.storage_idle.contains(&true) {
            return;
        }
        let Some(st) = self.storage.as_ref() else { return };
        let now = ctx.now();
        let next = |every: f64| ((now / every).floor() + 1.0) * every;
        let timers = [
            (TOKEN_REPORT, Some(st.report_s)),
            (TOKEN_DECIDE, (st.decision_s > 0.0).then_some(st.decision_s)),
            (TOKEN_REBALANCE, st.rebalancer.as_ref().map(|r| r.interval_s)),
        ];
        for (i, (token, every)) in timers.into_iter().enumerate() {
            if let (true, Some(every)) = (self.storage_idle[i], every) {
                self.storage_idle[i] = false;
                if let Err(e) = ctx.schedule_timer(next(every), token) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        }
    }

    fn place_blocks(&mut self, now: f64, task_id: u64, dag: &mut TaskDag, ready: &[StepId]) {
        if !netheat_workloads::apps::cfs::writes_blocks(dag.kind) && dag.kind != "chunk-write" {
            return;
        }
        if let Some(st) = self.storage.as_mut() {
            st.request(now, task_id, dag, ready);
            if let Err(e) = st.place(now, task_id, dag, ready) {
                self.error.get_or_insert(e);
            }
        }
    }

    fn apply(&mut self, ctx: &mut Ctx<'_, '_>) {
        for (sid, dom, class) in std::mem::take(&mut self.changes) {
            let Some(tid) = self.by_sched.get(&sid) else { continue };
            let Some(t) = self.tasks.get(tid) else { continue };
            for &(fid, dst) in &t.flows {
                // (A finished flow's receiver, GONE, is no host: never `dom`.)
                if dst == dom {
                    self.class_changes += 1;
                    if let Err(e) = ctx.set_priority(fid, class) {
                        self.error.get_or_insert(e.to_string());
                    }
                }
            }
        }
    }

    fn flow_done(&mut self, flow: &FlowRecord) {
        self.forget(flow.finish_s, flow.id, flow.task_id, flow.bytes);
    }

    /// Flow `id` of task `task` left the network at `now` with `bytes`
    /// sent: finished, or cancelled.
    fn forget(&mut self, now: f64, id: u64, task: Option<u64>, bytes: f64) {
        if let Some(p) = self.placement.as_mut() {
            p.flow_done(now, id);
        }
        // (Both sets are empty without a load balancer: skip their lookups.)
        if !self.active.is_empty() {
            if let Some(f) = self.active.remove(&id) {
                self.meter.finish(f.id, &f.path, bytes);
            }
        }
        if !self.cut_off.is_empty() {
            self.cut_off.remove(&id);
        }
        self.untrack(task, id, bytes);
    }

    /// Forgets a running flow of task `task` (the engine's task id: the
    /// runner's) that delivered `bytes`, for policies that track them.
    fn untrack(&mut self, task: Option<u64>, flow: u64, bytes: f64) {
        if !self.tracks_flows {
            return;
        }
        if let Some(t) = task.and_then(|tid| self.tasks.get_mut(&tid)) {
            let at = if t.ascending {
                t.flows.binary_search_by_key(&flow, |&(f, _)| f).ok()
            } else {
                t.flows.iter().position(|&(f, _)| f == flow)
            };
            if let Some(i) = at.filter(|&i| t.flows[i].1 != GONE) {
                t.flows[i].1 = GONE;
                t.gone += 1;
                if 2 * t.gone > t.flows.len() {
                    t.flows.retain(|&(_, d)| d != GONE);
                    t.gone = 0;
                }
                t.bytes_done += bytes;
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let now = ctx.now();
        if token == TOKEN_LB {
            let Some(lb) = self.lb.as_mut() else { return };
            if !self.active.is_empty() {
                let active: Vec<ActiveFlow> = self.active.values().cloned().collect();
                // Each link's average rate over the period, from the flows'
                // byte counters (what switch counters read every period give).
                for f in &active {
                    self.meter.record(f.id, &f.path, ctx.flow_bytes_sent(f.id).unwrap_or(0.0));
                }
                let window = self.meter.close((now - self.period_start_s).max(1e-12));
                self.period_start_s = now;
                let before = lb.detours();
                let moves = {
                    let rate = |l: LinkId| window[l as usize];
                    lb.on_period(self.net, now, &rate, &active, &mut self.rng)
                };
                if lb.detours() > before && self.first_detour_s.is_none() {
                    self.first_detour_s = Some(now);
                }
                for (id, path) in moves {
                    match ctx.rebind_explicit(id, path.clone()) {
                        Ok(()) => {
                            self.rebinds += 1;
                            if let Some(f) = self.active.get_mut(&id) {
                                f.path = path;
                            }
                        }
                        Err(e) => {
                            self.error.get_or_insert(e.to_string());
                        }
                    }
                }
            }
            // Keep sampling while anything can still send.
            // (Stranded flows, at rate 0 with no path, and flows the policy
            // left to the engine for want of a live port, do not count: they
            // would keep an otherwise finished run alive forever.)
            let moving = self.active.keys().any(|&f| ctx.flow_rate_bps(f).is_some_and(|r| r > 0.0));
            let between_steps = self.running > 0 && self.active.is_empty() && self.cut_off.is_empty();
            // (A cluster's tasks keep coming until the run stops.)
            let busy = moving || self.started < self.total_tasks || between_steps || now < self.cluster_until_s;
            if let (Some(p), true) = (lb.period_s(), busy) {
                if let Err(e) = ctx.schedule_timer(now + p, TOKEN_LB) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_BACKGROUND {
            let Some(bg) = self.background.as_mut() else { return };
            let k = (now / bg.load.step_s).round() as u32;
            if let Err(e) = bg.apply(ctx, k) {
                self.error.get_or_insert(e);
            }
            // One step past the last, to give the links back their capacity.
            if k < bg.load.steps() {
                if let Err(e) = ctx.schedule_timer(f64::from(k + 1) * bg.load.step_s, TOKEN_BACKGROUND) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_REPORT {
            let busy = self.storage_busy(ctx);
            self.storage_idle[0] = !busy;
            if let Some(st) = self.storage.as_mut() {
                // What a counter reads: the run's flows and, over the step
                // just ended, the precalculated traffic.
                let bg = self
                    .background
                    .as_ref()
                    .map(|b| (&b.load, ((now / b.load.step_s).ceil() as u32).saturating_sub(1)));
                let rates: Vec<Option<f64>> = (0..st.cluster.link_bps.len() as LinkId)
                    .map(|l| Some(ctx.link_rate_bps(l) + bg.map_or(0.0, |(b, k)| b.at(l, k).0)))
                    .collect();
                st.policy.observe(now, &rates);
                if let Some(log) = st.record.as_mut() {
                    log.push(Decision::Report { time_s: now, rates });
                }
                if busy {
                    if let Err(e) = ctx.schedule_timer(now + st.report_s, TOKEN_REPORT) {
                        self.error.get_or_insert(e.to_string());
                    }
                }
            }
        } else if token == TOKEN_REBALANCE {
            let busy = self.storage_busy(ctx);
            self.storage_idle[2] = !busy;
            let Some(st) = self.storage.as_mut() else { return };
            // A move is a flow from the host giving the chunk away to the
            // one taking it, by ECMP, in the link's competition like any.
            let moved = st.rebalancer.as_ref().map_or(0, |r| r.moves);
            for (k, (from, to, bytes)) in st.rebalance().into_iter().enumerate() {
                let spec = FlowSpec::new(REBALANCE_FLOW_BASE + moved + k as u64, from, to, bytes, now, Route::Ecmp);
                if let Err(e) = ctx.add_flow(spec) {
                    self.error.get_or_insert(e.to_string());
                }
            }
            if let (true, Some(rb)) = (busy, st.rebalancer.as_ref()) {
                if let Err(e) = ctx.schedule_timer(now + rb.interval_s, TOKEN_REBALANCE) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_DECIDE {
            let busy = self.storage_busy(ctx);
            self.storage_idle[1] = !busy;
            let Some(st) = self.storage.as_mut() else { return };
            if let Err(e) = st.decide_pending(now) {
                self.error.get_or_insert(e);
            }
            if busy {
                if let Err(e) = ctx.schedule_timer(now + st.decision_s, TOKEN_DECIDE) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_TICK {
            let topo = self.net.topo;
            let waiting = self.started < self.total_tasks;
            let Some(p) = self.placement.as_mut() else { return };
            // Keep sampling while compute flows move or tasks are to come
            // (flows stranded by a failure do not keep the run alive).
            self.ticking = p.tick(topo, ctx) || waiting;
            if self.ticking {
                if let Err(e) = ctx.schedule_timer(now + p.params.tick_s, TOKEN_TICK) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_DETECT {
            let topo = self.net.topo;
            let Some(p) = self.placement.as_mut() else { return };
            let rewrites = p.detect(topo, ctx);
            let period = p.params.detect_s;
            self.move_flows(ctx, rewrites);
            // Detection stops with the samples.
            if self.ticking {
                if let Err(e) = ctx.schedule_timer(now + period, TOKEN_DETECT) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        } else if token == TOKEN_POLL {
            // fifo-lm: report the exact bytes sent by each large task.
            if !self.poll.is_due(now) {
                return;
            }
            let (tasks, sched, changes) = (&self.tasks, &mut self.sched, &mut self.changes);
            let next = self.poll.poll(
                now,
                self.heavy_bytes,
                |tid| !tasks.contains_key(&tid),
                |tid| {
                    let t = &tasks[&tid];
                    t.bytes_done
                        + t.flows
                            .iter()
                            .filter(|&&(_, d)| d != GONE)
                            .filter_map(|&(f, _)| ctx.flow_bytes_sent(f))
                            .sum::<f64>()
                },
                |tid, sent| sched.task_progress(tasks[&tid].meta.id, sent, changes),
            );
            self.apply(ctx);
            if let Some(at) = next {
                if let Err(e) = ctx.schedule_timer(at, TOKEN_POLL) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        }
    }
}

impl FlowHooks for Decisions<'_, '_> {
    fn steps_ready(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &mut TaskDag, ready: &[StepId]) {
        self.rearm_storage(ctx);
        self.place_blocks(ctx.now(), task_id, dag, ready);
    }

    fn task_started(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &mut TaskDag, ready: &[StepId]) {
        self.rearm_storage(ctx);
        if let (Some(st), true) = (self.storage.as_mut(), dag.read.is_some()) {
            if let Some(at) = st.resolve_read(ctx.now(), task_id, dag) {
                if let Err(e) = ctx.schedule_timer(at, TOKEN_HEDGE_BASE + (task_id - self.task_base)) {
                    self.error.get_or_insert(e.to_string());
                }
            }
        }
        if let Some(p) = self.placement.as_mut() {
            if let Err(e) = p.place_job(self.net.topo, ctx, task_id, dag) {
                self.error.get_or_insert(e);
            }
        }
        self.place_blocks(ctx.now(), task_id, dag, ready);
        let lb = match (&self.client_lb, task_client(dag)) {
            (Some(m), Some(c)) => m.get(&c).copied().unwrap_or(0),
            _ => self.next_lb % self.lbs.max(1),
        };
        self.next_lb += 1;
        self.started += 1;
        self.running += 1;
        let meta = TaskMeta { id: self.ids.next(lb), bytes: dag.bytes() };
        let mut domains: Vec<HostId> = Vec::with_capacity(dag.steps.len());
        domains.extend(dag.steps.iter().filter_map(|s| match s {
            netheat_workloads::Step::Flow { dst, .. } => Some(*dst),
            _ => None,
        }));
        self.sched.task_arrived(&meta, &domains, &mut self.changes);
        self.apply(ctx);
        self.by_sched.insert(meta.id, task_id);
        // Room for every flow at once, for policies that track them.
        let flows = if self.tracks_flows { Vec::with_capacity(domains.len()) } else { Vec::new() };
        self.tasks.insert(task_id, TaskSched { meta, flows, ascending: true, gone: 0, bytes_done: 0.0 });
        if let Some(th) = self.sched.heavy_threshold() {
            if meta.bytes > th {
                // The cut: what the task's receivers can take (a flow to its own
                // host crosses no link, so nothing bounds the task).
                let mut dsts: Vec<HostId> = Vec::new();
                let mut local = false;
                for st in &dag.steps {
                    if let netheat_workloads::Step::Flow { src, dst, .. } = st {
                        local |= src == dst;
                        dsts.push(*dst);
                    }
                }
                dsts.sort_unstable();
                dsts.dedup();
                let cut = if local { f64::INFINITY } else { dsts.iter().map(|&h| self.host_in_bps[h as usize]).sum() };
                if let Some(at) = self.poll.watch(ctx.now(), task_id, cut) {
                    if let Err(e) = ctx.schedule_timer(at, TOKEN_POLL) {
                        self.error.get_or_insert(e.to_string());
                    }
                }
            }
        }
    }

    fn flow(&mut self, _ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &TaskDag, step: StepId, spec: &mut FlowSpec) {
        if let Some(p) = self.placement.as_mut() {
            p.flow_started(task_id, spec.id, spec.src, spec.dst, spec.bytes, spec.rate_cap_bps);
        }
        self.route_and_class(task_id, spec);
        if netheat_workloads::apps::cfs::writes_blocks(dag.kind) {
            if let Some(request) = netheat_workloads::apps::cfs::block_request(dag, step) {
                self.pipeline_route(dag, request, spec);
            }
        }
    }

    fn io(&mut self, ctx: &mut Ctx<'_, '_>, _task_id: u64, dag: &TaskDag, step: StepId) -> f64 {
        match (self.storage.as_mut(), &dag.steps[step]) {
            (Some(st), &netheat_workloads::Step::Io { host, bytes, write, object }) => {
                st.io_seconds(ctx.now(), host, object, bytes, write)
            }
            _ => 0.0,
        }
    }

    fn flow_abandoned(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, flow_id: u64) {
        let sent = ctx.flow_bytes_sent(flow_id).unwrap_or(0.0);
        self.abandoned.insert(flow_id, (ctx.now(), sent));
        self.forget(ctx.now(), flow_id, Some(task_id), sent);
    }

    fn task_finished(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64) {
        if let Some(p) = self.placement.as_mut() {
            p.job_finished(ctx.now(), task_id);
        }
        if let Some(st) = self.storage.as_mut() {
            st.task_finished(task_id);
        }
        self.running = self.running.saturating_sub(1);
        if let Some(t) = self.tasks.remove(&task_id) {
            self.by_sched.remove(&t.meta.id);
            self.sched.task_completed(t.meta.id, &mut self.changes);
            self.apply(ctx);
        }
    }
}

/// A `cluster` app's flows, its tasks' and its queries', through the
/// routing policy (a load balancer routes and re-binds them like the
/// runner's).
impl crate::cluster::ClusterHooks for Decisions<'_, '_> {
    fn start(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, mut spec: FlowSpec) {
        self.route_and_class(task_id, &mut spec);
        if let Err(e) = ctx.add_flow(spec) {
            self.error.get_or_insert(e.to_string());
        }
    }

    fn cut(&mut self, id: u64, sent: f64) {
        if let Some(f) = self.active.remove(&id) {
            self.meter.finish(f.id, &f.path, sent);
        }
        self.cut_off.remove(&id);
    }

    fn route(&mut self, task_id: u64, spec: &mut FlowSpec) {
        self.route_and_class(task_id, spec);
    }
}

impl Decisions<'_, '_> {
    /// The route (load balancer) and priority class (scheduler) of a flow of
    /// task `task_id` about to start.
    fn route_and_class(&mut self, task_id: u64, spec: &mut FlowSpec) {
        if let Some(lb) = self.lb.as_mut() {
            // A flow whose source or destination has no live port (a failed
            // ToR) keeps the engine's route, which strands it; the policy
            // neither routes nor re-binds it.
            let cut_off = self.net.ports(spec.src).is_empty() || self.net.ports(spec.dst).is_empty();
            if cut_off {
                self.cut_off.insert(spec.id);
            }
            if spec.src != spec.dst && !cut_off {
                let before = lb.detours();
                spec.route = lb.route(self.net, spec.src, spec.dst, &mut self.rng);
                if lb.detours() > before && self.first_detour_s.is_none() {
                    self.first_detour_s = Some(spec.start_s);
                }
                let path = match &spec.route {
                    Route::Explicit(p) => p.clone(),
                    _ => Vec::new(),
                };
                self.active.insert(spec.id, ActiveFlow { id: spec.id, src: spec.src, dst: spec.dst, path });
            }
        }
        if let Some(t) = self.tasks.get_mut(&task_id) {
            spec.priority = self.sched.flow_class(&t.meta, spec.dst, spec.bytes);
            // The running flows of a task, for policies that re-class them
            // (and read their bytes: `fifo-lm`).
            if self.tracks_flows {
                t.ascending &= t.flows.last().is_none_or(|&(f, _)| f < spec.id);
                t.flows.push((spec.id, spec.dst));
            }
        }
    }

    /// A hop of a block's pipeline (of a `file-write` or a job that writes;
    /// `request` is the block's request step): its route goes on through the
    /// destination's disk link (so writes to one host's disks share their
    /// summed rate, each capped at one disk's), and under `storage.free-source` it
    /// leaves out the writer's server and ToR uplinks. The path is the one
    /// the engine's ECMP would draw. A hop the load balancer routes keeps
    /// its path and its disk rate cap: the balancer re-binds flows to paths
    /// of its own, which have no disk link.
    fn pipeline_route(&mut self, dag: &TaskDag, request: StepId, spec: &mut FlowSpec) {
        let disk = self.disk.get(spec.dst as usize).copied().flatten();
        let free = self.storage.as_ref().is_some_and(|s| s.free_source);
        if (disk.is_none() && !free) || self.active.contains_key(&spec.id) {
            return;
        }
        let topo = self.net.topo;
        let mut path = Vec::new();
        match spec.route {
            Route::Explicit(ref p) => path.clone_from(p),
            Route::Ecmp | Route::PathIndex(_) if spec.src != spec.dst => {
                let n = topo.num_paths(spec.src, spec.dst);
                let k = match spec.route {
                    Route::PathIndex(k) => k,
                    _ => netheat_engine::ecmp_draw(topo, self.seed, spec.id, spec.src, spec.dst, n),
                };
                topo.path(spec.src, spec.dst, k, &mut path);
            }
            _ => {}
        }
        if free {
            // The writer: the source of the block's first hop.
            let writer = (request + 1..dag.steps.len()).find_map(|s| match dag.steps[s] {
                netheat_workloads::Step::Flow { src, .. } if dag.deps(s) == [request] => Some(src),
                _ => None,
            });
            if let Some(w) = writer {
                let h = &topo.hosts()[w as usize];
                let skip: BTreeSet<LinkId> = h
                    .ports
                    .iter()
                    .flat_map(|p| std::iter::once(p.up).chain(topo.tors()[p.tor as usize].up.iter().copied()))
                    .collect();
                path.retain(|l| !skip.contains(l));
            }
        }
        if let Some(d) = disk {
            // The host's disks together are the link; the hop keeps its cap
            // of one disk's rate (a replica streams onto one of them).
            path.push(d);
        }
        spec.route = Route::Explicit(path);
    }

    /// Cancels the flows of moved tasks and starts, from or to their new
    /// hosts, flows of the bytes they had not delivered.
    fn move_flows(&mut self, ctx: &mut Ctx<'_, '_>, rewrites: Vec<Rewrite>) {
        let now = ctx.now();
        for rw in rewrites {
            if let Err(e) = ctx.cancel_flow(rw.old) {
                self.error.get_or_insert(e.to_string());
                continue;
            }
            if let Some(f) = self.active.remove(&rw.old) {
                self.meter.finish(f.id, &f.path, rw.sent);
            }
            self.cut_off.remove(&rw.old);
            self.untrack(Some(rw.task_id), rw.old, rw.sent);
            let mut spec = FlowSpec::new(rw.new, rw.src, rw.dst, rw.bytes, now, Route::Ecmp).with_task(rw.task_id);
            spec.rate_cap_bps = rw.cap;
            self.route_and_class(rw.task_id, &mut spec);
            if let Err(e) = ctx.add_flow(spec) {
                self.error.get_or_insert(e.to_string());
            }
        }
    }
}

/// The runner and the decisions, as one engine controller.
struct Runtime<'n, 't> {
    runner: DagRunner,
    decide: Decisions<'n, 't>,
    /// How an engine flow record becomes a `flows` row.
    rows: RowMap,
    /// What the tables derived from the flows need (trace tasks, task
    /// floors), folded in as flows finish, whether or not the run keeps
    /// its flows (`scenario.record`): the same sums in the same order
    /// either way.
    fold: FlowFold,
    /// A `cluster` app's scheduler (its own flows and timers).
    cluster: Option<crate::cluster::ClusterRun<'t>>,
    /// The rows of the finished flows, when the run records `flows`: made
    /// as each flow finishes, so the engine forgets every finished flow
    /// whatever is recorded (a row is a third of an engine flow's state).
    kept: Option<Vec<FlowOut>>,
}

/// Flow rows in id order. Rows come in completion order; when their ids
/// are dense and unique (one application's flows), each is moved to its
/// place in one pass (a permutation applied in place, with at most 12
/// bytes of scratch per row: a slot per id in the span, a rank per row)
/// instead of a sort of the rows.
fn in_id_order(mut rows: Vec<FlowOut>) -> Vec<FlowOut> {
    let lo = rows.iter().map(|f| f.flow_id).min().unwrap_or(0);
    let hi = rows.iter().map(|f| f.flow_id).max().unwrap_or(0);
    if rows.is_empty() || (hi - lo) / 2 >= rows.len() as u64 {
        rows.sort_by_key(|f| f.flow_id);
        return rows;
    }
    let mut at = vec![u32::MAX; (hi - lo + 1) as usize];
    for (i, f) in rows.iter().enumerate() {
        at[(f.flow_id - lo) as usize] = i as u32;
    }
    // Each row's rank in id order.
    let mut to = vec![u32::MAX; rows.len()];
    for (rank, &i) in at.iter().filter(|&&i| i != u32::MAX).enumerate() {
        to[i as usize] = rank as u32;
    }
    if to.contains(&u32::MAX) {
        // A repeated id: a stable sort keeps both rows.
        rows.sort_by_key(|f| f.flow_id);
        return rows;
    }
    for i in 0..rows.len() {
        while to[i] as usize != i {
            let j = to[i] as usize;
            rows.swap(i, j);
            to.swap(i, j);
        }
    }
    rows
}

/// How an engine flow record becomes a `flows` row: open-loop flows run as
/// the runner's tasks (see [`dynamic`]) get back their own ids and trace
/// task ids.
struct RowMap {
    dynamic: bool,
    /// First id of the runner's flows.
    flow_base: u64,
    /// Per open task in the runner: its trace task id and its flows' ids.
    open: Vec<(Option<u64>, Vec<u64>)>,
}

impl RowMap {
    /// The open task (index in the runner) and step that ran `f`, if any.
    fn open_step(&self, runner: &DagRunner, f: &FlowRecord) -> Option<(usize, StepId)> {
        if !self.dynamic || f.id < self.flow_base {
            return None;
        }
        runner.flow_step(f.id).filter(|&(ti, _)| ti < self.open.len())
    }

    /// The row of `f`; `cut`: when and how many bytes it had delivered when
    /// a migration cancelled it.
    #[inline]
    fn row(&self, runner: &DagRunner, f: &FlowRecord, cut: Option<(f64, f64)>) -> FlowOut {
        let (id, task) = match self.open_step(runner, f) {
            // Step k of an open task is flow k (delays come before their flow).
            Some((ti, step)) => (self.open[ti].1[runner_flow_ordinal(runner, ti, step)], self.open[ti].0),
            None => (f.id, f.task_id),
        };
        let mut row = FlowOut::from_record(f, id, task);
        if let Some((t, sent)) = cut {
            // Cut by a migration: what it delivered until then.
            row.bytes = sent;
            row.finish_s = t;
            row.fct_s = t - row.start_s;
        }
        row
    }
}

/// The trace tasks and the task floors, folded one flow row at a time.
struct FlowFold {
    /// First application task id (trace task ids are below it).
    task_base: u64,
    trace: TraceTasks,
    floors: Floors,
}

impl FlowFold {
    fn add(&mut self, row: &FlowOut) {
        self.trace.add(row, self.task_base);
        self.floors.add(row);
    }
}

impl Controller for Runtime<'_, '_> {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        // A finished flow was not cut (a migration cancels the flows it cuts).
        let row = self.rows.row(&self.runner, flow, None);
        self.fold.add(&row);
        if let Some(k) = self.kept.as_mut() {
            k.push(row);
        }
        if crate::cluster::ClusterRun::owns_flow(flow.id) {
            self.decide.flow_done(flow);
            if let Some(c) = self.cluster.as_mut() {
                c.on_flow_complete(ctx, flow, &mut self.decide);
            }
            return;
        }
        // A flow carrying on a moved task's bytes finishes the runner's step.
        let id = self.decide.placement.as_ref().map_or(flow.id, |p| p.runner_flow(flow.id));
        self.decide.flow_done(flow);
        if id == flow.id {
            self.runner.on_flow_complete_with(ctx, flow, &mut self.decide);
        } else {
            let rec = FlowRecord { id, ..flow.clone() };
            self.runner.on_flow_complete_with(ctx, &rec, &mut self.decide);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        if crate::cluster::ClusterRun::owns_timer(token) {
            if let Some(c) = self.cluster.as_mut() {
                c.on_timer(ctx, token, &mut self.decide);
            }
        } else if (TOKEN_HEDGE_BASE..crate::cluster::TOKEN_BASE).contains(&token) {
            self.hedge(ctx, (token - TOKEN_HEDGE_BASE) as usize);
        } else if self.runner.owns_timer(token) {
            self.runner.on_timer_with(ctx, token, &mut self.decide);
        } else {
            self.decide.on_timer(ctx, token);
        }
    }
}

/// Whether step `s` of the runner's task `task` is a flow that finished.
fn flow_arrived(runner: &DagRunner, task: usize, s: StepId) -> bool {
    matches!(runner.dag(task).steps[s], netheat_workloads::Step::Flow { .. })
        && !runner.record(task).step_finish_s[s].is_nan()
}

impl Runtime<'_, '_> {
    /// The hedge timer of read `task` (the runner's index): if it still
    /// misses some of the fetches it needs (flows are a read's sinks), it
    /// fetches as many of its spare copies, each a disk read and then a
    /// flow to the client.
    fn hedge(&mut self, ctx: &mut Ctx<'_, '_>, task: usize) {
        if task >= self.runner.num_tasks() {
            return;
        }
        let task_id = self.runner.task_id_base() + task as u64;
        let need = self.runner.dag(task).quorum.unwrap_or(0) as usize;
        let steps = self.runner.dag(task).steps.len();
        let arrived = (0..steps).filter(|&s| flow_arrived(&self.runner, task, s)).count();
        let Some(st) = self.decide.storage.as_mut() else { return };
        let Some(fetch) = st.hedge(task_id, need.saturating_sub(arrived)) else { return };
        // (A zero delay marks when the hedge began: the critical path
        // counts the wait before it as neither network nor device time.)
        let added = self.runner.extend_task(ctx, task, &mut self.decide, |dag| {
            let now = [dag.delay(0.0, &[])];
            for &h in &fetch.spares {
                let io = dag.io(h, fetch.bytes, false, fetch.object, &now);
                dag.flow(h, fetch.client, fetch.bytes, &[io]);
            }
        });
        if let (Some(steps), Some(st)) = (added, self.decide.storage.as_mut()) {
            st.hedged_steps.push((task_id, steps));
        }
    }
}

/// Open-loop flows as one task: a trace's flows sharing a `task_id`, or a
/// lone flow.
pub(crate) struct OpenTask {
    /// Start of its first flow, seconds.
    pub start_s: f64,
    /// The trace's task id (`None`: a lone flow).
    pub task_id: Option<u64>,
    /// Ids of its flows, in the order of its flow steps.
    pub flow_ids: Vec<u64>,
    /// One flow step per flow, each after a delay step when it starts
    /// later than the first.
    pub dag: TaskDag,
}

/// Groups open-loop flows into tasks (by trace task id, else one each),
/// sorted by start: the task notion of the schedulers (`fifo-lm`, `spc`).
pub(crate) fn open_loop_tasks(flows: &[FlowRow]) -> Vec<OpenTask> {
    let mut groups: BTreeMap<u64, Vec<&FlowRow>> = BTreeMap::new();
    let mut singles = Vec::new();
    for f in flows {
        match f.task_id {
            Some(t) => groups.entry(t).or_default().push(f),
            None => singles.push(f),
        }
    }
    let mut open: Vec<(f64, Vec<&FlowRow>)> = groups.into_values().map(|v| (v[0].start_s, v)).collect();
    open.extend(singles.into_iter().map(|f| (f.start_s, vec![f])));
    open.sort_by(|a, b| a.0.total_cmp(&b.0));
    open.into_iter()
        .map(|(start, rows)| {
            let mut dag = TaskDag::new(if rows[0].task_id.is_some() { "trace" } else { "flow" });
            for f in &rows {
                let after: Vec<StepId> =
                    if f.start_s > start { vec![dag.delay(f.start_s - start, &[])] } else { Vec::new() };
                match f.rate_cap_bps {
                    Some(c) => dag.capped_flow(f.src, f.dst, f.bytes, c, &after),
                    None => dag.flow(f.src, f.dst, f.bytes, &after),
                };
            }
            OpenTask {
                start_s: start,
                task_id: rows[0].task_id,
                flow_ids: rows.iter().map(|f| f.flow_id).collect(),
                dag,
            }
        })
        .collect()
}

/// ToRs whose every link (uplinks, downlinks and the server ports on them)
/// is at capacity 0 once the capacity events at time 0 are applied: down
/// for the routing policies from the start.
/// Per host: the capacity of its ports' down links, each at its highest
/// over the run (capacity events included): the most it can receive.
fn host_in_bps(topo: &Topology) -> Vec<f64> {
    let mut cap: Vec<f64> = (0..topo.links().len()).map(|l| topo.links()[l].capacity_bps).collect();
    for e in topo.events() {
        let c = &mut cap[e.link as usize];
        *c = c.max(e.capacity_bps);
    }
    topo.hosts().iter().map(|h| h.ports.iter().map(|p| cap[p.down as usize]).sum()).collect()
}

pub(crate) fn tors_down_at_start(topo: &Topology) -> Vec<u32> {
    let mut cap: HashMap<LinkId, f64> = HashMap::new();
    for e in topo.events().iter().filter(|e| e.time_s == 0.0) {
        cap.insert(e.link, e.capacity_bps);
    }
    if cap.is_empty() {
        return Vec::new();
    }
    let mut ports: Vec<Vec<LinkId>> = vec![Vec::new(); topo.tors().len()];
    for h in topo.hosts() {
        for p in &h.ports {
            if let Some(v) = ports.get_mut(p.tor as usize) {
                v.extend([p.up, p.down]);
            }
        }
    }
    let down = |l: &LinkId| cap.get(l).is_some_and(|&c| c == 0.0);
    (0..topo.tors().len() as u32)
        .filter(|&t| {
            let tor = &topo.tors()[t as usize];
            tor.up.iter().chain(&tor.down).chain(&ports[t as usize]).all(down)
        })
        .collect()
}

/// Whether open-loop flows need the runner (a decision depends on the run).
fn dynamic(r: &FlowRun<'_>) -> bool {
    r.routing != RoutingPolicy::Ecmp || !matches!(r.scheduling, SchedulingPolicy::FairShare | SchedulingPolicy::Sff)
}

/// Runs `r`; `progress(done, total)` is called now and then and stops the
/// run when it returns `false` (Ctrl-C).
pub fn run_flow(
    mut r: FlowRun<'_>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<ScenarioResult, ScenarioError> {
    let topo = r.topo;
    let routing: &dyn Routing = topo;
    let net = Net::with_failed_tors(topo, &tors_down_at_start(topo));
    let lb = match r.routing {
        RoutingPolicy::Ecmp => None,
        p => Some(netheat_subways::load_balancer(p.tag(), &r.lb)?),
    };
    let sched = netheat_flowsched::policy_by_tag(r.scheduling.tag(), r.heavy_bytes)?;
    let dynamic = dynamic(&r);

    // Ids: open-loop flows keep theirs; runner flows come after them.
    let flow_base = r.flows.iter().map(|f| f.flow_id + 1).max().unwrap_or(0);
    let task_base = r.flows.iter().filter_map(|f| f.task_id).map(|t| t + 1).max().unwrap_or(0);
    let mut runner = DagRunner::with_id_bases(flow_base, 0, task_base);
    // Runner flow index -> original open-loop flow id (dynamic runs).
    let mut open_tasks: Vec<(Option<u64>, Vec<u64>)> = Vec::new();
    let mut app_tables: Vec<usize> = Vec::new();

    let cfg = SimConfig {
        window_s: r.window_s,
        seed: r.seed,
        max_windows: r.plan.max_windows,
        dense: r.dense,
        telemetry: r.recorded.links,
        recycle_finished: true,
        ..SimConfig::default()
    };
    // The datacenter's links, then a link per disk written to.
    let mut caps: Vec<f64> = (0..routing.num_links()).map(|l| routing.link_capacity_bps(l as LinkId)).collect();
    let n_topo_links = caps.len();
    let disk: Vec<Option<LinkId>> = disk_links(topo, &r.tasks)
        .into_iter()
        .map(|d| {
            d.map(|bps| {
                caps.push(bps);
                (caps.len() - 1) as LinkId
            })
        })
        .collect();
    let mut sim = Simulation::new(Network::try_new(caps)?, Some(routing), cfg);
    for e in topo.events() {
        sim.schedule_capacity(e.time_s, e.link, e.capacity_bps)?;
    }
    // Each task's start and client, for a counter per client: open-loop
    // tasks, then application tasks (the SPC run's order).
    let mut clients: Vec<(f64, Option<u64>)> = Vec::new();
    if dynamic {
        for t in open_loop_tasks(r.flows) {
            if r.client_counters {
                clients.push((t.start_s, task_client(&t.dag)));
            }
            open_tasks.push((t.task_id, t.flow_ids));
            runner.add_task(t.start_s, t.dag);
        }
    } else {
        for f in r.flows {
            let class = match r.scheduling {
                SchedulingPolicy::Sff => size_class(f.bytes),
                _ => f.priority,
            };
            let mut s = FlowSpec::new(f.flow_id, f.src, f.dst, f.bytes, f.start_s, Route::Ecmp)
                .with_priority(class)
                .with_weight(f.weight);
            if let Some(c) = f.rate_cap_bps {
                s = s.with_rate_cap(c);
            }
            if let Some(t) = f.task_id {
                s = s.with_task(t);
            }
            sim.add_flow(s)?;
        }
    }
    let n_open_tasks = open_tasks.len();
    let r_app_flows: u64 = r.tasks.iter().map(|t| t.2.num_flows() as u64).sum();
    let client_lb = r.client_counters.then(|| {
        clients.extend(r.tasks.iter().map(|t| (t.0, task_client(&t.2))));
        client_counters(clients)
    });
    let lbs = client_lb.as_ref().map_or(r.lbs, |m| m.len().max(1));
    for (start, table, dag) in r.tasks {
        app_tables.push(table);
        runner.add_task(start, dag);
    }
    runner.install(&mut sim)?;
    if let Some(c) = r.cluster.as_mut() {
        // Its jobs' and queries' rows of `tasks` come after the runner's.
        c.set_task_id_base(runner.task_id_base() + runner.num_tasks() as u64);
        c.install(&mut sim)?;
    }
    let period = lb.as_ref().and_then(|l| l.period_s());
    if let Some(p) = period {
        sim.schedule_timer(p, TOKEN_LB)?;
    }
    let total = r.flows.len() as u64 + r_app_flows + r.cluster.as_ref().map_or(0, |c| c.num_tasks() as u64);
    if let Some(st) = &r.storage {
        sim.schedule_timer(st.report_s, TOKEN_REPORT)?;
        if st.decision_s > 0.0 {
            // Before any block's wait for it: decisions come first at their instant.
            sim.schedule_timer(st.decision_s, TOKEN_DECIDE)?;
        }
        if let Some(rb) = &st.rebalancer {
            sim.schedule_timer(rb.interval_s, TOKEN_REBALANCE)?;
        }
    }
    if r.background.is_some() {
        sim.schedule_timer(0.0, TOKEN_BACKGROUND)?;
    }
    let ticking = r.placement.as_ref().is_some_and(PlacementRun::migrates);
    if let Some(p) = r.placement.as_ref().filter(|p| p.migrates()) {
        // As netheat-sched's scheduler: samples from half a tick, windows from one.
        sim.schedule_timer(p.params.tick_s / 2.0, TOKEN_TICK)?;
        sim.schedule_timer(p.params.detect_s, TOKEN_DETECT)?;
    }
    let decide = Decisions {
        net: &net,
        lb,
        // The routing policy's draws: the seed's own stream, as the
        // Subways shuffle runs have always drawn them.
        rng: ChaCha8Rng::seed_from_u64(r.seed),
        active: BTreeMap::new(),
        meter: WindowMeter::new(topo.links().len()),
        period_start_s: 0.0,
        first_detour_s: None,
        cut_off: BTreeSet::new(),
        storage_idle: [false; 3],
        abandoned: BTreeMap::new(),
        task_base,
        tracks_flows: sched.reclassifies(),
        sched,
        ids: TaskIdAllocator::new(lbs),
        tasks: IdMap::default(),
        by_sched: IdMap::default(),
        changes: Vec::new(),
        poll: HeavyPoll::new(r.poll_s),
        host_in_bps: host_in_bps(topo),
        heavy_bytes: r.heavy_bytes,
        next_lb: 0,
        lbs,
        client_lb,
        total_tasks: runner.num_tasks(),
        started: 0,
        running: 0,
        rebinds: 0,
        class_changes: 0,
        storage: r.storage,
        placement: r.placement,
        ticking,
        seed: r.seed,
        disk,
        background: r.background.map(|b| BackgroundRun::new(b, topo.links().iter().map(|l| l.capacity_bps).collect())),
        cluster_until_s: r.cluster.as_ref().map_or(0.0, crate::cluster::ClusterRun::until_s),
        error: None,
    };
    let rows = RowMap { dynamic, flow_base, open: open_tasks };
    let fold = FlowFold { task_base, trace: TraceTasks::default(), floors: Floors::default() };
    let kept = r.recorded.flows.then(Vec::new);
    let mut rt = Runtime { runner, decide, rows, fold, cluster: r.cluster, kept };
    let mut last_progress = std::time::Instant::now();
    // Advance a 64th of a window at a time (chunk edges fall on window
    // edges): the budget is checked for the window each chunk starts in,
    // and progress (Ctrl-C) is reported between chunks.
    let chunk = r.window_s / 64.0;
    while let Some(t) = sim.next_event_time() {
        if let Some(u) = r.until_s.filter(|&u| t > u) {
            // Stopped with events left: the run's time (and its last link
            // window) goes on to the stop, as the engine's own `end_s`.
            sim.run_until(&mut rt, u);
            break;
        }
        r.plan.check_reached(t, r.window_s).map_err(ScenarioError::Budget)?;
        let mut t_end = ((t / chunk).floor() + 1.0) * chunk;
        if t_end <= t {
            t_end = t; // a chunk too small to advance the clock
        }
        if let Some(u) = r.until_s {
            t_end = t_end.min(u);
        }
        sim.run_events_until(&mut rt, t_end);
        if last_progress.elapsed() >= PROGRESS_EVERY {
            last_progress = std::time::Instant::now();
            if !progress(sim.stats().flows_completed, total) {
                return Err(ScenarioError::Interrupted);
            }
        }
    }
    if let Some(e) = rt.runner.error() {
        return Err(ScenarioError::Run(format!("an application task could not start a step: {e}")));
    }
    if let Some(e) = &rt.decide.error {
        return Err(ScenarioError::Run(e.clone()));
    }
    if let Some(e) = rt.cluster.as_ref().and_then(|c| c.error.as_ref()) {
        return Err(ScenarioError::Run(format!("the cluster's scheduler: {e}")));
    }
    let Runtime { runner, mut decide, rows, mut fold, cluster, kept } = rt;
    let res = sim.finish();
    // The engine forgot the finished flows (those of the last instant
    // may still be listed): the others are the ones it lists unfinished.
    let n_flows = res.flows.iter().filter(|f| !f.finished()).count() as u64 + res.stats.flows_completed;

    // Flows: original ids for open-loop flows run as tasks. The finished
    // ones' rows were made (and folded in) as they finished.
    let mut flows = kept.unwrap_or_default();
    flows.reserve(if r.recorded.flows { res.flows.len() } else { 0 });
    // The flows that did not finish are folded in id order: the engine
    // lists them by slot, and slots are reused when it forgets finished
    // flows, so the same fold in both modes needs an order of its own.
    let mut unfinished: Vec<FlowOut> = Vec::new();
    for f in res.flows.iter().filter(|f| !f.finished()) {
        let cut = decide
            .placement
            .as_ref()
            .and_then(|p| p.cut.get(&f.id))
            .or_else(|| cluster.as_ref().and_then(|c| c.cut.get(&f.id)))
            .or_else(|| decide.abandoned.get(&f.id))
            .copied();
        let row = rows.row(&runner, f, cut);
        if r.recorded.flows {
            flows.push(row.clone());
        }
        unfinished.push(row);
    }
    unfinished.sort_by_key(|f| f.flow_id);
    for row in &unfinished {
        fold.add(row);
    }
    let flows = in_id_order(flows);
    let mut tasks = Vec::new();
    for (i, rec) in runner.iter_records().enumerate() {
        if i < n_open_tasks {
            continue;
        }
        let (net, io) = rec.critical_path(runner.dag(i));
        tasks.push(TaskOut {
            task_id: runner.task_id_base() + i as u64,
            kind: rec.kind.to_string(),
            table: app_tables[i - n_open_tasks] as i64,
            start_s: rec.start_s,
            finish_s: rec.finish_s,
            flows: rec.flows as u64,
            bytes: rec.bytes,
            floor_s: f64::NAN,
            network_s: net,
            io_s: io,
            queued_s: rec.queued_s(),
        });
    }
    let mut out = ScenarioResult::new("flow");
    if let Some(mut st) = decide.storage {
        // A hedge helped a read finish when one of its flows arrived.
        for (task_id, steps) in std::mem::take(&mut st.hedged_steps) {
            let i = (task_id - runner.task_id_base()) as usize;
            if steps.into_iter().any(|s| flow_arrived(&runner, i, s)) {
                st.reads_hedge_used += 1;
            }
        }
        st.hedge_cancelled_flows = decide.abandoned.len() as u64;
        storage_stats(&mut out, &st, decide.background.as_ref().map(|b| &*b.load));
        out.decisions.extend(st.record.take().unwrap_or_default());
        for (task_id, chain, mut row) in st.placed {
            let rec = runner.record((task_id - runner.task_id_base()) as usize);
            row.finish_s = chain.iter().map(|&s| rec.step_finish_s[s]).fold(f64::NEG_INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            });
            out.blocks.push(row);
        }
    }
    if let Some(p) = decide.placement.as_mut() {
        out.decisions.extend(p.record.take().unwrap_or_default());
        out.decisions.sort_by(|a, b| a.time_s().total_cmp(&b.time_s()));
        if r.recorded.placements {
            out.placements = p.placements.clone();
        }
        out.migrations = p.migrations.clone();
        out.stat("placements", p.placements.iter().filter(|x| !x.migrated).count() as f64);
        out.stat("migrations", p.migrations.len() as f64);
        out.stat("placement_overcommits", p.overcommits as f64);
    }
    out.tasks = fold.trace.into_tasks();
    out.tasks.extend(tasks);
    if let Some(c) = cluster {
        c.finish(&mut out, r.recorded.links.then_some(&res.link_windows), r.window_s, r.recorded.placements);
    }
    fold.floors.apply(&mut out.tasks, topo);
    out.flows = flows;
    out.window_s = r.window_s;
    match decide.background.as_ref().map(|b| &b.load) {
        None => {
            for s in res.link_windows.iter().filter(|s| (s.link as usize) < n_topo_links) {
                out.links.push((s.link, s.window, s.utilization));
            }
        }
        Some(bg) => {
            // Each window counts the run's bytes and the background's.
            let w = r.window_s;
            let mut rows: BTreeMap<(u32, u32), (f64, f64)> = BTreeMap::new();
            for s in res.link_windows.iter().filter(|s| (s.link as usize) < n_topo_links) {
                rows.entry((s.link, s.window)).or_default().0 = s.utilization;
            }
            if r.recorded.links {
                let windows = ((res.end_s / w).ceil() as u32).min(r.plan.max_windows);
                for l in 0..n_topo_links.min(bg.per_link.len()) {
                    let v = &bg.per_link[l];
                    let (Some(first), Some(last)) = (v.first(), v.last()) else { continue };
                    let cap = topo.links()[l].capacity_bps;
                    let w0 = (f64::from(first.0) * bg.step_s / w).floor() as u32;
                    let w1 = ((f64::from(last.0 + 1) * bg.step_s / w).ceil() as u32).min(windows);
                    for k in w0..w1 {
                        let b = bg.bytes_between(l as LinkId, f64::from(k) * w, f64::from(k + 1) * w);
                        if b > 0.0 && cap > 0.0 {
                            rows.entry((l as u32, k)).or_default().1 = b * 8.0 / (cap * w);
                        }
                    }
                }
            }
            for ((l, k), (fg, b)) in rows {
                out.links.push((l, k, fg + b));
                out.links_background.push(b);
            }
            out.stat("background_flows", bg.flows as f64);
            out.stat("background_bytes", bg.bytes);
            out.stat("background_cross_rack_bytes", bg.cross_rack_bytes);
            out.stat("background_end_s", bg.end_s);
        }
    }
    let st = &res.stats;
    out.stat("flows", n_flows as f64);
    out.stat("completed", st.flows_completed as f64);
    out.stat("stranded", st.stranded as f64);
    out.stat("events", st.events as f64);
    out.stat("end_s", res.end_s);
    out.stat("windows", if res.end_s > 0.0 { (res.end_s / r.window_s).ceil() } else { 0.0 });
    out.stat("rebinds", decide.rebinds as f64);
    out.stat("detours", decide.lb.as_ref().map_or(0, |l| l.detours()) as f64);
    if let Some(t) = decide.first_detour_s {
        out.stat("first_detour_s", t);
    }
    out.stat("class_changes", decide.class_changes as f64);
    out.stat("reroutes", st.reroutes as f64);
    out.stat("recomputations", st.recomputations as f64);
    out.stat("dense_instants", st.dense_instants as f64);
    out.stat("max_windows", r.plan.max_windows as f64);
    Ok(out)
}

/// Position of `step` among the flow steps of task `ti`.
fn runner_flow_ordinal(runner: &DagRunner, ti: usize, step: usize) -> usize {
    runner.dag(ti).steps[..step].iter().filter(|s| matches!(s, netheat_workloads::Step::Flow { .. })).count()
}

/// The client of a task, for a counter per client (Baraat §5.1: each
/// Memcached client numbers its own requests): its queue (the client that
/// serves it), else the host its last flow step reaches (an aggregator).
pub(crate) fn task_client(dag: &TaskDag) -> Option<u64> {
    dag.queue.or_else(|| {
        dag.steps.iter().rev().find_map(|s| match *s {
            netheat_workloads::Step::Flow { dst, .. } => Some(u64::from(dst)),
            _ => None,
        })
    })
}

/// Each client's counter, numbered in the order of the clients' first
/// tasks (`(start, client)` per task, sorted here by start, ties in the
/// order given): counter `k` of `K` issues `k, k + K, k + 2K, ...`
/// (Baraat §4.1, netheat-flowsched's `TaskIdAllocator`).
pub(crate) fn client_counters(mut starts: Vec<(f64, Option<u64>)>) -> HashMap<u64, usize> {
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut m = HashMap::new();
    for c in starts.into_iter().filter_map(|t| t.1) {
        let k = m.len();
        m.entry(c).or_insert(k);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::{in_id_order, FlowOut};

    fn ids(rows: &[FlowOut]) -> Vec<u64> {
        rows.iter().map(|f| f.flow_id).collect()
    }

    /// Rows in completion order come out in id order, whether the ids are
    /// dense (placed by index) or far apart (sorted), and none is lost.
    #[test]
    fn rows_come_out_in_id_order() {
        let row = |id: u64| FlowOut::local(id, 0, 1.0, 0.0, -1, 0);
        let dense: Vec<FlowOut> = [12, 10, 14, 11, 13].into_iter().map(row).collect();
        assert_eq!(ids(&in_id_order(dense)), [10, 11, 12, 13, 14]);
        let holes: Vec<FlowOut> = [9, 3, 5].into_iter().map(row).collect();
        assert_eq!(ids(&in_id_order(holes)), [3, 5, 9]);
        let sparse: Vec<FlowOut> = [1 << 60, 7, 1 << 59, 0].into_iter().map(row).collect();
        assert_eq!(ids(&in_id_order(sparse)), [0, 7, 1 << 59, 1 << 60]);
        let twice: Vec<FlowOut> = [4, 2, 4, 3].into_iter().map(row).collect();
        assert_eq!(ids(&in_id_order(twice)), [2, 3, 4, 4]);
        // A long permutation: every row lands at its id.
        let many: Vec<FlowOut> = (0..1000u64).map(|i| (i * 389) % 1000).map(row).collect();
        assert_eq!(ids(&in_id_order(many)), (0..1000).collect::<Vec<u64>>());
        assert!(in_id_order(Vec::new()).is_empty());
    }
}
