//! Every user mistake is one error naming file, line, key and reason.

use crate::fails;

const BASE: &str = r#"[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
"#;

#[test]
fn unknown_key() {
    let (line, key, reason) = fails(&format!("{BASE}uplink-speed = \"1Gbps\"\n"));
    assert_eq!(line, 7);
    assert_eq!(key, "topology.uplink-speed");
    assert!(reason.contains("unknown key") && reason.contains("tor-uplink"), "{reason}");
}

#[test]
fn unknown_section() {
    let (line, key, _) = fails(&format!("{BASE}[topolgy]\nkind = \"x\"\n"));
    assert_eq!(line, 7);
    assert_eq!(key, "topolgy");
}

#[test]
fn wrong_unit() {
    let (line, key, reason) = fails(&BASE.replace("host-link = \"10Gbps\"", "host-link = \"10GB\""));
    assert_eq!(line, 5);
    assert_eq!(key, "topology.host-link");
    assert!(reason.contains("unknown unit `GB`") && reason.contains("Gbps"), "{reason}");
}

#[test]
fn bare_number_has_no_unit() {
    let (line, key, reason) = fails(&BASE.replace("tor-uplink = \"10Gbps\"", "tor-uplink = 10"));
    assert_eq!((line, key.as_str()), (6, "topology.tor-uplink"));
    assert!(reason.contains("write the unit"), "{reason}");
}

#[test]
fn negative_capacity() {
    let (line, key, reason) = fails(&BASE.replace("tor-uplink = \"10Gbps\"", "tor-uplink = \"-10Gbps\""));
    assert_eq!((line, key.as_str()), (6, "topology.tor-uplink"));
    assert!(reason.contains("negative"), "{reason}");
}

#[test]
fn zero_capacity() {
    let (line, key, reason) = fails(&BASE.replace("host-link = \"10Gbps\"", "host-link = \"0Gbps\""));
    assert_eq!((line, key.as_str()), (5, "topology.host-link"));
    assert!(reason.contains("positive"), "{reason}");
    let (line, key, _) = fails(&BASE.replace("tor-uplink = \"10Gbps\"", "tor-uplink = \"0Mbps\""));
    assert_eq!((line, key.as_str()), (6, "topology.tor-uplink"));
}

#[test]
fn zero_count() {
    let (line, key, reason) = fails(&BASE.replace("racks = 4", "racks = 0"));
    assert_eq!((line, key.as_str()), (3, "topology.racks"));
    assert!(reason.contains("at least 1"), "{reason}");
}

#[test]
fn more_server_ports_than_the_tor_has() {
    let (line, key, reason) = fails(&format!("{BASE}tor-ports = 4\n"));
    assert_eq!((line, key.as_str()), (7, "topology.tor-ports"));
    // 4 servers + 1 uplink = 5 ports > 4.
    assert!(reason.contains("needs 5 ports") && reason.contains("only 4"), "{reason}");
}

#[test]
fn subways_loop_smaller_than_ports() {
    let text = r#"[topology]
kind = "subways"
wiring = "type1"
pods = 1
racks-per-pod = 12
hosts-per-rack = 2
host-link = "10Gbps"
ports-per-host = 3
loop-size = 2
tor-uplink = "10Gbps"
"#;
    let (line, key, reason) = fails(text);
    assert_eq!((line, key.as_str()), (9, "topology.loop-size"));
    assert!(reason.contains("l >= p"), "{reason}");
}

#[test]
fn rack_that_does_not_exist() {
    let (line, key, reason) = fails(&format!("{BASE}\n[[rack-group]]\nkind = \"disk\"\nracks = [1, 9]\n"));
    assert_eq!((line, key.as_str()), (10, "rack-group[0].racks"));
    assert!(reason.contains("rack 9 does not exist"), "{reason}");
    let (line, key, _) = fails(&format!("{BASE}\n[[events]]\nat = \"1h\"\naction = \"fail\"\nracks = \"2..6\"\n"));
    assert_eq!((line, key.as_str()), (11, "events[0].racks"));
}

#[test]
fn host_and_node_references() {
    let ev = |target: &str| format!("{BASE}\n[[events]]\nat = \"1h\"\naction = \"fail\"\n{target}\n");
    let (line, key, reason) = fails(&ev("hosts = [3, \"r4h0\"]"));
    assert_eq!((line, key.as_str()), (11, "events[0].hosts[1]"));
    assert!(reason.contains("\"r4h0\" does not exist"), "{reason}");
    let (_, key, reason) = fails(&ev("nodes = [\"spine0\"]"));
    assert_eq!(key, "events[0].nodes[0]");
    assert!(reason.contains("spine0"), "{reason}");
    // Both forms that exist are accepted.
    netheat_config::load_topology_str(&ev("hosts = [15, \"r3h3\"]"), "dc.toml").unwrap();
    netheat_config::load_topology_str(&ev("nodes = [\"tor2\", \"core\"]"), "dc.toml").unwrap();
}

#[test]
fn key_not_for_this_kind() {
    let (line, key, reason) = fails(&format!("{BASE}loop-size = 4\n"));
    assert_eq!((line, key.as_str()), (7, "topology.loop-size"));
    assert!(reason.contains("not used by kind \"two-tier\""), "{reason}");
}

#[test]
fn missing_key_and_bad_kind() {
    let (_, key, reason) = fails(&BASE.replace("racks = 4\n", ""));
    assert_eq!(key, "topology.kind");
    assert!(reason.contains("needs key `racks`"), "{reason}");
    let (line, key, reason) = fails(&BASE.replace("two-tier", "four-tier"));
    assert_eq!((line, key.as_str()), (2, "topology.kind"));
    assert!(reason.contains("two-tier") && reason.contains("subways"), "{reason}");
}

#[test]
fn syntax_error() {
    let (line, _, _) = fails("[topology]\nkind = \"two-tier\nracks = 4\n");
    assert_eq!(line, 2);
    // Mistakes the TOML parser gives no words for still get a reason.
    for text in ["[topology]\nkind =", "# a\0b\n[topology]\n"] {
        let (_, _, reason) = fails(text);
        assert!(reason.starts_with("this is not valid TOML"), "{reason:?}");
    }
}

#[test]
fn message_format() {
    let e = netheat_config::load_topology_str(&format!("{BASE}bogus = 1\n"), "dc.toml").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("dc.toml:7:1: key `topology.bogus`: unknown key"), "{msg}");
}

#[test]
fn huge_values_make_short_messages() {
    let x = "x".repeat(100_000);
    for text in [
        BASE.replace("two-tier", &x),
        BASE.replace("10Gbps\"\ntor", &format!("{x}\"\ntor")),
        format!("{BASE}\n[[events]]\nat = \"1h\"\naction = \"fail\"\nnodes = [\"{x}\"]\n"),
    ] {
        let (_, _, reason) = fails(&text);
        assert!(reason.len() < 450 && reason.contains('…'), "{} characters: {reason}", reason.len());
    }
}
