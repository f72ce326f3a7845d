//! What a ToR failure does to reachability under each wiring.
//!
//! Under Type 0 every port of a server is on its own ToR, so a ToR failure
//! disconnects its whole rack; under Type 1/2 a server keeps its ports on
//! the other ToRs of its loop and only loses bandwidth.

use netheat_core::HostId;
use netheat_topology::Topology;

/// Hosts cut off or slowed down by the failure of one ToR.
#[derive(Debug, Clone, PartialEq)]
pub struct TorFailure {
    /// Hosts with every port on the failed ToR (unreachable), in host order.
    pub disconnected: Vec<HostId>,
    /// Hosts that lose some but not all ports, in host order.
    pub degraded: Vec<HostId>,
    /// Server port capacity lost, bits per second (one direction).
    pub lost_port_bps: f64,
}

/// The effect of ToR `tor` failing on `topo`'s servers.
pub fn tor_failure(topo: &Topology, tor: u32) -> TorFailure {
    let mut out = TorFailure { disconnected: Vec::new(), degraded: Vec::new(), lost_port_bps: 0.0 };
    for (h, host) in topo.hosts().iter().enumerate() {
        let lost: Vec<_> = host.ports.iter().filter(|p| p.tor == tor).collect();
        if lost.is_empty() {
            continue;
        }
        out.lost_port_bps += lost.iter().map(|p| p.speed_bps).sum::<f64>();
        if lost.len() == host.ports.len() {
            out.disconnected.push(h as HostId);
        } else {
            out.degraded.push(h as HostId);
        }
    }
    out
}
