//! Property tests on random networks: the allocation after every
//! recomputation equals a from-scratch max-min computation, never exceeds a
//! capacity and starves no flow without reason (checked inside the engine by
//! `check_invariants`); bytes are conserved; runs are bit-for-bit repeatable.
//! The small cases cover corner cases (priorities, caps, weights, failures);
//! the large ones (up to 200 flows sharing 10-30 links) make the local
//! repair's regions grow over several rounds, widen, and fall back to whole
//! components. A deterministic dense case checks all three paths are taken.

use super::*;
use proptest::prelude::*;

/// (path, bytes, start, priority, weight, cap).
pub(super) type CaseFlow = (Vec<u32>, f64, f64, i32, f64, Option<f64>);

#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) caps: Vec<f64>,
    pub(super) flows: Vec<CaseFlow>,
    pub(super) changes: Vec<(f64, usize, u8)>,
}

fn mask_path(mask: u8, nl: usize) -> Vec<u32> {
    (0..nl as u32).filter(|l| mask & (1 << l) != 0).collect()
}

pub(super) fn case() -> impl Strategy<Value = Case> {
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
        (caps, flows, changes).prop_map(move |(caps, flows, changes)| Case {
            caps: caps.into_iter().map(|c| c * G).collect(),
            flows: flows.into_iter().map(|(m, b, s, p, w, c)| (mask_path(m, nl), b, s, p, w, c)).collect(),
            changes,
        })
    })
}

/// Larger cases: 10-30 links, 30-200 flows on 1-4 distinct random links,
/// so many flows share links and regions of the local repair grow.
pub(super) fn large_case() -> impl Strategy<Value = Case> {
    (10usize..30).prop_flat_map(|nl| {
        let caps = prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 5.0, 10.0]), nl);
        let flow = (
            prop::collection::vec(0..nl as u32, 1..5),
            1e6f64..1e9,
            (0u32..40).prop_map(|q| q as f64 * 0.05),
            prop::sample::select(vec![0, 0, 0, 1, 2]),
            prop::sample::select(vec![1.0, 1.0, 0.5, 2.0, 3.0]),
            prop::sample::select(vec![None, None, None, None, Some(0.0), Some(0.3), Some(1.5), Some(4.0)]),
        );
        let flows = prop::collection::vec(flow, 30..200);
        let change = ((0u32..40).prop_map(|q| q as f64 * 0.05 + 0.025), 0..nl, 0u8..3);
        let changes = prop::collection::vec(change, 0..6);
        (caps, flows, changes).prop_map(|(caps, flows, changes)| Case {
            caps: caps.into_iter().map(|c| c * G).collect(),
            flows: flows
                .into_iter()
                .map(|(mut p, b, s, pr, w, c)| {
                    let mut seen = Vec::new();
                    p.retain(|l| {
                        let new = !seen.contains(l);
                        seen.push(*l);
                        new
                    });
                    (p, b, s, pr, w, c)
                })
                .collect(),
            changes,
        })
    })
}

fn simulate(c: &Case) -> SimResult {
    simulate_mode(c, netheat_engine::DenseMode::Auto)
}

/// Runs a case with invariant checks and the given dense mode.
pub(super) fn simulate_mode(c: &Case, dense: netheat_engine::DenseMode) -> SimResult {
    let cfg = SimConfig { check_invariants: true, window_s: 0.5, dense, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(c.caps.clone()), None, cfg);
    for (i, (path, bytes, start, prio, w, cap)) in c.flows.iter().enumerate() {
        let (bytes, start, prio, w, cap) = (*bytes, *start, *prio, *w, *cap);
        let mut f = flow(i as u64, bytes, start, path).with_priority(prio).with_weight(w);
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

fn check(c: &Case) -> Result<(), TestCaseError> {
    let a = simulate(c);
    let b = simulate(c);
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
        let sent: f64 = c
            .flows
            .iter()
            .zip(&a.flows)
            .filter(|((path, ..), _)| path.contains(&(l as u32)))
            .map(|(_, r)| r.bytes_delivered)
            .sum();
        let carried = a.link_windows.total_bytes(l as u32);
        prop_assert!(
            (sent - carried).abs() <= 1e-6 * sent.max(1.0),
            "link {}: flows sent {} but link carried {}",
            l,
            sent,
            carried
        );
    }
    // A finished flow cannot beat its narrowest link; without failures
    // or cap-0 flows everything finishes.
    for ((path, bytes, ..), r) in c.flows.iter().zip(&a.flows) {
        if r.finished() {
            let min_cap = path.iter().map(|&l| c.caps[l as usize]).fold(f64::INFINITY, f64::min);
            prop_assert!(r.fct_s >= bytes * 8.0 / min_cap * (1.0 - 1e-9));
            prop_assert_eq!(r.bytes_delivered, *bytes);
        }
    }
    let blocked = c.flows.iter().any(|f| f.5 == Some(0.0));
    if c.changes.is_empty() && !blocked {
        prop_assert!(a.flows.iter().all(|r| r.finished()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn allocation_invariants_conservation_determinism(c in case()) {
        check(&c)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn large_shared_networks_match_full_recomputation(c in large_case()) {
        check(&c)?;
    }
}

/// A dense two-tier-like network (every flow crosses two of 8 shared,
/// oversubscribed links) with staggered arrivals: cascades are large, so the
/// repair runs multi-round regions, widens and falls back; every
/// recomputation is checked against a full one.
#[test]
fn dense_cascades_take_every_repair_path() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let hosts = 40u32;
    let mut caps = vec![G; 2 * hosts as usize];
    caps.extend([4.0 * G; 8]);
    let mut flows = Vec::new();
    for i in 0..400u64 {
        let (s, d) = (rng.gen_range(0..hosts), rng.gen_range(0..hosts));
        let (up, down) = (2 * hosts + rng.gen_range(0..4), 2 * hosts + 4 + rng.gen_range(0..4));
        let start = if i < 300 { 0.0 } else { rng.gen_range(0.0..0.5) };
        let mut f = flow(i, rng.gen_range(1e6..5e7), start, &[s, up, down, hosts + d]);
        if i % 7 == 0 {
            f = f.with_weight(2.0);
        }
        if i % 11 == 0 {
            f = f.with_rate_cap(0.05 * G);
        }
        if i % 13 == 0 {
            f = f.with_priority(1);
        }
        flows.push(f);
    }
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(caps), None, cfg);
    sim.add_flows(flows).unwrap();
    sim.schedule_capacity(0.2, 2 * hosts + 1, 2.0 * G).unwrap();
    let r = sim.run();
    assert!(r.flows.iter().all(|f| f.finished()));
    let s = &r.stats;
    assert!(s.repairs > 0 && s.widenings > 0 && s.fallbacks > 0, "{s:?}");
    assert!(s.repair_rounds >= s.repairs + s.fallbacks, "{s:?}");
}

/// Flows over a mix of narrow links and wide ones that stay slack (the
/// repair summarises slack links from their loads instead of scanning
/// them), with running flows changing priority and rate cap and moving to
/// other links: every recomputation is checked against a full one.
type SlackChange = (f64, usize, i32, Option<f64>, Option<Vec<u32>>);
fn slack_case(classes: i32) -> impl Strategy<Value = (Vec<f64>, Vec<CaseFlow>, Vec<SlackChange>)> {
    (8usize..20).prop_flat_map(move |nl| {
        let caps = prop::collection::vec(prop::sample::select(vec![1.0, 2.0, 5.0, 100.0, 1000.0]), nl);
        let flow = (
            prop::collection::vec(0..nl as u32, 1..6),
            1e6f64..1e9,
            (0u32..40).prop_map(|q| q as f64 * 0.05),
            (0..classes).prop_map(|p| p.saturating_sub(1)),
            prop::sample::select(vec![1.0, 1.0, 2.0]),
            prop::sample::select(vec![None, None, None, Some(0.3), Some(4.0)]),
        );
        let flows = prop::collection::vec(flow, 20..120);
        let change = (
            (0u32..40).prop_map(|q| q as f64 * 0.05 + 0.0125),
            0usize..120,
            0..classes,
            prop::sample::select(vec![None, Some(0.5), Some(50.0)]),
            prop::option::of(prop::collection::vec(0..nl as u32, 1..6)),
        );
        (caps, flows, prop::collection::vec(change, 0..20))
    })
}

struct Changer(Vec<SlackChange>);
impl netheat_engine::Controller for Changer {
    fn on_timer(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, token: u64) {
        let (_, f, p, cap, path) = self.0[token as usize].clone();
        // Unknown or finished flows are fine to skip.
        let _ = ctx.set_priority(f as u64, p);
        let _ = ctx.set_rate_cap(f as u64, cap.map(|c| c * G));
        if let Some(mut path) = path {
            path.sort_unstable();
            path.dedup();
            let _ = ctx.rebind_explicit(f as u64, path);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn slack_links_and_running_changes_match_full_recomputation(c in slack_case(4)) {
        check_slack(c)?;
    }

    /// Dozens of classes per link (as task-serialising policies make): the
    /// scan's class map and the sorted segments.
    #[test]
    fn many_classes_per_link_match_full_recomputation(c in slack_case(40)) {
        check_slack(c)?;
    }
}

fn check_slack(c: (Vec<f64>, Vec<CaseFlow>, Vec<SlackChange>)) -> Result<(), TestCaseError> {
    {
        let (caps, flows, changes) = c;
        let caps: Vec<f64> = caps.into_iter().map(|x| x * G).collect();
        let run = || {
            let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
            let mut sim = Simulation::new(Network::new(caps.clone()), None, cfg);
            for (i, (path, bytes, start, prio, w, cap)) in flows.iter().enumerate() {
                let mut p = path.clone();
                p.sort_unstable();
                p.dedup();
                let mut f = flow(i as u64, *bytes, *start, &p).with_priority(*prio).with_weight(*w);
                if let Some(cap) = cap {
                    f = f.with_rate_cap(cap * G);
                }
                sim.add_flow(f).unwrap();
            }
            for (k, ch) in changes.iter().enumerate() {
                sim.schedule_timer(ch.0, k as u64).unwrap();
            }
            sim.run_with(&mut Changer(changes.clone()))
        };
        let (a, b) = (run(), run());
        for (x, y) in a.flows.iter().zip(&b.flows) {
            prop_assert_eq!(x.finish_s.to_bits(), y.finish_s.to_bits());
        }
        prop_assert!(a.flows.iter().all(|r| r.finished()));
    }
    Ok(())
}
