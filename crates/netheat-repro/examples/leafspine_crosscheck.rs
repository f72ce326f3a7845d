//! netheat side of the ns-3 speed comparison (`validation/crosscheck_ns3.py`):
//! the `packet_bench` scenario (128-host leaf-spine, 8 leaves x 16 hosts, 4
//! spines, 10 Gbps links, DCTCP web-search background at load 0.5 plus 20
//! incasts of 32 senders) with DCTCP. Writes the flows it simulated to a CSV
//! (`start_s,src,dst,bytes,fct_s`) so ns-3 replays exactly the same flows,
//! and prints wall time, events and flows finished by the 21 ms horizon.
//!
//! `cargo run --release -p netheat-repro --example leafspine_crosscheck -- FLOWS.csv`
use netheat_packet::{NetConfig, TransportConfig};
use netheat_repro::cloudburst::{run_incast_point, IncastParams};
use std::io::Write;

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: leafspine_crosscheck FLOWS.csv");
        std::process::exit(2)
    });
    let p = IncastParams::leaf_spine_benchmark();
    let net = NetConfig { ecn_threshold_bytes: Some(30_000), ..Default::default() };
    let t0 = std::time::Instant::now();
    let o = run_incast_point(&p, "dctcp", &net, &TransportConfig::default()).expect("run");
    let wall = t0.elapsed().as_secs_f64();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).expect("create FLOWS.csv"));
    writeln!(f, "start_s,src,dst,bytes,fct_s").expect("write");
    let mut done = 0;
    for r in &o.result.flows {
        writeln!(f, "{:.12},{},{},{},{:.12}", r.start_s, r.src, r.dst, r.bytes, r.fct_s).expect("write");
        done += usize::from(r.fct_s.is_finite());
    }
    println!("flows {}\nfinished {done}\nend_s {:.6}", o.result.flows.len(), o.result.end_s);
    println!("wall_s {wall:.6}\nevents {}", o.result.events);
}
