//! Cluster-file-system file writes through replication pipelines.
//!
//! A file is split into blocks of `block_bytes` (the last one shorter).
//! Each block goes to `replicas` hosts chosen by [`uniform_rack_aware`] (spanning
//! at least `fault_tolerance + 1` racks) and is written through a chain
//! `writer → r1 → r2 → ... → r_k`. The chain streams: all its hops run at
//! once, each flow capped by the write throughput of its destination's
//! disks ([`disk_write_bps`]; `default_disk_write_bps` for hosts without
//! one), so an uncontended block takes `8 · bytes / slowest disk`. Blocks
//! are written one after the other; the task ends with the last hop of the
//! last block.
//!
//! Each block begins with its *request*, a delay step of zero seconds that
//! its hops wait for: the moment the writer asks for the block's replicas.
//! A storage policy that decides at intervals (Sinbad's decision interval
//! `q`, SIGCOMM'13 section 5.2) lengthens it to the next decision.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::{Rng, RngCore};

use super::{check_host, check_replicas, choose, rack_of};
use crate::dag::{StepId, TaskDag};
use crate::storage::disk_write_bps;
use crate::GenError;

/// The generator's own replica hosts for a block, uniform and rack-aware:
/// among candidate hosts (those with a persistent disk if any host has one,
/// else all hosts; never the writer), `min_racks` distinct racks uniformly
/// with one uniform host in each, then the remaining replicas uniformly
/// among the unused candidates; `replicas` hosts in pipeline order.
///
/// This is not a replica placement *policy*: those (uniform, CCP, Sinbad)
/// implement `netheat_storage::ReplicaPlacement`, the one trait of that
/// decision, and a scenario's `storage.policy` re-places every block when
/// its pipeline starts. This choice stands only in a workload run without
/// a storage policy.
pub fn uniform_rack_aware(
    topo: &Topology,
    writer: HostId,
    replicas: usize,
    min_racks: usize,
    rng: &mut dyn RngCore,
) -> Result<Vec<HostId>, GenError> {
    let n = topo.hosts().len() as HostId;
    let disks: Vec<HostId> = (0..n).filter(|&h| disk_write_bps(topo, h).is_some()).collect();
    let pool: Vec<HostId> = if disks.is_empty() { (0..n).collect() } else { disks };
    let pool: Vec<HostId> = pool.into_iter().filter(|&h| h != writer).collect();
    let mut racks: Vec<u32> = pool.iter().map(|&h| rack_of(topo, h)).collect();
    racks.dedup();
    let chosen = choose(rng, &racks, min_racks).ok_or_else(|| {
        GenError::NotEnoughHosts(format!("{min_racks} racks wanted, candidates span {}", racks.len()))
    })?;
    let mut out: Vec<HostId> = Vec::with_capacity(replicas);
    for r in chosen {
        let in_rack: Vec<HostId> = pool.iter().copied().filter(|&h| rack_of(topo, h) == r).collect();
        out.push(in_rack[rng.gen_range(0..in_rack.len())]);
    }
    let rest: Vec<HostId> = pool.iter().copied().filter(|h| !out.contains(h)).collect();
    let more = choose(rng, &rest, replicas.saturating_sub(out.len())).ok_or_else(|| {
        GenError::NotEnoughHosts(format!("{replicas} replicas wanted, {} candidate hosts", pool.len()))
    })?;
    out.extend(more);
    Ok(out)
}

/// Parameters of file writes.
#[derive(Debug, Clone, PartialEq)]
pub struct CfsWrite {
    /// Block size, bytes (default 256 MiB).
    pub block_bytes: f64,
    /// Replicas per block `r` (default 3).
    pub replicas: usize,
    /// Rack failures to survive `f`: replicas span at least `f + 1` racks
    /// (default 1).
    pub fault_tolerance: usize,
    /// Write cap for destinations without a persistent disk, bits/s
    /// (`None`: uncapped).
    pub default_disk_write_bps: Option<f64>,
}

impl Default for CfsWrite {
    fn default() -> Self {
        Self { block_bytes: 256.0 * 1024.0 * 1024.0, replicas: 3, fault_tolerance: 1, default_disk_write_bps: None }
    }
}

/// A file write task and where its blocks went.
#[derive(Debug, Clone, PartialEq)]
pub struct FileWrite {
    /// The task.
    pub dag: TaskDag,
    /// Replica hosts of every block, in pipeline order.
    pub blocks: Vec<Vec<HostId>>,
}

impl CfsWrite {
    /// Writes `file_bytes` from `writer`, each block to the hosts of
    /// [`uniform_rack_aware`].
    pub fn task(
        &self,
        topo: &Topology,
        writer: HostId,
        file_bytes: f64,
        rng: &mut dyn RngCore,
    ) -> Result<FileWrite, GenError> {
        self.task_with(topo, writer, file_bytes, uniform_rack_aware, rng)
    }

    /// Writes `file_bytes` from `writer`, each block to the hosts
    /// `choose(topo, writer, replicas, min_racks, rng)` returns (tests fix
    /// the chains this way).
    pub fn task_with<F>(
        &self,
        topo: &Topology,
        writer: HostId,
        file_bytes: f64,
        choose: F,
        rng: &mut dyn RngCore,
    ) -> Result<FileWrite, GenError>
    where
        F: FnMut(&Topology, HostId, usize, usize, &mut dyn RngCore) -> Result<Vec<HostId>, GenError>,
    {
        let mut dag = TaskDag::new("file-write");
        let blocks = self.append_with(&mut dag, topo, writer, file_bytes, &[], choose, rng)?;
        Ok(FileWrite { dag, blocks })
    }

    /// Appends to `dag` the write of a file of `file_bytes` from `writer`
    /// that starts once the steps `after` finished (a reducer's output
    /// written after its shuffle input arrived), each block to the hosts
    /// `choose` returns ([`uniform_rack_aware`], or fixed chains in
    /// tests); returns the blocks' replica hosts. The DAG's kind must be
    /// one of [`WRITE_KINDS`] for a storage policy to place the blocks.
    #[allow(clippy::too_many_arguments)]
    pub fn append_with<F>(
        &self,
        dag: &mut TaskDag,
        topo: &Topology,
        writer: HostId,
        file_bytes: f64,
        after: &[StepId],
        mut choose: F,
        rng: &mut dyn RngCore,
    ) -> Result<Vec<Vec<HostId>>, GenError>
    where
        F: FnMut(&Topology, HostId, usize, usize, &mut dyn RngCore) -> Result<Vec<HostId>, GenError>,
    {
        check_host(topo, "writer", writer)?;
        if !(self.block_bytes.is_finite() && self.block_bytes > 0.0) {
            return Err(GenError::param("block_bytes", format!("{} must be > 0", self.block_bytes)));
        }
        if !(file_bytes.is_finite() && file_bytes >= 0.0) {
            return Err(GenError::param("file_bytes", format!("{file_bytes} must be >= 0")));
        }
        check_replicas(self.replicas, self.fault_tolerance)?;
        dag.min_racks = self.fault_tolerance + 1;
        let mut blocks = Vec::new();
        let mut prev: Vec<StepId> = after.to_vec();
        let mut left = file_bytes;
        while left > 0.0 {
            let b = left.min(self.block_bytes);
            left -= b;
            let hosts = choose(topo, writer, self.replicas, self.fault_tolerance + 1, rng)?;
            let request = [dag.delay(0.0, &prev)];
            let mut hops = Vec::with_capacity(hosts.len());
            let mut from = writer;
            for &to in &hosts {
                check_host(topo, "placement", to)?;
                hops.push(match disk_write_bps(topo, to).or(self.default_disk_write_bps) {
                    Some(cap) => dag.capped_flow(from, to, b, cap, &request),
                    None => dag.flow(from, to, b, &request),
                });
                from = to;
            }
            prev = hops;
            blocks.push(hosts);
        }
        Ok(blocks)
    }
}

/// Kinds of tasks whose blocks a scenario's storage policy places: file
/// writes, and the jobs that write their output to the file system
/// ([`crate::apps::coflow`]'s `mr-job` and `write-job`).
pub const WRITE_KINDS: [&str; 3] = ["file-write", "mr-job", "write-job"];

/// Whether tasks of `kind` write files in blocks ([`WRITE_KINDS`]).
pub fn writes_blocks(kind: &str) -> bool {
    WRITE_KINDS.contains(&kind)
}

/// The block request a step hangs on, if it is a hop of a block's
/// pipeline: a flow whose only dependency is a delay step (the request;
/// shuffle flows of a job depend on nothing or on other flows).
pub fn block_request(dag: &TaskDag, step: StepId) -> Option<StepId> {
    use crate::dag::Step;
    match (&dag.steps[step], dag.deps(step)) {
        (Step::Flow { .. }, &[r]) if matches!(dag.steps[r], Step::Delay { .. }) => Some(r),
        _ => None,
    }
}
