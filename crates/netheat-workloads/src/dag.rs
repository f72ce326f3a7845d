//! Tasks as small DAGs of flows, delays and device accesses, run by one
//! engine controller.
//!
//! Every application structure in [`crate::apps`] builds a [`TaskDag`] per
//! task: steps are network flows (bytes from one host to another, optionally
//! rate-capped), delays (compute time, seconds) or device accesses (bytes
//! read from or written to a host's disk, timed by the hooks' device
//! model, [`FlowHooks::io`]), and a step
//! starts when all the steps it depends on have finished. [`DagRunner`] is
//! the [`Controller`] that executes them: [`DagRunner::install`] schedules a
//! timer at each task's start time; when it fires, the steps without
//! dependencies start; each flow completion (`on_flow_complete`) or delay
//! timer (`on_timer`) releases its dependants, and when the last step of a
//! task finishes its completion time is recorded in a [`TaskRecord`].
//!
//! The runner makes no decision itself: every flow it starts goes through
//! a [`FlowHooks`] (the route, the priority class, rewriting the steps about
//! to start, as replica placement does), which also hears of task starts
//! and completions. [`NoHooks`] routes by ECMP in class 0, as a plain
//! [`Controller`] `DagRunner` does; a scenario passes its policies through
//! the `*_with` methods.
//!
//! Ids: the runner gives its flows ids `flow_id_base, flow_id_base + 1, ...`
//! and its timers tokens from `timer_base`, in the order they start (so runs
//! are deterministic), and tags flows with `task_id_base + task index`. Keep
//! these ranges apart from other flows and controllers in the same
//! simulation; flow completions and timers outside its ranges are ignored.

use netheat_core::{HostId, IdMap};
use netheat_engine::{Controller, Ctx, EngineError, FlowRecord, FlowSpec, Route, Simulation};

/// Index of a step within its [`TaskDag`].
pub type StepId = usize;

/// Default first flow id and timer token of a [`DagRunner`] (2^40, clear of
/// generated traces that number flows from 0).
pub const DEFAULT_ID_BASE: u64 = 1 << 40;

/// One step of a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A flow of `bytes` from `src` to `dst`, optionally capped (bits/s).
    Flow {
        /// Source host.
        src: HostId,
        /// Destination host.
        dst: HostId,
        /// Size, bytes.
        bytes: f64,
        /// Rate cap, bits per second.
        rate_cap_bps: Option<f64>,
    },
    /// A pause of `seconds` (compute, a fixed device time, ...).
    Delay {
        /// Length, seconds (>= 0).
        seconds: f64,
    },
    /// An access of `bytes` to a disk of `host`: how long it takes (queueing
    /// included) is the device model's, asked through [`FlowHooks::io`] when
    /// the step starts. `object` names what is read or written (a stored
    /// chunk: which of the host's disks holds it is a function of the object
    /// and the host).
    Io {
        /// Host of the disk.
        host: HostId,
        /// Bytes read or written.
        bytes: f64,
        /// A write (else a read).
        write: bool,
        /// The object accessed.
        object: u64,
    },
}

/// What a read of a stored object picks, as two uniform draws in `[0, 1)`
/// made when the workload was generated (so every policy compared on one
/// workload reads the same things): which of the objects stored when the
/// read starts, and which of its copies. The storage layer resolves them
/// (`netheat-scenario`'s storage run) and rewrites the task's steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadPick {
    /// Object: `floor(object * stored)` among the objects in store order.
    pub object: f64,
    /// Copy: `floor(copy * copies)` among the object's hosts.
    pub copy: f64,
    /// Only the objects stored before the run (else any stored so far).
    pub stored_before_only: bool,
}

/// A task: steps and the dependencies between them. A step may only depend
/// on steps added before it, so every `TaskDag` is acyclic.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskDag {
    /// Steps in insertion order.
    pub steps: Vec<Step>,
    /// The dependencies of every step in compressed rows (see
    /// [`TaskDag::deps`]): step `s` waits on `dep_ids[dep_at[s]..]` up to
    /// the next step's start, one list for the whole task rather than one
    /// per step (a task of the Baraat study has 1,200 steps, a run 57.6
    /// million).
    dep_at: Vec<u32>,
    dep_ids: Vec<StepId>,
    /// Free-form kind, copied to the [`TaskRecord`] (`"shuffle"`, ...).
    pub kind: &'static str,
    /// Racks the pieces of each block must span (`file-write` tasks, whose
    /// replicas a storage policy may re-place); 0 otherwise.
    pub min_racks: usize,
    /// A `chunk-store` task's erasure code, `(data, parity)` chunks a
    /// stripe: a write's hops are the stripe's chunks, a read's branches
    /// its data chunks. `None`: replicated.
    pub erasure: Option<(u32, u32)>,
    /// The tasks of a `compute-job` (whose hosts a placement policy may
    /// choose again); `None` otherwise.
    pub job: Option<Box<JobTasks>>,
    /// A read of a stored object, resolved when the task starts; `None`
    /// otherwise.
    pub read: Option<ReadPick>,
    /// The queue the task waits in: the tasks of one queue run one at a
    /// time, in arrival order (a client that serves one request at a time
    /// and queues the others, Baraat §5.1's Memcached clients). A task
    /// arriving while another task of its queue runs starts when that one
    /// finishes ([`TaskRecord::began_s`]). `None`: it starts on arrival.
    pub queue: Option<u64>,
    /// Bytes of the flows made pauses by [`TaskDag::precalculate`]
    /// (counted in [`TaskDag::bytes`]).
    pub precalculated_bytes: f64,
    /// The task finishes once this many of its sinks (steps no other step
    /// waits on) have finished, rather than when every step has: a read
    /// that needs any `k` of the branches it started (a hedged or degraded
    /// read). Its other steps are abandoned then: its running flows are
    /// cancelled ([`FlowHooks::flow_abandoned`] hears of each first), the
    /// steps waiting never start, and a running delay or device step's end
    /// is ignored; their `step_finish_s` stay `NaN`. `None`: every step.
    pub quorum: Option<u32>,
}

/// What the tasks of a compute job request, so that a placement policy can
/// choose their hosts when the job starts: every flow step of the DAG goes
/// between two of `hosts` (task `i` runs on `hosts[i]`, all distinct).
#[derive(Debug, Clone, PartialEq)]
pub struct JobTasks {
    /// Host of each task as generated.
    pub hosts: Vec<HostId>,
    /// Cores each task requests.
    pub cores: u32,
    /// Memory each task requests, bytes.
    pub memory_bytes: f64,
    /// The historical estimate of each task's network demand, bits/s (what
    /// a scheduler knows; the flows carry the actual demand).
    pub estimate_bps: f64,
}

impl TaskDag {
    /// An empty task of the given kind.
    pub fn new(kind: &'static str) -> Self {
        Self::with_capacity(kind, 0)
    }

    /// An empty task of the given kind with room for `steps` steps (a
    /// generator that knows its size allocates each list once).
    pub fn with_capacity(kind: &'static str, steps: usize) -> Self {
        Self {
            steps: Vec::with_capacity(steps),
            dep_at: Vec::with_capacity(steps),
            dep_ids: Vec::new(),
            kind,
            min_racks: 0,
            erasure: None,
            job: None,
            read: None,
            queue: None,
            precalculated_bytes: 0.0,
            quorum: None,
        }
    }

    fn push(&mut self, s: Step, deps: &[StepId]) -> StepId {
        let id = self.steps.len();
        assert!(deps.iter().all(|&d| d < id), "a step can only depend on earlier steps");
        let at = u32::try_from(self.dep_ids.len()).expect("fewer than 2^32 dependencies in a task");
        self.steps.push(s);
        self.dep_at.push(at);
        self.dep_ids.extend_from_slice(deps);
        id
    }

    /// The steps step `s` waits on (earlier steps, in the order given).
    pub fn deps(&self, s: StepId) -> &[StepId] {
        let a = self.dep_at[s] as usize;
        let b = self.dep_at.get(s + 1).map_or(self.dep_ids.len(), |&b| b as usize);
        &self.dep_ids[a..b]
    }

    /// The dependencies of every step, in step order.
    pub fn dep_lists(&self) -> impl ExactSizeIterator<Item = &[StepId]> + '_ {
        (0..self.steps.len()).map(|s| self.deps(s))
    }

    /// Whether some step waits on another.
    pub fn has_deps(&self) -> bool {
        !self.dep_ids.is_empty()
    }

    /// Adds a flow of `bytes` from `src` to `dst` after `deps`.
    pub fn flow(&mut self, src: HostId, dst: HostId, bytes: f64, deps: &[StepId]) -> StepId {
        self.push(Step::Flow { src, dst, bytes, rate_cap_bps: None }, deps)
    }

    /// Adds a flow capped at `cap_bps` bits per second after `deps`.
    pub fn capped_flow(&mut self, src: HostId, dst: HostId, bytes: f64, cap_bps: f64, deps: &[StepId]) -> StepId {
        self.push(Step::Flow { src, dst, bytes, rate_cap_bps: Some(cap_bps) }, deps)
    }

    /// Adds a delay of `seconds` after `deps` (a zero delay is a barrier).
    pub fn delay(&mut self, seconds: f64, deps: &[StepId]) -> StepId {
        self.push(Step::Delay { seconds: seconds.max(0.0) }, deps)
    }

    /// Adds an access of `bytes` to a disk of `host` after `deps` (see
    /// [`Step::Io`]).
    pub fn io(&mut self, host: HostId, bytes: f64, write: bool, object: u64, deps: &[StepId]) -> StepId {
        self.push(Step::Io { host, bytes, write, object }, deps)
    }

    /// Number of flow steps.
    pub fn num_flows(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s, Step::Flow { .. })).count()
    }

    /// Total bytes of its flows, those made pauses by
    /// [`TaskDag::precalculate`] included.
    pub fn bytes(&self) -> f64 {
        self.steps.iter().map(|s| if let Step::Flow { bytes, .. } = s { *bytes } else { 0.0 }).sum::<f64>()
            + self.precalculated_bytes
    }

    /// Makes flow step `s` a pause of `seconds`: the time the flow took
    /// when it was simulated beforehand, as background a run's decisions do
    /// not change (a scenario's precalculated apps). Its dependants still
    /// wait for it; its bytes stay in [`TaskDag::bytes`]. A step that is
    /// not a flow is left as it is (returns false).
    pub fn precalculate(&mut self, s: StepId, seconds: f64) -> bool {
        let Some(Step::Flow { bytes, .. }) = self.steps.get(s) else { return false };
        self.precalculated_bytes += *bytes;
        self.steps[s] = Step::Delay { seconds: seconds.max(0.0) };
        true
    }
}

/// The decisions a [`DagRunner`] asks for while it runs tasks (see the
/// module docs). Every method has a neutral default.
pub trait FlowHooks {
    /// Task `task_id` starts; `ready` are the steps about to start (its
    /// roots), which the hook may rewrite (their hosts, say).
    fn task_started(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &mut TaskDag, ready: &[StepId]) {
        let _ = (ctx, task_id, dag, ready);
    }
    /// Steps `ready` of a running task are about to start (their last
    /// dependency finished); the hook may rewrite them.
    fn steps_ready(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &mut TaskDag, ready: &[StepId]) {
        let _ = (ctx, task_id, dag, ready);
    }
    /// The flow `spec` of step `step` of task `task_id` (`dag`) is about to
    /// enter the engine: the hook sets its route and priority (in place: a
    /// spec is not moved through every hook of every flow).
    fn flow(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &TaskDag, step: StepId, spec: &mut FlowSpec) {
        let _ = (ctx, task_id, dag, step, spec);
    }
    /// Step `step` of task `task_id` (`dag`), a [`Step::Io`], starts: how
    /// many seconds it takes, queueing at the device included. The default
    /// has no device model: no time.
    fn io(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, dag: &TaskDag, step: StepId) -> f64 {
        let _ = (ctx, task_id, dag, step);
        0.0
    }
    /// Every step of task `task_id` finished (or, with a
    /// [`TaskDag::quorum`], enough of its sinks).
    fn task_finished(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64) {
        let _ = (ctx, task_id);
    }
    /// The flow `flow_id` of task `task_id` is about to be cancelled, still
    /// running, because its task reached its [`TaskDag::quorum`] without
    /// it: what it sent is still readable from `ctx`. It never completes.
    /// (A flow that delivered its last byte at that very instant is not
    /// cancelled: its completion comes, and the runner ignores it.)
    fn flow_abandoned(&mut self, ctx: &mut Ctx<'_, '_>, task_id: u64, flow_id: u64) {
        let _ = (ctx, task_id, flow_id);
    }
}

/// Hooks that decide nothing: ECMP, class 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;
impl FlowHooks for NoHooks {}

/// What happened to one task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// Index of the task in the runner (tags its flows with `task_id_base + task`).
    pub task: usize,
    /// Kind from the [`TaskDag`].
    pub kind: &'static str,
    /// Start time, seconds: its arrival (a queued task's time counts from
    /// here, its wait included).
    pub start_s: f64,
    /// Time its steps began, seconds: `start_s`, or later for a task that
    /// waited in its [`TaskDag::queue`]; `NaN` if it never began.
    pub began_s: f64,
    /// Time the last step finished, seconds; `NaN` if it did not.
    pub finish_s: f64,
    /// Finish time of every step (`NaN` for steps that did not finish).
    pub step_finish_s: Vec<f64>,
    /// Number of flows.
    pub flows: usize,
    /// Bytes of its flows.
    pub bytes: f64,
}

impl TaskRecord {
    /// Task completion time `finish_s - start_s` (`NaN` if unfinished),
    /// a queued task's wait included.
    pub fn duration_s(&self) -> f64 {
        self.finish_s - self.start_s
    }

    /// Seconds the task waited in its queue before it began (0 without
    /// one; `NaN` if it never began).
    pub fn queued_s(&self) -> f64 {
        self.began_s - self.start_s
    }

    /// The task's time on its critical path, split into network (flow
    /// steps) and device (io steps) seconds; the rest of
    /// [`Self::duration_s`] is delays (compute, waits, the wait in its
    /// queue). The path runs back
    /// from the step that finished last through, at each step, the
    /// dependency that finished last (the one it waited for; the earliest
    /// step on ties); a step starts when its last dependency finished (when
    /// the task began for a root). `(NaN, NaN)` for an unfinished task, `(0,
    /// 0)` for one without steps. `dag` is the task's DAG as it ran. The
    /// steps a task with a [`TaskDag::quorum`] abandoned (never finished)
    /// are not on it.
    pub fn critical_path(&self, dag: &TaskDag) -> (f64, f64) {
        let fin = &self.step_finish_s;
        if self.finish_s.is_nan() || (dag.quorum.is_none() && fin.iter().any(|f| f.is_nan())) {
            return (f64::NAN, f64::NAN);
        }
        let last_of = |steps: &mut dyn Iterator<Item = StepId>| -> Option<StepId> {
            steps.filter(|&s| !fin[s].is_nan()).fold(None, |best: Option<StepId>, s| match best {
                Some(b) if fin[b] >= fin[s] => Some(b),
                _ => Some(s),
            })
        };
        let Some(mut s) = last_of(&mut (0..fin.len())) else { return (0.0, 0.0) };
        let (mut net, mut io) = (0.0, 0.0);
        loop {
            let dep = last_of(&mut dag.deps(s).iter().copied());
            let start = dep.map_or(self.began_s, |d| fin[d]);
            match dag.steps[s] {
                Step::Flow { .. } => net += fin[s] - start,
                Step::Io { .. } => io += fin[s] - start,
                Step::Delay { .. } => {}
            }
            match dep {
                Some(d) => s = d,
                None => break,
            }
        }
        (net, io)
    }
}

struct TaskState {
    dag: TaskDag,
    /// The steps waiting on step `s` are `children[child_at[s]..child_at[s + 1]]`,
    /// in step order. All three are built when the task begins and emptied
    /// when it ends, and stay empty when no step waits on another.
    child_at: Vec<u32>,
    children: Vec<u32>,
    /// Per step, the dependencies not finished yet.
    waiting: Vec<u32>,
    left: usize,
    /// With a [`TaskDag::quorum`], once a step started (boxed: most tasks
    /// have none).
    quorum: Option<Box<Quorum>>,
    rec: TaskRecord,
}

/// A quorum task's progress: the sinks finished, and the flows running as
/// `(step, flow id)`, to cancel when the quorum is reached.
#[derive(Default)]
struct Quorum {
    sinks_done: u32,
    running: Vec<(StepId, u64)>,
}

/// The tasks of one [`TaskDag::queue`]: whether one runs, and the ones
/// waiting, in arrival order.
#[derive(Default)]
struct Queue {
    busy: bool,
    waiting: std::collections::VecDeque<usize>,
}

/// The controller that runs [`TaskDag`]s (see the module docs).
pub struct DagRunner {
    tasks: Vec<TaskState>,
    flows: Vec<(u32, u32)>,
    timers: Vec<(u32, u32)>,
    flow_id_base: u64,
    timer_base: u64,
    task_id_base: u64,
    error: Option<EngineError>,
    /// Scratch list of the steps a finished step made ready.
    ready: Vec<StepId>,
    /// Scratch list of a starting task's roots.
    roots: Vec<StepId>,
    /// The task queues, by [`TaskDag::queue`] (empty without them).
    queues: IdMap<u64, Queue>,
}

impl Default for DagRunner {
    fn default() -> Self {
        Self::new()
    }
}

const START: u32 = u32::MAX;

impl DagRunner {
    /// A runner with flow ids and timer tokens from [`DEFAULT_ID_BASE`] and
    /// task ids from 0.
    pub fn new() -> Self {
        Self::with_id_bases(DEFAULT_ID_BASE, DEFAULT_ID_BASE, 0)
    }

    /// A runner with explicit id ranges.
    pub fn with_id_bases(flow_id_base: u64, timer_base: u64, task_id_base: u64) -> Self {
        Self {
            tasks: Vec::new(),
            flows: Vec::new(),
            timers: Vec::new(),
            flow_id_base,
            timer_base,
            task_id_base,
            error: None,
            ready: Vec::new(),
            roots: Vec::new(),
            queues: IdMap::default(),
        }
    }

    /// Adds a task starting at `start_s` seconds; returns its index.
    pub fn add_task(&mut self, start_s: f64, dag: TaskDag) -> usize {
        let n = dag.steps.len();
        let rec = TaskRecord {
            task: self.tasks.len(),
            kind: dag.kind,
            start_s,
            began_s: f64::NAN,
            finish_s: f64::NAN,
            step_finish_s: vec![f64::NAN; n],
            flows: dag.num_flows(),
            bytes: dag.bytes(),
        };
        // The children and counts are built when the task begins and
        // dropped when it ends (see `TaskState`): a run holds them for the
        // tasks in flight only.
        self.tasks.push(TaskState {
            dag,
            child_at: Vec::new(),
            children: Vec::new(),
            waiting: Vec::new(),
            left: n,
            quorum: None,
            rec,
        });
        self.tasks.len() - 1
    }

    /// The steps waiting on each step of `dag`, in compressed rows (see
    /// [`TaskState::child_at`]).
    fn child_rows(dag: &TaskDag) -> (Vec<u32>, Vec<u32>) {
        let n = dag.steps.len();
        let mut child_at = vec![0u32; n + 1];
        for ds in dag.dep_lists() {
            for &d in ds {
                child_at[d + 1] += 1;
            }
        }
        for i in 0..n {
            child_at[i + 1] += child_at[i];
        }
        let mut fill = child_at.clone();
        let mut children = vec![0u32; child_at[n] as usize];
        for (s, ds) in dag.dep_lists().enumerate() {
            for &d in ds {
                children[fill[d] as usize] = s as u32;
                fill[d] += 1;
            }
        }
        (child_at, children)
    }

    /// Task id of task 0 (task `i` tags its flows with this plus `i`).
    pub fn task_id_base(&self) -> u64 {
        self.task_id_base
    }

    /// Number of tasks.
    pub fn num_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Adds a task while the simulation runs (from a controller callback)
    /// and schedules its start at `start_s >= now`; returns its index.
    pub fn add_task_now(&mut self, ctx: &mut Ctx<'_, '_>, start_s: f64, dag: TaskDag) -> Result<usize, EngineError> {
        let i = self.add_task(start_s, dag);
        let tok = self.new_timer(i as u32, START);
        ctx.schedule_timer(start_s, tok)?;
        Ok(i)
    }

    /// Schedules every task's start timer; call once, before running.
    pub fn install(&mut self, sim: &mut Simulation<'_>) -> Result<(), EngineError> {
        // Every flow step gets an entry in `flows`, every start, delay and
        // device step one in `timers`: sized once, not grown (and copied)
        // while the engine runs.
        let (mut flows, mut timers) = (0, self.tasks.len());
        for t in &self.tasks {
            for s in &t.dag.steps {
                match s {
                    Step::Flow { .. } => flows += 1,
                    Step::Delay { .. } | Step::Io { .. } => timers += 1,
                }
            }
        }
        self.flows.reserve(flows);
        self.timers.reserve(timers);
        for i in 0..self.tasks.len() {
            let tok = self.new_timer(i as u32, START);
            sim.schedule_timer(self.tasks[i].rec.start_s, tok)?;
        }
        Ok(())
    }

    /// The first engine error met while adding flows or timers during the
    /// run (the step concerned never finishes), if any.
    pub fn error(&self) -> Option<&EngineError> {
        self.error.as_ref()
    }

    /// Records of all tasks, by index.
    pub fn records(&self) -> Vec<TaskRecord> {
        self.iter_records().cloned().collect()
    }

    /// Records of all tasks, by index, without copying them.
    pub fn iter_records(&self) -> impl ExactSizeIterator<Item = &TaskRecord> {
        self.tasks.iter().map(|t| &t.rec)
    }

    /// The task and step of a flow this runner started, by engine flow id.
    pub fn flow_step(&self, flow_id: u64) -> Option<(usize, StepId)> {
        let i = flow_id.checked_sub(self.flow_id_base)?;
        self.flows.get(i as usize).map(|&(t, s)| (t as usize, s as usize))
    }

    /// The DAG of task `task` (as its hooks left it).
    pub fn dag(&self, task: usize) -> &TaskDag {
        &self.tasks[task].dag
    }

    /// The record of one task.
    pub fn record(&self, task: usize) -> &TaskRecord {
        &self.tasks[task].rec
    }

    fn new_timer(&mut self, task: u32, step: u32) -> u64 {
        self.timers.push((task, step));
        self.timer_base + (self.timers.len() - 1) as u64
    }

    fn start_step(&mut self, ctx: &mut Ctx<'_, '_>, task: usize, step: StepId, hooks: &mut dyn FlowHooks) {
        let now = ctx.now();
        let res = match self.tasks[task].dag.steps[step] {
            Step::Flow { src, dst, bytes, rate_cap_bps } => {
                self.flows.push((task as u32, step as u32));
                let id = self.flow_id_base + (self.flows.len() - 1) as u64;
                let task_id = self.task_id_base + task as u64;
                let mut f = FlowSpec::new(id, src, dst, bytes, now, Route::Ecmp).with_task(task_id);
                f.rate_cap_bps = rate_cap_bps;
                hooks.flow(ctx, task_id, &self.tasks[task].dag, step, &mut f);
                let t = &mut self.tasks[task];
                if t.dag.quorum.is_some() {
                    t.quorum.get_or_insert_default().running.push((step, id));
                }
                ctx.add_flow(f)
            }
            Step::Delay { seconds } => {
                let tok = self.new_timer(task as u32, step as u32);
                ctx.schedule_timer(now + seconds, tok)
            }
            Step::Io { .. } => {
                let task_id = self.task_id_base + task as u64;
                let seconds = hooks.io(ctx, task_id, &self.tasks[task].dag, step).max(0.0);
                let tok = self.new_timer(task as u32, step as u32);
                ctx.schedule_timer(now + seconds, tok)
            }
        };
        if let Err(e) = res {
            self.error.get_or_insert(e);
        }
    }

    fn finish_step(&mut self, ctx: &mut Ctx<'_, '_>, task: usize, step: StepId, hooks: &mut dyn FlowHooks) {
        let now = ctx.now();
        let task_id = self.task_id_base + task as u64;
        let t = &mut self.tasks[task];
        if !t.rec.finish_s.is_nan() {
            return; // an abandoned step of a task that reached its quorum
        }
        t.rec.step_finish_s[step] = now;
        t.left -= 1;
        let kids = match t.child_at.get(step..step + 2) {
            Some(&[a, b]) => &t.children[a as usize..b as usize],
            _ => &[],
        };
        let mut quorate = false;
        if let Some(q) = t.dag.quorum {
            let st = t.quorum.get_or_insert_default();
            st.running.retain(|&(s, _)| s != step);
            if kids.is_empty() {
                st.sinks_done += 1;
                quorate = st.sinks_done >= q;
            }
        }
        let done = t.left == 0 || quorate;
        if done {
            t.rec.finish_s = now;
        }
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        if !done {
            for &c in kids {
                let c = c as usize;
                t.waiting[c] -= 1;
                if t.waiting[c] == 0 {
                    ready.push(c);
                }
            }
        }
        if !ready.is_empty() {
            hooks.steps_ready(ctx, task_id, &mut t.dag, &ready);
        }
        for &c in &ready {
            self.start_step(ctx, task, c, hooks);
        }
        self.ready = ready;
        if done {
            let t = &mut self.tasks[task];
            (t.child_at, t.children, t.waiting) = (Vec::new(), Vec::new(), Vec::new());
            // A quorum reached with flows still running: they are cancelled
            // (but for one that has delivered its bytes at this very instant,
            // its completion still to be heard: it finished).
            for (step, fid) in t.quorum.take().map_or_else(Vec::new, |q| q.running) {
                let Step::Flow { bytes, .. } = t.dag.steps[step] else { continue };
                if ctx.flow_bytes_sent(fid).is_some_and(|sent| sent >= bytes) {
                    continue;
                }
                hooks.flow_abandoned(ctx, task_id, fid);
                if let Err(e) = ctx.cancel_flow(fid) {
                    self.error.get_or_insert(e);
                }
            }
            hooks.task_finished(ctx, task_id);
            self.next_in_queue(ctx, task, hooks);
        }
    }

    /// Adds steps to task `task` while it runs (from a controller callback):
    /// `add` appends them to its DAG, depending on any of its steps; those
    /// whose dependencies have all finished start now, after
    /// [`FlowHooks::steps_ready`]. Returns the new steps, or `None` (and
    /// adds nothing) when the task has not begun or has finished. Under a
    /// [`TaskDag::quorum`] the new sinks count toward it like the others (a
    /// step that had finished as a sink stays counted, even if a new step
    /// waits on it).
    pub fn extend_task(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        task: usize,
        hooks: &mut dyn FlowHooks,
        add: impl FnOnce(&mut TaskDag),
    ) -> Option<std::ops::Range<StepId>> {
        let task_id = self.task_id_base + task as u64;
        let t = self.tasks.get_mut(task)?;
        if t.rec.began_s.is_nan() || !t.rec.finish_s.is_nan() {
            return None;
        }
        let n0 = t.dag.steps.len();
        add(&mut t.dag);
        let n1 = t.dag.steps.len();
        t.rec.step_finish_s.resize(n1, f64::NAN);
        t.rec.flows = t.dag.num_flows();
        t.rec.bytes = t.dag.bytes();
        t.left += n1 - n0;
        if t.dag.has_deps() {
            // Old steps keep their counts (none, if nothing waited before);
            // a new one waits on its dependencies still to finish.
            (t.child_at, t.children) = Self::child_rows(&t.dag);
            t.waiting.resize(n0, 0);
            let fin = &t.rec.step_finish_s;
            let counts: Vec<u32> =
                (n0..n1).map(|s| t.dag.deps(s).iter().filter(|&&d| fin[d].is_nan()).count() as u32).collect();
            t.waiting.extend(counts);
        }
        let mut ready = std::mem::take(&mut self.roots);
        ready.clear();
        ready.extend((n0..n1).filter(|&s| t.waiting.get(s).is_none_or(|&w| w == 0)));
        if !ready.is_empty() {
            hooks.steps_ready(ctx, task_id, &mut t.dag, &ready);
        }
        for &s in &ready {
            self.start_step(ctx, task, s, hooks);
        }
        self.roots = ready;
        Some(n0..n1)
    }

    /// Task `task` finished: the next task waiting in its queue, if any,
    /// begins now.
    fn next_in_queue(&mut self, ctx: &mut Ctx<'_, '_>, task: usize, hooks: &mut dyn FlowHooks) {
        let Some(q) = self.tasks[task].dag.queue else { return };
        let queue = self.queues.entry(q).or_default();
        match queue.waiting.pop_front() {
            Some(next) => self.begin(ctx, next, hooks),
            None => queue.busy = false,
        }
    }

    /// [`Controller::on_flow_complete`] with `hooks` deciding.
    pub fn on_flow_complete_with(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord, hooks: &mut dyn FlowHooks) {
        let Some(i) = flow.id.checked_sub(self.flow_id_base) else { return };
        let Some(&(task, step)) = self.flows.get(i as usize) else { return };
        self.finish_step(ctx, task as usize, step as usize, hooks);
    }

    /// Whether `token` is one of this runner's timers.
    pub fn owns_timer(&self, token: u64) -> bool {
        token.checked_sub(self.timer_base).is_some_and(|i| (i as usize) < self.timers.len())
    }

    /// [`Controller::on_timer`] with `hooks` deciding.
    pub fn on_timer_with(&mut self, ctx: &mut Ctx<'_, '_>, token: u64, hooks: &mut dyn FlowHooks) {
        let Some(i) = token.checked_sub(self.timer_base) else { return };
        let Some(&(task, step)) = self.timers.get(i as usize) else { return };
        let task = task as usize;
        if step != START {
            self.finish_step(ctx, task, step as usize, hooks);
            return;
        }
        if let Some(q) = self.tasks[task].dag.queue {
            let queue = self.queues.entry(q).or_default();
            if queue.busy {
                queue.waiting.push_back(task);
                return;
            }
            queue.busy = true;
        }
        self.begin(ctx, task, hooks);
    }

    /// Task `task` begins: its roots start.
    fn begin(&mut self, ctx: &mut Ctx<'_, '_>, task: usize, hooks: &mut dyn FlowHooks) {
        let task_id = self.task_id_base + task as u64;
        let t = &mut self.tasks[task];
        t.rec.began_s = ctx.now();
        // Children in compressed rows and the dependencies left per step;
        // a DAG without dependencies (every step a root) needs neither.
        if t.dag.has_deps() {
            (t.child_at, t.children) = Self::child_rows(&t.dag);
            t.waiting = t.dag.dep_lists().map(|d| d.len() as u32).collect();
        }
        let mut roots = std::mem::take(&mut self.roots);
        roots.clear();
        roots.extend((0..t.dag.steps.len()).filter(|&s| t.waiting.get(s).is_none_or(|&w| w == 0)));
        hooks.task_started(ctx, task_id, &mut t.dag, &roots);
        // The hooks may have sized the task's flows (a resolved read).
        t.rec.bytes = t.dag.bytes();
        if t.dag.steps.is_empty() {
            t.rec.finish_s = ctx.now();
            self.roots = roots;
            hooks.task_finished(ctx, task_id);
            self.next_in_queue(ctx, task, hooks);
            return;
        }
        for &s in &roots {
            self.start_step(ctx, task, s, hooks);
        }
        self.roots = roots;
    }
}

impl Controller for DagRunner {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        self.on_flow_complete_with(ctx, flow, &mut NoHooks);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        self.on_timer_with(ctx, token, &mut NoHooks);
    }
}
