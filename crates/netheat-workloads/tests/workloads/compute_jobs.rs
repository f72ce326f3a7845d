//! Long-running compute jobs: rate-capped flows, heavy-tailed demand, drift.

use netheat_workloads::apps::compute::{ComputeJobs, RandomPlacement};
use netheat_workloads::{GenError, SizeDist};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier, G};

#[test]
fn capped_flows_last_the_job_duration() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let jobs = ComputeJobs {
        tasks: 3,
        cores_per_task: 2,
        bw_per_core: SizeDist::Constant(1e8),
        drift_sigma: 0.0,
        duration_s: 10.0,
        peers: 1,
        ..ComputeJobs::default()
    };
    let job = jobs.job_on(vec![0, 1, 2], &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    assert_eq!(job.estimate_bps, 2e8);
    assert_eq!(job.actual_bps, vec![2e8; 3]);
    assert_eq!(job.dag.num_flows(), 3);
    let rec = &run_tasks(&topo, vec![(5.0, job.dag)])[0];
    assert_close(rec.duration_s(), 10.0, 1e-9);
}

#[test]
fn demand_is_heavy_tailed_and_drifts_around_the_estimate() {
    let topo = two_tier(2, 8, 10.0 * G, 10.0 * G);
    let jobs = ComputeJobs::default();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut est, mut ratio) = (Vec::new(), Vec::new());
    for _ in 0..4000 {
        let job = jobs.job(&topo, &mut RandomPlacement::default(), &mut rng).unwrap();
        est.push(job.estimate_bps);
        ratio.extend(job.actual_bps.iter().map(|a| a / job.estimate_bps));
        assert!(job.dag.steps.iter().all(|s| matches!(s, netheat_workloads::Step::Flow { rate_cap_bps: Some(_), .. })));
    }
    est.sort_by(f64::total_cmp);
    let median = est[est.len() / 2];
    let heavy = est.iter().filter(|&&e| e > 10.0 * median).count() as f64 / est.len() as f64;
    let mean_ratio = ratio.iter().sum::<f64>() / ratio.len() as f64;
    eprintln!("compute jobs: {:.1}% above 10x the median; mean actual/estimate {mean_ratio:.3}", 100.0 * heavy);
    assert!(heavy > 0.02, "{heavy}");
    assert!((mean_ratio - 1.0).abs() < 0.03, "{mean_ratio}");
    assert!(ratio.iter().any(|&r| r > 1.5) && ratio.iter().any(|&r| r < 0.67));
}

#[test]
fn random_placement_respects_cores() {
    // 4 hosts x 32 cores take 32 tasks of 4 cores.
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let jobs = ComputeJobs { tasks: 4, peers: 1, memory_per_task_bytes: 1e9, ..ComputeJobs::default() };
    let mut p = RandomPlacement::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..8 {
        let job = jobs.job(&topo, &mut p, &mut rng).unwrap();
        let mut h = job.hosts.clone();
        h.sort_unstable();
        assert_eq!(h, [0, 1, 2, 3]);
    }
    assert!(matches!(jobs.job(&topo, &mut p, &mut rng), Err(GenError::NotEnoughHosts(_))));
}
