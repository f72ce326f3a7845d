//! Network-aware storage placement on the flow engine.
//!
//! [`cluster`] is a two-tier cluster (racks of hosts, rack uplinks of
//! several classes, one disk per host modelled as a link so that concurrent
//! writes share its throughput); [`fs`] is the cluster-file-system model
//! (blocks, replication or erasure coding, storage balance, rebalancer,
//! replica and degraded reads); [`placement`] holds the
//! [`ReplicaPlacement`] trait, its registry and the `uniform` and `ccp`
//! policies; [`sinbad`] is Sinbad's network-balanced placement (Chowdhury
//! et al., SIGCOMM 2013); [`experiment`] runs the Sinbad and CCP points.

pub mod cluster;
pub mod error;
pub mod experiment;
pub mod fs;
pub mod placement;
pub mod sinbad;

pub use cluster::{Cluster, UplinkClass};
pub use error::StorageError;
pub use fs::{FileSystem, PlacementFailure, Redundancy};
pub use placement::{make_policy, PlacementRequest, PolicyConfig, ReplicaPlacement, View, POLICIES};
pub use sinbad::{LinkEstimator, Sinbad};
