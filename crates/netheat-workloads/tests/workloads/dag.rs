//! The DAG runner: dependencies, empty tasks, and sharing a simulation
//! with generated background flows.

use netheat_engine::{Network, SimConfig, Simulation};
use netheat_workloads::{to_flow_spec, DagRunner, FlowRow, TaskDag};

use crate::{assert_close, run_tasks, two_tier, G};

#[test]
fn steps_wait_for_all_their_dependencies() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let mut d = TaskDag::new("test");
    let a = d.flow(0, 1, 1e6, &[]); // 0.8 ms
    let b = d.delay(2e-3, &[]); // 2 ms
    let c = d.flow(2, 3, 2e6, &[a, b]); // starts at 2 ms, 1.6 ms
    d.delay(0.0, &[c]);
    let recs = run_tasks(&topo, vec![(1.0, d), (2.0, TaskDag::new("empty"))]);
    assert_close(recs[0].step_finish_s[0], 1.0008, 1e-12);
    assert_close(recs[0].step_finish_s[2], 1.0036, 1e-12);
    assert_close(recs[0].duration_s(), 3.6e-3, 1e-12);
    assert_eq!((recs[1].start_s, recs[1].finish_s), (2.0, 2.0));
}

#[test]
fn background_flows_share_the_network_and_are_ignored_by_the_runner() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), SimConfig::default());
    // A background flow 0 -> 1 of 1 MB from t = 0 shares host 0's uplink.
    let bg = FlowRow {
        flow_id: 0,
        start_s: 0.0,
        src: 0,
        dst: 1,
        bytes: 1e6,
        task_id: None,
        priority: 0,
        weight: 1.0,
        rate_cap_bps: None,
    };
    sim.add_flow(to_flow_spec(&bg)).unwrap();
    let mut runner = DagRunner::new();
    let mut d = TaskDag::new("test");
    d.flow(0, 1, 2e6, &[]);
    runner.add_task(0.0, d);
    runner.install(&mut sim).unwrap();
    let res = sim.run_with(&mut runner);
    // Both at 5 Gbps until the background flow ends at 1.6 ms, then the
    // task's remaining 1 MB at 10 Gbps: 2.4 ms.
    assert_close(runner.record(0).duration_s(), 2.4e-3, 1e-12);
    assert_eq!(res.flows.len(), 2);
    assert_eq!(res.flows[1].task_id, Some(0));
    assert!(res.flows[1].id >= netheat_workloads::dag::DEFAULT_ID_BASE);
}

#[test]
fn critical_path_splits_a_task_into_network_and_device_time() {
    use netheat_workloads::{TaskDag, TaskRecord};
    // A (flow) -> B (io) and C (delay), D (flow) after B and C. Started at
    // 1 s; A ends at 2, B at 5, C at 3, D at 6. D waited for B (5 > 3), B
    // for A, A for the start: network = (2 - 1) + (6 - 5) = 2, io = 5 - 2
    // = 3, and the delay C is off the path.
    let mut dag = TaskDag::new("t");
    let a = dag.flow(0, 1, 1.0, &[]);
    let b = dag.io(1, 1.0, true, 7, &[a]);
    let c = dag.delay(2.0, &[a]);
    dag.flow(1, 2, 1.0, &[b, c]);
    let rec = TaskRecord {
        task: 0,
        kind: "t",
        start_s: 1.0,
        began_s: 1.0,
        finish_s: 6.0,
        step_finish_s: vec![2.0, 5.0, 3.0, 6.0],
        flows: 2,
        bytes: 2.0,
    };
    assert_eq!(rec.critical_path(&dag), (2.0, 3.0));
    // An unfinished step: no breakdown.
    let open = TaskRecord { finish_s: f64::NAN, step_finish_s: vec![2.0, f64::NAN, 3.0, f64::NAN], ..rec };
    let (n, i) = open.critical_path(&dag);
    assert!(n.is_nan() && i.is_nan());
    // A task that waited 0.5 s in its queue: the wait is on no part of its
    // path (its root started when it began).
    let queued = TaskRecord { began_s: 1.5, step_finish_s: vec![2.0, 5.0, 3.0, 6.0], finish_s: 6.0, ..open };
    assert_eq!(queued.critical_path(&dag), (1.5, 3.0));
    assert_eq!(queued.queued_s(), 0.5);
}

/// Tasks of one queue run one at a time in arrival order; other queues and
/// unqueued tasks do not wait. Hosts 0-3 on two racks of a 10 Gbps
/// two-tier: a 1 MB flow alone takes 0.8 ms.
#[test]
fn tasks_of_one_queue_run_one_at_a_time() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let task = |src, dst, queue| {
        let mut d = TaskDag::new("q");
        d.flow(src, dst, 1e6, &[]);
        d.queue = queue;
        d
    };
    let recs = run_tasks(
        &topo,
        vec![
            // Queue 7: three tasks into host 0 arriving at 0, 0.1 and 0.2 ms.
            (0.0, task(1, 0, Some(7))),
            (1e-4, task(2, 0, Some(7))),
            (2e-4, task(3, 0, Some(7))),
            // Queue 9 and no queue: hosts 2 -> 3, 3 -> 2 at 0, on their own links.
            (0.0, task(2, 3, Some(9))),
            (0.0, task(3, 2, None)),
        ],
    );
    // Queue 7 serialises: each begins when the one before ends (0.8 ms
    // each, alone on host 0's link), and counts its time from arrival.
    for (i, (began, finish)) in [(0.0, 8e-4), (8e-4, 1.6e-3), (1.6e-3, 2.4e-3)].into_iter().enumerate() {
        assert_close(recs[i].began_s, began, 1e-12);
        assert_close(recs[i].finish_s, finish, 1e-12);
    }
    assert_close(recs[1].queued_s(), 7e-4, 1e-12);
    assert_close(recs[2].duration_s(), 2.2e-3, 1e-12);
    assert_close(recs[2].critical_path(&task(3, 0, Some(7))).0, 8e-4, 1e-12);
    // The others did not wait.
    for r in &recs[3..] {
        assert_eq!(r.began_s, 0.0);
        assert_close(r.finish_s, 8e-4, 1e-12);
    }
}

/// An empty task of a queue finishes as it begins and lets the next begin.
#[test]
fn an_empty_queued_task_passes_the_queue_on() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let mut empty = TaskDag::new("e");
    empty.queue = Some(1);
    let mut one = TaskDag::new("f");
    one.flow(1, 0, 1e6, &[]);
    one.queue = Some(1);
    let recs = run_tasks(&topo, vec![(0.0, one.clone()), (1e-4, empty), (2e-4, one)]);
    assert_close(recs[1].began_s, 8e-4, 1e-12);
    assert_close(recs[1].finish_s, 8e-4, 1e-12);
    assert_close(recs[2].began_s, 8e-4, 1e-12);
    assert_close(recs[2].finish_s, 1.6e-3, 1e-12);
}

#[test]
fn uniform_sizes_have_their_mean_and_cdf() {
    use netheat_workloads::SizeDist;
    let u = SizeDist::Uniform { lo: 100e3, hi: 1e6 };
    assert_eq!(u.mean(), 550e3);
    assert_eq!(u.cdf(325e3), 0.25);
    assert_eq!(u.quantile(0.5), 550e3);
    assert!(SizeDist::Uniform { lo: 2.0, hi: 1.0 }.validate().is_err());
}
