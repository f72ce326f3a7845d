//! ToR utilization as the scheduler sees it: outbound rates over the
//! uplinks of each ToR, and the detection of hot ToRs (above the threshold
//! for a whole detection window of samples), shared by the cluster model
//! ([`crate::cluster`]) and any other run that places tasks with a
//! [`crate::PlacementPolicy`] (the scenario layer's `[placement]`).

use netheat_engine::Ctx;
use netheat_topology::Topology;

use crate::rank::TorLoad;

/// Uplink capacity in force of ToR `t` (its rack index), bits/s.
pub fn tor_capacity_bps(topo: &Topology, ctx: &Ctx<'_, '_>, t: usize) -> f64 {
    topo.tors()[t].up.iter().map(|&l| ctx.link_capacity_bps(l)).sum()
}

/// Outbound utilization of ToR `t` now: the rates on its uplinks over their
/// capacity in force (1 when they have none left).
pub fn tor_utilization(topo: &Topology, ctx: &Ctx<'_, '_>, t: usize) -> f64 {
    let rate: f64 = topo.tors()[t].up.iter().map(|&l| ctx.link_rate_bps(l)).sum();
    outbound_utilization(rate, tor_capacity_bps(topo, ctx, t))
}

/// A ToR's outbound utilization from the summed rate and capacity of its
/// uplinks, bits/s: 1 when no capacity is left (a failed uplink set is as
/// hot as it gets).
pub fn outbound_utilization(rate_bps: f64, capacity_bps: f64) -> f64 {
    if capacity_bps > 0.0 {
        rate_bps / capacity_bps
    } else {
        1.0
    }
}

/// The engine's live rates as a [`TorLoad`]: [`tor_utilization`] and
/// [`tor_capacity_bps`].
pub struct EngineTors<'a, 'c, 'd> {
    /// The datacenter.
    pub topo: &'a Topology,
    /// The engine, mid-run.
    pub ctx: &'a Ctx<'c, 'd>,
}

impl TorLoad for EngineTors<'_, '_, '_> {
    fn utilization(&self, tor: usize) -> f64 {
        tor_utilization(self.topo, self.ctx, tor)
    }
    fn capacity_bps(&self, tor: usize) -> f64 {
        tor_capacity_bps(self.topo, self.ctx, tor)
    }
}

/// Hot-ToR detection from periodic utilization samples: a ToR whose
/// sampled outbound utilization stays above `hot_threshold` for a whole
/// detection window (`detect_s / tick_s` consecutive samples, at least one)
/// is hot until a sample falls below or [`HotTors::clear`] is called (after
/// tasks were migrated off it).
#[derive(Debug, Clone, PartialEq)]
pub struct HotTors {
    threshold: f64,
    need: u32,
    util: Vec<f64>,
    above: Vec<u32>,
    hot: Vec<bool>,
}

impl HotTors {
    /// `tors` ToRs, all cool, sampled every `tick_s`.
    pub fn new(tors: usize, hot_threshold: f64, tick_s: f64, detect_s: f64) -> Self {
        Self {
            threshold: hot_threshold,
            need: (detect_s / tick_s).round().max(1.0) as u32,
            util: vec![0.0; tors],
            above: vec![0; tors],
            hot: vec![false; tors],
        }
    }

    /// Records a sample of ToR `t`.
    pub fn observe(&mut self, t: usize, util: f64) {
        self.util[t] = util;
        if util > self.threshold {
            self.above[t] += 1;
        } else {
            self.above[t] = 0;
        }
        self.hot[t] = self.above[t] >= self.need;
    }

    /// Samples every ToR now (see [`tor_utilization`]).
    pub fn sample(&mut self, topo: &Topology, ctx: &Ctx<'_, '_>) {
        for t in 0..topo.tors().len() {
            let u = tor_utilization(topo, ctx, t);
            self.observe(t, u);
        }
    }

    /// The last sample of ToR `t`.
    pub fn util(&self, t: usize) -> f64 {
        self.util[t]
    }

    /// Whether ToR `t` is hot.
    pub fn is_hot(&self, t: usize) -> bool {
        self.hot[t]
    }

    /// The threshold.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Starts the detection of ToR `t` over (tasks were moved off it).
    pub fn clear(&mut self, t: usize) {
        self.above[t] = 0;
        self.hot[t] = false;
    }
}
