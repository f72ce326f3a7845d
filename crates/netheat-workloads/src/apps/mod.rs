//! Application structures: builders of [`TaskDag`](crate::dag::TaskDag)s
//! whose flows depend on each other, run by the
//! [`DagRunner`](crate::dag::DagRunner) controller.
//!
//! Each structure is a plain parameter struct with a `task(...)` method that
//! builds one task on given hosts (what tests use) and, where hosts are
//! usually drawn at random, a `random_task(...)` that draws them with a
//! caller's seeded RNG. Task start times come from the caller, e.g. from
//! [`poisson_starts`]. Sizes are bytes, times seconds, rates bits/s.

pub mod aggregation;
pub mod analytics;
pub mod cfs;
pub mod chunks;
pub mod cluster;
pub mod coflow;
pub mod compute;
pub mod incast;
pub mod memcache;
pub mod partition_aggregate;
pub mod shuffle;
pub mod storage_ops;

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::budget::FlowCap;
use crate::GenError;

/// Task start times of a Poisson process of `rate_per_s` over
/// `[0, duration_s)`, seeded.
pub fn poisson_starts(rate_per_s: f64, duration_s: f64, seed: u64) -> Result<Vec<f64>, GenError> {
    poisson_starts_n(rate_per_s, duration_s, seed, usize::MAX)
}

/// The first `max` of [`poisson_starts`] (the same times). Stops with an
/// error past the memory budget's flow cap ([`FlowCap`]): every task has at
/// least one flow.
pub fn poisson_starts_n(rate_per_s: f64, duration_s: f64, seed: u64, max: usize) -> Result<Vec<f64>, GenError> {
    if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
        return Err(GenError::param("rate_per_s", format!("{rate_per_s} must be > 0")));
    }
    let cap = FlowCap::current()?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut t = 0.0;
    while out.len() < max {
        t += -(1.0 - rng.gen::<f64>()).ln() / rate_per_s;
        if t >= duration_s {
            break;
        }
        cap.check(out.len() + 1, "the tasks' start times")?;
        out.push(t);
    }
    Ok(out)
}

/// Hosts of rack `rack`, in id order.
pub fn rack_hosts(topo: &Topology, rack: u32) -> std::ops::Range<HostId> {
    let first = topo.racks()[rack as usize].first_host;
    first..first + topo.hosts_per_rack()
}

/// Rack of a host.
pub fn rack_of(topo: &Topology, host: HostId) -> u32 {
    topo.hosts()[host as usize].rack
}

/// `k` distinct elements of `pool` drawn uniformly (partial Fisher-Yates).
pub fn choose<T: Copy, R: Rng + ?Sized>(rng: &mut R, pool: &[T], k: usize) -> Option<Vec<T>> {
    if k > pool.len() {
        return None;
    }
    let mut v = pool.to_vec();
    for i in 0..k {
        let j = rng.gen_range(i..v.len());
        v.swap(i, j);
    }
    v.truncate(k);
    Some(v)
}

pub(crate) fn check_nonneg(name: &str, v: f64) -> Result<(), GenError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(GenError::param(name, format!("{v} must be finite and >= 0")))
    }
}

/// `replicas` copies can span `fault_tolerance + 1` racks (at least one
/// copy, no more racks than copies).
pub(crate) fn check_replicas(replicas: usize, fault_tolerance: usize) -> Result<(), GenError> {
    if replicas == 0 || fault_tolerance + 1 > replicas {
        return Err(GenError::param(
            "replicas",
            format!("{replicas} replicas cannot span fault_tolerance + 1 = {} racks", fault_tolerance + 1),
        ));
    }
    Ok(())
}

pub(crate) fn check_host(topo: &Topology, name: &str, h: HostId) -> Result<(), GenError> {
    if (h as usize) < topo.hosts().len() {
        Ok(())
    } else {
        Err(GenError::param(name, format!("host {h} does not exist ({} hosts)", topo.hosts().len())))
    }
}
