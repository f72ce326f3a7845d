//! Flow descriptions given to the simulator and the records it returns.

use netheat_core::{HostId, LinkId};

/// How a flow finds its path.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// A fixed list of directed links; never re-routed.
    Explicit(Vec<LinkId>),
    /// Weighted ECMP: a per-flow hash of (src, dst, id, seed) picks one of the
    /// routing's paths, weighted by `path_weight`.
    Ecmp,
    /// A given index into the routing's path set of (src, dst).
    PathIndex(usize),
}

/// A flow to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Caller-chosen unique id.
    pub id: u64,
    /// Source host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// Size in bytes (0 completes at start).
    pub bytes: f64,
    /// Arrival time in seconds.
    pub start_s: f64,
    /// Strict priority class; lower values are served first.
    pub priority: i32,
    /// Weight for weighted max-min fairness (> 0).
    pub weight: f64,
    /// Optional maximum rate in bits/s (e.g. a NIC or application limit).
    pub rate_cap_bps: Option<f64>,
    /// Optional task this flow belongs to (passed through to the record).
    pub task_id: Option<u64>,
    /// How the path is chosen.
    pub route: Route,
}

impl FlowSpec {
    /// A flow with priority 0, weight 1, no rate cap and no task.
    pub fn new(id: u64, src: HostId, dst: HostId, bytes: f64, start_s: f64, route: Route) -> Self {
        Self { id, src, dst, bytes, start_s, priority: 0, weight: 1.0, rate_cap_bps: None, task_id: None, route }
    }

    /// Sets the priority class.
    pub fn with_priority(mut self, p: i32) -> Self {
        self.priority = p;
        self
    }

    /// Sets the fairness weight.
    pub fn with_weight(mut self, w: f64) -> Self {
        self.weight = w;
        self
    }

    /// Sets a rate cap in bits/s.
    pub fn with_rate_cap(mut self, cap_bps: f64) -> Self {
        self.rate_cap_bps = Some(cap_bps);
        self
    }

    /// Sets the task id.
    pub fn with_task(mut self, task: u64) -> Self {
        self.task_id = Some(task);
        self
    }
}

/// Why a flow cannot make progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrandReason {
    /// Every path of the routing between its hosts crosses a failed
    /// (zero-capacity) link; the flow waits on its last path.
    NoPathAvailable {
        /// A failed link on its current path.
        link: LinkId,
    },
    /// Its explicit route crosses a failed link.
    ExplicitLinkDown {
        /// The failed link.
        link: LinkId,
    },
}

/// What happened to one flow.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRecord {
    /// Flow id.
    pub id: u64,
    /// Source host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// Size in bytes.
    pub bytes: f64,
    /// Arrival time.
    pub start_s: f64,
    /// Completion time; `NaN` if it did not finish.
    pub finish_s: f64,
    /// Flow completion time `finish_s - start_s`; `NaN` if unfinished.
    pub fct_s: f64,
    /// Task id from the spec.
    pub task_id: Option<u64>,
    /// Priority class.
    pub priority: i32,
    /// Index of the routing path used last; `None` for explicit routes and
    /// for flows that never started.
    pub path_id: Option<u32>,
    /// Bytes delivered by the end of the run (equals `bytes` when finished).
    pub bytes_delivered: f64,
    /// Set when the flow was stranded by a failure at the end of the run.
    pub stranded: Option<StrandReason>,
}

impl FlowRecord {
    /// Whether the flow completed.
    pub fn finished(&self) -> bool {
        !self.finish_s.is_nan()
    }
}
