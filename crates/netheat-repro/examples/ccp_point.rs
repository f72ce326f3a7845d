//! Runs one CCP point: the paper's setting (`CcpSpec::paper`) or, with the
//! argument `ours`, the extra 16x / SSD point (`CcpSpec::default`):
//! `cargo run --release -p netheat-repro --example ccp_point [-- ours] [seed]`.

use netheat_repro::ccp::{ccp_point, CcpSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut s = if args.iter().any(|a| a == "ours") { CcpSpec::default() } else { CcpSpec::paper() };
    if let Some(seed) = args.iter().find_map(|a| a.parse::<u64>().ok()) {
        s.seed = seed;
    }
    let t0 = std::time::Instant::now();
    match ccp_point(&s) {
        Ok(v) => {
            for (k, x) in v {
                println!("{k:45} {x:.4}");
            }
            println!("wall_s {:.2}", t0.elapsed().as_secs_f64());
        }
        Err(e) => eprintln!("{e}"),
    }
}
