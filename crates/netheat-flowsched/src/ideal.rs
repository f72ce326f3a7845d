//! The idealized schedulers: the flow engine's strict priority classes,
//! with classes assigned (and changed while the run goes on) by a
//! [`FlowScheduler`] through an engine [`Controller`].
//!
//! Tasks arrive by timers. A flow enters the engine when it is released
//! (at its task's arrival, or when the last flow feeding it completes) and
//! starts after its sender's compute time; a task completes with its last
//! flow. For `fifo-lm`, the bytes of large tasks are read by the polls of
//! [`crate::poll`] (the same rule as the scenario's flow driver).

use crate::policy::{ClassChange, FlowScheduler, TaskIdAllocator, TaskMeta};
use crate::poll::HeavyPoll;
use crate::task::{check_tasks, feeder_counts, Task};
use crate::FlowschedError;
use netheat_engine::{
    Controller, Ctx, EngineError, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation, Stats,
};

/// One task's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskResult {
    /// Scheduler task id.
    pub id: u64,
    /// Total bytes.
    pub bytes: f64,
    /// Arrival time.
    pub start_s: f64,
    /// Completion time (`NaN` if unfinished).
    pub finish_s: f64,
}

impl TaskResult {
    /// Task completion time.
    pub fn tct_s(&self) -> f64 {
        self.finish_s - self.start_s
    }
}

/// Options of an idealized run.
#[derive(Debug, Clone, PartialEq)]
pub struct IdealOptions {
    /// Load balancers issuing task ids (tasks go to them round-robin).
    pub lbs: usize,
    /// Heavy-detection poll interval, seconds.
    pub poll_s: f64,
}

impl Default for IdealOptions {
    fn default() -> Self {
        Self { lbs: 1, poll_s: 100e-6 }
    }
}

/// The poll timer's token (arrivals are task indices).
const POLL: u64 = u64::MAX;

struct Run<'a> {
    tasks: &'a [Task],
    sched: Box<dyn FlowScheduler>,
    meta: Vec<TaskMeta>,
    /// First engine flow id of each task.
    base: Vec<u64>,
    finish: Vec<f64>,
    /// Per flow: in the engine (released) and done.
    released: Vec<bool>,
    done: Vec<bool>,
    /// Per task: flows not completed.
    left_flows: Vec<usize>,
    /// Per task (once arrived): per flow, feeders not yet completed.
    pending: Vec<Vec<u32>>,
    /// Per task: bytes of completed flows.
    bytes_done: Vec<f64>,
    /// Per task: the most bits per second it can send, the capacity of the
    /// distinct last links of its flows (every byte crosses one of them).
    cut_bps: Vec<f64>,
    id_to_task: std::collections::BTreeMap<u64, usize>,
    /// `fifo-lm`'s reads of large tasks.
    poll: HeavyPoll,
    changes: Vec<ClassChange>,
    err: Option<EngineError>,
}

impl Run<'_> {
    fn apply(&mut self, ctx: &mut Ctx<'_, '_>) {
        for (id, dom, class) in std::mem::take(&mut self.changes) {
            let Some(&t) = self.id_to_task.get(&id) else { continue };
            for (j, f) in self.tasks[t].flows.iter().enumerate() {
                let fid = self.base[t] + j as u64;
                if f.dst == dom && self.released[fid as usize] && !self.done[fid as usize] {
                    if let Err(e) = ctx.set_priority(fid, class) {
                        self.err.get_or_insert(e);
                    }
                }
            }
        }
    }
    fn arrive(&mut self, ctx: &mut Ctx<'_, '_>, t: usize) {
        let meta = self.meta[t];
        let domains: Vec<_> = self.tasks[t].flows.iter().map(|f| f.dst).collect();
        self.sched.task_arrived(&meta, &domains, &mut self.changes);
        self.apply(ctx);
        let now = ctx.now();
        self.pending[t] = feeder_counts(&self.tasks[t]);
        for j in 0..self.tasks[t].flows.len() {
            if self.pending[t][j] == 0 {
                self.release(ctx, t, j);
            }
        }
        if self.tasks[t].flows.is_empty() {
            self.complete(ctx, t);
        }
        if let Some(th) = self.sched.heavy_threshold() {
            if self.tasks[t].bytes > th {
                if let Some(at) = self.poll.watch(now, t as u64, self.cut_bps[t]) {
                    let _ = ctx.schedule_timer(at, POLL);
                }
            }
        }
    }
    /// Flow `j` of task `t` enters the engine in its task's current class;
    /// it starts after its sender's compute time, and class changes reach
    /// it while it waits.
    fn release(&mut self, ctx: &mut Ctx<'_, '_>, t: usize, j: usize) {
        let meta = self.meta[t];
        let f = &self.tasks[t].flows[j];
        let fid = self.base[t] + j as u64;
        let now = ctx.now();
        let p = self.sched.flow_class(&meta, f.dst, f.bytes);
        let spec = FlowSpec::new(fid, f.src, f.dst, f.bytes, now + f.delay_s, Route::Explicit(f.path.clone()))
            .with_priority(p)
            .with_task(meta.id);
        if let Err(e) = ctx.add_flow(spec) {
            self.err.get_or_insert(e);
        }
        self.released[fid as usize] = true;
    }
    fn complete(&mut self, ctx: &mut Ctx<'_, '_>, t: usize) {
        self.finish[t] = ctx.now();
        self.pending[t] = Vec::new();
        self.sched.task_completed(self.meta[t].id, &mut self.changes);
        self.apply(ctx);
    }
    fn poll(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        let th = self.sched.heavy_threshold().unwrap_or(f64::INFINITY);
        let (finish, done, released, base, tasks) = (&self.finish, &self.done, &self.released, &self.base, self.tasks);
        let (bytes_done, meta, sched, changes) = (&self.bytes_done, &self.meta, &mut self.sched, &mut self.changes);
        let next = self.poll.poll(
            now,
            th,
            |t| !finish[t as usize].is_nan(),
            |t| {
                let t = t as usize;
                let mut so_far = bytes_done[t];
                for j in 0..tasks[t].flows.len() {
                    let fid = (base[t] + j as u64) as usize;
                    // Flows not released yet have sent nothing.
                    if done[fid] || !released[fid] {
                        continue;
                    }
                    so_far += ctx.flow_bytes_sent(fid as u64).unwrap_or(0.0);
                }
                so_far
            },
            |t, so_far| sched.task_progress(meta[t as usize].id, so_far, changes),
        );
        self.apply(ctx);
        if let Some(at) = next {
            let _ = ctx.schedule_timer(at, POLL);
        }
    }
}

impl Controller for Run<'_> {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        if token == POLL {
            if self.poll.is_due(ctx.now()) {
                self.poll(ctx);
            }
        } else {
            self.arrive(ctx, token as usize);
        }
    }
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        self.done[flow.id as usize] = true;
        let Some(&t) = flow.task_id.and_then(|id| self.id_to_task.get(&id)) else { return };
        self.bytes_done[t] += flow.bytes;
        let j = (flow.id - self.base[t]) as usize;
        if let Some(k) = self.tasks[t].flows[j].feeds {
            let k = k as usize;
            self.pending[t][k] -= 1;
            if self.pending[t][k] == 0 {
                self.release(ctx, t, k);
            }
        }
        self.left_flows[t] -= 1;
        if self.left_flows[t] == 0 {
            self.complete(ctx, t);
        }
    }
}

/// The capacity of the distinct last links of a task's flows, bits/s: an
/// upper bound on the task's sending rate (infinite if a flow has no link).
fn cut_bps(task: &Task, caps: &[f64]) -> f64 {
    let mut last: Vec<u32> = Vec::with_capacity(task.flows.len());
    for f in &task.flows {
        match f.path.last() {
            Some(&l) => last.push(l),
            None => return f64::INFINITY,
        }
    }
    last.sort_unstable();
    last.dedup();
    last.iter().map(|&l| caps[l as usize]).sum()
}

/// Scheduler task ids for tasks in arrival order: task `i` goes to load
/// balancer `i mod lbs`.
pub fn assign_ids(n: usize, lbs: usize) -> Vec<u64> {
    let mut alloc = TaskIdAllocator::new(lbs);
    (0..n).map(|i| alloc.next(i)).collect()
}

/// Runs `tasks` (sorted by arrival; flows on explicit paths over links of
/// capacities `link_caps_bps`) under a policy on the flow engine.
pub fn run_ideal(
    link_caps_bps: &[f64],
    tasks: &[Task],
    sched: Box<dyn FlowScheduler>,
    opts: &IdealOptions,
) -> Result<Vec<TaskResult>, FlowschedError> {
    run_ideal_stats(link_caps_bps, tasks, sched, opts).map(|(r, _)| r)
}

/// [`run_ideal`], also returning the engine's counters (repairs, rate
/// changes, ...): what a point's run time is made of.
pub fn run_ideal_stats(
    link_caps_bps: &[f64],
    tasks: &[Task],
    sched: Box<dyn FlowScheduler>,
    opts: &IdealOptions,
) -> Result<(Vec<TaskResult>, Stats), FlowschedError> {
    if opts.poll_s.is_nan() || opts.poll_s <= 0.0 {
        return Err(FlowschedError::param("poll", "must be > 0"));
    }
    check_tasks(tasks)?;
    let ids = assign_ids(tasks.len(), opts.lbs);
    let mut base = Vec::with_capacity(tasks.len());
    let mut n = 0u64;
    for t in tasks {
        base.push(n);
        n += t.flows.len() as u64;
    }
    let meta: Vec<TaskMeta> = tasks.iter().zip(&ids).map(|(t, &id)| TaskMeta { id, bytes: t.bytes }).collect();
    let mut run = Run {
        tasks,
        sched,
        meta,
        base,
        finish: vec![f64::NAN; tasks.len()],
        released: vec![false; n as usize],
        done: vec![false; n as usize],
        left_flows: tasks.iter().map(|t| t.flows.len()).collect(),
        pending: vec![Vec::new(); tasks.len()],
        bytes_done: vec![0.0; tasks.len()],
        cut_bps: tasks.iter().map(|t| cut_bps(t, link_caps_bps)).collect(),
        id_to_task: ids.iter().enumerate().map(|(i, &id)| (id, i)).collect(),
        poll: HeavyPoll::new(opts.poll_s),
        changes: Vec::new(),
        err: None,
    };
    // Only task times are needed: no link telemetry, and completed flows'
    // state is reused (the controller keeps what it needs of them).
    let cfg = SimConfig { telemetry: false, recycle_finished: true, ..SimConfig::default() };
    let net = Network::try_new(link_caps_bps.to_vec())?;
    let mut sim = Simulation::new(net, None, cfg);
    for (i, t) in tasks.iter().enumerate() {
        sim.schedule_timer(t.arrival_s, i as u64)?;
    }
    // Only the tasks' times are needed: skip building 10^7 flow records.
    sim.run_until(&mut run, f64::INFINITY);
    if let Some(e) = run.err {
        return Err(FlowschedError::Engine(e));
    }
    let results = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskResult { id: ids[i], bytes: t.bytes, start_s: t.arrival_s, finish_s: run.finish[i] })
        .collect();
    Ok((results, sim.stats().clone()))
}

#[cfg(test)]
mod tests {
    use super::cut_bps;
    use crate::task::{Task, TaskFlow};

    fn flow(path: Vec<u32>) -> TaskFlow {
        TaskFlow { src: 0, dst: 1, bytes: 1.0, path, delay_s: 0.0, feeds: None }
    }

    #[test]
    fn cut_counts_each_last_link_once() {
        let caps = [1e9, 2e9, 4e9, 8e9];
        // Last links 2, 3 and 2 again: 4 + 8 Gbps.
        let t = Task { arrival_s: 0.0, bytes: 3.0, flows: vec![flow(vec![0, 2]), flow(vec![1, 3]), flow(vec![1, 2])] };
        assert_eq!(cut_bps(&t, &caps), 12e9);
        let local = Task { arrival_s: 0.0, bytes: 1.0, flows: vec![flow(vec![0, 2]), flow(vec![])] };
        assert_eq!(cut_bps(&local, &caps), f64::INFINITY);
    }
}
