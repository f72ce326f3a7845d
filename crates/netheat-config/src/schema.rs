//! The TOML schema: typed, kebab-case, unknown keys rejected.
//!
//! Kind-specific keys of `[topology]` are optional here and checked against
//! the kind in [`crate::topology`], so a key that does not apply to the
//! chosen kind is reported as such rather than silently ignored.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use crate::units::{Bandwidth, Bytes, Duration};

/// A datacenter file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DatacenterFile {
    /// Shape of the network.
    pub topology: TopologySection,
    /// Hardware of every host unless a rack group overrides it.
    #[serde(default)]
    pub hosts: HostsSection,
    /// Uplink provisioning guideline.
    #[serde(default)]
    pub provisioning: ProvisioningSection,
    /// Rack types and per-rack overrides, applied in order.
    #[serde(default)]
    pub rack_group: Vec<RackGroup>,
    /// Capacity changes and failures.
    #[serde(default)]
    pub events: Vec<EventSection>,
}

/// `kind` of `[topology]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Hosts, ToRs, one non-blocking core.
    TwoTier,
    /// Clos with pods, aggregation switches and spines.
    ThreeTier,
    /// Clos with Subways server wiring.
    Subways,
}

impl Kind {
    /// Name as written in configs.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::TwoTier => "two-tier",
            Kind::ThreeTier => "three-tier",
            Kind::Subways => "subways",
        }
    }
}

/// Subways wiring type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WiringName {
    /// All ports to the own ToR.
    Type0,
    /// Loops inside a cluster.
    Type1,
    /// Loops across clusters.
    Type2,
}

/// `[topology]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TopologySection {
    /// `two-tier`, `three-tier` or `subways`.
    pub kind: Kind,
    /// Racks (two-tier).
    pub racks: Option<i64>,
    /// Pods, also called clusters (three-tier, subways).
    pub pods: Option<i64>,
    /// Racks per pod (three-tier, subways).
    pub racks_per_pod: Option<i64>,
    /// Hosts per rack.
    pub hosts_per_rack: i64,
    /// Speed of every host port.
    pub host_link: Option<Bandwidth>,
    /// Ports per host (default 1; 2 for subways).
    pub ports_per_host: Option<i64>,
    /// Per-port speeds, instead of `host-link` and `ports-per-host`.
    pub host_ports: Option<Vec<Bandwidth>>,
    /// Total ToR uplink each way (or `oversubscription`).
    pub tor_uplink: Option<Bandwidth>,
    /// ToR oversubscription, server-facing capacity over uplink capacity:
    /// each ToR's uplink is its hosts' port capacity divided by this
    /// (instead of `tor-uplink`).
    pub oversubscription: Option<f64>,
    /// Aggregation switches per pod (three-tier, subways).
    pub aggs_per_pod: Option<i64>,
    /// Spine switches (three-tier, subways).
    pub spines: Option<i64>,
    /// Total uplink of each aggregation switch (default non-blocking).
    pub agg_uplink: Option<Bandwidth>,
    /// Ports per ToR (server-facing plus uplinks).
    pub tor_ports: Option<i64>,
    /// Subways wiring.
    pub wiring: Option<WiringName>,
    /// Subways loop size `l`.
    pub loop_size: Option<i64>,
    /// Subways clusters per loop `c` (Type 2).
    pub clusters_per_loop: Option<i64>,
    /// Fabric border switches (optional).
    pub border_switches: Option<i64>,
    /// Capacity of each border link each way.
    pub border_link: Option<Bandwidth>,
}

/// `[hosts]` and `[rack-group.hosts]`: host hardware (all optional so groups
/// can override single fields).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HostsSection {
    /// CPU cores.
    pub cores: Option<i64>,
    /// Memory.
    pub memory: Option<Bytes>,
    /// Storage devices.
    pub storage: Option<Vec<StorageSection>>,
}

/// Device kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StorageKindName {
    /// Hard disk.
    Hdd,
    /// Flash.
    Ssd,
    /// In-memory.
    Ram,
}

/// One kind of storage device on a host.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StorageSection {
    /// `hdd`, `ssd` or `ram`.
    pub kind: StorageKindName,
    /// How many such devices (default 1).
    pub count: Option<i64>,
    /// Capacity per device (default: typical for the kind).
    pub capacity: Option<Bytes>,
    /// Read throughput.
    pub read: Option<Bandwidth>,
    /// Write throughput.
    pub write: Option<Bandwidth>,
    /// Positioning time per operation.
    pub access_time: Option<Duration>,
}

/// `[provisioning]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProvisioningSection {
    /// Guideline uplink per TB of storage.
    pub uplink_per_tb: Option<Bandwidth>,
    /// Guideline uplink per core.
    pub uplink_per_core: Option<Bandwidth>,
    /// Multiple of the guideline from which a rack is High-uplink.
    pub high_at: Option<f64>,
    /// Multiple of the guideline below which a rack is Low-uplink.
    pub low_below: Option<f64>,
}

/// Rack type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RackKindName {
    /// Compute.
    Compute,
    /// Disk.
    Disk,
    /// Mixed.
    Mixed,
}

/// `[[rack-group]]`: a set of racks and what is special about them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RackGroup {
    /// Rack indices: a list, or a range string `"0..8"` (end excluded).
    pub racks: RackList,
    /// Rack type.
    pub kind: Option<RackKindName>,
    /// ToR uplink of these racks.
    pub tor_uplink: Option<Bandwidth>,
    /// Host hardware of these racks.
    pub hosts: Option<HostsSection>,
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionName {
    /// Multiply by `factor`.
    Scale,
    /// Set to `capacity`.
    Set,
    /// Capacity 0.
    Fail,
    /// Back to nominal.
    Restore,
}

/// `[[events]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EventSection {
    /// When.
    pub at: Duration,
    /// What.
    pub action: ActionName,
    /// For `scale`.
    pub factor: Option<f64>,
    /// For `set`.
    pub capacity: Option<Bandwidth>,
    /// ToR uplinks of these racks.
    pub racks: Option<RackList>,
    /// Every link of these switches (by name) or hosts.
    pub nodes: Option<Vec<String>>,
    /// Every NIC link of these hosts (index or name).
    pub hosts: Option<Vec<HostRef>>,
}

/// A host named by index or by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRef {
    /// `17`.
    Index(i64),
    /// `"r4h1"`.
    Name(String),
}

impl<'de> Deserialize<'de> for HostRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HostRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a host index (17) or name (\"r4h1\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HostRef, E> {
                Ok(HostRef::Index(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<HostRef, E> {
                Ok(HostRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Rack indices as a list or a `"a..b"` range string, kept as inclusive
/// ranges so a huge range costs nothing until it is walked (and walking
/// stops at the first rack that does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RackList(pub Vec<std::ops::RangeInclusive<i64>>);

impl RackList {
    /// The indices, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().flat_map(|r| r.clone())
    }

    /// Whether `rack` is listed.
    pub fn contains(&self, rack: i64) -> bool {
        self.0.iter().any(|r| r.contains(&rack))
    }
}

impl<'de> Deserialize<'de> for RackList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RackList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of rack indices ([0, 1]) or a range (\"0..8\", end excluded)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RackList, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    out.push(v..=v);
                }
                Ok(RackList(out))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RackList, E> {
                Ok(RackList(vec![v..=v]))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RackList, E> {
                let quoted = netheat_core::clip(s, 60);
                let bad = || E::custom(format!("`{quoted}` is not a rack range; write \"a..b\" (end excluded)"));
                let (a, b) = s.split_once("..").ok_or_else(bad)?;
                let a: i64 = a.trim().parse().map_err(|_| bad())?;
                let b: i64 = b.trim().parse().map_err(|_| bad())?;
                if b <= a {
                    return Err(E::custom(format!("rack range `{quoted}` is empty")));
                }
                Ok(RackList(vec![a..=b - 1]))
            }
        }
        d.deserialize_any(V)
    }
}
