//! Memcache-like request/response.

use netheat_workloads::apps::memcache::Memcache;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{assert_close, run_tasks, two_tier, G};

#[test]
fn round_trip_is_request_service_response() {
    let topo = two_tier(2, 2, 10.0 * G, 10.0 * G);
    let m = Memcache::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let dags = vec![(0.0, m.task(&topo, 0, 3).unwrap()), (1.0, m.random_task(&topo, &[3], &mut rng).unwrap())];
    let recs = run_tasks(&topo, dags);
    // 400 b and 12,000 b at 10 Gbps around a 10 µs service time.
    for r in &recs {
        assert_close(r.duration_s(), 400.0 / 1e10 + 10e-6 + 12_000.0 / 1e10, 1e-15);
        assert_eq!(r.bytes, 1550.0);
    }
}
