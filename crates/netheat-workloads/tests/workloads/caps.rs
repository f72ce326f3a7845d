//! Every generator stops at the memory budget's flow cap, whatever the
//! estimate made before it said; and none spins when its clock stalls.

use netheat_core::{with_memory_budget, BYTES_PER_FLOW};
use netheat_workloads::apps::coflow::{map_rack_shuffles, RackShuffle};
use netheat_workloads::apps::poisson_starts_n;
use netheat_workloads::{Batches, FlowRow, GenError, Horizon, LinkSet, OnOff, Pattern, Poisson, Replay, SizeDist};

use crate::{two_tier, G};

/// A budget of exactly `n` flows.
fn flows(n: u64) -> u64 {
    n * BYTES_PER_FLOW
}

#[track_caller]
fn over(r: Result<impl std::fmt::Debug, GenError>, what: &str) {
    match r {
        Err(GenError::Budget(e)) => {
            let msg = e.to_string();
            assert!(msg.starts_with(what), "{msg}");
            assert!(msg.contains("over the memory budget"), "{msg}");
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
}

#[test]
fn poisson_stops_at_the_cap() {
    let topo = two_tier(4, 4, 10.0 * G, 10.0 * G);
    let p = Poisson::new(LinkSet::TorUplinks, 0.5, SizeDist::Constant(1e6), Horizon::Flows(11));
    assert_eq!(with_memory_budget(flows(11), || p.generate(&topo, 1)).unwrap().len(), 11);
    over(
        with_memory_budget(flows(10), || p.generate(&topo, 1)),
        "the flows of a Poisson generator (generating stopped at 11)",
    );
}

#[test]
fn batches_on_off_and_starts_stop_at_the_cap() {
    let topo = two_tier(4, 4, 10.0 * G, 10.0 * G);
    let b = Batches {
        k: 5,
        period_s: 1.0,
        offset_s: 0.0,
        batches: 3,
        sizes: SizeDist::Constant(1.0),
        pattern: Pattern::Uniform,
    };
    assert_eq!(with_memory_budget(flows(15), || b.generate(&topo, 1)).unwrap().len(), 15);
    over(with_memory_budget(flows(14), || b.generate(&topo, 1)), "3 batches of 5 flows");
    // k x batches overflowing usize is a budget error, not a capacity panic.
    let huge = Batches { k: usize::MAX, batches: 3, ..b };
    over(with_memory_budget(flows(14), || huge.generate(&topo, 1)), "3 batches of");
    let onoff = OnOff {
        sources: (0..16).collect(),
        on_mean_s: 1.0,
        off_mean_s: 1e-3,
        rate_on_per_s: 1e3,
        sizes: SizeDist::Constant(1.0),
        inter_rack_only: false,
        duration_s: 10.0,
    };
    over(with_memory_budget(flows(100), || onoff.generate(&topo, 1)), "the flows of an on-off generator");
    let starts = with_memory_budget(flows(50), || poisson_starts_n(1e3, 1.0, 1, 50)).unwrap();
    assert_eq!(starts.len(), 50, "`max` bounds the draw before the cap");
    over(with_memory_budget(flows(50), || poisson_starts_n(1e3, 1.0, 1, usize::MAX)), "the tasks' start times");
}

#[test]
fn on_off_refuses_periods_it_cannot_walk() {
    let topo = two_tier(4, 4, 10.0 * G, 10.0 * G);
    let g = OnOff {
        sources: vec![0],
        on_mean_s: 1e-300,
        off_mean_s: 1e-300,
        rate_on_per_s: 1.0,
        sizes: SizeDist::Constant(1.0),
        inter_rack_only: false,
        duration_s: 1.0,
    };
    let e = g.generate(&topo, 1).unwrap_err();
    assert!(matches!(&e, GenError::InvalidParameter { name, .. } if name == "on_mean_s"), "{e}");
}

#[test]
fn replay_and_shuffles_stop_at_the_cap() {
    let row = |id: u64, t: f64| FlowRow {
        flow_id: id,
        start_s: t,
        src: 0,
        dst: 5,
        bytes: 1.0,
        task_id: None,
        priority: 0,
        weight: 1.0,
        rate_cap_bps: None,
    };
    let rows = vec![row(0, 0.0), row(1, 1.0)];
    // Copies every 2 s until 100 s: 100 flows.
    let r = Replay { repeat_until_s: Some(100.0), ..Replay::default() };
    assert_eq!(r.estimate(2, 1.0), 100.0);
    assert_eq!(with_memory_budget(flows(100), || r.apply(&rows, 16)).unwrap().len(), 100);
    over(with_memory_budget(flows(99), || r.apply(&rows, 16)), "the replayed trace");
    let topo = two_tier(4, 4, 10.0 * G, 10.0 * G);
    let s = RackShuffle { id: 1, start_s: 0.0, mapper_racks: vec![0, 1, 2], reducers: vec![(3, 1e6); 4] };
    over(with_memory_budget(flows(11), || map_rack_shuffles(&topo, &[s], 1)), "the shuffles' flows");
}
