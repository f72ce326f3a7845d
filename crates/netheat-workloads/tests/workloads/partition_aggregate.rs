//! Partition-aggregate: hand-computed task times on tiny two-tier fabrics.

use netheat_workloads::apps::partition_aggregate::PartitionAggregate;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier, G};

#[test]
fn one_stage_is_request_plus_compute_plus_response() {
    // 2 racks x 4 hosts, 10 Gbps. Aggregator 0 queries hosts 1, 2, 3.
    let topo = two_tier(2, 4, 10.0 * G, 10.0 * G);
    let pa = PartitionAggregate {
        request_bytes: 1e6,
        response_bytes: 2e6,
        selectivity: 0.5,
        compute_s: 1e-3,
        ..PartitionAggregate::default()
    };
    let dag = pa.one_stage(&topo, 0).unwrap();
    assert_eq!(dag.num_flows(), 6);
    let rec = &run_tasks(&topo, vec![(0.5, dag)])[0];
    // Requests share the aggregator's 10G uplink: 3 x 8 Mb / 10 Gbps =
    // 2.4 ms; compute 1 ms; three 1 MB responses share its downlink: 2.4 ms.
    assert_close(rec.start_s, 0.5, 0.0);
    assert_close(rec.duration_s(), 2.4e-3 + 1e-3 + 2.4e-3, 1e-12);
    assert_close(rec.step_finish_s[0] - 0.5, 2.4e-3, 1e-12);
}

#[test]
fn two_stage_waits_for_every_mid_level_aggregator() {
    // 3 racks x 2 hosts; top 0, mid-level aggregators 2 and 4 query 3 and 5.
    let topo = two_tier(3, 2, 10.0 * G, 40.0 * G);
    let pa = PartitionAggregate {
        request_bytes: 1e6,
        response_bytes: 2e6,
        selectivity: 1.0,
        compute_s: 1e-3,
        mid_aggregators: 2,
        mid_compute_s: 0.5e-3,
        mid_response_bytes: 3e6,
    };
    let dag = pa.two_stage(&topo, 0, &[2, 4]).unwrap();
    assert_eq!(dag.num_flows(), 8);
    let rec = &run_tasks(&topo, vec![(0.0, dag)])[0];
    // top->mids share host 0's uplink (1.6 ms), mid->worker 0.8 ms, compute
    // 1 ms, worker->mid 1.6 ms, mid compute 0.5 ms, two 3 MB answers share
    // host 0's downlink (4.8 ms).
    assert_close(rec.duration_s(), 1.6e-3 + 0.8e-3 + 1e-3 + 1.6e-3 + 0.5e-3 + 4.8e-3, 1e-12);
}

#[test]
fn mid_level_aggregators_are_in_distinct_other_racks() {
    let topo = two_tier(40, 3, 10.0 * G, 10.0 * G);
    let pa = PartitionAggregate::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mids = pa.pick_mids(&topo, 5, &mut rng).unwrap();
    assert_eq!(mids.len(), 30);
    let mut racks: Vec<u32> = mids.iter().map(|m| m / 3).collect();
    racks.sort_unstable();
    racks.dedup();
    assert_eq!(racks.len(), 30);
    assert!(!racks.contains(&1));
    let dag = pa.random_two_stage(&topo, &mut rng).unwrap();
    // Per mid: request, 2 x (request, response), answer.
    assert_eq!(dag.num_flows(), 30 * 6);
    assert!(pa.pick_mids(&two_tier(10, 3, G, G), 0, &mut rng).is_err());
}
