//! The storage cluster the placement policies see: racks (fault domains) of
//! hosts, the links a placement loads, and each host's disk.
//!
//! There is one cluster type and two ways to get one:
//!
//! * [`Cluster::from_topology`] is a view of a datacenter
//!   ([`netheat_topology::Topology`]): its racks, its hosts, its ToR links
//!   and its uplink classes, with the topology's directed link ids (the flow
//!   engine's), so the engine's per-link rates can be passed to
//!   [`crate::ReplicaPlacement::observe`] as they are. A view has no disk
//!   links: each host's disk is a write rate ([`Host::disk_write_bps`]),
//!   and a caller caps a pipeline flow at [`Cluster::slowest_disk_bps`].
//!   Paths come from the topology's routing.
//! * [`Cluster::two_tier`] builds a small two-tier cluster of its own (the
//!   Sinbad and CCP experiment points): per host an up, a down and
//!   (optionally) a disk link whose capacity is the disk write throughput,
//!   so concurrent pipelines writing to one disk share it by max-min like
//!   any other bottleneck; per rack an up and a down link. The core is
//!   non-blocking (the rack links are the oversubscribed tier).
//!
//! A rack's links are sets: a ToR of a Clos fabric has one uplink per
//! aggregation switch, and what placement sees is their sum (capacity and
//! load). In a two-tier datacenter the sets have one link each.

use std::sync::Arc;

use netheat_core::{HostId, LinkId, Routing};
use netheat_topology::{StorageKind, Topology};
use netheat_workloads::storage::disk_write_bps;

use crate::StorageError;

/// Uplink class of a rack: the datacenter model's (uplink capacity against
/// the provisioning guideline, per TB of storage for disk racks).
pub use netheat_topology::UplinkClass;

/// One rack (a fault domain).
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// Hosts in the rack.
    pub hosts: Vec<HostId>,
    /// Rack-to-fabric links (the ToR's uplinks).
    pub up: Vec<LinkId>,
    /// Fabric-to-rack links (into the ToR).
    pub down: Vec<LinkId>,
    /// Uplink class.
    pub class: UplinkClass,
}

/// One host (a datanode, or a client that stores nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Its rack (the fault domain).
    pub rack: u32,
    /// Host-to-ToR links (one per NIC port).
    pub up: Vec<LinkId>,
    /// ToR-to-host links (one per NIC port).
    pub down: Vec<LinkId>,
    /// Disk write link (`None`: no disk link; see `disk_write_bps`).
    pub disk: Option<LinkId>,
    /// Disk write throughput in bits/s (`None`: in memory, no disk cap).
    pub disk_write_bps: Option<f64>,
    /// Whether placement may put pieces here (hosts without a disk do not
    /// store when other hosts have one).
    pub stores: bool,
    /// Storage capacity in bytes (0 for a host that does not store).
    pub capacity_bytes: f64,
}

/// Where paths come from.
#[derive(Debug, Clone)]
enum Paths {
    /// The cluster's own two-tier links.
    TwoTier,
    /// A datacenter's routing.
    Topology(Arc<Topology>),
}

/// The cluster and its link capacities (bits/s, indexed by link id).
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Racks.
    pub racks: Vec<Rack>,
    /// Hosts.
    pub hosts: Vec<Host>,
    /// Link capacities.
    pub link_bps: Vec<f64>,
    paths: Paths,
}

/// A fixed mix of a host pair (splitmix64), for the pair's path choice.
fn pair_hash(a: HostId, b: HostId) -> u64 {
    let mut z = ((a as u64) << 32 | b as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Cluster {
    /// `racks` racks of `hosts_per_rack` hosts with `host_bps` links; each
    /// rack link carries `hosts_per_rack * host_bps / oversub` times the
    /// rack's factor in `rack_uplink_factor` (missing factors are 1), and
    /// the class of each rack is given by `classes` (missing: Medium).
    #[allow(clippy::too_many_arguments)]
    pub fn two_tier(
        racks: usize,
        hosts_per_rack: usize,
        host_bps: f64,
        oversub: f64,
        disk_write_bps: Option<f64>,
        capacity_bytes: f64,
        rack_uplink_factor: &[f64],
        classes: &[UplinkClass],
    ) -> Self {
        let mut link_bps = Vec::new();
        let mut rs = Vec::with_capacity(racks);
        let mut hosts = Vec::with_capacity(racks * hosts_per_rack);
        let new_link = |c: f64, v: &mut Vec<f64>| {
            v.push(c);
            (v.len() - 1) as LinkId
        };
        for r in 0..racks {
            let rack_bps =
                hosts_per_rack as f64 * host_bps / oversub * rack_uplink_factor.get(r).copied().unwrap_or(1.0);
            let up = new_link(rack_bps, &mut link_bps);
            let down = new_link(rack_bps, &mut link_bps);
            let mut hs = Vec::with_capacity(hosts_per_rack);
            for _ in 0..hosts_per_rack {
                let hup = new_link(host_bps, &mut link_bps);
                let hdown = new_link(host_bps, &mut link_bps);
                let disk = disk_write_bps.map(|d| new_link(d, &mut link_bps));
                hs.push(hosts.len() as HostId);
                hosts.push(Host {
                    rack: r as u32,
                    up: vec![hup],
                    down: vec![hdown],
                    disk,
                    disk_write_bps,
                    stores: true,
                    capacity_bytes,
                });
            }
            rs.push(Rack {
                hosts: hs,
                up: vec![up],
                down: vec![down],
                class: classes.get(r).copied().unwrap_or(UplinkClass::Medium),
            });
        }
        Self { racks: rs, hosts, link_bps, paths: Paths::TwoTier }
    }

    /// The storage view of a datacenter.
    ///
    /// * Racks are the topology's racks (a host's fault domain is its
    ///   physical rack) with their uplink class; a rack's `up`/`down` are
    ///   its ToR's uplinks and downlinks, a host's are its NIC ports' links.
    /// * Link ids and `link_bps` are the topology's directed links and their
    ///   nominal capacities.
    /// * A host's disk is the aggregate write rate of its persistent
    ///   devices (HDD, SSD; [`disk_write_bps`]); its capacity is theirs in
    ///   bytes. When any host has a disk, hosts without one (compute racks)
    ///   store nothing, the rule of the CFS writes'
    ///   `netheat_workloads::apps::cfs::uniform_rack_aware`. When no host has
    ///   one, every host stores in memory (no disk cap), up to its RAM
    ///   devices' capacity, else its memory.
    ///
    /// Errors when a host that stores has no capacity.
    pub fn from_topology(topo: &Topology) -> Result<Cluster, StorageError> {
        let n = topo.hosts().len();
        let disk: Vec<Option<f64>> = (0..n as HostId).map(|h| disk_write_bps(topo, h)).collect();
        let any_disk = disk.iter().any(Option::is_some);
        let mut hosts = Vec::with_capacity(n);
        for (h, th) in topo.hosts().iter().enumerate() {
            let stores = !any_disk || disk[h].is_some();
            let bytes = |ram: bool| -> f64 {
                th.storage.iter().filter(|d| (d.kind == StorageKind::Ram) == ram).map(|d| d.capacity_bytes).sum()
            };
            let capacity_bytes = if !stores {
                0.0
            } else if any_disk {
                bytes(false)
            } else if th.storage.iter().any(|d| d.kind == StorageKind::Ram) {
                bytes(true)
            } else {
                th.memory_bytes
            };
            if stores && !(capacity_bytes > 0.0 && capacity_bytes.is_finite()) {
                let name = &topo.nodes()[th.node as usize].name;
                return Err(StorageError::invalid(
                    "hosts.storage",
                    format!("host {name} stores blocks but its capacity is {capacity_bytes} bytes"),
                ));
            }
            hosts.push(Host {
                rack: th.rack,
                up: th.ports.iter().map(|p| p.up).collect(),
                down: th.ports.iter().map(|p| p.down).collect(),
                disk: None,
                disk_write_bps: disk[h],
                stores,
                capacity_bytes,
            });
        }
        let per = topo.hosts_per_rack();
        let racks = topo
            .racks()
            .iter()
            .zip(topo.tors())
            .map(|(r, t)| Rack {
                hosts: (r.first_host..r.first_host + per).collect(),
                up: t.up.clone(),
                down: t.down.clone(),
                class: r.uplink_class,
            })
            .collect();
        let link_bps = topo.links().iter().map(|l| l.capacity_bps).collect();
        Ok(Cluster { racks, hosts, link_bps, paths: Paths::Topology(Arc::new(topo.clone())) })
    }

    /// The datacenter this is a view of (`None` for [`Cluster::two_tier`]).
    pub fn topology(&self) -> Option<&Topology> {
        match &self.paths {
            Paths::TwoTier => None,
            Paths::Topology(t) => Some(t),
        }
    }

    /// Rack of a host.
    pub fn rack_of(&self, h: HostId) -> u32 {
        self.hosts[h as usize].rack
    }

    /// Hosts that may hold pieces, in host order.
    pub fn storage_hosts(&self) -> Vec<HostId> {
        (0..self.hosts.len() as HostId).filter(|&h| self.hosts[h as usize].stores).collect()
    }

    /// The fastest disk write rate among a rack's storage hosts, bits/s
    /// (infinite when one of them writes to memory, 0 when none stores):
    /// what a replica in the rack can at best be written at.
    pub fn rack_disk_bps(&self, rack: usize) -> f64 {
        self.racks[rack]
            .hosts
            .iter()
            .map(|&h| &self.hosts[h as usize])
            .filter(|h| h.stores)
            .map(|h| h.disk_write_bps.unwrap_or(f64::INFINITY))
            .fold(0.0, f64::max)
    }

    /// The slowest disk write rate among `hosts`, bits/s (`None` when none
    /// has a disk): the rate cap of a pipeline writing to them when disks
    /// are not links (views of a topology).
    pub fn slowest_disk_bps(&self, hosts: &[HostId]) -> Option<f64> {
        hosts.iter().filter_map(|&h| self.hosts[h as usize].disk_write_bps).reduce(f64::min)
    }

    /// Number of paths from host `a` to host `b` (0 when equal): 1 in a
    /// two-tier cluster, the topology's shortest paths in a view.
    pub fn num_paths(&self, a: HostId, b: HostId) -> usize {
        match &self.paths {
            _ if a == b => 0,
            Paths::TwoTier => 1,
            Paths::Topology(t) => t.num_paths(a, b),
        }
    }

    /// Appends the directed links of path `k` (taken modulo
    /// [`Cluster::num_paths`]) from host `a` to host `b` to `out` (nothing
    /// when equal).
    pub fn net_path_k(&self, a: HostId, b: HostId, k: usize, out: &mut Vec<LinkId>) {
        if a == b {
            return;
        }
        match &self.paths {
            Paths::TwoTier => {
                let (ha, hb) = (&self.hosts[a as usize], &self.hosts[b as usize]);
                out.push(ha.up[0]);
                if ha.rack != hb.rack {
                    out.push(self.racks[ha.rack as usize].up[0]);
                    out.push(self.racks[hb.rack as usize].down[0]);
                }
                out.push(hb.down[0]);
            }
            Paths::Topology(t) => {
                let n = t.num_paths(a, b);
                let mut p = Vec::new();
                t.path(a, b, k % n, &mut p);
                out.extend(p);
            }
        }
    }

    /// Appends the directed links from host `a` to host `b` (empty when
    /// equal) to `out`. In a view of a topology with several shortest paths
    /// the path is fixed per host pair by a hash (like ECMP's flow hash,
    /// unweighted), so a pair always takes the same one.
    pub fn net_path(&self, a: HostId, b: HostId, out: &mut Vec<LinkId>) {
        let k = match &self.paths {
            Paths::TwoTier => 0,
            Paths::Topology(_) => pair_hash(a, b) as usize,
        };
        self.net_path_k(a, b, k, out);
    }

    /// The hops of a replication pipeline `writer -> replicas[0] -> ...`,
    /// each as its path of directed links ([`Cluster::net_path`]; a hop to
    /// the same host is empty), in pipeline order.
    pub fn pipeline_hops(&self, writer: HostId, replicas: &[HostId]) -> Vec<Vec<LinkId>> {
        let mut prev = writer;
        replicas
            .iter()
            .map(|&h| {
                let mut p = Vec::new();
                self.net_path(prev, h, &mut p);
                prev = h;
                p
            })
            .collect()
    }

    /// Links of a replication pipeline `writer -> replicas[0] -> ...`, plus
    /// every replica's disk link, sorted and deduplicated; a pipeline
    /// streams, so one flow over all of them moves at the minimum share
    /// (write time = size / min(disk cap, link shares)). A view of a
    /// topology has no disk links: cap that flow at
    /// [`Cluster::slowest_disk_bps`].
    pub fn pipeline_path(&self, writer: HostId, replicas: &[HostId]) -> Vec<LinkId> {
        let mut p = Vec::new();
        let mut prev = writer;
        for &h in replicas {
            self.net_path(prev, h, &mut p);
            prev = h;
        }
        for &h in replicas {
            if let Some(d) = self.hosts[h as usize].disk {
                p.push(d);
            }
        }
        p.sort_unstable();
        p.dedup();
        p
    }
}

/// The cluster's paths for the flow engine (`Route::Ecmp` or path
/// indices): a two-tier cluster has one path per host pair, a view of a
/// topology has the topology's.
impl Routing for Cluster {
    fn num_hosts(&self) -> usize {
        self.hosts.len()
    }

    fn num_links(&self) -> usize {
        self.link_bps.len()
    }

    fn link_capacity_bps(&self, link: LinkId) -> f64 {
        self.link_bps[link as usize]
    }

    fn num_paths(&self, src: HostId, dst: HostId) -> usize {
        Cluster::num_paths(self, src, dst)
    }

    fn path(&self, src: HostId, dst: HostId, k: usize, out: &mut Vec<LinkId>) {
        out.clear();
        self.net_path_k(src, dst, k, out);
    }

    fn path_weight(&self, src: HostId, dst: HostId, k: usize) -> f64 {
        match &self.paths {
            Paths::TwoTier => 1.0,
            Paths::Topology(t) => t.path_weight(src, dst, k),
        }
    }
}
