//! Task-aware flow scheduling (issue 9: Baraat, Dogar et al., SIGCOMM 2014).
//!
//! * [`policy`]: the [`FlowScheduler`] trait and its registry by tag
//!   (`fair-share`, `sff`, `stf`, `fifo`, `fifo-lm`), task ids from
//!   monotonic counters ([`TaskIdAllocator`]) and the heavy threshold;
//! * [`ideal`]: the idealized schedulers on the flow engine's strict
//!   priority classes, classes updated during the run by a controller;
//! * [`poll`]: when `fifo-lm` reads its large tasks' bytes ([`HeavyPoll`],
//!   shared with the scenario's flow driver);
//! * [`reference`](mod@reference): an exact recompute-everything fluid simulation of the
//!   same policies (cross-check; `fifo-lm` fallback);
//! * [`spc`]: Baraat's decentralized SPC protocol as a round (RTT) based
//!   simulator with per-task switch counters ([`run_spc_dag`]: tasks whose
//!   flows form DAGs, with per-flow times and per-link bytes, for
//!   scenarios);
//! * [`task`]: the tasks every simulator runs (flows with fixed paths and
//!   stage dependencies) and their checks.
//!
//! The Baraat experiments (task workloads: Bing-like, data-analytics from
//! the Facebook 2010 trace, uniform; one experiment point: datacenter,
//! workload, policy, per-task records) are in `netheat-repro`'s `baraat`.
#![warn(missing_docs)]

pub mod error;
pub mod ideal;
pub mod policy;
pub mod poll;
pub mod reference;
pub mod spc;
pub mod task;

pub use error::FlowschedError;
pub use ideal::{run_ideal, run_ideal_stats, IdealOptions, TaskResult};
pub use policy::{policy_by_tag, FlowScheduler, TaskIdAllocator, TaskMeta, POLICIES};
pub use poll::HeavyPoll;
pub use reference::run_reference;
pub use spc::{run_spc, run_spc_dag, ClassUnit, Releases, SpcOptions, SpcRecord, SpcResult, VirtualCapacity, Windows};
pub use task::{Task, TaskFlow};
