//! The storage cluster's pipeline model. (Sinbad's simulation and the CCP
//! chunk store are scenarios; their tests are netheat-scenario's.)

use netheat_engine::{FlowSpec, Network, NoController, Route, SimConfig, Simulation};
use netheat_storage::Cluster;

#[test]
fn pipeline_write_time_is_size_over_min_of_disk_and_link_share() {
    // 2 racks x 2 hosts, 1 Gbps hosts, no oversubscription (2 Gbps rack
    // links), disk 400 Mbps. One 100 MB block: 100e6*8/400e6 = 2 s.
    let c = Cluster::two_tier(2, 2, 1e9, 1.0, Some(4e8), 1e12, &[], &[]);
    let path = c.pipeline_path(0, &[0, 2, 3]);
    // A competing flow into host 2 takes half of its 1 Gbps downlink
    // only when the pipeline wants more than 500 Mbps: with a 400 Mbps
    // disk it does not, so still 2 s. Without disks (in memory) the
    // pipeline gets the 500 Mbps fair share: 1.6 s.
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        SimConfig { end_s: Some(100.0), ..SimConfig::default() },
    );
    sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(path))).unwrap();
    sim.add_flow(FlowSpec::new(
        2,
        1,
        2,
        1e12,
        0.0,
        Route::Explicit(vec![c.hosts[1].up[0], c.racks[0].up[0], c.racks[1].down[0], c.hosts[2].down[0]]),
    ))
    .unwrap();
    let r = sim.run_with(&mut NoController);
    assert!((r.flows[0].fct_s - 2.0).abs() < 1e-9, "{}", r.flows[0].fct_s);
    let m = Cluster::two_tier(2, 2, 1e9, 1.0, None, 1e12, &[], &[]);
    let mut sim = Simulation::new(
        Network::new(m.link_bps.clone()),
        None,
        SimConfig { end_s: Some(100.0), ..SimConfig::default() },
    );
    sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(m.pipeline_path(0, &[0, 2, 3])))).unwrap();
    sim.add_flow(FlowSpec::new(
        2,
        1,
        2,
        1e12,
        0.0,
        Route::Explicit(vec![m.hosts[1].up[0], m.racks[0].up[0], m.racks[1].down[0], m.hosts[2].down[0]]),
    ))
    .unwrap();
    let r = sim.run_with(&mut NoController);
    assert!((r.flows[0].fct_s - 1.6).abs() < 1e-9, "{}", r.flows[0].fct_s);
}
