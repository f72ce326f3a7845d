//! Baraat's §5.1 testbed shapes (`experiments/baraat-testbed.toml`): fixed
//! task sizes, front-end placement and client queues, checked against
//! queueing theory and hand-computed answers.

use crate::{err, run};

/// 5 racks of 4 hosts, 1 Gbps everywhere (the testbed file's shape), and
/// one `aggregation` app with `app` keys; `policy` schedules.
fn testbed(app: &str, policy: &str) -> String {
    format!(
        r#"
[topology]
kind = "two-tier"
racks = 5
hosts-per-rack = 4
host-link = "1Gbps"
tor-uplink = "1Gbps"

[[workload.app]]
kind = "aggregation"
task-sizes = "fixed"
structure = "storage"
{app}

[scheduling]
policy = "{policy}"
heavy-percentile = 0.8
"#
    )
}

/// Figure 6's form: 8 requests at once, each `task_size` from the client's
/// three rack mates.
fn batched_reads(task_size: &str) -> String {
    format!(
        r#"task-size = "{task_size}"
placement = "rack"
aggregators = 1
fanout = 3
batch = true
tasks = 8"#
    )
}

/// Table 3's form: 4 front-end clients, 800 KB multi-gets from 4 servers at
/// 50% of the front-end downlink, `tasks` requests.
fn memcached(queue: bool, tasks: usize) -> String {
    format!(
        r#"task-size = "800KB"
placement = "front-end"
aggregators = 4
fanout = 4
load = 0.5
client-queue = {queue}
tasks = {tasks}"#
    )
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    s / n as f64
}

/// Figure 6: N = 8 requests at once, each 3 x 400 KB from the client's rack
/// mates. Every byte crosses the client's 1 Gbps link, 9.6 ms a request:
/// fair share ends all eight at 76.8 ms; FIFO-LM ends request i at
/// 9.6 i ms, a mean of 4.5 x 9.6 = 43.2 ms.
#[test]
fn batched_requests_finish_together_under_fair_share_and_in_turn_under_fifo_lm() {
    let app = &batched_reads("1.2MB");
    let fs = run(&testbed(app, "fair-share")).unwrap();
    assert_eq!(fs.tasks.len(), 8);
    for t in &fs.tasks {
        assert!((t.finish_s - t.start_s - 76.8e-3).abs() < 1e-9, "{}", t.finish_s);
    }
    let lm = run(&testbed(app, "fifo-lm")).unwrap();
    let mut ends: Vec<f64> = lm.tasks.iter().map(|t| t.finish_s).collect();
    ends.sort_by(f64::total_cmp);
    for (i, e) in ends.iter().enumerate() {
        assert!((e - 9.6e-3 * (i + 1) as f64).abs() < 1e-9, "request {i}: {e}");
    }
    assert!((mean(ends.iter().copied()) - 43.2e-3).abs() < 1e-9);
    assert!(lm.tasks.iter().all(|t| t.queued_s == 0.0));
}

/// Table 3's setting: 4 clients in rack 0, 800 KB from 4 servers of racks
/// 1-4, Poisson arrivals at 50% of the front-end rack's 1 Gbps downlink,
/// the only link where requests meet (S = 6.4 ms of it each). 20,000
/// requests.
///
/// * FIFO-LM with client queues is FIFO at that link (a request leaves its
///   client's queue only behind earlier arrivals, which FIFO serves first
///   anyway): M/D/1, Pollaczek-Khinchine mean S (1 + rho / (2 (1 - rho)))
///   = 9.6 ms.
/// * Fair share without queues is processor sharing, whose mean is
///   insensitive to the size law: S / (1 - rho) = 12.8 ms.
/// * Fair share with queues shares among at most four requests: between
///   the two.
#[test]
fn client_queues_and_the_front_end_link_follow_queueing_theory() {
    let app = |queue: bool| memcached(queue, 20000);
    let tct = |r: &netheat_scenario::ScenarioResult| mean(r.tasks.iter().map(|t| t.finish_s - t.start_s));
    let fifo = run(&testbed(&app(true), "fifo-lm")).unwrap();
    assert!(fifo.tasks.iter().all(|t| t.finish_s.is_finite()));
    let m = tct(&fifo);
    assert!((m / 9.6e-3 - 1.0).abs() < 0.04, "FIFO-LM mean {m}");
    // Service alone: no request is ever faster than 6.4 ms.
    let least = fifo.tasks.iter().map(|t| t.finish_s - t.start_s).fold(f64::INFINITY, f64::min);
    assert!((least - 6.4e-3).abs() < 1e-9, "{least}");
    // Arrival rate: 0.5 x 1e9 / (8 x 800e3) = 78.125 requests/s.
    let last = fifo.tasks.iter().map(|t| t.start_s).fold(0.0, f64::max);
    assert!((20000.0 / last / 78.125 - 1.0).abs() < 0.03, "{}", 20000.0 / last);
    let ps = run(&testbed(&app(false), "fair-share")).unwrap();
    let m_ps = tct(&ps);
    assert!((m_ps / 12.8e-3 - 1.0).abs() < 0.05, "fair share mean {m_ps}");
    assert!(ps.tasks.iter().all(|t| t.queued_s == 0.0));
    let fs = run(&testbed(&app(true), "fair-share")).unwrap();
    let m_fs = tct(&fs);
    assert!(m_fs > m * 1.05 && m_fs < m_ps * 0.97, "{m} < {m_fs} < {m_ps}");
    // Queued requests: the wait is part of the time, and some waited.
    let waited = fs.tasks.iter().filter(|t| t.queued_s > 0.0).count();
    assert!(waited > 200, "{waited}");
    assert!(fs.tasks.iter().all(|t| t.queued_s >= 0.0 && t.finish_s - t.start_s >= t.queued_s + 6.4e-3 - 1e-9));
}

#[test]
fn fixed_sizes_and_client_queues_are_refused_where_they_mean_nothing() {
    let base = r#"task-size = "800KB"
placement = "front-end"
aggregators = 4
fanout = 4
client-queue = true
tasks = 10"#;
    // A task size without the fixed law, and the fixed law without one.
    let e = err(&testbed(base, "fifo-lm").replace(r#"task-sizes = "fixed""#, r#"task-sizes = "bing""#));
    assert!(e.contains("task-size") && e.contains("fixed"), "{e}");
    let e = err(&testbed(&base.replace(r#"task-size = "800KB""#, ""), "fifo-lm"));
    assert!(e.contains("task-size") && e.contains("missing"), "{e}");
    // Queues run on the flow engine's task runner and the SPC simulator.
    let packet = testbed(base, "fair-share").replace("[topology]", "[scenario]\nengine = \"packet\"\n\n[topology]");
    let e = err(&packet.replace("[scheduling]\npolicy = \"fair-share\"\nheavy-percentile = 0.8", ""));
    assert!(e.contains("client-queue") && e.contains("packet"), "{e}");
    // More servers than the racks without clients hold (16).
    let e = err(&testbed(&base.replace("fanout = 4", "fanout = 17"), "fifo-lm"));
    assert!(e.contains("fanout") && e.contains("16"), "{e}");
    // Two-stage tasks have no front-end form.
    let two = testbed(base, "fifo-lm").replace(r#"structure = "storage""#, r#"structure = "two-stage""#);
    assert!(err(&two).contains("placement"));
}

/// Baraat §5.3's setting (Figure 12, the testbed's batched requests in
/// rounds of 100 us): 8 requests at once, each 3 x 50 KB from the client's
/// three rack mates. Under `rcp` (every flow in one class) the 24 flows get
/// the client link's C/24 from round 1, and each 50 KB takes 96 rounds at
/// it: every request ends at 0.1 + 9.6 = 9.7 ms. `spc` with the eight
/// tasks in one class, or with a class per 24 flows, is that same one
/// class; with a class per task it serves the requests in turn, so its
/// mean is below fair share's.
#[test]
fn rcp_is_one_class_of_the_protocol_and_class_size_groups_tasks() {
    let app = &batched_reads("150KB");
    let with = |policy: &str, extra: &str| {
        let text =
            testbed(app, policy).replace("heavy-percentile = 0.8", &format!("heavy-threshold = \"1TB\"\n{extra}"));
        run(&text).unwrap()
    };
    let times =
        |r: &netheat_scenario::ScenarioResult| -> Vec<f64> { r.tasks.iter().map(|t| t.finish_s - t.start_s).collect() };
    let rcp = with("rcp", "");
    assert_eq!(rcp.tasks.len(), 8);
    for t in times(&rcp) {
        assert!((t - 9.7e-3).abs() < 1e-9, "{t}");
    }
    assert!(rcp.notes.iter().any(|n| n.contains("every flow in one class")), "{:?}", rcp.notes);
    assert_eq!(times(&with("spc", "class-size = 8")), times(&rcp));
    assert_eq!(times(&with("spc", "class-unit = \"flow\"\nclass-size = 24")), times(&rcp));
    let spc = with("spc", "");
    let mean_spc = mean(times(&spc).into_iter());
    // In turn: the first request ends after its first round and 1.2 ms.
    let first = times(&spc).into_iter().fold(f64::INFINITY, f64::min);
    assert!((first - 1.3e-3).abs() < 1e-9, "{first}");
    assert!(mean_spc < 0.7 * 9.7e-3 && mean_spc > 4.5 * 1.2e-3, "{mean_spc}");
    // The protocol's keys belong to `spc`.
    for (policy, extra, key) in [
        ("fair-share", "class-size = 2", "scheduling.class-size"),
        ("rcp", "class-size = 2", "scheduling.class-size"),
        ("fifo-lm", "class-unit = \"flow\"", "scheduling.class-unit"),
        ("spc", "class-size = 0", "scheduling.class-size"),
        ("fifo-lm", "virtual-capacity = true", "scheduling.virtual-capacity"),
    ] {
        let text = testbed(app, policy).replace("heavy-percentile = 0.8", extra);
        let e = err(&text);
        assert!(e.contains(key), "{policy} {extra}: {e}");
    }
}

/// The batched reads above under `rcp` with virtual capacity (§4.3.2). In
/// round 0 the client link carried nothing while its 24 flows asked for
/// 24 C, so it hands out 1.4 C (C + 0.4 C) in round 1: a queue of 0.4 C
/// for a round, 5,000 B, which the controller then drains. The eight
/// requests stay in one class, but the swings of the rounds that follow
/// (ARs lag the NRs) no longer split it evenly: they end apart. The last
/// ends no earlier than the link's 1.2 MB at C after the first round (9.7
/// ms), and, the port being busy while its queue holds bytes, within a few
/// rounds of it.
#[test]
fn virtual_capacity_queues_what_it_over_hands_and_drains_it() {
    let app = &batched_reads("150KB");
    let text =
        testbed(app, "rcp").replace("heavy-percentile = 0.8", "heavy-threshold = \"1TB\"\nvirtual-capacity = true");
    let r = run(&text).unwrap();
    let stat = |k: &str| r.stats[k];
    assert!((stat("spc_max_queue_bytes") - 5000.0).abs() < 1e-6, "{}", stat("spc_max_queue_bytes"));
    assert!(stat("spc_vc_updates") > 0.0);
    let times: Vec<f64> = r.tasks.iter().map(|t| t.finish_s - t.start_s).collect();
    assert_eq!(times.len(), 8);
    let last = times.iter().copied().fold(0.0, f64::max);
    assert!((9.7e-3 - 1e-9..9.7e-3 + 0.5e-3).contains(&last), "{times:?}");
    assert!(mean(times.iter().copied()) < 9.7e-3 * 1.01, "{times:?}");
    assert!(r.notes.iter().any(|n| n.contains("virtual capacity with gains 0.4 / 1")), "{:?}", r.notes);
}

/// Table 3's clients through the protocol: 4 clients with queues, 800 KB
/// requests at 50% of the front-end downlink, 2,000 requests. A client
/// never serves two requests at once (a request begins, arrival plus its
/// wait, no earlier than the client's previous one ends), and the waits
/// count in the times. With one counter `spc` is FIFO at the bottleneck,
/// M/D/1's 9.6 ms mean, plus the protocol's rounds: the first request
/// round (0.1 ms) and the hand-overs, within 6% here; the idealized FIFO-LM
/// run of the same requests is within 4% of 9.6 ms (the test above).
#[test]
fn client_queues_run_through_the_protocol() {
    let app = &memcached(true, 2000);
    for policy in ["spc", "rcp"] {
        let r = run(&testbed(app, policy).replace("heavy-percentile = 0.8", "heavy-threshold = \"1TB\"")).unwrap();
        assert_eq!(r.tasks.len(), 2000);
        let client: std::collections::HashMap<i64, u32> = r.flows.iter().map(|f| (f.task_id, f.dst)).collect();
        let mut by_client: std::collections::BTreeMap<u32, Vec<(f64, f64, f64)>> = Default::default();
        for t in &r.tasks {
            assert!(t.queued_s >= 0.0 && t.finish_s - t.start_s >= t.queued_s + 6.4e-3 - 1e-9);
            by_client.entry(client[&(t.task_id as i64)]).or_default().push((t.start_s, t.queued_s, t.finish_s));
        }
        assert_eq!(by_client.len(), 4);
        for ts in by_client.values_mut() {
            ts.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in ts.windows(2) {
                assert!(w[1].0 + w[1].1 >= w[0].2 - 1e-12, "{policy}: {w:?}");
            }
        }
        assert!(r.tasks.iter().filter(|t| t.queued_s > 0.0).count() > 20, "{policy}");
        if policy == "spc" {
            let m = mean(r.tasks.iter().map(|t| t.finish_s - t.start_s));
            assert!(m > 9.6e-3 * 0.95 && m < 9.6e-3 * 1.06, "SPC mean {m}");
        }
    }
}
