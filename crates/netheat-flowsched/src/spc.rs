//! Baraat's Smart Priority Class (SPC) protocol at RTT granularity: a
//! round-based, event-driven simulator of the decentralized FIFO-LM
//! mechanism (Dogar et al., SIGCOMM 2014, §4.3, Algorithms 1 and 2).
//!
//! # What is modelled
//!
//! * **Rounds (§4.3.1).** Every RTT each active flow's sender sends a
//!   scheduling request (SRQ) carrying its task id and its *demand*; every
//!   switch port (link) on its path answers a *nominal rate* (NR) and an
//!   *actual rate* (AR). The sender transmits at the smallest AR over its
//!   path during the next RTT. A flow sends its first SRQ in the round in
//!   which it starts (its release, i.e. its task's arrival or the
//!   completion of the last flow feeding it, plus its sender's compute
//!   time), so its data flows from the next round on; it finishes within a
//!   round at its rate, and capacity freed within a round is reallocated
//!   at the next.
//! * **Sender, Algorithm 1.** The demand is the NIC rate, or less when
//!   little data is left (what is left over one RTT); when the smallest NR
//!   over the path is below the previous demand (the flow is held back
//!   somewhere), the next demand is at most that NR plus `delta`, so links
//!   where the flow is not the bottleneck keep only that much for it and
//!   hand the rest to lower classes (work conservation); once the
//!   bottleneck frees up, the NR equals the lowered demand and the next
//!   demand is the full rate again (§4.3.1).
//! * **Switch, Algorithm 2 (§4.3.2).** Each port keeps per task a flow
//!   count, the demands and bytes reserved, and one allocation counter per
//!   link (the sum of the ARs it has granted and not yet taken back). For a
//!   flow of class k: ClassAvlBW = C minus the demands of higher classes;
//!   if what the class's other flows leave exceeds the flow's demand, NR =
//!   its demand, else its max-min share of ClassAvlBW (see below); AR =
//!   min(NR, C - Allocation), where the allocation no longer counts the
//!   flow's own previous AR (step 1: the SRQ returns it).
//!   NR and AR are kept apart: a port answers its SRQs in priority order
//!   each round, so a new higher-priority flow sees the allocation still
//!   held by the lower-priority flows of the previous round and gets only
//!   what is unallocated (AR < NR); the lower-priority flows, answered
//!   after it, see its demand and lose their NR and AR in that same
//!   round; the higher-priority flow gets its full AR in its next SRQ. So
//!   preemption costs one RTT on top of the first SRQ's (the "1-2 RTTs" of
//!   §4.3.2), and a bottlenecked flow that lowered its demand gets its full
//!   rate two rounds after its bottleneck frees (NR = lowered demand, then
//!   the full demand).
//! * **Classifier (§4.3).** At each port a task's bytes reserved (the sum
//!   of the ARs that port granted its flows, times the RTT) are its size
//!   proxy; above the heavy threshold the task is heavy there, and a run of
//!   heavy tasks shares one class with the next task at the port (limited
//!   multiplexing). Task ids come from the load balancers' counters (§4.1)
//!   or from the caller ([`SpcOptions::ids`], e.g. a counter per client).
//! * **Classes (§5.3).** A class is a task by default; several consecutive
//!   tasks may share one ([`SpcOptions::class_size`], the paper's task
//!   aggregation), every flow may have its own ([`ClassUnit::Flow`], the
//!   per-flow serialization it compares with), and with every flow in one
//!   class the protocol is per-flow fair share at its rounds (the paper's
//!   optimized RCP baseline).
//!
//! # What is simplified
//!
//! * Fluid, loss-free transmission at the granted rates; no queues, so no
//!   reliability layer and no packet-level effects (§4.4).
//! * **Virtual capacity** (§4.3.2, after RCP [12] and D3 [25]), when
//!   [`SpcOptions::virtual_capacity`] is set: a port hands out its
//!   virtual capacity Cv instead of C in Algorithm 2 (ClassAvlBW and
//!   C - Allocation). Every round, before it answers, a port whose flows'
//!   rates or demands changed (or whose controller has not settled)
//!   measures its input y over the round (its flows' rates, and what flows
//!   that ended in it sent) and its queue at the round's end, a fluid queue
//!   that grows by (y - C) x RTT and never goes below zero, and steers Cv as
//!   [`VirtualCapacity`] says. A flow's last byte then waits what the queues
//!   of its path hold when it is sent (FIFO), so its completion, and the
//!   flows it releases, move by that wait; a port's input is its senders'
//!   rates (an upstream queue does not reshape it). Without it, AR never
//!   exceeds C - Allocation, so no queue forms, and the capacity left idle
//!   by `delta` headroom or by the rounds of preemption stays idle.
//!   Measured (see the tests): in Figure 15's trace it gives the lowest
//!   task what the blocked task's held deltas leave, at least C (1 - 1/128)
//!   against 0.96 C; after an idle round of preemption it over-hands by up
//!   to the demands' sum, a queue the next rounds drain. With RCP's gains at
//!   one update a round it can also settle into a cycle that does not end
//!   while the flows run: a task whose two flows share one link while one
//!   of them also crosses a link with a lower task cycled every 5 rounds
//!   (the lower task between 0 and 0.67 C), so it is off by default (no
//!   round of a cycle can be skipped; the paper-scale points of
//!   `baraat_bench` take 2-6 s with it against 0.5-5 s without).
//! * All SRQs of a round reach a port at once and are answered in priority
//!   order (task id, then flow); a real port sees them interleaved, so the
//!   one-RTT preemption lag here is the short end of the paper's 1-2 RTTs.
//!   The demands used for NR are those of the current round's SRQs.
//! * **Share within a class.** Algorithm 2's step 8 gives every flow of
//!   the class ClassAvlBW / NumFlows; §4.3 says flows of a class share
//!   "according to max-min fairness". We use the max-min water level of the
//!   class's demands, which equals step 8 when no flow of the class demands
//!   less than the equal share, but needs the class's individual demands
//!   rather than only their per-task sums. With the literal equal split,
//!   flows of a class held back elsewhere (demanding less) leave their
//!   unused share idle for everyone, and on small two-stage workloads SPC
//!   stayed about twice the idealized FIFO's mean even at 1 us rounds.
//! * A port drops a task's counters when it has no flow of it left (it
//!   cannot tell a finished task from an idle one), so a two-stage task's
//!   bytes reserved restart at a port its later stage uses again.
//! * Rates are exact floating-point numbers, not the 1-byte encoding of
//!   the header (§4.4); `delta` is a fraction of the sender's NIC rate
//!   (chosen 2%: the paper calls it "a small value" without a number).
//!
//! # Cost: rounds cost what changed
//!
//! A port's answers depend only on its flows' demands and classes and on
//! the allocations of the previous round; a sender's next demand and rate
//! only on its ports' answers and on what it has left. So a round
//! recomputes only ports whose SRQs changed (a flow started, completed or
//! changed its demand, a task turned heavy) or whose ARs changed in the
//! previous round (the allocation has not settled), and only senders whose
//! answers changed, that just changed their demand, or whose data left
//! starts to cap their demand. Bytes sent and bytes reserved are kept as
//! (value, rate, since) and settled when a rate changes; completions,
//! demand caps and heavy crossings are events on a calendar. Within a port
//! the pass stops once the classes left have no capacity and none of their
//! flows holds any rate. Rounds where nothing is recomputed are skipped at
//! once, so a run's cost follows its changes, not its simulated time
//! (the data-analytics point, tasks of up to terabytes over simulated
//! days, takes under a second). [`SpcOptions::skip_steady`] off recomputes
//! every busy port and every active sender each round instead (for
//! checks: the same outcome).
//! At the paper's scale (36,000 hosts, 10,000 tasks, 100 us rounds, one
//! shared core) a one-stage Bing-like point took 1.4-2.4 s (the former
//! recompute-every-link version: about 10 s) and the two-stage point
//! (30 mid-levels x 39 workers, 12 M flows) 187 s.
//!
//! # What the protocol costs against the idealized scheduler
//!
//! Counted in rounds: a flow's first SRQ (one round before it sends), the
//! partial round in which flows end (freed capacity waits for the next
//! round), the round in which the next task's flows probe at their lowered
//! demand (`delta`, Algorithm 1), one round of preemption lag, and `delta`
//! of headroom left idle on links where a flow is not the bottleneck. When
//! a link's work per task spans many rounds these are small: one-stage
//! Bing-like tasks (39 x 20 KB, 62 rounds alone) come out within 1% of the
//! idealized FIFO-LM at paper scale (mean and p99, three seeds); uniform
//! 2-50 KB flows (a task about 65 rounds, its flows ending at different
//! rounds) about 9% slower on average. When flows last about one round
//! they dominate: small two-stage tasks of 4 x 20 KB per mid-level on a
//! 40-host network come out more than twice as slow at 100 us rounds,
//! approaching the idealized times as rounds shrink (see the crate's
//! tests).

use crate::ideal::{assign_ids, TaskResult};
use crate::task::{check_tasks, Task};
use crate::FlowschedError;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// Options of an SPC run.
#[derive(Debug, Clone, PartialEq)]
pub struct SpcOptions {
    /// Round length (RTT), seconds.
    pub rtt_s: f64,
    /// Algorithm 1's `delta`: demand headroom above the smallest nominal
    /// rate, as a fraction of the flow's NIC (host-link) rate.
    pub delta_frac: f64,
    /// Heavy threshold on a task's bytes reserved at a port, bytes.
    pub threshold: f64,
    /// Load balancers issuing task ids.
    pub lbs: usize,
    /// Task ids given by the caller, one per task in input order (counters
    /// of its own, e.g. one per client); `None`: the `lbs` counters take
    /// the tasks in turn.
    pub ids: Option<Vec<u64>>,
    /// Per task in input order, the queue it waits in (`None`: none): the
    /// tasks of one queue run one at a time in input order, a task that
    /// arrives while another of its queue runs starting when that one ends
    /// (a client serving one request at a time, Baraat §5.1); its time
    /// still counts from its arrival. `None`: every task starts on arrival.
    pub queues: Option<Vec<Option<u64>>>,
    /// What the protocol gives a priority class: each task (Baraat), or
    /// each flow (per-flow serialization, §5.3's Figure 16 comparison).
    pub class_unit: ClassUnit,
    /// How many consecutive units (in FIFO order) share one class, >= 1:
    /// Baraat §5.3 maps several tiny tasks onto one task id to amortize the
    /// cost of switching between classes (Figure 14). A switch port sees
    /// the shared id only, so its counters (flows, bytes reserved, heavy)
    /// are per class. `u64::MAX`: every flow in one class, per-flow fair
    /// share at the protocol's rounds (the paper's FS baseline, an RCP
    /// whose sources learn their exact fair rate, §5.1 footnote 4).
    pub class_size: u64,
    /// Virtual capacity (§4.3.2): each port steers the capacity it hands
    /// out from its utilization and queue, as RCP steers its rate (see the
    /// module docs). `None`: every port hands out exactly its capacity.
    pub virtual_capacity: Option<VirtualCapacity>,
    /// Record every flow's actual rate each round (for small examples).
    pub trace: bool,
    /// Recompute only what changed (ports whose requests or allocations
    /// changed, senders whose answers changed) and skip rounds where
    /// nothing does. Off, every busy port and every active sender is
    /// recomputed every round (the same outcome; for checks).
    pub skip_steady: bool,
}

impl Default for SpcOptions {
    fn default() -> Self {
        Self {
            rtt_s: 100e-6,
            delta_frac: 0.02,
            threshold: f64::INFINITY,
            lbs: 1,
            ids: None,
            queues: None,
            class_unit: ClassUnit::Task,
            class_size: 1,
            virtual_capacity: None,
            trace: false,
            skip_steady: true,
        }
    }
}

/// The gains of a port's virtual-capacity controller (Baraat §4.3.2 adjusts
/// the capacity a port allocates "depending on link utilization and
/// queuing", after RCP [12] and D3 [25]). Every round a port with capacity
/// `C`, input rate `y` over the round and queue `q` (bits) at its end sets
/// its virtual capacity to `Cv + alpha (C - y) - beta q / RTT`, within
/// `[0, max(C, D)]` where `D` is the sum of its flows' demands (a port
/// offers no more than is asked). It holds `Cv` while the queue is empty and
/// `|C - y|` is at most `C / 128`, one unit of the SRQ header's rate
/// encoding at the link's rate (Baraat §4.4: 1 Gbps is 128 units).
///
/// Baraat gives no gains; these are RCP's, fixed before any run: its
/// authors' ns-2 router (`rcp.cc`, Zhang and Dukkipati) takes `alpha` and
/// `beta` from its scripts, which set 0.4 and 1, and RCP's update divides
/// both terms by the same control interval and RTT as here (one round).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VirtualCapacity {
    /// Gain on the rate mismatch `C - y`.
    pub alpha: f64,
    /// Gain on the queue drained per round.
    pub beta: f64,
}

impl Default for VirtualCapacity {
    fn default() -> Self {
        Self { alpha: 0.4, beta: 1.0 }
    }
}

/// The unit the SPC protocol gives a priority class ([`SpcOptions::class_unit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClassUnit {
    /// A task: its flows share their class max-min (Baraat's intra-task
    /// fair sharing, §3.3).
    #[default]
    Task,
    /// A flow: one flow at a time at a bottleneck, in (task id, flow)
    /// order (the per-flow serialization Baraat §5.3 compares against).
    Flow,
}

/// Output of an SPC run.
#[derive(Debug, Clone, Default)]
pub struct SpcResult {
    /// Per task outcome, in input order.
    pub tasks: Vec<TaskResult>,
    /// With `trace`: per round, (round end time, actual rate of every
    /// flow in global flow order for the next round, bits/s; 0 before start
    /// and after end).
    pub trace: Vec<(f64, Vec<f64>)>,
    /// Rounds simulated (the index of the last round plus one).
    pub rounds: u64,
    /// Of these, rounds in which no port and no sender was recomputed.
    pub skipped: u64,
    /// Port passes done (one port answering its SRQs of one round).
    pub link_passes: u64,
    /// Sender updates done (one sender reading its answers of one round).
    pub sender_updates: u64,
    /// With virtual capacity: controller updates done (one port, one
    /// round).
    pub vc_updates: u64,
    /// With virtual capacity: the largest queue any port held at the end
    /// of a round, bytes (a port's input may exceed its capacity while its
    /// virtual capacity is above it).
    pub max_queue_bytes: f64,
}

/// The per-link utilization windows a recorded run keeps
/// ([`run_spc_dag`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Windows {
    /// Window width, seconds.
    pub window_s: f64,
    /// Windows `0..max_windows` may be kept (a memory budget): a run whose
    /// bytes reach past them stops with [`FlowschedError::WindowsExceeded`].
    pub max_windows: u32,
}

/// Per-flow times and per-link bytes of a run of [`run_spc_dag`] (what a
/// scenario's `flows` and `links` tables need).
#[derive(Debug, Clone, Default)]
pub struct SpcRecord {
    /// Per flow, in global flow order (tasks in input order, each task's
    /// flows in order): when it started, i.e. sent its first SRQ (its
    /// release plus its `delay_s`); NaN if it never did.
    pub flow_start_s: Vec<f64>,
    /// Per flow: when its last byte was sent; NaN if never.
    pub flow_finish_s: Vec<f64>,
    /// Width of the windows of `link_bytes`, seconds (`None`: no windows
    /// kept).
    pub window_s: Option<f64>,
    /// Per task, when it began: its arrival, or with queues the end of the
    /// task it waited for.
    pub task_began_s: Vec<f64>,
    /// Per link, the bytes it carried in each window (`link_bytes[l][w]`:
    /// window `[w, w + 1) * window_s`; a link's vector ends with the last
    /// window it carried bytes in); empty without `window_s`. A flow's
    /// bytes at a rate held from one round to another are spread evenly
    /// over that time. Bytes count when sent, so with virtual capacity a
    /// window may hold more than the link carries while a queue builds.
    pub link_bytes: Vec<Vec<f64>>,
    /// Windows that may be kept.
    max_windows: u32,
    /// The first time past them that bytes reached, if any.
    overflow_s: Option<f64>,
}

impl SpcRecord {
    /// Adds `bytes` sent evenly over `[a, b)` seconds to every link of `path`.
    fn credit(&mut self, path: &[u32], bytes: f64, a: f64, b: f64) {
        let Some(w) = self.window_s else { return };
        if path.is_empty() || bytes <= 0.0 {
            return;
        }
        let first = (a / w).floor().max(0.0) as usize;
        let last = if b > a { ((b / w).ceil() as usize).max(first + 1) - 1 } else { first };
        if last >= self.max_windows as usize {
            self.overflow_s.get_or_insert(b);
            return;
        }
        for &l in path {
            let v = &mut self.link_bytes[l as usize];
            if v.len() <= last {
                v.resize(last + 1, 0.0);
            }
            if last == first {
                v[first] += bytes;
                continue;
            }
            for (k, x) in v.iter_mut().enumerate().take(last + 1).skip(first) {
                let lo = a.max(k as f64 * w);
                let hi = b.min((k + 1) as f64 * w);
                if hi > lo {
                    *x += bytes * (hi - lo) / (b - a);
                }
            }
        }
    }
}

/// A port's last answer to one flow (per flow and hop).
#[derive(Debug, Clone, Copy, Default)]
struct Answer {
    nr: f64,
    ar: f64,
}

/// An active flow at a port, sorted by (task id, flow): priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: u64,
    fi: u32,
    /// Index of the (flow, hop) answer.
    slot: u32,
}

/// A port's counters for one task (§4.3.2): flow count, bytes reserved
/// (kept as `base + rate_b · (rounds since)`) and the heavy flag; with
/// shared classes, the counters of a class.
#[derive(Debug, Clone, Copy)]
struct TaskCtr {
    key: u64,
    /// A class unit of the class (its key is `keys[unit]`).
    unit: u32,
    n: u32,
    heavy: bool,
    base: f64,
    /// Bytes reserved per round (sum of the ARs granted × RTT / 8).
    rate_b: f64,
    since: u64,
    /// Round of the pending heavy check (`u64::MAX`: none).
    ev_at: u64,
}

impl TaskCtr {
    /// Bytes reserved by the passes of rounds before `q`.
    fn reserved_before(&self, q: u64) -> f64 {
        self.base + self.rate_b * (q - self.since) as f64
    }

    /// The round before the first one whose reserved bytes exceed `thr`
    /// (checked one round early against rounding); `u64::MAX` if never.
    fn heavy_check_at(&self, thr: f64) -> u64 {
        if self.heavy || !thr.is_finite() || self.rate_b <= 0.0 {
            return u64::MAX;
        }
        self.since + ((thr - self.base) / self.rate_b).floor().max(0.0) as u64
    }
}

#[derive(Debug, Clone)]
struct FlowSt {
    task: u32,
    /// Its class unit: its task, or itself ([`ClassUnit`]).
    unit: u32,
    /// Bytes left at the start of round `since`.
    left: f64,
    since: u64,
    /// Actual rate (smallest AR over the path) from round `since` on.
    rate: f64,
    /// Demand of the current SRQ.
    demand: f64,
    active: bool,
    /// Queued for a sender update in the current round.
    mark: bool,
    /// Queued for a sender update in the next round.
    mark_next: bool,
    /// Round of the pending completion / demand-cap check (`u64::MAX`: none).
    ev_at: u64,
    /// Position in the active list.
    pos: u32,
    path_off: u32,
    path_len: u32,
}

const EV_FLOW: u8 = 0;
const EV_HEAVY: u8 = 1;

/// (round, kind, a, b): a completion / demand-cap check of flow `a`, or a
/// heavy check of task `b` at port `a`. Each flow and each port's task has
/// at most one live entry (its `ev_at`); others are stale and ignored.
type Event = Reverse<(u64, u8, u32, u32)>;

/// The max-min water level of a class's demands over `avl` (infinite if
/// all of them fit): Algorithm 2's ClassAvlBW / NumFlows when no flow of
/// the class demands less than that, else what the flows demanding less
/// leave, split equally over the others.
fn water_level(avl: f64, d_class: f64, class: &[Entry], flows: &[FlowSt], buf: &mut Vec<f64>) -> f64 {
    if d_class <= avl {
        return f64::INFINITY;
    }
    let n = class.len();
    let equal = avl / n as f64;
    if class.iter().all(|e| flows[e.fi as usize].demand >= equal) {
        return equal;
    }
    buf.clear();
    buf.extend(class.iter().map(|e| flows[e.fi as usize].demand));
    buf.sort_unstable_by(f64::total_cmp);
    let (mut rem, mut k) = (avl, n);
    for &d in buf.iter() {
        if d * k as f64 > rem {
            break;
        }
        rem -= d;
        k -= 1;
    }
    if k == 0 {
        f64::INFINITY
    } else {
        rem.max(0.0) / k as f64
    }
}

/// Events by round: a ring of one bucket per round for the next
/// [`Calendar::WINDOW`] rounds (most checks fall within a few rounds), and a
/// heap for the rest.
struct Calendar {
    buckets: Vec<Vec<(u8, u32, u32)>>,
    /// Events in the buckets.
    count: usize,
    far: BinaryHeap<Event>,
    /// The current round: buckets hold rounds `now..now + WINDOW`.
    now: u64,
}

impl Calendar {
    const WINDOW: u64 = 1024;

    fn new() -> Self {
        Self { buckets: vec![Vec::new(); Self::WINDOW as usize], count: 0, far: BinaryHeap::new(), now: 0 }
    }

    /// An event for round `r` (after the current one).
    fn push(&mut self, r: u64, kind: u8, a: u32, b: u32) {
        if r < self.now + Self::WINDOW {
            self.buckets[(r % Self::WINDOW) as usize].push((kind, a, b));
            self.count += 1;
        } else {
            self.far.push(Reverse((r, kind, a, b)));
        }
    }

    /// Moves to round `q` (no event is due in the rounds skipped) and
    /// hands its events to `out`.
    fn take(&mut self, q: u64, out: &mut Vec<(u8, u32, u32)>) {
        self.now = q;
        let b = &mut self.buckets[(q % Self::WINDOW) as usize];
        self.count -= b.len();
        out.append(b);
        while let Some(&Reverse((r, kind, a, bb))) = self.far.peek() {
            if r > q {
                break;
            }
            self.far.pop();
            out.push((kind, a, bb));
        }
    }

    /// The first round after `q` with an event (`u64::MAX`: none).
    fn next_after(&self, q: u64) -> u64 {
        let mut best = self.far.peek().map_or(u64::MAX, |e| e.0 .0);
        if self.count > 0 {
            for r in q + 1..q + Self::WINDOW {
                if !self.buckets[(r % Self::WINDOW) as usize].is_empty() {
                    best = best.min(r);
                    break;
                }
            }
        }
        best
    }
}

/// The round of the next check of a flow that has `left` bytes at the start
/// of round `since` and sends at `rate` with demand `demand` (one round early
/// against rounding): its completion, or the first round after which what it
/// has left is below a round of its demand; `u64::MAX` if neither comes (no
/// rate, or a rate so small, a rounding residue of the ports' sums, that the
/// round would not fit in a `u64`: the flow's next rate change schedules it
/// again).
fn check_round(since: u64, left: f64, rate: f64, demand: f64, rtt: f64) -> u64 {
    if rate <= 0.0 {
        return u64::MAX;
    }
    let b = rate * rtt / 8.0;
    // Completes in round since + n - 1.
    let n = ((left / b) - 1e-9).ceil().max(1.0);
    if n >= 1e18 {
        return u64::MAX;
    }
    let mut at = since.saturating_add((n as u64).saturating_sub(2));
    if demand > 0.0 {
        let k = ((left - demand * rtt / 8.0) / b).floor().max(0.0);
        if k.is_finite() && k + 1.0 < n {
            at = at.min(since.saturating_add((k as u64).saturating_sub(1)));
        }
    }
    at
}

/// Two rates (bits/s) equal up to float noise.
fn same(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

struct Sim<'a> {
    /// Per task, its arrival (seconds).
    arrivals: Vec<f64>,
    /// Per flow, its delay after its release (seconds); flows past its end
    /// start as they are released.
    delays: Vec<f64>,
    opts: &'a SpcOptions,
    rtt: f64,
    ids: Vec<u64>,
    /// Per class unit, its class key (the id a port sees).
    keys: Vec<u64>,
    links: Vec<u32>,
    flows: Vec<FlowSt>,
    answers: Vec<Answer>,
    task_flows: Vec<(u32, u32)>,
    /// Flows each flow releases (global indices): `succ[succ_off[f]..succ_off[f + 1]]`.
    succ_off: Vec<u32>,
    succ: Vec<u32>,
    pending: Vec<u32>,
    caps: &'a [f64],
    lflows: Vec<Vec<Entry>>,
    ltasks: Vec<Vec<TaskCtr>>,
    lalloc: Vec<f64>,
    lnonzero: Vec<u32>,
    /// Round a port is queued for (`u64::MAX`: none).
    lqueued: Vec<u64>,
    /// Virtual capacity (§4.3.2): per port, the capacity it hands out
    /// (bits/s), its queue (bytes, at the end of the last round it was
    /// updated), the summed rates of its flows in the current round and the
    /// rate-equivalent of what flows removed this round sent in it, and the
    /// summed demands of its flows.
    vcap: Vec<f64>,
    lq: Vec<f64>,
    ly: Vec<f64>,
    lpart: Vec<f64>,
    ld: Vec<f64>,
    /// Ports whose controller runs at the next virtual-capacity step, and
    /// per port whether it is in that list.
    vc_list: Vec<u32>,
    vc_in: Vec<bool>,
    dirty_now: Vec<u32>,
    dirty_next: Vec<u32>,
    evals_now: Vec<u32>,
    evals_next: Vec<u32>,
    active: Vec<u32>,
    events: Calendar,
    waiting: BinaryHeap<Reverse<(u64, u32)>>,
    /// Scratch: a class's demands.
    buf: Vec<f64>,
    left_flows: Vec<u32>,
    finish: Vec<f64>,
    remaining: usize,
    /// Flows finished so far (for the caller's progress).
    finished_flows: u64,
    /// Per queue: whether one of its tasks runs, the tasks waiting, and
    /// when its last task ended (a task arriving within the round in which
    /// that happened, but before it, still waits for it).
    queued: HashMap<u64, (bool, VecDeque<u32>, f64)>,
    res: SpcResult,
    /// Flow times and link bytes, when recorded.
    rec: Option<SpcRecord>,
}

/// Runs `tasks` with the SPC protocol over links of capacities `caps`.
pub fn run_spc(caps: &[f64], tasks: &[Task], opts: &SpcOptions) -> Result<SpcResult, FlowschedError> {
    check_tasks(tasks)?;
    let mut succ = Vec::new();
    let mut succ_off = vec![0u32];
    let mut first = 0u32;
    for t in tasks {
        for f in &t.flows {
            succ.extend(f.feeds.map(|k| first + k));
            succ_off.push(succ.len() as u32);
        }
        first += t.flows.len() as u32;
    }
    simulate(caps, tasks.iter(), tasks.len(), succ_off, succ, opts, None, &mut |_, _| true).map(|(r, _)| r)
}

/// The flows each flow of a run releases, one list per flow in task and
/// flow order, each entry the index of a later flow of the same task (in
/// compressed rows: one allocation for the run, not one per flow, so a run
/// of 57.6 million flows holds 4 B per release and per flow).
#[derive(Debug, Clone, PartialEq)]
pub struct Releases {
    off: Vec<u32>,
    next: Vec<u32>,
}

impl Releases {
    /// No flow yet.
    pub fn new() -> Self {
        Self { off: vec![0], next: Vec::new() }
    }

    /// The next flow's list: the indices, in its task, of the flows it
    /// releases.
    pub fn push(&mut self, feeds: impl IntoIterator<Item = u32>) {
        self.next.extend(feeds);
        self.off.push(self.next.len() as u32);
    }

    /// From one list per task and flow (`feeds[t][j]`).
    pub fn from_nested(feeds: &[Vec<Vec<u32>>]) -> Self {
        let mut r = Self::new();
        for t in feeds {
            for ks in t {
                r.push(ks.iter().copied());
            }
        }
        r
    }

    /// Flows listed.
    pub fn len(&self) -> usize {
        self.off.len() - 1
    }

    /// Whether no flow is listed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list of flow `i` (in run order).
    fn get(&self, i: usize) -> &[u32] {
        &self.next[self.off[i] as usize..self.off[i + 1] as usize]
    }
}

impl Default for Releases {
    fn default() -> Self {
        Self::new()
    }
}

/// [`run_spc`] for tasks whose flows form DAGs (a flow may release several
/// later flows), recording every flow's start and finish and, with
/// `windows`, every link's bytes per window (without it none are kept: a
/// run over simulated days in 1 s windows would hold a window per link and
/// second).
///
/// `feeds` lists, for every flow of every task in order, the flows of its
/// task it feeds (each a later flow of the task); it replaces the flows'
/// own `feeds`. A flow starts `delay_s` after the last flow feeding it
/// completes (or after its task's arrival if nothing feeds it). A flow of 0
/// bytes completes as it starts, sending nothing: with no links, it stands
/// for a pause (compute, disk) of `delay_s` between the flows feeding it and
/// those it feeds.
///
/// The tasks are taken by value: each is dropped once the simulator has
/// copied what it needs of it (its flows' paths go into one flat list), so
/// a run does not hold its flows twice.
///
/// `progress(done, total)` is called every round the simulator works
/// through, with the flows finished and the flows of the run; when it
/// returns `false` the run stops with [`FlowschedError::Interrupted`] (a
/// caller's Ctrl-C; a paper-scale run takes minutes).
pub fn run_spc_dag(
    caps: &[f64],
    tasks: Vec<Task>,
    feeds: &Releases,
    opts: &SpcOptions,
    windows: Option<Windows>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(SpcResult, SpcRecord), FlowschedError> {
    if windows.is_some_and(|w| !(w.window_s.is_finite() && w.window_s > 0.0)) {
        return Err(FlowschedError::param("window", "must be > 0"));
    }
    let n: usize = tasks.iter().map(|t| t.flows.len()).sum();
    if feeds.len() != n {
        return Err(FlowschedError::param("feeds", format!("{} lists for {n} flows", feeds.len())));
    }
    check_tasks(&tasks)?;
    let mut succ = Vec::with_capacity(feeds.next.len());
    let mut succ_off = Vec::with_capacity(n + 1);
    succ_off.push(0u32);
    let mut first = 0u32;
    for (ti, t) in tasks.iter().enumerate() {
        for j in 0..t.flows.len() {
            for &k in feeds.get(first as usize + j) {
                if k as usize <= j || k as usize >= t.flows.len() {
                    return Err(FlowschedError::param(
                        "feeds",
                        format!("task {ti}, flow {j}: feeds flow {k}, which is not a later flow of the task"),
                    ));
                }
                succ.push(first + k);
            }
            succ_off.push(succ.len() as u32);
        }
        first += t.flows.len() as u32;
    }
    let n_tasks = tasks.len();
    let rec = SpcRecord {
        flow_start_s: vec![f64::NAN; n],
        flow_finish_s: vec![f64::NAN; n],
        task_began_s: vec![f64::NAN; n_tasks],
        window_s: windows.map(|w| w.window_s),
        link_bytes: if windows.is_some() { vec![Vec::new(); caps.len()] } else { Vec::new() },
        max_windows: windows.map_or(u32::MAX, |w| w.max_windows),
        overflow_s: None,
    };
    let (res, rec) = simulate(caps, tasks.into_iter(), n_tasks, succ_off, succ, opts, Some(rec), progress)?;
    Ok((res, rec.unwrap_or_default()))
}

/// Runs the protocol over `tasks` (`n_tasks` of them, already checked),
/// taking from each what the rounds need and letting it go;
/// `succ_off` / `succ` are the flows each flow releases (global indices,
/// each later in its own task); `progress` as in [`run_spc_dag`].
#[allow(clippy::too_many_arguments)]
fn simulate<T: std::borrow::Borrow<Task>>(
    caps: &[f64],
    tasks: impl Iterator<Item = T>,
    n_tasks: usize,
    succ_off: Vec<u32>,
    succ: Vec<u32>,
    opts: &SpcOptions,
    rec: Option<SpcRecord>,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<(SpcResult, Option<SpcRecord>), FlowschedError> {
    if opts.rtt_s.is_nan() || opts.rtt_s <= 0.0 {
        return Err(FlowschedError::param("rtt", "must be > 0"));
    }
    if opts.delta_frac.is_nan() || opts.delta_frac < 0.0 {
        return Err(FlowschedError::param("delta", "must be >= 0"));
    }
    if opts.class_size == 0 {
        return Err(FlowschedError::param("class_size", "must be >= 1"));
    }
    if let Some(ids) = opts.ids.as_ref().filter(|ids| ids.len() != n_tasks) {
        return Err(FlowschedError::param("ids", format!("{} ids for {} tasks", ids.len(), n_tasks)));
    }
    if let Some(q) = opts.queues.as_ref().filter(|q| q.len() != n_tasks) {
        return Err(FlowschedError::param("queues", format!("{} queues for {} tasks", q.len(), n_tasks)));
    }
    let n_flows = succ_off.len().saturating_sub(1);
    let mut links: Vec<u32> = Vec::new();
    let mut flows: Vec<FlowSt> = Vec::with_capacity(n_flows);
    let mut delays: Vec<f64> = Vec::new();
    let mut task_flows: Vec<(u32, u32)> = Vec::with_capacity(n_tasks);
    let mut arrivals: Vec<f64> = Vec::with_capacity(n_tasks);
    let mut task_bytes: Vec<f64> = Vec::with_capacity(n_tasks);
    for (ti, t) in tasks.enumerate() {
        let t = t.borrow();
        let first = flows.len() as u32;
        for f in &t.flows {
            if let Some(&l) = f.path.iter().find(|&&l| l as usize >= caps.len()) {
                return Err(FlowschedError::param("path", format!("link {l} does not exist")));
            }
            let unit = match opts.class_unit {
                ClassUnit::Task => ti as u32,
                ClassUnit::Flow => flows.len() as u32,
            };
            flows.push(FlowSt {
                task: ti as u32,
                unit,
                left: f.bytes,
                since: 0,
                rate: 0.0,
                demand: 0.0,
                active: false,
                mark: false,
                mark_next: false,
                ev_at: u64::MAX,
                pos: 0,
                path_off: links.len() as u32,
                path_len: f.path.len() as u32,
            });
            if f.delay_s != 0.0 {
                // Most flows start as they are released: the list is
                // kept only once one does not.
                delays.resize(flows.len() - 1, 0.0);
                delays.push(f.delay_s);
            }
            links.extend_from_slice(&f.path);
        }
        task_flows.push((first, flows.len() as u32));
        arrivals.push(t.arrival_s);
        task_bytes.push(t.bytes);
    }
    links.shrink_to_fit();
    let n_links = caps.len();
    let mut pending = vec![0u32; flows.len()];
    for &k in &succ {
        pending[k as usize] += 1;
    }
    let ids = opts.ids.clone().unwrap_or_else(|| assign_ids(n_tasks, opts.lbs));
    let keys = class_keys(&ids, &task_flows, opts);
    let mut sim = Sim {
        arrivals,
        delays,
        opts,
        rtt: opts.rtt_s,
        ids,
        keys,
        answers: vec![Answer::default(); links.len()],
        links,
        flows,
        pending,
        succ_off,
        succ,
        left_flows: task_flows.iter().map(|&(a, b)| b - a).collect(),
        task_flows,
        caps,
        lflows: vec![Vec::new(); n_links],
        ltasks: vec![Vec::new(); n_links],
        lalloc: vec![0.0; n_links],
        lnonzero: vec![0; n_links],
        lqueued: vec![u64::MAX; n_links],
        vcap: caps.to_vec(),
        lq: vec![0.0; n_links],
        ly: vec![0.0; n_links],
        lpart: vec![0.0; n_links],
        ld: vec![0.0; n_links],
        vc_list: Vec::new(),
        vc_in: vec![false; n_links],
        dirty_now: Vec::new(),
        dirty_next: Vec::new(),
        evals_now: Vec::new(),
        evals_next: Vec::new(),
        active: Vec::new(),
        events: Calendar::new(),
        waiting: BinaryHeap::new(),
        buf: Vec::new(),
        finish: vec![f64::NAN; n_tasks],
        remaining: n_tasks,
        finished_flows: 0,
        queued: HashMap::new(),
        res: SpcResult::default(),
        rec,
    };
    sim.run(progress)?;
    let Sim { res: mut out, ids, finish, rec, arrivals, .. } = sim;
    out.tasks = (0..n_tasks)
        .map(|i| TaskResult { id: ids[i], bytes: task_bytes[i], start_s: arrivals[i], finish_s: finish[i] })
        .collect();
    Ok((out, rec))
}

/// Each class unit's key: its rank in FIFO order (tasks by id, a task's
/// flows in order) over `class_size` (so consecutive units share a class).
/// With one unit a task and classes of one, the task's id.
fn class_keys(ids: &[u64], task_flows: &[(u32, u32)], opts: &SpcOptions) -> Vec<u64> {
    let k = opts.class_size.max(1);
    if opts.class_unit == ClassUnit::Task && k == 1 {
        return ids.to_vec();
    }
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by_key(|&t| ids[t]);
    match opts.class_unit {
        ClassUnit::Task => {
            let mut keys = vec![0; ids.len()];
            for (rank, t) in order.into_iter().enumerate() {
                keys[t] = rank as u64 / k;
            }
            keys
        }
        ClassUnit::Flow => {
            let n = task_flows.last().map_or(0, |&(_, b)| b as usize);
            let mut keys = vec![0; n];
            let mut rank = 0u64;
            for t in order {
                let (a, b) = task_flows[t];
                for fi in a..b {
                    keys[fi as usize] = rank / k;
                    rank += 1;
                }
            }
            keys
        }
    }
}

impl Sim<'_> {
    fn run(&mut self, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<(), FlowschedError> {
        let total = self.flows.len() as u64;
        let rtt = self.rtt;
        let every = !self.opts.skip_steady || self.opts.trace;
        let mut next_task = 0usize;
        let mut q: u64 = 0;
        let mut checks: Vec<u32> = Vec::new();
        let mut heavies: Vec<(u32, u32, u64)> = Vec::new();
        let mut capchecks: Vec<u32> = Vec::new();
        let mut due: Vec<(u8, u32, u32)> = Vec::new();
        while self.remaining > 0 {
            if !progress(self.finished_flows, total) {
                return Err(FlowschedError::Interrupted);
            }
            let t0 = q as f64 * rtt;
            let t1 = t0 + rtt;
            checks.clear();
            heavies.clear();
            capchecks.clear();
            self.events.take(q, &mut due);
            // In a canonical order (the outcome must not depend on the
            // order in which checks were scheduled).
            due.sort_unstable();
            let r = q;
            for (kind, a, b) in due.drain(..) {
                if kind == EV_HEAVY {
                    heavies.push((a, b, r));
                } else if self.flows[a as usize].ev_at == r {
                    self.flows[a as usize].ev_at = u64::MAX;
                    checks.push(a);
                }
            }
            // 1. Transmission during [t0, t1): flows that finish, and flows
            //    whose data left now caps their demand.
            for &fi in &checks {
                self.check_flow(fi, q, t0, &mut capchecks);
            }
            // 2. Tasks arriving during [t0, t1) release the flows that
            //    nothing feeds; empty tasks finish on arrival.
            //    A task whose queue is busy waits for it.
            while next_task < self.arrivals.len() && self.arrivals[next_task] < t1 {
                let ti = next_task;
                next_task += 1;
                let mut at = self.arrivals[ti];
                if let Some(k) = self.queue_of(ti) {
                    let e = self.queued.entry(k).or_default();
                    if e.0 {
                        e.1.push_back(ti as u32);
                        continue;
                    }
                    e.0 = true;
                    at = at.max(e.2);
                }
                self.release(ti, at);
            }
            // Flows starting during [t0, t1) send their first SRQ now; an
            // empty one completes as it starts.
            while let Some(&Reverse((start, fi))) = self.waiting.peek() {
                if f64::from_bits(start) >= t1 {
                    break;
                }
                self.waiting.pop();
                let t = f64::from_bits(start);
                if let Some(rec) = self.rec.as_mut() {
                    rec.flow_start_s[fi as usize] = t;
                }
                if self.flows[fi as usize].left <= 0.0 {
                    self.flow_finished(fi, t);
                    continue;
                }
                self.start_flow(fi, q);
            }
            // 3. Tasks whose bytes reserved at a port crossed the threshold.
            for &(l, unit, r) in &heavies {
                self.check_heavy(l, unit, r, q);
            }
            if every {
                for l in 0..self.lflows.len() {
                    if !self.lflows[l].is_empty() {
                        self.dirty(l as u32, q);
                    }
                }
                for k in 0..self.active.len() {
                    let fi = self.active[k];
                    self.mark_now(fi);
                }
            }
            // 3b. Ports steer their virtual capacity from the round's input
            //     and queue (§4.3.2).
            if self.opts.virtual_capacity.is_some() {
                if every {
                    for l in 0..self.lflows.len() {
                        if !self.lflows[l].is_empty() {
                            self.vc_watch(l as u32);
                        }
                    }
                }
                self.steer(q);
            }
            // 4. Ports answer their SRQs (Algorithm 2).
            let dirty = std::mem::take(&mut self.dirty_now);
            for &l in &dirty {
                self.pass(l as usize, q);
            }
            self.res.link_passes += dirty.len() as u64;
            let passed = !dirty.is_empty();
            self.dirty_now = dirty;
            self.dirty_now.clear();
            // 5. Senders read their answers (Algorithm 1).
            for &fi in &capchecks {
                self.mark_now(fi);
            }
            let evals = std::mem::take(&mut self.evals_now);
            for &fi in &evals {
                self.flows[fi as usize].mark = false;
                self.sender(fi, q);
            }
            // A cap check that changed nothing looks again next round.
            for &fi in &capchecks {
                if self.flows[fi as usize].active {
                    self.schedule(fi, q + 1);
                }
            }
            let worked = passed || !evals.is_empty();
            self.res.sender_updates += evals.len() as u64;
            self.evals_now = evals;
            self.evals_now.clear();
            if !worked && !every {
                self.res.skipped += 1;
            }
            if self.opts.trace {
                let r: Vec<f64> = self.flows.iter().map(|f| if f.active { f.rate } else { 0.0 }).collect();
                self.res.trace.push((t1, r));
            }
            // Next round: the queued ports and senders move up.
            std::mem::swap(&mut self.dirty_now, &mut self.dirty_next);
            std::mem::swap(&mut self.evals_now, &mut self.evals_next);
            for &fi in &self.evals_now {
                let f = &mut self.flows[fi as usize];
                f.mark_next = false;
                f.mark = true;
            }
            let mut nq = q + 1;
            if !every
                && self.dirty_now.is_empty()
                && self.evals_now.is_empty()
                && self.vc_list.is_empty()
                && self.remaining > 0
            {
                // Nothing to recompute: jump to the next event, arrival or
                // start (one round early against rounding; that round
                // finds nothing to do).
                let mut target = self.events.next_after(q);
                let mut at = |t: f64| {
                    if t.is_finite() {
                        let r = ((t / rtt).floor() as u64).saturating_sub(1);
                        target = target.min(r);
                    }
                };
                at(self.arrivals.get(next_task).copied().unwrap_or(f64::INFINITY));
                at(self.waiting.peek().map_or(f64::INFINITY, |&Reverse((s, _))| f64::from_bits(s)));
                if target == u64::MAX {
                    // Nothing can change any more, yet tasks are left: a
                    // stall (a defect of the simulator), not a long run.
                    return Err(FlowschedError::param(
                        "tasks",
                        format!("the protocol stalled at round {q} with {} task(s) unfinished", self.remaining),
                    ));
                }
                if target > nq {
                    self.res.skipped += target - nq;
                    nq = target;
                }
            }
            if let Some(rec) = self.rec.as_ref() {
                if let (Some(t_s), Some(window_s)) = (rec.overflow_s, rec.window_s) {
                    return Err(FlowschedError::WindowsExceeded { t_s, window_s, max_windows: rec.max_windows });
                }
            }
            q = nq;
            // A guard against runs that never settle: rounds that did work,
            // not simulated time (terabyte tasks span billions of rounds,
            // almost all skipped).
            if q - self.res.skipped > 100_000_000 && self.remaining > 0 {
                return Err(FlowschedError::param("rtt", "run did work in more than 1e8 rounds"));
            }
        }
        self.res.rounds = q;
        Ok(())
    }

    fn dirty(&mut self, l: u32, q: u64) {
        if self.lqueued[l as usize] != q {
            self.lqueued[l as usize] = q;
            self.dirty_now.push(l);
        }
    }

    fn dirty_next(&mut self, l: u32, q: u64) {
        if self.lqueued[l as usize] != q + 1 {
            self.lqueued[l as usize] = q + 1;
            self.dirty_next.push(l);
        }
    }

    /// A flow of port `l` changed its rate by `dr` and its demand by `dd`
    /// (or left it, having sent `sent` bits/s over the round): the port's
    /// sums move and its controller runs at the next step (nothing without
    /// virtual capacity).
    fn vc_flow(&mut self, l: usize, dr: f64, dd: f64, sent: f64) {
        if self.opts.virtual_capacity.is_none() {
            return;
        }
        self.ly[l] += dr;
        self.ld[l] += dd;
        self.lpart[l] += sent;
        if self.lflows[l].is_empty() {
            // No drift from the sums' rounding once a port is idle.
            self.ly[l] = 0.0;
            self.ld[l] = 0.0;
        }
        self.vc_watch(l as u32);
    }

    /// Port `l`'s controller runs at the next virtual-capacity step.
    fn vc_watch(&mut self, l: u32) {
        if self.opts.virtual_capacity.is_some() && !self.vc_in[l as usize] {
            self.vc_in[l as usize] = true;
            self.vc_list.push(l);
        }
    }

    /// The virtual-capacity step of round `q` (§4.3.2, gains in
    /// [`VirtualCapacity`]): every watched port measures its input over the
    /// round and its queue at the round's end, and steers the capacity its
    /// pass of this round hands out. A port stays watched while its queue
    /// holds bytes or its virtual capacity moved; otherwise a change of its
    /// flows' rates or demands watches it again.
    fn steer(&mut self, q: u64) {
        let Some(vc) = self.opts.virtual_capacity else { return };
        let rtt = self.rtt;
        let mut list = std::mem::take(&mut self.vc_list);
        list.sort_unstable();
        for &l in &list {
            let l = l as usize;
            self.vc_in[l] = false;
            let c = self.caps[l];
            let y = (self.ly[l] + self.lpart[l]).max(0.0);
            self.lpart[l] = 0.0;
            let queue = (self.lq[l] + (y - c) * rtt / 8.0).max(0.0);
            // Queues below a byte are float noise of the rate sums.
            let queue = if queue < 1.0 { 0.0 } else { queue };
            self.lq[l] = queue;
            self.res.max_queue_bytes = self.res.max_queue_bytes.max(queue);
            let hi = c.max(self.ld[l].max(0.0));
            let old = self.vcap[l];
            let mut v = old;
            // Held within one encoding unit of C, unless the port hands
            // out less than C (a controller that undershot returns to C).
            if queue > 0.0 || (c - y).abs() > c / 128.0 || old < c {
                v += vc.alpha * (c - y) - vc.beta * queue * 8.0 / rtt;
            }
            let v = v.clamp(0.0, hi);
            self.res.vc_updates += 1;
            let moved = !same(v, old);
            if moved {
                self.vcap[l] = v;
                self.dirty(l as u32, q);
            }
            if moved || queue > 0.0 {
                self.vc_in[l] = true;
                self.vc_list.push(l as u32);
            }
        }
        list.clear();
        if self.vc_list.is_empty() {
            self.vc_list = list;
        }
    }

    fn mark_now(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        if !f.mark {
            f.mark = true;
            self.evals_now.push(fi);
        }
    }

    fn mark_next(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        if !f.mark_next {
            f.mark_next = true;
            self.evals_next.push(fi);
        }
    }

    /// Flow `fi`'s NIC rate: its first link's capacity (infinite without
    /// links).
    fn nic(&self, fi: u32) -> f64 {
        let f = &self.flows[fi as usize];
        if f.path_len == 0 {
            f64::INFINITY
        } else {
            self.caps[self.links[f.path_off as usize] as usize]
        }
    }

    /// Flow `fi` starts in round `q`: it joins its ports with its first SRQ.
    fn start_flow(&mut self, fi: u32, q: u64) {
        let rtt = self.rtt;
        let nic = self.nic(fi);
        let f = &mut self.flows[fi as usize];
        f.active = true;
        f.since = q;
        f.rate = 0.0;
        f.demand = nic.min(f.left * 8.0 / rtt);
        f.pos = self.active.len() as u32;
        self.active.push(fi);
        let (off, len, unit, demand) = (f.path_off, f.path_len, f.unit, f.demand);
        let key = self.keys[unit as usize];
        for h in 0..len {
            let slot = off + h;
            let l = self.links[slot as usize] as usize;
            self.answers[slot as usize] = Answer::default();
            let e = Entry { key, fi, slot };
            let lf = &mut self.lflows[l];
            let at = lf.partition_point(|x| *x < e);
            lf.insert(at, e);
            let lt = &mut self.ltasks[l];
            let at = lt.partition_point(|c| c.key < key);
            if at < lt.len() && lt[at].key == key {
                lt[at].n += 1;
            } else {
                lt.insert(
                    at,
                    TaskCtr { key, unit, n: 1, heavy: false, base: 0.0, rate_b: 0.0, since: q, ev_at: u64::MAX },
                );
            }
            self.vc_flow(l, 0.0, demand, 0.0);
            self.dirty(l as u32, q);
        }
        self.mark_now(fi);
    }

    /// Check of flow `fi` in round `q`: it completes during the round, or
    /// its data left caps its next demand (`capped`), or neither yet.
    fn check_flow(&mut self, fi: u32, q: u64, t0: f64, capped: &mut Vec<u32>) {
        let rtt = self.rtt;
        let f = &self.flows[fi as usize];
        if !f.active || f.rate <= 0.0 {
            return;
        }
        let b = f.rate * rtt / 8.0;
        // (A flow with no links has an infinite rate: nothing sent before.)
        let rem = if q > f.since { f.left - (q - f.since) as f64 * b } else { f.left };
        if b >= rem - 1e-9 * rem.max(1.0) {
            let t_end = t0 + rem.max(0.0) * 8.0 / f.rate;
            if let Some(rec) = self.rec.as_mut() {
                let path = &self.links[f.path_off as usize..(f.path_off + f.path_len) as usize];
                rec.credit(path, f.left, f.since as f64 * rtt, t_end);
            }
            let sent = rem.max(0.0) * 8.0 / rtt;
            // Its last byte leaves each port's queue after the bytes ahead
            // of it (virtual capacity lets a port's input exceed C for a
            // while, §4.3.2); without queues it arrives as it is sent.
            let wait: f64 = if self.opts.virtual_capacity.is_some() {
                let path = &self.links[f.path_off as usize..(f.path_off + f.path_len) as usize];
                path.iter().map(|&l| self.lq[l as usize] * 8.0 / self.caps[l as usize]).sum()
            } else {
                0.0
            };
            self.remove_flow(fi, q, sent);
            self.flow_finished(fi, t_end + wait);
            return;
        }
        if rem - b < f.demand * rtt / 8.0 {
            capped.push(fi);
            return;
        }
        let at = self.next_check(fi).max(q + 1);
        self.schedule(fi, at);
    }

    /// The round of flow `fi`'s next check (one round early against
    /// rounding): its completion, or the first round after which what it
    /// has left is below a round of its demand.
    fn next_check(&self, fi: u32) -> u64 {
        let f = &self.flows[fi as usize];
        check_round(f.since, f.left, f.rate, f.demand, self.rtt)
    }

    /// Flow `fi`'s check at round `at`, unless one is due earlier.
    fn schedule(&mut self, fi: u32, at: u64) {
        let f = &mut self.flows[fi as usize];
        if at < f.ev_at {
            f.ev_at = at;
            self.events.push(at, EV_FLOW, fi, 0);
        }
    }

    /// Flow `fi` leaves its ports (returning its allocation) in round `q`,
    /// having sent `sent` bits/s on average over the round.
    fn remove_flow(&mut self, fi: u32, q: u64, sent: f64) {
        let rtt = self.rtt;
        let f = &mut self.flows[fi as usize];
        let (rate, demand) = (f.rate, f.demand);
        f.active = false;
        f.rate = 0.0;
        f.left = 0.0;
        f.ev_at = u64::MAX;
        let (off, len, unit, pos) = (f.path_off, f.path_len, f.unit, f.pos as usize);
        self.active.swap_remove(pos);
        if pos < self.active.len() {
            let moved = self.active[pos];
            self.flows[moved as usize].pos = pos as u32;
        }
        let key = self.keys[unit as usize];
        for h in 0..len {
            let slot = off + h;
            let l = self.links[slot as usize] as usize;
            let a = self.answers[slot as usize];
            let e = Entry { key, fi, slot };
            let lf = &mut self.lflows[l];
            let at = lf.partition_point(|x| *x < e);
            lf.remove(at);
            self.vc_flow(l, -rate, -demand, sent);
            self.lalloc[l] = (self.lalloc[l] - a.ar).max(0.0);
            if a.nr > 0.0 || a.ar > 0.0 {
                self.lnonzero[l] -= 1;
            }
            let lt = &mut self.ltasks[l];
            let at = lt.partition_point(|c| c.key < key);
            let c = &mut lt[at];
            c.n -= 1;
            if c.n == 0 {
                lt.remove(at);
            } else if a.ar > 0.0 {
                c.base = c.reserved_before(q);
                c.since = q;
                c.rate_b = (c.rate_b - a.ar * rtt / 8.0).max(0.0);
            }
            self.dirty(l as u32, q);
        }
    }

    /// Flow `fi`'s delay after its release, seconds.
    fn delay(&self, fi: u32) -> f64 {
        self.delays.get(fi as usize).copied().unwrap_or(0.0)
    }

    /// Flow `fi` is done at `t`: its task's count, and the flows it feeds.
    fn flow_finished(&mut self, fi: u32, t: f64) {
        self.finished_flows += 1;
        let ti = self.flows[fi as usize].task as usize;
        if let Some(rec) = self.rec.as_mut() {
            rec.flow_finish_s[fi as usize] = t;
        }
        for s in self.succ_off[fi as usize]..self.succ_off[fi as usize + 1] {
            let kf = self.succ[s as usize];
            self.pending[kf as usize] -= 1;
            if self.pending[kf as usize] == 0 {
                let start = t + self.delay(kf);
                self.waiting.push(Reverse((start.to_bits(), kf)));
            }
        }
        self.left_flows[ti] -= 1;
        // Flows finish in round order, so the last one sets the time.
        self.finish[ti] = if self.finish[ti].is_nan() { t } else { self.finish[ti].max(t) };
        if self.left_flows[ti] == 0 {
            self.remaining -= 1;
            self.task_done(ti, t);
        }
    }

    /// The queue task `ti` waits in, if any.
    fn queue_of(&self, ti: usize) -> Option<u64> {
        self.opts.queues.as_ref().and_then(|q| q[ti])
    }

    /// Task `ti` begins at `t`: its flows that wait on nothing start after
    /// their delays; a task without flows ends at once.
    fn release(&mut self, ti: usize, t: f64) {
        if let Some(rec) = self.rec.as_mut() {
            rec.task_began_s[ti] = t;
        }
        let (a, b) = self.task_flows[ti];
        if a == b {
            self.finish[ti] = t;
            self.remaining -= 1;
            self.task_done(ti, t);
            return;
        }
        for fi in a..b {
            if self.pending[fi as usize] == 0 {
                let start = t + self.delay(fi);
                // Start times are >= 0, so their bit patterns sort as they do.
                self.waiting.push(Reverse((start.to_bits(), fi)));
            }
        }
    }

    /// Task `ti` ended at `t`: the next task of its queue begins.
    fn task_done(&mut self, ti: usize, t: f64) {
        let Some(k) = self.queue_of(ti) else { return };
        let next = self.queued.get_mut(&k).and_then(|e| {
            let n = e.1.pop_front();
            e.0 = n.is_some();
            e.2 = t;
            n
        });
        if let Some(n) = next {
            self.release(n as usize, t);
        }
    }

    /// Heavy check of the class of unit `unit` at port `l` (due in round
    /// `r`) in round `q`.
    fn check_heavy(&mut self, l: u32, unit: u32, r: u64, q: u64) {
        let key = self.keys[unit as usize];
        let thr = self.opts.threshold;
        let lt = &mut self.ltasks[l as usize];
        let at = lt.partition_point(|c| c.key < key);
        let Some(c) = lt.get_mut(at).filter(|c| c.key == key && c.ev_at == r && !c.heavy) else { return };
        c.ev_at = u64::MAX;
        if c.reserved_before(q) > thr {
            c.heavy = true;
            self.dirty(l, q);
        } else if c.rate_b > 0.0 {
            let next = c.heavy_check_at(thr).max(q + 1);
            c.ev_at = next;
            self.events.push(next, EV_HEAVY, l, unit);
        }
    }

    /// Port `l` answers the SRQs of round `q` in priority order
    /// (Algorithm 2).
    fn pass(&mut self, l: usize, q: u64) {
        let rtt = self.rtt;
        let thr = self.opts.threshold;
        // The capacity the port hands out: its virtual capacity (§4.3.2).
        let cap = self.vcap[l];
        let lf = &self.lflows[l];
        let lt = &mut self.ltasks[l];
        let flows = &mut self.flows;
        let answers = &mut self.answers;
        let total_prev = self.lalloc[l];
        let (mut prev_walked, mut new_walked) = (0.0f64, 0.0f64);
        let (mut nz_walked, mut nz_new) = (0u32, 0u32);
        let mut higher = 0.0f64;
        let mut ar_changed = false;
        let (mut ti, mut fpos) = (0usize, 0usize);
        let nt = lt.len();
        while ti < nt {
            let avl = (cap - higher).max(0.0);
            if avl <= 0.0 && nz_walked == self.lnonzero[l] {
                // The classes left get nothing, and none holds a rate.
                break;
            }
            // One class: a run of heavy tasks and the next task.
            let mut te = ti;
            let mut n = 0usize;
            loop {
                n += lt[te].n as usize;
                te += 1;
                if !(lt[te - 1].heavy && te < nt) {
                    break;
                }
            }
            let fend = fpos + n;
            let d_class: f64 = lf[fpos..fend].iter().map(|e| flows[e.fi as usize].demand).sum();
            let level = water_level(avl, d_class, &lf[fpos..fend], flows, &mut self.buf);
            let mut fk = fpos;
            for c in &mut lt[ti..te] {
                let mut sum_ar = 0.0;
                for e in &lf[fk..fk + c.n as usize] {
                    let f = &mut flows[e.fi as usize];
                    let d = f.demand;
                    // Steps 3-9: the flow's demand if it fits in what the
                    // class's other flows leave, else its max-min share.
                    let nr = d.min(level);
                    let old = answers[e.slot as usize];
                    // Steps 1, 10-14: the flow's previous allocation is
                    // returned; flows answered before it hold this round's
                    // ARs, those after it the previous round's.
                    let others = new_walked + (total_prev - prev_walked - old.ar).max(0.0);
                    let ar = nr.min((cap - others).max(0.0));
                    prev_walked += old.ar;
                    if old.nr > 0.0 || old.ar > 0.0 {
                        nz_walked += 1;
                    }
                    let nr = if same(nr, old.nr) { old.nr } else { nr };
                    let ar = if same(ar, old.ar) { old.ar } else { ar };
                    if nr != old.nr || ar != old.ar {
                        answers[e.slot as usize] = Answer { nr, ar };
                        ar_changed |= ar != old.ar;
                        if !f.mark {
                            f.mark = true;
                            self.evals_now.push(e.fi);
                        }
                    }
                    new_walked += ar;
                    if nr > 0.0 || ar > 0.0 {
                        nz_new += 1;
                    }
                    sum_ar += ar;
                }
                fk += c.n as usize;
                // Step 16: bytes reserved.
                let rb = sum_ar * rtt / 8.0;
                if !same(rb, c.rate_b) {
                    c.base = c.reserved_before(q);
                    c.since = q;
                    c.rate_b = rb;
                    let at = c.heavy_check_at(thr).max(q + 1);
                    if at < c.ev_at {
                        c.ev_at = at;
                        self.events.push(at, EV_HEAVY, l as u32, c.unit);
                    }
                }
            }
            higher += d_class;
            ti = te;
            fpos = fend;
        }
        self.lalloc[l] = new_walked + (total_prev - prev_walked).max(0.0);
        self.lnonzero[l] = nz_new + (self.lnonzero[l] - nz_walked);
        if ar_changed {
            // The allocation has not settled: answer again next round.
            self.dirty_next(l as u32, q);
        }
    }

    /// Sender of flow `fi` reads its answers of round `q` (Algorithm 1):
    /// its rate for round `q + 1` and its next demand.
    fn sender(&mut self, fi: u32, q: u64) {
        let rtt = self.rtt;
        let delta = self.opts.delta_frac;
        let nic = self.nic(fi);
        let f = &self.flows[fi as usize];
        if !f.active {
            return;
        }
        let (mut min_nr, mut min_ar) = (f64::INFINITY, f64::INFINITY);
        for s in f.path_off..f.path_off + f.path_len {
            let a = self.answers[s as usize];
            min_nr = min_nr.min(a.nr);
            min_ar = min_ar.min(a.ar);
        }
        let b = f.rate * rtt / 8.0;
        let left_after = if b > 0.0 { (f.left - (q + 1 - f.since) as f64 * b).max(0.0) } else { f.left };
        // Step 2: NIC rate, or what is left over one RTT.
        let full = nic.min(left_after * 8.0 / rtt);
        // Steps 3-5: held back somewhere: the smallest NR plus delta.
        let mut d = full;
        if min_nr < f.demand && !same(min_nr, f.demand) {
            d = d.min(min_nr + delta * nic);
        }
        let d = if same(d, f.demand) { f.demand } else { d };
        let rate = if same(min_ar, f.rate) { f.rate } else { min_ar };
        if d == f.demand && rate == f.rate {
            return;
        }
        if let Some(rec) = self.rec.as_mut() {
            let path = &self.links[f.path_off as usize..(f.path_off + f.path_len) as usize];
            rec.credit(path, f.left - left_after, f.since as f64 * rtt, (q + 1) as f64 * rtt);
        }
        let f = &mut self.flows[fi as usize];
        let (dr, dd) = (rate - f.rate, d - f.demand);
        f.left = left_after;
        f.since = q + 1;
        f.rate = rate;
        let demand_changed = d != f.demand;
        f.demand = d;
        let (off, len) = (f.path_off, f.path_len);
        for s in off..off + len {
            self.vc_flow(self.links[s as usize] as usize, dr, dd, 0.0);
        }
        let at = self.next_check(fi);
        if at != u64::MAX {
            self.schedule(fi, at);
        }
        if demand_changed {
            for s in off..off + len {
                let l = self.links[s as usize];
                self.dirty_next(l, q);
            }
            // A new demand may change the branch of step 3 even if the
            // answers do not: read them again next round.
            self.mark_next(fi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_round;

    /// 1 MB at 1 Gbps in 100 us rounds: 80 rounds of 12,500 B from round 10,
    /// so it completes in round 89 and is checked in round 88; with a demand
    /// of 1 Gbps its data left falls below a round of demand after round 88
    /// too. A rate that is a rounding residue (1e-300 bits/s) gets no check
    /// rather than a round that wraps around to the past (it used to be
    /// scheduled before the current round and lost, so the flow stalled).
    #[test]
    fn a_check_round_is_the_completion_and_never_wraps() {
        assert_eq!(check_round(10, 1e6, 1e9, 0.0, 100e-6), 88);
        assert_eq!(check_round(10, 1e6, 1e9, 1e9, 100e-6), 88);
        assert_eq!(check_round(10, 1e6, 0.0, 1e9, 100e-6), u64::MAX);
        assert_eq!(check_round(10, 1e6, 1e-300, 1e9, 100e-6), u64::MAX);
        assert_eq!(check_round(u64::MAX - 5, 1e6, 1e9, 0.0, 100e-6), u64::MAX);
    }
}
