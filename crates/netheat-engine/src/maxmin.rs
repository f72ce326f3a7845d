//! Weighted max-min fair rate allocation with strict priorities and rate caps.
//!
//! Progressive filling ("water filling"): a common water level λ rises; each
//! unfrozen flow gets `min(w_f·λ, cap_f)`. A link saturates at the level where
//! the rates of its flows sum to its (residual) capacity, which freezes all its
//! unfrozen flows. Priority classes are filled one after the other, each on the
//! capacity left by the classes before it (lower value first).
//!
//! Instead of scanning all links at every step (O(F·L)), every link's
//! saturation level `remaining / weight_sum` sits in a binary heap. Levels only
//! rise when flows freeze at a level below the link's own (the remaining
//! capacity shrinks less than the weight sum), so a stored key is a lower
//! bound of the link's current level: when a stale key reaches the top it is
//! refreshed and pushed back (lazy invalidation), and the first up-to-date
//! top is the next link to saturate. Caps are a second, pre-sorted event stream at
//! levels `cap_f / w_f`. Cost: O((F·h + L) log L) for F flows of path length h
//! touching L links. The allocator also reports each flow's bottleneck (the
//! link that froze it, or its cap), which the simulator's local repair uses.
//!
//! Numerics: a link whose remaining capacity is below `1e-12` of its capacity
//! counts as full (level 0), and a flow's rate never exceeds the level of any
//! unsaturated link on its path, so no link is allocated above capacity
//! (beyond float rounding of ~1e-15 relative).

use crate::order::heap_order;
use netheat_core::LinkId;
use std::collections::BinaryHeap;

/// Remaining capacity below this fraction of capacity counts as saturated.
pub(crate) const SAT_REL: f64 = 1e-12;

/// Read access to the flows being allocated, indexed `0..len`.
pub(crate) trait FlowSet {
    fn len(&self) -> usize;
    fn path(&self, i: usize) -> &[LinkId];
    fn weight(&self, i: usize) -> f64;
    /// `f64::INFINITY` when uncapped.
    fn cap(&self, i: usize) -> f64;
    fn priority(&self, i: usize) -> i32;
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    level: f64,
    link: u32,
}

// Reversed: BinaryHeap is a max-heap and we want the lowest level (then
// lowest link id, for determinism) on top.
heap_order!(Entry, |a, b| b.level.total_cmp(&a.level).then(b.link.cmp(&a.link)));

#[derive(Clone, Copy, Default, Debug)]
struct LinkScratch {
    rem: f64,
    wsum: f64,
    resid: f64,
    stamp: u32,
    rstamp: u32,
    cnt: u32,
    slot: u32,
    closed: bool,
}

/// Reusable scratch space for repeated allocations (no allocation in steady
/// state). Per-link arrays are indexed by global link id and validated by
/// epoch stamps, so nothing is cleared between calls.
#[derive(Default, Debug)]
pub(crate) struct Allocator {
    epoch: u32,
    call: u32,
    /// Per-link scratch, one cache line's worth per link (array of structs:
    /// the allocator touches all fields of a link together).
    lk: Vec<LinkScratch>,
    touched: Vec<u32>,
    off: Vec<u32>,
    fill: Vec<u32>,
    members: Vec<u32>,
    heap: BinaryHeap<Entry>,
    caps: Vec<(f64, u32)>,
    order: Vec<u32>,
    frozen: Vec<bool>,
    /// Output of the last [`Allocator::allocate`]: the bottleneck of each
    /// flow, the link that froze it, [`BN_CAP`] or [`BN_NONE`].
    pub(crate) bn: Vec<u32>,
}

/// Bottleneck marker: the flow is frozen at its rate cap.
pub(crate) const BN_CAP: u32 = u32::MAX;
/// Bottleneck marker: unconstrained (no link, no cap).
pub(crate) const BN_NONE: u32 = u32::MAX - 1;

impl Allocator {
    fn ensure_links(&mut self, n: usize) {
        if self.lk.len() < n {
            self.lk.resize(n, LinkScratch::default());
        }
    }

    /// Computes the rates of all flows in `fs` into `out` (resized to
    /// `fs.len()`), given link capacities indexed by link id. The flows must
    /// be all flows using these links (a closed component).
    pub(crate) fn allocate<S: FlowSet>(&mut self, cap: &[f64], fs: &S, out: &mut Vec<f64>) {
        let n = fs.len();
        out.clear();
        out.resize(n, 0.0);
        self.ensure_links(cap.len());
        self.frozen.clear();
        self.frozen.resize(n, false);
        self.bn.clear();
        self.bn.resize(n, BN_NONE);
        if self.call == u32::MAX {
            self.lk.iter_mut().for_each(|x| x.rstamp = 0);
            self.call = 0;
        }
        self.call += 1;
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(0..n as u32);
        if n > 1 {
            let p0 = fs.priority(0);
            if (1..n).any(|i| fs.priority(i) != p0) {
                order.sort_by_key(|&i| (fs.priority(i as usize), i));
            }
        }
        let mut s = 0;
        while s < n {
            let p = fs.priority(order[s] as usize);
            let mut e = s + 1;
            while e < n && fs.priority(order[e] as usize) == p {
                e += 1;
            }
            self.alloc_class(cap, fs, &order[s..e], out);
            s = e;
        }
        self.order = order;
    }

    fn level(&self, cap: &[f64], l: usize) -> f64 {
        let r = self.lk[l].rem;
        if r <= SAT_REL * cap[l] {
            0.0
        } else {
            r / self.lk[l].wsum
        }
    }

    fn alloc_class<S: FlowSet>(&mut self, cap: &[f64], fs: &S, cls: &[u32], out: &mut [f64]) {
        if self.epoch == u32::MAX {
            self.lk.iter_mut().for_each(|x| x.stamp = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        let e = self.epoch;
        self.touched.clear();
        for &i in cls {
            let i = i as usize;
            let w = fs.weight(i);
            for &l in fs.path(i) {
                let l = l as usize;
                if self.lk[l].stamp != e {
                    self.lk[l].stamp = e;
                    if self.lk[l].rstamp != self.call {
                        self.lk[l].rstamp = self.call;
                        self.lk[l].resid = cap[l];
                    }
                    self.lk[l].rem = self.lk[l].resid;
                    self.lk[l].wsum = 0.0;
                    self.lk[l].cnt = 0;
                    self.lk[l].closed = false;
                    self.lk[l].slot = self.touched.len() as u32;
                    self.touched.push(l as u32);
                }
                self.lk[l].wsum += w;
                self.lk[l].cnt += 1;
            }
        }
        // Per-link member lists (CSR) so a saturating link finds its flows.
        let nt = self.touched.len();
        self.off.clear();
        self.off.push(0);
        let mut acc = 0u32;
        for &l in &self.touched {
            acc += self.lk[l as usize].cnt;
            self.off.push(acc);
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.off[..nt]);
        self.members.clear();
        self.members.resize(acc as usize, 0);
        for &i in cls {
            for &l in fs.path(i as usize) {
                let s = self.lk[l as usize].slot as usize;
                self.members[self.fill[s] as usize] = i;
                self.fill[s] += 1;
            }
        }
        self.caps.clear();
        for &i in cls {
            let c = fs.cap(i as usize);
            if c.is_finite() {
                self.caps.push((c / fs.weight(i as usize), i));
            }
        }
        self.caps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.heap.clear();
        for k in 0..nt {
            let l = self.touched[k] as usize;
            let level = self.level(cap, l);
            self.heap.push(Entry { level, link: l as u32 });
        }
        let mut ci = 0;
        loop {
            // Heap keys are lower bounds of the links' current levels (levels
            // only rise as flows freeze), so a stale top is refreshed and
            // re-pushed only when it reaches the top: far fewer heap
            // operations than pushing on every freeze.
            let mut link_level = None;
            while let Some(&top) = self.heap.peek() {
                let l = top.link as usize;
                if self.lk[l].closed || self.lk[l].cnt == 0 {
                    self.heap.pop();
                    continue;
                }
                let cur = self.level(cap, l);
                if cur > top.level {
                    self.heap.pop();
                    self.heap.push(Entry { level: cur, link: top.link });
                    continue;
                }
                link_level = Some(cur);
                break;
            }
            while ci < self.caps.len() && self.frozen[self.caps[ci].1 as usize] {
                ci += 1;
            }
            let cap_ev = self.caps.get(ci).copied();
            match (link_level, cap_ev) {
                (None, None) => break,
                (ll, Some((cl, i))) if !matches!(ll, Some(ll) if cl > ll) => {
                    ci += 1;
                    self.bn[i as usize] = BN_CAP;
                    self.freeze(fs, i as usize, fs.cap(i as usize), out);
                }
                (Some(level), _) => {
                    let top = self.heap.pop().expect("peeked");
                    let l = top.link as usize;
                    self.lk[l].closed = true;
                    let s = self.lk[l].slot as usize;
                    for k in self.off[s]..self.off[s + 1] {
                        let i = self.members[k as usize] as usize;
                        if !self.frozen[i] {
                            self.bn[i] = l as u32;
                            let r = (fs.weight(i) * level).min(fs.cap(i));
                            self.freeze(fs, i, r, out);
                        }
                    }
                }
                (None, Some(_)) => unreachable!("handled by the cap arm"),
            }
        }
        // Flows with no link and no cap are unconstrained.
        for &i in cls {
            if !self.frozen[i as usize] {
                out[i as usize] = f64::INFINITY;
            }
        }
        for k in 0..nt {
            let l = self.touched[k] as usize;
            debug_assert!(
                self.lk[l].rem >= -1e-9 * cap[l],
                "link {l} over capacity: remaining {} of {}",
                self.lk[l].rem,
                cap[l]
            );
            self.lk[l].resid = self.lk[l].rem.max(0.0);
        }
    }

    fn freeze<S: FlowSet>(&mut self, fs: &S, i: usize, rate: f64, out: &mut [f64]) {
        self.frozen[i] = true;
        out[i] = rate;
        let w = fs.weight(i);
        for &l in fs.path(i) {
            let l = l as usize;
            self.lk[l].rem -= rate;
            self.lk[l].wsum -= w;
            self.lk[l].cnt -= 1;
        }
    }
}

struct TupleFlows<'a>(&'a [(Vec<LinkId>, f64, f64, i32)]);

impl FlowSet for TupleFlows<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn path(&self, i: usize) -> &[LinkId] {
        &self.0[i].0
    }
    fn weight(&self, i: usize) -> f64 {
        self.0[i].1
    }
    fn cap(&self, i: usize) -> f64 {
        self.0[i].2
    }
    fn priority(&self, i: usize) -> i32 {
        self.0[i].3
    }
}

/// One-shot weighted max-min fair allocation with strict priorities and caps.
///
/// `flows[i] = (path, weight, rate_cap_bps, priority)`: use
/// `f64::INFINITY` for no cap; lower priority values are served first; weights
/// must be > 0. Returns the rate of each flow in bits/s (`INFINITY` only for
/// a flow with an empty path and no cap).
///
/// # Panics
/// If a path names a link `>= capacities.len()`.
pub fn max_min_rates(capacities: &[f64], flows: &[(Vec<LinkId>, f64, f64, i32)]) -> Vec<f64> {
    let mut a = Allocator::default();
    let mut out = Vec::new();
    a.allocate(capacities, &TupleFlows(flows), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn single_link_equal_share() {
        let r = max_min_rates(&[9.0], &vec![(vec![0], 1.0, f64::INFINITY, 0); 3]);
        assert!(r.iter().all(|&x| close(x, 3.0)), "{r:?}");
    }

    #[test]
    fn caps_and_weights() {
        // Link 12: flow0 capped at 2, flow1 weight 2, flow2 weight 1.
        // Remaining 10 split 2:1 -> 20/3 and 10/3.
        let f = vec![(vec![0], 1.0, 2.0, 0), (vec![0], 2.0, f64::INFINITY, 0), (vec![0], 1.0, f64::INFINITY, 0)];
        let r = max_min_rates(&[12.0], &f);
        assert!(close(r[0], 2.0) && close(r[1], 20.0 / 3.0) && close(r[2], 10.0 / 3.0), "{r:?}");
    }

    #[test]
    fn priority_takes_precedence() {
        let f = vec![(vec![0, 1], 1.0, f64::INFINITY, 1), (vec![0], 1.0, 4.0, 0)];
        let r = max_min_rates(&[10.0, 3.0], &f);
        // Priority 0 takes 4 of link 0; the low flow is limited by link 1.
        assert!(close(r[1], 4.0) && close(r[0], 3.0), "{r:?}");
    }

    #[test]
    fn zero_capacity_and_zero_cap() {
        let f = vec![(vec![0], 1.0, f64::INFINITY, 0), (vec![1], 1.0, 0.0, 0)];
        let r = max_min_rates(&[0.0, 5.0], &f);
        assert_eq!(r, vec![0.0, 0.0]);
    }
}
