//! The storage cluster's pipeline model and the CCP experiment point.
//! (Sinbad's simulation is a scenario; its tests are netheat-scenario's.)

use std::collections::BTreeMap;

use netheat_engine::{FlowSpec, Network, NoController, Route, SimConfig, Simulation};
use netheat_repro::ccp::{ccp_point, CcpSpec};
use netheat_storage::Cluster;

#[test]
fn pipeline_write_time_is_size_over_min_of_disk_and_link_share() {
    // 2 racks x 2 hosts, 1 Gbps hosts, no oversubscription (2 Gbps rack
    // links), disk 400 Mbps. One 100 MB block: 100e6*8/400e6 = 2 s.
    let c = Cluster::two_tier(2, 2, 1e9, 1.0, Some(4e8), 1e12, &[], &[]);
    let path = c.pipeline_path(0, &[0, 2, 3]);
    // A competing flow into host 2 takes half of its 1 Gbps downlink
    // only when the pipeline wants more than 500 Mbps: with a 400 Mbps
    // disk it does not, so still 2 s. Without disks (in memory) the
    // pipeline gets the 500 Mbps fair share: 1.6 s.
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        SimConfig { end_s: Some(100.0), ..SimConfig::default() },
    );
    sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(path))).unwrap();
    sim.add_flow(FlowSpec::new(
        2,
        1,
        2,
        1e12,
        0.0,
        Route::Explicit(vec![c.hosts[1].up[0], c.racks[0].up[0], c.racks[1].down[0], c.hosts[2].down[0]]),
    ))
    .unwrap();
    let r = sim.run_with(&mut NoController);
    assert!((r.flows[0].fct_s - 2.0).abs() < 1e-9, "{}", r.flows[0].fct_s);
    let m = Cluster::two_tier(2, 2, 1e9, 1.0, None, 1e12, &[], &[]);
    let mut sim = Simulation::new(
        Network::new(m.link_bps.clone()),
        None,
        SimConfig { end_s: Some(100.0), ..SimConfig::default() },
    );
    sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(m.pipeline_path(0, &[0, 2, 3])))).unwrap();
    sim.add_flow(FlowSpec::new(
        2,
        1,
        2,
        1e12,
        0.0,
        Route::Explicit(vec![m.hosts[1].up[0], m.racks[0].up[0], m.racks[1].down[0], m.hosts[2].down[0]]),
    ))
    .unwrap();
    let r = sim.run_with(&mut NoController);
    assert!((r.flows[0].fct_s - 1.6).abs() < 1e-9, "{}", r.flows[0].fct_s);
}

#[test]
fn ccp_cuts_p95_network_latency_and_respects_balance_on_high_medium() {
    let s =
        CcpSpec { racks: 6, hosts_per_rack: 4, client_racks: 2, prepopulate: 2000, ops: 5000, ..CcpSpec::default() };
    let v: BTreeMap<_, _> = ccp_point(&s).unwrap().into_iter().collect();
    // Uniform sends a third of the reads to Low racks with 1/16 of a
    // High uplink: CCP must cut the p95 network latency.
    assert!(v["p95_network_latency_reduction_pct"] > 50.0, "{v:?}");
    assert_eq!(v["placement_failures"], 0.0);
    // With all classes equal CCP degenerates to uniform ranking ties:
    // no systematic gain (|reduction| small).
    let eq = CcpSpec { class_factor: [1.0, 1.0, 1.0], ..s };
    let w: BTreeMap<_, _> = ccp_point(&eq).unwrap().into_iter().collect();
    assert!(w["p95_network_latency_reduction_pct"] < v["p95_network_latency_reduction_pct"], "{w:?}");
}

#[test]
fn ccp_rebalancer_keeps_storage_within_the_threshold() {
    // 2000 chunks of 0.55 MB mean x 3 replicas on 24 hosts of 1 GB:
    // about 14% used on average, and CCP piles them on High racks.
    let s = CcpSpec {
        racks: 6,
        hosts_per_rack: 4,
        client_racks: 2,
        prepopulate: 2000,
        ops: 5000,
        rebalance_every_ops: 0,
        ..CcpSpec::default()
    };
    let off: BTreeMap<_, _> = ccp_point(&s).unwrap().into_iter().collect();
    assert!(off["storage_imbalance_pct"] > 10.0, "{off:?}");
    assert_eq!(off["rebalance_moves"], 0.0);
    let on: BTreeMap<_, _> =
        ccp_point(&CcpSpec { rebalance_every_ops: 500, ..s.clone() }).unwrap().into_iter().collect();
    assert!(on["storage_imbalance_pct"] <= 10.0 + 1e-9, "{on:?}");
    // Here 500 ops move the imbalance by about 1% of capacity; the
    // rebalancer acts when the next check could cross the threshold, so
    // no check finds a host past it. Also for seeds where a check found
    // 10.15-10.20% when the rebalancer assumed no faster growth than the
    // fastest seen (see `DRIFT_SAFETY`).
    assert!(on["storage_imbalance_max_pct"] <= 10.0 + 1e-9, "{on:?}");
    for seed in [21, 76, 89] {
        let r: BTreeMap<_, _> =
            ccp_point(&CcpSpec { rebalance_every_ops: 500, seed, ..s.clone() }).unwrap().into_iter().collect();
        assert!(r["storage_imbalance_max_pct"] <= 10.0 + 1e-9, "seed {seed}: {r:?}");
    }
    assert!(on["rebalance_moves"] > 0.0 && on["rebalanced_bytes_pct"] > 0.0, "{on:?}");
    // A target above the threshold is refused, naming the key.
    let e = ccp_point(&CcpSpec { rebalance_target: 0.2, ..s }).unwrap_err().to_string();
    assert!(e.contains("rebalance-target"), "{e}");
    // Moves are traffic, yet CCP still beats uniform.
    assert!(on["p95_network_latency_reduction_pct"] > 50.0, "{on:?}");
}

/// The paper's setting on 6 storage racks of 4 hosts (10 Gbps, 4:1 at the
/// guideline: 10 Gbps uplinks at factor 1).
fn paper_small() -> CcpSpec {
    CcpSpec { racks: 6, hosts_per_rack: 4, client_racks: 2, prepopulate: 2000, ops: 5000, ..CcpSpec::paper() }
}

#[test]
fn ccp_paper_setting_classes_and_load_by_hand() {
    let v: BTreeMap<_, _> = ccp_point(&paper_small()).unwrap().into_iter().collect();
    // Spread 2 over 6 racks: factors 2/3 + (2/3) i / 5 = 0.667, 0.8, 0.933,
    // 1.067, 1.2, 1.333. The guideline is the datacenter model's median
    // (element 3 of 6, sorted): 1.067. High at >= 1.2 x 1.067 = 1.28: one
    // rack; Low below 0.8 x 1.067 = 0.853: two racks; three Medium.
    assert_eq!((v["racks_high"], v["racks_medium"], v["racks_low"]), (1.0, 3.0, 2.0), "{v:?}");
    // Uniform: every rack serves 1/6 of the reads, the smallest uplink at
    // 75% (writes go to the replicas from the client, so only reads leave
    // storage racks). Low class: 2 x 0.75 x 0.667 / (0.667 + 0.8) = 0.682.
    let low = v["read_uplink_util_low_uniform"];
    assert!((low - 0.682).abs() < 0.1, "{low}");
    assert_eq!(v["read_uplink_util_low_uniform"], v["uplink_util_low_uniform"]);
    // CCP (strict priority) moves read load from the Low rack to the High one.
    assert!(v["read_uplink_util_high_policy"] > v["read_uplink_util_high_uniform"], "{v:?}");
    assert!(v["read_uplink_util_low_policy"] < v["read_uplink_util_low_uniform"], "{v:?}");
    assert!(v["read_new_share"] > 0.0 && v["read_new_share"] < 1.0, "{v:?}");
    assert_eq!(v["placement_failures"], 0.0);
}

#[test]
fn ccp_places_new_chunks_only_so_reads_of_old_chunks_keep_their_network_latency() {
    // Section 5.2: CCP places new chunks only. The store before the run is
    // uniform's in both runs; when reads touch only those chunks, they take
    // the same replicas over the same links (storage uplinks, client
    // downlinks) and the writes, fanned out from the client, use none of
    // them: the read network latency cannot change. Disks are shared with
    // the writes, so the total may.
    let s = CcpSpec { read_written: false, ..paper_small() };
    let v: BTreeMap<_, _> = ccp_point(&s).unwrap().into_iter().collect();
    assert_eq!(v["read_new_share"], 0.0);
    let (a, b) = (v["p95_network_latency_s_read_uniform"], v["p95_network_latency_s_read_policy"]);
    assert!(a > 0.0 && (a - b).abs() <= 1e-9 * a, "{a} vs {b}");
    // Had the store been placed by CCP, the reads would differ.
    let w: BTreeMap<_, _> = ccp_point(&CcpSpec { prepopulate_policy: None, ..s }).unwrap().into_iter().collect();
    assert!(w["p95_network_latency_reduction_pct_read"].abs() > 1.0, "{w:?}");
}
