//! Subways shuffle jobs through the scenario (the `shuffle-job` workload
//! app under each routing policy): hand-computed completion times and
//! bounds, the placement of jobs in loops, ToR failures and detours (moved
//! from the former `netheat-repro` `subways` tests, same assertions).

use std::path::Path;

use netheat_data::DataDir;
use netheat_scenario::{Scenario, ScenarioError, ScenarioResult};
use netheat_workloads::apps::shuffle::{loops_in_order, JobPlacement, ShuffleJob};

/// A scenario of `topology` (the body of an inline `[topology]`), one
/// `shuffle-job` with `job` keys, under `policy`, plus `extra` tables.
fn shuffle(topology: &str, job: &str, policy: &str, extra: &str) -> String {
    format!(
        "[topology]\n{topology}\n[workload]\n[[workload.app]]\nkind = \"shuffle-job\"\n{job}\n\
         [routing]\npolicy = \"{policy}\"\n{extra}\n"
    )
}

fn run(text: &str) -> Result<ScenarioResult, ScenarioError> {
    // Relative paths (the testbed file) resolve against this crate.
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    Scenario::from_text(text, "s.toml", base).run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
}

/// The job's completion time (its one task), NaN when it did not finish.
fn completion(r: &ScenarioResult) -> f64 {
    assert_eq!(r.tasks.len(), 1, "one shuffle job");
    r.tasks[0].finish_s - r.tasks[0].start_s
}

fn topo(body: &str) -> netheat_topology::Topology {
    netheat_config::load_topology_str(&format!("[topology]\n{body}"), "dc.toml").expect("valid topology")
}

/// Type 1, loops of 6 on 2 clusters of 6 racks of 4 servers, 20G ToR uplinks.
const TWO_CLUSTERS: &str = "kind = \"subways\"\nwiring = \"type1\"\npods = 2\nracks-per-pod = 6\n\
    hosts-per-rack = 4\nhost-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\ntor-uplink = \"20Gbps\"\n\
    aggs-per-pod = 2\nspines = 2\n";

const PAIR: &str = "pods = 1\nracks-per-pod = 2\nhosts-per-rack = 1\nhost-link = \"10Gbps\"\nports-per-host = 2\n\
                    tor-uplink = \"5Gbps\"\naggs-per-pod = 1\nspines = 1\n";

#[test]
fn a_shortcut_through_the_shared_tor_beats_the_uplink() {
    // Two racks of one server with two 10G ports. Type 0: both ports on the
    // server's own ToR, so the two servers talk through the 5G ToR uplinks:
    // 1.25 GB each way at 5 Gbps = 2 s. Type 1 with loop size 2: each server
    // has a port on both ToRs, so the flows take a shortcut through a shared
    // ToR at 10 Gbps: 1 s.
    let t0 = format!("kind = \"subways\"\nwiring = \"type0\"\n{PAIR}");
    let t1 = format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 2\n{PAIR}");
    let job = "nodes = 2\nbytes-per-pair = \"1.25GB\"";
    for policy in ["subways-ecmp", "ecmp", "adaptive", "detour"] {
        let r0 = run(&shuffle(&t0, job, policy, "")).unwrap();
        let r1 = run(&shuffle(&t1, job, policy, "")).unwrap();
        assert!((completion(&r0) - 2.0).abs() < 1e-9, "{policy} type 0: {}", completion(&r0));
        assert!((completion(&r1) - 1.0).abs() < 1e-9, "{policy} type 1: {}", completion(&r1));
        assert_eq!(r1.flows.len(), 2);
        assert_eq!(r1.tasks[0].kind, "shuffle-job");
    }
}

#[test]
fn bad_jobs_and_unknown_policies_are_errors() {
    let t1 = format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 2\n{PAIR}");
    let err = |text: String| match run(&text) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    };
    // The datacenter has 2 hosts: the [topology] table takes lines 1-13, the
    // job's keys start on line 17.
    let e = err(shuffle(&t1, "nodes = 3\nbytes-per-pair = \"1MB\"", "subways-ecmp", ""));
    assert!(e.starts_with("s.toml:17:1: key `workload.app[0].nodes`: 3 servers from rack 0 (host 0)"), "{e}");
    assert!(e.ends_with("do not fit in the datacenter's 2 hosts"), "{e}");
    let e = err(shuffle(&t1, "nodes = 2\nplacement = \"scattered\"", "subways-ecmp", ""));
    assert!(e.starts_with("s.toml:18:1: key `workload.app[0].placement`: unknown placement `scattered`"), "{e}");
    assert!(e.ends_with("known: contiguous, two-loops"), "{e}");
    let e = err(shuffle(&t1, "nodes = 2\npattern = \"gather\"", "subways-ecmp", ""));
    assert!(e.contains("workload.app[0].pattern`: unknown pattern `gather`; known: all-to-all, into-last-rack"), "{e}");
    let e = err(shuffle(&t1, "nodes = 2\nfirst-rack = 5", "subways-ecmp", ""));
    assert!(e.contains("workload.app[0].first-rack`: rack 5 does not exist (the datacenter has racks 0..1)"), "{e}");
    let e = err(shuffle(&t1, "nodes = 2\nrate = 3", "subways-ecmp", ""));
    assert!(e.contains("workload.app[0].rate`: is not used by kind \"shuffle-job\""), "{e}");
    let e = err(shuffle(&t1, "nodes = 2", "teleport", ""));
    assert!(e.contains("routing.policy") && e.contains("subways-ecmp"), "{e}");
    let e = err(shuffle(&t1, "nodes = 2", "adaptive", "aggressiveness = 0.0"));
    assert!(e.contains("aggressiveness"), "{e}");
}

#[test]
fn same_seed_same_completion() {
    let t = "kind = \"subways\"\nwiring = \"type1\"\npods = 1\nracks-per-pod = 6\nhosts-per-rack = 4\n\
             host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\ntor-uplink = \"20Gbps\"\naggs-per-pod = 2\nspines = 2\n";
    let job = "nodes = 12\nfirst-rack = 1\nbytes-per-pair = \"1MB\"";
    for policy in ["subways-ecmp", "adaptive", "detour"] {
        let text = format!("[scenario]\nseed = 5\n{}", shuffle(t, job, policy, ""));
        let (a, b) = (run(&text).unwrap(), run(&text).unwrap());
        assert_eq!(completion(&a).to_bits(), completion(&b).to_bits(), "{policy}");
        assert_eq!(a.stats, b.stats, "{policy}");
    }
}

#[test]
fn a_failed_tor_strands_type0_but_only_slows_type1() {
    // One cluster, 4 racks of 3 servers with two 10G ports; ToR 1 fails at
    // time 0. Type 0: rack 1's servers lose both ports, so the 12-server
    // job's flows from them (3 x 11) and to them from the others (9 x 3),
    // 60 in all, are stranded and the job never ends.
    // Type 1 (loop 4): every server keeps a port; the job completes, later
    // than without the failure.
    let body = "pods = 1\nracks-per-pod = 4\nhosts-per-rack = 3\nhost-link = \"10Gbps\"\nports-per-host = 2\n\
                tor-uplink = \"20Gbps\"\naggs-per-pod = 1\nspines = 1\n";
    let t0 = format!("kind = \"subways\"\nwiring = \"type0\"\n{body}");
    let t1 = format!("kind = \"subways\"\nwiring = \"type1\"\nloop-size = 4\n{body}");
    let job = "nodes = 12\nbytes-per-pair = \"10MB\"";
    let fail = "[[events]]\nat = \"0s\"\nnodes = [\"tor1\"]\naction = \"fail\"\n";
    for policy in ["subways-ecmp", "adaptive"] {
        let r = run(&shuffle(&t0, job, policy, fail)).unwrap();
        assert_eq!(r.stats["stranded"], (3 * 11 + 9 * 3) as f64, "{policy}");
        assert!(completion(&r).is_nan(), "{policy}");
        let healthy = run(&shuffle(&t1, job, policy, "")).unwrap();
        let failed = run(&shuffle(&t1, job, policy, fail)).unwrap();
        assert_eq!(failed.stats["stranded"], 0.0, "{policy}");
        assert!(
            completion(&failed) > completion(&healthy),
            "{policy}: {} vs {}",
            completion(&failed),
            completion(&healthy)
        );
    }
}

#[test]
fn table2_testbed_respects_its_bottlenecks() {
    // §8.2: racks 0-2 (12 senders) send 4 flows of 100 MB to each of the 4
    // servers of rack 3: 192 flows, 19.2 GB = 153.6 Gb.
    // Type 0: everything comes down the receiver ToR's 2 x 500 Mbps
    // downlinks: at least 153.6 s. Type 1 (loop of 4): the receivers' eight
    // 500 Mbps ports take it all: at least 38.4 s; rack 1 shares no ToR with
    // rack 3, so its 51.2 Gb cross the fabric into ToRs 3 and 0 (2 x 1 Gbps):
    // at least 25.6 s.
    let testbed = |wiring: &str, policy: &str, seed: u64| {
        let loop_size = if wiring == "type0" { "" } else { "loop-size = 4\n" };
        let text = format!(
            "[scenario]\nseed = {seed}\n\
             [topology]\nfile = \"../../experiments/topologies/subways-testbed.toml\"\nwiring = \"{wiring}\"\n{loop_size}\
             [workload]\n[[workload.app]]\nkind = \"shuffle-job\"\nnodes = 16\npattern = \"into-last-rack\"\n\
             flows-per-pair = 4\nbytes-per-pair = \"100MB\"\n[routing]\npolicy = \"{policy}\"\n"
        );
        run(&text).unwrap()
    };
    let t0 = testbed("type0", "subways-ecmp", 1);
    let t1 = testbed("type1", "subways-ecmp", 1);
    assert_eq!((t0.flows.len(), t1.flows.len()), (192, 192));
    assert!(completion(&t0) >= 153.6 - 1e-6, "type 0: {}", completion(&t0));
    assert!(completion(&t1) >= 38.4 - 1e-6, "type 1: {}", completion(&t1));
    // Over many draws of the flow hashes. Vanilla ECMP (section 4.2) sends
    // each of racks 0 and 2's 128 flows to the ToR it does not share with
    // rack 3 with probability 1/2; those flows and rack 1's 64 cross the
    // aggregation layer into ToRs 0 and 3 (2 x 2 x 500 Mbps = 2 Gbps), so a
    // draw takes at least its aggregation bytes / 2 Gbps, whose mean is
    // (51.2 + 51.2) Gb / 2 Gbps = 51.2 s: the mean completion is at least
    // that (the sample mean's sd is about 0.5 s over 20 draws; the engine's
    // draws sit near 62 s). Shortest-path ECMP (section 8.2's Table 2 flows)
    // sends racks 0 and 2 only through their shared ToR: every draw is at
    // least the receivers' 38.4 s, and below vanilla on average.
    let draws = 20;
    let (mut vanilla, mut shortest) = (0.0, 0.0);
    for seed in 1..=draws {
        let v = completion(&testbed("type1", "subways-ecmp", seed));
        let s = completion(&testbed("type1", "ecmp", seed));
        assert!(v >= 38.4 - 1e-6 && s >= 38.4 - 1e-6, "seed {seed}: vanilla {v}, shortest {s}");
        vanilla += v / draws as f64;
        shortest += s / draws as f64;
    }
    assert!(vanilla >= 51.2, "vanilla mean {vanilla}");
    assert!(shortest < vanilla, "shortest mean {shortest}, vanilla {vanilla}");
}

#[test]
fn two_loops_split_the_job_between_loops() {
    // Type 1 with loops of 6 on 2 clusters of 6 racks of 4: loop 0 is
    // cluster 0, loop 1 cluster 1. 12 servers: 6 from rack 0 on (racks 0, 1)
    // and 6 from rack 6 on (racks 6, 7).
    let t = topo(TWO_CLUSTERS);
    let mut job = ShuffleJob::new(0, 12, 1e6);
    job.placement = JobPlacement::TwoLoops;
    assert_eq!(job.members(&t).unwrap(), vec![0, 1, 2, 3, 4, 5, 24, 25, 26, 27, 28, 29]);
    // Type 2 (2 clusters per loop of 12): loop 0 interleaves racks 0, 6, 1, 7, ...
    // of both clusters; loop 1 racks 3, 9, 4, 10, ...
    let t2 = topo(
        "kind = \"subways\"\nwiring = \"type2\"\npods = 2\nracks-per-pod = 6\nhosts-per-rack = 2\n\
         host-link = \"10Gbps\"\nports-per-host = 2\nloop-size = 6\nclusters-per-loop = 2\n\
         tor-uplink = \"10Gbps\"\naggs-per-pod = 2\nspines = 2\n",
    );
    assert_eq!(loops_in_order(&t2), vec![vec![0, 6, 1, 7, 2, 8], vec![3, 9, 4, 10, 5, 11]]);
    let mut job = ShuffleJob::new(0, 6, 1e6);
    job.placement = JobPlacement::TwoLoops;
    // 3 servers each: racks 0 (hosts 0, 1) and 6 (host 12); racks 3 (6, 7) and 9 (18).
    assert_eq!(job.members(&t2).unwrap(), vec![0, 1, 12, 6, 7, 18]);
    // A job of n servers has n (n - 1) flows, into-last-rack only those into its last rack.
    assert_eq!(ShuffleJob::new(0, 12, 1e6).task(&t).unwrap().num_flows(), 12 * 11);
}

#[test]
fn detours_start_only_after_a_whole_detection_window() {
    // Rack 0 (4 servers, ports on ToRs 0 and 1) shuffles with rack 6 of the
    // other cluster: 16 x 2 flows cross the 2 x 20G uplinks of ToRs 0 and 1
    // (servers could send 80G), so both are hot from t = 0. The controller
    // learns it from the first full T_detect window: the first detour is at
    // T_detect exactly, whatever T_detect is; with a threshold the load never
    // reaches, never.
    let job = "nodes = 8\nplacement = \"two-loops\"\nbytes-per-pair = \"200MB\"";
    for (t_detect, period) in [(0.01, "10ms"), (0.02, "20ms")] {
        let d = run(&shuffle(TWO_CLUSTERS, job, "detour", &format!("period = \"{period}\""))).unwrap();
        assert!(d.stats["detours"] > 0.0, "{:?}", d.stats);
        assert_eq!(d.stats["first_detour_s"], t_detect, "{:?}", d.stats);
        let a = run(&shuffle(TWO_CLUSTERS, job, "adaptive", &format!("period = \"{period}\""))).unwrap();
        assert!(completion(&d) < completion(&a), "detours help: {} vs {}", completion(&d), completion(&a));
    }
    let never = run(&shuffle(TWO_CLUSTERS, job, "detour", "hot-threshold = 1.0")).unwrap();
    assert_eq!(never.stats["detours"], 0.0);
    assert!(!never.stats.contains_key("first_detour_s"));
}
