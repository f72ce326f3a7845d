//! Max request rate at 1 ms mean latency per memcache variant and ToR
//! oversubscription: `cargo run --release -p netheat-repro --example memcache_point -- [OVERSUB,...]`.
use netheat_repro::memcache::{max_rate, MemcacheParams, MEMCACHE_VARIANTS};

fn main() {
    let os: Vec<f64> = std::env::args()
        .nth(1)
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![3.0, 5.0, 10.0]);
    println!(
        "{:>8} {:<14} {:>14} {:>10} {:>10} {:>8}",
        "oversub", "variant", "max_req_per_s", "mean_us", "p99_us", "wall_s"
    );
    for o in os {
        for v in MEMCACHE_VARIANTS {
            let p = MemcacheParams { oversubscription: o, ..MemcacheParams::default() };
            let t0 = std::time::Instant::now();
            match max_rate(&p, v, 1e-3, 1e5) {
                Ok((r, x)) => println!(
                    "{o:8.1} {v:<14} {r:14.0} {:10.1} {:10.1} {:8.2}",
                    x.mean_latency_s * 1e6,
                    x.p99_latency_s * 1e6,
                    t0.elapsed().as_secs_f64()
                ),
                Err(e) => println!("{o:8.1} {v:<14} error: {e}"),
            }
        }
    }
}
