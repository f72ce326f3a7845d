//! Flow-scheduling policies: each maps tasks (and their flows) to the
//! engine's strict priority classes (lower value served first) and tells
//! the caller which tasks change class as the run goes on.
//!
//! * `fair-share`: every flow in class 0 (per-flow max-min);
//! * `sff`: shortest flow first, class from the flow size;
//! * `stf`: shortest task first, class from the (known) task size;
//! * `fifo`: task serialisation in task-id (arrival) order;
//! * `fifo-lm`: Baraat's FIFO with limited multiplexing: task-id order,
//!   and a task whose bytes so far exceed a threshold is *heavy* and shares
//!   its class with the task after it at the same receiver (a run of
//!   consecutive heavy tasks and the first light task after them form one
//!   class).
//!
//! Sizes are bucketed for `sff`/`stf` on a 1% geometric grid so that the
//! number of classes stays small (tasks within 1% of each other share).

use crate::FlowschedError;
use netheat_core::{stats, HostId};
use std::collections::BTreeMap;

/// Tasks ids at or above this value are background tasks: they are served
/// after every foreground task and share one class.
pub const BACKGROUND_BASE: u64 = 1 << 40;
/// The class of background tasks.
pub const BACKGROUND_CLASS: i32 = i32::MAX;

/// What a policy may know about a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskMeta {
    /// Scheduler task id (from a [`TaskIdAllocator`]): the FIFO order.
    pub id: u64,
    /// Total task size in bytes (only `stf` uses it).
    pub bytes: f64,
}

/// A class change: task id, domain (the receiver host whose flows of the
/// task change) and the new class.
pub type ClassChange = (u64, HostId, i32);

/// A flow-scheduling policy.
pub trait FlowScheduler: Send {
    /// The registry tag.
    fn tag(&self) -> &'static str;
    /// A task arrives; `domains` are the receivers of its flows. Class
    /// changes of *other* tasks go to `changes`.
    fn task_arrived(&mut self, task: &TaskMeta, domains: &[HostId], changes: &mut Vec<ClassChange>);
    /// Class of one flow (to receiver `domain`) of an arrived task.
    fn flow_class(&self, task: &TaskMeta, domain: HostId, flow_bytes: f64) -> i32;
    /// Every flow of the task completed.
    fn task_completed(&mut self, task_id: u64, changes: &mut Vec<ClassChange>) {
        let _ = (task_id, changes);
    }
    /// Bytes above which a task turns heavy (`fifo-lm` only).
    fn heavy_threshold(&self) -> Option<f64> {
        None
    }
    /// Whether the classes of a task's flows can change after they start
    /// (the policy ever pushes a [`ClassChange`]); when not, a runner need
    /// not keep track of each task's running flows.
    fn reclassifies(&self) -> bool {
        false
    }
    /// The task's bytes sent so far; may mark it heavy.
    fn task_progress(&mut self, task_id: u64, bytes_so_far: f64, changes: &mut Vec<ClassChange>) {
        let _ = (task_id, bytes_so_far, changes);
    }
}

netheat_core::registry! {
    /// Known policy tags.
    pub const POLICIES;
    /// The scheduler of a tag (`None`: unknown). `heavy_threshold` is used by
    /// `fifo-lm` only.
    fn build(heavy_threshold: f64) -> Box<dyn FlowScheduler> {
        "fair-share" => Box::new(FairShare),
        "sff" => Box::new(Sff),
        "stf" => Box::new(Stf),
        "fifo" => Box::new(Fifo),
        "fifo-lm" => Box::new(FifoLm::new(heavy_threshold)),
    }
}

/// The policy behind a tag. `heavy_threshold` is used by `fifo-lm` only.
pub fn policy_by_tag(tag: &str, heavy_threshold: f64) -> Result<Box<dyn FlowScheduler>, FlowschedError> {
    build(tag, heavy_threshold)
        .ok_or_else(|| FlowschedError::UnknownPolicy { tag: tag.to_string(), known: POLICIES.join(", ") })
}

/// Class of a size on a 1% geometric grid (0 for sizes up to 1 byte).
pub fn size_class(bytes: f64) -> i32 {
    if bytes <= 1.0 {
        0
    } else {
        (bytes.ln() / 1.01f64.ln()).floor().min(f64::from(i32::MAX - 1)) as i32 + 1
    }
}

/// FIFO class of a task id: its id, background ids last.
pub fn id_class(id: u64) -> i32 {
    if id >= BACKGROUND_BASE {
        BACKGROUND_CLASS
    } else {
        id.min((i32::MAX - 1) as u64) as i32
    }
}

/// Per-flow max-min: one class.
#[derive(Debug, Clone, Copy, Default)]
pub struct FairShare;
impl FlowScheduler for FairShare {
    fn tag(&self) -> &'static str {
        "fair-share"
    }
    fn task_arrived(&mut self, _: &TaskMeta, _: &[HostId], _: &mut Vec<ClassChange>) {}
    fn flow_class(&self, _: &TaskMeta, _: HostId, _: f64) -> i32 {
        0
    }
}

/// Shortest flow first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sff;
impl FlowScheduler for Sff {
    fn tag(&self) -> &'static str {
        "sff"
    }
    fn task_arrived(&mut self, _: &TaskMeta, _: &[HostId], _: &mut Vec<ClassChange>) {}
    fn flow_class(&self, _: &TaskMeta, _: HostId, flow_bytes: f64) -> i32 {
        size_class(flow_bytes)
    }
}

/// Shortest task first (task sizes known in advance).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stf;
impl FlowScheduler for Stf {
    fn tag(&self) -> &'static str {
        "stf"
    }
    fn task_arrived(&mut self, _: &TaskMeta, _: &[HostId], _: &mut Vec<ClassChange>) {}
    fn flow_class(&self, task: &TaskMeta, _: HostId, _: f64) -> i32 {
        size_class(task.bytes)
    }
}

/// Task serialisation in id order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo;
impl FlowScheduler for Fifo {
    fn tag(&self) -> &'static str {
        "fifo"
    }
    fn task_arrived(&mut self, _: &TaskMeta, _: &[HostId], _: &mut Vec<ClassChange>) {}
    fn flow_class(&self, task: &TaskMeta, _: HostId, _: f64) -> i32 {
        id_class(task.id)
    }
}

/// Baraat's FIFO with limited multiplexing, applied where tasks contend:
/// at each receiver (the *domain* of a flow is its destination host, whose
/// link is where partition-aggregate, storage and batch tasks meet).
///
/// Within a domain, the class of a task is the id class of the first task
/// of the run of heavy tasks just before it (among the tasks still active
/// in that domain), or its own id class when the task before it is light.
/// So a heavy task shares its class with exactly the next task *that meets
/// it there*; several heavy tasks in a row share with the first light task
/// after them. A switch applying limited multiplexing can only see the
/// tasks on its own links, which is why the order is per domain: sharing
/// with the globally next task (usually at another receiver) would leave the
/// heavy task blocking every later task at its own receiver, i.e. plain FIFO.
/// Only the tasks after a change can move, and the walk stops at the first
/// task whose class does not change.
#[derive(Debug, Clone, Default)]
pub struct FifoLm {
    threshold: f64,
    /// Active tasks: heavy flag and domains.
    tasks: BTreeMap<u64, (bool, Vec<HostId>)>,
    /// Per domain: active task id -> class.
    domains: BTreeMap<HostId, BTreeMap<u64, i32>>,
}

impl FifoLm {
    /// A classifier marking tasks heavy above `threshold` bytes.
    pub fn new(threshold: f64) -> Self {
        Self { threshold, tasks: BTreeMap::new(), domains: BTreeMap::new() }
    }

    /// Current class of an active task in a domain.
    pub fn class_of(&self, id: u64, domain: HostId) -> Option<i32> {
        self.domains.get(&domain).and_then(|d| d.get(&id)).copied()
    }

    /// Whether an active task is heavy.
    pub fn is_heavy(&self, id: u64) -> bool {
        self.tasks.get(&id).is_some_and(|t| t.0)
    }

    /// Recomputes classes in `domain` from the first active task after
    /// `after` (exclusive) and records changes.
    fn propagate(&mut self, domain: HostId, after: u64, changes: &mut Vec<ClassChange>) {
        let Some(dom) = self.domains.get_mut(&domain) else { return };
        let heavy = |id: u64| self.tasks.get(&id).is_some_and(|t| t.0);
        // `after` may have left: then the previous task is the one before it.
        let mut prev = dom.range(..=after).next_back().map(|(&id, &c)| (heavy(id), c));
        for (&id, class) in dom.range_mut(after.saturating_add(1)..) {
            let want = match prev {
                Some((true, c)) if id < BACKGROUND_BASE => c,
                _ => id_class(id),
            };
            if want == *class {
                break;
            }
            *class = want;
            changes.push((id, domain, want));
            prev = Some((heavy(id), want));
        }
    }
}

impl FlowScheduler for FifoLm {
    fn tag(&self) -> &'static str {
        "fifo-lm"
    }
    fn task_arrived(&mut self, task: &TaskMeta, domains: &[HostId], changes: &mut Vec<ClassChange>) {
        let mut doms = domains.to_vec();
        doms.sort_unstable();
        doms.dedup();
        for &d in &doms {
            let dom = self.domains.entry(d).or_default();
            let prev = dom.range(..task.id).next_back().map(|(&id, &c)| (id, c));
            let class = match prev {
                Some((p, c)) if task.id < BACKGROUND_BASE && self.tasks.get(&p).is_some_and(|t| t.0) => c,
                _ => id_class(task.id),
            };
            dom.insert(task.id, class);
        }
        self.tasks.insert(task.id, (false, doms.clone()));
        // An id below already active ones (several counters) can re-class
        // the tasks after it.
        for d in doms {
            self.propagate(d, task.id, changes);
        }
    }
    fn flow_class(&self, task: &TaskMeta, domain: HostId, _: f64) -> i32 {
        self.class_of(task.id, domain).unwrap_or_else(|| id_class(task.id))
    }
    fn task_completed(&mut self, task_id: u64, changes: &mut Vec<ClassChange>) {
        if let Some((_, doms)) = self.tasks.remove(&task_id) {
            for d in doms {
                if let Some(dom) = self.domains.get_mut(&d) {
                    dom.remove(&task_id);
                    if dom.is_empty() {
                        self.domains.remove(&d);
                        continue;
                    }
                }
                self.propagate(d, task_id, changes);
            }
        }
    }
    fn heavy_threshold(&self) -> Option<f64> {
        Some(self.threshold)
    }
    fn reclassifies(&self) -> bool {
        true
    }
    fn task_progress(&mut self, task_id: u64, bytes_so_far: f64, changes: &mut Vec<ClassChange>) {
        let doms = match self.tasks.get_mut(&task_id) {
            Some(t) if !t.0 && bytes_so_far > self.threshold => {
                t.0 = true;
                t.1.clone()
            }
            _ => return,
        };
        for d in doms {
            self.propagate(d, task_id, changes);
        }
    }
}

/// Task ids from monotonic counters: `lbs` load balancers each own the ids
/// `k, k + lbs, k + 2·lbs, ...`; background tasks draw from a reserved range
/// starting at [`BACKGROUND_BASE`].
#[derive(Debug, Clone)]
pub struct TaskIdAllocator {
    counters: Vec<u64>,
    background: u64,
}

impl TaskIdAllocator {
    /// Counters for `lbs >= 1` load balancers.
    pub fn new(lbs: usize) -> Self {
        Self { counters: vec![0; lbs.max(1)], background: 0 }
    }
    /// Next id of load balancer `lb` (modulo the number of balancers).
    pub fn next(&mut self, lb: usize) -> u64 {
        let n = self.counters.len();
        let k = lb % n;
        let id = self.counters[k] * n as u64 + k as u64;
        self.counters[k] += 1;
        id
    }
    /// Next background task id.
    pub fn next_background(&mut self) -> u64 {
        self.background += 1;
        BACKGROUND_BASE + self.background - 1
    }
}

/// The FIFO-LM heavy threshold for a `heavy-percentile` of `p` (0..=1):
/// the nearest-rank `p`-quantile of the task sizes, i.e. the
/// `ceil(p n)`-th smallest of the `n` sizes (the first when `p n <= 1`).
/// It is one of the task sizes, and since a task is heavy once its bytes
/// so far *exceed* it, `floor((1 - p) n)` of `n` distinct sizes are heavy.
/// `NaN` for no sizes or a NaN size.
///
/// This is a policy parameter, not a reported metric, and deliberately
/// not [`netheat_core::stats::quantile`] (linear interpolation, the one
/// definition of every percentile netheat *reports*). Baraat (§3.2) takes
/// the threshold from the task-size distribution "in the range of
/// 80th-90th percentile" without naming an estimator; interpolating would
/// move the threshold between two task sizes and change when tasks turn
/// heavy, hence every FIFO-LM and SPC result, for no gain. The order
/// statistic still goes through `netheat_core::stats`: the linear
/// quantile at `q = 1` of the `k` smallest sizes is exactly the largest of
/// them (no interpolation), with the module's empty-sample rule.
pub fn percentile(sizes: &[f64], p: f64) -> f64 {
    if sizes.iter().any(|s| s.is_nan()) {
        return f64::NAN;
    }
    let mut v = sizes.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let k = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)).min(v.len());
    stats::quantile_sorted(&v[..k], 1.0)
}
