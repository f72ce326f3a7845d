//! Exact per-link utilisation telemetry, integrated from piecewise-constant rates.
//!
//! A link's rate changes only at events, so the bytes it carries in a window
//! are an exact integral. Each link keeps the time of its last rate change;
//! when its rate changes, `rate * dt` is added to every window the interval
//! spans (split at window boundaries). Storage is sparse, a per-link list of
//! `(window index, bytes)` in increasing order, so idle links cost nothing.

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
}

impl LinkWindows {
    /// Empty telemetry for links of the given nominal capacities.
    pub fn new(window_s: f64, nominal_bps: Vec<f64>) -> Self {
        assert!(window_s.is_finite() && window_s > 0.0, "window length must be > 0 s");
        let n = nominal_bps.len();
        Self { window_s, nominal_bps, per_link: vec![Vec::new(); n] }
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
    pub fn add(&mut self, link: LinkId, t0: f64, t1: f64, rate_bps: f64) {
        if t1 <= t0 || rate_bps <= 0.0 {
            return;
        }
        let w = self.window_s;
        let list = &mut self.per_link[link as usize];
        let mut k = (t0 / w).floor() as u64;
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
        }
    }

    /// Adds `bytes` to window `window` of `link`, which must not be before
    /// the link's last window (the engine fills windows in time order).
    pub fn add_to_window(&mut self, link: LinkId, window: u32, bytes: f64) {
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
        LinkWindows { window_s: self.window_s * k as f64, nominal_bps: self.nominal_bps.clone(), per_link }
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
}
