//! TCP: NewReno loss recovery, DCTCP's and PIAS's ECN-proportional
//! decrease, PIAS's demotion, and MPTCP subflows (`lia`).

use std::sync::{Arc, PoisonError};

use super::{Action, Coupling, PathSel, Transport, TransportConfig, HDR, MSS};
use crate::PS;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Cc {
    NewReno,
    Dctcp,
    Pias,
    /// NewReno that also halves once a window on an ECN echo (RFC 3168):
    /// an MPTCP subflow, whose congestion-avoidance growth is its
    /// [`LiaGroup`](super::LiaGroup)'s once it has joined one.
    Lia,
}

fn seg_size(bytes: u64, nseg: u64, i: u64) -> u32 {
    let payload = if i + 1 == nseg { bytes - MSS * (nseg - 1) } else { MSS };
    (payload + HDR) as u32
}

/// TCP with NewReno loss recovery; DCTCP and PIAS add ECN-proportional
/// window reduction, PIAS also priority demotion by bytes sent.
pub(super) struct Tcp {
    cc: Cc,
    bytes: u64,
    nseg: u64,
    prio: u8,
    sel: PathSel,
    thresholds: Vec<u64>,
    /// Data packets go to the small CloudBurst queue.
    cb_class: bool,
    /// The MPTCP connection this subflow belongs to, and its index there.
    group: Option<(Coupling, usize)>,
    // sender
    una: u64,
    nxt: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    recover: u64,
    in_recovery: bool,
    srtt: f64,
    rttvar: f64,
    rto: f64,
    rto_min: f64,
    timeouts: u32,
    alpha: f64,
    /// Updates of `alpha` so far, and the sum of its values after them.
    alpha_n: u64,
    alpha_sum: f64,
    g: f64,
    win_end: u64,
    win_acked: u64,
    win_marked: u64,
    cwr_end: u64,
    // receiver
    got: Vec<bool>,
    rcv_next: u64,
    done: bool,
}

impl Tcp {
    /// The same sender with its data packets in the small CloudBurst queue
    /// (`dctcp-cbq`, `lia-cbq`: baselines given CloudBurst's isolation).
    pub(super) fn in_small_queue(mut self) -> Self {
        self.cb_class = true;
        self
    }

    pub(super) fn new(cfg: &TransportConfig, bytes: u64, prio: u8, cc: Cc, sel: PathSel) -> Self {
        let nseg = bytes.div_ceil(MSS).max(1);
        Self {
            cc,
            bytes: bytes.max(1),
            nseg,
            prio,
            sel,
            thresholds: cfg.pias_thresholds.clone(),
            cb_class: false,
            group: None,
            una: 0,
            nxt: 0,
            cwnd: cfg.init_cwnd,
            ssthresh: f64::INFINITY,
            dupacks: 0,
            recover: 0,
            in_recovery: false,
            srtt: 0.0,
            rttvar: 0.0,
            rto: cfg.rto_min_s.max(1e-6),
            rto_min: cfg.rto_min_s,
            timeouts: 0,
            alpha: 1.0,
            alpha_n: 0,
            alpha_sum: 0.0,
            g: cfg.dctcp_g,
            win_end: 0,
            win_acked: 0,
            win_marked: 0,
            cwr_end: 0,
            got: vec![false; nseg as usize],
            rcv_next: 0,
            done: false,
        }
    }

    fn data_prio(&self, seg: u64) -> u8 {
        if self.cc == Cc::Pias {
            let sent = seg * MSS;
            self.prio + self.thresholds.iter().filter(|&&t| sent >= t).count() as u8
        } else {
            self.prio
        }
    }

    fn send_seg(&self, i: u64, out: &mut Vec<Action>) {
        out.push(Action::Send {
            seq: i,
            size: seg_size(self.bytes, self.nseg, i),
            prio: self.data_prio(i),
            sel: self.sel,
            cb_class: self.cb_class,
        });
    }

    fn fill(&mut self, out: &mut Vec<Action>) {
        while self.nxt < self.nseg && ((self.nxt - self.una) as f64) < self.cwnd.floor().max(1.0) {
            self.send_seg(self.nxt, out);
            self.nxt += 1;
        }
    }

    fn arm(&self, now: u64, out: &mut Vec<Action>) {
        out.push(Action::Timer { at: now + (self.rto * PS) as u64 });
    }

    /// Tells the connection this subflow's window and RTT (a window of 0
    /// once it has sent everything).
    fn publish(&self) {
        if let Some((g, i)) = &self.group {
            let w = if self.una >= self.nseg { 0.0 } else { self.cwnd };
            g.lock().unwrap_or_else(PoisonError::into_inner).subflows[*i] = (w, self.srtt);
        }
    }

    /// Congestion-avoidance growth for `newly` new segments.
    fn ca_increase(&self, newly: f64) -> f64 {
        match &self.group {
            Some((g, i)) => {
                // This subflow's window and RTT as of now, then its growth.
                let mut g = g.lock().unwrap_or_else(PoisonError::into_inner);
                g.subflows[*i] = (self.cwnd, self.srtt);
                g.increase(*i, newly)
            }
            None => newly / self.cwnd,
        }
    }
}

impl Transport for Tcp {
    fn on_start(&mut self, now: u64, out: &mut Vec<Action>) {
        self.fill(out);
        self.arm(now, out);
    }

    fn on_data(&mut self, _now: u64, seq: u64, ecn: bool, ts: u64, path: u32, out: &mut Vec<Action>) {
        if let Some(g) = self.got.get_mut(seq as usize) {
            *g = true;
        }
        while self.rcv_next < self.nseg && self.got[self.rcv_next as usize] {
            self.rcv_next += 1;
        }
        if self.rcv_next == self.nseg && !self.done {
            self.done = true;
            out.push(Action::Done);
        }
        // ACKs travel at the top class so they are not starved by data.
        out.push(Action::Ack { seq: self.rcv_next, ece: ecn, ts, prio: 0, path_of: path, cb_class: false });
    }

    fn on_ack(&mut self, now: u64, ack: u64, ece: bool, ts: u64, out: &mut Vec<Action>) {
        if self.una >= self.nseg {
            return;
        }
        let dctcp = matches!(self.cc, Cc::Dctcp | Cc::Pias);
        if dctcp {
            self.win_acked += 1;
            if ece {
                self.win_marked += 1;
            }
        }
        if ack > self.una {
            let newly = (ack - self.una) as f64;
            self.una = ack;
            if self.nxt < self.una {
                self.nxt = self.una;
            }
            self.dupacks = 0;
            let rtt = (now.saturating_sub(ts)) as f64 / PS;
            if self.srtt == 0.0 {
                self.srtt = rtt;
                self.rttvar = rtt / 2.0;
            } else {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - rtt).abs();
                self.srtt = 0.875 * self.srtt + 0.125 * rtt;
            }
            self.rto = (self.srtt + 4.0 * self.rttvar).max(self.rto_min);
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                } else {
                    // NewReno partial ACK: retransmit the next hole.
                    self.send_seg(self.una, out);
                    self.cwnd = (self.cwnd - newly + 1.0).max(1.0);
                }
            } else if self.cwnd < self.ssthresh {
                self.cwnd += newly;
            } else {
                self.cwnd += self.ca_increase(newly);
            }
            if dctcp && self.una > self.win_end {
                // One observation window (about one RTT) ended: update alpha.
                let f = self.win_marked as f64 / self.win_acked.max(1) as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                self.alpha_n += 1;
                self.alpha_sum += self.alpha;
                self.win_acked = 0;
                self.win_marked = 0;
                self.win_end = self.nxt;
            }
            if self.una >= self.nseg {
                self.publish();
                out.push(Action::CancelTimer);
                return;
            }
            self.arm(now, out);
        } else if ack == self.una && self.nxt > self.una {
            self.dupacks += 1;
            if self.dupacks == 3 && !self.in_recovery {
                self.ssthresh = (self.cwnd / 2.0).max(2.0);
                self.cwnd = self.ssthresh + 3.0;
                self.recover = self.nxt;
                self.in_recovery = true;
                self.send_seg(self.una, out);
            } else if self.in_recovery {
                self.cwnd += 1.0;
            }
        }
        if dctcp && ece && self.una >= self.cwr_end && !self.in_recovery {
            // At most one ECN reduction per window of data.
            self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(1.0);
            self.ssthresh = self.cwnd;
            self.cwr_end = self.nxt;
        }
        if self.cc == Cc::Lia && ece && self.una >= self.cwr_end && !self.in_recovery {
            // RFC 3168: an ECN echo halves the window, once per window.
            self.cwnd = (self.cwnd / 2.0).max(1.0);
            self.ssthresh = self.cwnd;
            self.cwr_end = self.nxt;
        }
        self.publish();
        self.fill(out);
    }

    fn on_timer(&mut self, now: u64, out: &mut Vec<Action>) {
        if self.una >= self.nseg {
            return;
        }
        self.timeouts += 1;
        self.ssthresh = (self.cwnd / 2.0).max(2.0);
        self.cwnd = 1.0;
        self.nxt = self.una;
        self.in_recovery = false;
        self.dupacks = 0;
        self.rto = (self.rto * 2.0).min(1.0);
        self.publish();
        self.fill(out);
        self.arm(now, out);
    }

    fn timeouts(&self) -> u32 {
        self.timeouts
    }

    fn couple(&mut self, group: &Coupling) -> bool {
        if self.cc != Cc::Lia {
            return false;
        }
        let i = group.lock().unwrap_or_else(PoisonError::into_inner).join(self.cwnd);
        self.group = Some((Arc::clone(group), i));
        true
    }

    fn alpha_updates(&self) -> (u64, f64) {
        (self.alpha_n, self.alpha_sum)
    }
}
