//! A scenario under `scheduling.policy = "spc"`: its tasks through Baraat's
//! Smart Priority Class protocol (SIGCOMM'14 §4.3, Algorithms 1 and 2), the
//! round-based simulator of netheat-flowsched ([`run_spc_dag`]). Under
//! `"rcp"` the same protocol puts every flow in one class: per-flow fair
//! share at the protocol's rounds, the paper's FS baseline (§5.1).
//!
//! The tasks are those of `fifo-lm` on the flow engine: application tasks
//! of the workload, and open-loop flows as one-flow tasks (flows of a trace
//! sharing a `task_id`, one task; `flow::open_loop_tasks`). Every
//! step of a task's DAG becomes one SPC flow: a flow step on its ECMP path,
//! a delay step as a flow of 0 bytes without links that completes
//! `seconds` after its last dependency (a pause), with the DAG's
//! dependencies as the flows each releases. So a task ends with its last
//! step, as on the flow engine. A flow between two ports of one host sends
//! nothing through the network and ends as it starts, as on the flow
//! engine; a rate cap below the sender's host link is a link of that
//! capacity of its own, first on its path (the sender's NIC rate, which
//! Algorithm 1 demands and `delta` is a fraction of).
//!
//! Paths are drawn once, before the run, by a seeded hash of the flow id
//! weighted by path speed (weighted ECMP, as the flow engine's `Route::Ecmp`);
//! the protocol cannot move a running flow, so `adaptive` and `detour`
//! routing are refused, and so are the storage and placement policies
//! (they rewrite steps when they start, with the network as it is then)
//! and capacity `[[events]]` (the protocol's link capacities are fixed).
//! Task ids come from `load-balancers` counters in task start order, or
//! from a counter per client (`scheduling.task-ids = "client"`), as on the
//! flow engine; a task in a client's queue (`client-queue`) begins when the
//! client's previous task ends, and the tasks table's `queued_s` is its wait.
//!
//! Tables: `flows` (open-loop flows keep their ids; flows of application
//! tasks are numbered after them in task and step order; `priority` is the
//! task's FIFO class, its id), `tasks` (the same rows and ids as `fifo-lm`
//! gives) and `links` (bytes each link carried per window over its
//! capacity; a flow's bytes at a rate held over several rounds are spread
//! evenly over them). With `scenario.duration`, the protocol runs to the
//! end and what finished later is reported unfinished, flows that started
//! later are left out, and windows from the stop time on are dropped.
//! The protocol holds every flow to the end, so the run holds each flow
//! once: a task's DAG is let go once it is SPC flows, and without the
//! `flows` table the flows of application tasks keep no row (their tasks'
//! floors are folded as they are built).

use netheat_core::Routing;
use netheat_flowsched::policy::id_class;
use netheat_flowsched::{
    run_spc_dag, ClassUnit, FlowschedError, Releases, SpcOptions, Task, TaskFlow, TaskIdAllocator, Windows,
};
use netheat_topology::Topology;
use netheat_workloads::{FlowRow, RunBudget, Step, TaskDag};

use crate::flow::{client_counters, open_loop_tasks, task_client};
use crate::result::{Floors, FlowOut, ScenarioResult, TaskOut};
use crate::ScenarioError;

/// What an SPC run needs.
pub struct SpcRun<'a> {
    /// The datacenter.
    pub topo: &'a Topology,
    /// Open-loop flows, sorted by start.
    pub flows: &'a [FlowRow],
    /// Application tasks: (start, workload table, DAG).
    pub tasks: Vec<(f64, usize, TaskDag)>,
    /// The protocol's options (threshold and load balancers resolved).
    pub opts: SpcOptions,
    /// Whether each client keeps its own id counter (`scheduling.task-ids
    /// = "client"`; `opts.lbs` unused).
    pub client_counters: bool,
    /// Utilization window, seconds.
    pub window_s: f64,
    /// Whether the `links` table is kept (`scenario.record`): without it
    /// no utilization windows are computed.
    pub links: bool,
    /// Whether the `flows` table is kept (`scenario.record`): without it
    /// the flows of application tasks are not kept for it (open-loop flows
    /// always are: their tasks' rows come from them).
    pub flows_table: bool,
    /// The windows the memory budget leaves room for.
    pub plan: RunBudget,
    /// Stop time, seconds.
    pub until_s: Option<f64>,
    /// Seed of the ECMP hash.
    pub seed: u64,
}

/// One flow step as an SPC flow, for the `flows` table.
struct StepFlow {
    /// Global SPC flow index.
    gi: usize,
    id: u64,
    src: u32,
    dst: u32,
    bytes: f64,
    path_id: i64,
}

/// What the tables need of a task once its DAG has become SPC flows.
struct Meta {
    start_s: f64,
    trace: Option<u64>,
    index: usize,
    table: Option<usize>,
    kind: &'static str,
    flows: u64,
    bytes: f64,
}

/// A task of the run, before sorting by start.
struct Pending {
    start_s: f64,
    /// Trace task id (open-loop) or `None`.
    trace: Option<u64>,
    /// Runner-style index: open-loop tasks first, then application tasks.
    index: usize,
    /// The workload table of an application task.
    table: Option<usize>,
    dag: TaskDag,
    /// Ids of its flow steps, in step order.
    ids: Vec<u64>,
}

/// The ECMP path index of flow `id` from `src` to `dst`: the flow engine's
/// draw ([`netheat_engine::ecmp_draw`]: a seeded hash, weighted by each
/// path's weight, its slowest link).
fn ecmp_index(topo: &Topology, seed: u64, id: u64, src: u32, dst: u32) -> usize {
    netheat_engine::ecmp_draw(topo, seed, id, src, dst, topo.num_paths(src, dst))
}

/// A flow step of a task whose flows are not kept: what its task's floor
/// needs (see [`crate::result::Floors`]).
struct FloorStep {
    /// Global SPC flow index.
    gi: u32,
    dst: u32,
    bytes: f64,
}

/// The run's SPC inputs, built one task at a time.
struct Inputs {
    /// Link capacities: the datacenter's, then rate caps'.
    caps: Vec<f64>,
    releases: Releases,
    /// Flow steps of tasks whose flows are kept (the `flows` table), and
    /// the end of each task's in that list.
    steps: Vec<StepFlow>,
    step_ends: Vec<usize>,
    /// Whether every flow step starts (the run has no stop time): the
    /// floors of tasks whose flows are not kept are then folded as their
    /// steps are added, into `floors`; otherwise their flow steps between
    /// hosts are listed (`floor_steps`, each task's ending at its
    /// `floor_ends`), to fold those that started.
    every_start: bool,
    floors: Floors,
    floor_steps: Vec<FloorStep>,
    floor_ends: Vec<usize>,
    /// Per SPC flow, whether it is a flow step (not a pause).
    is_flow: Vec<bool>,
    /// SPC flows so far.
    n: usize,
}

impl Inputs {
    /// The SPC task of `dag` starting at `start_s` (its flow steps numbered
    /// `ids`); `keep`: its flow steps are kept for the `flows` table, else
    /// they count towards the floor of task `task_id`.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        topo: &Topology,
        seed: u64,
        start_s: f64,
        dag: &TaskDag,
        ids: &[u64],
        keep: bool,
        task_id: i64,
    ) -> Task {
        let n = dag.steps.len();
        let mut feeds = vec![Vec::new(); n];
        for (s, deps) in dag.dep_lists().enumerate() {
            for &d in deps {
                feeds[d].push(s as u32);
            }
        }
        for f in feeds {
            self.releases.push(f);
        }
        let mut flows = Vec::with_capacity(n);
        let mut k = 0;
        for (s, step) in dag.steps.iter().enumerate() {
            let gi = self.n + s;
            match *step {
                Step::Delay { seconds } => {
                    flows.push(TaskFlow { src: 0, dst: 0, bytes: 0.0, path: Vec::new(), delay_s: seconds, feeds: None })
                }
                // No device model under SPC: a `chunk-store`, whose tasks
                // have device steps, needs a storage policy, which `spc`
                // refuses.
                Step::Io { .. } => {
                    flows.push(TaskFlow { src: 0, dst: 0, bytes: 0.0, path: Vec::new(), delay_s: 0.0, feeds: None })
                }
                Step::Flow { src, dst, bytes, rate_cap_bps } => {
                    let id = ids[k];
                    k += 1;
                    let mut path = Vec::new();
                    let mut path_id = -1;
                    if src != dst {
                        let p = ecmp_index(topo, seed, id, src, dst);
                        topo.path(src, dst, p, &mut path);
                        path_id = p as i64;
                        if let (Some(c), Some(&l)) = (rate_cap_bps, path.first()) {
                            if c < topo.link_capacity_bps(l) {
                                path.insert(0, self.caps.len() as u32);
                                self.caps.push(c);
                            }
                        }
                    }
                    // A flow within one host ends as it starts.
                    let b = if src == dst { 0.0 } else { bytes };
                    flows.push(TaskFlow { src, dst, bytes: b, path, delay_s: 0.0, feeds: None });
                    if keep {
                        self.steps.push(StepFlow { gi, id, src, dst, bytes, path_id });
                    } else if src != dst && self.every_start {
                        self.floors.add_bytes(task_id, dst, bytes);
                    } else if src != dst {
                        self.floor_steps.push(FloorStep { gi: gi as u32, dst, bytes });
                    }
                }
            }
            self.is_flow.push(matches!(step, Step::Flow { .. }));
        }
        self.n += n;
        self.step_ends.push(self.steps.len());
        self.floor_ends.push(self.floor_steps.len());
        let bytes = flows.iter().map(|f| f.bytes).sum();
        Task { arrival_s: start_s, bytes, flows }
    }
}

/// Runs `r` through the SPC protocol; `progress(done, total)` is called
/// before, at every round the protocol works through (flows finished of
/// the run's flows) and after; `false` stops the run.
pub fn run_spc_scenario(
    r: SpcRun<'_>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<ScenarioResult, ScenarioError> {
    let topo = r.topo;
    let total = r.flows.len() as u64 + r.tasks.iter().map(|t| t.2.num_flows() as u64).sum::<u64>();
    if !progress(0, total) {
        return Err(ScenarioError::Interrupted);
    }
    // Ids as on the flow engine's dynamic runs: open-loop flows keep
    // theirs, runner task ids follow the trace's, open-loop tasks first.
    let flow_base = r.flows.iter().map(|f| f.flow_id + 1).max().unwrap_or(0);
    let task_base = r.flows.iter().filter_map(|f| f.task_id).map(|t| t + 1).max().unwrap_or(0);
    let mut all: Vec<Pending> = Vec::new();
    for t in open_loop_tasks(r.flows) {
        let index = all.len();
        all.push(Pending { start_s: t.start_s, trace: t.task_id, index, table: None, dag: t.dag, ids: t.flow_ids });
    }
    let n_open = all.len();
    let mut next_id = flow_base;
    for (start, table, dag) in r.tasks {
        let ids: Vec<u64> = (next_id..next_id + dag.num_flows() as u64).collect();
        next_id += ids.len() as u64;
        let index = all.len();
        all.push(Pending { start_s: start, trace: None, index, table: Some(table), dag, ids });
    }
    // The protocol takes tasks in arrival order (ids in that order).
    all.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut opts = r.opts;
    if all.iter().any(|p| p.dag.queue.is_some()) {
        // Clients that serve one task at a time (`client-queue`).
        opts.queues = Some(all.iter().map(|p| p.dag.queue).collect());
    }
    if r.client_counters {
        // The flow engine's counters: a client's tasks in start order.
        let client: Vec<Option<u64>> = all.iter().map(|p| task_client(&p.dag)).collect();
        let lb_of = client_counters(all.iter().zip(&client).map(|(p, &c)| (p.start_s, c)).collect());
        let mut alloc = TaskIdAllocator::new(lb_of.len().max(1));
        opts.ids =
            Some(client.iter().map(|c| alloc.next(c.and_then(|c| lb_of.get(&c).copied()).unwrap_or(0))).collect());
    }
    // Each DAG becomes SPC flows and is let go: a run holds its flows once
    // (the protocol's state), not also as DAG steps, SPC inputs and rows
    // for a table it does not keep.
    let mut inp = Inputs {
        caps: (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as u32)).collect(),
        releases: Releases::new(),
        steps: Vec::new(),
        step_ends: Vec::with_capacity(all.len()),
        every_start: r.until_s.is_none(),
        floors: Floors::default(),
        floor_steps: Vec::new(),
        floor_ends: Vec::with_capacity(all.len()),
        is_flow: Vec::new(),
        n: 0,
    };
    let mut tasks = Vec::with_capacity(all.len());
    let mut metas = Vec::with_capacity(all.len());
    for p in all {
        let keep = r.flows_table || p.table.is_none();
        let task_id = (task_base + p.index as u64) as i64;
        tasks.push(inp.add(topo, r.seed, p.start_s, &p.dag, &p.ids, keep, task_id));
        metas.push(Meta {
            start_s: p.start_s,
            trace: p.trace,
            index: p.index,
            table: p.table,
            kind: p.dag.kind,
            flows: p.dag.num_flows() as u64,
            bytes: p.dag.bytes(),
        });
    }
    let Inputs { caps, releases, steps, step_ends, mut floors, floor_steps, floor_ends, is_flow, .. } = inp;
    let windows = r.links.then_some(Windows { window_s: r.window_s, max_windows: r.plan.max_windows });
    // The protocol counts its pauses as flows: its progress in the run's
    // flows.
    let spc_flows = is_flow.len().max(1) as u64;
    let mut tick = |done: u64, _: u64| progress(done * total / spc_flows, total);
    let (res, rec) = match run_spc_dag(&caps, tasks, &releases, &opts, windows, &mut tick) {
        Err(FlowschedError::Interrupted) => return Err(ScenarioError::Interrupted),
        Err(FlowschedError::WindowsExceeded { t_s, window_s, .. }) => {
            // The flow engine's message: how far the run got, what fits.
            let why = r.plan.check_reached(t_s, window_s).err().unwrap_or_else(|| {
                format!("the run reached {t_s} s of simulated time, past the link windows that fit")
            });
            return Err(ScenarioError::Budget(why));
        }
        other => other?,
    };
    drop(releases);
    let until = r.until_s.unwrap_or(f64::INFINITY);
    let cut = |t: f64| if t > until { f64::NAN } else { t };

    let mut flows = Vec::new();
    let mut out_tasks = Vec::new();
    let (mut step_start, mut floor_start) = (0, 0);
    for (i, (p, tr)) in metas.iter().zip(&res.tasks).enumerate() {
        let (step_end, floor_end) = (step_ends[i], floor_ends[i]);
        let task_id = match p.trace {
            Some(t) => t as i64,
            None if p.index < n_open => -1,
            None => (task_base + p.index as u64) as i64,
        };
        for f in &steps[step_start..step_end] {
            let start_s = rec.flow_start_s[f.gi];
            if start_s.is_nan() || start_s > until {
                continue;
            }
            let finish_s = cut(rec.flow_finish_s[f.gi]);
            flows.push(FlowOut {
                flow_id: f.id,
                src: f.src,
                dst: f.dst,
                bytes: f.bytes,
                start_s,
                finish_s,
                fct_s: finish_s - start_s,
                task_id,
                priority: id_class(tr.id),
                path_id: f.path_id,
            });
        }
        step_start = step_end;
        for f in &floor_steps[floor_start..floor_end] {
            let start_s = rec.flow_start_s[f.gi as usize];
            if !(start_s.is_nan() || start_s > until) {
                floors.add_bytes(task_id, f.dst, f.bytes);
            }
        }
        floor_start = floor_end;
        if let Some(table) = p.table {
            out_tasks.push(TaskOut {
                task_id: task_base + p.index as u64,
                kind: p.kind.to_string(),
                table: table as i64,
                start_s: p.start_s,
                finish_s: cut(tr.finish_s),
                flows: p.flows,
                bytes: p.bytes,
                floor_s: f64::NAN,
                network_s: f64::NAN,
                io_s: f64::NAN,
                queued_s: rec.task_began_s[i] - p.start_s,
            });
        }
    }
    drop(steps);
    drop(floor_steps);
    // Every flow step that started by the stop time, kept or not.
    let (mut started, mut completed, mut end_s) = (0u64, 0u64, 0.0f64);
    for (gi, _) in is_flow.iter().enumerate().filter(|(_, &f)| f) {
        let start_s = rec.flow_start_s[gi];
        if start_s.is_nan() || start_s > until {
            continue;
        }
        started += 1;
        let finish_s = rec.flow_finish_s[gi];
        if finish_s <= until {
            completed += 1;
            end_s = end_s.max(finish_s);
        }
    }
    flows.sort_by_key(|f| f.flow_id);
    out_tasks.sort_by_key(|t| t.task_id);
    let mut out = ScenarioResult::new("flow");
    out.tasks = crate::result::trace_tasks(&flows, task_base);
    out.tasks.extend(out_tasks);
    out.window_s = r.window_s;
    for t in &out.tasks {
        if t.finish_s.is_finite() {
            end_s = end_s.max(t.finish_s);
        }
    }
    let mut windows: Vec<(u32, u32, f64)> = Vec::new();
    for (l, v) in rec.link_bytes.iter().enumerate().take(topo.num_links()) {
        let cap = caps[l];
        for (w, &b) in v.iter().enumerate() {
            if b > 0.0 && (w as f64) * r.window_s < until {
                windows.push((l as u32, w as u32, b * 8.0 / (cap * r.window_s)));
            }
        }
    }
    windows.sort_by_key(|&(l, w, _)| (w, l));
    out.links = windows;
    out.stat("flows", started as f64);
    out.stat("completed", completed as f64);
    out.stat("stranded", 0.0);
    out.stat("end_s", end_s);
    out.stat("windows", if end_s > 0.0 { (end_s / r.window_s).ceil() } else { 0.0 });
    out.stat("rebinds", 0.0);
    out.stat("detours", 0.0);
    out.stat("class_changes", 0.0);
    out.stat("reroutes", 0.0);
    out.stat("heavy_threshold_bytes", opts.threshold);
    out.stat("spc_rtt_s", opts.rtt_s);
    out.stat("spc_delta", opts.delta_frac);
    out.stat("spc_max_queue_bytes", res.max_queue_bytes);
    out.stat("spc_vc_updates", res.vc_updates as f64);
    out.stat("spc_rounds", res.rounds as f64);
    out.stat("spc_skipped_rounds", res.skipped as f64);
    out.stat("spc_link_passes", res.link_passes as f64);
    out.stat("spc_sender_updates", res.sender_updates as f64);
    let classes = match (opts.class_unit, opts.class_size) {
        (_, u64::MAX) => "every flow in one class (per-flow fair share at the protocol's rounds)".to_string(),
        (ClassUnit::Task, 1) => "a class per task".to_string(),
        (ClassUnit::Task, k) => format!("a class per {k} consecutive tasks"),
        (ClassUnit::Flow, 1) => "a class per flow".to_string(),
        (ClassUnit::Flow, k) => format!("a class per {k} consecutive flows"),
    };
    out.notes.push(format!(
        "scheduling: the SPC protocol in rounds of {} us (Baraat §4.3), not the flow engine, {classes}, {}; flows of application tasks numbered in task and step order",
        (opts.rtt_s * 1e9).round() / 1e3,
        match opts.virtual_capacity {
            Some(vc) => format!("virtual capacity with gains {} / {} (§4.3.2)", vc.alpha, vc.beta),
            None => "ports hand out their capacity (no virtual capacity)".to_string(),
        }
    ));
    if !progress(total, total) {
        return Err(ScenarioError::Interrupted);
    }
    // Floors from every flow step that started: the kept ones (in flow id
    // order, as `set_floors` folds them) join those of the tasks whose flows
    // were not kept, which are other tasks.
    for f in &flows {
        floors.add(f);
    }
    floors.apply(&mut out.tasks, r.topo);
    out.flows = flows;
    Ok(out)
}
