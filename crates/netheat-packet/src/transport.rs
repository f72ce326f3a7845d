//! Transports: the sender and receiver logic of one flow, behind [`Transport`].
//!
//! The engine calls a transport on start, on data arrival (receiver side), on
//! ACK arrival (sender side) and on its timer; the transport answers with
//! [`Action`]s (send, ACK, set timer, done). Tags: `newreno`, `dctcp`,
//! `dctcp-cbq` (DCTCP whose data packets use the small CloudBurst queue, for
//! baselines given CloudBurst's isolation), `pias`, `lia`, `lia-cbq`, and
//! `cloudburst-a|b|c|d` (the CloudBurst slides' variants: A neither spraying
//! nor the small queue, B spraying, C the small queue, D both; `cloudburst`
//! = `cloudburst-d`).
//! `udp` sends a message as datagrams at once, with no ACKs, window or
//! retransmission: a message with a lost datagram never finishes.
//! `lia` and `lia-cbq` are MPTCP subflows (RFC 6356's linked increases
//! over NewReno windows that halve on loss or an ECN echo, RFC 3168): the
//! flows the engine gives one [`FlowSpec::coupling`](crate::FlowSpec) share
//! a [`LiaGroup`]. Replication and MPTCP are built from several flows on
//! distinct path offsets by the caller (the scenario's `mptcp` and
//! `dctcp-replication` transports, `netheat-scenario`'s `packet.rs`).

use std::sync::{Arc, Mutex, PoisonError};

use netheat_fec::{LtDecoder, LtParams};

use crate::{PacketError, PS};

/// Payload bytes per data packet.
pub const MSS: u64 = 1460;
/// Header bytes per data packet.
pub const HDR: u64 = 40;

/// Payload bytes of a UDP datagram in a 1,500-byte IPv4 packet.
pub const UDP_PAYLOAD: u64 = 1472;
/// IPv4 and UDP header bytes per datagram.
pub const UDP_HDR: u64 = 28;

/// PIAS demotion thresholds (bytes) for the web-search flow-size
/// distribution: the thresholds the PIAS authors use for this workload in
/// their own simulations (HKUST-SING/PIAS-NS2, `scripts/run_pias_dctcp.py`:
/// 46, 1084, 1717, 1943, 1989, 1999, 2001 packets of 1460 B for 8 queues,
/// one set for loads 0.1-0.9; their flow-size CDF has the same mean, 1138
/// packets, as [`netheat_workloads::sizes::SizeDist::web_search`]). PIAS
/// (NSDI'15, §4.2) derives thresholds from the flow-size distribution and
/// load by an optimisation we do not re-solve. With one class kept for
/// ACKs, CloudBurst and isolated incast messages, 7 classes remain for
/// PIAS, so the last two of the 8 queues are merged (their thresholds, 1999
/// and 2001 packets, differ by two packets): 6 thresholds, 7 classes.
pub const PIAS_WEB_SEARCH_THRESHOLDS: [u64; 6] = [46 * MSS, 1084 * MSS, 1717 * MSS, 1943 * MSS, 1989 * MSS, 1999 * MSS];

/// How a packet picks its path.
#[derive(Debug, Clone, Copy)]
pub enum PathSel {
    /// The flow's ECMP path.
    Flow,
    /// Next path round-robin.
    Spray,
    /// ECMP path plus an offset.
    Index(usize),
}

/// What a transport asks the engine to do.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// Send a data packet.
    Send {
        /// Segment or symbol id.
        seq: u64,
        /// Wire bytes.
        size: u32,
        /// Priority class.
        prio: u8,
        /// Path choice.
        sel: PathSel,
        /// Belongs to the small CloudBurst queue.
        cb_class: bool,
    },
    /// Send an ACK back along the reverse of the data packet's path.
    Ack {
        /// Value acknowledged.
        seq: u64,
        /// ECN echo.
        ece: bool,
        /// Echoed timestamp.
        ts: u64,
        /// Priority class.
        prio: u8,
        /// Path arena index of the data packet.
        path_of: u32,
        /// Belongs to the small CloudBurst queue.
        cb_class: bool,
    },
    /// (Re)arm the flow's single timer at this time (ps).
    Timer {
        /// Absolute time, ps.
        at: u64,
    },
    /// Disarm the timer.
    CancelTimer,
    /// The receiver has the whole message.
    Done,
}

/// Transport parameters shared by all flows of a run.
#[derive(Debug, Clone)]
pub struct TransportConfig {
    /// Initial congestion window, packets.
    pub init_cwnd: f64,
    /// Minimum retransmission timeout, seconds.
    pub rto_min_s: f64,
    /// DCTCP gain g.
    pub dctcp_g: f64,
    /// PIAS demotion thresholds in bytes sent (ascending); priority = number passed.
    pub pias_thresholds: Vec<u64>,
    /// First PIAS priority class.
    pub pias_base_prio: u8,
    /// CloudBurst: symbols in flight as a multiple of k (initial burst).
    pub cb_burst_factor: f64,
    /// CloudBurst: minimum symbols in flight.
    pub cb_min_burst: u64,
    /// CloudBurst: re-burst timeout, seconds.
    pub cb_timeout_s: f64,
}

impl Default for TransportConfig {
    fn default() -> Self {
        Self {
            init_cwnd: 10.0,
            rto_min_s: 5e-3,
            dctcp_g: 1.0 / 16.0,
            pias_thresholds: vec![100_000, 1_000_000, 10_000_000],
            pias_base_prio: 0,
            cb_burst_factor: 1.3,
            cb_min_burst: 8,
            cb_timeout_s: 3e-4,
        }
    }
}

/// Sender and receiver of one flow.
pub trait Transport: Send {
    /// The flow starts.
    fn on_start(&mut self, now: u64, out: &mut Vec<Action>);
    /// A data packet arrived at the receiver.
    fn on_data(&mut self, now: u64, seq: u64, ecn: bool, ts: u64, path: u32, out: &mut Vec<Action>);
    /// An ACK arrived at the sender.
    fn on_ack(&mut self, now: u64, seq: u64, ece: bool, ts: u64, out: &mut Vec<Action>);
    /// The timer fired.
    fn on_timer(&mut self, now: u64, out: &mut Vec<Action>);
    /// Retransmission timeouts so far.
    fn timeouts(&self) -> u32;
    /// Joins the connection whose subflows share `group` (see
    /// [`LiaGroup`]); false for transports that do not couple.
    fn couple(&mut self, group: &Coupling) -> bool {
        let _ = group;
        false
    }
    /// DCTCP's congestion estimate: how many times the sender updated alpha
    /// (once per observation window, about an RTT) and the sum of alpha
    /// after each update; `(0, 0.0)` for transports without one.
    fn alpha_updates(&self) -> (u64, f64) {
        (0, 0.0)
    }
}

netheat_core::registry! {
    /// Known transport tags (`cloudburst` is `cloudburst-d`, the full
    /// protocol; `-a`/`-b`/`-c` are its ablations).
    pub const TRANSPORTS;
    /// The transport of a tag for one flow (`None`: unknown tag).
    fn build(cfg: &TransportConfig, bytes: u64, prio: u8, flow_id: u64, sel: PathSel) -> Box<dyn Transport> {
        "newreno" => Box::new(Tcp::new(cfg, bytes, prio, Cc::NewReno, sel)),
        "dctcp" => Box::new(Tcp::new(cfg, bytes, prio, Cc::Dctcp, sel)),
        "dctcp-cbq" => Box::new(Tcp { cb_class: true, ..Tcp::new(cfg, bytes, prio, Cc::Dctcp, sel) }),
        "pias" => Box::new(Tcp::new(cfg, bytes, prio, Cc::Pias, sel)),
        "lia" => Box::new(Tcp::new(cfg, bytes, prio, Cc::Lia, sel)),
        "lia-cbq" => Box::new(Tcp { cb_class: true, ..Tcp::new(cfg, bytes, prio, Cc::Lia, sel) }),
        "udp" => Box::new(Udp::new(bytes, prio, sel)),
        "cloudburst" => Box::new(CloudBurst::new(cfg, bytes, flow_id, true, true)),
        "cloudburst-a" => Box::new(CloudBurst::new(cfg, bytes, flow_id, false, false)),
        "cloudburst-b" => Box::new(CloudBurst::new(cfg, bytes, flow_id, true, false)),
        "cloudburst-c" => Box::new(CloudBurst::new(cfg, bytes, flow_id, false, true)),
        "cloudburst-d" => Box::new(CloudBurst::new(cfg, bytes, flow_id, true, true)),
    }
}

/// Known transport tags.
pub fn transport_tags() -> &'static [&'static str] {
    TRANSPORTS
}

/// Builds the transport named `tag`.
pub fn make_transport(
    tag: &str,
    cfg: &TransportConfig,
    bytes: u64,
    prio: u8,
    flow_id: u64,
    path_offset: usize,
) -> Result<Box<dyn Transport>, PacketError> {
    let sel = if path_offset == 0 { PathSel::Flow } else { PathSel::Index(path_offset) };
    build(tag, cfg, bytes, prio, flow_id, sel)
        .ok_or_else(|| PacketError::UnknownTransport { tag: tag.into(), known: transport_tags().join(", ") })
}

/// Whether flows of the transport `tag` couple their windows when the
/// engine gives them one [`FlowSpec::coupling`](crate::FlowSpec).
pub fn couples(tag: &str) -> bool {
    matches!(tag, "lia" | "lia-cbq")
}

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
    subflows: Vec<(f64, f64)>,
}

/// A [`LiaGroup`] as its subflows hold it.
pub type Coupling = Arc<Mutex<LiaGroup>>;

impl LiaGroup {
    fn join(&mut self, cwnd: f64) -> usize {
        self.subflows.push((cwnd, 0.0));
        self.subflows.len() - 1
    }

    /// Window growth of subflow `me` for `acked` new segments in congestion
    /// avoidance, its own window and RTT being `me`'s entry.
    fn increase(&self, me: usize, acked: f64) -> f64 {
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cc {
    NewReno,
    Dctcp,
    Pias,
    /// NewReno that also halves once a window on an ECN echo (RFC 3168):
    /// an MPTCP subflow, whose congestion-avoidance growth is its
    /// [`LiaGroup`]'s once it has joined one.
    Lia,
}

fn seg_size(bytes: u64, nseg: u64, i: u64) -> u32 {
    let payload = if i + 1 == nseg { bytes - MSS * (nseg - 1) } else { MSS };
    (payload + HDR) as u32
}

/// TCP with NewReno loss recovery; DCTCP and PIAS add ECN-proportional
/// window reduction, PIAS also priority demotion by bytes sent.
struct Tcp {
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
    fn new(cfg: &TransportConfig, bytes: u64, prio: u8, cc: Cc, sel: PathSel) -> Self {
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

/// UDP: every datagram of the message leaves at the start, as fast as the
/// host's port sends them; the receiver has the message when all have
/// arrived. Nothing is acknowledged or sent again, so a message with a
/// lost datagram never finishes (memcache over UDP, Subways §8.5; the
/// Facebook memcache paper, Nishtala et al. NSDI'13 §3.1, counts such a
/// get as an error at the client).
struct Udp {
    bytes: u64,
    datagrams: u64,
    arrived: u64,
    prio: u8,
    sel: PathSel,
    done: bool,
}

impl Udp {
    fn new(bytes: u64, prio: u8, sel: PathSel) -> Self {
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

/// CloudBurst: LT-coded symbols, self-clocked bursts until decoded.
struct CloudBurst {
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
    fn new(cfg: &TransportConfig, bytes: u64, flow_id: u64, spray: bool, cb_class: bool) -> Self {
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
