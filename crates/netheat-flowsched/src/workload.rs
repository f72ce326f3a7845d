//! Task workloads for the Baraat experiments: task-size laws (Bing-like,
//! data-analytics, uniform flows), application structures (one- and
//! two-stage partition-aggregate, storage retrieval, data-parallel batches)
//! and Poisson task arrivals at a target load.
//!
//! Aggregators (task receivers) and workers (senders) are drawn from two
//! host pools (`aggregators` and `workers` hosts spread evenly over the
//! racks; 0 means every host). Load is the mean utilisation of the more
//! loaded pool's host links: tasks arrive at rate
//! `load · C · min(A, W) / (8 · E[task bytes])` for pools of `A` and `W`
//! hosts of capacity `C` (one-stage; see [`generate`]).
//!
//! Two knobs shape the flows of a task: `flow_cv` skews their sizes and
//! `compute_s` delays each answer by an exponential compute time (a worker's,
//! and in two-stage tasks also a mid-level aggregator's before it forwards).
//!
//! Flows of a task may depend on each other: a flow is *released* at its
//! task's arrival, or, if other flows feed it ([`TaskFlow::feeds`]), when
//! the last of them completes; it starts [`TaskFlow::delay_s`] after its
//! release. Every simulator (engine runs, reference, SPC) follows this rule;
//! [`check_tasks`] validates it.

use crate::FlowschedError;
use netheat_core::{HostId, LinkId, Routing};
use netheat_workloads::SizeDist;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A measured value for [`WorkloadSpec::flow_cv`]: the median, over the 154
/// coflows of the Facebook 2010 MapReduce trace (Coflow-Benchmark
/// `FB2010-1Hr-150-0.txt`) with at least 10 reducers, of the coefficient of
/// variation of the bytes their reducers receive (0.389; checked against the
/// trace by the crate's tests when the data directory is present). The
/// trace aggregates reducers per rack, which smooths skew, so real
/// partitions are at least this uneven.
pub const FB2010_REDUCER_CV: f64 = 0.389;

/// Task-size law.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// Most tasks equal (20 KB per flow); 15% are 10x heavier.
    Bing,
    /// Heavy-tailed task sizes: Pareto (shape 1.1, minimum 5 KB per flow),
    /// capped at 1,000x the minimum.
    DataAnalytics,
    /// Every flow uniform in 2-50 KB.
    Uniform,
}

impl WorkloadKind {
    /// Known tags.
    pub const TAGS: [&'static str; 3] = ["bing", "data_analytics", "uniform"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, FlowschedError> {
        match s {
            "bing" => Ok(Self::Bing),
            "data_analytics" | "data-analytics" => Ok(Self::DataAnalytics),
            "uniform" => Ok(Self::Uniform),
            _ => Err(FlowschedError::param("workload", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
    /// Bytes of each of the `n` flows of one task.
    fn flow_sizes<R: Rng>(self, n: usize, rng: &mut R) -> Vec<f64> {
        match self {
            Self::Bing => {
                let per = if rng.gen::<f64>() < 0.15 { 200e3 } else { 20e3 };
                vec![per; n]
            }
            Self::DataAnalytics => {
                let u: f64 = 1.0 - rng.gen::<f64>();
                let per = (5e3 * u.powf(-1.0 / 1.1)).min(5e6);
                vec![per.round(); n]
            }
            Self::Uniform => (0..n).map(|_| rng.gen_range(2e3..=50e3f64).round()).collect(),
        }
    }
}

/// Application structure of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppKind {
    /// `fanout` workers each send one flow to the aggregator.
    OneStage,
    /// `mids` mid-level aggregators (default `fanout`) each collect from
    /// `fanout` workers; once a mid-level has all its inputs (and has
    /// computed), it forwards 1/`fanout` of their bytes to the top
    /// aggregator.
    TwoStage,
    /// A client reads `fanout` chunks from storage servers.
    Storage,
}

impl AppKind {
    /// Known tags.
    pub const TAGS: [&'static str; 3] = ["one-stage", "two-stage", "storage"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, FlowschedError> {
        match s {
            "one-stage" => Ok(Self::OneStage),
            "two-stage" => Ok(Self::TwoStage),
            "storage" => Ok(Self::Storage),
            _ => Err(FlowschedError::param("app", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
}

/// One flow of a task, with its fixed path.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFlow {
    /// Sender.
    pub src: HostId,
    /// Receiver.
    pub dst: HostId,
    /// Bytes.
    pub bytes: f64,
    /// Links (chosen once by a seeded ECMP hash, shared by all simulators).
    pub path: Vec<LinkId>,
    /// Seconds after the flow's release (its task's arrival, or the
    /// completion of the last flow feeding it) at which it starts: the
    /// sender's compute time (0: at once).
    pub delay_s: f64,
    /// Index, in the same task, of the flow this one feeds (a later flow):
    /// that flow is released when every flow feeding it has completed.
    pub feeds: Option<u32>,
}

/// A task: flows released together at `arrival_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Arrival time, seconds.
    pub arrival_s: f64,
    /// Total bytes.
    pub bytes: f64,
    /// Its flows.
    pub flows: Vec<TaskFlow>,
}

/// Parameters of a generated workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    /// Size law.
    pub kind: WorkloadKind,
    /// Structure.
    pub app: AppKind,
    /// Flows per task (one-stage, storage), or workers per mid-level
    /// aggregator (two-stage).
    pub fanout: usize,
    /// Mid-level aggregators of a two-stage task (0: `fanout`); a task has
    /// `mids · (fanout + 1)` flows. Must be 0 for other structures.
    pub mids: usize,
    /// Target load of the aggregators' links, in (0, 1).
    pub load: f64,
    /// Number of tasks.
    pub tasks: usize,
    /// Aggregator pool size (0: every host).
    pub aggregators: usize,
    /// Worker pool size (0: every host).
    pub workers: usize,
    /// Batch mode: all tasks arrive at time 0 (data-parallel batch).
    pub batch: bool,
    /// Skew of the flows within a task: each flow's size is multiplied by
    /// an independent log-normal factor of mean 1 and this coefficient of
    /// variation (0: the size law alone; see [`FB2010_REDUCER_CV`]). Uneven
    /// flows finish apart, so a task takes many more engine events.
    pub flow_cv: f64,
    /// Mean compute time (seconds): each worker, and each mid-level
    /// aggregator of a two-stage task once it has its inputs, starts its
    /// flow after an independent exponential time of this mean (0: at once).
    pub compute_s: f64,
    /// Seed.
    pub seed: u64,
}

impl WorkloadSpec {
    /// `tasks` tasks of a size law and structure with the paper's setting
    /// for the rest (the defaults of `experiments/baraat.toml`): 40 flows
    /// a task (per mid-level for two-stage), load 0.8 on a pool of 360
    /// aggregators, every host a worker, Poisson arrivals, no skew, no
    /// compute time.
    pub fn new(kind: WorkloadKind, app: AppKind, tasks: usize, seed: u64) -> Self {
        Self {
            kind,
            app,
            fanout: 40,
            mids: 0,
            load: 0.8,
            tasks,
            aggregators: 360,
            workers: 0,
            batch: false,
            flow_cv: 0.0,
            compute_s: 0.0,
            seed,
        }
    }
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Distinct hosts, none equal to `avoid`.
fn pick_hosts<R: Rng>(rng: &mut R, n_hosts: usize, pool: usize, k: usize, avoid: HostId, out: &mut Vec<HostId>) {
    out.clear();
    while out.len() < k {
        let h = spread(rng.gen_range(0..pool), pool, n_hosts);
        if h != avoid && !out.contains(&h) {
            out.push(h);
        }
    }
}

/// The flow sizes of one task (of one stage): the size law, then the
/// within-task skew if any (no extra draws without it, so `flow_cv = 0`
/// keeps the size law's random stream).
fn task_flow_sizes<R: Rng>(spec: &WorkloadSpec, skew: Option<&SizeDist>, rng: &mut R) -> Vec<f64> {
    let mut sizes = spec.kind.flow_sizes(spec.fanout, rng);
    if let Some(d) = skew {
        for b in &mut sizes {
            *b = (*b * d.sample(rng)).round().max(1.0);
        }
    }
    sizes
}

/// Host `i` of a pool of `pool` hosts spread evenly over `n_hosts`.
fn spread(i: usize, pool: usize, n_hosts: usize) -> HostId {
    ((i as u64 * n_hosts as u64) / pool as u64) as HostId
}

/// Generates the tasks (sorted by arrival) on a routing (host count, paths).
pub fn generate(spec: &WorkloadSpec, routing: &dyn Routing) -> Result<Vec<Task>, FlowschedError> {
    let n_hosts = routing.num_hosts();
    if spec.fanout == 0 || spec.fanout + 2 > n_hosts {
        return Err(FlowschedError::param("fanout", format!("must be in 1..={}", n_hosts.saturating_sub(2))));
    }
    if !spec.batch && (spec.load.is_nan() || spec.load <= 0.0 || spec.load >= 1.0) {
        return Err(FlowschedError::param("load", "must be in (0, 1)"));
    }
    let n_mids = if spec.mids == 0 { spec.fanout } else { spec.mids };
    if spec.mids > 0 && spec.app != AppKind::TwoStage {
        return Err(FlowschedError::param("mids", "only two-stage tasks have mid-level aggregators"));
    }
    if n_mids + 1 > n_hosts {
        return Err(FlowschedError::param("mids", format!("must be in 1..={}", n_hosts - 1)));
    }
    if spec.tasks == 0 {
        return Err(FlowschedError::param("tasks", "must be at least 1"));
    }
    if !(spec.flow_cv.is_finite() && (0.0..=10.0).contains(&spec.flow_cv)) {
        return Err(FlowschedError::param("flow-cv", format!("{} must be in [0, 10]", spec.flow_cv)));
    }
    if !(spec.compute_s.is_finite() && spec.compute_s >= 0.0) {
        return Err(FlowschedError::param("compute", format!("{} s must be >= 0", spec.compute_s)));
    }
    let skew =
        (spec.flow_cv > 0.0).then(|| SizeDist::log_normal_with_mean(1.0, (1.0 + spec.flow_cv.powi(2)).ln().sqrt()));
    let n_agg = if spec.aggregators == 0 { n_hosts } else { spec.aggregators.min(n_hosts) };
    let n_work = if spec.workers == 0 { n_hosts } else { spec.workers.min(n_hosts) };
    if spec.fanout + 1 > n_work {
        return Err(FlowschedError::param("fanout", format!("must be below the worker pool ({n_work})")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut compute_rng = ChaCha8Rng::seed_from_u64(mix(spec.seed ^ 0xC0C0_A7E5));
    let mut tasks = Vec::with_capacity(spec.tasks);
    let mut workers = Vec::new();
    let mut mids = Vec::new();
    for _ in 0..spec.tasks {
        // Aggregators spread evenly over the host range (so over racks).
        let agg = spread(rng.gen_range(0..n_agg), n_agg, n_hosts);
        let mut flows = Vec::new();
        match spec.app {
            AppKind::OneStage | AppKind::Storage => {
                pick_hosts(&mut rng, n_hosts, n_work, spec.fanout, agg, &mut workers);
                let sizes = task_flow_sizes(spec, skew.as_ref(), &mut rng);
                for (w, b) in workers.iter().zip(sizes) {
                    // Storage retrieval: data flows from servers to the client.
                    flows.push(TaskFlow { src: *w, dst: agg, bytes: b, path: Vec::new(), delay_s: 0.0, feeds: None });
                }
            }
            AppKind::TwoStage => {
                pick_hosts(&mut rng, n_hosts, n_hosts, n_mids, agg, &mut mids);
                for &m in &mids {
                    pick_hosts(&mut rng, n_hosts, n_work, spec.fanout, m, &mut workers);
                    let sizes = task_flow_sizes(spec, skew.as_ref(), &mut rng);
                    let sum: f64 = sizes.iter().sum();
                    // The mid-level's own flow comes right after its inputs.
                    let up = (flows.len() + spec.fanout) as u32;
                    for (w, b) in workers.iter().zip(sizes) {
                        flows.push(TaskFlow {
                            src: *w,
                            dst: m,
                            bytes: b,
                            path: Vec::new(),
                            delay_s: 0.0,
                            feeds: Some(up),
                        });
                    }
                    flows.push(TaskFlow {
                        src: m,
                        dst: agg,
                        bytes: (sum / spec.fanout as f64).round(),
                        path: Vec::new(),
                        delay_s: 0.0,
                        feeds: None,
                    });
                }
            }
        }
        // Senders compute before they answer. A stream of its own, so tasks
        // with and without compute time are the same.
        if spec.compute_s > 0.0 {
            let compute = SizeDist::Exponential { mean: spec.compute_s };
            for f in &mut flows {
                f.delay_s = compute.sample(&mut compute_rng);
            }
        }
        let bytes = flows.iter().map(|f| f.bytes).sum();
        tasks.push(Task { arrival_s: 0.0, bytes, flows });
    }
    // Host link capacity: the first link of any path from host 0.
    let mut p = Vec::new();
    routing.path(0, 1, 0, &mut p);
    let c = routing.link_capacity_bps(p[0]);
    if !spec.batch {
        let mean = tasks.iter().map(|t| t.bytes).sum::<f64>() / tasks.len() as f64;
        // Bytes arriving at the aggregators per second / their capacity.
        let agg_share = match spec.app {
            AppKind::TwoStage => 1.0 / (spec.fanout as f64 + 1.0),
            _ => 1.0,
        };
        let pool = (n_agg as f64 / agg_share).min(n_work as f64);
        let lambda = spec.load * pool * c / (8.0 * mean);
        let mut t = 0.0;
        for task in tasks.iter_mut() {
            let u: f64 = 1.0 - rng.gen::<f64>();
            t += -u.ln() / lambda;
            task.arrival_s = t;
        }
    }
    let mut gid = 0u64;
    for task in tasks.iter_mut() {
        for f in task.flows.iter_mut() {
            let np = routing.num_paths(f.src, f.dst);
            let k = (mix(spec.seed ^ mix(gid)) % np as u64) as usize;
            routing.path(f.src, f.dst, k, &mut f.path);
            gid += 1;
        }
    }
    Ok(tasks)
}

/// Checks what every simulator relies on: each flow feeds a later flow of
/// its own task (so dependencies cannot form a cycle), delays are finite
/// and non-negative, and sizes are finite and non-negative.
pub fn check_tasks(tasks: &[Task]) -> Result<(), FlowschedError> {
    for (ti, t) in tasks.iter().enumerate() {
        if !(t.arrival_s.is_finite() && t.arrival_s >= 0.0) {
            return Err(FlowschedError::param(
                "arrival",
                format!("task {ti}: {} s must be finite and >= 0", t.arrival_s),
            ));
        }
        for (j, f) in t.flows.iter().enumerate() {
            if let Some(k) = f.feeds {
                if k as usize <= j || k as usize >= t.flows.len() {
                    return Err(FlowschedError::param(
                        "feeds",
                        format!("task {ti}, flow {j}: feeds flow {k}, which is not a later flow of the task"),
                    ));
                }
            }
            if !(f.delay_s.is_finite() && f.delay_s >= 0.0) {
                return Err(FlowschedError::param(
                    "delay",
                    format!("task {ti}, flow {j}: {} s must be >= 0", f.delay_s),
                ));
            }
            if !(f.bytes.is_finite() && f.bytes >= 0.0) {
                return Err(FlowschedError::param("bytes", format!("task {ti}, flow {j}: {} must be >= 0", f.bytes)));
            }
        }
    }
    Ok(())
}

/// Per flow of a task: how many flows feed it (0: released at arrival).
pub(crate) fn feeder_counts(task: &Task) -> Vec<u32> {
    let mut n = vec![0u32; task.flows.len()];
    for f in &task.flows {
        if let Some(k) = f.feeds {
            n[k as usize] += 1;
        }
    }
    n
}
