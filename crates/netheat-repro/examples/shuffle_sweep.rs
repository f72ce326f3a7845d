//! Shuffle completion times and speedups over Type 0 for each policy and
//! job size, printed as a table (the Subways issue's sweep benchmark).
//!
//! `cargo run --release -p netheat-repro --example shuffle_sweep -- TYPE0.toml TYPE1.toml [first_rack] [nodes...]`
//!
//! With `PLACEMENT=two-loops` the job is split equally between two loops
//! (the paper's cross-cluster jobs); `ecmp` is vanilla Subways ECMP and
//! `x short` the former shortest-path ECMP (ours).
use std::path::Path;
use std::time::Instant;

use netheat_repro::subways::{run_shuffle, Placement, ShuffleJob};
use netheat_subways::LbParams;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: shuffle_sweep TYPE0.toml OTHER.toml [first_rack] [nodes...]");
        std::process::exit(2);
    }
    let t0 = netheat_config::load_topology(Path::new(&args[0])).expect("type 0 topology");
    let t1 = netheat_config::load_topology(Path::new(&args[1])).expect("subways topology");
    let first_rack: u32 = args.get(2).map_or(0, |s| s.parse().expect("first rack"));
    let sizes: Vec<usize> = if args.len() > 3 {
        args[3..].iter().map(|s| s.parse().expect("nodes")).collect()
    } else {
        vec![15, 30, 45, 60, 90, 120, 180]
    };
    let p = LbParams::default();
    println!(
        "{:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "nodes", "type0 s", "ecmp s", "adapt s", "detour s", "x ecmp", "x short", "x adapt", "x detour", "wall s"
    );
    let started = Instant::now();
    for n in sizes {
        let mut job = ShuffleJob::new(first_rack, n, 15e6);
        if std::env::var("PLACEMENT").is_ok_and(|v| v == "two-loops") {
            job.placement = Placement::TwoLoops;
        }
        let w = Instant::now();
        let base = run_shuffle(&t0, &job, "ecmp", &p, 1).expect("type 0").completion_s;
        let e = run_shuffle(&t1, &job, "ecmp", &p, 1).expect("ecmp").completion_s;
        let es = run_shuffle(&t1, &job, "ecmp-shortest", &p, 1).expect("ecmp-shortest").completion_s;
        let a = run_shuffle(&t1, &job, "adaptive", &p, 1).expect("adaptive").completion_s;
        let d = run_shuffle(&t1, &job, "detour", &p, 1).expect("detour");
        println!(
            "{:>6} {:>12.4} {:>10.4} {:>10.4} {:>10.4} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            n,
            base,
            e,
            a,
            d.completion_s,
            base / e,
            base / es,
            base / a,
            base / d.completion_s,
            w.elapsed().as_secs_f64()
        );
    }
    println!("total wall {:.2} s", started.elapsed().as_secs_f64());
}
