//! Shared vocabulary of netheat.
//!
//! Every other crate speaks in these terms: dense integer identifiers for
//! hosts, nodes and *directed* links, unit strings as they appear in configs
//! (`"10Gbps"`, `"256MiB"`, `"5min"`), and the [`Routing`] trait through which
//! the engine and the policies ask a topology for paths without depending on
//! how the topology is built.
#![warn(missing_docs)]

pub mod routing;
pub mod units;

pub use routing::Routing;
pub use units::{parse_bandwidth, parse_bytes, parse_duration, UnitError};

/// Index of a host, `0..num_hosts`, numbered rack-major.
pub type HostId = u32;
/// Index of a node (host or switch) in a topology.
pub type NodeId = u32;
/// Index of a *directed* link; every physical link is two of them.
pub type LinkId = u32;
