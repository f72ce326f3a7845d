//! Device-time model of the storage devices in the topology.
//!
//! A read of `b` bytes from a device costs `access_s + 8·b / read_bps`
//! seconds before the data leaves the host. A write costs, after the data
//! has arrived:
//! * [`WriteModel::WriteThrough`]: `access_s + 8·b / write_bps`;
//! * [`WriteModel::WriteBack`] (default): a fixed `ack_s`; the host's
//!   write-back cache absorbs the data and acknowledges at once, the flush
//!   to the device happens off the critical path and is not modelled (so
//!   the cache is assumed never full).
//!
//! Which device of a host serves an operation: the first one of the
//! preferred kind, else the host's first device; a host without devices
//! costs no device time.

use netheat_core::HostId;
use netheat_topology::{StorageDevice, StorageKind, Topology};

/// How writes are charged (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WriteModel {
    /// Acknowledged by a write-back cache after `ack_s` seconds.
    WriteBack {
        /// Acknowledgement time, seconds.
        ack_s: f64,
    },
    /// Acknowledged once on the device.
    WriteThrough,
}

impl Default for WriteModel {
    fn default() -> Self {
        WriteModel::WriteBack { ack_s: 20e-6 }
    }
}

/// The device of `host` used for an operation preferring `kind`.
pub fn host_device(topo: &Topology, host: HostId, kind: StorageKind) -> Option<&StorageDevice> {
    let s = &topo.hosts()[host as usize].storage;
    s.iter().find(|d| d.kind == kind).or(s.first())
}

/// Seconds to read `bytes` from the device (`0` without a device).
pub fn read_time_s(dev: Option<&StorageDevice>, bytes: f64) -> f64 {
    dev.map_or(0.0, |d| d.access_s + 8.0 * bytes / d.read_bps)
}

/// Seconds until a write of `bytes` is acknowledged (`0` without a device).
pub fn write_time_s(dev: Option<&StorageDevice>, bytes: f64, model: WriteModel) -> f64 {
    match (dev, model) {
        (None, _) => 0.0,
        (Some(_), WriteModel::WriteBack { ack_s }) => ack_s,
        (Some(d), WriteModel::WriteThrough) => d.access_s + 8.0 * bytes / d.write_bps,
    }
}

/// Hosts with at least one device of `kind`.
pub fn hosts_with(topo: &Topology, kind: StorageKind) -> Vec<HostId> {
    (0..topo.hosts().len() as HostId)
        .filter(|&h| topo.hosts()[h as usize].storage.iter().any(|d| d.kind == kind))
        .collect()
}

/// The write rate one stream gets on a host's persistent devices (HDD,
/// SSD): its fastest device's, bits per second; `None` when it has none. A
/// block replica is written to one device (HDFS's volume choice puts each
/// on one disk), so it streams at one device's rate however many the host
/// has; the host's devices together take [`disk_write_bps`].
pub fn disk_stream_bps(topo: &Topology, host: HostId) -> Option<f64> {
    let s = &topo.hosts()[host as usize].storage;
    s.iter().filter(|d| d.kind != StorageKind::Ram).map(|d| d.write_bps).reduce(f64::max).filter(|&r| r > 0.0)
}

/// Aggregate write throughput of a host's persistent devices (HDD, SSD),
/// bits per second; `None` when it has none.
pub fn disk_write_bps(topo: &Topology, host: HostId) -> Option<f64> {
    let s = &topo.hosts()[host as usize].storage;
    let t: f64 = s.iter().filter(|d| d.kind != StorageKind::Ram).map(|d| d.write_bps).sum();
    (t > 0.0).then_some(t)
}
