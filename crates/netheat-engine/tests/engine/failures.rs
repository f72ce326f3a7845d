//! Link failures, re-routing and stranding.

use super::*;

#[test]
fn path_index_flow_reroutes_on_failure() {
    // Path 0 at 10G, path 1 at 5G. 20 Gbit on path 0; link 0 fails at t=1
    // after 10 Gbit; the remaining 10 Gbit go over path 1 at 5G -> t=3.
    let topo = ParallelPaths { caps: vec![10.0 * G, 5.0 * G] };
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), cfg);
    sim.add_flow(FlowSpec::new(1, 0, 1, 2.5e9, 0.0, Route::PathIndex(0))).unwrap();
    sim.schedule_capacity(1.0, 0, 0.0).unwrap();
    let r = sim.run();
    assert_close(rec(&r, 1).finish_s, 3.0, 1e-9);
    assert_eq!(rec(&r, 1).path_id, Some(1));
    assert_eq!(r.stats.reroutes, 1);
}

#[test]
fn ecmp_flow_moves_to_the_surviving_path() {
    // Two 10G paths; the ECMP flow's link 2k fails at t=0.5 and it continues
    // on the other path at the same rate: 10 Gbit -> finishes at 1.0 either way,
    // now on the other path.
    let topo = ParallelPaths { caps: vec![10.0 * G, 10.0 * G] };
    let mut first = None;
    for seed in 0..2 {
        let cfg = SimConfig { seed, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), cfg);
        sim.add_flow(FlowSpec::new(1, 0, 1, 1.25e9, 0.0, Route::Ecmp)).unwrap();
        sim.run_until(&mut netheat_engine::NoController, 0.5);
        let k = (0..2).find(|&k| sim.link_rate_bps(2 * k) > 0.0).unwrap();
        first.get_or_insert(k);
        sim.schedule_capacity(0.5, 2 * k, 0.0).unwrap();
        let r = sim.run_with(&mut netheat_engine::NoController);
        assert_close(rec(&r, 1).finish_s, 1.0, 1e-9);
        assert_eq!(rec(&r, 1).path_id, Some(1 - k));
    }
}

#[test]
fn stranded_without_alternative_then_resumes() {
    // One path only (10G): 20 Gbit, 10 sent by t=1, link 1 down on [1, 4),
    // remaining 10 Gbit from t=4 -> 5.0. A second flow's link never comes back.
    let topo = ParallelPaths { caps: vec![10.0 * G] };
    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), SimConfig::default());
    sim.add_flow(FlowSpec::new(1, 0, 1, 2.5e9, 0.0, Route::Ecmp)).unwrap();
    sim.schedule_capacity(1.0, 1, 0.0).unwrap();
    sim.run_until(&mut netheat_engine::NoController, 2.0);
    assert_eq!(sim.flow_rate_bps(1), Some(0.0));
    sim.schedule_capacity(4.0, 1, 10.0 * G).unwrap();
    let r = sim.run_with(&mut netheat_engine::NoController);
    assert_close(rec(&r, 1).finish_s, 5.0, 1e-9);
    assert_eq!(rec(&r, 1).stranded, None);
    assert_eq!(r.stats.stranded, 0);

    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), SimConfig::default());
    sim.add_flow(FlowSpec::new(1, 0, 1, 2.5e9, 0.0, Route::Ecmp)).unwrap();
    sim.schedule_capacity(1.0, 0, 0.0).unwrap();
    let r = sim.run();
    let f = rec(&r, 1);
    assert!(f.finish_s.is_nan() && f.fct_s.is_nan());
    assert_eq!(f.stranded, Some(netheat_engine::StrandReason::NoPathAvailable { link: 0 }));
    assert_close(f.bytes_delivered, 1.25e9, 1e-3);
    assert_eq!(r.stats.stranded, 1);
}

#[test]
fn explicit_route_waits_for_repair() {
    // 20 Gbit at 10G; down on [1, 3) -> finish at 4. The other flow sharing
    // nothing is unaffected (10 Gbit on link 1 -> 1.0).
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G, 10.0 * G]), None, cfg);
    sim.add_flows([flow(1, 2.5e9, 0.0, &[0]), flow(2, 1.25e9, 0.0, &[1])]).unwrap();
    sim.schedule_capacity(1.0, 0, 0.0).unwrap();
    sim.schedule_capacity(3.0, 0, 10.0 * G).unwrap();
    let r = sim.run();
    assert_close(rec(&r, 1).finish_s, 4.0, 1e-9);
    assert_close(rec(&r, 2).finish_s, 1.0, 1e-9);
}

#[test]
fn capacity_reduction_slows_flows() {
    // 20 Gbit at 10G; capacity halves at t=1 -> 10 Gbit left at 5G -> t=3.
    let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, SimConfig::default());
    sim.add_flow(flow(1, 2.5e9, 0.0, &[0])).unwrap();
    sim.schedule_capacity(1.0, 0, 5.0 * G).unwrap();
    let r = sim.run();
    assert_close(rec(&r, 1).finish_s, 3.0, 1e-9);
}
