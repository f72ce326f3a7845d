//! A two-stage analytical query over storage and in-memory shuffle hosts.
//!
//! Stage 1, per worker `i`: read a partition of `partition_bytes` from
//! storage host `storage[i % S]` (device read time, then the flow), compute
//! `compute1_s`, write `intermediate_bytes` split evenly over the `M`
//! shuffle hosts (each piece: flow, then the RAM write acknowledgement).
//! A barrier waits for every stage-1 write. Stage 2, per worker: read
//! `intermediate_bytes / M` back from every shuffle host (RAM read time,
//! then the flow), compute `compute2_s`, write `output_bytes` to its
//! storage host (flow, then the device write time of `write_model`).
//! Device times follow [`crate::storage`].

use netheat_core::HostId;
use netheat_topology::{StorageKind, Topology};

use super::{check_host, check_nonneg};
use crate::dag::TaskDag;
use crate::storage::{host_device, read_time_s, write_time_s, WriteModel};
use crate::GenError;

/// Parameters of the query.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyticalQuery {
    /// Input partition per worker, bytes.
    pub partition_bytes: f64,
    /// Stage-1 compute per worker, seconds.
    pub compute1_s: f64,
    /// Intermediate data per worker, bytes.
    pub intermediate_bytes: f64,
    /// Stage-2 compute per worker, seconds.
    pub compute2_s: f64,
    /// Output per worker, bytes.
    pub output_bytes: f64,
    /// Device kind preferred on storage hosts.
    pub storage_kind: StorageKind,
    /// How writes are acknowledged.
    pub write_model: WriteModel,
}

impl AnalyticalQuery {
    /// The query on the given workers, storage hosts and shuffle hosts.
    pub fn task(
        &self,
        topo: &Topology,
        workers: &[HostId],
        storage: &[HostId],
        shuffle: &[HostId],
    ) -> Result<TaskDag, GenError> {
        for (n, v) in [
            ("partition_bytes", self.partition_bytes),
            ("compute1_s", self.compute1_s),
            ("intermediate_bytes", self.intermediate_bytes),
            ("compute2_s", self.compute2_s),
            ("output_bytes", self.output_bytes),
        ] {
            check_nonneg(n, v)?;
        }
        if storage.is_empty() || shuffle.is_empty() {
            return Err(GenError::NotEnoughHosts("the query needs storage and shuffle hosts".into()));
        }
        for (n, hs) in [("workers", workers), ("storage", storage), ("shuffle", shuffle)] {
            for &h in hs {
                check_host(topo, n, h)?;
            }
        }
        let piece = self.intermediate_bytes / shuffle.len() as f64;
        let mut dag = TaskDag::new("analytical-query");
        let mut written = Vec::new();
        for (i, &w) in workers.iter().enumerate() {
            let s = storage[i % storage.len()];
            let rd = dag.delay(read_time_s(host_device(topo, s, self.storage_kind), self.partition_bytes), &[]);
            let f = dag.flow(s, w, self.partition_bytes, &[rd]);
            let c = dag.delay(self.compute1_s, &[f]);
            for &m in shuffle {
                let wf = dag.flow(w, m, piece, &[c]);
                written.push(
                    dag.delay(write_time_s(host_device(topo, m, StorageKind::Ram), piece, self.write_model), &[wf]),
                );
            }
        }
        let barrier = dag.delay(0.0, &written);
        for (i, &w) in workers.iter().enumerate() {
            let s = storage[i % storage.len()];
            let mut got = Vec::new();
            for &m in shuffle {
                let rd = dag.delay(read_time_s(host_device(topo, m, StorageKind::Ram), piece), &[barrier]);
                got.push(dag.flow(m, w, piece, &[rd]));
            }
            let c = dag.delay(self.compute2_s, &got);
            let out = dag.flow(w, s, self.output_bytes, &[c]);
            let dev = host_device(topo, s, self.storage_kind);
            dag.delay(write_time_s(dev, self.output_bytes, self.write_model), &[out]);
        }
        Ok(dag)
    }
}
