//! Storage traffic: parallel chunk retrieval and single chunk reads/writes.
//!
//! Retrieval: a client reads one chunk from each of `k` servers in
//! parallel (an erasure-coded or striped object); the task is done when
//! every chunk has arrived. Each chunk is a read of the server's device
//! ([`crate::storage`], when `device` is set) followed by the flow.
//!
//! Storage operations: one chunk read or written between a client and a
//! server holding a device of the chosen kind. Read latency = device read
//! time + network transfer; write latency = network transfer + the write
//! acknowledgement time of [`WriteModel`] (write-back cache by default).

use netheat_core::HostId;
use netheat_topology::{StorageKind, Topology};
use rand::Rng;

use super::{check_host, check_nonneg, choose};
use crate::dag::TaskDag;
use crate::sizes::SizeDist;
use crate::storage::{host_device, hosts_with, read_time_s, write_time_s, WriteModel};
use crate::GenError;

/// Parallel chunk retrieval.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    /// Bytes read from each server.
    pub chunk_bytes: f64,
    /// Servers a random task reads from in parallel ([`Retrieval::task`]
    /// reads from the servers it is given).
    pub k: usize,
    /// Charge the device read time of this kind before each chunk's flow
    /// (`None`: network only).
    pub device: Option<StorageKind>,
}

impl Retrieval {
    /// The client reads from the given servers.
    pub fn task(&self, topo: &Topology, client: HostId, servers: &[HostId]) -> Result<TaskDag, GenError> {
        check_nonneg("chunk_bytes", self.chunk_bytes)?;
        check_host(topo, "client", client)?;
        let mut dag = TaskDag::new("storage-retrieval");
        for &s in servers {
            check_host(topo, "servers", s)?;
            if s == client {
                return Err(GenError::param("servers", "the client cannot be one of its servers"));
            }
            let d = match self.device {
                Some(kind) => vec![dag.delay(read_time_s(host_device(topo, s, kind), self.chunk_bytes), &[])],
                None => vec![],
            };
            dag.flow(s, client, self.chunk_bytes, &d);
        }
        Ok(dag)
    }

    /// A uniform client reading from `k` distinct uniform other hosts
    /// (hosts with a device of kind `device`, when set).
    pub fn random_task<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<TaskDag, GenError> {
        let n = topo.hosts().len() as HostId;
        let client = rng.gen_range(0..n);
        let pool: Vec<HostId> = match self.device {
            Some(kind) => hosts_with(topo, kind),
            None => (0..n).collect(),
        };
        let pool: Vec<HostId> = pool.into_iter().filter(|&h| h != client).collect();
        let servers = choose(rng, &pool, self.k)
            .ok_or_else(|| GenError::NotEnoughHosts(format!("{} servers wanted, {} available", self.k, pool.len())))?;
        self.task(topo, client, &servers)
    }
}

/// Chunk reads and writes on storage hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageOps {
    /// Device kind of the servers.
    pub kind: StorageKind,
    /// Chunk sizes, bytes.
    pub sizes: SizeDist,
    /// Probability that an operation is a read.
    pub read_fraction: f64,
    /// How writes are acknowledged.
    pub write_model: WriteModel,
}

impl StorageOps {
    /// Operations on `kind` devices with chunks from 10 KB to 10 MB (a
    /// bounded Pareto of shape 0.5), 70% reads, write-back writes.
    pub fn new(kind: StorageKind) -> Self {
        Self {
            kind,
            sizes: SizeDist::BoundedPareto { shape: 0.5, lo: 10e3, hi: 10e6 },
            read_fraction: 0.7,
            write_model: WriteModel::default(),
        }
    }

    /// One operation of `bytes` between `client` and `server`.
    pub fn op(
        &self,
        topo: &Topology,
        client: HostId,
        server: HostId,
        bytes: f64,
        read: bool,
    ) -> Result<TaskDag, GenError> {
        check_nonneg("bytes", bytes)?;
        check_host(topo, "client", client)?;
        check_host(topo, "server", server)?;
        let dev = host_device(topo, server, self.kind);
        if read {
            let mut dag = TaskDag::new("storage-read");
            let d = dag.delay(read_time_s(dev, bytes), &[]);
            dag.flow(server, client, bytes, &[d]);
            Ok(dag)
        } else {
            let mut dag = TaskDag::new("storage-write");
            let f = dag.flow(client, server, bytes, &[]);
            dag.delay(write_time_s(dev, bytes, self.write_model), &[f]);
            Ok(dag)
        }
    }

    /// A random operation: a server uniform among hosts with a `kind`
    /// device, a client uniform among the other hosts, a size from `sizes`
    /// and a read with probability `read_fraction`.
    pub fn random_op<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<TaskDag, GenError> {
        self.sizes.validate()?;
        let servers = hosts_with(topo, self.kind);
        if servers.is_empty() || topo.hosts().len() < 2 {
            return Err(GenError::NotEnoughHosts(format!("no host has a {} device", self.kind.as_str())));
        }
        let server = servers[rng.gen_range(0..servers.len())];
        let mut client = rng.gen_range(0..topo.hosts().len() as HostId - 1);
        if client >= server {
            client += 1;
        }
        let bytes = self.sizes.sample(rng);
        let read = rng.gen::<f64>() < self.read_fraction;
        self.op(topo, client, server, bytes, read)
    }
}
