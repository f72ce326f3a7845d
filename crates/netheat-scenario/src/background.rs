//! Precalculated traffic: flows simulated alone, once, before the run,
//! whose load the run then sees as capacity it does not have.
//!
//! The Sinbad paper's simulation (SIGCOMM'13 section 7.2) replays the
//! trace's background traffic as precalculated and unaffected by
//! placement, so that replica placement is compared against the same
//! background under every policy. A `[[workload.traffic]]` table with
//! `precalculated = true` is that: its flows run through the flow engine on
//! the datacenter with nothing else (same routing, same seed), and the
//! bytes each link carries in each step of `scenario.background-step`
//! become, for the run proper, a capacity reduction on that link for that
//! step: the run's flows get `cap - background rate`, and at least the
//! per-flow fair share `cap / (n + 1)` where `n` is the time-averaged number
//! of background flows on the link in the step (TCP shares a link by flows;
//! without the floor a write behind a saturated link would stall, which no
//! real write does).
//!
//! The run's measurements include the background: a storage policy's link
//! reports add the background's rate over the step just ended (what a
//! switch counter would read), and the `links` table's `utilization` counts
//! both, with the background's part in `background`.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use netheat_config::workload::Workload;
use netheat_core::{HostId, LinkId, Routing};
use netheat_engine::{FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_topology::Topology;
use netheat_workloads::{FlowRow, Step, TaskDag};

use crate::ScenarioError;

/// The precalculated traffic's load, link by link and step by step.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// Step, seconds.
    pub step_s: f64,
    /// Per link: `(step, rate in bits/s, time-averaged flows)` of the steps
    /// in which the background used it, in step order.
    pub per_link: Vec<Vec<(u32, f64, f64)>>,
    /// Flows precalculated.
    pub flows: u64,
    /// Their bytes.
    pub bytes: f64,
    /// Bytes of those whose hosts are in different racks.
    pub cross_rack_bytes: f64,
    /// When the last background flow finished, seconds.
    pub end_s: f64,
    /// When each flow finished, in the order given (NaN: it did not).
    pub finish_s: Vec<f64>,
}

impl Background {
    /// The capacity a link of capacity `cap` leaves to the run in a step with
    /// background rate `bg` and `n` background flows: `cap - bg`, at least
    /// the per-flow fair share `cap / (n + 1)`.
    pub fn left(cap: f64, bg: f64, n: f64) -> f64 {
        (cap - bg).max(cap / (n + 1.0)).clamp(0.0, cap)
    }

    /// The background's `(rate, flows)` on `link` in step `k` (zero when it
    /// did not use it).
    pub fn at(&self, link: LinkId, k: u32) -> (f64, f64) {
        let Some(v) = self.per_link.get(link as usize) else { return (0.0, 0.0) };
        match v.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => (v[i].1, v[i].2),
            Err(_) => (0.0, 0.0),
        }
    }

    /// Steps covered (up to the last one with background).
    pub fn steps(&self) -> u32 {
        self.per_link.iter().filter_map(|v| v.last().map(|e| e.0 + 1)).max().unwrap_or(0)
    }

    /// Bytes the background carried on `link` between `t0` and `t1`.
    pub fn bytes_between(&self, link: LinkId, t0: f64, t1: f64) -> f64 {
        let Some(v) = self.per_link.get(link as usize) else { return 0.0 };
        let k0 = (t0 / self.step_s).floor().max(0.0) as u32;
        let start = v.partition_point(|e| e.0 < k0);
        let mut bytes = 0.0;
        for &(k, rate, _) in &v[start..] {
            let (a, b) = (f64::from(k) * self.step_s, f64::from(k + 1) * self.step_s);
            if a >= t1 {
                break;
            }
            let overlap = b.min(t1) - a.max(t0);
            if overlap > 0.0 {
                bytes += rate * overlap / 8.0;
            }
        }
        bytes
    }
}

/// A flow step of a task: `(index in the workload's tasks, step)`.
pub type TaskStep = (usize, usize);

/// The flows to precalculate: the `precalculated` traffic's (taken out of
/// the workload: the run needs only their load), then, for the tasks of the
/// `precalculated` apps, every flow step that waits on nothing (a shuffle's
/// flows; not a block write's, which waits for its request), starting when
/// its task does. All sorted by start (stable), ids `0..n`; `steps[i]` is
/// the task step of row `i` (`None`: a traffic flow).
pub fn precalculated_rows(w: &mut Workload) -> (Vec<FlowRow>, Vec<Option<TaskStep>>) {
    let traffic = std::mem::take(&mut w.background);
    if w.precalculated_apps.is_empty() {
        let n = traffic.len();
        return (traffic, vec![None; n]);
    }
    let mut rows: Vec<(FlowRow, Option<TaskStep>)> = traffic.into_iter().map(|r| (r, None)).collect();
    for (t, (start_s, table, dag)) in w.tasks.iter().enumerate() {
        if !w.precalculated_apps.contains(table) {
            continue;
        }
        for (s, step) in dag.steps.iter().enumerate() {
            if let Step::Flow { src, dst, bytes, rate_cap_bps } = *step {
                if dag.deps(s).is_empty() {
                    let row = FlowRow {
                        flow_id: 0,
                        start_s: *start_s,
                        src,
                        dst,
                        bytes,
                        task_id: None,
                        priority: 0,
                        weight: 1.0,
                        rate_cap_bps,
                    };
                    rows.push((row, Some((t, s))));
                }
            }
        }
    }
    rows.sort_by(|a, b| a.0.start_s.total_cmp(&b.0.start_s));
    rows.iter_mut().enumerate().for_each(|(i, r)| r.0.flow_id = i as u64);
    rows.into_iter().unzip()
}

/// Makes every task flow precalculated in `bg` (`steps`, as
/// [`precalculated_rows`] gave them) a pause of the time it took there
/// ([`TaskDag::precalculate`]): from its task's start to its finish. (Every
/// precalculated flow finishes: nothing else runs with them.)
pub fn make_pauses(tasks: &mut [(f64, usize, TaskDag)], rows: &[FlowRow], steps: &[Option<TaskStep>], bg: &Background) {
    for ((row, step), &finish) in rows.iter().zip(steps).zip(&bg.finish_s) {
        if let (Some((t, s)), true) = (*step, finish.is_finite()) {
            tasks[t].2.precalculate(s, finish - row.start_s);
        }
    }
}

/// The last background precalculated in this process, by the hash of what
/// it depends on: an experiment's variants of one scenario (the same
/// datacenter links, traffic, step and seed) share it.
static LAST: Mutex<Option<(u64, Arc<Background>)>> = Mutex::new(None);

/// [`precalculate`], or the last result when it was for the same links,
/// flows, step and seed (its load depends on nothing else: not on the
/// policies, the application tasks, or the hosts' disks).
pub fn precalculate_cached(
    topo: &Topology,
    rows: &[FlowRow],
    step_s: f64,
    seed: u64,
    max_windows: u32,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Arc<Background>, ScenarioError> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (step_s.to_bits(), seed, topo.hosts().len(), rows.len()).hash(&mut h);
    for l in topo.links() {
        (l.src, l.dst, l.capacity_bps.to_bits()).hash(&mut h);
    }
    for r in rows {
        (r.src, r.dst, r.bytes.to_bits(), r.start_s.to_bits(), r.priority, r.weight.to_bits()).hash(&mut h);
        r.rate_cap_bps.map(f64::to_bits).hash(&mut h);
    }
    let key = h.finish();
    let mut last = LAST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((k, b)) = last.as_ref() {
        if *k == key {
            return Ok(Arc::clone(b));
        }
    }
    // Forget the previous one before computing the next (its memory).
    *last = None;
    let b = Arc::new(precalculate(topo, rows, step_s, seed, max_windows, progress)?);
    *last = Some((key, Arc::clone(&b)));
    Ok(b)
}

/// Simulates `rows` alone on `topo` (ECMP under `seed`, as the run would
/// route them) until they finish, in steps of `step_s`, keeping at most
/// `max_windows` steps (what the memory budget allows; a background that
/// lasts longer is refused, not cut). It calls `progress(flows done, flows)`
/// as it starts and about every 100 ms of wall time after, and stops with
/// [`ScenarioError::Interrupted`] when that returns `false` (Ctrl-C).
pub fn precalculate(
    topo: &Topology,
    rows: &[FlowRow],
    step_s: f64,
    seed: u64,
    max_windows: u32,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<Background, ScenarioError> {
    let routing: &dyn Routing = topo;
    let cfg = SimConfig { window_s: step_s, seed, telemetry: true, max_windows, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
    let rack = |h: HostId| topo.hosts()[h as usize].rack;
    let (mut bytes, mut cross) = (0.0, 0.0);
    let mut weight = Vec::with_capacity(rows.len());
    for (i, f) in rows.iter().enumerate() {
        let mut s = FlowSpec::new(i as u64, f.src, f.dst, f.bytes, f.start_s, Route::Ecmp)
            .with_priority(f.priority)
            .with_weight(f.weight);
        s.rate_cap_bps = f.rate_cap_bps;
        sim.add_flow(s)?;
        weight.push(f.weight);
        bytes += f.bytes;
        if rack(f.src) != rack(f.dst) {
            cross += f.bytes;
        }
    }
    // A step at a time, reporting progress (and hearing Ctrl-C) between.
    let total = rows.len() as u64;
    if !progress(0, total) {
        return Err(ScenarioError::Interrupted);
    }
    let mut last = std::time::Instant::now();
    while let Some(t) = sim.next_event_time() {
        let t_end = ((t / step_s).floor() + 1.0) * step_s;
        sim.run_events_until(&mut netheat_engine::NoController, t_end.max(t));
        if last.elapsed() >= std::time::Duration::from_millis(100) {
            last = std::time::Instant::now();
            if !progress(sim.stats().flows_completed, total) {
                return Err(ScenarioError::Interrupted);
            }
        }
    }
    let res = sim.finish();
    if res.stats.windows_dropped > 0 || res.link_windows.dropped() > 0 {
        return Err(ScenarioError::Budget(format!(
            "precalculated traffic lasts {:.0} s: more than the {max_windows} steps of {step_s} s the memory budget leaves room for; lengthen `scenario.background-step` or raise the budget",
            res.end_s
        )));
    }
    let n_links = routing.num_links();
    // Rates per step, from the exact per-window bytes.
    let mut per_link: Vec<Vec<(u32, f64, f64)>> = vec![Vec::new(); n_links];
    for w in res.link_windows.iter() {
        if w.bytes > 0.0 {
            per_link[w.link as usize].push((w.window, w.bytes * 8.0 / step_s, 0.0));
        }
    }
    // Time-averaged flows per step: each flow's weight over the share of
    // the step it was on the link (from its start to its end).
    let mut spans: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); n_links];
    let mut path = Vec::new();
    let mut end_s: f64 = 0.0;
    let mut finish_s = vec![f64::NAN; rows.len()];
    for r in &res.flows {
        finish_s[r.id as usize] = r.finish_s;
        let (t0, t1) = (r.start_s, if r.finish_s.is_finite() { r.finish_s } else { res.end_s });
        end_s = end_s.max(t1);
        let Some(k) = r.path_id else { continue };
        if t1 <= t0 {
            continue;
        }
        routing.path(r.src, r.dst, k as usize, &mut path);
        for &l in &path {
            spans[l as usize].push((t0, t1, weight[r.id as usize]));
        }
    }
    for (l, sp) in spans.iter().enumerate() {
        if sp.is_empty() {
            continue;
        }
        let mut n: std::collections::BTreeMap<u32, f64> = std::collections::BTreeMap::new();
        for &(t0, t1, w) in sp {
            let (k0, k1) = ((t0 / step_s).floor() as u32, (t1 / step_s).ceil() as u32);
            for k in k0..k1 {
                let (a, b) = (f64::from(k) * step_s, f64::from(k + 1) * step_s);
                let overlap = b.min(t1) - a.max(t0);
                if overlap > 0.0 {
                    *n.entry(k).or_default() += w * overlap / step_s;
                }
            }
        }
        let v = &mut per_link[l];
        for e in v.iter_mut() {
            e.2 = n.remove(&e.0).unwrap_or(0.0);
        }
        // Steps with flows on the link but no bytes (flows stalled at rate 0).
        v.extend(n.into_iter().map(|(k, c)| (k, 0.0, c)));
        v.sort_by_key(|e| e.0);
    }
    Ok(Background { step_s, per_link, flows: rows.len() as u64, bytes, cross_rack_bytes: cross, end_s, finish_s })
}
