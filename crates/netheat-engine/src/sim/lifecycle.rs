//! What events do to flows: starting (routing, exact shortcuts), completion
//! predictions, completion and cancellation, changes of class or cap,
//! re-binding, and re-routing around links whose capacity drops to 0.

use super::events::{Change, Pred, RebindTo};
use super::repair::EPS;
use super::state::{mix, FlowState, Positions, RouteKind, Status};
use super::Simulation;
use crate::flow::StrandReason;
use crate::hops::Hops;
use crate::maxmin::BN_CAP;
use netheat_core::{LinkId, Routing};

impl Simulation<'_> {
    /// Marks a flow started, routes it and puts it on its links' lists;
    /// returns true if it completed at once (no bytes, or to its own host
    /// through no link: an explicit route that crosses a device link, a
    /// disk say, takes its time).
    pub(super) fn start_flow(&mut self, fi: u32) -> bool {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        f.status = Status::Active;
        f.t_last = now;
        f.left = f.bytes;
        f.rate = 0.0;
        self.hot[fi as usize].rate = 0.0;
        let through_device = matches!(f.kind, RouteKind::Explicit) && !f.path.is_empty();
        if (f.src == f.dst && !through_device) || f.bytes == 0.0 {
            f.status = Status::Done;
            f.finish_s = now;
            f.left = 0.0;
            self.stats.flows_completed += 1;
            return true;
        }
        self.n_active += 1;
        self.route_new(fi);
        self.attach(fi);
        false
    }

    /// Starts a flow. Returns true if it completed at once.
    pub(super) fn activate(&mut self, fi: u32) -> bool {
        if self.start_flow(fi) {
            return true;
        }
        // Exact shortcuts (see module docs).
        let f = &self.flows[fi as usize];
        let short = if f.path.iter().all(|&l| self.link_flows[l as usize].len() == 1) {
            let mut best = (f.cap, BN_CAP);
            for &l in &f.path {
                if self.cap[l as usize] < best.0 {
                    best = (self.cap[l as usize], l);
                }
            }
            Some(best)
        } else if f.cap.is_finite()
            && f.path.iter().all(|&l| {
                let c = self.cap[l as usize];
                f.cap == 0.0 || c - self.rep.lr[l as usize].load - f.cap > EPS * c
            })
        {
            Some((f.cap, BN_CAP))
        } else {
            None
        };
        match short {
            Some((rate, bn)) => {
                self.stats.fast_path += 1;
                self.flows[fi as usize].rate = rate;
                self.flows[fi as usize].bn = bn;
                self.hot[fi as usize].rate = rate;
                self.hot[fi as usize].bn = bn;
                self.predict(fi);
                for h in 0..self.flows[fi as usize].path.len() {
                    let l = self.flows[fi as usize].path[h] as usize;
                    self.set_load(l, self.rep.lr[l].load + rate);
                }
            }
            None => self.seeds.push(fi),
        }
        false
    }

    /// Chooses a starting flow's path (ECMP hash, path index or explicit).
    fn route_new(&mut self, fi: u32) {
        match self.flows[fi as usize].kind {
            RouteKind::Explicit => self.update_strand(fi),
            RouteKind::Ecmp(n) => {
                let r = self.routing.expect("validated");
                let f = &self.flows[fi as usize];
                let n = n as usize;
                let k = self.ecmp_pick(r, f, n);
                self.route_flow_among(fi, k, n);
            }
            RouteKind::Index(k) => self.route_flow(fi, k as usize),
        }
    }

    /// The ECMP draw of flow `f` among its `n` paths.
    fn ecmp_pick(&self, r: &dyn Routing, f: &FlowState, n: usize) -> usize {
        ecmp_draw(r, self.cfg.seed, f.id, f.src, f.dst, n)
    }

    /// Puts a routed flow on path `k`, or if that crosses a failed link, on
    /// the first later path (cyclically) that does not; else strands it on
    /// `k`. The flow must be detached.
    fn route_flow(&mut self, fi: u32, k: usize) {
        let r = self.routing.expect("validated: routed flows have a routing");
        let f = &self.flows[fi as usize];
        let n = r.num_paths(f.src, f.dst);
        self.route_flow_among(fi, k, n);
    }

    /// [`Self::route_flow`] when the flow's number of paths `n` is known.
    fn route_flow_among(&mut self, fi: u32, k: usize, n: usize) {
        let r = self.routing.expect("validated: routed flows have a routing");
        let (src, dst) = (self.flows[fi as usize].src, self.flows[fi as usize].dst);
        let mut buf = std::mem::take(&mut self.path_buf);
        let mut chosen = None;
        for j in 0..n {
            let kk = if j == 0 && k < n { k } else { (k + j) % n };
            r.path(src, dst, kk, &mut buf);
            let num_links = self.cap.len();
            if let Some(&l) = buf.iter().find(|&&l| l as usize >= num_links) {
                panic!("routing returned link {l} but the network has {num_links} links");
            }
            // With no link down, the first path is up (no capacity read).
            if self.down_links == 0 || buf.iter().all(|&l| self.cap[l as usize] > 0.0) {
                chosen = Some(kk);
                break;
            }
        }
        let kk = match chosen {
            Some(kk) => kk,
            None => {
                r.path(src, dst, k, &mut buf);
                k
            }
        };
        let f = &mut self.flows[fi as usize];
        f.path.set(&buf);
        f.path_id = Some(kk as u32);
        self.path_buf = buf;
        self.update_strand(fi);
    }

    fn update_strand(&mut self, fi: u32) {
        // No link down and no flow stranded: the flow is not stranded now
        // (a stranded one would be in the set), and cannot become so.
        if self.down_links == 0 && self.stranded.is_empty() {
            return;
        }
        let f = &mut self.flows[fi as usize];
        let down = f.path.iter().copied().find(|&l| self.cap[l as usize] <= 0.0);
        f.stranded = down.map(|link| match f.kind {
            RouteKind::Explicit => StrandReason::ExplicitLinkDown { link },
            _ => StrandReason::NoPathAvailable { link },
        });
        if f.stranded.is_some() {
            self.stranded.insert(fi);
        } else {
            self.stranded.remove(&fi);
        }
    }

    pub(super) fn predict(&mut self, fi: u32) {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        if f.rate <= 0.0 {
            f.pred = f64::INFINITY;
            return;
        }
        let t = if f.left <= f.done_eps() { now } else { now + f.left * 8.0 / f.rate };
        f.pred = t.max(now);
        // A valid entry at or before the new time stays (see `entry_t`).
        if f.pred < f.entry_t {
            f.ver = f.ver.wrapping_add(1);
            f.entry_t = f.pred;
            self.completions.push(Pred { t: f.pred, flow: fi, ver: f.ver });
            // Stale predictions are dropped lazily at the top; compact when
            // they dominate so the heap stays O(active flows).
            if self.completions.len() > 4 * self.n_active + 1024 {
                let flows = &self.flows;
                self.completions.retain(|p| {
                    let f = &flows[p.flow as usize];
                    f.status == Status::Active && f.ver == p.ver
                });
            }
        }
    }

    /// Marks a running flow finished now and takes it off its links' lists
    /// (finished flows keep no path); returns its path and the rate it had.
    pub(super) fn end_flow(&mut self, fi: u32) -> (Hops, f64) {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        f.status = Status::Done;
        f.finish_s = now;
        f.left = 0.0;
        let rate = f.rate;
        f.rate = 0.0;
        self.hot[fi as usize].rate = 0.0;
        self.stats.flows_completed += 1;
        self.n_active -= 1;
        self.detach(fi);
        self.stranded.remove(&fi);
        let f = &mut self.flows[fi as usize];
        f.pos = Positions::default();
        (std::mem::take(&mut f.path), rate)
    }

    pub(super) fn complete_flow(&mut self, fi: u32) {
        let (path, rate) = self.end_flow(fi);
        if rate > 0.0 {
            for &l in &path {
                let li = l as usize;
                if self.link_flows[li].is_empty() {
                    self.set_load(li, 0.0);
                } else if !self.rep.lr[li].dirty && self.rep.lr[li].slack() {
                    // Clearly slack: no flow is bottlenecked here, so the
                    // departure changes only the load (no event link, no
                    // scan of what may be thousands of flows).
                    self.set_load(li, (self.rep.lr[li].load - rate).max(0.0));
                } else {
                    self.mark_dirty(l);
                }
            }
        }
    }

    pub(super) fn set_capacity_now(&mut self, link: LinkId, cap: f64) {
        let old = self.cap[link as usize];
        self.cap[link as usize] = cap;
        self.rep.lr[link as usize].cap = cap;
        self.mark_dirty(link);
        if cap <= 0.0 && old > 0.0 {
            self.down_links += 1;
            let on: Vec<u32> = self.link_flows[link as usize].iter().map(|e| e.0).collect();
            for fi in on {
                match self.flows[fi as usize].kind {
                    RouteKind::Explicit => self.update_strand(fi),
                    _ => self.reroute(fi),
                }
            }
        } else if cap > 0.0 && old <= 0.0 {
            self.down_links -= 1;
            let list: Vec<u32> = self.stranded.iter().copied().collect();
            for fi in list {
                match self.flows[fi as usize].kind {
                    RouteKind::Explicit => self.update_strand(fi),
                    _ => self.reroute(fi),
                }
            }
        }
    }

    fn reroute(&mut self, fi: u32) {
        let old = self.flows[fi as usize].path_id;
        let k = old.unwrap_or(0) as usize;
        self.move_flow(fi, |s| s.route_flow(fi, k));
        if self.flows[fi as usize].path_id != old {
            self.stats.reroutes += 1;
        }
    }

    fn move_flow(&mut self, fi: u32, place: impl FnOnce(&mut Self)) {
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.mark_dirty(l);
        }
        self.detach(fi);
        place(self);
        self.attach(fi);
        // The new links' loads do not include the flow's current rate: they
        // must be scanned in full, not summarised from their loads.
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.mark_dirty(l);
        }
        self.seeds.push(fi);
    }

    pub(super) fn change_now(&mut self, fi: u32, change: Change) {
        if let Change::Cancel = change {
            return self.cancel_now(fi);
        }
        let set = |s: &mut Self| {
            let f = &mut s.flows[fi as usize];
            match change {
                Change::Priority(p) => {
                    f.prio = p;
                    s.hot[fi as usize].prio = p;
                }
                Change::Cap(c) => f.cap = c,
                Change::Cancel => unreachable!("handled above"),
            }
        };
        match self.flows[fi as usize].status {
            Status::Done | Status::Free => {}
            // Not arrived yet: it arrives with the new parameters.
            Status::Pending => set(self),
            // Same path: the flow only seeds a local repair. Its links are
            // not event links, so slack ones get light summaries (their
            // loads include the flow's current rate, which the region
            // subtracts); a class or cap matters only on saturated links,
            // which are scanned in full.
            Status::Active => {
                set(self);
                self.seeds.push(fi);
            }
        }
    }

    /// Stops a flow now: off its links (the rest is repaired), never
    /// completes, records the bytes it delivered.
    fn cancel_now(&mut self, fi: u32) {
        let now = self.now;
        match self.flows[fi as usize].status {
            Status::Done | Status::Free => {}
            Status::Pending => {
                let f = &mut self.flows[fi as usize];
                f.status = Status::Done;
                f.cancelled = 0.0;
            }
            Status::Active => {
                let f = &self.flows[fi as usize];
                let left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
                let sent = f.bytes - left;
                self.complete_flow(fi);
                self.stats.flows_completed -= 1;
                let f = &mut self.flows[fi as usize];
                f.finish_s = f64::NAN;
                f.cancelled = sent;
            }
        }
    }

    pub(super) fn rebind_now(&mut self, fi: u32, to: RebindTo) {
        if self.flows[fi as usize].status != Status::Active {
            return; // finished in the same instant: nothing to move
        }
        match to {
            RebindTo::Path(k) => {
                self.flows[fi as usize].kind = RouteKind::Index(k as u32);
                self.move_flow(fi, |s| s.route_flow(fi, k));
            }
            RebindTo::Explicit(p) => self.move_flow(fi, |s| {
                let f = &mut s.flows[fi as usize];
                f.kind = RouteKind::Explicit;
                f.path = Hops::from(p);
                f.path_id = None;
                s.update_strand(fi);
            }),
        }
    }
}

/// The path index ECMP gives flow `id` from `src` to `dst` among its `n`
/// paths under the engine seed `seed`: a hash of the four, weighted by the
/// routing's `path_weight`. A caller that builds an explicit route from
/// the routed one (a flow that also crosses a disk, say) draws the same
/// path the engine would.
pub fn ecmp_draw(
    r: &dyn Routing,
    seed: u64,
    id: u64,
    src: netheat_core::HostId,
    dst: netheat_core::HostId,
    n: usize,
) -> usize {
    if n <= 1 {
        // One path (or none: a flow to its own host): no draw to make.
        return 0;
    }
    let h = mix(seed ^ mix(id ^ mix(((src as u64) << 32) | dst as u64)));
    let u = (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let total: f64 = (0..n).map(|k| r.path_weight(src, dst, k)).sum();
    let mut x = u * total;
    for k in 0..n {
        let w = r.path_weight(src, dst, k);
        if x < w {
            return k;
        }
        x -= w;
    }
    n - 1
}
