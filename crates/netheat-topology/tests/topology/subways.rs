//! Subways wiring: Type 0, a Type 1 loop (p=2, l=12) and a Type 2 loop (c=2).

use netheat_core::Routing;
use netheat_topology::{Layer, Wiring};

use crate::common::{check_paths, hops_by_name, subways};

#[test]
fn type0_trunks_every_port_to_its_own_tor() {
    // 1 cluster of 4 racks, 3 hosts, p = 2: all ports to the own ToR.
    let t = subways(Wiring::Type0, 1, 4, 3, 2, 1, 1, 2, 0);
    assert_eq!(t.links().iter().filter(|l| l.layer == Layer::HostTor).count(), 4 * 3 * 2 * 2);
    for h in t.hosts() {
        assert!(h.ports.iter().all(|p| p.tor == h.rack));
    }
    // Same rack: 2 x 2 port pairs through the one ToR.
    assert_eq!(check_paths(&t, 0, 1), 4);
    // Other rack: 2 x 2 port pairs x 2 aggs.
    assert_eq!(check_paths(&t, 0, 3), 8);
    assert!(t.tors().iter().all(|tor| tor.server_ports == 6));
}

#[test]
fn type1_loop_p2_l12() {
    // One cluster of 12 racks forming one loop, 2 hosts per rack, 2 ports.
    let t = subways(Wiring::Type1, 1, 12, 2, 2, 12, 1, 2, 0);
    // Rack r wires port 0 to ToR r and port 1 to ToR r+1 (mod 12).
    for h in t.hosts() {
        assert_eq!(h.ports[0].tor, h.rack);
        assert_eq!(h.ports[1].tor, (h.rack + 1) % 12);
    }
    // Every ToR serves 2 hosts of its rack and 2 of the previous one.
    assert!(t.tors().iter().all(|tor| tor.server_ports == 4));
    assert_eq!(t.logical_rack(4), vec![6, 7, 8, 9]);
    assert_eq!(t.logical_rack(0), vec![0, 1, 22, 23], "the loop wraps around");
    assert!(t.racks().iter().all(|r| r.subways_loop == Some(0)));

    // Same rack: both ToRs are shared, two shortcut paths.
    assert_eq!(check_paths(&t, 6, 7), 2);
    // Adjacent racks 3 and 4 share ToR 4: one 2-hop shortcut.
    assert_eq!(t.shared_tors(6, 8), vec![4]);
    assert_eq!(check_paths(&t, 6, 8), 1);
    let mut p = Vec::new();
    t.path(6, 8, 0, &mut p);
    assert_eq!(hops_by_name(&t, &p), ["r3h0", "tor4", "r4h0"]);
    // Racks 3 and 5 share nothing: 2 x 2 ToR pairs x 2 aggs, 4 hops.
    assert!(t.shared_tors(6, 10).is_empty());
    assert_eq!(check_paths(&t, 6, 10), 8);
    assert_eq!(t.hops(6, 10), 4);
    // Racks 11 and 0 are neighbours across the wrap.
    assert_eq!(t.shared_tors(22, 0), vec![0]);
}

#[test]
fn type1_multihoming_is_l_equal_p() {
    // l = p = 2: racks pair up and each server reaches both ToRs of its pair.
    let t = subways(Wiring::Type1, 1, 4, 1, 2, 2, 1, 1, 0);
    let tors: Vec<Vec<u32>> = t.hosts().iter().map(|h| h.ports.iter().map(|p| p.tor).collect()).collect();
    assert_eq!(tors, vec![vec![0, 1], vec![1, 0], vec![2, 3], vec![3, 2]]);
    assert_eq!(check_paths(&t, 0, 1), 2);
    assert_eq!(t.racks()[2].subways_loop, Some(1));
}

#[test]
fn type2_loop_spans_two_clusters() {
    // 2 clusters x 6 racks, loops of l = 4 taking 2 racks of each cluster,
    // 1 host per rack, p = 2, 2 aggs per cluster, 2 spines.
    let t = subways(Wiring::Type2, 2, 6, 1, 2, 4, 2, 2, 2);
    // Loop 0 is A0, B0, A1, B1 (cluster A = racks 0..5, B = racks 6..11).
    let tors = |h: usize| -> Vec<u32> { t.hosts()[h].ports.iter().map(|p| p.tor).collect() };
    assert_eq!(tors(0), vec![0, 6]); // A0 -> A0, B0
    assert_eq!(tors(6), vec![6, 1]); // B0 -> B0, A1
    assert_eq!(tors(1), vec![1, 7]); // A1 -> A1, B1
                                     // B1 -> B1, A0 (wrap).
    assert_eq!(tors(7), vec![7, 0]);
    // The next loop starts at A2.
    assert_eq!(tors(2), vec![2, 8]);
    assert_eq!(t.racks()[0].subways_loop, t.racks()[7].subways_loop);
    assert_ne!(t.racks()[0].subways_loop, t.racks()[2].subways_loop);
    // A cross-cluster shortcut: A0 and B1 share ToR A0.
    assert_eq!(t.shared_tors(0, 7), vec![0]);
    assert_eq!(check_paths(&t, 0, 7), 1);
    let mut p = Vec::new();
    t.path(0, 7, 0, &mut p);
    assert_eq!(hops_by_name(&t, &p), ["r0h0", "tor0", "r7h0"]);
    // A0 and A1 share no ToR; the same-cluster pairs (A0,A1) and (B0,B1)
    // are 4 hops, through either of 2 aggs: 4 paths.
    assert_eq!(check_paths(&t, 0, 1), 4);
    // A0 and A4 (another loop): no shortcut, ToR pairs (A0,A4) and (B0,B4) in the
    // same cluster: 2 x 2 aggs.
    assert_eq!(check_paths(&t, 0, 4), 4);
    // Every ToR still has p x hosts server ports.
    assert!(t.tors().iter().all(|tor| tor.server_ports == 2));
}

#[test]
fn heterogeneous_ports_weight_by_speed() {
    use netheat_topology::{FabricSpec, HostSpec, SubwaysSpec, Topology, TopologySpec};
    let mut host = HostSpec::with_ports(2, 10e9);
    host.ports_bps = vec![10e9, 25e9];
    let spec = TopologySpec::uniform(
        FabricSpec::Clos {
            pods: 1,
            aggs_per_pod: 1,
            spines: 0,
            agg_uplink_bps: None,
            subways: Some(SubwaysSpec { wiring: Wiring::Type1, loop_size: 4, clusters_per_loop: 1 }),
        },
        4,
        1,
        host,
        35e9,
    );
    let t = Topology::build(&spec).unwrap();
    // Racks 0 and 2 share no ToR: 4 port pairs; source port 0 (10G) carries
    // 2/7 of the weight, port 1 (25G) 5/7.
    let n = t.num_paths(0, 2);
    assert_eq!(n, 4);
    let w: Vec<f64> = (0..n).map(|k| t.path_weight(0, 2, k)).collect();
    let total: f64 = w.iter().sum();
    let src_port0 = (w[0] + w[1]) / total;
    assert!((src_port0 - 2.0 / 7.0).abs() < 1e-12, "{src_port0}");
}
