//! Exact per-link utilisation telemetry, integrated from piecewise-constant rates.
//!
//! A link's rate changes only at events, so the bytes it carries in a window
//! are an exact integral. Each link keeps the time of its last rate change;
//! when its rate changes, `rate * dt` is added to every window the interval
//! spans (split at window boundaries). Storage is sparse, a per-link list of
//! `(window index, bytes)` in increasing order, so idle links cost nothing.
//!
//! Windows `0..max_windows` are kept ([`LinkWindows::with_max_windows`];
//! `u32::MAX` by default, so an index always fits): traffic after them is
//! dropped and counted ([`LinkWindows::dropped`]), so no call can loop over
//! or store more than `max_windows` windows per link, whatever its times.

use netheat_core::LinkId;

/// One window of one link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSample {
    /// The directed link.
    pub link: LinkId,
    /// Window index; the window covers `[index * W, (index + 1) * W)`.
    pub window: u32,
    /// Bytes carried in the window.
    pub bytes: f64,
    /// Average utilisation: `bytes * 8 / (nominal capacity * W)`; 0 for a
    /// link of nominal capacity 0.
    pub utilization: f64,
}

/// Bytes per window per link, stored sparsely.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkWindows {
    window_s: f64,
    nominal_bps: Vec<f64>,
    per_link: Vec<Vec<(u32, f64)>>,
    max_windows: u32,
    dropped: u64,
}

impl LinkWindows {
    /// Empty telemetry for links of the given nominal capacities.
    pub fn new(window_s: f64, nominal_bps: Vec<f64>) -> Self {
        assert!(window_s.is_finite() && window_s > 0.0, "window length must be > 0 s");
        let n = nominal_bps.len();
        Self { window_s, nominal_bps, per_link: vec![Vec::new(); n], max_windows: u32::MAX, dropped: 0 }
    }

    /// Keeps windows `0..max_windows` only.
    pub fn with_max_windows(mut self, max_windows: u32) -> Self {
        self.max_windows = max_windows;
        self
    }

    /// Windows kept: `0..max_windows`.
    pub fn max_windows(&self) -> u32 {
        self.max_windows
    }

    /// Additions that fell (entirely or in part) after the last kept window.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Window length in seconds.
    pub fn window_s(&self) -> f64 {
        self.window_s
    }

    /// Number of links covered.
    pub fn num_links(&self) -> usize {
        self.per_link.len()
    }

    /// Adds the traffic of a constant rate over `[t0, t1)` on `link`.
    /// Traffic after the last kept window is dropped (see the module docs);
    /// empty or non-finite intervals and rates add nothing.
    pub fn add(&mut self, link: LinkId, t0: f64, t1: f64, rate_bps: f64) {
        if !(t0.is_finite() && t1.is_finite() && t1 > t0 && rate_bps.is_finite() && rate_bps > 0.0) {
            return;
        }
        let w = self.window_s;
        let max = u64::from(self.max_windows);
        let t0 = t0.max(0.0);
        let first = (t0 / w).floor();
        if first >= max as f64 {
            self.dropped += 1;
            return;
        }
        let list = &mut self.per_link[link as usize];
        let mut k = first as u64;
        let mut a = t0;
        loop {
            let end = (k + 1) as f64 * w;
            let b = t1.min(end);
            if b > a {
                let bytes = rate_bps * (b - a) / 8.0;
                match list.last_mut() {
                    Some(last) if last.0 as u64 == k => last.1 += bytes,
                    _ => list.push((k as u32, bytes)),
                }
            }
            if t1 <= end {
                break;
            }
            a = end;
            k += 1;
            if k >= max {
                self.dropped += 1;
                break;
            }
        }
    }

    /// Adds `bytes` to window `window` of `link`, which must not be before
    /// the link's last window (the engine fills windows in time order). A
    /// window at or after `max_windows` is dropped.
    pub fn add_to_window(&mut self, link: LinkId, window: u32, bytes: f64) {
        if window >= self.max_windows {
            self.dropped += 1;
            return;
        }
        let list = &mut self.per_link[link as usize];
        match list.last_mut() {
            Some(last) if last.0 == window => last.1 += bytes,
            _ => list.push((window, bytes)),
        }
    }

    /// The `(window, bytes)` list of one link, in increasing window order.
    pub fn link(&self, link: LinkId) -> &[(u32, f64)] {
        &self.per_link[link as usize]
    }

    /// Bytes carried by `link` in window `window` (0 if idle).
    pub fn bytes(&self, link: LinkId, window: u32) -> f64 {
        let l = &self.per_link[link as usize];
        l.binary_search_by_key(&window, |e| e.0).map(|i| l[i].1).unwrap_or(0.0)
    }

    /// Average utilisation of `link` in `window` against nominal capacity.
    pub fn utilization(&self, link: LinkId, window: u32) -> f64 {
        self.util_of(link, self.bytes(link, window))
    }

    /// Total bytes carried by `link` over the run.
    pub fn total_bytes(&self, link: LinkId) -> f64 {
        self.per_link[link as usize].iter().map(|e| e.1).sum()
    }

    fn util_of(&self, link: LinkId, bytes: f64) -> f64 {
        let c = self.nominal_bps[link as usize];
        if c > 0.0 {
            bytes * 8.0 / (c * self.window_s)
        } else {
            0.0
        }
    }

    /// Every non-empty window of every link, by link then window.
    pub fn iter(&self) -> impl Iterator<Item = WindowSample> + '_ {
        self.per_link.iter().enumerate().flat_map(move |(l, list)| {
            list.iter().map(move |&(window, bytes)| WindowSample {
                link: l as LinkId,
                window,
                bytes,
                utilization: self.util_of(l as LinkId, bytes),
            })
        })
    }

    /// Merges every `k` consecutive windows into one (e.g. 1 s windows into
    /// 30 s windows with `k = 30`), keeping exact byte counts.
    pub fn rebin(&self, k: u32) -> LinkWindows {
        assert!(k > 0, "rebin factor must be > 0");
        let per_link = self
            .per_link
            .iter()
            .map(|list| {
                let mut out: Vec<(u32, f64)> = Vec::new();
                for &(w, b) in list {
                    let nw = w / k;
                    match out.last_mut() {
                        Some(last) if last.0 == nw => last.1 += b,
                        _ => out.push((nw, b)),
                    }
                }
                out
            })
            .collect();
        LinkWindows {
            window_s: self.window_s * k as f64,
            nominal_bps: self.nominal_bps.clone(),
            per_link,
            max_windows: self.max_windows.div_ceil(k),
            dropped: self.dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_window_boundaries() {
        let mut t = LinkWindows::new(1.0, vec![8.0]);
        t.add(0, 0.5, 2.25, 8.0); // 1 byte per second
        assert_eq!(t.link(0), &[(0, 0.5), (1, 1.0), (2, 0.25)]);
        assert_eq!(t.utilization(0, 1), 1.0);
        t.add(0, 2.25, 2.5, 8.0);
        assert_eq!(t.link(0).len(), 3, "same window merges");
        assert_eq!(t.bytes(0, 2), 0.5);
        let r = t.rebin(2);
        assert_eq!(r.link(0), &[(0, 1.5), (1, 0.5)]);
    }

    #[test]
    fn windows_past_the_limit_are_dropped_without_looping() {
        // 1 ns windows, 10 windows kept; a rate over [0, 1e300) touches
        // windows 0..10 only and returns at once.
        let mut t = LinkWindows::new(1e-9, vec![8.0]).with_max_windows(10);
        t.add(0, 0.0, 1e300, 8.0);
        assert_eq!(t.link(0).len(), 10);
        assert_eq!(t.link(0)[9].0, 9);
        assert_eq!(t.dropped(), 1);
        // Starting past the limit, or at absurd times: nothing, no overflow.
        t.add(0, 1e-8, 2e-8, 8.0);
        t.add(0, 1e300, f64::MAX, 8.0);
        t.add(0, 0.0, f64::INFINITY, 8.0);
        t.add(0, f64::NAN, 1.0, 8.0);
        t.add(0, 0.0, 1.0, f64::NAN);
        assert_eq!(t.link(0).len(), 10);
        assert_eq!(t.dropped(), 3);
        t.add_to_window(0, 10, 1.0);
        t.add_to_window(0, u32::MAX, 1.0);
        assert_eq!((t.link(0).len(), t.dropped()), (10, 5));
        // The default limit keeps every index in u32: the largest window is u32::MAX - 1.
        let mut d = LinkWindows::new(1.0, vec![8.0]);
        d.add(0, 4_294_967_294.5, 1e300, 8.0);
        assert_eq!(d.link(0), &[(u32::MAX - 1, 0.5)]);
        assert_eq!(d.dropped(), 1);
        assert_eq!(t.rebin(3).max_windows(), 4);
    }
}
