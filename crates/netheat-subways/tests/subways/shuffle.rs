//! Hand-computed shuffle completion times.

use netheat_subways::{run_shuffle, LbParams, ShuffleJob};

use crate::topo;

const PAIR: &str = "pods = 1\nracks-per-pod = 2\nhosts-per-rack = 1\nhost-link = \"10Gbps\"\nports-per-host = 2\n\
                    tor-uplink = \"5Gbps\"\naggs-per-pod = 1\nspines = 1\n";

#[test]
fn a_shortcut_through_the_shared_tor_beats_the_uplink() {
    // Two racks of one server with two 10G ports. Type 0: both ports on the
    // server's own ToR, so the two servers talk through the 5G ToR uplinks:
    // 1.25 GB each way at 5 Gbps = 2 s. Type 1 with loop size 2: each server
    // has a port on both ToRs, so the flows take a shortcut through a shared
    // ToR at 10 Gbps: 1 s.
    let t0 = topo(&format!("kind = \"subways\"\nwiring = \"type0\"\n{PAIR}"));
    let t1 = topo(&format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 2\n{PAIR}"));
    let job = ShuffleJob { first_rack: 0, nodes: 2, bytes_per_pair: 1.25e9, failed_tor: None };
    for policy in ["ecmp", "adaptive", "detour"] {
        let r0 = run_shuffle(&t0, &job, policy, &LbParams::default(), 1).unwrap();
        let r1 = run_shuffle(&t1, &job, policy, &LbParams::default(), 1).unwrap();
        assert!((r0.completion_s - 2.0).abs() < 1e-9, "{policy} type 0: {}", r0.completion_s);
        assert!((r1.completion_s - 1.0).abs() < 1e-9, "{policy} type 1: {}", r1.completion_s);
        assert_eq!(r1.flows, 2);
    }
}

#[test]
fn bad_jobs_and_unknown_policies_are_errors() {
    let t1 = topo(&format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 2\n{PAIR}"));
    let p = LbParams::default();
    let job = ShuffleJob { first_rack: 0, nodes: 3, bytes_per_pair: 1.0, failed_tor: None };
    assert!(run_shuffle(&t1, &job, "ecmp", &p, 1).unwrap_err().to_string().contains("do not fit"));
    let job = ShuffleJob { first_rack: 0, nodes: 2, bytes_per_pair: 1.0, failed_tor: None };
    let e = run_shuffle(&t1, &job, "teleport", &p, 1).unwrap_err().to_string();
    assert!(e.contains("adaptive, detour, ecmp"), "{e}");
    let bad = LbParams { aggressiveness: 0.0, ..LbParams::default() };
    assert!(run_shuffle(&t1, &job, "adaptive", &bad, 1).unwrap_err().to_string().contains("aggressiveness"));
}

#[test]
fn same_seed_same_completion() {
    let t = topo(
        "kind = \"subways\"\nwiring = \"type1\"\npods = 1\nracks-per-pod = 6\nhosts-per-rack = 4\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\ntor-uplink = \"20Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    );
    let job = ShuffleJob { first_rack: 1, nodes: 12, bytes_per_pair: 1e6, failed_tor: None };
    for policy in ["ecmp", "adaptive", "detour"] {
        let a = run_shuffle(&t, &job, policy, &LbParams::default(), 5).unwrap();
        let b = run_shuffle(&t, &job, policy, &LbParams::default(), 5).unwrap();
        assert_eq!(a, b, "{policy}");
    }
}

#[test]
fn a_failed_tor_strands_type0_but_only_slows_type1() {
    // One cluster, 4 racks of 3 servers with two 10G ports; ToR 1 fails.
    // Type 0: rack 1's servers lose both ports, so the 12-server job's flows
    // from them (3 x 11) and to them from the others (9 x 3), 60 in all, are
    // stranded and the job never ends.
    // Type 1 (loop 4): every server keeps a port; the job completes, later
    // than without the failure.
    let body = "pods = 1\nracks-per-pod = 4\nhosts-per-rack = 3\nhost-link = \"10Gbps\"\nports-per-host = 2\n\
                tor-uplink = \"20Gbps\"\naggs-per-pod = 1\nspines = 1\n";
    let t0 = topo(&format!("kind = \"subways\"\nwiring = \"type0\"\n{body}"));
    let t1 = topo(&format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 4\n{body}"));
    let p = LbParams::default();
    let ok = ShuffleJob { first_rack: 0, nodes: 12, bytes_per_pair: 1e7, failed_tor: None };
    let bad = ShuffleJob { failed_tor: Some(1), ..ok.clone() };
    for policy in ["ecmp", "adaptive"] {
        let r = run_shuffle(&t0, &bad, policy, &p, 1).unwrap();
        assert_eq!(r.stranded, 3 * 11 + 9 * 3, "{policy}");
        assert!(r.completion_s.is_nan());
        let healthy = run_shuffle(&t1, &ok, policy, &p, 1).unwrap();
        let failed = run_shuffle(&t1, &bad, policy, &p, 1).unwrap();
        assert_eq!(failed.stranded, 0, "{policy}");
        assert!(
            failed.completion_s > healthy.completion_s,
            "{policy}: {} vs {}",
            failed.completion_s,
            healthy.completion_s
        );
    }
}
