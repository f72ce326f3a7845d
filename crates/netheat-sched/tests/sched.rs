//! Integration tests of netheat-sched: ranking, migration choice, runs.

use netheat_sched::policy::{pick_migrations, Candidate, MigrationCandidate};
use netheat_sched::{placement_policy, run_cluster, ClusterParams, Objective};

fn cand(server: u32, in_rack: u32, free: f64, tor: f64) -> Candidate {
    Candidate { server, job_tasks_in_rack: in_rack, free_cores_after: free, cpu_after: 0.5, projected_tor: tor }
}

const BASE: [Objective; 2] = [Objective::SpreadJob, Objective::BinPack];

#[test]
fn ranking_is_lexicographic_with_utp_last() {
    // Server 1 spreads the job better (0 tasks in its rack): it wins under
    // every policy even on a hotter ToR. Between servers 2 and 3 (same spread,
    // same 4-core packing bucket) the oblivious policy keeps sample order and
    // UTP picks the cooler ToR.
    let cands = [cand(0, 1, 2.0, 0.1), cand(1, 0, 30.0, 0.9)];
    for tag in ["bandwidth-oblivious", "reactive-only", "utp"] {
        assert_eq!(placement_policy(tag, &BASE).unwrap().choose(&cands), Some(1), "{tag}");
    }
    let tie = [cand(2, 0, 5.0, 0.8), cand(3, 0, 6.0, 0.3)];
    assert_eq!(placement_policy("bandwidth-oblivious", &BASE).unwrap().choose(&tie), Some(0));
    assert_eq!(placement_policy("utp", &BASE).unwrap().choose(&tie), Some(1));
    // Bin packing: fewer free cores (bucket 0..3 vs 8..11) wins before the ToR.
    let pack = [cand(4, 0, 9.0, 0.1), cand(5, 0, 1.0, 0.9)];
    assert_eq!(placement_policy("utp", &BASE).unwrap().choose(&pack), Some(1));
}

#[test]
fn unknown_policy_lists_the_known_ones() {
    let e = placement_policy("random", &BASE).err().unwrap().to_string();
    assert!(e.contains("bandwidth-oblivious, reactive-only, utp"), "{e}");
}

#[test]
fn fewest_migrations_largest_first_within_budgets() {
    // A 100 Gbps ToR at 95 Gbps, threshold 75%: 20 Gbps must go. Tasks of
    // 12, 10, 9 and 30 Gbps; the 30 Gbps one is latency-sensitive and the
    // 12 Gbps one has no budget left: 10 + 9 = 19 is not enough, so both go
    // and the answer is [1, 2] (then nothing else is eligible).
    let m = |task, rate: f64, ls, budget| MigrationCandidate {
        task,
        rate_bps: rate * 1e9,
        latency_sensitive: ls,
        budget_left: budget,
    };
    let cands = [m(0, 12.0, false, false), m(1, 10.0, false, true), m(2, 9.0, false, true), m(3, 30.0, true, true)];
    assert_eq!(pick_migrations(&cands, 95e9, 100e9, 0.75), vec![1, 2]);
    // With budget for task 0: 12 + 10 = 22 >= 20: two migrations, the largest first.
    let cands = [m(0, 12.0, false, true), m(1, 10.0, false, true), m(2, 9.0, false, true)];
    assert_eq!(pick_migrations(&cands, 95e9, 100e9, 0.75), vec![0, 1]);
    // Already below the threshold: none.
    assert!(pick_migrations(&cands, 70e9, 100e9, 0.75).is_empty());
}

fn small() -> netheat_topology::Topology {
    netheat_config::load_topology_str(
        "[topology]\nkind = \"two-tier\"\nracks = 8\nhosts-per-rack = 10\nhost-link = \"10Gbps\"\ntor-uplink = \"20Gbps\"\n\
         [hosts]\ncores = 16\nmemory = \"64GB\"\n[[rack-group]]\nracks = \"0..1\"\ntor-uplink = \"5Gbps\"\n",
        "dc.toml",
    )
    .unwrap()
}

fn params() -> ClusterParams {
    ClusterParams { duration_s: 3.0 * 3600.0, warmup_s: 1800.0, bw_median_per_core: 20e6, ..ClusterParams::default() }
}

#[test]
fn runs_are_deterministic_and_policies_see_the_same_jobs() {
    let t = small();
    let a = run_cluster(&t, "utp", &params(), 3).unwrap();
    let b = run_cluster(&t, "utp", &params(), 3).unwrap();
    assert_eq!(a, b);
    let o = run_cluster(&t, "bandwidth-oblivious", &params(), 3).unwrap();
    // Same jobs, so the same number of first placements (migrations add more).
    assert_eq!(o.placements, a.placements - a.migrations);
    assert_eq!(o.migrations, 0);
}

#[test]
fn tasks_that_fit_nowhere_are_pending_with_a_reason() {
    let t = small();
    let p = ClusterParams { cpu_load: 3.0, ..params() };
    let r = run_cluster(&t, "utp", &p, 1).unwrap();
    assert!(r.pending > 0);
    assert!(r.pending_reason.contains("free cores"), "{}", r.pending_reason);
}

#[test]
fn missing_estimates_fall_back_to_observed_usage_and_are_counted() {
    let t = small();
    let p = ClusterParams { missing_estimate_share: 1.0, ..params() };
    assert!(run_cluster(&t, "utp", &p, 1).unwrap().estimate_fallbacks > 0);
    assert_eq!(run_cluster(&t, "bandwidth-oblivious", &p, 1).unwrap().estimate_fallbacks, 0);
}

#[test]
fn bad_parameters_are_errors() {
    let t = small();
    let p = ClusterParams { heavy_share: 2.0, ..params() };
    assert!(run_cluster(&t, "utp", &p, 1).unwrap_err().to_string().contains("heavy_share"));
}

/// The 98th percentile and the query p95 are netheat_core::stats' linear
/// quantile, NaN (no longer 0) when nothing is measured: here every window
/// and query falls in the warm-up.
#[test]
fn metrics_are_nan_when_everything_is_warm_up() {
    let t = small();
    let p = ClusterParams { duration_s: 3600.0, warmup_s: 3600.0, ..params() };
    let r = run_cluster(&t, "utp", &p, 1).unwrap();
    assert!(r.p98_tor_util.is_nan(), "{}", r.p98_tor_util);
    assert!(r.series.iter().all(|w| w.warmup && w.p98_util.is_finite()));
    for (name, n, mean, p95) in &r.queries {
        assert_eq!(*n, 0, "{name}");
        assert!(mean.is_nan() && p95.is_nan(), "{name}");
    }
}
