//! Runs every CloudBurst-experiment variant once and prints mean/p99 MCT.
use netheat_packet::experiment::{mean_p99, run_incast_point, IncastParams, VARIANTS};
use netheat_packet::{NetConfig, TransportConfig};

fn main() {
    let p = IncastParams {
        racks: 4,
        hosts_per_rack: 8,
        spines: 4,
        host_bps: 10e9,
        uplink_bps: 40e9,
        load: 0.3,
        fanin: 16,
        msg_bytes: vec![5_000, 93_000],
        incasts: 40,
        incast_gap_s: 1e-3,
        drain_s: 0.1,
        seed: 1,
    };
    let net = NetConfig { ecn_threshold_bytes: Some(30_000), port_buffer_bytes: 150_000, ..Default::default() };
    let env = |k: &str, d: f64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let net = NetConfig { cloudburst_queue_bytes: env("CB_QUEUE", 12_000.0) as u64, ..net };
    let tcfg = TransportConfig {
        cb_timeout_s: env("CB_TIMEOUT", 3e-4),
        cb_burst_factor: env("CB_BURST", 1.3),
        ..TransportConfig::default()
    };
    println!("{:<20} {:>10} {:>10} {:>6} {:>10} {:>8}", "variant", "mean_us", "p99_us", "unfin", "events", "wall_s");
    for v in VARIANTS {
        let t0 = std::time::Instant::now();
        let o = run_incast_point(&p, v, &net, &tcfg).unwrap();
        let (m, p99) = mean_p99(&o.mct_s);
        println!(
            "{:<20} {:>10.1} {:>10.1} {:>6} {:>10} {:>8.2}",
            v,
            m * 1e6,
            p99 * 1e6,
            o.unfinished,
            o.result.events,
            t0.elapsed().as_secs_f64()
        );
    }
}
