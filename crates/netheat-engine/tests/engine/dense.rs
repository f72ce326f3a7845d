//! Dense mode (classes of flows with one rate per bottleneck group) gives
//! the same allocation and completion times as the local repair.

use super::*;
use netheat_engine::DenseMode;

fn run_mode(caps: Vec<f64>, flows: Vec<FlowSpec>, dense: DenseMode) -> SimResult {
    let cfg = SimConfig { check_invariants: true, dense, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(caps), None, cfg);
    sim.add_flows(flows).unwrap();
    sim.run()
}

/// The hand-computed case: three flows of 1, 2 and 3 x 1.25 GB on
/// one 10 Gbps link finish at 3, 5 and 6 s; in dense mode all three form
/// one class whose members finish by the class's virtual clock.
#[test]
fn one_class_on_one_link_finishes_at_3_5_6() {
    let fl = vec![flow(0, 1.25e9, 0.0, &[0]), flow(1, 2.5e9, 0.0, &[0]), flow(2, 3.75e9, 0.0, &[0])];
    let r = run_mode(vec![10.0 * G], fl, DenseMode::Always);
    assert!(r.stats.dense_instants > 0, "{:?}", r.stats);
    assert_close(rec(&r, 0).finish_s, 3.0, 1e-9);
    assert_close(rec(&r, 1).finish_s, 5.0, 1e-9);
    assert_close(rec(&r, 2).finish_s, 6.0, 1e-9);
}

/// Completions due at one instant in several groups: four 10 Gbps links,
/// each with four 10 Gbit flows from t = 0 (2.5 Gbps each) and a 20 Gbit
/// flow from t = 1 (then 2 Gbps each). The sixteen small flows, one group
/// per link, all finish at 4.75 s; each big flow then runs alone and
/// finishes at 6 s. Dense mode gives the local repair's times.
#[test]
fn simultaneous_completions_in_several_groups() {
    let mut fl = Vec::new();
    for l in 0..4u32 {
        for k in 0..4u64 {
            fl.push(flow(u64::from(l) * 10 + k, 1.25e9, 0.0, &[l]));
        }
    }
    for l in 0..4u32 {
        fl.push(flow(100 + u64::from(l), 2.5e9, 1.0, &[l]));
    }
    let caps = vec![10.0 * G; 4];
    let dense = run_mode(caps.clone(), fl.clone(), DenseMode::Always);
    let local = run_mode(caps, fl, DenseMode::Off);
    assert!(dense.stats.dense_instants > 0, "{:?}", dense.stats);
    // By t = 1 a small flow has sent 2.5 Gbit; then 2 Gbps each (five
    // flows): 7.5 Gbit left takes 3.75 s -> 4.75 s.
    for r in [&dense, &local] {
        for l in 0..4u64 {
            for k in 0..4 {
                assert_close(rec(r, l * 10 + k).finish_s, 4.75, 1e-9);
            }
            // The big flow: 2 Gbps over [1, 4.75) = 7.5 Gbit of 20, then
            // alone at 10 Gbps: 12.5 Gbit in 1.25 s.
            assert_close(rec(r, 100 + l).finish_s, 6.0, 1e-9);
        }
    }
    assert_same_finish(&dense, &local);
}

/// Dense mode and the local repair agree on every flow's completion time,
/// bytes and every link's carried bytes per window; dense mode is checked
/// against a from-scratch allocation after every instant
/// (`check_invariants`) and leaves for the local repair at each capacity
/// change, then comes back.
fn same_as_local(c: &super::invariants::Case) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prelude::*;
    let a = super::invariants::simulate_mode(c, DenseMode::Off);
    let b = super::invariants::simulate_mode(c, DenseMode::Always);
    prop_assert_eq!(a.stats.dense_instants, 0);
    if c.changes.is_empty() {
        prop_assert!(b.stats.dense_instants > 0);
    }
    for (x, y) in a.flows.iter().zip(&b.flows) {
        let tol = 1e-9 * x.finish_s.abs().max(1.0);
        prop_assert_eq!(x.finished(), y.finished(), "flow {}", x.id);
        if x.finished() {
            prop_assert!((x.finish_s - y.finish_s).abs() <= tol, "flow {}: {} vs {}", x.id, x.finish_s, y.finish_s);
        }
        prop_assert!((x.bytes_delivered - y.bytes_delivered).abs() <= 1e-6 * x.bytes.max(1.0));
    }
    for l in 0..c.caps.len() as u32 {
        let (p, q) = (a.link_windows.total_bytes(l), b.link_windows.total_bytes(l));
        prop_assert!((p - q).abs() <= 1e-6 * p.max(1.0), "link {}: {} vs {}", l, p, q);
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn small_cases_match_the_local_repair(c in super::invariants::case()) {
        same_as_local(&c)?;
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    #[test]
    fn large_cases_match_the_local_repair(c in super::invariants::large_case()) {
        same_as_local(&c)?;
    }
}

/// A two-tier-like network: `racks x hosts` hosts with 1 Gbps links and one
/// 2:1-oversubscribed uplink and downlink per rack; explicit routes.
fn two_tier_flows(racks: u32, hosts: u32, n: u64, seed: u64) -> (Vec<f64>, Vec<FlowSpec>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let nh = racks * hosts;
    let mut caps = vec![G; 2 * nh as usize];
    caps.extend(std::iter::repeat_n(hosts as f64 * G / 2.0, 2 * racks as usize));
    let mut flows = Vec::new();
    for i in 0..n {
        let s = rng.gen_range(0..nh);
        let mut d = rng.gen_range(0..nh - 1);
        if d >= s {
            d += 1;
        }
        let (rs, rd) = (s / hosts, d / hosts);
        let path: Vec<u32> = if rs == rd { vec![s, nh + d] } else { vec![s, 2 * nh + rs, 2 * nh + racks + rd, nh + d] };
        let start = if i < n * 9 / 10 { 0.0 } else { rng.gen_range(0.0..0.02) };
        let mut f = FlowSpec::new(i, s, d, rng.gen_range(1e4..2e6), start, Route::Explicit(path));
        if i % 5 == 0 {
            f = f.with_weight(2.0);
        }
        if i % 17 == 0 {
            f = f.with_rate_cap(0.02 * G);
        }
        if i % 97 == 0 {
            f = f.with_priority(-1);
        }
        flows.push(f);
    }
    (caps, flows)
}

/// Every flow finishes at the same time in both runs, within 1e-9
/// relative.
#[track_caller]
fn assert_same_finish(a: &SimResult, b: &SimResult) {
    for (x, y) in a.flows.iter().zip(&b.flows) {
        let tol = 1e-9 * x.finish_s;
        assert!((x.finish_s - y.finish_s).abs() <= tol, "flow {}: {} vs {}", x.id, x.finish_s, y.finish_s);
    }
}

fn run_batch(dense: DenseMode, check: bool) -> SimResult {
    let (caps, flows) = two_tier_flows(16, 8, 1500, 3);
    let cfg = SimConfig { check_invariants: check, dense, window_s: 0.005, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(caps), None, cfg);
    sim.add_flows(flows).unwrap();
    sim.run()
}

/// With the default (`Auto`), 1,500 flows started at once on an
/// oversubscribed two-tier network switch the engine to dense mode after
/// the first repair; completion times, delivered bytes and every link's
/// bytes in every 5 ms window equal those of the local repair alone.
#[test]
fn auto_mode_takes_a_dense_batch_and_changes_nothing() {
    let off = run_batch(DenseMode::Off, false);
    let auto = run_batch(DenseMode::Auto, false);
    assert_eq!(off.stats.dense_entries, 0);
    assert_eq!(auto.stats.dense_entries, 1, "{:?}", auto.stats);
    assert!(auto.stats.dense_instants > 1000, "{:?}", auto.stats);
    assert!(auto.flows.iter().all(|f| f.finished()));
    assert_same_finish(&off, &auto);
    let (a, b): (Vec<_>, Vec<_>) = (off.link_windows.iter().collect(), auto.link_windows.iter().collect());
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(&b) {
        assert_eq!((p.link, p.window), (q.link, q.window));
        assert!((p.bytes - q.bytes).abs() <= 1e-6 * p.bytes.max(1.0), "{p:?} vs {q:?}");
    }
    // The same run checked against a from-scratch allocation at every
    // instant (slower), and bit-for-bit repeatable.
    let checked = run_batch(DenseMode::Auto, true);
    for (x, y) in auto.flows.iter().zip(&checked.flows) {
        assert_eq!(x.finish_s.to_bits(), y.finish_s.to_bits());
    }
}

/// Reads a flow's rate and progress and a link's load at a timer, then
/// moves another flow to a higher priority class and caps a third.
struct Probe(Vec<(f64, f64, f64)>);
impl netheat_engine::Controller for Probe {
    fn on_flow_complete(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, flow: &FlowRecord) {
        // Completions do not make the engine leave dense mode: these
        // queries read the classes' clocks.
        if flow.id % 100 == 1 && ctx.flow_rate_bps(3).unwrap() > 0.0 {
            let rate = ctx.flow_rate_bps(3).unwrap();
            let sent = ctx.flow_bytes_sent(3).unwrap();
            self.0.push((rate, sent, ctx.link_rate_bps(2 * 128 + 1)));
        }
    }
    fn on_timer(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, token: u64) {
        let rate = ctx.flow_rate_bps(3).unwrap();
        let sent = ctx.flow_bytes_sent(3).unwrap();
        self.0.push((rate, sent, ctx.link_rate_bps(2 * 128 + 1)));
        if token == 0 {
            ctx.set_priority(7, -5).unwrap();
            ctx.set_rate_cap(11, Some(0.01 * G)).unwrap();
        }
    }
}

/// In dense mode, rate and progress queries answer from the classes'
/// virtual clocks, and a priority or cap change makes the engine leave
/// dense mode (every flow gets its rate back) and come back: both give the
/// same answers and completion times as the local repair.
#[test]
fn queries_and_changes_in_dense_mode_match_the_local_repair() {
    let run = |dense| {
        let (caps, flows) = two_tier_flows(16, 8, 1500, 5);
        let cfg = SimConfig { check_invariants: true, dense, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::new(caps), None, cfg);
        sim.add_flows(flows).unwrap();
        sim.schedule_timer(0.004, 0).unwrap();
        sim.schedule_timer(0.009, 1).unwrap();
        let mut p = Probe(Vec::new());
        let r = sim.run_with(&mut p);
        (r, p.0)
    };
    let (off, po) = run(DenseMode::Off);
    let (on, pd) = run(DenseMode::Always);
    assert!(on.stats.dense_entries >= 2, "{:?}", on.stats);
    assert!(po.len() > 2, "{po:?}");
    assert_eq!(po.len(), pd.len());
    for (a, b) in po.iter().zip(&pd) {
        assert!(a.0 > 0.0 && a.1 > 0.0 && a.2 > 0.0, "{a:?}");
        assert_close(b.0, a.0, 1e-6 * a.0);
        assert_close(b.1, a.1, 1e-6 * a.1);
        assert_close(b.2, a.2, 1e-6 * a.2);
    }
    assert_same_finish(&off, &on);
}

/// A burst of 1,000 equal flows on one shared link makes `Auto` enter
/// dense mode; 3,000 long flows, each bottlenecked on its own link (so every
/// class holds one flow and a completion changes no other rate), make it
/// costlier than local repairs, and the engine leaves after a few instants.
/// Completion times equal those of the local repair throughout.
#[test]
fn auto_mode_leaves_when_classes_do_not_aggregate() {
    let run = |dense| {
        let n_long = 3000u32;
        // Link 0: shared by the burst; links 1..=n_long: one per long flow;
        // link n_long + 1: crossed by every long flow, never full.
        let mut caps = vec![10.0 * G];
        caps.extend(std::iter::repeat_n(G, n_long as usize));
        caps.push(1e4 * G);
        let mut flows: Vec<FlowSpec> = (0..1000).map(|i| flow(i, 1e5, 0.0, &[0])).collect();
        for i in 0..n_long {
            flows.push(flow(1000 + u64::from(i), 1e6 + 1e3 * f64::from(i), 0.0, &[1 + i, n_long + 1]));
        }
        let cfg = SimConfig { dense, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::new(caps), None, cfg);
        sim.add_flows(flows).unwrap();
        sim.run()
    };
    let (off, auto) = (run(DenseMode::Off), run(DenseMode::Auto));
    assert_eq!(auto.stats.dense_entries, 1, "{:?}", auto.stats);
    assert_eq!(auto.stats.dense_cost_exits, 1, "{:?}", auto.stats);
    assert!(auto.stats.dense_instants < 64, "{:?}", auto.stats);
    assert!(auto.flows.iter().all(|f| f.finished()));
    assert_same_finish(&off, &auto);
}

/// Adds a follow-up flow when a flow of the batch completes, adds flows and
/// registers a group from a timer, and records group completions: flows a
/// controller adds are arrivals, and timers and group callbacks keep the
/// engine in dense mode.
struct Chain {
    next: u64,
    path_of: Vec<Vec<u32>>,
    groups: Vec<(u64, f64)>,
}
impl netheat_engine::Controller for Chain {
    fn on_flow_complete(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, flow: &FlowRecord) {
        if flow.id.is_multiple_of(3) && flow.id < 1500 {
            let p = self.path_of[flow.id as usize].clone();
            let f = FlowSpec::new(self.next, flow.src, flow.dst, 2e5, ctx.now(), Route::Explicit(p));
            self.next += 1;
            ctx.add_flow(f).unwrap();
        }
    }
    fn on_timer(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, token: u64) {
        let mut ids = Vec::new();
        for k in 0..50u64 {
            let p = self.path_of[(token * 50 + k) as usize].clone();
            let f = FlowSpec::new(self.next, 0, 1, 3e5, ctx.now(), Route::Explicit(p));
            ids.push(self.next);
            self.next += 1;
            ctx.add_flow(f).unwrap();
        }
        ctx.register_group(token, &ids).unwrap();
        if token < 9 {
            ctx.schedule_timer(ctx.now() + 0.002, token + 1).unwrap();
        }
    }
    fn on_group_complete(&mut self, ctx: &mut netheat_engine::Ctx<'_, '_>, group: u64) {
        self.groups.push((group, ctx.now()));
    }
}

#[test]
fn controller_arrivals_timers_and_groups_in_dense_mode() {
    let run = |dense| {
        let (caps, flows) = two_tier_flows(16, 8, 1500, 9);
        let path_of = flows
            .iter()
            .map(|f| match &f.route {
                Route::Explicit(p) => p.clone(),
                _ => unreachable!(),
            })
            .collect();
        let cfg = SimConfig { check_invariants: true, dense, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::new(caps), None, cfg);
        sim.add_flows(flows).unwrap();
        sim.schedule_timer(0.001, 0).unwrap();
        let mut c = Chain { next: 10_000, path_of, groups: Vec::new() };
        let r = sim.run_with(&mut c);
        (r, c.groups)
    };
    let (off, go) = run(DenseMode::Off);
    let (on, gd) = run(DenseMode::Always);
    assert_eq!(on.stats.dense_entries, 1, "timers and callbacks keep dense mode: {:?}", on.stats);
    assert_eq!(off.flows.len(), on.flows.len());
    assert!(off.flows.len() > 2000);
    assert_same_finish(&off, &on);
    assert_eq!(go.len(), gd.len());
    assert!(go.len() >= 5);
    for (a, b) in go.iter().zip(&gd) {
        assert_eq!(a.0, b.0);
        assert_close(b.1, a.1, 1e-9 * a.1);
    }
}
