//! What the scenario layer costs over the Baraat point's direct run, at the
//! paper's scale (issue 27's "< 5%" budget): 10,000 one-stage Bing-like
//! tasks of 39 rack-local flows on the 36,000-host datacenter at 80% load,
//! the same tasks both ways (the scenario's `aggregation` app with the
//! point's seed; `tests/repro/baraat.rs` checks that the task times are
//! bit-identical). Direct: `netheat_flowsched::run_ideal_stats` on the
//! point's tasks (what `netheat reproduce` ran before `baraat.toml` became a
//! scenario experiment). Scenario: `Scenario::run_parts` (the runner, the
//! decisions and the tables), twice: with every table (flows, tasks,
//! links), and with `scenario.record = []` (the tasks only, what the direct
//! run computes: the engine forgets finished flows and keeps no link
//! windows, as the direct run's engine is configured). The run columns time
//! the runs alone; the point columns add what each builds from its spec:
//! the datacenter (the point's `build_topology`, the scenario's datacenter
//! file) and the tasks (the point's generator draws each flow's path, which
//! the scenario's engine does as flows start). Both ways free their
//! datacenter and tasks inside both timers: `run_parts` takes its parts and
//! frees them before it returns, so the direct way's timers include
//! dropping its own (about 20 ms for the 10,000 tasks' 390,000 flows and
//! their paths; they were left out until 2026-11-28, as was the direct
//! point's datacenter, 14 ms, until the day before). Each timing is the
//! median of `REPS` runs, the ways alternated so that load from other
//! processes hits them alike; on a shared virtual machine single runs
//! still swing by up to 2x, so compare instruction counts for small
//! differences:
//!
//! `valgrind --tool=callgrind --toggle-collect='*Scenario::run_parts' target/release/examples/scenario_overhead 10000 lean fifo-lm`
//! (and `--toggle-collect='*run_ideal_stats*'` with `direct`).
//!
//! `cargo run --release -p netheat-repro --example scenario_overhead [-- TASKS [direct|scenario|lean [POLICY]]]`

use std::time::Instant;

use netheat_core::{LinkId, Routing};
use netheat_flowsched::{policy::percentile, policy_by_tag, run_ideal_stats, IdealOptions};
use netheat_repro::baraat::{build_topology, workload::generate, AggregationSpec, PointSpec, SizeLaw, Structure};
use netheat_scenario::Scenario;

const REPS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let tasks: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    // `-- TASKS direct|scenario|lean [POLICY]`: one run one way only (for a
    // profiler; `lean` is the scenario with the tasks only), of fair share
    // or POLICY.
    let only = std::env::args().nth(2);
    let only_policy = std::env::args().nth(3).unwrap_or_else(|| "fair-share".into());
    let seed = netheat_config::workload::table_seed(1, 1, 0);
    let w = AggregationSpec::new(SizeLaw::Bing, Structure::OneStage, tasks, seed);
    let data = netheat_data::DataDir::explicit("/nonexistent");
    println!(
        "| Baraat point, {tasks} one-stage Bing tasks, 36,000 hosts | flows | run: direct run_ideal (s) | \
         scenario, every table (s) | overhead | scenario, tasks only (s) | overhead | \
         point with generation: direct (s) | scenario, tasks only (s) | overhead |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for policy in ["fair-share", "fifo-lm"] {
        if only.is_some() && policy != only_policy {
            continue;
        }
        let p = PointSpec::new(30, 30, 40, w.clone(), policy);
        let topo = build_topology(&p).expect("topology");
        let caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as LinkId)).collect();
        let generated = generate(&AggregationSpec { hosts_per_rack: 40, ..w.clone() }, &topo).expect("tasks");
        let sizes: Vec<f64> = generated.iter().map(|t| t.bytes).collect();
        let threshold = percentile(&sizes, p.heavy_percentile);
        let flows: usize = generated.iter().map(|t| t.flows.len()).sum();
        let text = |record: &str| {
            format!(
                "[scenario]\nseed = 1\n{record}[topology]\nfile = \"examples/topologies/baraat-36k.toml\"\n\
             [[workload.app]]\nkind = \"aggregation\"\ntasks = {tasks}\n\
             [scheduling]\npolicy = \"{policy}\"\nheavy-percentile = {}\n",
                p.heavy_percentile
            )
        };
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let s = Scenario::from_text(&text(""), "overhead.toml", &root);
        let lean = Scenario::from_text(&text("record = []\n"), "overhead.toml", &root);
        if let Some(mode) = only.as_deref() {
            let t0 = Instant::now();
            if mode == "direct" {
                let sched = policy_by_tag(policy, threshold).expect("policy");
                run_ideal_stats(&caps, &generated, sched, &IdealOptions::default()).expect("run");
            } else {
                let s = if mode == "lean" { &lean } else { &s };
                let parts = s.parts(&data).expect("scenario");
                let t1 = Instant::now();
                s.run_parts(parts, &mut |_, _| true).expect("run");
                println!("{mode} run only: {:.4} s", t1.elapsed().as_secs_f64());
            }
            println!("{mode}: {:.4} s", t0.elapsed().as_secs_f64());
            return;
        }
        // Per repetition: (direct run, direct point with generation), the
        // scenario's run with every table, (tasks-only run, tasks-only point
        // with generation).
        let (mut direct, mut direct_point, mut via, mut lean_run, mut lean_point) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..REPS {
            // The point builds its datacenter as the scenario does from its
            // file (`Scenario::parts`, timed below).
            let t0 = Instant::now();
            let topo = build_topology(&p).expect("topology");
            let caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as LinkId)).collect();
            let gen = generate(&AggregationSpec { hosts_per_rack: 40, ..w.clone() }, &topo).expect("tasks");
            let sched = policy_by_tag(policy, threshold).expect("policy");
            let t1 = Instant::now();
            let (r, _) = run_ideal_stats(&caps, &gen, sched, &IdealOptions::default()).expect("run");
            // The run is then done with its datacenter and tasks, as the
            // scenario's is with its parts, which `run_parts` takes and
            // frees before it returns.
            drop((gen, caps, topo));
            direct.push(t1.elapsed().as_secs_f64());
            direct_point.push(t0.elapsed().as_secs_f64());
            let parts = s.parts(&data).expect("scenario");
            let t0 = Instant::now();
            let out = s.run_parts(parts, &mut |_, _| true).expect("run");
            via.push(t0.elapsed().as_secs_f64());
            assert_eq!(out.tasks.len(), r.len());
            assert!(out.tasks.iter().zip(&r).all(|(a, b)| a.finish_s == b.finish_s), "same task times");
            let t0 = Instant::now();
            let parts = lean.parts(&data).expect("scenario");
            let t1 = Instant::now();
            let out = lean.run_parts(parts, &mut |_, _| true).expect("run");
            lean_run.push(t1.elapsed().as_secs_f64());
            lean_point.push(t0.elapsed().as_secs_f64());
            assert!(out.flows.is_empty() && out.links.is_empty(), "nothing but tasks recorded");
            assert!(out.tasks.iter().zip(&r).all(|(a, b)| a.finish_s == b.finish_s), "same task times");
        }
        let pct = |a: f64, b: f64| 100.0 * (a / b - 1.0);
        let (d, dp, v, l, lp) =
            (median(direct), median(direct_point), median(via), median(lean_run), median(lean_point));
        println!(
            "| {policy} | {flows} | {d:.2} | {v:.2} | {:+.1}% | {l:.2} | {:+.1}% | {dp:.2} | {lp:.2} | {:+.1}% |",
            pct(v, d),
            pct(l, d),
            pct(lp, dp)
        );
    }
}
