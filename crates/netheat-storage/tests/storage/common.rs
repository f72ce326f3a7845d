//! Shared datacenters and helpers.

use netheat_core::HostId;
use netheat_storage::{PlacementRequest, Redundancy};
use netheat_topology::{RackKind, StorageDevice, StorageKind, Topology, TopologySpec};

/// An HDD of `capacity_bytes` writing at `write_bps`.
pub fn hdd(capacity_bytes: f64, write_bps: f64) -> StorageDevice {
    StorageDevice { kind: StorageKind::Hdd, capacity_bytes, read_bps: write_bps, write_bps, access_s: 8e-3 }
}

/// One pod of 4 disk racks x 2 hosts (10 Gbps NICs) under 2 aggregation
/// switches: every ToR has two 10 Gbps uplinks (20 Gbps each way). Rack
/// `r`'s hosts have one HDD of 10 TB writing at `write_bps[r]` (none when
/// `write_bps` is empty: a diskless fleet of compute racks).
pub fn clos(write_bps: &[f64]) -> Topology {
    let mut spec = TopologySpec::three_tier(1, 4, 2, 2, 0, 10e9, 20e9, None);
    for (r, &w) in write_bps.iter().enumerate() {
        spec.racks[r].kind = RackKind::Disk;
        spec.racks[r].host.storage = vec![hdd(10e12, w)];
    }
    Topology::build(&spec).expect("clos topology")
}

/// `r` replicas over `f + 1` racks of a 256 MB block.
pub fn req(block: u64, r: usize, f: usize, writer: Option<HostId>) -> PlacementRequest {
    PlacementRequest { file: 1, block, bytes: 256e6, writer, redundancy: Redundancy::Replicate { r, f }, time_s: 0.0 }
}

/// The interval `p +- 4 sigma` of a share estimated from `n` independent
/// draws of probability `p` (a false failure has probability below 1e-4).
pub fn four_sigma(p: f64, n: usize) -> (f64, f64) {
    let s = (p * (1.0 - p) / n as f64).sqrt();
    (p - 4.0 * s, p + 4.0 * s)
}
