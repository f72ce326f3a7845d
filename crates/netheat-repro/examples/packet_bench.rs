//! Engine speed: packet events per second on a 128-host leaf-spine
//! (8 leaves x 16 hosts, 4 spines, 10 Gbps hosts, 40 Gbps leaf uplinks) with
//! web-search DCTCP background traffic at load 0.5 plus incasts.
use netheat_packet::{NetConfig, TransportConfig};
use netheat_repro::cloudburst::{run_incast_point, IncastParams};

fn main() {
    let p = IncastParams::leaf_spine_benchmark();
    let net = NetConfig { ecn_threshold_bytes: Some(30_000), ..Default::default() };
    println!("{:<14} {:>12} {:>10} {:>14}", "variant", "events", "wall_s", "events_per_s");
    for v in ["dctcp", "cloudburst-d"] {
        let mut best = f64::INFINITY;
        let mut ev = 0;
        for _ in 0..3 {
            let t0 = std::time::Instant::now();
            let o = run_incast_point(&p, v, &net, &TransportConfig::default()).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            ev = o.result.events;
        }
        println!("{:<14} {:>12} {:>10.3} {:>14.0}", v, ev, best, ev as f64 / best);
    }
}
