//! Shared pieces of netheat's benchmarks: scenarios, timing and memory.
//!
//! Each scenario runs in a child process of `netheat-bench` so that its peak
//! resident memory (`VmHWM`) is its own.
#![warn(missing_docs)]

use netheat_topology::{Topology, TopologySpec};

/// The Baraat-scale datacenter: 30 pods x 30 racks x 40 hosts, 1 Gbps hosts,
/// 2:1 at the ToR, 4 aggregation switches per pod, 16 spines.
pub fn baraat_spec() -> TopologySpec {
    TopologySpec::three_tier(30, 30, 40, 4, 16, 1e9, 20e9, None)
}

/// Builds the Baraat-scale datacenter.
pub fn baraat() -> Topology {
    Topology::build(&baraat_spec()).expect("valid spec")
}

/// Peak resident set size of this process in bytes (Linux), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
