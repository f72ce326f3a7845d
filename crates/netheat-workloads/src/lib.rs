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
//! * [`storage`]: the device-time model of storage operations.
//!
//! Units: bytes, seconds, bits per second throughout.
#![warn(missing_docs)]

pub mod apps;
pub mod arrivals;
pub mod dag;
pub mod error;
pub mod flows_csv;
pub mod load;
pub mod sizes;
pub mod storage;

pub use arrivals::{to_flow_spec, Batches, Horizon, OnOff, Poisson, Replay};
pub use dag::{DagRunner, Step, StepId, TaskDag, TaskRecord};
pub use error::GenError;
pub use flows_csv::{parse_flows_csv, read_flows_csv, FlowRow, WorkloadError};
pub use load::{Calibration, LinkSet, PairSampler, Pattern};
pub use sizes::{EmpiricalCdf, SizeDist};
