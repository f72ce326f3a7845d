//! `netheat-bench`: runs each benchmark scenario in its own process and
//! prints one table (wall time, throughput, peak memory, target, verdict).

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use netheat_bench::{baraat, peak_rss_bytes};
use netheat_core::Routing;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One result row, printed by the child as `key=value` pairs.
struct Row {
    name: String,
    value: String,
    target: String,
    ok: bool,
    rss_mb: f64,
}

fn topo_build() -> Row {
    let t0 = Instant::now();
    let t = baraat();
    let secs = t0.elapsed().as_secs_f64();
    black_box(&t);
    let rss = peak_rss_bytes().unwrap_or(0) as f64 / 1e6;
    Row {
        name: format!("build 36,000-host three-tier ({} links)", t.links().len()),
        value: format!("{:.3} s", secs),
        target: "< 1 s, < 300 MB".into(),
        ok: secs < 1.0 && rss < 300.0,
        rss_mb: rss,
    }
}

fn path_queries() -> Row {
    let t = baraat();
    let n = t.num_hosts() as u32;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let pairs: Vec<(u32, u32, u64)> = (0..1_000_000)
        .map(|_| {
            let s = rng.gen_range(0..n);
            let mut d = rng.gen_range(0..n - 1);
            if d >= s {
                d += 1;
            }
            (s, d, rng.gen())
        })
        .collect();
    let mut buf = Vec::with_capacity(8);
    let mut total_links = 0usize;
    let t0 = Instant::now();
    for (s, d, h) in &pairs {
        // An ECMP query: count the path set, pick one by hash, materialise it.
        let k = (*h % t.num_paths(*s, *d) as u64) as usize;
        t.path(*s, *d, k, &mut buf);
        total_links += buf.len();
    }
    let secs = t0.elapsed().as_secs_f64();
    black_box(total_links);
    let rate = pairs.len() as f64 / secs;
    Row {
        name: "ECMP path queries, random host pairs, 36,000 hosts".into(),
        value: format!("{:.2} M/s", rate / 1e6),
        target: "> 1 M/s".into(),
        ok: rate > 1e6,
        rss_mb: peak_rss_bytes().unwrap_or(0) as f64 / 1e6,
    }
}

/// A named scenario run in a child process.
type Scenario = (&'static str, fn() -> Row);

const SCENARIOS: &[Scenario] = &[("topo-build", topo_build), ("path-queries", path_queries)];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--child" {
        let f = SCENARIOS.iter().find(|(n, _)| *n == args[2]).expect("known scenario").1;
        let r = f();
        println!("{}\t{}\t{}\t{}\t{:.1}", r.name, r.value, r.target, r.ok, r.rss_mb);
        return;
    }
    let only: Vec<&String> = args.iter().skip(1).collect();
    println!("{:<55} {:>12} {:>16} {:>10} {:>6}", "benchmark", "result", "target", "peak MB", "ok");
    println!("{}", "-".repeat(103));
    let mut all_ok = true;
    for (name, _) in SCENARIOS {
        if !only.is_empty() && !only.iter().any(|o| o.as_str() == *name) {
            continue;
        }
        let out = Command::new(&args[0]).args(["--child", name]).output().expect("run child");
        let line = String::from_utf8_lossy(&out.stdout);
        let cols: Vec<&str> = line.trim().split('\t').collect();
        if cols.len() != 5 {
            println!("{name}: failed: {}", String::from_utf8_lossy(&out.stderr));
            all_ok = false;
            continue;
        }
        let ok = cols[3] == "true";
        all_ok &= ok;
        println!(
            "{:<55} {:>12} {:>16} {:>10} {:>6}",
            cols[0],
            cols[1],
            cols[2],
            cols[4],
            if ok { "yes" } else { "NO" }
        );
    }
    if !all_ok {
        std::process::exit(1);
    }
}
