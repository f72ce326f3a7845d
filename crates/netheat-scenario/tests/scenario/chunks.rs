//! The `chunk-store` app under `[storage]`: FIFO disk queues timed by
//! hand, reads resolved against the store, CCP on new chunks only, the
//! rebalancer, and the refusals.

use netheat_scenario::ScenarioResult;

use super::{err, run};

/// Two racks of two hosts on 10 Gbit/s: rack 0 holds one HDD per host
/// (10 ms per access, 100 MB/s), rack 1 the clients. One 1 MB chunk
/// stored, one replica, and 20 reads of it at 200 per second.
const ONE_DISK: &str = r#"
[scenario]
seed = 5
[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "10Gbps"
tor-uplink = "40Gbps"
[[rack-group]]
racks = [0]
kind = "disk"
hosts = { storage = [{ kind = "hdd", count = 1, capacity = "4TB", read = "100MB/s", write = "100MB/s", access-time = "10ms" }] }
[workload]
duration = "1s"
[[workload.app]]
kind = "chunk-store"
rate = 200.0
tasks = 20
read-share = 1.0
sizes = { dist = "constant", size = "1MB" }
replicas = 1
stored = 1
[storage]
policy = "uniform"
"#;

fn stat(r: &ScenarioResult, k: &str) -> f64 {
    *r.stats.get(k).unwrap_or_else(|| panic!("no stat {k}: {:?}", r.stats.keys()))
}

#[test]
fn reads_queue_fifo_at_the_disk_then_cross_the_network() {
    let r = run(ONE_DISK).unwrap();
    let mut reads: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read").collect();
    assert_eq!(reads.len(), 20);
    reads.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    // Each read waits for the one before it at the disk, then takes
    // 10 ms + 1 MB / 100 MB/s = 20 ms; then 1 MB at 10 Gbit/s = 0.8 ms
    // alone on the network (reads leave the disk at least 20 ms apart).
    let mut free = 0.0f64;
    for t in &reads {
        let done = free.max(t.start_s) + 0.020;
        assert!((t.io_s - (done - t.start_s)).abs() < 1e-9, "{} vs {}", t.io_s, done - t.start_s);
        assert!((t.network_s - 0.0008).abs() < 1e-9, "{}", t.network_s);
        assert!((t.finish_s - t.start_s - t.io_s - t.network_s).abs() < 1e-9);
        assert_eq!(t.bytes, 1e6);
        free = done;
    }
    // At 200/s against 50/s of service the queue grows: the last read
    // waits for all 19 before it.
    assert!(reads[19].io_s > 0.2, "{}", reads[19].io_s);
    assert_eq!(stat(&r, "chunk_reads"), 20.0);
    // The one storing rack is its own guideline (Medium): the reads took
    // 20 x 1 MB out over its 40 Gbit/s uplink from 0 to the last read.
    let want = 8.0 * 20e6 / (40e9 * reads[19].start_s);
    assert!((stat(&r, "read_uplink_util_medium") - want).abs() < 1e-12 * want);
    assert!(!r.stats.contains_key("read_uplink_util_low"));
    assert_eq!(stat(&r, "chunk_reads_of_written_share"), 0.0);
    assert_eq!(stat(&r, "io_steps"), 20.0);
}

#[test]
fn a_write_ends_with_its_last_replicas_disk_write() {
    // Writes only, 3 replicas over 3 racks, written by the client to each
    // replica directly; disks of 10 ms + 100 MB/s; links far faster.
    let text = ONE_DISK
        .replace("racks = 2\n", "racks = 4\n")
        .replace("racks = [0]", "racks = [0, 1, 2]")
        .replace("read-share = 1.0", "read-share = 0.0")
        .replace("replicas = 1\nstored = 1", "replicas = 3\nstored = 0")
        .replace("rate = 200.0", "rate = 10.0");
    let r = run(&text).unwrap();
    let writes: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-write").collect();
    assert!(writes.len() >= 5, "{}", writes.len());
    assert_eq!(r.blocks.len(), writes.len());
    for t in &writes {
        let b = r.blocks.iter().find(|b| b.task_id == t.task_id).unwrap();
        assert_eq!(b.racks, 3);
        // Every flow of the write leaves the client (rack 3: hosts 6, 7).
        let fl: Vec<_> = r.flows.iter().filter(|f| f.task_id == t.task_id as i64).collect();
        assert_eq!(fl.len(), 3);
        assert!(fl.iter().all(|f| f.src == b.writer && f.src >= 6), "{fl:?}");
        // Critical path: one hop (1 MB at 10 Gbit/s, 0.8 ms, the three in
        // parallel on separate links but one client NIC: 2.4 ms) then its
        // disk write, 20 ms when the disk is free.
        assert!(t.io_s >= 0.020 - 1e-9, "{}", t.io_s);
        assert!((t.finish_s - t.start_s - t.io_s - t.network_s).abs() < 1e-9);
        assert!((b.finish_s - t.finish_s).abs() < 1e-12, "the block ends with its last disk write");
    }
}

/// Six Disk racks of four hosts whose uplinks spread 2x (10 Gbit/s x
/// (2/3 + (2/3) i / 5)), two client racks; 300 chunks stored before 1,500
/// operations.
fn spread(storage: &str, extra_app: &str) -> String {
    let mut groups = String::new();
    for i in 0..6 {
        let bps = 10e9 * (2.0 / 3.0 + (2.0 / 3.0) * i as f64 / 5.0);
        groups.push_str(&format!("[[rack-group]]\nracks = [{i}]\ntor-uplink = \"{bps:.0}bps\"\n"));
    }
    format!(
        r#"
[scenario]
seed = 2
[topology]
kind = "two-tier"
racks = 8
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "40Gbps"
[[rack-group]]
racks = "0..6"
kind = "disk"
hosts = {{ storage = [{{ kind = "ssd", count = 1, capacity = "1TB", read = "1000000GB/s", write = "1000000GB/s", access-time = "0s" }}] }}
{groups}
[workload]
duration = "10s"
[[workload.app]]
kind = "chunk-store"
rate = 2000.0
tasks = 1500
stored = 300
fault-tolerance = 2
{extra_app}
[storage]
{storage}
"#
    )
}

#[test]
fn ccp_places_new_chunks_by_class_and_leaves_the_stored_ones() {
    // Uplink factors 0.667, 0.8, 0.933, 1.067, 1.2, 1.333; the guideline is
    // the datacenter model's median (element 3 of 6, sorted): 1.067. High
    // at >= 1.28: rack 5; Low below 0.853: racks 0 and 1. Three replicas
    // in three racks, High before Medium: never a Low rack.
    let racks_of = |r: &ScenarioResult| -> Vec<u32> {
        r.blocks
            .iter()
            .flat_map(|b| b.replicas.split(';').map(|h| h.parse::<u32>().unwrap() / 4).collect::<Vec<_>>())
            .collect()
    };
    let ccp = run(&spread("policy = \"ccp\"\ninitial-policy = \"uniform\"", "")).unwrap();
    let on = racks_of(&ccp);
    assert!(!on.is_empty());
    assert!(on.iter().all(|&k| (2..6).contains(&k)), "{on:?}");
    assert_eq!(on.iter().filter(|&&k| k == 5).count(), ccp.blocks.len(), "one replica in the High rack each");
    let uni = run(&spread("policy = \"uniform\"", "")).unwrap();
    assert!(racks_of(&uni).iter().any(|&k| k < 2));
    // The chunks stored before the run are uniform's in both: reads of
    // them still come out of the Low racks under CCP.
    let from_low = |r: &ScenarioResult| {
        let reads: Vec<i64> = r.tasks.iter().filter(|t| t.kind == "chunk-read").map(|t| t.task_id as i64).collect();
        r.flows.iter().filter(|f| reads.contains(&f.task_id) && f.src / 4 < 2).count()
    };
    assert!(from_low(&ccp) > 0);
    assert!(ccp.stats["chunk_reads_of_written_share"] > 0.0);
}

#[test]
fn reads_of_stored_chunks_keep_their_network_time_whatever_places_new_ones() {
    // Hotspot paper section 5.2: CCP places new chunks only. When reads
    // pick among the chunks stored before the run (uniform's in both
    // runs) and the disks cost nothing, a read takes the same replica over
    // the same links under both policies, and writes, sent from the
    // clients into storage racks, share none of them.
    let a = run(&spread("policy = \"uniform\"\ninitial-policy = \"uniform\"", "read-from = \"stored\"")).unwrap();
    let b = run(&spread("policy = \"ccp\"\ninitial-policy = \"uniform\"", "read-from = \"stored\"")).unwrap();
    assert_eq!(b.stats["chunk_reads_of_written_share"], 0.0);
    let reads = |r: &ScenarioResult| -> Vec<(u64, f64)> {
        r.tasks.iter().filter(|t| t.kind == "chunk-read").map(|t| (t.task_id, t.network_s)).collect()
    };
    let (ra, rb) = (reads(&a), reads(&b));
    assert_eq!(ra.len(), rb.len());
    assert!(ra.len() > 900);
    for ((ia, na), (ib, nb)) in ra.iter().zip(&rb) {
        assert_eq!(ia, ib);
        assert!((na - nb).abs() < 1e-6, "task {ia}: {na} vs {nb}");
    }
    // Had the store been placed by CCP too, the reads would differ.
    let c = run(&spread("policy = \"ccp\"", "read-from = \"stored\"")).unwrap();
    assert!(reads(&c).iter().zip(&ra).any(|((_, x), (_, y))| (x - y).abs() > 1e-6));
}

#[test]
fn the_rebalancer_keeps_storage_within_the_threshold_with_flows() {
    // 1 GB per host: 300 + 450 chunks x 0.55 MB x 3 replicas on 24 hosts
    // is about 5% used on average, and CCP piles new chunks on 3 racks.
    let small = |storage: &str| {
        spread(storage, "sizes = { dist = \"uniform\", min = \"1MB\", max = \"2MB\" }")
            .replace("capacity = \"1TB\"", "capacity = \"1GB\"")
    };
    let off = run(&small("policy = \"ccp\"")).unwrap();
    assert!(off.stats["storage_imbalance_pct"] > 10.0, "{:?}", off.stats);
    let on = run(&small("policy = \"ccp\"\nrebalance-interval = \"0.1s\"\nrebalance-target = 0.08")).unwrap();
    assert!(on.stats["storage_imbalance_max_pct"] <= 10.0 + 1e-9, "{:?}", on.stats);
    assert!(on.stats["storage_imbalance_pct"] <= 10.0 + 1e-9, "{:?}", on.stats);
    let moves = on.stats["rebalance_moves"];
    assert!(moves > 0.0 && on.stats["rebalanced_bytes_pct"] > 0.0, "{:?}", on.stats);
    // Each move is a flow of the run.
    let flows = on.flows.iter().filter(|f| f.flow_id >= 1 << 59 && f.flow_id < 1 << 60).count();
    assert_eq!(flows as f64, moves);
}

#[test]
fn bad_chunk_store_input_is_refused_at_its_key() {
    let e = err(&ONE_DISK.replace("[storage]\npolicy = \"uniform\"\n", ""));
    assert!(e.contains("workload.app") && e.contains("[storage]"), "{e}");
    let e = err(&ONE_DISK.replace("stored = 1", "stored = 0"));
    assert!(e.contains("stored"), "{e}");
    let e = err(&ONE_DISK.replace("read-share = 1.0", "read-share = 1.5"));
    assert!(e.contains("read-share"), "{e}");
    let e = err(&ONE_DISK.replace("stored = 1", "stored = 1\nread-from = \"new\""));
    assert!(e.contains("read-from") && e.contains("known: all, stored"), "{e}");
    let e = err(&ONE_DISK.replace("stored = 1", "stored = 1\nwrite = \"chain\""));
    assert!(e.contains("write") && e.contains("direct, pipeline"), "{e}");
    let e = err(&format!("{ONE_DISK}rebalance-target = 0.05\n"));
    assert!(e.contains("storage.rebalance-target") && e.contains("rebalance-interval"), "{e}");
    let e = err(&format!("{ONE_DISK}rebalance-interval = \"1s\"\nrebalance-target = 0.5\n"));
    assert!(e.contains("storage.rebalance-target"), "{e}");
    // `initial-policy` with nothing stored before the run (file writes only).
    let files = ONE_DISK.replace(
        "kind = \"chunk-store\"\nrate = 200.0\ntasks = 20\nread-share = 1.0\nsizes = { dist = \"constant\", size = \"1MB\" }\nreplicas = 1\nstored = 1",
        "kind = \"file-write\"\nrate = 20.0\nfile-size = \"1MB\"\nreplicas = 1\nfault-tolerance = 0",
    );
    assert!(files.contains("file-write"));
    let e = err(&format!("{files}initial-policy = \"uniform\"\n"));
    assert!(e.contains("storage.initial-policy") && e.contains("chunk-store"), "{e}");
    let e = err(&ONE_DISK.replace("seed = 5", "seed = 5\nengine = \"packet\""));
    assert!(e.contains("storage") && e.contains("flow"), "{e}");
    let e = err(&ONE_DISK.replace(
        "sizes = { dist = \"constant\", size = \"1MB\" }",
        "sizes = { dist = \"uniform\", min = \"2MB\", max = \"1MB\" }",
    ));
    assert!(e.contains("sizes.max"), "{e}");
}

/// `ONE_DISK` with racks 0-2 of HDD hosts and rack 3 of clients, and the
/// chunks stored as RS(2, 1) stripes.
fn erasure_coded() -> String {
    ONE_DISK
        .replace("racks = 2\n", "racks = 4\n")
        .replace("racks = [0]", "racks = [0, 1, 2]")
        .replace("replicas = 1\n", "erasure = { data = 2, parity = 1 }\n")
}

#[test]
fn an_erasure_coded_read_fetches_its_data_chunks_in_parallel() {
    let r = run(&erasure_coded()).unwrap();
    let mut reads: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read").collect();
    assert_eq!(reads.len(), 20);
    reads.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    // The 1 MB chunk is two 0.5 MB data chunks on two hosts of two racks,
    // read at once: each 10 ms + 0.5 MB / 100 MB/s = 15 ms after the read
    // before it at that disk (both disks see the same reads); then both
    // 0.5 MB into the client's 10 Gbit/s link together, 0.8 ms.
    let mut free = 0.0f64;
    for t in &reads {
        let done = free.max(t.start_s) + 0.015;
        assert!((t.io_s - (done - t.start_s)).abs() < 1e-9, "{} vs {}", t.io_s, done - t.start_s);
        assert!((t.network_s - 0.0008).abs() < 1e-9, "{}", t.network_s);
        assert_eq!(t.bytes, 1e6);
        free = done;
        let fl: Vec<_> = r.flows.iter().filter(|f| f.task_id == t.task_id as i64).collect();
        assert_eq!(fl.len(), 2);
        // Both to the client, in rack 3 (hosts 6, 7).
        assert!(fl.iter().all(|f| f.bytes == 5e5 && f.dst == fl[0].dst && f.dst >= 6), "{fl:?}");
        // Hosts 0-5 are the storing racks 0-2, two hosts each.
        let (a, b) = (fl[0].src, fl[1].src);
        assert!(a < 6 && b < 6 && a / 2 != b / 2, "data chunks on {a} and {b}");
    }
    assert_eq!(stat(&r, "chunk_reads"), 20.0);
    assert_eq!(stat(&r, "io_steps"), 40.0);
}

#[test]
fn an_erasure_coded_write_sends_each_chunk_of_its_stripe_to_its_own_rack() {
    let text = erasure_coded()
        .replace("read-share = 1.0", "read-share = 0.0")
        .replace("stored = 1", "stored = 0")
        .replace("rate = 200.0", "rate = 10.0");
    let r = run(&text).unwrap();
    let writes: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-write").collect();
    assert!(writes.len() >= 5, "{}", writes.len());
    for t in &writes {
        let b = r.blocks.iter().find(|b| b.task_id == t.task_id).unwrap();
        // The object's bytes, in three chunks on three racks.
        assert_eq!((b.bytes, b.racks), (1e6, 3));
        let fl: Vec<_> = r.flows.iter().filter(|f| f.task_id == t.task_id as i64).collect();
        assert_eq!(fl.len(), 3);
        assert!(fl.iter().all(|f| f.src == b.writer && f.bytes == 5e5), "{fl:?}");
        // Each chunk's disk write: 10 ms + 0.5 MB / 100 MB/s when free.
        assert!(t.io_s >= 0.015 - 1e-9, "{}", t.io_s);
    }
}

#[test]
fn bad_erasure_codes_are_refused_at_their_key() {
    let ec = erasure_coded();
    let e = err(&ec.replace("erasure = {", "replicas = 2\nerasure = {"));
    assert!(e.contains(".replicas") && e.contains("erasure"), "{e}");
    let e = err(&ec.replace("stored = 1", "stored = 1\nwrite = \"pipeline\""));
    assert!(e.contains(".write") && e.contains("directly"), "{e}");
    let e = err(&ec.replace("data = 2", "data = 0"));
    assert!(e.contains("erasure.data"), "{e}");
    // A stripe of 5 chunks needs 5 racks; the datacenter has 4.
    let e = err(&ec.replace("parity = 1", "parity = 3"));
    assert!(e.contains(".erasure") && e.contains("5 racks"), "{e}");
    let e = err(&ec.replace("erasure = { data = 2, parity = 1 }", "erasure = { data = 2, parity = 1, local = 1 }"));
    assert!(e.contains("local"), "{e}");
    // Two chunk stores whose reads differ (2 data chunks against 1 replica).
    let two =
        format!("{ec}\n[[workload.app]]\nkind = \"chunk-store\"\ntasks = 5\nrate = 10.0\nreplicas = 1\nstored = 1\n");
    let e = err(&two);
    assert!(e.contains("workload.app[1].erasure") && e.contains("read alike"), "{e}");
}

#[test]
fn a_read_of_a_stripe_with_a_data_chunk_cut_off_is_degraded() {
    // Without failures: the stripe's data chunks are on hosts a and b.
    let r = run(&erasure_coded()).unwrap();
    let first = r.tasks.iter().find(|t| t.kind == "chunk-read").unwrap();
    let mut data: Vec<u32> = r.flows.iter().filter(|f| f.task_id == first.task_id as i64).map(|f| f.src).collect();
    data.sort_unstable();
    let (a, b) = (data[0], data[1]);
    assert_eq!(r.stats.get("chunk_reads_degraded"), None, "no events, no count");
    // a's ToR fails at 50 ms: every read starting from then fetches b's
    // data chunk and the parity chunk (the stripe's third rack) instead.
    let failed =
        format!("{}\n[[events]]\nat = \"50ms\"\nnodes = [\"tor{}\"]\naction = \"fail\"\n", erasure_coded(), a / 2);
    let r = run(&failed).unwrap();
    let after: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read" && t.start_s >= 0.05).collect();
    assert!(after.len() >= 5, "{}", after.len());
    for t in &after {
        let src: Vec<u32> = r.flows.iter().filter(|f| f.task_id == t.task_id as i64).map(|f| f.src).collect();
        assert_eq!(src.len(), 2);
        assert!(src.contains(&b) && src.iter().all(|&h| h / 2 != a / 2 && h < 6), "{src:?} (a = {a}, b = {b})");
        assert!(t.finish_s.is_finite(), "a degraded read finishes");
    }
    assert_eq!(stat(&r, "chunk_reads_degraded"), after.len() as f64);
    assert_eq!(stat(&r, "chunk_reads_unavailable"), 0.0);
}

#[test]
fn a_read_of_a_chunk_with_every_replica_cut_off_never_finishes() {
    // One replica; its host's ToR fails at 50 ms (rack 0 is the only
    // storing rack, so that ToR is tor0).
    let text = format!("{ONE_DISK}\n[[events]]\nat = \"50ms\"\nnodes = [\"tor0\"]\naction = \"fail\"\n");
    let r = run(&text).unwrap();
    let after: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read" && t.start_s >= 0.05).collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|t| t.finish_s.is_nan()), "unavailable reads are stranded");
    assert_eq!(stat(&r, "chunk_reads_unavailable"), after.len() as f64);
    assert_eq!(stat(&r, "chunk_reads_degraded"), 0.0);
}

#[test]
fn no_chunk_is_placed_on_a_host_cut_off_by_a_failure() {
    // Writes of one replica to racks 0-2 (hosts 0-5), 40 at 20 a second;
    // tor0 fails at 0.5 s. Uniform placement would put about a third of
    // the later ones on rack 0 (none of 30: (2/3)^30, 5e-6).
    let text = ONE_DISK
        .replace("racks = 2\n", "racks = 4\n")
        .replace("racks = [0]", "racks = [0, 1, 2]")
        .replace("read-share = 1.0", "read-share = 0.0")
        .replace("stored = 1", "stored = 0\nfault-tolerance = 0")
        .replace("rate = 200.0", "rate = 20.0")
        .replace("tasks = 20", "tasks = 40");
    let r = run(&format!("{text}\n[[events]]\nat = \"0.5s\"\nnodes = [\"tor0\"]\naction = \"fail\"\n")).unwrap();
    let host = |b: &netheat_scenario::BlockOut| b.replicas.parse::<u32>().unwrap();
    let (before, after): (Vec<_>, Vec<_>) = r.blocks.iter().partition(|b| b.start_s < 0.5);
    assert!(!after.is_empty() && before.iter().any(|b| host(b) < 2), "rack 0 took chunks before");
    assert!(after.iter().all(|b| (2..6).contains(&host(b))), "{:?}", after.iter().map(|b| host(b)).collect::<Vec<_>>());
}

/// Rack 0's HDD is slow (200 ms a positioning), rack 1's (and 2's) fast
/// (10 ms), both 100 MB/s; the last rack holds the client. Reads of 1 MB
/// chunks, about 5 s apart.
fn slow_and_fast(racks: usize, redundancy: &str, hedge: Option<&str>) -> String {
    let disk = |access: &str| {
        format!(
            "hosts = {{ storage = [{{ kind = \"hdd\", count = 1, capacity = \"4TB\", read = \"100MB/s\", \
             write = \"100MB/s\", access-time = \"{access}\" }}] }}"
        )
    };
    let fast: Vec<String> = (1..racks - 1).map(|r| r.to_string()).collect();
    let hedge = hedge.map_or(String::new(), |h| format!("hedge-reads-after = \"{h}\"\n"));
    format!(
        r#"
[scenario]
seed = 3
[topology]
kind = "two-tier"
racks = {racks}
hosts-per-rack = 1
host-link = "10Gbps"
tor-uplink = "40Gbps"
[[rack-group]]
racks = [0]
kind = "disk"
{slow}
[[rack-group]]
racks = [{fast}]
kind = "disk"
{fastd}
[workload]
duration = "100s"
[[workload.app]]
kind = "chunk-store"
rate = 0.2
tasks = 8
read-share = 1.0
sizes = {{ dist = "constant", size = "1MB" }}
stored = 3
{redundancy}
[storage]
policy = "uniform"
{hedge}"#,
        slow = disk("200ms"),
        fast = fast.join(", "),
        fastd = disk("10ms"),
    )
}

/// The reads of a run in start order, each with its flows' sources.
fn reads_and_sources(r: &ScenarioResult) -> Vec<(&netheat_scenario::TaskOut, Vec<u32>)> {
    let mut reads: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read").collect();
    reads.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    // (The hand timings below need every disk idle when a read starts.)
    assert!(reads.windows(2).all(|w| w[1].start_s - w[0].start_s > 0.3), "reads closer than 0.3 s: pick a seed");
    reads
        .into_iter()
        .map(|t| (t, r.flows.iter().filter(|f| f.task_id == t.task_id as i64).map(|f| f.src).collect()))
        .collect()
}

#[test]
fn a_read_of_a_slow_replica_hedges_to_the_other_one_after_the_threshold() {
    // Two replicas, on host 0 (slow) and host 1 (fast); each read picks one.
    let plain = run(&slow_and_fast(3, "replicas = 2", None)).unwrap();
    let picks: Vec<u32> = reads_and_sources(&plain).iter().map(|(_, s)| s[0]).collect();
    assert!(picks.contains(&0) && picks.contains(&1), "{picks:?}");
    let hedged = run(&slow_and_fast(3, "replicas = 2", Some("50ms"))).unwrap();
    let slow = picks.iter().filter(|&&h| h == 0).count() as f64;
    for (((t, src), (p, _)), &pick) in reads_and_sources(&hedged).iter().zip(reads_and_sources(&plain)).zip(&picks) {
        let d = t.finish_s - t.start_s;
        if pick == 1 {
            // 10 ms + 1 MB / 100 MB/s at the fast disk, 0.8 ms on the wire,
            // well before 50 ms: no hedge, as without one.
            assert!((d - 0.0208).abs() < 1e-9 && (p.finish_s - p.start_s - 0.0208).abs() < 1e-9, "{d}");
            assert_eq!(src, &vec![1]);
        } else {
            // 200 + 10 ms at the slow disk without a hedge; with one, at
            // 50 ms the fast replica: 50 + 20 + 0.8 = 70.8 ms, the slow
            // disk's read abandoned before its flow starts.
            assert!((p.finish_s - p.start_s - 0.2108).abs() < 1e-9, "{}", p.finish_s - p.start_s);
            assert!((d - 0.0708).abs() < 1e-9, "{d}");
            assert_eq!(src, &vec![1], "only the hedge's flow ran");
            // The 50 ms wait is on neither side of the critical path.
            assert!((t.io_s - 0.020).abs() < 1e-9 && (t.network_s - 0.0008).abs() < 1e-9, "{t:?}");
            assert_eq!(t.flows, 2);
        }
    }
    assert_eq!(stat(&hedged, "chunk_reads_hedged"), slow);
    assert_eq!(stat(&hedged, "chunk_reads_hedge_used"), slow);
    assert_eq!(stat(&hedged, "hedge_read_bytes"), 1e6 * slow);
    // The slow disk's reads were abandoned before their flows started.
    assert_eq!(stat(&hedged, "hedge_cancelled_flows"), 0.0);
    assert_eq!(plain.stats.get("chunk_reads_hedged"), None, "no hedging, no count");
}

#[test]
fn an_erasure_coded_read_missing_a_slow_data_chunk_reads_the_parity_chunk() {
    // RS(2, 1) stripes on host 0 (slow) and hosts 1, 2 (fast): a stripe
    // whose data chunks are both fast reads in 15 ms + 0.8 ms (two 0.5 MB
    // flows at once); one with the slow host among them waits 205 ms for
    // it (then 0.4 ms alone) without a hedge; with one at 50 ms, it reads
    // the fast parity chunk: 50 + 15 + 0.4 = 65.4 ms, a degraded read.
    let ec = "erasure = { data = 2, parity = 1 }";
    let plain = run(&slow_and_fast(4, ec, None)).unwrap();
    let hedged = run(&slow_and_fast(4, ec, Some("50ms"))).unwrap();
    let mut slow = 0.0;
    for ((t, src), (p, psrc)) in reads_and_sources(&hedged).iter().zip(reads_and_sources(&plain)) {
        let (d, pd) = (t.finish_s - t.start_s, p.finish_s - p.start_s);
        if psrc.contains(&0) {
            slow += 1.0;
            assert!((pd - 0.2054).abs() < 1e-9, "{pd}");
            assert!((d - 0.0654).abs() < 1e-9, "{d}");
            // The fast data chunk and the parity chunk: hosts 1 and 2.
            let mut s = src.clone();
            s.sort_unstable();
            assert_eq!(s, vec![1, 2]);
        } else {
            assert!((pd - 0.0158).abs() < 1e-9 && (d - 0.0158).abs() < 1e-9, "{pd} {d}");
        }
    }
    assert!(slow > 0.0, "no read of a stripe with a slow data chunk: pick a seed");
    assert_eq!(stat(&hedged, "chunk_reads_hedged"), slow);
    assert_eq!(stat(&hedged, "chunk_reads_hedge_used"), slow);
    assert_eq!(stat(&hedged, "hedge_read_bytes"), 5e5 * slow);
}

#[test]
fn a_hedge_threshold_is_refused_when_it_is_not_a_positive_duration_or_has_no_reads() {
    let e = err(&slow_and_fast(3, "replicas = 2", Some("0s")));
    assert!(e.contains("storage.hedge-reads-after") && e.contains("> 0"), "{e}");
    let e = err(&slow_and_fast(3, "replicas = 2", Some("fast")));
    assert!(e.contains("hedge-reads-after"), "{e}");
    let writes = slow_and_fast(3, "replicas = 2", Some("50ms")).replace("read-share = 1.0", "read-share = 0.0");
    let e = err(&writes);
    assert!(e.contains("storage.hedge-reads-after") && e.contains("no chunk reads"), "{e}");
}

#[test]
fn reads_hedge_beside_a_trace_whose_task_ids_are_large() {
    // A trace flow of task 2^58 pushes the reads' task ids above 2^58; the
    // hedge timers are keyed by the reads' indices, so they still fire: a
    // read of the slow replica takes 50 + 20 + 0.8 = 70.8 ms.
    let dir = super::files_dir();
    let csv = dir.join(format!("large-task-id-{:?}.csv", std::thread::current().id()));
    std::fs::write(&csv, "src,dst,bytes,start_s,task_id\n1,0,1000,0,288230376151711744\n").unwrap();
    let text = slow_and_fast(3, "replicas = 2", Some("50ms")).replace(
        "[[workload.app]]",
        &format!("[[workload.traffic]]\nkind = \"replay\"\nfile = \"{}\"\n[[workload.app]]", csv.display()),
    );
    let r = run(&text).unwrap();
    let reads: Vec<_> = r.tasks.iter().filter(|t| t.kind == "chunk-read").collect();
    assert_eq!(reads.len(), 8);
    assert!(reads.iter().all(|t| t.task_id > 1 << 58));
    let slow = reads.iter().filter(|t| (t.finish_s - t.start_s - 0.0708).abs() < 1e-6).count() as f64;
    let fast = reads.iter().filter(|t| (t.finish_s - t.start_s - 0.0208).abs() < 1e-6).count() as f64;
    assert!(slow > 0.0 && slow + fast == 8.0, "slow {slow}, fast {fast}");
    assert_eq!(stat(&r, "chunk_reads_hedged"), slow);
}
