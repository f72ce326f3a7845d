//! Baraat's Smart Priority Class (SPC) protocol at RTT granularity: a small
//! round-based simulator of the decentralized FIFO-LM mechanism.
//!
//! Every round (one RTT) each active flow's sender sends a request carrying
//! its task id, its task's heavy flag and its demand. Each switch port keeps
//! only per-task counters (demand, flow count) and one allocation counter
//! per link. It serves the tasks it sees in task-id order, grouping a heavy
//! task with the next task it sees (limited multiplexing; several heavy tasks
//! in a row join the first light one): a class gets what the classes before
//! it left (capacity minus the allocation counter), split max-min among the
//! class's flows by their demands. That is the flow's *nominal* rate at the
//! link; the response carries the minimum over the path, the *actual* rate,
//! which the sender uses during the next RTT.
//!
//! A switch also answers what it *offers* the flow (its class's water
//! level, not capped by the flow's own demand). Work conservation: a sender
//! bottlenecked elsewhere (its links' offers differ) sets its next demand to
//! the smallest offer plus `delta` (capped by its line rate and what it has
//! left), so its other links keep only that much for it and hand the rest
//! to lower-priority tasks one RTT later; when its bottleneck frees up, the
//! offers become equal and it asks for its full rate again. Preemption: a higher-priority task's request is counted
//! in the round it is sent, so lower-priority flows get the reduced rate in
//! the response of that round and give way within one to two RTTs.
//!
//! A task's heavy flag is set once its bytes sent so far exceed the
//! threshold (known to its senders at the start of a round). A flow sends
//! its first request in the round in which it starts (its release, i.e.
//! its task's arrival or the completion of the last flow feeding it, plus
//! its sender's compute time), sends one RTT later, and finishes within a
//! round at their rate; freed capacity is reallocated at the next round.
//!
//! A round whose requests equal the previous round's gets the same answers,
//! and so do the rounds after it until a flow starts or completes, a task
//! turns heavy or a demand drops to what its flow has left: such steady
//! stretches are done at once ([`SpcOptions::skip_steady`]; the outcome is
//! the same up to float rounding). Small or lightly loaded networks have
//! long ones; at 36,000 hosts some flow somewhere changes nearly every
//! round, so a run there costs about one pass over the active flows and
//! their links per round.
//!
//! What the protocol costs against the idealized scheduler: capacity freed
//! within a round waits for the next one, and a sender bottlenecked
//! elsewhere keeps `delta` of headroom on its other links. Both are small
//! when a link's work per task spans many rounds (one-stage tasks of 40
//! flows: within 1% at paper scale), but not when flows last about one
//! round: two-stage tasks of 4 x 20 KB per mid-level on a 40-host network
//! come out about 1.45x slower on average at 100 us rounds, and within 1%
//! at 1 us rounds without headroom (see the crate's tests).

use crate::ideal::{assign_ids, TaskResult};
use crate::workload::{check_tasks, feeder_counts, Task};
use crate::FlowschedError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Options of an SPC run.
#[derive(Debug, Clone, PartialEq)]
pub struct SpcOptions {
    /// Round length (RTT), seconds.
    pub rtt_s: f64,
    /// Demand headroom above the actual rate, as a fraction of the flow's
    /// host-link capacity.
    pub delta_frac: f64,
    /// Heavy threshold, bytes.
    pub threshold: f64,
    /// Load balancers issuing task ids.
    pub lbs: usize,
    /// Record every flow's actual rate each round (for small examples).
    pub trace: bool,
    /// Do steady rounds (the same requests as the round before, so the same
    /// answers) at once, up to the next start, completion, heavy crossing
    /// or demand change. Off, every round is computed (the same outcome up
    /// to float rounding; for checks). Ignored with `trace`.
    pub skip_steady: bool,
}

impl Default for SpcOptions {
    fn default() -> Self {
        Self { rtt_s: 100e-6, delta_frac: 0.02, threshold: f64::INFINITY, lbs: 1, trace: false, skip_steady: true }
    }
}

/// Output of an SPC run.
#[derive(Debug, Clone, Default)]
pub struct SpcResult {
    /// Per task outcome, in input order.
    pub tasks: Vec<TaskResult>,
    /// With `trace`: per round, (round start time, actual rate of every
    /// flow in global flow order, bits/s; 0 before start and after end).
    pub trace: Vec<(f64, Vec<f64>)>,
    /// Rounds simulated.
    pub rounds: u64,
    /// Of these, steady rounds done at once (identical requests and answers;
    /// never with `trace`).
    pub skipped: u64,
}

/// A flow's request and what its links answer this round, kept apart from
/// [`FlowSt`] in one small record so that a link's pass touches one cache
/// line per flow.
#[derive(Debug, Clone, Copy)]
struct Req {
    demand: f64,
    nominal_min: f64,
    offered_min: f64,
    offered_max: f64,
}

/// An active flow in a link's list, sorted by (task id, flow); the task's
/// index rides along so that its heavy flag is found without the flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: u64,
    fi: u32,
    ti: u32,
}

#[derive(Debug, Clone)]
struct FlowSt {
    task: u32,
    left: f64,
    nic: f64,
    /// Actual rate granted by the last response (used during this round).
    rate: f64,
    active: bool,
    path_off: u32,
    path_len: u32,
}

/// Runs `tasks` with the SPC protocol over links of capacities `caps`.
pub fn run_spc(caps: &[f64], tasks: &[Task], opts: &SpcOptions) -> Result<SpcResult, FlowschedError> {
    if opts.rtt_s.is_nan() || opts.rtt_s <= 0.0 {
        return Err(FlowschedError::param("rtt", "must be > 0"));
    }
    if opts.delta_frac.is_nan() || opts.delta_frac < 0.0 {
        return Err(FlowschedError::param("delta", "must be >= 0"));
    }
    check_tasks(tasks)?;
    let ids = assign_ids(tasks.len(), opts.lbs);
    let mut links: Vec<u32> = Vec::new();
    let mut flows: Vec<FlowSt> = Vec::new();
    let mut req: Vec<Req> = Vec::new();
    let mut task_flows: Vec<(u32, u32)> = Vec::with_capacity(tasks.len());
    for (ti, t) in tasks.iter().enumerate() {
        let first = flows.len() as u32;
        for f in &t.flows {
            if let Some(&l) = f.path.iter().find(|&&l| l as usize >= caps.len()) {
                return Err(FlowschedError::param("path", format!("link {l} does not exist")));
            }
            let nic = f.path.first().map_or(f64::INFINITY, |&l| caps[l as usize]);
            flows.push(FlowSt {
                task: ti as u32,
                left: f.bytes,
                nic,
                rate: 0.0,
                active: false,
                path_off: links.len() as u32,
                path_len: f.path.len() as u32,
            });
            links.extend_from_slice(&f.path);
            req.push(Req { demand: nic, nominal_min: 0.0, offered_min: 0.0, offered_max: 0.0 });
        }
        task_flows.push((first, flows.len() as u32));
    }
    // Per flow: feeders not yet completed.
    let mut pending: Vec<u32> = tasks.iter().flat_map(feeder_counts).collect();
    let n_tasks = tasks.len();
    let mut sent = vec![0.0f64; n_tasks];
    let mut left_flows: Vec<u32> = task_flows.iter().map(|&(a, b)| b - a).collect();
    let mut finish = vec![f64::NAN; n_tasks];
    let mut heavy = vec![false; n_tasks];
    // Arrival order (input is sorted by arrival).
    let mut next_task = 0usize;
    let mut active: Vec<u32> = Vec::new();
    // Flows of arrived tasks not started yet: earliest start first.
    let mut waiting: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut remaining = n_tasks;
    // Per link: its active flows as (task id, flow), sorted; links with flows.
    let mut link_flows: Vec<Vec<Entry>> = vec![Vec::new(); caps.len()];
    // Links with flows, as a bit set: walked in link order, so the pass
    // over them reads the per-link lists' headers front to back.
    let mut busy: Vec<u64> = vec![0; caps.len().div_ceil(64)];
    let mut class_buf: Vec<(f64, u32)> = Vec::new();
    let mut res = SpcResult::default();
    let mut round: u64 = 0;
    let rtt = opts.rtt_s;
    // Per task: bytes per round while skipping steady rounds.
    let mut task_rate = vec![0.0f64; n_tasks];
    let mut rated = vec![false; n_tasks];
    let mut rated_tasks: Vec<u32> = Vec::new();
    while remaining > 0 {
        let t0 = round as f64 * rtt;
        let t1 = t0 + rtt;
        // 1. Transmit during [t0, t1) at the rates of the last response.
        let mut k = 0;
        while k < active.len() {
            let fi = active[k] as usize;
            let f = &mut flows[fi];
            let ti = f.task as usize;
            let bytes = f.rate * rtt / 8.0;
            if f.rate > 0.0 && bytes >= f.left - 1e-9 * f.left.max(1.0) {
                let t_end = t0 + f.left * 8.0 / f.rate;
                sent[ti] += f.left;
                f.left = 0.0;
                f.active = false;
                f.rate = 0.0;
                let key = Entry { key: ids[ti], fi: fi as u32, ti: ti as u32 };
                for h in 0..f.path_len {
                    let l = links[(f.path_off + h) as usize] as usize;
                    let lf = &mut link_flows[l];
                    let at = lf.partition_point(|x| *x < key);
                    lf.remove(at);
                    if lf.is_empty() {
                        busy[l / 64] &= !(1u64 << (l % 64));
                    }
                }
                active.swap_remove(k);
                flow_done(fi as u32, t_end, tasks, &task_flows, &flows, &mut pending, &mut waiting);
                left_flows[ti] -= 1;
                // Flows finish in round order, so the last one sets the time.
                finish[ti] = if finish[ti].is_nan() { t_end } else { finish[ti].max(t_end) };
                if left_flows[ti] == 0 {
                    remaining -= 1;
                }
                continue;
            }
            f.left -= bytes;
            sent[ti] += bytes;
            k += 1;
        }
        // 2. Tasks arriving during [t0, t1) release the flows that nothing
        //    feeds. Empty tasks finish on arrival.
        while next_task < n_tasks && tasks[next_task].arrival_s < t1 {
            let (a, b) = task_flows[next_task];
            if a == b {
                finish[next_task] = tasks[next_task].arrival_s;
                remaining -= 1;
            }
            for fi in a..b {
                if pending[fi as usize] == 0 {
                    let start = tasks[next_task].arrival_s + tasks[next_task].flows[(fi - a) as usize].delay_s;
                    // Start times are >= 0, so their bit patterns sort as they do.
                    waiting.push(Reverse((start.to_bits(), fi)));
                }
            }
            next_task += 1;
        }
        // Flows starting during [t0, t1) send their first request now; an
        // empty one completes as it starts.
        while let Some(&Reverse((start, fi))) = waiting.peek() {
            if f64::from_bits(start) >= t1 {
                break;
            }
            waiting.pop();
            if flows[fi as usize].left <= 0.0 {
                let (t, ti) = (f64::from_bits(start), flows[fi as usize].task as usize);
                flow_done(fi, t, tasks, &task_flows, &flows, &mut pending, &mut waiting);
                left_flows[ti] -= 1;
                finish[ti] = if finish[ti].is_nan() { t } else { finish[ti].max(t) };
                if left_flows[ti] == 0 {
                    remaining -= 1;
                }
                continue;
            }
            let f = &mut flows[fi as usize];
            f.active = true;
            active.push(fi);
            let key = Entry { key: ids[f.task as usize], fi, ti: f.task };
            for h in 0..f.path_len {
                let l = links[(f.path_off + h) as usize] as usize;
                let lf = &mut link_flows[l];
                if lf.is_empty() {
                    busy[l / 64] |= 1u64 << (l % 64);
                }
                let at = lf.partition_point(|x| *x < key);
                lf.insert(at, key);
            }
        }
        for &fi in &active {
            let ti = flows[fi as usize].task as usize;
            if sent[ti] > opts.threshold {
                heavy[ti] = true;
            }
        }
        // 3. Requests: every link serves its flows (kept sorted by task id)
        //    class by class.
        for &fi in &active {
            let f = &flows[fi as usize];
            let full = f.nic.min(f.left * 8.0 / rtt);
            let r = &mut req[fi as usize];
            r.demand = r.demand.min(full);
            r.nominal_min = f64::INFINITY;
            r.offered_min = f64::INFINITY;
            r.offered_max = 0.0;
        }
        for l in busy.iter().enumerate().flat_map(|(w, &bits)| set_bits(w, bits)) {
            let lf = &link_flows[l];
            let mut alloc = 0.0; // the allocation counter
            let cap = caps[l];
            let j = lf.len();
            let mut s = 0;
            while s < j {
                // One class: a run of heavy tasks plus the next task.
                let mut e = s;
                loop {
                    let tid = lf[e].key;
                    while e < j && lf[e].key == tid {
                        e += 1;
                    }
                    if !(heavy[lf[e - 1].ti as usize] && e < j) {
                        break;
                    }
                }
                let mut avail = (cap - alloc).max(0.0);
                if e == s + 1 {
                    let r = &mut req[lf[s].fi as usize];
                    let g = r.demand.min(avail);
                    alloc += g;
                    r.nominal_min = r.nominal_min.min(g);
                    r.offered_min = r.offered_min.min(avail);
                    r.offered_max = r.offered_max.max(avail);
                } else {
                    class_buf.clear();
                    for en in &lf[s..e] {
                        class_buf.push((req[en.fi as usize].demand, en.fi));
                    }
                    class_buf.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    let mut n = class_buf.len();
                    // Once a demand reaches the equal share of what is
                    // left, that share is the water level for the rest.
                    let mut level = f64::NAN;
                    for &(d, fi) in &class_buf {
                        let share = if level.is_nan() { avail / n as f64 } else { level };
                        if d >= share {
                            level = share;
                        }
                        let g = d.min(share);
                        avail -= g;
                        alloc += g;
                        n -= 1;
                        let r = &mut req[fi as usize];
                        r.nominal_min = r.nominal_min.min(g);
                        r.offered_min = r.offered_min.min(share);
                        r.offered_max = r.offered_max.max(share);
                    }
                }
                s = e;
            }
        }
        // 4. Responses: actual rate = min nominal; demand update.
        let mut stable = true;
        for &fi in &active {
            let f = &mut flows[fi as usize];
            let r = &mut req[fi as usize];
            let actual = r.nominal_min.min(r.demand);
            let full = f.nic.min(f.left * 8.0 / rtt);
            // Ask for what the tightest link offers plus headroom: links
            // where the flow is not the bottleneck then keep only that much
            // for it (and hand the rest to lower classes), and the flow
            // reaches a freed bottleneck's full offer one RTT later.
            let (lo, hi) = (r.offered_min, r.offered_max);
            let elsewhere = hi > lo * (1.0 + 1e-9) + 1e-9;
            let demand = if elsewhere { (lo + opts.delta_frac * f.nic).min(full) } else { full };
            stable &= demand == r.demand;
            r.demand = demand;
            f.rate = actual;
        }
        if opts.trace {
            res.trace.push((t1, flows.iter().map(|f| if f.active { f.rate } else { 0.0 }).collect()));
        }
        round += 1;
        // Steady state: the next round sees the same requests (demands,
        // flows, heavy flags) as this one, so it answers the same, and so
        // do the rounds after it until a flow starts or completes, a task
        // turns heavy or a demand drops to what a flow has left. Those
        // rounds only transmit: do them at once.
        if stable && opts.skip_steady && !opts.trace {
            let next_start = waiting.peek().map_or(f64::INFINITY, |&Reverse((s, _))| f64::from_bits(s));
            let next_arrival = tasks.get(next_task).map_or(f64::INFINITY, |t| t.arrival_s);
            // Rounds `round + j` (j < k) end before any start (with a
            // round of margin against rounding of `round · rtt`).
            let mut k = (next_start.min(next_arrival) / rtt).floor() - round as f64 - 2.0;
            for &fi in &active {
                let f = &flows[fi as usize];
                let b = f.rate * rtt / 8.0;
                if b > 0.0 {
                    // What is left stays above a round's worth of the
                    // demand (which is at least the rate): the demand is
                    // not capped by it, and no flow completes.
                    k = k.min(((f.left - req[fi as usize].demand * rtt / 8.0) / b).floor() - 2.0);
                    let ti = f.task as usize;
                    if !heavy[ti] {
                        task_rate[ti] += b;
                        if !rated[ti] {
                            rated[ti] = true;
                            rated_tasks.push(ti as u32);
                        }
                    }
                }
            }
            for ti in rated_tasks.drain(..) {
                let ti = ti as usize;
                k = k.min(((opts.threshold - sent[ti]) / task_rate[ti]).floor() - 2.0);
                task_rate[ti] = 0.0;
                rated[ti] = false;
            }
            // (Nothing left to wait for gives no finite horizon.)
            if k.is_finite() && k >= 1.0 {
                let k = k as u64;
                for &fi in &active {
                    let f = &mut flows[fi as usize];
                    let bytes = k as f64 * (f.rate * rtt / 8.0);
                    f.left -= bytes;
                    sent[f.task as usize] += bytes;
                }
                round += k;
                res.skipped += k;
            }
        }
        if round > 100_000_000 {
            return Err(FlowschedError::param("rtt", "run exceeded 1e8 rounds"));
        }
    }
    res.rounds = round;
    res.tasks = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskResult { id: ids[i], bytes: t.bytes, start_s: t.arrival_s, finish_s: finish[i] })
        .collect();
    Ok(res)
}

/// The indices of the bits set in word `w` of a bit set.
fn set_bits(w: usize, mut bits: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            w * 64 + b
        })
    })
}

/// Flow `fi` completed at `t`: the flow it feeds is released once all its
/// feeders are done, and starts after its sender's compute time.
fn flow_done(
    fi: u32,
    t: f64,
    tasks: &[Task],
    task_flows: &[(u32, u32)],
    flows: &[FlowSt],
    pending: &mut [u32],
    waiting: &mut BinaryHeap<Reverse<(u64, u32)>>,
) {
    let ti = flows[fi as usize].task as usize;
    let first = task_flows[ti].0;
    let Some(k) = tasks[ti].flows[(fi - first) as usize].feeds else { return };
    let kf = first + k;
    pending[kf as usize] -= 1;
    if pending[kf as usize] == 0 {
        let start = t + tasks[ti].flows[k as usize].delay_s;
        waiting.push(Reverse((start.to_bits(), kf)));
    }
}
