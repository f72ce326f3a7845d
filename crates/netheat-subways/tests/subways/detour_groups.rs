//! Detours for a group of contiguous hot racks (Subways §6, "Detouring for
//! groups of racks"): the edge racks detour and, with the fairness
//! modification (`LbParams::group_fairness`), send no direct traffic through
//! the ToRs they share with the group's members that cannot detour.

use netheat_core::LinkId;
use netheat_subways::lb::{load_balancer, ActiveFlow, LbParams};
use netheat_subways::Net;
use netheat_topology::{Direction, Layer, Topology};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{is_walk, topo};

/// Flows each server of a hot rack sends to the other cluster.
const PER_SERVER: usize = 50;

/// Two clusters of 8 racks of 4 servers; in each a Type 1 loop of 8 (rack
/// `k`'s servers on ToRs `k` and `k + 1 mod 8`), 20G of ToR uplink.
fn loop8() -> Topology {
    topo(
        "kind = \"subways\"\nwiring = \"type1\"\npods = 2\nracks-per-pod = 8\nhosts-per-rack = 4\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 8\ntor-uplink = \"20Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    )
}

/// `PER_SERVER` direct flows from every server of racks `racks` (cluster 0)
/// to servers of cluster 1 (hosts 32-63, no shortcut), each through the
/// source port `port(rack, flow index)` (0: the server's ToR `k`, 1: ToR
/// `k + 1`) and the destination's first port, fabric routes in turn.
fn flows(t: &Topology, net: &Net<'_>, racks: &[u32], port: impl Fn(u32, usize) -> usize) -> Vec<ActiveFlow> {
    let mut out = Vec::new();
    for &r in racks {
        for s in 4 * r..4 * r + 4 {
            for i in 0..PER_SERVER {
                let dst = 32 + ((s as usize * PER_SERVER + i) % 32) as u32;
                let sp = t.hosts()[s as usize].ports[port(r, i)];
                let dp = t.hosts()[dst as usize].ports[0];
                let n = t.tor_routes(sp.tor, dp.tor);
                out.push(ActiveFlow { id: out.len() as u64, src: s, dst, path: net.direct(&sp, &dp, i % n) });
            }
        }
    }
    out
}

/// ToR uplinks of `hot` measured at 90% (above the 60% threshold), every
/// other link idle.
fn hot_up<'a>(t: &'a Topology, hot: &'a [usize]) -> impl Fn(LinkId) -> f64 + 'a {
    move |l| {
        if hot.iter().any(|&k| t.tors()[k].up.contains(&l)) {
            0.9 * t.links()[l as usize].capacity_bps
        } else {
            0.0
        }
    }
}

/// Runs `periods` controller periods of the detour policy on `flows`
/// (moving them as told) and returns the flows after each period.
fn run(
    net: &Net<'_>,
    fairness: bool,
    rate: &dyn Fn(LinkId) -> f64,
    mut flows: Vec<ActiveFlow>,
    periods: usize,
    seed: u64,
) -> Vec<Vec<ActiveFlow>> {
    let params = LbParams { group_fairness: fairness, ..LbParams::default() };
    let mut lb = load_balancer("detour", &params).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for k in 1..=periods {
        for (id, path) in lb.on_period(net, 0.01 * k as f64, rate, &flows, &mut rng) {
            flows[id as usize].path = path;
        }
        out.push(flows.clone());
    }
    out
}

/// The ToR whose uplink `path` leaves through (outbound), if any.
fn exit_tor(t: &Topology, path: &[LinkId]) -> Option<u32> {
    let up = path.iter().find(|&&l| t.links()[l as usize].layer == Layer::TorAgg)?;
    t.nodes()[t.links()[*up as usize].src as usize].rack
}

/// Whether `path` has a link into or out of ToR `k`.
fn touches(t: &Topology, path: &[LinkId], k: usize) -> bool {
    let node = t.tors()[k].node;
    path.iter().any(|&l| t.links()[l as usize].src == node || t.links()[l as usize].dst == node)
}

/// Max-min rates with only the ToR layer contended (as in §5.2 and §6:
/// the ToR is the bottleneck): each ToR's uplinks as one link of their total
/// capacity, and the servers' links toward their ToRs; every other link
/// unbounded.
fn tor_layer_rates(t: &Topology, flows: &[ActiveFlow]) -> Vec<f64> {
    let nl = t.links().len();
    let mut caps: Vec<f64> =
        t.links().iter().map(|l| if l.layer == Layer::HostTor { l.capacity_bps } else { 0.0 }).collect();
    for tor in t.tors() {
        caps.push(tor.up.iter().map(|&l| t.links()[l as usize].capacity_bps).sum());
    }
    let tor_of_up = |l: LinkId| t.tors().iter().position(|tor| tor.up.contains(&l));
    let host_up = |l: LinkId| {
        let link = &t.links()[l as usize];
        link.layer == Layer::HostTor && link.direction == Direction::Up
    };
    let sets: Vec<(Vec<LinkId>, f64, f64, i32)> = flows
        .iter()
        .map(|f| {
            let mut links = Vec::new();
            for &l in &f.path {
                if let Some(k) = tor_of_up(l) {
                    links.push((nl + k) as LinkId);
                } else if host_up(l) {
                    links.push(l);
                }
            }
            (links, 1.0, f64::INFINITY, 0)
        })
        .collect();
    netheat_engine::max_min_rates(&caps, &sets)
}

#[test]
fn edge_racks_of_a_group_leave_the_shared_tors_to_the_middle_rack() {
    // Racks 0, 1, 2 hot (ToRs 0-3, more than p = 2 contiguous). Rack 0
    // detours left (remote ToRs 7, 6), rack 2 right (4, 5); rack 1 (ToRs
    // 1, 2) reaches no ToR that is not hot, so it cannot detour: ToRs 1 and
    // 2 are protected. Rack 0's flows start on its port on ToR 1, rack 2's
    // on ToR 2, rack 1's alternate.
    let t = loop8();
    let net = Net::new(&t);
    let hot = [0, 1, 2, 3];
    let rate = hot_up(&t, &hot);
    let start = flows(&t, &net, &[0, 1, 2], |r, i| match r {
        0 => 1,
        2 => 0,
        _ => i % 2,
    });
    let after = &run(&net, true, &rate, start.clone(), 1, 7)[0];
    let rack = |f: &ActiveFlow| f.src / 4;

    // (a) After one period every flow of an edge rack leaves its server
    // through the port on its outer ToR (0 for rack 0, 3 for rack 2), direct
    // or detoured, and touches neither ToR 1 nor ToR 2.
    let (mut edge, mut detoured) = (0.0_f64, 0.0_f64);
    for f in after.iter().filter(|f| rack(f) != 1) {
        assert!(is_walk(&t, &f.path), "{f:?}");
        let outer = if rack(f) == 0 { 0 } else { 3 };
        let port = t.hosts()[f.src as usize].ports.iter().find(|p| p.tor == outer).unwrap();
        assert_eq!(f.path[0], port.up, "flow {} of rack {} left through another port", f.id, rack(f));
        assert!(!touches(&t, &f.path, 1) && !touches(&t, &f.path, 2), "{f:?}");
        edge += 1.0;
        let exit = exit_tor(&t, &f.path).unwrap();
        if exit != outer {
            assert!([4, 5, 6, 7].contains(&exit), "left through ToR {exit}");
            detoured += 1.0;
        }
    }
    // The share detoured is offered / (offered + own allowed capacity): two
    // idle remote ToRs offer 60% of 20G each, 24G, against ToR 0 (or 3)
    // alone, 20G: 24 / 44 (3 sigma over the 400 edge flows).
    let want = 24.0 / 44.0;
    let sigma = (want * (1.0 - want) / edge).sqrt();
    assert!((detoured / edge - want).abs() < 3.0 * sigma, "{} vs {want}", detoured / edge);
    // The middle rack keeps its paths (it cannot detour, and nothing is
    // measured on its ports to re-bind on).
    for (a, b) in after.iter().zip(&start).filter(|(f, _)| rack(f) == 1) {
        assert_eq!(a.path, b.path);
    }

    // (b) Only rack 1's flows leave through ToRs 1 and 2, so with the ToR
    // layer the bottleneck rack 1 gets both ToRs' uplinks, 2 x 20G = 40G
    // (its 8 x 10G ports carry 5G each: not binding).
    for f in after.iter().filter(|f| rack(f) != 1) {
        assert!(!matches!(exit_tor(&t, &f.path), Some(1 | 2)));
    }
    let rates = tor_layer_rates(&t, after);
    let rack1: f64 = after.iter().zip(&rates).filter(|(f, _)| rack(f) == 1).map(|(_, r)| r).sum();
    assert!((rack1 - 40e9).abs() < 1e-3, "rack 1 gets {rack1}");

    // Without the modification an edge flow stays on its shared ToR (1 or
    // 2) unless detoured, with probability 24 / (24 + 40) = 0.375 (own
    // capacity: both its ToRs). Each shared ToR's 20G is then divided
    // equally among rack 1's 100 flows on it and the `stay` edge flows left
    // there: rack 1 gets 20G x 100 / (100 + stay) from each, about 2 x 20G x
    // 100 / 225 = 17.8G.
    let plain = &run(&net, false, &rate, start.clone(), 1, 7)[0];
    let (mut edge, mut detoured, mut stay) = (0.0_f64, 0.0_f64, [0.0_f64; 2]);
    for f in plain.iter().filter(|f| rack(f) != 1) {
        edge += 1.0;
        match exit_tor(&t, &f.path) {
            Some(4..=7) => detoured += 1.0,
            Some(1) => stay[0] += 1.0,
            Some(2) => stay[1] += 1.0,
            e => panic!("edge flow {} leaves through {e:?}", f.id),
        }
    }
    let want = 24.0 / 64.0;
    let sigma = (want * (1.0 - want) / edge).sqrt();
    assert!((detoured / edge - want).abs() < 3.0 * sigma, "{} vs {want}", detoured / edge);
    let rates = tor_layer_rates(&t, plain);
    let rack1: f64 = plain.iter().zip(&rates).filter(|(f, _)| rack(f) == 1).map(|(_, r)| r).sum();
    let want = 20e9 * 100.0 / (100.0 + stay[0]) + 20e9 * 100.0 / (100.0 + stay[1]);
    assert!((rack1 - want).abs() < 1e-6 * want, "rack 1 gets {rack1}, want {want}");
    assert!(rack1 < 30e9);
}

#[test]
fn inbound_edge_racks_receive_only_through_their_outer_tor() {
    // The same group hot inbound (ToR downlinks 0-3 at 90%), flows from
    // cluster 1 into racks 0-2, each arriving on the destination's port on
    // ToR k + 1. Rack 0 is an edge (inbound detours come down ToR 7 or 6):
    // after one period each flow into rack 0 ends on its port on ToR 0, and
    // none touches ToR 1 or 2.
    let t = loop8();
    let net = Net::new(&t);
    let hot: Vec<LinkId> = (0..4).flat_map(|k| t.tors()[k].down.clone()).collect();
    let rate = |l: LinkId| if hot.contains(&l) { 0.9 * t.links()[l as usize].capacity_bps } else { 0.0 };
    let mut start = Vec::new();
    for d in 0..12u32 {
        for i in 0..PER_SERVER {
            let src = 32 + ((d as usize * PER_SERVER + i) % 32) as u32;
            let sp = t.hosts()[src as usize].ports[0];
            let dp = t.hosts()[d as usize].ports[1];
            start.push(ActiveFlow { id: start.len() as u64, src, dst: d, path: net.direct(&sp, &dp, 0) });
        }
    }
    let after = &run(&net, true, &rate, start, 1, 8)[0];
    for f in after.iter().filter(|f| f.dst < 4) {
        assert!(is_walk(&t, &f.path), "{f:?}");
        let port = t.hosts()[f.dst as usize].ports.iter().find(|p| p.tor == 0).unwrap();
        assert_eq!(f.path.last(), Some(&port.down), "{f:?}");
        assert!(!touches(&t, &f.path, 1) && !touches(&t, &f.path, 2), "{f:?}");
    }
}

#[test]
fn a_single_hot_rack_or_a_group_of_edges_is_unchanged() {
    // (c) One hot rack (rack 0: ToRs 0 and 1): no group, so the modification
    // changes nothing: the same paths, period after period, with it on and
    // off (same seed). Rack 1 (ToRs 1, 2) sends too but is not hot.
    let t = loop8();
    let net = Net::new(&t);
    let start = flows(&t, &net, &[0, 1], |_, i| i % 2);
    for hot in [&[0usize, 1][..], &[0, 1, 2]] {
        // Second case: racks 0 and 1 both hot (ToRs 0-2), both edges (rack 0
        // detours left, rack 1 right): ToR 1 is shared by edges only and
        // stays in use by both, as without the modification.
        let rate = hot_up(&t, hot);
        let on = run(&net, true, &rate, start.clone(), 12, 9);
        let off = run(&net, false, &rate, start.clone(), 12, 9);
        assert_eq!(on, off, "hot ToRs {hot:?}");
        let last = on.last().unwrap();
        assert!(last.iter().any(|f| matches!(exit_tor(&t, &f.path), Some(5..=7))), "rack 0 detours");
        assert!(
            last.iter().any(|f| f.src < 4 && f.path[0] == t.hosts()[f.src as usize].ports[1].up),
            "ToR 1 still used"
        );
    }
}
