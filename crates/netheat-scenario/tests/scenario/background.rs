//! Precalculated traffic (`workload.traffic.N.precalculated`, Sinbad's
//! simulation, SIGCOMM'13 section 7.2): its load, measured alone, taken off
//! the links' capacity step by step, checked by hand.

use netheat_data::DataDir;
use netheat_scenario::{Scenario, ScenarioError, ScenarioResult};

/// Two racks of two hosts, 10 Gbit/s links and one ToR uplink each. The
/// background: 20 Gbit from host 0 to host 2 at 0 s. The run's own flow:
/// 15 Gbit from host 1 to host 3 at 0 s, through the same ToR uplink and
/// downlink.
fn scenario(precalculated: bool, extra: &str) -> String {
    // Tests run in parallel: a directory per test thread, in Cargo's scratch directory for
    // integration tests (under target/, reused by the next run, never left in /tmp).
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("precalculated-{:?}", std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bg.csv"), "src,dst,bytes,start_s\n0,2,2500000000,0\n").unwrap();
    std::fs::write(dir.join("fg.csv"), "src,dst,bytes,start_s\n1,3,1875000000,0\n").unwrap();
    format!(
        r#"
[topology]
kind = "two-tier"
racks = 2
hosts-per-rack = 2
host-link = "10Gbps"
tor-uplink = "10Gbps"
[workload]
[[workload.traffic]]
kind = "replay"
file = "{}"
precalculated = {precalculated}
[[workload.traffic]]
kind = "replay"
file = "{}"
{extra}
"#,
        dir.join("bg.csv").display(),
        dir.join("fg.csv").display()
    )
}

fn run(text: &str) -> Result<ScenarioResult, ScenarioError> {
    Scenario::from_text(text, "s.toml", &std::env::temp_dir()).run(&DataDir::explicit("/nonexistent"), &mut |_, _| true)
}

#[test]
fn precalculated_traffic_leaves_the_run_what_it_does_not_use() {
    // Alone, the background runs at 10 Gbit/s for 2 s with one flow on its
    // links: they leave max(10 - 10, 10 / 2) = 5 Gbit/s in steps 0 and 1,
    // all 10 afterwards. The run's flow gets 5 Gbit/s for 2 s (10 Gbit)
    // and the last 5 Gbit at 10: it ends at 2.5 s. As ordinary traffic,
    // the two share the uplink at 5 each: 15 Gbit take 3 s.
    let r = run(&scenario(true, "")).unwrap();
    assert_eq!(r.flows.len(), 1);
    assert!((r.flows[0].finish_s - 2.5).abs() < 1e-9, "{:?}", r.flows);
    assert_eq!(r.stats["background_flows"], 1.0);
    assert_eq!(r.stats["background_bytes"], 2.5e9);
    assert_eq!(r.stats["background_cross_rack_bytes"], 2.5e9);
    let plain = run(&scenario(false, "")).unwrap();
    let fg = plain.flows.iter().find(|f| f.src == 1).unwrap();
    assert!((fg.finish_s - 3.0).abs() < 1e-9, "{fg:?}");
    // The links table counts both: on the ToR uplink of rack 0, the
    // background's 10 Gbit/s and the run's 5 in windows 0 and 1, the run's
    // 5 Gbit over window 2.
    let text = scenario(true, "");
    let topo = netheat_config::load_topology_str(
        &text[text.find("[topology]").unwrap()..text.find("[workload]").unwrap()],
        "t",
    )
    .unwrap();
    assert_eq!(topo.tors()[0].up.len(), 1);
    let up = topo.tors()[0].up[0];
    let rows: Vec<(u32, f64, f64)> =
        r.links.iter().zip(&r.links_background).filter(|(x, _)| x.0 == up).map(|(x, &b)| (x.1, x.2, b)).collect();
    let want = [(0, 1.5, 1.0), (1, 1.5, 1.0), (2, 0.5, 0.0)];
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (got, want) in rows.iter().zip(want) {
        assert!(got.0 == want.0 && (got.1 - want.1).abs() < 1e-9 && (got.2 - want.2).abs() < 1e-9, "{rows:?}");
    }
}

#[test]
fn a_coarser_step_averages_the_background() {
    // In one 4 s step the background averages 5 Gbit/s with half a flow:
    // it leaves max(10 - 5, 10 / 1.5) = 6.67 Gbit/s for 4 s, enough for
    // the 15 Gbit: 2.25 s.
    let r = run(&scenario(true, "[scenario]\nbackground-step = \"4s\"")).unwrap();
    let want = 15e9 / (10e9 / 1.5);
    assert!((r.flows[0].finish_s - want).abs() < 1e-9, "{:?} want {want}", r.flows);
}

#[test]
fn precalculated_traffic_is_refused_where_it_means_nothing() {
    let e = run(&scenario(true, "[scenario]\nengine = \"packet\"")).unwrap_err().to_string();
    assert!(e.contains("workload.traffic") && e.contains("flow"), "{e}");
    let e = run(&scenario(true, "[scheduling]\npolicy = \"spc\"")).unwrap_err().to_string();
    assert!(e.contains("spc"), "{e}");
    let e = run(&scenario(true, "[scenario]\nbackground-step = \"0s\"")).unwrap_err().to_string();
    assert!(e.contains("background-step"), "{e}");
}

#[test]
fn the_cached_background_is_the_computed_one() {
    // The variants of an experiment share the last background of the
    // process; what they get must be what a fresh computation gives, and a
    // change of the links (here their capacity) computes it again.
    use netheat_scenario::background::{precalculate, precalculate_cached};
    use netheat_workloads::FlowRow;
    let text = scenario(true, "");
    let dc = |cap: &str| {
        let t = text[text.find("[topology]").unwrap()..text.find("[workload]").unwrap()].replace("10Gbps", cap);
        netheat_config::load_topology_str(&t, "t").unwrap()
    };
    let rows = vec![FlowRow {
        flow_id: 0,
        start_s: 0.0,
        src: 0,
        dst: 2,
        bytes: 2.5e9,
        task_id: None,
        priority: 0,
        weight: 1.0,
        rate_cap_bps: None,
    }];
    let fast = dc("10Gbps");
    let slow = dc("5Gbps");
    let a = precalculate_cached(&fast, &rows, 1.0, 1, u32::MAX, &mut |_, _| true).unwrap();
    assert_eq!(*a, precalculate(&fast, &rows, 1.0, 1, u32::MAX, &mut |_, _| true).unwrap());
    let b = precalculate_cached(&slow, &rows, 1.0, 1, u32::MAX, &mut |_, _| true).unwrap();
    assert_eq!(*b, precalculate(&slow, &rows, 1.0, 1, u32::MAX, &mut |_, _| true).unwrap());
    // 20 Gbit at 10 and at 5 Gbit/s.
    assert!((a.end_s - 2.0).abs() < 1e-9 && (b.end_s - 4.0).abs() < 1e-9, "{} {}", a.end_s, b.end_s);
    // Ctrl-C stops it.
    let e = precalculate(&slow, &rows, 1.0, 1, u32::MAX, &mut |_, _| false);
    assert!(matches!(e, Err(netheat_scenario::ScenarioError::Interrupted)), "{e:?}");
    // A background longer than the steps the budget leaves room for is
    // refused, not cut: 4 s at 5 Gbit/s needs 4 steps of 1 s.
    let e = precalculate(&slow, &rows, 1.0, 1, 3, &mut |_, _| true).unwrap_err().to_string();
    assert!(e.contains("background-step"), "{e}");
    assert!(precalculate(&slow, &rows, 1.0, 1, 4, &mut |_, _| true).is_ok());
}

#[test]
fn a_precalculated_apps_flows_become_pauses_of_their_time_alone() {
    // A task of a precalculated app (Sinbad's simulation: a job whose
    // shuffle is background, section 7.2): 20 Gbit from host 0 to host 2 at
    // 0 s, then 10 Gbit from host 2 to host 3. The run's own flow: the 15
    // Gbit from host 1 to host 3.
    // Precalculated, the first flow runs alone at 10 Gbit/s and takes 2 s:
    // in the run it is a pause of 2 s, and its load leaves 5 Gbit/s on the
    // rack 0 uplink in steps 0 and 1. So the run's flow carries 10 Gbit by
    // 2 s; then it shares host 3's link with the task's second flow at 5
    // each: its last 5 Gbit end at 3 s. The second flow has 5 Gbit left at
    // 3 s, then 10 Gbit/s: it ends at 3.5 s, the task too.
    // As an ordinary task, the first flow shares the uplink with the run's
    // flow at 5 each: the run's flow ends at 3 s, the first flow's last 5
    // Gbit at 3.5 s, and the second flow, alone, at 4.5 s.
    fn task_run(precalculated: bool) -> ScenarioResult {
        // The scenario without its background traffic table.
        let text = scenario(false, "");
        let (a, b) = (text.find("[[workload.traffic]]").unwrap(), text.rfind("[[workload.traffic]]").unwrap());
        let text = format!("{}{}", &text[..a], &text[b..]);
        let sc = Scenario::from_text(&text, "s.toml", &std::env::temp_dir());
        let mut parts = sc.parts(&DataDir::explicit("/nonexistent")).unwrap();
        let mut dag = netheat_workloads::TaskDag::new("mr-job");
        let first = dag.flow(0, 2, 2.5e9, &[]);
        dag.flow(2, 3, 1.25e9, &[first]);
        parts.workload.tasks.push((0.0, 0, dag));
        if precalculated {
            parts.workload.precalculated_apps.push(0);
        }
        sc.run_parts(parts, &mut |_, _| true).unwrap()
    }
    let r = task_run(true);
    let fg = r.flows.iter().find(|f| f.src == 1).unwrap();
    assert!((fg.finish_s - 3.0).abs() < 1e-9, "{:?}", r.flows);
    assert_eq!(r.tasks.len(), 1);
    let t = &r.tasks[0];
    assert!((t.finish_s - 3.5).abs() < 1e-9, "{t:?}");
    // The task's bytes count the precalculated flow; the flows table has
    // only the flows the run carried.
    assert_eq!((t.bytes, t.flows, r.flows.len()), (3.75e9, 1, 2));
    assert_eq!(r.stats["background_flows"], 1.0);
    assert_eq!(r.stats["background_bytes"], 2.5e9);
    let plain = task_run(false);
    let fg = plain.flows.iter().find(|f| f.src == 1).unwrap();
    assert!((fg.finish_s - 3.0).abs() < 1e-9, "{:?}", plain.flows);
    assert!((plain.tasks[0].finish_s - 4.5).abs() < 1e-9, "{:?}", plain.tasks);
}

#[test]
fn a_precalculated_coflow_app_is_background_its_jobs_wait_for() {
    // The first 20 shuffles of the Facebook 2010 trace as MapReduce jobs
    // writing a tenth of what their reducers receive: precalculated, every
    // shuffle flow is background (and no flow of the run), the writes
    // still run, and the jobs' bytes are those of the plain run.
    let data = DataDir::resolve(None);
    if !data.exists() {
        eprintln!("note: data directory {} absent; skipping real-data test", data.path.display());
        return;
    }
    let text = |pre: bool, extra: &str| {
        format!(
            "[topology]\nkind = \"two-tier\"\nracks = 150\nhosts-per-rack = 2\nhost-link = \"1Gbps\"\noversubscription = 2\n\
             [hosts]\nstorage = [{{ kind = \"hdd\", count = 1, capacity = \"4TB\", write = \"50MB/s\" }}]\n\
             [workload]\n[[workload.app]]\nkind = \"coflow\"\ntasks = 20\noutput-ratio = 0.1\nprecalculated = {pre}\n\
             [storage]\npolicy = \"uniform\"\n{extra}"
        )
    };
    let go = |t: &str| Scenario::from_text(t, "s.toml", &std::env::temp_dir()).run(&data, &mut |_, _| true);
    let parts = Scenario::from_text(&text(true, ""), "s.toml", &std::env::temp_dir()).parts(&data).unwrap();
    let shuffle_flows: usize = parts
        .workload
        .tasks
        .iter()
        .map(|t| {
            (0..t.2.steps.len())
                .filter(|&s| t.2.deps(s).is_empty() && matches!(t.2.steps[s], netheat_workloads::Step::Flow { .. }))
                .count()
        })
        .sum();
    let pre = go(&text(true, "")).unwrap();
    let plain = go(&text(false, "")).unwrap();
    assert_eq!(pre.stats["background_flows"], shuffle_flows as f64);
    assert_eq!(pre.flows.len() + shuffle_flows, plain.flows.len());
    assert!(pre.flows.iter().all(|f| f.task_id >= 0));
    let bytes = |r: &ScenarioResult| r.tasks.iter().map(|t| t.bytes).sum::<f64>();
    assert!((bytes(&pre) - bytes(&plain)).abs() <= 1e-9 * bytes(&plain), "{} vs {}", bytes(&pre), bytes(&plain));
    assert!(pre.tasks.iter().all(|t| t.finish_s.is_finite()));
    // Where precalculation means nothing, the error names the app's key.
    let packet = text(true, "[scenario]\nengine = \"packet\"\n").replace("[storage]\npolicy = \"uniform\"\n", "");
    let e = go(&packet).unwrap_err().to_string();
    assert!(e.contains("workload.app.0.precalculated") && e.contains("flow"), "{e}");
}
