//! The average cell-level utilization (the hotspot paper's Figure 16): the
//! x axis of the UTP load sweep.

use netheat_repro::utp::{run_cluster, ClusterParams};

fn small() -> netheat_topology::Topology {
    netheat_config::load_topology_str(
        "[topology]\nkind = \"two-tier\"\nracks = 8\nhosts-per-rack = 10\nhost-link = \"10Gbps\"\ntor-uplink = \"20Gbps\"\n\
         [hosts]\ncores = 16\nmemory = \"64GB\"\n",
        "dc.toml",
    )
    .unwrap()
}

/// Tasks only: the analytical queries move fixed bytes whatever the demand
/// scale.
fn params(bw: f64) -> ClusterParams {
    ClusterParams {
        duration_s: 3.0 * 3600.0,
        warmup_s: 1800.0,
        bw_median_per_core: bw,
        queries: vec![],
        ..ClusterParams::default()
    }
}

/// Bandwidth-oblivious placement does not look at demands, so with the same
/// seed it places the same tasks on the same servers whatever their demand
/// scale; while no link saturates (about 768 busy cores x 1-2 Mbps median,
/// heavy tails included, against 10 Gbps host links and 160 Gbps of
/// uplinks), the egress carried is the offered one and doubling every
/// demand doubles the cell-level utilization. (At 5 and 10 Mbps the ratio
/// is 1.976: the heaviest tasks start to fill their host links.)
#[test]
fn cell_utilization_is_linear_in_demand_while_nothing_saturates() {
    let t = small();
    let a = run_cluster(&t, "bandwidth-oblivious", &params(1e6), 2).unwrap();
    let b = run_cluster(&t, "bandwidth-oblivious", &params(2e6), 2).unwrap();
    assert!(a.cell_util > 0.0 && a.cell_util < 0.2, "{}", a.cell_util);
    let ratio = b.cell_util / a.cell_util;
    assert!((ratio - 2.0).abs() < 0.02, "10 Mbps / 5 Mbps per core: {ratio}");
    assert!(a.p98_tor_util < 0.75, "nothing hot at this load: {}", a.p98_tor_util);
}

#[test]
fn cell_utilization_is_nan_when_every_window_is_warm_up() {
    let t = small();
    let p = ClusterParams { duration_s: 3600.0, warmup_s: 3600.0, ..params(5e6) };
    assert!(run_cluster(&t, "utp", &p, 1).unwrap().cell_util.is_nan());
}
