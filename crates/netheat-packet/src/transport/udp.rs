//! UDP datagrams.

use super::{Action, PathSel, Transport};

/// Payload bytes of a UDP datagram in a 1,500-byte IPv4 packet.
pub const UDP_PAYLOAD: u64 = 1472;
/// IPv4 and UDP header bytes per datagram.
pub const UDP_HDR: u64 = 28;

/// UDP: every datagram of the message leaves at the start, as fast as the
/// host's port sends them; the receiver has the message when all have
/// arrived. Nothing is acknowledged or sent again, so a message with a
/// lost datagram never finishes (memcache over UDP, Subways §8.7; the
/// Facebook memcache paper, Nishtala et al. NSDI'13 §3.1, counts such a
/// get as an error at the client).
pub(super) struct Udp {
    bytes: u64,
    datagrams: u64,
    arrived: u64,
    prio: u8,
    sel: PathSel,
    done: bool,
}

impl Udp {
    pub(super) fn new(bytes: u64, prio: u8, sel: PathSel) -> Self {
        let bytes = bytes.max(1);
        Self { bytes, datagrams: bytes.div_ceil(UDP_PAYLOAD), arrived: 0, prio, sel, done: false }
    }
}

impl Transport for Udp {
    fn on_start(&mut self, _now: u64, out: &mut Vec<Action>) {
        for i in 0..self.datagrams {
            let payload = if i + 1 == self.datagrams { self.bytes - UDP_PAYLOAD * i } else { UDP_PAYLOAD };
            out.push(Action::Send {
                seq: i,
                size: (payload + UDP_HDR) as u32,
                prio: self.prio,
                sel: self.sel,
                cb_class: false,
            });
        }
    }

    fn on_data(&mut self, _now: u64, _seq: u64, _ecn: bool, _ts: u64, _path: u32, out: &mut Vec<Action>) {
        // Each datagram is sent once and the network does not duplicate
        // packets, so arrivals can be counted.
        self.arrived += 1;
        if self.arrived == self.datagrams && !self.done {
            self.done = true;
            out.push(Action::Done);
        }
    }

    fn on_ack(&mut self, _now: u64, _seq: u64, _ece: bool, _ts: u64, _out: &mut Vec<Action>) {}

    fn on_timer(&mut self, _now: u64, _out: &mut Vec<Action>) {}

    fn timeouts(&self) -> u32 {
        0
    }
}
