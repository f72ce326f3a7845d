//! netheat side of the ns-3 comparisons on a leaf-spine
//! (`validation/crosscheck_ns3.py`). Writes the flows it simulated to a CSV
//! (`start_s,src,dst,bytes,fct_s`) so ns-3 replays exactly the same flows.
//!
//! - Default: the `packet_bench` scenario (128-host leaf-spine, 8 leaves x
//!   16 hosts, 4 spines, 10 Gbps links, DCTCP web-search background at load
//!   0.5 plus 20 incasts of 32 senders) with DCTCP; prints wall time, events
//!   and flows finished by the 21 ms horizon (the speed comparison).
//! - `incast`: the same leaf-spine with incasts only (no background): 10
//!   incasts of 16 senders in other racks, 64 KB and 256 KB messages by
//!   turns, about 6 ms apart, DCTCP with ECN marking at 20 packets (30 KB)
//!   in 300 KB ports. Sixteen initial windows of 10 packets fit in a port,
//!   so neither simulator drops at the start (where ns-3 waits for a
//!   timeout and netheat retransmits fast, see the single-switch DCTCP
//!   incast). Also prints `flow i start_s fct_s` per flow, for the
//!   completion-time check.
//!
//! `cargo run --release -p netheat-repro --example leafspine_crosscheck -- FLOWS.csv [incast]`
use netheat_packet::{NetConfig, TransportConfig};
use netheat_repro::cloudburst::{run_incast_point, IncastParams};
use std::io::Write;

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: leafspine_crosscheck FLOWS.csv [incast]");
        std::process::exit(2)
    });
    let incast = std::env::args().nth(2).as_deref() == Some("incast");
    let p = if incast {
        IncastParams {
            load: 0.0,
            fanin: 16,
            msg_bytes: vec![64_000, 256_000],
            incasts: 10,
            incast_gap_s: 6e-3,
            drain_s: 10e-3,
            ..IncastParams::leaf_spine_benchmark()
        }
    } else {
        IncastParams::leaf_spine_benchmark()
    };
    let net = NetConfig { ecn_threshold_bytes: Some(30_000), ..Default::default() };
    let t0 = std::time::Instant::now();
    let o = run_incast_point(&p, "dctcp", &net, &TransportConfig::default()).expect("run");
    let wall = t0.elapsed().as_secs_f64();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).expect("create FLOWS.csv"));
    writeln!(f, "start_s,src,dst,bytes,fct_s").expect("write");
    let mut done = 0;
    for (i, r) in o.result.flows.iter().enumerate() {
        writeln!(f, "{:.12},{},{},{},{:.12}", r.start_s, r.src, r.dst, r.bytes, r.fct_s).expect("write");
        done += usize::from(r.fct_s.is_finite());
        if incast {
            println!("flow {i} {:.12} {:.12}", r.start_s, r.fct_s);
        }
    }
    println!("flows {}\nfinished {done}\nend_s {:.6}", o.result.flows.len(), o.result.end_s);
    println!("wall_s {wall:.6}\nevents {}", o.result.events);
}
