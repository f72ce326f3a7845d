//! The example: 4 racks x 4 hosts, 10G hosts, 10G ToR uplinks.

use netheat_core::Routing;
use netheat_topology::{Layer, NodeKind, Topology, TopologySpec};

use crate::common::{check_paths, hops_by_name, G};

fn example() -> Topology {
    Topology::build(&TopologySpec::two_tier(4, 4, 10.0 * G, 10.0 * G)).unwrap()
}

#[test]
fn counts() {
    let t = example();
    // 16 hosts + 4 ToRs + 1 core.
    assert_eq!(t.nodes().len(), 21);
    assert_eq!(t.hosts().len(), 16);
    assert_eq!(t.nodes().iter().filter(|n| n.kind == NodeKind::Core).count(), 1);
    // 16 host links + 4 ToR uplinks, each two directed links.
    assert_eq!(t.links().len(), 40);
    assert_eq!(t.links().iter().filter(|l| l.layer == Layer::TorAgg).count(), 8);
    for l in t.links() {
        assert_eq!(l.capacity_bps, 10.0 * G);
        assert_eq!(t.links()[l.reverse as usize].src, l.dst);
    }
}

#[test]
fn hosts_are_rack_major_and_named() {
    let t = example();
    // Rack r, slot i is host r*4+i.
    assert_eq!(t.hosts()[9].rack, 2);
    assert_eq!(t.hosts()[9].slot, 1);
    assert_eq!(t.host_ref("r2h1"), Some(9));
    assert_eq!(t.host_ref("9"), Some(9));
    assert_eq!(t.host_ref("16"), None);
    assert_eq!(t.host_ref("tor1"), None, "a switch is not a host");
}

#[test]
fn paths() {
    let t = example();
    // Same rack: host up, host down.
    assert_eq!(check_paths(&t, 0, 1), 1);
    let mut p = Vec::new();
    t.path(0, 1, 0, &mut p);
    assert_eq!(hops_by_name(&t, &p), ["r0h0", "tor0", "r0h1"]);
    // Other rack: through the aggregated uplinks and the core.
    assert_eq!(check_paths(&t, 0, 13), 1);
    t.path(0, 13, 0, &mut p);
    assert_eq!(hops_by_name(&t, &p), ["r0h0", "tor0", "core", "tor3", "r3h1"]);
    assert_eq!(t.num_paths(5, 5), 0);
}
