//! The Baraat experiment point and its workloads (moved from
//! netheat-flowsched's tests): generated tasks, the policies run on them
//! against the reference and SPC, and the point's checks.
//!
//! Links are 1 Gbps = 125 MB/s, so 1 MB takes 8 ms alone.

use netheat_flowsched::policy::percentile;
use netheat_flowsched::{policy_by_tag, run_ideal, run_reference, run_spc, IdealOptions, SpcOptions, Task};
use netheat_repro::baraat::AggregationSpec;

const C: f64 = 1e9;

fn tcts(caps: &[f64], tasks: &[Task], policy: &str, threshold: f64) -> Vec<f64> {
    let s = policy_by_tag(policy, threshold).unwrap();
    run_ideal(caps, tasks, s, &IdealOptions::default()).unwrap().iter().map(|t| t.tct_s()).collect()
}

fn ref_tcts(caps: &[f64], tasks: &[Task], policy: &str, threshold: f64) -> Vec<f64> {
    let s = policy_by_tag(policy, threshold).unwrap();
    run_reference(caps, tasks, s, 1).unwrap().iter().map(|t| t.tct_s()).collect()
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?} (tol {tol})");
    }
}

/// Link capacities of a small three-tier datacenter (`pods` x `racks` x
/// `hosts`, the experiment's topology builder) and the tasks of `w` on it.
fn generated(pods: usize, racks: usize, hosts: usize, w: &AggregationSpec) -> (Vec<f64>, Vec<Task>) {
    use netheat_core::{LinkId, Routing};
    use netheat_repro::baraat::{build_topology, workload::generate, PointSpec};
    let topo = build_topology(&PointSpec::new(pods, racks, hosts, w.clone(), "fifo")).unwrap();
    let caps = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as LinkId)).collect();
    (caps, generate(w, &topo).unwrap())
}

/// The setup these tests were written for (ours, `pool` placement): workers
/// from every host, 360 aggregators, 40 flows a task, and mid-levels that
/// forward 1/40 of their inputs.
fn pool_spec(
    kind: netheat_repro::baraat::SizeLaw,
    app: netheat_repro::baraat::Structure,
    tasks: usize,
    seed: u64,
) -> AggregationSpec {
    AggregationSpec {
        placement: netheat_repro::baraat::Placement::Pool,
        aggregators: 360,
        fanout: 40,
        selectivity: 1.0 / 40.0,
        ..AggregationSpec::new(kind, app, tasks, seed)
    }
}

/// A point's result carries the engine counters of an idealized run (every
/// flow completes once) and none for the SPC protocol.
#[test]
fn point_reports_engine_counters_for_idealized_runs_only() {
    use netheat_repro::baraat::{run_point, PointSpec, SizeLaw, Structure};
    let w = AggregationSpec { aggregators: 4, ..pool_spec(SizeLaw::Bing, Structure::OneStage, 20, 3) };
    let mut p = PointSpec::new(2, 2, 4, AggregationSpec { fanout: 6, ..w }, "fifo-lm");
    let r = run_point(&p).unwrap();
    let st = r.engine.expect("idealized runs are on the engine");
    assert_eq!(st.flows_completed as usize, r.flows);
    assert!(st.repairs > 0 && st.rate_changes > 0);
    p.spc = true;
    assert!(run_point(&p).unwrap().engine.is_none());
}

/// The engine-based runs agree with the from-scratch reference on a small
/// generated workload (two-tier-like Clos, partition-aggregate).
#[test]
fn engine_runs_match_reference() {
    use netheat_repro::baraat::{AggregationSpec, SizeLaw, Structure};
    let w = AggregationSpec {
        fanout: 6,
        load: 0.7,
        aggregators: 3,
        ..pool_spec(SizeLaw::Uniform, Structure::OneStage, 60, 5)
    };
    let (caps, tasks) = generated(1, 2, 8, &w);
    for pol in ["fair-share", "sff", "stf", "fifo"] {
        let a = tcts(&caps, &tasks, pol, 0.0);
        let b = ref_tcts(&caps, &tasks, pol, 0.0);
        close(&a, &b, 1e-9);
    }
    // Workers computing for 0.5 ms on average before they answer: the
    // engine's pending flows and the reference's waiting list agree.
    let w = AggregationSpec { compute_s: 5e-4, ..w };
    let tasks = generated(1, 2, 8, &w).1;
    assert!(tasks.iter().flat_map(|t| &t.flows).all(|f| f.delay_s > 0.0));
    for pol in ["fair-share", "sff", "stf", "fifo"] {
        let a = tcts(&caps, &tasks, pol, 0.0);
        let b = ref_tcts(&caps, &tasks, pol, 0.0);
        close(&a, &b, 1e-9);
    }
    // Two-stage tasks with compute time at workers and mid-levels.
    let w = AggregationSpec { app: Structure::TwoStage, fanout: 3, tasks: 30, load: 0.5, ..w };
    let tasks = generated(1, 2, 8, &w).1;
    for pol in ["fair-share", "sff", "stf", "fifo"] {
        let a = tcts(&caps, &tasks, pol, 0.0);
        let b = ref_tcts(&caps, &tasks, pol, 0.0);
        close(&a, &b, 1e-9);
    }
}

#[test]
fn compute_time_is_exponential_for_every_sender() {
    use netheat_repro::baraat::build_topology;
    use netheat_repro::baraat::workload::generate;
    use netheat_repro::baraat::{AggregationSpec, PointSpec, SizeLaw, Structure};
    let w = AggregationSpec {
        fanout: 10,
        load: 0.5,
        aggregators: 0,
        compute_s: 2e-3,
        ..pool_spec(SizeLaw::Bing, Structure::Storage, 2000, 9)
    };
    let topo = build_topology(&PointSpec::new(1, 2, 12, w.clone(), "fifo")).unwrap();
    // Storage: 20,000 draws; two-stage: 2,000 tasks x 110 senders (workers
    // and mid-level aggregators). Mean 2 ms (standard error 0.7% and
    // 0.2%), and the share above the mean is e^-1 = 0.368.
    for app in [Structure::Storage, Structure::TwoStage] {
        let tasks = generate(&AggregationSpec { app, ..w.clone() }, &topo).unwrap();
        let d: Vec<f64> = tasks.iter().flat_map(|t| t.flows.iter().map(|f| f.delay_s)).collect();
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let above = d.iter().filter(|&&x| x > 2e-3).count() as f64 / d.len() as f64;
        assert!(
            (mean / 2e-3 - 1.0).abs() < 0.03 && (above - (-1.0f64).exp()).abs() < 0.015,
            "{app:?}: mean {mean}, above {above}"
        );
    }
    let e = generate(&AggregationSpec { compute_s: f64::NAN, ..w }, &topo).unwrap_err().to_string();
    assert!(e.contains("compute"), "{e}");
}

/// Two-stage tasks: every mid-level aggregator's flow is fed by its
/// `fanout` workers' flows (sent to it), and carries `selectivity` (here
/// 1/5) of their bytes to the top aggregator; `mids` sets how many
/// mid-levels there are.
#[test]
fn two_stage_tasks_feed_each_mid_level_flow() {
    use netheat_repro::baraat::build_topology;
    use netheat_repro::baraat::workload::generate;
    use netheat_repro::baraat::{AggregationSpec, PointSpec, SizeLaw, Structure};
    let w = AggregationSpec {
        fanout: 5,
        load: 0.5,
        aggregators: 0,
        selectivity: 0.2,
        ..pool_spec(SizeLaw::Uniform, Structure::TwoStage, 50, 3)
    };
    let topo = build_topology(&PointSpec::new(1, 2, 12, w.clone(), "fifo")).unwrap();
    // `mids` mid-levels (default `fanout`) of `fanout` workers each.
    for mids in [0, 3] {
        let m_n = if mids == 0 { 5 } else { mids };
        for t in generate(&AggregationSpec { mids, ..w.clone() }, &topo).unwrap() {
            assert_eq!(t.flows.len(), 6 * m_n);
            let top = t.flows[5].dst;
            for m in 0..m_n {
                let up = &t.flows[6 * m + 5];
                assert_eq!((up.feeds, up.dst), (None, top));
                let inputs = &t.flows[6 * m..6 * m + 5];
                assert!(inputs.iter().all(|f| f.feeds == Some(6 * m as u32 + 5) && f.dst == up.src));
                let sum: f64 = inputs.iter().map(|f| f.bytes).sum();
                assert!((up.bytes - sum / 5.0).abs() <= 0.5, "{} vs {sum}/5", up.bytes);
            }
        }
    }
    let e =
        generate(&AggregationSpec { app: Structure::OneStage, mids: 3, ..w.clone() }, &topo).unwrap_err().to_string();
    assert!(e.contains("mids") && e.contains("two-stage"), "{e}");
    let e = generate(&AggregationSpec { mids: 24, ..w }, &topo).unwrap_err().to_string();
    assert!(e.contains("mids") && e.contains("1..=23"), "{e}");
}

/// Mean over tasks of (sample variance / sample mean²) of their flow sizes:
/// the squared within-task coefficient of variation.
fn mean_within_task_cv2(tasks: &[Task]) -> f64 {
    let cv2: Vec<f64> = tasks
        .iter()
        .map(|t| {
            let n = t.flows.len() as f64;
            let m = t.flows.iter().map(|f| f.bytes).sum::<f64>() / n;
            t.flows.iter().map(|f| (f.bytes - m).powi(2)).sum::<f64>() / (n - 1.0) / (m * m)
        })
        .collect();
    cv2.iter().sum::<f64>() / cv2.len() as f64
}

#[test]
fn flow_cv_skews_the_flows_of_a_task() {
    use netheat_repro::baraat::build_topology;
    use netheat_repro::baraat::workload::{generate, FB2010_REDUCER_CV};
    use netheat_repro::baraat::{AggregationSpec, PointSpec, SizeLaw, Structure};
    let mut w =
        AggregationSpec { load: 0.5, aggregators: 0, ..pool_spec(SizeLaw::Pareto, Structure::OneStage, 2000, 3) };
    let topo = build_topology(&PointSpec::new(1, 2, 40, w.clone(), "fifo")).unwrap();
    // The size laws of Bing-like and data-analytics tasks give equal flows.
    assert_eq!(mean_within_task_cv2(&generate(&w, &topo).unwrap()), 0.0);
    // Log-normal factors with mean 1 and the trace's coefficient of variation.
    w.flow_cv = FB2010_REDUCER_CV;
    let da = generate(&w, &topo).unwrap();
    let cv = mean_within_task_cv2(&da).sqrt();
    assert!((cv - FB2010_REDUCER_CV).abs() < 0.015, "within-task CV {cv}");
    // Bing-like flows have a known base size (20 KB, or 200 KB in the
    // heavier tasks), so each flow's factor is observable: over 800,000
    // flows their mean is 1 and their coefficient of variation `flow_cv`.
    w.kind = SizeLaw::Bing;
    w.flow_cv = 1.0;
    w.tasks = 20_000;
    let factors: Vec<f64> = generate(&w, &topo)
        .unwrap()
        .iter()
        .flat_map(|t| {
            let base = if t.bytes < 40.0 * 60e3 { 20e3 } else { 200e3 };
            t.flows.iter().map(move |f| f.bytes / base)
        })
        .collect();
    let n = factors.len() as f64;
    let mean = factors.iter().sum::<f64>() / n;
    let sd = (factors.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!((mean - 1.0).abs() < 0.01 && (sd / mean - 1.0).abs() < 0.03, "factor mean {mean}, CV {}", sd / mean);
    w.flow_cv = -0.1;
    let e = generate(&w, &topo).unwrap_err().to_string();
    assert!(e.contains("flow-cv"), "{e}");
}

#[test]
fn fb2010_reducer_cv_is_the_trace_median() {
    use netheat_data::{load_coflows, DataDir};
    use netheat_repro::baraat::workload::FB2010_REDUCER_CV;
    let dir = DataDir::resolve(None);
    if !dir.exists() {
        eprintln!("note: data directory {} absent; skipping real-data test", dir.path.display());
        return;
    }
    let trace = load_coflows(&dir, "coflow-fb2010").unwrap();
    let mut cvs: Vec<f64> = trace
        .coflows
        .iter()
        .filter(|c| c.reducers.len() >= 10)
        .map(|c| {
            let n = c.reducers.len() as f64;
            let m = c.reducers.iter().map(|r| r.1).sum::<f64>() / n;
            // Population standard deviation over the coflow's reducers.
            (c.reducers.iter().map(|r| (r.1 - m).powi(2)).sum::<f64>() / n).sqrt() / m
        })
        .collect();
    assert_eq!(cvs.len(), 154);
    cvs.sort_by(f64::total_cmp);
    // Lower median of the 154 values.
    let median = cvs[(cvs.len() - 1) / 2];
    assert!((median - FB2010_REDUCER_CV).abs() < 5e-4, "median {median}");
}

/// SPC follows the stage dependencies of generated two-stage tasks (with
/// 2 ms of compute time at workers and mid-levels): its costs are counted
/// in rounds (the first request of each stage's flows, one round of
/// preemption lag, the delta probe after a hand-over), so its task
/// completion times approach the idealized FIFO's as rounds shrink. With
/// 20 KB flows that last about 1.6 rounds of 100 us, those costs dominate
/// at the default round length on this small network (the module docs of
/// `spc`); `delta` (2%) keeps a remainder that rounds do not remove.
#[test]
fn spc_two_stage_approaches_ideal_fifo_as_rounds_shrink() {
    use netheat_repro::baraat::{AggregationSpec, SizeLaw, Structure};
    let w = AggregationSpec {
        fanout: 4,
        load: 0.6,
        aggregators: 8,
        compute_s: 2e-3,
        ..pool_spec(SizeLaw::Bing, Structure::TwoStage, 150, 2)
    };
    let (caps, tasks) = generated(2, 2, 10, &w);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ideal = mean(&tcts(&caps, &tasks, "fifo", 0.0));
    let spc = |rtt_s: f64| {
        let o = SpcOptions { rtt_s, threshold: f64::INFINITY, ..SpcOptions::default() };
        mean(&run_spc(&caps, &tasks, &o).unwrap().tasks.iter().map(|t| t.tct_s()).collect::<Vec<_>>()) / ideal
    };
    let r = [spc(1e-4), spc(1e-5), spc(1e-6)];
    eprintln!("spc/ideal mean at 100 / 10 / 1 us rounds: {r:?}");
    assert!(r[0] > r[1] && r[1] > r[2] && r[2] > 1.0 - 1e-3, "{r:?}");
}

/// Steady rounds done at once change nothing: FIFO-LM through SPC on
/// generated one- and two-stage workloads (heavy crossings, compute time,
/// idle stretches) gives the same completion times as computing every
/// round.
#[test]
fn spc_skipping_steady_rounds_changes_nothing() {
    use netheat_repro::baraat::{AggregationSpec, SizeLaw, Structure};
    for (kind, app, compute_s) in [
        (SizeLaw::Pareto, Structure::OneStage, 0.0),
        (SizeLaw::Bing, Structure::TwoStage, 1e-3),
        (SizeLaw::Bing, Structure::Storage, 5e-4),
    ] {
        let w = AggregationSpec { fanout: 4, load: 0.5, aggregators: 6, compute_s, ..pool_spec(kind, app, 120, 4) };
        let (caps, tasks) = generated(2, 2, 10, &w);
        let sizes: Vec<f64> = tasks.iter().map(|t| t.bytes).collect();
        let o = SpcOptions { threshold: percentile(&sizes, 0.8), ..SpcOptions::default() };
        let fast = run_spc(&caps, &tasks, &o).unwrap();
        let every = run_spc(&caps, &tasks, &SpcOptions { skip_steady: false, ..o }).unwrap();
        assert_eq!(every.skipped, 0);
        assert_eq!(fast.rounds, every.rounds);
        eprintln!("{app:?}: {} of {} rounds skipped", fast.skipped, fast.rounds);
        assert!(fast.skipped > 0);
        for (a, b) in fast.tasks.iter().zip(&every.tasks) {
            assert!((a.finish_s - b.finish_s).abs() <= 1e-12 * b.finish_s, "{app:?}: {a:?} vs {b:?}");
        }
    }
}

/// FIFO-LM on the engine reads each candidate task's exact bytes so far at
/// every poll, so a task turns heavy at most one poll interval after it
/// crosses the threshold: with short polls the engine run meets the
/// reference, which finds every crossing time exactly.
#[test]
fn engine_fifo_lm_meets_exact_heavy_detection_as_polls_shrink() {
    use netheat_repro::baraat::{AggregationSpec, SizeLaw, Structure};
    let w = AggregationSpec {
        fanout: 6,
        load: 0.7,
        aggregators: 3,
        ..pool_spec(SizeLaw::Pareto, Structure::OneStage, 60, 5)
    };
    let (caps, tasks) = generated(1, 2, 8, &w);
    let sizes: Vec<f64> = tasks.iter().map(|t| t.bytes).collect();
    let th = percentile(&sizes, 0.8);
    let want = ref_tcts(&caps, &tasks, "fifo-lm", th);
    // Heavy tasks do change the outcome here (else the test proves nothing).
    let fifo = ref_tcts(&caps, &tasks, "fifo", th);
    assert!(want.iter().zip(&fifo).any(|(a, b)| (a - b).abs() > 1e-3));
    for poll in [1e-4, 1e-5, 1e-6, 1e-7] {
        let s = policy_by_tag("fifo-lm", th).unwrap();
        let got: Vec<f64> = run_ideal(&caps, &tasks, s, &IdealOptions { lbs: 1, poll_s: poll })
            .unwrap()
            .iter()
            .map(|t| t.tct_s())
            .collect();
        // Measured: 0.99, 0.89, 0.94 and 0.70 of the poll interval (with
        // the rates seen at the previous poll instead of exact bytes: up
        // to 1.9 intervals).
        let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(worst <= poll, "poll {poll:e}: a task is {worst:e} s off the exact detection");
    }
}

/// The paper's placement (§5.2) on 2 pods x 3 racks x 4 hosts with one
/// aggregator per pod: the aggregators are hosts 0 and 12 (first host of
/// each pod), and a one-stage task's workers are the other hosts of its
/// aggregator's rack: {1, 2, 3} or {13, 14, 15}. Arrivals: the aggregators'
/// links run at the load, so the mean gap is 8 E[bytes] / (load * 2 * C).
#[test]
fn rack_placement_queries_the_aggregators_rack() {
    use netheat_repro::baraat::{SizeLaw, Structure};
    let w = AggregationSpec {
        aggregators: 2,
        fanout: 3,
        hosts_per_rack: 4,
        ..AggregationSpec::new(SizeLaw::Uniform, Structure::OneStage, 4000, 7)
    };
    let (_, tasks) = generated(2, 3, 4, &w);
    let mut seen = [0usize; 2];
    for t in &tasks {
        let agg = t.flows[0].dst;
        let mut src: Vec<u32> = t.flows.iter().map(|f| f.src).collect();
        src.sort_unstable();
        match agg {
            0 => (assert_eq!(src, [1, 2, 3]), seen[0] += 1),
            12 => (assert_eq!(src, [13, 14, 15]), seen[1] += 1),
            _ => panic!("aggregator {agg}"),
        };
        assert!(t.flows.iter().all(|f| f.dst == agg && f.path.len() == 2), "intra-rack: host -> ToR -> host");
    }
    assert!(seen.iter().all(|&n| n > 1800), "{seen:?}");
    let mean = tasks.iter().map(|t| t.bytes).sum::<f64>() / tasks.len() as f64;
    let gap = tasks.last().unwrap().arrival_s / tasks.len() as f64;
    let want = 8.0 * mean / (0.8 * 2.0 * C);
    // Exponential gaps: the mean of 4,000 is within 5% (3 sigma = 4.7%).
    assert!((gap / want - 1.0).abs() < 0.05, "gap {gap} want {want}");
    // Only the other hosts of a rack can be workers.
    let e = netheat_repro::baraat::run_point(&netheat_repro::baraat::PointSpec::new(
        2,
        3,
        4,
        AggregationSpec { fanout: 4, ..w },
        "fifo",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("fanout") && e.contains("3 other hosts"), "{e}");
}

/// Two-stage tasks in the paper's placement: mid-levels in distinct racks
/// holding no aggregator, each querying the other hosts of its rack, and
/// forwarding 3% (the paper's selectivity) of what they received.
#[test]
fn rack_placement_two_stage() {
    use netheat_repro::baraat::{SizeLaw, Structure};
    let w = AggregationSpec {
        aggregators: 2,
        fanout: 3,
        mids: 4,
        hosts_per_rack: 4,
        ..AggregationSpec::new(SizeLaw::Uniform, Structure::TwoStage, 200, 3)
    };
    let (_, tasks) = generated(2, 3, 4, &w);
    for t in &tasks {
        assert_eq!(t.flows.len(), 4 * 4);
        let mut racks = Vec::new();
        for m in 0..4 {
            let up = &t.flows[4 * m + 3];
            assert!(up.dst == 0 || up.dst == 12);
            let rack = up.src / 4;
            assert!(rack != 0 && rack != 3, "mid-level in an aggregator's rack");
            racks.push(rack);
            let inputs = &t.flows[4 * m..4 * m + 3];
            assert!(inputs.iter().all(|f| f.dst == up.src && f.src / 4 == rack && f.src != up.src));
            let sum: f64 = inputs.iter().map(|f| f.bytes).sum();
            assert!((up.bytes - 0.03 * sum).abs() <= 0.5, "{} vs 3% of {sum}", up.bytes);
        }
        racks.sort_unstable();
        racks.dedup();
        assert_eq!(racks.len(), 4, "distinct racks");
    }
    // Five mid-levels need five free racks; there are four.
    let (pods, racks, hosts) = (2, 3, 4);
    let e = netheat_repro::baraat::run_point(&netheat_repro::baraat::PointSpec::new(
        pods,
        racks,
        hosts,
        AggregationSpec { mids: 5, ..w },
        "fifo",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("mids") && e.contains("(4 here)"), "{e}");
}

/// Data-analytics tasks draw their sizes from the given law, split evenly
/// over their flows; without a law it is an error that names the trace.
#[test]
fn data_analytics_draws_from_the_given_sizes() {
    use netheat_repro::baraat::{SizeLaw, Structure};
    use std::sync::Arc;
    let law = Arc::new(vec![3e6, 30e6, 3e9]);
    let w = AggregationSpec {
        aggregators: 2,
        fanout: 3,
        hosts_per_rack: 4,
        task_sizes: Some(law),
        ..AggregationSpec::new(SizeLaw::DataAnalytics, Structure::OneStage, 3000, 5)
    };
    let (_, tasks) = generated(2, 3, 4, &w);
    let mut count = [0usize; 3];
    for t in &tasks {
        let k = [3e6, 30e6, 3e9].iter().position(|&s| s == t.bytes).expect("a size of the law");
        count[k] += 1;
        assert!(t.flows.iter().all(|f| f.bytes == t.bytes / 3.0));
    }
    // Uniform over the three sizes: 1,000 each, within 4 sigma (~103).
    assert!(count.iter().all(|&n| (n as f64 - 1000.0).abs() < 105.0), "{count:?}");
    let e = netheat_repro::baraat::run_point(&netheat_repro::baraat::PointSpec::new(
        2,
        3,
        4,
        AggregationSpec { task_sizes: None, ..w },
        "fifo",
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("Facebook 2010"), "{e}");
}

/// The data-analytics law is the Facebook 2010 trace's coflow shuffle
/// sizes: 526 coflows, the smallest 1 MB, the median 25 MB, the largest
/// 8,501,205 MB and the mean 67,554.247 MB (computed from the file by a
/// separate script). Skipped without the data directory.
#[test]
fn fb2010_task_sizes_match_the_trace() {
    use netheat_data::DataDir;
    use netheat_repro::baraat::workload::load_fb2010_task_sizes;
    let dir = DataDir::resolve(None);
    if !dir.join("coflow-benchmark/FB2010-1Hr-150-0.txt").exists() {
        eprintln!("skipped: no data directory");
        return;
    }
    let s = load_fb2010_task_sizes(&dir).unwrap();
    let mut v = s.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    assert_eq!(v.len(), 526);
    assert_eq!([v[0], v[262], v[263], v[525]], [1e6, 25e6, 25e6, 8_501_205e6]);
    let mean = v.iter().sum::<f64>() / 526.0;
    assert!((mean / 67_554.247e6 - 1.0).abs() < 1e-8, "{mean}");
}

/// The Baraat point and a scenario with the same workload as an
/// `aggregation` app schedule the same tasks identically: the point's
/// idealized runner (`netheat_flowsched::run_ideal`, fixed paths) and the
/// scenario's flow driver (`DagRunner`, ECMP) give every task the same
/// completion time, for each idealized policy. The tasks keep their flows in
/// the aggregator's rack (the paper's placement, §5.2), so each path is the
/// one ToR hop and the two sides' path choices cannot differ; one-stage
/// tasks with and without compute time (delay steps) and storage reads are
/// checked. The scenario draws from its app table's seed
/// (`netheat_config::workload::table_seed`), given to the point too.
#[test]
fn point_and_aggregation_scenario_agree_on_rack_local_tasks() {
    use netheat_repro::baraat::{run_point, PointSpec, SizeLaw, Structure};
    use netheat_scenario::Scenario;

    let seed = netheat_config::workload::table_seed(1, 1, 0);
    for (structure, app, compute_s, fanout, sizes, law) in [
        ("one-stage", Structure::OneStage, 0.0, 7, "bing", SizeLaw::Bing),
        ("one-stage", Structure::OneStage, 2e-3, 7, "bing", SizeLaw::Bing),
        ("storage", Structure::Storage, 0.0, 3, "bing", SizeLaw::Bing),
        ("one-stage", Structure::OneStage, 0.0, 7, "uniform", SizeLaw::Uniform),
        ("storage", Structure::Storage, 0.0, 3, "uniform", SizeLaw::Uniform),
    ] {
        let w = AggregationSpec {
            fanout,
            aggregators: 4,
            load: 0.8,
            compute_s,
            ..AggregationSpec::new(law, app, 300, seed)
        };
        for policy in ["fair-share", "sff", "stf", "fifo", "fifo-lm"] {
            let p = PointSpec::new(2, 2, 8, w.clone(), policy);
            let point = run_point(&p).unwrap();
            let text = format!(
                "[scenario]\nseed = 1\n\
                 [topology]\nkind = \"three-tier\"\npods = 2\nracks-per-pod = 2\nhosts-per-rack = 8\n\
                 aggs-per-pod = 4\nspines = 16\nhost-link = \"1Gbps\"\ntor-uplink = \"4Gbps\"\n\
                 [[workload.app]]\nkind = \"aggregation\"\ntask-sizes = \"{sizes}\"\nstructure = \"{structure}\"\nfanout = {fanout}\n\
                 aggregators = 4\nload = 0.8\ntasks = 300\ncompute = \"{}ms\"\n\
                 [scheduling]\npolicy = \"{policy}\"\nheavy-percentile = {}\nload-balancers = {}\npoll-interval = \"{}us\"\n",
                compute_s * 1e3,
                p.heavy_percentile,
                p.lbs,
                p.poll_s * 1e6
            );
            let sc = Scenario::from_text(&text, "equivalence.toml", std::path::Path::new("."));
            let r = sc.run(&netheat_data::DataDir::explicit("."), &mut |_, _| true).unwrap();
            let what = format!("{sizes} {structure}, compute {compute_s} s, {policy}");
            assert_eq!(r.tasks.len(), point.tasks.len(), "{what}");
            for (a, b) in point.tasks.iter().zip(&r.tasks) {
                assert_eq!(a.start_s, b.start_s, "{what}");
                assert_eq!(a.bytes, b.bytes, "{what}");
                assert_eq!(a.finish_s, b.finish_s, "{what}: task {} ({} bytes)", a.id, a.bytes);
            }
        }
    }
}

/// Bad `aggregation` tables stop at the key, with the file position.
#[test]
fn bad_aggregation_tables_name_the_key() {
    use netheat_scenario::Scenario;
    let err = |app: &str| {
        let text = format!(
            "[topology]\nkind = \"three-tier\"\npods = 2\nracks-per-pod = 2\nhosts-per-rack = 8\n\
             host-link = \"1Gbps\"\ntor-uplink = \"4Gbps\"\n[[workload.app]]\nkind = \"aggregation\"\n{app}\n"
        );
        match Scenario::from_text(&text, "a.toml", std::path::Path::new("."))
            .parts(&netheat_data::DataDir::explicit("/nonexistent"))
        {
            Ok(_) => panic!("expected an error for {app:?}"),
            Err(e) => e.to_string(),
        }
    };
    // The app's keys start on line 10.
    let e = err("task-sizes = \"zipf\"");
    assert!(e.starts_with("a.toml:10:1: key `workload.app[0].task-sizes`: unknown `zipf`; known: bing, data_analytics, pareto, uniform"), "{e}");
    let e = err("structure = \"three-stage\"");
    assert!(e.contains("key `workload.app[0].structure`: unknown `three-stage`"), "{e}");
    let e = err("mid-aggregators = 3");
    assert!(e.contains("key `workload.app[0].mid-aggregators`: is used by structure = \"two-stage\" only"), "{e}");
    let e = err("rate = 5.0");
    assert!(e.contains("key `workload.app[0].rate`: is not used by kind \"aggregation\""), "{e}");
    // Rack placement: a rack of 8 has 7 other hosts.
    let e = err("fanout = 8");
    assert!(e.contains("key `workload.app[0].fanout`: rack placement: at most the 7 other hosts of a rack"), "{e}");
    let e = err("load = 1.5");
    assert!(e.contains("key `workload.app[0].load`: must be in (0, 1)"), "{e}");
    // The data-analytics law needs the trace: the data directory is named.
    let e = err("task-sizes = \"data-analytics\"");
    assert!(e.contains("key `workload.app[0].dataset`") && e.contains("/nonexistent"), "{e}");
}
