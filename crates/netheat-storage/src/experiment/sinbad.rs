//! The Sinbad point: block writes of ingested files and job outputs against
//! background shuffles, `uniform` against the policy under test.

use crate::cluster::Cluster;
use crate::fs::{std_dev, FileSystem, Redundancy};
use crate::placement::{make_policy, place_checked, PlacementRequest, PolicyConfig, ReplicaPlacement, View};
use crate::StorageError;
use netheat_core::stats::{mean, quantile};
use netheat_core::{HostId, LinkId};
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
        let src_util = utilization(ctx, &w.up).max(utilization(ctx, &self.c.racks[w.rack as usize].up));
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
                    for &l in &h.down {
                        self.rates[l as usize] = None;
                    }
                }
            }
        }
        self.policy.observe(ctx.now(), &self.rates);
        let u: Vec<f64> = self.c.racks.iter().map(|r| utilization(ctx, &r.down)).collect();
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

/// Utilization of a set of links: summed rate over summed capacity (0
/// without capacity); the engine's own figure for a single link.
fn utilization(ctx: &Ctx<'_, '_>, links: &[LinkId]) -> f64 {
    if let [l] = links {
        return ctx.link_utilization(*l);
    }
    let cap: f64 = links.iter().map(|&l| ctx.link_capacity_bps(l)).sum();
    if cap > 0.0 {
        links.iter().map(|&l| ctx.link_rate_bps(l)).sum::<f64>() / cap
    } else {
        0.0
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
                )?;
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
    for (i, &a) in arrivals.iter().enumerate() {
        sim.schedule_timer(a, (K_FILE << K_SHIFT) | i as u64)?;
    }
    sim.schedule_timer(s.policy_cfg.delta_s, K_REPORT << K_SHIFT)?;
    let batching = policy == "sinbad" && s.q_s > 0.0;
    if batching {
        sim.schedule_timer(s.q_s, K_DECIDE << K_SHIFT)?;
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
        ("median_cv_reduction".into(), 1.0 - quantile(&p.cv, 0.5) / quantile(&u.cv, 0.5)),
        ("median_cv_uniform".into(), quantile(&u.cv, 0.5)),
        ("median_cv_policy".into(), quantile(&p.cv, 0.5)),
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
