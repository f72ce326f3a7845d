//! Cluster scheduling with network awareness (the hotspot paper's UTP).
//!
//! * [`policy`]: the [`PlacementPolicy`] trait and its tags
//!   (`bandwidth-oblivious`, `utp`, `reactive-only`), the lexicographic
//!   ranking of candidate servers, and the choice of tasks to migrate off a
//!   hot ToR;
//! * [`rank`]: candidate hosts for one task ranked by a policy on a
//!   [`TorLoad`] (the engine's live rates or telemetry), shared by the
//!   scenario layer and the live advisor;
//! * [`tors`]: ToR outbound utilization and hot-ToR detection from periodic
//!   samples, for any run that places tasks with a policy;
//! * [`params`]: the scheduler's own parameters (candidates, objectives,
//!   sampling, hot threshold, migration budget) and their defaults.
//!
//! The cluster experiment of the hotspot paper (jobs arriving with tasks
//! requesting CPU and memory and carrying network demand, placed by a
//! policy, migrated off hot ToRs by a reactive loop, on the flow-level
//! engine) is `netheat-scenario`'s `cluster` module.
#![warn(missing_docs)]

pub mod error;
pub mod params;
pub mod policy;
pub mod rank;
pub mod tors;

pub use error::SchedError;
pub use params::SchedulerParams;
pub use policy::{
    pick_migrations, placement_policy, projected_tor, sample_servers, Candidate, MigrationCandidate, Objective,
    PlacementPolicy, POLICIES,
};
pub use rank::{rank_hosts, HostRank, TaskAsk, TorLoad};
pub use tors::{outbound_utilization, tor_capacity_bps, tor_utilization, EngineTors, HotTors};
