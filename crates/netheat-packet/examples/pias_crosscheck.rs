//! netheat side of the PIAS priority cross-check
//! (`validation/crosscheck_ns3.py`, `validation/ns3/pias_ns3.cc`): hosts 1
//! and 2 of one rack send LONG bytes from t = 0 and SHORT bytes from START_S
//! to host 0 with `pias` (a flow's packets in class 0 until it has sent
//! THRESHOLD bytes, then class 1; strict priority at every port), through
//! the ToR port towards host 0 (10 Gbps links, 1 us propagation, no ECN and
//! a buffer larger than both flows, so no loss).
//!
//! `cargo run --release -p netheat-packet --example pias_crosscheck -- LONG SHORT START_S THRESHOLD`
//! prints `flow <i> fct_s <t>` for the long (0) and the short (1) flow.
use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_topology::{Topology, TopologySpec};

fn arg<T: std::str::FromStr>(a: &[String], i: usize, name: &str) -> T {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: pias_crosscheck LONG SHORT START_S THRESHOLD (bad or missing {name})");
        std::process::exit(2)
    })
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let long: u64 = arg(&a, 1, "LONG");
    let short: u64 = arg(&a, 2, "SHORT");
    let start_s: f64 = arg(&a, 3, "START_S");
    let threshold: u64 = arg(&a, 4, "THRESHOLD");
    let topo = Topology::build(&TopologySpec::two_tier(2, 3, 10e9, 40e9)).expect("topology");
    let cfg = NetConfig {
        port_buffer_bytes: 4 * (long + short),
        prop_delay_s: 1e-6,
        switch_delay_s: 0.0,
        ecn_threshold_bytes: None,
        ..NetConfig::default()
    };
    let tcfg = TransportConfig { pias_thresholds: vec![threshold], ..TransportConfig::default() };
    let mut sim = Simulator::new(&topo, cfg).expect("simulator");
    for (id, (src, bytes, start_s)) in [(1, long, 0.0), (2, short, start_s)].into_iter().enumerate() {
        let f = FlowSpec {
            id: id as u64,
            src,
            dst: 0,
            bytes,
            start_s,
            transport: "pias".into(),
            task_id: -1,
            priority: 0,
            path_offset: 0,
            coupling: None,
        };
        sim.add_flow(f, &tcfg).expect("flow");
    }
    let r = sim.run(f64::INFINITY);
    for f in &r.flows {
        println!("flow {} fct_s {:.9}", f.flow_id, f.fct_s);
    }
}
