//! Subways shuffle completion times and speedups over Type 0 for each
//! routing policy and job size, printed as a table (the Subways issue's
//! sweep benchmark), each point a scenario: one `shuffle-job` workload app
//! (15 MB per ordered pair) on a datacenter file.
//!
//! `cargo run --release -p netheat-scenario --example shuffle_sweep -- TYPE0.toml OTHER.toml [first_rack] [nodes...]`
//!
//! With `PLACEMENT=two-loops` the job is split equally between two loops
//! (the paper's cross-cluster jobs); `subways-ecmp` is vanilla Subways
//! ECMP and `x short` the scenario's `ecmp`, over shortest paths (ours).
use std::path::{Path, PathBuf};
use std::time::Instant;

use netheat_data::DataDir;
use netheat_scenario::Scenario;

/// The job's completion time on `topo` under `policy`.
fn completion(topo: &Path, first_rack: u32, nodes: usize, placement: &str, policy: &str) -> f64 {
    let text = format!(
        "[topology]\nfile = {topo:?}\n[workload]\n[[workload.app]]\nkind = \"shuffle-job\"\nnodes = {nodes}\n\
         first-rack = {first_rack}\nplacement = \"{placement}\"\nbytes-per-pair = \"15MB\"\n\
         [routing]\npolicy = \"{policy}\"\n"
    );
    let r = Scenario::from_text(&text, "sweep.toml", Path::new("."))
        .run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
        .unwrap_or_else(|e| panic!("{policy}: {e}"));
    r.tasks.iter().map(|t| t.finish_s - t.start_s).fold(0.0, f64::max)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: shuffle_sweep TYPE0.toml OTHER.toml [first_rack] [nodes...]");
        std::process::exit(2);
    }
    let abs = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let (t0, t1): (PathBuf, PathBuf) = (abs(&args[0]), abs(&args[1]));
    let first_rack: u32 = args.get(2).map_or(0, |s| s.parse().expect("first rack"));
    let sizes: Vec<usize> = if args.len() > 3 {
        args[3..].iter().map(|s| s.parse().expect("nodes")).collect()
    } else {
        vec![15, 30, 45, 60, 90, 120, 180]
    };
    let placement = if std::env::var("PLACEMENT").is_ok_and(|v| v == "two-loops") { "two-loops" } else { "contiguous" };
    println!(
        "{:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "nodes", "type0 s", "ecmp s", "adapt s", "detour s", "x ecmp", "x short", "x adapt", "x detour", "wall s"
    );
    let started = Instant::now();
    for n in sizes {
        let w = Instant::now();
        let base = completion(&t0, first_rack, n, placement, "subways-ecmp");
        let e = completion(&t1, first_rack, n, placement, "subways-ecmp");
        let es = completion(&t1, first_rack, n, placement, "ecmp");
        let a = completion(&t1, first_rack, n, placement, "adaptive");
        let d = completion(&t1, first_rack, n, placement, "detour");
        println!(
            "{:>6} {:>12.4} {:>10.4} {:>10.4} {:>10.4} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            n,
            base,
            e,
            a,
            d,
            base / e,
            base / es,
            base / a,
            base / d,
            w.elapsed().as_secs_f64()
        );
    }
    println!("total wall {:.2} s", started.elapsed().as_secs_f64());
}
