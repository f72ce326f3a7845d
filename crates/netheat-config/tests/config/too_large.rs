//! Datacenters too large for the memory budget (or for 32-bit ids) are
//! refused before anything is allocated, at the key that makes them large.

use netheat_core::{with_memory_budget, BYTES_PER_LINK, BYTES_PER_NODE};
use std::time::Instant;

use crate::fails;

const BASE: &str = r#"[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"#;

/// Loads `text` under a budget of `budget` bytes; the error must come fast.
fn fails_within(budget: u64, text: &str) -> (usize, String, String) {
    let t0 = Instant::now();
    let r = with_memory_budget(budget, || fails(text));
    assert!(t0.elapsed().as_secs_f64() < 2.0, "took {:?}", t0.elapsed());
    assert!(r.2.len() < 400, "message of {} characters: {}", r.2.len(), r.2);
    r
}

#[test]
fn a_trillion_racks() {
    let (line, key, reason) = fails_within(256 << 20, &BASE.replace("racks = 4", "racks = 1000000000000"));
    assert_eq!((line, key.as_str()), (3, "topology.racks"));
    // 4e12 hosts, 1e12 ToRs + the core, 2 * (4e12 + 1e12) directed links.
    assert!(
        reason.starts_with(
            "a datacenter of 4,000,000,000,000 hosts, 1,000,000,000,001 switches and \
             10,000,000,000,000 directed links would hold about"
        ),
        "{reason}"
    );
    assert!(reason.contains("over the memory budget of 256 MiB (set with --memory-budget"), "{reason}");
    assert!(reason.ends_with("lower `racks` (1,000,000,000,000) or raise the budget"), "{reason}");
}

#[test]
fn four_billion_hosts_per_rack() {
    let (line, key, reason) =
        fails_within(256 << 20, &BASE.replace("hosts-per-rack = 4", "hosts-per-rack = 4000000000"));
    assert_eq!((line, key.as_str()), (4, "topology.hosts-per-rack"));
    assert!(reason.contains("16,000,000,000 hosts"), "{reason}");
    // Even under the largest budget, ids have 32 bits.
    let (_, key, reason) = fails_within(u64::MAX, &BASE.replace("hosts-per-rack = 4", "hosts-per-rack = 4000000000"));
    assert_eq!(key, "topology.hosts-per-rack");
    assert!(reason.contains("32-bit ids"), "{reason}");
}

#[test]
fn extreme_counts_do_not_overflow() {
    let clos = |pods: &str, rpp: &str| {
        format!(
            "[topology]\nkind = \"three-tier\"\npods = {pods}\nracks-per-pod = {rpp}\nhosts-per-rack = 2\n\
             aggs-per-pod = 2\nspines = 4\nhost-link = \"10Gbps\"\ntor-uplink = \"10Gbps\"\n"
        )
    };
    let max = i64::MAX.to_string();
    let (line, key, _) = fails_within(256 << 20, &clos(&max, &max));
    assert_eq!((line, key.as_str()), (3, "topology.pods"));
    let (line, key, _) = fails_within(256 << 20, &clos("2", &max));
    assert_eq!((line, key.as_str()), (4, "topology.racks-per-pod"));
    let (line, key, _) =
        fails_within(256 << 20, &BASE.replace("tor-uplink", &format!("ports-per-host = {max}\ntor-uplink")));
    assert_eq!((line, key.as_str()), (6, "topology.ports-per-host"));
    let (line, key, _) = fails_within(256 << 20, &format!("{BASE}border-switches = {max}\nborder-link = \"10Gbps\"\n"));
    assert_eq!((line, key.as_str()), (7, "topology.border-switches"));
    let (line, key, _) = fails_within(
        256 << 20,
        &format!("{BASE}\n[hosts]\nstorage = [{{ kind = \"hdd\", count = 2 }}, {{ kind = \"ssd\", count = {max} }}]\n"),
    );
    assert_eq!((line, key.as_str()), (9, "hosts.storage[1].count"));
}

#[test]
fn a_huge_rack_range_costs_nothing() {
    let (line, key, reason) =
        fails_within(256 << 20, &format!("{BASE}\n[[rack-group]]\nkind = \"disk\"\nracks = \"0..{}\"\n", i64::MAX));
    assert_eq!((line, key.as_str()), (10, "rack-group[0].racks"));
    assert!(reason.contains("rack 4 does not exist"), "{reason}");
    let long = "9".repeat(10_000);
    let (_, _, reason) = fails_within(256 << 20, &format!("{BASE}\n[[rack-group]]\nracks = \"0..{long}\"\n"));
    assert!(reason.contains('…'), "{reason}");
}

#[test]
fn the_budget_is_the_limit() {
    // 16 hosts + 4 ToRs + the core = 21 nodes; 2 * (16 + 4) = 40 directed links.
    let need = 21 * BYTES_PER_NODE + 40 * BYTES_PER_LINK;
    with_memory_budget(need, || netheat_config::load_topology_str(BASE, "dc.toml")).unwrap();
    let (line, key, reason) = fails_within(need - 1, BASE);
    // Hosts are the largest term; racks (4) and hosts-per-rack (4) tie: the first is blamed.
    assert_eq!((line, key.as_str()), (3, "topology.racks"));
    assert!(reason.contains("16 hosts, 5 switches and 40 directed links"), "{reason}");
}
