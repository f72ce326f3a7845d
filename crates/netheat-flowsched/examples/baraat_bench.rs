//! Benchmark of Baraat experiment points at the paper's scale: a 36,000-host
//! three-tier datacenter, 10,000 one-stage partition-aggregate tasks per
//! point (pools from `BARAAT_AGGREGATORS` / `BARAAT_WORKERS`, default 360
//! aggregators / all hosts as workers; `BARAAT_APP=two-stage` for two-stage
//! tasks of 40 mid-levels x 40 workers, `BARAAT_MIDS` to change the
//! mid-levels). Prints a table of wall time, flows, and mean / p99 TCT per
//! policy, plus the SPC protocol against the idealized FIFO-LM.
//!
//! `cargo run --release -p netheat-flowsched --example baraat_bench [-- TASKS [WORKLOADS [POLICIES]]]`
//! (comma-separated lists; policy `spc` is FIFO-LM through the SPC simulator).

use netheat_flowsched::{run_point, AppKind, PointSpec, WorkloadKind, WorkloadSpec};
use std::time::Instant;

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1]
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let wls: Vec<String> = args
        .get(2)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| vec!["bing".into(), "data_analytics".into(), "uniform".into()]);
    let app_tag = std::env::var("BARAAT_APP").unwrap_or_else(|_| "one-stage".into());
    let app = AppKind::parse(&app_tag).expect("BARAAT_APP");
    println!("36,000 hosts (30x30x40, 1 Gbps, 2:1), {tasks} {app_tag} tasks (fanout 40), load 0.8, aggregator pool {} / worker pool {} (0 = all hosts)", env_or("BARAAT_AGGREGATORS", 360), env_or("BARAAT_WORKERS", 0));
    println!(
        "{:<15} {:<10} {:>9} {:>9} {:>11} {:>11}",
        "workload", "policy", "flows", "wall_s", "mean_tct_ms", "p99_tct_ms"
    );
    for wl in &wls {
        let kind = WorkloadKind::parse(wl).expect("workload");
        let w = WorkloadSpec {
            aggregators: env_or("BARAAT_AGGREGATORS", 360),
            workers: env_or("BARAAT_WORKERS", 0),
            flow_cv: std::env::var("BARAAT_FLOW_CV").ok().and_then(|v| v.parse().ok()).unwrap_or(0.0),
            mids: env_or("BARAAT_MIDS", 0),
            ..WorkloadSpec::new(kind, app, tasks, 1)
        };
        let pols: Vec<String> = args
            .get(3)
            .map(|s| s.split(',').map(String::from).collect())
            .unwrap_or_else(|| ["fair-share", "sff", "stf", "fifo", "fifo-lm", "spc"].map(String::from).to_vec());
        let runs: Vec<(String, bool)> =
            pols.iter().map(|p| if p == "spc" { ("fifo-lm".to_string(), true) } else { (p.clone(), false) }).collect();
        for (pol, spc) in runs {
            let mut p = PointSpec::new(30, 30, 40, w.clone(), &pol);
            p.spc = spc;
            let t0 = Instant::now();
            let r = match run_point(&p) {
                Ok(r) => r,
                Err(e) => {
                    println!("{wl:<15} {pol:<10} error: {e}");
                    continue;
                }
            };
            let wall = t0.elapsed().as_secs_f64();
            let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
            let mean = tct.iter().sum::<f64>() / tct.len() as f64;
            let name = if spc { "spc".to_string() } else { pol };
            println!(
                "{:<15} {:<10} {:>9} {:>9.2} {:>11.3} {:>11.3}",
                wl,
                name,
                r.flows,
                wall,
                mean * 1e3,
                pct(&tct, 0.99) * 1e3
            );
        }
    }
}
