//! What the scenario layer costs over calling the engine directly.
//!
//! The same datacenter, the same generated flows and the same policy (ECMP,
//! fair sharing), run twice: once as `netheat simulate` runs a workload
//! today (flows added straight to a `Simulation`, run to the end), once as a
//! scenario (`Scenario::run_parts`: decisions, the runner, the tables).
//! Workload generation is timed apart and excluded from both. Then the
//! same flows under `fifo` (every flow through the task runner, a decision
//! per flow) for scale. Each timing is the median of `REPS` runs, the two
//! ways alternated.
//!
//! Usage: `cargo run --release -p netheat-scenario --example scenario_bench`;
//! `scenario_bench direct` or `scenario_bench scenario` runs the first case
//! once one way only (`parts` only reads and generates it, the common
//! part to subtract), for instruction counts (`valgrind --tool=cachegrind
//! --cache-sim=no`), which a shared machine does not disturb.

use std::time::Instant;

use netheat_core::Routing;
use netheat_data::DataDir;
use netheat_engine::{FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_scenario::Scenario;

const REPS: usize = 7;

fn scenario(racks: u32, flows_s: &str, extra: &str) -> String {
    format!(
        r#"
[scenario]
seed = 1
[topology]
kind = "two-tier"
racks = {racks}
hosts-per-rack = 16
host-link = "10Gbps"
tor-uplink = "40Gbps"
[workload]
duration = "{flows_s}"
[[workload.traffic]]
kind = "poisson"
load = 0.6
links = "tor-uplinks"
pattern = "inter-rack"
sizes = {{ dist = "web-search" }}
{extra}
"#
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let data = DataDir::explicit("/nonexistent");
    if let Some(mode) = std::env::args().nth(1) {
        let s = Scenario::from_text(&scenario(64, "1s", ""), "bench.toml", std::path::Path::new("."));
        let parts = s.parts(&data).expect("scenario");
        if mode == "parts" {
            // Reading and generating alone, to subtract from the other two.
            println!("parts: {} flows", parts.workload.flows.len());
            return;
        }
        let t0 = Instant::now();
        let n = if mode == "direct" {
            let topo = parts.topology.clone();
            let routing: &dyn Routing = &*topo;
            let cfg = SimConfig { window_s: 1.0, seed: 1, ..SimConfig::default() };
            let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
            for r in &parts.workload.flows {
                sim.add_flow(FlowSpec::new(r.flow_id, r.src, r.dst, r.bytes, r.start_s, Route::Ecmp)).unwrap();
            }
            sim.run().flows.len()
        } else {
            s.run_parts(parts, &mut |_, _| true).expect("run").flows.len()
        };
        println!("{mode}: {n} flows in {:.3} s", t0.elapsed().as_secs_f64());
        return;
    }
    println!("| case | flows | direct engine (s) | scenario (s) | overhead |");
    println!("|---|---|---|---|---|");
    for (racks, dur) in [(64, "1s"), (64, "4s")] {
        let text = scenario(racks, dur, "");
        let s = Scenario::from_text(&text, "bench.toml", std::path::Path::new("."));
        let parts = s.parts(&data).expect("scenario");
        let n = parts.workload.flows.len();
        let topo = parts.topology.clone();
        let rows = parts.workload.flows.clone();
        // Alternate the two so that load from other processes hits both alike.
        let (mut direct, mut via) = (Vec::new(), Vec::new());
        for _ in 0..REPS {
            let t0 = Instant::now();
            let routing: &dyn Routing = &*topo;
            let cfg = SimConfig { window_s: 1.0, seed: 1, ..SimConfig::default() };
            let mut sim = Simulation::new(Network::from_routing(routing), Some(routing), cfg);
            for r in &rows {
                sim.add_flow(FlowSpec::new(r.flow_id, r.src, r.dst, r.bytes, r.start_s, Route::Ecmp)).unwrap();
            }
            let res = sim.run();
            assert_eq!(res.flows.len(), n);
            direct.push(t0.elapsed().as_secs_f64());
            let parts = s.parts(&data).expect("scenario");
            let t0 = Instant::now();
            let r = s.run_parts(parts, &mut |_, _| true).expect("run");
            assert_eq!(r.flows.len(), n);
            via.push(t0.elapsed().as_secs_f64());
        }
        let (d, v) = (median(direct), median(via));
        println!(
            "| {}x16 hosts, web-search at 0.6, ECMP, fair share | {n} | {d:.3} | {v:.3} | {:+.1}% |",
            racks,
            100.0 * (v / d - 1.0)
        );
        let fifo = Scenario::from_text(
            &scenario(racks, dur, "[scheduling]\npolicy = \"fifo\""),
            "b.toml",
            std::path::Path::new("."),
        );
        let t: Vec<f64> = (0..REPS.min(3))
            .map(|_| {
                let parts = fifo.parts(&data).expect("scenario");
                let t0 = Instant::now();
                fifo.run_parts(parts, &mut |_, _| true).expect("run");
                t0.elapsed().as_secs_f64()
            })
            .collect();
        println!("| same flows, `fifo` (a decision per flow; no direct equivalent) | {n} | - | {:.3} | - |", median(t));
    }
}
