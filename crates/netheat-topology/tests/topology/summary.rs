//! `topo show` figures: oversubscription, bisection, uplink classes.

use netheat_topology::{
    HostSpec, NodeKind, Provisioning, RackKind, RackSpec, StorageDevice, StorageKind, Topology, TopologySpec,
    UplinkClass,
};

use crate::common::G;

#[test]
fn two_tier_example() {
    let s = Topology::build(&TopologySpec::two_tier(4, 4, 10.0 * G, 10.0 * G)).unwrap().summary();
    assert_eq!(s.nodes, vec![(NodeKind::Host, 16), (NodeKind::Tor, 4), (NodeKind::Core, 1)]);
    assert_eq!(s.oversubscription.len(), 1);
    assert_eq!(s.oversubscription[0].median, 4.0);
    // Balanced cut: 2 racks x 10G uplink each way limit it to 20G.
    assert_eq!(s.bisection_bps, 20.0 * G);
}

#[test]
fn three_tier_agg_oversubscription() {
    // 4 racks of 4 x 10G per pod, ToR uplink 20G (2:1), agg uplink 10G.
    let spec = TopologySpec::three_tier(2, 4, 4, 2, 2, 10.0 * G, 20.0 * G, Some(10.0 * G));
    let s = Topology::build(&spec).unwrap().summary();
    assert_eq!(s.oversubscription[0].median, 2.0);
    // Each agg gets 4 ToRs x 10G and sends 10G up: 4:1.
    assert_eq!(s.oversubscription[1].median, 4.0);
    // min(hosts 320/2, ToRs 160/2, aggs 40/2)
    assert_eq!(s.bisection_bps, 20.0 * G);
}

#[test]
fn uplink_classes_against_guideline() {
    let mut disk_host = HostSpec::with_ports(1, 10.0 * G);
    disk_host.storage = vec![StorageDevice::typical(StorageKind::Hdd); 2]; // 16 TB
    let rack = |up: f64| RackSpec { kind: RackKind::Disk, host: disk_host.clone(), tor_uplink_bps: up * G };
    let mut spec = TopologySpec::two_tier(3, 10, 10.0 * G, 1.0);
    // 10 hosts x 16 TB = 160 TB per rack; guideline 0.25 Gbps per TB = 40G.
    spec.racks = vec![rack(60.0), rack(40.0), rack(20.0)];
    spec.provisioning = Provisioning { uplink_per_tb_bps: Some(0.25 * G), ..Provisioning::default() };
    let t = Topology::build(&spec).unwrap();
    let classes: Vec<UplinkClass> = t.racks().iter().map(|r| r.uplink_class).collect();
    assert_eq!(classes, vec![UplinkClass::High, UplinkClass::Medium, UplinkClass::Low]);
    assert!((t.racks()[0].uplink_ratio - 1.5).abs() < 1e-12);
    // Without a guideline the fleet median (40G per 160 TB) is used: same classes.
    spec.provisioning = Provisioning::default();
    let t = Topology::build(&spec).unwrap();
    assert_eq!(t.racks().iter().map(|r| r.uplink_class).collect::<Vec<_>>(), classes);
}
