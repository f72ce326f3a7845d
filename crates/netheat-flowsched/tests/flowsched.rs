//! Hand-computed checks of the policies, the idealized runs and SPC.
//!
//! Links are 1 Gbps = 125 MB/s, so 1 MB takes 8 ms alone.

use netheat_flowsched::policy::{percentile, size_class, FifoLm, BACKGROUND_BASE, BACKGROUND_CLASS};
use netheat_flowsched::{
    policy_by_tag, run_ideal, run_ideal_stats, run_spc, FlowScheduler, IdealOptions, SpcOptions, Task, TaskFlow,
    TaskIdAllocator, TaskMeta,
};

const C: f64 = 1e9;
const MB: f64 = 1e6;

fn flow(path: &[u32], bytes: f64) -> TaskFlow {
    TaskFlow { src: 0, dst: 1, bytes, path: path.to_vec(), delay_s: 0.0, feeds: None }
}

fn task(at: f64, flows: Vec<TaskFlow>) -> Task {
    Task { arrival_s: at, bytes: flows.iter().map(|f| f.bytes).sum(), flows }
}

fn tcts(caps: &[f64], tasks: &[Task], policy: &str, threshold: f64) -> Vec<f64> {
    let s = policy_by_tag(policy, threshold).unwrap();
    run_ideal(caps, tasks, s, &IdealOptions::default()).unwrap().iter().map(|t| t.tct_s()).collect()
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?} (tol {tol})");
    }
}

#[test]
fn unknown_tag_lists_known_ones() {
    let e = policy_by_tag("edf", 0.0).err().unwrap().to_string();
    assert!(e.contains("edf") && e.contains("fair-share") && e.contains("fifo-lm"), "{e}");
}

#[test]
fn id_counters_with_stride_and_background_range() {
    let mut a = TaskIdAllocator::new(3);
    assert_eq!([a.next(0), a.next(1), a.next(2), a.next(0), a.next(2)], [0, 1, 2, 3, 5]);
    assert_eq!(a.next_background(), BACKGROUND_BASE);
    assert_eq!(a.next_background(), BACKGROUND_BASE + 1);
    assert_eq!(netheat_flowsched::policy::id_class(BACKGROUND_BASE + 7), BACKGROUND_CLASS);
}

/// The heavy threshold is a policy parameter and stays the nearest-rank
/// quantile (the `ceil(p n)`-th smallest size), unlike the linear quantile
/// every reported metric uses.
#[test]
fn heavy_threshold_is_the_nearest_rank_task_size() {
    let v: Vec<f64> = (1..=10).map(f64::from).collect();
    // ceil(0.8 * 10) = 8th and ceil(0.85 * 10) = 9th smallest; 10 - 8 = 2
    // and 10 - 9 = 1 tasks exceed them (floor((1 - p) n)).
    assert_eq!(percentile(&v, 0.8), 8.0);
    assert_eq!(percentile(&v, 0.85), 9.0);
    // Linear interpolation would put them between task sizes: h = 9 * 0.8
    // = 7.2 -> 8.2, h = 9 * 0.85 = 7.65 -> 8.65 (not used for thresholds).
    assert!((netheat_core::stats::quantile(&v, 0.8) - 8.2).abs() < 1e-12);
    assert!((netheat_core::stats::quantile(&v, 0.85) - 8.65).abs() < 1e-12);
    // Unsorted input, p = 0 (the smallest), p = 1 (the largest), p n < 1.
    let u = [30.0, 10.0, 20.0];
    assert_eq!(percentile(&u, 0.0), 10.0);
    assert_eq!(percentile(&u, 0.2), 10.0); // ceil(0.6) = 1st
    assert_eq!(percentile(&u, 0.5), 20.0); // ceil(1.5) = 2nd
    assert_eq!(percentile(&u, 1.0), 30.0);
    // netheat_core::stats' rules: NaN for no sizes or a NaN size.
    assert!(percentile(&[], 0.8).is_nan());
    assert!(percentile(&[1.0, f64::NAN], 0.5).is_nan());
    assert!(size_class(1000.0) < size_class(1020.0));
}

#[test]
fn fifo_lm_heavy_chain_classes() {
    // Tasks 0..4 active at one receiver; 1 and 2 turn heavy: classes 0, 1, 1, 1, 4.
    let mut p = FifoLm::new(100.0);
    let mut ch = Vec::new();
    for id in 0..5 {
        p.task_arrived(&TaskMeta { id, bytes: 1e3 }, &[7], &mut ch);
    }
    assert!(ch.is_empty());
    p.task_progress(2, 150.0, &mut ch);
    assert_eq!(ch, vec![(3, 7, 2)]);
    ch.clear();
    p.task_progress(1, 150.0, &mut ch);
    assert_eq!(ch, vec![(2, 7, 1), (3, 7, 1)]);
    ch.clear();
    // The light task 3 completes: the heavy run now shares with task 4.
    p.task_completed(3, &mut ch);
    assert_eq!(ch, vec![(4, 7, 1)]);
    assert!(p.is_heavy(1) && p.is_heavy(2) && !p.is_heavy(4));
    // A new task behind a light one keeps its own class.
    ch.clear();
    p.task_arrived(&TaskMeta { id: 5, bytes: 1e3 }, &[7], &mut ch);
    assert!(ch.is_empty());
    assert_eq!(p.class_of(5, 7), Some(5));
    // Below the threshold nothing happens.
    p.task_progress(5, 100.0, &mut ch);
    assert!(ch.is_empty());
}

#[test]
fn fifo_lm_shares_with_the_next_task_at_the_same_receiver() {
    // Task 0 goes to receivers 1 and 2, task 1 to receiver 2, task 2 to
    // receivers 1 and 3. When 0 turns heavy it shares with 1 at receiver 2
    // and with 2 at receiver 1; task 2 keeps its own class at receiver 3.
    let mut p = FifoLm::new(100.0);
    let mut ch = Vec::new();
    p.task_arrived(&TaskMeta { id: 0, bytes: 1e3 }, &[2, 1, 2], &mut ch);
    p.task_arrived(&TaskMeta { id: 1, bytes: 1e3 }, &[2], &mut ch);
    p.task_arrived(&TaskMeta { id: 2, bytes: 1e3 }, &[3, 1], &mut ch);
    assert!(ch.is_empty());
    p.task_progress(0, 150.0, &mut ch);
    assert_eq!(ch, vec![(2, 1, 0), (1, 2, 0)]);
    assert_eq!([p.class_of(2, 1), p.class_of(2, 3), p.class_of(1, 2)], [Some(0), Some(2), Some(0)]);
    assert_eq!(p.flow_class(&TaskMeta { id: 2, bytes: 1e3 }, 3, 1.0), 2);
    // Task 0 leaves: the others get their own classes back.
    ch.clear();
    p.task_completed(0, &mut ch);
    assert_eq!(ch, vec![(2, 1, 2), (1, 2, 1)]);
    assert_eq!(p.class_of(0, 1), None);
}

/// Two tasks on one link, arriving together: A = 2 MB, B = 1 MB (one flow each).
#[test]
fn two_tasks_one_link_fifo_vs_fair_share() {
    let caps = [C];
    let tasks = vec![task(0.0, vec![flow(&[0], 2.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    // Fair share: both at 62.5 MB/s until B is done at 16 ms; A then alone: 24 ms.
    close(&tcts(&caps, &tasks, "fair-share", 0.0), &[0.024, 0.016], 1e-9);
    // FIFO: A alone 16 ms, then B 8 ms more.
    close(&tcts(&caps, &tasks, "fifo", 0.0), &[0.016, 0.024], 1e-9);
    // STF / SFF serve B first: 8 ms, then A: 24 ms.
    close(&tcts(&caps, &tasks, "stf", 0.0), &[0.024, 0.008], 1e-9);
    close(&tcts(&caps, &tasks, "sff", 0.0), &[0.024, 0.008], 1e-9);
}

/// The engine counters a run returns, derived by hand: three one-flow tasks
/// of 1, 2 and 3 MB on one link, all at t = 0.
#[test]
fn ideal_run_counts_repairs_and_rate_changes() {
    let caps = [C];
    let tasks: Vec<Task> = [1.0, 2.0, 3.0].iter().map(|&m| task(0.0, vec![flow(&[0], m * MB)])).collect();
    let stats = |policy: &str| {
        let s = policy_by_tag(policy, 0.0).unwrap();
        let (r, st) = run_ideal_stats(&caps, &tasks, s, &IdealOptions::default()).unwrap();
        assert!(r.iter().all(|t| t.finish_s.is_finite()));
        st
    };
    // The three flows arrive one after the other within t = 0: the first
    // finds its link empty and takes the whole link by the engine's exact
    // shortcut (not a recomputation, so not a counted rate change); the
    // other two are allocated by the instant's one repair.
    // Fair share: that repair takes in all three (C/3 each: 3 changes),
    // the first completion the two left (C/2: 2), the second the last one
    // (C: 1); the last completion leaves the link empty and repairs nothing.
    let fs = stats("fair-share");
    assert_eq!((fs.fast_path, fs.repairs, fs.region_flows, fs.rate_changes), (1, 3, 3 + 2 + 1, 3 + 2 + 1));
    // FIFO: the t = 0 repair (region: the two later flows) leaves them at
    // rate 0, no change; each completion hands the link to the next task:
    // regions of 2 and then 1 flows, one change each.
    let fifo = stats("fifo");
    assert_eq!((fifo.fast_path, fifo.repairs, fifo.region_flows, fifo.rate_changes), (1, 3, 2 + 2 + 1, 2));
    assert!([fs.flows_completed, fifo.flows_completed].iter().all(|&n| n == 3));
}

/// Task A: one 2 MB flow; task B (arrives 1 us later): three 0.8 MB flows.
/// SFF serves B's smaller flows first; STF serves the smaller task A first.
#[test]
fn sff_and_stf_orders_differ() {
    let caps = [C];
    let tasks = vec![
        task(0.0, vec![flow(&[0], 2.0 * MB)]),
        task(1e-6, vec![flow(&[0], 0.8 * MB), flow(&[0], 0.8 * MB), flow(&[0], 0.8 * MB)]),
    ];
    // SFF: B's 2.4 MB take 19.2 ms (A sent 1 us worth = 125 B first);
    // A ends after 4.4 MB in total: 35.2 ms.
    close(&tcts(&caps, &tasks, "sff", 0.0), &[0.0352, 0.0192], 1e-8);
    // STF: A 16 ms, B ends at 35.2 ms (TCT 35.199 ms).
    close(&tcts(&caps, &tasks, "stf", 0.0), &[0.016, 0.0352 - 1e-6], 1e-8);
}

/// Heavy task A = 10 MB, light B = 1 MB, both at t = 0, threshold 1 MB.
/// FIFO: A 80 ms, B 88 ms. FIFO-LM: A alone until it has sent 1 MB (8 ms),
/// then shares with B at 62.5 MB/s: B done at 8 + 16 = 24 ms; A has then
/// sent 2 MB and ends at 24 + 64 = 88 ms.
#[test]
fn heavy_task_triggers_limited_multiplexing() {
    let caps = [C];
    let tasks = vec![task(0.0, vec![flow(&[0], 10.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    close(&tcts(&caps, &tasks, "fifo", MB), &[0.080, 0.088], 1e-9);
    // On the engine, detection happens at the first 100 us poll after the crossing.
    let s = policy_by_tag("fifo-lm", MB).unwrap();
    let r = run_ideal(&caps, &tasks, s, &IdealOptions::default()).unwrap();
    close(&r.iter().map(|t| t.tct_s()).collect::<Vec<_>>(), &[0.088, 0.024], 2.1e-4);
    // Threshold above A's size: plain FIFO.
    close(&tcts(&caps, &tasks, "fifo-lm", 20.0 * MB), &[0.080, 0.088], 1e-9);
}

/// Limited multiplexing is per receiver. A (10 MB) and C (1 MB) go to
/// receiver 1 over link 0, B (1 MB) to receiver 2 over link 1; ids in that
/// order, threshold 1 MB. A runs alone until it turns heavy at 8 ms, then
/// shares with C (the next task *at its receiver*, not B): C at 62.5 MB/s
/// is done at 8 + 16 = 24 ms; A has then sent 2 MB and ends at 24 + 64 =
/// 88 ms. B runs alone on its own link: 8 ms. (Sharing with the globally
/// next task, B, would leave C waiting behind A until 80 ms: 88 ms.)
#[test]
fn limited_multiplexing_is_per_receiver() {
    let to =
        |dst: u32, link: u32, bytes: f64| TaskFlow { src: 0, dst, bytes, path: vec![link], delay_s: 0.0, feeds: None };
    let tasks =
        vec![task(0.0, vec![to(1, 0, 10.0 * MB)]), task(0.0, vec![to(2, 1, MB)]), task(0.0, vec![to(1, 0, MB)])];
    let caps = [C, C];
    close(&ref_tcts(&caps, &tasks, "fifo-lm", MB), &[0.088, 0.008, 0.024], 1e-9);
    // The engine detects the crossing at the first 100 us poll after it.
    close(&tcts(&caps, &tasks, "fifo-lm", MB), &[0.088, 0.008, 0.024], 2.1e-4);
    // SPC applies it per link, within a few rounds.
    let o = SpcOptions { threshold: MB, ..SpcOptions::default() };
    let spc: Vec<f64> = run_spc(&caps, &tasks, &o).unwrap().tasks.iter().map(|t| t.tct_s()).collect();
    close(&spc, &[0.088, 0.008, 0.024], 5.0 * o.rtt_s);
}

/// The three-task example: link 0 carries T1 and T2, link 1 carries T2
/// and T3 (T2 crosses both). T1 = 1 MB, T2 = 1 MB, T3 = 2 MB, all at 0.
fn three_tasks() -> Vec<Task> {
    vec![task(0.0, vec![flow(&[0], MB)]), task(0.0, vec![flow(&[0, 1], MB)]), task(0.0, vec![flow(&[1], 2.0 * MB)])]
}

#[test]
fn three_task_example_ideal() {
    let caps = [C, C];
    // FIFO(-LM, no heavy task): T1 0-8 ms; T2 blocked on link 0, so T3 uses
    // link 1 (1 MB by 8 ms); T2 8-16 ms preempts T3; T3 ends at 24 ms.
    close(&tcts(&caps, &three_tasks(), "fifo-lm", 1e12), &[0.008, 0.016, 0.024], 1e-9);
    // Fair share: everyone at half rate; T1, T2 end at 16 ms, T3 at 24 ms.
    close(&tcts(&caps, &three_tasks(), "fair-share", 0.0), &[0.016, 0.016, 0.024], 1e-9);
}

// The SPC run of the three-task example, with its preemption lag, is
// hand-computed in tests/spc_protocol.rs.

#[test]
fn spc_limited_multiplexing_matches_ideal() {
    let caps = [C];
    let tasks = vec![task(0.0, vec![flow(&[0], 10.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    let o = SpcOptions { threshold: MB, ..SpcOptions::default() };
    let r = run_spc(&caps, &tasks, &o).unwrap();
    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    close(&tct, &[0.088, 0.024], 5.0 * o.rtt_s);
}

fn ref_tcts(caps: &[f64], tasks: &[Task], policy: &str, threshold: f64) -> Vec<f64> {
    let s = policy_by_tag(policy, threshold).unwrap();
    netheat_flowsched::run_reference(caps, tasks, s, 1).unwrap().iter().map(|t| t.tct_s()).collect()
}

#[test]
fn reference_heavy_detection_is_exact() {
    let caps = [C];
    let tasks = vec![task(0.0, vec![flow(&[0], 10.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    close(&ref_tcts(&caps, &tasks, "fifo-lm", MB), &[0.088, 0.024], 1e-9);
    close(&ref_tcts(&[C, C], &three_tasks(), "fifo-lm", 1e12), &[0.008, 0.016, 0.024], 1e-9);
}

/// Task A (1 MB whose sender computes for 4 ms) and task B (1 MB at once)
/// arrive together on one 1 Gbps link; A is first in FIFO order.
fn compute_tasks() -> Vec<Task> {
    let late = TaskFlow { delay_s: 0.004, ..flow(&[0], MB) };
    vec![task(0.0, vec![late]), task(0.0, vec![flow(&[0], MB)])]
}

/// The engine runs and the reference give `fifo` and `fair_share` (task
/// completion times) exactly; SPC (FIFO-LM with no task heavy, i.e. FIFO,
/// 100 us rounds) gives `spc`, FIFO plus its round costs (first request,
/// preemption lag, the delta probe), hand-computed by each caller.
fn check_every_simulator(caps: &[f64], tasks: &[Task], fifo: &[f64], fair_share: &[f64], spc: &[f64]) {
    for (policy, want) in [("fifo", fifo), ("fair-share", fair_share)] {
        close(&tcts(caps, tasks, policy, 0.0), want, 1e-12);
        close(&ref_tcts(caps, tasks, policy, 0.0), want, 1e-12);
    }
    // The protocol without virtual capacity: the hand rounds below (the
    // controller has its own tests in spc_protocol.rs).
    let o = SpcOptions { threshold: 10.0 * MB, virtual_capacity: None, ..SpcOptions::default() };
    let tct: Vec<f64> = run_spc(caps, tasks, &o).unwrap().tasks.iter().map(|t| t.tct_s()).collect();
    close(&tct, spc, 1e-9);
}

#[test]
fn compute_time_delays_a_flow_in_every_simulator() {
    // FIFO: B alone sends 0.5 MB until A starts at 4 ms and preempts it;
    // A ends at 12 ms, B's other 0.5 MB at 16 ms. Fair share: B alone
    // until 4 ms, then both at 500 Mbps: B's other 0.5 MB ends at 12 ms,
    // A's last 0.5 MB alone at 16 ms.
    // SPC: B sends from round 1; A's first request in round 40 ([4.0, 4.1)
    // ms) gets AR 0 (B holds the link) and preempts B; A gets C in round 41
    // and sends rounds 42-121 (ends 12.2 ms). B sent 40 rounds (500 KB),
    // probes at delta in round 122 (250 B), and its last 499,750 B take
    // 39.98 rounds from round 123: 16.298 ms.
    check_every_simulator(&[C], &compute_tasks(), &[0.012, 0.016], &[0.016, 0.012], &[0.0122, 0.016298]);
}

/// Task A is two-stage: two 125 KB flows into a mid-level aggregator share
/// its 1 Gbps downlink (link 0) and end at 2 ms; the mid-level computes for
/// 1 ms, then forwards 125 KB over link 1. Task B sends 500 KB over link 1
/// from time 0; A is first in FIFO order.
fn two_stage_tasks() -> Vec<Task> {
    let kb = |b: f64| b * 1e3;
    let input = TaskFlow { feeds: Some(2), ..flow(&[0], kb(125.0)) };
    let up = TaskFlow { delay_s: 0.001, ..flow(&[1], kb(125.0)) };
    vec![task(0.0, vec![input.clone(), input, up]), task(0.0, vec![flow(&[1], kb(500.0))])]
}

#[test]
fn second_stage_waits_for_its_inputs_and_compute_in_every_simulator() {
    use netheat_flowsched::run_reference;
    let caps = [C, C];
    // FIFO: B alone on link 1 sends 375 KB until A's forward flow starts at
    // 3 ms and preempts it; A ends at 4 ms, B's last 125 KB at 5 ms. Fair
    // share: from 3 ms both have 125 KB left at 500 Mbps: 5 ms each.
    // SPC: A's inputs split link 0 from round 1 and end with round 20 (2.1
    // ms); the forward flow starts at 3.1 ms (round 31), gets AR 0 there
    // (B holds link 1) and C in round 32, and sends rounds 33-42 (4.3 ms).
    // B sent rounds 1-31 (387.5 KB), probes at delta in round 43 (250 B),
    // then 112,250 B take 8.98 rounds from round 44: 5.298 ms.
    check_every_simulator(&caps, &two_stage_tasks(), &[0.004, 0.005], &[0.005, 0.005], &[0.0043, 0.005298]);
    // A flow must feed a later flow of its own task.
    let mut bad = two_stage_tasks();
    bad[0].flows[2].feeds = Some(0);
    let s = policy_by_tag("fifo", 0.0).unwrap();
    let e = run_reference(&caps, &bad, s, 1).unwrap_err().to_string();
    assert!(e.contains("feeds") && e.contains("task 0, flow 2"), "{e}");
    assert!(run_spc(&caps, &bad, &SpcOptions::default()).is_err());
    let s = policy_by_tag("fifo", 0.0).unwrap();
    assert!(run_ideal(&caps, &bad, s, &IdealOptions::default()).is_err());
}

/// FIFO-LM on tasks of several flows at one receiver (the paper's one-stage
/// shape). A: three 1 MB flows from workers on links 1-3 into the
/// receiver's link 0; B: three 0.1 MB flows from the same workers; both at
/// time 0, A first; threshold 1 MB.
/// * FIFO serialises: A alone at 125 MB/s ends at 24 ms, then B at 26.4 ms.
/// * Fair share: six flows at 125/6 MB/s; B's flows end at 4.8 ms, A at
///   26.4 ms (the link is never idle).
/// * FIFO-LM: A alone until it has sent 1 MB (8 ms), then heavy and shares
///   its class with B: six flows again, B ends at 8 + 4.8 = 12.8 ms, A at
///   26.4 ms. With the threshold above A's size it is plain FIFO.
#[test]
fn fifo_lm_serialises_multi_flow_tasks_and_lets_a_heavy_one_share() {
    let f = |w: u32, bytes: f64| TaskFlow { src: w, dst: 0, bytes, path: vec![w, 0], delay_s: 0.0, feeds: None };
    let tasks =
        vec![task(0.0, (1..=3).map(|w| f(w, MB)).collect()), task(0.0, (1..=3).map(|w| f(w, 0.1 * MB)).collect())];
    let caps = [C; 4];
    for tct in [ref_tcts, tcts] {
        close(&tct(&caps, &tasks, "fifo", MB), &[0.024, 0.0264], 1e-9);
        close(&tct(&caps, &tasks, "fair-share", MB), &[0.0264, 0.0048], 1e-9);
        // The engine notices the crossing at its next 100 us poll.
        close(&tct(&caps, &tasks, "fifo-lm", MB), &[0.0264, 0.0128], 2.1e-4);
        close(&tct(&caps, &tasks, "fifo-lm", 4.0 * MB), &[0.024, 0.0264], 1e-9);
    }
}

/// Skipped polls still catch a task that arrives later and crosses first.
/// A (100 MB, one flow on link 0) cannot cross the 50 MB threshold before
/// 400 ms, so the engine's next poll after its first read is due then. B
/// arrives at 1 ms with four 15 MB flows on links 1-4 (4 Gbps): it crosses
/// at 1 + 50 MB / 500 MB/s = 101 ms. C (1 MB on link 1, behind B in FIFO
/// order) arrives at 2 ms and waits until B turns heavy, then shares link 1
/// with B's flow at 62.5 MB/s: done at 101 + 16 = 117 ms, a TCT of 115 ms
/// (later if B's first read waited for A's next poll; the test fails then).
#[test]
fn fifo_lm_polls_a_later_candidate_before_an_earlier_ones_due_time() {
    let to =
        |dst: u32, link: u32, bytes: f64| TaskFlow { src: 0, dst, bytes, path: vec![link], delay_s: 0.0, feeds: None };
    let tasks = vec![
        task(0.0, vec![to(1, 0, 100.0 * MB)]),
        task(0.001, (1..=4).map(|l| to(l + 1, l, 15.0 * MB)).collect()),
        task(0.002, vec![to(2, 1, MB)]),
    ];
    let caps = [C; 5];
    close(&ref_tcts(&caps, &tasks, "fifo-lm", 50.0 * MB)[2..], &[0.115], 1e-9);
    close(&tcts(&caps, &tasks, "fifo-lm", 50.0 * MB)[2..], &[0.115], 2.1e-4);
}
