//! netheat side of the ns-3 cross-check (`validation/crosscheck_ns3.py`):
//! hosts 1..=N of one rack send BYTES each to host 0 over TCP NewReno, all
//! at t = 0, through the ToR port towards host 0 (drop-tail, BUFFER bytes);
//! 10 Gbps host links, 1 us propagation per link, no switching delay.
//!
//! `cargo run --release -p netheat-packet --example crosscheck -- SENDERS BYTES BUFFER_BYTES RTO_MIN_S [TRANSPORT K_BYTES]`
//! prints `flow <i> fct_s <t>` per flow, then `wall_s` and `events`, and the
//! bottleneck port's (the ToR towards host 0) `marks`, `drops`,
//! `mean_queue_bytes` (time average until the last event) and
//! `max_queue_bytes`. TRANSPORT is `newreno` (default) or `dctcp`, with
//! ECN marking on the instantaneous queue above K_BYTES at every switch port;
//! with `dctcp` also `alpha_updates` and `alpha_mean`, the senders' alpha
//! after each update averaged over all updates.
use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_topology::{Topology, TopologySpec};

fn arg<T: std::str::FromStr>(a: &[String], i: usize, name: &str) -> T {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: crosscheck SENDERS BYTES BUFFER_BYTES RTO_MIN_S [TRANSPORT K_BYTES] (bad or missing {name})");
        std::process::exit(2)
    })
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: u32 = arg(&a, 1, "SENDERS");
    let bytes: u64 = arg(&a, 2, "BYTES");
    let buffer: u64 = arg(&a, 3, "BUFFER_BYTES");
    let rto_min_s: f64 = arg(&a, 4, "RTO_MIN_S");
    let transport: String = if a.len() > 5 { arg(&a, 5, "TRANSPORT") } else { "newreno".into() };
    let ecn: Option<u64> = if a.len() > 6 { Some(arg(&a, 6, "K_BYTES")) } else { None };
    let topo = Topology::build(&TopologySpec::two_tier(2, n as usize + 1, 10e9, 40e9)).expect("topology");
    let cfg = NetConfig {
        port_buffer_bytes: buffer,
        prop_delay_s: 1e-6,
        switch_delay_s: 0.0,
        ecn_threshold_bytes: ecn,
        ..NetConfig::default()
    };
    let tcfg = TransportConfig { rto_min_s, ..TransportConfig::default() };
    let t0 = std::time::Instant::now();
    let mut sim = Simulator::new(&topo, cfg).expect("simulator");
    for s in 0..n {
        let f = FlowSpec {
            id: s as u64,
            src: s + 1,
            dst: 0,
            bytes,
            start_s: 0.0,
            transport: transport.clone(),
            task_id: -1,
            priority: 1,
            path_offset: 0,
            coupling: None,
        };
        sim.add_flow(f, &tcfg).expect("flow");
    }
    let r = sim.run(f64::INFINITY);
    let wall = t0.elapsed().as_secs_f64();
    for f in &r.flows {
        println!("flow {} fct_s {:.9}", f.flow_id, f.fct_s);
    }
    println!("wall_s {wall:.6}\nevents {}", r.events);
    let port = &r.ports[topo.hosts()[0].ports[0].down as usize];
    println!(
        "marks {}\ndrops {}\nmean_queue_bytes {:.1}\nmax_queue_bytes {}",
        port.marks, port.drops, port.mean_queue_bytes, port.max_queue_bytes
    );
    if transport == "dctcp" {
        // Every sender's alpha after each of its updates, averaged over all
        // updates (what ns-3's CongestionEstimate trace gives the other side).
        let updates: u64 = r.flows.iter().map(|f| f.alpha_updates).sum();
        let sum: f64 =
            r.flows.iter().filter(|f| f.alpha_updates > 0).map(|f| f.alpha_mean * f.alpha_updates as f64).sum();
        println!("alpha_updates {updates}\nalpha_mean {:.6}", if updates > 0 { sum / updates as f64 } else { 0.0 });
    }
}
