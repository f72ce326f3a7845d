//! Integration tests of netheat-sched: ranking and migration choice (the
//! runs of the UTP cluster experiment are tested in netheat-repro).

use netheat_sched::policy::{pick_migrations, Candidate, MigrationCandidate};
use netheat_sched::{placement_policy, Objective};

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

/// §5.1: UTP tweaks the scheduler's low-priority load-balance objective
/// (here CPU balance) with the projected ToR utilization instead of adding
/// an objective; `utp-tiebreak` (ours) is the appended form.
#[test]
fn utp_tweaks_the_load_balance_objective_in_place() {
    let base = [Objective::SpreadJob, Objective::BinPack, Objective::CpuBalance];
    let utp = placement_policy("utp", &base).unwrap();
    assert_eq!(utp.objectives(), &[Objective::SpreadJob, Objective::BinPack, Objective::UtpBalance]);
    let tie = placement_policy("utp-tiebreak", &base).unwrap();
    assert_eq!(
        tie.objectives(),
        &[Objective::SpreadJob, Objective::BinPack, Objective::CpuBalance, Objective::TorUtilization]
    );
    // No load-balance objective to tweak: the tweaked score is the ToR's alone, last.
    assert_eq!(
        placement_policy("utp", &BASE).unwrap().objectives(),
        &[Objective::SpreadJob, Objective::BinPack, Objective::TorUtilization]
    );
    // The tweaked key is floor(20 max(cpu after, projected ToR)): where the
    // server is the more loaded, it is CPU balance's key unchanged (0.6 ->
    // 12 both); where the ToR is, the ToR's (0.82 -> 16, CPU balance 8).
    let c = |server, cpu: f64, tor: f64| Candidate {
        server,
        job_tasks_in_rack: 0,
        free_cores_after: 2.0,
        cpu_after: cpu,
        projected_tor: tor,
    };
    assert_eq!(Objective::UtpBalance.key(&c(0, 0.6, 0.3)), 12);
    assert_eq!(Objective::CpuBalance.key(&c(0, 0.6, 0.3)), 12);
    assert_eq!(Objective::UtpBalance.key(&c(0, 0.4, 0.82)), 16);
    assert_eq!(Objective::CpuBalance.key(&c(0, 0.4, 0.82)), 8);
    // Same spread and packing bucket: A has the idler CPU (0.30, key 6)
    // on a hot ToR (0.80), B a busier CPU (0.55, key 11) on a cool ToR
    // (0.20). CPU balance picks A; the tweak scores A max(.30, .80) = 16
    // and B max(.55, .20) = 11 and picks B; the tie-breaker form never
    // reaches the ToR (CPU balance already differs) and picks A.
    let ab = [c(0, 0.30, 0.80), c(1, 0.55, 0.20)];
    assert_eq!(placement_policy("bandwidth-oblivious", &base).unwrap().choose(&ab), Some(0));
    assert_eq!(utp.choose(&ab), Some(1));
    assert_eq!(tie.choose(&ab), Some(0));
}
