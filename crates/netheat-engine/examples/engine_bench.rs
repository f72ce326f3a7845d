//! Throughput benchmark of the engine on a synthetic two-tier datacenter.
//!
//! R racks x H hosts; host links of capacity C each way; each rack has one
//! aggregated uplink and one downlink of H*C/oversub to a non-blocking core.
//! Intra-rack path: [host_up(src), host_down(dst)]; otherwise
//! [host_up(src), tor_up(rack(src)), tor_down(rack(dst)), host_down(dst)].
//!
//! Usage: `engine_bench [a] [b] [c=N[,N...]]` (default: `a b c=10000,100000`;
//! `c=1000000` is the 10^6-flow run). `NETHEAT_CHECK=1` verifies every
//! recomputation against a full one (slow).
//!
//! Columns: recomputations; local repairs, their mean/max final region
//! (flows), mean allocation rounds per recomputation; whole-component
//! fallbacks and their mean/max component; `chg/ev` = flow rate changes per
//! event (the output size every exact incremental method must pay).
//!
//! Scenarios:
//! * a: 64x16 hosts, 10G, 4:1, 10,000 flows at t=0, bounded Pareto sizes
//!   (shape 1.1, 10 KB..1 GB), random src != dst.
//! * b: same network, 50,000 Poisson arrivals at load 0.6 of the ToR uplinks.
//! * c: 900x40 = 36,000 hosts, 10G, 4:1, Poisson at load 0.6 of the ToR
//!   uplinks, web-search-like sizes (DCTCP CDF, linear interpolation; the
//!   first point is an atom: 15% of flows are exactly 6 KB).

use netheat_engine::{FlowSpec, Network, Route, SimConfig, Simulation};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

struct TwoTier {
    racks: u32,
    hosts: u32,
    host_bps: f64,
    up_bps: f64,
}

impl TwoTier {
    fn new(racks: u32, hosts: u32, host_bps: f64, oversub: f64) -> Self {
        Self { racks, hosts, host_bps, up_bps: hosts as f64 * host_bps / oversub }
    }
    fn n(&self) -> u32 {
        self.racks * self.hosts
    }
    fn network(&self) -> Network {
        let n = self.n() as usize;
        let r = self.racks as usize;
        let mut caps = vec![self.host_bps; 2 * n];
        caps.resize(2 * n + 2 * r, self.up_bps);
        Network::new(caps)
    }
    fn path(&self, s: u32, d: u32) -> Vec<u32> {
        let n = self.n();
        let (rs, rd) = (s / self.hosts, d / self.hosts);
        if rs == rd {
            vec![s, n + d]
        } else {
            vec![s, 2 * n + rs, 2 * n + self.racks + rd, n + d]
        }
    }
    /// Flows per second that load every ToR uplink to `load` on average.
    fn arrival_rate(&self, load: f64, mean_bytes: f64) -> f64 {
        let n = self.n() as f64;
        let p_inter = (n - self.hosts as f64) / (n - 1.0);
        load * self.up_bps * self.racks as f64 / (8.0 * mean_bytes * p_inter)
    }
}

const PL: f64 = 1e4;
const PH: f64 = 1e9;
const PA: f64 = 1.1;

fn pareto(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.gen();
    PL / (1.0 - u * (1.0 - (PL / PH).powf(PA))).powf(1.0 / PA)
}

fn pareto_mean() -> f64 {
    PL.powf(PA) / (1.0 - (PL / PH).powf(PA)) * PA / (PA - 1.0) * (PL.powf(1.0 - PA) - PH.powf(1.0 - PA))
}

/// DCTCP web-search flow sizes: (bytes, cumulative probability).
const WEB: [(f64, f64); 11] = [
    (6e3, 0.15),
    (13e3, 0.2),
    (19e3, 0.3),
    (33e3, 0.4),
    (53e3, 0.53),
    (133e3, 0.6),
    (667e3, 0.7),
    (1.3e6, 0.8),
    (3.3e6, 0.9),
    (6.7e6, 0.97),
    (20e6, 1.0),
];

fn web(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.gen();
    if u <= WEB[0].1 {
        return WEB[0].0;
    }
    for w in WEB.windows(2) {
        let ((x0, p0), (x1, p1)) = (w[0], w[1]);
        if u <= p1 {
            return x0 + (x1 - x0) * (u - p0) / (p1 - p0);
        }
    }
    WEB[10].0
}

fn web_mean() -> f64 {
    let mut m = WEB[0].0 * WEB[0].1;
    for w in WEB.windows(2) {
        m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
    }
    m
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()))
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn pair(rng: &mut ChaCha8Rng, n: u32) -> (u32, u32) {
    let s = rng.gen_range(0..n);
    let mut d = rng.gen_range(0..n - 1);
    if d >= s {
        d += 1;
    }
    (s, d)
}

fn bench(name: &str, topo: &TwoTier, flows: Vec<FlowSpec>) {
    let n = flows.len();
    let t0 = Instant::now();
    // NETHEAT_CHECK=1: verify every recomputation against a from-scratch
    // allocation (slow).
    let check = std::env::var("NETHEAT_CHECK").is_ok_and(|v| v == "1");
    let cfg = SimConfig { check_invariants: check, ..SimConfig::default() };
    let mut sim = Simulation::new(topo.network(), None, cfg);
    sim.add_flows(flows).expect("valid flows");
    let r = sim.run();
    let wall = t0.elapsed().as_secs_f64();
    eprintln!(
        "{name}: max rounds {} widenings {} dense: entries {} instants {} mean classes {:.0} promotions {} cost exits {}",
        r.stats.max_repair_rounds,
        r.stats.widenings,
        r.stats.dense_entries,
        r.stats.dense_instants,
        r.stats.dense_class_sum as f64 / r.stats.dense_instants.max(1) as f64,
        r.stats.dense_promotions,
        r.stats.dense_cost_exits
    );
    let s = &r.stats;
    let mean_fct = r.flows.iter().map(|f| f.fct_s).sum::<f64>() / n as f64;
    println!(
        "{:<10} {:>9} {:>10} {:>9.3} {:>11.0} {:>10.0} {:>9.0} {:>8} {:>8} {:>10.1} {:>9} {:>8.2} {:>9} {:>10.1} {:>9} {:>8.1} {:>9.3} {:>10.4}",
        name,
        n,
        s.events,
        wall,
        s.events as f64 / wall,
        n as f64 / wall,
        peak_rss_mb(),
        s.recomputations,
        s.repairs,
        s.region_flows as f64 / s.repairs.max(1) as f64,
        s.max_region_flows,
        s.repair_rounds as f64 / (s.repairs + s.fallbacks).max(1) as f64,
        s.fallbacks,
        s.component_flows as f64 / s.fallbacks.max(1) as f64,
        s.max_component_flows,
        s.rate_changes as f64 / s.events.max(1) as f64,
        r.end_s,
        mean_fct,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args =
        if args.is_empty() { vec!["a".to_string(), "b".to_string(), "c=10000,100000".to_string()] } else { args };
    println!(
        "{:<10} {:>9} {:>10} {:>9} {:>11} {:>10} {:>9} {:>8} {:>8} {:>10} {:>9} {:>8} {:>9} {:>10} {:>9} {:>8} {:>9} {:>10}",
        "scenario",
        "flows",
        "events",
        "wall_s",
        "events/s",
        "flows/s",
        "rss_MB",
        "recomps",
        "repairs",
        "mean_reg",
        "max_reg",
        "rounds",
        "fallback",
        "mean_comp",
        "max_comp",
        "chg/ev",
        "sim_s",
        "mean_fct_s"
    );
    for a in &args {
        if a == "a" {
            let topo = TwoTier::new(64, 16, 10e9, 4.0);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let flows = (0..10_000u64)
                .map(|i| {
                    let (s, d) = pair(&mut rng, topo.n());
                    FlowSpec::new(i, s, d, pareto(&mut rng), 0.0, Route::Explicit(topo.path(s, d)))
                })
                .collect();
            bench("a", &topo, flows);
        } else if a == "b" {
            let topo = TwoTier::new(64, 16, 10e9, 4.0);
            let lambda = topo.arrival_rate(0.6, pareto_mean());
            let mut rng = ChaCha8Rng::seed_from_u64(2);
            let mut t = 0.0;
            let flows = (0..50_000u64)
                .map(|i| {
                    t += -(1.0 - rng.gen::<f64>()).ln() / lambda;
                    let (s, d) = pair(&mut rng, topo.n());
                    FlowSpec::new(i, s, d, pareto(&mut rng), t, Route::Explicit(topo.path(s, d)))
                })
                .collect();
            bench("b", &topo, flows);
        } else if let Some(list) = a.strip_prefix("c=") {
            let topo = TwoTier::new(900, 40, 10e9, 4.0);
            let lambda = topo.arrival_rate(0.6, web_mean());
            for n in list.split(',') {
                let n: u64 = n.parse().expect("flow count");
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                let mut t = 0.0;
                let flows = (0..n)
                    .map(|i| {
                        t += -(1.0 - rng.gen::<f64>()).ln() / lambda;
                        let (s, d) = pair(&mut rng, topo.n());
                        FlowSpec::new(i, s, d, web(&mut rng), t, Route::Explicit(topo.path(s, d)))
                    })
                    .collect();
                bench(&format!("c/{n}"), &topo, flows);
            }
        } else {
            eprintln!("unknown scenario `{a}`; use a, b, c=N[,N...]");
            std::process::exit(2);
        }
    }
}
