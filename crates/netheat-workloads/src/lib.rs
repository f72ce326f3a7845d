//! Traffic for netheat experiments.
//!
//! * [`flows_csv`]: reading user flow traces into [`FlowRow`]s;
//! * [`sizes`]: flow size distributions ([`SizeDist`]);
//! * [`load`]: link sets, endpoint patterns and the target-load calibration;
//! * [`arrivals`]: seeded open-loop generators (Poisson at a target load,
//!   on-off, batches, trace replay, rack-matrix background), all producing
//!   [`FlowRow`]s sorted by start time;
//! * [`dag`] and [`apps`]: application structures (partition-aggregate,
//!   storage, shuffles, memcache, file-system writes, analytical queries,
//!   compute jobs) as DAGs of flows and delays run by the [`DagRunner`]
//!   engine controller, which records every task's completion time;
//! * [`storage`]: the device-time model of storage operations;
//! * [`budget`]: the hard cap every generator stops at (the memory budget);
//! * [`plan`]: how many telemetry windows a run may keep, and the checks
//!   that refuse a run needing more.
//!
//! Units: bytes, seconds, bits per second throughout.
#![warn(missing_docs)]

pub mod apps;
pub mod arrivals;
pub mod budget;
pub mod dag;
pub mod error;
pub mod flows_csv;
pub mod load;
pub mod plan;
pub mod sizes;
pub mod storage;

pub use arrivals::{to_flow_spec, Batches, Horizon, OnOff, Poisson, Replay};
pub use budget::FlowCap;
pub use dag::{DagRunner, FlowHooks, JobTasks, NoHooks, ReadPick, Step, StepId, TaskDag, TaskRecord};
pub use error::GenError;
pub use flows_csv::{
    parse_flows_csv, parse_flows_reader, read_flow_trace, read_flows_csv, FlowColumns, FlowRow, FlowTrace,
    WorkloadError,
};
pub use load::{Calibration, LinkSet, PairSampler, Pattern};
pub use plan::{end_lower_bound, same_host_note, EndBound, RunBudget};
pub use sizes::{EmpiricalCdf, SizeDist};
