//! Steps 1, 3 and 5 of the local repair (see the module docs): growing the
//! region, allocating it, widening dense cascades and falling back to the
//! whole connected component; applying the new rates; and the invariant
//! check against a full recomputation.

use super::boundary::ClassStat;
use super::links::LinkRep;
use super::state::{FlowState, Status};
use super::Simulation;
use crate::maxmin::{max_min_rates, FlowSet};
use netheat_core::LinkId;
use std::collections::HashMap;

/// Relative tolerance of the bottleneck conditions of the local repair: a
/// link is saturated when its free capacity is at most `EPS·c`, and a flow is
/// maximal on it when `r + EPS·c >= w·(max normalised rate on the link)`.
pub(super) const EPS: f64 = 1e-11;
/// A link whose load is below `1 - LIGHT_SLACK` of its capacity is slack
/// enough to be summarised from its load (far above the saturation
/// tolerance `EPS`).
pub(super) const LIGHT_SLACK: f64 = 1e-6;
/// Regions of at most this many flows are never widened nor replaced by a
/// whole-component recomputation.
const FALLBACK_MIN: usize = 64;
/// A region above `FALLBACK_MIN` flows and `1/WIDEN_DIV` of the active flows
/// is widened by level (see [`Simulation::widen`]).
const WIDEN_DIV: usize = 16;

/// Scratch space of the local repair, reused across events.
#[derive(Default, Debug)]
pub(super) struct Repair {
    /// The region's flows.
    pub(super) reg: Vec<u32>,
    /// Links touched by the region or by the events (T).
    pub(super) tlinks: Vec<u32>,
    /// Links whose outside summary must be rebuilt.
    pub(super) stale: Vec<u32>,
    /// Per-link repair state, one struct per link so a repair touching a
    /// link pays one cache miss, not one per field.
    pub(super) lr: Vec<LinkRep>,
    pub(super) cls: Vec<ClassStat>,
    /// Capacities reduced by the load of outside flows.
    pub(super) rcap: Vec<f64>,
    pub(super) viol: Vec<u32>,
    pub(super) viol_epoch: u32,
    pub(super) wl_epoch: u32,
    /// Class -> position in the segment being scanned (links with many
    /// classes only).
    pub(super) cls_idx: HashMap<i32, u32>,
}

/// The component's flows copied into contiguous arrays while the BFS visits
/// them, so the allocator streams through memory instead of chasing each
/// flow's state and path allocation several times.
#[derive(Default, Debug)]
pub(super) struct Packed {
    off: Vec<u32>,
    links: Vec<LinkId>,
    weight: Vec<f64>,
    cap: Vec<f64>,
    prio: Vec<i32>,
}

impl Packed {
    fn clear(&mut self) {
        self.off.clear();
        self.off.push(0);
        self.links.clear();
        self.weight.clear();
        self.cap.clear();
        self.prio.clear();
    }
    #[inline]
    fn push(&mut self, f: &FlowState) {
        self.push_links(f, |_| true);
    }
    /// Like [`Packed::push`], with only the links of `f` that `keep` selects.
    #[inline]
    fn push_links(&mut self, f: &FlowState, keep: impl Fn(LinkId) -> bool) {
        self.links.extend(f.path.iter().copied().filter(|&l| keep(l)));
        self.off.push(self.links.len() as u32);
        self.weight.push(f.weight);
        self.cap.push(f.cap);
        self.prio.push(f.prio);
    }
}

impl FlowSet for Packed {
    fn len(&self) -> usize {
        self.weight.len()
    }
    fn path(&self, i: usize) -> &[LinkId] {
        &self.links[self.off[i] as usize..self.off[i + 1] as usize]
    }
    fn weight(&self, i: usize) -> f64 {
        self.weight[i]
    }
    fn cap(&self, i: usize) -> f64 {
        self.cap[i]
    }
    fn priority(&self, i: usize) -> i32 {
        self.prio[i]
    }
}

impl Simulation<'_> {
    /// Reallocates after the events of one instant by exact local repair
    /// (see module docs), falling back to the connected component.
    pub(super) fn repair(&mut self) {
        if self.full_repair {
            // Back from dense mode: reallocate everything once.
            self.full_repair = false;
            for k in 0..self.dirty.len() {
                let l = self.dirty[k] as usize;
                self.rep.lr[l].dirty = false;
            }
            self.dirty.clear();
            self.seeds.clear();
            let links: Vec<u32> =
                (0..self.cap.len() as u32).filter(|&l| !self.link_flows[l as usize].is_empty()).collect();
            self.recompute_component(&links);
            return;
        }
        self.last_region = 0;
        if self.dirty.is_empty() && self.seeds.is_empty() {
            return;
        }
        let e = self.next_epoch();
        self.rep.reg.clear();
        self.rep.tlinks.clear();
        self.rep.cls.clear();
        for k in 0..self.dirty.len() {
            let l = self.dirty[k];
            self.rep.lr[l as usize].dirty = false;
            self.rep.lr[l as usize].chg = e;
            self.rep.lr[l as usize].full = e;
            self.touch_link(l, e);
        }
        self.dirty.clear();
        for k in 0..self.seeds.len() {
            let fi = self.seeds[k];
            if self.flows[fi as usize].status == Status::Active && self.hot[fi as usize].seen != e {
                self.reg_add(fi, e);
                for &l in &self.flows[fi as usize].path {
                    self.rep.lr[l as usize].chg = e;
                }
            }
        }
        self.seeds.clear();
        let mut rounds = 0u64;
        let mut widened = false;
        let mut pf_done = false;
        loop {
            rounds += 1;
            for k in 0..self.rep.stale.len() {
                let l = self.rep.stale[k];
                if self.rep.lr[l as usize].stale {
                    if self.can_be_light(l, e) {
                        self.light_link(l, e);
                    } else {
                        self.scan_link(l, e, None);
                    }
                }
            }
            self.rep.stale.clear();
            // Reset the region part of every summary.
            for k in 0..self.rep.tlinks.len() {
                let l = self.rep.tlinks[k] as usize;
                let (s0, n) = self.rep.lr[l].seg;
                let mut out = 0.0;
                for st in &mut self.rep.cls[s0 as usize..(s0 + n) as usize] {
                    st.r_load = 0.0;
                    st.r_maxn = 0.0;
                    st.r_thr = f64::INFINITY;
                    out += st.out_load;
                }
                self.rep.rcap[l] = (self.cap[l] - out).max(0.0);
            }
            if !self.rep.reg.is_empty() {
                // Light links leave the allocation: it cannot be bound by
                // them (the boundary check turns one the new rates would
                // fill into a full link, and the round repeats), and a
                // link that does not saturate does not change progressive
                // filling. A flow with only light links keeps them all, so
                // that it still gets a finite rate.
                self.packed.clear();
                for k in 0..self.rep.reg.len() {
                    let f = &self.flows[self.rep.reg[k] as usize];
                    let lr = &self.rep.lr;
                    if f.path.iter().any(|&l| lr[l as usize].light != e) {
                        self.packed.push_links(f, |l| lr[l as usize].light != e);
                    } else {
                        self.packed.push(f);
                    }
                }
                self.alloc.allocate(&self.rep.rcap, &self.packed, &mut self.new_rates);
                pf_done = true;
                for k in 0..self.rep.reg.len() {
                    let r = self.new_rates[k];
                    let w = self.packed.weight[k];
                    let p = self.packed.prio[k];
                    let bn = self.alloc.bn[k];
                    for &l in &self.flows[self.rep.reg[k] as usize].path {
                        let (s0, n) = self.rep.lr[l as usize].seg;
                        let seg = &mut self.rep.cls[s0 as usize..(s0 + n) as usize];
                        let st = if self.rep.lr[l as usize].light == e {
                            &mut seg[0]
                        } else {
                            // Segments are sorted by class once scanned.
                            let k = seg.binary_search_by_key(&p, |x| x.prio).expect("class scanned");
                            &mut seg[k]
                        };
                        st.r_load += r;
                        st.r_maxn = st.r_maxn.max(r / w);
                        if bn == l {
                            st.r_thr = st.r_thr.min((r + EPS * self.cap[l as usize]) / w);
                        }
                    }
                }
            }
            self.rep.viol.clear();
            if self.rep.viol_epoch == u32::MAX {
                self.hot.iter_mut().for_each(|h| h.viol = 0);
                self.rep.viol_epoch = 0;
            }
            self.rep.viol_epoch += 1;
            let mut again = false;
            for k in 0..self.rep.tlinks.len() {
                let l = self.rep.tlinks[k];
                again |= self.check_boundary(l, e);
            }
            if self.rep.viol.is_empty() && !again {
                break;
            }
            for k in 0..self.rep.viol.len() {
                let g = self.rep.viol[k];
                self.reg_add(g, e);
            }
            let big = self.rep.reg.len() > FALLBACK_MIN;
            if big && !widened && WIDEN_DIV * self.rep.reg.len() > self.n_active {
                // A dense cascade: rather than growing hop by hop, take in
                // at once every flow it can reach at or above its lowest
                // level (see module docs). Only a guess: the boundary check
                // still decides.
                widened = true;
                self.stats.widenings += 1;
                let npf = if pf_done { self.new_rates.len() } else { 0 };
                self.widen(e, npf);
            }
            if big && 4 * self.rep.reg.len() > 3 * self.n_active {
                self.stats.repair_rounds += rounds;
                self.stats.max_repair_rounds = self.stats.max_repair_rounds.max(rounds);
                self.stats.fallbacks += 1;
                for k in 0..self.rep.stale.len() {
                    let l = self.rep.stale[k];
                    self.rep.lr[l as usize].stale = false;
                }
                self.rep.stale.clear();
                let links = std::mem::take(&mut self.rep.tlinks);
                self.recompute_component(&links);
                self.rep.tlinks = links;
                return;
            }
        }
        self.stats.repair_rounds += rounds;
        self.stats.max_repair_rounds = self.stats.max_repair_rounds.max(rounds);
        let n = self.rep.reg.len() as u64;
        self.last_region = self.rep.reg.len();
        if n > 0 {
            self.stats.recomputations += 1;
            self.stats.repairs += 1;
            self.stats.region_flows += n;
            self.stats.max_region_flows = self.stats.max_region_flows.max(n);
        }
        for k in 0..self.rep.reg.len() {
            let fi = self.rep.reg[k];
            if self.take_rate(fi, k) {
                for &l in &self.flows[fi as usize].path {
                    self.rep.lr[l as usize].chg = e;
                }
            }
        }
        // Re-sum the loads of links whose flows or rates changed (the others
        // keep their exact previous sums).
        for k in 0..self.rep.tlinks.len() {
            let l = self.rep.tlinks[k] as usize;
            if self.rep.lr[l].chg != e {
                continue;
            }
            let (s0, n) = self.rep.lr[l].seg;
            let load: f64 = self.rep.cls[s0 as usize..(s0 + n) as usize].iter().map(|x| x.out_load + x.r_load).sum();
            self.set_load(l, load);
        }
        if self.cfg.check_invariants {
            if let Err(msg) = self.verify() {
                panic!("invariant violated at t={}: {msg}", self.now);
            }
        }
    }

    /// Adds to the region every flow reachable from it through flows whose
    /// normalised rate is at least the region's lowest (old or new, for the
    /// region's highest priority class `p`), and all reachable flows of
    /// lower priority. `npf` region flows have new rates in `new_rates`.
    fn widen(&mut self, e: u32, npf: usize) {
        let mut p = i32::MAX;
        for &fi in &self.rep.reg {
            p = p.min(self.flows[fi as usize].prio);
        }
        let mut x = f64::INFINITY;
        for (k, &fi) in self.rep.reg.iter().enumerate() {
            let f = &self.flows[fi as usize];
            if f.prio != p {
                continue;
            }
            if f.rate > 0.0 || k >= npf {
                x = x.min(f.rate / f.weight);
            }
            if k < npf {
                x = x.min(self.new_rates[k] / f.weight);
            }
        }
        let x = x * (1.0 - 1e-9);
        if self.rep.wl_epoch == u32::MAX {
            self.rep.lr.iter_mut().for_each(|x| x.wl_seen = 0);
            self.rep.wl_epoch = 0;
        }
        self.rep.wl_epoch += 1;
        let mut qi = 0;
        while qi < self.rep.reg.len() {
            let fi = self.rep.reg[qi];
            qi += 1;
            for h in 0..self.flows[fi as usize].path.len() {
                let l = self.flows[fi as usize].path[h] as usize;
                if self.rep.lr[l].wl_seen == self.rep.wl_epoch {
                    continue;
                }
                self.rep.lr[l].wl_seen = self.rep.wl_epoch;
                // The criterion does not depend on the link, so once `l` is
                // visited its flows are decided and its summary is final.
                self.scan_link(l as LinkId, e, Some((p, x)));
            }
        }
    }

    /// Gives flow `fi` the rate and bottleneck the last allocation computed
    /// for its `k`-th flow (`new_rates[k]`, `alloc.bn[k]`). If the rate
    /// changes, the flow's progress is settled at the old rate first, and
    /// its completion predicted at the new one. Returns whether the rate
    /// changed.
    // Always inlined: the two loops that call it had this code inline.
    #[inline(always)]
    fn take_rate(&mut self, fi: u32, k: usize) -> bool {
        let now = self.now;
        let nr = self.new_rates[k];
        let f = &mut self.flows[fi as usize];
        f.bn = self.alloc.bn[k];
        self.hot[fi as usize].bn = f.bn;
        if nr == f.rate {
            return false;
        }
        f.left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
        f.t_last = now;
        f.rate = nr;
        self.hot[fi as usize].rate = nr;
        self.stats.rate_changes += 1;
        self.predict(fi);
        true
    }

    /// Reallocates the whole connected component of `links` from scratch.
    fn recompute_component(&mut self, links: &[u32]) {
        let e = self.next_epoch();
        self.comp_flows.clear();
        self.comp_links.clear();
        for &l in links {
            if self.rep.lr[l as usize].seen != e {
                self.rep.lr[l as usize].seen = e;
                self.comp_links.push(l);
            }
        }
        // BFS over the flow/link bipartite graph.
        self.packed.clear();
        let mut qi = 0;
        while qi < self.comp_links.len() {
            let l = self.comp_links[qi] as usize;
            qi += 1;
            for &(fi, _) in &self.link_flows[l] {
                if self.hot[fi as usize].seen != e {
                    self.hot[fi as usize].seen = e;
                    self.comp_flows.push(fi);
                    self.packed.push(&self.flows[fi as usize]);
                    for &m in &self.flows[fi as usize].path {
                        if self.rep.lr[m as usize].seen != e {
                            self.rep.lr[m as usize].seen = e;
                            self.comp_links.push(m);
                        }
                    }
                }
            }
        }
        self.last_region = self.comp_flows.len();
        if !self.comp_flows.is_empty() {
            self.stats.recomputations += 1;
            let n = self.comp_flows.len() as u64;
            self.stats.component_flows += n;
            self.stats.max_component_flows = self.stats.max_component_flows.max(n);
            self.alloc.allocate(&self.cap, &self.packed, &mut self.new_rates);
            for k in 0..self.comp_flows.len() {
                let fi = self.comp_flows[k];
                self.take_rate(fi, k);
            }
        }
        // Link loads from the packed paths: no second pass over flow states.
        for &l in &self.comp_links {
            self.link_acc[l as usize] = 0.0;
        }
        for (k, &r) in self.new_rates.iter().enumerate().take(self.comp_flows.len()) {
            for &l in self.packed.path(k) {
                self.link_acc[l as usize] += r;
            }
        }
        for k in 0..self.comp_links.len() {
            let l = self.comp_links[k] as usize;
            self.set_load(l, self.link_acc[l]);
        }
        if self.cfg.check_invariants {
            if let Err(msg) = self.verify() {
                panic!("invariant violated at t={}: {msg}", self.now);
            }
        }
    }

    fn next_epoch(&mut self) -> u32 {
        if self.epoch == u32::MAX {
            self.rep.lr.iter_mut().for_each(|x| x.seen = 0);
            self.hot.iter_mut().for_each(|h| h.seen = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.epoch
    }

    /// Puts an active flow into the region (epoch `e`).
    pub(super) fn reg_add(&mut self, fi: u32, e: u32) {
        self.hot[fi as usize].seen = e;
        self.rep.reg.push(fi);
        let rate = self.hot[fi as usize].rate;
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.touch_link(l, e);
            self.mark_stale(l);
            let li = l as usize;
            if self.rep.lr[li].ro_epoch != e {
                self.rep.lr[li].ro_epoch = e;
                self.rep.lr[li].reg_old = 0.0;
            }
            self.rep.lr[li].reg_old += rate;
        }
    }

    /// Checks the whole current allocation against a from-scratch max-min
    /// computation and the capacity limits.
    pub(super) fn verify(&self) -> Result<(), String> {
        let active: Vec<usize> = (0..self.flows.len()).filter(|&i| self.flows[i].status == Status::Active).collect();
        let spec: Vec<(Vec<LinkId>, f64, f64, i32)> = active
            .iter()
            .map(|&i| {
                let f = &self.flows[i];
                (f.path.to_vec(), f.weight, f.cap, f.prio)
            })
            .collect();
        let expect = max_min_rates(&self.cap, &spec);
        let mut sum = vec![0.0; self.cap.len()];
        for (k, &i) in active.iter().enumerate() {
            let f = &self.flows[i];
            let scale = f.path.iter().map(|&l| self.cap[l as usize]).fold(1.0, f64::max);
            if (f.rate - expect[k]).abs() > 1e-9 * scale {
                return Err(format!("flow {} has rate {} but a full recomputation gives {}", f.id, f.rate, expect[k]));
            }
            if f.rate < 0.0 {
                return Err(format!("flow {} has negative rate {}", f.id, f.rate));
            }
            for &l in &f.path {
                sum[l as usize] += f.rate;
            }
            if f.rate == 0.0 && f.cap > 0.0 {
                // Must be blocked by a failed link or by strictly higher
                // priority traffic saturating a link of its path.
                let blocked = f.path.iter().any(|&l| {
                    let c = self.cap[l as usize];
                    let hi: f64 = self.link_flows[l as usize]
                        .iter()
                        .map(|&(g, _)| &self.flows[g as usize])
                        .filter(|g| g.prio < f.prio)
                        .map(|g| g.rate)
                        .sum();
                    c <= 0.0 || hi >= c * (1.0 - 1e-9)
                });
                if !blocked {
                    return Err(format!("flow {} starves without a reason", f.id));
                }
            }
        }
        for (l, &s) in sum.iter().enumerate() {
            if s > self.cap[l] * (1.0 + 1e-9) + 1e-9 {
                return Err(format!("link {l} carries {s} > capacity {}", self.cap[l]));
            }
            if (s - self.rep.lr[l].load).abs() > 1e-9 * self.cap[l].max(1.0) {
                return Err(format!("link {l} load {} differs from flow sum {s}", self.rep.lr[l].load));
            }
        }
        Ok(())
    }
}
