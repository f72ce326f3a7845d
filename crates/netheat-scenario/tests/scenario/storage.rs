//! Storage decisions at intervals (`storage.decision-interval`, Sinbad's
//! `q` and OPT' order, SIGCOMM'13 sections 5.2 and 7.1), checked against
//! hand-derived times on a datacenter where nothing but the disks binds.

use netheat_data::DataDir;
use netheat_scenario::{BlockOut, Decision, Scenario, ScenarioResult};

/// Three disk racks of two hosts, links far faster than the 1 Gbit/s
/// disks; files of three 64 MiB blocks and of one, and files of one
/// 1 MiB block (below the 10 MB small-block size), written for 20 s.
fn scenario(storage: &str) -> String {
    format!(
        r#"
[scenario]
seed = 3
[topology]
kind = "two-tier"
racks = 3
hosts-per-rack = 2
host-link = "1000Gbps"
tor-uplink = "1000Gbps"
[[rack-group]]
racks = "0..3"
kind = "disk"
hosts = {{ storage = [{{ kind = "hdd", count = 1, capacity = "4TB", write = "1Gbps" }}] }}
[workload]
duration = "20s"
[[workload.app]]
kind = "file-write"
rate = 0.5
file-size = "192MiB"
block = "64MiB"
[[workload.app]]
kind = "file-write"
rate = 0.5
file-size = "64MiB"
block = "64MiB"
[[workload.app]]
kind = "file-write"
rate = 0.5
file-size = "1MiB"
block = "1MiB"
[storage]
{storage}
"#
    )
}

fn run(storage: &str) -> ScenarioResult {
    Scenario::from_text(&scenario(storage), "s.toml", &std::env::temp_dir())
        .recording()
        .run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
        .unwrap()
}

const MIB64: f64 = 64.0 * 1024.0 * 1024.0;

#[test]
fn blocks_wait_for_the_next_decision_and_are_placed_in_opt_prime_order() {
    let q = 2.0;
    let r = run("policy = \"sinbad\"\ndecision-interval = \"2s\"");
    let large: Vec<_> = r.blocks.iter().filter(|b| b.bytes == MIB64).collect();
    let small: Vec<_> = r.blocks.iter().filter(|b| b.bytes < 10e6).collect();
    assert!(large.len() >= 15 && small.len() >= 5, "{} large, {} small blocks", large.len(), small.len());
    for b in &large {
        // Placed at the first multiple of q after the request...
        let next = ((b.requested_s / q).floor() + 1.0) * q;
        assert!((b.start_s - next).abs() < 1e-9, "requested {} placed {}", b.requested_s, b.start_s);
    }
    disk_paced(&r.blocks);
    // Small blocks go at once.
    assert!(small.iter().all(|b| b.start_s == b.requested_s), "{small:?}");
    // A file's next block is requested when its previous one is written.
    for b in r.blocks.iter().filter(|b| b.block > 0) {
        let prev = r.blocks.iter().find(|p| p.task_id == b.task_id && p.block == b.block - 1).unwrap();
        assert_eq!(b.requested_s, prev.finish_s);
    }
    // The decisions of one instant come in OPT' order: fewest blocks of
    // the file left to write (3 - block for the three-block files, 1 for
    // the others) first, then by request.
    let left = |file: u64, block: u64| {
        let n = r.blocks.iter().filter(|b| b.task_id == file).count() as u64;
        n - block
    };
    let requested = |file: u64, block: u64| {
        r.blocks.iter().find(|b| b.task_id == file && u64::from(b.block) == block).unwrap().requested_s
    };
    let decided: Vec<(f64, u64, f64)> = r
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Replicas { time_s, request, .. } if request.bytes == MIB64 => {
                Some((*time_s, left(request.file, request.block), requested(request.file, request.block)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(decided.len(), large.len());
    let mut mixed = 0;
    for w in decided.windows(2) {
        if w[0].0 == w[1].0 {
            assert!((w[0].1, w[0].2) <= (w[1].1, w[1].2), "{w:?}");
            mixed += usize::from(w[0].1 != w[1].1);
        }
    }
    assert!(mixed >= 2, "too few batches mix files with different blocks left: {decided:?}");
}

#[test]
fn without_an_interval_every_block_is_placed_when_requested() {
    let r = run("policy = \"sinbad\"");
    assert!(r.blocks.len() >= 20);
    for b in &r.blocks {
        assert_eq!(b.start_s, b.requested_s);
    }
    disk_paced(&r.blocks);
}

/// Every block takes at least its bytes at the 1 Gbit/s disk rate, and
/// exactly that when no other write shared one of its disks meanwhile
/// (the links are far faster: only disks bind).
fn disk_paced(blocks: &[BlockOut]) {
    let hosts = |b: &BlockOut| b.replicas.split(';').map(str::to_string).collect::<Vec<_>>();
    let mut alone = 0;
    for b in blocks {
        let t = 8.0 * b.bytes / 1e9;
        assert!(b.finish_s - b.start_s >= t - 1e-9, "{b:?}");
        let shared = blocks.iter().any(|o| {
            !(o.task_id == b.task_id && o.block == b.block)
                && o.start_s < b.finish_s
                && b.start_s < o.finish_s
                && hosts(o).iter().any(|h| hosts(b).contains(h))
        });
        if !shared {
            alone += 1;
            assert!((b.finish_s - b.start_s - t).abs() < 1e-9, "{b:?}");
        }
    }
    assert!(alone >= 10, "only {alone} blocks wrote alone");
}

#[test]
fn writes_to_one_disk_share_it() {
    // Two racks of two disk hosts (a block: the writer's disk and both of
    // the other rack's), so the blocks decided at one instant start
    // together and many share disks. Each hop crosses one disk and
    // links far faster than it: the n hops on a disk each get 1/n of it
    // and, all of one size, end together after n block times; a block ends
    // with its busiest disk's hops (when its batch ends before the next
    // decision, 2 s later, and no other write overlaps them).
    let text = scenario("policy = \"uniform\"\ndecision-interval = \"2s\"")
        .replace("duration = \"20s\"", "duration = \"80s\"")
        .replace("racks = 3", "racks = 2")
        .replace("racks = \"0..3\"", "racks = \"0..2\"")
        .replace("rate = 0.5\nfile-size = \"192MiB\"", "rate = 1.0\nfile-size = \"64MiB\"")
        .replace("[[workload.app]]\nkind = \"file-write\"\nrate = 0.5\nfile-size = \"1MiB\"\nblock = \"1MiB\"\n", "");
    let r = Scenario::from_text(&text, "s.toml", &std::env::temp_dir())
        .run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
        .unwrap();
    let t = 8.0 * MIB64 / 1e9;
    let mut by_start: std::collections::BTreeMap<u64, Vec<&BlockOut>> = Default::default();
    for b in r.blocks.iter().filter(|b| b.bytes == MIB64) {
        by_start.entry(b.start_s.to_bits()).or_default().push(b);
    }
    let (mut checked, mut shared) = (0, 0);
    for batch in by_start.values() {
        let mut on_disk: std::collections::BTreeMap<&str, usize> = Default::default();
        for b in batch {
            for h in b.replicas.split(';') {
                *on_disk.entry(h).or_default() += 1;
            }
        }
        // Only batches that write alone: no other block's write overlaps.
        let (from, to) = (batch[0].start_s, batch.iter().map(|b| b.finish_s).fold(0.0, f64::max));
        let others = r.blocks.iter().filter(|o| o.start_s != from && o.start_s < to && o.finish_s > from).count();
        if others > 0 || on_disk.values().any(|&n| n as f64 * t >= 2.0 - 1e-9) {
            continue;
        }
        for b in batch {
            let n = b.replicas.split(';').map(|h| on_disk[h]).max().unwrap();
            assert!((b.finish_s - b.start_s - n as f64 * t).abs() < 1e-9, "{n} writes on a disk: {b:?} in {batch:?}");
            checked += 1;
            shared += usize::from(n > 1);
        }
    }
    assert!(checked >= 20 && shared >= 5, "{checked} blocks checked, {shared} shared a disk");
}

#[test]
fn a_negative_interval_is_refused() {
    let text = scenario("policy = \"sinbad\"\ndecision-interval = \"-1s\"");
    let e = Scenario::from_text(&text, "s.toml", &std::env::temp_dir())
        .run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("decision-interval"), "{e}");
}

#[test]
fn free_sources_send_nothing_up_their_tor() {
    // Every host stores, so each block's first replica is its writer's and
    // the other two share one other rack (the rack-aware rule): the hop
    // that leaves the writer's rack starts at the writer. With
    // `free-source` that hop leaves out the writer's uplinks, so no write
    // crosses a ToR uplink at all; without it every cross-rack hop does.
    let text = scenario("policy = \"uniform\"");
    let topo = netheat_config::load_topology_str(
        &text[text.find("[topology]").unwrap()..text.find("[workload]").unwrap()],
        "t",
    )
    .unwrap();
    let tor_up: Vec<u32> = topo.tors().iter().flat_map(|t| t.up.iter().copied()).collect();
    let up_bytes = |r: &ScenarioResult| -> f64 {
        r.links
            .iter()
            .filter(|(l, _, _)| tor_up.contains(l))
            .map(|&(l, _, u)| u * topo.links()[l as usize].capacity_bps)
            .sum()
    };
    let plain = run("policy = \"uniform\"");
    let free = run("policy = \"uniform\"\nfree-source = true");
    assert_eq!(plain.blocks.len(), free.blocks.len());
    assert!(plain.blocks.iter().all(|b| b.racks == 2 && b.replicas.starts_with(&format!("{};", b.writer))));
    assert!(up_bytes(&plain) > 0.0);
    assert_eq!(up_bytes(&free), 0.0);
    // Nothing but the disks binds, so the times do not change.
    disk_paced(&free.blocks);
    // Every block crosses racks once (writer to the remote pair); the
    // storing hosts' bytes, from the blocks table, give the spread.
    let bytes: f64 = plain.blocks.iter().map(|b| b.bytes).sum();
    assert!((plain.stats["storage_cross_rack_bytes"] - bytes).abs() < 1e-3);
    let mut per_host = [0.0f64; 6];
    for b in &plain.blocks {
        for h in b.replicas.split(';') {
            per_host[h.parse::<usize>().unwrap()] += b.bytes;
        }
    }
    let mean = per_host.iter().sum::<f64>() / 6.0;
    let std = (per_host.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 6.0).sqrt();
    assert!(
        (plain.stats["storage_std_bytes"] - std).abs() < 1e-6 * std,
        "{} vs {std}",
        plain.stats["storage_std_bytes"]
    );
    assert!((plain.stats["storage_std_pct"] - 100.0 * std / 4e12).abs() < 1e-9);
    let dev = per_host.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max) / 4e12;
    assert!((plain.stats["storage_imbalance_pct"] - 100.0 * dev).abs() < 1e-9);
}

#[test]
fn a_replica_streams_onto_one_of_its_hosts_disks() {
    // Four disks of 55 MB/s per host (Sinbad's EC2 machines) behind
    // 1 Gbit/s NICs: a block replica goes to one disk, so it streams at
    // 55 MB/s = 440 Mbit/s however many disks the host has, and a 64 MiB
    // block alone takes 64 MiB x 8 / 440 Mbit/s = 1.22 s; the host's disks
    // together (1.76 Gbit/s) are not what binds.
    let text = r#"
[scenario]
seed = 4
[topology]
kind = "two-tier"
racks = 3
hosts-per-rack = 2
host-link = "1Gbps"
tor-uplink = "100Gbps"
[hosts]
storage = [{ kind = "hdd", count = 4, capacity = "400GB", write = "55MB/s" }]
[workload]
duration = "60s"
[[workload.app]]
kind = "file-write"
rate = 0.1
file-size = "64MiB"
block = "64MiB"
replicas = 1
fault-tolerance = 0
[storage]
policy = "uniform"
"#;
    let r = super::run(text).unwrap();
    assert!(r.blocks.len() >= 3, "{}", r.blocks.len());
    let alone = MIB64 * 8.0 / 440e6;
    let times: Vec<f64> = r.blocks.iter().map(|b| b.finish_s - b.start_s).collect();
    assert!(times.iter().all(|&t| t >= alone - 1e-9), "{times:?}");
    let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
    assert!((fastest - alone).abs() < 1e-9, "{fastest} vs {alone}");
}
