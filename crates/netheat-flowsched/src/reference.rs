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
use crate::workload::Task;
use crate::FlowschedError;
use netheat_core::LinkId;
use netheat_engine::max_min_rates;

struct F {
    task: usize,
    left: f64,
    class: i32,
    rate: f64,
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
    let th = sched.heavy_threshold();
    let mut finish = vec![f64::NAN; tasks.len()];
    let mut sent = vec![0.0f64; tasks.len()];
    let mut reported = vec![false; tasks.len()];
    let mut left_flows: Vec<usize> = tasks.iter().map(|t| t.flows.len()).collect();
    // Active flows: (task, flow index) -> state.
    let mut act: Vec<((usize, usize), F)> = Vec::new();
    // Flows of arrived tasks not started yet: (start time, task, flow index).
    // Every flow passes through here, so it starts in its task's class of
    // that moment.
    let mut waiting: Vec<(f64, usize, usize)> = Vec::new();
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut changes: Vec<ClassChange> = Vec::new();
    let mut alloc_in: Vec<(Vec<LinkId>, f64, f64, i32)> = Vec::new();
    loop {
        // Next event.
        let mut t_next = if next < tasks.len() { tasks[next].arrival_s } else { f64::INFINITY };
        for &(s, _, _) in &waiting {
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
                let t = f.task;
                act.swap_remove(k);
                left_flows[t] -= 1;
                if left_flows[t] == 0 {
                    finish[t] = now;
                    sched.task_completed(metas[t].id, &mut changes);
                }
                continue;
            }
            k += 1;
        }
        // Heavy crossings (reported once).
        if let Some(th) = th {
            for t in 0..tasks.len() {
                if !reported[t] && finish[t].is_nan() && sent[t] >= th * (1.0 - 1e-12) && sent[t] > 0.0 {
                    reported[t] = true;
                    sched.task_progress(metas[t].id, th.max(sent[t]) * (1.0 + 1e-12) + 1e-9, &mut changes);
                }
            }
        }
        // Arrivals.
        while next < tasks.len() && tasks[next].arrival_s <= now {
            let t = next;
            let domains: Vec<_> = tasks[t].flows.iter().map(|f| f.dst).collect();
            sched.task_arrived(&metas[t], &domains, &mut changes);
            for (j, fl) in tasks[t].flows.iter().enumerate() {
                if fl.bytes <= 0.0 {
                    left_flows[t] -= 1;
                } else {
                    waiting.push((tasks[t].arrival_s + fl.delay_s, t, j));
                }
            }
            if left_flows[t] == 0 {
                finish[t] = now;
                sched.task_completed(metas[t].id, &mut changes);
            }
            next += 1;
        }
        // Flows starting now.
        let mut k = 0;
        while k < waiting.len() {
            let (s, t, j) = waiting[k];
            if s <= now {
                waiting.swap_remove(k);
                let fl = &tasks[t].flows[j];
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
        if act.is_empty() && waiting.is_empty() && next >= tasks.len() {
            break;
        }
    }
    if let Some(t) = finish.iter().position(|f| f.is_nan()) {
        return Err(FlowschedError::Engine(format!("task {t} never finished (a flow has no capacity)")));
    }
    Ok(tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskResult { id: ids[i], bytes: t.bytes, start_s: t.arrival_s, finish_s: finish[i] })
        .collect())
}
