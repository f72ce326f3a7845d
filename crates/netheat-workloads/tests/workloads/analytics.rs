//! The two-stage analytical query.

use netheat_topology::{StorageDevice, StorageKind};
use netheat_workloads::apps::analytics::AnalyticalQuery;
use netheat_workloads::storage::WriteModel;

use crate::{assert_close, run_tasks, two_tier_with_storage, G};

#[test]
fn stages_chain_reads_compute_and_writes() {
    // Rack 1 hosts have a typical SSD and RAM store; worker 0, storage
    // host 3, shuffle host 2.
    let topo = two_tier_with_storage(
        2,
        10.0 * G,
        10.0 * G,
        vec![vec![], vec![StorageDevice::typical(StorageKind::Ssd), StorageDevice::typical(StorageKind::Ram)]],
    );
    let q = AnalyticalQuery {
        partition_bytes: 1e6,
        compute1_s: 1e-3,
        intermediate_bytes: 2e6,
        compute2_s: 2e-3,
        output_bytes: 0.5e6,
        storage_kind: StorageKind::Ssd,
        write_model: WriteModel::WriteBack { ack_s: 20e-6 },
    };
    let rec = &run_tasks(&topo, vec![(0.0, q.task(&topo, &[0], &[3], &[2]).unwrap())])[0];
    let expected = (100e-6 + 8e6 / 4e9) // SSD read
        + 0.8e-3 // partition 3 -> 0
        + 1e-3 // compute
        + 1.6e-3 + 20e-6 // intermediate 0 -> 2, RAM ack
        + (1e-6 + 16e6 / 80e9) // RAM read
        + 1.6e-3 // 2 -> 0
        + 2e-3 // compute
        + 0.4e-3 + 20e-6; // output 0 -> 3, ack
    assert_close(rec.duration_s(), expected, 1e-12);
}
