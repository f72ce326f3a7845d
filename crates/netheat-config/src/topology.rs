//! From a datacenter TOML file to a built [`Topology`].

use std::path::Path;

use netheat_topology::{
    BorderSpec, Count, Dimensions, EventAction, EventSpec, EventTarget, FabricSpec, HostSpec, Provisioning, RackKind,
    RackSpec, StorageDevice, StorageKind, SubwaysSpec, Topology, TopologySpec, Wiring,
};

use crate::cx::{count, Cx};
use crate::error::ConfigError;
use crate::locate::Locator;
use crate::schema::*;

/// Reads and builds a datacenter file.
pub fn load_topology(path: &Path) -> Result<Topology, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
    load_topology_str(&text, &file)
}

/// `file` of the errors that [`load_topology_overridden`] reports about an
/// overridden key: the key came from the caller, not from the file.
pub const OVERRIDE_FILE: &str = "<override>";

/// Reads a datacenter file with some of its `[topology]` keys replaced (or
/// added): a scenario's `[topology] file = ...` with keys beside `file`, or an
/// experiment variant's `"topology.loop-size" = 2`. Every other table of the
/// file is kept as written.
///
/// An error about an overridden key has `file` [`OVERRIDE_FILE`], line and
/// column 0 and the key (`topology.loop-size`), so the caller can place it in
/// its own text; any other error is located in the file.
pub fn load_topology_overridden(path: &Path, overrides: &toml_edit::Table) -> Result<Topology, ConfigError> {
    load_topology_overridden_with_events(path, overrides, None)
}

/// [`load_topology_overridden`] plus capacity events of the caller's
/// (`events`, an array of tables or of inline tables, as `[[events]]`)
/// after the file's own: a scenario's `[[events]]` beside `[topology] file`.
/// An error about one of them has `file` [`OVERRIDE_FILE`] and its key
/// (`events[0].nodes[0]`), numbered among the caller's events.
pub fn load_topology_overridden_with_events(
    path: &Path,
    overrides: &toml_edit::Table,
    events: Option<&toml_edit::Item>,
) -> Result<Topology, ConfigError> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
    if overrides.is_empty() && events.is_none() {
        return load_topology_str(&text, &file);
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let (line, column) = e.span().map(|sp| Locator::new(&text).line_col(sp.start)).unwrap_or((1, 1));
        ConfigError::Invalid { file: file.clone(), line, column, key: String::new(), reason: e.message().trim().into() }
    })?;
    let Some(table) = doc.entry("topology").or_insert(Item::Table(Table::new())).as_table_like_mut() else {
        return Err(ConfigError::Invalid {
            file,
            line: 1,
            column: 1,
            key: "topology".into(),
            reason: "is not a table".into(),
        });
    };
    for (k, v) in overrides.iter() {
        table.insert(k, v.clone());
    }
    // The caller's events after the file's: `events[i]` of the derived
    // document is the caller's `events[i - own]`.
    let own = doc.get("events").and_then(Item::as_array_of_tables).map_or(0, ArrayOfTables::len);
    if let Some(extra) = events {
        let mut all = doc.get("events").and_then(Item::as_array_of_tables).cloned().unwrap_or_default();
        let tables: Vec<Table> = match extra {
            Item::ArrayOfTables(a) => a.iter().cloned().collect(),
            Item::Value(toml_edit::Value::Array(a)) => {
                let mut v = Vec::new();
                for (i, x) in a.iter().enumerate() {
                    let Some(t) = x.as_inline_table() else {
                        return Err(ConfigError::Invalid {
                            file: OVERRIDE_FILE.into(),
                            line: 0,
                            column: 0,
                            key: format!("events[{i}]"),
                            reason: "an event is a table, e.g. { at = \"0s\", nodes = [\"tor2\"], action = \"fail\" }"
                                .into(),
                        });
                    };
                    v.push(t.clone().into_table());
                }
                v
            }
            _ => {
                return Err(ConfigError::Invalid {
                    file: OVERRIDE_FILE.into(),
                    line: 0,
                    column: 0,
                    key: "events".into(),
                    reason: "must be an array of tables ([[events]])".into(),
                })
            }
        };
        for t in tables {
            all.push(t);
        }
        doc.insert("events", Item::ArrayOfTables(all));
    }
    let derived = doc.to_string();
    load_topology_str(&derived, &file).map_err(|e| {
        let ConfigError::Invalid { key, reason, line, column, .. } = e else { return e };
        let top = key.strip_prefix("topology.").map(|r| r.split(['.', '[']).next().unwrap_or(r));
        if top.is_some_and(|t| overrides.contains_key(t)) {
            return ConfigError::Invalid { file: OVERRIDE_FILE.into(), line: 0, column: 0, key, reason };
        }
        if events.is_some() {
            if let Some((i, rest)) = key
                .strip_prefix("events[")
                .and_then(|r| r.split_once(']'))
                .and_then(|(i, rest)| i.parse::<usize>().ok().map(|i| (i, rest)))
            {
                if i >= own {
                    let key = format!("events[{}]{rest}", i - own);
                    return ConfigError::Invalid { file: OVERRIDE_FILE.into(), line: 0, column: 0, key, reason };
                }
            }
        }
        let (line, column) = if key.is_empty() {
            (line, column)
        } else {
            let loc = Locator::new(&text);
            loc.line_col(loc.offset_of(&key))
        };
        ConfigError::Invalid { file, line, column, key, reason }
    })
}

/// Builds a datacenter from TOML text; `file` is only used in messages.
pub fn load_topology_str(text: &str, file: &str) -> Result<Topology, ConfigError> {
    let cx = Cx::new(file, text);
    let raw: DatacenterFile = toml::from_str(text).map_err(|e| cx.toml_error(&e))?;
    let spec = cx.spec(&raw)?;
    Topology::build(&spec).map_err(|e| cx.at(&e.key, e.reason))
}

impl Cx<'_> {
    fn spec(&self, raw: &DatacenterFile) -> Result<TopologySpec, ConfigError> {
        let t = &raw.topology;
        let kind = t.kind;
        let not_for = |key: &str, present: bool| -> Result<(), ConfigError> {
            if present {
                Err(self.at(&format!("topology.{key}"), format!("is not used by kind \"{}\"", kind.as_str())))
            } else {
                Ok(())
            }
        };
        let need = |key: &str, v: Option<i64>| -> Result<i64, ConfigError> {
            v.ok_or_else(|| self.at("topology.kind", format!("kind \"{}\" needs key `{key}`", kind.as_str())))
        };
        let hosts_per_rack = count(self, "topology.hosts-per-rack", t.hosts_per_rack, 1)?;

        let subways_kind = kind == Kind::Subways;
        not_for("wiring", !subways_kind && t.wiring.is_some())?;
        not_for("loop-size", !subways_kind && t.loop_size.is_some())?;
        not_for("clusters-per-loop", !subways_kind && t.clusters_per_loop.is_some())?;
        let (fabric, rack_counts) = match kind {
            Kind::TwoTier => {
                for (k, present) in [
                    ("pods", t.pods.is_some()),
                    ("racks-per-pod", t.racks_per_pod.is_some()),
                    ("aggs-per-pod", t.aggs_per_pod.is_some()),
                    ("spines", t.spines.is_some()),
                    ("agg-uplink", t.agg_uplink.is_some()),
                ] {
                    not_for(k, present)?;
                }
                let racks = count(self, "topology.racks", need("racks", t.racks)?, 1)?;
                (FabricSpec::TwoTier, vec![Count::new("topology.racks", racks as u64)])
            }
            Kind::ThreeTier | Kind::Subways => {
                not_for("racks", t.racks.is_some())?;
                let pods = count(self, "topology.pods", need("pods", t.pods)?, 1)?;
                let rpp = count(self, "topology.racks-per-pod", need("racks-per-pod", t.racks_per_pod)?, 1)?;
                let aggs = count(self, "topology.aggs-per-pod", t.aggs_per_pod.unwrap_or(1), 1)?;
                let default_spines = if pods > 1 { aggs as i64 } else { 0 };
                let spines = count(self, "topology.spines", t.spines.unwrap_or(default_spines), 0)?;
                let subways = if subways_kind {
                    let wiring = t.wiring.ok_or_else(|| {
                        self.at("topology.kind", "kind \"subways\" needs key `wiring` (type0, type1 or type2)")
                    })?;
                    let wiring = match wiring {
                        WiringName::Type0 => Wiring::Type0,
                        WiringName::Type1 => Wiring::Type1,
                        WiringName::Type2 => Wiring::Type2,
                    };
                    let loop_size = match (wiring, t.loop_size) {
                        (Wiring::Type0, v) => v.unwrap_or(1).max(1) as usize,
                        (_, None) => {
                            return Err(self.at("topology.wiring", "type1 and type2 wiring need key `loop-size`"))
                        }
                        (_, Some(v)) => count(self, "topology.loop-size", v, 1)?,
                    };
                    let cpl = match (wiring, t.clusters_per_loop) {
                        (Wiring::Type2, None) => {
                            return Err(self.at("topology.wiring", "type2 wiring needs key `clusters-per-loop`"))
                        }
                        (_, v) => count(self, "topology.clusters-per-loop", v.unwrap_or(1), 1)?,
                    };
                    Some(SubwaysSpec { wiring, loop_size, clusters_per_loop: cpl })
                } else {
                    None
                };
                (
                    FabricSpec::Clos {
                        pods,
                        aggs_per_pod: aggs,
                        spines,
                        agg_uplink_bps: t.agg_uplink.map(|b| b.0),
                        subways,
                    },
                    vec![Count::new("topology.pods", pods as u64), Count::new("topology.racks-per-pod", rpp as u64)],
                )
            }
        };

        // Count before allocating anything per rack, host or port.
        let ports = match (&t.host_ports, t.ports_per_host) {
            (Some(list), _) => Count::new("topology.host-ports", list.len() as u64),
            (None, n) => {
                let n = count(self, "topology.ports-per-host", n.unwrap_or(if subways_kind { 2 } else { 1 }), 1)?;
                Count::new("topology.ports-per-host", n as u64)
            }
        };
        let (pods, aggs, spines) = match &fabric {
            FabricSpec::TwoTier => (1, 1, 0),
            FabricSpec::Clos { pods, aggs_per_pod, spines, .. } => (*pods, *aggs_per_pod, *spines),
        };
        let border_switches = match t.border_switches {
            Some(n) => count(self, "topology.border-switches", n, 1)?,
            None => 0,
        };
        let dims = Dimensions {
            two_tier: kind == Kind::TwoTier,
            racks: rack_counts,
            hosts_per_rack: Count::new("topology.hosts-per-rack", hosts_per_rack as u64),
            ports_per_host: ports,
            devices_per_host: self.devices_per_host(raw)?,
            pods: Count::new("topology.pods", pods as u64),
            aggs_per_pod: Count::new("topology.aggs-per-pod", aggs as u64),
            spines: Count::new("topology.spines", spines as u64),
            border_switches: Count::new("topology.border-switches", border_switches as u64),
        };
        let budget = netheat_core::memory_budget()?;
        dims.check_against(budget).map_err(|e| self.at(&e.key, e.reason))?;
        // Fits 32-bit ids, so the product cannot overflow.
        let nracks = dims.racks.iter().map(|c| c.value as usize).product::<usize>();

        let ports_bps = match (&t.host_ports, t.host_link, t.ports_per_host) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(self.at(
                    "topology.host-ports",
                    "give either `host-ports` or `host-link` (with `ports-per-host`), not both",
                ))
            }
            (Some(list), None, None) => list.iter().map(|b| b.0).collect(),
            (None, Some(link), n) => {
                let default = if subways_kind { 2 } else { 1 };
                vec![link.0; count(self, "topology.ports-per-host", n.unwrap_or(default), 1)?]
            }
            (None, None, _) => return Err(self.at("topology", "missing required key `host-link` (or `host-ports`)")),
        };
        let base_host = self.host("hosts", &raw.hosts, &HostSpec { ports_bps, ..HostSpec::with_ports(0, 0.0) })?;
        let tor_uplink_bps = match (t.tor_uplink, t.oversubscription) {
            (Some(_), Some(_)) => {
                return Err(
                    self.at("topology.oversubscription", "give either `tor-uplink` or `oversubscription`, not both")
                )
            }
            (Some(u), None) => u.0,
            (None, Some(o)) if o.is_finite() && o > 0.0 => {
                t.hosts_per_rack as f64 * base_host.ports_bps.iter().sum::<f64>() / o
            }
            (None, Some(o)) => {
                return Err(self.at("topology.oversubscription", format!("must be a positive number, got {o}")))
            }
            (None, None) => {
                return Err(self.at("topology", "missing required key `tor-uplink` (or `oversubscription`)"))
            }
        };
        let mut racks = vec![RackSpec { kind: RackKind::Compute, host: base_host, tor_uplink_bps }; nracks];
        for (g, group) in raw.rack_group.iter().enumerate() {
            let key = format!("rack-group[{g}]");
            for r in group.racks.iter() {
                if r < 0 || r as usize >= nracks {
                    return Err(self.at(
                        &format!("{key}.racks"),
                        format!("rack {r} does not exist (the datacenter has racks 0..{})", nracks - 1),
                    ));
                }
                let rack = &mut racks[r as usize];
                if let Some(k) = group.kind {
                    rack.kind = match k {
                        RackKindName::Compute => RackKind::Compute,
                        RackKindName::Disk => RackKind::Disk,
                        RackKindName::Mixed => RackKind::Mixed,
                    };
                }
                if let Some(u) = group.tor_uplink {
                    rack.tor_uplink_bps = u.0;
                }
                if let Some(h) = &group.hosts {
                    rack.host = self.host(&format!("{key}.hosts"), h, &rack.host)?;
                }
            }
        }
        for (r, rack) in racks.iter().enumerate() {
            if rack.tor_uplink_bps <= 0.0 {
                let key = raw
                    .rack_group
                    .iter()
                    .rposition(|g| g.racks.contains(r as i64) && g.tor_uplink.is_some())
                    .map(|g| format!("rack-group[{g}].tor-uplink"))
                    .unwrap_or_else(|| "topology.tor-uplink".into());
                return Err(self.at(&key, "a ToR uplink must be positive"));
            }
        }
        for (i, b) in racks[0].host.ports_bps.iter().enumerate() {
            if *b <= 0.0 {
                let key = if t.host_ports.is_some() {
                    format!("topology.host-ports[{i}]")
                } else {
                    "topology.host-link".into()
                };
                return Err(self.at(&key, "a host link speed must be positive"));
            }
        }

        let p = &raw.provisioning;
        let provisioning = Provisioning {
            uplink_per_tb_bps: p.uplink_per_tb.map(|b| b.0),
            uplink_per_core_bps: p.uplink_per_core.map(|b| b.0),
            high_at: p.high_at.unwrap_or(1.2),
            low_below: p.low_below.unwrap_or(0.8),
        };
        for (k, v) in
            [("uplink-per-tb", provisioning.uplink_per_tb_bps), ("uplink-per-core", provisioning.uplink_per_core_bps)]
        {
            if v.is_some_and(|v| v <= 0.0) {
                return Err(self.at(&format!("provisioning.{k}"), "must be positive"));
            }
        }
        let tor_ports = t.tor_ports.map(|v| count(self, "topology.tor-ports", v, 1)).transpose()?;
        let border = match (t.border_switches, t.border_link) {
            (None, None) => None,
            (Some(_), Some(b)) => Some(BorderSpec { switches: border_switches, link_bps: b.0 }),
            (Some(_), None) => return Err(self.at("topology.border-switches", "a fabric border needs `border-link`")),
            (None, Some(_)) => return Err(self.at("topology.border-link", "a fabric border needs `border-switches`")),
        };
        let events = self.events(raw, nracks, hosts_per_rack)?;
        Ok(TopologySpec { fabric, hosts_per_rack, racks, tor_ports, provisioning, events, border })
    }

    /// Storage devices per host (the most of `[hosts]` and any rack group's
    /// hosts), keyed by the largest `count` among them.
    fn devices_per_host(&self, raw: &DatacenterFile) -> Result<Count, ConfigError> {
        let mut best = Count::new("hosts.storage", 0);
        let mut largest = 0;
        let sections = std::iter::once(("hosts".to_string(), &raw.hosts)).chain(
            raw.rack_group
                .iter()
                .enumerate()
                .filter_map(|(g, r)| r.hosts.as_ref().map(|h| (format!("rack-group[{g}].hosts"), h))),
        );
        for (key, h) in sections {
            let mut total: u64 = 0;
            for (i, d) in h.storage.iter().flatten().enumerate() {
                let k = format!("{key}.storage[{i}].count");
                let n = count(self, &k, d.count.unwrap_or(1), 1)? as u64;
                total = total.saturating_add(n);
                if n > largest {
                    largest = n;
                    best.key = k;
                }
            }
            best.value = best.value.max(total);
        }
        Ok(best)
    }

    fn host(&self, key: &str, h: &HostsSection, base: &HostSpec) -> Result<HostSpec, ConfigError> {
        let mut out = base.clone();
        if let Some(c) = h.cores {
            out.cores = count(self, &format!("{key}.cores"), c, 1)? as u32;
        }
        if let Some(m) = h.memory {
            if m.0 <= 0.0 {
                return Err(self.at(&format!("{key}.memory"), "must be positive"));
            }
            out.memory_bytes = m.0;
        }
        if let Some(devices) = &h.storage {
            out.storage.clear();
            for (i, d) in devices.iter().enumerate() {
                let dk = format!("{key}.storage[{i}]");
                let kind = match d.kind {
                    StorageKindName::Hdd => StorageKind::Hdd,
                    StorageKindName::Ssd => StorageKind::Ssd,
                    StorageKindName::Ram => StorageKind::Ram,
                };
                let mut dev = StorageDevice::typical(kind);
                for (name, v, slot) in [
                    ("capacity", d.capacity.map(|b| b.0), &mut dev.capacity_bytes),
                    ("read", d.read.map(|b| b.0), &mut dev.read_bps),
                    ("write", d.write.map(|b| b.0), &mut dev.write_bps),
                ] {
                    if let Some(v) = v {
                        if v <= 0.0 {
                            return Err(self.at(&format!("{dk}.{name}"), "must be positive"));
                        }
                        *slot = v;
                    }
                }
                if let Some(a) = d.access_time {
                    dev.access_s = a.0;
                }
                let n = count(self, &format!("{dk}.count"), d.count.unwrap_or(1), 1)?;
                out.storage.extend(std::iter::repeat_n(dev, n));
            }
        }
        Ok(out)
    }

    fn events(&self, raw: &DatacenterFile, nracks: usize, hpr: usize) -> Result<Vec<EventSpec>, ConfigError> {
        let mut out = Vec::new();
        let nhosts = nracks * hpr;
        for (i, e) in raw.events.iter().enumerate() {
            let key = format!("events[{i}]");
            let action = match e.action {
                ActionName::Scale => EventAction::Scale(
                    e.factor.ok_or_else(|| self.at(&format!("{key}.action"), "action \"scale\" needs key `factor`"))?,
                ),
                ActionName::Set => EventAction::Set(
                    e.capacity
                        .ok_or_else(|| self.at(&format!("{key}.action"), "action \"set\" needs key `capacity`"))?
                        .0,
                ),
                ActionName::Fail => EventAction::Fail,
                ActionName::Restore => EventAction::Restore,
            };
            let given = [e.racks.is_some(), e.nodes.is_some(), e.hosts.is_some()].iter().filter(|b| **b).count();
            if given != 1 {
                return Err(self.at(&key, "an event needs exactly one of `racks`, `nodes` or `hosts`"));
            }
            let target = if let Some(r) = &e.racks {
                let mut v = Vec::new();
                for x in r.iter() {
                    if x < 0 || x as usize >= nracks {
                        return Err(self.at(
                            &format!("{key}.racks"),
                            format!("rack {x} does not exist (the datacenter has racks 0..{})", nracks - 1),
                        ));
                    }
                    v.push(x as u32);
                }
                EventTarget::TorUplinks(v)
            } else if let Some(hosts) = &e.hosts {
                let mut v = Vec::new();
                for (j, h) in hosts.iter().enumerate() {
                    let id = match h {
                        HostRef::Index(x) if *x >= 0 && (*x as usize) < nhosts => Some(*x as u32),
                        HostRef::Index(_) => None,
                        HostRef::Name(n) => parse_host_name(n, nracks, hpr),
                    };
                    let id = id.ok_or_else(|| {
                        self.at(
                            &format!("{key}.hosts[{j}]"),
                            format!(
                                "host {} does not exist (hosts are 0..{} or named r<rack>h<slot>)",
                                match h {
                                    HostRef::Index(x) => x.to_string(),
                                    HostRef::Name(n) => format!("\"{n}\""),
                                },
                                nhosts - 1
                            ),
                        )
                    })?;
                    v.push(id);
                }
                EventTarget::Hosts(v)
            } else {
                // Node names are resolved against the built topology below;
                // keep them as names for now via a placeholder topology pass.
                let names = e.nodes.clone().unwrap_or_default();
                let mut v = Vec::new();
                for (j, n) in names.iter().enumerate() {
                    let id = node_id_by_name(n, nracks, hpr, &raw.topology).ok_or_else(|| {
                        self.at(&format!("{key}.nodes[{j}]"), format!("no switch or host is named \"{n}\""))
                    })?;
                    v.push(id);
                }
                EventTarget::Nodes(v)
            };
            out.push(EventSpec { at_s: e.at.0, action, target, key });
        }
        Ok(out)
    }
}

fn parse_host_name(n: &str, nracks: usize, hpr: usize) -> Option<u32> {
    let rest = n.strip_prefix('r')?;
    let (r, h) = rest.split_once('h')?;
    let (r, h): (usize, usize) = (r.parse().ok()?, h.parse().ok()?);
    (r < nracks && h < hpr).then_some((r * hpr + h) as u32)
}

/// Node ids follow the builder's order: hosts, ToRs, aggs (or core), spines.
fn node_id_by_name(n: &str, nracks: usize, hpr: usize, t: &TopologySection) -> Option<u32> {
    let nhosts = nracks * hpr;
    if let Some(h) = parse_host_name(n, nracks, hpr) {
        return Some(h);
    }
    if let Some(r) = n.strip_prefix("tor").and_then(|x| x.parse::<usize>().ok()) {
        return (r < nracks).then_some((nhosts + r) as u32);
    }
    let first_agg = nhosts + nracks;
    let pods = t.pods.unwrap_or(1).max(1) as usize;
    let aggs = t.aggs_per_pod.unwrap_or(1).max(1) as usize;
    let spines = t.spines.unwrap_or(if pods > 1 { aggs as i64 } else { 0 }).max(0) as usize;
    let first_border = if t.kind == Kind::TwoTier { first_agg + 1 } else { first_agg + pods * aggs + spines };
    if let Some(b) = n.strip_prefix("border").and_then(|x| x.parse::<usize>().ok()) {
        return (b < t.border_switches.unwrap_or(0).max(0) as usize).then_some((first_border + b) as u32);
    }
    if t.kind == Kind::TwoTier {
        return (n == "core").then_some(first_agg as u32);
    }
    if let Some((p, j)) = n.strip_prefix("agg").and_then(|x| x.split_once('-')) {
        let (p, j): (usize, usize) = (p.parse().ok()?, j.parse().ok()?);
        return (p < pods && j < aggs).then_some((first_agg + p * aggs + j) as u32);
    }
    if let Some(s) = n.strip_prefix("spine").and_then(|x| x.parse::<usize>().ok()) {
        return (s < spines).then_some((first_agg + pods * aggs + s) as u32);
    }
    None
}
