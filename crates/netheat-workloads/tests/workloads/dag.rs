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
