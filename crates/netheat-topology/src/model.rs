//! The built datacenter: nodes, directed links, hosts, racks and switches.
//!
//! Everything is stored in dense vectors indexed by integer ids so that a
//! 36,000-host datacenter is a few megabytes and lookups are array reads.

use std::collections::HashMap;
use std::fmt;

use netheat_core::{HostId, LinkId, NodeId};

use crate::spec::{RackKind, StorageDevice, SubwaysSpec};

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    /// A server.
    Host,
    /// A top-of-rack switch.
    Tor,
    /// An aggregation switch of a pod (cluster).
    Agg,
    /// The non-blocking core of a two-tier datacenter.
    Core,
    /// A spine (DCNI) switch joining pods.
    Spine,
    /// A fabric border switch connecting the fabric to the outside.
    Border,
}

impl NodeKind {
    /// The lowercase name used in configs and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Host => "host",
            NodeKind::Tor => "tor",
            NodeKind::Agg => "agg",
            NodeKind::Core => "core",
            NodeKind::Spine => "spine",
            NodeKind::Border => "border",
        }
    }
}

/// The layer a link belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Server NIC to ToR.
    HostTor,
    /// ToR to aggregation (or to the two-tier core).
    TorAgg,
    /// Aggregation to spine (DCNI).
    AggSpine,
    /// Top of the fabric (spines, or the core/aggregation switches when there
    /// are no spines) to the fabric border.
    SpineBorder,
}

impl Layer {
    /// All layers, bottom up.
    pub const ALL: [Layer; 4] = [Layer::HostTor, Layer::TorAgg, Layer::AggSpine, Layer::SpineBorder];

    /// The tag used in configs and tables: `host-tor`, `tor-agg`, `agg-spine`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::HostTor => "host-tor",
            Layer::TorAgg => "tor-agg",
            Layer::AggSpine => "agg-spine",
            Layer::SpineBorder => "spine-border",
        }
    }
}

/// Direction of a directed link relative to the tree: `up` leaves the lower tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// From the lower tier to the upper one (host to ToR, ToR to agg, ...).
    Up,
    /// From the upper tier to the lower one.
    Down,
}

impl Direction {
    /// `up` or `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

/// Uplink class of a rack relative to the provisioning guideline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UplinkClass {
    /// At least `high-at` times the guideline.
    High,
    /// In between.
    Medium,
    /// Below `low-below` times the guideline.
    Low,
}

impl UplinkClass {
    /// `high`, `medium` or `low`.
    pub fn as_str(self) -> &'static str {
        match self {
            UplinkClass::High => "high",
            UplinkClass::Medium => "medium",
            UplinkClass::Low => "low",
        }
    }
}

/// A node of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Host or which kind of switch.
    pub kind: NodeKind,
    /// Unique name (`r3h1`, `tor3`, `agg1-0`, `spine2`, `core`).
    pub name: String,
    /// Index among nodes of the same kind (host id, ToR index = rack index, ...).
    pub index: u32,
    /// Pod (cluster) the node belongs to, if any.
    pub pod: Option<u32>,
    /// Rack the node belongs to (hosts and ToRs).
    pub rack: Option<u32>,
}

/// One directed link.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Transmitting node.
    pub src: NodeId,
    /// Receiving node.
    pub dst: NodeId,
    /// Nominal capacity in bits per second.
    pub capacity_bps: f64,
    /// Layer tag.
    pub layer: Layer,
    /// Up or down the tree.
    pub direction: Direction,
    /// The opposite direction of the same physical link.
    pub reverse: LinkId,
}

/// One NIC port of a host and the ToR it is wired to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Port {
    /// ToR index (= index of the rack that ToR tops).
    pub tor: u32,
    /// Host to ToR directed link.
    pub up: LinkId,
    /// ToR to host directed link.
    pub down: LinkId,
    /// Port speed in bits per second.
    pub speed_bps: f64,
}

/// A server.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Node id.
    pub node: NodeId,
    /// Physical rack.
    pub rack: u32,
    /// Slot within the rack.
    pub slot: u32,
    /// CPU cores.
    pub cores: u32,
    /// Memory in bytes.
    pub memory_bytes: f64,
    /// NIC ports, in port order.
    pub ports: Vec<Port>,
    /// Storage devices.
    pub storage: Vec<StorageDevice>,
}

/// A rack.
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// `rack{r}`.
    pub name: String,
    /// Compute, disk or mixed.
    pub kind: RackKind,
    /// Pod (cluster).
    pub pod: u32,
    /// First host id; hosts are `first_host .. first_host + hosts_per_rack`.
    pub first_host: HostId,
    /// Uplink class relative to the provisioning guideline.
    pub uplink_class: UplinkClass,
    /// Uplink capacity per provisioning unit divided by the guideline.
    pub uplink_ratio: f64,
    /// Subways loop this rack belongs to (`None` outside Subways Type 1/2).
    pub subways_loop: Option<u32>,
}

/// A ToR switch (one per rack, same index as its rack).
#[derive(Debug, Clone, PartialEq)]
pub struct Tor {
    /// Node id.
    pub node: NodeId,
    /// Pod.
    pub pod: u32,
    /// Uplinks, one per aggregation switch of the pod (index = agg index).
    pub up: Vec<LinkId>,
    /// Downlinks from each aggregation switch (index = agg index).
    pub down: Vec<LinkId>,
    /// Server-facing ports in use.
    pub server_ports: u32,
}

/// An aggregation switch (or the two-tier core).
#[derive(Debug, Clone, PartialEq)]
pub struct Agg {
    /// Node id.
    pub node: NodeId,
    /// Pod.
    pub pod: u32,
    /// Index within the pod (its spine plane).
    pub index: u32,
    /// Uplinks to the spines of its plane, in spine order.
    pub up: Vec<LinkId>,
}

/// A spine switch.
#[derive(Debug, Clone, PartialEq)]
pub struct Spine {
    /// Node id.
    pub node: NodeId,
    /// Plane = index of the aggregation switch it connects to in every pod.
    pub plane: u32,
    /// Downlinks to that aggregation switch of every pod (index = pod).
    pub down: Vec<LinkId>,
}

/// Which topology kind was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyKind {
    /// Hosts, ToRs, one non-blocking core.
    TwoTier,
    /// Clos with pods, aggregation and spines.
    ThreeTier,
    /// Clos with Subways server wiring.
    Subways,
}

impl TopologyKind {
    /// `two-tier`, `three-tier` or `subways`.
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyKind::TwoTier => "two-tier",
            TopologyKind::ThreeTier => "three-tier",
            TopologyKind::Subways => "subways",
        }
    }
}

/// A built datacenter.
#[derive(Clone)]
pub struct Topology {
    /// Flat copies of what every path lookup reads (derived from `hosts`
    /// and `tors` when built).
    pub(crate) route: RouteIndex,
    pub(crate) kind: TopologyKind,
    pub(crate) nodes: Vec<Node>,
    pub(crate) links: Vec<Link>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) racks: Vec<Rack>,
    pub(crate) tors: Vec<Tor>,
    pub(crate) aggs: Vec<Agg>,
    pub(crate) spines: Vec<Spine>,
    pub(crate) borders: Vec<NodeId>,
    pub(crate) pods: u32,
    pub(crate) aggs_per_pod: u32,
    pub(crate) hosts_per_rack: u32,
    pub(crate) subways: Option<SubwaysSpec>,
    pub(crate) events: Vec<CapacityEvent>,
    pub(crate) names: HashMap<String, NodeId>,
}

/// What routing reads per flow, in flat arrays: a host's port behind a
/// pointer and a ToR's pod beside its link lists cost a cache miss each on a
/// large datacenter, and the flow engine asks for a path at every start.
#[derive(Clone, PartialEq, Default)]
pub(crate) struct RouteIndex {
    /// Per host with exactly one port: its ToR and its up and down links
    /// (`tor == u32::MAX`: several ports, read `Host::ports`).
    pub(crate) port1: Vec<OnePort>,
    /// Per ToR: its pod.
    pub(crate) tor_pod: Vec<u32>,
}

/// A single-port host's port (see [`RouteIndex`]).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct OnePort {
    pub(crate) tor: u32,
    pub(crate) up: LinkId,
    pub(crate) down: LinkId,
}

impl RouteIndex {
    pub(crate) fn new(hosts: &[Host], tors: &[Tor]) -> Self {
        let port1 = hosts
            .iter()
            .map(|h| match h.ports.as_slice() {
                [p] => OnePort { tor: p.tor, up: p.up, down: p.down },
                _ => OnePort { tor: u32::MAX, up: 0, down: 0 },
            })
            .collect();
        Self { port1, tor_pod: tors.iter().map(|t| t.pod).collect() }
    }
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("kind", &self.kind)
            .field("hosts", &self.hosts.len())
            .field("racks", &self.racks.len())
            .field("links", &self.links.len())
            .finish()
    }
}

impl Topology {
    /// Which kind this is.
    pub fn kind(&self) -> TopologyKind {
        self.kind
    }
    /// All nodes; hosts come first so `node id == host id` for hosts.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// All directed links.
    pub fn links(&self) -> &[Link] {
        &self.links
    }
    /// All hosts, by host id.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }
    /// All racks, by rack index.
    pub fn racks(&self) -> &[Rack] {
        &self.racks
    }
    /// All ToRs, by rack index.
    pub fn tors(&self) -> &[Tor] {
        &self.tors
    }
    /// All aggregation switches (pod-major), or the core for two-tier.
    pub fn aggs(&self) -> &[Agg] {
        &self.aggs
    }
    /// All spines.
    pub fn spines(&self) -> &[Spine] {
        &self.spines
    }
    /// Fabric border switches (node ids), if any.
    pub fn borders(&self) -> &[NodeId] {
        &self.borders
    }
    /// Number of pods (clusters); 1 for two-tier.
    pub fn num_pods(&self) -> u32 {
        self.pods
    }
    /// Hosts per rack.
    pub fn hosts_per_rack(&self) -> u32 {
        self.hosts_per_rack
    }
    /// Aggregation switches per pod (1 for two-tier: the core).
    pub fn aggs_per_pod(&self) -> u32 {
        self.aggs_per_pod
    }
    /// Subways parameters, if this is a Subways fabric.
    pub fn subways(&self) -> Option<SubwaysSpec> {
        self.subways
    }
    /// Capacity changes and failures, sorted by (time, link).
    pub fn events(&self) -> &[CapacityEvent] {
        &self.events
    }

    /// Looks a node up by name.
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied()
    }

    /// Resolves a host given as an index (`"17"`) or a name (`"r4h1"`).
    pub fn host_ref(&self, text: &str) -> Option<HostId> {
        let t = text.trim();
        if let Ok(i) = t.parse::<u64>() {
            return (i < self.hosts.len() as u64).then_some(i as HostId);
        }
        let node = self.node_by_name(t)?;
        (self.nodes[node as usize].kind == NodeKind::Host).then_some(node)
    }

    /// Every ToR a host has a port on (deduplicated, in port order).
    pub fn host_tors(&self, host: HostId) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for p in &self.hosts[host as usize].ports {
            if !out.contains(&p.tor) {
                out.push(p.tor);
            }
        }
        out
    }

    /// The logical rack of a ToR: every host with a port on it, in host order.
    pub fn logical_rack(&self, tor: u32) -> Vec<HostId> {
        // Hosts wired to a ToR live within one loop; scan only that far.
        let racks: Vec<u32> = match self.racks[tor as usize].subways_loop {
            Some(l) => {
                (0..self.racks.len() as u32).filter(|r| self.racks[*r as usize].subways_loop == Some(l)).collect()
            }
            None => vec![tor],
        };
        let mut out = Vec::new();
        for r in racks {
            let first = self.racks[r as usize].first_host;
            for h in first..first + self.hosts_per_rack {
                if self.hosts[h as usize].ports.iter().any(|p| p.tor == tor) {
                    out.push(h);
                }
            }
        }
        out
    }

    /// Total uplink capacity of a ToR in the up direction, bits per second.
    pub fn tor_uplink_bps(&self, tor: u32) -> f64 {
        self.tors[tor as usize].up.iter().map(|l| self.links[*l as usize].capacity_bps).sum()
    }
}

/// One directed link changing capacity at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacityEvent {
    /// Seconds from the start of the run.
    pub time_s: f64,
    /// The directed link.
    pub link: LinkId,
    /// Its capacity from then on, bits per second (0 = failed).
    pub capacity_bps: f64,
}
