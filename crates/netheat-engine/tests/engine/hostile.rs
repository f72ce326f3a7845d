//! Hostile but valid inputs: the engine ends (no panic, no hang) and its
//! telemetry never indexes past its window limit.

use std::sync::mpsc;
use std::time::Duration;

use netheat_engine::{FlowSpec, Network, Route, SimConfig, SimResult, Simulation};

/// Runs explicit-route flows on `caps` in a thread; fails after 20 s.
fn run_within(caps: Vec<f64>, flows: Vec<FlowSpec>, cfg: SimConfig) -> SimResult {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sim = Simulation::new(Network::new(caps), None, cfg);
        sim.add_flows(flows).unwrap();
        let _ = tx.send(sim.run());
    });
    rx.recv_timeout(Duration::from_secs(20)).expect("the run ended (no hang, no panic)")
}

fn flow(id: u64, bytes: f64, start: f64, path: &[u32]) -> FlowSpec {
    FlowSpec::new(id, 0, 1, bytes, start, Route::Explicit(path.to_vec()))
}

/// 100 windows of 1 s kept.
fn cfg() -> SimConfig {
    SimConfig { max_windows: 100, check_invariants: true, ..SimConfig::default() }
}

#[test]
fn a_one_bps_link() {
    // 1e9 bytes at 1 bit/s: 8e9 s. Telemetry keeps windows 0..100, all full.
    let r = run_within(vec![1.0], vec![flow(0, 1e9, 0.0, &[0])], cfg());
    assert_eq!(r.flows[0].finish_s, 8e9);
    assert_eq!(r.end_s, 8e9);
    let w = r.link_windows.link(0);
    assert_eq!(w.len(), 100);
    assert!(w.iter().enumerate().all(|(i, &(k, b))| k as usize == i && b == 1.0 / 8.0));
    assert_eq!(r.stats.windows_dropped, 1);
}

#[test]
fn a_flow_of_1e30_bytes() {
    // 8e30 bits at 10 Gbps: 8e20 s.
    let r = run_within(vec![1e10], vec![flow(0, 1e30, 0.0, &[0])], cfg());
    assert_eq!(r.flows[0].finish_s, 8e20);
    assert_eq!(r.link_windows.link(0).len(), 100);
    assert!(r.stats.windows_dropped >= 1);
}

#[test]
fn a_start_time_of_1e300() {
    // 1000 bytes at 10 Gbps take 8e-7 s, lost in the rounding of 1e300: the
    // flow finishes at its start; nothing past window 100 is kept.
    let r = run_within(vec![1e10], vec![flow(0, 1e3, 1e300, &[0]), flow(1, 1e3, 0.0, &[0])], cfg());
    assert_eq!(r.flows[0].finish_s, 1e300);
    assert_eq!(r.flows[1].finish_s, 8e-7);
    assert_eq!(r.end_s, 1e300);
    assert_eq!(r.link_windows.link(0), &[(0, 1e3)]);
    // And at the largest finite time.
    let r = run_within(vec![1e10], vec![flow(0, 1e3, f64::MAX, &[0])], cfg());
    assert_eq!(r.flows[0].finish_s, f64::MAX);
}

#[test]
fn zero_capacity_links_strand_their_flows() {
    let r = run_within(vec![0.0, 1e10], vec![flow(0, 1e3, 0.0, &[0, 1]), flow(1, 1e3, 0.0, &[1])], cfg());
    assert!(r.flows[0].finish_s.is_nan());
    assert_eq!(r.stats.stranded, 1);
    assert_eq!(r.flows[1].finish_s, 8e-7);
}

#[test]
fn the_default_limit_keeps_indices_in_u32() {
    // 1 ns windows: a 1e30-byte flow would span 8e29 windows; the default
    // limit (u32::MAX) keeps indices valid, this test's keeps memory small.
    let cfg = SimConfig { window_s: 1e-9, max_windows: 1000, ..SimConfig::default() };
    let r = run_within(vec![1e10], vec![flow(0, 1e30, 0.0, &[0])], cfg);
    let w = r.link_windows.link(0);
    assert_eq!((w.len(), w.last().unwrap().0), (1000, 999));
    assert_eq!(SimConfig::default().max_windows, u32::MAX);
}
