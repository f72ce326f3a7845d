//! CloudBurst: multipath with fountain coding.

use netheat_fec::{LtDecoder, LtParams};

use super::{Action, PathSel, Transport, TransportConfig, HDR, MSS};
use crate::PS;

/// CloudBurst: LT-coded symbols, self-clocked bursts until decoded.
pub(super) struct CloudBurst {
    params: LtParams,
    dec: LtDecoder,
    k: u64,
    burst: u64,
    next_id: u64,
    spray: bool,
    cb_class: bool,
    decoded_acked: bool,
    done: bool,
    timeout_ps: u64,
    timeouts: u32,
}

impl CloudBurst {
    pub(super) fn new(cfg: &TransportConfig, bytes: u64, flow_id: u64, spray: bool, cb_class: bool) -> Self {
        let k = bytes.div_ceil(MSS).max(1);
        // k >= 1 and fixed constants are valid, so this cannot fail.
        let params = LtParams::new(k as usize, flow_id).expect("valid LT parameters");
        let burst = ((k as f64 * cfg.cb_burst_factor).ceil() as u64).max(cfg.cb_min_burst);
        Self {
            dec: LtDecoder::new(params.clone(), 0),
            params,
            k,
            burst,
            next_id: 0,
            spray,
            cb_class,
            decoded_acked: false,
            done: false,
            timeout_ps: (cfg.cb_timeout_s * PS) as u64,
            timeouts: 0,
        }
    }

    fn send(&mut self, n: u64, out: &mut Vec<Action>) {
        let prio = if self.cb_class { 0 } else { 1 };
        let sel = if self.spray { PathSel::Spray } else { PathSel::Flow };
        for _ in 0..n {
            out.push(Action::Send { seq: self.next_id, size: (MSS + HDR) as u32, prio, sel, cb_class: self.cb_class });
            self.next_id += 1;
        }
    }
}

impl Transport for CloudBurst {
    fn on_start(&mut self, now: u64, out: &mut Vec<Action>) {
        self.send(self.burst, out);
        out.push(Action::Timer { at: now + self.timeout_ps });
    }

    fn on_data(&mut self, _now: u64, seq: u64, _ecn: bool, ts: u64, path: u32, out: &mut Vec<Action>) {
        if !self.done {
            // Graph-only decoding (block size 0): exact peeling decision.
            let _ = self.dec.add_symbol(seq, &[]);
            if self.dec.is_done() {
                self.done = true;
                out.push(Action::Done);
            }
        }
        let v = if self.done { u64::MAX } else { seq };
        let prio = if self.cb_class { 0 } else { 1 };
        out.push(Action::Ack { seq: v, ece: false, ts, prio, path_of: path, cb_class: false });
    }

    fn on_ack(&mut self, now: u64, seq: u64, _ece: bool, _ts: u64, out: &mut Vec<Action>) {
        if self.decoded_acked {
            return;
        }
        if seq == u64::MAX {
            self.decoded_acked = true;
            out.push(Action::CancelTimer);
            return;
        }
        // Each symbol that got through clocks out one more.
        self.send(1, out);
        out.push(Action::Timer { at: now + self.timeout_ps });
    }

    fn on_timer(&mut self, now: u64, out: &mut Vec<Action>) {
        if self.decoded_acked {
            return;
        }
        self.timeouts += 1;
        // Nothing came back for a while: burst again.
        let n = self.burst.min(self.k.max(self.params.k as u64));
        self.send(n, out);
        out.push(Action::Timer { at: now + self.timeout_ps });
    }

    fn timeouts(&self) -> u32 {
        self.timeouts
    }
}
