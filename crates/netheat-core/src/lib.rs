//! Shared vocabulary of netheat.
//!
//! Every other crate speaks in these terms: dense integer identifiers for
//! hosts, nodes and *directed* links, unit strings as they appear in configs
//! (`"10Gbps"`, `"256MiB"`, `"5min"`), and the [`Routing`] trait through which
//! the engine and the policies ask a topology for paths without depending on
//! how the topology is built. [`budget`] holds the memory budget every
//! reader checks its estimates against; [`stats`] holds the one quantile
//! definition every reported percentile uses; [`registry!`] writes the
//! tag registries of the policy crates.
#![warn(missing_docs)]

pub mod budget;
pub mod hash;
pub mod registry;
pub mod routing;
pub mod stats;
pub mod units;

pub use budget::{
    check_budget, format_bytes, memory_budget, over_budget, set_memory_budget, with_memory_budget, BudgetError,
    BYTES_PER_FLOW, BYTES_PER_LINK, BYTES_PER_LINK_WINDOW, BYTES_PER_NODE, BYTES_PER_PROTOCOL_FLOW,
    BYTES_PER_PROTOCOL_FLOW_KEPT,
};
pub use hash::{mix, IdHasher, IdMap};
pub use routing::Routing;
pub use units::{clip, clip_words, parse_bandwidth, parse_bytes, parse_duration, UnitError};

/// Index of a host, `0..num_hosts`, numbered rack-major.
pub type HostId = u32;
/// Index of a node (host or switch) in a topology.
pub type NodeId = u32;
/// Index of a *directed* link; every physical link is two of them.
pub type LinkId = u32;
