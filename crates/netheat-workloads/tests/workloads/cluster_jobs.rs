//! A Borg-like cluster's jobs (the hotspot paper's UTP setting): the
//! steady-state population, the arrival rate and the draws per task.

use netheat_topology::{Topology, TopologySpec};
use netheat_workloads::apps::cluster::ClusterJobs;
use netheat_workloads::GenError;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::G;

/// 10 racks of 10 servers of 32 cores: 3,200 cores.
fn cluster() -> Topology {
    let mut spec = TopologySpec::two_tier(10, 10, 10.0 * G, 40.0 * G);
    for r in &mut spec.racks {
        r.host.cores = 32;
        r.host.memory_bytes = 256e9;
    }
    Topology::build(&spec).unwrap()
}

/// At 60% of 3,200 cores with 1-20 tasks (mean 10.5) of 1-4 cores (mean
/// 2.5), the population is 0.6 x 3,200 / 26.25 = 73.14 jobs, so 73 start
/// at time 0; jobs then arrive at 73.14 per mean task time (one hour):
/// over 10 hours, 731.4 expected (Poisson sd 27), so within 4 sd.
#[test]
fn the_population_and_the_arrivals_follow_the_core_load() {
    let topo = cluster();
    let w = ClusterJobs::default().generate(&topo, 10.0 * 3600.0, &mut ChaCha8Rng::seed_from_u64(7)).unwrap();
    let at_zero = w.jobs.iter().filter(|j| j.start_s == 0.0).count();
    assert_eq!(at_zero, 73);
    let arrivals = (w.jobs.len() - at_zero) as f64;
    let expected = 0.6 * 3200.0 / 26.25 * 10.0;
    assert!((arrivals - expected).abs() < 4.0 * expected.sqrt(), "{arrivals} vs {expected}");
    assert!(w.jobs.windows(2).all(|p| p[0].start_s <= p[1].start_s));
    assert!(w.jobs.iter().all(|j| j.start_s < 36000.0));
}

/// Per task: 1-4 cores (mean 2.5), 4 GB per core, demand = per-core demand x
/// cores with one per-core demand per job, an estimate of demand x the
/// job's error x 1.5, and mean duration one hour; 30% of jobs latency-
/// sensitive; the peer is a host of the cluster.
#[test]
fn tasks_carry_their_job_draws() {
    let topo = cluster();
    let p = ClusterJobs::default();
    let w = p.generate(&topo, 24.0 * 3600.0, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    let tasks: Vec<_> = w.jobs.iter().flat_map(|j| &j.tasks).collect();
    let n = tasks.len() as f64;
    assert_eq!(n as usize, w.num_tasks());
    let mean_cores = tasks.iter().map(|t| f64::from(t.cores)).sum::<f64>() / n;
    // Uniform 1-4: sd 1.118.
    assert!((mean_cores - 2.5).abs() < 4.0 * 1.118 / n.sqrt(), "{mean_cores}");
    let mean_dur = tasks.iter().map(|t| t.duration_s).sum::<f64>() / n;
    // Exponential: sd = mean.
    assert!((mean_dur - 3600.0).abs() < 4.0 * 3600.0 / n.sqrt(), "{mean_dur}");
    for j in &w.jobs {
        assert!((1..=20).contains(&j.tasks.len()));
        let per_core = j.tasks[0].demand_bps / f64::from(j.tasks[0].cores);
        let err = j.tasks[0].estimate_bps.unwrap() / j.tasks[0].demand_bps;
        for t in &j.tasks {
            assert_eq!(t.memory_bytes, 4e9 * f64::from(t.cores));
            assert!((t.demand_bps / f64::from(t.cores) / per_core - 1.0).abs() < 1e-12);
            assert!((t.estimate_bps.unwrap() / t.demand_bps / err - 1.0).abs() < 1e-12);
            assert!((t.peer as usize) < topo.hosts().len());
        }
    }
    let ls = w.jobs.iter().filter(|j| j.latency_sensitive).count() as f64 / w.jobs.len() as f64;
    let sd = (0.3 * 0.7 / w.jobs.len() as f64).sqrt();
    assert!((ls - 0.3).abs() < 4.0 * sd, "{ls}");
    // The median per-core demand is 10 Mbit/s (log-normal, 5% of jobs 12x):
    // the share of jobs below it is 0.95 x 0.5 + 0.05 x P(Z < -ln 12 = -2.485) = 0.4753.
    let below = w.jobs.iter().filter(|j| j.tasks[0].demand_bps / f64::from(j.tasks[0].cores) < 10e6).count() as f64
        / w.jobs.len() as f64;
    let q = 0.95 * 0.5 + 0.05 * 0.00648;
    assert!((below - q).abs() < 4.0 * (q * (1.0 - q) / w.jobs.len() as f64).sqrt(), "{below}");
}

#[test]
fn missing_estimates_and_bad_parameters() {
    let topo = cluster();
    let p = ClusterJobs { missing_estimate_share: 1.0, ..ClusterJobs::default() };
    let w = p.generate(&topo, 3600.0, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    assert!(w.jobs.iter().flat_map(|j| &j.tasks).all(|t| t.estimate_bps.is_none()));
    let bad = ClusterJobs { heavy_share: 1.5, ..ClusterJobs::default() };
    let e = bad.generate(&topo, 3600.0, &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err();
    assert!(matches!(&e, GenError::InvalidParameter { name, .. } if name == "heavy-share"), "{e}");
    let e = ClusterJobs::default().generate(&topo, 0.0, &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err();
    assert!(e.to_string().contains("duration"), "{e}");
}
