//! Hand-computed shuffle completion times (moved from netheat-subways' tests).

use netheat_repro::subways::{run_shuffle, Pattern, Placement, ShuffleJob};
use netheat_subways::LbParams;

use crate::topo;

/// Type 1, loops of 6 on 2 clusters of 6 racks of 4 servers, 20G ToR uplinks.
const TWO_CLUSTERS: &str = "kind = \"subways\"\nwiring = \"type1\"\npods = 2\nracks-per-pod = 6\n\
    hosts-per-rack = 4\nhost-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\ntor-uplink = \"20Gbps\"\n\
    aggs-per-pod = 2\nspines = 2\n";

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
    let job = ShuffleJob::new(0, 2, 1.25e9);
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
    let job = ShuffleJob::new(0, 3, 1.0);
    assert!(run_shuffle(&t1, &job, "ecmp", &p, 1).unwrap_err().to_string().contains("do not fit"));
    let job = ShuffleJob::new(0, 2, 1.0);
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
    let job = ShuffleJob::new(1, 12, 1e6);
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
    let ok = ShuffleJob::new(0, 12, 1e7);
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

fn testbed(wiring: &str) -> netheat_topology::Topology {
    // The testbed file is Type 0; Type 1 is a loop of its 4 racks (as experiments/subways-testbed.toml).
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/topologies/subways-testbed.toml");
    let overrides = match wiring {
        "type0" => String::new(),
        w => format!("wiring = \"{w}\"\nloop-size = 4\n"),
    };
    let overrides = overrides.parse::<toml_edit::DocumentMut>().expect("overrides").as_table().clone();
    netheat_config::load_topology_overridden(&path, &overrides).expect("testbed topology")
}

#[test]
fn table2_testbed_respects_its_bottlenecks() {
    // §8.2: racks 0-2 (12 senders) send 4 flows of 100 MB to each of the 4
    // servers of rack 3: 192 flows, 19.2 GB = 153.6 Gb.
    // Type 0: everything comes down the receiver ToR's 2 x 500 Mbps
    // downlinks: at least 153.6 s. Type 1 (loop of 4): the receivers' eight
    // 500 Mbps ports take it all: at least 38.4 s; rack 1 shares no ToR with
    // rack 3, so its 51.2 Gb cross the fabric into ToRs 3 and 0 (2 x 1 Gbps):
    // at least 25.6 s.
    let mut job = ShuffleJob::new(0, 16, 100e6);
    job.pattern = Pattern::IntoLastRack;
    job.flows_per_pair = 4;
    let p = LbParams::default();
    let t0 = run_shuffle(&testbed("type0"), &job, "ecmp", &p, 1).unwrap();
    let t1 = run_shuffle(&testbed("type1"), &job, "ecmp", &p, 1).unwrap();
    assert_eq!((t0.flows, t1.flows), (192, 192));
    assert!(t0.completion_s >= 153.6 - 1e-6, "type 0: {}", t0.completion_s);
    assert!(t1.completion_s >= 38.4 - 1e-6, "type 1: {}", t1.completion_s);
    // Shortest-path ECMP sends racks 0 and 2 entirely through their shared
    // ToR: the receivers' ports (38.4 s) bind, and vanilla ECMP is slower.
    let short = run_shuffle(&testbed("type1"), &job, "ecmp-shortest", &p, 1).unwrap();
    assert!(short.completion_s >= 38.4 - 1e-6 && short.completion_s < t1.completion_s, "{short:?} vs {t1:?}");
}

#[test]
fn two_loops_split_the_job_between_loops() {
    // Type 1 with loops of 6 on 2 clusters of 6 racks of 4: loop 0 is
    // cluster 0, loop 1 cluster 1. 12 servers: 6 from rack 0 on (racks 0, 1)
    // and 6 from rack 6 on (racks 6, 7).
    let t = topo(TWO_CLUSTERS);
    let mut job = ShuffleJob::new(0, 12, 1e6);
    job.placement = Placement::TwoLoops;
    assert_eq!(job.members(&t).unwrap(), vec![0, 1, 2, 3, 4, 5, 24, 25, 26, 27, 28, 29]);
    // Type 2 (2 clusters per loop of 12): loop 0 interleaves racks 0, 6, 1, 7, ...
    // of both clusters; loop 1 racks 3, 9, 4, 10, ...
    let t2 = topo(
        "kind = \"subways\"\nwiring = \"type2\"\npods = 2\nracks-per-pod = 6\nhosts-per-rack = 2\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\nclusters-per-loop = 2\n\
         tor-uplink = \"10Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    );
    let loops = netheat_repro::subways::loops_in_order(&t2);
    assert_eq!(loops, vec![vec![0, 6, 1, 7, 2, 8], vec![3, 9, 4, 10, 5, 11]]);
    let mut job = ShuffleJob::new(0, 6, 1e6);
    job.placement = Placement::TwoLoops;
    // 3 servers each: racks 0 (hosts 0, 1) and 6 (host 12); racks 3 (6, 7) and 9 (18).
    assert_eq!(job.members(&t2).unwrap(), vec![0, 1, 12, 6, 7, 18]);
}

#[test]
fn detours_start_only_after_a_whole_detection_window() {
    // Rack 0 (4 servers, ports on ToRs 0 and 1) shuffles with rack 6 of the
    // other cluster: 16 x 2 flows cross the 2 x 20G uplinks of ToRs 0 and 1
    // (servers could send 80G), so both are hot from t = 0. The controller
    // learns it from the first full T_detect window: the first detour is at
    // T_detect exactly, whatever T_detect is; with a threshold the load never
    // reaches, never.
    let t = topo(TWO_CLUSTERS);
    let mut job = ShuffleJob::new(0, 8, 200e6);
    job.placement = Placement::TwoLoops;
    for t_detect in [0.01, 0.02] {
        let p = LbParams { t_rebind_s: t_detect, ..LbParams::default() };
        let r = run_shuffle(&t, &job, "detour", &p, 1).unwrap();
        assert!(r.detours > 0, "{r:?}");
        assert_eq!(r.first_detour_s, Some(t_detect), "{r:?}");
        let a = run_shuffle(&t, &job, "adaptive", &p, 1).unwrap();
        assert!(r.completion_s < a.completion_s, "detours help: {} vs {}", r.completion_s, a.completion_s);
    }
    let never = LbParams { hot_threshold: 1.0, ..LbParams::default() };
    let r = run_shuffle(&t, &job, "detour", &never, 1).unwrap();
    assert_eq!((r.detours, r.first_detour_s), (0, None));
}

#[test]
fn window_meter_averages_over_the_period() {
    // A flow that sent 6.25 MB on links 1 and 3 during a 10 ms period
    // averaged 5 Gbps on each, whatever its instantaneous rate at the end.
    let mut m = netheat_repro::subways::WindowMeter::new(4, 1);
    m.record(0, &[1, 3], 0.0);
    m.record(0, &[1, 3], 6.25e6);
    let r = m.close(0.01);
    assert_eq!(r, vec![0.0, 5e9, 0.0, 5e9]);
    assert_eq!(m.close(0.01), vec![0.0; 4]);
}
