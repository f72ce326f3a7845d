//! All-to-all transfers: MapReduce shuffles and data-parallel iterations.
//!
//! Shuffle: every mapper sends `bytes_per_pair` to every reducer (pairs on
//! the same host move nothing over the network and are skipped); the task
//! completes with its last flow.
//!
//! Shuffle job ([`ShuffleJob`]): the Subways paper's shuffles (CoNEXT'15
//! §8.2-8.4) on servers placed in a given part of the datacenter rather
//! than drawn at random; one task whose flows all start with it.
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

/// Where the servers of a [`ShuffleJob`] sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobPlacement {
    /// `nodes` consecutive servers from the first server of `first_rack`
    /// (the Subways paper's intra-cluster jobs, §8.3).
    #[default]
    Contiguous,
    /// Half the servers (rounded up) fill the racks of the loop of
    /// `first_rack` in loop order from its position 0, the rest those of the
    /// next loop (§8.3 "splits those servers equally between two different
    /// Subways loops"). Loops are the topology's Subways loops (Type 1/2); a
    /// Type 0 datacenter has none, and its clusters play the part (they are
    /// the loops of Type 1 with loops as large as a cluster, as in §8.1).
    TwoLoops,
}

impl JobPlacement {
    /// Config names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["contiguous", "two-loops"];

    /// The placement named `name` (one of [`JobPlacement::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "contiguous" => Some(Self::Contiguous),
            "two-loops" => Some(Self::TwoLoops),
            _ => None,
        }
    }
}

/// Who sends to whom in a [`ShuffleJob`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobPattern {
    /// Every server to every other (a MapReduce shuffle, §8.3).
    #[default]
    AllToAll,
    /// The servers of the job's last rack receive from all the others
    /// (§8.2, Table 2: three racks send to the fourth).
    IntoLastRack,
}

impl JobPattern {
    /// Config names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["all-to-all", "into-last-rack"];

    /// The pattern named `name` (one of [`JobPattern::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "all-to-all" => Some(Self::AllToAll),
            "into-last-rack" => Some(Self::IntoLastRack),
            _ => None,
        }
    }
}

/// A shuffle job on servers placed by [`JobPlacement`]: every (sender,
/// receiver) pair of [`JobPattern`] has `flows_per_pair` flows of
/// `bytes_per_pair` bytes each, all starting with the task; the task
/// completes with its last flow (the Subways paper's job completion time).
/// Parameter errors name the keys of the `shuffle-job` workload app
/// (`nodes`, `first-rack`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleJob {
    /// Rack of the first server.
    pub first_rack: u32,
    /// Servers in the job (at least 2).
    pub nodes: usize,
    /// Bytes of each flow.
    pub bytes_per_pair: f64,
    /// Flows from each sender to each of its receivers (1 for a shuffle).
    pub flows_per_pair: usize,
    /// Where the servers sit.
    pub placement: JobPlacement,
    /// Who sends to whom.
    pub pattern: JobPattern,
}

impl ShuffleJob {
    /// An all-to-all job on `nodes` consecutive servers from `first_rack`,
    /// one flow of `bytes_per_pair` per ordered pair.
    pub fn new(first_rack: u32, nodes: usize, bytes_per_pair: f64) -> Self {
        Self {
            first_rack,
            nodes,
            bytes_per_pair,
            flows_per_pair: 1,
            placement: JobPlacement::Contiguous,
            pattern: JobPattern::AllToAll,
        }
    }

    /// The job's servers, in placement order.
    pub fn members(&self, topo: &Topology) -> Result<Vec<HostId>, GenError> {
        let hosts = topo.hosts().len();
        let racks = topo.racks().len();
        let first = topo
            .racks()
            .get(self.first_rack as usize)
            .ok_or_else(|| {
                GenError::param(
                    "first-rack",
                    format!("rack {} does not exist (the datacenter has racks 0..{})", self.first_rack, racks - 1),
                )
            })?
            .first_host as usize;
        if self.nodes < 2 {
            return Err(GenError::param("nodes", format!("{} servers: a shuffle needs at least 2", self.nodes)));
        }
        match self.placement {
            JobPlacement::Contiguous => {
                if first + self.nodes > hosts {
                    return Err(GenError::param(
                        "nodes",
                        format!(
                            "{} servers from rack {} (host {first}) do not fit in the datacenter's {hosts} hosts",
                            self.nodes, self.first_rack
                        ),
                    ));
                }
                Ok((first..first + self.nodes).map(|h| h as HostId).collect())
            }
            JobPlacement::TwoLoops => {
                let loops = loops_in_order(topo);
                let a = loops
                    .iter()
                    .position(|l| l.contains(&self.first_rack))
                    .ok_or_else(|| GenError::param("first-rack", "the rack is in no loop"))?;
                if loops.len() < 2 {
                    return Err(GenError::param("placement", "two-loops needs at least two loops (or clusters)"));
                }
                let mut out = Vec::new();
                let halves = [self.nodes.div_ceil(2), self.nodes / 2];
                for (half, l) in halves.into_iter().zip([&loops[a], &loops[(a + 1) % loops.len()]]) {
                    let servers: Vec<HostId> = l
                        .iter()
                        .flat_map(|&r| {
                            let f = topo.racks()[r as usize].first_host;
                            (f..f + topo.hosts_per_rack() as HostId).collect::<Vec<_>>()
                        })
                        .collect();
                    if servers.len() < half {
                        return Err(GenError::param(
                            "nodes",
                            format!("{half} servers do not fit in a loop of {} servers", servers.len()),
                        ));
                    }
                    out.extend(&servers[..half]);
                }
                Ok(out)
            }
        }
    }

    /// The (sender, receiver) pairs, `flows_per_pair` times each, in the
    /// order the task's flow steps are added: senders in placement order,
    /// each to its receivers in placement order.
    pub fn pairs(&self, topo: &Topology) -> Result<Vec<(HostId, HostId)>, GenError> {
        let members = self.members(topo)?;
        if self.flows_per_pair == 0 {
            return Err(GenError::param("flows-per-pair", "must be at least 1"));
        }
        let receivers: Vec<HostId> = match self.pattern {
            JobPattern::AllToAll => members.clone(),
            JobPattern::IntoLastRack => {
                let rack_of = |h: HostId| topo.nodes()[h as usize].rack;
                let last = rack_of(*members.last().expect("at least 2 members"));
                members.iter().copied().filter(|&h| rack_of(h) == last).collect()
            }
        };
        let senders: Vec<HostId> = match self.pattern {
            JobPattern::AllToAll => members.clone(),
            JobPattern::IntoLastRack => members.iter().copied().filter(|h| !receivers.contains(h)).collect(),
        };
        if senders.is_empty() {
            return Err(GenError::param("nodes", "into-last-rack needs servers outside the job's last rack"));
        }
        Ok(senders
            .iter()
            .flat_map(|&s| receivers.iter().map(move |&d| (s, d)))
            .filter(|(s, d)| s != d)
            .flat_map(|p| std::iter::repeat_n(p, self.flows_per_pair))
            .collect())
    }

    /// The job as one task (kind `shuffle-job`).
    pub fn task(&self, topo: &Topology) -> Result<TaskDag, GenError> {
        if !(self.bytes_per_pair.is_finite() && self.bytes_per_pair > 0.0) {
            return Err(GenError::param("bytes-per-pair", format!("{} must be > 0", self.bytes_per_pair)));
        }
        let mut dag = TaskDag::new("shuffle-job");
        for (s, d) in self.pairs(topo)? {
            dag.flow(s, d, self.bytes_per_pair, &[]);
        }
        Ok(dag)
    }
}

/// The Subways loops of `topo` (each a list of racks in loop order from
/// position 0), or its clusters (racks in id order) when it has none.
pub fn loops_in_order(topo: &Topology) -> Vec<Vec<u32>> {
    let racks = topo.racks();
    let mut ids: Vec<u32> = racks.iter().filter_map(|r| r.subways_loop).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        let pods = racks.iter().map(|r| r.pod).max().map_or(0, |p| p + 1);
        return (0..pods).map(|p| (0..racks.len() as u32).filter(|&r| racks[r as usize].pod == p).collect()).collect();
    }
    ids.iter()
        .map(|&id| {
            let members: Vec<u32> =
                (0..racks.len() as u32).filter(|&r| racks[r as usize].subways_loop == Some(id)).collect();
            // Position 0 is the loop's lowest rack; a server's port 1 is on
            // the ToR one position on (`netheat-topology` wiring).
            let mut order = vec![members[0]];
            while order.len() < members.len() {
                let last = *order.last().expect("non-empty");
                let h = racks[last as usize].first_host;
                let next = topo.hosts()[h as usize].ports.get(1).map(|p| p.tor);
                match next {
                    Some(n) if !order.contains(&n) && members.contains(&n) => order.push(n),
                    _ => {
                        // Not a ring walk (p = 1 or l = p): fall back to id order.
                        order = members.clone();
                        break;
                    }
                }
            }
            order
        })
        .collect()
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
