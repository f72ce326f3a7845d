//! Capacity changes and failures, compiled to per-link records.
//!
//! The config names targets by rack, node or host; the engine wants
//! `(time, directed link, new capacity)`. Records keep the order of the
//! spec within one timestamp, so replay is deterministic.

use netheat_core::LinkId;

use crate::error::TopologyError;
use crate::model::{CapacityEvent, Topology};
use crate::spec::{EventAction, EventSpec, EventTarget};

pub(crate) fn compile_events(topo: &Topology, specs: &[EventSpec]) -> Result<Vec<CapacityEvent>, TopologyError> {
    let mut out = Vec::new();
    for ev in specs {
        if !(ev.at_s.is_finite() && ev.at_s >= 0.0) {
            return Err(TopologyError::new(format!("{}.at", ev.key), "an event time must be >= 0"));
        }
        let mut links: Vec<LinkId> = Vec::new();
        match &ev.target {
            EventTarget::TorUplinks(racks) => {
                for r in racks {
                    let tor = topo.tors.get(*r as usize).ok_or_else(|| {
                        TopologyError::new(
                            format!("{}.racks", ev.key),
                            format!("rack {r} does not exist (the datacenter has racks 0..{})", topo.racks.len() - 1),
                        )
                    })?;
                    for (u, d) in tor.up.iter().zip(&tor.down) {
                        links.push(*u);
                        links.push(*d);
                    }
                }
            }
            EventTarget::Hosts(hosts) => {
                for h in hosts {
                    let host = topo.hosts.get(*h as usize).ok_or_else(|| {
                        TopologyError::new(
                            format!("{}.hosts", ev.key),
                            format!("host {h} does not exist (the datacenter has hosts 0..{})", topo.hosts.len() - 1),
                        )
                    })?;
                    for p in &host.ports {
                        links.push(p.up);
                        links.push(p.down);
                    }
                }
            }
            EventTarget::Nodes(nodes) => {
                for n in nodes {
                    if *n as usize >= topo.nodes.len() {
                        return Err(TopologyError::new(
                            format!("{}.nodes", ev.key),
                            format!("node {n} does not exist"),
                        ));
                    }
                    // Incident links of a node: a linear scan is fine for
                    // config-time compilation.
                    for (id, l) in topo.links.iter().enumerate() {
                        if l.src == *n || l.dst == *n {
                            links.push(id as LinkId);
                        }
                    }
                }
            }
        }
        for link in links {
            let nominal = topo.links[link as usize].capacity_bps;
            let cap = match ev.action {
                EventAction::Scale(f) => {
                    if !(f.is_finite() && f >= 0.0) {
                        return Err(TopologyError::new(format!("{}.factor", ev.key), "a scale factor must be >= 0"));
                    }
                    nominal * f
                }
                EventAction::Set(c) => {
                    if !(c.is_finite() && c >= 0.0) {
                        return Err(TopologyError::new(format!("{}.capacity", ev.key), "a capacity must be >= 0"));
                    }
                    c
                }
                EventAction::Fail => 0.0,
                EventAction::Restore => nominal,
            };
            out.push(CapacityEvent { time_s: ev.at_s, link, capacity_bps: cap });
        }
    }
    // Stable: spec order is kept among events at the same time.
    out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    Ok(out)
}
