//! Scenario tests: hand-computed completion times through each kind of
//! decision, the refusals of combinations that mean nothing, and errors
//! located at `file:line:col`.

use std::path::Path;

use netheat_data::DataDir;
use netheat_scenario::{Scenario, ScenarioError, ScenarioResult};

mod background;
mod chunks;
mod cluster;
mod record;
mod registries;
mod spc;
mod storage;
mod subways;
mod testbed;

fn run(text: &str) -> Result<ScenarioResult, ScenarioError> {
    let dir = std::env::temp_dir();
    Scenario::from_text(text, "s.toml", &dir).run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
}

fn run_with(text: &str, overrides: &[(&str, &str)]) -> Result<ScenarioResult, ScenarioError> {
    let mut s = Scenario::from_text(text, "s.toml", &std::env::temp_dir());
    for (k, v) in overrides {
        s = s.with_override(k, v)?;
    }
    s.run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
}

fn err(text: &str) -> String {
    match run(text) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// The directory the tests write their CSV files into: Cargo's scratch
/// directory for integration tests (under target/, reused by the next run).
fn files_dir() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scenario-files");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two hosts in two racks, 8 Gbit/s everywhere; flows from a CSV written
/// next to the test.
fn two_racks(flows_csv: &str, policies: &str) -> String {
    let dir = files_dir();
    let name = format!("flows-{:x}.csv", fxhash(flows_csv));
    // Tests run in parallel and share names: write whole files only.
    let tmp = dir.join(format!("{name}.{:?}", std::thread::current().id()));
    std::fs::write(&tmp, flows_csv).unwrap();
    std::fs::rename(&tmp, dir.join(&name)).unwrap();
    format!(
        r#"
[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "8Gbps"
tor-uplink = "8Gbps"

[workload]
[[workload.traffic]]
kind = "replay"
file = "{}"

{policies}
"#,
        dir.join(name).display()
    )
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

const TWO_FLOWS: &str = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,0\n1,3,3000000000,0,1\n";

#[test]
fn fair_share_by_hand() {
    // Both flows cross the 8 Gbit/s uplink of rack 0: 4 Gbit/s each until
    // the 1 GB flow ends at 8e9/4e9 = 2 s, then the 3 GB flow runs alone:
    // 2 GB more at 8 Gbit/s = 2 s, ending at 4 s.
    let r = run(&two_racks(TWO_FLOWS, "")).unwrap();
    assert_eq!(r.flows.len(), 2);
    assert!((r.flows[0].fct_s - 2.0).abs() < 1e-9, "{:?}", r.flows[0]);
    assert!((r.flows[1].fct_s - 4.0).abs() < 1e-9, "{:?}", r.flows[1]);
    // The run ends with its last event, not at the end of a slice of it.
    assert!((r.stats["end_s"] - 4.0).abs() < 1e-9, "{:?}", r.stats);
    assert!((r.stats["windows"] - 4.0).abs() < 1e-9, "{:?}", r.stats);
    // Two trace tasks of one flow each.
    assert_eq!(r.tasks.len(), 2);
    assert_eq!(r.tasks[0].kind, "trace");
}

#[test]
fn the_run_ends_at_its_last_event() {
    // A 1 KB flow at 0 (a replayed trace starts at 0) and a 1 GB flow at
    // 8 Gbit/s from 0.3 s, ending at 1.3 s, inside a slice: the run ends
    // there and the links table has two 1 s windows, not three.
    let r = run(&two_racks("src,dst,bytes,start_s\n1,3,1000,0\n0,2,1000000000,0.3\n", "")).unwrap();
    assert!((r.stats["end_s"] - 1.3).abs() < 1e-9, "{:?}", r.stats);
    assert_eq!(r.stats["windows"], 2.0);
}

#[test]
fn fifo_serves_first_task_first() {
    // FIFO with both tasks arriving at 0: task 0 (arrival order of equal
    // starts is the trace order) takes the whole uplink: 1 GB in 1 s; then
    // the 3 GB flow alone: it sent nothing before, 3 s more, ending at 4 s.
    let r = run(&two_racks(TWO_FLOWS, "[scheduling]\npolicy = \"fifo\"")).unwrap();
    assert!((r.flows[0].fct_s - 1.0).abs() < 1e-9, "{:?}", r.flows);
    assert!((r.flows[1].fct_s - 4.0).abs() < 1e-9, "{:?}", r.flows);
    // Ids of the trace are kept.
    assert_eq!(r.flows[0].flow_id, 0);
    assert_eq!(r.flows[1].task_id, 1);
}

#[test]
fn sff_and_stf_by_hand() {
    // A 3 GB flow first, then a 1 GB one: smallest first serves the 1 GB
    // flow alone (1 s) whichever comes first in the trace.
    let flows = "src,dst,bytes,start_s,task_id\n1,3,3000000000,0,0\n0,2,1000000000,0,1\n";
    for p in ["sff", "stf"] {
        let r = run(&two_racks(flows, &format!("[scheduling]\npolicy = \"{p}\""))).unwrap();
        assert!((r.flows[1].fct_s - 1.0).abs() < 1e-9, "{p}: {:?}", r.flows);
        assert!((r.flows[0].fct_s - 4.0).abs() < 1e-9, "{p}: {:?}", r.flows);
    }
}

#[test]
fn fifo_lm_lets_a_light_task_share_with_a_heavy_one() {
    // Both tasks send to host 2 (FIFO-LM orders tasks per receiver, Baraat
    // §3.3), over its 8 Gbit/s (1 GB/s) link. Task 0: 8 GB; task 1 arrives
    // at 0.5 s with 1 GB. FIFO: task 1 waits until task 0 ends at 8 s and
    // ends at 9 s. FIFO-LM with a 1 GB threshold: task 0 turns heavy at
    // 1 s (within one 1 ms poll) and task 1 then shares its class: 0.5 GB/s
    // each, so task 1's 1 GB ends at 3 s; task 0 still ends at 9 s (9 GB at
    // 1 GB/s in all).
    let flows = "src,dst,bytes,start_s,task_id\n0,2,8000000000,0,0\n1,2,1000000000,0.5,1\n";
    let fifo = run(&two_racks(flows, "[scheduling]\npolicy = \"fifo\"")).unwrap();
    assert!((fifo.flows[1].finish_s - 9.0).abs() < 1e-6, "{:?}", fifo.flows);
    let lm = run(&two_racks(
        flows,
        "[scheduling]\npolicy = \"fifo-lm\"\nheavy-threshold = \"1GB\"\npoll-interval = \"1ms\"",
    ))
    .unwrap();
    let f1 = lm.flows[1].finish_s;
    assert!((3.0..=3.0 + 2e-3).contains(&f1), "light task ends at {f1}: {:?}", lm.flows);
    assert!((lm.flows[0].finish_s - 9.0).abs() < 1e-6, "{:?}", lm.flows);
    assert!(lm.stats["class_changes"] >= 1.0);
}

#[test]
fn overrides_change_the_policy() {
    let base = two_racks(TWO_FLOWS, "");
    let r = run_with(&base, &[("scheduling.policy", "\"fifo\"")]).unwrap();
    assert!((r.flows[0].fct_s - 1.0).abs() < 1e-9);
    // Two uplinks of 4 Gbit/s each: the same totals at twice the time.
    let r = run_with(&base, &[("topology.tor-uplink", "\"4Gbps\"")]).unwrap();
    assert!((r.flows[1].fct_s - 8.0).abs() < 1e-9, "{:?}", r.flows);
}

#[test]
fn adaptive_routing_redraws_paths_within_bounds() {
    // Two racks, two aggregation switches: each ToR has two 4 Gbit/s
    // uplinks. Two 2 GB flows from rack 0 to rack 1 end at 4 s if they
    // never share an uplink and at 8 s if they do. `adaptive` re-binds a
    // server's flows among its ToRs (Subways §5.2: only ToR utilization
    // matters, core path diversity is handled separately); with one port
    // per host there is no other ToR, so each flow keeps the route drawn
    // at its start: the job ends at exactly 4 s or 8 s and nothing is
    // re-bound.
    let flows = "src,dst,bytes,start_s\n0,2,2000000000,0\n1,3,2000000000,0\n";
    let dir = files_dir();
    std::fs::write(dir.join("spread.csv"), flows).unwrap();
    let text = format!(
        r#"
[topology]
kind = "three-tier"
pods = 1
racks-per-pod = 2
aggs-per-pod = 2
hosts-per-rack = 2
host-link = "8Gbps"
tor-uplink = "8Gbps"
[workload]
[[workload.traffic]]
kind = "replay"
file = "{}"
[routing]
policy = "adaptive"
"#,
        dir.join("spread.csv").display()
    );
    let r = run(&text).unwrap();
    let end = r.flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
    assert!((end - 4.0).abs() < 1e-6 || (end - 8.0).abs() < 1e-6, "adaptive: last flow ends at {end}");
    assert_eq!(r.stats["rebinds"], 0.0, "{:?}", r.stats);
    // Explicit routes: no ECMP path index.
    assert!(r.flows.iter().all(|f| f.path_id == -1));
}

#[test]
fn combinations_that_mean_nothing_are_refused() {
    let base = two_racks(TWO_FLOWS, "[transport]\nkind = \"dctcp\"");
    let e = err(&base);
    assert!(e.contains("transport") && e.contains("scenario.engine"), "{e}");
    assert!(e.starts_with("s.toml:"), "{e}");
    let e = err(&two_racks(TWO_FLOWS, "[scenario]\nengine = \"packet\"\n[scheduling]\npolicy = \"fifo-lm\""));
    assert!(e.contains("scheduling.policy") && e.contains("engine"), "{e}");
    let e = err(&two_racks(TWO_FLOWS, "[storage]\npolicy = \"sinbad\""));
    assert!(e.contains("storage.policy") && e.contains("file-write"), "{e}");
}

#[test]
fn misspelt_keys_name_the_closest_and_the_line() {
    let text = two_racks(TWO_FLOWS, "[scheduling]\npolcy = \"fifo\"");
    let line = text.lines().position(|l| l.starts_with("polcy")).unwrap() + 1;
    let e = err(&text);
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    assert!(e.contains("did you mean `policy`"), "{e}");
    // A misspelt table.
    let e = err(&two_racks(TWO_FLOWS, "[routng]\npolicy = \"ecmp\""));
    assert!(e.contains("did you mean `routing`"), "{e}");
    // A wrong value of an enum names the valid ones.
    let e = err(&two_racks(TWO_FLOWS, "[routing]\npolicy = \"ecmpp\""));
    assert!(e.contains("ecmp") && e.contains("adaptive"), "{e}");
}

#[test]
fn errors_inside_the_datacenter_and_workload_point_into_the_scenario() {
    let text = two_racks(TWO_FLOWS, "").replace("racks = 2", "racks = 0");
    let line = text.lines().position(|l| l.starts_with("racks = 0")).unwrap() + 1;
    let e = err(&text);
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    let text = two_racks(TWO_FLOWS, "").replace("kind = \"replay\"", "kind = \"replay\"\nlaod = 0.5");
    let line = text.lines().position(|l| l.starts_with("laod")).unwrap() + 1;
    let e = err(&text);
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    assert!(e.contains("workload.traffic"), "{e}");
    // A datacenter table nested under [topology] is pointed at, with where
    // it goes.
    let text = two_racks(TWO_FLOWS, "").replace("[workload]", "[[topology.rack-group]]\nracks = [0]\n\n[workload]");
    let line = text.lines().position(|l| l.starts_with("[[topology.rack-group]]")).unwrap() + 1;
    let e = err(&text);
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    assert!(e.contains("topology.rack-group") && e.contains("`[[rack-group]]` at the top level"), "{e}");
}

#[test]
fn bad_overrides_are_reported_as_overrides() {
    let base = two_racks(TWO_FLOWS, "");
    let e = run_with(&base, &[("routing.polcy", "\"ecmp\"")]).unwrap_err().to_string();
    assert!(e.starts_with("<override>") && e.contains("routing.polcy") && e.contains("policy"), "{e}");
    let e = run_with(&base, &[("topology.racks", "\"many\"")]).unwrap_err().to_string();
    assert!(e.starts_with("<override>") && e.contains("topology.racks"), "{e}");
    let e = run_with(&base, &[("workload.traffic.3.load", "0.5")]).unwrap_err().to_string();
    assert!(e.contains("no entry 3"), "{e}");
}

#[test]
fn workload_naming_unknown_hosts_is_refused() {
    let e = err(&two_racks("src,dst,bytes,start_s\n0,99,1000,0\n", ""));
    assert!(e.contains("99"), "{e}");
}

#[test]
fn packet_engine_runs_the_same_flows() {
    // One 1 MB flow alone on 8 Gbit/s links: at least 1 ms of serialization,
    // and (slow start from 10 packets over a few microseconds of RTT) not
    // much more.
    let flows = "src,dst,bytes,start_s\n0,2,1000000,0\n";
    let r = run(&two_racks(flows, "[scenario]\nengine = \"packet\"\n[transport]\nkind = \"dctcp\"")).unwrap();
    assert_eq!(r.engine, "packet");
    let f = &r.flows[0];
    assert!(f.fct_s >= 1e-3 && f.fct_s < 3e-3, "{f:?}");
    assert!(!r.queues.is_empty());
}

#[test]
fn deterministic_for_a_seed() {
    let text = r#"
[topology]
file = "../../../../examples/topologies/two-tier-4x4.toml"
[workload]
duration = "0.2s"
[[workload.traffic]]
kind = "poisson"
load = 0.5
pattern = "inter-rack"
sizes = { dist = "web-search" }
[routing]
policy = "adaptive"
"#;
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenario");
    let a = Scenario::from_text(text, "s.toml", &base).run(&DataDir::explicit("/x"), &mut |_, _| true).unwrap();
    let b = Scenario::from_text(text, "s.toml", &base).run(&DataDir::explicit("/x"), &mut |_, _| true).unwrap();
    assert!(a.flows.len() > 50);
    assert_eq!(a.flows, b.flows);
}

/// Four disk racks behind one compute rack; a replayed background of
/// long flows from the compute rack fills the downlink of rack 1; files
/// of one 64 MiB block are written from random hosts.
/// With `precalculated`, the background is simulated alone first and the
/// writes get what it leaves (Sinbad's reports still see it).
fn storage_scenario(policy: &str, precalculated: bool) -> (ScenarioResult, f64) {
    let dir = files_dir();
    let bg: String = (0..4).map(|i| format!("{i},{},20000000000,0\n", 4 + i)).collect();
    std::fs::write(dir.join("bg.csv"), format!("src,dst,bytes,start_s\n{bg}")).unwrap();
    let text = format!(
        r#"
[topology]
kind = "two-tier"
racks = 5
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
[[rack-group]]
racks = "1..5"
kind = "disk"
hosts = {{ storage = [{{ kind = "hdd", count = 4, capacity = "4TB" }}] }}
[workload]
duration = "10s"
[[workload.traffic]]
kind = "replay"
file = "{}"
precalculated = {precalculated}
[[workload.app]]
kind = "file-write"
rate = 8.0
file-size = "64MiB"
block = "64MiB"
replicas = 3
[scenario]
duration = "20s"
[storage]
policy = "{policy}"
"#,
        dir.join("bg.csv").display()
    );
    // The slowest disk write rate of a storage host.
    let topo = netheat_config::load_topology_str(&text[..text.find("[workload]").unwrap()], "t").unwrap();
    let cluster = netheat_storage::Cluster::from_topology(&topo).unwrap();
    let disk = cluster.hosts.iter().filter(|h| h.stores).filter_map(|h| h.disk_write_bps).fold(f64::INFINITY, f64::min);
    (run(&text).unwrap(), disk)
}

#[test]
fn sinbad_avoids_the_rack_whose_downlink_is_full() {
    // The share of blocks written from outside rack 1 (hosts 4-7) with a
    // replica in it. Uniform rack-aware placement puts the remote
    // group in rack 1 with probability 1/3 or 1/4 (one of the racks other
    // than the writer's, or two of the four disk racks for a compute
    // writer); Sinbad sees rack 1's downlink busy from its first report
    // on and goes elsewhere.
    for precalculated in [false, true] {
        sinbad_avoids_the_full_downlink(precalculated);
    }
}

fn sinbad_avoids_the_full_downlink(precalculated: bool) {
    let (sinbad, disk) = storage_scenario("sinbad", precalculated);
    let (uniform, _) = storage_scenario("uniform", precalculated);
    // Sinbad ranks a rack by min(spare downlink, disk write rate). Rack 1's
    // downlink (10 Gbit/s) carries 10 Gbit/s of background; Sinbad's EWMA
    // (weight 0.2, one report per second) estimates it at 10 (1 - 0.8^n)
    // after n reports, so rack 1 looks worse than an idle rack once
    // 10 (1 - 0.8^n) > 10 - disk: from report n* on.
    let n_star = (1..100).find(|&n| 10e9 * (1.0 - 0.8f64.powi(n)) > 10e9 - disk).unwrap();
    let share = |r: &ScenarioResult| {
        // Writers outside rack 1 (their writes into rack 1 cross its full
        // downlink), after report n*.
        let outside: Vec<_> =
            r.blocks.iter().filter(|b| !(4..8).contains(&b.writer) && b.start_s > f64::from(n_star) + 0.5).collect();
        assert!(outside.len() >= 20, "{} blocks after {n_star} s", outside.len());
        let hot = outside
            .iter()
            .filter(|b| b.replicas.split(';').map(|h| h.parse::<u32>().unwrap()).any(|h| (4..8).contains(&h)))
            .count() as f64;
        hot / outside.len() as f64
    };
    assert!(sinbad.blocks.len() > 30, "{}", sinbad.blocks.len());
    assert_eq!(sinbad.blocks.len(), uniform.blocks.len());
    // Every block spans two racks at least (fault tolerance 1).
    assert!(sinbad.blocks.iter().all(|b| b.racks >= 2));
    // Compute hosts (rack 0) never store.
    assert!(sinbad.blocks.iter().all(|b| b.replicas.split(';').all(|h| h.parse::<u32>().unwrap() >= 4)));
    let (s, u) = (share(&sinbad), share(&uniform));
    eprintln!(
        "disk {disk:.3e} bit/s, n* = {n_star}; blocks {}, hot-rack share: sinbad {s:.3}, uniform {u:.3}",
        sinbad.blocks.len()
    );
    assert!(u >= 0.15, "uniform hot share {u}");
    assert!(s <= 0.1 && s < u / 3.0, "sinbad hot share {s} vs uniform {u}");
    // Writes finish: each block crosses disks of a few hundred MB/s.
    assert!(sinbad.blocks.iter().all(|b| b.finish_s > b.start_s));
}

/// Writes `csv` under a name of its own in the test directory (tests run
/// in parallel: whole files only) and returns its path.
fn csv_file(prefix: &str, csv: &str) -> String {
    let dir = files_dir();
    let name = format!("{prefix}-{:x}.csv", fxhash(csv));
    let tmp = dir.join(format!("{name}.{:?}", std::thread::current().id()));
    std::fs::write(&tmp, csv).unwrap();
    std::fs::rename(&tmp, dir.join(&name)).unwrap();
    dir.join(name).display().to_string()
}

/// Four racks of four 16-core hosts, 10 Gbit/s everywhere; from t = 0 the
/// four hosts of rack 0 each send a long flow to rack 1, filling rack 0's
/// uplink (outbound utilization 1); compute jobs of two 16-core tasks
/// (a whole host each) sending 160 Mbit/s to each other arrive for 60 s.
fn placement_scenario(policy: &str) -> ScenarioResult {
    let bg: String = (0..4).map(|i| format!("{i},{},100000000000,0\n", 4 + i)).collect();
    let file = csv_file("placement-bg", &format!("src,dst,bytes,start_s\n{bg}"));
    run(&format!(
        r#"
[scenario]
duration = "70s"
[topology]
kind = "two-tier"
racks = 4
hosts-per-rack = 4
host-link = "10Gbps"
tor-uplink = "10Gbps"
[hosts]
cores = 16
memory = "64GB"
[workload]
duration = "60s"
[[workload.traffic]]
kind = "replay"
file = "{file}"
[[workload.app]]
kind = "compute-job"
rate = 0.5
tasks-per-job = 2
peers = 1
cores-per-task = 16
memory-per-task = "8GB"
bandwidth-per-core = "10Mbps"
drift-sigma = 0.0
task-duration = "4s"
[placement]
policy = "{policy}"
objectives = ["spread-job", "bin-pack"]
"#
    ))
    .unwrap()
}

#[test]
fn utp_places_compute_tasks_off_the_hot_tor() {
    // The scheduler here has no CPU load-balance objective (`objectives`
    // above): every task fills its host, so CPU after placement is 100%
    // everywhere and UTP's tweak of that objective, max(CPU, projected
    // ToR) (hotspot paper §5.1), would tie every ToR below 105%; without
    // it, UTP's load balance is the projected ToR alone, last.
    // Every task takes a whole host, so bin packing ties (0 free cores
    // after) and spreading sends a job's second task to another rack than
    // its first. The oblivious policy breaks the remaining ties by sample
    // order, ascending host ids: the first task of a job goes to rack 0
    // (hosts 0-3) whenever one of its hosts is free and drawn (32 draws
    // over 16 hosts miss 4 given hosts with probability (3/4)^32 < 1e-3),
    // so rack 0 gets at most and about half the tasks. UTP's last
    // objective is the projected ToR utilization, 1 + 160e6/10e9 for rack
    // 0 (key 20) against 160e6/10e9 plus the other jobs' few hundred
    // Mbit/s elsewhere (key 0): it never picks rack 0 while another rack
    // has a free host (at most a few jobs of 4 s run at once on 12 hosts).
    let utp = placement_scenario("utp");
    let obl = placement_scenario("bandwidth-oblivious");
    let first: Vec<_> = utp.placements.iter().filter(|p| !p.migrated).collect();
    assert!(first.len() >= 30, "{} placements", first.len());
    assert_eq!(first.len(), obl.placements.len(), "the same jobs");
    assert_eq!(utp.stats["placements"], first.len() as f64);
    assert_eq!(utp.stats["placement_overcommits"], 0.0);
    let share =
        |r: &ScenarioResult| r.placements.iter().filter(|p| p.rack == 0).count() as f64 / r.placements.len() as f64;
    let (u, o) = (share(&utp), share(&obl));
    eprintln!("rack-0 share of placements: utp {u:.3}, bandwidth-oblivious {o:.3}");
    assert_eq!(u, 0.0);
    // At most half (a job's second task is spread off its first's rack);
    // a first task misses rack 0 when its 4 hosts are all taken, i.e. when
    // 4 jobs run already: with 0.5 jobs/s of 4 s, P(Poisson(2) >= 4) =
    // 0.14, so about 0.5 (1 - 0.14) = 0.43 in expectation.
    assert!((0.4..=0.5).contains(&o), "oblivious rack-0 share {o}");
    // What UTP saw: the chosen ToRs were cool; the oblivious policy's rack-0
    // choices saw the full uplink.
    assert!(utp.placements.iter().all(|p| p.tor_util < 0.75), "{:?}", utp.placements);
    assert!(obl.placements.iter().filter(|p| p.rack == 0).all(|p| p.tor_util > 0.99));
    // Two distinct hosts per job, each task's flows between them.
    for p in &utp.placements {
        let mate = utp.placements.iter().find(|q| q.task_id == p.task_id && q.task != p.task).unwrap();
        assert_ne!(p.host, mate.host);
        assert!(utp
            .flows
            .iter()
            .filter(|f| f.task_id == p.task_id as i64)
            .all(|f| { (f.src, f.dst) == (p.host, mate.host) || (f.src, f.dst) == (mate.host, p.host) }));
    }
    // Tasks release their hosts when their flows end: each 4 s flow
    // (1.6e8 bit/s for 4 s = 80 MB) finishes on time, so do the stays.
    for p in &utp.placements {
        assert!((p.finish_s - p.start_s - 4.0).abs() < 1e-6, "{p:?}");
    }
    // No task sat on a hot ToR: nothing to migrate.
    assert!(utp.migrations.is_empty());
    // Jobs are numbered in start order, one number per job (task_id).
    let mut jobs: Vec<(u32, u64, u64)> =
        utp.placements.iter().map(|p| (p.job, p.task_id, p.start_s.to_bits())).collect();
    jobs.dedup();
    assert_eq!(jobs.len(), first.len() / 2);
    assert!(jobs.iter().enumerate().all(|(i, j)| j.0 == i as u32));
    assert!(jobs.windows(2).all(|w| f64::from_bits(w[0].2) <= f64::from_bits(w[1].2)));
}

/// Three racks of two 16-core hosts, 10 Gbit/s everywhere; one compute job
/// of two whole-host tasks sending 2 Gbit/s to each other for 30 s, placed
/// by `reactive-only` spreading only; from t = 10 s host 1 sends a long
/// flow to host 3 that fills rack 0's uplink with the job's flow out of it.
fn migration_scenario() -> ScenarioResult {
    let file = csv_file("migration-bg", "src,dst,bytes,start_s\n1,3,30000000000,0\n");
    run(&format!(
        r#"
[topology]
kind = "two-tier"
racks = 3
hosts-per-rack = 2
host-link = "10Gbps"
tor-uplink = "10Gbps"
[hosts]
cores = 16
memory = "64GB"
[workload]
duration = "1s"
[[workload.traffic]]
kind = "replay"
file = "{file}"
offset = "10s"
[[workload.app]]
kind = "compute-job"
rate = 100.0
tasks = 1
tasks-per-job = 2
peers = 1
cores-per-task = 16
memory-per-task = "8GB"
bandwidth-per-core = "125Mbps"
drift-sigma = 0.0
task-duration = "30s"
[placement]
policy = "reactive-only"
objectives = ["spread-job"]
tick = "1s"
detect = "5s"
"#
    ))
    .unwrap()
}

#[test]
fn a_task_moves_off_a_tor_that_turns_hot_and_its_bytes_are_conserved() {
    let r = migration_scenario();
    // Placement: ties broken by ascending host id: task 0 on host 0 (rack
    // 0), task 1 spread to the lowest host of another rack, host 2.
    let first: Vec<_> = r.placements.iter().filter(|p| !p.migrated).collect();
    assert_eq!(first.iter().map(|p| (p.task, p.host)).collect::<Vec<_>>(), vec![(0, 0), (1, 2)]);
    let t0 = first[0].start_s;
    assert!(t0 < 0.1, "the job starts at {t0}");
    // Flows of 16 x 125 Mbit/s = 2 Gbit/s (one peer) for 30 s: 7.5 GB each.
    let flow_bytes = 2e9 * 30.0 / 8.0;
    let job = r.tasks.iter().find(|t| t.kind == "compute-job").unwrap();
    assert!((job.bytes - 2.0 * flow_bytes).abs() < 1.0, "{job:?}");
    // From 10 s rack 0's uplink carries the job's 2 Gbit/s and the rest
    // of 10 Gbit/s for the background flow: utilization 1 > 0.75. Samples
    // every second from 0.5 s; five in a row above (10.5 .. 14.5 s) make
    // it hot; the detection at 15 s moves task 0 (the only task there,
    // 2 Gbit/s leaving the rack) to the best host off rack 0 without a
    // task of its job: spreading prefers rack 2 (no task of the job) over
    // host 3 (beside task 1), and host 4 comes first.
    assert_eq!(r.migrations.len(), 1, "{:?}", r.migrations);
    let m = &r.migrations[0];
    assert!((m.time_s - 15.0).abs() < 1e-9, "{m:?}");
    assert_eq!((m.task, m.from_host, m.to_host, m.tor), (0, 0, 4, 0), "{m:?}");
    assert!((m.rate_bps - 2e9).abs() < 1.0, "{m:?}");
    // Its stay on host 0 ends at 15 s and one on host 4 begins.
    let stays: Vec<_> = r.placements.iter().filter(|p| p.task == 0).collect();
    assert_eq!(stays.len(), 2);
    assert!((stays[0].finish_s - 15.0).abs() < 1e-9 && stays[1].migrated && stays[1].host == 4);
    // Both flows of task 0 (out to task 1, in from it) sent 2 Gbit/s from
    // t0 to 15 s; the rest, 7.5 GB - 2e9 (15 - t0) / 8, moved with it.
    let sent = 2e9 * (15.0 - t0) / 8.0;
    assert!((m.bytes_moved - 2.0 * (flow_bytes - sent)).abs() < 1.0, "{m:?}");
    let flows: Vec<_> = r.flows.iter().filter(|f| f.task_id == job.task_id as i64).collect();
    assert_eq!(flows.len(), 4, "{flows:?}");
    let cut: Vec<_> = flows.iter().filter(|f| (f.finish_s - 15.0).abs() < 1e-9).collect();
    assert_eq!(cut.len(), 2, "{flows:?}");
    for f in &cut {
        assert!((f.bytes - sent).abs() < 1.0, "{f:?}");
        assert!(f.src == 0 || f.dst == 0);
    }
    for f in flows.iter().filter(|f| f.flow_id >= 1 << 62) {
        assert!((f.start_s - 15.0).abs() < 1e-9 && (f.src == 4 || f.dst == 4), "{f:?}");
        assert!((f.bytes - (flow_bytes - sent)).abs() < 1.0, "{f:?}");
    }
    // Bytes conserved: sent before plus after the move is the job's bytes.
    let total: f64 = flows.iter().map(|f| f.bytes).sum();
    assert!((total - job.bytes).abs() < 1.0, "{total} vs {}", job.bytes);
    // The moved flows keep their 2 Gbit/s caps and nothing slows them (the
    // new ones share rack 1's downlink with the background flow, which
    // leaves them their cap): the job still ends at t0 + 30 s.
    assert!((job.finish_s - job.start_s - 30.0).abs() < 1e-6, "{job:?}");
    assert_eq!(r.stats["migrations"], 1.0);
}

#[test]
fn placement_without_compute_jobs_or_on_packets_is_refused() {
    let e = err(&two_racks(TWO_FLOWS, "[placement]\npolicy = \"utp\""));
    assert!(e.contains("placement.policy") && e.contains("compute-job") && e.contains("workload"), "{e}");
    let line =
        two_racks(TWO_FLOWS, "[placement]\npolicy = \"utp\"").lines().position(|l| l.starts_with("policy")).unwrap()
            + 1;
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    let e = err(&two_racks(TWO_FLOWS, "[scenario]\nengine = \"packet\"\n[placement]\npolicy = \"utp\""));
    assert!(e.contains("placement") && e.contains("scenario.engine"), "{e}");
    // A compute job whose tasks send to more peers than the job has.
    let e = err(&two_racks(
        TWO_FLOWS,
        "[[workload.app]]\nkind = \"compute-job\"\nrate = 1.0\nduration = \"1s\"\ntasks-per-job = 2\npeers = 2\n[placement]\npolicy = \"utp\"",
    ));
    assert!(e.contains("peers"), "{e}");
    // Keys of the section are checked.
    let e = err(&two_racks(TWO_FLOWS, "[placement]\npolicy = \"utpp\""));
    assert!(e.contains("utp") && e.contains("reactive-only"), "{e}");
}

#[test]
fn a_full_cluster_overcommits_and_counts_it() {
    // Two racks of two 16-core hosts; jobs of two whole-host tasks for 10 s
    // arrive at 5 per second for 1 s: the third concurrent job finds no
    // free host, starts anyway on hosts without a task of its job, and is
    // counted. Without [placement] the same jobs run on the generated hosts.
    let text = |placement: &str| {
        two_racks(
            TWO_FLOWS,
            &format!(
                "[hosts]\ncores = 16\n[[workload.app]]\nkind = \"compute-job\"\nrate = 5.0\nduration = \"1s\"\n\
             tasks-per-job = 2\npeers = 1\ncores-per-task = 16\nmemory-per-task = \"1GB\"\n\
             bandwidth-per-core = \"1Mbps\"\ndrift-sigma = 0.0\ntask-duration = \"10s\"\n{placement}"
            ),
        )
    };
    let r = run(&text("[placement]\npolicy = \"utp\"")).unwrap();
    let jobs = r.tasks.iter().filter(|t| t.kind == "compute-job").count();
    assert!(jobs >= 3, "{jobs} jobs");
    assert_eq!(r.stats["placement_overcommits"], (2 * jobs - 4) as f64);
    for p in &r.placements {
        let mate = r.placements.iter().find(|q| q.task_id == p.task_id && q.task != p.task).unwrap();
        assert_ne!(p.host, mate.host);
    }
    let plain = run(&text("")).unwrap();
    assert_eq!(plain.tasks.iter().filter(|t| t.kind == "compute-job").count(), jobs);
    assert!(plain.placements.is_empty() && !plain.stats.contains_key("placements"));
}
