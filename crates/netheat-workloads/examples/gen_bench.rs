//! Generator benchmark: 10^6 Poisson flows with web-search sizes and
//! uniform endpoints at load 0.6 of the ToR uplinks of the 36,000-host
//! three-tier datacenter (30 pods x 30 racks x 40 hosts, 1 Gbps hosts,
//! 20 Gbps ToR uplinks). Prints wall time and flows per second.
//!
//! `cargo run --release -p netheat-workloads --example gen_bench`

use std::time::Instant;

use netheat_topology::{Topology, TopologySpec};
use netheat_workloads::{Horizon, LinkSet, Poisson, SizeDist};

fn main() {
    let n = 1_000_000;
    let t0 = Instant::now();
    let topo = Topology::build(&TopologySpec::three_tier(30, 30, 40, 4, 16, 1e9, 20e9, None)).expect("topology");
    let build_s = t0.elapsed().as_secs_f64();
    let g = Poisson::new(LinkSet::TorUplinks, 0.6, SizeDist::web_search(), Horizon::Flows(n));
    let t1 = Instant::now();
    let cal = g.calibration(&topo).expect("calibration");
    let rows = g.generate(&topo, 1).expect("generate");
    let gen_s = t1.elapsed().as_secs_f64();
    assert_eq!(rows.len(), n);
    let span = rows.last().map_or(0.0, |r| r.start_s);
    let bytes: f64 = rows.iter().map(|r| r.bytes).sum();
    println!("topology: {} hosts, built in {:.3} s", topo.hosts().len(), build_s);
    println!(
        "calibration: lambda {:.0} flows/s, E[S] {:.0} B, E[ToR uplinks per flow] {:.5} (exact: {})",
        cal.lambda_per_s, cal.mean_bytes, cal.links_per_flow, cal.exact
    );
    println!("generated {n} flows spanning {span:.3} s ({:.3e} bytes)", bytes);
    println!("wall time {gen_s:.3} s, {:.2e} flows/s", n as f64 / gen_s);
}
