//! ToR utilization as the scheduler sees it: outbound rates over the
//! uplinks of each ToR, and the detection of hot ToRs (above the threshold
//! for a whole detection window of samples), shared by the cluster model
//! (`netheat-scenario`'s `cluster` module) and any other run that places tasks with a
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

/// Hot-ToR detection from periodic utilization samples, on the hotspot
/// paper's definition (§3.1: a ToR is hot in an interval when its *5-minute
/// average* utilization is above 75%; §5.1: UTP uses that threshold): a ToR
/// is hot when the mean of its last `detect_s / tick_s` samples (at least
/// one; 10 samples of 30 s = the 5-minute window by default) is above
/// `hot_threshold`. A short burst above the threshold inside an otherwise
/// cool window therefore does not make it hot, and a window averaging above
/// the threshold does even if one sample dips below. After
/// [`HotTors::clear`] (tasks were migrated off it) a ToR needs a whole new
/// window of samples before it can be hot again.
#[derive(Debug, Clone, PartialEq)]
pub struct HotTors {
    threshold: f64,
    need: u32,
    util: Vec<f64>,
    /// The last `need` samples of each ToR (ring buffers, `need` per ToR).
    ring: Vec<f64>,
    /// Next slot to write, per ToR.
    next: Vec<u32>,
    /// Samples ever recorded (capped at `need`), per ToR.
    filled: Vec<u32>,
    /// Samples since the last clear (capped at `need`), per ToR.
    since_clear: Vec<u32>,
    hot: Vec<bool>,
}

impl HotTors {
    /// `tors` ToRs, all cool, sampled every `tick_s`.
    pub fn new(tors: usize, hot_threshold: f64, tick_s: f64, detect_s: f64) -> Self {
        let need = (detect_s / tick_s).round().max(1.0) as u32;
        Self {
            threshold: hot_threshold,
            need,
            util: vec![0.0; tors],
            ring: vec![0.0; tors * need as usize],
            next: vec![0; tors],
            filled: vec![0; tors],
            since_clear: vec![0; tors],
            hot: vec![false; tors],
        }
    }

    /// Records a sample of ToR `t`.
    pub fn observe(&mut self, t: usize, util: f64) {
        let n = self.need as usize;
        self.util[t] = util;
        self.ring[t * n + self.next[t] as usize] = util;
        self.next[t] = (self.next[t] + 1) % self.need;
        self.filled[t] = (self.filled[t] + 1).min(self.need);
        self.since_clear[t] = (self.since_clear[t] + 1).min(self.need);
        self.hot[t] = self.since_clear[t] >= self.need && self.avg(t) > self.threshold;
    }

    /// Samples every ToR now (see [`tor_utilization`]).
    pub fn sample(&mut self, topo: &Topology, ctx: &Ctx<'_, '_>) {
        for t in 0..topo.tors().len() {
            let u = tor_utilization(topo, ctx, t);
            self.observe(t, u);
        }
    }

    /// The last sample of ToR `t` (the instantaneous utilization UTP's
    /// placement score reads, §5.1).
    pub fn util(&self, t: usize) -> f64 {
        self.util[t]
    }

    /// The mean of the last detection window of samples of ToR `t` (fewer
    /// at the start of a run; 0 before any sample): the 5-minute average of
    /// the paper's hotspot definition.
    pub fn avg(&self, t: usize) -> f64 {
        let n = self.need as usize;
        let k = self.filled[t] as usize;
        if k == 0 {
            return 0.0;
        }
        // The last k samples end just before `next`.
        let end = self.next[t] as usize + n;
        (end - k..end).map(|j| self.ring[t * n + j % n]).sum::<f64>() / k as f64
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
        self.since_clear[t] = 0;
        self.hot[t] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::HotTors;

    /// 30-s samples, 5-minute window (10 samples), threshold 75%.
    fn tors() -> HotTors {
        HotTors::new(1, 0.75, 30.0, 300.0)
    }

    #[test]
    fn a_one_minute_burst_is_not_a_hotspot() {
        // 4 minutes at 60% then a 1-minute burst at 95% (2 samples): the
        // window's mean is (8 x 0.60 + 2 x 0.95) / 10 = 0.67 <= 0.75.
        let mut h = tors();
        for u in [0.6; 8].into_iter().chain([0.95; 2]) {
            h.observe(0, u);
        }
        assert!((h.avg(0) - 0.67).abs() < 1e-12, "{}", h.avg(0));
        assert!(!h.is_hot(0));
    }

    #[test]
    fn five_minutes_above_on_average_is_a_hotspot() {
        // 9 samples at 90% and one dip to 70%: mean 0.88 > 0.75, hot,
        // although not every sample is above the threshold.
        let mut h = tors();
        for (k, u) in [0.9; 10].into_iter().enumerate() {
            h.observe(0, if k == 4 { 0.7 } else { u });
            // Not before the window is full (9 samples = 4.5 minutes).
            assert_eq!(h.is_hot(0), k == 9, "sample {k}");
        }
        assert!((h.avg(0) - 0.88).abs() < 1e-12, "{}", h.avg(0));
        // The window slides: after 6 more samples at 40% it holds samples
        // 6..9 of the first run (4 x 0.9; the dip at 4 has left) and the
        // 6 new ones: (4 x 0.9 + 6 x 0.4) / 10 = 0.6, cool again.
        for _ in 0..6 {
            h.observe(0, 0.4);
        }
        assert!((h.avg(0) - 0.6).abs() < 1e-12, "{}", h.avg(0));
        assert!(!h.is_hot(0));
    }

    #[test]
    fn after_a_clear_a_whole_new_window_is_needed() {
        let mut h = tors();
        for _ in 0..10 {
            h.observe(0, 0.9);
        }
        assert!(h.is_hot(0));
        h.clear(0);
        for k in 0..10 {
            h.observe(0, 0.9);
            assert_eq!(h.is_hot(0), k == 9, "sample {k}");
        }
    }
}
