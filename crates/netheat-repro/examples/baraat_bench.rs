//! Benchmark of Baraat experiment points at the paper's scale (§5.2): a
//! 36,000-host three-tier datacenter, 10,000 one-stage partition-aggregate
//! tasks per point, each aggregator querying the other 39 hosts of its rack,
//! one aggregator per pod (`BARAAT_PLACEMENT=pool` for our earlier setup,
//! with pools from `BARAAT_AGGREGATORS` / `BARAAT_WORKERS`; `BARAAT_FANOUT`
//! for the flows a task; `BARAAT_APP=two-stage` for two-stage tasks of 30
//! mid-levels x 39 workers, `BARAAT_MIDS` to change the mid-levels).
//! `data_analytics` reads the Facebook 2010 trace from the data directory
//! (`NETHEAT_DATA`, else `../shared/data`). Prints a table of wall time
//! against the target (< 600 s per 10,000-task point on 2 cores), flows, and
//! mean / median / p95 / p99 TCT per policy, plus the SPC protocol against the idealized
//! FIFO-LM. Each point runs in its own process, whose peak memory is printed
//! too, and so are the engine's repairs (instants whose events change
//! rates) and rate changes, which is what a point's time is made of.
//!
//! `cargo run --release -p netheat-repro --example baraat_bench [-- TASKS [WORKLOADS [POLICIES]]]`
//! (comma-separated lists; policy `spc` is FIFO-LM through the SPC simulator,
//! `spc-vc` the same with virtual capacity, Baraat §4.3.2).
//! `make bench` runs the one-stage points, `make bench-baraat-two-stage`
//! the two-stage ones.

use netheat_core::stats::{mean, quantile};
use netheat_repro::baraat::workload::load_fb2010_task_sizes;
use netheat_repro::baraat::{run_point, AggregationSpec, Placement, PointSpec, SizeLaw, Structure};
use std::time::Instant;

/// The target for one 10,000-task point, seconds.
const TARGET_S: f64 = 600.0;

/// Set in the child process that runs one point.
const CHILD: &str = "BARAAT_BENCH_POINT";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Peak resident memory of this process in MB (Linux; `None` elsewhere).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn placement() -> Placement {
    Placement::parse(&std::env::var("BARAAT_PLACEMENT").unwrap_or_else(|_| "rack".into())).expect("BARAAT_PLACEMENT")
}

/// Runs one point in this process and prints its row.
fn run_row(tasks: usize, app: Structure, wl: &str, policy: &str) {
    let kind = SizeLaw::parse(wl).expect("workload");
    let task_sizes = (kind == SizeLaw::DataAnalytics)
        .then(|| load_fb2010_task_sizes(&netheat_data::DataDir::resolve(None)).expect("the Facebook 2010 trace"));
    let w = AggregationSpec {
        aggregators: env_or("BARAAT_AGGREGATORS", 30),
        workers: env_or("BARAAT_WORKERS", 0),
        fanout: env_or("BARAAT_FANOUT", 39),
        flow_cv: std::env::var("BARAAT_FLOW_CV").ok().and_then(|v| v.parse().ok()).unwrap_or(0.0),
        mids: env_or("BARAAT_MIDS", if app == Structure::TwoStage { 30 } else { 0 }),
        placement: placement(),
        task_sizes,
        seed: env_or("BARAAT_SEED", 1) as u64,
        ..AggregationSpec::new(kind, app, tasks, 1)
    };
    // `spc` is FIFO-LM through the SPC protocol simulator, `spc-vc` the
    // same with virtual capacity (§4.3.2).
    let spc = policy == "spc" || policy == "spc-vc";
    let mut p = PointSpec::new(30, 30, 40, w, if spc { "fifo-lm" } else { policy });
    p.spc = spc;
    p.virtual_capacity = policy == "spc-vc";
    let t0 = Instant::now();
    let r = match run_point(&p) {
        Ok(r) => r,
        Err(e) => {
            println!("{wl:<15} {policy:<10} error: {e}");
            return;
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    let mean = mean(&tct);
    // The target is for points of 10,000 tasks (or more); smaller runs show
    // none, since the cost grows faster than the number of tasks.
    let (target, ok) = if tasks >= 10_000 {
        (format!("{TARGET_S:.0}"), if wall < TARGET_S { "yes" } else { "NO" })
    } else {
        ("-".to_string(), "-")
    };
    let rss = peak_rss_mb().map_or("-".to_string(), |m| format!("{m:.0}"));
    // What an engine run's time is made of: its repairs (instants whose
    // events change rates) and the rate changes they make.
    let (repairs, changes) = r
        .engine
        .as_ref()
        .map_or(("-".to_string(), "-".to_string()), |s| (s.repairs.to_string(), s.rate_changes.to_string()));
    println!(
        "{:<15} {:<10} {:>9} {:>9.2} {:>8} {:>4} {:>8} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>9} {:>12}",
        wl,
        policy,
        r.flows,
        wall,
        target,
        ok,
        rss,
        mean * 1e3,
        quantile(&tct, 0.5) * 1e3,
        quantile(&tct, 0.95) * 1e3,
        quantile(&tct, 0.99) * 1e3,
        repairs,
        changes
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tasks: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let wls: Vec<String> = args
        .get(2)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| vec!["bing".into(), "data_analytics".into(), "uniform".into()]);
    let pols: Vec<String> = args
        .get(3)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| ["fair-share", "sff", "stf", "fifo", "fifo-lm", "spc", "spc-vc"].map(String::from).to_vec());
    let app_tag = std::env::var("BARAAT_APP").unwrap_or_else(|_| "one-stage".into());
    let app = Structure::parse(&app_tag).expect("BARAAT_APP");
    if std::env::var_os(CHILD).is_some() {
        run_row(tasks, app, &wls[0], &pols[0]);
        return;
    }
    println!(
        "36,000 hosts (30x30x40, 1 Gbps, 2:1), {tasks} {app_tag} tasks (fanout {}), load 0.8, placement {:?}, {} aggregators / worker pool {} (0 = all hosts; pool placement only)",
        env_or("BARAAT_FANOUT", 39),
        placement(),
        env_or("BARAAT_AGGREGATORS", 30),
        env_or("BARAAT_WORKERS", 0)
    );
    println!(
        "{:<15} {:<10} {:>9} {:>9} {:>8} {:>4} {:>8} {:>11} {:>11} {:>11} {:>11} {:>9} {:>12}",
        "workload",
        "policy",
        "flows",
        "wall_s",
        "target_s",
        "ok",
        "rss_MB",
        "mean_tct_ms",
        "p50_tct_ms",
        "p95_tct_ms",
        "p99_tct_ms",
        "repairs",
        "rate_changes"
    );
    let exe = std::env::current_exe().ok();
    for wl in &wls {
        for pol in &pols {
            // Each point in a fresh process: its peak memory is its own, and
            // it does not run on the heap that earlier points left behind.
            let child = exe.as_ref().map(|exe| {
                std::process::Command::new(exe)
                    .args([tasks.to_string(), wl.clone(), pol.clone()])
                    .env(CHILD, "1")
                    .status()
            });
            match child {
                Some(Ok(st)) if !st.success() => {
                    println!("{wl:<15} {pol:<10} error: the point's process failed ({st})")
                }
                Some(Ok(_)) => {}
                // No process could be started: run the point here.
                _ => run_row(tasks, app, wl, pol),
            }
        }
    }
}
