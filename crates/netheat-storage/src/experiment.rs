//! Storage experiments on the flow engine: the Sinbad point (block writes
//! against background shuffles replayed from the Facebook coflow trace) and
//! the CCP point (chunk reads and writes on racks of mixed uplink classes).
//!
//! Every point runs the baseline (`uniform`) and the policy under test on
//! the same generated workload (same seed: identical files, writers and
//! background flows), so per-block comparisons are paired.

use crate::cluster::{Cluster, UplinkClass};
use crate::fs::{std_dev, FileSystem, Redundancy};
use crate::placement::{make_policy, place_checked, PlacementRequest, PolicyConfig, ReplicaPlacement, View};
use crate::StorageError;
use netheat_core::HostId;
use netheat_data::coflow::CoflowTrace;
use netheat_engine::{Controller, Ctx, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const BLOCK_BASE: u64 = 1 << 40;
const K_REPORT: u64 = 1;
const K_FILE: u64 = 2;
const K_DECIDE: u64 = 3;
const K_SHIFT: u32 = 56;

/// Parameters of a Sinbad point.
#[derive(Debug, Clone, PartialEq)]
pub struct SinbadSpec {
    /// Racks.
    pub racks: usize,
    /// Hosts per rack.
    pub hosts_per_rack: usize,
    /// Host link bits/s.
    pub host_bps: f64,
    /// Core-to-rack oversubscription.
    pub oversub: f64,
    /// Disk write bits/s (`None`: in memory).
    pub disk_write_bps: Option<f64>,
    /// Block size in bytes.
    pub block_bytes: f64,
    /// Replicas.
    pub r: usize,
    /// Fault domains that may fail (`f + 1` racks).
    pub f: usize,
    /// Simulated seconds of arrivals.
    pub duration_s: f64,
    /// Extra seconds to let writes drain.
    pub drain_s: f64,
    /// Ingestion rate in blocks per second (files of 1..=`max_file_blocks`).
    pub ingest_blocks_per_s: f64,
    /// Largest ingested file in blocks.
    pub max_file_blocks: usize,
    /// Job output bytes per shuffle byte received by a reducer rack.
    pub output_ratio: f64,
    /// Scale of the replayed shuffle bytes.
    pub shuffle_scale: f64,
    /// At most this many mapper racks feed each reducer rack (the rest of
    /// the reducer's bytes are spread over them) to bound the flow count.
    pub max_mapper_racks: usize,
    /// Sinbad settings.
    pub policy_cfg: PolicyConfig,
    /// Decision interval q in seconds (0: immediate).
    pub q_s: f64,
    /// More decision intervals to run the policy with against the same
    /// uniform baseline (each reports `block_write_speedup_q<q>`).
    pub also_q_s: Vec<f64>,
    /// Probability that a host's report is missing in an interval.
    pub report_loss: f64,
    /// Storage per host in bytes.
    pub capacity_bytes: f64,
    /// Storage-balance threshold (fraction of capacity).
    pub balance_threshold: f64,
    /// Policy under test.
    pub policy: String,
    /// Seed.
    pub seed: u64,
}

impl Default for SinbadSpec {
    fn default() -> Self {
        Self {
            racks: 150,
            hosts_per_rack: 20,
            host_bps: 1e9,
            oversub: 10.0,
            disk_write_bps: Some(50e6 * 8.0),
            block_bytes: 256.0 * 1048576.0,
            r: 3,
            f: 1,
            duration_s: 3600.0,
            drain_s: 600.0,
            ingest_blocks_per_s: 20.0,
            max_file_blocks: 8,
            output_ratio: 0.3,
            shuffle_scale: 1.0,
            max_mapper_racks: 6,
            policy_cfg: PolicyConfig::default(),
            q_s: 0.0,
            also_q_s: Vec::new(),
            report_loss: 0.0,
            capacity_bytes: 4e12,
            balance_threshold: 0.1,
            policy: "sinbad".into(),
            seed: 1,
        }
    }
}

/// One written block.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockRec {
    /// File id.
    pub file: u64,
    /// Block index.
    pub block: u64,
    /// Bytes.
    pub bytes: f64,
    /// Request time (before any batching delay).
    pub start_s: f64,
    /// Completion time (NaN: unfinished or failed).
    pub finish_s: f64,
    /// Utilization of the writer's host and rack uplinks at request time
    /// (the larger).
    pub src_util: f64,
}

/// What one policy run produced.
#[derive(Debug, Clone)]
pub struct RunOut {
    /// Blocks in request order of (file, block).
    pub blocks: Vec<BlockRec>,
    /// Coefficient of variation of rack-downlink utilization per report.
    pub cv: Vec<f64>,
    /// File system at the end.
    pub fs: FileSystem,
    /// Largest deviation of a host's used fraction from the mean.
    pub imbalance: f64,
    /// Flows simulated.
    pub flows: u64,
}

struct FileState {
    writer: HostId,
    sizes: Vec<f64>,
    next: usize,
    requested_at: f64,
}

struct Driver<'a> {
    spec: &'a SinbadSpec,
    c: &'a Cluster,
    fs: FileSystem,
    live: Vec<bool>,
    policy: Box<dyn ReplicaPlacement>,
    batching: bool,
    rng: ChaCha8Rng,
    loss_rng: ChaCha8Rng,
    files: Vec<FileState>,
    pending: Vec<(usize, u64)>,
    seq: u64,
    recs: Vec<BlockRec>,
    rec_of: Vec<Vec<usize>>,
    cv: Vec<f64>,
    rates: Vec<Option<f64>>,
}

impl Driver<'_> {
    fn redundancy(&self) -> Redundancy {
        Redundancy::Replicate { r: self.spec.r, f: self.spec.f }
    }

    fn request(&mut self, ctx: &mut Ctx<'_, '_>, file: usize) {
        let now = ctx.now();
        let fsx = &mut self.files[file];
        fsx.requested_at = now;
        let bytes = fsx.sizes[fsx.next];
        let w = self.c.hosts[fsx.writer as usize].clone();
        let src_util = ctx.link_utilization(w.up).max(ctx.link_utilization(self.c.racks[w.rack as usize].up));
        let ri = self.recs.len();
        self.recs.push(BlockRec {
            file: file as u64,
            block: fsx.next as u64,
            bytes,
            start_s: now,
            finish_s: f64::NAN,
            src_util,
        });
        self.rec_of[file].push(ri);
        if self.batching && bytes >= self.spec.policy_cfg.threshold_bytes {
            self.seq += 1;
            self.pending.push((file, self.seq));
        } else {
            self.place(ctx, file);
        }
    }

    fn place(&mut self, ctx: &mut Ctx<'_, '_>, file: usize) {
        let fsx = &self.files[file];
        let ri = *self.rec_of[file].last().unwrap_or(&0);
        let req = PlacementRequest {
            file: file as u64,
            block: fsx.next as u64,
            bytes: fsx.sizes[fsx.next],
            writer: Some(fsx.writer),
            redundancy: self.redundancy(),
        };
        let view = View {
            cluster: self.c,
            live: &self.live,
            host_used: &self.fs.host_used,
            balance_threshold: self.spec.balance_threshold,
        };
        match place_checked(self.policy.as_mut(), &req, &view, &mut self.rng) {
            Ok(hs) => {
                let path = self.c.pipeline_path(req.writer.unwrap_or(hs[0]), &hs);
                let dst = *hs.last().unwrap_or(&fsx.writer);
                self.fs.store(req.file, req.bytes, hs, req.redundancy);
                let fl =
                    FlowSpec::new(BLOCK_BASE + ri as u64, fsx.writer, dst, req.bytes, ctx.now(), Route::Explicit(path));
                if let Err(e) = ctx.add_flow(fl) {
                    self.fs.fail(req.file, req.block, format!("engine: {e}"));
                }
            }
            Err(reason) => self.fs.fail(req.file, req.block, reason),
        }
    }

    fn report(&mut self, ctx: &mut Ctx<'_, '_>) {
        for (l, r) in self.rates.iter_mut().enumerate() {
            *r = Some(ctx.link_rate_bps(l as u32));
        }
        if self.spec.report_loss > 0.0 {
            for h in &self.c.hosts {
                if self.loss_rng.gen::<f64>() < self.spec.report_loss {
                    self.rates[h.down as usize] = None;
                }
            }
        }
        self.policy.observe(ctx.now(), &self.rates);
        let u: Vec<f64> = self.c.racks.iter().map(|r| ctx.link_utilization(r.down)).collect();
        let m = u.iter().sum::<f64>() / u.len() as f64;
        if m > 0.0 {
            self.cv.push(std_dev(&u) / m);
        }
    }

    fn decide(&mut self, ctx: &mut Ctx<'_, '_>) {
        let mut p = std::mem::take(&mut self.pending);
        // OPT': fewest remaining blocks of the parent file first.
        p.sort_by_key(|&(f, s)| (self.files[f].sizes.len() - self.files[f].next, s));
        for (f, _) in p {
            self.place(ctx, f);
        }
    }
}

impl Controller for Driver<'_> {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if flow.id < BLOCK_BASE {
            return;
        }
        let ri = (flow.id - BLOCK_BASE) as usize;
        self.recs[ri].finish_s = ctx.now();
        let file = self.recs[ri].file as usize;
        self.files[file].next += 1;
        if self.files[file].next < self.files[file].sizes.len() {
            self.request(ctx, file);
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let idx = token & ((1 << K_SHIFT) - 1);
        let end = self.spec.duration_s;
        match token >> K_SHIFT {
            K_REPORT => {
                self.report(ctx);
                let t = ctx.now() + self.spec.policy_cfg.delta_s;
                if t <= end {
                    let _ = ctx.schedule_timer(t, K_REPORT << K_SHIFT);
                }
            }
            K_FILE => self.request(ctx, idx as usize),
            K_DECIDE => {
                self.decide(ctx);
                let t = ctx.now() + self.spec.q_s;
                if t <= end + self.spec.drain_s {
                    let _ = ctx.schedule_timer(t, K_DECIDE << K_SHIFT);
                }
            }
            _ => {}
        }
    }
}

fn split(bytes: f64, block: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut left = bytes;
    while left > 0.5 {
        v.push(left.min(block));
        left -= block;
    }
    v
}

/// The cluster of a Sinbad spec.
pub fn sinbad_cluster(s: &SinbadSpec) -> Cluster {
    Cluster::two_tier(s.racks, s.hosts_per_rack, s.host_bps, s.oversub, s.disk_write_bps, s.capacity_bytes, &[], &[])
}

fn check(s: &SinbadSpec) -> Result<(), StorageError> {
    let pos = |k: &str, v: f64| {
        if v > 0.0 && v.is_finite() {
            Ok(())
        } else {
            Err(StorageError::invalid(k, format!("must be positive, got {v}")))
        }
    };
    pos("racks", s.racks as f64)?;
    pos("hosts-per-rack", s.hosts_per_rack as f64)?;
    pos("host-link", s.host_bps)?;
    pos("oversubscription", s.oversub)?;
    pos("block-size", s.block_bytes)?;
    pos("duration", s.duration_s)?;
    pos("delta", s.policy_cfg.delta_s)?;
    if !(0.0..=1.0).contains(&s.policy_cfg.alpha) || s.policy_cfg.alpha == 0.0 {
        return Err(StorageError::invalid("alpha", "must be in (0, 1]"));
    }
    if s.q_s < 0.0 || s.also_q_s.iter().any(|&q| !(q >= 0.0 && q.is_finite())) {
        return Err(StorageError::invalid("q", "must be >= 0"));
    }
    if s.f + 1 > s.r {
        return Err(StorageError::invalid("f", format!("{} replicas cannot span f + 1 = {} racks", s.r, s.f + 1)));
    }
    Ok(())
}

/// Checks a spec and its policy tag without running anything (so bad input
/// is reported before the trace is loaded).
pub fn validate_sinbad(s: &SinbadSpec) -> Result<(), StorageError> {
    check(s)?;
    make_policy(&s.policy, &s.policy_cfg).map(|_| ())
}

/// Runs one policy on the Sinbad workload.
pub fn run_sinbad_policy(s: &SinbadSpec, trace: &CoflowTrace, policy: &str) -> Result<RunOut, StorageError> {
    check(s)?;
    let c = sinbad_cluster(s);
    let mut pol = make_policy(policy, &s.policy_cfg)?;
    pol.bind(&c);
    let mut wrng = ChaCha8Rng::seed_from_u64(s.seed);
    let nh = c.hosts.len();
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        // Link telemetry windows are not used here (reports read current
        // rates): one window keeps their bookkeeping negligible.
        SimConfig { end_s: Some(s.duration_s + s.drain_s), window_s: 1e9, ..SimConfig::default() },
    );
    let rand_host =
        |rng: &mut ChaCha8Rng, rack: usize| c.racks[rack].hosts[rng.gen_range(0..c.racks[rack].hosts.len())];
    // Background shuffles, and job outputs written by the reducers.
    let mut files: Vec<FileState> = Vec::new();
    let mut arrivals: Vec<f64> = Vec::new();
    let mut fid = 0u64;
    let mut path = Vec::new();
    for cf in &trace.coflows {
        let t = cf.arrival_ms as f64 / 1000.0;
        if t >= s.duration_s || cf.mapper_racks.is_empty() {
            continue;
        }
        let nm = cf.mapper_racks.len();
        let kk = nm.min(s.max_mapper_racks.max(1));
        for (j, &(rr, mb)) in cf.reducers.iter().enumerate() {
            let dr = rr as usize % s.racks;
            let per = mb * 1e6 * s.shuffle_scale / kk as f64;
            for i in 0..kk {
                let mr = cf.mapper_racks[(j + i * nm.div_ceil(kk)) % nm] as usize % s.racks;
                let (a, b) = (rand_host(&mut wrng, mr), rand_host(&mut wrng, dr));
                if a == b || per <= 0.0 {
                    continue;
                }
                path.clear();
                c.net_path(a, b, &mut path);
                // An aggregated flow stands for nm/kk mapper racks' flows: weight it
                // so it takes their combined per-flow fair share.
                sim.add_flow(
                    FlowSpec::new(fid, a, b, per, t, Route::Explicit(path.clone())).with_weight(nm as f64 / kk as f64),
                )
                .map_err(|e| StorageError::Engine(e.to_string()))?;
                fid += 1;
            }
            let out = mb * 1e6 * s.shuffle_scale * s.output_ratio;
            if out > 0.0 {
                files.push(FileState {
                    writer: rand_host(&mut wrng, dr),
                    sizes: split(out, s.block_bytes),
                    next: 0,
                    requested_at: 0.0,
                });
                arrivals.push(t);
            }
        }
    }
    // Ingestion: Poisson file arrivals.
    let mean_blocks = (1 + s.max_file_blocks.max(1)) as f64 / 2.0;
    let rate = s.ingest_blocks_per_s / mean_blocks;
    let mut t = 0.0;
    if rate > 0.0 {
        loop {
            t += -(1.0 - wrng.gen::<f64>()).ln() / rate;
            if t >= s.duration_s {
                break;
            }
            let n = wrng.gen_range(1..=s.max_file_blocks.max(1));
            files.push(FileState {
                writer: wrng.gen_range(0..nh) as HostId,
                sizes: vec![s.block_bytes; n],
                next: 0,
                requested_at: 0.0,
            });
            arrivals.push(t);
        }
    }
    let eng = |e: netheat_engine::EngineError| StorageError::Engine(e.to_string());
    for (i, &a) in arrivals.iter().enumerate() {
        sim.schedule_timer(a, (K_FILE << K_SHIFT) | i as u64).map_err(eng)?;
    }
    sim.schedule_timer(s.policy_cfg.delta_s, K_REPORT << K_SHIFT).map_err(eng)?;
    let batching = policy == "sinbad" && s.q_s > 0.0;
    if batching {
        sim.schedule_timer(s.q_s, K_DECIDE << K_SHIFT).map_err(eng)?;
    }
    let nfiles = files.len();
    let mut d = Driver {
        spec: s,
        c: &c,
        fs: FileSystem::new(nh),
        live: vec![true; nh],
        policy: pol,
        batching,
        rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0x5157_ad00),
        loss_rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0x1055),
        files,
        pending: Vec::new(),
        seq: 0,
        recs: Vec::new(),
        rec_of: vec![Vec::new(); nfiles],
        cv: Vec::new(),
        rates: vec![None; c.link_bps.len()],
    };
    let res = sim.run_with(&mut d);
    let imbalance = d.fs.imbalance(&c);
    let mut blocks = d.recs;
    blocks.sort_by_key(|b| (b.file, b.block));
    Ok(RunOut { blocks, cv: d.cv, fs: d.fs, imbalance, flows: res.stats.flows_completed })
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn median(v: &[f64]) -> f64 {
    percentile(v, 50.0)
}

/// Linear-interpolated percentile (`p` in 0..=100); NaN for no data.
pub fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let x = p / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (x - lo as f64)
}

/// Blocks written in both runs, in the baseline's order: the baseline's
/// record and the two write times (finished blocks only).
fn paired<'a>(base: &'a RunOut, other: &RunOut) -> impl Iterator<Item = (&'a BlockRec, f64, f64)> {
    let by_key: std::collections::BTreeMap<(u64, u64), f64> =
        other.blocks.iter().map(|b| ((b.file, b.block), b.finish_s - b.start_s)).collect();
    base.blocks.iter().filter_map(move |a| {
        let y = *by_key.get(&(a.file, a.block))?;
        let x = a.finish_s - a.start_s;
        (x.is_finite() && y.is_finite()).then_some((a, x, y))
    })
}

/// Result of a Sinbad point: named values and the paired block table.
#[derive(Debug, Clone)]
pub struct PointOut {
    /// Summary values.
    pub values: Vec<(String, f64)>,
    /// Block write times of the baseline, paired with `policy_s`.
    pub uniform_s: Vec<f64>,
    /// Block write times of the policy.
    pub policy_s: Vec<f64>,
    /// Block sizes.
    pub bytes: Vec<f64>,
}

/// Runs `uniform` and the spec's policy on one workload and compares them
/// block by block (blocks finished in both runs).
pub fn sinbad_point(s: &SinbadSpec, trace: &CoflowTrace) -> Result<PointOut, StorageError> {
    // The runs are independent: one thread each (the uniform baseline is
    // shared by every decision interval).
    let (u, p, extra) = std::thread::scope(|sc| {
        let base = sc.spawn(|| run_sinbad_policy(s, trace, "uniform"));
        let others: Vec<_> = s
            .also_q_s
            .iter()
            .map(|&q| {
                let sq = SinbadSpec { q_s: q, also_q_s: Vec::new(), ..s.clone() };
                sc.spawn(move || run_sinbad_policy(&sq, trace, &sq.policy))
            })
            .collect();
        let p = run_sinbad_policy(s, trace, &s.policy);
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let extra: Vec<Result<RunOut, StorageError>> = others.into_iter().map(join).collect();
        (join(base), p, extra)
    });
    let (u, p) = (u?, p?);
    let (mut tu, mut tp, mut by, mut tu_ns, mut tp_ns) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut faster, mut same, mut slower) = (0usize, 0usize, 0usize);
    for (a, x, y) in paired(&u, &p) {
        tu.push(x);
        tp.push(y);
        by.push(a.bytes);
        // "Same" means within 5% of the baseline's time.
        if y < 0.95 * x {
            faster += 1;
        } else if y > 1.05 * x {
            slower += 1;
        } else {
            same += 1;
        }
        if a.src_util < 0.5 {
            tu_ns.push(x);
            tp_ns.push(y);
        }
    }
    let n = tu.len().max(1) as f64;
    let mut also = Vec::new();
    for (&q, r) in s.also_q_s.iter().zip(extra) {
        let r = r?;
        let (a, b): (Vec<f64>, Vec<f64>) = paired(&u, &r).map(|(_, x, y)| (x, y)).unzip();
        let name = if q.fract() == 0.0 { format!("{q:.0}") } else { format!("{q}").replace('.', "p") };
        also.push((format!("block_write_speedup_q{name}"), mean(&a) / mean(&b)));
    }
    let mut v = vec![
        ("block_write_speedup".to_string(), mean(&tu) / mean(&tp)),
        ("blocks_faster_pct".into(), 100.0 * faster as f64 / n),
        ("blocks_same_pct".into(), 100.0 * same as f64 / n),
        ("blocks_slower_pct".into(), 100.0 * slower as f64 / n),
        ("block_write_speedup_no_source_bottleneck".into(), mean(&tu_ns) / mean(&tp_ns)),
        ("median_cv_reduction".into(), 1.0 - median(&p.cv) / median(&u.cv)),
        ("median_cv_uniform".into(), median(&u.cv)),
        ("median_cv_policy".into(), median(&p.cv)),
        ("disk_usage_std_ratio".into(), p.fs.host_std() / u.fs.host_std()),
        ("storage_imbalance_pct".into(), 100.0 * p.imbalance),
        ("mean_block_write_s_uniform".into(), mean(&tu)),
        ("mean_block_write_s_policy".into(), mean(&tp)),
        ("blocks".into(), tu.len() as f64),
        ("blocks_unpaired".into(), (u.blocks.len().max(p.blocks.len()) - tu.len()) as f64),
        ("placement_failures".into(), (u.fs.failures.len() + p.fs.failures.len()) as f64),
        ("flows".into(), (u.flows + p.flows) as f64),
    ];
    v.extend(also);
    Ok(PointOut { values: v, uniform_s: tu, policy_s: tp, bytes: by })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netheat_data::coflow::Coflow;

    #[test]
    fn pipeline_write_time_is_size_over_min_of_disk_and_link_share() {
        // 2 racks x 2 hosts, 1 Gbps hosts, no oversubscription (2 Gbps rack
        // links), disk 400 Mbps. One 100 MB block: 100e6*8/400e6 = 2 s.
        let c = Cluster::two_tier(2, 2, 1e9, 1.0, Some(4e8), 1e12, &[], &[]);
        let path = c.pipeline_path(0, &[0, 2, 3]);
        let mut sim = Simulation::new(Network::new(c.link_bps.clone()), None, SimConfig::default());
        sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(path.clone()))).unwrap();
        // A competing flow into host 2 takes half of its 1 Gbps downlink
        // only when the pipeline wants more than 500 Mbps: with a 400 Mbps
        // disk it does not, so still 2 s. Without disks (in memory) the
        // pipeline gets the 500 Mbps fair share: 1.6 s.
        sim.add_flow(FlowSpec::new(
            2,
            1,
            2,
            1e12,
            0.0,
            Route::Explicit(vec![c.hosts[1].up, c.racks[0].up, c.racks[1].down, c.hosts[2].down]),
        ))
        .unwrap();
        let r = sim.run_with(&mut netheat_engine::NoController);
        let _ = r;
        let mut sim = Simulation::new(
            Network::new(c.link_bps.clone()),
            None,
            SimConfig { end_s: Some(100.0), ..SimConfig::default() },
        );
        sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(path))).unwrap();
        sim.add_flow(FlowSpec::new(
            2,
            1,
            2,
            1e12,
            0.0,
            Route::Explicit(vec![c.hosts[1].up, c.racks[0].up, c.racks[1].down, c.hosts[2].down]),
        ))
        .unwrap();
        let r = sim.run_with(&mut netheat_engine::NoController);
        assert!((r.flows[0].fct_s - 2.0).abs() < 1e-9, "{}", r.flows[0].fct_s);
        let m = Cluster::two_tier(2, 2, 1e9, 1.0, None, 1e12, &[], &[]);
        let mut sim = Simulation::new(
            Network::new(m.link_bps.clone()),
            None,
            SimConfig { end_s: Some(100.0), ..SimConfig::default() },
        );
        sim.add_flow(FlowSpec::new(1, 0, 3, 100e6, 0.0, Route::Explicit(m.pipeline_path(0, &[0, 2, 3])))).unwrap();
        sim.add_flow(FlowSpec::new(
            2,
            1,
            2,
            1e12,
            0.0,
            Route::Explicit(vec![m.hosts[1].up, m.racks[0].up, m.racks[1].down, m.hosts[2].down]),
        ))
        .unwrap();
        let r = sim.run_with(&mut netheat_engine::NoController);
        assert!((r.flows[0].fct_s - 1.6).abs() < 1e-9, "{}", r.flows[0].fct_s);
    }

    fn tiny_trace() -> CoflowTrace {
        // A heavy shuffle into rack 1 for the whole run.
        CoflowTrace {
            racks: 6,
            coflows: vec![Coflow {
                id: 1,
                arrival_ms: 0,
                mapper_racks: vec![4, 5],
                reducers: vec![(1, 100_000.0), (2, 100_000.0)],
            }],
        }
    }

    #[test]
    fn sinbad_avoids_the_hot_rack_and_beats_uniform() {
        let s = SinbadSpec {
            racks: 6,
            hosts_per_rack: 4,
            oversub: 8.0,
            duration_s: 600.0,
            drain_s: 300.0,
            ingest_blocks_per_s: 0.1,
            max_file_blocks: 1,
            output_ratio: 0.0,
            max_mapper_racks: 4,
            ..SinbadSpec::default()
        };
        let out = sinbad_point(&s, &tiny_trace()).unwrap();
        let v: std::collections::BTreeMap<_, _> = out.values.iter().cloned().collect();
        // Racks 1 and 2 receive a long shuffle: uniform sends 2 of 5 remote
        // choices there, Sinbad avoids them once the EWMA has risen.
        assert!(v["block_write_speedup"] > 1.0, "{v:?}");
        assert_eq!(v["placement_failures"], 0.0);
        // Extra decision intervals share the uniform baseline: q = 0 again
        // reproduces the main speedup exactly, q = 1.5 s is named q1p5.
        let also = SinbadSpec { also_q_s: vec![0.0, 1.5], ..s.clone() };
        let w: std::collections::BTreeMap<_, _> =
            sinbad_point(&also, &tiny_trace()).unwrap().values.into_iter().collect();
        assert_eq!(w["block_write_speedup_q0"], v["block_write_speedup"]);
        assert_eq!(w["block_write_speedup"], v["block_write_speedup"]);
        assert!(w["block_write_speedup_q1p5"].is_finite(), "{w:?}");
        let bad = SinbadSpec { f: 3, ..s };
        assert!(sinbad_point(&bad, &tiny_trace()).unwrap_err().to_string().contains("`f`"));
    }

    #[test]
    fn ccp_cuts_p95_network_latency_and_respects_balance_on_high_medium() {
        let s = CcpSpec {
            racks: 6,
            hosts_per_rack: 4,
            client_racks: 2,
            prepopulate: 2000,
            ops: 5000,
            ..CcpSpec::default()
        };
        let v: std::collections::BTreeMap<_, _> = ccp_point(&s).unwrap().into_iter().collect();
        // Uniform sends a third of the reads to Low racks with 1/16 of a
        // High uplink: CCP must cut the p95 network latency.
        assert!(v["p95_network_latency_reduction_pct"] > 50.0, "{v:?}");
        assert_eq!(v["placement_failures"], 0.0);
        // With all classes equal CCP degenerates to uniform ranking ties:
        // no systematic gain (|reduction| small).
        let eq = CcpSpec { class_factor: [1.0, 1.0, 1.0], ..s };
        let w: std::collections::BTreeMap<_, _> = ccp_point(&eq).unwrap().into_iter().collect();
        assert!(w["p95_network_latency_reduction_pct"] < v["p95_network_latency_reduction_pct"], "{w:?}");
    }

    #[test]
    fn ccp_rebalancer_keeps_storage_within_the_threshold() {
        // 2000 chunks of 0.55 MB mean x 3 replicas on 24 hosts of 1 GB:
        // about 14% used on average, and CCP piles them on High racks.
        let s = CcpSpec {
            racks: 6,
            hosts_per_rack: 4,
            client_racks: 2,
            prepopulate: 2000,
            ops: 5000,
            rebalance_every_ops: 0,
            ..CcpSpec::default()
        };
        let off: std::collections::BTreeMap<_, _> = ccp_point(&s).unwrap().into_iter().collect();
        assert!(off["storage_imbalance_pct"] > 10.0, "{off:?}");
        assert_eq!(off["rebalance_moves"], 0.0);
        let on: std::collections::BTreeMap<_, _> =
            ccp_point(&CcpSpec { rebalance_every_ops: 500, ..s.clone() }).unwrap().into_iter().collect();
        assert!(on["storage_imbalance_pct"] <= 10.0 + 1e-9, "{on:?}");
        // Here 500 ops move the imbalance by about 1% of capacity; the
        // rebalancer acts when the next check could cross the threshold, so
        // no check finds a host past it. Also for seeds where a check found
        // 10.15-10.20% when the rebalancer assumed no faster growth than the
        // fastest seen (see `DRIFT_SAFETY`).
        assert!(on["storage_imbalance_max_pct"] <= 10.0 + 1e-9, "{on:?}");
        for seed in [21, 76, 89] {
            let r: std::collections::BTreeMap<_, _> =
                ccp_point(&CcpSpec { rebalance_every_ops: 500, seed, ..s.clone() }).unwrap().into_iter().collect();
            assert!(r["storage_imbalance_max_pct"] <= 10.0 + 1e-9, "seed {seed}: {r:?}");
        }
        assert!(on["rebalance_moves"] > 0.0 && on["rebalanced_bytes_pct"] > 0.0, "{on:?}");
        // A target above the threshold is refused, naming the key.
        let e = ccp_point(&CcpSpec { rebalance_target: 0.2, ..s }).unwrap_err().to_string();
        assert!(e.contains("rebalance-target"), "{e}");
        // Moves are traffic, yet CCP still beats uniform.
        assert!(on["p95_network_latency_reduction_pct"] > 50.0, "{on:?}");
    }
}

/// How much faster than the fastest growth seen so far the rebalancer
/// assumes the imbalance may grow until the next check. The growth between
/// checks is random, so its running maximum alone is overtaken now and then:
/// at 1, 40 of 149 seeds of the unit test's small cluster had a check past
/// the 10% threshold (up to 10.20%), and one of 30 full-scale seeds of
/// `experiments/ccp.toml` (10.03%); at 2, none (at most 9.32% and 9.73%),
/// for 0.2% more moved bytes and the same latency gains.
const DRIFT_SAFETY: f64 = 2.0;

/// Parameters of a CCP point.
#[derive(Debug, Clone, PartialEq)]
pub struct CcpSpec {
    /// Storage racks (classes cycle High, Medium, Low).
    pub racks: usize,
    /// Hosts per storage rack.
    pub hosts_per_rack: usize,
    /// Compute (client) racks, uplinks of the High factor.
    pub client_racks: usize,
    /// Host link bits/s.
    pub host_bps: f64,
    /// Oversubscription of a Medium rack.
    pub oversub: f64,
    /// Uplink factors of High, Medium, Low racks (x the Medium uplink).
    pub class_factor: [f64; 3],
    /// Offered load: total op throughput as a fraction of the summed Low
    /// uplink capacity over all storage racks (uniform loads a Low rack's
    /// uplink to about this).
    pub load: f64,
    /// Fraction of ops that are reads.
    pub read_fraction: f64,
    /// Chunk sizes, uniform in [min, max] bytes.
    pub chunk_min: f64,
    /// Largest chunk.
    pub chunk_max: f64,
    /// Chunks stored before the run.
    pub prepopulate: usize,
    /// Ops in the run.
    pub ops: usize,
    /// Replicas (one per rack).
    pub r: usize,
    /// Disk seek seconds.
    pub seek_s: f64,
    /// Disk transfer bytes/s.
    pub disk_bytes_per_s: f64,
    /// Storage per host.
    pub capacity_bytes: f64,
    /// Storage-balance threshold (fraction of capacity).
    pub balance_threshold: f64,
    /// The background rebalancer checks the storage balance every this many
    /// ops (and after the last); when a host is more than the threshold
    /// from the mean, or would be by the next check at the fastest growth
    /// seen between two checks, it moves chunks, as network flows (0: no
    /// rebalancer).
    pub rebalance_every_ops: usize,
    /// What a triggered rebalancer brings every host back within (fraction
    /// of capacity, at most the threshold): a low watermark, so that it
    /// does not have to act again at the very next check.
    pub rebalance_target: f64,
    /// Policy under test.
    pub policy: String,
    /// Seed.
    pub seed: u64,
}

impl Default for CcpSpec {
    fn default() -> Self {
        Self {
            racks: 30,
            hosts_per_rack: 10,
            client_racks: 10,
            host_bps: 10e9,
            oversub: 4.0,
            class_factor: [4.0, 1.0, 0.25],
            load: 0.7,
            read_fraction: 0.7,
            chunk_min: 100e3,
            chunk_max: 1e6,
            prepopulate: 20_000,
            ops: 100_000,
            r: 3,
            seek_s: 100e-6,
            disk_bytes_per_s: 1e9,
            capacity_bytes: 1e9,
            balance_threshold: 0.1,
            rebalance_every_ops: 1000,
            rebalance_target: 0.08,
            policy: "ccp".into(),
            seed: 1,
        }
    }
}

struct CcpRun {
    /// (is_read, network_s, total_s) per op.
    ops: Vec<(bool, f64, f64)>,
    fs: FileSystem,
    imbalance: f64,
    /// Largest imbalance the rebalancer found at a check (before moving).
    imbalance_max: f64,
    /// Chunk moves of the rebalancer and their bytes.
    moves: usize,
    moved_bytes: f64,
}

/// Flow ids of rebalancer moves start here (op flows use the op index).
const MOVE_BASE: u64 = 1 << 40;

fn run_ccp_policy(s: &CcpSpec, policy: &str) -> Result<CcpRun, StorageError> {
    if s.r == 0 || s.r > s.racks || s.racks == 0 || s.hosts_per_rack == 0 || s.client_racks == 0 {
        return Err(StorageError::invalid(
            "replicas",
            format!("need 1 <= replicas <= racks, got {} and {}", s.r, s.racks),
        ));
    }
    if !(s.load > 0.0 && s.chunk_min > 0.0 && s.chunk_max >= s.chunk_min) {
        return Err(StorageError::invalid("load", "load and chunk sizes must be positive, chunk-max >= chunk-min"));
    }
    if !(s.rebalance_target > 0.0 && s.rebalance_target <= s.balance_threshold) {
        return Err(StorageError::invalid(
            "rebalance-target",
            format!("must be in (0, balance-threshold = {}], got {}", s.balance_threshold, s.rebalance_target),
        ));
    }
    let classes = [UplinkClass::High, UplinkClass::Medium, UplinkClass::Low];
    let n = s.racks + s.client_racks;
    let cls: Vec<UplinkClass> = (0..n).map(|r| if r < s.racks { classes[r % 3] } else { UplinkClass::High }).collect();
    let fac: Vec<f64> = cls.iter().map(|c| s.class_factor[2 - *c as usize]).collect();
    let c = Cluster::two_tier(n, s.hosts_per_rack, s.host_bps, s.oversub, None, s.capacity_bytes, &fac, &cls);
    let nh = c.hosts.len();
    // Only storage racks hold data: client hosts are dead to placement.
    let live: Vec<bool> = (0..nh).map(|h| (c.rack_of(h as HostId) as usize) < s.racks).collect();
    let mut fs = FileSystem::new(nh);
    let mut pol = make_policy(policy, &PolicyConfig::default())?;
    pol.bind(&c);
    let mut prng = ChaCha8Rng::seed_from_u64(s.seed ^ 0xcc9);
    let mut wrng = ChaCha8Rng::seed_from_u64(s.seed);
    let red = Redundancy::Replicate { r: s.r, f: s.r - 1 };
    let mut place = |fs: &mut FileSystem, file: u64, bytes: f64, prng: &mut ChaCha8Rng| -> Option<Vec<HostId>> {
        let req = PlacementRequest { file, block: 0, bytes, writer: None, redundancy: red };
        let v = View { cluster: &c, live: &live, host_used: &fs.host_used, balance_threshold: s.balance_threshold };
        match place_checked(pol.as_mut(), &req, &v, prng) {
            Ok(hs) => {
                fs.store(file, bytes, hs.clone(), red);
                Some(hs)
            }
            Err(e) => {
                fs.fail(file, 0, e);
                None
            }
        }
    };
    let size = |rng: &mut ChaCha8Rng| rng.gen_range(s.chunk_min..=s.chunk_max);
    for i in 0..s.prepopulate {
        let b = size(&mut wrng);
        place(&mut fs, i as u64, b, &mut prng);
    }
    // The stored state at the start is as the rebalancer would keep it (no
    // flows: it predates the measured ops).
    if s.rebalance_every_ops > 0 {
        fs.rebalance_among(&c, s.rebalance_target, &live);
    }
    let low_cap = s.hosts_per_rack as f64 * s.host_bps / s.oversub * s.class_factor[2];
    let rate_bytes = s.load * s.racks as f64 * low_cap / 8.0;
    let mean_size = (s.chunk_min + s.chunk_max) / 2.0;
    let op_rate = rate_bytes / mean_size;
    let mut sim =
        Simulation::new(Network::new(c.link_bps.clone()), None, SimConfig { window_s: 1e9, ..SimConfig::default() });
    let mut disk_free = vec![0.0f64; nh];
    let mut disk_s = Vec::with_capacity(s.ops);
    let mut reads = Vec::with_capacity(s.ops);
    let mut t = 0.0;
    let mut path = Vec::new();
    let clients = s.racks * s.hosts_per_rack..nh;
    let stored = fs.blocks.len();
    let (mut imbalance_max, mut moves, mut moved_bytes) = (0.0f64, 0usize, 0.0f64);
    let (mut last_imb, mut drift_max) = (fs.imbalance_over(&c, &live), 0.0f64);
    // Checks the balance at `at` and turns the rebalancer's moves into flows.
    // It acts when a host is past the threshold, or would be by the next
    // check if the imbalance grew `DRIFT_SAFETY` times as fast as it ever
    // did between two checks (so checks find it within the threshold, not
    // just after crossing).
    let mut rebalance = |fs: &mut FileSystem, sim: &mut Simulation, at: f64| -> Result<(), StorageError> {
        let imb = fs.imbalance_over(&c, &live);
        imbalance_max = imbalance_max.max(imb);
        drift_max = drift_max.max(imb - last_imb);
        last_imb = imb;
        if imb + DRIFT_SAFETY * drift_max <= s.balance_threshold {
            return Ok(());
        }
        let mut p = Vec::new();
        for m in fs.rebalance_among(&c, s.rebalance_target, &live) {
            p.clear();
            c.net_path(m.from, m.to, &mut p);
            let id = MOVE_BASE + moves as u64;
            sim.add_flow(FlowSpec::new(id, m.from, m.to, m.bytes, at, Route::Explicit(p.clone())))
                .map_err(|e| StorageError::Engine(e.to_string()))?;
            moves += 1;
            moved_bytes += m.bytes;
        }
        last_imb = fs.imbalance_over(&c, &live);
        Ok(())
    };
    for i in 0..s.ops {
        if s.rebalance_every_ops > 0 && i > 0 && i % s.rebalance_every_ops == 0 {
            rebalance(&mut fs, &mut sim, t)?;
        }
        t += -(1.0 - wrng.gen::<f64>()).ln() / op_rate;
        let client = wrng.gen_range(clients.clone()) as HostId;
        let is_read = wrng.gen::<f64>() < s.read_fraction && stored > 0;
        let pick = wrng.gen_range(0..stored.max(1));
        let wsize = size(&mut wrng);
        path.clear();
        let mut svc = |h: HostId, bytes: f64, at: f64| {
            let st = disk_free[h as usize].max(at);
            disk_free[h as usize] = st + s.seek_s + bytes / s.disk_bytes_per_s;
            disk_free[h as usize] - at
        };
        let (src, dst, bytes, d) = if is_read {
            let hs = &fs.blocks[pick].hosts;
            let h = hs[prng.gen_range(0..hs.len())];
            let b = fs.blocks[pick].bytes;
            c.net_path(h, client, &mut path);
            (h, client, b, svc(h, b, t))
        } else {
            let Some(hs) = place(&mut fs, (s.prepopulate + i) as u64, wsize, &mut prng) else {
                disk_s.push(f64::NAN);
                reads.push(false);
                sim.add_flow(FlowSpec::new(i as u64, client, client, 0.0, t, Route::Explicit(vec![])))
                    .map_err(|e| StorageError::Engine(e.to_string()))?;
                continue;
            };
            let mut p = Vec::new();
            let mut prev = client;
            for &h in &hs {
                c.net_path(prev, h, &mut p);
                prev = h;
            }
            p.sort_unstable();
            p.dedup();
            path = p;
            let d = hs.iter().map(|&h| svc(h, wsize, t)).fold(0.0, f64::max);
            (client, *hs.last().unwrap_or(&client), wsize, d)
        };
        disk_s.push(d);
        reads.push(is_read);
        sim.add_flow(FlowSpec::new(i as u64, src, dst, bytes, t, Route::Explicit(path.clone())))
            .map_err(|e| StorageError::Engine(e.to_string()))?;
    }
    if s.rebalance_every_ops > 0 {
        rebalance(&mut fs, &mut sim, t)?;
    }
    let res = sim.run();
    let mut fct = vec![f64::NAN; s.ops];
    for f in &res.flows {
        if let Some(x) = fct.get_mut(f.id as usize) {
            *x = f.fct_s;
        }
    }
    let ops = fct.iter().zip(disk_s.iter().zip(&reads)).map(|(&f, (&d, &r))| (r, f, f + d)).collect();
    let imbalance = fs.imbalance_over(&c, &live);
    Ok(CcpRun { ops, fs, imbalance, imbalance_max, moves, moved_bytes })
}

/// Runs `uniform` and the spec's policy on the same chunk ops and reports
/// p95 network and total latency reductions per op type and the
/// storage-balance cost.
pub fn ccp_point(s: &CcpSpec) -> Result<Vec<(String, f64)>, StorageError> {
    let u = run_ccp_policy(s, "uniform")?;
    let p = run_ccp_policy(s, &s.policy)?;
    let sel = |r: &CcpRun, read: Option<bool>, total: bool| -> Vec<f64> {
        r.ops
            .iter()
            .filter(|o| read.is_none_or(|x| o.0 == x))
            .map(|o| if total { o.2 } else { o.1 })
            .filter(|x| x.is_finite())
            .collect()
    };
    let mut v = Vec::new();
    for (tag, read) in [("", None), ("_read", Some(true)), ("_write", Some(false))] {
        for (what, total) in [("network", false), ("total", true)] {
            let (a, b) = (percentile(&sel(&u, read, total), 95.0), percentile(&sel(&p, read, total), 95.0));
            v.push((format!("p95_{what}_latency_reduction_pct{tag}"), 100.0 * (1.0 - b / a)));
            v.push((format!("p95_{what}_latency_s{tag}_uniform"), a));
            v.push((format!("p95_{what}_latency_s{tag}_policy"), b));
        }
    }
    let used = |r: &CcpRun| -> Vec<f64> { r.fs.host_used.iter().copied().filter(|&x| x > 0.0).collect() };
    v.push(("disk_usage_std_ratio".into(), std_dev(&used(&p)) / std_dev(&used(&u))));
    v.push(("storage_imbalance_pct".into(), 100.0 * p.imbalance));
    v.push(("storage_imbalance_pct_uniform".into(), 100.0 * u.imbalance));
    v.push(("storage_imbalance_max_pct".into(), 100.0 * p.imbalance_max));
    v.push(("rebalance_moves".into(), p.moves as f64));
    let stored = |r: &CcpRun| r.fs.host_used.iter().sum::<f64>();
    v.push(("rebalanced_bytes_pct".into(), 100.0 * p.moved_bytes / stored(&p).max(1.0)));
    v.push(("rebalanced_bytes_pct_uniform".into(), 100.0 * u.moved_bytes / stored(&u).max(1.0)));
    v.push(("placement_failures".into(), (u.fs.failures.len() + p.fs.failures.len()) as f64));
    v.push(("ops".into(), p.ops.len() as f64));
    Ok(v)
}
