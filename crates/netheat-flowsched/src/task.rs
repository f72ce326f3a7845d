//! The tasks every simulator of this crate runs: flows with fixed paths,
//! released together at the task's arrival or after the flows feeding
//! them (the workload generators of the Baraat experiments are in
//! `netheat-repro`).
//!
//! Flows of a task may depend on each other: a flow is *released* at its
//! task's arrival, or, if other flows feed it ([`TaskFlow::feeds`]), when
//! the last of them completes; it starts [`TaskFlow::delay_s`] after its
//! release. Every simulator (engine runs, reference, SPC) follows this rule;
//! [`check_tasks`] validates it.

use crate::FlowschedError;
use netheat_core::{HostId, LinkId};

/// One flow of a task, with its fixed path.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFlow {
    /// Sender.
    pub src: HostId,
    /// Receiver.
    pub dst: HostId,
    /// Bytes.
    pub bytes: f64,
    /// Links (chosen once by a seeded ECMP hash, shared by all simulators).
    pub path: Vec<LinkId>,
    /// Seconds after the flow's release (its task's arrival, or the
    /// completion of the last flow feeding it) at which it starts: the
    /// sender's compute time (0: at once).
    pub delay_s: f64,
    /// Index, in the same task, of the flow this one feeds (a later flow):
    /// that flow is released when every flow feeding it has completed.
    pub feeds: Option<u32>,
}

/// A task: flows released together at `arrival_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Arrival time, seconds.
    pub arrival_s: f64,
    /// Total bytes.
    pub bytes: f64,
    /// Its flows.
    pub flows: Vec<TaskFlow>,
}

/// Checks what every simulator relies on: each flow feeds a later flow of
/// its own task (so dependencies cannot form a cycle), delays are finite
/// and non-negative, and sizes are finite and non-negative.
pub fn check_tasks(tasks: &[Task]) -> Result<(), FlowschedError> {
    for (ti, t) in tasks.iter().enumerate() {
        if !(t.arrival_s.is_finite() && t.arrival_s >= 0.0) {
            return Err(FlowschedError::param(
                "arrival",
                format!("task {ti}: {} s must be finite and >= 0", t.arrival_s),
            ));
        }
        for (j, f) in t.flows.iter().enumerate() {
            if let Some(k) = f.feeds {
                if k as usize <= j || k as usize >= t.flows.len() {
                    return Err(FlowschedError::param(
                        "feeds",
                        format!("task {ti}, flow {j}: feeds flow {k}, which is not a later flow of the task"),
                    ));
                }
            }
            if !(f.delay_s.is_finite() && f.delay_s >= 0.0) {
                return Err(FlowschedError::param(
                    "delay",
                    format!("task {ti}, flow {j}: {} s must be >= 0", f.delay_s),
                ));
            }
            if !(f.bytes.is_finite() && f.bytes >= 0.0) {
                return Err(FlowschedError::param("bytes", format!("task {ti}, flow {j}: {} must be >= 0", f.bytes)));
            }
        }
    }
    Ok(())
}

/// Per flow of a task: how many flows feed it (0: released at arrival).
pub(crate) fn feeder_counts(task: &Task) -> Vec<u32> {
    let mut n = vec![0u32; task.flows.len()];
    for f in &task.flows {
        if let Some(k) = f.feeds {
            n[k as usize] += 1;
        }
    }
    n
}
