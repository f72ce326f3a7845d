//! Storage decisions at intervals (`storage.decision-interval`, Sinbad's
//! `q` and OPT' order, SIGCOMM'13 sections 5.2 and 7.1), checked against
//! hand-derived times on a datacenter where nothing but the disks binds.

use netheat_data::DataDir;
use netheat_scenario::{Decision, Scenario, ScenarioResult};

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
        // ... and written at the disks' pace from there: three hops
        // streaming at 1 Gbit/s, nothing else binding.
        assert!((b.finish_s - b.start_s - 8.0 * MIB64 / 1e9).abs() < 1e-9, "{b:?}");
    }
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
        let t = 8.0 * b.bytes / 1e9;
        assert!((b.finish_s - b.start_s - t).abs() < 1e-9, "{b:?}");
    }
}

#[test]
fn a_negative_interval_is_refused() {
    let e = Scenario::from_text(
        &scenario("policy = \"sinbad\"\ndecision-interval = \"-1s\""),
        "s.toml",
        &std::env::temp_dir(),
    )
    .run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
    .unwrap_err()
    .to_string();
    assert!(e.contains("decision-interval"), "{e}");
}
