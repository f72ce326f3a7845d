//! Hand-computed checks of the SPC protocol's mechanism (Baraat §4.3,
//! Algorithms 1 and 2): the preemption lag that comes from keeping the
//! nominal rate (NR) and the actual rate (AR) apart, work conservation
//! through lowered demands, and convergence to the idealized FIFO-LM.
//!
//! Links are 1 Gbps, rounds (RTTs) 100 us unless stated: a flow at the full
//! rate sends 12,500 bytes a round; `delta` is 2% of the NIC rate (20 Mbps).

use netheat_flowsched::{
    policy_by_tag, run_ideal, run_spc, run_spc_dag, ClassUnit, FlowschedError, IdealOptions, Releases, SpcOptions,
    SpcRecord, SpcResult, Task, TaskFlow, VirtualCapacity, Windows,
};

const C: f64 = 1e9;
const MB: f64 = 1e6;
const RTT: f64 = 100e-6;
/// Link windows of 1 ms, as many as the run needs.
const W1MS: Windows = Windows { window_s: 1e-3, max_windows: u32::MAX };

/// `run_spc_dag` on a copy of `tasks` with `feeds[t][j]` as the release
/// lists, no progress wanted.
fn dag(
    caps: &[f64],
    tasks: &[Task],
    feeds: &[Vec<Vec<u32>>],
    o: &SpcOptions,
    windows: Option<Windows>,
) -> Result<(SpcResult, SpcRecord), FlowschedError> {
    run_spc_dag(caps, tasks.to_vec(), &Releases::from_nested(feeds), o, windows, &mut |_, _| true)
}

fn flow(path: &[u32], bytes: f64) -> TaskFlow {
    TaskFlow { src: 0, dst: 1, bytes, path: path.to_vec(), delay_s: 0.0, feeds: None }
}

fn task(at: f64, flows: Vec<TaskFlow>) -> Task {
    Task { arrival_s: at, bytes: flows.iter().map(|f| f.bytes).sum(), flows }
}

/// The protocol without virtual capacity: every port hands out exactly its
/// capacity, so the hand-computed rounds below hold to the byte (the
/// `virtual_capacity` tests at the end add the port's controller).
fn traced() -> SpcOptions {
    SpcOptions {
        rtt_s: RTT,
        delta_frac: 0.02,
        threshold: f64::INFINITY,
        virtual_capacity: None,
        trace: true,
        ..SpcOptions::default()
    }
}

/// Task A (first in FIFO order), one 0.5 MB flow whose sender computes until
/// 4.05 ms, and task B, one 1 MB flow from 0, both on link 0.
fn late_preemptor() -> Vec<Task> {
    let late = TaskFlow { delay_s: 0.00405, ..flow(&[0], 0.5 * MB) };
    vec![task(0.0, vec![late]), task(0.0, vec![flow(&[0], MB)])]
}

/// Figure 15's three tasks of two flows (ids 3, 2, 1 given by the tests):
/// T3 on link 1 from 0, T2 on links 0 and 1 from 5 ms, T1 on link 0 from
/// 10 ms.
fn figure_15_tasks() -> Vec<Task> {
    let pair = |at: f64, path: &[u32], bytes: f64| task(at, vec![flow(path, bytes), flow(path, bytes)]);
    vec![pair(0.0, &[1], 20.0 * MB), pair(0.005, &[0, 1], 5.0 * MB), pair(0.010, &[0], MB)]
}

fn near(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-6 * want.abs().max(1.0)
}

/// Task A (first in FIFO order) has one 0.5 MB flow whose sender computes
/// until 4.05 ms (inside round 40, [4.0, 4.1) ms); task B has one 1 MB flow
/// from 0. Both cross link 0.
///
/// B sends its first SRQ in round 0 and the full rate from round 1. A's
/// first SRQ is answered in round 40, before B's (priority order): NR = C,
/// but B still holds its allocation C, so AR = C - Allocation = 0; B's SRQ,
/// answered next, sees A's demand: NR = AR = 0. In round 41 A gets AR = C.
/// So during round 41 neither sends (the preemption lag), A sends from
/// round 42 and its 40 rounds end with round 81 (8.2 ms; the idealized
/// FIFO ends it at 4.05 + 4 = 8.05 ms). B, lowered to demand delta, gets
/// NR = AR = delta in round 81 and the full rate in round 82 (Algorithm 1's
/// probe): it sent 40 rounds (500 KB) before, 250 B in round 82, and the
/// remaining 499,750 B take 39.98 rounds from round 83: 12.298 ms.
#[test]
fn preemption_lags_one_round_behind_the_first_request() {
    let tasks = late_preemptor();
    let r = run_spc(&[C], &tasks, &traced()).unwrap();
    // trace[k]: the rates answered in round k, used during round k + 1.
    let rates = |k: usize| r.trace[k].1.clone();
    assert_eq!(rates(0), vec![0.0, C]);
    assert_eq!(rates(39), vec![0.0, C]);
    // Round 40: A's AR is what B leaves (nothing), and B is preempted.
    assert_eq!(rates(40), vec![0.0, 0.0], "NR and AR kept apart: no instant preemption");
    assert_eq!(rates(41), vec![C, 0.0]);
    assert_eq!(rates(80), vec![C, 0.0]);
    // A ends in round 81: B probes at delta, then asks the full rate.
    assert!(near(rates(81)[1], 0.02 * C), "{:?}", rates(81));
    assert_eq!(rates(82)[1], C);
    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    assert!(near(tct[0], 0.0082) && near(tct[1], 0.012298), "{tct:?}");
}

/// Task T1 has flow X on links 0 and 1 and flow X2 on link 1; task T2
/// (lower priority) has flow Y on link 0. X is bottlenecked on link 1,
/// where T1's two flows split C: NR = C/2. On link 0, X alone in the top
/// class gets NR = AR = C in round 0 (it asked its NIC rate) and Y nothing.
/// X then lowers its demand to MinNR + delta = 0.52 C (Algorithm 1), so in
/// round 1 link 0 gives Y (which lowered to 0 + delta after round 0) its
/// demand, 0.02 C; Y sees NR = its demand and asks its NIC rate again, and
/// in round 2 gets what X leaves: C - 0.52 C = 0.48 C. Link 0 then carries
/// X's 0.5 C and Y's 0.48 C: work-conserving up to delta.
#[test]
fn a_flow_bottlenecked_elsewhere_leaves_its_link_to_lower_classes() {
    let tasks = vec![task(0.0, vec![flow(&[0, 1], 10.0 * MB), flow(&[1], 10.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    let r = run_spc(&[C, C], &tasks, &traced()).unwrap();
    let rates = |k: usize| r.trace[k].1.clone();
    assert_eq!(rates(0), vec![C / 2.0, C / 2.0, 0.0]);
    let r1 = rates(1);
    assert!(r1[0] == C / 2.0 && near(r1[2], 0.02 * C), "{r1:?}");
    let r2 = rates(2);
    assert!(r2[0] == C / 2.0 && near(r2[2], 0.48 * C), "{r2:?}");
    // Steady: the same answers while nothing starts or ends.
    for k in 3..20 {
        assert_eq!(rates(k), r2, "round {k}");
    }
}

/// The three-task example: link 0 carries T1 and T2, link 1 carries T2
/// and T3 (T2 crosses both). T1 = 1 MB, T2 = 1 MB, T3 = 2 MB, all at 0.
/// Idealized FIFO: 8 / 16 / 24 ms.
///
/// Round 0: T1 gets C; T2 gets NR = 0 on link 0 and NR = AR = C on link 1,
/// so T3 nothing. Round 1: T2 lowered its demand to delta, T3 (lowered to
/// delta too) gets NR = AR = delta; round 2: T3 asks its NIC rate and gets
/// 0.98 C. T1 sends rounds 1-80 and ends at 8.1 ms. In round 80 T2 gets its
/// lowered demand (delta) on both links and asks its NIC rate; in round 81
/// link 1 answers T2 first: NR = C but AR = C - 0.98 C (T3 still holds its
/// allocation) = 0.02 C, and T3, answered next, is preempted; in round 82 T2
/// gets C. T2: 2 x 250 B in rounds 81-82, then 999,500 B from round 83:
/// ends at 16.2 + 0.096 ms. T3: 250 B + 79 x 12,250 B by round 81; in round
/// 162 (T2 gone) it probes at delta (250 B in round 163), then sends its
/// last 1,031,750 B from round 164: 24.6 + 0.054 ms.
#[test]
fn three_task_example_hand_computed() {
    let tasks = vec![
        task(0.0, vec![flow(&[0], MB)]),
        task(0.0, vec![flow(&[0, 1], MB)]),
        task(0.0, vec![flow(&[1], 2.0 * MB)]),
    ];
    let r = run_spc(&[C, C], &tasks, &traced()).unwrap();
    let rates = |k: usize| r.trace[k].1.clone();
    assert_eq!(rates(0), vec![C, 0.0, 0.0]);
    let r1 = rates(1);
    assert!(r1[0] == C && r1[1] == 0.0 && near(r1[2], 0.02 * C), "{r1:?}");
    let r2 = rates(2);
    assert!(r2[1] == 0.0 && near(r2[2], 0.98 * C), "{r2:?}");
    let k_end = r.trace.iter().position(|(_, v)| v[0] == 0.0).unwrap();
    assert_eq!(k_end, 80);
    let r80 = rates(80);
    assert!(near(r80[1], 0.02 * C) && near(r80[2], 0.98 * C), "{r80:?}");
    let r81 = rates(81);
    assert!(near(r81[1], 0.02 * C) && r81[2] == 0.0, "{r81:?}");
    assert_eq!(rates(82), vec![0.0, C, 0.0]);
    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    assert!(near(tct[0], 0.0081) && near(tct[1], 0.016296) && near(tct[2], 0.024654), "{tct:?}");
}

/// FIFO-LM on one link: a heavy task H (4 flows of 1.25 MB) and four light
/// tasks (4 flows of 125 KB each), all at 0, threshold 1 MB. Idealized
/// (exact detection): H alone until it has sent 1 MB (8 ms), then shares
/// with each light task in turn at C/2 (8 ms each): the light tasks end at
/// 16, 24, 32, 40 ms; H has then sent 1 + 4 x 0.5 MB and ends at
/// 40 + 2 MB / C = 56 ms.
///
/// SPC's costs, each at most one round: the first SRQ; the heavy flag
/// (bytes reserved run one round ahead of bytes sent, and the flag is read
/// at a round boundary); and per hand-over from one light task to the next
/// the round in which the finishing flows end, the round in which the next
/// task's flows probe at their lowered demand (delta), and one round of
/// preemption. So light task k (1-based) ends within (2 + 3k) rounds of the
/// idealized time, and H, after four hand-overs, within 14 rounds; the
/// engine's heavy poll (100 us, like the round) adds one round. The bound
/// holds at 100 us and 10 us rounds, so SPC converges as rounds shrink.
#[test]
fn spc_converges_to_idealized_fifo_lm_within_its_round_costs() {
    let kb = |x: f64| x * 1e3;
    let mut tasks = vec![task(0.0, (0..4).map(|_| flow(&[0], kb(1250.0))).collect())];
    for _ in 0..4 {
        tasks.push(task(0.0, (0..4).map(|_| flow(&[0], kb(125.0))).collect()));
    }
    let want = [0.056, 0.016, 0.024, 0.032, 0.040];
    let s = policy_by_tag("fifo-lm", MB).unwrap();
    let ideal: Vec<f64> =
        run_ideal(&[C], &tasks, s, &IdealOptions { lbs: 1, poll_s: 1e-6 }).unwrap().iter().map(|t| t.tct_s()).collect();
    for (g, w) in ideal.iter().zip(&want) {
        assert!((g - w).abs() <= 2e-6, "idealized {ideal:?}");
    }
    let mut worst = Vec::new();
    for rtt in [100e-6, 10e-6] {
        let o = SpcOptions { rtt_s: rtt, threshold: MB, ..SpcOptions::default() };
        let spc: Vec<f64> = run_spc(&[C], &tasks, &o).unwrap().tasks.iter().map(|t| t.tct_s()).collect();
        let bound = [15.0, 5.0, 8.0, 11.0, 14.0];
        let mut w: f64 = 0.0;
        for k in 0..5 {
            let d = spc[k] - ideal[k];
            assert!(d >= -rtt && d <= bound[k] * rtt, "rtt {rtt}: task {k}: spc {spc:?} ideal {ideal:?}");
            w = w.max(d.abs());
        }
        eprintln!(
            "rtt {rtt}: spc - ideal in rounds: {:?}",
            (0..5).map(|k| (spc[k] - ideal[k]) / rtt).collect::<Vec<_>>()
        );
        worst.push(w);
    }
    assert!(worst[1] < worst[0], "{worst:?}");
}

/// A DAG through `run_spc_dag`: flow A (125 KB on link 0) feeds a pause of
/// 1.05 ms (a 0-byte flow without links), which feeds two flows B and B'
/// (125 KB each, on links 1 and 2): a fan-out `TaskFlow::feeds` cannot say.
///
/// A sends its first SRQ in round 0 and 12,500 B a round in rounds 1-10:
/// [0.1, 1.1) ms. The pause ends at 1.1 + 1.05 = 2.15 ms, inside round 21,
/// where B and B' send their first SRQ; they send in rounds 22-31 and end at
/// 3.2 ms, the task's end. In 1 ms windows link 0 carries 0.9 ms x 1 Gbps =
/// 112,500 B in window 0 and 12,500 B in window 1; links 1 and 2 carry
/// 100,000 B in window 2 ([2.2, 3) ms) and 25,000 B in window 3.
#[test]
fn a_dag_with_a_pause_and_a_fan_out_hand_computed() {
    let kb = 125_000.0;
    let pause = TaskFlow { delay_s: 1.05e-3, ..flow(&[], 0.0) };
    let tasks = vec![task(0.0, vec![flow(&[0], kb), pause, flow(&[1], kb), flow(&[2], kb)])];
    let feeds = vec![vec![vec![1], vec![2, 3], vec![], vec![]]];
    let (r, rec) = dag(&[C; 3], &tasks, &feeds, &SpcOptions::default(), Some(W1MS)).unwrap();
    assert!(near(r.tasks[0].finish_s, 3.2e-3), "{:?}", r.tasks);
    let want_start = [0.0, 2.15e-3, 2.15e-3, 2.15e-3];
    let want_finish = [1.1e-3, 2.15e-3, 3.2e-3, 3.2e-3];
    for k in 0..4 {
        assert!(near(rec.flow_start_s[k], want_start[k]), "{:?}", rec.flow_start_s);
        assert!(near(rec.flow_finish_s[k], want_finish[k]), "{:?}", rec.flow_finish_s);
    }
    let close = |v: &[f64], w: &[f64]| v.len() == w.len() && v.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-3);
    assert!(close(&rec.link_bytes[0], &[112_500.0, 12_500.0]), "{:?}", rec.link_bytes);
    for l in [1, 2] {
        assert!(close(&rec.link_bytes[l], &[0.0, 0.0, 100_000.0, 25_000.0]), "{:?}", rec.link_bytes);
    }
    // A flow feeding an earlier one is refused.
    let bad = vec![vec![vec![1], vec![0], vec![], vec![]]];
    assert!(dag(&[C; 3], &tasks, &bad, &SpcOptions::default(), Some(W1MS)).is_err());
    // So is a list too few or too many.
    for n in [3, 5] {
        let mut short = Releases::new();
        for j in 0..n {
            short.push(feeds[0].get(j).cloned().unwrap_or_default());
        }
        assert!(run_spc_dag(&[C; 3], tasks.clone(), &short, &SpcOptions::default(), None, &mut |_, _| true).is_err());
    }
}

/// `run_spc_dag` reports its progress every round it works through: the
/// flows finished of the run's 4 in the DAG above, 0 until A ends (1.1 ms),
/// then 1, then 2 once the pause ends with B and B' starting (2.15 ms); the
/// run ends when B and B' do, with no round after. A callback that returns
/// `false` stops it: [`FlowschedError::Interrupted`], the caller's Ctrl-C.
#[test]
fn a_dag_run_reports_progress_and_stops_when_asked() {
    let kb = 125_000.0;
    let pause = TaskFlow { delay_s: 1.05e-3, ..flow(&[], 0.0) };
    let tasks = vec![task(0.0, vec![flow(&[0], kb), pause, flow(&[1], kb), flow(&[2], kb)])];
    let feeds = Releases::from_nested(&[vec![vec![1], vec![2, 3], vec![], vec![]]]);
    let mut seen = Vec::new();
    let o = SpcOptions::default();
    run_spc_dag(&[C; 3], tasks.clone(), &feeds, &o, None, &mut |done, total| {
        seen.push((done, total));
        true
    })
    .unwrap();
    assert!(seen.iter().all(|&(_, total)| total == 4), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    let mut done: Vec<u64> = seen.iter().map(|&(d, _)| d).collect();
    done.dedup();
    assert_eq!(done, [0, 1, 2]);
    let stop = run_spc_dag(&[C; 3], tasks, &feeds, &o, None, &mut |done, _| done == 0);
    assert!(matches!(stop, Err(FlowschedError::Interrupted)), "{stop:?}");
}

/// Without dependencies `run_spc_dag` is `run_spc` (the three-task example
/// above, whose times are hand-computed there), and every byte is counted
/// once on every link of its flow's path: link 0 carries T1's and T2's
/// 1 MB, link 1 T2's 1 MB and T3's 2 MB.
#[test]
fn recorded_runs_match_plain_runs_and_conserve_bytes() {
    let tasks = vec![
        task(0.0, vec![flow(&[0], MB)]),
        task(0.0, vec![flow(&[0, 1], MB)]),
        task(0.0, vec![flow(&[1], 2.0 * MB)]),
    ];
    let o = SpcOptions::default();
    let plain = run_spc(&[C, C], &tasks, &o).unwrap();
    let feeds = vec![vec![vec![]]; 3];
    let (rec_run, rec) = dag(&[C, C], &tasks, &feeds, &o, Some(W1MS)).unwrap();
    for (a, b) in plain.tasks.iter().zip(&rec_run.tasks) {
        assert_eq!(a.finish_s, b.finish_s);
    }
    assert!(near(rec_run.tasks[2].tct_s(), 0.024654), "{:?}", rec_run.tasks);
    for (k, t) in rec_run.tasks.iter().enumerate() {
        assert_eq!(rec.flow_finish_s[k], t.finish_s);
    }
    let total = |l: usize| rec.link_bytes[l].iter().sum::<f64>();
    assert!((total(0) - 2.0 * MB).abs() < 1e-3 && (total(1) - 3.0 * MB).abs() < 1e-3, "{} {}", total(0), total(1));
    // No window of a 1 Gbps link holds more than 1 ms at 1 Gbps.
    assert!(rec.link_bytes.iter().flatten().all(|&b| b <= 125_000.0 + 1e-6));
    // T3 ends at 24.654 ms, in window 24: with room for 24 windows the run
    // stops once bytes reach past them, at the end of its last round.
    let few = Windows { window_s: 1e-3, max_windows: 24 };
    match dag(&[C, C], &tasks, &feeds, &o, Some(few)) {
        Err(netheat_flowsched::FlowschedError::WindowsExceeded { t_s, max_windows: 24, .. }) => {
            assert!(t_s > 0.024 && t_s <= 0.0247, "{t_s}")
        }
        other => panic!("{other:?}"),
    }
    assert!(dag(&[C, C], &tasks, &feeds, &o, Some(Windows { max_windows: 25, ..few })).is_ok());
    // Without windows: the same times, no link bytes.
    let (bare_run, bare) = dag(&[C, C], &tasks, &feeds, &o, None).unwrap();
    assert!(bare.link_bytes.is_empty() && bare.window_s.is_none());
    assert_eq!(bare.flow_finish_s, rec.flow_finish_s);
    assert!(bare_run.tasks.iter().zip(&rec_run.tasks).all(|(a, b)| a.finish_s == b.finish_s));
}

/// A run longer than 10^8 rounds of simulated time whose rates settle
/// (the data-analytics tasks of the Baraat experiment: terabytes at 1 Gbps)
/// costs only the rounds in which something changes. Two tasks on one
/// link: A, 2.5 TB from 0, and B, 1.25 MB arriving at 10,000 s. A sends its
/// first SRQ in round 0 and 12,500 B a round from round 1. B's first SRQ is
/// answered in round 100,000,000 (10,000 s): A, the earlier task, is in the
/// higher class (no heavy threshold), so B's NR is 0 and A keeps the link.
/// A's 2.5e12 B are 200,000,000 rounds from round 1, so it ends with round
/// 200,000,000 (20,000.0001 s), past the former cap of 10^8 rounds of
/// simulated time; B is then alone, probes at delta and asks the full
/// rate: 1.25 MB at C takes 100 rounds, give or take the probe.
#[test]
fn a_run_past_the_round_cap_costs_only_the_rounds_that_change() {
    let opts = SpcOptions { trace: false, ..traced() };
    let tasks = vec![task(0.0, vec![flow(&[0], 2.5e12)]), task(10_000.0, vec![flow(&[0], 1.25 * MB)])];
    let r = run_spc(&[C], &tasks, &opts).unwrap();
    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    assert!(near(tct[0], 20_000.000_1), "{tct:?}");
    // B waits for A (10,000 s) and then needs about 100 rounds of its own.
    assert!(tct[1] > 10_000.0 && tct[1] < 10_000.000_1 + 103.0 * RTT, "{tct:?}");
    // Over 2 x 10^8 rounds of simulated time, almost all of them skipped.
    assert!(r.rounds > 200_000_000, "{}", r.rounds);
    assert!(r.rounds - r.skipped < 1_000, "{} rounds, {} skipped", r.rounds, r.skipped);
}

/// Baraat §5.3, Figure 14: several tasks mapped onto one class share it
/// max-min, as a port sees only the class's id. Four tasks of one 1 MB flow
/// on one link, all at 0.
///
/// Two tasks a class: T0 and T1 get C/2 each from round 1 and send their
/// 1 MB in 160 rounds, ending with round 160 at 16.1 ms. T2 and T3, held at
/// a demand of delta, get it in round 160's pass (250 B each in round 161)
/// and C/2 from round 162: their last 999,750 B take 15.996 ms, so they end
/// at 32.196 ms. One class for everything (`u64::MAX`, the paper's RCP
/// baseline): every flow at C/4 from round 1, all four end at 32.1 ms.
/// One task a class (FIFO): T0 ends at 8.1 ms. In round 80's pass T1, T2
/// and T3 all get their demand, delta (250 B each in round 81); in round 81
/// all three ask the full rate, T1 gets what the other two still hold
/// back, C - 2 delta (12,000 B in round 82), and the full rate from round
/// 83: its last 987,750 B end at 8.3 + 7.902 = 16.202 ms.
#[test]
fn tasks_sharing_a_class_share_it_max_min() {
    let tasks: Vec<Task> = (0..4).map(|_| task(0.0, vec![flow(&[0], MB)])).collect();
    let tct = |class_size: u64| -> Vec<f64> {
        let o = SpcOptions { class_size, trace: false, ..traced() };
        run_spc(&[C], &tasks, &o).unwrap().tasks.iter().map(|t| t.tct_s()).collect()
    };
    let two = tct(2);
    let want = [0.0161, 0.0161, 0.032196, 0.032196];
    assert!(two.iter().zip(want).all(|(&g, w)| near(g, w)), "{two:?}");
    let all = tct(u64::MAX);
    assert!(all.iter().all(|&g| near(g, 0.0321)), "{all:?}");
    let fifo = tct(1);
    assert!(near(fifo[0], 0.0081) && near(fifo[1], 0.016202), "{fifo:?}");
    // Classes of four tasks: the same as one class.
    assert_eq!(tct(4), all);
    // The task ids reported stay the tasks' own.
    let o = SpcOptions { class_size: 2, trace: false, ..traced() };
    let ids: Vec<u64> = run_spc(&[C], &tasks, &o).unwrap().tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3]);
    assert!(run_spc(&[C], &tasks, &SpcOptions { class_size: 0, ..o }).is_err());
}

/// Baraat §5.3, Figure 16: per-flow serialization against the task's flows
/// sharing. One task of two 1 MB flows on one link. As one class (the
/// task), both flows get C/2 from round 1 and end at 16.1 ms. A class per
/// flow: the first flow alone ends with round 80 at 8.1 ms; the second,
/// held at delta, gets it in round 80's pass (250 B in round 81) and sends
/// its last 999,750 B from round 82 (8.2 ms) at C: the task ends at
/// 16.198 ms, about a round of switching later.
/// Two flows a class puts them back in one class.
#[test]
fn a_class_per_flow_serializes_a_tasks_flows() {
    let tasks = vec![task(0.0, vec![flow(&[0], MB), flow(&[0], MB)])];
    let run = |class_unit: ClassUnit, class_size: u64| {
        let o = SpcOptions { class_unit, class_size, ..traced() };
        run_spc(&[C], &tasks, &o).unwrap()
    };
    let shared = run(ClassUnit::Task, 1);
    assert!(near(shared.tasks[0].tct_s(), 0.0161), "{:?}", shared.tasks);
    assert_eq!(shared.trace[0].1, vec![C / 2.0, C / 2.0]);
    let serial = run(ClassUnit::Flow, 1);
    assert!(near(serial.tasks[0].tct_s(), 0.016198), "{:?}", serial.tasks);
    assert_eq!(serial.trace[0].1, vec![C, 0.0]);
    assert_eq!(serial.trace[79].1[1], 0.0);
    assert!(near(serial.trace[80].1[1], 0.02 * C), "{:?}", serial.trace[80]);
    assert_eq!(serial.trace[81].1[1], C);
    let paired = run(ClassUnit::Flow, 2);
    assert_eq!(paired.tasks[0].finish_s, shared.tasks[0].finish_s);
}

/// A shared class keeps one set of counters at a port: its tasks' bytes
/// reserved add up toward the heavy threshold. Three tasks of one 0.6 MB
/// flow on one link, threshold 1 MB. One task a class: no task ever
/// reserves more than 0.6 MB, so T2 gets more than a probe's `delta` only
/// once T0 and T1 are done (9.6 ms of their data after the first round).
/// Two tasks a class: T0 and T1 together reserve C x RTT = 12,500 B a round
/// from round 0, so their class passes 1 MB after 80 rounds (8 ms), turns
/// heavy and shares with T2's class: T2 gets its share (C / 3) before T0
/// and T1 end.
#[test]
fn a_shared_class_counts_its_tasks_bytes_toward_the_threshold() {
    let tasks: Vec<Task> = (0..3).map(|_| task(0.0, vec![flow(&[0], 0.6 * MB)])).collect();
    let first_rate = |class_size: u64| -> usize {
        let o = SpcOptions { class_size, threshold: MB, ..traced() };
        let r = run_spc(&[C], &tasks, &o).unwrap();
        r.trace.iter().position(|(_, rates)| rates[2] > 0.1 * C).unwrap()
    };
    let per_task = first_rate(1);
    assert!(per_task >= 96, "T2 sends from round {per_task}");
    let shared = first_rate(2);
    assert!((80..=82).contains(&shared), "T2 sends from round {shared}");
}

/// Baraat §5.3, Figure 15: preemption and work conservation, with the
/// paper's priorities (task ids given, as counters per client give them:
/// the later a task here, the higher its priority). Link A (0) and link B
/// (1); every task has two flows over the same links: T3 (id 3) on B from
/// 0, T2 (id 2) on A and B from 5 ms, T1 (id 1) on A from 10 ms.
///
/// * T3 alone: C/2 a flow.
/// * T2's first request (round 50) finds B held by T3: AR 0, and T3,
///   answered after it, is preempted; T2 gets C/2 a flow in round 51's
///   answer and sends from 5.2 ms: it reclaims the link two RTTs after it
///   arrives (the paper measures about 200 us, two RTTs).
/// * T1 does the same to T2 on A (round 100; sends from 10.2 ms). T2, with
///   nothing on A, lowers its demand to delta, and in round 101 T3, held at
///   delta too, gets it on B; in round 102 T3 asks its full rate and gets
///   what T2's two deltas leave, 0.48 C a flow: T1 and T3 progress side by
///   side (work conservation up to delta).
#[test]
fn figure_15_preemption_and_work_conservation() {
    let tasks = figure_15_tasks();
    let o = SpcOptions { ids: Some(vec![3, 2, 1]), ..traced() };
    let r = run_spc(&[C, C], &tasks, &o).unwrap();
    let rates = |k: usize| r.trace[k].1.clone();
    let half = C / 2.0;
    let d = 0.02 * C;
    let same = |got: Vec<f64>, want: [f64; 6]| got.iter().zip(want).all(|(&g, w)| near(g, w));
    // Flows: T3's 0-1, T2's 2-3, T1's 4-5.
    assert!(same(rates(0), [half, half, 0.0, 0.0, 0.0, 0.0]), "{:?}", rates(0));
    assert!(same(rates(49), [half, half, 0.0, 0.0, 0.0, 0.0]), "{:?}", rates(49));
    assert!(same(rates(50), [0.0; 6]), "{:?}", rates(50));
    assert!(same(rates(51), [0.0, 0.0, half, half, 0.0, 0.0]), "{:?}", rates(51));
    assert!(same(rates(99), [0.0, 0.0, half, half, 0.0, 0.0]), "{:?}", rates(99));
    assert!(same(rates(100), [0.0; 6]), "{:?}", rates(100));
    assert!(same(rates(101), [d, d, 0.0, 0.0, half, half]), "{:?}", rates(101));
    assert!(same(rates(102), [0.48 * C, 0.48 * C, 0.0, 0.0, half, half]), "{:?}", rates(102));
    // T1 ends first, then T2, then T3; ids are the given ones.
    let fin: Vec<f64> = r.tasks.iter().map(|t| t.finish_s).collect();
    assert!(fin[2] < fin[1] && fin[1] < fin[0], "{fin:?}");
    assert_eq!(r.tasks.iter().map(|t| t.id).collect::<Vec<_>>(), vec![3, 2, 1]);
    // T1: sends 2 MB from 10.2 ms at C: ends at 26.2 ms.
    assert!(near(fin[2], 0.0262), "{fin:?}");
    assert!(run_spc(&[C, C], &tasks, &SpcOptions { ids: Some(vec![1, 2]), ..traced() }).is_err());
}

/// Queues (`SpcOptions::queues`, Baraat §5.1's clients serving one request
/// at a time): T0 (1 MB on link 0) at 0 and T1 (1 MB on link 1) at 1 ms,
/// on links of their own. Without a queue T1 sends its first SRQ in round
/// 10 and its 80 rounds from round 11: it ends at 9.1 ms (8.1 ms after it
/// arrived). In one queue it waits for T0, which ends at 8.1 ms: it begins
/// then, sends from round 82 and ends at 16.2 ms, 15.2 ms after arriving.
#[test]
fn a_queued_task_begins_when_the_one_before_it_ends() {
    let tasks = vec![task(0.0, vec![flow(&[0], MB)]), task(0.001, vec![flow(&[1], MB)])];
    let feeds = vec![vec![vec![]], vec![vec![]]];
    let o = SpcOptions { trace: false, ..traced() };
    let (free, rec) = dag(&[C, C], &tasks, &feeds, &o, None).unwrap();
    assert!(near(free.tasks[1].tct_s(), 0.0081), "{:?}", free.tasks);
    assert_eq!(rec.task_began_s, vec![0.0, 0.001]);
    let q = SpcOptions { queues: Some(vec![Some(7), Some(7)]), ..o.clone() };
    let (queued, rec) = dag(&[C, C], &tasks, &feeds, &q, None).unwrap();
    assert!(near(queued.tasks[0].tct_s(), 0.0081), "{:?}", queued.tasks);
    assert!(near(queued.tasks[1].tct_s(), 0.0152), "{:?}", queued.tasks);
    assert!(near(rec.task_began_s[1], 0.0081), "{:?}", rec.task_began_s);
    // Queues of their own: as without.
    let own = SpcOptions { queues: Some(vec![Some(1), Some(2)]), ..o.clone() };
    let (sep, _) = dag(&[C, C], &tasks, &feeds, &own, None).unwrap();
    assert_eq!(sep.tasks[1].finish_s, free.tasks[1].finish_s);
    assert!(run_spc(&[C, C], &tasks, &SpcOptions { queues: Some(vec![None]), ..o }).is_err());
}

/// The protocol with virtual capacity (§4.3.2, RCP's gains 0.4 / 1).
fn with_vc() -> SpcOptions {
    SpcOptions { virtual_capacity: Some(VirtualCapacity::default()), ..traced() }
}

/// The preemption of the first test, with virtual capacity. Round 40 is as
/// before (A's AR 0, B preempted), so the port carries nothing in round 41:
/// its controller raises C + 0.4 C, clamped to the demands' sum, A's C plus
/// B's lowered delta: 1.02 C. A gets C and B its delta. In round 42 the
/// input was 1.02 C: 250 B queue, and the capacity falls to 1.02 C - 0.4 x
/// 0.02 C - 250 B / RTT (0.02 C) = 0.992 C; A, answered first, gets NR
/// 0.992 C but AR 0.992 C - B's held 0.02 C = 0.972 C, B nothing. Round 43:
/// input 0.972 C drains the queue, the capacity rises by 0.4 x 0.028 C to
/// 1.0032 C: A C, B 0.0032 C. Round 44: 40 B queue; 1.0032 C - 0.00128 C -
/// 0.0032 C = 0.99872 C, A 0.99552 C. Each cycle repeats with B's share
/// times 0.16, so A's deficit sums to 0.028 / 0.84 = 1/30 of a round: it
/// ends at 8.2 ms + 3.33 us.
#[test]
fn virtual_capacity_steers_a_port_from_its_input_and_queue() {
    let tasks = late_preemptor();
    let r = run_spc(&[C], &tasks, &with_vc()).unwrap();
    let rates = |k: usize| r.trace[k].1.clone();
    let same = |got: Vec<f64>, want: [f64; 2]| got.iter().zip(want).all(|(&g, w)| near(g, w));
    assert_eq!(rates(40), vec![0.0, 0.0]);
    assert!(same(rates(41), [C, 0.02 * C]), "{:?}", rates(41));
    assert!(same(rates(42), [0.972 * C, 0.0]), "{:?}", rates(42));
    assert!(same(rates(43), [C, 0.0032 * C]), "{:?}", rates(43));
    assert!(same(rates(44), [0.99552 * C, 0.0]), "{:?}", rates(44));
    assert!(near(r.max_queue_bytes, 250.0), "{}", r.max_queue_bytes);
    assert!(near(r.tasks[0].tct_s(), 0.0082 + RTT / 30.0), "{:?}", r.tasks);
    // Without it: no queue and the hand times of the first test.
    let plain = run_spc(&[C], &tasks, &traced()).unwrap();
    assert_eq!((plain.max_queue_bytes, plain.vc_updates), (0.0, 0));
    assert!(near(plain.tasks[0].tct_s(), 0.0082));
}

/// Figure 15 with virtual capacity: once T1 runs on A, T2's two flows hold
/// 2 delta on B that they cannot use (they get nothing on A). Without
/// virtual capacity T3 gets the 0.96 C they leave; with it B raises its
/// capacity until its input is within one encoding unit (C / 128) of C, so
/// T3 gets at least C (1 - 1/128) - 0 = 0.9922 C once the port settles,
/// and T1 (alone on A) keeps C.
#[test]
fn virtual_capacity_hands_out_what_flows_held_elsewhere_leave() {
    let tasks = figure_15_tasks();
    let o = SpcOptions { ids: Some(vec![3, 2, 1]), ..with_vc() };
    let r = run_spc(&[C, C], &tasks, &o).unwrap();
    let fin = r.tasks[2].finish_s;
    // The rounds while T1 runs, after the hand-over's transients.
    let settled: Vec<&Vec<f64>> =
        r.trace.iter().filter(|(t, _)| *t > 0.0112 && *t < fin - 2.0 * RTT).map(|(_, v)| v).collect();
    assert!(settled.len() > 100);
    for v in settled {
        assert!(v[0] + v[1] >= C * (1.0 - 1.0 / 128.0), "{v:?}");
        assert!(v[4] + v[5] >= C * (1.0 - 1.0 / 128.0) && v[4] + v[5] <= C * 1.0001, "{v:?}");
    }
    let plain = run_spc(&[C, C], &tasks, &SpcOptions { ids: Some(vec![3, 2, 1]), ..traced() }).unwrap();
    let v = &plain.trace[110].1;
    assert!(near(v[0] + v[1], 0.96 * C), "{v:?}");
    // Recomputing every port and sender each round gives the same outcome.
    let every = run_spc(&[C, C], &tasks, &SpcOptions { skip_steady: false, ..o.clone() }).unwrap();
    for (a, b) in r.tasks.iter().zip(&every.tasks) {
        assert!(near(a.finish_s, b.finish_s), "{a:?} {b:?}");
    }
}

/// Why virtual capacity is off by default: the second test's tasks (T1's X
/// crosses links 0 and 1, its X2 link 1; T2's Y link 0) with it on. A queue
/// on link 0 cuts its capacity, Y loses its share and lowers its demand to
/// delta (Algorithm 1), link 0 runs under C and its capacity climbs, Y asks
/// its NIC rate again and gets what the climb added: a queue again. With
/// RCP's gains at one update a round this repeats every 5 rounds while the
/// flows run (Y between about 0 and 0.67 C), so no round can be skipped.
#[test]
fn virtual_capacity_can_cycle_with_rcps_gains() {
    let tasks = vec![task(0.0, vec![flow(&[0, 1], 10.0 * MB), flow(&[1], 10.0 * MB)]), task(0.0, vec![flow(&[0], MB)])];
    let r = run_spc(&[C, C], &tasks, &with_vc()).unwrap();
    let y: Vec<f64> = (100..150).map(|k| r.trace[k].1[2] / C).collect();
    let (lo, hi) = y.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo < 0.05 && hi > 0.6, "{y:?}");
    for k in 100..145 {
        let (a, b) = (&r.trace[k].1, &r.trace[k + 5].1);
        assert!(a.iter().zip(b).all(|(x, z)| (x - z).abs() < 1e-3 * C), "round {k}: {a:?} {b:?}");
    }
    // Without it the same rounds are steady (the second test).
    let plain = run_spc(&[C, C], &tasks, &traced()).unwrap();
    assert_eq!(plain.trace[100].1, plain.trace[149].1);
}
