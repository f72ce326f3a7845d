//! One point of the CloudBurst experiment: web-search background load plus
//! periodic incasts of small messages on a leaf-spine, for one variant.
//!
//! Background flows (Poisson, web-search sizes, random inter-rack pairs) use
//! the variant's base transport (PIAS for `pias`, DCTCP otherwise). Each
//! incast picks a receiver and `fanin` senders in other racks; each sender
//! sends one message. The message completion time (MCT) of an incast message
//! is what the metrics compare. `dctcp-replication` sends two DCTCP copies on
//! different paths (MCT = first copy done); `mptcp` splits a message over two
//! uncoupled DCTCP subflows on different paths (MCT = last subflow done).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use netheat_core::stats;
use netheat_topology::{Topology, TopologySpec};
use netheat_workloads::sizes::SizeDist;

use crate::{FlowSpec, NetConfig, PacketError, SimResult, Simulator, TransportConfig};

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
            let mk = |id: u64, bytes: u64, tp: &str, off: usize| FlowSpec {
                id,
                src: s,
                dst: recv,
                bytes,
                start_s: t,
                transport: tp.into(),
                task_id: task,
                priority: 1,
                path_offset: off,
            };
            match variant {
                "dctcp-replication" => {
                    flows.push(mk(id, bytes, "dctcp", 0));
                    flows.push(mk(id + 1, bytes, "dctcp", 1));
                    id += 2;
                }
                "mptcp" => {
                    flows.push(mk(id, bytes.div_ceil(2), "dctcp", 0));
                    flows.push(mk(id + 1, bytes / 2, "dctcp", 1));
                    id += 2;
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

/// Mean and 99th percentile of `v` (the linear quantile of
/// [`netheat_core::stats`]); NaN when empty.
pub fn mean_p99(v: &[f64]) -> (f64, f64) {
    (stats::mean(v), stats::quantile(v, 0.99))
}

#[cfg(test)]
mod tests {
    use super::mean_p99;

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
