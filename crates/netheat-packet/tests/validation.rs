//! Validation of the packet engine against textbook behaviour.
use netheat_core::Routing;
use netheat_packet::{FlowSpec, NetConfig, Simulator, TransportConfig};
use netheat_topology::{Topology, TopologySpec};

fn rack(hosts: usize) -> Topology {
    Topology::build(&TopologySpec::two_tier(2, hosts, 10e9, 40e9)).unwrap()
}

fn flow(id: u64, src: u32, dst: u32, bytes: u64, tp: &str) -> FlowSpec {
    FlowSpec::new(id, src, dst, bytes, tp)
}

#[test]
fn single_long_tcp_flow_reaches_line_rate() {
    let topo = rack(4);
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    let bytes = 50_000_000u64;
    sim.add_flow(flow(0, 0, 1, bytes, "newreno"), &TransportConfig::default()).unwrap();
    let r = sim.run(f64::INFINITY);
    let fct = r.flows[0].fct_s;
    // Wire bytes / time on the 10 Gbps access link: payload plus 40 B headers.
    let wire = bytes as f64 * 1500.0 / 1460.0;
    let rate = wire * 8.0 / fct;
    println!("fct {fct:.6} s, wire rate {:.3} Gbps", rate / 1e9);
    assert!(rate > 0.95 * 10e9, "rate {rate}");
    // Lower bound: cannot beat serialization of the wire bytes.
    assert!(fct >= wire * 8.0 / 10e9);
}

#[test]
fn dctcp_keeps_queue_near_marking_threshold() {
    let topo = rack(4);
    let k = 30_000u64;
    let cfg = NetConfig { ecn_threshold_bytes: Some(k), port_buffer_bytes: 600_000, ..Default::default() };
    let run = |tp: &str| {
        let mut sim = Simulator::new(&topo, cfg.clone()).unwrap();
        for s in 0..3 {
            sim.add_flow(flow(s, s as u32, 3, 30_000_000, tp), &TransportConfig::default()).unwrap();
        }
        let r = sim.run(f64::INFINITY);
        // Bottleneck: ToR -> host 3 downlink.
        let down = topo.hosts()[3].ports[0].down as usize;
        let thr = 3.0 * 30e6 * 8.0 / r.flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
        (r.ports[down].clone(), thr)
    };
    let (d, thr_d) = run("dctcp");
    let (n, _) = run("newreno");
    println!(
        "dctcp mean {:.0} max {} drops {} thr {:.2} Gbps; newreno mean {:.0} max {} drops {}",
        d.mean_queue_bytes,
        d.max_queue_bytes,
        d.drops,
        thr_d / 1e9,
        n.mean_queue_bytes,
        n.max_queue_bytes,
        n.drops
    );
    assert!(d.mean_queue_bytes > 0.5 * k as f64 && d.mean_queue_bytes < 2.0 * k as f64, "mean {}", d.mean_queue_bytes);
    assert_eq!(d.drops, 0);
    assert!(thr_d > 0.9 * 10e9 * 1460.0 / 1500.0);
    // Drop-tail NewReno fills the buffer instead.
    assert!(n.mean_queue_bytes > 4.0 * d.mean_queue_bytes);
}

#[test]
fn incast_collapses_goodput_with_drop_tail() {
    // Synchronized reads of a 64 KB block from N servers through a shallow
    // 64 KB drop-tail port, RTO_min 200 ms (classic incast setting).
    let goodput = |n: u32| {
        let topo = rack(48);
        let cfg = NetConfig { port_buffer_bytes: 64_000, ..Default::default() };
        let tcfg = TransportConfig { rto_min_s: 0.2, ..Default::default() };
        let mut sim = Simulator::new(&topo, cfg).unwrap();
        for s in 0..n {
            sim.add_flow(flow(s as u64, s + 1, 0, 64_000, "newreno"), &tcfg).unwrap();
        }
        let r = sim.run(f64::INFINITY);
        let t = r.flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
        let to: u32 = r.flows.iter().map(|f| f.timeouts).sum();
        (n as f64 * 64_000.0 * 8.0 / t, to)
    };
    let (g4, t4) = goodput(4);
    let (g40, t40) = goodput(40);
    println!("goodput N=4 {:.2} Gbps ({t4} RTOs), N=40 {:.3} Gbps ({t40} RTOs)", g4 / 1e9, g40 / 1e9);
    assert!(g4 > 8e9);
    assert_eq!(t4, 0);
    assert!(t40 > 0);
    assert!(g40 < 0.2 * g4);
}

#[test]
fn runs_are_deterministic_and_cloudburst_decodes() {
    let topo = Topology::build(&TopologySpec::three_tier(1, 4, 8, 4, 0, 10e9, 40e9, None)).unwrap();
    let go = || {
        let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
        for (i, tp) in ["cloudburst", "cloudburst-a", "dctcp", "pias"].iter().enumerate() {
            sim.add_flow(flow(i as u64, i as u32, 20 + i as u32, 93_000, tp), &TransportConfig::default()).unwrap();
        }
        sim.run(f64::INFINITY)
    };
    let (a, b) = (go(), go());
    for (x, y) in a.flows.iter().zip(&b.flows) {
        assert!(x.finish_s.is_finite());
        assert_eq!(x.finish_s, y.finish_s);
        // 93 KB at 10 Gbps needs at least 74.4 us of serialization.
        assert!(x.fct_s > 93_000.0 * 8.0 / 10e9);
    }
    assert_eq!(a.events, b.events);
}

#[test]
fn unknown_transport_lists_known_tags() {
    let topo = rack(2);
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    let e = sim.add_flow(flow(0, 0, 1, 10, "bbr"), &TransportConfig::default()).unwrap_err().to_string();
    assert!(e.contains("bbr") && e.contains("dctcp") && e.contains("cloudburst"), "{e}");
}

/// Three NewReno senders into one receiver behind one switch whose ports
/// share a buffer of `shared` bytes under dynamic threshold `alpha`: the
/// largest queue of the congested port.
fn shared_buffer_max_queue(cfg: NetConfig) -> (u64, u64) {
    let topo = rack(4);
    let mut sim = Simulator::new(&topo, cfg).unwrap();
    for s in 0..3 {
        sim.add_flow(flow(s, s as u32, 3, 5_000_000, "newreno"), &TransportConfig::default()).unwrap();
    }
    let r = sim.run(f64::INFINITY);
    assert!(r.flows.iter().all(|f| f.finish_s.is_finite()));
    let down = topo.hosts()[3].ports[0].down as usize;
    (r.ports[down].max_queue_bytes, r.ports[down].drops)
}

#[test]
fn shared_buffer_dynamic_threshold_caps_one_congested_port() {
    // A packet of s bytes joins a queue of q bytes only if
    // q + s <= alpha * (B - used), and used >= q (the other ports of the
    // switch carry only ACKs here). So the queue after admission is at most
    // alpha (B + s) / (1 + alpha): with B = 5 ports x 20 KB = 100 KB and
    // s = 1,500 B, 50,750 B for alpha = 1 and 67,667 B for alpha = 2. NewReno
    // grows its window until it loses, so the queue gets within one packet of
    // the cap.
    let s = 1500.0;
    for alpha in [1.0, 2.0] {
        let cfg = NetConfig { shared_buffer_per_port_bytes: Some(20_000), alpha, ..Default::default() };
        let (max_q, drops) = shared_buffer_max_queue(cfg);
        let cap = alpha * (100_000.0 + s) / (1.0 + alpha);
        println!("alpha {alpha}: max queue {max_q} B, cap {cap:.0} B, drops {drops}");
        assert!(max_q as f64 <= cap && max_q as f64 >= cap - 2.0 * s, "alpha {alpha}: {max_q} vs {cap}");
        assert!(drops > 0);
    }
    // The same pool given as a per-switch total behaves the same.
    let cfg = NetConfig { shared_buffer_bytes: Some(100_000), ..Default::default() };
    let (max_q, _) = shared_buffer_max_queue(cfg);
    assert!(max_q as f64 <= 50_750.0 && max_q as f64 >= 50_750.0 - 2.0 * s, "{max_q}");
    // Without sharing, the static 300 KB port buffer lets the queue grow far
    // beyond half of a 100 KB pool.
    let (max_q, _) = shared_buffer_max_queue(NetConfig::default());
    assert!(max_q > 200_000, "{max_q}");
}

#[test]
fn run_with_starts_flows_when_others_finish() {
    // Flow 0 (0 -> 1) alone; when it finishes, the controller starts flow
    // 1 (1 -> 0) 10 us later. Flow 1 on an idle network takes exactly what
    // the same flow takes alone, shifted to its start.
    let topo = rack(4);
    let tcfg = TransportConfig::default();
    let alone = |spec: FlowSpec| {
        let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
        sim.add_flow(spec, &tcfg).unwrap();
        sim.run(f64::INFINITY).flows[0].clone()
    };
    let first = alone(flow(0, 0, 1, 100_000, "newreno"));
    let second = alone(flow(1, 1, 0, 50_000, "newreno"));
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    sim.add_flow(flow(0, 0, 1, 100_000, "newreno"), &tcfg).unwrap();
    let mut heard = Vec::new();
    let r = sim
        .run_with(f64::INFINITY, &tcfg, &mut |id, at, new| {
            heard.push((id, at));
            if id == 0 {
                new.push((FlowSpec { start_s: at + 10e-6, ..flow(1, 1, 0, 50_000, "newreno") }, Vec::new()));
            }
        })
        .unwrap();
    assert_eq!(r.flows.len(), 2);
    assert_eq!(heard.len(), 2, "both finishes heard, the last one too");
    assert_eq!((heard[0].0, heard[0].1), (0, r.flows[0].finish_s));
    assert_eq!(r.flows[0].fct_s, first.fct_s);
    assert!((r.flows[1].start_s - (r.flows[0].finish_s + 10e-6)).abs() < 1e-15);
    assert!((r.flows[1].fct_s - second.fct_s).abs() < 1e-9, "{} vs {}", r.flows[1].fct_s, second.fct_s);
}

#[test]
fn dctcp_alpha_decays_by_one_minus_g_per_window_without_marks() {
    // A DCTCP flow that is never marked (no ECN threshold) updates alpha
    // once per observation window with a marked fraction of 0, so from its
    // initial 1 the k-th update leaves (1 - g)^k, and the mean over n
    // updates is sum_{k=1..n} (15/16)^k / n at g = 1/16. NewReno has none.
    let topo = rack(4);
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    sim.add_flow(flow(0, 0, 1, 5_000_000, "dctcp"), &TransportConfig::default()).unwrap();
    sim.add_flow(flow(1, 2, 3, 5_000_000, "newreno"), &TransportConfig::default()).unwrap();
    let r = sim.run(f64::INFINITY);
    let d = &r.flows[0];
    let n = d.alpha_updates;
    // 3,425 segments in windows that grow from 10 segments: at least a
    // few windows, at most one a segment.
    assert!((5..=3425).contains(&n), "{n} updates");
    let want = (1..=n).map(|k| (15.0f64 / 16.0).powi(k as i32)).sum::<f64>() / n as f64;
    assert!((d.alpha_mean - want).abs() < 1e-12, "mean {} against {want} over {n} updates", d.alpha_mean);
    assert_eq!(r.flows[1].alpha_updates, 0);
    assert!(r.flows[1].alpha_mean.is_nan());
}

/// RFC 6356 §2 ("do no harm"): an MPTCP connection whose two subflows
/// share one bottleneck with a TCP flow takes no more than that flow's
/// share. Host 0 sends 2 x 20 MB over two subflows, host 1 one 40 MB flow,
/// both into host 3. Equal shares end both at about 80 MB over the link
/// rate; a connection taking two shares of three (its subflows uncoupled)
/// ends at 0.75 of the single flow's time.
#[test]
fn lia_subflows_take_no_more_than_one_tcp_share_on_a_shared_bottleneck() {
    let topo = rack(4);
    let cfg = NetConfig { ecn_threshold_bytes: Some(30_000), port_buffer_bytes: 600_000, ..Default::default() };
    let run = |coupled: bool| {
        let mut sim = Simulator::new(&topo, cfg.clone()).unwrap();
        for s in 0..2u64 {
            let sub = FlowSpec {
                path_offset: s as usize,
                coupling: coupled.then_some(7),
                ..flow(s, 0, 3, 20_000_000, "lia")
            };
            sim.add_flow(sub, &TransportConfig::default()).unwrap();
        }
        sim.add_flow(flow(2, 1, 3, 40_000_000, "lia"), &TransportConfig::default()).unwrap();
        let r = sim.run(f64::INFINITY);
        let mptcp = r.flows[0].finish_s.max(r.flows[1].finish_s);
        let tcp = r.flows[2].finish_s;
        // The link carried 80 MB (plus headers): no schedule ends sooner.
        assert!(mptcp.max(tcp) >= 80e6 * 1500.0 / 1460.0 * 8.0 / 10e9);
        mptcp / tcp
    };
    let coupled = run(true);
    let uncoupled = run(false);
    println!("MPTCP over TCP completion: coupled {coupled:.3}, uncoupled {uncoupled:.3}");
    assert!((0.95..1.4).contains(&coupled), "coupled {coupled}");
    assert!(uncoupled < 0.82, "uncoupled {uncoupled}");
    // A transport that does not couple refuses a connection.
    let mut sim = Simulator::new(&topo, cfg.clone()).unwrap();
    let e = sim.add_flow(FlowSpec { coupling: Some(1), ..flow(0, 0, 3, 1_000, "dctcp") }, &TransportConfig::default());
    assert!(e.is_err_and(|e| e.to_string().contains("does not couple")));
}

/// UDP by hand: 3,000 B between two hosts of one ToR are datagrams of
/// 1,472 + 1,472 + 56 payload bytes, 1,500 + 1,500 + 84 on the wire. At
/// 10 Gbps (0.8 ns a byte) the first leaves the host at 1.2 us and reaches
/// the ToR 1 us later; the ToR's port then sends the three back to back
/// (the second arrives as the first leaves), so the last arrives at
/// 2.2 + (1,500 + 1,500 + 84) x 0.8 ns + 1 = 5.6672 us. Nothing comes back.
#[test]
fn udp_message_is_its_datagrams_back_to_back_and_sends_no_acks() {
    let topo = rack(4);
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    sim.add_flow(flow(0, 0, 1, 3_000, "udp"), &TransportConfig::default()).unwrap();
    let r = sim.run(f64::INFINITY);
    let f = &r.flows[0];
    assert_eq!(f.packets_sent, 3);
    assert!((f.fct_s - 5.6672e-6).abs() < 1e-12, "fct {}", f.fct_s);
    let up = topo.hosts()[0].ports[0].up as usize;
    let back = topo.hosts()[1].ports[0].up as usize;
    assert_eq!(r.ports[up].tx_bytes, 3_084);
    assert_eq!(r.ports[back].tx_bytes, 0, "a UDP receiver sends nothing back");
}

/// Four hosts send 1 MB each at once into one 10 Gbps port. With a buffer
/// that holds them all, every message arrives, the last when the port has
/// sent all 4 x 680 datagrams (4 x 1,000,000 B + 4 x 680 x 28 B of
/// headers, 3.2022 ms). With 100 KB the port drops, and exactly the
/// messages that lost a datagram never finish: nothing is sent again.
#[test]
fn udp_messages_that_lose_a_datagram_never_finish() {
    let run = |buffer: u64| {
        let topo = rack(8);
        let cfg = NetConfig { port_buffer_bytes: buffer, ..Default::default() };
        let mut sim = Simulator::new(&topo, cfg).unwrap();
        for s in 0..4u32 {
            sim.add_flow(flow(s as u64, s + 1, 0, 1_000_000, "udp"), &TransportConfig::default()).unwrap();
        }
        let down = topo.hosts()[0].ports[0].down as usize;
        let r = sim.run(f64::INFINITY);
        (r.flows.clone(), r.ports[down].clone())
    };
    let (flows, port) = run(5_000_000);
    assert_eq!(port.drops, 0);
    assert!(flows.iter().all(|f| f.packets_sent == 680 && f.finish_s.is_finite()));
    let wire = 4.0 * (1_000_000.0 + 680.0 * 28.0) * 8.0 / 10e9;
    let last = flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
    // The port is busy from the first datagram's arrival (one datagram's
    // serialization and 1 us after the start) to the last one's end.
    assert!(last >= wire && last <= wire + 1.2e-6 + 2e-6 + 1e-9, "last {last}, wire {wire}");
    let (flows, port) = run(100_000);
    assert!(port.drops > 0);
    assert!(flows.iter().all(|f| f.packets_sent == 680 && f.timeouts == 0), "nothing is sent again");
    let finished = flows.iter().filter(|f| f.finish_s.is_finite()).count() as u64;
    assert!(finished < 4, "a message that lost a datagram cannot finish");
    // Conservation at the port: what it sent plus what it dropped (1,500 B
    // datagrams, or a message's last one of 512 + 28 B) is all that came.
    let all = 4 * (1_000_000 + 680 * 28);
    assert!(port.tx_bytes + 540 * port.drops <= all && all <= port.tx_bytes + 1_500 * port.drops);
    // Finished messages got all their bytes through; the others did not.
    assert!(port.tx_bytes >= finished * (1_000_000 + 680 * 28));
}

/// What a path policy heard each period: the time, each link's rate and
/// the number of running flows.
type Heard = std::rc::Rc<std::cell::RefCell<Vec<(f64, Vec<f64>, usize)>>>;

/// A path policy that sends every flow on the topology's path `k` and
/// records what it heard each period.
struct OnPath {
    topo: Topology,
    k: usize,
    heard: Heard,
}

impl netheat_packet::PathPolicy for OnPath {
    fn period_s(&self) -> f64 {
        1e-3
    }
    fn route(&mut self, spec: &FlowSpec) -> Option<Vec<netheat_core::LinkId>> {
        use netheat_core::Routing;
        let mut p = Vec::new();
        self.topo.path(spec.src, spec.dst, self.k, &mut p);
        Some(p)
    }
    fn on_period(
        &mut self,
        now_s: f64,
        rate_bps: &[f64],
        running: &[netheat_packet::RunningFlow<'_>],
    ) -> Vec<(u64, Vec<netheat_core::LinkId>)> {
        self.heard.borrow_mut().push((now_s, rate_bps.to_vec(), running.len()));
        Vec::new()
    }
}

/// Two racks behind two aggregation switches: a flow between them has two
/// paths. A policy that picks the second sends all of a 2,944,000 B UDP
/// message (2,000 datagrams of 1,500 B, 3,000,000 B on the wire, 2.4 ms
/// at 10 Gbps) that way and none the other, and hears the bytes back
/// period by period: 1 ms of the host's 10 Gbps, then 1 ms, then the last
/// 0.4 ms; the periods stop once nothing is left to happen.
#[test]
fn a_path_policy_routes_flows_as_they_start_and_hears_each_period() {
    use netheat_core::Routing;
    let topo = Topology::build(&TopologySpec::three_tier(1, 2, 2, 2, 0, 10e9, 20e9, None)).unwrap();
    assert_eq!(topo.num_paths(0, 2), 2);
    let mut paths = [Vec::new(), Vec::new()];
    for (k, p) in paths.iter_mut().enumerate() {
        topo.path(0, 2, k, p);
    }
    let heard: Heard = Default::default();
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    let policy = OnPath { topo: topo.clone(), k: 1, heard: heard.clone() };
    sim.set_path_policy(Box::new(policy)).unwrap();
    sim.add_flow(flow(0, 0, 2, 2_944_000, "udp"), &TransportConfig::default()).unwrap();
    let r = sim.run(f64::INFINITY);
    assert!(r.flows[0].finish_s.is_finite());
    let chosen = paths[1][1] as usize; // the ToR's uplink to the second agg
    let other = paths[0][1] as usize;
    assert_ne!(chosen, other);
    assert_eq!(r.ports[chosen].tx_bytes, 3_000_000);
    assert_eq!(r.ports[other].tx_bytes, 0);
    let heard = heard.borrow();
    let first = paths[1][0] as usize; // the host's port
    let rates: Vec<f64> = heard.iter().map(|(_, r, _)| r[first]).collect();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert!((rates[0] - 10e9).abs() < 1.3e7 && (rates[1] - 10e9).abs() < 1.3e7, "{rates:?}");
    let sent: f64 = rates.iter().map(|r| r * 1e-3 / 8.0).sum();
    assert!((sent - 3_000_000.0).abs() < 1.0, "{sent}");
    assert_eq!(heard[0].2, 1, "the flow runs through the first period");
}

#[test]
fn flows_between_the_same_hosts_share_their_stored_paths() {
    // Two racks: host 0 and host 5 are in different racks, so each flow
    // between them may take any of the topology's paths; the reverse of a
    // path from 0 to 5 is a path from 5 to 0. However many flows run in
    // either direction, each path is stored once: np one way and np back.
    let topo = rack(4);
    let np = topo.num_paths(0, 5);
    assert!(np >= 1);
    let mut sim = Simulator::new(&topo, NetConfig::default()).unwrap();
    for id in 0..200u64 {
        let (src, dst) = if id % 2 == 0 { (0, 5) } else { (5, 0) };
        sim.add_flow(flow(id, src, dst, 3_000, "newreno"), &TransportConfig::default()).unwrap();
    }
    assert_eq!(sim.stored_paths(), 2 * np);
    // A flow within rack 0 adds its own.
    sim.add_flow(flow(200, 0, 1, 3_000, "newreno"), &TransportConfig::default()).unwrap();
    assert_eq!(sim.stored_paths(), 2 * np + 2 * topo.num_paths(0, 1));
    let r = sim.run(f64::INFINITY);
    assert!(r.flows.iter().all(|f| f.fct_s.is_finite()));
}
