//! The simulator's prediction of `make bench-hdfs` (issue 29): the same
//! small HDFS cluster, background and closed-loop block writers on the flow
//! engine, with the replica policies of this crate (`uniform` standing in
//! for HDFS's default, `sinbad`, `ccp`).
//!
//! The emulated bench (benches/hdfs/run.py) is 8 DataNodes, each its own
//! rack by default (`--racks 4`: 4 racks of 2, ours), on
//! 50 Mbit/s links shaped by `tbf` both ways behind one non-blocking
//! bridge; writers inside some DataNodes' network namespaces write
//! files of whole blocks back to back with exponential think times (one
//! block each, or `1 + G` blocks with `G` geometric, the Sinbad paper's
//! file lengths, §4.3: 1.47 blocks on average); background
//! TCP flows from an unshaped sender load 2-3 DataNodes' receive links
//! (`bgtraffic.py`: `F` flows per hot DataNode, each paced at `R / F`),
//! the hot set changing every phase; a reporter turns the receive byte
//! counters into per-second utilizations for the NameNode's Sinbad. This
//! module runs that on the flow engine:
//!
//! * **Cluster**: [`Cluster::two_tier`] with the bench's racks, DataNodes
//!   per rack and link rate, no oversubscription (the bridge is
//!   non-blocking: rack links carry the sum of their hosts' links and never
//!   bind), no disk cap (the bench's blocks are small and the DataNodes
//!   write to the page cache), the CCP uplink classes of the bench's class
//!   file. The NameNode and the background sender sit on unshaped links and
//!   are not modelled as hosts.
//! * **Background**: during each phase, `bg_flows` flows into each hot
//!   DataNode whose route is that DataNode's downlink alone, each capped at
//!   `bg_rate_bps / bg_flows` (the pacing of `bgtraffic.py`); cancelled at
//!   the phase's end. Fluid max-min: a write hop sharing a hot link with
//!   four such flows gets `Cap / 5` (each paced flow wants more than that).
//! * **Writes**: each writer, on its DataNode, waits its think time, writes
//!   a file's blocks one after the other (each placed when it starts, as
//!   HDFS's addBlock does), waits, and so on until its start would be past
//!   `writes_duration_s` (BlockWriter.java); times in the writer's clock
//!   start at `writes_start_s` of the background's. Replication 3 with the
//!   writer's DataNode holding the first replica (HDFS's rule for a writer
//!   on a DataNode) and the other two in one remote rack:
//!   [`Redundancy::Replicate`] `{ r: 3, f: 1 }` with the writer as the
//!   local piece, placed by the policy under test. With one DataNode per
//!   rack (every DataNode its own fault domain, the Sinbad paper's EC2
//!   form, §6.1 and §7) the third replica cannot join the second's rack:
//!   HDFS's default then takes any other DataNode (`chooseLocalRack`'s
//!   fallback), so the three replicas are in three racks, `{ r: 3, f: 2 }`
//!   ([`hdfs_redundancy`]).
//! * **Pipeline** ([`PipelineModel`]): `Hops` (default) runs each network
//!   hop of `writer -> r2 -> r3` as its own flow from the block's start
//!   (the client-to-local-DataNode hop goes over the loopback and costs
//!   nothing); the block is written when its slowest hop is. `Chain` runs
//!   the pipeline as one flow over the union of the hops' links (one rate
//!   for the whole pipeline: strict back-pressure).
//! * **Reports** (reporter.py): every `report_s`, each DataNode's received
//!   bytes over the interval just ended (every flow crossing its downlink:
//!   background and writes) as a rate on its downlink, and each rack's
//!   downlink as the sum of its DataNodes' (how the HDFS policy derives
//!   racks from host reports, docs/hdfs.md; it includes the intra-rack
//!   hop `r2 -> r3`), given to [`ReplicaPlacement::observe`].
//!
//! What the fluid model leaves out, by construction: TCP dynamics (slow
//! start, losses in `tbf`'s queue, the paced background catching up after
//! a write), the JVMs' CPU time on a shared machine, the client's and
//! DataNodes' per-block RPCs to the NameNode (create, addBlock, complete),
//! and the variation of the HDFS policy's refresh lag (a report is
//! applied `report_lag_s` after it is measured: a fixed lag, where the
//! NameNode's refresh thread, on its own clock, takes 0 to 1 s).

use netheat_core::{HostId, LinkId};
use netheat_engine::{Controller, Ctx, FlowRecord, FlowSpec, Network, Route, SimConfig, Simulation};
use netheat_storage::cluster::{Cluster, UplinkClass};
use netheat_storage::fs::{FileSystem, Redundancy};
use netheat_storage::placement::{place_checked, PlacementRequest, PolicyConfig, ReplicaPlacement, View};
use netheat_storage::registry::make_policy;
use netheat_storage::StorageError;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const K_SHIFT: u32 = 56;
const K_REPORT: u64 = 1;
const K_PHASE: u64 = 2;
const K_WRITE: u64 = 3;
const K_DONE: u64 = 4;
const K_APPLY: u64 = 5;
/// Flow ids of block hops start here (background flows below).
const BLOCK_BASE: u64 = 1 << 40;
/// Hops per block at most (ids `BLOCK_BASE + block * HOPS + hop`).
const HOPS: u64 = 8;
/// Bytes of a background flow: more than it can send in any run (it is
/// cancelled at its phase's end).
const ENDLESS_BYTES: f64 = 1e18;

/// How a replication pipeline is modelled on the flow engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineModel {
    /// One flow per network hop, all from the block's start; the block is
    /// written when the slowest hop is.
    Hops,
    /// One flow over the union of the hops' links.
    Chain,
}

/// One writer: its DataNode and its think times, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct HdfsWriter {
    /// The DataNode it runs on (rack-major host index).
    pub host: HostId,
    /// Think time before each file, seconds (file `i` waits `thinks[i]`
    /// after file `i - 1` was closed; file 0 after the writer started).
    pub thinks: Vec<f64>,
    /// Blocks of each file, in order (a file past the list, or a 0: one).
    pub blocks: Vec<u32>,
}

/// The emulated bench as the simulator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct HdfsBenchSpec {
    /// Racks.
    pub racks: usize,
    /// DataNodes per rack.
    pub hosts_per_rack: usize,
    /// Each DataNode's link, each way, bits/s.
    pub host_bps: f64,
    /// Uplink class per rack (CCP's class file; missing: Medium).
    pub classes: Vec<UplinkClass>,
    /// Block size, bytes (every block of a file is full).
    pub block_bytes: f64,
    /// Background phases: start time (background clock, s) and hot DataNodes.
    pub phases: Vec<(f64, Vec<HostId>)>,
    /// When the background stops, s.
    pub bg_end_s: f64,
    /// Background rate into each hot DataNode, bits/s.
    pub bg_rate_bps: f64,
    /// Background flows per hot DataNode.
    pub bg_flows: usize,
    /// When the writers' clock starts, in the background's clock, s.
    pub writes_start_s: f64,
    /// A writer starts no file after this many seconds of its clock.
    pub writes_duration_s: f64,
    /// The writers.
    pub writers: Vec<HdfsWriter>,
    /// Report interval of the load reporter, s (also Sinbad's Delta).
    pub report_s: f64,
    /// How long after a report is measured the policy applies it, s: the
    /// HDFS policy reads the report file from a refresh thread
    /// (`netheat.placement.refresh.ms`, 1 s) whose clock is independent
    /// of the reporter's, so a report waits for the next refresh, half a
    /// refresh on average. 0: at once (the simulator's policies alone).
    /// Must be below `report_s`, so reports stay in order.
    pub report_lag_s: f64,
    /// Sinbad settings (`delta_s` is set to `report_s`).
    pub policy_cfg: PolicyConfig,
    /// Pipeline model.
    pub pipeline: PipelineModel,
    /// Time a block takes beyond its network hops, s: the write path's
    /// fixed cost per block (addBlock and pipeline set-up, the last
    /// acknowledgement and close, JVM time on shared cores), which a fluid
    /// model has not. A block is done this long after its last hop. 0: the
    /// fluid model alone. `benches/hdfs/predict.py`'s calibrated model takes
    /// it from the emulation's calibration runs (idle links), never from the
    /// policy comparison.
    pub block_overhead_s: f64,
    /// Weight of each background flow against a block hop (weight 1) in the
    /// engine's weighted max-min sharing of a hot link: 1 is plain max-min
    /// (a hop behind 4 background flows gets a fifth of the link); below 1
    /// the background yields more of the link to the writes. From the
    /// calibration runs (a fixed hot set), never from the policy comparison.
    pub bg_weight: f64,
}

/// One written block.
#[derive(Debug, Clone, PartialEq)]
pub struct HdfsBlock {
    /// Writer index in [`HdfsBenchSpec::writers`].
    pub writer: usize,
    /// File index of the writer (0 first).
    pub file: usize,
    /// Block index in its file (0 first).
    pub block: usize,
    /// Start, background clock, s.
    pub start_s: f64,
    /// Completion (every hop done), background clock, s; NaN if unfinished.
    pub finish_s: f64,
    /// Replica DataNodes in pipeline order (the writer's first).
    pub replicas: Vec<HostId>,
}

impl HdfsBlock {
    /// The block's write time, s: from its start (create() or the end of
    /// the file's previous block) to its last byte acknowledged by every
    /// replica (close() for a file's last block).
    pub fn write_s(&self) -> f64 {
        self.finish_s - self.start_s
    }
}

/// The redundancy HDFS's default gives a block of a writer on a DataNode
/// (replication 3): two racks (the second and third replicas share a remote
/// rack) when racks hold two DataNodes or more, three racks when each rack
/// holds one (the third replica falls back to any other DataNode).
pub fn hdfs_redundancy(hosts_per_rack: usize) -> Redundancy {
    if hosts_per_rack >= 2 {
        Redundancy::Replicate { r: 3, f: 1 }
    } else {
        Redundancy::Replicate { r: 3, f: 2 }
    }
}

/// The cluster of a spec.
pub fn hdfs_cluster(s: &HdfsBenchSpec) -> Cluster {
    Cluster::two_tier(s.racks, s.hosts_per_rack, s.host_bps, 1.0, None, 1e15, &[], &s.classes)
}

fn check(s: &HdfsBenchSpec) -> Result<(), StorageError> {
    let pos = super::positive;
    pos("racks", s.racks as f64)?;
    pos("hosts-per-rack", s.hosts_per_rack as f64)?;
    pos("host-link", s.host_bps)?;
    pos("block-size", s.block_bytes)?;
    pos("report-interval", s.report_s)?;
    pos("bg-weight", s.bg_weight)?;
    if !(s.report_lag_s >= 0.0 && s.report_lag_s < s.report_s) {
        return Err(StorageError::invalid("report-lag", "must be >= 0 seconds and below the report interval"));
    }
    if !(s.block_overhead_s >= 0.0 && s.block_overhead_s.is_finite()) {
        return Err(StorageError::invalid("block-overhead", "must be >= 0 seconds"));
    }
    let domains = hdfs_redundancy(s.hosts_per_rack).domains();
    if s.racks < domains {
        return Err(StorageError::invalid(
            "racks",
            format!(
                "3 replicas with {} DataNode(s) per rack span {domains} racks; the cluster has {}",
                s.hosts_per_rack, s.racks
            ),
        ));
    }
    let n = (s.racks * s.hosts_per_rack) as HostId;
    for (t, hs) in &s.phases {
        if !t.is_finite() || hs.iter().any(|&h| h >= n) {
            return Err(StorageError::invalid("phases", format!("bad phase at {t} s: {hs:?} ({n} DataNodes)")));
        }
    }
    if s.bg_flows == 0 && !s.phases.iter().all(|p| p.1.is_empty()) {
        return Err(StorageError::invalid("bg-flows", "must be >= 1"));
    }
    if !(s.bg_rate_bps >= 0.0 && s.bg_rate_bps.is_finite()) {
        return Err(StorageError::invalid("bg-rate", "must be >= 0"));
    }
    for w in &s.writers {
        if w.host >= n || w.thinks.iter().any(|&x| !(x >= 0.0 && x.is_finite())) {
            return Err(StorageError::invalid("writers", format!("bad writer on host {}", w.host)));
        }
    }
    Ok(())
}

struct Tracked {
    id: u64,
    /// DataNodes whose downlink the flow crosses.
    into: Vec<HostId>,
    /// Bytes counted in reports so far.
    counted: f64,
    /// Finished or cancelled: dropped after the next report.
    over: bool,
}

struct Driver<'a> {
    s: &'a HdfsBenchSpec,
    c: &'a Cluster,
    policy: Box<dyn ReplicaPlacement>,
    fs: FileSystem,
    live: Vec<bool>,
    rng: ChaCha8Rng,
    blocks: Vec<HdfsBlock>,
    /// Hops still running per block.
    left: Vec<usize>,
    /// Blocks whose hops are done and whose overhead is still running.
    closing: usize,
    /// Next file per writer (the current one while its blocks are written).
    next_file: Vec<usize>,
    /// Next block of the current file, per writer.
    next_block: Vec<usize>,
    bg_ids: Vec<u64>,
    next_bg: u64,
    tracked: Vec<Tracked>,
    acc: Vec<f64>,
    rates: Vec<Option<f64>>,
    /// Reports measured and not applied yet (`report_lag_s`), oldest first.
    lagged: std::collections::VecDeque<Vec<Option<f64>>>,
    last_report: f64,
    error: Option<StorageError>,
}

impl Driver<'_> {
    fn schedule_write(&mut self, ctx: &mut Ctx<'_, '_>, w: usize, after_s: f64) {
        let i = self.next_file[w];
        let Some(&think) = self.s.writers[w].thinks.get(i) else { return };
        let t = after_s + think;
        if t - self.s.writes_start_s > self.s.writes_duration_s {
            return;
        }
        let _ = ctx.schedule_timer(t, (K_WRITE << K_SHIFT) | w as u64);
    }

    /// Writer `w`'s block just finished: the file's next block starts now,
    /// or, after its last, the next file after its think time.
    fn block_done(&mut self, ctx: &mut Ctx<'_, '_>, w: usize) {
        let file = self.next_file[w];
        let blocks = self.s.writers[w].blocks.get(file).copied().unwrap_or(1).max(1) as usize;
        self.next_block[w] += 1;
        if self.next_block[w] < blocks {
            self.write(ctx, w);
        } else {
            self.next_block[w] = 0;
            self.next_file[w] += 1;
            self.schedule_write(ctx, w, ctx.now());
        }
    }

    fn write(&mut self, ctx: &mut Ctx<'_, '_>, w: usize) {
        let writer = self.s.writers[w].host;
        let file = self.next_file[w];
        let block = self.next_block[w];
        let bi = self.blocks.len();
        let req = PlacementRequest {
            file: bi as u64,
            block: block as u64,
            bytes: self.s.block_bytes,
            writer: Some(writer),
            redundancy: hdfs_redundancy(self.s.hosts_per_rack),
            time_s: ctx.now(),
        };
        let view = View { cluster: self.c, live: &self.live, host_used: &self.fs.host_used, balance_threshold: 0.1 };
        let hs = match place_checked(self.policy.as_mut(), &req, &view, &mut self.rng) {
            Ok(hs) => hs,
            Err(e) => {
                self.error = Some(StorageError::invalid("placement", e));
                return;
            }
        };
        self.fs.store(req.file, req.bytes, hs.clone(), req.redundancy);
        // The network hops: the writer's own DataNode is reached over the
        // loopback.
        let mut hops: Vec<(Vec<LinkId>, HostId)> = Vec::new();
        let mut prev = writer;
        for &h in hs.iter().filter(|&&h| h != writer) {
            let mut p = Vec::new();
            self.c.net_path(prev, h, &mut p);
            hops.push((p, h));
            prev = h;
        }
        let flows: Vec<(Vec<LinkId>, Vec<HostId>)> = match self.s.pipeline {
            PipelineModel::Hops => hops.into_iter().map(|(p, h)| (p, vec![h])).collect(),
            PipelineModel::Chain => {
                let mut p: Vec<LinkId> = hops.iter().flat_map(|x| x.0.iter().copied()).collect();
                p.sort_unstable();
                p.dedup();
                vec![(p, hops.iter().map(|x| x.1).collect())]
            }
        };
        self.blocks.push(HdfsBlock { writer: w, file, block, start_s: ctx.now(), finish_s: f64::NAN, replicas: hs });
        self.left.push(flows.len());
        let last = *self.blocks[bi].replicas.last().unwrap_or(&writer);
        for (k, (path, into)) in flows.into_iter().enumerate() {
            let id = BLOCK_BASE + bi as u64 * HOPS + k as u64;
            let spec = FlowSpec::new(id, writer, last, self.s.block_bytes, ctx.now(), Route::Explicit(path));
            if let Err(e) = ctx.add_flow(spec) {
                self.error = Some(e.into());
                return;
            }
            self.tracked.push(Tracked { id, into, counted: 0.0, over: false });
        }
        if self.left[bi] == 0 {
            // Every replica on the writer (not with 3 replicas in 2 racks).
            self.finish(ctx, bi);
        }
    }

    fn phase(&mut self, ctx: &mut Ctx<'_, '_>, k: usize) {
        for id in std::mem::take(&mut self.bg_ids) {
            self.count(ctx, id);
            let _ = ctx.cancel_flow(id);
        }
        let Some((_, hot)) = self.s.phases.get(k) else { return };
        if ctx.now() >= self.s.bg_end_s {
            return;
        }
        let per = self.s.bg_rate_bps / self.s.bg_flows.max(1) as f64;
        for &h in hot {
            for _ in 0..self.s.bg_flows {
                let id = self.next_bg;
                self.next_bg += 1;
                let path = self.c.hosts[h as usize].down.clone();
                // The sender is outside the cluster (its link is not
                // shaped): the route is the downlink alone; the source named
                // is another DataNode, since the engine completes a flow to
                // itself at once.
                let src = (h + 1) % self.c.hosts.len() as HostId;
                let spec = FlowSpec::new(id, src, h, ENDLESS_BYTES, ctx.now(), Route::Explicit(path))
                    .with_rate_cap(per)
                    .with_weight(self.s.bg_weight);
                if let Err(e) = ctx.add_flow(spec) {
                    self.error = Some(e.into());
                    return;
                }
                self.bg_ids.push(id);
                self.tracked.push(Tracked { id, into: vec![h], counted: 0.0, over: false });
            }
        }
    }

    /// Counts a flow's bytes delivered since the last count into its
    /// DataNodes' accumulators, and marks it over when it is not running.
    fn count(&mut self, ctx: &Ctx<'_, '_>, id: u64) {
        if let Some(t) = self.tracked.iter_mut().find(|t| t.id == id) {
            let sent = ctx.flow_bytes_sent(id).unwrap_or(t.counted);
            for &h in &t.into {
                self.acc[h as usize] += sent - t.counted;
            }
            t.counted = sent;
            t.over = true;
        }
    }

    fn report(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        for t in &mut self.tracked {
            let sent = ctx.flow_bytes_sent(t.id).unwrap_or(t.counted);
            for &h in &t.into {
                self.acc[h as usize] += sent - t.counted;
            }
            t.counted = sent;
        }
        self.tracked.retain(|t| !t.over);
        let dt = now - self.last_report;
        self.last_report = now;
        for r in self.rates.iter_mut() {
            *r = Some(0.0);
        }
        for rack in &self.c.racks {
            let mut sum = 0.0;
            for &h in &rack.hosts {
                let bps = if dt > 0.0 { self.acc[h as usize] * 8.0 / dt } else { 0.0 };
                for &l in &self.c.hosts[h as usize].down {
                    self.rates[l as usize] = Some(bps / self.c.hosts[h as usize].down.len() as f64);
                }
                sum += bps;
                self.acc[h as usize] = 0.0;
            }
            for &l in &rack.down {
                self.rates[l as usize] = Some(sum / rack.down.len() as f64);
            }
        }
        if self.s.report_lag_s > 0.0 {
            self.lagged.push_back(self.rates.clone());
            let _ = ctx.schedule_timer(now + self.s.report_lag_s, K_APPLY << K_SHIFT);
        } else {
            self.policy.observe(now, &self.rates);
        }
    }

    /// Block `bi` is written: its writer goes on.
    fn finish(&mut self, ctx: &mut Ctx<'_, '_>, bi: usize) {
        self.blocks[bi].finish_s = ctx.now();
        let w = self.blocks[bi].writer;
        self.block_done(ctx, w);
    }
}

impl Controller for Driver<'_> {
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        if flow.id < BLOCK_BASE {
            return;
        }
        self.count(ctx, flow.id);
        let bi = ((flow.id - BLOCK_BASE) / HOPS) as usize;
        self.left[bi] -= 1;
        if self.left[bi] == 0 {
            if self.s.block_overhead_s > 0.0 {
                self.closing += 1;
                let _ = ctx.schedule_timer(ctx.now() + self.s.block_overhead_s, (K_DONE << K_SHIFT) | bi as u64);
            } else {
                self.finish(ctx, bi);
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let idx = (token & ((1 << K_SHIFT) - 1)) as usize;
        match token >> K_SHIFT {
            K_REPORT => {
                self.report(ctx);
                // Reports go on while anything runs.
                if self.left.iter().any(|&n| n > 0)
                    || self.closing > 0
                    || !self.bg_ids.is_empty()
                    || ctx.now() < self.s.writes_start_s
                {
                    let _ = ctx.schedule_timer(ctx.now() + self.s.report_s, K_REPORT << K_SHIFT);
                }
            }
            K_APPLY => {
                if let Some(rates) = self.lagged.pop_front() {
                    self.policy.observe(ctx.now(), &rates);
                }
            }
            K_PHASE => self.phase(ctx, idx),
            K_WRITE => self.write(ctx, idx),
            K_DONE => {
                self.closing -= 1;
                self.finish(ctx, idx);
            }
            _ => {}
        }
    }
}

/// Runs the bench's workload under `policy` (`uniform`, `sinbad`, `ccp`);
/// `seed` drives the policy's random draws. Blocks in start order.
pub fn run_hdfs_bench(s: &HdfsBenchSpec, policy: &str, seed: u64) -> Result<Vec<HdfsBlock>, StorageError> {
    check(s)?;
    let c = hdfs_cluster(s);
    let cfg = PolicyConfig { delta_s: s.report_s, ..s.policy_cfg.clone() };
    let mut pol = make_policy(policy, &cfg)?;
    pol.bind(&c);
    let nh = c.hosts.len();
    let horizon = s.writes_start_s + s.writes_duration_s + s.bg_end_s + 3600.0;
    let mut sim = Simulation::new(
        Network::new(c.link_bps.clone()),
        None,
        SimConfig { end_s: Some(horizon), telemetry: false, ..SimConfig::default() },
    );
    for (k, (t, _)) in s.phases.iter().enumerate() {
        if *t < s.bg_end_s {
            sim.schedule_timer(*t, (K_PHASE << K_SHIFT) | k as u64)?;
        }
    }
    // The background stops: a phase past the last one.
    sim.schedule_timer(s.bg_end_s, (K_PHASE << K_SHIFT) | s.phases.len() as u64)?;
    sim.schedule_timer(s.report_s, K_REPORT << K_SHIFT)?;
    let mut d = Driver {
        s,
        c: &c,
        policy: pol,
        fs: FileSystem::new(nh),
        live: vec![true; nh],
        rng: ChaCha8Rng::seed_from_u64(seed),
        blocks: Vec::new(),
        left: Vec::new(),
        closing: 0,
        next_file: vec![0; s.writers.len()],
        next_block: vec![0; s.writers.len()],
        bg_ids: Vec::new(),
        next_bg: 0,
        tracked: Vec::new(),
        acc: vec![0.0; nh],
        rates: vec![None; c.link_bps.len()],
        lagged: std::collections::VecDeque::new(),
        last_report: 0.0,
        error: None,
    };
    for (w, wr) in s.writers.iter().enumerate() {
        if let Some(&think) = wr.thinks.first() {
            if think <= s.writes_duration_s {
                sim.schedule_timer(s.writes_start_s + think, (K_WRITE << K_SHIFT) | w as u64)?;
            }
        }
    }
    sim.run_with(&mut d);
    if let Some(e) = d.error {
        return Err(e);
    }
    Ok(d.blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 racks x 2 DataNodes at 50 Mbit/s, 8 MiB blocks, one writer.
    fn spec(phases: Vec<(f64, Vec<HostId>)>, thinks: Vec<f64>) -> HdfsBenchSpec {
        HdfsBenchSpec {
            racks: 4,
            hosts_per_rack: 2,
            host_bps: 50e6,
            classes: vec![UplinkClass::High, UplinkClass::High, UplinkClass::Medium, UplinkClass::Low],
            block_bytes: 8.0 * 1048576.0,
            phases,
            bg_end_s: 1000.0,
            bg_rate_bps: 0.85 * 50e6,
            bg_flows: 4,
            writes_start_s: 0.0,
            writes_duration_s: 60.0,
            writers: vec![HdfsWriter { host: 0, thinks, blocks: Vec::new() }],
            report_s: 1.0,
            report_lag_s: 0.0,
            policy_cfg: PolicyConfig { threshold_bytes: 4.0 * 1048576.0, ..PolicyConfig::default() },
            pipeline: PipelineModel::Hops,
            block_overhead_s: 0.0,
            bg_weight: 1.0,
        }
    }

    const BITS: f64 = 8.0 * 1048576.0 * 8.0; // 67,108,864 bits per block

    /// Files of several blocks: a 2-block file, then (after a 0.25 s think)
    /// a 1-block file, on idle links: each block 1.34217728 s, the second
    /// block starting as the first ends, the next file a think later; each
    /// block placed on its own (its own remote rack draw).
    #[test]
    fn a_files_blocks_follow_each_other_and_the_next_file_waits_its_think() {
        let mut s = spec(vec![], vec![0.5, 0.25]);
        s.writers[0].blocks = vec![2, 1];
        let b = run_hdfs_bench(&s, "uniform", 1).unwrap();
        let t = BITS / 50e6;
        let got: Vec<(usize, usize, f64, f64)> = b.iter().map(|x| (x.file, x.block, x.start_s, x.finish_s)).collect();
        let want = [(0, 0, 0.5, 0.5 + t), (0, 1, 0.5 + t, 0.5 + 2.0 * t), (1, 0, 0.75 + 2.0 * t, 0.75 + 3.0 * t)];
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, g.1), (w.0, w.1));
            assert!((g.2 - w.2).abs() < 1e-9 && (g.3 - w.3).abs() < 1e-9, "{g:?} vs {w:?}");
        }
        assert!(b.iter().all(|x| x.replicas[0] == 0));
    }

    /// The per-block overhead: each block is done `block_overhead_s` after
    /// its last hop, and the writer's next block (or think) starts then.
    /// Idle links, a 2-block file then (think 0.25 s) a 1-block file, 0.6 s
    /// overhead: blocks end at 0.5 + t + 0.6, 0.5 + 2 (t + 0.6), and the
    /// third starts at 0.75 + 2 (t + 0.6) and takes t + 0.6.
    #[test]
    fn the_block_overhead_follows_the_last_hop() {
        let mut s = spec(vec![], vec![0.5, 0.25]);
        s.writers[0].blocks = vec![2, 1];
        s.block_overhead_s = 0.6;
        let b = run_hdfs_bench(&s, "uniform", 1).unwrap();
        let t = BITS / 50e6 + 0.6;
        let want = [(0.5, 0.5 + t), (0.5 + t, 0.5 + 2.0 * t), (0.75 + 2.0 * t, 0.75 + 3.0 * t)];
        assert_eq!(b.len(), 3);
        for (x, w) in b.iter().zip(want) {
            assert!((x.start_s - w.0).abs() < 1e-9 && (x.finish_s - w.1).abs() < 1e-9, "{x:?} vs {w:?}");
        }
        s.block_overhead_s = -1.0;
        assert!(run_hdfs_bench(&s, "uniform", 1).unwrap_err().to_string().contains("block-overhead"));
    }

    /// A lighter background: with weight 0.5 per background flow, the hop
    /// into the hot DataNode 2 shares its 50 Mbit/s by weights 1 : 4 x 0.5,
    /// 50 / 3 = 16.67 Mbit/s for the hop (each background flow 8.33, under
    /// its 10.625 cap): 67,108,864 bits / 16.67e6 = 4.0265 s, against
    /// 6.7109 s with plain max-min (weight 1).
    #[test]
    fn a_lighter_background_leaves_the_hop_its_weighted_share() {
        let mut s = spec(vec![(0.0, vec![2])], vec![5.0]);
        s.bg_weight = 0.5;
        let b = run_hdfs_bench(&s, "ccp", 3).unwrap();
        assert!((b[0].write_s() - BITS / (50e6 / 3.0)).abs() < 1e-6, "{}", b[0].write_s());
        s.bg_weight = 0.0;
        assert!(run_hdfs_bench(&s, "ccp", 3).unwrap_err().to_string().contains("bg-weight"));
    }

    #[test]
    fn one_block_on_idle_links_takes_the_line_rate_time() {
        // Writer on DataNode 0; both remote hops alone on 50 Mbit/s links:
        // 67,108,864 bits / 50e6 bits/s = 1.34217728 s.
        let b = run_hdfs_bench(&spec(vec![], vec![0.5]), "uniform", 1).unwrap();
        assert_eq!(b.len(), 1);
        assert!((b[0].write_s() - BITS / 50e6).abs() < 1e-9, "{}", b[0].write_s());
        assert!((b[0].start_s - 0.5).abs() < 1e-12);
        assert_eq!(b[0].replicas[0], 0);
        // Two replicas in one remote rack.
        let r = |h: HostId| h / 2;
        assert_ne!(r(b[0].replicas[1]), 0);
        assert_eq!(r(b[0].replicas[1]), r(b[0].replicas[2]));
    }

    #[test]
    fn pipeline_through_a_hot_datanode_by_hand() {
        // `ccp` from a writer on DataNode 0 (rack 0): its only High remote
        // rack is rack 1 (DataNodes 2, 3), in random order. DataNode 2 hot
        // (4 flows paced at 10.625 Mbit/s each). The hop into DataNode 2
        // shares its 50 Mbit/s with the four: max-min gives 10 Mbit/s each
        // (10 < 10.625), so it takes 67,108,864 / 10e6 = 6.7108864 s; the
        // other hop runs at 50 Mbit/s (1.342 s). The block: 6.7108864 s,
        // whichever of 2 and 3 comes first in the pipeline. `Chain`: one
        // flow at the bottleneck's 10 Mbit/s, the same time.
        for pipeline in [PipelineModel::Hops, PipelineModel::Chain] {
            let mut s = spec(vec![(0.0, vec![2])], vec![5.0]);
            s.pipeline = pipeline;
            let b = run_hdfs_bench(&s, "ccp", 3).unwrap();
            assert_eq!(b.len(), 1);
            let mut rest = b[0].replicas[1..].to_vec();
            rest.sort_unstable();
            assert_eq!(rest, vec![2, 3]);
            assert!((b[0].write_s() - BITS / 10e6).abs() < 1e-6, "{pipeline:?}: {}", b[0].write_s());
        }
    }

    #[test]
    fn two_hops_into_one_hot_datanode_share_it() {
        // Two writers (DataNodes 0 and 6: racks 0 and 3) start together
        // under `ccp`; both go to rack 1 (the writer in rack 0 has only
        // rack 1 as a High remote rack; the writer in rack 3 picks rack 0
        // or 1 at random: the seed is chosen below so that it picks rack
        // 1, and the test checks it). DataNodes 2 and 3 are each hot. Into
        // each: 4 paced flows and 2 hops: max-min 50 / 6 = 8.33 Mbit/s
        // each (below the 10.625 cap), so every hop takes 67,108,864 /
        // (50e6 / 6) = 8.05306368 s.
        let mut s = spec(vec![(0.0, vec![2, 3])], vec![]);
        s.writers = vec![
            HdfsWriter { host: 0, thinks: vec![1.0], blocks: Vec::new() },
            HdfsWriter { host: 6, thinks: vec![1.0], blocks: Vec::new() },
        ];
        let mut checked = 0;
        for seed in 0..20 {
            let b = run_hdfs_bench(&s, "ccp", seed).unwrap();
            assert_eq!(b.len(), 2);
            if b.iter().all(|x| x.replicas[1] / 2 == 1) {
                for x in &b {
                    assert!((x.write_s() - BITS / (50e6 / 6.0)).abs() < 1e-6, "{}", x.write_s());
                }
                checked += 1;
            }
        }
        // P(rack 1) = 1/2 per seed: 20 seeds all missing it has 1e-6 odds.
        assert!(checked > 0);
    }

    #[test]
    fn closed_loop_writer_waits_for_its_block() {
        // Idle links: block i starts at the previous one's end plus its
        // think: 0.5, 0.5 + 1.342 + 2 = 3.842, then 3.842 + 1.342 + 0.25.
        let b = run_hdfs_bench(&spec(vec![], vec![0.5, 2.0, 0.25]), "uniform", 1).unwrap();
        let t = BITS / 50e6;
        let starts: Vec<f64> = b.iter().map(|x| x.start_s).collect();
        let want = [0.5, 0.5 + t + 2.0, 0.5 + 2.0 * t + 2.25];
        for (a, w) in starts.iter().zip(want) {
            assert!((a - w).abs() < 1e-9, "{starts:?}");
        }
        // A start past the duration is not made.
        let mut s = spec(vec![], vec![0.5, 100.0]);
        s.writes_duration_s = 60.0;
        assert_eq!(run_hdfs_bench(&s, "uniform", 1).unwrap().len(), 1);
    }

    #[test]
    fn sinbad_avoids_the_hot_rack_after_reports() {
        // DataNodes 2 and 3 (rack 1) and 4 (rack 2) hot from t = 0; a
        // writer on DataNode 0 writes at t = 20 s, after 20 reports: the
        // EWMA of rack 1 is 85 Mbit/s of 100 (rack 2: 42.5), so Sinbad
        // picks rack 3 (DataNodes 6, 7), idle: 1.342 s. `uniform` over
        // seeds lands on racks 1 or 2 too.
        let s = spec(vec![(0.0, vec![2, 3, 4])], vec![20.0]);
        for seed in 0..10 {
            let b = run_hdfs_bench(&s, "sinbad", seed).unwrap();
            assert_eq!(b[0].replicas[1] / 2, 3, "seed {seed}: {:?}", b[0].replicas);
            assert!((b[0].write_s() - BITS / 50e6).abs() < 1e-9);
        }
        let racks: std::collections::BTreeSet<u32> =
            (0..30).map(|seed| run_hdfs_bench(&s, "uniform", seed).unwrap()[0].replicas[1] / 2).collect();
        assert_eq!(racks.into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    /// One DataNode per rack (the Sinbad paper's EC2 form): 8 racks of 1.
    fn ec2(phases: Vec<(f64, Vec<HostId>)>, thinks: Vec<f64>) -> HdfsBenchSpec {
        let mut s = spec(phases, thinks);
        s.racks = 8;
        s.hosts_per_rack = 1;
        s.classes = [UplinkClass::High, UplinkClass::High, UplinkClass::Medium, UplinkClass::Low].repeat(2);
        s
    }

    #[test]
    fn one_datanode_per_rack_puts_the_three_replicas_in_three_racks() {
        // HDFS's default with 1-DataNode racks: the writer's DataNode, then
        // two distinct others, uniformly: each of the 21 pairs of the 7
        // other DataNodes has probability 1/21. 2,100 seeds: every pair
        // seen, and each within 100 +- 40 (binomial sd sqrt(2100 / 21 *
        // 20 / 21) = 9.8, so 4 sd).
        let s = ec2(vec![], vec![0.5]);
        let mut pairs = std::collections::BTreeMap::new();
        for seed in 0..2100 {
            let b = run_hdfs_bench(&s, "uniform", seed).unwrap();
            let r = &b[0].replicas;
            assert_eq!(r.len(), 3);
            assert_eq!(r[0], 0);
            assert!(r[1] != 0 && r[2] != 0 && r[1] != r[2], "{r:?}");
            // Idle links: two hops at line rate.
            assert!((b[0].write_s() - BITS / 50e6).abs() < 1e-9);
            *pairs.entry((r[1].min(r[2]), r[1].max(r[2]))).or_insert(0usize) += 1;
        }
        assert_eq!(pairs.len(), 21);
        assert!(pairs.values().all(|&n| (60..=140).contains(&n)), "{pairs:?}");
    }

    #[test]
    fn sinbad_with_one_datanode_per_rack_takes_the_two_idle_datanodes() {
        // DataNodes 1-5 hot from t = 0 (4 flows at 10.625 Mbit/s each: 42.5
        // Mbit/s received), the writer on DataNode 0 writes at t = 20 s:
        // after 20 reports each hot EWMA is 42.5 (1 - 0.8^20) = 42.0 Mbit/s,
        // 8.0 spare against the idle 6 and 7's 50: Sinbad takes 6 and 7 and
        // the block runs at line rate. `uniform` takes that pair with
        // probability 1/21 only.
        let s = ec2(vec![(0.0, vec![1, 2, 3, 4, 5])], vec![20.0]);
        for seed in 0..10 {
            let b = run_hdfs_bench(&s, "sinbad", seed).unwrap();
            let mut r = b[0].replicas[1..].to_vec();
            r.sort_unstable();
            assert_eq!(r, vec![6, 7], "seed {seed}");
            assert!((b[0].write_s() - BITS / 50e6).abs() < 1e-9);
        }
        let idle = (0..42).filter(|&seed| {
            let b = run_hdfs_bench(&s, "uniform", seed).unwrap();
            b[0].replicas[1] >= 6 && b[0].replicas[2] >= 6
        });
        // Expected 2 of 42; more than 12 has odds below 1e-5.
        assert!(idle.count() <= 12);
    }

    /// The refresh lag: DataNode 3 hot from t = 0 (42.5 Mbit/s), the
    /// writer on DataNode 0 writes at 1.2 s. Without a lag the report of
    /// t = 1 s is applied (DataNode 3's EWMA 0.2 x 42.5 = 8.5 Mbit/s, the
    /// six others 0) and Sinbad never takes DataNode 3. With a 0.5 s lag it
    /// is applied at 1.5 s: at 1.2 s every estimate is still 0, the two
    /// remote replicas are a uniform pair of the 7 others, and DataNode 3
    /// is in it with probability 1 - C(6,2)/C(7,2) = 2/7 (20 of 70 seeds,
    /// sd 3.8); a write at 1.6 s sees the report again.
    #[test]
    fn a_lagged_report_is_applied_late() {
        let mut s = ec2(vec![(0.0, vec![3])], vec![1.2]);
        let takes3 = |s: &HdfsBenchSpec| {
            (0..70).filter(|&seed| run_hdfs_bench(s, "sinbad", seed).unwrap()[0].replicas.contains(&3)).count()
        };
        assert_eq!(takes3(&s), 0);
        s.report_lag_s = 0.5;
        let n = takes3(&s);
        assert!((8..=32).contains(&n), "{n} of 70");
        s.writers[0].thinks = vec![1.6];
        assert_eq!(takes3(&s), 0);
        s.report_lag_s = 1.0;
        assert!(run_hdfs_bench(&s, "sinbad", 1).unwrap_err().to_string().contains("report-lag"));
    }

    #[test]
    fn one_datanode_per_rack_needs_three_racks() {
        let mut s = ec2(vec![], vec![0.5]);
        s.racks = 2;
        s.classes.truncate(2);
        let e = run_hdfs_bench(&s, "uniform", 1).unwrap_err().to_string();
        assert!(e.contains("racks") && e.contains("span 3 racks"), "{e}");
        assert_eq!(hdfs_redundancy(2), Redundancy::Replicate { r: 3, f: 1 });
    }
}
