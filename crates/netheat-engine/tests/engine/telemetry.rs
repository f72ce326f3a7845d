//! Exact per-window link utilisation.

use super::*;

#[test]
fn windows_of_a_half_second_offset_flow() {
    // 10 Gbit at 10G from 0.5 s: busy [0.5, 1.5) -> windows 0.5, 0.5.
    // 20 Gbit from 0.5 s on link 1: busy [0.5, 2.5) -> 0.5, 1.0, 0.5.
    let r = run(vec![10.0 * G, 10.0 * G], vec![flow(1, 1.25e9, 0.5, &[0]), flow(2, 2.5e9, 0.5, &[1])]);
    let w = &r.link_windows;
    assert_eq!(w.link(0), &[(0, 0.625e9), (1, 0.625e9)]);
    assert_eq!(w.utilization(0, 0), 0.5);
    assert_eq!(w.utilization(0, 1), 0.5);
    assert_eq!(w.link(1), &[(0, 0.625e9), (1, 1.25e9), (2, 0.625e9)]);
    assert_eq!(w.utilization(1, 1), 1.0);
    for s in w.iter() {
        assert_eq!(s.utilization, s.bytes * 8.0 / (10.0 * G * 1.0));
    }
    assert_eq!(w.iter().count(), 5);
}

#[test]
fn telemetry_is_flushed_to_end_time() {
    // A 40 Gbit flow at 10G running past end_s = 2.5: windows 1, 1, 0.5.
    let cfg = SimConfig { window_s: 1.0, end_s: Some(2.5), ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, cfg);
    sim.add_flow(flow(1, 5e9, 0.0, &[0])).unwrap();
    let r = sim.run();
    assert_eq!(r.end_s, 2.5);
    let u: Vec<f64> = r.link_windows.iter().map(|s| s.utilization).collect();
    assert_eq!(u, vec![1.0, 1.0, 0.5]);
    assert!(!rec(&r, 1).finished());
    assert_close(rec(&r, 1).bytes_delivered, 2.5 * 1.25e9, 1e-3);
}

#[test]
fn shared_link_bytes_match_flow_sizes_and_rebin() {
    // Three flows (3, 5, 6 s, see maxmin.rs) on one link: the link carried
    // exactly the sum of their sizes, at full rate in every window up to 6 s.
    let r =
        run(vec![10.0 * G], vec![flow(1, 1.25e9, 0.0, &[0]), flow(2, 2.5e9, 0.0, &[0]), flow(3, 3.75e9, 0.0, &[0])]);
    let w = &r.link_windows;
    assert_close(w.total_bytes(0), 7.5e9, 1e-3);
    assert_eq!(w.link(0).len(), 6);
    for s in w.iter() {
        assert_close(s.utilization, 1.0, 1e-12);
    }
    let w3 = w.rebin(3);
    assert_eq!(w3.window_s(), 3.0);
    assert_eq!(w3.link(0).len(), 2);
    assert_close(w3.utilization(0, 1), 1.0, 1e-12);
}

#[test]
fn telemetry_off_keeps_no_windows_and_the_same_flows() {
    // The half-second-offset case of above, without telemetry: no window,
    // the same completions (1.5 s and 2.5 s).
    let cfg = SimConfig { telemetry: false, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G, 10.0 * G]), None, cfg);
    sim.add_flows([flow(1, 1.25e9, 0.5, &[0]), flow(2, 2.5e9, 0.5, &[1])]).unwrap();
    let r = sim.run();
    assert_eq!(r.link_windows.iter().count(), 0);
    assert_eq!(r.link_windows.total_bytes(0), 0.0);
    assert_close(rec(&r, 1).finish_s, 1.5, 1e-12);
    assert_close(rec(&r, 2).finish_s, 2.5, 1e-12);
}
