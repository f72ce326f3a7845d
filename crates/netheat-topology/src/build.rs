//! Building a [`Topology`] from a [`TopologySpec`].
//!
//! Node ids: hosts first (node id = host id, rack-major: rack `r`, slot `i`
//! is host `r * H + i`), then ToRs (one per rack, same index), then
//! aggregation switches pod-major (or the two-tier `core`), then spines.
//!
//! Subways wiring (ports per server `p`, loop size `l`, clusters per loop `c`):
//!
//! * **Type 0**: all `p` ports of a server go to its own rack's ToR.
//! * **Type 1**: the racks of each cluster are cut into loops of `l`
//!   consecutive racks; a server in loop position `k` wires port `j` to the
//!   ToR at loop position `(k + j) mod l`, so each ToR serves servers of `p`
//!   adjacent racks and the pattern wraps around. `l = p` is multihoming
//!   (every server of a group of `p` racks reaches all `p` ToRs).
//! * **Type 2**: `c` clusters are grouped; a loop takes `l / c` racks from
//!   each cluster of the group and interleaves them (position `k` is cluster
//!   `k mod c`), so adjacent ToRs in a loop sit in different clusters and a
//!   server's ports span clusters. Wiring is then as in Type 1.

use std::collections::HashMap;

use netheat_core::{HostId, LinkId, NodeId};

use crate::error::TopologyError;
use crate::events::compile_events;
use crate::model::*;
use crate::spec::*;

impl Topology {
    /// Builds and validates a datacenter.
    pub fn build(spec: &TopologySpec) -> Result<Topology, TopologyError> {
        Builder::new(spec)?.finish()
    }
}

struct Builder<'s> {
    spec: &'s TopologySpec,
    kind: TopologyKind,
    pods: usize,
    racks_per_pod: usize,
    aggs_per_pod: usize,
    spines: usize,
    subways: Option<SubwaysSpec>,
    nodes: Vec<Node>,
    links: Vec<Link>,
}

fn positive(key: &str, what: &str, v: f64) -> Result<(), TopologyError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(TopologyError::new(key, format!("{what} must be positive, got {v}")))
    }
}

impl<'s> Builder<'s> {
    fn new(spec: &'s TopologySpec) -> Result<Self, TopologyError> {
        let nracks = spec.racks.len();
        if nracks == 0 {
            return Err(TopologyError::new("topology.racks", "a datacenter needs at least one rack"));
        }
        if spec.hosts_per_rack == 0 {
            return Err(TopologyError::new("topology.hosts-per-rack", "must be at least 1"));
        }
        for (r, rack) in spec.racks.iter().enumerate() {
            positive("topology.tor-uplink", &format!("the ToR uplink of rack {r}"), rack.tor_uplink_bps)?;
            if rack.host.ports_bps.is_empty() {
                return Err(TopologyError::new("topology.ports-per-host", "every server needs at least one NIC port"));
            }
            for s in &rack.host.ports_bps {
                positive("topology.host-link", "a host link speed", *s)?;
            }
        }
        let (kind, pods, aggs_per_pod, spines, subways) = match &spec.fabric {
            FabricSpec::TwoTier => (TopologyKind::TwoTier, 1, 1, 0, None),
            FabricSpec::Clos { pods, aggs_per_pod, spines, agg_uplink_bps, subways } => {
                if *pods == 0 {
                    return Err(TopologyError::new("topology.pods", "must be at least 1"));
                }
                if !nracks.is_multiple_of(*pods) {
                    return Err(TopologyError::new(
                        "topology.racks-per-pod",
                        format!("{nracks} racks cannot be split evenly into {pods} pods"),
                    ));
                }
                if *aggs_per_pod == 0 {
                    return Err(TopologyError::new("topology.aggs-per-pod", "must be at least 1"));
                }
                if *pods > 1 && *spines == 0 {
                    return Err(TopologyError::new("topology.spines", "more than one pod needs at least one spine"));
                }
                if spines % aggs_per_pod != 0 {
                    return Err(TopologyError::new(
                        "topology.spines",
                        format!(
                            "{spines} spines cannot be split into {aggs_per_pod} planes \
                             (one per aggregation switch of a pod); use a multiple of {aggs_per_pod}"
                        ),
                    ));
                }
                if let Some(u) = agg_uplink_bps {
                    positive("topology.agg-uplink", "the aggregation uplink", *u)?;
                }
                let kind = if subways.is_some() { TopologyKind::Subways } else { TopologyKind::ThreeTier };
                (kind, *pods, *aggs_per_pod, *spines, *subways)
            }
        };
        let racks_per_pod = nracks / pods;
        spec.dimensions().check()?;
        if let Some(sw) = subways {
            validate_subways(spec, sw, pods, racks_per_pod)?;
        }
        Ok(Self {
            spec,
            kind,
            pods,
            racks_per_pod,
            aggs_per_pod,
            spines,
            subways,
            nodes: Vec::new(),
            links: Vec::new(),
        })
    }

    fn add_node(&mut self, kind: NodeKind, name: String, index: usize, pod: Option<u32>, rack: Option<u32>) -> NodeId {
        self.nodes.push(Node { kind, name, index: index as u32, pod, rack });
        (self.nodes.len() - 1) as NodeId
    }

    /// Adds both directions of a physical link; returns (up, down).
    fn add_link(&mut self, lower: NodeId, upper: NodeId, cap: f64, layer: Layer) -> (LinkId, LinkId) {
        let up = self.links.len() as LinkId;
        let down = up + 1;
        self.links.push(Link {
            src: lower,
            dst: upper,
            capacity_bps: cap,
            layer,
            direction: Direction::Up,
            reverse: down,
        });
        self.links.push(Link {
            src: upper,
            dst: lower,
            capacity_bps: cap,
            layer,
            direction: Direction::Down,
            reverse: up,
        });
        (up, down)
    }

    /// ToR (rack index) that port `j` of a server in rack `r` is wired to.
    fn port_tor(&self, r: usize, j: usize) -> usize {
        let Some(sw) = self.subways else { return r };
        let pod = r / self.racks_per_pod;
        let rin = r % self.racks_per_pod;
        let l = sw.loop_size;
        match sw.wiring {
            Wiring::Type0 => r,
            Wiring::Type1 => {
                let base = rin - rin % l;
                pod * self.racks_per_pod + base + (rin % l + j) % l
            }
            Wiring::Type2 => {
                let c = sw.clusters_per_loop;
                let per = l / c; // racks each cluster gives a loop
                let group = pod / c;
                let (k, _) = self.loop_position(r);
                let target = (k + j) % l;
                let tpod = group * c + target % c;
                let trin = rin - rin % per + target / c;
                tpod * self.racks_per_pod + trin
            }
        }
    }

    /// (position in loop, loop id) of rack `r` under Subways Type 1/2.
    fn loop_position(&self, r: usize) -> (usize, usize) {
        let sw = self.subways.expect("subways");
        let pod = r / self.racks_per_pod;
        let rin = r % self.racks_per_pod;
        let l = sw.loop_size;
        match sw.wiring {
            Wiring::Type0 => (0, r),
            Wiring::Type1 => (rin % l, (pod * self.racks_per_pod + rin) / l),
            Wiring::Type2 => {
                let c = sw.clusters_per_loop;
                let per = l / c;
                let group = pod / c;
                let k = (rin % per) * c + pod % c;
                let loops_per_group = self.racks_per_pod / per;
                (k, group * loops_per_group + rin / per)
            }
        }
    }

    fn finish(mut self) -> Result<Topology, TopologyError> {
        let spec = self.spec;
        let h = spec.hosts_per_rack;
        let nracks = spec.racks.len();
        let mut names = HashMap::with_capacity(nracks * (h + 1) + 64);

        // Hosts first so node id == host id.
        let mut hosts = Vec::with_capacity(nracks * h);
        for (r, rack) in spec.racks.iter().enumerate() {
            let pod = (r / self.racks_per_pod) as u32;
            for i in 0..h {
                let id = hosts.len();
                let node = self.add_node(NodeKind::Host, format!("r{r}h{i}"), id, Some(pod), Some(r as u32));
                hosts.push(Host {
                    node,
                    rack: r as u32,
                    slot: i as u32,
                    cores: rack.host.cores,
                    memory_bytes: rack.host.memory_bytes,
                    ports: Vec::with_capacity(rack.host.ports_bps.len()),
                    storage: rack.host.storage.clone(),
                });
            }
        }
        let first_tor_node = self.nodes.len() as NodeId;
        for r in 0..nracks {
            let pod = (r / self.racks_per_pod) as u32;
            self.add_node(NodeKind::Tor, format!("tor{r}"), r, Some(pod), Some(r as u32));
        }
        let first_agg_node = self.nodes.len() as NodeId;
        if self.kind == TopologyKind::TwoTier {
            self.add_node(NodeKind::Core, "core".into(), 0, Some(0), None);
        } else {
            for p in 0..self.pods {
                for j in 0..self.aggs_per_pod {
                    self.add_node(
                        NodeKind::Agg,
                        format!("agg{p}-{j}"),
                        p * self.aggs_per_pod + j,
                        Some(p as u32),
                        None,
                    );
                }
            }
        }
        let first_spine_node = self.nodes.len() as NodeId;
        for s in 0..self.spines {
            self.add_node(NodeKind::Spine, format!("spine{s}"), s, None, None);
        }
        let first_border_node = self.nodes.len() as NodeId;
        let border = spec.border;
        if let Some(b) = border {
            if b.switches == 0 {
                return Err(TopologyError::new("topology.border-switches", "must be at least 1"));
            }
            positive("topology.border-link", "the border link", b.link_bps)?;
            for i in 0..b.switches {
                self.add_node(NodeKind::Border, format!("border{i}"), i, None, None);
            }
        }

        // Host ports.
        let mut server_ports = vec![0u32; nracks];
        for (hid, host) in hosts.iter_mut().enumerate() {
            let r = host.rack as usize;
            for (j, speed) in spec.racks[r].host.ports_bps.iter().enumerate() {
                let tor = self.port_tor(r, j);
                server_ports[tor] += 1;
                let (up, down) = self.add_link(hid as NodeId, first_tor_node + tor as NodeId, *speed, Layer::HostTor);
                host.ports.push(Port { tor: tor as u32, up, down, speed_bps: *speed });
            }
        }

        // ToR uplinks, split evenly over the pod's aggregation switches.
        let mut tors = Vec::with_capacity(nracks);
        let mut agg_down_bps = vec![0.0; self.pods * self.aggs_per_pod];
        for (r, rack) in spec.racks.iter().enumerate() {
            let pod = r / self.racks_per_pod;
            let per_link = rack.tor_uplink_bps / self.aggs_per_pod as f64;
            let mut up = Vec::with_capacity(self.aggs_per_pod);
            let mut down = Vec::with_capacity(self.aggs_per_pod);
            for j in 0..self.aggs_per_pod {
                let agg = pod * self.aggs_per_pod + j;
                let (u, d) = self.add_link(
                    first_tor_node + r as NodeId,
                    first_agg_node + agg as NodeId,
                    per_link,
                    Layer::TorAgg,
                );
                agg_down_bps[agg] += per_link;
                up.push(u);
                down.push(d);
            }
            tors.push(Tor {
                node: first_tor_node + r as NodeId,
                pod: pod as u32,
                up,
                down,
                server_ports: server_ports[r],
            });
        }
        if let Some(limit) = spec.tor_ports {
            for (r, t) in tors.iter().enumerate() {
                let used = t.server_ports as usize + self.aggs_per_pod;
                if used > limit {
                    return Err(TopologyError::new(
                        "topology.tor-ports",
                        format!(
                            "ToR {r} needs {used} ports ({} server ports + {} uplinks) but a ToR has only {limit}",
                            t.server_ports, self.aggs_per_pod
                        ),
                    ));
                }
            }
        }

        // Aggregation to spine, plane by plane.
        let mut aggs: Vec<Agg> = (0..self.pods * self.aggs_per_pod)
            .map(|a| Agg {
                node: first_agg_node + a as NodeId,
                pod: (a / self.aggs_per_pod) as u32,
                index: (a % self.aggs_per_pod) as u32,
                up: Vec::new(),
            })
            .collect();
        let mut spines = Vec::with_capacity(self.spines);
        if self.spines > 0 {
            let per_plane = self.spines / self.aggs_per_pod;
            let agg_uplink = match &spec.fabric {
                FabricSpec::Clos { agg_uplink_bps, .. } => *agg_uplink_bps,
                FabricSpec::TwoTier => None,
            };
            for s in 0..self.spines {
                let plane = s / per_plane;
                let mut down = Vec::with_capacity(self.pods);
                for p in 0..self.pods {
                    let a = p * self.aggs_per_pod + plane;
                    let total = agg_uplink.unwrap_or(agg_down_bps[a]);
                    let (u, d) = self.add_link(
                        first_agg_node + a as NodeId,
                        first_spine_node + s as NodeId,
                        total / per_plane as f64,
                        Layer::AggSpine,
                    );
                    aggs[a].up.push(u);
                    down.push(d);
                }
                spines.push(Spine { node: first_spine_node + s as NodeId, plane: plane as u32, down });
            }
        }
        if self.kind == TopologyKind::TwoTier {
            aggs = vec![Agg { node: first_agg_node, pod: 0, index: 0, up: Vec::new() }];
        }
        // The border hangs off the top tier: spines, else the core/aggregation.
        let mut borders = Vec::new();
        if let Some(b) = border {
            let top: Vec<NodeId> = if spines.is_empty() {
                aggs.iter().map(|a| a.node).collect()
            } else {
                spines.iter().map(|s| s.node).collect()
            };
            for i in 0..b.switches {
                let node = first_border_node + i as NodeId;
                for t in &top {
                    self.add_link(*t, node, b.link_bps, Layer::SpineBorder);
                }
                borders.push(node);
            }
        }

        let racks = self.racks_with_classes()?;
        for (id, n) in self.nodes.iter().enumerate() {
            names.insert(n.name.clone(), id as NodeId);
        }
        let route = crate::model::RouteIndex::new(&hosts, &tors);
        let mut topo = Topology {
            route,
            kind: self.kind,
            nodes: self.nodes,
            links: self.links,
            hosts,
            racks,
            tors,
            aggs,
            spines,
            borders,
            pods: self.pods as u32,
            aggs_per_pod: self.aggs_per_pod as u32,
            hosts_per_rack: h as u32,
            subways: self.subways,
            events: Vec::new(),
            names,
        };
        topo.events = compile_events(&topo, &spec.events)?;
        Ok(topo)
    }

    fn racks_with_classes(&self) -> Result<Vec<Rack>, TopologyError> {
        let spec = self.spec;
        let h = spec.hosts_per_rack as f64;
        let tb = |r: &RackSpec| r.host.storage_bytes() * h / 1e12;
        let cores = |r: &RackSpec| r.host.cores as f64 * h;
        let median = |mut v: Vec<f64>| -> Option<f64> {
            v.retain(|x| x.is_finite() && *x > 0.0);
            if v.is_empty() {
                return None;
            }
            v.sort_by(f64::total_cmp);
            Some(v[v.len() / 2])
        };
        let g_tb = spec.provisioning.uplink_per_tb_bps.or_else(|| {
            median(spec.racks.iter().filter(|r| r.kind == RackKind::Disk).map(|r| r.tor_uplink_bps / tb(r)).collect())
        });
        let g_core = spec.provisioning.uplink_per_core_bps.or_else(|| {
            median(
                spec.racks
                    .iter()
                    .filter(|r| r.kind == RackKind::Compute)
                    .map(|r| r.tor_uplink_bps / cores(r))
                    .collect(),
            )
        });
        let (hi, lo) = (spec.provisioning.high_at, spec.provisioning.low_below);
        if !(lo > 0.0 && hi >= lo) {
            return Err(TopologyError::new(
                "provisioning.high-at",
                format!("need 0 < low-below ({lo}) <= high-at ({hi})"),
            ));
        }
        let mut out = Vec::with_capacity(spec.racks.len());
        for (r, rack) in spec.racks.iter().enumerate() {
            let expected = match rack.kind {
                RackKind::Disk => g_tb.unwrap_or(0.0) * tb(rack),
                RackKind::Compute => g_core.unwrap_or(0.0) * cores(rack),
                RackKind::Mixed => g_tb.unwrap_or(0.0) * tb(rack) + g_core.unwrap_or(0.0) * cores(rack),
            };
            let ratio = if expected > 0.0 { rack.tor_uplink_bps / expected } else { 1.0 };
            let class = if ratio >= hi {
                UplinkClass::High
            } else if ratio < lo {
                UplinkClass::Low
            } else {
                UplinkClass::Medium
            };
            let subways_loop = match self.subways {
                Some(sw) if sw.wiring != Wiring::Type0 => Some(self.loop_position(r).1 as u32),
                _ => None,
            };
            out.push(Rack {
                name: format!("rack{r}"),
                kind: rack.kind,
                pod: (r / self.racks_per_pod) as u32,
                first_host: (r * spec.hosts_per_rack) as HostId,
                uplink_class: class,
                uplink_ratio: ratio,
                subways_loop,
            });
        }
        Ok(out)
    }
}

fn validate_subways(
    spec: &TopologySpec,
    sw: SubwaysSpec,
    pods: usize,
    racks_per_pod: usize,
) -> Result<(), TopologyError> {
    let p = spec.racks[0].host.ports_bps.len();
    if spec.racks.iter().any(|r| r.host.ports_bps.len() != p) {
        return Err(TopologyError::new(
            "topology.ports-per-host",
            "every server of a Subways fabric must have the same number of ports",
        ));
    }
    if sw.wiring == Wiring::Type0 {
        return Ok(());
    }
    let l = sw.loop_size;
    if l < p {
        return Err(TopologyError::new(
            "topology.loop-size",
            format!("loop size l = {l} is smaller than the {p} ports per server (p); each server needs p distinct ToRs, so l >= p"),
        ));
    }
    match sw.wiring {
        Wiring::Type1 => {
            if sw.clusters_per_loop != 1 {
                return Err(TopologyError::new(
                    "topology.clusters-per-loop",
                    "Type 1 loops stay inside one cluster; clusters-per-loop applies to Type 2 only",
                ));
            }
            if !racks_per_pod.is_multiple_of(l) {
                return Err(TopologyError::new(
                    "topology.loop-size",
                    format!("{racks_per_pod} racks per cluster cannot be cut into loops of {l}"),
                ));
            }
        }
        Wiring::Type2 => {
            let c = sw.clusters_per_loop;
            if c < 2 {
                return Err(TopologyError::new("topology.clusters-per-loop", "Type 2 loops span at least 2 clusters"));
            }
            if !pods.is_multiple_of(c) {
                return Err(TopologyError::new(
                    "topology.clusters-per-loop",
                    format!("{pods} clusters cannot be grouped {c} per loop"),
                ));
            }
            if !l.is_multiple_of(c) {
                return Err(TopologyError::new(
                    "topology.loop-size",
                    format!("a Type 2 loop takes the same number of racks from each of its {c} clusters, so l must be a multiple of {c}"),
                ));
            }
            if !racks_per_pod.is_multiple_of(l / c) {
                return Err(TopologyError::new(
                    "topology.loop-size",
                    format!("{racks_per_pod} racks per cluster cannot be cut into groups of l/c = {}", l / c),
                ));
            }
        }
        Wiring::Type0 => unreachable!(),
    }
    Ok(())
}
