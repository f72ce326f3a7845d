//! Fuzzing the config readers (proptest): mutations of every example file
//! (bit flips, deleted and repeated lines, numbers replaced by extreme
//! values, huge unit strings, truncation) must load or fail with a short
//! message, never panic, and never take long or much memory (every case
//! runs under a memory budget of 2 GiB).
//!
//! The number of cases is proptest's `PROPTEST_CASES` (default 256);
//! `make fuzz` runs many more in release mode.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use netheat_config::{load_topology_str, load_workload_str, ConfigError};
use netheat_core::with_memory_budget;
use netheat_data::DataDir;
use netheat_topology::Topology;
use proptest::prelude::*;

/// Longest error message accepted.
const MAX_MESSAGE: usize = 600;

/// Memory budget of every case: 2 GiB, so the coflow example (706,397 flows
/// estimated) still runs.
const BUDGET: u64 = 2 << 30;

/// Slowest case accepted, seconds (debug builds are slow; generous).
const MAX_CASE_S: f64 = 20.0;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(name, text)` of every `.toml` file in `examples/<dir>`, sorted.
fn examples(dir: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join("examples").join(dir))
        .expect("examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no examples in {dir}");
    out
}

const EXTREMES: [&str; 16] = [
    "0",
    "-1",
    "1e30",
    "1e300",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "1e-300",
    "0.0",
    "1e400",
    "1000000000000",
    "-0.5",
];

/// One change to a file.
#[derive(Debug, Clone)]
enum Mutation {
    /// Flip bit `bit` of byte `at` (modulo the length).
    FlipBit { at: usize, bit: u8 },
    /// Delete line `n` (modulo the line count).
    DeleteLine(usize),
    /// Repeat line `n`.
    RepeatLine(usize),
    /// Replace the `nth` number (also inside strings, e.g. the 10 of
    /// "10Gbps") by an extreme value.
    Number { nth: usize, value: usize },
    /// Replace the `nth` quoted string by a huge one.
    HugeString { nth: usize, kind: usize },
    /// Cut the file at byte `at`.
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    // Numbers most often: they reach the deepest (generation, sizes).
    prop_oneof![
        2 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::RepeatLine),
        6 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(nth, value)| Mutation::Number { nth, value }),
        1 => (any::<usize>(), 0usize..4).prop_map(|(nth, kind)| Mutation::HugeString { nth, kind }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Byte ranges of the numbers of `text` outside comments: digit runs (with
/// `.`, `_`, `e` inside) not preceded by a letter or digit.
fn numbers(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    while i < text.len() {
        match text[i] {
            b'"' => quoted = !quoted,
            b'\n' => quoted = false,
            b'#' if !quoted => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        let starts = text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_alphanumeric());
        if starts {
            let mut j = i + 1;
            while j < text.len() && (text[j].is_ascii_digit() || matches!(text[j], b'.' | b'_' | b'e' | b'E')) {
                j += 1;
            }
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the contents of the quoted strings of `text`.
fn strings(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open = None;
    for (i, &b) in text.iter().enumerate() {
        if b == b'"' {
            match open.take() {
                None => open = Some(i + 1),
                Some(s) => out.push((s, i)),
            }
        } else if b == b'\n' {
            open = None;
        }
    }
    out
}

fn huge(kind: usize) -> String {
    match kind {
        0 => format!("1{}Gbps", "0".repeat(100_000)),
        1 => "x".repeat(100_000),
        2 => format!("{}s", "9".repeat(5_000)),
        _ => format!("5{}", "e".repeat(50_000)),
    }
}

fn apply(text: &str, ms: &[Mutation]) -> String {
    let mut b = text.as_bytes().to_vec();
    for m in ms {
        if b.is_empty() {
            break;
        }
        match *m {
            Mutation::FlipBit { at, bit } => {
                let i = at % b.len();
                b[i] ^= 1 << bit;
            }
            Mutation::DeleteLine(n) | Mutation::RepeatLine(n) => {
                let mut lines: Vec<Vec<u8>> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let k = n % lines.len();
                if matches!(m, Mutation::DeleteLine(_)) {
                    lines.remove(k);
                } else {
                    let l = lines[k].clone();
                    lines.insert(k, l);
                }
                b = lines.join(&b'\n');
            }
            Mutation::Number { nth, value } => {
                let ns = numbers(&b);
                if let Some(&(s, e)) = ns.get(nth % ns.len().max(1)) {
                    b.splice(s..e, EXTREMES[value].bytes());
                }
            }
            Mutation::HugeString { nth, kind } => {
                let ss = strings(&b);
                if let Some(&(s, e)) = ss.get(nth % ss.len().max(1)) {
                    b.splice(s..e, huge(kind).into_bytes());
                }
            }
            Mutation::Truncate(at) => b.truncate(at % (b.len() + 1)),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[track_caller]
fn check_error(e: &ConfigError, text: &str) {
    let msg = e.to_string();
    assert!(msg.len() <= MAX_MESSAGE, "message of {} characters: {}", msg.len(), &msg[..MAX_MESSAGE.min(msg.len())]);
    if let ConfigError::Invalid { line, reason, .. } = e {
        assert!(*line >= 1 && *line <= text.lines().count().max(1) + 1, "line {line} of {msg}");
        assert!(!reason.trim().is_empty(), "no reason: {msg}");
    }
}

fn topo() -> &'static Topology {
    static T: OnceLock<Topology> = OnceLock::new();
    T.get_or_init(|| {
        let p = root().join("examples/topologies/two-tier-4x4.toml");
        netheat_config::load_topology(&p).expect("example topology")
    })
}

fn data() -> &'static DataDir {
    static D: OnceLock<DataDir> = OnceLock::new();
    D.get_or_init(|| DataDir::resolve(None))
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn datacenter_files(file in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..4)) {
        let files = examples("topologies");
        let (_, original) = &files[file.index(files.len())];
        let text = apply(original, &ms);
        let t0 = Instant::now();
        let r = with_memory_budget(BUDGET, || load_topology_str(&text, "dc.toml"));
        prop_assert!(t0.elapsed().as_secs_f64() < MAX_CASE_S, "took {:?}", t0.elapsed());
        if let Err(e) = &r {
            check_error(e, &text);
        }
    }

    #[test]
    fn workload_files(file in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..4), seed in 0u64..4) {
        let mut files = examples("workloads");
        files.push(("kinds".into(), KINDS.into()));
        let (_, original) = &files[file.index(files.len())];
        let text = apply(original, &ms);
        let base = root().join("examples/workloads");
        let t0 = Instant::now();
        let r = with_memory_budget(BUDGET, || load_workload_str(&text, "w.toml", &base, topo(), seed, data()));
        prop_assert!(t0.elapsed().as_secs_f64() < MAX_CASE_S, "took {:?}", t0.elapsed());
        if let Err(e) = &r {
            check_error(e, &text);
        }
    }
}

/// The generators and structures no example uses, as one more file to mutate.
const KINDS: &str = r#"[workload]
duration = "1s"

[[traffic]]
kind = "batches"
k = 8
batches = 3
period = "100ms"
offset = "10ms"
sizes = { dist = "lognormal", mean = "100KB", sigma = 1.5 }
pattern = "inter-rack"
priority = 2

[[traffic]]
kind = "poisson"
flows = 100
load = 0.5
links = "host-uplinks"
sizes = { dist = "exponential", mean = "50KB" }

[[traffic]]
kind = "on-off"
on-mean = "10ms"
off-mean = "30ms"
rate-on = 100.0
duration = "500ms"
sizes = { dist = "constant", size = "1MB" }

[[app]]
kind = "data-parallel"
rate = 5.0
workers = 4
iterations = 3
compute = "1ms"
bytes-per-pair = "1MB"

[[app]]
kind = "partition-aggregate"
stages = 2
rate = 10.0
tasks = 5
mid-aggregators = 2
mid-compute = "1ms"
mid-response = "10KB"
selectivity = 0.5

[[app]]
kind = "retrieval"
rate = 10.0
servers = 3
chunk = "1MB"
"#;

#[test]
fn the_kinds_file_loads() {
    with_memory_budget(BUDGET, || load_workload_str(KINDS, "w.toml", Path::new("."), topo(), 1, data())).unwrap();
}

#[test]
fn the_mutations_do_what_they_say() {
    let text = "[topology]\nracks = 4\nhost-link = \"10Gbps\"\n";
    assert_eq!(numbers(text.as_bytes()).len(), 2);
    assert_eq!(numbers(b"# 30 pods\nx = 1 # 2\ny = \"#3\"\n"), vec![(14, 15), (26, 27)]);
    assert_eq!(
        apply(text, &[Mutation::Number { nth: 1, value: 4 }]),
        "[topology]\nracks = 4\nhost-link = \"nanGbps\"\n"
    );
    assert_eq!(apply(text, &[Mutation::DeleteLine(1)]), "[topology]\nhost-link = \"10Gbps\"\n");
    assert_eq!(apply(text, &[Mutation::RepeatLine(1)]), "[topology]\nracks = 4\nracks = 4\nhost-link = \"10Gbps\"\n");
    assert_eq!(apply(text, &[Mutation::HugeString { nth: 0, kind: 1 }]).len(), text.len() - 6 + 100_000);
    assert_eq!(apply(text, &[Mutation::Truncate(5)]), "[topo");
    assert_eq!(apply("a", &[Mutation::FlipBit { at: 0, bit: 0 }]), "`");
}
