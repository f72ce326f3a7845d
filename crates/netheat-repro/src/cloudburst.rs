//! The CloudBurst incast network on the packet engine: web-search
//! background load plus periodic incasts of small messages on a leaf-spine,
//! for one variant. The experiment runs as a scenario
//! (`experiments/scenarios/cloudburst-incast.toml`, the `incast` workload
//! app and the packet scenario's transports); this module is the fixed
//! network behind `make bench`'s `packet_bench` and `make validate-ns3`'s
//! leaf-spine cross-check, and its [`IncastParams::reburst_timeout_s`] the
//! hand-checked form of the scenario's derived re-burst timeout.
//!
//! Background flows (Poisson, web-search sizes, random inter-rack pairs) use
//! the variant's base transport (PIAS for `pias`, DCTCP otherwise). Each
//! incast picks a receiver and `fanin` senders in other racks; each sender
//! sends one message. The message completion time (MCT) of an incast message
//! is what the metrics compare. `dctcp-replication` sends two DCTCP copies on
//! different paths (MCT = first copy done); `mptcp` splits a message over two
//! uncoupled DCTCP subflows on different paths (MCT = last subflow done).
//!
//! CloudBurst puts its symbols in a separate small-buffered queue (slides,
//! "Aggressive dropping in the network"), which the engine serves at strict
//! priority 0. [`Isolation`] says what the baselines' incast messages get:
//! the same class (the fair comparison, [`Isolation::Priority`]), the same
//! class and the same small queue ([`Isolation::SmallQueue`]), or nothing
//! ([`Isolation::None`]: they share class 1 with the background, as a
//! deployment that isolates only CloudBurst would).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use netheat_core::stats;
use netheat_topology::{Topology, TopologySpec};
use netheat_workloads::sizes::SizeDist;

use netheat_packet::transport::{HDR, MSS};
use netheat_packet::{FlowSpec, NetConfig, PacketError, SimResult, Simulator, TransportConfig};

/// Buffer per port of the modelled switch, bytes: Broadcom Trident+
/// (48 x 10 Gbps, 9 MB shared), the 10 Gbps ASIC of the slides' buffer table
/// ("Shallow shared-buffer switch": 192 KB per port). The experiment's links
/// are all 10 Gbps, so each switch gets 192 KB times its port count.
pub const TRIDENT_PLUS_BUFFER_PER_PORT: u64 = 192_000;

/// Dynamic-threshold factor of the shared buffer: alpha = 1, the basic
/// setting of Choudhury and Hahne's dynamic threshold scheme (IEEE/ACM ToN
/// 1998; a port may hold as much as the buffer still free, so one congested
/// port takes at most half the buffer). Vendors' defaults are not public.
pub const SHARED_BUFFER_ALPHA: f64 = 1.0;

/// How the baselines' incast messages are queued relative to CloudBurst's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Class 1, shared with the background (only CloudBurst is isolated).
    None,
    /// Strict-priority class 0, as CloudBurst's symbols, with the switch's
    /// normal buffer (port or shared); PIAS incast messages are not demoted
    /// out of it. The fair baseline and the headline.
    Priority,
    /// Class 0 and CloudBurst's small queue limit (DCTCP data in the small
    /// queue: `dctcp-cbq`).
    SmallQueue,
}

impl Isolation {
    /// Parses `none`, `priority` or `small-queue`.
    pub fn parse(s: &str) -> Result<Self, PacketError> {
        match s {
            "none" => Ok(Self::None),
            "priority" => Ok(Self::Priority),
            "small-queue" => Ok(Self::SmallQueue),
            _ => Err(PacketError::Config(format!("isolation '{s}': expected none, priority or small-queue"))),
        }
    }
}

/// Variants of the experiment.
pub const VARIANTS: &[&str] =
    &["dctcp", "pias", "dctcp-replication", "mptcp", "cloudburst-a", "cloudburst-b", "cloudburst-c", "cloudburst-d"];

/// Parameters of one point.
#[derive(Debug, Clone)]
pub struct IncastParams {
    /// Racks (leaves).
    pub racks: usize,
    /// Hosts per rack.
    pub hosts_per_rack: usize,
    /// Spine switches.
    pub spines: usize,
    /// Host link speed, bps.
    pub host_bps: f64,
    /// Total uplink per leaf, bps.
    pub uplink_bps: f64,
    /// Background load as a fraction of host link capacity.
    pub load: f64,
    /// Senders per incast.
    pub fanin: usize,
    /// Incast message sizes, cycled.
    pub msg_bytes: Vec<u64>,
    /// Number of incasts.
    pub incasts: usize,
    /// Mean gap between incasts, seconds.
    pub incast_gap_s: f64,
    /// Extra time after the last incast, seconds.
    pub drain_s: f64,
    /// Seed.
    pub seed: u64,
    /// Queue treatment of the baselines' incast messages.
    pub isolation: Isolation,
}

impl IncastParams {
    /// The speed benchmark's scenario (`packet_bench`, and the ns-3
    /// comparison): 8 leaves x 16 hosts, 4 spines, 10 Gbps hosts and 40 Gbps
    /// of leaf uplink, web-search background at load 0.5, 20 incasts of 32
    /// senders (5 KB and 93 KB messages) 1 ms apart, no drain.
    pub fn leaf_spine_benchmark() -> Self {
        Self {
            racks: 8,
            hosts_per_rack: 16,
            spines: 4,
            host_bps: 10e9,
            uplink_bps: 40e9,
            load: 0.5,
            fanin: 32,
            msg_bytes: vec![5_000, 93_000],
            incasts: 20,
            incast_gap_s: 1e-3,
            drain_s: 0.0,
            seed: 7,
            isolation: Isolation::None,
        }
    }

    /// Links on an inter-rack path (host, leaf, spine, leaf, host) with
    /// their speeds, bps.
    fn path_links_bps(&self) -> [f64; 4] {
        let fabric = self.uplink_bps / self.spines.max(1) as f64;
        [self.host_bps, fabric, fabric, self.host_bps]
    }

    /// CloudBurst's re-burst timeout, fixed a priori by RTO reasoning: the
    /// longest a symbol that is not dropped can take to be acknowledged, so
    /// that the timer fires only when every symbol in flight was lost. Per
    /// hop of the inter-rack path, each way: propagation, a full CloudBurst
    /// queue plus one packet of a lower class already on the wire
    /// (non-preemptive strict priority), and the packet's own serialization;
    /// the ACK (64 B) returns at class 0 on the reverse path. With the
    /// experiment's 10 Gbps links, 1 us per link and a 12 KB queue: 4 x
    /// 13.0 us + 4 x 11.85 us = 99.4 us. (The slides give no value; their
    /// point is that recovery must not wait for TCP's RTO_min.)
    pub fn reburst_timeout_s(&self, net: &NetConfig) -> f64 {
        let pkt = (MSS + HDR) as f64;
        let wait = (net.cloudburst_queue_bytes as f64 + pkt) * 8.0;
        self.path_links_bps().iter().map(|&c| 2.0 * net.prop_delay_s + 2.0 * wait / c + (pkt + 64.0) * 8.0 / c).sum()
    }

    /// The network of the experiment: shared-buffer switches of
    /// [`TRIDENT_PLUS_BUFFER_PER_PORT`] per port with dynamic threshold
    /// [`SHARED_BUFFER_ALPHA`], DCTCP marking at `ecn_threshold_bytes`, and
    /// CloudBurst's small queue of `cloudburst_queue_bytes`.
    pub fn net_config(ecn_threshold_bytes: u64, cloudburst_queue_bytes: u64, prop_delay_s: f64) -> NetConfig {
        NetConfig {
            ecn_threshold_bytes: Some(ecn_threshold_bytes),
            shared_buffer_per_port_bytes: Some(TRIDENT_PLUS_BUFFER_PER_PORT),
            alpha: SHARED_BUFFER_ALPHA,
            cloudburst_queue_bytes,
            prop_delay_s,
            ..Default::default()
        }
    }
}

/// Outcome of one point.
#[derive(Debug, Clone)]
pub struct IncastOutcome {
    /// Completion times of incast messages, seconds (unfinished excluded).
    pub mct_s: Vec<f64>,
    /// Message sizes matching `mct_s`.
    pub mct_bytes: Vec<u64>,
    /// Incast messages that did not finish.
    pub unfinished: usize,
    /// Full engine result.
    pub result: SimResult,
}

/// Runs one variant.
pub fn run_incast_point(
    p: &IncastParams,
    variant: &str,
    net: &NetConfig,
    tcfg: &TransportConfig,
) -> Result<IncastOutcome, PacketError> {
    if !VARIANTS.contains(&variant) {
        return Err(PacketError::UnknownTransport { tag: variant.into(), known: VARIANTS.join(", ") });
    }
    if p.racks < 2
        || p.hosts_per_rack == 0
        || p.fanin == 0
        || p.msg_bytes.is_empty()
        || !(p.load >= 0.0 && p.load < 1.0)
    {
        return Err(PacketError::Config("need racks >= 2, hosts, fanin >= 1, message sizes, 0 <= load < 1".into()));
    }
    let spec = TopologySpec::three_tier(1, p.racks, p.hosts_per_rack, p.spines, 0, p.host_bps, p.uplink_bps, None);
    let topo = Topology::build(&spec).map_err(|e| PacketError::Config(e.to_string()))?;
    let n = (p.racks * p.hosts_per_rack) as u32;
    let hpr = p.hosts_per_rack as u32;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let base = if variant == "pias" { "pias" } else { "dctcp" };
    let mut flows = Vec::new();
    let mut id = 0u64;
    let horizon = p.incasts as f64 * p.incast_gap_s;
    // Background: Poisson arrivals with total rate load * n * C / (8 E[S]).
    let ws = SizeDist::web_search();
    let lambda = p.load * n as f64 * p.host_bps / (8.0 * ws.mean());
    let mut t = 0.0;
    if lambda > 0.0 {
        loop {
            t += -(1.0 - rng.gen::<f64>()).ln() / lambda;
            if t >= horizon {
                break;
            }
            let src = rng.gen_range(0..n);
            let mut dst = rng.gen_range(0..n);
            while dst / hpr == src / hpr {
                dst = rng.gen_range(0..n);
            }
            let bytes = ws.sample(&mut rng).round().max(1.0) as u64;
            flows.push(FlowSpec {
                id,
                src,
                dst,
                bytes,
                start_s: t,
                transport: base.into(),
                task_id: -1,
                priority: 1,
                path_offset: 0,
                coupling: None,
            });
            id += 1;
        }
    }
    // Incasts: task_id = message id.
    let mut msgs: Vec<(u64, f64)> = Vec::new();
    let mut t = 0.0;
    for i in 0..p.incasts {
        t += p.incast_gap_s * (0.5 + rng.gen::<f64>());
        let recv = rng.gen_range(0..n);
        let bytes = p.msg_bytes[i % p.msg_bytes.len()];
        let mut senders: Vec<u32> = Vec::new();
        while senders.len() < p.fanin.min((n - hpr) as usize) {
            let s = rng.gen_range(0..n);
            if s / hpr != recv / hpr && !senders.contains(&s) {
                senders.push(s);
            }
        }
        for s in senders {
            let task = msgs.len() as i64;
            msgs.push((bytes, t));
            // Baselines' incast messages: class 1 with the background, or
            // CloudBurst's class 0 (whole message, PIAS without demotion, so
            // DCTCP rate control as PIAS uses), optionally its small queue.
            let (prio, tcp) = match p.isolation {
                Isolation::None => (1, "dctcp"),
                Isolation::Priority => (0, "dctcp"),
                Isolation::SmallQueue => (0, "dctcp-cbq"),
            };
            let mk = |id: u64, bytes: u64, tp: &str, off: usize| FlowSpec {
                id,
                src: s,
                dst: recv,
                bytes,
                start_s: t,
                transport: tp.into(),
                task_id: task,
                priority: if tp.starts_with("cloudburst") { 1 } else { prio },
                path_offset: off,
                coupling: None,
            };
            match variant {
                "dctcp-replication" => {
                    flows.push(mk(id, bytes, tcp, 0));
                    flows.push(mk(id + 1, bytes, tcp, 1));
                    id += 2;
                }
                "mptcp" => {
                    flows.push(mk(id, bytes.div_ceil(2), tcp, 0));
                    flows.push(mk(id + 1, bytes / 2, tcp, 1));
                    id += 2;
                }
                "dctcp" => {
                    flows.push(mk(id, bytes, tcp, 0));
                    id += 1;
                }
                "pias" => {
                    let tp = if p.isolation == Isolation::None { "pias" } else { tcp };
                    flows.push(mk(id, bytes, tp, 0));
                    id += 1;
                }
                v => {
                    flows.push(mk(id, bytes, v, 0));
                    id += 1;
                }
            }
        }
    }
    let mut sim = Simulator::new(&topo, net.clone())?;
    for f in flows {
        sim.add_flow(f, tcfg)?;
    }
    let result = sim.run(horizon + p.incast_gap_s + p.drain_s);
    let mut first = vec![f64::INFINITY; msgs.len()];
    let mut last = vec![0.0f64; msgs.len()];
    let mut missing = vec![false; msgs.len()];
    for f in &result.flows {
        if f.task_id < 0 {
            continue;
        }
        let m = f.task_id as usize;
        if f.finish_s.is_finite() {
            first[m] = first[m].min(f.finish_s);
            last[m] = last[m].max(f.finish_s);
        } else {
            missing[m] = true;
        }
    }
    let any = variant == "dctcp-replication";
    let mut mct_s = Vec::new();
    let mut mct_bytes = Vec::new();
    let mut unfinished = 0;
    for (m, &(b, start)) in msgs.iter().enumerate() {
        let end = if any {
            first[m]
        } else if missing[m] {
            f64::INFINITY
        } else {
            last[m]
        };
        if end.is_finite() {
            mct_s.push(end - start);
            mct_bytes.push(b);
        } else {
            unfinished += 1;
        }
    }
    Ok(IncastOutcome { mct_s, mct_bytes, unfinished, result })
}

/// The 99th percentile (as [`mean_p99`]) of the completion times of each
/// message size, sizes ascending.
pub fn p99_by_size(o: &IncastOutcome) -> Vec<(u64, f64)> {
    let mut sizes: Vec<u64> = o.mct_bytes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|b| {
            let v: Vec<f64> = o.mct_s.iter().zip(&o.mct_bytes).filter(|(_, &x)| x == b).map(|(&t, _)| t).collect();
            (b, stats::quantile(&v, 0.99))
        })
        .collect()
}

/// Mean and 99th percentile of `v` (the linear quantile of
/// [`netheat_core::stats`]); NaN when empty.
pub fn mean_p99(v: &[f64]) -> (f64, f64) {
    (stats::mean(v), stats::quantile(v, 0.99))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(isolation: Isolation) -> IncastParams {
        IncastParams {
            racks: 2,
            hosts_per_rack: 4,
            spines: 2,
            host_bps: 10e9,
            uplink_bps: 20e9,
            load: 0.0,
            fanin: 3,
            msg_bytes: vec![5_000, 93_000],
            incasts: 4,
            incast_gap_s: 1e-3,
            drain_s: 0.05,
            seed: 3,
            isolation,
        }
    }

    #[test]
    fn reburst_timeout_is_the_worst_case_rtt_of_a_kept_symbol() {
        // Per hop, 10 Gbps: data 1 us + (12,000 + 1,500) B / 10 Gbps = 10.8 us
        // + 1.2 us = 13.0 us; ACK 1 us + 10.8 us + 64 B / 10 Gbps = 11.8512 us.
        // Four hops: 4 x 24.8512 us = 99.4048 us.
        let p = IncastParams { spines: 4, uplink_bps: 40e9, ..small(Isolation::Priority) };
        let net = IncastParams::net_config(30_000, 12_000, 1e-6);
        assert!((p.reburst_timeout_s(&net) - 99.4048e-6).abs() < 1e-12, "{}", p.reburst_timeout_s(&net));
        // A 40 Gbps fabric shortens the two middle hops to 1 + 2.7 + 0.3 and
        // 1 + 2.7 + 0.0128 us: 2 x 24.8512 + 2 x 7.7128 = 65.128 us.
        let p = IncastParams { spines: 1, ..p };
        assert!((p.reburst_timeout_s(&net) - 65.128e-6).abs() < 1e-12, "{}", p.reburst_timeout_s(&net));
    }

    #[test]
    fn isolation_puts_baseline_incast_messages_in_cloudburst_class() {
        let net = IncastParams::net_config(30_000, 12_000, 1e-6);
        let tcfg = TransportConfig::default();
        for (iso, want) in [(Isolation::None, 1u8), (Isolation::Priority, 0), (Isolation::SmallQueue, 0)] {
            for v in ["dctcp", "pias", "dctcp-replication", "mptcp"] {
                let o = run_incast_point(&small(iso), v, &net, &tcfg).unwrap();
                assert_eq!(o.unfinished, 0);
                let incast: Vec<_> = o.result.flows.iter().filter(|f| f.task_id >= 0).collect();
                assert!(!incast.is_empty());
                assert!(incast.iter().all(|f| f.priority == want), "{iso:?} {v}");
            }
        }
        assert!(Isolation::parse("strict").is_err());
        assert_eq!(Isolation::parse("small-queue").unwrap(), Isolation::SmallQueue);
    }

    #[test]
    fn isolated_incast_overtakes_the_background() {
        // One 93 KB message from rack 0 to host 4 while a 20 MB background
        // flow into host 4 already fills its port (static 300 KB buffer, no
        // ECN): in class 1 the message waits behind the background's queue
        // (up to 300 KB = 240 us), in class 0 it goes first (strict priority)
        // and shares the link only with the in-flight packets.
        let topo = Topology::build(&TopologySpec::three_tier(1, 2, 4, 2, 0, 10e9, 20e9, None)).unwrap();
        let run = |prio: u8| {
            let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
            let tcfg = TransportConfig::default();
            let f = |id, src, bytes, start_s, prio| FlowSpec {
                id,
                src,
                dst: 4,
                bytes,
                start_s,
                transport: "newreno".into(),
                task_id: id as i64,
                priority: prio,
                path_offset: 0,
                coupling: None,
            };
            sim.add_flow(f(0, 5, 20_000_000, 0.0, 1), &tcfg).unwrap();
            sim.add_flow(f(1, 0, 93_000, 2e-3, prio), &tcfg).unwrap();
            sim.run(f64::INFINITY).flows[1].fct_s
        };
        let (shared, isolated) = (run(1), run(0));
        println!("93 KB message behind the background: {shared:.6} s, isolated: {isolated:.6} s");
        assert!(isolated < shared);
        // Isolated: at least its own serialization, 93 KB at 10 Gbps = 74.4 us.
        assert!(isolated > 74.4e-6 && isolated < 0.5e-3);
    }

    #[test]
    fn p99_by_size_splits_the_sizes() {
        let o = run_incast_point(
            &small(Isolation::Priority),
            "dctcp",
            &IncastParams::net_config(30_000, 12_000, 1e-6),
            &TransportConfig::default(),
        )
        .unwrap();
        let by = p99_by_size(&o);
        assert_eq!(by.iter().map(|x| x.0).collect::<Vec<_>>(), vec![5_000, 93_000]);
        let big: Vec<f64> = o.mct_s.iter().zip(&o.mct_bytes).filter(|x| *x.1 == 93_000).map(|x| *x.0).collect();
        assert_eq!(big.len(), 2 * 3);
        assert_eq!(by[1].1, mean_p99(&big).1);
        // 3 x 93 KB into one 10 Gbps port: the last needs >= 223.2 us.
        assert!(by[1].1 >= 3.0 * 93_000.0 * 8.0 / 10e9);
    }

    #[test]
    fn mean_p99_is_the_linear_quantile() {
        // 1..=100: mean 50.5; h = 99 * 0.99 = 98.01 -> 99 + 0.01 = 99.01
        // (nearest rank gave the 99th value, 99).
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let (m, p99) = mean_p99(&v);
        assert_eq!(m, 50.5);
        assert!((p99 - 99.01).abs() < 1e-9, "{p99}");
        // Three values: h = 2 * 0.99 = 1.98 -> 3 + 0.98 * (5 - 3) = 4.96
        // (nearest rank: 5).
        let (m, p99) = mean_p99(&[5.0, 1.0, 3.0]);
        assert_eq!(m, 3.0);
        assert!((p99 - 4.96).abs() < 1e-12, "{p99}");
        assert_eq!(mean_p99(&[7.0]), (7.0, 7.0));
        let (m, p99) = mean_p99(&[]);
        assert!(m.is_nan() && p99.is_nan());
    }
}
