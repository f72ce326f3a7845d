//! Plain descriptions of a datacenter, before it is built.
//!
//! These are what the TOML config deserialises into (after unit parsing);
//! they can also be written directly from Rust (benchmarks, tests).

use crate::size::{Count, Dimensions};

/// A storage device model.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageDevice {
    /// HDD, SSD or RAM.
    pub kind: StorageKind,
    /// Capacity in bytes.
    pub capacity_bytes: f64,
    /// Sequential read throughput in bits per second.
    pub read_bps: f64,
    /// Sequential write throughput in bits per second.
    pub write_bps: f64,
    /// Average positioning time (seek + rotation) per operation, seconds.
    pub access_s: f64,
}

impl StorageDevice {
    /// Typical device of a kind: a 2010s datacenter HDD, a SATA SSD, or RAM.
    pub fn typical(kind: StorageKind) -> Self {
        match kind {
            StorageKind::Hdd => {
                Self { kind, capacity_bytes: 8e12, read_bps: 200e6 * 8.0, write_bps: 180e6 * 8.0, access_s: 8e-3 }
            }
            StorageKind::Ssd => {
                Self { kind, capacity_bytes: 2e12, read_bps: 500e6 * 8.0, write_bps: 450e6 * 8.0, access_s: 100e-6 }
            }
            StorageKind::Ram => {
                Self { kind, capacity_bytes: 128e9, read_bps: 10e9 * 8.0, write_bps: 10e9 * 8.0, access_s: 1e-6 }
            }
        }
    }
}

/// Hardware of one host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpec {
    /// CPU cores (the compute unit of the provisioning guideline).
    pub cores: u32,
    /// Memory in bytes.
    pub memory_bytes: f64,
    /// NIC port speeds in bits per second, one entry per port.
    pub ports_bps: Vec<f64>,
    /// Storage devices (one entry per device).
    pub storage: Vec<StorageDevice>,
}

impl HostSpec {
    /// A host with `ports` NIC ports of `speed_bps`, 32 cores, 256 GB, no disks.
    pub fn with_ports(ports: usize, speed_bps: f64) -> Self {
        Self { cores: 32, memory_bytes: 256e9, ports_bps: vec![speed_bps; ports], storage: vec![] }
    }

    /// Total storage capacity in bytes.
    pub fn storage_bytes(&self) -> f64 {
        self.storage.iter().map(|d| d.capacity_bytes).sum()
    }
}

/// One rack: what kind it is, its hosts' hardware and its ToR uplink.
#[derive(Debug, Clone, PartialEq)]
pub struct RackSpec {
    /// Compute, disk or mixed.
    pub kind: RackKind,
    /// Hardware of every host in the rack.
    pub host: HostSpec,
    /// Total ToR uplink capacity each way, bits per second (split evenly over
    /// the ToR's individual uplinks in Clos fabrics).
    pub tor_uplink_bps: f64,
}

/// How servers are wired to ToRs in a Subways fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wiring {
    /// Every port of a server goes to its own rack's ToR (the baseline).
    Type0,
    /// Ports go to `p` adjacent ToRs of a loop of `l` racks inside a cluster.
    Type1,
    /// Loops interleave racks of `c` clusters, so adjacent ToRs of a loop
    /// belong to different clusters.
    Type2,
}

/// Subways parameters (the server ports per server `p` come from the host spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubwaysSpec {
    /// Type 0, 1 or 2.
    pub wiring: Wiring,
    /// Loop size `l` (racks per loop); must be at least `p`.
    pub loop_size: usize,
    /// Clusters per loop `c` (Type 2 only; 1 otherwise).
    pub clusters_per_loop: usize,
}

/// The switching fabric above the ToRs.
#[derive(Debug, Clone, PartialEq)]
pub enum FabricSpec {
    /// One non-blocking core; every ToR has one aggregated uplink to it.
    TwoTier,
    /// Pods of ToRs and aggregation switches, joined by spines.
    Clos {
        /// Number of pods (clusters).
        pods: usize,
        /// Aggregation switches per pod; every ToR links to each of them.
        aggs_per_pod: usize,
        /// Spine switches, a multiple of `aggs_per_pod` (agg `j` of every pod
        /// links to the `spines / aggs_per_pod` spines of plane `j`); may be 0
        /// with a single pod.
        spines: usize,
        /// Total uplink of each aggregation switch toward the spines, bits per
        /// second; `None` means non-blocking (the sum of its ToR downlinks).
        agg_uplink_bps: Option<f64>,
        /// Subways wiring, or `None` for a plain three-tier fabric.
        subways: Option<SubwaysSpec>,
    },
}

/// What an event does to the capacity of the links it targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventAction {
    /// Multiply the nominal capacity by a factor (e.g. 0.5 for a 50% cut).
    Scale(f64),
    /// Set an absolute capacity in bits per second.
    Set(f64),
    /// Capacity 0.
    Fail,
    /// Back to the nominal capacity.
    Restore,
}

/// Which links an event applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum EventTarget {
    /// The uplinks (both directions) of these racks' ToRs.
    TorUplinks(Vec<u32>),
    /// Every link incident to these nodes (a switch or host failing).
    Nodes(Vec<u32>),
    /// Every NIC link (both directions) of these hosts.
    Hosts(Vec<u32>),
}

/// A capacity change or failure at a given time, before it is compiled to links.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSpec {
    /// Time of the change, seconds from the start of the run.
    pub at_s: f64,
    /// What changes.
    pub action: EventAction,
    /// Which links.
    pub target: EventTarget,
    /// Config key of this event (for error messages), e.g. `events[2]`.
    pub key: String,
}

/// Uplink provisioning guideline that classifies racks as High/Medium/Low.
#[derive(Debug, Clone, PartialEq)]
pub struct Provisioning {
    /// Guideline uplink per TB of storage (bits/s per 1e12 bytes); `None`:
    /// the fleet median of Disk racks.
    pub uplink_per_tb_bps: Option<f64>,
    /// Guideline uplink per compute core (bits/s); `None`: the fleet median of
    /// Compute racks.
    pub uplink_per_core_bps: Option<f64>,
    /// A rack with at least this multiple of its guideline is High-uplink.
    pub high_at: f64,
    /// A rack below this multiple of its guideline is Low-uplink.
    pub low_below: f64,
}

impl Default for Provisioning {
    fn default() -> Self {
        Self { uplink_per_tb_bps: None, uplink_per_core_bps: None, high_at: 1.2, low_below: 0.8 }
    }
}

/// An optional fabric border: switches linked to every switch at the top of
/// the fabric (every spine, or the core / aggregation switches without spines).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BorderSpec {
    /// Number of border switches.
    pub switches: usize,
    /// Capacity of each border link each way, bits per second.
    pub link_bps: f64,
}

/// Everything needed to build a [`crate::Topology`].
#[derive(Debug, Clone, PartialEq)]
pub struct TopologySpec {
    /// The fabric above the ToRs.
    pub fabric: FabricSpec,
    /// Hosts per rack (the same in every rack so host ids stay rack-major).
    pub hosts_per_rack: usize,
    /// One entry per rack, pod-major.
    pub racks: Vec<RackSpec>,
    /// Ports per ToR switch (server-facing plus uplinks), if limited.
    pub tor_ports: Option<usize>,
    /// Uplink classification guideline.
    pub provisioning: Provisioning,
    /// Capacity changes and failures.
    pub events: Vec<EventSpec>,
    /// Optional fabric border.
    pub border: Option<BorderSpec>,
}

impl TopologySpec {
    /// The counts that determine the datacenter's size (most ports and
    /// devices of any rack), keyed by the config keys that set them.
    pub fn dimensions(&self) -> Dimensions {
        let most = |f: &dyn Fn(&RackSpec) -> usize| self.racks.iter().map(f).max().unwrap_or(0) as u64;
        let (two_tier, pods, aggs, spines) = match &self.fabric {
            FabricSpec::TwoTier => (true, 1, 1, 0),
            FabricSpec::Clos { pods, aggs_per_pod, spines, .. } => (false, *pods, *aggs_per_pod, *spines),
        };
        Dimensions {
            two_tier,
            racks: vec![Count::new("topology.racks", self.racks.len() as u64)],
            hosts_per_rack: Count::new("topology.hosts-per-rack", self.hosts_per_rack as u64),
            ports_per_host: Count::new("topology.ports-per-host", most(&|r| r.host.ports_bps.len())),
            devices_per_host: Count::new("hosts.storage", most(&|r| r.host.storage.len())),
            pods: Count::new("topology.pods", pods as u64),
            aggs_per_pod: Count::new("topology.aggs-per-pod", aggs as u64),
            spines: Count::new("topology.spines", spines as u64),
            border_switches: Count::new("topology.border-switches", self.border.map_or(0, |b| b.switches) as u64),
        }
    }

    /// A uniform two-tier datacenter: `racks` x `hosts_per_rack` hosts with one
    /// port of `host_bps`, ToR uplinks of `uplink_bps`.
    pub fn two_tier(racks: usize, hosts_per_rack: usize, host_bps: f64, uplink_bps: f64) -> Self {
        Self::uniform(FabricSpec::TwoTier, racks, hosts_per_rack, HostSpec::with_ports(1, host_bps), uplink_bps)
    }

    /// A uniform three-tier Clos: `pods` x `racks_per_pod` racks.
    #[allow(clippy::too_many_arguments)]
    pub fn three_tier(
        pods: usize,
        racks_per_pod: usize,
        hosts_per_rack: usize,
        aggs_per_pod: usize,
        spines: usize,
        host_bps: f64,
        tor_uplink_bps: f64,
        agg_uplink_bps: Option<f64>,
    ) -> Self {
        Self::uniform(
            FabricSpec::Clos { pods, aggs_per_pod, spines, agg_uplink_bps, subways: None },
            pods * racks_per_pod,
            hosts_per_rack,
            HostSpec::with_ports(1, host_bps),
            tor_uplink_bps,
        )
    }

    /// Every rack the same compute rack.
    pub fn uniform(fabric: FabricSpec, racks: usize, hosts_per_rack: usize, host: HostSpec, uplink_bps: f64) -> Self {
        Self {
            fabric,
            hosts_per_rack,
            racks: vec![RackSpec { kind: RackKind::Compute, host, tor_uplink_bps: uplink_bps }; racks],
            tor_ports: None,
            provisioning: Provisioning::default(),
            events: vec![],
            border: None,
        }
    }
}

/// Rack type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RackKind {
    /// Compute servers.
    Compute,
    /// Storage servers.
    Disk,
    /// Both.
    Mixed,
}

impl RackKind {
    /// `compute`, `disk` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            RackKind::Compute => "compute",
            RackKind::Disk => "disk",
            RackKind::Mixed => "mixed",
        }
    }
}

/// Storage device kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StorageKind {
    /// Spinning disk.
    Hdd,
    /// Flash.
    Ssd,
    /// In-memory store.
    Ram,
}

impl StorageKind {
    /// `hdd`, `ssd` or `ram`.
    pub fn as_str(self) -> &'static str {
        match self {
            StorageKind::Hdd => "hdd",
            StorageKind::Ssd => "ssd",
            StorageKind::Ram => "ram",
        }
    }
}
