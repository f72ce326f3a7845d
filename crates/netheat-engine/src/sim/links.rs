//! Per-link state and its upkeep: the lists of each link's flows, link
//! loads, the links a repair must revisit, and per-window telemetry.

use super::repair::LIGHT_SLACK;
use super::Simulation;
use netheat_core::LinkId;

/// No window is being accumulated.
pub(super) const NO_WINDOW: u32 = u32::MAX;

/// Per-link state that changes with every load update.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinkHot {
    /// Time of the last load change.
    pub(super) tel_t: f64,
    /// Bytes of window `win` not yet handed to the telemetry.
    pub(super) acc: f64,
    pub(super) win: u32,
}

/// The state of one link that events and repairs read together, in one
/// cache line: its load and capacity (a copy of `Simulation::cap`) sit with
/// the repair's marks, so touching a link costs one miss, not three.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub(super) struct LinkRep {
    /// Current load, bits/s.
    pub(super) load: f64,
    /// Capacity, bits/s (kept equal to `Simulation::cap`).
    pub(super) cap: f64,
    /// Queued in `Simulation::dirty`.
    pub(super) dirty: bool,
    /// Sum of the current rates of the region's flows on it, valid in
    /// epoch `ro_epoch`.
    pub(super) reg_old: f64,
    /// Segment `[start, start + len)` of `cls`.
    pub(super) seg: (u32, u32),
    /// Epoch in which the link was touched (also used by the whole-component
    /// fallback's BFS).
    pub(super) seen: u32,
    /// Epoch in which its load must be re-summed.
    pub(super) chg: u32,
    /// Epoch in which its summary is *light* (see [`Simulation::light_link`]).
    pub(super) light: u32,
    /// Epoch in which it must be scanned in full (event links, and light
    /// links the region came to saturate).
    pub(super) full: u32,
    pub(super) ro_epoch: u32,
    pub(super) wl_seen: u32,
    /// Its outside summary must be rebuilt.
    pub(super) stale: bool,
}

impl LinkRep {
    /// Clearly slack: loaded below `1 - LIGHT_SLACK` of its capacity, so no
    /// flow can be bottlenecked on it.
    pub(super) fn slack(&self) -> bool {
        self.load < self.cap * (1.0 - LIGHT_SLACK)
    }
}

impl Simulation<'_> {
    pub(super) fn mark_dirty(&mut self, l: LinkId) {
        if !self.rep.lr[l as usize].dirty {
            self.rep.lr[l as usize].dirty = true;
            self.dirty.push(l);
        }
    }

    pub(super) fn set_load(&mut self, l: usize, new: f64) {
        if new != self.rep.lr[l].load {
            if self.cfg.telemetry {
                self.integrate(l);
                self.lk[l].tel_t = self.now;
            }
            self.rep.lr[l].load = new;
        }
    }

    /// Adds the link's traffic since its last load change to its telemetry.
    /// The bytes of the window being filled accumulate in [`LinkHot`] and go
    /// to [`LinkWindows`](crate::telemetry::LinkWindows) when the link moves
    /// past it (same sums, in the same order, as adding each interval there).
    pub(super) fn integrate(&mut self, l: usize) {
        let (t1, w) = (self.now, self.cfg.window_s);
        let h = self.lk[l];
        let load = self.rep.lr[l].load;
        if t1 <= h.tel_t || load <= 0.0 {
            return;
        }
        let max = u64::from(self.cfg.max_windows);
        // Times are not negative, so truncation is the floor (one
        // instruction, not a call to `floor` on every load change).
        let first = h.tel_t / w;
        if first >= max as f64 {
            // Past the last kept window (see `SimConfig::max_windows`).
            if h.win != NO_WINDOW {
                self.windows.add_to_window(l as LinkId, h.win, h.acc);
                self.lk[l].win = NO_WINDOW;
            }
            self.stats.windows_dropped += 1;
            return;
        }
        let mut k = first as u64;
        if u64::from(h.win) == k && t1 <= (k + 1) as f64 * w {
            self.lk[l].acc += load * (t1 - h.tel_t) / 8.0;
            return;
        }
        if h.win != NO_WINDOW {
            self.windows.add_to_window(l as LinkId, h.win, h.acc);
            self.lk[l].win = NO_WINDOW;
        }
        let mut a = h.tel_t;
        loop {
            let end = (k + 1) as f64 * w;
            let b = t1.min(end);
            if b > a {
                let bytes = load * (b - a) / 8.0;
                if t1 <= end && k < u64::from(NO_WINDOW) {
                    self.lk[l].win = k as u32;
                    self.lk[l].acc = bytes;
                } else {
                    self.windows.add_to_window(l as LinkId, k as u32, bytes);
                }
            }
            if t1 <= end {
                break;
            }
            a = end;
            k += 1;
            if k >= max {
                self.stats.windows_dropped += 1;
                break;
            }
        }
    }

    pub(super) fn attach(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        f.pos.reset(f.path.len());
        for (h, &l) in f.path.iter().enumerate() {
            let list = &mut self.link_flows[l as usize];
            f.pos.set(h, list.len() as u32);
            list.push((fi, h as u32));
        }
    }

    pub(super) fn detach(&mut self, fi: u32) {
        let path = std::mem::take(&mut self.flows[fi as usize].path);
        let pos = std::mem::take(&mut self.flows[fi as usize].pos);
        for (h, &l) in path.iter().enumerate() {
            let list = &mut self.link_flows[l as usize];
            let p = pos.get(h) as usize;
            list.swap_remove(p);
            if let Some(&(g, gh)) = list.get(p) {
                self.flows[g as usize].pos.set(gh as usize, p as u32);
            }
        }
        let f = &mut self.flows[fi as usize];
        f.path = path;
        f.pos = pos;
    }
}
