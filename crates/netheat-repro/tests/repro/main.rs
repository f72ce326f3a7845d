//! Integration tests of netheat-repro, one file per paper's experiment.

mod baraat;
mod cloudburst;
mod storage;

use netheat_topology::Topology;

/// A Subways (or Type 0) datacenter from its `[topology]` keys.
pub fn topo(body: &str) -> Topology {
    netheat_config::load_topology_str(&format!("[topology]\n{body}"), "dc.toml").expect("valid topology")
}
