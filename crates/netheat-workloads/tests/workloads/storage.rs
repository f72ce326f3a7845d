//! Storage retrieval and chunk reads/writes with device time.

use netheat_topology::{StorageDevice, StorageKind};
use netheat_workloads::apps::storage_ops::{Retrieval, StorageOps};
use netheat_workloads::storage::WriteModel;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier, two_tier_with_storage, G};

fn ssd_rack1() -> netheat_topology::Topology {
    // Rack 0 (hosts 0, 1) without devices; rack 1 (hosts 2, 3) with a
    // typical SSD: 100 µs access, 500 MB/s read, 450 MB/s write.
    two_tier_with_storage(2, 10.0 * G, 10.0 * G, vec![vec![], vec![StorageDevice::typical(StorageKind::Ssd)]])
}

#[test]
fn retrieval_ends_with_the_last_chunk() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let r = Retrieval { chunk_bytes: 1e6, k: 3, device: None };
    let rec = &run_tasks(&topo, vec![(0.0, r.task(&topo, 0, &[1, 2, 3]).unwrap())])[0];
    // Three chunks share the client's 10G downlink: 3 x 0.8 ms.
    assert_close(rec.duration_s(), 2.4e-3, 1e-12);
}

#[test]
fn retrieval_with_device_reads() {
    let topo = ssd_rack1();
    let r = Retrieval { chunk_bytes: 1e6, k: 3, device: Some(StorageKind::Ssd) };
    let rec = &run_tasks(&topo, vec![(0.0, r.task(&topo, 0, &[1, 2, 3]).unwrap())])[0];
    // Host 1 has no device: its chunk flows at once, alone, 0.8 ms. Hosts
    // 2, 3 read for 100 µs + 8 Mb / 4 Gbps = 2.1 ms, then share the
    // client's downlink: 2 x 0.8 ms. (Step 0 is host 1's zero read delay.)
    assert_close(rec.step_finish_s[1], 0.8e-3, 1e-12);
    assert_close(rec.duration_s(), 2.1e-3 + 1.6e-3, 1e-12);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    assert!(Retrieval { chunk_bytes: 1.0, k: 1, device: Some(StorageKind::Ssd) }.random_task(&topo, &mut rng).is_ok());
    assert!(Retrieval { chunk_bytes: 1.0, k: 3, device: Some(StorageKind::Ssd) }.random_task(&topo, &mut rng).is_err());
}

#[test]
fn reads_and_writes_add_device_time_to_the_transfer() {
    let topo = ssd_rack1();
    let mut ops = StorageOps::new(StorageKind::Ssd);
    let read = ops.op(&topo, 0, 2, 1e6, true).unwrap();
    let write_back = ops.op(&topo, 0, 2, 1e6, false).unwrap();
    ops.write_model = WriteModel::WriteThrough;
    let write_through = ops.op(&topo, 0, 2, 1e6, false).unwrap();
    let recs = run_tasks(&topo, vec![(0.0, read), (1.0, write_back), (2.0, write_through)]);
    assert_close(recs[0].duration_s(), 2.1e-3 + 0.8e-3, 1e-12);
    // Write-back: transfer, then the cache acknowledges after 20 µs.
    assert_close(recs[1].duration_s(), 0.8e-3 + 20e-6, 1e-12);
    // Write-through: transfer, then 100 µs + 8 Mb / 3.6 Gbps on the SSD.
    assert_close(recs[2].duration_s(), 0.8e-3 + 100e-6 + 8e6 / 3.6e9, 1e-12);
}

#[test]
fn random_operations_use_hosts_with_the_device() {
    let topo = ssd_rack1();
    let ops = StorageOps::new(StorageKind::Ssd);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for _ in 0..200 {
        let dag = ops.random_op(&topo, &mut rng).unwrap();
        let flow = dag.steps.iter().find_map(|s| match s {
            netheat_workloads::Step::Flow { src, dst, bytes, .. } => Some((*src, *dst, *bytes)),
            _ => None,
        });
        let (src, dst, bytes) = flow.unwrap();
        let server = if dag.kind == "storage-read" { src } else { dst };
        assert!(server >= 2 && src != dst && (10e3..=10e6).contains(&bytes));
    }
    assert!(StorageOps::new(StorageKind::Hdd).random_op(&topo, &mut rng).is_err());
}
