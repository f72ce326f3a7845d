//! Runs every CloudBurst-experiment variant once (the quick point of
//! `experiments/cloudburst.toml`) and prints mean, pooled p99 and per-size p99
//! message completion times. `ISOLATION=none|priority|small-queue` sets the
//! baselines' queue treatment (default `priority`), `SEED` the seed.
//! Diagnostics only (not the experiment's settings): `STATIC_BUFFER=bytes`
//! replaces the shared buffer by static per-port buffers, `CB_TIMEOUT=s`
//! overrides the a-priori re-burst timeout, `ONLY=a,b` runs only those variants.
use netheat_packet::transport::PIAS_WEB_SEARCH_THRESHOLDS;
use netheat_packet::TransportConfig;
use netheat_repro::cloudburst::{mean_p99, p99_by_size, run_incast_point, IncastParams, Isolation, VARIANTS};

fn main() {
    let iso = std::env::var("ISOLATION").unwrap_or_else(|_| "priority".into());
    let seed = std::env::var("SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let p = IncastParams {
        racks: 4,
        hosts_per_rack: 8,
        spines: 4,
        host_bps: 10e9,
        uplink_bps: 40e9,
        load: 0.3,
        fanin: 16,
        msg_bytes: vec![5_000, 93_000],
        incasts: 60,
        incast_gap_s: 1e-3,
        drain_s: 0.1,
        seed,
        isolation: Isolation::parse(&iso).unwrap(),
    };
    let mut net = IncastParams::net_config(30_000, 12_000, 1e-6);
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    if let Some(b) = env("STATIC_BUFFER") {
        net.shared_buffer_per_port_bytes = None;
        net.port_buffer_bytes = b as u64;
    }
    let tcfg = TransportConfig {
        cb_timeout_s: env("CB_TIMEOUT").unwrap_or_else(|| p.reburst_timeout_s(&net)),
        pias_thresholds: PIAS_WEB_SEARCH_THRESHOLDS.to_vec(),
        ..TransportConfig::default()
    };
    println!(
        "isolation {iso}, seed {seed}, re-burst timeout {:.1} us, buffer {}",
        tcfg.cb_timeout_s * 1e6,
        match net.shared_buffer_per_port_bytes {
            Some(b) => format!("shared {b} B/port alpha {}", net.alpha),
            None => format!("static {} B/port", net.port_buffer_bytes),
        }
    );
    println!(
        "{:<20} {:>10} {:>10} {:>10} {:>10} {:>6} {:>8} {:>8}",
        "variant", "mean_us", "p99_us", "p99_5k_us", "p99_93k_us", "unfin", "drops", "wall_s"
    );
    let only = std::env::var("ONLY").ok();
    for v in VARIANTS.iter().filter(|v| only.as_deref().is_none_or(|o| o.split(',').any(|x| x == **v))) {
        let t0 = std::time::Instant::now();
        let o = run_incast_point(&p, v, &net, &tcfg).unwrap();
        let (m, p99) = mean_p99(&o.mct_s);
        let by = p99_by_size(&o);
        let drops: u64 = o.result.ports.iter().map(|s| s.drops).sum();
        println!(
            "{:<20} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>6} {:>8} {:>8.2}",
            v,
            m * 1e6,
            p99 * 1e6,
            by[0].1 * 1e6,
            by[by.len() - 1].1 * 1e6,
            o.unfinished,
            drops,
            t0.elapsed().as_secs_f64()
        );
    }
}
