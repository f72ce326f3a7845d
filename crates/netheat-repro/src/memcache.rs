//! The Subways memcache experiment on the packet engine: web servers query
//! memcache servers in two racks (50 B requests, 1,500 B responses), and the
//! question is the largest request rate the fabric sustains at a 1 ms mean
//! latency, for Type 0 wiring and for Type 1 wiring with ECMP, adaptive load
//! balancing (`type1-lb`) and adaptive load balancing with detours through
//! neighbouring servers (`type1-detour`), as the ToRs' oversubscription
//! grows.
//!
//! One pod: a loop of `racks` racks of `hosts_per_rack` servers with
//! `ports` ports each (Type 1: port `j` of the server at loop position `k`
//! on ToR `(k + j) mod racks`; Type 0: all on its own ToR), every ToR with
//! uplinks of `hosts_per_rack · ports · host_bps / oversubscription` to two
//! aggregation switches. Memcache racks are racks 0 and `racks / 2`.
//! Requests arrive as a Poisson process; each picks a web server and a
//! memcache server uniformly. A request and its response are two
//! one-packet TCP messages in opposite directions, both started at the
//! request's arrival (they cross disjoint queues except for ACKs), and the
//! request's latency is the sum of their completion times: this leaves out
//! only the request's own one-way delay before the response starts.
//! Responses are what load the memcache racks' ToR uplinks.
//!
//! Detours (`type1-detour`): a response may also leave through a server
//! `X` that shares one of the memcache server's ToRs and has its other port
//! on a ToR the memcache server does not reach (memcache -> ToR a -> X ->
//! ToR b -> fabric), one such `X` per ToR of the memcache server. With
//! adaptive balancing a packet takes its least-queued path, a hop costing a
//! packet, so detours carry traffic only when the direct ToRs back up.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use netheat_core::{stats, LinkId};
use netheat_topology::{FabricSpec, HostSpec, SubwaysSpec, Topology, TopologySpec, Wiring};

use netheat_packet::{FlowSpec, NetConfig, PacketError, Simulator, TransportConfig};

/// The four configurations of the Subways paper's memcache experiment.
pub const MEMCACHE_VARIANTS: &[&str] = &["type0", "type1", "type1-lb", "type1-detour"];

/// Parameters of a memcache run.
#[derive(Debug, Clone, PartialEq)]
pub struct MemcacheParams {
    /// Racks in the loop (and pod).
    pub racks: usize,
    /// Servers per rack.
    pub hosts_per_rack: usize,
    /// Ports per server.
    pub ports: usize,
    /// Port speed, bps.
    pub host_bps: f64,
    /// ToR oversubscription: server-facing capacity over uplink capacity.
    pub oversubscription: f64,
    /// Request bytes.
    pub request_bytes: u64,
    /// Response bytes.
    pub response_bytes: u64,
    /// Seconds of arrivals; latency is measured on the second half, so a
    /// rate the fabric cannot sustain shows as a growing queue.
    pub duration_s: f64,
    /// Seconds after the arrivals for messages to finish.
    pub drain_s: f64,
    /// Minimum retransmission timeout, s.
    pub rto_min_s: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for MemcacheParams {
    fn default() -> Self {
        Self {
            racks: 8,
            hosts_per_rack: 8,
            ports: 2,
            host_bps: 10e9,
            oversubscription: 5.0,
            request_bytes: 50,
            response_bytes: 1500,
            duration_s: 10e-3,
            drain_s: 20e-3,
            rto_min_s: 5e-3,
            seed: 1,
        }
    }
}

/// Latency at one request rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemcachePoint {
    /// Requests per second.
    pub rate_per_s: f64,
    /// Mean latency of the measured requests (infinite if some did not finish).
    pub mean_latency_s: f64,
    /// 99th percentile latency (the linear quantile of
    /// [`netheat_core::stats`]; infinite when it interpolates towards a
    /// request that did not finish).
    pub p99_latency_s: f64,
    /// Requests measured (arrivals in the second half).
    pub requests: usize,
    /// Packet events simulated.
    pub events: u64,
}

fn topology(p: &MemcacheParams, wiring: Wiring) -> Result<Topology, PacketError> {
    let server_side = p.hosts_per_rack as f64 * p.ports as f64 * p.host_bps;
    let spec = TopologySpec::uniform(
        FabricSpec::Clos {
            pods: 1,
            aggs_per_pod: 2,
            spines: 0,
            agg_uplink_bps: None,
            subways: Some(SubwaysSpec { wiring, loop_size: p.racks, clusters_per_loop: 1 }),
        },
        p.racks,
        p.hosts_per_rack,
        HostSpec::with_ports(p.ports, p.host_bps),
        server_side / p.oversubscription,
    );
    Topology::build(&spec).map_err(|e| PacketError::Config(e.to_string()))
}

/// Detour paths from memcache server `mc` to web server `web`: through one
/// server per ToR of `mc` whose other port is on a ToR `mc` does not reach.
fn detours(topo: &Topology, mc: u32, web: u32, pick: u64) -> Vec<Vec<LinkId>> {
    let hosts = topo.hosts();
    let own: Vec<u32> = hosts[mc as usize].ports.iter().map(|q| q.tor).collect();
    let mut out = Vec::new();
    for mp in &hosts[mc as usize].ports {
        // Servers with a port on ToR `mp.tor` and another on a foreign ToR.
        let via: Vec<(u32, usize, usize)> = hosts
            .iter()
            .enumerate()
            .filter(|&(x, _)| x as u32 != mc && x as u32 != web)
            .filter_map(|(x, h)| {
                let a = h.ports.iter().position(|q| q.tor == mp.tor)?;
                let b = h.ports.iter().position(|q| !own.contains(&q.tor))?;
                Some((x as u32, a, b))
            })
            .collect();
        if via.is_empty() {
            continue;
        }
        let (x, a, b) = via[(pick % via.len() as u64) as usize];
        let (xa, xb) = (&hosts[x as usize].ports[a], &hosts[x as usize].ports[b]);
        for wp in &hosts[web as usize].ports {
            for i in 0..topo.tor_routes(xb.tor, wp.tor) {
                let mut path = vec![mp.up, xa.down, xb.up];
                topo.tor_route(xb.tor, wp.tor, i, &mut path);
                path.push(wp.down);
                out.push(path);
            }
        }
    }
    out
}

/// Simulates `variant` at `rate_per_s` requests per second.
pub fn memcache_point(p: &MemcacheParams, variant: &str, rate_per_s: f64) -> Result<MemcachePoint, PacketError> {
    if !MEMCACHE_VARIANTS.contains(&variant) {
        return Err(PacketError::Config(format!(
            "unknown memcache variant '{variant}'; known: {}",
            MEMCACHE_VARIANTS.join(", ")
        )));
    }
    let ok = p.racks >= 4
        && p.hosts_per_rack >= 1
        && p.ports >= 1
        && p.ports <= p.racks
        && p.host_bps > 0.0
        && p.oversubscription > 0.0
        && p.duration_s > 0.0
        && p.drain_s >= 0.0
        && rate_per_s > 0.0;
    if !ok {
        return Err(PacketError::Config(
            "memcache: need racks >= 4, 1 <= ports <= racks, positive speeds, oversubscription, duration and rate"
                .into(),
        ));
    }
    let wiring = if variant == "type0" { Wiring::Type0 } else { Wiring::Type1 };
    let topo = topology(p, wiring)?;
    let hpr = p.hosts_per_rack as u32;
    let mc_racks = [0u32, (p.racks / 2) as u32];
    let mc: Vec<u32> = mc_racks.iter().flat_map(|&r| r * hpr..(r + 1) * hpr).collect();
    let web: Vec<u32> = (0..(p.racks as u32 * hpr)).filter(|h| !mc_racks.contains(&(h / hpr))).collect();
    let net = NetConfig { adaptive: variant != "type0" && variant != "type1", ..NetConfig::default() };
    let tcfg = TransportConfig { rto_min_s: p.rto_min_s, ..TransportConfig::default() };
    let mut sim = Simulator::new(&topo, net)?;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut t = 0.0;
    let mut starts = Vec::new();
    loop {
        t += -(1.0 - rng.gen::<f64>()).ln() / rate_per_s;
        if t >= p.duration_s {
            break;
        }
        let (w, m) = (web[rng.gen_range(0..web.len())], mc[rng.gen_range(0..mc.len())]);
        let id = 2 * starts.len() as u64;
        let msg = |id: u64, src: u32, dst: u32, bytes: u64| FlowSpec {
            id,
            src,
            dst,
            bytes,
            start_s: t,
            transport: "newreno".into(),
            task_id: (id / 2) as i64,
            priority: 1,
            path_offset: 0,
        };
        sim.add_flow(msg(id, w, m, p.request_bytes), &tcfg)?;
        let extra = if variant == "type1-detour" { detours(&topo, m, w, id / 2) } else { Vec::new() };
        sim.add_flow_with_paths(msg(id + 1, m, w, p.response_bytes), &tcfg, &extra)?;
        starts.push(t);
    }
    let r = sim.run(p.duration_s + p.drain_s);
    let mut lat = vec![0.0f64; starts.len()];
    for f in &r.flows {
        lat[f.task_id as usize] += if f.fct_s.is_finite() { f.fct_s } else { f64::INFINITY };
    }
    let measured: Vec<f64> =
        lat.iter().zip(&starts).filter(|(_, &s)| s >= p.duration_s / 2.0).map(|(&l, _)| l).collect();
    Ok(MemcachePoint {
        rate_per_s,
        mean_latency_s: stats::mean(&measured),
        p99_latency_s: stats::quantile(&measured, 0.99),
        requests: measured.len(),
        events: r.events,
    })
}

/// The largest request rate (within 2%) whose mean latency stays at or
/// below `target_s`, by doubling from `start_per_s` and then bisection.
/// Returns the rate and the point simulated there.
pub fn max_rate(
    p: &MemcacheParams,
    variant: &str,
    target_s: f64,
    start_per_s: f64,
) -> Result<(f64, MemcachePoint), PacketError> {
    let ok = |x: &MemcachePoint| x.mean_latency_s <= target_s;
    let mut lo = memcache_point(p, variant, start_per_s)?;
    if !ok(&lo) {
        return Err(PacketError::Config(format!(
            "memcache: {variant} misses the {target_s} s mean latency already at {start_per_s} requests/s"
        )));
    }
    let mut hi_rate = 2.0 * start_per_s;
    loop {
        let x = memcache_point(p, variant, hi_rate)?;
        if !ok(&x) {
            break;
        }
        lo = x;
        hi_rate *= 2.0;
    }
    while hi_rate / lo.rate_per_s > 1.02 {
        let mid = (lo.rate_per_s * hi_rate).sqrt();
        let x = memcache_point(p, variant, mid)?;
        if ok(&x) {
            lo = x;
        } else {
            hi_rate = mid;
        }
    }
    Ok((lo.rate_per_s, lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 racks of 2 servers with 2 x 10 Gbps ports, ToRs 10:1: each ToR has
    /// 4 Gbps of uplink.
    fn small() -> MemcacheParams {
        MemcacheParams { hosts_per_rack: 2, oversubscription: 10.0, duration_s: 4e-3, ..MemcacheParams::default() }
    }

    #[test]
    fn unloaded_latency_is_serialization_plus_propagation() {
        // Type 0: every request crosses host -> ToR -> agg -> ToR -> host,
        // 1 us per link: two 10 Gbps host links and two ToR-agg links of 2
        // Gbps (4 Gbps of uplink over 2 aggs), store and forward. Request
        // 50 + 40 B, response 1500 + 40 B.
        let hops = |bytes: f64| 2.0 * bytes * 8.0 / 10e9 + 2.0 * bytes * 8.0 / 2e9 + 4e-6;
        let want = hops(90.0) + hops(1540.0);
        let x = memcache_point(&MemcacheParams { duration_s: 20e-3, ..small() }, "type0", 2e4).unwrap();
        assert!(x.requests > 100, "{x:?}");
        assert!((x.mean_latency_s - want).abs() < 0.01 * want, "{} vs {want}", x.mean_latency_s);
    }

    #[test]
    fn type0_saturates_at_the_memcache_uplinks_and_type1_does_not() {
        // Responses (1,540 B) and the ACKs of requests (64 B) leave the two
        // memcache racks through 4 Gbps of ToR uplink each.
        let bound = 2.0 * 4e9 / ((1540.0 + 64.0) * 8.0);
        let p = small();
        let below = memcache_point(&p, "type0", 0.7 * bound).unwrap();
        let above = memcache_point(&p, "type0", 1.5 * bound).unwrap();
        assert!(below.mean_latency_s < 100e-6, "{below:?}");
        assert!(above.mean_latency_s > 1e-3, "{above:?}");
        // Type 1 memcache servers reach two ToRs each (twice the uplink),
        // and some web servers share a ToR with them.
        for v in ["type1", "type1-lb", "type1-detour"] {
            let x = memcache_point(&p, v, 1.5 * bound).unwrap();
            assert!(x.mean_latency_s < 1e-3, "{v}: {x:?}");
        }
    }

    #[test]
    fn detour_paths_are_walks_through_a_neighbouring_server() {
        let p = small();
        let topo = topology(&p, Wiring::Type1).unwrap();
        let links = topo.links();
        let (mc, web) = (0u32, 6u32);
        let ds = detours(&topo, mc, web, 3);
        assert!(!ds.is_empty());
        let own: Vec<u32> = topo.hosts()[0].ports.iter().map(|q| q.tor).collect();
        for d in &ds {
            assert!(d.windows(2).all(|w| links[w[0] as usize].dst == links[w[1] as usize].src));
            // The third link leaves the intermediate server towards a ToR
            // the memcache server does not reach.
            let x = links[d[1] as usize].dst;
            let hx = topo.hosts().iter().find(|h| h.node == x).expect("a server");
            let b = hx.ports.iter().find(|q| q.up == d[2]).expect("its port").tor;
            assert!(!own.contains(&b));
        }
        assert!(memcache_point(&p, "type2", 1e5).is_err());
    }
}

/// The parameters of a `memcache` point (one definition each): the largest
/// request rate at the latency target for one variant and oversubscription.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct MemcachePointParams {
    /// wiring and balancing: type0, type1, type1-lb, type1-detour
    pub variant: String,
    /// ToR oversubscription (server-facing over uplink capacity)
    pub oversubscription: f64,
    /// racks in the loop (memcache racks: 0 and racks/2)
    pub racks: usize,
    /// servers per rack
    pub hosts_per_rack: usize,
    /// ports per server
    pub ports: usize,
    /// port speed
    #[serde(with = "crate::points::bandwidth")]
    #[schemars(schema_with = "crate::points::bandwidth::schema")]
    pub host_speed: f64,
    /// seconds of arrivals per rate tried (second half measured)
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub duration: f64,
    /// mean latency target
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub target: f64,
}

impl Default for MemcachePointParams {
    fn default() -> Self {
        let d = MemcacheParams::default();
        Self {
            variant: "type0".into(),
            oversubscription: d.oversubscription,
            racks: d.racks,
            hosts_per_rack: d.hosts_per_rack,
            ports: d.ports,
            host_speed: d.host_bps,
            duration: d.duration_s,
            target: 1e-3,
        }
    }
}

/// The request rate the search starts from, requests/s.
const MEMCACHE_START_PER_S: f64 = 1e5;

/// Runs one `memcache` point: the max request rate at the latency target
/// and the latency and events at that rate.
pub fn run(
    p: MemcachePointParams,
    _: &crate::points::TopologyOverrides,
    seed: u64,
    _: &crate::points::PointEnv,
) -> Result<crate::points::PointOutput, crate::points::PointError> {
    let m = MemcacheParams {
        racks: p.racks,
        hosts_per_rack: p.hosts_per_rack,
        ports: p.ports,
        host_bps: p.host_speed,
        oversubscription: p.oversubscription,
        request_bytes: 50,
        response_bytes: 1500,
        duration_s: p.duration,
        rto_min_s: 0.005,
        seed,
        ..MemcacheParams::default()
    };
    let (rate, x) = max_rate(&m, &p.variant, p.target, MEMCACHE_START_PER_S)
        .map_err(|e| crate::points::PointError::Input(e.into()))?;
    let values = vec![
        ("max_rate_per_s".to_string(), rate),
        ("mean_latency_s".to_string(), x.mean_latency_s),
        ("p99_latency_s".to_string(), x.p99_latency_s),
        ("events".to_string(), x.events as f64),
    ];
    Ok(crate::points::PointOutput { values, ..Default::default() })
}

crate::point_kind!("memcache", MemcachePointParams, run);
