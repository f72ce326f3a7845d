//! Reusing the state of completed flows (`SimConfig::recycle_finished`).

use super::*;
use netheat_engine::{Controller, Ctx};

/// Keeps `k` flows in flight until `n` have been added: each completion adds
/// the next flow, of a size and path that vary with its id, over three
/// 10 Gbps links (one shared by every third flow with the others).
struct Stream {
    n: u64,
    next: u64,
    done: Vec<(u64, f64)>,
}

impl Stream {
    fn spec(id: u64, now: f64) -> FlowSpec {
        let bytes = 1e8 * (1 + id % 7) as f64;
        let path: &[LinkId] = match id % 3 {
            0 => &[0, 2],
            1 => &[1, 2],
            _ => &[0],
        };
        flow(id, bytes, now, path)
    }
}

impl Controller for Stream {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, f: &FlowRecord) {
        self.done.push((f.id, f.finish_s));
        if self.next < self.n {
            ctx.add_flow(Self::spec(self.next, ctx.now())).unwrap();
            self.next += 1;
        }
    }
}

fn stream(recycle: bool, n: u64, k: u64) -> (Vec<(u64, f64)>, SimResult) {
    let cfg = SimConfig { recycle_finished: recycle, check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G; 3]), None, cfg);
    for id in 0..k {
        sim.add_flow(Stream::spec(id, 0.0)).unwrap();
    }
    let mut c = Stream { n, next: k, done: vec![] };
    let r = sim.run_with(&mut c);
    (c.done, r)
}

#[test]
fn recycled_slots_give_the_same_completions() {
    let (plain, r0) = stream(false, 3000, 12);
    let (reused, r1) = stream(true, 3000, 12);
    assert_eq!(plain.len(), 3000);
    // Same completions, in the same order, at the same times to the bit.
    assert_eq!(plain, reused);
    assert_eq!(r0.stats.flows_completed, 3000);
    assert_eq!(r1.stats.flows_completed, 3000);
    // Every flow has its state without reuse; with it, a few 64-slot blocks.
    assert_eq!(r0.stats.flow_slots, 3000);
    assert!(r1.stats.flow_slots <= 4 * 64, "{} slots", r1.stats.flow_slots);
    // Records: every flow without reuse, none (all completed) with it.
    assert_eq!(r0.flows.len(), 3000);
    assert!(r1.flows.is_empty());
}

#[test]
fn one_flow_at_a_time_finishes_each_second() {
    // 10 Gbit flows one after the other on a 10 Gbps link: flow i ends at
    // i + 1 s, whichever slot it reuses.
    struct Seq(u64, Vec<f64>);
    impl Controller for Seq {
        fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, f: &FlowRecord) {
            self.1.push(f.finish_s);
            if f.id + 1 < self.0 {
                ctx.add_flow(flow(f.id + 1, 1.25e9, ctx.now(), &[0])).unwrap();
            }
        }
    }
    let cfg = SimConfig { recycle_finished: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, cfg);
    sim.add_flow(flow(0, 1.25e9, 0.0, &[0])).unwrap();
    let mut c = Seq(500, vec![]);
    let r = sim.run_with(&mut c);
    assert_eq!(c.1.len(), 500);
    for (i, &t) in c.1.iter().enumerate() {
        assert_close(t, (i + 1) as f64, 1e-9 * (i + 1) as f64);
    }
    assert!(r.stats.flow_slots <= 3 * 64, "{} slots", r.stats.flow_slots);
}

/// On flow 1's completion, asks 0.5 s later what the engine knows of it,
/// then adds a new flow with the same id.
struct Ask {
    fin: Vec<f64>,
    sent: Vec<Option<f64>>,
    readd: Option<Result<(), String>>,
}

impl Controller for Ask {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, f: &FlowRecord) {
        self.fin.push(f.finish_s);
        if f.id == 1 && self.sent.is_empty() {
            // Still known during the instant of its completion.
            self.sent.push(ctx.flow_bytes_sent(1));
            let t = ctx.now() + 0.5;
            ctx.schedule_timer(t, 0).unwrap();
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, _token: u64) {
        self.sent.push(ctx.flow_bytes_sent(1));
        let t = ctx.now();
        self.readd = Some(ctx.add_flow(flow(1, 1.25e9, t, &[0])).map_err(|e| e.to_string()));
    }
}

#[test]
fn a_completed_flow_is_forgotten_after_its_instant() {
    for recycle in [false, true] {
        let cfg = SimConfig { recycle_finished: recycle, ..SimConfig::default() };
        let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, cfg);
        sim.add_flow(flow(1, 1.25e9, 0.0, &[0])).unwrap();
        let mut c = Ask { fin: vec![], sent: vec![], readd: None };
        sim.run_with(&mut c);
        let readd = c.readd.clone().expect("timer fired");
        if recycle {
            // Unknown 0.5 s later; its id is free again, and the new flow
            // (10 Gbit from 1.5 s) ends at 2.5 s.
            assert_eq!(c.sent, vec![Some(1.25e9), None]);
            assert_eq!(readd, Ok(()));
            assert_eq!(c.fin.len(), 2);
            assert_close(c.fin[1], 2.5, 1e-9);
        } else {
            assert_eq!(c.sent, vec![Some(1.25e9), Some(1.25e9)]);
            assert!(readd.unwrap_err().contains('1'));
            assert_eq!(c.fin.len(), 1);
        }
    }
}
