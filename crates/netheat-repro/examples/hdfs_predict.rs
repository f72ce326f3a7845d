//! The simulator's side of `make bench-hdfs-predict` (benches/hdfs/predict.py
//! writes the input): runs the emulated HDFS bench's cluster, background
//! and writers ([`netheat_repro::hdfs::run_hdfs_bench`]) under each
//! policy and seed, and prints every block as CSV.
//!
//! `hdfs_predict POLICIES SEEDS < spec.txt`, POLICIES and SEEDS
//! comma-separated (`uniform,sinbad,ccp` `1,2,3`). The spec is one setting
//! per line, `key value...`:
//!
//! ```text
//! racks 4
//! hosts-per-rack 2
//! host-bps 50e6
//! classes High High Medium Low
//! block-bytes 8388608
//! bg-rate-bps 42.5e6
//! bg-flows 4
//! bg-end-s 88
//! writes-start-s 8
//! writes-duration-s 60
//! report-s 1
//! report-lag-s 0          (optional: the policy applies each report this long after it is measured)
//! small-block-bytes 4194304
//! pipeline hops            (or chain)
//! block-overhead-s 0       (optional: a block's fixed cost beyond its hops)
//! bg-weight 1              (optional: each background flow's max-min weight)
//! phase START_S HOST...    (one line per phase; hosts rack-major)
//! writer HOST THINK_S...   (one line per writer)
//! writer-blocks HOST N...  (optional: blocks of each file of that writer; default 1)
//! ```
//!
//! Output: `policy,seed,writer,file,block,start_s,write_s,replicas` with replicas
//! `;`-separated host indices in pipeline order.

use std::io::Read;

use netheat_repro::hdfs::{run_hdfs_bench, HdfsBenchSpec, HdfsWriter, PipelineModel};
use netheat_storage::{PolicyConfig, UplinkClass};

fn fail(msg: &str) -> ! {
    eprintln!("hdfs_predict: {msg}");
    std::process::exit(2);
}

fn num<T: std::str::FromStr>(key: &str, v: Option<&str>) -> T {
    v.and_then(|x| x.parse().ok()).unwrap_or_else(|| fail(&format!("{key}: a number expected")))
}

fn parse(text: &str) -> HdfsBenchSpec {
    let mut s = HdfsBenchSpec {
        racks: 0,
        hosts_per_rack: 0,
        host_bps: 0.0,
        classes: Vec::new(),
        block_bytes: 0.0,
        phases: Vec::new(),
        bg_end_s: 0.0,
        bg_rate_bps: 0.0,
        bg_flows: 0,
        writes_start_s: 0.0,
        writes_duration_s: 0.0,
        writers: Vec::new(),
        report_s: 1.0,
        report_lag_s: 0.0,
        policy_cfg: PolicyConfig::default(),
        pipeline: PipelineModel::Hops,
        block_overhead_s: 0.0,
        bg_weight: 1.0,
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut it = line.split_whitespace();
        let key = it.next().unwrap_or_default();
        match key {
            "racks" => s.racks = num(key, it.next()),
            "hosts-per-rack" => s.hosts_per_rack = num(key, it.next()),
            "host-bps" => s.host_bps = num(key, it.next()),
            "block-bytes" => s.block_bytes = num(key, it.next()),
            "bg-rate-bps" => s.bg_rate_bps = num(key, it.next()),
            "bg-flows" => s.bg_flows = num(key, it.next()),
            "bg-end-s" => s.bg_end_s = num(key, it.next()),
            "writes-start-s" => s.writes_start_s = num(key, it.next()),
            "writes-duration-s" => s.writes_duration_s = num(key, it.next()),
            "report-s" => s.report_s = num(key, it.next()),
            "report-lag-s" => s.report_lag_s = num(key, it.next()),
            "small-block-bytes" => s.policy_cfg.threshold_bytes = num(key, it.next()),
            "block-overhead-s" => s.block_overhead_s = num(key, it.next()),
            "bg-weight" => s.bg_weight = num(key, it.next()),
            "classes" => {
                s.classes = it
                    .map(|c| match c.to_ascii_lowercase().as_str() {
                        "high" => UplinkClass::High,
                        "medium" => UplinkClass::Medium,
                        "low" => UplinkClass::Low,
                        _ => fail(&format!("classes: {c} is not High, Medium or Low")),
                    })
                    .collect()
            }
            "pipeline" => {
                s.pipeline = match it.next() {
                    Some("hops") => PipelineModel::Hops,
                    Some("chain") => PipelineModel::Chain,
                    x => fail(&format!("pipeline: hops or chain, got {x:?}")),
                }
            }
            "phase" => {
                let t: f64 = num(key, it.next());
                s.phases.push((t, it.map(|h| num(key, Some(h))).collect()));
            }
            "writer" => {
                let host = num(key, it.next());
                let thinks = it.map(|x| num(key, Some(x))).collect();
                s.writers.push(HdfsWriter { host, thinks, blocks: Vec::new() });
            }
            "writer-blocks" => {
                let host: u32 = num(key, it.next());
                let blocks = it.map(|x| num(key, Some(x))).collect();
                match s.writers.iter_mut().find(|w| w.host == host) {
                    Some(w) => w.blocks = blocks,
                    None => fail(&format!("writer-blocks: no `writer {host}` line before it")),
                }
            }
            _ => fail(&format!("unknown key {key}")),
        }
    }
    s
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 3 {
        fail("usage: hdfs_predict POLICIES SEEDS < spec.txt");
    }
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        fail(&format!("stdin: {e}"));
    }
    let spec = parse(&text);
    println!("policy,seed,writer,file,block,start_s,write_s,replicas");
    for policy in a[1].split(',') {
        for seed in a[2].split(',') {
            let seed: u64 = num("seed", Some(seed));
            match run_hdfs_bench(&spec, policy, seed) {
                Ok(blocks) => {
                    for b in blocks {
                        let r: Vec<String> = b.replicas.iter().map(|h| h.to_string()).collect();
                        println!(
                            "{policy},{seed},{},{},{},{:.6},{:.6},{}",
                            b.writer,
                            b.file,
                            b.block,
                            b.start_s,
                            b.write_s(),
                            r.join(";")
                        );
                    }
                }
                Err(e) => fail(&e.to_string()),
            }
        }
    }
}
