//! `scheduling.policy = "spc"`: the scenario's tasks through Baraat's SPC
//! protocol simulator, checked against netheat-flowsched's `run_spc` on the
//! same input built by hand, and against hand-computed idealized FIFO-LM
//! times within the protocol's round costs.

use netheat_core::Routing;
use netheat_data::DataDir;
use netheat_flowsched::{run_spc, SpcOptions, Task, TaskFlow};
use netheat_scenario::{Scenario, ScenarioResult};

use super::{err, run, run_with, two_racks};

/// 8 Gbit/s links: 1 GB/s.
const RTT: f64 = 100e-6;

/// A task by hand: arrival and its flows `(src, dst, bytes, start offset)`.
type HandTask = (f64, Vec<(u32, u32, f64, f64)>);

/// The SPC input of `flows` (`(src, dst, bytes, start offset within the
/// task)` per task, tasks by arrival) built by hand on the scenario's
/// datacenter, each flow on the path the scenario reported.
fn by_hand(text: &str, r: &ScenarioResult, tasks: &[HandTask], threshold: f64) -> Vec<f64> {
    let parts = Scenario::from_text(text, "s.toml", &std::env::temp_dir()).parts(&DataDir::explicit("/x")).unwrap();
    let topo = &*parts.topology;
    let caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as u32)).collect();
    let mut k = 0;
    let mut input = Vec::new();
    for (at, flows) in tasks {
        let mut fs = Vec::new();
        for &(src, dst, bytes, delay_s) in flows {
            let row = &r.flows[k];
            assert_eq!((row.src, row.dst), (src, dst));
            let mut path = Vec::new();
            topo.path(src, dst, row.path_id as usize, &mut path);
            fs.push(TaskFlow { src, dst, bytes, path, delay_s, feeds: None });
            k += 1;
        }
        input.push(Task { arrival_s: *at, bytes: fs.iter().map(|f| f.bytes).sum(), flows: fs });
    }
    let o = SpcOptions { threshold, ..SpcOptions::default() };
    run_spc(&caps, &input, &o).unwrap().tasks.iter().map(|t| t.finish_s).collect()
}

/// Two tasks into host 2 over its 8 Gbit/s (1 GB/s) link, as in
/// `fifo_lm_lets_a_light_task_share_with_a_heavy_one`: task 0 sends 8 GB
/// from 0, task 1 1 GB from 0.5 s, heavy threshold 1 GB. Idealized FIFO-LM:
/// task 0 is heavy once it has sent 1 GB (1 s) and task 1 shares its class
/// from then: 0.5 GB/s, ending at 3 s; task 0 ends at 9 s (9 GB at 1 GB/s).
///
/// SPC turns task 0 heavy when its bytes reserved at a port exceed 1 GB
/// (they run one round ahead of bytes sent), and pays per hand-over a
/// round or two of requests, probes (`delta`) and preemption (see
/// netheat-flowsched's spc_protocol tests): within 10 rounds (1 ms) of the
/// idealized times here, and never more than a round ahead. The scenario's
/// times are `run_spc`'s on the same tasks and paths.
#[test]
fn spc_runs_two_tasks_within_rounds_of_idealized_fifo_lm() {
    let flows = "src,dst,bytes,start_s,task_id\n0,2,8000000000,0,0\n1,2,1000000000,0.5,1\n";
    let text = two_racks(flows, "[scheduling]\npolicy = \"spc\"\nheavy-threshold = \"1GB\"");
    let r = run(&text).unwrap();
    assert_eq!(r.flows.len(), 2);
    let ideal = [9.0, 3.0];
    for (f, want) in r.flows.iter().zip(ideal) {
        let d = f.finish_s - want;
        assert!((-RTT..=10.0 * RTT).contains(&d), "flow {} ends at {} (idealized {want})", f.flow_id, f.finish_s);
    }
    eprintln!(
        "spc - idealized fifo-lm, rounds: {:?}",
        r.flows.iter().zip(ideal).map(|(f, w)| (f.finish_s - w) / RTT).collect::<Vec<_>>()
    );
    // The same input through run_spc, built by hand.
    let want = by_hand(&text, &r, &[(0.0, vec![(0, 2, 8e9, 0.0)]), (0.5, vec![(1, 2, 1e9, 0.0)])], 1e9);
    for (f, w) in r.flows.iter().zip(&want) {
        assert!((f.finish_s - w).abs() <= 1e-9, "scenario {} run_spc {w}", f.finish_s);
    }
    // Trace tasks: one row each, with their flow's times.
    assert_eq!(r.tasks.len(), 2);
    assert_eq!(r.tasks[1].finish_s, r.flows[1].finish_s);
    assert_eq!(r.stats["heavy_threshold_bytes"], 1e9);
    // Host 2's link is busy from the first round to the end: utilization 1
    // in windows 1-8 (1 s each) and 1 - 1 round in window 0.
    let busy: Vec<f64> = {
        let parts =
            Scenario::from_text(&text, "s.toml", &std::env::temp_dir()).parts(&DataDir::explicit("/x")).unwrap();
        let mut p = Vec::new();
        parts.topology.path(0, 2, r.flows[0].path_id as usize, &mut p);
        let down = *p.last().unwrap();
        (0..9).map(|w| r.links.iter().find(|x| x.0 == down && x.1 == w).map_or(0.0, |x| x.2)).collect()
    };
    assert!((busy[0] - (1.0 - RTT)).abs() < 1e-3, "{busy:?}");
    assert!(busy[1..].iter().all(|u| (u - 1.0).abs() < 1e-3), "{busy:?}");
}

/// One trace task of two flows through rack 0's 8 Gbit/s uplink: A (1 GB)
/// from 0, B (1 GB) from 0.25 s: a delay step, so a pause in the SPC input.
/// One task is one class: A alone sends 0.25 GB by 0.25 s, then both at
/// 0.5 GB/s: A's 0.75 GB end at 1.75 s, when B has 0.25 GB left, alone at
/// 1 GB/s: 2 s. SPC: within a few rounds of these, B starting at 0.25 s
/// exactly, and equal to run_spc with B's start as its `delay_s`.
#[test]
fn a_task_with_a_later_flow_runs_its_pause() {
    let flows = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,7\n1,3,1000000000,0.25,7\n";
    let text = two_racks(flows, "[scheduling]\npolicy = \"spc\"");
    let r = run(&text).unwrap();
    assert_eq!(r.flows[1].start_s, 0.25);
    for (f, want) in r.flows.iter().zip([1.75, 2.0]) {
        let d = f.finish_s - want;
        assert!((-RTT..=5.0 * RTT).contains(&d), "flow {} ends at {} (max-min {want})", f.flow_id, f.finish_s);
    }
    let want =
        by_hand(&text, &r, &[(0.0, vec![(0, 2, 1e9, 0.0), (1, 3, 1e9, 0.25)])], r.stats["heavy_threshold_bytes"]);
    assert!((r.flows[1].finish_s - want[0]).abs() <= 1e-9, "{:?} {want:?}", r.flows);
    assert_eq!(r.tasks.len(), 1);
    assert_eq!((r.tasks[0].task_id, r.tasks[0].flows), (7, 2));
    assert!((r.tasks[0].finish_s - want[0]).abs() <= 1e-9);
}

#[test]
fn spc_refuses_what_it_cannot_compose_with() {
    const TWO: &str = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,0\n1,3,3000000000,0,1\n";
    let e = err(&two_racks(TWO, "[scheduling]\npolicy = \"spc\"\n[routing]\npolicy = \"adaptive\""));
    assert!(e.contains("scheduling.policy") && e.contains("routing.policy"), "{e}");
    let e = err(&two_racks(TWO, "[scenario]\nengine = \"packet\"\n[scheduling]\npolicy = \"spc\""));
    assert!(e.contains("scheduling.policy") && e.contains("scenario.engine"), "{e}");
    let e = err(&two_racks(TWO, "[scheduling]\npolicy = \"spc\"\n[storage]\npolicy = \"sinbad\""));
    assert!(e.contains("scheduling.policy") && e.contains("storage.policy"), "{e}");
    let e = err(&two_racks(TWO, "[scheduling]\npolicy = \"spc\"\n[placement]\npolicy = \"utp\""));
    assert!(e.contains("scheduling.policy") && e.contains("placement.policy"), "{e}");
    let ev = "[scheduling]\npolicy = \"spc\"\n[[events]]\nat = \"1s\"\naction = \"scale\"\nfactor = 0.5\nracks = [0]";
    let e = err(&two_racks(TWO, ev));
    assert!(e.contains("scheduling.policy") && e.contains("[[events]]"), "{e}");
    let e = err(&two_racks(TWO, "[scheduling]\npolicy = \"spc\"\nrtt = \"0s\""));
    assert!(e.contains("scheduling.rtt"), "{e}");
    let e = err(&two_racks(TWO, "[scheduling]\npolicy = \"spc\"\ndelta = -1.0"));
    assert!(e.contains("scheduling.delta"), "{e}");
}

/// One two-stage query on 8 Gbit/s links (see
/// [`a_two_stage_query_with_pauses_and_a_fan_out_by_hand`]).
const QUERY: &str = r#"
[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 3
host-link = "8Gbps"
tor-uplink = "8Gbps"
[workload]
duration = "1s"
[[workload.app]]
kind = "partition-aggregate"
stages = 2
tasks = 1
rate = 100.0
request = "100KB"
response = "200KB"
selectivity = 1.0
compute = "1.05ms"
mid-aggregators = 1
mid-compute = "1.05ms"
mid-response = "100KB"
[scheduling]
policy = "spc"
"#;

/// One two-stage partition-aggregate query (a fan-out: the request to the
/// mid-level aggregator m releases its requests to both workers of its
/// rack) on 8 Gbit/s links (100 KB a 100 us round), sizes in whole rounds
/// and compute times ending mid-round, so every step's round is exact.
/// With q0 the round the task starts in: the 100 KB request reaches m at
/// the end of round q0 + 1 (first SRQ in q0, sends in q0 + 1); both 100 KB
/// requests to the workers share m's link (one task, one class: C/2 each)
/// in rounds q0 + 3 and q0 + 4; 1.05 ms of compute ends inside round
/// q0 + 15; the two 200 KB responses share m's link in rounds q0 + 16 to
/// q0 + 19; 1.05 ms at m ends inside round q0 + 30; the 100 KB answer is
/// sent in round q0 + 31: the task ends at (q0 + 32) x 100 us.
#[test]
fn a_two_stage_query_with_pauses_and_a_fan_out_by_hand() {
    let text = QUERY;
    let r = run(text).unwrap();
    assert_eq!(r.tasks.len(), 1, "{:?}", r.tasks);
    let t = &r.tasks[0];
    assert_eq!((t.flows, t.bytes), (6, 800e3));
    let q0 = (t.start_s / RTT).floor();
    assert!((t.finish_s - (q0 + 32.0) * RTT).abs() < 1e-9, "{t:?}, q0 {q0}");
    // Every flow belongs to it; the answer is the last one to end.
    assert!(r.flows.iter().all(|f| f.task_id == t.task_id as i64), "{:?}", r.flows);
    let last = r.flows.iter().map(|f| f.finish_s).fold(0.0, f64::max);
    assert_eq!(last, t.finish_s);
    // The same query on the flow engine under idealized FIFO-LM (no
    // rounds): 0.1 + 0.2 + 1.05 + 0.4 + 1.05 + 0.1 = 2.9 ms.
    let lm = run(&text.replace("\"spc\"", "\"fifo-lm\"")).unwrap();
    assert!((lm.tasks[0].finish_s - lm.tasks[0].start_s - 2.9e-3).abs() < 1e-9, "{:?}", lm.tasks);
    assert_eq!(lm.tasks[0].task_id, t.task_id);
}

/// An SPC run that does not keep its `flows` table does not hold its
/// flows' rows, yet reports the same tasks (floors included) and flow
/// counts. The two-stage query above: into the mid-level aggregator m its
/// 100 KB request and the two 200 KB responses, 500 KB, the most into any
/// host: a floor of 500 KB over 8 Gbit/s, 0.5 ms. Stopped 1 ms after the
/// task starts (the responses start after m's 1.05 ms of compute): three
/// flows started (the request and the two 100 KB requests to the workers,
/// ended by round q0 + 5), none of them 200 KB, so the floor of what
/// started is 100 KB, 0.1 ms, and the task is unfinished.
#[test]
fn a_run_without_its_flows_table_reports_the_same_tasks_and_counts() {
    let text = QUERY;
    let t0 = run(text).unwrap().tasks[0].start_s;
    let stop = format!("\"{}us\"", ((t0 + 1e-3) * 1e6).round());
    for (stop, floor, flows, finished) in [(None, 0.5e-3, 6.0, true), (Some(stop.as_str()), 0.1e-3, 3.0, false)] {
        let mut got = Vec::new();
        for record in ["[\"flows\"]", "[]"] {
            let mut over = vec![("scenario.record", record)];
            if let Some(d) = stop {
                over.push(("scenario.duration", d));
            }
            let r = run_with(text, &over).unwrap();
            assert_eq!(r.flows.is_empty(), record == "[]", "{record}");
            let t = &r.tasks[0];
            assert!((t.floor_s - floor).abs() < 1e-12, "{record} {stop:?}: {t:?}");
            assert_eq!(t.finish_s.is_finite(), finished, "{record} {stop:?}: {t:?}");
            assert_eq!((r.stats["flows"], r.stats["completed"]), (flows, flows), "{record} {stop:?}");
            got.push((format!("{:?}", r.tasks), r.stats["end_s"]));
        }
        assert_eq!(got[0], got[1], "{stop:?}");
    }
}

/// An SPC run reports its progress in the run's flows while the protocol
/// runs (the query above: 6 flows; its 2 compute pauses are flows of the
/// protocol, not counted), never going back, and stops when the callback
/// says so: Ctrl-C reaches a paper-scale run, which takes minutes.
#[test]
fn an_spc_run_reports_progress_and_stops_when_asked() {
    let s = Scenario::from_text(QUERY, "s.toml", &std::env::temp_dir());
    let data = DataDir::explicit("/nonexistent");
    let mut seen = Vec::new();
    s.run(&data, &mut |done, total| {
        seen.push((done, total));
        true
    })
    .unwrap();
    assert!(seen.iter().all(|&(d, total)| total == 6 && d <= 6), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert_eq!((seen[0], seen[seen.len() - 1]), ((0, 6), (6, 6)));
    // Reports while it runs (each round it works through; the rounds of the
    // compute pauses are skipped), not only before and after.
    assert!(seen.len() > 10 && seen.iter().any(|&(d, _)| d > 0 && d < 6), "{seen:?}");
    let mut calls = 0;
    let stop = s.run(&data, &mut |_, _| {
        calls += 1;
        calls < 10
    });
    assert!(matches!(stop, Err(netheat_scenario::ScenarioError::Interrupted)), "{stop:?}");
}

/// A rate cap below the host link is the sender's NIC rate: a 1 MB flow
/// capped at 4 Gbit/s on 8 Gbit/s links sends 50 KB a round from round 1
/// (its first SRQ in round 0): 20 rounds, ending at 2.1 ms; uncapped, 10
/// rounds: 1.1 ms. Its cap is a link of its own, left out of `links`.
#[test]
fn a_rate_cap_is_the_senders_nic_rate() {
    let capped = "src,dst,bytes,start_s,rate_cap_bps\n0,2,1000000,0,4000000000\n";
    let r = run(&two_racks(capped, "[scheduling]\npolicy = \"spc\"")).unwrap();
    assert!((r.flows[0].finish_s - 2.1e-3).abs() < 1e-9, "{:?}", r.flows);
    let free = "src,dst,bytes,start_s\n0,2,1000000,0\n";
    let r2 = run(&two_racks(free, "[scheduling]\npolicy = \"spc\"")).unwrap();
    assert!((r2.flows[0].finish_s - 1.1e-3).abs() < 1e-9, "{:?}", r2.flows);
    // The same links carried the same bytes: 1 MB in window 0 (1 s) at 8 Gbit/s.
    assert_eq!(r.links.len(), r2.links.len());
    for (a, b) in r.links.iter().zip(&r2.links) {
        assert_eq!((a.0, a.1), (b.0, b.1));
        assert!((a.2 - 1e-3).abs() < 1e-12 && (b.2 - 1e-3).abs() < 1e-12, "{a:?} {b:?}");
    }
}

/// The SPC run keeps link windows only with the `links` table, and no more
/// than the memory budget leaves room for, as the flow engine does. One
/// task of 8 GB over an 8 Gbit/s link lasts 8 s, nine 1 s windows with its
/// first round. Under a budget with room for about 3 windows (3 to 6: the
/// flows' share of the budget depends on the tables kept) the run with
/// `links` stops with the flow engine's message; the run without it keeps
/// no windows and gives the same task times as an unbudgeted run.
#[test]
fn spc_keeps_link_windows_only_when_recorded_and_within_the_budget() {
    let flows = "src,dst,bytes,start_s,task_id\n0,2,8000000000,0,0\n";
    let text = two_racks(flows, "[scheduling]\npolicy = \"spc\"");
    let free = run(&text).unwrap();
    assert!(free.links.len() >= 9, "{} link windows", free.links.len());
    let parts = Scenario::from_text(&text, "s.toml", &std::env::temp_dir()).parts(&DataDir::explicit("/x")).unwrap();
    let big = 1u64 << 30;
    let plan = netheat_workloads::RunBudget::new(&parts.topology, 1, big).unwrap();
    let per_window = plan.links * netheat_core::budget::BYTES_PER_LINK_WINDOW;
    let budget = big - (u64::from(plan.max_windows) - 3) * per_window;
    let with = |record: &str| {
        netheat_core::with_memory_budget(budget, || {
            run_with(&text, &[("scenario.record", record)]).map(|r| (r.links.len(), r.tasks[0].finish_s))
        })
    };
    let msg = with("[\"links\"]").unwrap_err().to_string();
    assert!(msg.contains("the run reached") && msg.contains("leaves room for"), "{msg}");
    let (windows, finish) = with("[]").unwrap();
    assert_eq!((windows, finish), (0, free.tasks[0].finish_s));
}

/// `scheduling.task-ids`: three 1 GB tasks from host 0 over its 1 GB/s
/// link, t0 and t1 (at 0 and 0.1 s) to client 2, t2 (at 0.2 s) to client
/// 3. One counter takes them in start order: ids 0, 1, 2, so FIFO ends them
/// at 1, 2 and 3 s (times 1.0, 1.9 and 2.8 s). A counter per client (Baraat
/// §4.1, §5.1's Memcached clients): client 2 numbers its tasks 0 and 2,
/// client 3 its task 1, so t2 goes before t1: t2 ends at 2 s (1.8 s), t1 at
/// 3 s (2.9 s). The SPC protocol gives the same order within its rounds.
#[test]
fn a_counter_per_client_orders_tasks_by_each_clients_count() {
    let flows = "src,dst,bytes,start_s,task_id\n0,2,1000000000,0,0\n0,2,1000000000,0.1,1\n0,3,1000000000,0.2,2\n";
    let times = |policy: &str, ids: &str| -> Vec<f64> {
        let text = two_racks(
            flows,
            &format!("[scheduling]\npolicy = \"{policy}\"\nheavy-threshold = \"1TB\"\ntask-ids = \"{ids}\""),
        );
        let r = run(&text).unwrap();
        let mut t: Vec<(i64, f64)> = r.flows.iter().map(|f| (f.task_id, f.finish_s - f.start_s)).collect();
        t.sort_by_key(|x| x.0);
        t.into_iter().map(|x| x.1).collect()
    };
    let close = |got: &[f64], want: &[f64], tol: f64| got.iter().zip(want).all(|(g, w)| (g - w).abs() <= tol);
    let one = times("fifo-lm", "load-balancers");
    assert!(close(&one, &[1.0, 1.9, 2.8], 1e-9), "{one:?}");
    let per_client = times("fifo-lm", "client");
    assert!(close(&per_client, &[1.0, 2.9, 1.8], 1e-9), "{per_client:?}");
    // SPC: a round or two of the protocol's costs per hand-over.
    let spc = times("spc", "client");
    assert!(close(&spc, &[1.0, 2.9, 1.8], 1e-3), "{spc:?}");
    let spc_one = times("spc", "load-balancers");
    assert!(close(&spc_one, &[1.0, 1.9, 2.8], 1e-3), "{spc_one:?}");
}
