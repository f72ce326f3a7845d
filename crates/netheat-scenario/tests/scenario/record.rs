//! `scenario.record`: leaving the flows, links and queues tables out changes
//! what is kept, never what happens. Every example scenario run with
//! `record = ["placements"]` gives the same tasks, blocks, placements, migrations and
//! flow counts as the run that keeps every table, to the bit.

use std::path::Path;

use netheat_data::DataDir;
use netheat_scenario::result::PlacementOut;
use netheat_scenario::{Recorded, Scenario, ScenarioResult};

fn example(name: &str, overrides: &[(&str, &str)]) -> (ScenarioResult, ScenarioResult) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios").join(name);
    let run = |extra: &[(&str, &str)]| {
        let mut s = Scenario::from_path(&path).unwrap();
        for (k, v) in overrides.iter().chain(extra) {
            s = s.with_override(k, v).unwrap();
        }
        s.run(&DataDir::explicit("/nonexistent"), &mut |_, _| true).unwrap()
    };
    // The placements table is a decision table, kept to compare.
    (run(&[]), run(&[("scenario.record", "[\"placements\"]")]))
}

/// Float columns compared bit for bit (NaN equal to NaN).
fn bits(v: impl IntoIterator<Item = f64>) -> Vec<u64> {
    v.into_iter().map(f64::to_bits).collect()
}

fn assert_same_run(name: &str, full: &ScenarioResult, lean: &ScenarioResult) {
    assert_same_run_within(name, full, lean, 0.0);
}

/// As [`assert_same_run`], with the tasks' bytes and floors and the
/// placements' `tor_util` within `rel` (relative) rather than to the bit:
/// the bytes a flow delivered before it was cut are integrated up to the
/// engine's accounting instants, which include the link windows' edges,
/// and a link's rate is summed over its flows in the engine's slot order,
/// which changes when the slots of forgotten flows are reused; both can
/// differ in the last bit (the decisions, hosts and times are the same),
/// and a flow sized to end when its task ends (a cluster's) may then finish
/// in one run and be cut in the other: the counts of completed flows and
/// engine events within 1%.
fn assert_same_run_within(name: &str, full: &ScenarioResult, lean: &ScenarioResult, rel: f64) {
    assert_eq!(full.recorded, Recorded::default(), "{name}");
    assert_eq!(lean.recorded, Recorded { flows: false, links: false, queues: false, placements: true }, "{name}");
    assert!(!full.flows.is_empty(), "{name}: the full run keeps its flows");
    assert!(lean.flows.is_empty() && lean.links.is_empty() && lean.queues.is_empty(), "{name}");
    assert!(!full.tasks.is_empty(), "{name}: a run with tasks");
    assert_eq!(full.tasks.len(), lean.tasks.len(), "{name}");
    for (a, b) in full.tasks.iter().zip(&lean.tasks) {
        assert_eq!((a.task_id, &a.kind, a.table, a.flows), (b.task_id, &b.kind, b.table, b.flows), "{name}");
        assert_eq!(bits([a.start_s, a.finish_s]), bits([b.start_s, b.finish_s]), "{name}: task {}", a.task_id);
        for (x, y) in [(a.bytes, b.bytes), (a.floor_s, b.floor_s)] {
            let same = x.to_bits() == y.to_bits() || (x - y).abs() <= rel * x.abs();
            assert!(same, "{name}: task {}: {x} vs {y}", a.task_id);
        }
    }
    assert_eq!(full.blocks, lean.blocks, "{name}");
    // (Debug text: a stay still running at the end has a NaN finish.)
    assert_eq!(full.placements.len(), lean.placements.len(), "{name}");
    for (a, b) in full.placements.iter().zip(&lean.placements) {
        let close = a.tor_util.to_bits() == b.tor_util.to_bits() || (a.tor_util - b.tor_util).abs() <= rel * a.tor_util;
        let (a, b) = (PlacementOut { tor_util: 0.0, ..a.clone() }, PlacementOut { tor_util: 0.0, ..b.clone() });
        assert!(close && format!("{a:?}") == format!("{b:?}"), "{name}: {a:?} vs {b:?}");
    }
    assert_eq!(full.migrations, lean.migrations, "{name}");
    for k in ["flows", "completed", "end_s", "events", "rebinds", "class_changes", "migrations", "drops"] {
        let (a, b) = (full.stats.get(k), lean.stats.get(k));
        // With `rel`: a flow whose last bit arrives when its task ends can
        // finish (a completion, an event) in one run and be cut in the other.
        let near = rel > 0.0
            && matches!(k, "completed" | "events")
            && a.zip(b).is_some_and(|(a, b)| (a - b).abs() <= 1e-2 * a);
        assert!(a == b || near, "{name}: stats.{k}: {a:?} vs {b:?}");
    }
    assert_eq!(full.stats["flows"], full.flows.len() as f64, "{name}: every flow counted");
}

#[test]
fn trace_tasks_under_fifo_lm_are_the_same_without_flows() {
    // The user's flows with task ids, run as tasks (dynamic decisions).
    let (full, lean) = example("baraat-fifo-lm.toml", &[]);
    assert!(full.tasks.iter().all(|t| t.kind == "trace"));
    assert_same_run("fifo-lm", &full, &lean);
}

#[test]
fn trace_tasks_under_fair_share_are_the_same_without_flows() {
    // Fair share: the flows go straight to the engine; their tasks are
    // folded in as they finish.
    let (full, lean) = example("baraat-fifo-lm.toml", &[("scheduling.policy", "\"fair-share\"")]);
    assert_same_run("fair-share", &full, &lean);
}

#[test]
fn application_tasks_blocks_and_placements_are_the_same_without_flows() {
    let (full, lean) = example("storage-sinbad.toml", &[("workload.duration", "\"10s\"")]);
    assert!(!full.blocks.is_empty());
    assert_same_run("storage", &full, &lean);
    let (full, lean) = example("placement-utp.toml", &[]);
    assert!(!full.placements.is_empty());
    assert_same_run("placement", &full, &lean);
}

#[test]
fn a_cluster_is_the_same_without_flows() {
    let short =
        [("scenario.duration", "\"90min\""), ("workload.duration", "\"90min\""), ("scenario.warmup", "\"30min\"")];
    let (full, lean) = example("cluster-utp.toml", &short);
    assert!(!full.migrations.is_empty() && full.tasks.iter().any(|t| t.kind == "query-small"));
    // A cluster task's flow is cut when its run ends.
    assert_same_run_within("cluster", &full, &lean, 1e-12);
    for k in ["net_intensive_on_hot", "net_intensive_placements", "servers_used", "cpu_imbalance", "pending"] {
        assert_eq!(full.stats[k].to_bits(), lean.stats[k].to_bits(), "stats.{k}");
    }
}

#[test]
fn packet_runs_drop_the_tables_only() {
    let (full, lean) = example("packet-cloudburst.toml", &[]);
    assert!(!full.queues.is_empty());
    assert_same_run("packet", &full, &lean);
}

#[test]
fn record_takes_known_tables_only() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/poisson-inter-rack.toml");
    let run = |record: &str| {
        Scenario::from_path(&path)
            .unwrap()
            .with_override("scenario.record", record)
            .unwrap()
            .run(&DataDir::explicit("/x"), &mut |_, _| true)
    };
    let msg = run("[\"flow\"]").unwrap_err().to_string();
    assert!(msg.contains("scenario.record") && msg.contains("flows"), "{msg}");
    let only_links = run("[\"links\"]").unwrap();
    assert!(only_links.flows.is_empty() && !only_links.links.is_empty());
}

#[test]
fn a_run_that_forgets_its_flows_is_budgeted_for_what_it_holds() {
    // 2,000 tasks of 39 flows (78,000 flows) on the 36,000-host datacenter
    // (114 MiB by its own estimate): every table kept, 78,000 flow steps x
    // (2 KiB + 64 B) + 2,000 tasks x 1 KiB = 159 MiB more; tasks only,
    // 78,000 x (64 + 64) B + 2,000 x 1 KiB = 11.5 MiB more. Under a 250 MiB
    // budget the first is refused, the second runs.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/baraat-aggregation.toml");
    let scenario = |record: &str| {
        Scenario::from_path(&path)
            .unwrap()
            .with_override("workload.app.0.tasks", "2000")
            .unwrap()
            .with_override("scenario.record", record)
            .unwrap()
    };
    let budget = 250 << 20;
    let full = netheat_core::with_memory_budget(budget, || {
        scenario("[\"flows\", \"links\"]").run(&DataDir::explicit("/x"), &mut |_, _| true)
    });
    let msg = full.unwrap_err().to_string();
    assert!(msg.contains("78,000 flows") && msg.contains("over the memory budget"), "{msg}");
    let lean =
        netheat_core::with_memory_budget(budget, || scenario("[]").run(&DataDir::explicit("/x"), &mut |_, _| true))
            .unwrap();
    assert_eq!(lean.tasks.len(), 2000);
    assert_eq!(lean.stats["flows"], 78_000.0);
}
