//! Controller hooks: chained stages, timers, groups, rate queries.

use super::*;
use netheat_engine::{Controller, Ctx};

/// Stage A on link 0; when it completes, a 1 s "compute" timer; then stage B
/// on link 1.
struct Chain {
    b_started: Option<f64>,
    seen_rate: Option<(f64, f64, f64)>,
}

impl Controller for Chain {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if flow.id == 1 {
            let t = ctx.now() + 1.0;
            ctx.schedule_timer(t, 7).unwrap();
        }
    }
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        match token {
            7 => {
                self.b_started = Some(ctx.now());
                ctx.add_flow(flow(2, 2.5e9, ctx.now(), &[1])).unwrap();
            }
            8 => {
                self.seen_rate = Some((ctx.link_rate_bps(0), ctx.link_utilization(0), ctx.flow_rate_bps(1).unwrap()));
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn two_stage_chain_with_compute_timer() {
    // A: 10 Gbit at 10G -> done at 1.0. Timer at 2.0 starts B: 20 Gbit at 5G
    // -> done at 6.0.
    let mut sim = Simulation::new(Network::new(vec![10.0 * G, 5.0 * G]), None, SimConfig::default());
    sim.add_flow(flow(1, 1.25e9, 0.0, &[0])).unwrap();
    sim.schedule_timer(0.5, 8).unwrap();
    let mut c = Chain { b_started: None, seen_rate: None };
    let r = sim.run_with(&mut c);
    assert_eq!(c.b_started, Some(2.0));
    assert_eq!(c.seen_rate, Some((10.0 * G, 1.0, 10.0 * G)));
    assert_close(rec(&r, 2).start_s, 2.0, 0.0);
    assert_close(rec(&r, 2).finish_s, 6.0, 1e-9);
    assert_close(r.end_s, 6.0, 1e-9);
}

struct Groups {
    done: Vec<(u64, f64)>,
}

impl Controller for Groups {
    fn on_group_complete(&mut self, ctx: &mut Ctx<'_, '_>, group: u64) {
        self.done.push((group, ctx.now()));
        if group == 1 {
            // Replication pipeline: the next hop starts when the group ends.
            ctx.add_flow(flow(10, 1.25e9, ctx.now(), &[1])).unwrap();
            ctx.register_group(2, &[10]).unwrap();
        }
    }
}

#[test]
fn group_completion_fires_after_last_member() {
    // Flows of 10, 20, 30 Gbit on one 10G link finish at 3, 5, 6 (see
    // maxmin.rs), so group 1 completes at 6; flow 10 (10 Gbit on its own
    // 10G link) then finishes at 7, completing group 2.
    let mut sim = Simulation::new(Network::new(vec![10.0 * G, 10.0 * G]), None, SimConfig::default());
    for (id, k) in [(1, 1.0), (2, 2.0), (3, 3.0)] {
        sim.add_flow(flow(id, k * 1.25e9, 0.0, &[0])).unwrap();
    }
    sim.register_group(1, &[1, 2, 3]).unwrap();
    let mut c = Groups { done: vec![] };
    let r = sim.run_with(&mut c);
    assert_eq!(c.done.len(), 2);
    assert_eq!(c.done[0].0, 1);
    assert_close(c.done[0].1, 6.0, 1e-9);
    assert_eq!(c.done[1].0, 2);
    assert_close(c.done[1].1, 7.0, 1e-9);
    assert_close(rec(&r, 10).finish_s, 7.0, 1e-9);
}

struct Mover;
impl Controller for Mover {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, _token: u64) {
        ctx.rebind_explicit(1, vec![1]).unwrap();
    }
}

#[test]
fn rebinding_moves_a_running_flow() {
    // Flows 1 and 2 share link 0 (10G, 5G each). At t=1 flow 1 moves to link 1
    // (10G): it has 15 of 20 Gbit left -> 1 + 1.5 = 2.5; flow 2 has sent 5 of
    // 20 and then runs at 10G -> 1 + 1.5 = 2.5.
    let mut sim = Simulation::new(Network::new(vec![10.0 * G, 10.0 * G]), None, SimConfig::default());
    sim.add_flows([flow(1, 2.5e9, 0.0, &[0]), flow(2, 2.5e9, 0.0, &[0])]).unwrap();
    sim.schedule_timer(1.0, 0).unwrap();
    let r = sim.run_with(&mut Mover);
    assert_close(rec(&r, 1).finish_s, 2.5, 1e-9);
    assert_close(rec(&r, 2).finish_s, 2.5, 1e-9);
}

/// Reads flow 1's bytes sent at each timer.
struct BytesAt(Vec<(f64, Option<f64>)>);

impl Controller for BytesAt {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, _: u64) {
        self.0.push((ctx.now(), ctx.flow_bytes_sent(1)));
    }
}

#[test]
fn bytes_sent_are_exact_between_rate_changes() {
    // Flow 1 (1.25 GB) starts at 0.1 s, alone on 10G until flow 2 (250 MB)
    // joins at 0.6 s (625 MB sent); then 5G each until flow 2 is done at
    // 1.0 s; then 10G again: flow 1 has 625 + 250 = 875 MB at 1.0 s and
    // finishes at 1.0 + 0.3 = 1.3 s. Reads: before its start, mid-way at
    // each rate, and after the end.
    let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, SimConfig::default());
    sim.add_flow(flow(1, 1.25e9, 0.1, &[0])).unwrap();
    sim.add_flow(flow(2, 2.5e8, 0.6, &[0])).unwrap();
    for t in [0.05, 0.35, 0.8, 1.1, 1.5] {
        sim.schedule_timer(t, 0).unwrap();
    }
    let mut c = BytesAt(Vec::new());
    let r = sim.run_with(&mut c);
    assert_close(rec(&r, 1).finish_s, 1.3, 1e-9);
    let want = [0.0, 0.25 * 1.25e9, 0.5 * 1.25e9 + 0.2 * 0.625e9, 8.75e8 + 0.1 * 1.25e9, 1.25e9];
    assert_eq!(c.0.len(), 5);
    for ((_, got), w) in c.0.iter().zip(want) {
        assert_close(got.expect("known flow"), w, 1e-3);
    }
}

/// Records the order of timer callbacks; timer 1 schedules more for now.
struct SameTime {
    order: Vec<(u64, f64)>,
}

impl Controller for SameTime {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        self.order.push((token, ctx.now()));
        if token == 1 {
            // Queued during the instant for the same time: after timers 2
            // and 3 (queued before the run), in the order they are queued.
            ctx.schedule_timer(ctx.now(), 10).unwrap();
            ctx.schedule_timer(ctx.now(), 11).unwrap();
            ctx.schedule_timer(ctx.now() + 1.0, 12).unwrap();
        }
        if token == 10 {
            ctx.schedule_timer(ctx.now(), 20).unwrap();
        }
    }
}

#[test]
fn events_queued_for_now_run_after_those_queued_before() {
    let mut sim = Simulation::new(Network::new(vec![G]), None, SimConfig::default());
    for (t, k) in [(1.0, 1), (1.0, 2), (1.0, 3), (0.5, 4)] {
        sim.schedule_timer(t, k).unwrap();
    }
    let mut c = SameTime { order: Vec::new() };
    let _ = sim.run_with(&mut c);
    let want = [(4, 0.5), (1, 1.0), (2, 1.0), (3, 1.0), (10, 1.0), (11, 1.0), (20, 1.0), (12, 2.0)];
    assert_eq!(c.order, want);
}
