//! Chunk store operations: reads of stored chunks and writes of new ones,
//! from client hosts to the disks of storage hosts (the hotspot paper's
//! Colossus-like chunk traffic, NSDI'25 sections 2.2 and 4.3).
//!
//! Each operation is one task:
//!
//! * `chunk-write`: a zero-second *request* (the moment the client asks for
//!   the chunk's replicas, as a `file-write` block's), then the chunk to each
//!   replica, then each replica's disk write ([`Step::Io`]). With `direct`
//!   writes the client sends to every replica itself (section 2.2: the
//!   client library reads and writes the chunks on the D servers directly);
//!   otherwise the chunk streams through a pipeline client → r1 → r2 → ...,
//!   all hops at once. The write ends with the last replica's disk write.
//! * `chunk-read`: the disk read at a replica, then the chunk to the client.
//!   Which chunk and which replica are drawn here, as uniform numbers
//!   ([`ReadPick`]): the storage layer resolves them against the chunks
//!   stored when the read starts and rewrites the steps, so that every
//!   policy compared on one workload reads the same picks.
//!
//! With an erasure code ([`Erasure`]) an object is a stripe of `data`
//! chunks of `bytes / data` and `parity` chunks of the same size, one per
//! rack: a write sends every chunk from the client to its host (then each
//! chunk's disk write), a read fetches the `data` data chunks in parallel
//! (each one's disk read, then its transfer), as striped reads of erasure-
//! coded files do (HDFS-EC). When a failure has cut a data chunk's host
//! off, the storage layer reads the first `data` reachable chunks of the
//! stripe instead, parity included (a degraded read); a replicated read
//! goes to a reachable replica.
//!
//! The replicas a write names here are [`uniform_rack_aware`]'s, a stand-in:
//! a scenario's storage policy places every chunk when its request starts.
//! The chunks stored before the run ([`ChunkStore::stored`]) are drawn by
//! [`ChunkStore::stored_chunks`] and placed by the storage layer too.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::{Rng, RngCore};

use super::cfs::uniform_rack_aware;
use super::{check_host, check_replicas};
use crate::dag::{ReadPick, StepId, TaskDag};
use crate::sizes::SizeDist;
use crate::GenError;

/// Object ids of chunks written during a run start here (the chunks stored
/// before the run are `0..stored`).
pub const WRITTEN_BASE: u64 = 1 << 40;

/// An erasure code: `data` data chunks and `parity` parity chunks a
/// stripe, each on its own rack (Reed-Solomon RS(data, parity) survives
/// `parity` lost racks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Erasure {
    /// Data chunks a stripe.
    pub data: usize,
    /// Parity chunks a stripe.
    pub parity: usize,
}

/// Parameters of chunk store operations.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkStore {
    /// Probability that an operation reads.
    pub read_share: f64,
    /// Chunk sizes, bytes.
    pub sizes: SizeDist,
    /// Replicas per chunk.
    pub replicas: usize,
    /// Rack failures a chunk survives: its replicas span at least
    /// `fault_tolerance + 1` racks.
    pub fault_tolerance: usize,
    /// Writes go from the client to each replica (else a pipeline).
    pub direct: bool,
    /// Reads pick among the chunks stored before the run only (else among
    /// every chunk stored so far, written ones included).
    pub read_stored_only: bool,
    /// Chunks stored before the run.
    pub stored: usize,
    /// Erasure coding instead of replicas (`replicas` and
    /// `fault_tolerance` then unused; writes are direct).
    pub erasure: Option<Erasure>,
}

/// A chunk stored before the run: its object id and size; the storage
/// layer places it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredChunk {
    /// Object id.
    pub object: u64,
    /// Bytes.
    pub bytes: f64,
}

/// The chunks a `chunk-store` had stored before the run, and how they are
/// replicated.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkStoreRun {
    /// Replicas per chunk.
    pub replicas: usize,
    /// Racks the replicas span.
    pub min_racks: usize,
    /// The erasure code, if the chunks are erasure-coded stripes.
    pub erasure: Option<Erasure>,
    /// The chunks, in object order.
    pub chunks: Vec<StoredChunk>,
}

impl ChunkStore {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), GenError> {
        self.sizes.validate()?;
        if !(0.0..=1.0).contains(&self.read_share) {
            return Err(GenError::param("read_share", format!("{} is not a probability", self.read_share)));
        }
        match self.erasure {
            Some(e) if e.data == 0 => return Err(GenError::param("erasure", "a stripe needs at least 1 data chunk")),
            Some(_) if !self.direct => {
                return Err(GenError::param("erasure", "erasure-coded chunks are written by the client directly"))
            }
            Some(_) => {}
            None => check_replicas(self.replicas, self.fault_tolerance)?,
        }
        if self.read_share > 0.0 && self.stored == 0 {
            return Err(GenError::param("stored", "reads need chunks stored before the run (stored >= 1)"));
        }
        Ok(())
    }

    /// The chunks stored before the run, sizes drawn from `rng`.
    pub fn stored_chunks(&self, rng: &mut dyn RngCore) -> Vec<StoredChunk> {
        (0..self.stored).map(|i| StoredChunk { object: i as u64, bytes: self.sizes.sample(rng) }).collect()
    }

    /// Operation number `op` (its written chunk is object
    /// `WRITTEN_BASE + op`) from a client drawn among `clients`.
    pub fn op(&self, topo: &Topology, clients: &[HostId], op: u64, rng: &mut dyn RngCore) -> Result<TaskDag, GenError> {
        if clients.is_empty() {
            return Err(GenError::NotEnoughHosts("no client host".into()));
        }
        let client = clients[rng.gen_range(0..clients.len())];
        if rng.gen::<f64>() < self.read_share {
            let pick = ReadPick {
                object: rng.gen::<f64>(),
                copy: rng.gen::<f64>(),
                stored_before_only: self.read_stored_only,
            };
            let mut dag = Self::read(client, pick, self.erasure.map_or(1, |e| e.data));
            dag.erasure = self.erasure.map(|e| (e.data as u32, e.parity as u32));
            return Ok(dag);
        }
        let bytes = self.sizes.sample(rng);
        let (pieces, racks) = self.layout();
        let hosts = uniform_rack_aware(topo, client, pieces, racks, rng)?;
        let chunk = self.erasure.map_or(bytes, |e| bytes / e.data as f64);
        self.write(topo, client, WRITTEN_BASE + op, chunk, &hosts)
    }

    /// Pieces a chunk is stored as (replicas, or a stripe's chunks) and
    /// the racks they span.
    pub fn layout(&self) -> (usize, usize) {
        match self.erasure {
            Some(e) => (e.data + e.parity, e.data + e.parity),
            None => (self.replicas, self.fault_tolerance + 1),
        }
    }

    /// A read by `client` of the chunk `pick` names, in `branches`
    /// parallel branches (1 for a replicated chunk, a stripe's data chunks
    /// for an erasure-coded one): each a disk read, then its bytes to the
    /// client (hosts and sizes are the storage layer's to fill in when the
    /// read starts; until then the steps name the client and no bytes).
    pub fn read(client: HostId, pick: ReadPick, branches: usize) -> TaskDag {
        let mut dag = TaskDag::with_capacity("chunk-read", 2 * branches.max(1));
        dag.read = Some(pick);
        for _ in 0..branches.max(1) {
            let io = dag.io(client, 0.0, false, u64::MAX, &[]);
            dag.flow(client, client, 0.0, &[io]);
        }
        dag
    }

    /// A write by `client` of chunk `object` to `hosts` (in pipeline
    /// order), `bytes` to each: a replica, or one chunk of a stripe.
    pub fn write(
        &self,
        topo: &Topology,
        client: HostId,
        object: u64,
        bytes: f64,
        hosts: &[HostId],
    ) -> Result<TaskDag, GenError> {
        check_host(topo, "client", client)?;
        let mut dag = TaskDag::new("chunk-write");
        dag.min_racks = self.layout().1;
        dag.erasure = self.erasure.map(|e| (e.data as u32, e.parity as u32));
        let request: [StepId; 1] = [dag.delay(0.0, &[])];
        let mut from = client;
        let mut hops = Vec::with_capacity(hosts.len());
        for &to in hosts {
            check_host(topo, "placement", to)?;
            hops.push((dag.flow(from, to, bytes, &request), to));
            if !self.direct {
                from = to;
            }
        }
        for (hop, to) in hops {
            dag.io(to, bytes, true, object, &[hop]);
        }
        Ok(dag)
    }
}
