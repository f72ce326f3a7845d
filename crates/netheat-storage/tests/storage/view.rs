//! The storage view of a datacenter: racks, hosts, link ids, disks,
//! capacities and paths against the topology's own accessors and hand
//! figures.

use std::path::Path;

use netheat_core::{HostId, Routing};
use netheat_engine::{Controller, Ctx, FlowSpec, Network, NoController, Route, SimConfig, Simulation};
use netheat_storage::placement::place_checked;
use netheat_storage::{make_policy, Cluster, PolicyConfig, ReplicaPlacement, Sinbad, StorageError, UplinkClass, View};
use netheat_topology::{Direction, Layer, RackKind, StorageKind, Topology, TopologySpec};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::common::{clos, hdd, req};

const TWO_TIER: &str = r#"
[topology]
kind = "two-tier"
racks = 3
hosts-per-rack = 2
host-link = "10Gbps"
tor-uplink = "20Gbps"

[hosts]
storage = [{ kind = "hdd", count = 2, capacity = "8TB", write = "100MB/s" }]
"#;

#[test]
fn two_tier_view_has_the_topology_racks_hosts_and_links() {
    let topo = netheat_config::load_topology_str(TWO_TIER, "two-tier.toml").unwrap();
    let c = Cluster::from_topology(&topo).unwrap();
    assert!(c.topology().is_some());
    // Racks: hosts 2r and 2r + 1, one ToR uplink and downlink each (the
    // two-tier core), all racks alike so the fleet median makes them Medium.
    assert_eq!(c.racks.len(), 3);
    for (r, rack) in c.racks.iter().enumerate() {
        let r32 = r as u32;
        assert_eq!(rack.hosts, vec![2 * r32, 2 * r32 + 1]);
        assert_eq!(rack.up, topo.tors()[r].up);
        assert_eq!(rack.down, topo.tors()[r].down);
        assert_eq!((rack.up.len(), rack.down.len()), (1, 1));
        let (up, down) = (&topo.links()[rack.up[0] as usize], &topo.links()[rack.down[0] as usize]);
        assert_eq!((up.layer, up.direction, up.src), (Layer::TorAgg, Direction::Up, topo.tors()[r].node));
        assert_eq!((down.layer, down.direction, down.dst), (Layer::TorAgg, Direction::Down, topo.tors()[r].node));
        assert_eq!(rack.class, UplinkClass::Medium);
        assert_eq!(rack.class, topo.racks()[r].uplink_class);
    }
    // Hosts: their rack, their NIC links, two 8 TB disks at 100 MB/s each:
    // 16e12 bytes and 2 * 100e6 * 8 = 1.6e9 bits/s; no disk links.
    for (h, host) in c.hosts.iter().enumerate() {
        assert_eq!(host.rack, h as u32 / 2);
        assert_eq!(host.up, vec![topo.hosts()[h].ports[0].up]);
        assert_eq!(host.down, vec![topo.hosts()[h].ports[0].down]);
        assert_eq!(topo.links()[host.up[0] as usize].src, h as u32);
        assert!(host.stores);
        assert_eq!(host.capacity_bytes, 16e12);
        assert_eq!(host.disk_write_bps, Some(1.6e9));
        assert_eq!(host.disk, None);
    }
    // Link ids are the topology's: same count, same capacities.
    assert_eq!(c.link_bps.len(), topo.links().len());
    for (l, link) in topo.links().iter().enumerate() {
        assert_eq!(c.link_bps[l], link.capacity_bps);
    }
    assert_eq!(c.link_bps[c.racks[1].down[0] as usize], 20e9);
    assert_eq!(c.link_bps[c.hosts[3].down[0] as usize], 10e9);
    // Paths are the topology's: host 0 (rack 0) to host 3 (rack 1) is
    // host up, ToR 0 up, ToR 1 down, host down.
    let mut p = Vec::new();
    c.net_path(0, 3, &mut p);
    assert_eq!(p, vec![c.hosts[0].up[0], c.racks[0].up[0], c.racks[1].down[0], c.hosts[3].down[0]]);
    assert_eq!(topo.all_paths(0, 3), vec![p.clone()]);
    p.clear();
    c.net_path(0, 1, &mut p);
    assert_eq!(p, vec![c.hosts[0].up[0], c.hosts[1].down[0]]);
    // The pipeline 0 -> 3 -> 5 as hops and as one sorted link set.
    let hops = c.pipeline_hops(0, &[3, 5]);
    assert_eq!(hops, vec![topo.all_paths(0, 3)[0].clone(), topo.all_paths(3, 5)[0].clone()]);
    let mut all: Vec<u32> = hops.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(c.pipeline_path(0, &[3, 5]), all);
    assert_eq!(c.slowest_disk_bps(&[3, 5]), Some(1.6e9));
    assert_eq!(c.rack_disk_bps(2), 1.6e9);
    assert_eq!(c.storage_hosts(), (0..6).collect::<Vec<HostId>>());
    // The cluster routes like the topology.
    assert_eq!(Routing::num_links(&c), topo.num_links());
    assert_eq!(Routing::num_paths(&c, 0, 3), 1);
    assert_eq!(Routing::num_paths(&c, 2, 2), 0);
}

#[test]
fn clos_view_takes_every_tor_uplink_and_every_path() {
    // 4 racks x 2 hosts under 2 aggregation switches: each ToR has two
    // 10 Gbps uplinks, so a rack's link sets have two links summing to the
    // 20 Gbps ToR uplink. Disks of rack 2 write at 2 Gbps, the others at 4.
    let topo = clos(&[4e9, 4e9, 2e9, 4e9]);
    let c = Cluster::from_topology(&topo).unwrap();
    for (r, rack) in c.racks.iter().enumerate() {
        assert_eq!(rack.up, topo.tors()[r].up);
        assert_eq!(rack.down, topo.tors()[r].down);
        assert_eq!(rack.down.len(), 2);
        assert_eq!(rack.up.iter().map(|&l| c.link_bps[l as usize]).sum::<f64>(), topo.tor_uplink_bps(r as u32));
        assert_eq!(rack.down.iter().map(|&l| c.link_bps[l as usize]).sum::<f64>(), 20e9);
    }
    // Hosts 0 and 2 are in racks 0 and 1: two paths, one per aggregation
    // switch, the topology's in its order.
    assert_eq!(c.num_paths(0, 2), 2);
    for k in 0..2 {
        let mut p = Vec::new();
        c.net_path_k(0, 2, k, &mut p);
        assert_eq!(p, topo.all_paths(0, 2)[k]);
        assert_eq!(p[2], c.racks[1].down[k]);
        let mut q = Vec::new();
        Routing::path(&c, 0, 2, k, &mut q);
        assert_eq!(q, p);
    }
    let mut p = Vec::new();
    c.net_path(0, 2, &mut p);
    assert!(topo.all_paths(0, 2).contains(&p));
    // The pipeline 0 -> 2 -> 4 -> 6 is capped by rack 2's disk (host 4),
    // 2 Gbps: a 100 MB block takes 100e6 * 8 / 2e9 = 0.4 s on idle links
    // (every NIC and ToR link is 10 Gbps).
    assert_eq!(c.slowest_disk_bps(&[2, 4, 6]), Some(2e9));
    assert_eq!(c.rack_disk_bps(2), 2e9);
    let mut sim = Simulation::new(Network::from_routing(&topo), Some(&topo), SimConfig::default());
    let path = c.pipeline_path(0, &[2, 4, 6]);
    let cap = c.slowest_disk_bps(&[2, 4, 6]).unwrap();
    sim.add_flow(FlowSpec::new(1, 0, 6, 100e6, 0.0, Route::Explicit(path)).with_rate_cap(cap)).unwrap();
    let r = sim.run_with(&mut NoController);
    assert!((r.flows[0].fct_s - 0.4).abs() < 1e-9, "{}", r.flows[0].fct_s);
}

#[test]
fn diskless_fleet_stores_in_memory_everywhere() {
    // No host has a disk: every host stores, in memory (no disk cap), up to
    // its memory (256 GB, `HostSpec::with_ports`).
    let topo = clos(&[]);
    let c = Cluster::from_topology(&topo).unwrap();
    assert!(c.hosts.iter().all(|h| h.stores && h.disk_write_bps.is_none() && h.capacity_bytes == 256e9));
    assert_eq!(c.rack_disk_bps(0), f64::INFINITY);
    assert_eq!(c.slowest_disk_bps(&[0, 2]), None);
}

#[test]
fn storage_mixed_view_keeps_compute_hosts_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/topologies/storage-mixed.toml");
    let topo = netheat_config::load_topology(&path).unwrap();
    let c = Cluster::from_topology(&topo).unwrap();
    // 8 racks x 16 hosts. Racks 0-2 are compute (no disk): hosts 0..48
    // store nothing. Rack 3 is mixed with 4 SSDs of 4 TB writing 1 GB/s:
    // 16e12 bytes, 4 * 8e9 = 32e9 bits/s. Racks 4-7 hold 12 HDDs of 16 TB
    // at the typical 180 MB/s: 192e12 bytes, 12 * 1.44e9 = 17.28e9 bits/s.
    assert_eq!(c.hosts.len(), 128);
    assert_eq!(c.storage_hosts(), (48..128).collect::<Vec<HostId>>());
    for (h, host) in c.hosts.iter().enumerate() {
        let rack = &topo.racks()[host.rack as usize];
        match h / 16 {
            0..=2 => {
                assert_eq!(rack.kind, RackKind::Compute);
                assert!(!host.stores && host.capacity_bytes == 0.0 && host.disk_write_bps.is_none());
            }
            3 => {
                assert_eq!(rack.kind, RackKind::Mixed);
                assert_eq!((host.capacity_bytes, host.disk_write_bps), (16e12, Some(32e9)));
            }
            _ => {
                assert_eq!(rack.kind, RackKind::Disk);
                assert_eq!(host.capacity_bytes, 192e12);
                assert!((host.disk_write_bps.unwrap() - 17.28e9).abs() < 1.0, "{:?}", host.disk_write_bps);
                assert!(topo.hosts()[h].storage.iter().all(|d| d.kind == StorageKind::Hdd));
            }
        }
    }
    // Uplink classes against the provisioning guideline (100 Mbps per TB,
    // 50 Mbps per core): compute racks 40 / (16 * 48 * 0.05) = 1.04,
    // Medium; the mixed rack 40 / (25.6 + 38.4) = 0.63, Low; disk racks
    // 40 (or 10) / (16 * 192 * 0.1 = 307.2), Low.
    let classes: Vec<UplinkClass> = c.racks.iter().map(|r| r.class).collect();
    use UplinkClass::{Low, Medium};
    assert_eq!(classes, vec![Medium, Medium, Medium, Low, Low, Low, Low, Low]);
    // Whatever the policy, 2,000 writes from every host land on storage
    // hosts only; a compute writer gets no local replica (it has no disk),
    // a storage writer does.
    let live = vec![true; 128];
    let used = vec![0.0; 128];
    let v = View { cluster: &c, live: &live, host_used: &used, balance_threshold: 0.1 };
    for tag in netheat_storage::POLICIES {
        let mut p = make_policy(tag, &PolicyConfig::default()).unwrap();
        p.bind(&c);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for i in 0..2000u64 {
            let w = (i % 128) as HostId;
            let hs = place_checked(p.as_mut(), &req(i, 3, 1, Some(w)), &v, &mut rng).unwrap();
            assert!(hs.iter().all(|&h| h >= 48), "{tag}: {hs:?}");
            assert_eq!(hs.contains(&w), w >= 48, "{tag}: writer {w}, {hs:?}");
        }
    }
}

#[test]
fn storing_host_without_capacity_is_refused() {
    let mut spec = TopologySpec::two_tier(2, 2, 10e9, 20e9);
    spec.racks[1].kind = RackKind::Disk;
    spec.racks[1].host.storage = vec![hdd(0.0, 1e9)];
    let topo = Topology::build(&spec).unwrap();
    let e = Cluster::from_topology(&topo).unwrap_err();
    assert!(matches!(e, StorageError::Invalid { .. }), "{e:?}");
    assert!(e.to_string().contains("r1h0"), "{e}");
}

/// At t = 1 s reads every link's rate from the engine, hands them to the
/// policy as a report, and places `n` single-replica blocks.
struct Reporter<'a> {
    c: &'a Cluster,
    policy: Box<dyn ReplicaPlacement>,
    n: usize,
    per_rack: Vec<usize>,
    rack1_load: f64,
}

impl Controller for Reporter<'_> {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, _token: u64) {
        let rates: Vec<Option<f64>> = (0..self.c.link_bps.len()).map(|l| Some(ctx.link_rate_bps(l as u32))).collect();
        self.rack1_load = self.c.racks[1].down.iter().map(|&l| rates[l as usize].unwrap_or(0.0)).sum();
        let live = vec![true; self.c.hosts.len()];
        let used = vec![0.0; self.c.hosts.len()];
        let v = View { cluster: self.c, live: &live, host_used: &used, balance_threshold: 0.1 };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for i in 0..self.n {
            self.policy.observe(ctx.now(), &rates);
            let rq = netheat_storage::PlacementRequest { time_s: ctx.now(), ..req(i as u64, 1, 0, None) };
            let hs = place_checked(self.policy.as_mut(), &rq, &v, &mut rng).unwrap();
            self.per_rack[self.c.rack_of(hs[0]) as usize] += 1;
        }
    }
}

#[test]
fn engine_link_rates_feed_sinbad_directly() {
    // Two 10 Gbps flows from rack 0 into rack 1, one through each
    // aggregation switch (path indices 0 and 1), fill both of ToR 1's
    // downlinks: rack 1 has 20 - 20 = 0 spare, every other rack 20 Gbps.
    // The engine's rates, indexed by the topology's link ids, go to
    // `observe` as they are: Sinbad never picks rack 1, uniform does about
    // a quarter of the time (400 draws: none with probability 0.75^400).
    let topo = clos(&[4e9; 4]);
    let c = Cluster::from_topology(&topo).unwrap();
    let mut out = Vec::new();
    for tag in ["sinbad", "uniform"] {
        let cfg = PolicyConfig { alpha: 1.0, ..PolicyConfig::default() };
        let policy: Box<dyn ReplicaPlacement> =
            if tag == "sinbad" { Box::new(Sinbad::new(cfg)) } else { make_policy(tag, &cfg).unwrap() };
        let mut rep = Reporter { c: &c, policy, n: 400, per_rack: vec![0; 4], rack1_load: 0.0 };
        rep.policy.bind(&c);
        let mut sim = Simulation::new(
            Network::from_routing(&topo),
            Some(&topo),
            SimConfig { end_s: Some(2.0), ..SimConfig::default() },
        );
        sim.add_flow(FlowSpec::new(1, 0, 2, 1e12, 0.0, Route::PathIndex(0))).unwrap();
        sim.add_flow(FlowSpec::new(2, 1, 3, 1e12, 0.0, Route::PathIndex(1))).unwrap();
        sim.schedule_timer(1.0, 0).unwrap();
        sim.run_with(&mut rep);
        assert_eq!(rep.rack1_load, 20e9);
        out.push(rep.per_rack);
    }
    assert_eq!(out[0][1], 0, "sinbad: {:?}", out[0]);
    assert_eq!(out[0].iter().sum::<usize>(), 400);
    assert!(out[1][1] > 0, "uniform: {:?}", out[1]);
}
