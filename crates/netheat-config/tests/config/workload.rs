//! Workload files: generation on a topology, hand-checked counts and loads,
//! and every kind of bad input.

use std::path::Path;

use netheat_config::{load_topology_str, load_workload_str, ConfigError, Workload};
use netheat_data::DataDir;
use netheat_topology::Topology;

fn two_tier(racks: u32, hosts: u32) -> Topology {
    let text = format!(
        "[topology]\nkind = \"two-tier\"\nracks = {racks}\nhosts-per-rack = {hosts}\nhost-link = \"10Gbps\"\ntor-uplink = \"10Gbps\"\n"
    );
    load_topology_str(&text, "dc.toml").expect("valid topology")
}

/// A data directory that does not exist: dataset references must fail.
fn no_data() -> DataDir {
    DataDir::explicit("/nonexistent/netheat-data")
}

fn gen(text: &str, topo: &Topology, seed: u64) -> Workload {
    load_workload_str(text, "w.toml", Path::new("."), topo, seed, &no_data()).expect("valid workload")
}

fn fails_with(text: &str, topo: &Topology, data: &DataDir) -> (usize, String, String) {
    match load_workload_str(text, "w.toml", Path::new("."), topo, 1, data) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(ConfigError::Invalid { file, line, key, reason, .. }) => {
            assert_eq!(file, "w.toml");
            (line, key, reason)
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}

fn fails(text: &str) -> (usize, String, String) {
    fails_with(text, &two_tier(4, 4), &no_data())
}

#[test]
fn poisson_offers_its_target_load_on_tor_uplinks() {
    // Inter-rack flows on a two-tier fabric cross exactly one ToR uplink, so
    // the offered load is (bytes of inter-rack flows) * 8 / (4 uplinks x 10 Gbps x T).
    let topo = two_tier(4, 4);
    let w = gen(
        "[workload]\nduration = \"200s\"\n[[traffic]]\nkind = \"poisson\"\nload = 0.5\nsizes = { dist = \"exponential\", mean = \"1MB\" }\n",
        &topo,
        7,
    );
    let bits: f64 = w.flows.iter().filter(|f| f.src / 4 != f.dst / 4).map(|f| f.bytes * 8.0).sum();
    let load = bits / (4.0 * 10e9 * 200.0);
    assert!((load - 0.5).abs() < 0.5 * 0.02, "offered load {load}");
    assert!(w.flows.windows(2).all(|p| p[0].start_s <= p[1].start_s));
    assert!(w.flows.iter().enumerate().all(|(i, f)| f.flow_id == i as u64));
}

#[test]
fn same_seed_same_flows_and_tables_draw_independent_streams() {
    let topo = two_tier(4, 4);
    let one = "[[traffic]]\nkind = \"poisson\"\nload = 0.3\nduration = \"5s\"\nsizes = { dist = \"constant\", size = \"100KB\" }\npriority = 0\n";
    let two = format!("{one}[[traffic]]\nkind = \"batches\"\nk = 3\nbatches = 2\nperiod = \"1s\"\nsizes = {{ dist = \"constant\", size = \"1MB\" }}\npriority = 5\n");
    let a = gen(one, &topo, 3);
    let b = gen(one, &topo, 3);
    assert_eq!(a.flows, b.flows);
    // Adding a table does not change what the first one generates.
    let c = gen(&two, &topo, 3);
    let first: Vec<_> = c.flows.iter().filter(|f| f.priority == 0).map(|f| (f.start_s, f.src, f.dst)).collect();
    let alone: Vec<_> = a.flows.iter().map(|f| (f.start_s, f.src, f.dst)).collect();
    assert_eq!(first, alone);
    assert_eq!(c.flows.iter().filter(|f| f.priority == 5).count(), 6);
}

#[test]
fn two_stage_partition_aggregate_has_the_hand_counted_flows() {
    // 32 racks of 4 hosts: each of the 30 mid-level aggregators gets one
    // request, queries its 3 rack mates (3 requests + 3 responses) and answers
    // the top: 30 x (1 + 6 + 1) = 240 flows per task.
    let topo = two_tier(32, 4);
    let w = gen(
        "[[app]]\nkind = \"partition-aggregate\"\nstages = 2\nrate = 100.0\nduration = \"1s\"\ntasks = 5\n",
        &topo,
        1,
    );
    assert_eq!(w.tasks.len(), 5);
    for (_, table, dag) in &w.tasks {
        assert_eq!(*table, 0);
        assert_eq!(dag.num_flows(), 240);
        assert_eq!(dag.kind, "partition-aggregate-2");
    }
}

#[test]
fn shuffle_and_memcache_tables() {
    let topo = two_tier(4, 4);
    let w = gen(
        "[workload]\nduration = \"1s\"\n[[app]]\nkind = \"shuffle\"\nrate = 20.0\nmappers = 3\nreducers = 2\nbytes-per-pair = \"15MB\"\n[[app]]\nkind = \"memcache\"\nrate = 50.0\nserver-racks = [1]\n",
        &topo,
        2,
    );
    let shuffles: Vec<_> = w.tasks.iter().filter(|t| t.1 == 0).collect();
    assert!(!shuffles.is_empty());
    for (_, _, d) in &shuffles {
        assert_eq!(d.num_flows(), 6);
        assert!((d.bytes() - 6.0 * 15e6).abs() < 1e-6);
    }
    for (_, _, d) in w.tasks.iter().filter(|t| t.1 == 1) {
        assert!((d.bytes() - 1550.0).abs() < 1e-9);
        // The server (destination of the request) is in rack 1: hosts 4..8.
        match d.steps[0] {
            netheat_workloads::Step::Flow { dst, .. } => assert!((4..8).contains(&dst)),
            _ => panic!("first step is the request"),
        }
    }
}

#[test]
fn bad_inputs_name_the_key_and_reason() {
    let sizes = "sizes = { dist = \"constant\", size = \"1MB\" }";
    let cases: Vec<(String, &str, &str)> = vec![
        ("[[traffic]]\nkind = \"poisson\"\nload = 0.5\nduration = \"1s\"\nbogus = 1\n".into(), "bogus", "unknown key"),
        ("[[traffic]]\nkind = \"teleport\"\n".into(), "kind", "poisson"),
        (
            format!("[[traffic]]\nkind = \"poisson\"\nload = 0.5\nduration = \"1s\"\n{sizes}\nk = 3\n"),
            "traffic[0].k",
            "not used by kind",
        ),
        (
            format!("[[traffic]]\nkind = \"poisson\"\nload = 0.5\nduration = \"1 parsec\"\n{sizes}\n"),
            "duration",
            "invalid duration",
        ),
        (
            format!("[[traffic]]\nkind = \"poisson\"\nload = -1.0\nduration = \"1s\"\n{sizes}\n"),
            "traffic[0].load",
            "positive",
        ),
        ("[[traffic]]\nkind = \"poisson\"\nload = 0.5\nduration = \"1s\"\n".into(), "traffic[0].sizes", "missing"),
        (format!("[[traffic]]\nkind = \"poisson\"\nload = 0.5\n{sizes}\n"), "traffic[0]", "duration"),
        (
            format!("[[traffic]]\nkind = \"batches\"\nk = 2\npattern = \"matrix\"\n{sizes}\n"),
            "traffic[0].pattern",
            "matrix",
        ),
        (
            "[[traffic]]\nkind = \"replay\"\nfile = \"no-such-flows.csv\"\n".into(),
            "traffic[0].file",
            "no-such-flows.csv",
        ),
        (
            "[[app]]\nkind = \"memcache\"\nrate = 1.0\nduration = \"1s\"\nserver-racks = [9]\n".into(),
            "app[0].server-racks[0]",
            "rack 9 does not exist",
        ),
        (
            "[[app]]\nkind = \"partition-aggregate\"\nrate = 1.0\nduration = \"1s\"\nstages = 3\n".into(),
            "app[0].stages",
            "1 or 2",
        ),
        (
            "[[app]]\nkind = \"partition-aggregate\"\nrate = 1.0\nduration = \"1s\"\nmid-aggregators = 3\n".into(),
            "app[0].mid-aggregators",
            "not used by kind",
        ),
        ("[[app]]\nkind = \"aggregation\"\nmid-host = \"first\"\n".into(), "app[0].mid-host", "two-stage"),
        ("[[app]]\nkind = \"aggregation\"\nmid-compute = \"1ms\"\n".into(), "app[0].mid-compute", "two-stage"),
        (
            "[[app]]\nkind = \"aggregation\"\nflow-size-range = [\"5KB\", \"40KB\"]\n".into(),
            "app[0].flow-size-range",
            "uniform",
        ),
        (
            "[[app]]\nkind = \"aggregation\"\ntask-sizes = \"uniform\"\nflow-size-range = [\"40KB\", \"5KB\"]\n".into(),
            "app[0].flow-size-range",
            "low <= high",
        ),
        (
            "[[app]]\nkind = \"aggregation\"\ntask-sizes = \"uniform\"\nflow-size-range = [\"5KB\"]\n".into(),
            "app[0].flow-size-range",
            "[low, high]",
        ),
        (
            "[[app]]\nkind = \"aggregation\"\nstructure = \"two-stage\"\nmid-aggregators = 2\nmid-compute = \"-1ms\"\n"
                .into(),
            "app[0].mid-compute",
            "",
        ),
        (
            "[[app]]\nkind = \"aggregation\"\nstructure = \"two-stage\"\nmid-host = \"last\"\n".into(),
            "app[0].mid-host",
            "known: random, first",
        ),
        (
            "[[app]]\nkind = \"retrieval\"\nrate = 1.0\nduration = \"1s\"\ndevice = \"tape\"\n".into(),
            "app[0].device",
            "hdd, ram, ssd",
        ),
        ("[workload]\nduration = \"1s\"\n".into(), "", "at least one"),
    ];
    for (text, key, reason) in cases {
        let (_, k, r) = fails(&text);
        assert!(k.ends_with(key) || (key.is_empty() && k.is_empty()), "key {k:?} for {text}");
        assert!(r.contains(reason), "reason {r:?} lacks {reason:?} for {text}");
    }
}

#[test]
fn a_missing_dataset_says_which_file_and_where_it_looked() {
    let text = "[[traffic]]\nkind = \"poisson\"\nload = 0.5\nduration = \"1s\"\nsizes = { dist = \"empirical\", cdf = \"cdf-websearch-hpcc\" }\n";
    let (line, key, reason) = fails(text);
    assert_eq!(line, 5);
    assert_eq!(key, "traffic[0].sizes.cdf");
    assert!(reason.contains("/nonexistent/netheat-data"), "{reason}");
    let (_, key, reason) = fails("[[traffic]]\nkind = \"coflow\"\ndataset = \"no-such-trace\"\n");
    assert_eq!(key, "traffic[0].dataset");
    assert!(reason.contains("no-such-trace"), "{reason}");
}

/// The real data directory, when present (`NETHEAT_DATA` or `../shared/data`).
fn real_data() -> Option<DataDir> {
    let d = DataDir::resolve(None);
    if d.exists() {
        Some(d)
    } else {
        eprintln!("note: data directory {} absent; skipping real-data test", d.path.display());
        None
    }
}

#[test]
fn coflow_trace_on_hosts_keeps_the_trace_totals() {
    let Some(data) = real_data() else { return };
    // 150 racks like the trace: no folding. Every byte is either a flow or
    // exchanged locally (mapper and reducer drawn on the same host).
    let topo = two_tier(150, 4);
    let w = load_workload_str("[[app]]\nkind = \"coflow\"\n", "w.toml", Path::new("."), &topo, 1, &data)
        .expect("coflow workload");
    assert_eq!(w.tasks.len(), 526);
    let flow_bytes: f64 = w.tasks.iter().map(|t| t.2.bytes()).sum();
    let total_mb = (flow_bytes + w.local_bytes) / netheat_config::workload::COFLOW_MB;
    assert!((total_mb - 35_533_534.0).abs() < 1.0, "total {total_mb} MB");
    let last = w.tasks.iter().map(|t| t.0).fold(0.0, f64::max);
    assert!((last - 3_629.235).abs() < 1e-9, "last arrival {last}");
    assert!(w.notes.iter().all(|n| !n.contains("mod")), "no folding expected: {:?}", w.notes);
}

#[test]
fn coflow_bytes_scale_scales_every_shuffle_byte() {
    let Some(data) = real_data() else { return };
    // The same traffic with its bytes scaled by 1/30 (Sinbad's EC2 jobs
    // scaled from 3,000 machines to 100): the same flows at the same
    // times, each a thirtieth of the size, and the local bytes too.
    let topo = two_tier(150, 4);
    let text = "[[traffic]]\nkind = \"coflow\"\nduration = \"300s\"\n";
    let full = load_workload_str(text, "w.toml", Path::new("."), &topo, 1, &data).expect("coflow traffic");
    let scaled = load_workload_str(
        &format!("{text}bytes-scale = 0.03333333333333333\n"),
        "w.toml",
        Path::new("."),
        &topo,
        1,
        &data,
    )
    .expect("scaled coflow traffic");
    assert_eq!(full.flows.len(), scaled.flows.len());
    assert!(!full.flows.is_empty());
    for (a, b) in full.flows.iter().zip(&scaled.flows) {
        assert_eq!((a.src, a.dst, a.start_s), (b.src, b.dst, b.start_s));
        assert!((b.bytes * 30.0 - a.bytes).abs() <= 1e-9 * a.bytes, "{} vs {}", a.bytes, b.bytes);
    }
    assert!((scaled.local_bytes * 30.0 - full.local_bytes).abs() <= 1e-9 * full.local_bytes);
    let (_, key, _) = fails_with(&format!("{text}bytes-scale = 0.0\n"), &topo, &data);
    assert_eq!(key, "traffic[0].bytes-scale");
}

#[test]
fn traffic_matrix_background_reaches_its_load() {
    let Some(data) = real_data() else { return };
    // Meta cluster A excerpt (32 racks) on 32 racks: rack pairs weighted by
    // the matrix; the offered load on the ToR uplinks is the target.
    let topo = two_tier(32, 4);
    let w = load_workload_str(
        "[[traffic]]\nkind = \"poisson\"\nload = 0.4\nduration = \"100s\"\nmatrix = \"tm-cluster-a-2-16\"\nsizes = { dist = \"exponential\", mean = \"1MB\" }\n",
        "w.toml",
        Path::new("."),
        &topo,
        4,
        &data,
    )
    .expect("matrix workload");
    let bits: f64 = w.flows.iter().filter(|f| f.src / 4 != f.dst / 4).map(|f| f.bytes * 8.0).sum();
    let load = bits / (32.0 * 10e9 * 100.0);
    assert!((load - 0.4).abs() < 0.4 * 0.02, "offered load {load}");
}

#[test]
fn file_writes_of_a_mean_number_of_blocks_are_geometric() {
    // 1 + G blocks, G geometric with mean 0.47: the mean block count of
    // 4,000 files is 1.47 within four standard errors (the variance of a
    // geometric count of mean mu is mu (1 + mu)), and counts of 1, 2, 3
    // blocks come in the ratios of P(G = j) = (1 - q) q^j, q = 0.47 / 1.47.
    let text = "[workload]\nduration = \"1000s\"\n[[app]]\nkind = \"file-write\"\nrate = 4.0\nblock = \"1MiB\"\nmean-file-blocks = 1.47\nreplicas = 2\n";
    let w = gen(text, &two_tier(4, 4), 3);
    let blocks: Vec<f64> = w.tasks.iter().map(|t| t.2.num_flows() as f64 / 2.0).collect();
    let n = blocks.len() as f64;
    assert!(n > 3500.0, "{n} files");
    let mean = blocks.iter().sum::<f64>() / n;
    let se = (0.47f64 * 1.47 / n).sqrt();
    assert!((mean - 1.47).abs() < 4.0 * se, "mean {mean} blocks, se {se}");
    let q = 0.47 / 1.47;
    for (k, want) in [(1.0, 1.0 - q), (2.0, (1.0 - q) * q), (3.0, (1.0 - q) * q * q)] {
        let got = blocks.iter().filter(|&&b| b == k).count() as f64 / n;
        let se = (want * (1.0 - want) / n).sqrt();
        assert!((got - want).abs() < 4.0 * se, "{k} blocks: {got} vs {want}");
    }
    // Every block is a full one, and each begins with its request.
    for t in &w.tasks {
        assert!((t.2.bytes() / (1024.0 * 1024.0 * 2.0)).fract() == 0.0);
        assert_eq!(t.2.steps.len(), t.2.num_flows() / 2 * 3);
    }
    let (_, key, reason) = fails(&text.replace("mean-file-blocks = 1.47", "mean-file-blocks = 0.5"));
    assert!(key.ends_with("mean-file-blocks") && reason.contains(">= 1"), "{key}: {reason}");
    let (_, key, reason) = fails(&text.replace("replicas = 2", "replicas = 2\nfile-size = \"1GiB\""));
    assert!(key.ends_with("mean-file-blocks") && reason.contains("not both"), "{key}: {reason}");
    // Only a coflow app's shuffles can be precalculated.
    let (_, key, reason) = fails(&text.replace("replicas = 2", "replicas = 2\nprecalculated = true"));
    assert!(key == "app[0].precalculated" && reason.contains("not used"), "{key}: {reason}");
}

/// Every block request of `dag` and the file bytes behind it: per writer
/// file, `(writer, bytes written, the dependencies of its first request)`.
fn files_of(dag: &netheat_workloads::TaskDag) -> Vec<(u32, f64, Vec<usize>)> {
    use netheat_workloads::apps::cfs::block_request;
    use netheat_workloads::Step;
    let mut files: Vec<(u32, f64, Vec<usize>)> = Vec::new();
    // The first request of a file hangs on no block hop.
    let mut file_of_request: Vec<Option<usize>> = vec![None; dag.steps.len()];
    for (s, step) in dag.steps.iter().enumerate() {
        match step {
            Step::Delay { .. } => {
                let prev = dag.deps(s).iter().find_map(|&d| block_request(dag, d));
                let f = match prev {
                    Some(r) => file_of_request[r].expect("a chained request follows a known one"),
                    None => {
                        files.push((u32::MAX, 0.0, dag.deps(s).to_vec()));
                        files.len() - 1
                    }
                };
                file_of_request[s] = Some(f);
            }
            Step::Flow { src, bytes, .. } => {
                if let Some(r) = block_request(dag, s) {
                    let f = file_of_request[r].unwrap();
                    // The first hop of a block leaves the writer.
                    if dag.dep_lists().position(|d| d == [r]) == Some(s) {
                        if files[f].0 == u32::MAX {
                            files[f].0 = *src;
                        }
                        assert_eq!(files[f].0, *src, "a file's blocks leave one writer");
                        files[f].1 += bytes;
                    }
                }
            }
            _ => {}
        }
    }
    files
}

#[test]
fn coflow_jobs_write_their_output_after_their_shuffle() {
    let Some(data) = real_data() else { return };
    // The first 40 shuffles of the trace as MapReduce jobs whose reducers
    // write half of what they receive in 64 MiB blocks: the bytes written
    // are half the trace's bytes of those shuffles (mapper-local shares
    // included), read here from the trace itself, and each reducer's
    // write waits for exactly the flows into it.
    let topo = two_tier(150, 4);
    let text = "[[app]]\nkind = \"coflow\"\ntasks = 40\noutput-ratio = 0.5\nblock = \"64MiB\"\n";
    let w = load_workload_str(text, "w.toml", Path::new("."), &topo, 1, &data).expect("mr jobs");
    assert_eq!(w.tasks.len(), 40);
    assert!(w.precalculated_apps.is_empty());
    let pre = load_workload_str(&format!("{text}precalculated = true\n"), "w.toml", Path::new("."), &topo, 1, &data)
        .expect("mr jobs, shuffles precalculated");
    assert_eq!((pre.precalculated_apps.as_slice(), pre.tasks.len()), (&[0][..], 40));
    let trace = netheat_data::load_coflows(&data, "coflow-fb2010").unwrap();
    let trace_bytes: f64 = trace.coflows[..40]
        .iter()
        .flat_map(|c| c.reducers.iter().map(|r| r.1 * netheat_config::workload::COFLOW_MB))
        .sum();
    let mut written = 0.0;
    for (_, _, dag) in &w.tasks {
        assert_eq!(dag.kind, "mr-job");
        for (writer, bytes, after) in files_of(dag) {
            written += bytes;
            for &d in &after {
                match dag.steps[d] {
                    netheat_workloads::Step::Flow { dst, .. } => assert_eq!(dst, writer, "waits for its own input"),
                    ref s => panic!("a first request waits for shuffle flows only, not {s:?}"),
                }
            }
            // Every flow into the writer in this job is waited for.
            let into = dag
                .steps
                .iter()
                .enumerate()
                .filter(|(s, st)| {
                    matches!(st, netheat_workloads::Step::Flow { dst, .. } if *dst == writer) && dag.deps(*s).is_empty()
                })
                .count();
            assert_eq!(into, after.len());
        }
        // Blocks of at most 64 MiB.
        for (s, st) in dag.steps.iter().enumerate() {
            if let (netheat_workloads::Step::Flow { bytes, .. }, Some(_)) =
                (st, netheat_workloads::apps::cfs::block_request(dag, s))
            {
                assert!(*bytes <= 64.0 * 1024.0 * 1024.0, "a block of {bytes} bytes");
            }
        }
    }
    assert!((written - 0.5 * trace_bytes).abs() <= 1e-9 * trace_bytes, "{written} vs {}", 0.5 * trace_bytes);

    // Bad values name their key.
    let (_, key, _) = fails_with("[[app]]\nkind = \"coflow\"\noutput-ratio = -1.0\n", &topo, &data);
    assert_eq!(key, "app[0].output-ratio");
    let (_, key, reason) = fails_with("[[app]]\nkind = \"coflow\"\nblock = \"64MiB\"\n", &topo, &data);
    assert_eq!(key, "app[0].block");
    assert!(reason.contains("not used"), "{reason}");
}

#[test]
fn write_jobs_take_the_width_and_bytes_of_a_trace_shuffle() {
    let Some(data) = real_data() else { return };
    // Write-only jobs: each has as many writers as some shuffle of the
    // trace has mappers, each writer on a host of that mapper's rack, and
    // writes that shuffle's bytes times `bytes-scale` in equal shares.
    let topo = two_tier(150, 4);
    let text = "[workload]\nduration = \"100s\"\n[[app]]\nkind = \"write-job\"\nrate = 1.0\nbytes-scale = 0.001\n";
    let w = load_workload_str(text, "w.toml", Path::new("."), &topo, 3, &data).expect("write jobs");
    assert!(w.tasks.len() > 60, "{} jobs", w.tasks.len());
    let trace = netheat_data::load_coflows(&data, "coflow-fb2010").unwrap();
    let shapes: Vec<(Vec<u32>, f64)> = trace
        .coflows
        .iter()
        .map(|c| {
            let b: f64 = c.reducers.iter().map(|r| r.1 * netheat_config::workload::COFLOW_MB).sum();
            (c.mapper_racks.clone(), b * 0.001)
        })
        .collect();
    for (_, _, dag) in &w.tasks {
        assert_eq!(dag.kind, "write-job");
        let files = files_of(dag);
        assert!(files.iter().all(|f| f.2.is_empty()), "write-only jobs wait for nothing");
        let total: f64 = files.iter().map(|f| f.1).sum();
        let racks: Vec<u32> = files.iter().map(|f| f.0 / 4).collect();
        let matches = shapes.iter().any(|(mr, b)| {
            mr == &racks
                && (total - b).abs() <= 1e-9 * b
                && files.iter().all(|f| (f.1 - b / mr.len() as f64).abs() <= 1e-6 * b)
        });
        assert!(matches, "a job of {} writers and {total} bytes matches no trace shuffle", files.len());
    }
    let (_, key, reason) =
        fails_with("[workload]\nduration = \"10s\"\n[[app]]\nkind = \"write-job\"\nrate = 1.0\n", &topo, &data);
    assert_eq!(key, "app[0].bytes-scale");
    assert!(reason.contains("required"), "{reason}");
}

/// A directory of this test's own under the system's temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("netheat-config-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A user's own CDF file where a dataset name goes (`cdf = "./my.cdf"`,
/// relative to the workload file): from 0 at 1,000 B to 1 at 3,000 B it is
/// uniform, so 20,000 sizes lie in [1,000, 3,000] with a mean of 2,000 B
/// (standard error 577 / sqrt(20,000) = 4 B; checked within 1%). No data
/// directory is needed, and a missing file names its key and path.
#[test]
fn a_cdf_file_of_the_users_is_read_relative_to_the_workload() {
    let dir = scratch("cdf");
    std::fs::write(dir.join("my.cdf"), "# bytes, P(size <= bytes)\n1000 0\n3000 1\n").unwrap();
    let text = "[[traffic]]\nkind = \"poisson\"\nload = 0.5\nflows = 20000\nsizes = { dist = \"empirical\", cdf = \"./my.cdf\" }\n";
    let w = load_workload_str(text, "w.toml", &dir, &two_tier(4, 4), 1, &no_data()).expect("own CDF");
    assert_eq!(w.flows.len(), 20_000);
    assert!(w.flows.iter().all(|f| (1000.0..=3000.0).contains(&f.bytes)));
    let mean = w.flows.iter().map(|f| f.bytes).sum::<f64>() / 20_000.0;
    assert!((mean - 2000.0).abs() < 20.0, "mean {mean}");
    let missing = text.replace("./my.cdf", "./none.cdf");
    let err = load_workload_str(&missing, "w.toml", &dir, &two_tier(4, 4), 1, &no_data()).unwrap_err().to_string();
    assert!(err.contains("traffic[0].sizes.cdf") && err.contains("none.cdf"), "{err}");
}

/// A user's own coflow trace in the Coflow-Benchmark format: two coflows,
/// 10 MB into rack 2 at 0 ms and 5 + 5 MB into racks 0 and 1 at 500 ms, are
/// two tasks starting at 0 and 0.5 s carrying 20 MB in all (flows plus
/// bytes exchanged within a host).
#[test]
fn a_coflow_trace_of_the_users_is_read_relative_to_the_workload() {
    let dir = scratch("coflow");
    std::fs::write(dir.join("mine.txt"), "4 2\n1 0 2 0 1 1 2:10\n2 500 1 3 2 0:5 1:5\n").unwrap();
    let w = load_workload_str(
        "[[app]]\nkind = \"coflow\"\ndataset = \"mine.txt\"\n",
        "w.toml",
        &dir,
        &two_tier(4, 4),
        1,
        &no_data(),
    )
    .expect("own trace");
    let starts: Vec<f64> = w.tasks.iter().map(|t| t.0).collect();
    assert_eq!(starts, [0.0, 0.5]);
    let bytes: f64 = w.tasks.iter().map(|t| t.2.bytes()).sum::<f64>() + w.local_bytes;
    assert!((bytes / netheat_config::workload::COFLOW_MB - 20.0).abs() < 1e-9, "{bytes}");
}

/// A `cluster` app whose jobs come from a job table of the user's (the
/// columns of `cloudsimpy-jobs`): rows grouped by job, a job arriving at
/// its earliest row, each row `instances_num` tasks of whole cores (0.5
/// asks 1), its share of the 64 GB servers' memory and its duration; jobs
/// arriving after `duration` left out, and `time-scale` multiplying the
/// arrivals. Keys of drawn jobs are refused beside `jobs`.
#[test]
fn cluster_jobs_from_a_users_job_table() {
    let dir = scratch("jobs");
    std::fs::write(
        dir.join("jobs.csv"),
        ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n\
         0,100,50,0.5,0.25,7,1,3,0\n1,40,20,2.0,0.5,7,2,1,0\n2,10,30,1.0,0.1,8,3,2,0\n3,5000,10,1.0,0.1,9,4,1,0\n",
    )
    .unwrap();
    let topo = load_topology_str(
        "[topology]\nkind = \"two-tier\"\nracks = 2\nhosts-per-rack = 2\nhost-link = \"10Gbps\"\ntor-uplink = \"10Gbps\"\n[hosts]\ncores = 16\nmemory = \"64GB\"\n",
        "dc.toml",
    )
    .unwrap();
    let run = |extra: &str| {
        let text = format!(
            "[workload]\nduration = \"1h\"\n[[app]]\nkind = \"cluster\"\njobs = \"./jobs.csv\"\nqueries = []\n{extra}"
        );
        load_workload_str(&text, "w.toml", &dir, &topo, 1, &no_data())
    };
    let w = run("").expect("trace jobs");
    let jobs = &w.clusters[0].1.jobs;
    let starts: Vec<f64> = jobs.iter().map(|j| j.start_s).collect();
    assert_eq!(starts, [10.0, 40.0]);
    let shape = |j: usize| -> Vec<(u32, f64, f64)> {
        jobs[j].tasks.iter().map(|t| (t.cores, t.memory_bytes, t.duration_s)).collect()
    };
    assert_eq!(shape(0), [(1, 6.4e9, 30.0), (1, 6.4e9, 30.0)]);
    assert_eq!(shape(1), [(1, 16e9, 50.0), (1, 16e9, 50.0), (1, 16e9, 50.0), (2, 32e9, 20.0)]);
    // Network demand is drawn per job, per core: a 2-core task asks twice a 1-core one.
    assert_eq!(jobs[1].tasks[3].demand_bps, 2.0 * jobs[1].tasks[0].demand_bps);
    let w = run("time-scale = 0.5\n").expect("scaled");
    let starts: Vec<f64> = w.clusters[0].1.jobs.iter().map(|j| j.start_s).collect();
    assert_eq!(starts, [5.0, 20.0, 2500.0]);
    let Err(ConfigError::Invalid { key, reason, .. }) = run("cpu-load = 0.5\n") else { panic!("cpu-load beside jobs") };
    assert_eq!(key, "app[0].cpu-load");
    assert!(reason.contains("`jobs`"), "{reason}");
    let (_, key, _) = fails("[workload]\nduration = \"1h\"\n[[app]]\nkind = \"cluster\"\ntime-scale = 2.0\n");
    assert_eq!(key, "app[0].time-scale");
}
