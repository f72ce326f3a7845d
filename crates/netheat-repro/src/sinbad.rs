//! The Sinbad point: the trace-driven simulation of the Sinbad paper
//! (Chowdhury, Kandula, Stoica, SIGCOMM 2013, sections 7.1-7.3), as far as
//! the public trace allows, `uniform` against the policy under test.
//!
//! * Cluster (section 7.1, Table 1): 150 racks of 20 machines, 1 Gbps
//!   machine links, 10:1 core-to-rack oversubscription, disks writing
//!   50 MB/s (modelled as links, so concurrent writes to one disk share
//!   it), 256 MiB blocks, three replicas in two racks (HDFS: one local, two
//!   in one remote rack).
//! * Background (section 7.2: precalculated and unaffected by placement):
//!   the shuffles of the public Facebook 2010 coflow trace (rack-level
//!   mappers and reducers, exact arrival times) are simulated once, alone,
//!   on the rack-to-core links, by max-min; their rate on each rack uplink
//!   and downlink, per second, becomes a capacity reduction for the writes
//!   ([`SinbadBackground`]): a write gets what the background leaves, and
//!   at least the per-flow fair share `Cap / (n + 1)` with `n` background
//!   flows on the link (TCP's flow fairness; without it a write behind a
//!   saturated link would stall, which no real write does). The same
//!   background serves every run of a point.
//! * Writes (sections 4.3, 7.2): 256 MiB block requests at 4 per second
//!   ("on average, 4 large block requests arrive every second"), in files
//!   written block after block by one writer (a host drawn uniformly; the
//!   public trace has no task logs, so no writer locations), files arriving
//!   as a Poisson process. Blocks per file are geometric on 1, 2, ... with
//!   mean 1.47: section 4.3 says 32% of the blocks written are full-size
//!   (the rest are the smaller last blocks of files), so a file has on
//!   average 0.32 / 0.68 = 0.47 full blocks besides its last one; a
//!   geometric count (the maximum-entropy law for a given mean) of full
//!   blocks, conditioned on at least one, has mean 1.47. Only the full
//!   blocks are simulated (section 5.1, assumption 1: most bytes come from
//!   them).
//! * Decisions: the policy run at the decision interval `q` (10 s in the
//!   paper's simulation, section 7.1) batches requests and places them in
//!   OPT' order (fewest remaining blocks of the parent file first, section
//!   5.2); `uniform` places at once. A block's write time is counted from
//!   its placement, as in the paper's model where requests arrive at the
//!   beginning of a decision interval (section 5.1, assumption 4;
//!   Appendix A.1); the same time counted from the request is reported
//!   too (`block_write_speedup_with_wait`).
//! * Optimistic bound (section 7.2): the policy again at `q`, with no
//!   bottleneck at sources (the writer's host and rack uplinks do not
//!   constrain the write, as if the writer had been placed where they are
//!   free), against the same `uniform` run.
//! * Imbalance (sections 4.3, 7.3): the coefficient of variation of the
//!   10-s average utilization (background plus writes) across the rack
//!   uplinks, and separately across the rack downlinks, its median over the
//!   run, and the absolute decrease `median(uniform) - median(policy)`.
//!
//! What the paper had and this does not: a task-level replay of the
//! Facebook trace (task logs with writer locations, write sizes and the
//! measured link loads). The coflow trace carries shuffles only: 35.5 TB
//! in its hour, 79 Gbps on average, against 8.6 Gbps of cross-rack writes
//! at 4 blocks/s, so writes are about 0.11 of the shuffle bytes where the
//! paper's Table 2 has them at 40/46 = 0.87 of them in the Facebook
//! cluster. Each point reports this ratio (`write_to_shuffle_bytes`).

use netheat_core::stats::{mean, quantile};
use netheat_core::{HostId, LinkId};
use netheat_data::coflow::CoflowTrace;
use netheat_engine::{Controller, Ctx, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_storage::cluster::Cluster;
use netheat_storage::fs::{std_dev, FileSystem, Redundancy};
use netheat_storage::placement::{make_policy, place_checked, PlacementRequest, PolicyConfig, ReplicaPlacement, View};
use netheat_storage::StorageError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const BLOCK_BASE: u64 = 1 << 40;
const K_REPORT: u64 = 1;
const K_FILE: u64 = 2;
const K_DECIDE: u64 = 3;
const K_SHIFT: u32 = 56;
/// Resolution of the precalculated background, seconds (one report
/// interval of the paper's Delta = 1 s).
pub const BACKGROUND_STEP_S: f64 = 1.0;
/// Window of the link utilizations whose Cv measures imbalance (section
/// 4.3: 10-s averages).
pub const CV_WINDOW_S: f64 = 10.0;

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
    /// Block requests per second (section 7.2: 4).
    pub block_requests_per_s: f64,
    /// Mean blocks per file (geometric on 1, 2, ...; 1.47 from section
    /// 4.3, see the module notes).
    pub mean_file_blocks: f64,
    /// Scale of the replayed shuffle bytes.
    pub shuffle_scale: f64,
    /// At most this many mapper racks feed each reducer rack in the
    /// background simulation (the rest of the reducer's bytes are spread
    /// over them, each flow weighted by the racks it stands for) to bound
    /// the flow count.
    pub max_mapper_racks: usize,
    /// Sinbad settings.
    pub policy_cfg: PolicyConfig,
    /// Decision interval q of the policy run, seconds (0: immediate; the
    /// paper's simulation: 10 s).
    pub q_s: f64,
    /// More decision intervals to run the policy with against the same
    /// uniform baseline (each reports `block_write_speedup_q<q>`).
    pub also_q_s: Vec<f64>,
    /// Also run the policy with no bottleneck at sources (section 7.2's
    /// optimistic bound, `block_write_speedup_optimistic`).
    pub optimistic: bool,
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
    /// The defaults of the `sinbad` kind's parameters ([`SinbadParams`],
    /// their one declaration), seed 1.
    fn default() -> Self {
        SinbadParams::default().spec(1).expect("the default parameters describe a point")
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
    /// Request time.
    pub start_s: f64,
    /// Placement time (the request time, or the end of its decision
    /// interval when batched; NaN: never placed).
    pub placed_s: f64,
    /// Completion time (NaN: unfinished or failed).
    pub finish_s: f64,
}

impl BlockRec {
    /// Write time from placement (the paper's block write time).
    pub fn write_s(&self) -> f64 {
        self.finish_s - self.placed_s
    }

    /// Write time from the request (with the decision interval's wait).
    pub fn write_with_wait_s(&self) -> f64 {
        self.finish_s - self.start_s
    }
}

/// The precalculated background: the replayed shuffles' rate on every rack
/// link per [`BACKGROUND_STEP_S`], and the background flows on it.
#[derive(Debug, Clone, PartialEq)]
pub struct SinbadBackground {
    /// Per rack, the uplink's background rate per step, bits/s.
    pub up_bps: Vec<Vec<f64>>,
    /// Per rack, the downlink's background rate per step, bits/s.
    pub down_bps: Vec<Vec<f64>>,
    /// Per rack, the uplink's background flows per step (time-averaged,
    /// counted by their weights).
    pub up_flows: Vec<Vec<f64>>,
    /// Per rack, the downlink's background flows per step.
    pub down_flows: Vec<Vec<f64>>,
    /// Cross-rack shuffle bytes arriving before the end of the arrivals.
    pub shuffle_bytes: f64,
}

impl SinbadBackground {
    /// Steps covered.
    pub fn steps(&self) -> usize {
        self.down_bps.first().map_or(0, Vec::len)
    }

    /// The capacity a rack link of capacity `cap` leaves to writes in a
    /// step with background rate `bg` and `n` background flows: `Cap - bg`,
    /// at least the per-flow fair share `Cap / (n + 1)`.
    pub fn left_for_writes(cap: f64, bg: f64, n: f64) -> f64 {
        (cap - bg).max(cap / (n + 1.0)).clamp(0.0, cap)
    }
}

/// What one policy run produced.
#[derive(Debug, Clone)]
pub struct RunOut {
    /// Blocks in request order of (file, block).
    pub blocks: Vec<BlockRec>,
    /// Cv of the rack uplinks' 10-s utilization, per window of the arrivals.
    pub cv_up: Vec<f64>,
    /// Cv of the rack downlinks' 10-s utilization, per window.
    pub cv_down: Vec<f64>,
    /// File system at the end.
    pub fs: FileSystem,
    /// Largest deviation of a host's used fraction from the mean.
    pub imbalance: f64,
    /// Flows simulated.
    pub flows: u64,
}

/// How a policy run is set up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunMode {
    /// Decision interval, seconds (0: immediate).
    pub q_s: f64,
    /// No bottleneck at sources: the writer's host and rack uplinks are
    /// left out of the pipeline's path.
    pub free_source: bool,
}

struct FileState {
    writer: HostId,
    sizes: Vec<f64>,
    next: usize,
}

struct Driver<'a> {
    spec: &'a SinbadSpec,
    c: &'a Cluster,
    bg: &'a SinbadBackground,
    fs: FileSystem,
    live: Vec<bool>,
    policy: Box<dyn ReplicaPlacement>,
    mode: RunMode,
    batching: bool,
    rng: ChaCha8Rng,
    loss_rng: ChaCha8Rng,
    files: Vec<FileState>,
    pending: Vec<(usize, u64)>,
    seq: u64,
    recs: Vec<BlockRec>,
    rec_of: Vec<Vec<usize>>,
    rates: Vec<Option<f64>>,
}

impl Driver<'_> {
    fn redundancy(&self) -> Redundancy {
        Redundancy::Replicate { r: self.spec.r, f: self.spec.f }
    }

    fn request(&mut self, ctx: &mut Ctx<'_, '_>, file: usize) {
        let now = ctx.now();
        let fsx = &self.files[file];
        let bytes = fsx.sizes[fsx.next];
        let ri = self.recs.len();
        self.recs.push(BlockRec {
            file: file as u64,
            block: fsx.next as u64,
            bytes,
            start_s: now,
            placed_s: f64::NAN,
            finish_s: f64::NAN,
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
            time_s: ctx.now(),
        };
        let view = View {
            cluster: self.c,
            live: &self.live,
            host_used: &self.fs.host_used,
            balance_threshold: self.spec.balance_threshold,
        };
        match place_checked(self.policy.as_mut(), &req, &view, &mut self.rng) {
            Ok(hs) => {
                let mut path = self.c.pipeline_path(fsx.writer, &hs);
                if self.mode.free_source {
                    let w = &self.c.hosts[fsx.writer as usize];
                    let skip = [w.up[0], self.c.racks[w.rack as usize].up[0]];
                    path.retain(|l| !skip.contains(l));
                }
                let dst = *hs.last().unwrap_or(&fsx.writer);
                self.fs.store(req.file, req.bytes, hs, req.redundancy);
                self.recs[ri].placed_s = ctx.now();
                let fl =
                    FlowSpec::new(BLOCK_BASE + ri as u64, fsx.writer, dst, req.bytes, ctx.now(), Route::Explicit(path));
                if let Err(e) = ctx.add_flow(fl) {
                    self.fs.fail(req.file, req.block, format!("engine: {e}"));
                }
            }
            Err(reason) => self.fs.fail(req.file, req.block, reason),
        }
    }

    /// A report: every link's measured rate (writes from the engine, plus
    /// the background of the interval just ended on rack links).
    fn report(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        for (l, r) in self.rates.iter_mut().enumerate() {
            *r = Some(ctx.link_rate_bps(l as u32));
        }
        let k = ((now / BACKGROUND_STEP_S).ceil() as usize).saturating_sub(1);
        if k < self.bg.steps() {
            for (ri, rack) in self.c.racks.iter().enumerate() {
                if let Some(Some(x)) = self.rates.get_mut(rack.up[0] as usize) {
                    *x += self.bg.up_bps[ri][k];
                }
                if let Some(Some(x)) = self.rates.get_mut(rack.down[0] as usize) {
                    *x += self.bg.down_bps[ri][k];
                }
            }
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
        self.policy.observe(now, &self.rates);
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
        let end = self.spec.duration_s + self.spec.drain_s;
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
                let t = ctx.now() + self.mode.q_s;
                if t <= end {
                    let _ = ctx.schedule_timer(t, K_DECIDE << K_SHIFT);
                }
            }
            _ => {}
        }
    }
}

/// The cluster of a Sinbad spec.
pub fn sinbad_cluster(s: &SinbadSpec) -> Cluster {
    Cluster::two_tier(s.racks, s.hosts_per_rack, s.host_bps, s.oversub, s.disk_write_bps, s.capacity_bytes, &[], &[])
}

fn check(s: &SinbadSpec) -> Result<(), StorageError> {
    let pos = super::positive;
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
    if !(s.drain_s >= 0.0 && s.drain_s.is_finite()) {
        return Err(StorageError::invalid("drain", "must be >= 0"));
    }
    if !(s.block_requests_per_s >= 0.0 && s.block_requests_per_s.is_finite()) {
        return Err(StorageError::invalid("block-requests-per-s", "must be >= 0"));
    }
    if !(s.mean_file_blocks >= 1.0 && s.mean_file_blocks.is_finite()) {
        return Err(StorageError::invalid("mean-file-blocks", "must be >= 1"));
    }
    if !(s.q_s >= 0.0 && s.q_s.is_finite()) || s.also_q_s.iter().any(|&q| !(q >= 0.0 && q.is_finite())) {
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

/// Precalculates the background: the trace's shuffles arriving before the
/// end of the arrivals, alone on the rack-to-core links (a flow per mapper
/// rack and reducer rack, at most `max_mapper_racks` per reducer rack,
/// weighted by the racks it stands for; a rack's own bytes stay in it),
/// shared by max-min, until the end of the drain.
pub fn sinbad_background(s: &SinbadSpec, trace: &CoflowTrace) -> Result<SinbadBackground, StorageError> {
    check(s)?;
    let c = sinbad_cluster(s);
    let end = s.duration_s + s.drain_s;
    let steps = (end / BACKGROUND_STEP_S).ceil() as usize;
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        SimConfig { end_s: Some(end), window_s: BACKGROUND_STEP_S, ..SimConfig::default() },
    );
    // Per flow: weight and its two links.
    let mut flows: Vec<(f64, LinkId, LinkId)> = Vec::new();
    let mut shuffle_bytes = 0.0;
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
                if mr == dr || per <= 0.0 {
                    continue;
                }
                let (up, down) = (c.racks[mr].up[0], c.racks[dr].down[0]);
                let w = nm as f64 / kk as f64;
                let (a, b) = (c.racks[mr].hosts[0], c.racks[dr].hosts[0]);
                sim.add_flow(
                    FlowSpec::new(flows.len() as u64, a, b, per, t, Route::Explicit(vec![up, down])).with_weight(w),
                )?;
                flows.push((w, up, down));
                shuffle_bytes += per;
            }
        }
    }
    let res = sim.run();
    let rate = |l: LinkId| -> Vec<f64> {
        (0..steps).map(|k| res.link_windows.bytes(l, k as u32) * 8.0 / BACKGROUND_STEP_S).collect()
    };
    let up_bps: Vec<Vec<f64>> = c.racks.iter().map(|r| rate(r.up[0])).collect();
    let down_bps: Vec<Vec<f64>> = c.racks.iter().map(|r| rate(r.down[0])).collect();
    // Flow counts: each flow's weight times the share of each step it was
    // active in, on both its links.
    let mut idx: std::collections::HashMap<LinkId, (bool, usize)> = std::collections::HashMap::new();
    for (ri, r) in c.racks.iter().enumerate() {
        idx.insert(r.up[0], (true, ri));
        idx.insert(r.down[0], (false, ri));
    }
    let mut up_flows = vec![vec![0.0; steps]; s.racks];
    let mut down_flows = vec![vec![0.0; steps]; s.racks];
    for fr in &res.flows {
        let Some(&(w, up, down)) = flows.get(fr.id as usize) else { continue };
        let t0 = fr.start_s;
        let t1 = if fr.finish_s.is_finite() { fr.finish_s } else { end };
        if t1 <= t0 {
            continue;
        }
        let k0 = (t0 / BACKGROUND_STEP_S).floor() as usize;
        let k1 = ((t1 / BACKGROUND_STEP_S).ceil() as usize).min(steps);
        for k in k0..k1 {
            let a = (k as f64 * BACKGROUND_STEP_S).max(t0);
            let b = ((k + 1) as f64 * BACKGROUND_STEP_S).min(t1);
            if b <= a {
                continue;
            }
            let x = w * (b - a) / BACKGROUND_STEP_S;
            for l in [up, down] {
                match idx.get(&l) {
                    Some(&(true, ri)) => up_flows[ri][k] += x,
                    Some(&(false, ri)) => down_flows[ri][k] += x,
                    None => {}
                }
            }
        }
    }
    Ok(SinbadBackground { up_bps, down_bps, up_flows, down_flows, shuffle_bytes })
}

/// Draws the files of a point: Poisson arrivals at `block_requests_per_s /
/// mean_file_blocks`, each of `1 + G` blocks with `G` geometric of mean
/// `mean_file_blocks - 1`, by a writer drawn uniformly among the hosts.
fn draw_files(s: &SinbadSpec, nh: usize) -> (Vec<FileState>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let m = s.mean_file_blocks;
    let p = (m - 1.0) / m; // P(G >= j) = p^j has mean p / (1 - p) = m - 1
    let rate = s.block_requests_per_s / m;
    let (mut files, mut arrivals) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    if rate <= 0.0 {
        return (files, arrivals);
    }
    loop {
        t += -(1.0 - rng.gen::<f64>()).ln() / rate;
        if t >= s.duration_s {
            break;
        }
        let u: f64 = 1.0 - rng.gen::<f64>();
        let extra = if p > 0.0 { (u.ln() / p.ln()).floor() as usize } else { 0 };
        files.push(FileState {
            writer: rng.gen_range(0..nh) as HostId,
            sizes: vec![s.block_bytes; 1 + extra],
            next: 0,
        });
        arrivals.push(t);
    }
    (files, arrivals)
}

/// Median over the arrivals' 10-s windows of the Cv across racks of the
/// utilization (writes from the run's telemetry plus background) of each
/// rack's `up` (or down) link.
fn cv_series(
    s: &SinbadSpec,
    c: &Cluster,
    bg: &SinbadBackground,
    res: &netheat_engine::SimResult,
    up: bool,
) -> Vec<f64> {
    let windows = (s.duration_s / CV_WINDOW_S).floor() as usize;
    let per = (CV_WINDOW_S / BACKGROUND_STEP_S).round() as usize;
    let mut out = Vec::with_capacity(windows);
    for w in 0..windows {
        let u: Vec<f64> = c
            .racks
            .iter()
            .enumerate()
            .map(|(ri, r)| {
                let l = if up { r.up[0] } else { r.down[0] };
                let series = if up { &bg.up_bps[ri] } else { &bg.down_bps[ri] };
                let bgb: f64 = (w * per..(w + 1) * per)
                    .map(|k| series.get(k).copied().unwrap_or(0.0) * BACKGROUND_STEP_S / 8.0)
                    .sum();
                (res.link_windows.bytes(l, w as u32) + bgb) * 8.0 / (c.link_bps[l as usize] * CV_WINDOW_S)
            })
            .collect();
        let m = u.iter().sum::<f64>() / u.len() as f64;
        if m > 0.0 {
            out.push(std_dev(&u) / m);
        }
    }
    out
}

/// The background alone over the arrivals' 10-s windows: the share of
/// windows whose 95th percentile of utilization across all rack links (up
/// and down) is above 75% (section 4.3 measured 25% of the time in the
/// Facebook cluster), and the median Cv across the rack uplinks and across
/// the downlinks.
fn background_summary(s: &SinbadSpec, c: &Cluster, bg: &SinbadBackground) -> (f64, f64, f64) {
    let windows = (s.duration_s / CV_WINDOW_S).floor() as usize;
    let per = (CV_WINDOW_S / BACKGROUND_STEP_S).round() as usize;
    let util = |series: &[f64], cap: f64, w: usize| -> f64 {
        (w * per..(w + 1) * per).map(|k| series.get(k).copied().unwrap_or(0.0)).sum::<f64>() / (per as f64 * cap)
    };
    let (mut hot, mut cv_up, mut cv_down) = (0usize, Vec::new(), Vec::new());
    for w in 0..windows {
        let up: Vec<f64> =
            c.racks.iter().enumerate().map(|(ri, r)| util(&bg.up_bps[ri], c.link_bps[r.up[0] as usize], w)).collect();
        let down: Vec<f64> = c
            .racks
            .iter()
            .enumerate()
            .map(|(ri, r)| util(&bg.down_bps[ri], c.link_bps[r.down[0] as usize], w))
            .collect();
        let all: Vec<f64> = up.iter().chain(&down).copied().collect();
        if quantile(&all, 0.95) > 0.75 {
            hot += 1;
        }
        for (v, out) in [(&up, &mut cv_up), (&down, &mut cv_down)] {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            if m > 0.0 {
                out.push(std_dev(v) / m);
            }
        }
    }
    let med = |v: &[f64]| if v.is_empty() { f64::NAN } else { quantile(v, 0.5) };
    (100.0 * hot as f64 / windows.max(1) as f64, med(&cv_up), med(&cv_down))
}

/// Runs one policy on the Sinbad workload over a precalculated background.
pub fn run_sinbad_policy(
    s: &SinbadSpec,
    bg: &SinbadBackground,
    policy: &str,
    mode: RunMode,
) -> Result<RunOut, StorageError> {
    check(s)?;
    let c = sinbad_cluster(s);
    let mut pol = make_policy(policy, &s.policy_cfg)?;
    pol.bind(&c);
    let nh = c.hosts.len();
    let end = s.duration_s + s.drain_s;
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        SimConfig { end_s: Some(end), window_s: CV_WINDOW_S, ..SimConfig::default() },
    );
    // The background as the capacity it leaves to writes, step by step.
    for (ri, rack) in c.racks.iter().enumerate() {
        for (l, rate, n) in
            [(rack.up[0], &bg.up_bps[ri], &bg.up_flows[ri]), (rack.down[0], &bg.down_bps[ri], &bg.down_flows[ri])]
        {
            let cap = c.link_bps[l as usize];
            let mut prev = cap;
            for (k, (&x, &nf)) in rate.iter().zip(n.iter()).enumerate() {
                let left = SinbadBackground::left_for_writes(cap, x, nf);
                if (left - prev).abs() > 1e-9 * cap {
                    sim.schedule_capacity(k as f64 * BACKGROUND_STEP_S, l, left)?;
                    prev = left;
                }
            }
        }
    }
    let (files, arrivals) = draw_files(s, nh);
    for (i, &a) in arrivals.iter().enumerate() {
        sim.schedule_timer(a, (K_FILE << K_SHIFT) | i as u64)?;
    }
    sim.schedule_timer(s.policy_cfg.delta_s, K_REPORT << K_SHIFT)?;
    let batching = policy == "sinbad" && mode.q_s > 0.0;
    if batching {
        sim.schedule_timer(mode.q_s, K_DECIDE << K_SHIFT)?;
    }
    let nfiles = files.len();
    let mut d = Driver {
        spec: s,
        c: &c,
        bg,
        fs: FileSystem::new(nh),
        live: vec![true; nh],
        policy: pol,
        mode,
        batching,
        rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0x5157_ad00),
        loss_rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0x1055),
        files,
        pending: Vec::new(),
        seq: 0,
        recs: Vec::new(),
        rec_of: vec![Vec::new(); nfiles],
        rates: vec![None; c.link_bps.len()],
    };
    let res = sim.run_with(&mut d);
    let cv_up = cv_series(s, &c, bg, &res, true);
    let cv_down = cv_series(s, &c, bg, &res, false);
    let imbalance = d.fs.imbalance(&c);
    let mut blocks = d.recs;
    blocks.sort_by_key(|b| (b.file, b.block));
    Ok(RunOut { blocks, cv_up, cv_down, fs: d.fs, imbalance, flows: res.stats.flows_completed })
}

/// Blocks written in both runs, in the baseline's order: the baseline's
/// record and the two write times by `time` (finished blocks only).
fn paired<'a>(
    base: &'a RunOut,
    other: &'a RunOut,
    time: fn(&BlockRec) -> f64,
) -> impl Iterator<Item = (&'a BlockRec, f64, f64)> + 'a {
    let by_key: std::collections::BTreeMap<(u64, u64), f64> =
        other.blocks.iter().map(|b| ((b.file, b.block), time(b))).collect();
    base.blocks.iter().filter_map(move |a| {
        let y = *by_key.get(&(a.file, a.block))?;
        let x = time(a);
        (x.is_finite() && y.is_finite()).then_some((a, x, y))
    })
}

/// Mean write time of the baseline over the other run's (paired blocks).
fn speedup(base: &RunOut, other: &RunOut, time: fn(&BlockRec) -> f64) -> f64 {
    let (a, b): (Vec<f64>, Vec<f64>) = paired(base, other, time).map(|(_, x, y)| (x, y)).unzip();
    mean(&a) / mean(&b)
}

/// Result of a Sinbad point: named values and the paired block table.
#[derive(Debug, Clone)]
pub struct PointOut {
    /// Summary values.
    pub values: Vec<(String, f64)>,
    /// Block write times of the baseline, paired with `policy_s`.
    pub uniform_s: Vec<f64>,
    /// Block write times of the policy (from placement).
    pub policy_s: Vec<f64>,
    /// Block sizes.
    pub bytes: Vec<f64>,
}

/// The name of an extra decision interval's value: `q10`, `q1p5`.
fn q_name(q: f64) -> String {
    if q.fract() == 0.0 {
        format!("{q:.0}")
    } else {
        format!("{q}").replace('.', "p")
    }
}

/// Runs `uniform` (immediate decisions) and the spec's policy (at `q_s`,
/// and at each of `also_q_s`, and with free sources when `optimistic`) over
/// one precalculated background and one set of files, and compares them
/// block by block (blocks finished in both runs).
pub fn sinbad_point(s: &SinbadSpec, trace: &CoflowTrace) -> Result<PointOut, StorageError> {
    validate_sinbad(s)?;
    let bg = sinbad_background(s, trace)?;
    let main = RunMode { q_s: s.q_s, free_source: false };
    let mut modes: Vec<RunMode> = s.also_q_s.iter().map(|&q| RunMode { q_s: q, free_source: false }).collect();
    if s.optimistic {
        modes.push(RunMode { q_s: s.q_s, free_source: true });
    }
    // The runs are independent: one thread each.
    let (u, p, extra) = std::thread::scope(|sc| {
        let bg = &bg;
        let base = sc.spawn(move || run_sinbad_policy(s, bg, "uniform", RunMode { q_s: 0.0, free_source: false }));
        let others: Vec<_> = modes.iter().map(|&m| sc.spawn(move || run_sinbad_policy(s, bg, &s.policy, m))).collect();
        let p = run_sinbad_policy(s, bg, &s.policy, main);
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let extra: Vec<Result<RunOut, StorageError>> = others.into_iter().map(join).collect();
        (join(base), p, extra)
    });
    let (u, p) = (u?, p?);
    let (mut tu, mut tp, mut by) = (vec![], vec![], vec![]);
    let (mut faster, mut same, mut slower) = (0usize, 0usize, 0usize);
    for (a, x, y) in paired(&u, &p, BlockRec::write_s) {
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
    }
    let n = tu.len().max(1) as f64;
    let mut also = Vec::new();
    for (m, r) in modes.iter().zip(extra) {
        let r = r?;
        let name = if m.free_source {
            "block_write_speedup_optimistic".to_string()
        } else {
            format!("block_write_speedup_q{}", q_name(m.q_s))
        };
        also.push((name, speedup(&u, &r, BlockRec::write_s)));
    }
    let med = |v: &[f64]| if v.is_empty() { f64::NAN } else { quantile(v, 0.5) };
    let (cu_up, cp_up, cu_down, cp_down) = (med(&u.cv_up), med(&p.cv_up), med(&u.cv_down), med(&p.cv_down));
    // Background and write volumes over the arrivals.
    let arrival_steps = ((s.duration_s / BACKGROUND_STEP_S).ceil() as usize).min(bg.steps());
    let c = sinbad_cluster(s);
    let (mut util_sum, mut sat) = (0.0, 0usize);
    for (ri, r) in c.racks.iter().enumerate() {
        let cap = c.link_bps[r.down[0] as usize];
        for k in 0..arrival_steps {
            let x = bg.down_bps[ri][k];
            util_sum += x / cap;
            if cap - x < cap / (bg.down_flows[ri][k] + 1.0) {
                sat += 1;
            }
        }
    }
    let link_steps = (c.racks.len() * arrival_steps).max(1) as f64;
    let (bg_hot_pct, bg_cv_up, bg_cv_down) = background_summary(s, &c, &bg);
    let write_bytes: f64 =
        u.blocks.iter().filter(|b| b.start_s < s.duration_s).map(|b| b.bytes * s.f as f64).sum::<f64>();
    let mut v = vec![
        ("block_write_speedup".to_string(), mean(&tu) / mean(&tp)),
        ("block_write_speedup_with_wait".into(), speedup(&u, &p, BlockRec::write_with_wait_s)),
        ("blocks_faster_pct".into(), 100.0 * faster as f64 / n),
        ("blocks_same_pct".into(), 100.0 * same as f64 / n),
        ("blocks_slower_pct".into(), 100.0 * slower as f64 / n),
        ("median_cv_decrease_up".into(), cu_up - cp_up),
        ("median_cv_decrease_down".into(), cu_down - cp_down),
        ("median_cv_up_uniform".into(), cu_up),
        ("median_cv_up_policy".into(), cp_up),
        ("median_cv_down_uniform".into(), cu_down),
        ("median_cv_down_policy".into(), cp_down),
        ("disk_usage_std_ratio".into(), p.fs.host_std() / u.fs.host_std()),
        ("disk_usage_std_increase_pct".into(), 100.0 * (p.fs.host_std() - u.fs.host_std()) / s.capacity_bytes),
        ("storage_imbalance_pct".into(), 100.0 * p.imbalance),
        ("mean_block_write_s_uniform".into(), mean(&tu)),
        ("mean_block_write_s_policy".into(), mean(&tp)),
        ("blocks".into(), tu.len() as f64),
        ("blocks_unpaired".into(), (u.blocks.len().max(p.blocks.len()) - tu.len()) as f64),
        (
            "block_requests_per_s".into(),
            u.blocks.iter().filter(|b| b.start_s < s.duration_s).count() as f64 / s.duration_s,
        ),
        ("placement_failures".into(), (u.fs.failures.len() + p.fs.failures.len()) as f64),
        ("background_down_util_mean".into(), util_sum / link_steps),
        ("background_down_floor_pct".into(), 100.0 * sat as f64 / link_steps),
        ("background_p95_above_75_pct".into(), bg_hot_pct),
        ("median_cv_up_background".into(), bg_cv_up),
        ("median_cv_down_background".into(), bg_cv_down),
        (
            "write_to_shuffle_bytes".into(),
            if bg.shuffle_bytes > 0.0 { write_bytes / bg.shuffle_bytes } else { f64::NAN },
        ),
        ("flows".into(), (u.flows + p.flows) as f64),
    ];
    v.extend(also);
    Ok(PointOut { values: v, uniform_s: tu, policy_s: tp, bytes: by })
}

/// The parameters of a `sinbad` point (one definition each; see the module
/// docs for the setup).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SinbadParams {
    /// placement policy compared against uniform: sinbad, ccp, ccp-balance or uniform
    pub policy: String,
    /// racks
    pub racks: usize,
    /// hosts per rack
    pub hosts_per_rack: usize,
    /// host link capacity
    #[serde(with = "crate::points::bandwidth")]
    #[schemars(schema_with = "crate::points::bandwidth::schema")]
    pub host_link: f64,
    /// core-to-rack oversubscription
    pub oversubscription: f64,
    /// disk write throughput
    #[serde(with = "crate::points::bandwidth")]
    #[schemars(schema_with = "crate::points::bandwidth::schema")]
    pub disk_write: f64,
    /// no disk cap (writes to memory)
    pub in_memory: bool,
    /// block size
    #[serde(with = "crate::points::bytes")]
    #[schemars(schema_with = "crate::points::bytes::schema")]
    pub block_size: f64,
    /// replicas per block
    pub replicas: usize,
    /// racks the replicas span
    pub fault_domains: usize,
    /// simulated time of arrivals
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub duration: f64,
    /// extra time for writes to finish
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub drain: f64,
    /// block write requests per second (Sinbad section 7.2: 4 large blocks per second)
    pub block_requests_per_s: f64,
    /// mean blocks per file, geometric on 1, 2, ... (1.47 from section 4.3's 32% full-size blocks)
    pub mean_file_blocks: f64,
    /// scale of the replayed shuffle bytes (the background)
    pub shuffle_scale: f64,
    /// background simulation: aggregated mapper flows per reducer rack (weighted)
    pub max_mapper_racks: usize,
    /// Sinbad report interval Delta
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub delta: f64,
    /// Sinbad EWMA weight
    pub alpha: f64,
    /// blocks below this use the default policy
    #[serde(with = "crate::points::bytes")]
    #[schemars(schema_with = "crate::points::bytes::schema")]
    pub threshold: f64,
    /// decision interval of the policy run, OPT' order (0: immediate; paper's simulation: 10 s)
    #[serde(with = "crate::points::duration")]
    #[schemars(schema_with = "crate::points::duration::schema")]
    pub q: f64,
    /// more decision intervals run against the same uniform baseline, e.g. '0s,1s' (values
    /// block_write_speedup_q0, ..._q1)
    pub also_q: String,
    /// also run the policy at q with no bottleneck at sources (block_write_speedup_optimistic)
    pub optimistic: bool,
    /// probability a host report is missing
    pub report_loss: f64,
    /// storage-balance threshold (fraction of capacity)
    pub balance_threshold: f64,
}

impl Default for SinbadParams {
    fn default() -> Self {
        Self {
            policy: "sinbad".into(),
            racks: 150,
            hosts_per_rack: 20,
            host_link: 1e9,
            oversubscription: 10.0,
            disk_write: 400e6,
            in_memory: false,
            block_size: 256.0 * 1024.0 * 1024.0,
            replicas: 3,
            fault_domains: 2,
            duration: 3600.0,
            drain: 600.0,
            block_requests_per_s: 4.0,
            mean_file_blocks: 1.47,
            shuffle_scale: 1.0,
            max_mapper_racks: 6,
            delta: 1.0,
            alpha: 0.2,
            threshold: 10e6,
            q: 10.0,
            also_q: String::new(),
            optimistic: true,
            report_loss: 0.0,
            balance_threshold: 0.1,
        }
    }
}

impl SinbadParams {
    /// The point these parameters describe, with `seed` (`also-q` parsed).
    pub fn spec(self, seed: u64) -> Result<SinbadSpec, crate::points::PointError> {
        use crate::points::PointError;
        let p = self;
        let also_q_s = p
            .also_q
            .split(',')
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(|q| {
                netheat_core::parse_duration(q)
                    .map_err(|e| PointError::Param { key: "also-q".into(), reason: format!("invalid duration: {e}") })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        Ok(SinbadSpec {
            racks: p.racks,
            hosts_per_rack: p.hosts_per_rack,
            host_bps: p.host_link,
            oversub: p.oversubscription,
            disk_write_bps: (!p.in_memory).then_some(p.disk_write),
            block_bytes: p.block_size,
            r: p.replicas,
            f: p.fault_domains.saturating_sub(1),
            duration_s: p.duration,
            drain_s: p.drain,
            block_requests_per_s: p.block_requests_per_s,
            mean_file_blocks: p.mean_file_blocks,
            shuffle_scale: p.shuffle_scale,
            max_mapper_racks: p.max_mapper_racks,
            policy_cfg: PolicyConfig { delta_s: p.delta, alpha: p.alpha, threshold_bytes: p.threshold },
            q_s: p.q,
            also_q_s,
            optimistic: p.optimistic,
            report_loss: p.report_loss,
            capacity_bytes: SINBAD_CAPACITY_BYTES,
            balance_threshold: p.balance_threshold,
            policy: p.policy,
            seed,
        })
    }
}

/// Storage per host of a `sinbad` point, bytes (4 TB: far from full in an
/// hour of writes, so placement is never refused for space).
const SINBAD_CAPACITY_BYTES: f64 = 4e12;
/// The trace whose shuffles become the background.
const SINBAD_TRACE: &str = "coflow-fb2010";

pub(crate) fn storage_error(e: StorageError) -> crate::points::PointError {
    match e {
        StorageError::Engine(e) => crate::points::PointError::Engine(e.into()),
        other => crate::points::PointError::Input(other.into()),
    }
}

/// Runs one `sinbad` point: the summary values and the paired `blocks` table.
pub fn run(
    p: SinbadParams,
    _: &crate::points::TopologyOverrides,
    seed: u64,
    env: &crate::points::PointEnv,
) -> Result<crate::points::PointOutput, crate::points::PointError> {
    use crate::points::{Column, PointError, PointOutput};
    let s = p.spec(seed)?;
    validate_sinbad(&s).map_err(storage_error)?;
    let t = netheat_data::load_coflows(&env.data_dir(None), SINBAD_TRACE).map_err(|e| PointError::Data(e.into()))?;
    let r = sinbad_point(&s, &t).map_err(storage_error)?;
    let blocks = vec![
        ("uniform_s".to_string(), Column::F64(r.uniform_s)),
        ("policy_s".to_string(), Column::F64(r.policy_s)),
        ("bytes".to_string(), Column::F64(r.bytes)),
    ];
    Ok(PointOutput { values: r.values, tables: vec![("blocks".to_string(), blocks)], ..Default::default() })
}

crate::point_kind!("sinbad", SinbadParams, run);
