//! Cluster-file-system writes through capped replication pipelines.

use netheat_topology::{StorageDevice, StorageKind, Topology};
use netheat_workloads::apps::cfs::CfsWrite;
use netheat_workloads::GenError;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier_with_storage, G};

fn hdd(write_bps: f64) -> StorageDevice {
    StorageDevice { write_bps, ..StorageDevice::typical(StorageKind::Hdd) }
}

/// 2 racks x 2 hosts, 10 Gbps, every host one HDD writing at 1 Gbps.
fn topo() -> Topology {
    two_tier_with_storage(2, 10.0 * G, 10.0 * G, vec![vec![hdd(G)], vec![hdd(G)]])
}

#[test]
fn three_replica_pipeline_runs_at_disk_speed() {
    let topo = topo();
    let w = CfsWrite { block_bytes: 10e6, ..CfsWrite::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fw = w.task(&topo, 0, 25e6, &mut rng).unwrap();
    assert_eq!(fw.blocks.len(), 3);
    for b in &fw.blocks {
        let mut hs = b.clone();
        hs.sort_unstable();
        hs.dedup();
        assert_eq!(hs.len(), 3);
        assert!(!b.contains(&0));
        assert!(b.iter().any(|&h| h / 2 == 0) && b.iter().any(|&h| h / 2 == 1), "{b:?} spans one rack");
    }
    assert_eq!(fw.dag.num_flows(), 9);
    let rec = &run_tasks(&topo, vec![(0.0, fw.dag)])[0];
    // Blocks of 10, 10 and 5 MB one after the other, each hop streaming at
    // the 1 Gbps disk rate: 80 + 80 + 40 ms.
    assert_close(rec.duration_s(), 0.2, 1e-12);
}

#[test]
fn the_slowest_disk_of_the_chain_sets_the_pace() {
    // Rack 1 disks write at 0.5 Gbps.
    let topo = two_tier_with_storage(2, 10.0 * G, 10.0 * G, vec![vec![hdd(G)], vec![hdd(0.5 * G)]]);
    let w = CfsWrite { block_bytes: 256.0 * 1024.0 * 1024.0, ..CfsWrite::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fw = w.task_with(&topo, 0, 100e6, |_, _, _, _, _| Ok(vec![1, 2, 3]), &mut rng).unwrap();
    let rec = &run_tasks(&topo, vec![(0.0, fw.dag)])[0];
    // One 100 MB block (step 0 is its request); the hop into host 1
    // finishes at 0.8 s, those into rack 1 at 1.6 s.
    assert_eq!(rec.step_finish_s[0], 0.0);
    assert_close(rec.step_finish_s[1], 0.8, 1e-12);
    assert_close(rec.duration_s(), 1.6, 1e-12);
}

#[test]
fn placement_needs_enough_racks() {
    let topo = topo();
    let w = CfsWrite { fault_tolerance: 2, ..CfsWrite::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!(matches!(w.task(&topo, 0, 1e6, &mut rng), Err(GenError::NotEnoughHosts(_))));
    let w = CfsWrite { replicas: 4, ..CfsWrite::default() };
    assert!(w.task(&topo, 0, 1e6, &mut rng).is_err());
}
