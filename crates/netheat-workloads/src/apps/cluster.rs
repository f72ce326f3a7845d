//! A Borg-like cluster's jobs: the workload of the hotspot paper's task
//! placement (§5.1), which a scenario's `[placement]` policy schedules.
//!
//! Jobs arrive as a Poisson process, plus a steady-state population at time
//! 0 (exponential task durations are memoryless, so the population a
//! cluster at `cpu_load` holds is already there when the run starts). A job
//! has `1..=tasks_max` tasks (uniform); a task asks `1..=cores_max` cores
//! (uniform) and `memory_per_core` per core, runs for an exponential time of
//! mean `task_mean_s` once placed, and sends, while it runs, a flow capped
//! at its network demand to a peer server in another rack (storage or
//! shuffle traffic). Demand per core is log-normal per job (median
//! `bw_median_per_core`, sigma `bw_sigma`), and a share `heavy_share` of the
//! jobs is `heavy_factor` times heavier (the heavy tail the paper describes:
//! some jobs need more than 10x the median). The scheduler sees a
//! *historical estimate* of each task's peak demand, off by a log-normal
//! error per job and scaled by `peak_factor`, or none for a share
//! `missing_estimate_share` of the jobs; a share `latency_sensitive_share`
//! of the jobs is never migrated.
//!
//! Or the jobs come from a trace ([`ClusterJobs::trace`]: a job's arrival,
//! and per task its cores, memory, duration and instances, e.g. the
//! Alibaba-derived CloudSimPy table or a user's own), and only the network
//! demand is drawn as above: traces of cluster jobs carry no network demand
//! per task. A task asks whole cores (a trace's 0.5 core asks 1: the
//! scheduler counts cores) and its memory share of a server's memory.
//!
//! Analytical queries (the paper's QuerySys benchmarks, §5.1 Fig 19) run
//! beside the jobs: one of each [`QueryType`] every `query_period_s`, their
//! workers placed by the same policy as the jobs' tasks.
//!
//! This module only draws the jobs; the scheduler that places, runs,
//! drifts and migrates them is `netheat-scenario`'s `cluster` module.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;

use crate::sizes::std_normal;
use crate::GenError;

/// One kind of analytical query run beside the jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryType {
    /// Name in the results (`small`, `large`, ...): its tasks are of kind
    /// `query-<name>`.
    pub name: String,
    /// Workers (and storage servers, and half as many shuffle servers).
    pub workers: usize,
    /// Input partition per worker, bytes.
    pub partition_bytes: f64,
    /// Intermediate data per worker, bytes.
    pub intermediate_bytes: f64,
    /// Output per worker, bytes.
    pub output_bytes: f64,
    /// Compute per stage, seconds.
    pub compute_s: f64,
    /// Cores each worker asks the scheduler for.
    pub worker_cores: u32,
}

/// One task row of a job trace: `instances` identical tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceTask {
    /// Cores each instance asks (may be fractional; rounded up to whole
    /// cores, at least one).
    pub cores: f64,
    /// Memory each instance asks, as a share of a server's memory.
    pub memory_share: f64,
    /// How long each instance runs once placed, seconds.
    pub duration_s: f64,
    /// Identical instances.
    pub instances: u32,
}

/// One job of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceJob {
    /// Arrival, seconds (already time-scaled).
    pub start_s: f64,
    /// Its task rows.
    pub tasks: Vec<TraceTask>,
}

/// Parameters of the cluster's jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterJobs {
    /// Jobs from a trace instead of the Poisson draw (`cpu_load`,
    /// `tasks_max`, `cores_max`, `memory_per_core` and `task_mean_s` are
    /// then unused): arrivals, cores, memory and durations as the trace
    /// gives them, network demand drawn per job as for drawn jobs.
    pub trace: Option<std::sync::Arc<Vec<TraceJob>>>,
    /// Target share of all cores requested by running tasks.
    pub cpu_load: f64,
    /// Tasks per job (uniform in `1..=tasks_max`).
    pub tasks_max: u32,
    /// Cores per task (uniform in `1..=cores_max`).
    pub cores_max: u32,
    /// Memory per core requested, bytes.
    pub memory_per_core: f64,
    /// Mean task duration, seconds (exponential).
    pub task_mean_s: f64,
    /// Median network demand per core, bits/s.
    pub bw_median_per_core: f64,
    /// Sigma of ln(demand per core) across jobs.
    pub bw_sigma: f64,
    /// Share of jobs `heavy_factor` times heavier.
    pub heavy_share: f64,
    /// Demand multiplier of heavy jobs.
    pub heavy_factor: f64,
    /// Sigma of ln(estimate / actual) of the peak estimate.
    pub estimate_sigma: f64,
    /// Peak over mean of the estimate.
    pub peak_factor: f64,
    /// Share of jobs without a demand estimate.
    pub missing_estimate_share: f64,
    /// Sigma of ln of the drift factor of actual demand.
    pub drift_sigma: f64,
    /// Share of running tasks whose demand drifts in each detection window.
    pub drift_share: f64,
    /// Share of latency-sensitive jobs (never migrated).
    pub latency_sensitive_share: f64,
    /// Analytical query kinds, one of each launched every `query_period_s`.
    pub queries: Vec<QueryType>,
    /// Period of query launches, seconds.
    pub query_period_s: f64,
}

impl Default for ClusterJobs {
    /// The hotspot-paper cluster of `experiments/utp.toml`: 60% of cores
    /// busy, 1-20 tasks of 1-4 cores and 4 GB per core, one-hour mean task
    /// time, 10 Mbit/s median demand per core (sigma 1), 5% of jobs 12x
    /// heavier, estimates off by sigma 0.3 with a 1.5 peak factor, 10% of
    /// running tasks drifting by sigma 0.3 per detection window, 30% of jobs
    /// latency-sensitive; a small (4 workers, 20 MB partitions) and a large
    /// (16 workers, 100 MB) query every minute.
    fn default() -> Self {
        Self {
            trace: None,
            cpu_load: 0.6,
            tasks_max: 20,
            cores_max: 4,
            memory_per_core: 4e9,
            task_mean_s: 3600.0,
            bw_median_per_core: 10e6,
            bw_sigma: 1.0,
            heavy_share: 0.05,
            heavy_factor: 12.0,
            estimate_sigma: 0.3,
            peak_factor: 1.5,
            missing_estimate_share: 0.0,
            drift_sigma: 0.3,
            drift_share: 0.1,
            latency_sensitive_share: 0.3,
            queries: vec![
                QueryType {
                    name: "small".into(),
                    workers: 4,
                    partition_bytes: 20e6,
                    intermediate_bytes: 10e6,
                    output_bytes: 2e6,
                    compute_s: 0.05,
                    worker_cores: 1,
                },
                QueryType {
                    name: "large".into(),
                    workers: 16,
                    partition_bytes: 100e6,
                    intermediate_bytes: 50e6,
                    output_bytes: 10e6,
                    compute_s: 0.2,
                    worker_cores: 1,
                },
            ],
            query_period_s: 60.0,
        }
    }
}

/// One task of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterTask {
    /// Cores it asks for.
    pub cores: u32,
    /// Memory it asks for, bytes.
    pub memory_bytes: f64,
    /// Actual network demand when it starts, bits/s.
    pub demand_bps: f64,
    /// Historical peak estimate the scheduler sees (`None`: missing).
    pub estimate_bps: Option<f64>,
    /// How long it runs once placed, seconds.
    pub duration_s: f64,
    /// Server it sends to (moved to the next rack's when it lands in the
    /// task's own rack).
    pub peer: HostId,
}

/// What a job's draw fixes for all its tasks: network demand per core, and
/// the error of the peak estimate the scheduler sees (`None`: missing).
struct JobNetwork {
    per_core_bps: f64,
    estimate_error: Option<f64>,
    peak_factor: f64,
}

impl JobNetwork {
    /// A task of this job.
    fn task(&self, cores: u32, memory_bytes: f64, duration_s: f64, peer: HostId) -> ClusterTask {
        let demand = self.per_core_bps * f64::from(cores);
        ClusterTask {
            cores,
            memory_bytes,
            demand_bps: demand,
            estimate_bps: self.estimate_error.map(|err| demand * err * self.peak_factor),
            duration_s,
            peer,
        }
    }
}

/// One job.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterJob {
    /// Arrival, seconds.
    pub start_s: f64,
    /// Never migrated.
    pub latency_sensitive: bool,
    /// Its tasks.
    pub tasks: Vec<ClusterTask>,
}

/// What the generator drew.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterWorkload {
    /// The parameters (the scheduler reads the drift and the queries).
    pub params: Option<ClusterJobs>,
    /// Jobs in arrival order (the steady-state population first).
    pub jobs: Vec<ClusterJob>,
}

impl ClusterWorkload {
    /// Tasks of every job.
    pub fn num_tasks(&self) -> usize {
        self.jobs.iter().map(|j| j.tasks.len()).sum()
    }
}

impl ClusterJobs {
    /// The parameters' own checks.
    pub fn check(&self) -> Result<(), GenError> {
        let pos = |n: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(GenError::param(n, format!("{v} must be > 0")))
            }
        };
        pos("cpu-load", self.cpu_load)?;
        pos("task-mean", self.task_mean_s)?;
        pos("query-period", self.query_period_s)?;
        for (n, v) in [
            ("bw-median-per-core", self.bw_median_per_core),
            ("bw-sigma", self.bw_sigma),
            ("heavy-factor", self.heavy_factor),
            ("estimate-sigma", self.estimate_sigma),
            ("peak-factor", self.peak_factor),
            ("drift-sigma", self.drift_sigma),
            ("memory-per-core", self.memory_per_core),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(GenError::param(n, format!("{v} must be >= 0")));
            }
        }
        if self.tasks_max == 0 || self.cores_max == 0 {
            return Err(GenError::param("tasks-max/cores-max", "must be at least 1"));
        }
        for (n, v) in [
            ("heavy-share", self.heavy_share),
            ("drift-share", self.drift_share),
            ("missing-estimate-share", self.missing_estimate_share),
            ("latency-sensitive-share", self.latency_sensitive_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(GenError::param(n, format!("{v} is outside [0, 1]")));
            }
        }
        for (k, q) in self.queries.iter().enumerate() {
            if q.worker_cores == 0 || q.workers == 0 {
                return Err(GenError::param(format!("queries[{k}]"), "workers and worker-cores must be at least 1"));
            }
        }
        Ok(())
    }

    /// The jobs arriving over `[0, duration_s)` on `topo` (whose cores set
    /// the steady-state population), drawn from `rng`.
    pub fn generate<R: Rng + ?Sized>(
        &self,
        topo: &Topology,
        duration_s: f64,
        rng: &mut R,
    ) -> Result<ClusterWorkload, GenError> {
        self.check()?;
        if !(duration_s.is_finite() && duration_s > 0.0) {
            return Err(GenError::param("duration", format!("{duration_s} must be > 0")));
        }
        let total_cores: f64 = topo.hosts().iter().map(|h| f64::from(h.cores)).sum();
        if total_cores <= 0.0 {
            return Err(GenError::NotEnoughHosts("cluster jobs need hosts with cores (`[hosts] cores`)".into()));
        }
        if let Some(trace) = &self.trace {
            return self.trace_jobs(trace, topo, duration_s, rng);
        }
        let mean_tasks = (f64::from(self.tasks_max) + 1.0) / 2.0;
        let mean_cores = (f64::from(self.cores_max) + 1.0) / 2.0;
        let steady_jobs = self.cpu_load * total_cores / (mean_tasks * mean_cores);
        let rate = steady_jobs / self.task_mean_s;
        let cap = crate::budget::FlowCap::current()?;
        let mut starts: Vec<f64> = vec![0.0; steady_jobs.round() as usize];
        let mut t = 0.0;
        loop {
            t += -(1.0 - rng.gen::<f64>()).ln() / rate;
            if t >= duration_s {
                break;
            }
            // Every task sends at least one flow.
            cap.check(starts.len() + 1, "the cluster's jobs")?;
            starts.push(t);
        }
        let n_hosts = topo.hosts().len() as u32;
        let mut jobs = Vec::with_capacity(starts.len());
        for &st in &starts {
            let net = self.job_network(rng);
            let n = rng.gen_range(1..=self.tasks_max);
            let mut tasks = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let cores = rng.gen_range(1..=self.cores_max);
                let duration = -(1.0 - rng.gen::<f64>()).ln() * self.task_mean_s;
                let memory = self.memory_per_core * f64::from(cores);
                tasks.push(net.task(cores, memory, duration, rng.gen_range(0..n_hosts)));
            }
            jobs.push(ClusterJob {
                start_s: st,
                latency_sensitive: rng.gen::<f64>() < self.latency_sensitive_share,
                tasks,
            });
        }
        Ok(ClusterWorkload { params: Some(self.clone()), jobs })
    }

    /// A job's network draw (demand per core, heavy or not, and its
    /// estimate's error), in this order from `rng`.
    fn job_network<R: Rng + ?Sized>(&self, rng: &mut R) -> JobNetwork {
        let heavy = rng.gen::<f64>() < self.heavy_share;
        let per_core_bps = self.bw_median_per_core
            * (self.bw_sigma * std_normal(rng)).exp()
            * if heavy { self.heavy_factor } else { 1.0 };
        let missing = rng.gen::<f64>() < self.missing_estimate_share;
        let err = (self.estimate_sigma * std_normal(rng)).exp();
        JobNetwork { per_core_bps, estimate_error: (!missing).then_some(err), peak_factor: self.peak_factor }
    }

    /// The jobs of `trace` arriving in `[0, duration_s)`, in arrival order
    /// (ties in trace order); each job's demand per core, estimate error and
    /// latency sensitivity drawn as [`ClusterJobs::generate`] draws them.
    fn trace_jobs<R: Rng + ?Sized>(
        &self,
        trace: &[TraceJob],
        topo: &Topology,
        duration_s: f64,
        rng: &mut R,
    ) -> Result<ClusterWorkload, GenError> {
        let memory = topo.hosts().iter().map(|h| h.memory_bytes).fold(0.0, f64::max);
        let cap = crate::budget::FlowCap::current()?;
        let mut order: Vec<&TraceJob> = trace.iter().filter(|j| j.start_s < duration_s).collect();
        order.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let n_hosts = topo.hosts().len() as u32;
        let mut jobs = Vec::with_capacity(order.len());
        let mut total = 0usize;
        for (k, job) in order.into_iter().enumerate() {
            if !(job.start_s.is_finite() && job.start_s >= 0.0) {
                return Err(GenError::param("jobs", format!("job {k}: arrival {} s is not a time", job.start_s)));
            }
            let net = self.job_network(rng);
            let mut tasks = Vec::new();
            for t in &job.tasks {
                let ok = t.cores.is_finite()
                    && t.cores > 0.0
                    && t.memory_share.is_finite()
                    && t.memory_share >= 0.0
                    && t.duration_s.is_finite()
                    && t.duration_s >= 0.0;
                if !ok {
                    return Err(GenError::param(
                        "jobs",
                        format!(
                            "job {k}: a task of {} cores, {} of a server's memory and {} s is not a task",
                            t.cores, t.memory_share, t.duration_s
                        ),
                    ));
                }
                total += t.instances as usize;
                // Every task sends at least one flow.
                cap.check(total, "the trace's cluster tasks")?;
                let cores = (t.cores.ceil() as u32).max(1);
                for _ in 0..t.instances {
                    tasks.push(net.task(cores, t.memory_share * memory, t.duration_s, rng.gen_range(0..n_hosts)));
                }
            }
            if tasks.is_empty() {
                continue;
            }
            jobs.push(ClusterJob {
                start_s: job.start_s,
                latency_sensitive: rng.gen::<f64>() < self.latency_sensitive_share,
                tasks,
            });
        }
        Ok(ClusterWorkload { params: Some(self.clone()), jobs })
    }
}
