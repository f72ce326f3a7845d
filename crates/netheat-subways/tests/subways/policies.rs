//! Adaptive choices and detours on controlled link rates.

use netheat_engine::Route;
use netheat_subways::lb::{load_balancer, ActiveFlow, LbParams};
use netheat_subways::Net;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{is_walk, topo};

/// One cluster, a loop of 6 racks of 4 servers, 2 ports each (Type 1).
fn loop6() -> netheat_topology::Topology {
    topo(
        "kind = \"subways\"\nwiring = \"type1\"\npods = 2\nracks-per-pod = 6\nhosts-per-rack = 4\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\ntor-uplink = \"20Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    )
}

#[test]
fn adaptive_sends_new_flows_away_from_a_full_tor() {
    // Server 0 (rack 0) has ports on ToRs 0 and 1. With ToR 0's uplinks
    // measured full and everything else idle, the remaining outbound capacity
    // B (1 - U) of ToR 0 is 0: every new flow to another cluster leaves through ToR 1.
    let t = loop6();
    let net = Net::new(&t);
    let full: Vec<u32> = t.tors()[0].up.clone();
    let rate = |l: u32| if full.contains(&l) { t.links()[l as usize].capacity_bps } else { 0.0 };
    let params = LbParams { ewma_weight: 1.0, ..LbParams::default() };
    let mut lb = load_balancer("adaptive", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    lb.on_period(&net, 0.01, &rate, &[], &mut rng);
    let dst = 30; // rack 7, other cluster: no shortcut
    let port1 = t.hosts()[0].ports.iter().find(|p| p.tor == 1).unwrap().up;
    for _ in 0..200 {
        match lb.route(&net, 0, dst, &mut rng) {
            Route::Explicit(p) => {
                assert_eq!(p[0], port1);
                assert!(is_walk(&t, &p));
            }
            r => panic!("adaptive routes explicitly, got {r:?}"),
        }
    }
}

#[test]
fn adaptive_splits_by_remaining_capacity() {
    // ToR 0 uplinks at 75% and ToR 1 idle: remaining capacities 5G and 20G,
    // so 1/5 of new flows leave through ToR 0 (2000 draws: within 3 sigma).
    let t = loop6();
    let net = Net::new(&t);
    let up0: Vec<u32> = t.tors()[0].up.clone();
    let rate = |l: u32| if up0.contains(&l) { 0.75 * t.links()[l as usize].capacity_bps } else { 0.0 };
    let params = LbParams { ewma_weight: 1.0, ..LbParams::default() };
    let mut lb = load_balancer("adaptive", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    lb.on_period(&net, 0.01, &rate, &[], &mut rng);
    let port0 = t.hosts()[0].ports.iter().find(|p| p.tor == 0).unwrap().up;
    let n = 2000;
    let via0 = (0..n).filter(|_| matches!(lb.route(&net, 0, 30, &mut rng), Route::Explicit(p) if p[0] == port0)).count()
        as f64;
    // §5.2: by the ToRs' remaining capacity alone, not capped by the
    // server's 10G port (which would give min(10G, 5G) : min(10G, 20G), 1/3).
    let want = 1.0 / 5.0;
    let sigma = (want * (1.0 - want) / n as f64).sqrt();
    assert!((via0 / n as f64 - want).abs() < 3.0 * sigma, "{}", via0 / n as f64);
}

#[test]
fn detours_only_when_every_tor_of_the_server_is_hot() {
    let t = loop6();
    let net = Net::new(&t);
    let params = LbParams { aggressiveness: 1.0, ..LbParams::default() };
    // Flow from server 0 (ToRs 0, 1) to a server of the other cluster, currently direct via ToR 0.
    let sp = t.hosts()[0].ports[0];
    let dp = t.hosts()[30].ports[0];
    let direct = net.direct(&sp, &dp, 0);
    let flow = ActiveFlow { id: 7, src: 0, dst: 30, path: direct };
    let hot = |tors: &'static [usize]| {
        let t = &t;
        move |l: u32| {
            if tors.iter().any(|&k| t.tors()[k].up.contains(&l)) {
                t.links()[l as usize].capacity_bps * 0.9
            } else {
                0.0
            }
        }
    };
    // Only ToR 0 hot: no detours, whatever the draws.
    let mut lb = load_balancer("detour", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for k in 1..=5 {
        lb.on_period(&net, 0.01 * k as f64, &hot(&[0]), std::slice::from_ref(&flow), &mut rng);
    }
    assert_eq!(lb.detours(), 0);
    // ToRs 0 and 1 hot over a whole window: detours through ToR 2 (via a
    // server of rack 1) or ToR 5 (via a server of rack 5), or one more hop
    // on to ToR 3 or 4 (two intermediate servers at most), each a walk.
    let mut lb = load_balancer("detour", &params).unwrap();
    let mut moved = Vec::new();
    for k in 1..=40 {
        for (_, p) in lb.on_period(&net, 0.01 * k as f64, &hot(&[0, 1]), std::slice::from_ref(&flow), &mut rng) {
            moved.push(p);
        }
    }
    assert!(lb.detours() > 0);
    let tor_of = |l: u32| t.nodes()[t.links()[l as usize].src as usize].rack;
    for p in &moved {
        assert!(is_walk(&t, p), "{p:?}");
        assert!(p.len() <= 2 + 2 * 2 + 4 + 1);
    }
    let detoured: Vec<_> = moved.iter().filter(|p| p.len() > net.direct(&sp, &dp, 0).len()).collect();
    assert!(!detoured.is_empty());
    for p in detoured {
        // The uplink used leaves a ToR that is not hot.
        let up = p.iter().find(|&&l| t.links()[l as usize].layer == netheat_topology::Layer::TorAgg).unwrap();
        let tor = tor_of(*up).unwrap();
        assert!([2, 3, 4, 5].contains(&tor), "left through ToR {tor}");
    }
}

#[test]
fn new_flows_of_a_hot_rack_take_its_detours_with_the_plans_probability() {
    // §6: the scheduler notifies a hot rack's servers of detour paths and
    // they route along them until the congestion subsides, so a flow that
    // starts after the period is detoured as a running one would be. ToRs 0
    // and 1 (20G of uplink each) are hot over a whole window, the rest idle:
    // the remote ToRs 2, 5 (one intermediate server) and 3, 4 (two) each
    // offer 60% of their idle 20G, 48G in all, against the hot rack's own
    // 40G, so a new flow of rack 0 detours with probability 48 / 88 = 6/11.
    let t = loop6();
    let net = Net::new(&t);
    let sp = t.hosts()[0].ports[0];
    let dp = t.hosts()[30].ports[0];
    let flow = ActiveFlow { id: 7, src: 0, dst: 30, path: net.direct(&sp, &dp, 0) };
    let rate = |l: u32| {
        if t.tors()[0].up.contains(&l) || t.tors()[1].up.contains(&l) {
            t.links()[l as usize].capacity_bps * 0.9
        } else {
            0.0
        }
    };
    let up_tor = |p: &[u32]| {
        let up = p.iter().find(|&&l| t.links()[l as usize].layer == netheat_topology::Layer::TorAgg).unwrap();
        t.nodes()[t.links()[*up as usize].src as usize].rack.unwrap()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut lb = load_balancer("detour", &LbParams::default()).unwrap();
    // Before any period: no plan, every flow direct.
    for _ in 0..200 {
        let Route::Explicit(p) = lb.route(&net, 0, 30, &mut rng) else { panic!("explicit") };
        assert!([0, 1].contains(&up_tor(&p)));
    }
    assert_eq!(lb.detours(), 0);
    lb.on_period(&net, 0.01, &rate, std::slice::from_ref(&flow), &mut rng);
    let at_period = lb.detours();
    let n = 4000;
    let mut detoured = 0;
    for _ in 0..n {
        let Route::Explicit(p) = lb.route(&net, 0, 30, &mut rng) else { panic!("explicit") };
        assert!(is_walk(&t, &p), "{p:?}");
        let tor = up_tor(&p);
        if [2, 3, 4, 5].contains(&tor) {
            detoured += 1;
        } else {
            assert!([0, 1].contains(&tor), "left through ToR {tor}");
        }
    }
    let want = 6.0 / 11.0;
    let share = f64::from(detoured) / f64::from(n);
    let sigma = (want * (1.0 - want) / f64::from(n)).sqrt();
    assert!((share - want).abs() < 3.0 * sigma, "{share} against {want}");
    assert_eq!(lb.detours() - at_period, u64::from(detoured as u32));
    // A rack that is not hot (rack 2, ToRs 2 and 3), and flows into the hot
    // rack (hot outbound only), go direct.
    for (src, dst) in [(8, 30), (30, 0)] {
        for _ in 0..200 {
            let Route::Explicit(p) = lb.route(&net, src, dst, &mut rng) else { panic!("explicit") };
            let direct = net.direct(&t.hosts()[src as usize].ports[0], &t.hosts()[dst as usize].ports[0], 0);
            assert_eq!(p.len(), direct.len());
        }
    }
    // `adaptive` never detours.
    let mut lb = load_balancer("adaptive", &LbParams::default()).unwrap();
    lb.on_period(&net, 0.01, &rate, std::slice::from_ref(&flow), &mut rng);
    for _ in 0..200 {
        let Route::Explicit(p) = lb.route(&net, 0, 30, &mut rng) else { panic!("explicit") };
        assert!([0, 1].contains(&up_tor(&p)));
    }
}

#[test]
fn inbound_detours_come_down_a_neighbouring_tor() {
    // Server 0's ToRs 0 and 1 are hot inbound: flows to it from the other
    // cluster come down into ToR 2 or ToR 5 (or one hop further, 3 or 4)
    // and reach it through intermediate servers.
    let t = loop6();
    let net = Net::new(&t);
    let params = LbParams { aggressiveness: 1.0, ..LbParams::default() };
    let sp = t.hosts()[30].ports[0];
    let dp = t.hosts()[0].ports[0];
    let flow = ActiveFlow { id: 9, src: 30, dst: 0, path: net.direct(&sp, &dp, 0) };
    let rate = |l: u32| {
        if t.tors()[0].down.contains(&l) || t.tors()[1].down.contains(&l) {
            t.links()[l as usize].capacity_bps * 0.9
        } else {
            0.0
        }
    };
    let mut lb = load_balancer("detour", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut detoured = Vec::new();
    for k in 1..=40 {
        for (_, p) in lb.on_period(&net, 0.01 * k as f64, &rate, std::slice::from_ref(&flow), &mut rng) {
            assert!(is_walk(&t, &p), "{p:?}");
            if p.len() > flow.path.len() {
                detoured.push(p);
            }
        }
    }
    assert!(lb.detours() > 0 && !detoured.is_empty());
    for p in detoured {
        let down = p.iter().rev().find(|&&l| t.links()[l as usize].layer == netheat_topology::Layer::TorAgg).unwrap();
        let tor = t.nodes()[t.links()[*down as usize].dst as usize].rack.unwrap();
        assert!([2, 3, 4, 5].contains(&tor), "came down into ToR {tor}");
        let into_dst: Vec<u32> = t.hosts()[0].ports.iter().map(|q| q.down).collect();
        assert!(into_dst.contains(p.last().unwrap()), "ends at server 0");
    }
}

/// Share of `draws` vanilla ECMP paths from `src` to `dst` that are shortcuts.
fn shortcut_share(t: &netheat_topology::Topology, src: u32, dst: u32, draws: usize) -> f64 {
    let net = Net::new(t);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let n = (0..draws)
        .filter(|_| {
            let p = netheat_subways::lb::vanilla_ecmp_path(&net, src, dst, &mut rng).unwrap();
            assert!(is_walk(t, &p));
            p.len() == 2
        })
        .count();
    n as f64 / draws as f64
}

#[test]
fn vanilla_ecmp_takes_a_shortcut_only_when_the_draw_lands_on_a_shared_tor() {
    // Server 0 (rack 0: ToRs 0, 1) and server 4 (rack 1: ToRs 1, 2) share ToR 1.
    // Type 1 (§4.2): the source picks one of its 2 ToRs uniformly and ToR 1
    // delivers locally, so half the flows take the shortcut. Type 2 (§4.3):
    // the destination address is drawn independently too: 1/2 x 1/2 = 1/4.
    // Shortest-path ECMP would always take it.
    let t1 = loop6();
    assert_eq!(t1.shared_tors(0, 4), vec![1]);
    let n = 4000;
    let sigma = |p: f64| (p * (1.0 - p) / n as f64).sqrt();
    let s1 = shortcut_share(&t1, 0, 4, n);
    assert!((s1 - 0.5).abs() < 3.0 * sigma(0.5), "type 1: {s1}");
    let t2 = topo(
        "kind = \"subways\"\nwiring = \"type2\"\npods = 2\nracks-per-pod = 6\nhosts-per-rack = 4\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 12\nclusters-per-loop = 2\n\
         tor-uplink = \"20Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    );
    let shared = t2.shared_tors(0, t2.racks()[t2.hosts()[0].ports[1].tor as usize].first_host);
    assert_eq!(shared.len(), 1);
    let s2 = shortcut_share(&t2, 0, t2.racks()[t2.hosts()[0].ports[1].tor as usize].first_host, n);
    assert!((s2 - 0.25).abs() < 3.0 * sigma(0.25), "type 2: {s2}");
    // No shared ToR: never a shortcut.
    assert_eq!(shortcut_share(&t1, 0, 12, 200), 0.0);
}

#[test]
fn rebind_split_is_the_papers_formula() {
    // §5.2 by hand: u = (0.75, 0.25), U = (0.8, 0.2), equal B: U_target = 0.5;
    // t = 0.5 * 0.75 * 0.5 / 0.8 + 0.5 * 0.75 = 0.609375,
    //     0.5 * 0.25 * 0.5 / 0.2 + 0.5 * 0.25 = 0.4375; P = t / 1.046875.
    let t = loop6();
    let ports = t.hosts()[0].ports.clone();
    let p = netheat_subways::lb::rebind_split(0.5, &ports, &[6e9, 2e9], &[0.8, 0.2], &[20e9, 20e9]).unwrap();
    assert!((p[0] - 0.609375 / 1.046875).abs() < 1e-12 && (p[1] - 0.4375 / 1.046875).abs() < 1e-12, "{p:?}");
    // Cap: S = 18G over two 10G links, so P[i] <= 10/18; u = (0.5, 0.5),
    // U = (0.1, 0.9): t = (1.5, 0.3889) -> P0 = 0.794 capped at 0.5556, the
    // excess goes to the other link.
    let p = netheat_subways::lb::rebind_split(0.5, &ports, &[9e9, 9e9], &[0.1, 0.9], &[20e9, 20e9]).unwrap();
    assert!((p[0] - 10.0 / 18.0).abs() < 1e-12 && (p[1] - 8.0 / 18.0).abs() < 1e-12, "{p:?}");
    // Nothing measured: no split.
    assert!(netheat_subways::lb::rebind_split(0.5, &ports, &[0.0, 0.0], &[0.5, 0.5], &[1.0, 1.0]).is_none());
}

#[test]
fn adaptive_rebinding_moves_load_off_a_hot_tor() {
    // Server 0 sends 7.5G through ToR 0 and 2.5G through ToR 1 (400 flows
    // to the other cluster, 300 on ToR 0); ToR 0's uplinks are 90% used,
    // ToR 1's 10%. After one period the share of flows on ToR 0 is
    // P0 = t0 / (t0 + t1) with t0 = 0.5*0.75*0.5/0.9 + 0.375, t1 = 0.5*0.25*0.5/0.1 + 0.125.
    let t = loop6();
    let net = Net::new(&t);
    let [p0, p1] = [t.hosts()[0].ports[0], t.hosts()[0].ports[1]];
    assert_eq!((p0.tor, p1.tor), (0, 1));
    let flows: Vec<ActiveFlow> = (0..400u64)
        .map(|i| {
            let dst = 24 + (i % 24) as u32;
            let sp = if i < 300 { p0 } else { p1 };
            let dp = t.hosts()[dst as usize].ports[0];
            ActiveFlow { id: i, src: 0, dst, path: net.direct(&sp, &dp, 0) }
        })
        .collect();
    let rate = |l: u32| {
        if l == p0.up {
            7.5e9
        } else if l == p1.up {
            2.5e9
        } else if t.tors()[0].up.contains(&l) {
            0.9 * t.links()[l as usize].capacity_bps
        } else if t.tors()[1].up.contains(&l) {
            0.1 * t.links()[l as usize].capacity_bps
        } else {
            0.0
        }
    };
    let params = LbParams { ewma_weight: 1.0, ..LbParams::default() };
    let mut lb = load_balancer("adaptive", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let moves = lb.on_period(&net, 0.01, &rate, &flows, &mut rng);
    let mut on0 = 300.0;
    for (id, path) in &moves {
        assert!(is_walk(&t, path));
        let was0 = *id < 300;
        let now0 = path[0] == p0.up;
        on0 += f64::from(now0 as u8) - f64::from(was0 as u8);
    }
    let t0: f64 = 0.5 * 0.75 * 0.5 / 0.9 + 0.375;
    let t1 = 0.5 * 0.25 * 0.5 / 0.1 + 0.125;
    let want = t0 / (t0 + t1);
    let share = on0 / 400.0;
    let sigma = (want * (1.0 - want) / 400.0_f64).sqrt();
    assert!(share < 0.6, "load stayed on the hot ToR: {share}");
    assert!((share - want).abs() < 3.0 * sigma, "{share} vs {want}");
}

#[test]
fn detours_never_pass_through_another_hot_tor() {
    // Server 0's ToRs 0 and 1 are hot, and so is ToR 2 (rack 1, on ToRs 1
    // and 2, is a hot rack too). Detours to the right would cross ToR 2, so
    // every detour leaves to the left, through ToR 5 (a server of rack 5)
    // or on to ToR 4, and no link of it touches ToR 2.
    let t = loop6();
    let net = Net::new(&t);
    let params = LbParams { aggressiveness: 1.0, ..LbParams::default() };
    let sp = t.hosts()[0].ports[0];
    let dp = t.hosts()[30].ports[0];
    let flow = ActiveFlow { id: 1, src: 0, dst: 30, path: net.direct(&sp, &dp, 0) };
    let rate = |l: u32| {
        if [0usize, 1, 2].iter().any(|&k| t.tors()[k].up.contains(&l)) {
            t.links()[l as usize].capacity_bps * 0.9
        } else {
            0.0
        }
    };
    let mut lb = load_balancer("detour", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let tor2 = t.tors()[2].node;
    let mut detoured = 0;
    for k in 1..=60 {
        for (_, p) in lb.on_period(&net, 0.01 * k as f64, &rate, std::slice::from_ref(&flow), &mut rng) {
            assert!(is_walk(&t, &p), "{p:?}");
            if p.len() > flow.path.len() {
                detoured += 1;
                for &l in &p {
                    let link = &t.links()[l as usize];
                    assert!(link.src != tor2 && link.dst != tor2, "crosses hot ToR 2: {p:?}");
                }
                let up = p.iter().find(|&&l| t.links()[l as usize].layer == netheat_topology::Layer::TorAgg).unwrap();
                let tor = t.nodes()[t.links()[*up as usize].src as usize].rack.unwrap();
                assert!(tor == 5 || tor == 4, "left through ToR {tor}");
            }
        }
    }
    assert!(detoured > 0);
}

#[test]
fn window_meter_averages_over_the_period() {
    // A flow that sent 6.25 MB on links 1 and 3 during a 10 ms period
    // averaged 5 Gbps on each, whatever its instantaneous rate at the end.
    let mut m = netheat_subways::WindowMeter::new(4);
    m.record(7, &[1, 3], 0.0);
    m.record(7, &[1, 3], 6.25e6);
    let r = m.close(0.01);
    assert_eq!(r, vec![0.0, 5e9, 0.0, 5e9]);
    assert_eq!(m.close(0.01), vec![0.0; 4]);
    // Its last 1.25 MB when it finishes: 1 Gbps over the next 10 ms; then it is forgotten,
    // and a new flow with the same id counts from 0.
    m.finish(7, &[1, 3], 7.5e6);
    assert_eq!(m.close(0.01), vec![0.0, 1e9, 0.0, 1e9]);
    m.record(7, &[2], 1.25e6);
    assert_eq!(m.close(0.01), vec![0.0, 0.0, 1e9, 0.0]);
}
