//! Property tests on random small networks: the allocation after every
//! recomputation equals a from-scratch max-min computation, never exceeds a
//! capacity and starves no flow without reason (checked inside the engine by
//! `check_invariants`); bytes are conserved; runs are bit-for-bit repeatable.

use super::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    caps: Vec<f64>,
    flows: Vec<(u8, f64, f64, i32, f64, Option<f64>)>,
    changes: Vec<(f64, usize, u8)>,
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..6).prop_flat_map(|nl| {
        let caps = prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 5.0, 10.0]), nl);
        let flow = (
            1u8..(1u8 << nl),
            1e6f64..1e9,
            (0u32..12).prop_map(|q| q as f64 * 0.25),
            0i32..3,
            prop::sample::select(vec![0.5, 1.0, 2.0]),
            prop::sample::select(vec![None, None, Some(0.0), Some(1.5), Some(4.0)]),
        );
        let flows = prop::collection::vec(flow, 1..14);
        let change = ((0u32..12).prop_map(|q| q as f64 * 0.25 + 0.125), 0..nl, 0u8..3);
        let changes = prop::collection::vec(change, 0..4);
        (caps, flows, changes).prop_map(|(caps, flows, changes)| Case {
            caps: caps.into_iter().map(|c| c * G).collect(),
            flows,
            changes,
        })
    })
}

fn simulate(c: &Case) -> SimResult {
    let cfg = SimConfig { check_invariants: true, window_s: 0.5, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(c.caps.clone()), None, cfg);
    for (i, &(mask, bytes, start, prio, w, cap)) in c.flows.iter().enumerate() {
        let path: Vec<u32> = (0..c.caps.len() as u32).filter(|l| mask & (1 << l) != 0).collect();
        let mut f = flow(i as u64, bytes, start, &path).with_priority(prio).with_weight(w);
        if let Some(cap) = cap {
            f = f.with_rate_cap(cap * G);
        }
        sim.add_flow(f).unwrap();
    }
    for &(t, l, kind) in &c.changes {
        // Fail, halve, or restore to nominal.
        let cap = [0.0, 0.5 * c.caps[l], c.caps[l]][kind as usize];
        sim.schedule_capacity(t, l as u32, cap).unwrap();
    }
    sim.run()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn allocation_invariants_conservation_determinism(c in case()) {
        let a = simulate(&c);
        let b = simulate(&c);
        // Determinism: identical records and telemetry, bit for bit.
        prop_assert_eq!(a.flows.len(), b.flows.len());
        for (x, y) in a.flows.iter().zip(&b.flows) {
            prop_assert_eq!(x.finish_s.to_bits(), y.finish_s.to_bits());
            prop_assert_eq!(x.bytes_delivered.to_bits(), y.bytes_delivered.to_bits());
        }
        prop_assert_eq!(a.link_windows.clone(), b.link_windows.clone());
        prop_assert_eq!(a.stats.clone(), b.stats.clone());
        // Conservation: what each link carried (integrated rates) equals the
        // bytes delivered by the flows crossing it.
        for l in 0..c.caps.len() {
            let sent: f64 = c.flows.iter().zip(&a.flows)
                .filter(|((mask, ..), _)| mask & (1 << l) != 0)
                .map(|(_, r)| r.bytes_delivered)
                .sum();
            let carried = a.link_windows.total_bytes(l as u32);
            prop_assert!((sent - carried).abs() <= 1e-6 * sent.max(1.0),
                "link {}: flows sent {} but link carried {}", l, sent, carried);
        }
        // A finished flow cannot beat its narrowest link; without failures
        // or cap-0 flows everything finishes.
        for ((mask, bytes, ..), r) in c.flows.iter().zip(&a.flows) {
            if r.finished() {
                let min_cap = (0..c.caps.len()).filter(|l| mask & (1 << l) != 0)
                    .map(|l| c.caps[l]).fold(f64::INFINITY, f64::min);
                prop_assert!(r.fct_s >= bytes * 8.0 / min_cap * (1.0 - 1e-9));
                prop_assert_eq!(r.bytes_delivered, *bytes);
            }
        }
        let blocked = c.flows.iter().any(|f| f.5 == Some(0.0));
        if c.changes.is_empty() && !blocked {
            prop_assert!(a.flows.iter().all(|r| r.finished()));
        }
    }
}
