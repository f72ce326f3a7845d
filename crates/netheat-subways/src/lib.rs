//! Subways: servers wired to several adjacent ToRs, and the load balancing
//! that makes the extra links pay off.
//!
//! * [`lb`]: the [`LoadBalancer`] trait and its policies by tag (`ecmp`,
//!   `adaptive`, `detour`), over the Subways wiring built by
//!   `netheat-topology`;
//! * [`shuffle`]: shuffle jobs on contiguous servers, the workload of the
//!   Subways paper's main experiments;
//! * [`failures`]: what a ToR failure disconnects under each wiring.
#![warn(missing_docs)]

pub mod error;
pub mod failures;
pub mod lb;
pub mod shuffle;

pub use error::SubwaysError;
pub use lb::{load_balancer, LbParams, LoadBalancer, Net, POLICIES};
pub use shuffle::{run_shuffle, Pattern, Placement, ShuffleJob, ShuffleResult};
