//! Steps 2 and 4 of the local repair (see the module docs): per-class
//! summaries of the flows outside the region on each touched link (scanned,
//! or *light* for clearly slack links), and the boundary check that finds
//! the outside flows the region's new rates invalidate.

use super::repair::{EPS, LIGHT_SLACK};
use super::state::Hot;
use super::Simulation;
use netheat_core::LinkId;

/// Up to this many classes on a link, a scan finds a flow's class by a
/// linear search; beyond, by a map.
const CLASS_SCAN_MAX: usize = 8;

/// Per (link, priority class) summary used by the boundary check of a
/// repair. `out_*` cover the flows outside the region (fixed rates), `r_*`
/// the region's flows with their new rates.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassStat {
    pub(super) prio: i32,
    pub(super) out_load: f64,
    pub(super) out_maxn: f64,
    /// Min over outside flows bottlenecked at this link of `(r + tol) / w`.
    pub(super) out_bn_thr: f64,
    pub(super) out_pos: bool,
    pub(super) r_load: f64,
    pub(super) r_maxn: f64,
    /// Min over region flows bottlenecked at this link of `(r + tol) / w`.
    pub(super) r_thr: f64,
}

impl ClassStat {
    /// A class with no flows yet.
    fn empty(prio: i32) -> Self {
        Self {
            prio,
            out_load: 0.0,
            out_maxn: 0.0,
            out_bn_thr: f64::INFINITY,
            out_pos: false,
            r_load: 0.0,
            r_maxn: 0.0,
            r_thr: f64::INFINITY,
        }
    }
}

impl Simulation<'_> {
    /// Whether a stale link may get a light summary in epoch `e`: clearly
    /// slack (so no flow is bottlenecked on it) and not an event link.
    pub(super) fn can_be_light(&self, l: LinkId, e: u32) -> bool {
        let l = l as usize;
        self.rep.lr[l].full != e && self.rep.lr[l].slack()
    }

    /// The summary of a slack link without scanning its flows: one entry
    /// for every class, whose outside load is the link's load minus the
    /// region's current rates on it. Exact as long as the link stays slack
    /// and no region flow is bottlenecked on it; the boundary check turns it
    /// into a full summary otherwise.
    pub(super) fn light_link(&mut self, l: LinkId, e: u32) {
        let li = l as usize;
        let reg = if self.rep.lr[li].ro_epoch == e { self.rep.lr[li].reg_old } else { 0.0 };
        let start = self.rep.cls.len();
        self.rep.cls.push(ClassStat { out_load: (self.rep.lr[li].load - reg).max(0.0), ..ClassStat::empty(i32::MIN) });
        self.rep.lr[li].seg = (start as u32, 1);
        self.rep.lr[li].stale = false;
        self.rep.lr[li].light = e;
    }

    pub(super) fn touch_link(&mut self, l: LinkId, e: u32) {
        if self.rep.lr[l as usize].seen != e {
            self.rep.lr[l as usize].seen = e;
            self.rep.tlinks.push(l);
            self.mark_stale(l);
        }
    }

    pub(super) fn mark_stale(&mut self, l: LinkId) {
        if !self.rep.lr[l as usize].stale {
            self.rep.lr[l as usize].stale = true;
            self.rep.stale.push(l);
        }
    }

    /// Rebuilds the per-class summary of the outside flows of link `l`.
    /// With `widen = Some((p, x))`, outside flows of class `p` with a
    /// normalised rate `>= x` or of a class after `p` first join the region.
    pub(super) fn scan_link(&mut self, l: LinkId, e: u32, widen: Option<(i32, f64)>) {
        let start = self.rep.cls.len();
        let tol = EPS * self.rep.lr[l as usize].cap;
        // Class lookup: the last class found (flows of a task sit together
        // in a link's list), then a linear search while classes are few,
        // then a map (task-serialising policies put hundreds of classes on
        // a link; a linear search per flow would be quadratic).
        let mut last = usize::MAX;
        self.rep.cls_idx.clear();
        for j in 0..self.link_flows[l as usize].len() {
            let g = self.link_flows[l as usize][j].0;
            let f = self.hot[g as usize];
            let seg = &self.rep.cls[start..];
            let found = if last < seg.len() && seg[last].prio == f.prio {
                Some(last)
            } else if seg.len() <= CLASS_SCAN_MAX {
                seg.iter().position(|x| x.prio == f.prio)
            } else {
                if self.rep.cls_idx.is_empty() {
                    for (k, x) in seg.iter().enumerate() {
                        self.rep.cls_idx.insert(x.prio, k as u32);
                    }
                }
                self.rep.cls_idx.get(&f.prio).map(|&k| k as usize)
            };
            let k = match found {
                Some(k) => k,
                None => {
                    if !self.rep.cls_idx.is_empty() {
                        self.rep.cls_idx.insert(f.prio, (self.rep.cls.len() - start) as u32);
                    }
                    self.rep.cls.push(ClassStat::empty(f.prio));
                    self.rep.cls.len() - 1 - start
                }
            };
            last = k;
            if self.hot[g as usize].seen == e {
                continue;
            }
            if let Some((p, x)) = widen {
                if f.prio > p || (f.prio == p && f.rate >= x * f.weight) {
                    self.reg_add(g, e);
                    continue;
                }
            }
            let st = &mut self.rep.cls[start + k];
            st.out_load += f.rate;
            st.out_maxn = st.out_maxn.max(f.rate / f.weight);
            st.out_pos |= f.rate > 0.0;
            if f.bn == l {
                st.out_bn_thr = st.out_bn_thr.min((f.rate + tol) / f.weight);
            }
        }
        let seg = &mut self.rep.cls[start..];
        if seg.len() > 1 {
            seg.sort_by_key(|x| x.prio);
        }
        self.rep.lr[l as usize].seg = (start as u32, seg.len() as u32);
        self.rep.lr[l as usize].stale = false;
        self.rep.lr[l as usize].light = 0;
    }

    /// Adds the outside flows of `l` selected by `pick` to the violators.
    fn collect(&mut self, l: LinkId, e: u32, pick: impl Fn(&Hot) -> bool) {
        let ve = self.rep.viol_epoch;
        for &(g, _) in &self.link_flows[l as usize] {
            let h = &mut self.hot[g as usize];
            if h.seen != e && h.viol != ve && pick(h) {
                h.viol = ve;
                self.rep.viol.push(g);
            }
        }
    }

    /// Boundary check of link `l` (see module docs); pushes invalid outside
    /// flows to `rep.viol`.
    /// Returns whether a light summary must become a full one.
    pub(super) fn check_boundary(&mut self, l: LinkId, e: u32) -> bool {
        let c = self.rep.lr[l as usize].cap;
        let tol = EPS * c;
        let (start, len) = self.rep.lr[l as usize].seg;
        let (start, len) = (start as usize, len as usize);
        if self.rep.lr[l as usize].light == e {
            let st = self.rep.cls[start];
            if st.r_thr < f64::INFINITY || st.out_load + st.r_load > c * (1.0 - LIGHT_SLACK) {
                self.rep.lr[l as usize].full = e;
                self.mark_stale(l);
                return true;
            }
            return false;
        }
        let total: f64 = self.rep.cls[start..start + len].iter().map(|x| x.out_load + x.r_load).sum();
        if total > c + tol {
            // Over capacity (capacity dropped): every outside flow with a
            // positive rate must be reallocated.
            self.collect(l, e, |f| f.rate > 0.0);
            return false;
        }
        // Last class with a positive outside rate (so "any outside traffic
        // of a lower priority than class j" is one comparison).
        let last_pos = (0..len).rev().find(|&j| self.rep.cls[start + j].out_pos);
        let mut cum = 0.0;
        for j in 0..len {
            let st = self.rep.cls[start + j];
            cum += st.out_load + st.r_load;
            let maxn = st.out_maxn.max(st.r_maxn);
            let sat = c - cum <= tol;
            let p = st.prio;
            // (a) outside flows bottlenecked here must still be maximal on a
            // saturated link.
            if st.out_bn_thr < f64::INFINITY && (!sat || st.out_bn_thr < maxn) {
                self.collect(l, e, |f| f.prio == p && f.bn == l && (!sat || (f.rate + tol) / f.weight < maxn));
            }
            // (b) region flows bottlenecked here must be maximal too: outside
            // flows above them give way, and so does any outside traffic of
            // lower priority.
            if st.r_thr < f64::INFINITY {
                let thr = st.r_thr;
                if st.out_maxn > thr {
                    self.collect(l, e, |f| f.prio == p && f.rate / f.weight > thr);
                }
                if last_pos.is_some_and(|k| k > j) {
                    self.collect(l, e, |f| f.prio > p && f.rate > 0.0);
                }
            }
        }
        false
    }
}
