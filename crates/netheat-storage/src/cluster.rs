//! A two-tier storage cluster: racks of hosts behind oversubscribed rack
//! links, one disk per host.
//!
//! Links are directed and numbered for the flow engine: per host an up, a
//! down and (optionally) a disk link whose capacity is the disk write
//! throughput, so concurrent pipelines writing to one disk share it by
//! max-min like any other bottleneck; per rack an up and a down link. The
//! core is non-blocking (the rack links are the oversubscribed tier).

use netheat_core::{HostId, LinkId};

/// Uplink class of a rack (uplink capacity per TB of storage it holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UplinkClass {
    /// Little uplink per TB.
    Low = 0,
    /// Medium uplink per TB.
    Medium = 1,
    /// Much uplink per TB.
    High = 2,
}

/// One rack.
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// Hosts in the rack.
    pub hosts: Vec<HostId>,
    /// Rack-to-core link.
    pub up: LinkId,
    /// Core-to-rack link.
    pub down: LinkId,
    /// Uplink class.
    pub class: UplinkClass,
}

/// One host (a datanode).
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Its rack (the fault domain).
    pub rack: u32,
    /// Host-to-ToR link.
    pub up: LinkId,
    /// ToR-to-host link.
    pub down: LinkId,
    /// Disk write link (`None`: in-memory, no disk cap).
    pub disk: Option<LinkId>,
    /// Storage capacity in bytes.
    pub capacity_bytes: f64,
}

/// The cluster and its link capacities (bits/s, indexed by link id).
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Racks.
    pub racks: Vec<Rack>,
    /// Hosts.
    pub hosts: Vec<Host>,
    /// Link capacities.
    pub link_bps: Vec<f64>,
    /// Disk write throughput in bits/s (`None`: in memory).
    pub disk_write_bps: Option<f64>,
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
                hosts.push(Host { rack: r as u32, up: hup, down: hdown, disk, capacity_bytes });
            }
            rs.push(Rack { hosts: hs, up, down, class: classes.get(r).copied().unwrap_or(UplinkClass::Medium) });
        }
        Self { racks: rs, hosts, link_bps, disk_write_bps }
    }

    /// Rack of a host.
    pub fn rack_of(&self, h: HostId) -> u32 {
        self.hosts[h as usize].rack
    }

    /// Directed links from host `a` to host `b` (empty when equal).
    pub fn net_path(&self, a: HostId, b: HostId, out: &mut Vec<LinkId>) {
        if a == b {
            return;
        }
        let (ha, hb) = (&self.hosts[a as usize], &self.hosts[b as usize]);
        out.push(ha.up);
        if ha.rack != hb.rack {
            out.push(self.racks[ha.rack as usize].up);
            out.push(self.racks[hb.rack as usize].down);
        }
        out.push(hb.down);
    }

    /// Links of a replication pipeline `writer -> replicas[0] -> ...`, plus
    /// every replica's disk link; a pipeline streams, so one flow over all
    /// of them moves at the minimum share (write time = size / min(disk
    /// cap, link shares)).
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
