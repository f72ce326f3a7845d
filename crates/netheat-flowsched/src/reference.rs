//! A from-scratch reference of the idealized schedulers: an exact fluid
//! simulation that recomputes the whole prioritised max-min allocation
//! ([`netheat_engine::max_min_rates`]) at every event. Heavy detection is
//! exact: between events every task's rate is constant, so the instant its
//! bytes so far reach the threshold is an event of its own.
//!
//! It costs O(active flows · hops) per event, so it is meant for small
//! cases: it cross-checks the engine-based runs ([`crate::ideal`]) in tests.

use crate::ideal::{assign_ids, TaskResult};
use crate::policy::{ClassChange, FlowScheduler, TaskMeta};
use crate::task::{check_tasks, feeder_counts, Task};
use crate::FlowschedError;
use netheat_core::LinkId;
use netheat_engine::max_min_rates;

struct F {
    task: usize,
    left: f64,
    class: i32,
    rate: f64,
}

/// Task progress: flows left, flows waiting for their feeders, and flows
/// released but not started.
struct Book {
    left_flows: Vec<usize>,
    /// Per task (once arrived): per flow, feeders not yet completed.
    pending: Vec<Vec<u32>>,
    /// (start time, task, flow index). Every flow passes through here, so
    /// it starts in its task's class of that moment.
    waiting: Vec<(f64, usize, usize)>,
    finish: Vec<f64>,
}

impl Book {
    /// Flow `j` of task `t` completed at `now`: the task may finish, and
    /// the flow it feeds may be released.
    fn flow_done(&mut self, tasks: &[Task], t: usize, j: usize, now: f64) -> bool {
        self.left_flows[t] -= 1;
        if let Some(k) = tasks[t].flows[j].feeds {
            let k = k as usize;
            self.pending[t][k] -= 1;
            if self.pending[t][k] == 0 {
                self.waiting.push((now + tasks[t].flows[k].delay_s, t, k));
            }
        }
        if self.left_flows[t] == 0 {
            self.finish[t] = now;
            self.pending[t] = Vec::new();
            return true;
        }
        false
    }
}

/// Runs `tasks` under `sched` on links of capacities `caps`, exactly.
pub fn run_reference(
    caps: &[f64],
    tasks: &[Task],
    mut sched: Box<dyn FlowScheduler>,
    lbs: usize,
) -> Result<Vec<TaskResult>, FlowschedError> {
    let ids = assign_ids(tasks.len(), lbs);
    let metas: Vec<TaskMeta> = tasks.iter().zip(&ids).map(|(t, &id)| TaskMeta { id, bytes: t.bytes }).collect();
    let by_id: std::collections::BTreeMap<u64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    check_tasks(tasks)?;
    let th = sched.heavy_threshold();
    let mut sent = vec![0.0f64; tasks.len()];
    let mut reported = vec![false; tasks.len()];
    let mut book = Book {
        left_flows: tasks.iter().map(|t| t.flows.len()).collect(),
        pending: vec![Vec::new(); tasks.len()],
        waiting: Vec::new(),
        finish: vec![f64::NAN; tasks.len()],
    };
    // Active flows: (task, flow index) -> state.
    let mut act: Vec<((usize, usize), F)> = Vec::new();
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut changes: Vec<ClassChange> = Vec::new();
    let mut alloc_in: Vec<(Vec<LinkId>, f64, f64, i32)> = Vec::new();
    loop {
        // Next event.
        let mut t_next = if next < tasks.len() { tasks[next].arrival_s } else { f64::INFINITY };
        for &(s, _, _) in &book.waiting {
            t_next = t_next.min(s);
        }
        for (_, f) in &act {
            if f.rate > 0.0 {
                t_next = t_next.min(now + f.left * 8.0 / f.rate);
            }
        }
        if let Some(th) = th {
            let mut task_rate = std::collections::BTreeMap::<usize, f64>::new();
            for (_, f) in &act {
                *task_rate.entry(f.task).or_default() += f.rate / 8.0;
            }
            for (&t, &r) in &task_rate {
                if !reported[t] && r > 0.0 && tasks[t].bytes > th {
                    t_next = t_next.min(now + ((th - sent[t]).max(0.0) / r));
                }
            }
        }
        if !t_next.is_finite() {
            break;
        }
        let dt = t_next - now;
        now = t_next;
        for (_, f) in act.iter_mut() {
            let b = (f.rate * dt / 8.0).min(f.left);
            f.left -= b;
            sent[f.task] += b;
        }
        // Completions.
        let mut k = 0;
        while k < act.len() {
            let f = &act[k].1;
            if f.left <= (1e-9 * tasks[f.task].bytes).max(1e-6) {
                let ((t, j), _) = act.swap_remove(k);
                if book.flow_done(tasks, t, j, now) {
                    sched.task_completed(metas[t].id, &mut changes);
                }
                continue;
            }
            k += 1;
        }
        // Heavy crossings (reported once).
        if let Some(th) = th {
            for t in 0..tasks.len() {
                if !reported[t] && book.finish[t].is_nan() && sent[t] >= th * (1.0 - 1e-12) && sent[t] > 0.0 {
                    reported[t] = true;
                    sched.task_progress(metas[t].id, th.max(sent[t]) * (1.0 + 1e-12) + 1e-9, &mut changes);
                }
            }
        }
        // Arrivals: flows that nothing feeds are released.
        while next < tasks.len() && tasks[next].arrival_s <= now {
            let t = next;
            let domains: Vec<_> = tasks[t].flows.iter().map(|f| f.dst).collect();
            sched.task_arrived(&metas[t], &domains, &mut changes);
            book.pending[t] = feeder_counts(&tasks[t]);
            for (j, fl) in tasks[t].flows.iter().enumerate() {
                if book.pending[t][j] == 0 {
                    book.waiting.push((tasks[t].arrival_s + fl.delay_s, t, j));
                }
            }
            if tasks[t].flows.is_empty() {
                book.finish[t] = now;
                sched.task_completed(metas[t].id, &mut changes);
            }
            next += 1;
        }
        // Flows starting now; an empty one completes at once (and may
        // release the flow it feeds, so look again).
        let mut k = 0;
        while k < book.waiting.len() {
            let (s, t, j) = book.waiting[k];
            if s <= now {
                book.waiting.swap_remove(k);
                let fl = &tasks[t].flows[j];
                if fl.bytes <= 0.0 {
                    if book.flow_done(tasks, t, j, now) {
                        sched.task_completed(metas[t].id, &mut changes);
                    }
                    k = 0;
                    continue;
                }
                let class = sched.flow_class(&metas[t], fl.dst, fl.bytes);
                act.push(((t, j), F { task: t, left: fl.bytes, class, rate: 0.0 }));
                continue;
            }
            k += 1;
        }
        for (id, dom, class) in changes.drain(..) {
            let t = by_id[&id];
            for (_, f) in act.iter_mut().filter(|((tt, j), _)| *tt == t && tasks[t].flows[*j].dst == dom) {
                f.class = class;
            }
        }
        // Deterministic order, then the full allocation.
        act.sort_by_key(|(k, _)| *k);
        alloc_in.clear();
        for ((t, j), f) in &act {
            alloc_in.push((tasks[*t].flows[*j].path.clone(), 1.0, f64::INFINITY, f.class));
        }
        let rates = max_min_rates(caps, &alloc_in);
        for ((_, f), r) in act.iter_mut().zip(rates) {
            f.rate = r;
        }
        if act.is_empty() && book.waiting.is_empty() && next >= tasks.len() {
            break;
        }
    }
    let finish = book.finish;
    if let Some(t) = finish.iter().position(|f| f.is_nan()) {
        return Err(FlowschedError::Unfinished { task: t });
    }
    Ok(tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskResult { id: ids[i], bytes: t.bytes, start_s: t.arrival_s, finish_s: finish[i] })
        .collect())
}
