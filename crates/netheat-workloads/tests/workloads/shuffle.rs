//! MapReduce shuffles and data-parallel rounds.

use netheat_workloads::apps::shuffle::{DataParallel, Shuffle};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier, G};

#[test]
fn shuffle_completes_with_its_last_flow() {
    // Mappers 0, 1 in rack 0; reducers 2, 3 in rack 1; 15 MB per pair.
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let s = Shuffle { bytes_per_pair: 15e6, mappers: 2, reducers: 2 };
    let rec = &run_tasks(&topo, vec![(0.0, s.task(&topo, &[0, 1], &[2, 3]).unwrap())])[0];
    // Four flows share rack 0's 10G uplink: 4 x 120 Mb / 10 Gbps.
    assert_close(rec.duration_s(), 48e-3, 1e-12);
    assert_eq!(rec.flows, 4);
    assert_eq!(rec.bytes, 60e6);
}

#[test]
fn random_shuffle_uses_distinct_hosts() {
    let topo = two_tier(4, 4, 10.0 * G, 10.0 * G);
    let s = Shuffle { bytes_per_pair: 1.0, mappers: 5, reducers: 3 };
    let dag = s.random_task(&topo, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    assert_eq!(dag.num_flows(), 15);
    assert!(Shuffle { bytes_per_pair: 1.0, mappers: 10, reducers: 7 }
        .random_task(&topo, &mut ChaCha8Rng::seed_from_u64(3))
        .is_err());
}

#[test]
fn data_parallel_rounds_are_separated_by_barriers() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let d = DataParallel { bytes_per_pair: 1e6, compute_s: 1e-3, iterations: 2 };
    let rec = &run_tasks(&topo, vec![(0.0, d.task(&topo, &[0, 1]).unwrap())])[0];
    // Per round: 1 ms compute, then 0->1 and 1->0 in parallel (0.8 ms).
    assert_close(rec.duration_s(), 2.0 * 1.8e-3, 1e-12);
}
