//! Integration tests of the engine, one module per behaviour.

mod changes;
mod controller;
mod dense;
mod failures;
mod hostile;
mod invariants;
mod maxmin;
mod priorities;
mod processor_sharing;
mod recycle;
mod telemetry;

use netheat_core::{HostId, LinkId, Routing};
use netheat_engine::{FlowRecord, FlowSpec, Network, Route, SimConfig, SimResult, Simulation};

/// Gigabit per second.
pub const G: f64 = 1e9;

/// Asserts `a == b` within `tol` (absolute).
#[track_caller]
pub fn assert_close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "expected {b}, got {a} (tolerance {tol})");
}

/// An explicit-route flow.
pub fn flow(id: u64, bytes: f64, start: f64, path: &[LinkId]) -> FlowSpec {
    FlowSpec::new(id, 0, 1, bytes, start, Route::Explicit(path.to_vec()))
}

/// Runs explicit-route flows on a plain network without controller.
pub fn run(caps: Vec<f64>, flows: Vec<FlowSpec>) -> SimResult {
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(caps), None, cfg);
    sim.add_flows(flows).unwrap();
    sim.run()
}

/// The record of flow `id`.
pub fn rec(r: &SimResult, id: u64) -> &FlowRecord {
    r.flows.iter().find(|f| f.id == id).expect("flow id")
}

/// Two hosts joined by parallel two-hop paths: path `k` is links
/// `[2k, 2k+1]` from host 0 to host 1, with the given per-path capacities.
pub struct ParallelPaths {
    /// Capacity of both links of path k.
    pub caps: Vec<f64>,
}

impl Routing for ParallelPaths {
    fn num_hosts(&self) -> usize {
        2
    }
    fn num_links(&self) -> usize {
        2 * self.caps.len()
    }
    fn link_capacity_bps(&self, link: LinkId) -> f64 {
        self.caps[link as usize / 2]
    }
    fn num_paths(&self, src: HostId, dst: HostId) -> usize {
        if src == 0 && dst == 1 {
            self.caps.len()
        } else {
            0
        }
    }
    fn path(&self, _src: HostId, _dst: HostId, k: usize, out: &mut Vec<LinkId>) {
        out.clear();
        out.extend([2 * k as LinkId, 2 * k as LinkId + 1]);
    }
}
