//! Network-aware storage placement on the flow engine.
//!
//! [`cluster`] is what the policies see of a datacenter: a view of a
//! [`netheat_topology::Topology`] (its racks as fault domains, its ToR link
//! sets and uplink classes, its directed link ids, its hosts' disks as write
//! rates, its routing; [`Cluster::from_topology`]), or the small two-tier
//! cluster of the experiment points (one disk per host modelled as a link
//! so that concurrent writes share its throughput; [`Cluster::two_tier`]);
//! [`fs`] is the cluster-file-system model (blocks, replication or erasure
//! coding, storage balance, rebalancer, replica and degraded reads);
//! [`placement`] holds the [`ReplicaPlacement`] trait and the `uniform`,
//! `ccp` and `ccp-balance` policies, [`registry`] the tags of all of them; [`sinbad`] is Sinbad's network-balanced
//! placement (Chowdhury et al., SIGCOMM 2013). The Sinbad, CCP and HDFS
//! experiment points are in `netheat-repro` (`ccp`, `hdfs`); Sinbad's simulation is a scenario.

pub mod cluster;
pub mod error;
pub mod fs;
pub mod placement;
pub mod registry;
pub mod sinbad;

pub use cluster::{Cluster, UplinkClass};
pub use error::StorageError;
pub use fs::{FileSystem, PlacementFailure, Redundancy};
pub use placement::{PlacementRequest, PolicyConfig, ReplicaPlacement, View};
pub use registry::{make_policy, POLICIES};
pub use sinbad::{LinkEstimator, Sinbad};
