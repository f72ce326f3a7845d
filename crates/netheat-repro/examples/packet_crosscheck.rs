//! Cross-check of a few Subways shuffle points between the flow engine
//! (fluid max-min, what the experiments use) and the packet engine with TCP
//! NewReno (the Subways paper's simulator is packet-level NewReno, §8.1).
//!
//! Both engines get the very same paths: each flow's path is drawn once, in
//! the order of the `shuffle-job` workload app's flows, from the seed's
//! stream, and given to the flow engine as the flow's explicit route and to
//! the packet engine as its only used path.
//!
//! `cargo run --release -p netheat-repro --example packet_crosscheck -- TOPO.toml [nodes...]`
//!
//! All-to-all shuffles of 15 MB per ordered pair on `TOPO.toml` under
//! vanilla ECMP (the draws a scenario with `routing.policy =
//! "subways-ecmp"` makes with seed 1). Packet-engine settings from §8.1:
//! "switching latency along with network propagation delays total to 60 µs
//! per hop" (60 µs per link here), queues "based on the bandwidth-delay
//! product": one RTT of the longest (6-link) path at 10 Gbps, 12 x 60 µs x
//! 10 Gb/s = 900 KB per port, drop-tail.
//!
//! `cargo run --release -p netheat-repro --example packet_crosscheck -- --table2 experiments/topologies/subways-testbed.toml`
//!
//! Table 2's job (§8.2: racks 0-2 send 4 flows of 100 MB to each server of
//! rack 3) on the testbed as Type 0 and as Type 1 (one loop of 4), seeds
//! 1-3, each flow on a shortest path drawn uniformly (the routing of
//! `experiments/subways-testbed.toml`'s headline variants). The same §8.1
//! settings at the testbed's 500 Mbps: the longest path has 4 links, so
//! 8 x 60 µs x 500 Mb/s = 30,000 B per port. With the paths fixed, the
//! difference between the engines is what TCP costs.
use std::path::Path;
use std::time::Instant;

use netheat_core::{HostId, LinkId, Routing};
use netheat_engine::{Network, Route, SimConfig, Simulation};
use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_subways::lb::vanilla_ecmp_path;
use netheat_subways::Net;
use netheat_topology::Topology;
use netheat_workloads::apps::shuffle::{JobPattern, ShuffleJob};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The packet engine's ECMP hash (SplitMix64 finalizer, `netheat-packet`).
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// One case: its label, its flows (source, destination, path) and the
/// bytes of each flow.
struct Case {
    label: String,
    flows: Vec<(HostId, HostId, Vec<LinkId>)>,
    bytes: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let table2 = args.first().is_some_and(|a| a == "--table2");
    let rest = if table2 { &args[1..] } else { &args[..] };
    let Some(path) = rest.first() else {
        eprintln!("usage: packet_crosscheck TOPO.toml [nodes...] | packet_crosscheck --table2 TESTBED.toml");
        std::process::exit(2);
    };
    let path = Path::new(path);
    let (cases, port_buffer_bytes) = if table2 {
        (table2_cases(path), 30_000)
    } else {
        let sizes: Vec<usize> =
            if rest.len() > 1 { rest[1..].iter().map(|s| s.parse().expect("nodes")).collect() } else { vec![30, 45] };
        (shuffle_cases(path, &sizes), 900_000)
    };
    println!("{:>22} {:>12} {:>12} {:>10} {:>9}", "case", "flow s", "packet s", "diff %", "wall s");
    for (topo, case, seed) in cases {
        let cfg =
            NetConfig { prop_delay_s: 60e-6, switch_delay_s: 0.0, port_buffer_bytes, seed, ..NetConfig::default() };
        crosscheck(&topo, &case, &cfg);
    }
}

/// All-to-all shuffles of `sizes` servers from rack 0, vanilla ECMP paths
/// drawn with seed 1.
fn shuffle_cases(path: &Path, sizes: &[usize]) -> Vec<(Topology, Case, u64)> {
    let topo = netheat_config::load_topology(path).expect("topology");
    let seed = 1;
    sizes
        .iter()
        .map(|&n| {
            let pairs = ShuffleJob::new(0, n, 15e6).pairs(&topo).expect("job fits");
            let net = Net::new(&topo);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let flows = pairs
                .iter()
                .map(|&(s, d)| (s, d, vanilla_ecmp_path(&net, s, d, &mut rng).expect("live ports")))
                .collect();
            (topo.clone(), Case { label: format!("{n} servers"), flows, bytes: 15e6 }, seed)
        })
        .collect()
}

/// Table 2's job on the testbed, Type 0 and Type 1, seeds 1-3: each flow
/// on a shortest path drawn uniformly from the seed's stream.
fn table2_cases(path: &Path) -> Vec<(Topology, Case, u64)> {
    let mut out = Vec::new();
    for (wiring, loop_size) in [("type0", None), ("type1", Some(4))] {
        let mut over = toml_edit::Table::new();
        over.insert("wiring", toml_edit::value(wiring));
        if let Some(l) = loop_size {
            over.insert("loop-size", toml_edit::value(l));
        }
        let topo = netheat_config::load_topology_overridden(path, &over).expect("testbed topology");
        let mut job = ShuffleJob::new(0, 16, 100e6);
        job.pattern = JobPattern::IntoLastRack;
        job.flows_per_pair = 4;
        let pairs = job.pairs(&topo).expect("job fits");
        for seed in 1..=3 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut links = Vec::new();
            let flows = pairs
                .iter()
                .map(|&(s, d)| {
                    let k = rng.gen_range(0..topo.num_paths(s, d));
                    topo.path(s, d, k, &mut links);
                    (s, d, links.clone())
                })
                .collect();
            out.push((topo.clone(), Case { label: format!("{wiring}, seed {seed}"), flows, bytes: 100e6 }, seed));
        }
    }
    out
}

/// Runs `case` on both engines and prints the last completion of each.
fn crosscheck(topo: &Topology, case: &Case, cfg: &NetConfig) {
    let w = Instant::now();
    let bytes = case.bytes;
    let tcfg = TransportConfig::default();
    let routing: &dyn Routing = topo;
    let mut fluid_sim = Simulation::new(
        Network::from_routing(routing),
        Some(routing),
        SimConfig { window_s: 1e6, seed: cfg.seed, ..SimConfig::default() },
    );
    let mut sim = Simulator::new(topo, cfg.clone()).expect("packet simulator");
    for (id, (s, d, p)) in case.flows.iter().enumerate() {
        let (id, s, d) = (id as u64, *s, *d);
        fluid_sim
            .add_flow(netheat_engine::FlowSpec::new(id, s, d, bytes, 0.0, Route::Explicit(p.clone())))
            .expect("flow");
        let np = topo.num_paths(s, d);
        // Select the extra path (index np) from the flow's ECMP index.
        let ecmp = (splitmix(id ^ cfg.seed.rotate_left(17)) % np as u64) as usize;
        let spec = FlowSpec {
            id,
            src: s,
            dst: d,
            bytes: bytes as u64,
            start_s: 0.0,
            transport: "newreno".into(),
            task_id: -1,
            priority: 1,
            path_offset: np - ecmp,
            coupling: None,
        };
        sim.add_flow_with_paths(spec, &tcfg, std::slice::from_ref(p)).expect("flow");
    }
    let fluid = fluid_sim.run().flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
    let r = sim.run(f64::INFINITY);
    let packet = r.flows.iter().map(|f| f.start_s + f.fct_s).fold(0.0, f64::max);
    let mut fct: Vec<f64> = r.flows.iter().map(|f| f.fct_s).collect();
    fct.sort_by(f64::total_cmp);
    let q = |x: f64| fct[((fct.len() - 1) as f64 * x).round() as usize];
    eprintln!("packet fct p50 {:.4} p90 {:.4} p99 {:.4} max {:.4} s", q(0.5), q(0.9), q(0.99), q(1.0));
    // Where the tail comes from: retransmission timeouts and drops.
    let timeouts: u32 = r.flows.iter().map(|f| f.timeouts).sum();
    let with_timeouts = r.flows.iter().filter(|f| f.timeouts > 0).count();
    let slowest = r.flows.iter().max_by(|a, b| a.fct_s.total_cmp(&b.fct_s)).expect("flows");
    let drops: u64 = r.ports.iter().map(|p| p.drops).sum();
    eprintln!(
        "packet: {timeouts} timeouts in {with_timeouts} of {} flows, {drops} drops; slowest flow {} -> {} ({} timeouts, {:.4} s, {} packets sent for {} bytes)",
        r.flows.len(),
        slowest.src,
        slowest.dst,
        slowest.timeouts,
        slowest.fct_s,
        slowest.packets_sent,
        slowest.bytes
    );
    // The slowest flow against the other flows into its receiver (one bottleneck, if the receiver's
    // links are it): a TCP share far below theirs is unfairness, not a slower network.
    let mut peers: Vec<(f64, u32, u64)> =
        r.flows.iter().filter(|f| f.dst == slowest.dst).map(|f| (f.fct_s, f.timeouts, f.packets_sent)).collect();
    peers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let fcts: Vec<String> = peers.iter().map(|p| format!("{:.3}", p.0)).collect();
    eprintln!("flows into {}: completion s {}", slowest.dst, fcts.join(" "));
    println!(
        "{:>22} {:>12.4} {:>12.4} {:>10.1} {:>9.1}",
        case.label,
        fluid,
        packet,
        100.0 * (packet - fluid) / fluid,
        w.elapsed().as_secs_f64()
    );
}
