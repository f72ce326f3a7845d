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
    // The server port (10G idle) caps nothing here: min(10G, 5G) = 5G vs min(10G, 20G) = 10G -> 1/3.
    let want = 1.0 / 3.0;
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
    // ToRs 0 and 1 hot for two samples: detours through ToR 2 (via a server of
    // rack 1) or ToR 5 (via a server of rack 5), each a walk.
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
        assert!(tor == 2 || tor == 5, "left through ToR {tor}");
    }
}

#[test]
fn inbound_detours_come_down_a_neighbouring_tor() {
    // Server 0's ToRs 0 and 1 are hot inbound: flows to it from the other
    // cluster come down into ToR 2 or ToR 5 and reach it through a server.
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
        assert!(tor == 2 || tor == 5, "came down into ToR {tor}");
        let into_dst: Vec<u32> = t.hosts()[0].ports.iter().map(|q| q.down).collect();
        assert!(into_dst.contains(p.last().unwrap()), "ends at server 0");
    }
}
