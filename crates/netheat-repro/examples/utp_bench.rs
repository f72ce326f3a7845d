//! UTP benchmark: a cluster run per policy on a datacenter file, printed as
//! a table with wall time (the target: 10,000 servers, 24 simulated
//! hours in < 5 minutes on 2 cores).
//!
//! `cargo run --release -p netheat-repro --example utp_bench -- DC.toml HOURS [POLICY...]`
use std::path::Path;
use std::time::Instant;

use netheat_repro::utp::{run_cluster, ClusterParams, Incident};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let topo = netheat_config::load_topology(Path::new(&args[0])).expect("topology");
    let hours: f64 = args.get(1).map_or(6.0, |h| h.parse().expect("hours"));
    let policies: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        vec!["bandwidth-oblivious".into(), "reactive-only".into(), "utp".into()]
    };
    let racks = topo.racks().len() as u32;
    let p = ClusterParams {
        duration_s: hours * 3600.0,
        incident: Some(Incident { at_s: hours * 3600.0 / 2.0, tors: (0..racks).step_by(10).collect(), factor: 0.5 }),
        ..ClusterParams::default()
    };
    println!(
        "{:<20} {:>8} {:>9} {:>9} {:>11} {:>10} {:>9} {:>8} {:>9} {:>8}",
        "policy", "servers", "hot %", "p98 util", "migrations", "net->hot", "srv used", "cpu sd", "events", "wall s"
    );
    for pol in &policies {
        let t0 = Instant::now();
        let r = run_cluster(&topo, pol, &p, 1).expect("run");
        println!(
            "{:<20} {:>8} {:>8.2}% {:>9.3} {:>11} {:>10} {:>9.0} {:>8.3} {:>9} {:>8.1}",
            pol,
            topo.hosts().len(),
            100.0 * r.hot_tor_share,
            r.p98_tor_util,
            r.migrations,
            format!("{}/{}", r.net_intensive_on_hot, r.net_intensive_placements),
            r.servers_used,
            r.cpu_imbalance,
            r.events,
            t0.elapsed().as_secs_f64()
        );
        for (name, n, mean, p95) in &r.queries {
            println!("    query {name:<8} n={n:<5} mean={mean:.3} s p95={p95:.3} s");
        }
        println!("    cell util {:.4}, placements {}", r.cell_util, r.placements);
    }
}
