//! Changing a running flow's priority class or rate cap (hand-computed).

use netheat_engine::{Controller, Ctx, Network, SimConfig, Simulation};

use crate::{assert_close, flow, rec, G};

/// `(time, flow, new priority, new cap)`: `None` leaves it, `Some(None)` removes a cap.
type Change = (f64, u64, Option<i32>, Option<Option<f64>>);

/// Applies each change at its time through the controller.
struct At(Vec<Change>);

impl Controller for At {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let (_, id, prio, cap) = self.0[token as usize];
        if let Some(p) = prio {
            ctx.set_priority(id, p).unwrap();
        }
        if let Some(c) = cap {
            ctx.set_rate_cap(id, c).unwrap();
        }
    }
}

fn run_with(caps: Vec<f64>, flows: Vec<netheat_engine::FlowSpec>, mut at: At) -> netheat_engine::SimResult {
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(caps), None, cfg);
    sim.add_flows(flows).unwrap();
    for (i, e) in at.0.iter().enumerate() {
        sim.schedule_timer(e.0, i as u64).unwrap();
    }
    sim.run_with(&mut at)
}

#[test]
fn demoting_a_flow_lets_the_other_finish_first() {
    // Two 1.25 GB flows share 10 Gbps (5 Gbps each). At 0.5 s flow 1 drops to
    // class 1: flow 0 has 0.9375 GB left at 10 Gbps -> done at 1.25 s; flow 1
    // then sends its remaining 0.9375 GB alone -> done at 2.0 s.
    let r = run_with(
        vec![10.0 * G],
        vec![flow(0, 1.25e9, 0.0, &[0]), flow(1, 1.25e9, 0.0, &[0])],
        At(vec![(0.5, 1, Some(1), None)]),
    );
    assert_close(rec(&r, 0).finish_s, 1.25, 1e-9);
    assert_close(rec(&r, 1).finish_s, 2.0, 1e-9);
    assert_eq!(rec(&r, 1).priority, 1);
}

#[test]
fn promoting_a_pending_flow_applies_when_it_arrives() {
    // Flow 1 (class 5) is promoted to class 0 before it starts at 1 s; it then
    // shares equally with flow 0 instead of waiting. Flow 0: 1.25 GB at 10
    // Gbps for 1 s -> 0 left at 1.0 s exactly. Use 2.5 GB: at 1 s 1.25 GB
    // left, then 5 Gbps each: flow 1 (1.25 GB) and flow 0 both finish at 3 s.
    let mut f1 = flow(1, 1.25e9, 1.0, &[0]);
    f1.priority = 5;
    let r = run_with(vec![10.0 * G], vec![flow(0, 2.5e9, 0.0, &[0]), f1], At(vec![(0.2, 1, Some(0), None)]));
    assert_close(rec(&r, 0).finish_s, 3.0, 1e-9);
    assert_close(rec(&r, 1).finish_s, 3.0, 1e-9);
}

#[test]
fn capping_and_uncapping_a_running_flow() {
    // 1.25 GB on 10 Gbps: 0.625 GB by 0.5 s; capped at 5 Gbps it sends 0.3125
    // GB by 1.0 s; uncapped, the last 0.3125 GB take 0.25 s: done at 1.25 s.
    let r = run_with(
        vec![10.0 * G],
        vec![flow(0, 1.25e9, 0.0, &[0])],
        At(vec![(0.5, 0, None, Some(Some(5.0 * G))), (1.0, 0, None, Some(None))]),
    );
    assert_close(rec(&r, 0).finish_s, 1.25, 1e-9);
}

#[test]
fn bad_changes_are_errors() {
    let mut sim = Simulation::new(Network::new(vec![G]), None, SimConfig::default());
    sim.add_flow(flow(0, 1e6, 0.0, &[0])).unwrap();
    assert!(sim.set_priority(9, 1).is_err());
    assert!(sim.cancel_flow(9).is_err());
    assert!(sim.set_rate_cap(0, Some(-1.0)).is_err());
    assert!(sim.set_rate_cap(0, Some(f64::NAN)).is_err());
}

/// Cancels flows at given times and counts completion callbacks.
struct Cancel {
    at: Vec<(f64, u64)>,
    completed: Vec<u64>,
}

impl Controller for Cancel {
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        ctx.cancel_flow(self.at[token as usize].1).unwrap();
    }
    fn on_flow_complete(&mut self, _: &mut Ctx<'_, '_>, flow: &netheat_engine::FlowRecord) {
        self.completed.push(flow.id);
    }
}

#[test]
fn cancelling_frees_the_link_and_records_what_was_sent() {
    // Two 1.25 GB flows at 5 Gbps each; flow 1 is cancelled at 0.5 s after
    // sending 0.3125 GB. Flow 0 then sends its last 0.9375 GB at 10 Gbps:
    // done at 1.25 s. Flow 2 (starting at 2 s) is cancelled at 1 s: it never runs.
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    let mut sim = Simulation::new(Network::new(vec![10.0 * G]), None, cfg);
    sim.add_flows(vec![flow(0, 1.25e9, 0.0, &[0]), flow(1, 1.25e9, 0.0, &[0]), flow(2, 1e9, 2.0, &[0])]).unwrap();
    let mut c = Cancel { at: vec![(0.5, 1), (1.0, 2)], completed: Vec::new() };
    for (i, e) in c.at.iter().enumerate() {
        sim.schedule_timer(e.0, i as u64).unwrap();
    }
    let r = sim.run_with(&mut c);
    assert_close(rec(&r, 0).finish_s, 1.25, 1e-9);
    assert!(!rec(&r, 1).finished() && !rec(&r, 2).finished());
    assert_close(rec(&r, 1).bytes_delivered, 0.3125e9, 1.0);
    assert_close(rec(&r, 2).bytes_delivered, 0.0, 0.0);
    assert_eq!(c.completed, vec![0]);
    assert_eq!(r.stats.flows_completed, 1);
}

#[test]
fn device_links_beyond_the_routing_are_shared_by_explicit_routes() {
    // The routing's two links, then a device link (a disk) of 1 Gbit/s that
    // only explicit routes cross. A flow to its own host through the device
    // takes its time (1 Gbit: 1 s alone), and one that crosses the network
    // and the device shares the device: both carry 1 Gbit at 0.5 Gbit/s,
    // ending at 2 s. The same flows by ECMP have no device: the local one
    // ends at once, the other takes what flow 2 leaves of its 10 Gbit/s
    // path, 9.5 Gbit/s: 1/9.5 s. The explicit path is the one ECMP draws
    // (`ecmp_draw`).
    use crate::ParallelPaths;
    use netheat_core::Routing;
    use netheat_engine::{FlowSpec, Route};
    let topo = ParallelPaths { caps: vec![10.0 * G] };
    let mut caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as u32)).collect();
    caps.push(G);
    let disk = (caps.len() - 1) as u32;
    let mut sim = Simulation::new(Network::new(caps), Some(&topo), SimConfig::default());
    let mut path = Vec::new();
    topo.path(0, 1, netheat_engine::ecmp_draw(&topo, 0, 2, 0, 1, topo.num_paths(0, 1)), &mut path);
    path.push(disk);
    sim.add_flow(FlowSpec::new(1, 1, 1, 1.25e8, 0.0, Route::Explicit(vec![disk]))).unwrap();
    sim.add_flow(FlowSpec::new(2, 0, 1, 1.25e8, 0.0, Route::Explicit(path))).unwrap();
    sim.add_flow(FlowSpec::new(3, 1, 1, 1.25e8, 0.0, Route::Ecmp)).unwrap();
    sim.add_flow(FlowSpec::new(4, 0, 1, 1.25e8, 0.0, Route::Ecmp)).unwrap();
    let r = sim.run();
    assert_close(rec(&r, 1).finish_s, 2.0, 1e-9);
    assert_close(rec(&r, 2).finish_s, 2.0, 1e-9);
    assert_eq!(rec(&r, 3).finish_s, 0.0);
    assert_close(rec(&r, 4).finish_s, 1.0 / 9.5, 1e-9);
}
