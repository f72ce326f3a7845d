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

/// A runner whose timer `EXTEND` adds the steps `add` makes to task 0, and
/// hooks that list the flows its tasks abandoned.
struct Extending<F: FnMut(&mut TaskDag)> {
    runner: DagRunner,
    hooks: Abandoned,
    add: F,
    added: Option<Option<std::ops::Range<usize>>>,
}

#[derive(Default)]
struct Abandoned(Vec<(u64, u64, f64)>);

impl netheat_workloads::FlowHooks for Abandoned {
    fn flow_abandoned(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, task_id: u64, flow_id: u64) {
        self.0.push((task_id, flow_id, ctx.flow_bytes_sent(flow_id).unwrap()));
    }
}

const EXTEND: u64 = 7;

impl<F: FnMut(&mut TaskDag)> netheat_engine::Controller for Extending<F> {
    fn on_flow_complete(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, flow: &netheat_engine::FlowRecord) {
        self.runner.on_flow_complete_with(ctx, flow, &mut self.hooks);
    }
    fn on_timer(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, token: u64) {
        if token == EXTEND {
            self.added = Some(self.runner.extend_task(ctx, 0, &mut self.hooks, &mut self.add));
        } else {
            self.runner.on_timer_with(ctx, token, &mut self.hooks);
        }
    }
}

/// Runs task 0 (`dag`, from 0 s) and extends it at `at_s`; returns the
/// runner, the hooks, the steps added and the engine's flows.
fn run_extending<F: FnMut(&mut TaskDag)>(
    dag: TaskDag,
    at_s: f64,
    add: F,
) -> (Extending<F>, Vec<netheat_engine::FlowRecord>) {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), cfg);
    let mut c = Extending { runner: DagRunner::new(), hooks: Abandoned::default(), add, added: None };
    c.runner.add_task(0.0, dag);
    c.runner.install(&mut sim).unwrap();
    sim.schedule_timer(at_s, EXTEND).unwrap();
    let res = sim.run_with(&mut c);
    assert!(c.runner.error().is_none(), "{:?}", c.runner.error());
    (c, res.flows)
}

#[test]
fn a_task_with_a_quorum_finishes_with_its_first_sinks_and_cancels_the_rest() {
    // Three flows into host 0 from hosts 1, 2, 3 (1, 2 and 4 MB), two of
    // them needed. Host 0's 10 Gbit/s downlink is shared three ways: the
    // 1 MB flow ends at 1e6 x 8 / (10e9 / 3) = 2.4 ms; the other two have
    // each sent 1 MB then and share it two ways: the 2 MB flow's last MB
    // takes 1.6 ms, ending at 4.0 ms. The task ends then; the 4 MB flow,
    // 2 MB sent, is cancelled.
    let mut d = TaskDag::new("read");
    d.flow(1, 0, 1e6, &[]);
    d.flow(2, 0, 2e6, &[]);
    d.flow(3, 0, 4e6, &[]);
    d.quorum = Some(2);
    let (c, flows) = run_extending(d, 10.0, |_| {});
    let rec = c.runner.record(0);
    assert_close(rec.step_finish_s[0], 2.4e-3, 1e-12);
    assert_close(rec.finish_s, 4.0e-3, 1e-12);
    assert!(rec.step_finish_s[2].is_nan());
    let (task, flow, sent) = c.hooks.0[0];
    assert_eq!((c.hooks.0.len(), task, flow), (1, 0, netheat_workloads::dag::DEFAULT_ID_BASE + 2));
    assert_close(sent, 2e6, 1.0);
    let cut = flows.iter().find(|f| f.id == flow).unwrap();
    assert!(cut.finish_s.is_nan());
    assert_close(cut.bytes_delivered, 2e6, 1.0);
    // The critical path leaves the abandoned flow out: all network time.
    assert_eq!(rec.critical_path(c.runner.dag(0)), (4.0e-3, 0.0));
    // The timer at 10 s found the task finished: nothing added.
    assert_eq!(c.added, Some(None));
}

#[test]
fn a_step_added_to_a_running_task_starts_now_and_can_win_its_quorum() {
    // A 10 MB flow 0 -> 1 (8 ms alone), one sink needed. At 1 ms (1.25 MB
    // sent) a 1 MB flow 2 -> 1 is added: they share host 1's downlink at
    // 5 Gbit/s, so it ends 1.6 ms later, at 2.6 ms, and the task with it;
    // the first flow is cancelled with 1.25 + 1 = 2.25 MB sent.
    let mut d = TaskDag::new("read");
    d.flow(0, 1, 10e6, &[]);
    d.quorum = Some(1);
    let (c, _) = run_extending(d, 1e-3, |dag| {
        dag.flow(2, 1, 1e6, &[]);
    });
    assert_eq!(c.added, Some(Some(1..2)));
    let rec = c.runner.record(0);
    assert_close(rec.finish_s, 2.6e-3, 1e-12);
    assert_close(rec.step_finish_s[1], 2.6e-3, 1e-12);
    assert!(rec.step_finish_s[0].is_nan());
    assert_eq!((rec.flows, rec.bytes), (2, 11e6));
    assert_close(c.hooks.0[0].2, 2.25e6, 1.0);
}

#[test]
fn a_step_added_after_an_unfinished_step_waits_for_it() {
    // Flow A 0 -> 1 of 1 MB ends at 0.8 ms. At 0.1 ms a 0.2 ms delay (no
    // dependency: ends at 0.3 ms) and a 1 MB flow 2 -> 3 after A are
    // added: the flow starts at 0.8 ms and ends at 1.6 ms, with the task
    // (no quorum: every step).
    let mut d = TaskDag::new("t");
    let a = d.flow(0, 1, 1e6, &[]);
    let (c, _) = run_extending(d, 1e-4, |dag| {
        dag.delay(2e-4, &[]);
        dag.flow(2, 3, 1e6, &[a]);
    });
    let rec = c.runner.record(0);
    assert_close(rec.step_finish_s[0], 0.8e-3, 1e-12);
    assert_close(rec.step_finish_s[1], 0.3e-3, 1e-12);
    assert_close(rec.step_finish_s[2], 1.6e-3, 1e-12);
    assert_close(rec.finish_s, 1.6e-3, 1e-12);
    assert!(c.hooks.0.is_empty());
}

#[test]
fn a_sink_finishing_at_the_quorums_instant_completes_rather_than_being_cut() {
    // Two 1 MB flows on disjoint paths (0 -> 1, 2 -> 3), one needed: both
    // end at 0.8 ms. The first completion heard reaches the quorum; the
    // other flow has finished at that same instant, so the cancel leaves it
    // done: it keeps its whole 1 MB and its finish time.
    let mut d = TaskDag::new("read");
    d.flow(0, 1, 1e6, &[]);
    d.flow(2, 3, 1e6, &[]);
    d.quorum = Some(1);
    let (c, flows) = run_extending(d, 10.0, |_| {});
    assert_close(c.runner.record(0).finish_s, 0.8e-3, 1e-12);
    for f in flows.iter().filter(|f| f.task_id == Some(0)) {
        assert_close(f.finish_s, 0.8e-3, 1e-12);
        assert_close(f.bytes_delivered, 1e6, 1e-6);
    }
    assert!(c.hooks.0.is_empty(), "{:?}", c.hooks.0);
}
