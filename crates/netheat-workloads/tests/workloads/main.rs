//! Integration tests of the generators and application structures, one
//! module per behaviour.

mod analytics;
mod arrivals;
mod background;
mod caps;
mod cfs;
mod cluster_jobs;
mod compute_jobs;
mod dag;
mod memcache;
mod partition_aggregate;
mod shuffle;
mod sizes;
mod storage;

use netheat_engine::{Network, SimConfig, Simulation};
use netheat_topology::{StorageDevice, Topology, TopologySpec};
use netheat_workloads::{DagRunner, TaskDag, TaskRecord};

/// Gigabit per second.
pub const G: f64 = 1e9;

/// Asserts `a == b` within `tol` (absolute).
#[track_caller]
pub fn assert_close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "expected {b}, got {a} (tolerance {tol})");
}

/// A uniform two-tier datacenter.
pub fn two_tier(racks: usize, hosts: usize, host_bps: f64, uplink_bps: f64) -> Topology {
    Topology::build(&TopologySpec::two_tier(racks, hosts, host_bps, uplink_bps)).unwrap()
}

/// A two-tier datacenter whose racks carry the given storage devices.
pub fn two_tier_with_storage(
    hosts: usize,
    host_bps: f64,
    uplink_bps: f64,
    storage: Vec<Vec<StorageDevice>>,
) -> Topology {
    let mut spec = TopologySpec::two_tier(storage.len(), hosts, host_bps, uplink_bps);
    for (r, s) in storage.into_iter().enumerate() {
        spec.racks[r].host.storage = s;
    }
    Topology::build(&spec).unwrap()
}

/// Runs tasks `(start_s, dag)` on a topology and returns their records.
pub fn run_tasks(topo: &Topology, tasks: Vec<(f64, TaskDag)>) -> Vec<TaskRecord> {
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::from_routing(topo), Some(topo), cfg);
    let mut runner = DagRunner::new();
    for (t, d) in tasks {
        runner.add_task(t, d);
    }
    runner.install(&mut sim).unwrap();
    let res = sim.run_with(&mut runner);
    assert!(runner.error().is_none(), "{:?}", runner.error());
    assert!(res.flows.iter().all(|f| f.finished()));
    runner.records()
}
