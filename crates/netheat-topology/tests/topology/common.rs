//! Helpers shared by the topology tests.

use netheat_core::{LinkId, Routing};
use netheat_topology::{FabricSpec, HostSpec, NodeKind, SubwaysSpec, Topology, TopologySpec, Wiring};

pub const G: f64 = 1e9;

/// Subways fabric with uniform compute racks.
#[allow(clippy::too_many_arguments)]
pub fn subways(
    wiring: Wiring,
    clusters: usize,
    racks_per_cluster: usize,
    hosts: usize,
    ports: usize,
    loop_size: usize,
    clusters_per_loop: usize,
    aggs: usize,
    spines: usize,
) -> Topology {
    let spec = TopologySpec::uniform(
        FabricSpec::Clos {
            pods: clusters,
            aggs_per_pod: aggs,
            spines,
            agg_uplink_bps: None,
            subways: Some(SubwaysSpec { wiring, loop_size, clusters_per_loop }),
        },
        clusters * racks_per_cluster,
        hosts,
        HostSpec::with_ports(ports, 10.0 * G),
        60.0 * G,
    );
    Topology::build(&spec).expect("valid subways spec")
}

/// The node names a path visits, host to host.
pub fn hops_by_name(t: &Topology, path: &[LinkId]) -> Vec<String> {
    let mut out = vec![t.nodes()[t.links()[path[0] as usize].src as usize].name.clone()];
    for l in path {
        out.push(t.nodes()[t.links()[*l as usize].dst as usize].name.clone());
    }
    out
}

/// Asserts every path of a pair is a connected walk from src to dst.
pub fn check_paths(t: &Topology, src: u32, dst: u32) -> usize {
    let n = t.num_paths(src, dst);
    let mut buf = Vec::new();
    for k in 0..n {
        t.path(src, dst, k, &mut buf);
        assert_eq!(t.links()[buf[0] as usize].src, src, "path must leave the source host");
        assert_eq!(t.links()[*buf.last().unwrap() as usize].dst, dst, "path must reach the destination");
        for w in buf.windows(2) {
            assert_eq!(t.links()[w[0] as usize].dst, t.links()[w[1] as usize].src, "links must chain");
        }
        let mut sorted = buf.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), buf.len(), "no link twice on one path");
        for l in &buf[1..buf.len() - 1] {
            assert_ne!(t.nodes()[t.links()[*l as usize].dst as usize].kind, NodeKind::Host, "no host in the middle");
        }
    }
    n
}
