//! Rack-level shuffles (such as the Facebook 2010 coflow trace) mapped onto
//! the hosts of a topology.
//!
//! A [`RackShuffle`] names the racks of its mappers and, per reducer, its
//! rack and the bytes it receives in total. On a topology, trace rack `t`
//! becomes rack `t mod R` (the identity when the topology has at least as
//! many racks as the trace; folding is reported by [`MappedShuffles::folded`]),
//! each mapper and each reducer a uniformly drawn host of its rack, and
//! every reducer receives an equal share of its bytes from every mapper, so
//! a shuffle is `mappers x reducers` flows. A mapper and a reducer drawn on
//! the same host exchange their share locally: it is counted in
//! [`MappedShuffles::local_bytes`], not simulated.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::rack_hosts;
use crate::budget::FlowCap;
use crate::dag::TaskDag;
use crate::{FlowRow, GenError};

/// One shuffle between racks.
#[derive(Debug, Clone, PartialEq)]
pub struct RackShuffle {
    /// Identifier (the trace's coflow id), copied to the flows' task id.
    pub id: u64,
    /// Start time, seconds.
    pub start_s: f64,
    /// Rack of each mapper.
    pub mapper_racks: Vec<u32>,
    /// `(rack, bytes received in total)` of each reducer.
    pub reducers: Vec<(u32, f64)>,
}

/// Shuffles placed on hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedShuffles {
    /// `(start_s, shuffle id, task)` per shuffle, in input order.
    pub tasks: Vec<(f64, u64, TaskDag)>,
    /// Bytes exchanged between a mapper and a reducer on the same host.
    pub local_bytes: f64,
    /// Whether trace racks were folded onto fewer topology racks.
    pub folded: bool,
}

impl MappedShuffles {
    /// Flows of every shuffle.
    pub fn num_flows(&self) -> usize {
        self.tasks.iter().map(|t| t.2.num_flows()).sum()
    }

    /// The shuffles' flows as an open-loop trace (every flow starts with its
    /// shuffle, task id = shuffle id), sorted by start time, ids from 0.
    pub fn rows(&self) -> Vec<FlowRow> {
        let mut out = Vec::with_capacity(self.num_flows());
        for (start, id, dag) in &self.tasks {
            for step in &dag.steps {
                if let crate::dag::Step::Flow { src, dst, bytes, .. } = *step {
                    out.push(FlowRow {
                        flow_id: 0,
                        start_s: *start,
                        src,
                        dst,
                        bytes,
                        task_id: Some(*id),
                        priority: 0,
                        weight: 1.0,
                        rate_cap_bps: None,
                    });
                }
            }
        }
        out.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        for (i, r) in out.iter_mut().enumerate() {
            r.flow_id = i as u64;
        }
        out
    }
}

/// Places `shuffles` on `topo` (see the module docs), seeded.
pub fn map_rack_shuffles(topo: &Topology, shuffles: &[RackShuffle], seed: u64) -> Result<MappedShuffles, GenError> {
    let racks = topo.racks().len() as u32;
    if racks == 0 || topo.hosts_per_rack() == 0 {
        return Err(GenError::NotEnoughHosts("the topology has no hosts to place shuffles on".into()));
    }
    let cap = FlowCap::current()?;
    let mut flows = 0usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut host_in = |trace_rack: u32| -> HostId {
        let r = rack_hosts(topo, trace_rack % racks);
        r.start + rng.gen_range(0..r.end - r.start)
    };
    let mut out = MappedShuffles { tasks: Vec::with_capacity(shuffles.len()), local_bytes: 0.0, folded: false };
    for s in shuffles {
        if !(s.start_s.is_finite() && s.start_s >= 0.0) {
            return Err(GenError::param("start_s", format!("shuffle {}: {} is not a time >= 0", s.id, s.start_s)));
        }
        if s.mapper_racks.is_empty() {
            return Err(GenError::param("mapper_racks", format!("shuffle {} has no mappers", s.id)));
        }
        out.folded |= s.mapper_racks.iter().chain(s.reducers.iter().map(|r| &r.0)).any(|&r| r >= racks);
        let mappers: Vec<HostId> = s.mapper_racks.iter().map(|&r| host_in(r)).collect();
        let mut dag = TaskDag::new("coflow");
        for &(rack, bytes) in &s.reducers {
            if !(bytes.is_finite() && bytes >= 0.0) {
                return Err(GenError::param("reducers", format!("shuffle {}: {bytes} is not a size", s.id)));
            }
            let reducer = host_in(rack);
            flows += mappers.len();
            cap.check(flows, "the shuffles' flows")?;
            let share = bytes / mappers.len() as f64;
            for &m in &mappers {
                if m == reducer {
                    out.local_bytes += share;
                } else {
                    dag.flow(m, reducer, share, &[]);
                }
            }
        }
        out.tasks.push((s.start_s, s.id, dag));
    }
    Ok(out)
}
