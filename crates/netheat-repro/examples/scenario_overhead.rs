//! What the scenario layer costs over the Baraat point's direct run, at the
//! paper's scale (issue 27's "< 5%" budget): 10,000 one-stage Bing-like
//! tasks of 39 rack-local flows on the 36,000-host datacenter at 80% load,
//! the same tasks both ways (the scenario's `aggregation` app with the
//! point's seed; `tests/repro/baraat.rs` checks that the task times are
//! bit-identical). Direct: `netheat_flowsched::run_ideal_stats` on the
//! point's tasks (what `netheat reproduce` runs today). Scenario:
//! `Scenario::run_parts` (the runner, the decisions, every table: flows,
//! tasks, links). Generation is done before either clock starts. Each
//! timing is the median of `REPS` runs, the two ways alternated so that
//! load from other processes hits both alike.
//!
//! `cargo run --release -p netheat-repro --example scenario_overhead [-- TASKS]`

use std::time::Instant;

use netheat_core::{LinkId, Routing};
use netheat_flowsched::{policy::percentile, policy_by_tag, run_ideal_stats, IdealOptions};
use netheat_repro::baraat::{build_topology, workload::generate, AggregationSpec, PointSpec, SizeLaw, Structure};
use netheat_scenario::Scenario;

const REPS: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let tasks: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    // `-- TASKS direct|scenario`: one fair-share run one way only (for a profiler).
    let only = std::env::args().nth(2);
    let seed = netheat_config::workload::table_seed(1, 1, 0);
    let w = AggregationSpec::new(SizeLaw::Bing, Structure::OneStage, tasks, seed);
    let data = netheat_data::DataDir::explicit("/nonexistent");
    println!("| Baraat point, {tasks} one-stage Bing tasks, 36,000 hosts | flows | direct run_ideal (s) | scenario (s) | overhead |");
    println!("|---|---|---|---|---|");
    for policy in ["fair-share", "fifo-lm"] {
        let p = PointSpec::new(30, 30, 40, w.clone(), policy);
        let topo = build_topology(&p).expect("topology");
        let caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as LinkId)).collect();
        let generated = generate(&AggregationSpec { hosts_per_rack: 40, ..w.clone() }, &topo).expect("tasks");
        let sizes: Vec<f64> = generated.iter().map(|t| t.bytes).collect();
        let threshold = percentile(&sizes, p.heavy_percentile);
        let flows: usize = generated.iter().map(|t| t.flows.len()).sum();
        let text = format!(
            "[scenario]\nseed = 1\n[topology]\nfile = \"examples/topologies/baraat-36k.toml\"\n\
             [[workload.app]]\nkind = \"aggregation\"\ntasks = {tasks}\n\
             [scheduling]\npolicy = \"{policy}\"\nheavy-percentile = {}\n",
            p.heavy_percentile
        );
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let s = Scenario::from_text(&text, "overhead.toml", &root);
        let (mut direct, mut via) = (Vec::new(), Vec::new());
        if let Some(mode) = only.as_deref() {
            let t0 = Instant::now();
            if mode == "direct" {
                let sched = policy_by_tag(policy, threshold).expect("policy");
                run_ideal_stats(&caps, &generated, sched, &IdealOptions::default()).expect("run");
            } else {
                let parts = s.parts(&data).expect("scenario");
                let t1 = Instant::now();
                s.run_parts(parts, &mut |_, _| true).expect("run");
                println!("{mode} run only: {:.2} s", t1.elapsed().as_secs_f64());
            }
            println!("{mode}: {:.2} s", t0.elapsed().as_secs_f64());
            return;
        }
        for _ in 0..REPS {
            let sched = policy_by_tag(policy, threshold).expect("policy");
            let t0 = Instant::now();
            let (r, _) = run_ideal_stats(&caps, &generated, sched, &IdealOptions::default()).expect("run");
            direct.push(t0.elapsed().as_secs_f64());
            let parts = s.parts(&data).expect("scenario");
            let t0 = Instant::now();
            let out = s.run_parts(parts, &mut |_, _| true).expect("run");
            via.push(t0.elapsed().as_secs_f64());
            assert_eq!(out.tasks.len(), r.len());
            assert!(out.tasks.iter().zip(&r).all(|(a, b)| a.finish_s == b.finish_s), "same task times");
        }
        let (d, v) = (median(direct), median(via));
        println!("| {policy} | {flows} | {d:.2} | {v:.2} | {:+.1}% |", 100.0 * (v / d - 1.0));
    }
}
