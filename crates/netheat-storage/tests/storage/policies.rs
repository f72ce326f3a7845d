//! The policies on views of datacenters, tested statistically (many
//! placements, shares bounded by hand-derived probabilities, in the style
//! of Hadoop's `TestAvailableSpaceBlockPlacementPolicy`) and by hand.

use netheat_core::HostId;
use netheat_storage::placement::place_checked;
use netheat_storage::{make_policy, Cluster, PolicyConfig, ReplicaPlacement, Sinbad, UplinkClass, View};
use netheat_topology::{HostSpec, Provisioning, RackKind, RackSpec, Topology, TopologySpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::{clos, four_sigma, hdd, req};

/// Draws `n` placements of one replica (no writer) on the Clos view where
/// every report gives rack 1 a spare downlink capacity `S_h ~ U(0, 10)`
/// Gbps and every other rack `S_c ~ U(0, 20)` Gbps; returns rack 1's share.
///
/// Rack 1's load is put unevenly on its two ToR downlinks (the first full,
/// the second `10 - S_h` Gbps), the other racks' evenly, so a policy that
/// looked at one downlink of the set would see rack 1 at 0 or `S_h` spare
/// against `S_c / 2`, not `S_h` against `S_c`.
fn hot_rack_share(policy: &mut dyn ReplicaPlacement, n: usize, seed: u64) -> f64 {
    let topo = clos(&[100e9; 4]);
    let c = Cluster::from_topology(&topo).unwrap();
    policy.bind(&c);
    let live = vec![true; c.hosts.len()];
    let used = vec![0.0; c.hosts.len()];
    let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut draws = ChaCha8Rng::seed_from_u64(seed ^ 0xd1ce);
    let mut hot = 0usize;
    for i in 0..n {
        let mut rates = vec![Some(0.0); c.link_bps.len()];
        for (r, rack) in c.racks.iter().enumerate() {
            let (a, b) = if r == 1 {
                let s = draws.gen_range(0.0..10e9);
                (10e9, 10e9 - s)
            } else {
                let s = draws.gen_range(0.0..20e9);
                ((20e9 - s) / 2.0, (20e9 - s) / 2.0)
            };
            rates[rack.down[0] as usize] = Some(a);
            rates[rack.down[1] as usize] = Some(b);
        }
        policy.observe(i as f64, &rates);
        let rq = netheat_storage::PlacementRequest { time_s: i as f64, ..req(i as u64, 1, 0, None) };
        let hs = place_checked(policy, &rq, &v, &mut rng).unwrap();
        hot += usize::from(c.rack_of(hs[0]) == 1);
    }
    hot as f64 / n as f64
}

#[test]
fn sinbad_avoids_a_loaded_rack_in_proportion() {
    // With alpha = 1 each report is the estimate, and the report clears the
    // previous placement's bump, so Sinbad takes the rack of largest spare
    // capacity (disks write 100 Gbps, no cap): rack 1 wins when S_h beats
    // three independent S_c,
    //   P = int_0^10 (1/10) (s/20)^3 ds = 10^4 / (4 * 10 * 8000) = 1/32,
    // against 1/4 for uniform. 4,000 draws each, bounds p +- 4 sigma.
    let n = 4000;
    let cfg = PolicyConfig { alpha: 1.0, ..PolicyConfig::default() };
    let s = hot_rack_share(&mut Sinbad::new(cfg.clone()), n, 11);
    let (lo, hi) = four_sigma(1.0 / 32.0, n);
    assert!(lo <= s && s <= hi, "sinbad: rack 1 share {s}, expected in [{lo}, {hi}]");
    let u = hot_rack_share(make_policy("uniform", &cfg).unwrap().as_mut(), n, 11);
    let (lo, hi) = four_sigma(0.25, n);
    assert!(lo <= u && u <= hi, "uniform: rack 1 share {u}, expected in [{lo}, {hi}]");
}

#[test]
fn sinbad_hysteresis_spreads_a_burst_over_the_rack_link_sets() {
    // One report of idle links, then a burst of 40 blocks of 250 MB (one
    // replica, no writer) with Delta = 1 s: each placement bumps its rack's
    // two downlinks by min(spare, 250e6 * 8 / 1) = 2 Gbps in all, 1 Gbps
    // each (equal spare). Every rack starts with 20 Gbps spare and the best
    // rack is always taken, so every 4 placements each rack gets one: after
    // 40, 10 blocks each and every rack downlink estimated full (10 Gbps).
    let topo = clos(&[100e9; 4]);
    let c = Cluster::from_topology(&topo).unwrap();
    let mut s = Sinbad::new(PolicyConfig { alpha: 1.0, ..PolicyConfig::default() });
    s.bind(&c);
    s.observe(0.0, &vec![Some(0.0); c.link_bps.len()]);
    let live = vec![true; c.hosts.len()];
    let used = vec![0.0; c.hosts.len()];
    let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut per_rack = [0usize; 4];
    for i in 0..40u64 {
        let rq = netheat_storage::PlacementRequest { bytes: 250e6, ..req(i, 1, 0, None) };
        let hs = place_checked(&mut s, &rq, &v, &mut rng).unwrap();
        per_rack[c.rack_of(hs[0]) as usize] += 1;
        if i % 4 == 3 {
            let k = (i / 4 + 1) as usize;
            assert_eq!(per_rack, [k; 4], "after {} blocks", i + 1);
        }
    }
    let e = s.estimator().unwrap();
    for rack in &c.racks {
        assert_eq!(e.set_load(&rack.down), 20e9);
        for &l in &rack.down {
            assert_eq!(e.load(l), 10e9);
        }
        assert_eq!(e.set_expected(&rack.down, f64::INFINITY), 0.0);
    }
}

/// Six disk racks (4 hosts, one 10 TB disk each: 40 TB per rack) with ToR
/// uplinks 80, 80, 40, 40, 10, 10 Gbps against 1 Gbps per TB, and two
/// compute racks (4 hosts x 32 cores) with 80 Gbps against 0.1 Gbps per
/// core.
fn classed() -> Topology {
    let disk = HostSpec { storage: vec![hdd(10e12, 1.44e9)], ..HostSpec::with_ports(1, 10e9) };
    let mut racks: Vec<RackSpec> = [80e9, 80e9, 40e9, 40e9, 10e9, 10e9]
        .iter()
        .map(|&u| RackSpec { kind: RackKind::Disk, host: disk.clone(), tor_uplink_bps: u })
        .collect();
    for _ in 0..2 {
        racks.push(RackSpec { kind: RackKind::Compute, host: HostSpec::with_ports(1, 10e9), tor_uplink_bps: 80e9 });
    }
    let mut spec = TopologySpec::two_tier(8, 4, 10e9, 40e9);
    spec.racks = racks;
    spec.provisioning =
        Provisioning { uplink_per_tb_bps: Some(1e9), uplink_per_core_bps: Some(0.1e9), ..Provisioning::default() };
    Topology::build(&spec).unwrap()
}

fn counts(
    p: &mut dyn ReplicaPlacement,
    c: &Cluster,
    n: usize,
    r: usize,
    f: usize,
    writer: Option<HostId>,
) -> Vec<usize> {
    let live = vec![true; c.hosts.len()];
    let used = vec![0.0; c.hosts.len()];
    let v = View { cluster: c, live: &live, host_used: &used, balance_threshold: 0.1 };
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut per_rack = vec![0usize; c.racks.len()];
    for i in 0..n {
        for h in place_checked(p, &req(i as u64, r, f, writer), &v, &mut rng).unwrap() {
            per_rack[c.rack_of(h) as usize] += 1;
        }
    }
    per_rack
}

#[test]
fn ccp_takes_the_best_uplink_classes_and_ignores_compute_racks() {
    // Ratios to the guideline: 80/40 = 2 (High), 40/40 = 1 (Medium), 10/40
    // = 0.25 (Low); compute racks 80/12.8 = 6.25 (High, but no disks).
    let topo = classed();
    let c = Cluster::from_topology(&topo).unwrap();
    use UplinkClass::{High, Low, Medium};
    let classes: Vec<UplinkClass> = c.racks.iter().map(|r| r.class).collect();
    assert_eq!(classes, vec![High, High, Medium, Medium, Low, Low, High, High]);
    // 3 replicas in 3 racks, no writer: both High disk racks every time,
    // the third replica on one of the two Medium racks at random (1/2
    // each), never a Low or compute rack.
    let n = 2000;
    let k = counts(make_policy("ccp", &PolicyConfig::default()).unwrap().as_mut(), &c, n, 3, 2, None);
    assert_eq!((k[0], k[1]), (n, n), "{k:?}");
    assert_eq!((k[4], k[5], k[6], k[7]), (0, 0, 0, 0), "{k:?}");
    assert_eq!(k[2] + k[3], n, "{k:?}");
    let (lo, hi) = four_sigma(0.5, n);
    let share = k[2] as f64 / n as f64;
    assert!(lo <= share && share <= hi, "Medium rack 2 share {share}, expected in [{lo}, {hi}]");
}

#[test]
fn uniform_spreads_over_disk_racks_only() {
    // One replica, no writer: each of the 6 disk racks with probability
    // 1/6, the compute racks never. 3,000 draws, bounds p +- 4 sigma.
    let c = Cluster::from_topology(&classed()).unwrap();
    let n = 3000;
    let k = counts(make_policy("uniform", &PolicyConfig::default()).unwrap().as_mut(), &c, n, 1, 0, None);
    assert_eq!((k[6], k[7]), (0, 0), "{k:?}");
    let (lo, hi) = four_sigma(1.0 / 6.0, n);
    for (r, &x) in k.iter().take(6).enumerate() {
        let share = x as f64 / n as f64;
        assert!(lo <= share && share <= hi, "rack {r} share {share}, expected in [{lo}, {hi}]");
    }
    // A writer on a compute rack (host 24) keeps no local copy: 3 replicas
    // over 2 disk racks, 2 + 1.
    let k = counts(make_policy("uniform", &PolicyConfig::default()).unwrap().as_mut(), &c, 500, 3, 1, Some(24));
    assert_eq!(k.iter().sum::<usize>(), 1500);
    assert_eq!((k[6], k[7]), (0, 0), "{k:?}");
}
