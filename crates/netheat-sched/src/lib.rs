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
//! * [`cluster`]: the scheduler model run on the flow-level engine: jobs
//!   arrive with tasks requesting CPU and memory and carrying network demand
//!   (rate-capped flows to peers), placement samples candidates, filters and
//!   ranks them, and a reactive loop migrates tasks off hot ToRs.
#![warn(missing_docs)]

pub mod cluster;
pub mod error;
pub mod policy;
pub mod rank;
pub mod tors;

pub use cluster::{run_cluster, ClusterParams, ClusterResult, Incident, MigrationRecord, QueryType, WindowStats};
pub use error::SchedError;
pub use policy::{
    pick_migrations, placement_policy, projected_tor, sample_servers, Candidate, MigrationCandidate, Objective,
    PlacementPolicy, POLICIES,
};
pub use rank::{rank_hosts, HostRank, TaskAsk, TorLoad};
pub use tors::{outbound_utilization, tor_capacity_bps, tor_utilization, EngineTors, HotTors};
