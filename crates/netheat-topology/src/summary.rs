//! Counts and capacity figures of a datacenter (`netheat topo show`).
//!
//! Oversubscription of a switch tier is the capacity facing down divided by
//! the capacity facing up, per switch. Bisection bandwidth is that of a
//! balanced cut along the tree: half the pods (or racks, or hosts) on each
//! side, so it is the minimum over tiers of half the tier's total up
//! capacity. For the symmetric fabrics built here this is the usual figure.

use crate::model::{Layer, NodeKind, Topology, UplinkClass};
use crate::spec::RackKind;

/// Links of one layer.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerSummary {
    /// The layer.
    pub layer: Layer,
    /// Physical links (each is two directed links).
    pub physical_links: usize,
    /// Sum of capacities in one direction, bits per second.
    pub capacity_bps: f64,
}

/// Distribution of oversubscription across the switches of one tier.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversubscription {
    /// `tor` or `agg`.
    pub tier: &'static str,
    /// Smallest ratio.
    pub min: f64,
    /// Median ratio.
    pub median: f64,
    /// Largest ratio.
    pub max: f64,
}

/// Everything `topo show` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `two-tier`, `three-tier` or `subways`.
    pub kind: &'static str,
    /// Nodes per kind, in [`NodeKind`] order, kinds with none left out.
    pub nodes: Vec<(NodeKind, usize)>,
    /// Pods (clusters).
    pub pods: u32,
    /// Racks.
    pub racks: usize,
    /// Links per layer, bottom up, layers with none left out.
    pub layers: Vec<LayerSummary>,
    /// Oversubscription per switch tier.
    pub oversubscription: Vec<Oversubscription>,
    /// Bisection bandwidth of the balanced tree cut, bits per second.
    pub bisection_bps: f64,
    /// Racks per type.
    pub rack_kinds: Vec<(RackKind, usize)>,
    /// Racks per uplink class.
    pub uplink_classes: Vec<(UplinkClass, usize)>,
    /// Directed-link capacity events.
    pub events: usize,
}

fn spread(tier: &'static str, mut v: Vec<f64>) -> Option<Oversubscription> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(Oversubscription { tier, min: v[0], median: v[v.len() / 2], max: v[v.len() - 1] })
}

impl Topology {
    /// Computes the summary.
    pub fn summary(&self) -> Summary {
        let mut nodes = Vec::new();
        for kind in [NodeKind::Host, NodeKind::Tor, NodeKind::Agg, NodeKind::Core, NodeKind::Spine, NodeKind::Border] {
            let n = self.nodes.iter().filter(|n| n.kind == kind).count();
            if n > 0 {
                nodes.push((kind, n));
            }
        }
        let mut layers = Vec::new();
        for layer in Layer::ALL {
            let up = self.links.iter().filter(|l| l.layer == layer && l.direction == crate::Direction::Up);
            let (n, cap) = up.fold((0, 0.0), |(n, c), l| (n + 1, c + l.capacity_bps));
            if n > 0 {
                layers.push(LayerSummary { layer, physical_links: n, capacity_bps: cap });
            }
        }

        // Down-facing capacity per ToR = the server ports wired to it.
        let mut tor_down = vec![0.0; self.tors.len()];
        for h in &self.hosts {
            for p in &h.ports {
                tor_down[p.tor as usize] += p.speed_bps;
            }
        }
        let tor_ratios = (0..self.tors.len()).map(|t| tor_down[t] / self.tor_uplink_bps(t as u32)).collect();
        let mut oversubscription: Vec<_> = spread("tor", tor_ratios).into_iter().collect();
        if !self.spines.is_empty() {
            let mut agg_down = vec![0.0; self.aggs.len()];
            for t in &self.tors {
                for (j, l) in t.up.iter().enumerate() {
                    agg_down[t.pod as usize * self.aggs_per_pod as usize + j] += self.links[*l as usize].capacity_bps;
                }
            }
            let ratios = self
                .aggs
                .iter()
                .enumerate()
                .map(|(a, agg)| agg_down[a] / agg.up.iter().map(|l| self.links[*l as usize].capacity_bps).sum::<f64>())
                .collect();
            oversubscription.extend(spread("agg", ratios));
        }

        let host_total: f64 = tor_down.iter().sum();
        let mut bisection = host_total / 2.0;
        if self.racks.len() > 1 {
            let tor_total: f64 = (0..self.tors.len()).map(|t| self.tor_uplink_bps(t as u32)).sum();
            bisection = bisection.min(tor_total / 2.0);
        }
        if self.pods > 1 {
            let agg_total: f64 =
                self.aggs.iter().flat_map(|a| &a.up).map(|l| self.links[*l as usize].capacity_bps).sum();
            bisection = bisection.min(agg_total / 2.0);
        }

        let count = |f: &dyn Fn(&crate::Rack) -> bool| self.racks.iter().filter(|r| f(r)).count();
        let rack_kinds = [RackKind::Compute, RackKind::Disk, RackKind::Mixed]
            .into_iter()
            .map(|k| (k, count(&|r| r.kind == k)))
            .filter(|(_, n)| *n > 0)
            .collect();
        let uplink_classes = [UplinkClass::High, UplinkClass::Medium, UplinkClass::Low]
            .into_iter()
            .map(|c| (c, count(&|r| r.uplink_class == c)))
            .filter(|(_, n)| *n > 0)
            .collect();
        Summary {
            kind: self.kind.as_str(),
            nodes,
            pods: self.pods,
            racks: self.racks.len(),
            layers,
            oversubscription,
            bisection_bps: bisection,
            rack_kinds,
            uplink_classes,
            events: self.events.len(),
        }
    }
}
