//! Capacity changes and failures compile to per-link records.

use netheat_topology::{EventAction, EventSpec, EventTarget, Topology, TopologySpec};

use crate::common::G;

#[test]
fn half_uplink_then_restore() {
    let mut spec = TopologySpec::two_tier(4, 4, 10.0 * G, 10.0 * G);
    spec.events = vec![
        EventSpec {
            at_s: 600.0,
            action: EventAction::Restore,
            target: EventTarget::TorUplinks(vec![1]),
            key: "events[0]".into(),
        },
        EventSpec {
            at_s: 60.0,
            action: EventAction::Scale(0.5),
            target: EventTarget::TorUplinks(vec![1, 2]),
            key: "events[1]".into(),
        },
    ];
    let t = Topology::build(&spec).unwrap();
    let ev = t.events();
    // 2 racks x 2 directions at 60 s, then 1 rack x 2 directions at 600 s.
    assert_eq!(ev.len(), 6);
    assert!(ev[..4].iter().all(|e| e.time_s == 60.0 && e.capacity_bps == 5.0 * G));
    assert!(ev[4..].iter().all(|e| e.time_s == 600.0 && e.capacity_bps == 10.0 * G));
    let up = t.tors()[1].up[0];
    assert!(ev.iter().any(|e| e.link == up));
}

#[test]
fn node_failure_takes_all_its_links() {
    let mut spec = TopologySpec::two_tier(4, 4, 10.0 * G, 10.0 * G);
    let tor2 = 16 + 2; // hosts first, then ToRs
    spec.events = vec![EventSpec {
        at_s: 1.0,
        action: EventAction::Fail,
        target: EventTarget::Nodes(vec![tor2]),
        key: "events[0]".into(),
    }];
    let t = Topology::build(&spec).unwrap();
    // 4 host links + 1 uplink, both directions.
    assert_eq!(t.events().len(), 10);
    assert!(t.events().iter().all(|e| e.capacity_bps == 0.0));
}

#[test]
fn missing_rack_is_an_error() {
    let mut spec = TopologySpec::two_tier(4, 4, 10.0 * G, 10.0 * G);
    spec.events = vec![EventSpec {
        at_s: 1.0,
        action: EventAction::Fail,
        target: EventTarget::TorUplinks(vec![7]),
        key: "events[0]".into(),
    }];
    let err = Topology::build(&spec).unwrap_err();
    assert_eq!(err.key, "events[0].racks");
    assert!(err.reason.contains("rack 7 does not exist"), "{}", err.reason);
}
