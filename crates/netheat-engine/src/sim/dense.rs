//! Dense mode: the event loop for stretches where one event moves a large
//! share of all rates (many flows sharing many saturated links, e.g. an
//! incast or a batch of thousands of flows started at once).
//!
//! There the local repair pays for every flow whose rate changes (about
//! 1,000 of 5,000 per completion in the 10,000-flow benchmark), and so would
//! any method that keeps one rate per flow. Dense mode keeps one rate per
//! *group* of flows instead:
//!
//! * **Heavy and light links.** A link is *light* while its load stays
//!   below `1 - LIGHT_SLACK` of its capacity: no flow can be bottlenecked on
//!   it, so it does not change the max-min allocation and is left out of it.
//!   Its exact load is still kept, from each flow's rate change, and the
//!   moment the new rates would bring it to that level it becomes *heavy*
//!   (promotion) and the allocation is redone. All other links are heavy.
//! * **Classes.** Flows with the same heavy links, priority class and
//!   normalised cap (`cap / weight`) are interchangeable for weighted max-min
//!   fairness: they get the same normalised rate. A class is allocated as one
//!   flow of weight `W` (the sum of its members' weights).
//! * **Groups and virtual clocks.** Every class is frozen by one heavy link
//!   (or by its cap) in progressive filling, and all classes frozen by link
//!   `l` share `l`'s level. Each group keeps a virtual clock `V` (normalised
//!   bits served so far); a class's service is `V + off`, and a member
//!   finishes when the service reaches its threshold (its start service plus
//!   `bytes · 8 / weight`). A rate change is then one update per *group*, and
//!   a class moving to another group changes its offset only.
//!
//! Each instant runs progressive filling over the classes (not the flows),
//! so its cost is the number of (class, heavy link) pairs, independent of how
//! many flow rates change. The allocation is the exact weighted, capped,
//! prioritised max-min one: the classes partition the flows by everything
//! the allocation depends on, and every light link is checked against its
//! exact new load.
//!
//! The engine enters dense mode after a local repair whose region covered a
//! quarter of at least [`DENSE_MIN_ACTIVE`] active flows, when the classes
//! of a sample of [`SAMPLE`] active flows say it would pay, and leaves it
//! (handing every flow its rate, bottleneck and remaining bytes, then
//! recomputing the whole allocation once) as soon as anything other than an
//! arrival, a completion, a timer or a group callback happens: a capacity
//! change, a re-bind, a priority, cap or cancellation event. (Timers and
//! callbacks change no rate themselves; what a controller does in them
//! arrives as such events, flows it adds as arrivals.) After a short stay
//! it waits for twice as many dense repairs before entering again, so a
//! controller that changes priorities every few events does not make it
//! switch back and forth. It also leaves when it does not pay: where
//! classes barely aggregate (every flow bottlenecked on its own links), an
//! instant costs about the number of flows while a local repair would pay
//! only for the few rates that change, so when its mean work per instant
//! exceeds [`LOCAL_PER_CHANGE`] times its mean number of changed rates it
//! hands the (exact) allocation back to the local repair.

use super::repair::LIGHT_SLACK;
use super::state::{mix, Status};
use super::Simulation;
use crate::hops::Hops;
use crate::maxmin::{BN_CAP, BN_NONE};
use crate::order::heap_order;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

const NONE: u32 = u32::MAX;

/// Fewest active flows for which dense mode is entered (below, the local
/// repair is cheap whatever the cascade).
const DENSE_MIN_ACTIVE: usize = 1000;
/// On entry, a link at or above this utilisation is heavy (the margin keeps
/// links that are nearly full from being promoted at the next event).
const HEAVY_AT: f64 = 0.9;
/// A stay in dense mode shorter than this many instants doubles the number
/// of dense repairs needed to enter again.
const SHORT_STAY: u64 = 64;
/// A local repair pays about this many times more per changed rate than
/// dense mode per (class, link) pair (measured on the engine benchmarks:
/// ~250 ns against ~25 ns). When dense mode's mean work per instant exceeds
/// this times its mean number of changed rates (plus a constant), classes
/// barely aggregate and the engine goes back to local repairs.
const LOCAL_PER_CHANGE: f64 = 8.0;
/// Active flows sampled to estimate the number of classes before entering.
const SAMPLE: usize = 4096;
/// Instants before dense mode judges its own cost.
const JUDGE_AFTER: u64 = 4;

/// A member of a class: its finishing service (normalised bits) and index.
#[derive(Clone, Copy, Debug)]
struct Mem {
    thr: f64,
    fi: u32,
}
// Reversed: `BinaryHeap` pops the smallest threshold first.
heap_order!(Mem, |a, b| b.thr.total_cmp(&a.thr).then(b.fi.cmp(&a.fi)));

/// A saturation level in progressive filling: a link, or (ids from the
/// number of links on) a class's cap.
#[derive(Clone, Copy, Debug)]
struct LKey {
    k: f64,
    id: u32,
}
heap_order!(LKey, |a, b| b.k.total_cmp(&a.k).then(b.id.cmp(&a.id)));

// Laid out by hand: every instant's filling and group pass read the first
// 96 bytes of every class; the rest changes only when members come and go.
#[derive(Debug, Default)]
#[repr(C)]
struct Class {
    frozen: u32,
    prio: i32,
    group: u32,
    new_group: u32,
    /// Normalised cap (`cap / weight`), infinite without one.
    kappa: f64,
    /// Sum of the members' weights.
    w: f64,
    level: f64,
    new_level: f64,
    /// Heavy links, sorted (inline: filling reads them for every class).
    links: Hops,
    /// Service = group clock + `off`.
    off: f64,
    n: u32,
    gpos: u32,
    /// The members' light links with their weights, each member's entries
    /// contiguous; a finished member's weights are zeroed, and the vector is
    /// rebuilt when such dead entries outnumber the live ones.
    light: Vec<(u32, u32, f64)>,
    dead: u32,
    live_pos: u32,
    mem: BinaryHeap<Mem>,
    key: Vec<u32>,
    /// Position in each link's class list.
    lpos: Vec<u32>,
}

#[derive(Debug, Default, Clone)]
struct Group {
    /// The link whose saturation sets the level, or `NONE` for a class's
    /// cap group.
    link: u32,
    level: f64,
    /// Virtual clock at time `t`.
    v: f64,
    t: f64,
    classes: Vec<u32>,
    /// Time of its next completion (infinite: none, or not predicted since
    /// its classes, members or level changed).
    next: f64,
    /// Position in `Dense::timed` (`NONE` when `next` is infinite).
    tpos: u32,
    /// Listed in `Dense::due`.
    in_due: bool,
    min_cls: u32,
    /// Smallest `threshold - offset` over the classes (in clock units, so
    /// a level change leaves it valid), when `min_ok`.
    min_key: f64,
    min_ok: bool,
    mark: u32,
}

/// State of dense mode (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Dense {
    nl: usize,
    heavy: Vec<bool>,
    link_cls: Vec<Vec<u32>>,
    cls: Vec<Class>,
    free: Vec<u32>,
    live: Vec<u32>,
    /// Lookup only (never iterated), so results do not depend on hashing.
    index: HashMap<Vec<u32>, u32>,
    prio_count: BTreeMap<i32, u32>,
    /// Groups: one per (link, priority class) that froze classes, and one
    /// per class slot for its cap.
    grp: Vec<Group>,
    /// Per link, its groups by priority class.
    lgrp: Vec<Vec<(i32, u32)>>,
    /// Per class slot, its cap group.
    cap_g: Vec<u32>,
    /// Groups with a finite next completion time.
    timed: Vec<u32>,
    /// The groups whose next completion was the earliest, `due_t`, when
    /// `timed` was last scanned, by decreasing index; entries whose time
    /// moved on since are dropped when they reach the end.
    due: Vec<u32>,
    due_t: f64,
    /// `due` holds every group due at `due_t`, and none is due earlier.
    due_ok: bool,
    /// Per flow: class, finishing service, first light entry.
    fc: Vec<u32>,
    fthr: Vec<f64>,
    flight: Vec<u32>,
    epoch: u32,
    lstamp: Vec<u32>,
    pstamp: Vec<u32>,
    pepoch: u32,
    rem: Vec<f64>,
    wsum: Vec<f64>,
    ucnt: Vec<u32>,
    flinks: Vec<u32>,
    seglinks: Vec<u32>,
    heap: BinaryHeap<LKey>,
    order: Vec<u32>,
    dl: Vec<f64>,
    dstamp: Vec<u32>,
    dtouched: Vec<u32>,
    gepoch: u32,
    gdirty: Vec<u32>,
    changed: Vec<u32>,
    /// Light links whose load a flow joining a class raised this instant
    /// (checked even when the class's level does not change).
    joined: Vec<u32>,
    /// (class, heavy link) pairs in the last filling.
    incidences: usize,
    /// Running means of dense mode's work per instant and of the rates it
    /// changed (what a local repair would at least have paid).
    work_avg: f64,
    chg_avg: f64,
    instants: u64,
}

/// Entry bookkeeping kept across stays in dense mode.
#[derive(Debug, Clone, Copy)]
pub(super) struct DenseCtl {
    /// Consecutive local repairs dense enough to enter.
    pub(super) streak: u64,
    /// Dense repairs needed before entering.
    pub(super) need: u64,
}

impl Default for DenseCtl {
    fn default() -> Self {
        Self { streak: 0, need: 1 }
    }
}

impl Dense {
    fn new(nl: usize) -> Self {
        Self {
            nl,
            heavy: vec![false; nl],
            link_cls: vec![Vec::new(); nl],
            lgrp: vec![Vec::new(); nl],
            lstamp: vec![0; nl],
            pstamp: vec![0; nl],
            rem: vec![0.0; nl],
            wsum: vec![0.0; nl],
            ucnt: vec![0; nl],
            dl: vec![0.0; nl],
            dstamp: vec![0; nl],
            ..Self::default()
        }
    }

    /// Per-flow arrays cover flow indices `0..n`.
    fn grow_flows(&mut self, n: usize) {
        if self.fc.len() < n {
            self.fc.resize(n, NONE);
            self.fthr.resize(n, 0.0);
            self.flight.resize(n, 0);
        }
    }

    /// Virtual clock of group `g` at `now`.
    fn gv(&self, g: u32, now: f64) -> f64 {
        let gr = &self.grp[g as usize];
        gr.v + gr.level * (now - gr.t)
    }

    /// Brings group `g`'s clock to `now` (before its level changes).
    fn advance(&mut self, g: u32, now: f64) {
        let v = self.gv(g, now);
        let gr = &mut self.grp[g as usize];
        gr.v = v;
        gr.t = now;
    }

    /// Service of class `c` at `now`.
    fn service(&self, c: u32, now: f64) -> f64 {
        let cl = &self.cls[c as usize];
        if cl.group == NONE {
            cl.off
        } else {
            self.gv(cl.group, now) + cl.off
        }
    }

    /// The group of classes that link `l` freezes in priority class `p`.
    fn link_group(&mut self, l: u32, p: i32) -> u32 {
        if let Some(&(_, g)) = self.lgrp[l as usize].iter().find(|e| e.0 == p) {
            return g;
        }
        let g = self.grp.len() as u32;
        self.grp.push(Group::new(l));
        self.lgrp[l as usize].push((p, g));
        g
    }

    /// Like [`Dense::mark_group`], when the group's classes or their
    /// members changed (its earliest finishing member must be found again).
    fn touch_group(&mut self, g: u32) {
        if g != NONE {
            self.grp[g as usize].min_ok = false;
            self.mark_group(g);
        }
    }

    /// Invalidates group `g`'s prediction (its classes, their members or
    /// its level changed) and queues it for a new one.
    fn mark_group(&mut self, g: u32) {
        if g == NONE {
            return;
        }
        self.set_next(g, f64::INFINITY);
        let gr = &mut self.grp[g as usize];
        if gr.mark != self.gepoch {
            gr.mark = self.gepoch;
            self.gdirty.push(g);
        }
    }

    /// The class of key (priority, normalised cap, heavy links), created
    /// empty (no group, level 0) if it does not exist.
    fn class_of(&mut self, prio: i32, kappa: f64, heavy_links: &[u32]) -> u32 {
        let kb = kappa.to_bits();
        let mut key = Vec::with_capacity(3 + heavy_links.len());
        key.extend_from_slice(&[prio as u32, kb as u32, (kb >> 32) as u32]);
        key.extend_from_slice(heavy_links);
        key[3..].sort_unstable();
        if let Some(&c) = self.index.get(&key) {
            return c;
        }
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                self.cls.push(Class::default());
                self.cap_g.push(self.grp.len() as u32);
                self.grp.push(Group::new(NONE));
                (self.cls.len() - 1) as u32
            }
        };
        let links = Hops::from(&key[3..]);
        let mut lpos = Vec::with_capacity(links.len());
        for &l in &links {
            lpos.push(self.link_cls[l as usize].len() as u32);
            self.link_cls[l as usize].push(c);
        }
        *self.prio_count.entry(prio).or_insert(0) += 1;
        self.index.insert(key.clone(), c);
        let live_pos = self.live.len() as u32;
        self.live.push(c);
        let cg = self.cap_g[c as usize] as usize;
        self.set_next(cg as u32, f64::INFINITY);
        self.grp[cg] = Group::new(NONE);
        self.cls[c as usize] =
            Class { key, prio, kappa, links, lpos, group: NONE, new_group: NONE, live_pos, ..Class::default() };
        c
    }

    /// Removes an empty class.
    fn drop_class(&mut self, c: u32) {
        let cl = std::mem::take(&mut self.cls[c as usize]);
        for (i, &l) in cl.links.iter().enumerate() {
            let list = &mut self.link_cls[l as usize];
            let p = cl.lpos[i] as usize;
            list.swap_remove(p);
            if let Some(&moved) = list.get(p) {
                let mc = &mut self.cls[moved as usize];
                let k = mc.links.iter().position(|&x| x == l).expect("class lists its links");
                mc.lpos[k] = p as u32;
            }
        }
        if cl.group != NONE {
            self.leave_group(cl.group, cl.gpos);
        }
        let p = cl.live_pos as usize;
        self.live.swap_remove(p);
        if let Some(&moved) = self.live.get(p) {
            self.cls[moved as usize].live_pos = p as u32;
        }
        if let Some(n) = self.prio_count.get_mut(&cl.prio) {
            *n -= 1;
            if *n == 0 {
                self.prio_count.remove(&cl.prio);
            }
        }
        self.index.remove(&cl.key);
        self.free.push(c);
    }

    /// Removes the class at position `gpos` of group `g`'s list.
    fn leave_group(&mut self, g: u32, gpos: u32) {
        let list = &mut self.grp[g as usize].classes;
        let p = gpos as usize;
        list.swap_remove(p);
        if let Some(&moved) = list.get(p) {
            self.cls[moved as usize].gpos = p as u32;
        }
        self.touch_group(g);
    }

    /// Appends class `c` to group `g`'s list.
    fn join_group(&mut self, c: u32, g: u32) {
        self.cls[c as usize].gpos = self.grp[g as usize].classes.len() as u32;
        self.grp[g as usize].classes.push(c);
        self.cls[c as usize].group = g;
        self.touch_group(g);
    }

    /// Recomputes group `g`'s next completion.
    fn repredict(&mut self, g: u32, now: f64, done_eps: impl Fn(u32) -> (f64, f64)) {
        let gr = &self.grp[g as usize];
        let mut best = (gr.min_key, gr.min_cls);
        if !gr.min_ok {
            best = (f64::INFINITY, NONE);
            for &c in &gr.classes {
                let cl = &self.cls[c as usize];
                if let Some(m) = cl.mem.peek() {
                    let k = m.thr - cl.off;
                    if k < best.0 || (k == best.0 && c < best.1) {
                        best = (k, c);
                    }
                }
            }
        }
        let v = self.gv(g, now);
        let gr = &mut self.grp[g as usize];
        gr.min_cls = best.1;
        gr.min_key = best.0;
        gr.min_ok = true;
        if best.1 == NONE || gr.level <= 0.0 {
            self.set_next(g, f64::INFINITY);
            return;
        }
        let level = gr.level;
        let fi = self.cls[best.1 as usize].mem.peek().expect("the earliest class has members").fi;
        let (w, eps) = done_eps(fi);
        let left = best.0 - v;
        let t = if left * w / 8.0 <= eps { now } else { now + left / level };
        self.set_next(g, t.max(now));
    }

    /// Sets group `g`'s next completion time (infinite: none).
    fn set_next(&mut self, g: u32, t: f64) {
        if self.due_ok && (t < self.due_t || (t == self.due_t && !self.grp[g as usize].in_due)) {
            self.due_ok = false;
        }
        let gr = &mut self.grp[g as usize];
        gr.next = t;
        let listed = gr.tpos != NONE;
        if t.is_finite() && !listed {
            gr.tpos = self.timed.len() as u32;
            self.timed.push(g);
        } else if !t.is_finite() && listed {
            let p = gr.tpos as usize;
            gr.tpos = NONE;
            self.timed.swap_remove(p);
            if let Some(&moved) = self.timed.get(p) {
                self.grp[moved as usize].tpos = p as u32;
            }
        }
    }

    /// The group with the earliest next completion (ties: lowest group
    /// index) and its time. Found by a scan of the timed groups, since
    /// every instant changes most of their times (a heap would pay for each
    /// twice: a push, then a stale pop); the groups due at that time are
    /// kept, so completions at one instant do not scan again.
    fn next_pred(&mut self) -> Option<(f64, u32)> {
        loop {
            if !self.due_ok {
                for &g in &self.due {
                    self.grp[g as usize].in_due = false;
                }
                self.due.clear();
                let t = self.timed.iter().map(|&g| self.grp[g as usize].next).fold(f64::INFINITY, f64::min);
                if !t.is_finite() {
                    return None;
                }
                self.due.extend(self.timed.iter().copied().filter(|&g| self.grp[g as usize].next == t));
                self.due.sort_unstable_by(|a, b| b.cmp(a));
                for &g in &self.due {
                    self.grp[g as usize].in_due = true;
                }
                self.due_t = t;
                self.due_ok = true;
            }
            while let Some(&g) = self.due.last() {
                if self.grp[g as usize].next == self.due_t {
                    return Some((self.due_t, g));
                }
                self.due.pop();
                self.grp[g as usize].in_due = false;
            }
            self.due_ok = false;
        }
    }
}

impl Group {
    fn new(link: u32) -> Self {
        Self { link, next: f64::INFINITY, tpos: NONE, min_cls: NONE, ..Self::default() }
    }
}

impl Simulation<'_> {
    /// Whether to switch to dense mode after the local repair just done.
    pub(super) fn dense_should_enter(&mut self) -> bool {
        use super::DenseMode;
        let ok = match self.cfg.dense {
            DenseMode::Off => return false,
            DenseMode::Always => self.n_active > 0,
            DenseMode::Auto => {
                if self.n_active >= DENSE_MIN_ACTIVE && 4 * self.last_region >= self.n_active {
                    self.dense_ctl.streak += 1;
                } else {
                    self.dense_ctl.streak = 0;
                }
                self.dense_ctl.streak >= self.dense_ctl.need
            }
        };
        if !(ok && self.stranded.is_empty() && self.down_links == 0) {
            return false;
        }
        if self.cfg.dense == DenseMode::Auto {
            // Would it pay? About three units of work per class and
            // instant, against LOCAL_PER_CHANGE per rate a repair changes.
            if 3.0 * self.estimate_classes() > LOCAL_PER_CHANGE * self.last_region as f64 {
                self.dense_ctl.streak = 0;
                self.dense_ctl.need = (self.dense_ctl.need * 4).min(1 << 20);
                self.stats.dense_declined += 1;
                return false;
            }
        }
        true
    }

    fn active_flows(&self) -> Vec<u32> {
        (0..self.flows.len() as u32).filter(|&i| self.flows[i as usize].status == Status::Active).collect()
    }

    /// Heavy links on entry: loaded to [`HEAVY_AT`], bottlenecks of some
    /// flow, and every link of an uncapped flow that would have none.
    fn dense_heavy_links(&self, active: &[u32]) -> Vec<bool> {
        let nl = self.cap.len();
        let mut heavy: Vec<bool> = (0..nl).map(|l| self.rep.lr[l].load >= HEAVY_AT * self.cap[l]).collect();
        for &fi in active {
            let f = &self.flows[fi as usize];
            if (f.bn as usize) < nl {
                heavy[f.bn as usize] = true;
            }
        }
        for &fi in active {
            let f = &self.flows[fi as usize];
            if f.cap.is_infinite() && !f.path.iter().any(|&l| heavy[l as usize]) {
                for &l in &f.path {
                    heavy[l as usize] = true;
                }
            }
        }
        heavy
    }

    /// Estimated number of classes: distinct keys (64-bit hashes) among at
    /// most [`SAMPLE`] active flows taken at an even stride, scaled to all
    /// active flows, with links loaded to [`HEAVY_AT`] as the heavy ones. A
    /// sample shows less sharing than the whole, so this errs towards not
    /// entering.
    fn estimate_classes(&self) -> f64 {
        let stride = (self.flows.len() / SAMPLE).max(1);
        let mut seen = std::collections::HashSet::with_capacity(SAMPLE);
        let mut links: Vec<u32> = Vec::new();
        let mut n = 0usize;
        for fi in (0..self.flows.len()).step_by(stride) {
            let f = &self.flows[fi];
            if f.status != Status::Active {
                continue;
            }
            n += 1;
            links.clear();
            links.extend(
                f.path.iter().copied().filter(|&l| self.rep.lr[l as usize].load >= HEAVY_AT * self.cap[l as usize]),
            );
            links.sort_unstable();
            let mut h = mix(f.prio as u32 as u64 ^ (f.cap / f.weight).to_bits().rotate_left(17));
            for &l in &links {
                h = mix(h ^ u64::from(l));
            }
            seen.insert(h);
        }
        if n == 0 {
            return 0.0;
        }
        seen.len() as f64 / n as f64 * self.n_active as f64
    }

    /// Switches to dense mode at the current time (after a repair: every
    /// active flow has its max-min rate and bottleneck).
    pub(super) fn dense_enter(&mut self) {
        let nl = self.cap.len();
        let mut d = Box::new(Dense::new(nl));
        d.grow_flows(self.flows.len());
        let active = self.active_flows();
        d.heavy = self.dense_heavy_links(&active);
        let now = self.now;
        d.gepoch = 1;
        for &fi in &active {
            let f = &self.flows[fi as usize];
            let left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
            let r = left * 8.0 / f.weight;
            self.dense_join(&mut d, fi, r);
        }
        self.completions = crate::radix::RadixHeap::default();
        for &fi in &active {
            self.flows[fi as usize].entry_t = f64::INFINITY;
        }
        self.stats.dense_entries += 1;
        self.dense_ctl.streak = 0;
        d.instants = 0;
        d.chg_avg = self.last_region as f64;
        self.dense = Some(d);
        self.dense_recompute_inner(true);
    }

    /// Puts active flow `fi` into the class of its heavy links, with `r`
    /// normalised bits left to send.
    fn dense_join(&mut self, d: &mut Dense, fi: u32, r: f64) {
        let now = self.now;
        let f = &self.flows[fi as usize];
        let mut hl: Vec<u32> = Vec::with_capacity(f.path.len());
        hl.extend(f.path.iter().copied().filter(|&l| d.heavy[l as usize]));
        let kappa = f.cap / f.weight;
        let (prio, w) = (f.prio, f.weight);
        let c = d.class_of(prio, kappa, &hl);
        let thr = d.service(c, now) + r;
        d.fc[fi as usize] = c;
        d.fthr[fi as usize] = thr;
        let cl = &mut d.cls[c as usize];
        cl.mem.push(Mem { thr, fi });
        cl.w += w;
        cl.n += 1;
        d.flight[fi as usize] = cl.light.len() as u32;
        let level = cl.level;
        for &l in &self.flows[fi as usize].path {
            if !d.heavy[l as usize] {
                cl.light.push((l, fi, w));
            }
        }
        if level > 0.0 {
            for h in 0..self.flows[fi as usize].path.len() {
                let l = self.flows[fi as usize].path[h] as usize;
                if !d.heavy[l] {
                    self.set_load(l, self.rep.lr[l].load + w * level);
                    d.joined.push(l as u32);
                }
            }
        }
        let g = d.cls[c as usize].group;
        d.touch_group(g);
    }

    /// Takes active flow `fi` out of its class (its light links lose its
    /// rate); returns the normalised bits it has left. Drops the class when
    /// it empties.
    fn dense_unjoin(&mut self, d: &mut Dense, fi: u32, popped: bool) -> f64 {
        let now = self.now;
        let c = d.fc[fi as usize];
        d.fc[fi as usize] = NONE;
        let r = d.fthr[fi as usize] - d.service(c, now);
        let w = self.flows[fi as usize].weight;
        let cl = &mut d.cls[c as usize];
        if !popped {
            cl.mem.retain(|m| m.fi != fi);
        }
        cl.w -= w;
        cl.n -= 1;
        let level = cl.level;
        let mut k = d.flight[fi as usize] as usize;
        while k < cl.light.len() && cl.light[k].1 == fi {
            let l = cl.light[k].0 as usize;
            if cl.light[k].2 > 0.0 {
                cl.light[k].2 = 0.0;
                cl.dead += 1;
                if level > 0.0 {
                    let nl = (self.rep.lr[l].load - w * level).max(0.0);
                    self.set_load(l, nl);
                }
            }
            k += 1;
        }
        let (g, n, rebuild) = (cl.group, cl.n, cl.dead as usize * 2 > cl.light.len());
        d.touch_group(g);
        if n == 0 {
            d.drop_class(c);
        } else if rebuild {
            let cl = &d.cls[c as usize];
            // Rebuild the light entries from the live members.
            let mut light: Vec<(u32, u32, f64)> = Vec::with_capacity(cl.light.len() - cl.dead as usize);
            let mut starts = Vec::new();
            for e in cl.light.iter().filter(|e| e.2 > 0.0) {
                if light.last().is_none_or(|p| p.1 != e.1) {
                    starts.push((e.1, light.len() as u32));
                }
                light.push(*e);
            }
            for (f, k) in starts {
                d.flight[f as usize] = k;
            }
            let cl = &mut d.cls[c as usize];
            cl.light = light;
            cl.dead = 0;
        }
        r
    }

    /// Makes light link `l` heavy: every flow on it moves to the class that
    /// now includes `l`.
    fn dense_promote(&mut self, d: &mut Dense, l: u32) {
        d.heavy[l as usize] = true;
        self.stats.dense_promotions += 1;
        let on: Vec<u32> = self.link_flows[l as usize].iter().map(|e| e.0).collect();
        for fi in on {
            if d.fc.get(fi as usize).is_none_or(|&c| c == NONE) {
                continue;
            }
            let r = self.dense_unjoin(d, fi, false);
            self.dense_join(d, fi, r);
        }
    }

    /// Next completion time in dense mode.
    pub(super) fn dense_next_time(&mut self) -> Option<f64> {
        self.dense.as_mut().and_then(|d| d.next_pred()).map(|p| p.0)
    }

    /// Completes the next flow due at `t`, if any, and returns it.
    pub(super) fn dense_pop_completion(&mut self, t: f64) -> Option<u32> {
        let mut d = self.dense.take().expect("dense mode");
        let out = self.dense_pop_inner(&mut d, t);
        self.dense = Some(d);
        out
    }

    fn dense_pop_inner(&mut self, d: &mut Dense, t: f64) -> Option<u32> {
        let (pt, pg) = d.next_pred()?;
        if pt > t {
            return None;
        }
        let now = self.now;
        d.advance(pg, now);
        let c = d.grp[pg as usize].min_cls;
        let m = d.cls[c as usize].mem.pop().expect("predicted class has members");
        let fi = m.fi;
        self.dense_unjoin(d, fi, true);
        // Light links already lost its rate; heavy ones get theirs from the
        // next filling, except those it leaves empty.
        let (path, _) = self.end_flow(fi);
        for &l in &path {
            if self.link_flows[l as usize].is_empty() {
                self.set_load(l as usize, 0.0);
            }
        }
        let flows = &self.flows;
        let eps = |f: u32| (flows[f as usize].weight, flows[f as usize].done_eps());
        d.repredict(pg, now, eps);
        Some(fi)
    }

    /// Starts flow `fi` in dense mode; true if it completed at once.
    pub(super) fn dense_arrive(&mut self, fi: u32) -> bool {
        let mut d = self.dense.take().expect("dense mode");
        let done = self.dense_arrive_inner(&mut d, fi);
        self.dense = Some(d);
        done
    }

    fn dense_arrive_inner(&mut self, d: &mut Dense, fi: u32) -> bool {
        if self.start_flow(fi) {
            return true;
        }
        d.grow_flows(self.flows.len());
        let f = &self.flows[fi as usize];
        if f.cap.is_infinite() && !f.path.iter().any(|&l| d.heavy[l as usize]) {
            let path = f.path.clone();
            for &l in &path {
                if !d.heavy[l as usize] {
                    self.dense_promote(d, l);
                }
            }
        }
        let r = self.flows[fi as usize].bytes * 8.0 / self.flows[fi as usize].weight;
        self.dense_join(d, fi, r);
        false
    }

    /// Rate and bytes left of an active flow in dense mode.
    pub(super) fn dense_flow(&self, fi: u32) -> Option<(f64, f64)> {
        let d = self.dense.as_ref()?;
        let c = *d.fc.get(fi as usize)?;
        if c == NONE {
            return None;
        }
        let w = self.flows[fi as usize].weight;
        let left = ((d.fthr[fi as usize] - d.service(c, self.now)) * w / 8.0).max(0.0);
        Some((w * d.cls[c as usize].level, left))
    }

    /// Leaves dense mode now: every active flow gets its rate, bottleneck
    /// and bytes left, and link loads are re-summed. With `reallocate` (the
    /// instant's events are not all allocated yet) the next repair
    /// recomputes the whole allocation.
    pub(super) fn dense_leave(&mut self, reallocate: bool) {
        let Some(d) = self.dense.take() else { return };
        let now = self.now;
        let nl = self.cap.len();
        for &c in &d.live {
            let cl = &d.cls[c as usize];
            let s = d.service(c, now);
            let bn = match cl.group {
                NONE => BN_NONE,
                g if d.grp[g as usize].link != NONE => d.grp[g as usize].link,
                _ => BN_CAP,
            };
            for m in cl.mem.iter() {
                let fi = m.fi as usize;
                let f = &mut self.flows[fi];
                f.left = ((d.fthr[fi] - s) * f.weight / 8.0).max(0.0);
                f.t_last = now;
                f.rate = f.weight * cl.level;
                f.bn = bn;
                self.hot[fi].rate = f.rate;
                self.hot[fi].bn = bn;
            }
        }
        self.link_acc.iter_mut().for_each(|x| *x = 0.0);
        let mut ids: Vec<u32> = d.live.iter().flat_map(|&c| d.cls[c as usize].mem.iter().map(|m| m.fi)).collect();
        ids.sort_unstable();
        for &fi in &ids {
            let f = &self.flows[fi as usize];
            for &l in &f.path {
                self.link_acc[l as usize] += f.rate;
            }
        }
        for l in 0..nl {
            self.set_load(l, self.link_acc[l]);
        }
        for &fi in &ids {
            self.predict(fi);
        }
        self.full_repair = reallocate;
        if d.instants < SHORT_STAY {
            self.dense_ctl.need = (self.dense_ctl.need * 2).min(1 << 20);
        } else {
            self.dense_ctl.need = 1;
        }
        self.dense_ctl.streak = 0;
    }

    /// Reallocates at the end of an instant in dense mode.
    pub(super) fn dense_recompute(&mut self) {
        self.dense_recompute_inner(false);
    }

    /// One instant's allocation: filling, light-link check (promoting and
    /// refilling as needed), loads, group clocks and moves, predictions.
    /// `full` (on entry) sums light loads from scratch.
    fn dense_recompute_inner(&mut self, full: bool) {
        let mut d = self.dense.take().expect("dense mode");
        let now = self.now;
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds <= self.cap.len() + 2, "dense mode: promotions do not settle");
            self.dense_fill(&mut d);
            // New loads of light links: changed classes' members only, or
            // every member on entry.
            d.epoch += 1;
            let e = d.epoch;
            d.dtouched.clear();
            d.changed.clear();
            for i in 0..d.live.len() {
                let c = d.live[i] as usize;
                let cl = &d.cls[c];
                if cl.new_group != cl.group || cl.new_level != cl.level {
                    d.changed.push(c as u32);
                }
                let delta = if full { cl.new_level } else { cl.new_level - cl.level };
                if delta == 0.0 && !full {
                    continue;
                }
                for &(l, _, w) in &cl.light {
                    if w == 0.0 {
                        continue; // a finished member
                    }
                    let li = l as usize;
                    if d.dstamp[li] != e {
                        d.dstamp[li] = e;
                        d.dl[li] = if full { 0.0 } else { self.rep.lr[li].load };
                        d.dtouched.push(l);
                    }
                    d.dl[li] += w * delta;
                }
            }
            for k in 0..d.joined.len() {
                let li = d.joined[k] as usize;
                if d.dstamp[li] != e && !full {
                    d.dstamp[li] = e;
                    d.dl[li] = self.rep.lr[li].load;
                    d.dtouched.push(li as u32);
                }
            }
            let viol: Vec<u32> = d
                .dtouched
                .iter()
                .copied()
                .filter(|&l| !d.heavy[l as usize] && d.dl[l as usize] > self.cap[l as usize] * (1.0 - LIGHT_SLACK))
                .collect();
            if viol.is_empty() {
                break;
            }
            for l in viol {
                self.dense_promote(&mut d, l);
            }
        }
        // Commit the light loads.
        d.joined.clear();
        if full {
            for l in 0..self.cap.len() {
                if !d.heavy[l] && d.dstamp[l] != d.epoch {
                    self.set_load(l, 0.0);
                }
            }
        }
        for k in 0..d.dtouched.len() {
            let l = d.dtouched[k] as usize;
            if d.heavy[l] {
                continue;
            }
            let v = if self.link_flows[l].is_empty() { 0.0 } else { d.dl[l].max(0.0) };
            self.set_load(l, v);
        }
        // Heavy loads from the filling.
        for k in 0..d.flinks.len() {
            let l = d.flinks[k] as usize;
            self.set_load(l, (self.cap[l] - d.rem[l]).max(0.0));
        }
        // Groups: advance every clock that changes, move classes, set levels.
        for i in 0..d.changed.len() {
            let c = d.changed[i] as usize;
            let (g0, g1) = (d.cls[c].group, d.cls[c].new_group);
            if g0 != NONE {
                d.advance(g0, now);
            }
            d.advance(g1, now);
        }
        let mut moved_members = 0u64;
        for i in 0..d.changed.len() {
            let c = d.changed[i];
            let (g0, g1, lv) = {
                let cl = &d.cls[c as usize];
                (cl.group, cl.new_group, cl.new_level)
            };
            moved_members += u64::from(d.cls[c as usize].n);
            if g0 != g1 {
                let s = d.service(c, now);
                if g0 != NONE {
                    let gpos = d.cls[c as usize].gpos;
                    d.leave_group(g0, gpos);
                }
                d.join_group(c, g1);
                d.cls[c as usize].off = s - d.grp[g1 as usize].v;
            }
            d.cls[c as usize].level = lv;
            if d.grp[g1 as usize].level != lv {
                d.grp[g1 as usize].level = lv;
                d.mark_group(g1);
            }
        }
        let flows = &self.flows;
        let eps = |f: u32| (flows[f as usize].weight, flows[f as usize].done_eps());
        for i in 0..d.gdirty.len() {
            let g = d.gdirty[i];
            d.repredict(g, now, eps);
        }
        d.gdirty.clear();
        d.gepoch = d.gepoch.wrapping_add(1);
        d.instants += 1;
        self.stats.dense_instants += 1;
        self.stats.dense_class_sum += d.live.len() as u64;
        self.stats.rate_changes += moved_members;
        let work = (d.live.len() + d.incidences + d.dtouched.len()) as f64;
        if d.instants == 1 {
            d.work_avg = work;
            d.chg_avg = d.chg_avg.max(moved_members as f64);
        } else {
            d.work_avg += (work - d.work_avg) / 8.0;
            d.chg_avg += (moved_members as f64 - d.chg_avg) / 8.0;
        }
        let costly = self.cfg.dense == super::DenseMode::Auto
            && d.instants >= JUDGE_AFTER
            && d.work_avg > LOCAL_PER_CHANGE * d.chg_avg + 4096.0;
        let check = self.cfg.check_invariants;
        self.dense = Some(d);
        if costly {
            // Every rate is exact at the end of an instant: no full repair.
            self.stats.dense_cost_exits += 1;
            self.dense_leave(false);
            self.dense_ctl.need = (self.dense_ctl.need * 2).min(1 << 20);
            return;
        }
        if check {
            for fi in self.active_flows() {
                let (rate, _) = self.dense_flow(fi).expect("active flows have a class");
                self.flows[fi as usize].rate = rate;
            }
            if let Err(msg) = self.verify() {
                panic!("invariant violated in dense mode at t={}: {msg}", self.now);
            }
        }
    }

    /// Progressive filling over the classes, priority by priority: sets
    /// every class's `new_group`/`new_level`, and `rem` of the heavy links.
    fn dense_fill(&mut self, d: &mut Dense) {
        d.epoch += 1;
        let e = d.epoch;
        let nl = d.nl as u32;
        d.order.clear();
        d.order.extend_from_slice(&d.live);
        if d.prio_count.len() > 1 {
            let cls = &d.cls;
            d.order.sort_unstable_by_key(|&c| (cls[c as usize].prio, c));
        }
        d.flinks.clear();
        d.incidences = 0;
        let mut i = 0;
        while i < d.order.len() {
            let p = d.cls[d.order[i] as usize].prio;
            let mut j = if d.prio_count.len() == 1 { d.order.len() } else { i };
            while j < d.order.len() && d.cls[d.order[j] as usize].prio == p {
                j += 1;
            }
            d.pepoch += 1;
            let pe = d.pepoch;
            d.seglinks.clear();
            d.heap.clear();
            for k in i..j {
                let c = d.order[k];
                let cl = &d.cls[c as usize];
                d.incidences += cl.links.len();
                for &l in &cl.links {
                    let li = l as usize;
                    // A link's capacity is set where the filling first meets
                    // it; later priority classes fill what is left.
                    if d.lstamp[li] != e {
                        d.lstamp[li] = e;
                        d.rem[li] = self.cap[li];
                        d.flinks.push(l);
                    }
                    if d.pstamp[li] != pe {
                        d.pstamp[li] = pe;
                        d.wsum[li] = 0.0;
                        d.ucnt[li] = 0;
                        d.seglinks.push(l);
                    }
                    d.wsum[li] += cl.w;
                    d.ucnt[li] += 1;
                }
                if cl.kappa.is_finite() {
                    d.heap.push(LKey { k: cl.kappa, id: nl + c });
                }
            }
            for k in 0..d.seglinks.len() {
                let l = d.seglinks[k];
                let li = l as usize;
                d.heap.push(LKey { k: d.rem[li].max(0.0) / d.wsum[li], id: l });
            }
            let mut pops = 0usize;
            while let Some(top) = d.heap.pop() {
                pops += 1;
                debug_assert!(pops < 100 * (d.seglinks.len() + j - i) + 1000, "filling loops: {top:?}");
                if top.id >= nl {
                    let c = top.id - nl;
                    if d.cls[c as usize].frozen != e {
                        let g = d.cap_g[c as usize];
                        freeze(d, c, top.k, g, e);
                    }
                    continue;
                }
                let li = top.id as usize;
                if d.ucnt[li] == 0 {
                    continue;
                }
                let k = d.rem[li].max(0.0) / d.wsum[li];
                // Keys only rise as classes freeze elsewhere: a stale
                // entry is below the true one.
                if k > top.k {
                    d.heap.push(LKey { k, id: top.id });
                    continue;
                }
                let lg = d.link_group(top.id, p);
                let mut q = 0;
                while q < d.link_cls[li].len() {
                    let c = d.link_cls[li][q];
                    q += 1;
                    let cl = &d.cls[c as usize];
                    if cl.frozen == e || cl.prio != p {
                        continue;
                    }
                    let x = k.min(cl.kappa);
                    let g = if x < k { d.cap_g[c as usize] } else { lg };
                    freeze(d, c, x, g, e);
                }
            }
            i = j;
        }
    }
}

/// Freezes class `c` at normalised level `x` in group `g`.
fn freeze(d: &mut Dense, c: u32, x: f64, g: u32, e: u32) {
    let cl = &mut d.cls[c as usize];
    cl.frozen = e;
    cl.new_level = x;
    cl.new_group = g;
    let w = cl.w;
    for &m in &cl.links {
        let mi = m as usize;
        d.rem[mi] -= w * x;
        d.wsum[mi] -= w;
        d.ucnt[mi] -= 1;
    }
}
