//! The hotspot paper's UTP cluster (`experiments/scenarios/utp-cluster.toml`)
//! under each placement policy, one run each, as a table with wall time:
//! the target is 10,000 servers and 24 simulated hours in under 5
//! minutes on 2 cores.
//!
//! `cargo run --release -p netheat-scenario --example cluster_bench -- [small|10k] [POLICY...]`
//!
//! `small` is the experiment's `--quick` form (1,000 servers, 6 hours).

use std::time::Instant;

use netheat_data::DataDir;
use netheat_scenario::{Scenario, ScenarioResult};

fn stat(r: &ScenarioResult, k: &str) -> f64 {
    r.stats.get(k).copied().unwrap_or(f64::NAN)
}

/// p95 of the finished `kind` tasks that start after the warm-up (the
/// linear quantile of netheat_core::stats).
fn p95(r: &ScenarioResult, kind: &str) -> f64 {
    let warmup = stat(r, "warmup_s");
    let d: Vec<f64> = r
        .tasks
        .iter()
        .filter(|t| t.kind == kind && t.start_s >= warmup && t.finish_s.is_finite())
        .map(|t| t.finish_s - t.start_s)
        .collect();
    netheat_core::stats::quantile(&d, 0.95)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size = args.next().unwrap_or_else(|| "small".into());
    let mut policies: Vec<String> = args.collect();
    if policies.is_empty() {
        policies = vec!["bandwidth-oblivious".into(), "reactive-only".into(), "utp".into()];
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let base = Scenario::from_path(&root.join("experiments/scenarios/utp-cluster.toml")).expect("scenario");
    let base = match size.as_str() {
        "10k" => base,
        "small" => [
            ("topology.file", "\"../topologies/utp-cluster-small.toml\""),
            ("scenario.duration", "\"6h\""),
            ("workload.duration", "\"6h\""),
            ("workload.app.0.bandwidth-median-per-core", "\"10Mbps\""),
            ("events", "[{ at = \"3h\", action = \"scale\", factor = 0.5, racks = [0, 10, 20, 30] }]"),
        ]
        .iter()
        .fold(base, |s, (k, v)| s.with_override(k, v).expect("override")),
        other => panic!("size {other}: small or 10k"),
    };
    let data = DataDir::explicit("/nonexistent");
    println!(
        "| policy | servers | tasks | hot ToR-windows | p98 ToR util | cell util | migrations | net-intensive on hot | servers used | cpu sd | query p95 small / large (s) | events | wall (s) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for policy in &policies {
        let s = base.clone().with_override("placement.policy", &format!("\"{policy}\"")).expect("policy");
        let t0 = Instant::now();
        let r = s.run(&data, &mut |_, _| true).expect("run");
        let wall = t0.elapsed().as_secs_f64();
        println!(
            "| {policy} | {} | {} | {:.2}% | {:.3} | {:.3} | {} | {}/{} | {:.0} | {:.3} | {:.3} / {:.3} | {} | {wall:.1} |",
            stat(&r, "hosts"),
            stat(&r, "cluster_tasks"),
            100.0 * stat(&r, "placement_hot_tor_share"),
            stat(&r, "placement_p98_tor_util"),
            stat(&r, "placement_cell_util"),
            stat(&r, "migrations"),
            stat(&r, "net_intensive_on_hot"),
            stat(&r, "net_intensive_placements"),
            stat(&r, "servers_used"),
            stat(&r, "cpu_imbalance"),
            p95(&r, "query-small"),
            p95(&r, "query-large"),
            stat(&r, "events"),
        );
    }
}
