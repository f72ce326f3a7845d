//! Workloads that would not fit the memory budget are refused before they
//! are generated, at the key that makes them large, quickly.

use std::path::Path;
use std::time::Instant;

use netheat_config::{load_topology_str, load_workload_str, ConfigError, Workload};
use netheat_core::{with_memory_budget, BYTES_PER_FLOW};
use netheat_data::DataDir;
use netheat_topology::Topology;

const MIB: u64 = 1 << 20;

/// 4 racks x 4 hosts, 10 Gbps everywhere: the ToR uplinks carry 4 x 10 Gbps;
/// a uniform flow leaves its rack with probability 12/15 = 0.8, so Poisson
/// at load `L` with 1 MB flows arrives at `L * 4e10 / (8e6 * 0.8)` =
/// `6250 L` flows per second.
fn topo() -> Topology {
    load_topology_str(
        "[topology]\nkind = \"two-tier\"\nracks = 4\nhosts-per-rack = 4\nhost-link = \"10Gbps\"\ntor-uplink = \"10Gbps\"\n",
        "dc.toml",
    )
    .unwrap()
}

fn run(budget: u64, text: &str, base: &Path) -> Result<Workload, ConfigError> {
    let topo = topo();
    let data = DataDir::explicit("/nonexistent/netheat-data");
    with_memory_budget(budget, || load_workload_str(text, "w.toml", base, &topo, 1, &data))
}

/// Expects a refusal within a second; returns (line, key, reason).
fn refused(budget: u64, text: &str) -> (usize, String, String) {
    refused_in(budget, text, Path::new("."))
}

fn refused_in(budget: u64, text: &str, base: &Path) -> (usize, String, String) {
    let t0 = Instant::now();
    let r = run(budget, text, base);
    assert!(t0.elapsed().as_secs_f64() < 2.0, "took {:?} for\n{text}", t0.elapsed());
    match r {
        Err(ConfigError::Invalid { line, key, reason, .. }) => {
            assert!(reason.len() < 400, "{} characters: {reason}", reason.len());
            (line, key, reason)
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(w) => panic!("accepted ({} flows, {} tasks):\n{text}", w.flows.len(), w.tasks.len()),
    }
}

const POISSON: &str = "[workload]\nduration = \"2s\"\n\n[[traffic]]\nkind = \"poisson\"\nload = 0.2\nsizes = { dist = \"constant\", size = \"1MB\" }\n";

#[test]
fn a_load_of_1e30_blames_load() {
    let (line, key, reason) = refused(256 * MIB, &POISSON.replace("load = 0.2", "load = 1e30"));
    assert_eq!((line, key.as_str()), (6, "traffic[0].load"));
    // 6250 * 1e30 flows per second for 2 s.
    assert!(
        reason.starts_with("`traffic[0]`: about 1.25e34 flows (6.25e33 per second for 2 s) would hold"),
        "{reason}"
    );
    assert!(reason.contains("over the memory budget of 256 MiB"), "{reason}");
    assert!(reason.ends_with("lower `load` (1e30) or use larger flows"), "{reason}");
}

#[test]
fn a_duration_of_1e9_seconds_blames_the_duration() {
    let (line, key, reason) = refused(256 * MIB, &POISSON.replace("\"2s\"", "\"1e9s\""));
    assert_eq!((line, key.as_str()), (2, "workload.duration"));
    // 6250 * 0.2 = 1250 flows per second for 1e9 s.
    assert!(reason.starts_with("`traffic[0]`: about 1,250,000,000,000 flows (1,250 per second"), "{reason}");
    // Its own duration is blamed when it has one.
    let own = "[[traffic]]\nkind = \"poisson\"\nload = 0.2\nduration = \"1e9s\"\nsizes = { dist = \"constant\", size = \"1MB\" }\n";
    let (line, key, _) = refused(256 * MIB, own);
    assert_eq!((line, key.as_str()), (4, "traffic[0].duration"));
}

#[test]
fn the_budget_is_the_limit_for_a_flow_count() {
    let text = POISSON.replace("load = 0.2", "load = 0.2\nflows = 1000").replace("duration = \"2s\"", "");
    let w = run(1000 * BYTES_PER_FLOW, &text, Path::new(".")).unwrap();
    assert_eq!(w.flows.len(), 1000);
    let (line, key, _) = refused(999 * BYTES_PER_FLOW, &text);
    assert_eq!((line, key.as_str()), (7, "traffic[0].flows"));
    // A second table counts what the first holds: 1000 + 1 flows.
    let two =
        format!("{text}\n[[traffic]]\nkind = \"batches\"\nk = 1\nsizes = {{ dist = \"constant\", size = \"1MB\" }}\n");
    let (_, key, reason) = refused(1000 * BYTES_PER_FLOW, &two);
    assert_eq!(key, "traffic[1].batches");
    assert!(reason.contains("with the tables before it"), "{reason}");
    assert_eq!(run(1001 * BYTES_PER_FLOW, &two, Path::new(".")).unwrap().flows.len(), 1001);
}

#[test]
fn batches_blame_k_or_batches() {
    let b = |k: &str, n: &str| {
        format!("[[traffic]]\nkind = \"batches\"\nk = {k}\nbatches = {n}\nsizes = {{ dist = \"constant\", size = \"1MB\" }}\n")
    };
    let (line, key, _) = refused(256 * MIB, &b("1000000000000", "2"));
    assert_eq!((line, key.as_str()), (3, "traffic[0].k"));
    let (line, key, _) = refused(256 * MIB, &b("3", "1000000000000"));
    assert_eq!((line, key.as_str()), (4, "traffic[0].batches"));
    let max = i64::MAX.to_string();
    let (_, key, _) = refused(256 * MIB, &b(&max, &max));
    assert_eq!(key, "traffic[0].k");
}

#[test]
fn on_off_rates_and_periods() {
    let t = |rate: &str, on: &str, dur: &str| {
        format!(
            "[[traffic]]\nkind = \"on-off\"\non-mean = \"{on}\"\noff-mean = \"{on}\"\nrate-on = {rate}\n\
             duration = \"{dur}\"\nsizes = {{ dist = \"constant\", size = \"1MB\" }}\n"
        )
    };
    // 16 sources on half the time: 8e30 flows per second.
    let (line, key, _) = refused(256 * MIB, &t("1e30", "1s", "1s"));
    assert_eq!((line, key.as_str()), (5, "traffic[0].rate-on"));
    let (line, key, _) = refused(256 * MIB, &t("1.0", "1s", "1e9s"));
    assert_eq!((line, key.as_str()), (6, "traffic[0].duration"));
    // Few flows but 16 * 2 * 1e6 / 2e-9 = 1.6e16 periods to walk through.
    let (line, key, reason) = refused(256 * MIB, &t("1e-6", "1ns", "1e6s"));
    assert_eq!((line, key.as_str()), (3, "traffic[0].on-mean"));
    assert!(reason.contains("periods"), "{reason}");
}

#[test]
fn apps_blame_rate_duration_tasks_or_task_size() {
    let app = |extra: &str| format!("[workload]\nduration = \"1s\"\n\n[[app]]\nkind = \"memcache\"\n{extra}\n");
    let (line, key, _) = refused(256 * MIB, &app("rate = 1e30"));
    assert_eq!((line, key.as_str()), (6, "app[0].rate"));
    let (line, key, _) = refused(256 * MIB, &app("rate = 100.0\nduration = \"1e12s\""));
    assert_eq!((line, key.as_str()), (7, "app[0].duration"));
    // `tasks` bounds what is drawn: accepted at once however high the rate.
    let w = run(256 * MIB, &app("rate = 1e30\ntasks = 5"), Path::new(".")).unwrap();
    assert_eq!(w.tasks.len(), 5);
    let (line, key, _) = refused(256 * MIB, &app("rate = 1e30\ntasks = 1000000000000"));
    assert_eq!((line, key.as_str()), (7, "app[0].tasks"));
    // One task alone too large: a shuffle of 1e12 x 10 pairs, 1e15 data-parallel rounds.
    let sh = "[[app]]\nkind = \"shuffle\"\nrate = 1.0\nduration = \"1s\"\nmappers = 1000000000000\n";
    let (line, key, _) = refused(256 * MIB, sh);
    assert_eq!((line, key.as_str()), (5, "app[0].mappers"));
    let dp = "[[app]]\nkind = \"data-parallel\"\nrate = 1.0\nduration = \"1s\"\nworkers = 4\niterations = 1000000000000000\n";
    let (line, key, reason) = refused(256 * MIB, dp);
    assert_eq!((line, key.as_str()), (6, "app[0].iterations"));
    // 4 workers: 12 flows per round, 1e15 rounds.
    assert!(reason.starts_with("`app[0]`: about 1 task of 1.2e16 flows would hold"), "{reason}");
}

#[test]
fn replay_repeat_until_and_time_scale() {
    let dir = std::env::temp_dir().join(format!("netheat-wb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f.csv"), "start_s,src,dst,bytes\n0,0,5,1000\n1,1,6,1000\n").unwrap();
    // Copies every 2 s (span 1 s plus one mean gap): 2 * 5e8 = 1e9 flows.
    let text = "[[traffic]]\nkind = \"replay\"\nfile = \"f.csv\"\nrepeat-until = \"1e9s\"\n";
    let (line, key, reason) = refused_in(256 * MIB, text, &dir);
    assert_eq!((line, key.as_str()), (4, "traffic[0].repeat-until"));
    assert!(reason.starts_with("`traffic[0]`: 1,000,000,000 flows (2 rows, repeated)"), "{reason}");
    let text = "[[traffic]]\nkind = \"replay\"\nfile = \"f.csv\"\ntime-scale = 1e308\noffset = \"1e308s\"\n";
    let (_, key, reason) = refused_in(256 * MIB, text, &dir);
    assert_eq!(key, "traffic[0]");
    assert!(reason.contains("would start at inf s"), "{reason}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn non_finite_numbers_are_errors() {
    for v in ["nan", "inf", "-inf", "-1.0", "0.0"] {
        let (line, key, reason) = refused(256 * MIB, &POISSON.replace("0.2", v));
        assert_eq!((line, key.as_str()), (6, "traffic[0].load"), "{v}");
        assert!(reason.contains("positive"), "{reason}");
    }
    let (_, key, _) = refused(256 * MIB, &POISSON.replace("\"2s\"", "\"1e400s\""));
    assert_eq!(key, "workload.duration");
}

/// An aggregation table is charged per flow, per step and per task: 100
/// one-stage tasks of 3 flows (the other hosts of a 4-host rack) hold
/// 100 x (3 x 2,048 + 1,024 + 3 x 64) = 736,000 bytes with their flows kept,
/// and 100 x (3 x 64 + 1,024 + 3 x 64) = 140,800 bytes without.
#[test]
fn the_budget_is_the_limit_for_an_aggregation_table() {
    let text = "[workload]\n\n[[app]]\nkind = \"aggregation\"\ntask-sizes = \"uniform\"\nstructure = \"one-stage\"\n\
                placement = \"rack\"\nfanout = 3\naggregators = 4\nload = 0.5\ntasks = 100\n";
    let w = run(736_000, text, Path::new(".")).unwrap();
    assert_eq!((w.tasks.len(), w.tasks.iter().map(|t| t.2.num_flows()).sum::<usize>()), (100, 300));
    let (line, key, reason) = refused(735_999, text);
    assert_eq!((line, key.as_str()), (11, "app[0].tasks"));
    assert!(reason.starts_with("`app[0]`: 100 tasks of 3 flows would hold about 719 KiB"), "{reason}");
    let unkept = |budget: u64| {
        netheat_core::budget::with_flow_bytes(netheat_core::budget::BYTES_PER_UNKEPT_FLOW, || {
            run(budget, text, Path::new("."))
        })
    };
    assert_eq!(unkept(140_800).unwrap().tasks.len(), 100);
    assert!(unkept(140_799).is_err());
    // A second such table counts the first one's tasks and steps as held.
    let app = &text[text.find("[[app]]").unwrap()..];
    let two = format!("{text}\n{app}");
    assert_eq!(run(1_472_000, &two, Path::new(".")).unwrap().tasks.len(), 200);
    let (_, key, reason) = refused(1_471_999, &two);
    assert_eq!(key, "app[1].tasks");
    assert!(reason.contains("with the tables before it"), "{reason}");
}
