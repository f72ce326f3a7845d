//! The routing trait: how anything above the topology asks for paths.
//!
//! A path is a sequence of directed links from a source host to a destination
//! host. Path sets are enumerated on demand (never stored per host pair), so
//! a 36,000-host datacenter costs nothing until a path is asked for.

use crate::{HostId, LinkId};

/// Path enumeration between hosts over directed links.
///
/// Paths between one pair are indexed `0..num_paths(src, dst)`; the index is
/// stable for a given topology, so it can be recorded (`path_id`) and reused.
pub trait Routing {
    /// Number of hosts.
    fn num_hosts(&self) -> usize;
    /// Number of directed links.
    fn num_links(&self) -> usize;
    /// Nominal capacity of a directed link in bits per second.
    fn link_capacity_bps(&self, link: LinkId) -> f64;
    /// Number of equal-cost (shortest) paths from `src` to `dst`; 0 when
    /// `src == dst`.
    fn num_paths(&self, src: HostId, dst: HostId) -> usize;
    /// Writes path `k` (`k < num_paths`) from `src` to `dst` into `out`,
    /// replacing its contents.
    fn path(&self, src: HostId, dst: HostId, k: usize, out: &mut Vec<LinkId>);
    /// Relative weight of path `k` for weighted ECMP; the default is equal
    /// weights. Topologies with heterogeneous parallel links (e.g. a server
    /// with a 10G and a 25G port) weight by the slowest link of the path.
    fn path_weight(&self, src: HostId, dst: HostId, k: usize) -> f64 {
        let _ = (src, dst, k);
        1.0
    }
}
