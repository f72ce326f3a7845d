//! What a ToR failure disconnects under Type 0 and Type 1.

use netheat_subways::failures::tor_failure;

use crate::topo;

#[test]
fn a_tor_failure_strands_a_type0_rack_but_no_type1_server() {
    let body = "pods = 1\nracks-per-pod = 4\nhosts-per-rack = 3\nhost-link = \"10Gbps\"\nports-per-host = 2\n\
                tor-uplink = \"20Gbps\"\naggs-per-pod = 1\nspines = 1\n";
    let t0 = topo(&format!("kind = \"subways\"\nwiring = \"type0\"\n{body}"));
    let t1 = topo(&format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 4\n{body}"));
    let f0 = tor_failure(&t0, 1);
    assert_eq!(f0.disconnected, vec![3, 4, 5]);
    // Type 1: the servers of rack 1 keep their port on ToR 2; servers of rack 0
    // lose one of their two ports. Half the port capacity of 6 servers is gone.
    let f1 = tor_failure(&t1, 1);
    assert!(f1.disconnected.is_empty());
    assert_eq!(f1.degraded, vec![0, 1, 2, 3, 4, 5]);
    assert!((f1.lost_port_bps - 6.0 * 10e9).abs() < 1e-6);
    assert!((f0.lost_port_bps - 6.0 * 10e9).abs() < 1e-6);
}
