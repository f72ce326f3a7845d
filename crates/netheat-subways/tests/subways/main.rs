//! Integration tests of netheat-subways, one file per behaviour.

mod detour_groups;
mod failures;
mod policies;

use netheat_topology::Topology;

/// A Subways (or Type 0) datacenter from its `[topology]` keys.
pub fn topo(body: &str) -> Topology {
    netheat_config::load_topology_str(&format!("[topology]\n{body}"), "dc.toml").expect("valid topology")
}

/// Every consecutive pair of links of `path` meets at a node (a walk).
pub fn is_walk(t: &Topology, path: &[u32]) -> bool {
    path.windows(2).all(|w| t.links()[w[0] as usize].dst == t.links()[w[1] as usize].src)
}
