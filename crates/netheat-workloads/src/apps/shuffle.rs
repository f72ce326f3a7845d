//! All-to-all transfers: MapReduce shuffles and data-parallel iterations.
//!
//! Shuffle: every mapper sends `bytes_per_pair` to every reducer (pairs on
//! the same host move nothing over the network and are skipped); the task
//! completes with its last flow.
//!
//! Data-parallel batches: `iterations` rounds among a set of workers; in
//! each, every worker computes for `compute_s` seconds, then every ordered
//! pair of distinct workers exchanges `bytes_per_pair`; the next round
//! starts when the whole exchange is done (a barrier).

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;

use super::{check_host, check_nonneg, choose};
use crate::dag::{StepId, TaskDag};
use crate::GenError;

/// A MapReduce shuffle.
#[derive(Debug, Clone, PartialEq)]
pub struct Shuffle {
    /// Bytes from each mapper to each reducer (e.g. 15 MB).
    pub bytes_per_pair: f64,
    /// Mappers of a random job.
    pub mappers: usize,
    /// Reducers of a random job.
    pub reducers: usize,
}

impl Shuffle {
    /// The shuffle among given hosts.
    pub fn task(&self, topo: &Topology, mappers: &[HostId], reducers: &[HostId]) -> Result<TaskDag, GenError> {
        check_nonneg("bytes_per_pair", self.bytes_per_pair)?;
        let mut dag = TaskDag::new("shuffle");
        for &m in mappers {
            check_host(topo, "mappers", m)?;
            for &r in reducers {
                check_host(topo, "reducers", r)?;
                if m != r {
                    dag.flow(m, r, self.bytes_per_pair, &[]);
                }
            }
        }
        Ok(dag)
    }

    /// A job on `mappers + reducers` distinct uniform hosts.
    pub fn random_task<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<TaskDag, GenError> {
        let all: Vec<HostId> = (0..topo.hosts().len() as HostId).collect();
        let hosts = choose(rng, &all, self.mappers + self.reducers)
            .ok_or_else(|| GenError::NotEnoughHosts(format!("{} hosts wanted", self.mappers + self.reducers)))?;
        self.task(topo, &hosts[..self.mappers], &hosts[self.mappers..])
    }
}

/// Data-parallel training-style rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct DataParallel {
    /// Bytes each worker sends each other worker per round.
    pub bytes_per_pair: f64,
    /// Compute per round, seconds.
    pub compute_s: f64,
    /// Rounds.
    pub iterations: usize,
}

impl DataParallel {
    /// Rounds among the given workers.
    pub fn task(&self, topo: &Topology, workers: &[HostId]) -> Result<TaskDag, GenError> {
        check_nonneg("bytes_per_pair", self.bytes_per_pair)?;
        check_nonneg("compute_s", self.compute_s)?;
        for &w in workers {
            check_host(topo, "workers", w)?;
        }
        let mut dag = TaskDag::new("data-parallel");
        let mut prev: Vec<StepId> = Vec::new();
        for _ in 0..self.iterations {
            let barrier = if prev.is_empty() { vec![] } else { vec![dag.delay(0.0, &prev)] };
            let mut next = Vec::new();
            for &a in workers {
                let c = dag.delay(self.compute_s, &barrier);
                for &b in workers.iter().filter(|&&b| b != a) {
                    next.push(dag.flow(a, b, self.bytes_per_pair, &[c]));
                }
                if workers.len() == 1 {
                    next.push(c);
                }
            }
            prev = next;
        }
        Ok(dag)
    }
}
