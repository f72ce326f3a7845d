//! Subways: servers wired to several adjacent ToRs, and the load balancing
//! that makes the extra links pay off.
//!
//! * [`lb`]: the [`LoadBalancer`] trait and its policies by tag (`subways-ecmp`,
//!   `adaptive`, `detour`), over the Subways wiring built by
//!   `netheat-topology`;
//! * [`failures`]: what a ToR failure disconnects under each wiring.
//!
//! The shuffle jobs of the Subways paper's main experiments are the
//! `shuffle-job` workload application (`netheat-workloads`,
//! `apps::shuffle::ShuffleJob`) run by a scenario (`netheat-scenario`,
//! whose `routing.policy` picks these policies); its memcache experiment is
//! a packet-engine scenario (`experiments/scenarios/memcache.toml`, detours
//! in `netheat-scenario`'s `packet.rs`).
#![warn(missing_docs)]

pub mod error;
pub mod failures;
pub mod lb;

pub use error::SubwaysError;
pub use lb::{load_balancer, LbParams, LoadBalancer, Net, WindowMeter, POLICIES};
