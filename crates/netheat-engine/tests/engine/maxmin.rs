//! Weighted max-min fairness: hand-computed rates and completion times.

use super::*;
use netheat_engine::max_min_rates;

const GB125: f64 = 1.25e9; // 10 Gbit

#[test]
fn three_flows_one_link_finish_at_3_5_6() {
    // 10 Gbps shared by 10, 20, 30 Gbit. All at 10/3 until t=3 (flow 1 done,
    // 10 Gbit each sent); then 5 each: flow 2 has 10 left -> t=5; flow 3 has
    // 10 left at t=5, alone at 10 -> t=6.
    let r = run(
        vec![10.0 * G],
        vec![flow(1, GB125, 0.0, &[0]), flow(2, 2.0 * GB125, 0.0, &[0]), flow(3, 3.0 * GB125, 0.0, &[0])],
    );
    assert_close(rec(&r, 1).finish_s, 3.0, 1e-9);
    assert_close(rec(&r, 2).finish_s, 5.0, 1e-9);
    assert_close(rec(&r, 3).finish_s, 6.0, 1e-9);
    assert_eq!(r.stats.flows_completed, 3);
    assert_close(rec(&r, 3).fct_s, 6.0, 1e-9);
}

#[test]
fn two_bottlenecks() {
    // Link A (0) carries f1, f2; link B (1) carries f2, f3, f4; both 10G.
    // Max-min: B saturates first at 10/3 each (f2, f3, f4); A gives the
    // remaining 20/3 to f1.
    let c = [10.0 * G, 10.0 * G];
    let inf = f64::INFINITY;
    let rates = max_min_rates(
        &c,
        &[(vec![0], 1.0, inf, 0), (vec![0, 1], 1.0, inf, 0), (vec![1], 1.0, inf, 0), (vec![1], 1.0, inf, 0)],
    );
    let want = [20.0 / 3.0 * G, 10.0 / 3.0 * G, 10.0 / 3.0 * G, 10.0 / 3.0 * G];
    for (r, w) in rates.iter().zip(want) {
        assert_close(*r, w, 1e-3);
    }
    // Sizes (Gbit): f1 20, f2 15, f3 5, f4 30.
    // t=1.5: f3 done (5 at 10/3). Sent: f1 10, f2 5, f4 5.
    // Then B: f2, f4 at 5; A: f1 at 10-5 = 5. f1: 10 left -> t=3.5;
    // f2: 10 left -> t=3.5. f4: 25 - 10 = 15 left at t=3.5, alone at 10 -> 5.0.
    let g = GB125 / 10.0; // bytes per Gbit
    let r = run(
        c.to_vec(),
        vec![
            flow(1, 20.0 * g, 0.0, &[0]),
            flow(2, 15.0 * g, 0.0, &[0, 1]),
            flow(3, 5.0 * g, 0.0, &[1]),
            flow(4, 30.0 * g, 0.0, &[1]),
        ],
    );
    assert_close(rec(&r, 3).finish_s, 1.5, 1e-9);
    assert_close(rec(&r, 1).finish_s, 3.5, 1e-9);
    assert_close(rec(&r, 2).finish_s, 3.5, 1e-9);
    assert_close(rec(&r, 4).finish_s, 5.0, 1e-9);
}

#[test]
fn late_arrival() {
    // f1 alone at 10G on [0, 0.5): 5 Gbit sent; then 5G each: f1 done at 1.5,
    // f2 has sent 5 of 10, alone at 10G -> 2.0.
    let r = run(vec![10.0 * G], vec![flow(1, GB125, 0.0, &[0]), flow(2, GB125, 0.5, &[0])]);
    assert_close(rec(&r, 1).finish_s, 1.5, 1e-9);
    assert_close(rec(&r, 2).finish_s, 2.0, 1e-9);
    assert_close(rec(&r, 2).fct_s, 1.5, 1e-9);
}

#[test]
fn a_flow_that_slows_down_and_speeds_up_again() {
    // f1 (10 Gbit) alone at 10G would finish at 1.0. f2 (2 Gbit) arrives at
    // 0.2: both at 5G, f2 done at 0.6; f1 has sent 2 + 2 = 4 Gbit, 6 left
    // alone at 10G -> 1.2. f1 keeps its heap entry for 1.0 while it is
    // slower; that entry must move to 1.2 when it reaches the top.
    let g = GB125 / 10.0;
    let r = run(vec![10.0 * G], vec![flow(1, 10.0 * g, 0.0, &[0]), flow(2, 2.0 * g, 0.2, &[0])]);
    assert_close(rec(&r, 2).finish_s, 0.6, 1e-9);
    assert_close(rec(&r, 1).finish_s, 1.2, 1e-9);
    assert_eq!(r.stats.events, 4);
}

#[test]
fn weights_split_two_to_one() {
    // Weight 2 vs 1: 20/3 and 10/3 Gbps. f1 (10 Gbit) done at 1.5; f2 sent 5,
    // then 10G for 0.5 s -> 2.0.
    let inf = f64::INFINITY;
    let rates = max_min_rates(&[9.0], &[(vec![0], 2.0, inf, 0), (vec![0], 1.0, inf, 0)]);
    assert_close(rates[0], 6.0, 1e-12);
    assert_close(rates[1], 3.0, 1e-12);
    let r = run(vec![10.0 * G], vec![flow(1, GB125, 0.0, &[0]).with_weight(2.0), flow(2, GB125, 0.0, &[0])]);
    assert_close(rec(&r, 1).finish_s, 1.5, 1e-9);
    assert_close(rec(&r, 2).finish_s, 2.0, 1e-9);
}

#[test]
fn rate_cap_leaves_rest_to_others() {
    // f1 capped at 2G, f2 gets 8G: f2 (10 Gbit) done at 1.25, f1 has sent 2.5
    // and keeps 2G for 7.5 Gbit -> 1.25 + 3.75 = 5.0.
    let r = run(vec![10.0 * G], vec![flow(1, GB125, 0.0, &[0]).with_rate_cap(2.0 * G), flow(2, GB125, 0.0, &[0])]);
    assert_close(rec(&r, 2).finish_s, 1.25, 1e-9);
    assert_close(rec(&r, 1).finish_s, 5.0, 1e-9);
}

#[test]
fn capped_arrival_on_slack_links_uses_shortcut() {
    // Link of 10G with one flow capped at 3G; a second capped 3G flow fits in
    // the slack. Both 3 Gbit -> both finish at 1.0, no recomputation needed.
    let g = GB125 / 10.0;
    let r = run(
        vec![10.0 * G],
        vec![flow(1, 3.0 * g, 0.0, &[0]).with_rate_cap(3.0 * G), flow(2, 3.0 * g, 0.0, &[0]).with_rate_cap(3.0 * G)],
    );
    assert_close(rec(&r, 1).finish_s, 1.0, 1e-12);
    assert_close(rec(&r, 2).finish_s, 1.0, 1e-12);
    assert_eq!(r.stats.fast_path, 2);
    assert_eq!(r.stats.recomputations, 0);
}

#[test]
fn degenerate_flows_complete_at_start() {
    let r =
        run(vec![10.0 * G], vec![flow(1, 0.0, 2.0, &[0]), FlowSpec::new(2, 3, 3, 1e9, 1.0, Route::Explicit(vec![]))]);
    assert_eq!(rec(&r, 1).finish_s, 2.0);
    assert_eq!(rec(&r, 2).finish_s, 1.0);
    assert_eq!(rec(&r, 2).fct_s, 0.0);
}

#[test]
fn input_errors_are_reported() {
    use netheat_engine::EngineError;
    let mut sim = Simulation::new(Network::new(vec![1.0]), None, SimConfig::default());
    assert!(matches!(sim.add_flow(flow(1, 1.0, 0.0, &[3])), Err(EngineError::LinkOutOfRange { .. })));
    assert!(matches!(sim.add_flow(flow(1, -1.0, 0.0, &[0])), Err(EngineError::InvalidBytes { .. })));
    assert!(matches!(sim.add_flow(flow(1, 1.0, f64::NAN, &[0])), Err(EngineError::InvalidStart { .. })));
    assert!(matches!(sim.add_flow(flow(1, 1.0, 0.0, &[0]).with_weight(0.0)), Err(EngineError::InvalidWeight { .. })));
    assert!(matches!(sim.add_flow(FlowSpec::new(1, 0, 1, 1.0, 0.0, Route::Ecmp)), Err(EngineError::NoRouting { .. })));
    sim.add_flow(flow(1, 1.0, 0.0, &[0])).unwrap();
    assert_eq!(sim.add_flow(flow(1, 1.0, 0.0, &[0])), Err(EngineError::DuplicateFlowId(1)));
    sim.run_until(&mut netheat_engine::NoController, 5.0);
    let e = sim.add_flow(flow(2, 1.0, 1.0, &[0])).unwrap_err();
    assert!(matches!(e, EngineError::StartBeforeNow { .. }));
    assert!(e.to_string().contains("before the current simulation time"), "{e}");
}

#[test]
fn paths_longer_than_the_inline_positions() {
    // Flow 0 (20 Gbit) crosses 12 links of 10G (0..12). Each link k also
    // carries a long one-hop flow C (40 Gbit) and a short one B (10 Gbit),
    // listed as [C, B, flow 0]. Three flows per link: 10/3 each, so every B
    // is done at 3 s, which moves flow 0 into B's place in every list (from
    // hop 8 on, outside the inline positions). Then 5 each: flow 0 has 10
    // Gbit left -> 5 s; C has 20 left at 5 s, alone at 10 -> 7 s.
    let caps = vec![10.0 * G; 12];
    let long: Vec<LinkId> = (0..12).collect();
    let mut flows: Vec<_> = (0..12u32).map(|k| flow(100 + u64::from(k), 4.0 * GB125, 0.0, &[k])).collect();
    flows.extend((0..12u32).map(|k| flow(200 + u64::from(k), GB125, 0.0, &[k])));
    flows.push(flow(0, 2.0 * GB125, 0.0, &long));
    let r = run(caps, flows);
    for k in 0..12 {
        assert_close(rec(&r, 200 + k).finish_s, 3.0, 1e-9);
        assert_close(rec(&r, 100 + k).finish_s, 7.0, 1e-9);
    }
    assert_close(rec(&r, 0).finish_s, 5.0, 1e-9);
}
