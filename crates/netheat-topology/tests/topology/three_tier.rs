//! Clos/fat-tree: 2 pods x 2 racks x 2 hosts, 2 aggs per pod, 4 spines.

use netheat_core::Routing;
use netheat_topology::{Layer, NodeKind, Topology, TopologySpec};

use crate::common::{check_paths, hops_by_name, G};

fn small() -> Topology {
    Topology::build(&TopologySpec::three_tier(2, 2, 2, 2, 4, 10.0 * G, 10.0 * G, None)).unwrap()
}

#[test]
fn counts() {
    let t = small();
    // 8 hosts, 4 ToRs, 4 aggs, 4 spines.
    assert_eq!(t.nodes().len(), 20);
    assert_eq!(t.nodes().iter().filter(|n| n.kind == NodeKind::Agg).count(), 4);
    assert_eq!(t.nodes().iter().filter(|n| n.kind == NodeKind::Spine).count(), 4);
    // 8 host links, 4 ToRs x 2 uplinks, 4 aggs x 2 spines of their plane.
    let phys = |layer| t.links().iter().filter(|l| l.layer == layer).count() / 2;
    assert_eq!(phys(Layer::HostTor), 8);
    assert_eq!(phys(Layer::TorAgg), 8);
    assert_eq!(phys(Layer::AggSpine), 8);
    // Each ToR uplink of 10G is split over 2 aggs.
    let tor_agg = t.links().iter().find(|l| l.layer == Layer::TorAgg).unwrap();
    assert_eq!(tor_agg.capacity_bps, 5.0 * G);
    // Non-blocking aggregation: 2 ToRs x 5G up, split over 2 spines.
    let agg_spine = t.links().iter().find(|l| l.layer == Layer::AggSpine).unwrap();
    assert_eq!(agg_spine.capacity_bps, 5.0 * G);
}

#[test]
fn path_sets() {
    let t = small();
    // Same rack: 1; same pod: one per agg (2); other pod: one per spine (4).
    assert_eq!(check_paths(&t, 0, 1), 1);
    assert_eq!(check_paths(&t, 0, 2), 2);
    assert_eq!(check_paths(&t, 0, 7), 4);
    assert_eq!(t.hops(0, 7), 6);
    let mut p = Vec::new();
    t.path(0, 7, 3, &mut p);
    // Spine 3 is in plane 1 (spines 2,3 hang off agg 1 of each pod).
    assert_eq!(hops_by_name(&t, &p), ["r0h0", "tor0", "agg0-1", "spine3", "agg1-1", "tor3", "r3h1"]);
    // All four inter-pod paths are distinct.
    let all = t.all_paths(0, 7);
    for i in 0..4 {
        for j in i + 1..4 {
            assert_ne!(all[i], all[j]);
        }
    }
}

#[test]
fn baraat_scale_counts() {
    // 30 pods x 30 racks x 40 hosts, 1 Gbps, 2:1 at the ToR.
    let t = Topology::build(&TopologySpec::three_tier(30, 30, 40, 4, 16, 1.0 * G, 20.0 * G, None)).unwrap();
    assert_eq!(t.hosts().len(), 36_000);
    assert_eq!(t.racks().len(), 900);
    assert_eq!(t.num_paths(0, 35_999), 16);
    assert_eq!(t.num_paths(0, 41), 4);
    assert_eq!(t.summary().oversubscription[0].median, 2.0);
}

#[test]
fn fabric_border_hangs_off_every_spine() {
    use netheat_topology::BorderSpec;
    let mut spec = TopologySpec::three_tier(2, 2, 2, 2, 4, 10.0 * G, 10.0 * G, None);
    spec.border = Some(BorderSpec { switches: 2, link_bps: 40.0 * G });
    let t = Topology::build(&spec).unwrap();
    // 20 nodes as before plus 2 border switches; 2 x 4 spine-border links.
    assert_eq!(t.nodes().len(), 22);
    assert_eq!(t.borders().len(), 2);
    assert_eq!(t.links().iter().filter(|l| l.layer == Layer::SpineBorder).count(), 2 * 4 * 2);
    assert_eq!(t.nodes()[t.borders()[1] as usize].name, "border1");
    // Host-to-host routing is unchanged.
    assert_eq!(t.num_paths(0, 7), 4);
    let s = t.summary();
    assert_eq!(s.nodes.last(), Some(&(NodeKind::Border, 2)));
    assert_eq!(s.layers.last().unwrap().capacity_bps, 8.0 * 40.0 * G);
}
