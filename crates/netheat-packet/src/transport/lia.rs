//! MPTCP's coupled congestion control: RFC 6356's Linked Increases.

use std::sync::{Arc, Mutex};

/// The windows of one MPTCP connection's subflows, shared by them: the
/// Linked Increases Algorithm of RFC 6356 (§3). Each ACK that a subflow `i`
/// in congestion avoidance receives for `n` new segments grows its window by
/// `min(alpha * n / w_total, n / w_i)`, with `alpha = w_total * max_i(w_i /
/// rtt_i^2) / (sum_i w_i / rtt_i)^2` over the subflows still sending that
/// have an RTT sample; slow start and every decrease stay each subflow's
/// own. On one bottleneck shared with a TCP flow the connection so takes no
/// more than that flow's share (RFC 6356 §2, "do no harm").
#[derive(Debug, Default)]
pub struct LiaGroup {
    /// Per subflow: window (packets; 0 once it has sent everything) and
    /// smoothed RTT (s; 0 before the first sample).
    pub(super) subflows: Vec<(f64, f64)>,
}

/// A [`LiaGroup`] as its subflows hold it.
pub type Coupling = Arc<Mutex<LiaGroup>>;

impl LiaGroup {
    pub(super) fn join(&mut self, cwnd: f64) -> usize {
        self.subflows.push((cwnd, 0.0));
        self.subflows.len() - 1
    }

    /// Window growth of subflow `me` for `acked` new segments in congestion
    /// avoidance, its own window and RTT being `me`'s entry.
    pub(super) fn increase(&self, me: usize, acked: f64) -> f64 {
        let own = acked / self.subflows[me].0;
        let live = || self.subflows.iter().filter(|(w, r)| *w > 0.0 && *r > 0.0);
        if self.subflows[me].1 <= 0.0 {
            return own;
        }
        let total: f64 = live().map(|(w, _)| w).sum();
        let max = live().map(|(w, r)| w / (r * r)).fold(0.0, f64::max);
        let sum: f64 = live().map(|(w, r)| w / r).sum();
        let alpha = total * max / (sum * sum);
        (alpha * acked / total).min(own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6356 §3 by hand: windows 10 and 20 packets, RTTs 100 and 200 us.
    /// w_total = 30; max(w/rtt^2) = 10 / 1e-8 = 1e9; sum(w/rtt) = 1e5 + 1e5;
    /// alpha = 30 x 1e9 / 4e10 = 0.75; an ACK of one segment grows either
    /// subflow by min(0.75 / 30, 1 / w_i) = 0.025 packets.
    #[test]
    fn lia_increase_by_hand() {
        let g = LiaGroup { subflows: vec![(10.0, 100e-6), (20.0, 200e-6)] };
        assert!((g.increase(0, 1.0) - 0.025).abs() < 1e-12);
        assert!((g.increase(1, 1.0) - 0.025).abs() < 1e-12);
        // Alone (the other has finished), a subflow grows as TCP does.
        let g = LiaGroup { subflows: vec![(10.0, 100e-6), (0.0, 200e-6)] };
        assert!((g.increase(0, 1.0) - 0.1).abs() < 1e-12);
        // Without an RTT sample yet, as TCP too.
        let g = LiaGroup { subflows: vec![(10.0, 0.0), (20.0, 200e-6)] };
        assert!((g.increase(0, 2.0) - 0.2).abs() < 1e-12);
    }
}
