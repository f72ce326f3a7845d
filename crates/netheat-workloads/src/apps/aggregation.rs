//! Aggregation tasks, the task workloads of the Baraat paper (Dogar et al.,
//! SIGCOMM 2014, §5.2): task-size laws (Bing-like, data-analytics, uniform
//! flows), structures (one- and two-stage partition-aggregate, storage
//! retrieval, data-parallel batches) and Poisson task arrivals at a target
//! load. [`generate`] draws the tasks as [`TaskDag`]s of the one task model
//! (what a scenario's `kind = "aggregation"` app runs; the Baraat
//! experiment point runs the same DAGs with fixed paths).
//!
//! Where tasks run ([`Placement`]):
//!
//! * `rack` (the paper's, Baraat §5.2): an aggregator queries the other
//!   hosts of its own rack (the first `fanout` of them; the paper's racks of
//!   40 give 39). Aggregators are a pool of `aggregators` hosts spread
//!   evenly over the datacenter; with one per pod (30), the paper's spread
//!   of top-level aggregators, each is the first host of its pod. A
//!   two-stage task's mid-level aggregators sit in distinct racks that hold
//!   no aggregator of the pool ("separate racks"), each a host of its rack
//!   drawn per task or the rack's first host ([`MidHost`]), and query the
//!   other hosts of their rack. Load (§5.2.1: "the average load of bottlenecked network
//!   links") is that of the aggregators' host links, which every byte
//!   reaching an aggregator crosses: tasks arrive at rate
//!   `load · C · A / (8 · E[bytes into the aggregator])` for `A` aggregators
//!   of host capacity `C`.
//! * `pool` (ours, the earlier setup): workers are drawn from a pool of
//!   `workers` hosts spread over the datacenter (0: every host). Load is the
//!   mean utilisation of the more loaded pool's host links: tasks arrive at
//!   rate `load · C · min(A, W) / (8 · E[task bytes])` (one-stage).
//! * `front-end` (Baraat §5.1's Memcached testbed): the `aggregators`
//!   clients are the first hosts of the datacenter (one front-end rack when
//!   they fit in one), and each task's `fanout` servers are drawn uniformly,
//!   distinct, from the hosts of the racks holding no client (the caching
//!   back end). Load is that of the clients' bottleneck: their host links
//!   together, or their racks' ToR uplinks together if those are smaller
//!   ([`AggregationSpec::client_uplink_bps`]); every byte of a task
//!   crosses both.
//!
//! With `client_queue`, each aggregator serves one task at a time: a task
//! arriving while its aggregator is busy waits in the aggregator's FIFO
//! queue ([`TaskDag::queue`]; Baraat §5.1: "a new request is queued if the
//! client is busy serving another request"), and its time counts from its
//! arrival.
//!
//! Two knobs shape the flows of a task: `flow_cv` skews their sizes and
//! `compute_s` delays each answer by an exponential compute time (a worker's,
//! and in two-stage tasks also a mid-level aggregator's before it forwards).
//!
//! Flows of a task may depend on each other: a flow is *released* at its
//! task's arrival, or, if other flows feed it (a two-stage mid-level's
//! flow), when the last of them completes; with a compute time, it starts
//! that long after its release (a delay step before it).

use netheat_core::{mix, HostId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

use crate::dag::{StepId, TaskDag};
use crate::{GenError, SizeDist};

/// Where a task's hosts are (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The paper's: workers are the other hosts of their aggregator's rack.
    Rack,
    /// Ours: workers drawn from a pool spread over the datacenter.
    Pool,
    /// Baraat §5.1's testbed: clients in the first racks, servers drawn
    /// from the other racks.
    FrontEnd,
}

impl Placement {
    /// Known tags.
    pub const TAGS: [&'static str; 3] = ["rack", "pool", "front-end"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, GenError> {
        match s {
            "rack" => Ok(Self::Rack),
            "pool" => Ok(Self::Pool),
            "front-end" => Ok(Self::FrontEnd),
            _ => Err(GenError::param("placement", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
}

/// Which host of its rack a two-stage task's mid-level aggregator is
/// (`rack` placement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MidHost {
    /// A host of the rack drawn per task (the default): a rack's mid-level
    /// load spreads over its hosts.
    Random,
    /// Ours: the rack's first host, one mid-level aggregator per rack, so
    /// its link takes every mid-level task of the rack.
    First,
}

impl MidHost {
    /// Known tags.
    pub const TAGS: [&'static str; 2] = ["random", "first"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, GenError> {
        match s {
            "random" => Ok(Self::Random),
            "first" => Ok(Self::First),
            _ => Err(GenError::param("mid-host", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
}

/// A measured value for [`AggregationSpec::flow_cv`]: the median, over the 154
/// coflows of the Facebook 2010 MapReduce trace (Coflow-Benchmark
/// `FB2010-1Hr-150-0.txt`) with at least 10 reducers, of the coefficient of
/// variation of the bytes their reducers receive (0.389; checked against the
/// trace by the crate's tests when the data directory is present). The
/// trace aggregates reducers per rack, which smooths skew, so real
/// partitions are at least this uneven.
pub const FB2010_REDUCER_CV: f64 = 0.389;

/// Task-size law.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeLaw {
    /// Most tasks equal (20 KB per flow); 15% are 10x heavier.
    Bing,
    /// The paper's data-analytics law: task sizes drawn from the Facebook
    /// 2010 trace (`netheat_data::CoflowTrace::shuffle_sizes_bytes`, given
    /// as [`AggregationSpec::task_sizes`]), split evenly over the task's flows.
    DataAnalytics,
    /// Ours (the earlier stand-in for data analytics): Pareto task sizes
    /// (shape 1.1, minimum 5 KB per flow), capped at 1,000x the minimum.
    Pareto,
    /// Every flow uniform in [`AggregationSpec::uniform_bytes`] (default
    /// 2-50 KB, §5.2).
    Uniform,
    /// Every task [`AggregationSpec::task_bytes`], split evenly over its
    /// flows (Baraat §5.1's testbed tasks: 800 KB multi-gets, 3 x 400 KB
    /// reads).
    Fixed,
}

impl SizeLaw {
    /// Known tags.
    pub const TAGS: [&'static str; 5] = ["bing", "data_analytics", "pareto", "uniform", "fixed"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, GenError> {
        match s {
            "bing" => Ok(Self::Bing),
            "data_analytics" | "data-analytics" => Ok(Self::DataAnalytics),
            "pareto" => Ok(Self::Pareto),
            "uniform" => Ok(Self::Uniform),
            "fixed" => Ok(Self::Fixed),
            _ => Err(GenError::param("workload", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
    /// Bytes of each of the `n` flows of one task (`law`: the empirical
    /// task sizes of `DataAnalytics`; `fixed`: the task size of `Fixed`;
    /// `(lo, hi)`: the range of `Uniform`).
    fn flow_sizes<R: Rng>(
        self,
        n: usize,
        law: Option<&[f64]>,
        fixed: f64,
        (lo, hi): (f64, f64),
        rng: &mut R,
    ) -> Vec<f64> {
        match self {
            Self::Bing => {
                let per = if rng.gen::<f64>() < 0.15 { 200e3 } else { 20e3 };
                vec![per; n]
            }
            Self::DataAnalytics => {
                let law = law.unwrap_or(&[]);
                let size = law[rng.gen_range(0..law.len())];
                vec![(size / n as f64).round(); n]
            }
            Self::Pareto => {
                let u: f64 = 1.0 - rng.gen::<f64>();
                let per = (5e3 * u.powf(-1.0 / 1.1)).min(5e6);
                vec![per.round(); n]
            }
            Self::Uniform => (0..n).map(|_| rng.gen_range(lo..=hi).round()).collect(),
            Self::Fixed => vec![(fixed / n as f64).round(); n],
        }
    }
}

/// Application structure of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
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

impl Structure {
    /// Known tags.
    pub const TAGS: [&'static str; 3] = ["one-stage", "two-stage", "storage"];
    /// Parses a tag.
    pub fn parse(s: &str) -> Result<Self, GenError> {
        match s {
            "one-stage" => Ok(Self::OneStage),
            "two-stage" => Ok(Self::TwoStage),
            "storage" => Ok(Self::Storage),
            _ => Err(GenError::param("app", format!("unknown `{s}`; known: {}", Self::TAGS.join(", ")))),
        }
    }
}

/// Parameters of a generated workload.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregationSpec {
    /// Size law.
    pub kind: SizeLaw,
    /// Structure.
    pub app: Structure,
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
    /// Aggregators: this many hosts spread evenly over the datacenter (0:
    /// every host; 30 on the paper's datacenter: the first host of each pod).
    pub aggregators: usize,
    /// Worker pool size for `pool` placement (0: every host); unused by
    /// `rack` placement, whose workers are the aggregator's rack mates.
    pub workers: usize,
    /// Batch mode: all tasks arrive at time 0 (data-parallel batch).
    pub batch: bool,
    /// The range of [`SizeLaw::Uniform`]'s flow sizes, bytes (default
    /// 2-50 KB, §5.2; §2's Figure 3 uses 5-40 KB).
    pub uniform_bytes: (f64, f64),
    /// Skew of the flows within a task: each flow's size is multiplied by
    /// an independent log-normal factor of mean 1 and this coefficient of
    /// variation (0: the size law alone; see [`FB2010_REDUCER_CV`]). Uneven
    /// flows finish apart, so a task takes many more engine events.
    pub flow_cv: f64,
    /// Mean compute time (seconds): each worker, and each mid-level
    /// aggregator of a two-stage task once it has its inputs, starts its
    /// flow after an independent exponential time of this mean (0: at once).
    pub compute_s: f64,
    /// A mid-level aggregator's mean compute time instead of `compute_s`
    /// (`None`: the same; `Some(0.0)`: workers compute, mid-levels forward
    /// at once, as Baraat's Figure 11 models computation "for worker
    /// machines"). Workers' times are the same draws either way.
    pub mid_compute_s: Option<f64>,
    /// Where the workers are ([`Placement`]).
    pub placement: Placement,
    /// Hosts per rack of the topology (hosts are numbered rack by rack);
    /// used by `rack` placement (callers set it from their datacenter).
    pub hosts_per_rack: usize,
    /// Two-stage tasks: the fraction of its inputs' bytes a mid-level
    /// aggregator forwards (Baraat §5.2: 3%, "consistent with observations
    /// of live systems").
    pub selectivity: f64,
    /// The empirical task sizes (bytes) of `DataAnalytics` (required
    /// there: `netheat_data::CoflowTrace::shuffle_sizes_bytes`).
    pub task_sizes: Option<Arc<Vec<f64>>>,
    /// Bytes of every task of the `Fixed` law (else unused).
    pub task_bytes: f64,
    /// Each aggregator serves one task at a time, the others waiting in its
    /// FIFO queue (see the module docs).
    pub client_queue: bool,
    /// `front-end` placement: the ToR uplink capacity (bits/s, into the
    /// racks) of the racks holding the clients, together; the load's base
    /// is the smaller of this and the clients' host links together
    /// (infinite: the host links).
    pub client_uplink_bps: f64,
    /// Two-stage tasks with `rack` placement: which host of its rack a
    /// mid-level aggregator is.
    pub mid_host: MidHost,
    /// Seed.
    pub seed: u64,
}

impl AggregationSpec {
    /// `tasks` tasks of a size law and structure with the paper's setting
    /// for the rest (Baraat §5.2, the defaults of `experiments/baraat.toml`):
    /// each aggregator queries the other 39 hosts of its 40-host rack (per
    /// mid-level for two-stage), one aggregator per pod (30), load 0.8 on
    /// the aggregators' links, Poisson arrivals, selectivity 3%, no skew,
    /// no compute time. `DataAnalytics` also needs
    /// [`AggregationSpec::task_sizes`].
    pub fn new(kind: SizeLaw, app: Structure, tasks: usize, seed: u64) -> Self {
        Self {
            kind,
            app,
            fanout: 39,
            mids: 0,
            load: 0.8,
            tasks,
            aggregators: 30,
            workers: 0,
            batch: false,
            uniform_bytes: (2e3, 50e3),
            flow_cv: 0.0,
            compute_s: 0.0,
            mid_compute_s: None,
            placement: Placement::Rack,
            hosts_per_rack: 40,
            selectivity: 0.03,
            task_sizes: None,
            task_bytes: 0.0,
            client_queue: false,
            client_uplink_bps: f64::INFINITY,
            mid_host: MidHost::Random,
            seed,
        }
    }
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
fn task_flow_sizes<R: Rng>(spec: &AggregationSpec, skew: Option<&SizeDist>, rng: &mut R) -> Vec<f64> {
    let law = spec.task_sizes.as_ref().map(|v| v.as_slice());
    let mut sizes = spec.kind.flow_sizes(spec.fanout, law, spec.task_bytes, spec.uniform_bytes, rng);
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

/// A flow as drawn: sender, receiver, bytes, and the index of the later
/// flow of the same task it feeds.
type Draft = (HostId, HostId, f64, Option<u32>);

/// A task's DAG: each flow a step after the flows feeding it, and, with a
/// compute time (`delays[j] > 0`), after a delay step of that length.
fn build_dag(flows: &[Draft], delays: &[f64]) -> TaskDag {
    let delayed = delays.iter().filter(|&&d| d > 0.0).count();
    let mut dag = TaskDag::with_capacity("aggregation", flows.len() + delayed);
    let mut feeders: Vec<Vec<StepId>> = vec![Vec::new(); flows.len()];
    for (j, &(src, dst, bytes, feeds)) in flows.iter().enumerate() {
        let deps = std::mem::take(&mut feeders[j]);
        let delay = delays.get(j).copied().unwrap_or(0.0);
        let deps = if delay > 0.0 { vec![dag.delay(delay, &deps)] } else { deps };
        let step = dag.flow(src, dst, bytes, &deps);
        if let Some(k) = feeds {
            feeders[k as usize].push(step);
        }
    }
    dag
}

/// Generates the tasks, `(arrival, DAG)` sorted by arrival, on `n_hosts`
/// hosts whose links are `host_bps` (the load's base).
pub fn generate(spec: &AggregationSpec, n_hosts: usize, host_bps: f64) -> Result<Vec<(f64, TaskDag)>, GenError> {
    if spec.fanout == 0 || spec.fanout + 2 > n_hosts {
        return Err(GenError::param("fanout", format!("must be in 1..={}", n_hosts.saturating_sub(2))));
    }
    if !spec.batch && (spec.load.is_nan() || spec.load <= 0.0 || spec.load >= 1.0) {
        return Err(GenError::param("load", "must be in (0, 1)"));
    }
    let n_mids = if spec.mids == 0 { spec.fanout } else { spec.mids };
    if spec.mids > 0 && spec.app != Structure::TwoStage {
        return Err(GenError::param("mids", "only two-stage tasks have mid-level aggregators"));
    }
    if n_mids + 1 > n_hosts {
        return Err(GenError::param("mids", format!("must be in 1..={}", n_hosts - 1)));
    }
    if spec.tasks == 0 {
        return Err(GenError::param("tasks", "must be at least 1"));
    }
    if !(spec.flow_cv.is_finite() && (0.0..=10.0).contains(&spec.flow_cv)) {
        return Err(GenError::param("flow-cv", format!("{} must be in [0, 10]", spec.flow_cv)));
    }
    if !(spec.compute_s.is_finite() && spec.compute_s >= 0.0) {
        return Err(GenError::param("compute", format!("{} s must be >= 0", spec.compute_s)));
    }
    let (lo, hi) = spec.uniform_bytes;
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi) {
        return Err(GenError::param("flow-size-range", format!("[{lo}, {hi}] bytes: need 0 < low <= high")));
    }
    let mid_compute_s = spec.mid_compute_s.unwrap_or(spec.compute_s);
    if !(mid_compute_s.is_finite() && mid_compute_s >= 0.0) {
        return Err(GenError::param("mid-compute", format!("{mid_compute_s} s must be >= 0")));
    }
    if !(spec.selectivity.is_finite() && spec.selectivity > 0.0) {
        return Err(GenError::param("selectivity", format!("{} must be > 0", spec.selectivity)));
    }
    if spec.kind == SizeLaw::DataAnalytics {
        match &spec.task_sizes {
            Some(v) if !v.is_empty() && v.iter().all(|b| b.is_finite() && *b > 0.0) => {}
            Some(_) => return Err(GenError::param("task-sizes", "must be finite sizes > 0, at least one")),
            None => {
                return Err(GenError::param(
                    "workload",
                    "data_analytics draws task sizes from the Facebook 2010 trace: set `task_sizes` \
                     (netheat_data::CoflowTrace::shuffle_sizes_bytes)",
                ))
            }
        }
    }
    if spec.kind == SizeLaw::Fixed && !(spec.task_bytes.is_finite() && spec.task_bytes >= spec.fanout as f64) {
        return Err(GenError::param(
            "task-size",
            format!("{} B must be finite and at least a byte per flow ({})", spec.task_bytes, spec.fanout),
        ));
    }
    let skew =
        (spec.flow_cv > 0.0).then(|| SizeDist::log_normal_with_mean(1.0, (1.0 + spec.flow_cv.powi(2)).ln().sqrt()));
    let n_agg = if spec.aggregators == 0 { n_hosts } else { spec.aggregators.min(n_hosts) };
    let n_work = if spec.workers == 0 { n_hosts } else { spec.workers.min(n_hosts) };
    let rack = spec.placement == Placement::Rack;
    let front_end = spec.placement == Placement::FrontEnd;
    let hpr = spec.hosts_per_rack;
    // Front-end placement: the servers, every host of the racks holding no
    // client (clients are hosts 0..n_agg).
    let mut servers: Vec<HostId> = Vec::new();
    if front_end {
        if spec.app == Structure::TwoStage {
            return Err(GenError::param(
                "placement",
                "front-end placement builds one-stage and storage tasks (clients reading from servers)",
            ));
        }
        if hpr < 1 || !n_hosts.is_multiple_of(hpr) {
            return Err(GenError::param(
                "hosts-per-rack",
                format!("{hpr} must be >= 1 and divide the {n_hosts} hosts"),
            ));
        }
        if spec.client_uplink_bps.is_nan() || spec.client_uplink_bps <= 0.0 {
            return Err(GenError::param("client-uplink", format!("{} bit/s must be > 0", spec.client_uplink_bps)));
        }
        servers.extend((n_agg.div_ceil(hpr) * hpr..n_hosts).map(|h| h as HostId));
        if spec.fanout > servers.len() {
            return Err(GenError::param(
                "fanout",
                format!(
                    "front-end placement: at most the {} hosts of the racks without clients ({n_agg} clients)",
                    servers.len()
                ),
            ));
        }
    }
    // Rack placement: racks free of aggregators (for mid-levels).
    let mut free_racks = Vec::new();
    if rack {
        if hpr < 2 || !n_hosts.is_multiple_of(hpr) {
            return Err(GenError::param(
                "hosts-per-rack",
                format!("{hpr} must be >= 2 and divide the {n_hosts} hosts"),
            ));
        }
        if spec.fanout + 1 > hpr {
            return Err(GenError::param(
                "fanout",
                format!("rack placement: at most the {} other hosts of a rack", hpr - 1),
            ));
        }
        if spec.app == Structure::TwoStage {
            let mut has_agg = vec![false; n_hosts / hpr];
            for i in 0..n_agg {
                has_agg[spread(i, n_agg, n_hosts) as usize / hpr] = true;
            }
            free_racks = (0..has_agg.len()).filter(|&r| !has_agg[r]).collect();
            if free_racks.len() < n_mids {
                return Err(GenError::param(
                    "mids",
                    format!(
                        "rack placement: {n_mids} mid-levels need as many racks without aggregators ({} here)",
                        free_racks.len()
                    ),
                ));
            }
        }
    } else if !front_end && spec.fanout + 1 > n_work {
        return Err(GenError::param("fanout", format!("must be below the worker pool ({n_work})")));
    }
    // The first `k` hosts of `h`'s rack other than `h`.
    let rack_mates = |h: HostId, k: usize, out: &mut Vec<HostId>| {
        out.clear();
        let first = (h as usize / hpr) * hpr;
        out.extend((first..first + hpr).map(|x| x as HostId).filter(|&x| x != h).take(k));
    };
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut compute_rng = ChaCha8Rng::seed_from_u64(mix(spec.seed ^ 0xC0C0_A7E5));
    let mut tasks = Vec::with_capacity(spec.tasks);
    let mut workers = Vec::new();
    let mut mids = Vec::new();
    // Bytes that reach the aggregator, summed over tasks (the load's base).
    let mut agg_bytes = 0.0;
    for _ in 0..spec.tasks {
        // Aggregators spread evenly over the host range (so over racks), or
        // the first hosts (front-end clients).
        let pick = rng.gen_range(0..n_agg);
        let agg = if front_end { pick as HostId } else { spread(pick, n_agg, n_hosts) };
        let mut flows = Vec::new();
        match spec.app {
            Structure::OneStage | Structure::Storage => {
                if front_end {
                    workers.clear();
                    workers.extend(
                        rand::seq::index::sample(&mut rng, servers.len(), spec.fanout).iter().map(|i| servers[i]),
                    );
                } else if rack {
                    rack_mates(agg, spec.fanout, &mut workers);
                } else {
                    pick_hosts(&mut rng, n_hosts, n_work, spec.fanout, agg, &mut workers);
                }
                let sizes = task_flow_sizes(spec, skew.as_ref(), &mut rng);
                for (w, b) in workers.iter().zip(sizes) {
                    // Storage retrieval: data flows from servers to the client.
                    flows.push((*w, agg, b, None));
                }
            }
            Structure::TwoStage => {
                if rack {
                    // Distinct racks without aggregators, a random host in
                    // each (or the first: no draw, the stream otherwise as
                    // with random hosts but for those draws).
                    mids.clear();
                    for r in rand::seq::index::sample(&mut rng, free_racks.len(), n_mids) {
                        let host = match spec.mid_host {
                            MidHost::Random => rng.gen_range(0..hpr),
                            MidHost::First => 0,
                        };
                        mids.push((free_racks[r] * hpr + host) as HostId);
                    }
                } else {
                    pick_hosts(&mut rng, n_hosts, n_hosts, n_mids, agg, &mut mids);
                }
                for &m in &mids {
                    if rack {
                        rack_mates(m, spec.fanout, &mut workers);
                    } else {
                        pick_hosts(&mut rng, n_hosts, n_work, spec.fanout, m, &mut workers);
                    }
                    let sizes = task_flow_sizes(spec, skew.as_ref(), &mut rng);
                    let sum: f64 = sizes.iter().sum();
                    // The mid-level's own flow comes right after its inputs.
                    let up = (flows.len() + spec.fanout) as u32;
                    for (w, b) in workers.iter().zip(sizes) {
                        flows.push((*w, m, b, Some(up)));
                    }
                    flows.push((m, agg, (sum * spec.selectivity).round().max(1.0), None));
                }
            }
        }
        // Senders compute before they answer. A stream of its own, so tasks
        // with and without compute time are the same.
        // One unit exponential per flow, times its sender's mean (a
        // mid-level's flow is the one others feed): `mean * unit` is the
        // bits of an exponential of that mean drawn from the same number.
        let mut delays = Vec::new();
        if spec.compute_s > 0.0 || mid_compute_s > 0.0 {
            let unit = SizeDist::Exponential { mean: 1.0 };
            let mut fed = vec![false; flows.len()];
            for f in &flows {
                if let Some(up) = f.3 {
                    fed[up as usize] = true;
                }
            }
            delays = fed
                .iter()
                .map(|&mid| unit.sample(&mut compute_rng) * if mid { mid_compute_s } else { spec.compute_s })
                .collect();
        }
        agg_bytes += flows.iter().filter(|f| f.1 == agg).map(|f| f.2).sum::<f64>();
        let mut dag = build_dag(&flows, &delays);
        if spec.client_queue {
            dag.queue = Some(u64::from(agg));
        }
        tasks.push((0.0, dag));
    }
    let c = host_bps;
    if !spec.batch {
        let mean_agg = agg_bytes / tasks.len() as f64;
        // The aggregators' host links carry every byte that reaches an
        // aggregator: `load` is their mean utilisation.
        let base = if front_end { (n_agg as f64 * c).min(spec.client_uplink_bps) } else { n_agg as f64 * c };
        let mut lambda = spec.load * base / (8.0 * mean_agg);
        if spec.placement == Placement::Pool {
            // Pool placement: or that of the worker pool's links if higher.
            let mean = tasks.iter().map(|t| t.1.bytes()).sum::<f64>() / tasks.len() as f64;
            lambda = lambda.min(spec.load * n_work as f64 * c / (8.0 * mean));
        }
        let mut t = 0.0;
        for task in tasks.iter_mut() {
            let u: f64 = 1.0 - rng.gen::<f64>();
            t += -u.ln() / lambda;
            task.0 = t;
        }
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dag::Step;

    /// A two-stage task with compute time: two workers (hosts 1, 2) feed the
    /// mid-level (3), which forwards to the aggregator (0). Steps in order:
    /// each worker's compute then its flow, then the mid-level's compute
    /// after both inputs, then its flow after that.
    #[test]
    fn two_stage_task_with_compute_is_the_dag_of_its_release_rule() {
        let flows: Vec<Draft> = vec![(1, 3, 100.0, Some(2)), (2, 3, 200.0, Some(2)), (3, 0, 1.0, None)];
        let d = build_dag(&flows, &[0.5, 0.25, 0.125]);
        assert_eq!(d.kind, "aggregation");
        assert_eq!(d.num_flows(), 3);
        assert_eq!(d.bytes(), 301.0);
        let delay = |s: &Step| match s {
            Step::Delay { seconds } => *seconds,
            other => panic!("expected a delay, got {other:?}"),
        };
        let ends = |s: &Step| match s {
            Step::Flow { src, dst, .. } => (*src, *dst),
            other => panic!("expected a flow, got {other:?}"),
        };
        assert_eq!(d.steps.len(), 6);
        assert_eq!((delay(&d.steps[0]), ends(&d.steps[1])), (0.5, (1, 3)));
        assert_eq!((delay(&d.steps[2]), ends(&d.steps[3])), (0.25, (2, 3)));
        assert_eq!((delay(&d.steps[4]), ends(&d.steps[5])), (0.125, (3, 0)));
        let none: &[StepId] = &[];
        assert_eq!(d.dep_lists().collect::<Vec<_>>(), [none, &[0], none, &[2], &[1, 3], &[4]]);
        // Without compute time no delay steps: the mid-level's flow waits on
        // both inputs directly.
        assert_eq!(build_dag(&flows, &[]).dep_lists().collect::<Vec<_>>(), [none, none, &[0, 1]]);
    }

    /// `mid_compute_s`: the workers' compute times are the same draws
    /// whatever the mid-levels' mean; `Some(0.0)` leaves the mid-levels'
    /// flows without a delay, and a mean of twice `compute_s` doubles each
    /// mid-level's delay exactly (one unit exponential per flow, scaled).
    #[test]
    fn mid_level_compute_is_its_own_mean_over_the_same_draws() {
        let spec = |mid: Option<f64>| AggregationSpec {
            fanout: 3,
            mids: 2,
            aggregators: 1,
            hosts_per_rack: 4,
            compute_s: 0.01,
            mid_compute_s: mid,
            ..AggregationSpec::new(SizeLaw::Uniform, Structure::TwoStage, 50, 5)
        };
        // Per task: (the delay before each flow, whether others feed it).
        let delays = |mid: Option<f64>| -> Vec<Vec<(f64, bool)>> {
            generate(&spec(mid), 16, 1e9)
                .unwrap()
                .iter()
                .map(|(_, d)| {
                    let mut out = Vec::new();
                    for (s, st) in d.steps.iter().enumerate() {
                        if let Step::Flow { .. } = st {
                            let before = d.deps(s).iter().find_map(|&p| match d.steps[p] {
                                Step::Delay { seconds } => Some(seconds),
                                _ => None,
                            });
                            let fed = d.deps(s).iter().any(|&p| matches!(d.steps[p], Step::Flow { .. }))
                                || d.deps(s)
                                    .iter()
                                    .any(|&p| d.deps(p).iter().any(|&q| matches!(d.steps[q], Step::Flow { .. })));
                            out.push((before.unwrap_or(0.0), fed));
                        }
                    }
                    out
                })
                .collect()
        };
        let (same, workers_only, double) = (delays(None), delays(Some(0.0)), delays(Some(0.02)));
        let mut mids = 0;
        for ((a, b), c) in same.iter().zip(&workers_only).zip(&double) {
            assert_eq!(a.len(), 2 * 4);
            for ((&(x, mid), &(y, _)), &(z, _)) in a.iter().zip(b).zip(c) {
                assert!(x > 0.0);
                if mid {
                    mids += 1;
                    assert_eq!((y, z), (0.0, 2.0 * x));
                } else {
                    assert_eq!((y, z), (x, x));
                }
            }
        }
        assert_eq!(mids, 50 * 2);
        let bad = AggregationSpec { mid_compute_s: Some(-1.0), ..spec(None) };
        assert!(generate(&bad, 16, 1e9).unwrap_err().to_string().contains("mid-compute"));
    }

    /// `uniform_bytes`: uniform flows in the range given (Figure 3's 5-40
    /// KB): all within it, mean (5 + 40) / 2 = 22.5 KB within four
    /// standard errors (the uniform's deviation is 35 / sqrt(12) KB); the
    /// default range draws the same sizes as the literal 2-50 KB did.
    #[test]
    fn uniform_flows_take_the_range_given() {
        let spec = |range: (f64, f64)| AggregationSpec {
            fanout: 10,
            aggregators: 1,
            hosts_per_rack: 12,
            batch: true,
            uniform_bytes: range,
            ..AggregationSpec::new(SizeLaw::Uniform, Structure::OneStage, 400, 9)
        };
        let sizes = |range| -> Vec<f64> {
            generate(&spec(range), 12, 1e9)
                .unwrap()
                .iter()
                .flat_map(|(_, d)| {
                    d.steps.iter().map(|s| match s {
                        Step::Flow { bytes, .. } => *bytes,
                        other => panic!("expected a flow, got {other:?}"),
                    })
                })
                .collect()
        };
        let v = sizes((5e3, 40e3));
        assert_eq!(v.len(), 4000);
        assert!(v.iter().all(|&b| (5e3..=40e3).contains(&b)));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let se = 35e3 / 12f64.sqrt() / (v.len() as f64).sqrt();
        assert!((mean - 22.5e3).abs() < 4.0 * se, "{mean}");
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut old = ChaCha8Rng::seed_from_u64(1);
        let new = SizeLaw::Uniform.flow_sizes(50, None, 0.0, (2e3, 50e3), &mut rng);
        let literal: Vec<f64> = (0..50).map(|_| old.gen_range(2e3..=50e3f64).round()).collect();
        assert_eq!(new, literal);
        let bad = AggregationSpec { uniform_bytes: (0.0, 1.0), ..spec((5e3, 40e3)) };
        assert!(generate(&bad, 12, 1e9).unwrap_err().to_string().contains("flow-size-range"));
    }

    /// Arrivals at the target load: rack placement on 4 racks of 4 hosts,
    /// one aggregator, 3 flows of 20 KB (Bing-like, light) or 200 KB into it
    /// per task; the mean arrival rate is load x C / (8 x E[bytes into the
    /// aggregator]).
    #[test]
    fn arrivals_match_the_load_of_the_aggregators_links() {
        let spec = AggregationSpec {
            fanout: 3,
            aggregators: 1,
            hosts_per_rack: 4,
            load: 0.5,
            ..AggregationSpec::new(SizeLaw::Bing, Structure::OneStage, 20_000, 3)
        };
        let tasks = generate(&spec, 16, 1e9).unwrap();
        let mean_bytes = tasks.iter().map(|t| t.1.bytes()).sum::<f64>() / tasks.len() as f64;
        // E[bytes] = 3 x (0.85 x 20 KB + 0.15 x 200 KB) = 141 KB.
        assert!((mean_bytes / 141e3 - 1.0).abs() < 0.03, "{mean_bytes}");
        let rate = tasks.len() as f64 / tasks.last().unwrap().0;
        let want = 0.5 * 1e9 / (8.0 * mean_bytes);
        assert!((rate / want - 1.0).abs() < 0.03, "{rate} vs {want}");
        // Every flow goes to the one aggregator (host 0) from its rack mates.
        let ends = |s: &Step| match s {
            Step::Flow { src, dst, .. } => (*src, *dst),
            other => panic!("expected a flow, got {other:?}"),
        };
        assert!(tasks.iter().all(|t| t.1.steps.iter().map(ends).eq([(1, 0), (2, 0), (3, 0)])));
    }

    /// Two-stage rack placement on 6 racks of 4 hosts, one aggregator
    /// (host 0, rack 0), 2 mid-levels of 3 workers: mid-levels sit in
    /// distinct racks 1-5 and query the other hosts of their rack. With
    /// `MidHost::First` every mid-level is its rack's first host (a
    /// multiple of 4); with `Random` the 4 positions all occur (2,000
    /// tasks: each is missed with probability (3/4)^4000).
    #[test]
    fn mid_levels_sit_in_their_racks_first_host_or_any() {
        let spec = AggregationSpec {
            fanout: 3,
            mids: 2,
            aggregators: 1,
            hosts_per_rack: 4,
            ..AggregationSpec::new(SizeLaw::Uniform, Structure::TwoStage, 2_000, 5)
        };
        let positions = |mid_host: MidHost| {
            let tasks = generate(&AggregationSpec { mid_host, ..spec.clone() }, 24, 1e9).unwrap();
            let mut seen = [0usize; 4];
            for (_, t) in &tasks {
                let flows: Vec<(HostId, HostId)> = t
                    .steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Flow { src, dst, .. } => Some((*src, *dst)),
                        _ => None,
                    })
                    .collect();
                // Per mid-level: 3 worker flows into it, then its flow to host 0.
                assert_eq!(flows.len(), 8);
                let mids: Vec<HostId> = flows.chunks(4).map(|c| c[3].0).collect();
                assert!(mids[0] / 4 != mids[1] / 4 && mids.iter().all(|&m| m >= 4), "{mids:?}");
                for c in flows.chunks(4) {
                    let m = c[3].0;
                    assert_eq!(c[3].1, 0);
                    assert!(c[..3].iter().all(|&(w, d)| d == m && w != m && w / 4 == m / 4), "{c:?}");
                    seen[m as usize % 4] += 1;
                }
            }
            seen
        };
        assert_eq!(positions(MidHost::First), [4_000, 0, 0, 0]);
        // The load on the mid-levels' links against the top-level's: a
        // request brings 2 x 3% of the mid-levels' inputs to host 0 and 2
        // inputs to 2 of the 5 free racks, so one mid-level host per rack
        // carries top load x 1 / (5 x 0.03) = 0.8 x 6.67 = 5.33 of its link.
        // 20,000 requests: the span of their Poisson arrivals is within
        // about 0.7% (one sd) of its mean.
        let many = AggregationSpec { mid_host: MidHost::First, tasks: 20_000, ..spec.clone() };
        let tasks = generate(&many, 24, 1e9).unwrap();
        let span = tasks.last().unwrap().0;
        let into = |hosts: &[HostId]| {
            let bytes: f64 = tasks
                .iter()
                .flat_map(|t| t.1.steps.iter())
                .filter_map(|s| match s {
                    Step::Flow { dst, bytes, .. } if hosts.contains(dst) => Some(*bytes),
                    _ => None,
                })
                .sum();
            bytes * 8.0 / (span * 1e9 * hosts.len() as f64)
        };
        let (top, mid) = (into(&[0]), into(&[4, 8, 12, 16, 20]));
        assert!((top / 0.8 - 1.0).abs() < 0.03, "{top}");
        assert!((mid / (0.8 / (5.0 * 0.03)) - 1.0).abs() < 0.05, "{mid}");
        assert!(positions(MidHost::Random).iter().all(|&n| n > 0));
        assert!(MidHost::parse("last").unwrap_err().to_string().contains("random, first"));
    }

    /// Front-end placement on Baraat §5.1's testbed shape: 5 racks of 4
    /// hosts, 4 clients (rack 0), 800 KB tasks from 4 servers of the other
    /// racks, client queues. Behind a 1 Gbps ToR uplink the clients' base
    /// is 1 Gbps, not their 4 host links: 50% load is 0.5e9 / (8 x 800e3) =
    /// 78.125 tasks/s.
    #[test]
    fn front_end_tasks_read_from_the_other_racks_at_the_uplinks_load() {
        let spec = AggregationSpec {
            fanout: 4,
            aggregators: 4,
            hosts_per_rack: 4,
            load: 0.5,
            placement: Placement::FrontEnd,
            task_bytes: 800e3,
            client_queue: true,
            client_uplink_bps: 1e9,
            ..AggregationSpec::new(SizeLaw::Fixed, Structure::Storage, 20_000, 5)
        };
        let tasks = generate(&spec, 20, 1e9).unwrap();
        let mut clients = [0usize; 4];
        for (_, t) in &tasks {
            let ends: Vec<(HostId, HostId, f64)> = t
                .steps
                .iter()
                .map(|s| match s {
                    Step::Flow { src, dst, bytes, .. } => (*src, *dst, *bytes),
                    other => panic!("expected a flow, got {other:?}"),
                })
                .collect();
            let client = ends[0].1;
            assert!(client < 4 && ends.iter().all(|e| e.1 == client && e.2 == 200e3 && e.0 >= 4));
            let mut srcs: Vec<HostId> = ends.iter().map(|e| e.0).collect();
            srcs.sort_unstable();
            srcs.dedup();
            assert_eq!(srcs.len(), 4);
            assert_eq!(t.queue, Some(u64::from(client)));
            clients[client as usize] += 1;
        }
        // Clients uniform: each near 5,000 (binomial sd about 61).
        assert!(clients.iter().all(|&c| (c as f64 - 5000.0).abs() < 300.0), "{clients:?}");
        let rate = tasks.len() as f64 / tasks.last().unwrap().0;
        assert!((rate / 78.125 - 1.0).abs() < 0.03, "{rate}");
        // Without the uplink limit the base is the 4 clients' links: 4x.
        let open = generate(&AggregationSpec { client_uplink_bps: f64::INFINITY, ..spec.clone() }, 20, 1e9).unwrap();
        let rate = open.len() as f64 / open.last().unwrap().0;
        assert!((rate / 312.5 - 1.0).abs() < 0.03, "{rate}");
        // Too many servers, and two-stage, are refused at their keys.
        let err = generate(&AggregationSpec { fanout: 17, ..spec.clone() }, 20, 1e9).unwrap_err();
        assert!(err.to_string().contains("fanout"), "{err}");
        let two = AggregationSpec { app: Structure::TwoStage, ..spec };
        assert!(generate(&two, 20, 1e9).unwrap_err().to_string().contains("placement"));
    }
}
