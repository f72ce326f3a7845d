//! The bundled example datacenters load and have the hand-counted shape.

use std::path::PathBuf;

use netheat_core::Routing;
use netheat_topology::{RackKind, UplinkClass};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/topologies").join(name)
}

#[test]
fn issue_example_loads_unchanged() {
    let text = r#"
[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"#;
    let t = netheat_config::load_topology_str(text, "example.toml").unwrap();
    assert_eq!(t.hosts().len(), 16);
    assert_eq!(t.racks().len(), 4);
    assert!(t.links().iter().all(|l| l.capacity_bps == 10e9));
    assert_eq!(t.summary().oversubscription[0].median, 4.0);
    let file = netheat_config::load_topology(&example("two-tier-4x4.toml")).unwrap();
    assert_eq!(file.links().len(), t.links().len());
}

#[test]
fn every_example_loads() {
    for name in
        ["two-tier-4x4.toml", "baraat-36k.toml", "subways-type1.toml", "subways-type2.toml", "storage-mixed.toml"]
    {
        let t = netheat_config::load_topology(&example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.num_hosts() > 0);
    }
}

#[test]
fn subways_paper_fabric() {
    let t = netheat_config::load_topology(&example("subways-type1.toml")).unwrap();
    // 36-port ToRs: 15 servers x 2 ports + 6 uplinks.
    assert!(t.tors().iter().all(|tor| tor.server_ports == 30));
    let s = t.summary();
    assert_eq!(s.oversubscription[0].median, 5.0);
    assert_eq!(s.oversubscription[1].median, 4.0);
}

#[test]
fn rack_groups_and_events() {
    let t = netheat_config::load_topology(&example("storage-mixed.toml")).unwrap();
    let kinds: Vec<RackKind> = t.racks().iter().map(|r| r.kind).collect();
    use RackKind::*;
    assert_eq!(kinds, vec![Compute, Compute, Compute, Mixed, Disk, Disk, Disk, Disk]);
    // Disk racks: 16 hosts x 12 x 16 TB = 3072 TB; guideline 0.1 Gbps/TB = 307.2G,
    // so 40G is Low; compute racks: 16 x 48 cores x 50 Mbps = 38.4G, 40G is Medium.
    assert_eq!(t.racks()[0].uplink_class, UplinkClass::Medium);
    assert_eq!(t.racks()[4].uplink_class, UplinkClass::Low);
    assert_eq!(t.hosts()[4 * 16].storage.len(), 12);
    assert_eq!(t.hosts()[4 * 16].cores, 16);
    assert_eq!(t.tor_uplink_bps(6), 10e9);
    // 2 racks x 2 directions at 2 h and again at 3 h.
    assert_eq!(t.events().len(), 8);
    assert_eq!(t.events()[0].time_s, 7200.0);
    assert_eq!(t.events()[0].capacity_bps, 20e9);
}

#[test]
fn fabric_border_from_toml() {
    let text = r#"
[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "10Gbps"
tor-uplink = "10Gbps"
border-switches = 2
border-link = "100Gbps"

[[events]]
at = "1h"
action = "fail"
nodes = ["border1"]
"#;
    let t = netheat_config::load_topology_str(text, "b.toml").unwrap();
    // 4 hosts, 2 ToRs, the core, 2 border switches, each linked to the core.
    assert_eq!(t.nodes().len(), 9);
    assert_eq!(t.borders(), &[7, 8]);
    // Failing border1 takes its one link, both directions.
    assert_eq!(t.events().len(), 2);
    let (_, key, reason) = crate::fails(&text.replace("border-link = \"100Gbps\"\n", ""));
    assert_eq!(key, "topology.border-switches");
    assert!(reason.contains("border-link"), "{reason}");
}

fn table(text: &str) -> toml_edit::Table {
    text.parse::<toml_edit::DocumentMut>().unwrap().as_table().clone()
}

#[test]
fn overrides_replace_topology_keys_and_keep_the_rest() {
    let path = example("two-tier-4x4.toml");
    // 4 hosts x 10 Gbps over a 20 Gbps uplink: 2:1 instead of the file's 4:1.
    let t = netheat_config::load_topology_overridden(&path, &table("tor-uplink = \"20Gbps\"")).unwrap();
    assert_eq!(t.summary().oversubscription[0].median, 2.0);
    assert_eq!(t.num_hosts(), 16);
    // A new key (one more rack) is added beside the file's.
    let t = netheat_config::load_topology_overridden(&path, &table("racks = 5")).unwrap();
    assert_eq!(t.num_hosts(), 20);
    // No overrides: the file as written.
    let t = netheat_config::load_topology_overridden(&path, &toml_edit::Table::new()).unwrap();
    assert_eq!(t.summary().oversubscription[0].median, 4.0);
}

#[test]
fn override_errors_name_the_override_and_file_errors_the_file() {
    let path = example("subways-type1.toml");
    let err = |text: &str| match netheat_config::load_topology_overridden(&path, &table(text)) {
        Err(netheat_config::ConfigError::Invalid { file, line, key, reason, .. }) => (file, line, key, reason),
        other => panic!("expected an error, got {:?}", other.map(|t| t.num_hosts())),
    };
    let (file, line, key, reason) = err("loop-sise = 4");
    assert_eq!((file.as_str(), line, key.as_str()), (netheat_config::OVERRIDE_FILE, 0, "topology.loop-sise"));
    assert!(reason.contains("did you mean `loop-size`"), "{reason}");
    let (file, _, key, reason) = err("loop-size = 0");
    assert_eq!((file.as_str(), key.as_str()), (netheat_config::OVERRIDE_FILE, "topology.loop-size"));
    assert!(reason.contains("at least 1"), "{reason}");
    // Three ports per server no longer fit the file's 36-port ToRs: the file's own key is
    // at fault, located on its line of the file.
    let (file, line, key, _) = err("ports-per-host = 3");
    assert!(file.ends_with("subways-type1.toml"), "{file}");
    assert_eq!(key, "topology.tor-ports");
    let text = std::fs::read_to_string(&path).unwrap();
    let expected = text.lines().position(|l| l.starts_with("tor-ports")).unwrap() + 1;
    assert_eq!(line, expected);
}
