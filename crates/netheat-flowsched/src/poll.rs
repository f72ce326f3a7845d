//! When `fifo-lm` reads the bytes its large tasks have sent: the one rule
//! of every engine driver (the idealized runner [`crate::ideal`] and the
//! scenario's flow driver), so they schedule the same tasks identically.
//!
//! A task is watched from its arrival if it is larger than the heavy
//! threshold (smaller ones can never cross it) until it is found over the
//! threshold. A poll reads every watched task's exact bytes so far, so a
//! task turns heavy at most `poll_s` after it crosses. A task's bytes
//! cannot grow faster than its *cut*, the capacity of the distinct last
//! links of its flows, so it is not read again before it could possibly
//! cross (its bytes at the last read plus the cut rate since: its *due*
//! time), and polls before the earliest due time over all watched tasks
//! are skipped. An arriving candidate schedules a poll `poll_s` later. A
//! task still turns heavy within `poll_s` of crossing; detection instants
//! move by less than `poll_s` against a fixed `poll_s` grid (the Bing-like
//! p99 at 10,000 tasks moved by 0.005%), and heavy-tailed runs, with tasks
//! watched for hours of simulated time, do not pay a timer every `poll_s`.

/// One watched task.
#[derive(Debug, Clone, Copy)]
struct Watched {
    key: u64,
    cut_bps: f64,
    due_s: f64,
}

/// The watch list and the poll timer of one run (see the module docs).
/// Keys are the driver's own task keys.
#[derive(Debug, Clone)]
pub struct HeavyPoll {
    poll_s: f64,
    watch: Vec<Watched>,
    /// When the pending poll fires (`None`: no poll pending).
    next_s: Option<f64>,
}

impl HeavyPoll {
    /// No task watched yet; polls `poll_s` apart (> 0).
    pub fn new(poll_s: f64) -> Self {
        Self { poll_s, watch: Vec::new(), next_s: None }
    }

    /// Watches task `key` from `now` (call at its arrival when it is larger
    /// than the threshold); `cut_bps` bounds its sending rate (infinite: no
    /// bound). Returns the time of a poll to schedule, if one is needed
    /// sooner than the pending one.
    #[must_use]
    pub fn watch(&mut self, now: f64, key: u64, cut_bps: f64) -> Option<f64> {
        self.watch.push(Watched { key, cut_bps, due_s: 0.0 });
        let at = now + self.poll_s;
        match self.next_s {
            Some(next) if next <= at => None,
            _ => {
                self.next_s = Some(at);
                Some(at)
            }
        }
    }

    /// Whether a poll timer firing at `now` is the pending one (earlier
    /// timers were superseded by [`HeavyPoll::watch`]).
    pub fn is_due(&self, now: f64) -> bool {
        self.next_s == Some(now)
    }

    /// The poll at `now`. Tasks for which `done(key)` holds (completed) are
    /// dropped; `sent(key)` gives a due task's bytes so far, and
    /// `heavy(key, bytes)` is called for each task found over `threshold`
    /// (then no longer watched). Returns the time of the next poll to
    /// schedule, if any.
    #[must_use]
    pub fn poll(
        &mut self,
        now: f64,
        threshold: f64,
        done: impl Fn(u64) -> bool,
        mut sent: impl FnMut(u64) -> f64,
        mut heavy: impl FnMut(u64, f64),
    ) -> Option<f64> {
        self.next_s = None;
        let mut keep = Vec::with_capacity(self.watch.len());
        for mut w in std::mem::take(&mut self.watch) {
            if done(w.key) {
                continue;
            }
            if now < w.due_s {
                keep.push(w);
                continue;
            }
            let so_far = sent(w.key);
            if so_far > threshold {
                heavy(w.key, so_far);
            } else {
                // A hair of margin so rounding cannot skip a crossing.
                w.due_s = now + (threshold - so_far) * 8.0 / (w.cut_bps * (1.0 + 1e-9));
                keep.push(w);
            }
        }
        self.watch = keep;
        let min_due = self.watch.iter().map(|w| w.due_s).fold(f64::INFINITY, f64::min);
        if self.watch.is_empty() || !min_due.is_finite() {
            return None;
        }
        let k = ((min_due - now) / self.poll_s).ceil().max(1.0);
        let at = now + k * self.poll_s;
        self.next_s = Some(at);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::HeavyPoll;

    /// Threshold 1 MB, polls 100 us apart, one task whose receivers take
    /// 1 Gbit/s: watched at 0, first poll at 100 us; it has sent 100 KB, so
    /// it cannot cross before 100 us + 900 KB x 8 / 1 Gbit/s = 7.3 ms, and
    /// the next poll is at the first multiple of 100 us past that (7.3 ms,
    /// within the 1e-9 margin). A second task arriving at 2 ms brings a poll
    /// at 2.1 ms, where the first is skipped (not due); at 7.3 ms the first
    /// has sent 1.2 MB and turns heavy.
    #[test]
    fn polls_skip_until_a_task_could_cross() {
        let mut p = HeavyPoll::new(100e-6);
        assert_eq!(p.watch(0.0, 7, 1e9), Some(100e-6));
        assert!(p.is_due(100e-6) && !p.is_due(50e-6));
        let mut read = Vec::new();
        let next = p.poll(
            100e-6,
            1e6,
            |_| false,
            |k| {
                read.push(k);
                100e3
            },
            |_, _| panic!("not heavy yet"),
        );
        assert_eq!(read, [7]);
        let at = next.unwrap();
        assert!((at - 7.3e-3).abs() < 1e-9, "{at}");
        // A newcomer polls sooner; the first task is not read then.
        assert_eq!(p.watch(2e-3, 8, 1e9), Some(2.1e-3));
        let mut read = Vec::new();
        let next = p.poll(
            2.1e-3,
            1e6,
            |_| false,
            |k| {
                read.push(k);
                0.0
            },
            |_, _| panic!("not heavy"),
        );
        assert_eq!(read, [8]);
        // Task 8 is due at 2.1 ms + 8 ms; task 7 at 7.3 ms comes first.
        assert!((next.unwrap() - 7.3e-3).abs() < 1e-9);
        let mut heavy = Vec::new();
        let next = p.poll(7.3e-3, 1e6, |_| false, |k| if k == 7 { 1.2e6 } else { 0.0 }, |k, b| heavy.push((k, b)));
        assert_eq!(heavy, [(7, 1.2e6)]);
        // Only task 8 is left, due at 10.1 ms.
        assert!((next.unwrap() - 10.1e-3).abs() < 1e-9);
        // A completed task is dropped without a read; none left, no poll.
        assert_eq!(p.poll(10.1e-3, 1e6, |_| true, |_| panic!("no read"), |_, _| {}), None);
    }
}
