//! Poisson load calibration, on-off bursts, batches and replay.

use netheat_core::Routing;
use netheat_topology::{Topology, TopologySpec};
use netheat_workloads::load::offered_load;
use netheat_workloads::{Batches, FlowRow, Horizon, LinkSet, OnOff, Pattern, Poisson, Replay, SizeDist};

use crate::G;

/// 2 pods x 4 racks x 8 hosts, 2 aggs per pod, 4 spines.
pub fn clos() -> Topology {
    Topology::build(&TopologySpec::three_tier(2, 4, 8, 2, 4, 10.0 * G, 40.0 * G, None)).unwrap()
}

fn sorted_with_ids(rows: &[FlowRow]) {
    assert!(rows.windows(2).all(|w| w[0].start_s <= w[1].start_s));
    assert!(rows.iter().enumerate().all(|(i, r)| r.flow_id == i as u64));
    assert!(rows.iter().all(|r| r.src != r.dst));
}

fn load_error(set: LinkSet, pattern: Pattern, load: f64, duration: f64) -> f64 {
    let topo = clos();
    let g = Poisson::new(set.clone(), load, SizeDist::web_search(), Horizon::Duration(duration)).with_pattern(pattern);
    let cal = g.calibration(&topo).unwrap();
    let rows = g.generate(&topo, 42).unwrap();
    sorted_with_ids(&rows);
    let measured = offered_load(&topo, &set, &rows, duration);
    let err = (measured - load) / load;
    eprintln!(
        "{set:?}: {} flows, lambda {:.1}/s, E[links] {:.4} (exact {}), measured load {measured:.4} vs {load} ({:+.2}%)",
        rows.len(),
        cal.lambda_per_s,
        cal.links_per_flow,
        cal.exact,
        100.0 * err
    );
    err
}

#[test]
fn poisson_offers_its_target_load_on_tor_uplinks() {
    let err = load_error(LinkSet::TorUplinks, Pattern::Uniform, 0.6, 40.0);
    assert!(err.abs() < 0.02, "{err}");
}

#[test]
fn poisson_offers_its_target_load_on_host_uplinks_inter_rack() {
    let err = load_error(LinkSet::HostUplinks, Pattern::InterRack, 0.3, 20.0);
    assert!(err.abs() < 0.02, "{err}");
}

#[test]
fn sampled_calibration_for_a_custom_link_set() {
    // Agg-to-spine uplinks: only inter-pod flows cross one; no closed form
    // is used, the expectation is sampled.
    let topo = clos();
    let set = LinkSet::Custom(
        topo.links()
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.layer == netheat_topology::Layer::AggSpine && l.direction == netheat_topology::Direction::Up
            })
            .map(|(i, _)| i as u32)
            .collect(),
    );
    let g = Poisson::new(set.clone(), 0.5, SizeDist::web_search(), Horizon::Flows(10));
    let cal = g.calibration(&topo).unwrap();
    assert!(!cal.exact);
    // Exactly: 32 of the 63 other hosts are in the other pod.
    assert!((cal.links_per_flow - 32.0 / 63.0).abs() < 0.015, "{}", cal.links_per_flow);
    let err = load_error(set, Pattern::Uniform, 0.5, 40.0);
    assert!(err.abs() < 0.02, "{err}");
}

#[test]
fn exact_tor_uplink_expectation_is_the_cross_rack_fraction() {
    let topo = clos();
    let g = Poisson::new(LinkSet::TorUplinks, 0.5, SizeDist::Constant(1e6), Horizon::Flows(10));
    let cal = g.calibration(&topo).unwrap();
    assert!(cal.exact);
    assert_eq!(cal.links_per_flow, 56.0 / 63.0);
    assert_eq!(cal.capacity_bps, 8.0 * 40.0 * G);
    // λ = load Σcap / (8 E[S] E[n])
    assert!((cal.lambda_per_s - 0.5 * 320.0 * G / (8e6 * 56.0 / 63.0)).abs() < 1e-6);
    assert_eq!(topo.num_hosts(), 64);
}

#[test]
fn flow_horizon_and_determinism() {
    let topo = clos();
    let g = Poisson::new(LinkSet::TorUplinks, 0.5, SizeDist::web_search(), Horizon::Flows(1000));
    let a = g.generate(&topo, 9).unwrap();
    assert_eq!(a.len(), 1000);
    assert_eq!(a, g.generate(&topo, 9).unwrap());
    assert_ne!(a, g.generate(&topo, 10).unwrap());
    let inter = g.clone().with_pattern(Pattern::InterRack).generate(&topo, 1).unwrap();
    assert!(inter.iter().all(|r| r.src / 8 != r.dst / 8));
    assert!(Poisson::new(LinkSet::TorUplinks, -1.0, SizeDist::web_search(), Horizon::Flows(1))
        .generate(&topo, 1)
        .is_err());
}

#[test]
fn on_off_sources_average_their_duty_cycle() {
    let topo = clos();
    let g = OnOff {
        sources: (0..64).collect(),
        on_mean_s: 0.01,
        off_mean_s: 0.04,
        rate_on_per_s: 1000.0,
        sizes: SizeDist::Constant(1e4),
        inter_rack_only: true,
        duration_s: 40.0,
    };
    let rows = g.generate(&topo, 5).unwrap();
    sorted_with_ids(&rows);
    assert!(rows.iter().all(|r| r.src / 8 != r.dst / 8 && r.start_s < 40.0));
    let expected = 64.0 * g.mean_rate_per_source() * 40.0;
    let err = (rows.len() as f64 - expected) / expected;
    eprintln!("on-off: {} flows, expected {expected} ({:+.2}%)", rows.len(), 100.0 * err);
    assert!(err.abs() < 0.03, "{err}");
}

#[test]
fn batches_start_together() {
    let topo = clos();
    let g = Batches {
        k: 5,
        period_s: 0.5,
        offset_s: 1.0,
        batches: 3,
        sizes: SizeDist::Constant(100.0),
        pattern: Pattern::Uniform,
    };
    let rows = g.generate(&topo, 1).unwrap();
    sorted_with_ids(&rows);
    let times: Vec<f64> = rows.iter().map(|r| r.start_s).collect();
    assert_eq!(times, [[1.0; 5], [1.5; 5], [2.0; 5]].concat());
}

#[test]
fn replay_sorts_scales_and_loops() {
    let r = |id: u64, t: f64| FlowRow {
        flow_id: id,
        start_s: t,
        src: 0,
        dst: 1,
        bytes: 10.0,
        task_id: Some(3),
        priority: 1,
        weight: 2.0,
        rate_cap_bps: None,
    };
    let trace = vec![r(7, 12.0), r(5, 10.0), r(6, 11.0)];
    let once = Replay { time_scale: 2.0, offset_s: 1.0, repeat_until_s: None }.apply(&trace, 4).unwrap();
    assert_eq!(once.iter().map(|x| (x.flow_id, x.start_s)).collect::<Vec<_>>(), [(5, 1.0), (6, 3.0), (7, 5.0)]);
    assert_eq!(once[0].task_id, Some(3));
    let looped = Replay { time_scale: 1.0, offset_s: 0.0, repeat_until_s: Some(5.0) }.apply(&trace, 4).unwrap();
    // Span 2 s plus a mean gap of 1 s: copies every 3 s.
    assert_eq!(looped.iter().map(|x| x.start_s).collect::<Vec<_>>(), [0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(looped.iter().map(|x| x.flow_id).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert!(Replay::default().apply(&trace, 1).is_err());
}
