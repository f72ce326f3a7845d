//! The `[[app]]` kinds with their own builders (aggregation, incast,
//! shuffle jobs, chunk stores, clusters, file writes).

use netheat_core::budget::{format_count, task_overhead_bytes};
use netheat_workloads::apps::aggregation::{
    self, AggregationSpec, MidHost, Placement as AggPlacement, SizeLaw, Structure,
};
use netheat_workloads::apps::cfs::CfsWrite;
use netheat_workloads::apps::chunks::{ChunkStore, ChunkStoreRun, Erasure};
use netheat_workloads::apps::cluster::{ClusterJobs, ClusterWorkload, QueryType};
use netheat_workloads::apps::incast::Incasts;
use netheat_workloads::apps::rack_hosts;
use netheat_workloads::apps::shuffle::{JobPattern, JobPlacement, ShuffleJob};
use netheat_workloads::{GenError, SizeDist, TaskDag};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{AppTable, Wcx, Workload};
use crate::cx::count;
use crate::error::ConfigError;

impl Wcx<'_> {
    /// An `aggregation` table: `tasks` tasks (default 10,000, the paper's),
    /// arrivals from `load` (no `rate` or `duration`).
    pub(super) fn aggregation(
        &self,
        p: &str,
        a: &AppTable,
        set: &[(&str, bool)],
        seed: u64,
        out: &Workload,
    ) -> Result<Vec<(f64, TaskDag)>, ConfigError> {
        let keys = [
            "task-sizes",
            "structure",
            "placement",
            "fanout",
            "mid-aggregators",
            "mid-host",
            "selectivity",
            "flow-cv",
            "load",
            "tasks",
            "aggregators",
            "workers",
            "compute",
            "mid-compute",
            "batch",
            "dataset",
            "task-size",
            "flow-size-range",
            "client-queue",
        ];
        self.only(p, "aggregation", set, &keys)?;
        let reason = |e: GenError| match e {
            GenError::InvalidParameter { reason, .. } => reason,
            other => other.to_string(),
        };
        let law = SizeLaw::parse(a.task_sizes.as_deref().unwrap_or("bing"))
            .map_err(|e| self.at(&format!("{p}.task-sizes"), reason(e)))?;
        let structure = Structure::parse(a.structure.as_deref().unwrap_or("one-stage"))
            .map_err(|e| self.at(&format!("{p}.structure"), reason(e)))?;
        let placement = AggPlacement::parse(a.placement.as_deref().unwrap_or("rack"))
            .map_err(|e| self.at(&format!("{p}.placement"), reason(e)))?;
        if a.dataset.is_some() && law != SizeLaw::DataAnalytics {
            return Err(self.at(&format!("{p}.dataset"), "is used by task-sizes = \"data-analytics\" only"));
        }
        if a.task_size.is_some() != (law == SizeLaw::Fixed) {
            return Err(if law == SizeLaw::Fixed {
                self.at(
                    &format!("{p}.task-size"),
                    "missing required key (task-sizes = \"fixed\" needs the task's bytes)",
                )
            } else {
                self.at(&format!("{p}.task-size"), "is used by task-sizes = \"fixed\" only")
            });
        }
        if a.mid_aggregators.is_some() && structure != Structure::TwoStage {
            return Err(self.at(&format!("{p}.mid-aggregators"), "is used by structure = \"two-stage\" only"));
        }
        let uniform_bytes = match a.flow_size_range.as_deref() {
            None => (2e3, 50e3),
            Some(_) if law != SizeLaw::Uniform => {
                return Err(self.at(&format!("{p}.flow-size-range"), "is used by task-sizes = \"uniform\" only"))
            }
            Some([lo, hi]) if lo.0 > 0.0 && lo.0 <= hi.0 => (lo.0, hi.0),
            Some(_) => return Err(self.at(&format!("{p}.flow-size-range"), "must be [low, high] with 0 < low <= high")),
        };
        if a.mid_compute.is_some() && structure != Structure::TwoStage {
            return Err(self.at(&format!("{p}.mid-compute"), "is used by structure = \"two-stage\" only"));
        }
        let mid_host = MidHost::parse(a.mid_host.as_deref().unwrap_or("random"))
            .map_err(|e| self.at(&format!("{p}.mid-host"), reason(e)))?;
        if a.mid_host.is_some() && (structure != Structure::TwoStage || placement != AggPlacement::Rack) {
            return Err(self
                .at(&format!("{p}.mid-host"), "is used by structure = \"two-stage\" with placement = \"rack\" only"));
        }
        let hpr = self.topo.hosts_per_rack() as usize;
        let tasks = count(self.cx, &format!("{p}.tasks"), a.tasks.unwrap_or(10_000), 1)?;
        let fanout = count(self.cx, &format!("{p}.fanout"), a.fanout.unwrap_or(hpr as i64 - 1), 1)?;
        let mids = count(self.cx, &format!("{p}.mid-aggregators"), a.mid_aggregators.unwrap_or(0), 0)?;
        let task_sizes = if law == SizeLaw::DataAnalytics {
            let trace = self.coflow_trace(&format!("{p}.dataset"), a.dataset.as_deref())?;
            Some(std::sync::Arc::new(trace.shuffle_sizes_bytes()))
        } else {
            None
        };
        let spec = AggregationSpec {
            fanout,
            mids,
            load: a.load.unwrap_or(0.8),
            aggregators: count(
                self.cx,
                &format!("{p}.aggregators"),
                a.aggregators.unwrap_or(i64::from(self.topo.num_pods().max(1))),
                0,
            )?,
            workers: count(self.cx, &format!("{p}.workers"), a.workers.unwrap_or(0), 0)?,
            batch: a.batch.unwrap_or(false),
            flow_cv: a.flow_cv.unwrap_or(0.0),
            compute_s: a.compute.map_or(0.0, |d| d.0),
            mid_compute_s: a.mid_compute.map(|d| d.0),
            uniform_bytes,
            placement,
            hosts_per_rack: hpr,
            selectivity: a.selectivity.unwrap_or(0.03),
            task_sizes,
            task_bytes: a.task_size.map_or(0.0, |b| b.0),
            client_queue: a.client_queue.unwrap_or(false),
            client_uplink_bps: self.client_uplink_bps(a.aggregators, hpr),
            mid_host,
            ..AggregationSpec::new(law, structure, tasks, seed)
        };
        let flows_per_task = match structure {
            Structure::TwoStage => (if mids == 0 { fanout } else { mids }) as f64 * (fanout as f64 + 1.0),
            _ => fanout as f64,
        };
        let flows = tasks as f64 * flows_per_task;
        let what = format!("`{p}`: {} tasks of {} flows", format_count(tasks as f64), format_count(flows_per_task));
        // Every flow is a step, and so is a compute delay before one.
        let steps = flows * if spec.compute_s > 0.0 || spec.mid_compute_s.is_some_and(|m| m > 0.0) { 2.0 } else { 1.0 };
        self.fits(
            &format!("{p}.tasks"),
            what,
            flows,
            task_overhead_bytes(tasks as f64, steps),
            out,
            "use fewer tasks",
        )?;
        let host_bps = self.topo.hosts().first().and_then(|h| h.ports.first()).map_or(f64::NAN, |port| port.speed_bps);
        let generated = aggregation::generate(&spec, self.topo.hosts().len(), host_bps).map_err(|e| match e {
            GenError::InvalidParameter { name, reason } => {
                let key = match name.as_str() {
                    "workload" => "task-sizes".to_string(),
                    "mids" => "mid-aggregators".to_string(),
                    "compute" | "load" | "fanout" | "tasks" | "flow-cv" | "selectivity" | "task-size" | "placement" => {
                        name
                    }
                    _ => String::new(),
                };
                self.at(&if key.is_empty() { p.to_string() } else { format!("{p}.{key}") }, reason)
            }
            other => self.gen(p, other),
        })?;
        Ok(generated)
    }

    /// The ToR uplink capacity of the racks holding the first `clients`
    /// hosts (the `front-end` placement's clients), together.
    pub(super) fn client_uplink_bps(&self, clients: Option<i64>, hpr: usize) -> f64 {
        let n = clients.unwrap_or(i64::from(self.topo.num_pods().max(1))).max(1) as usize;
        let racks = n.div_ceil(hpr.max(1)).min(self.topo.tors().len());
        (0..racks as u32).map(|r| self.topo.tor_uplink_bps(r)).sum::<f64>().max(f64::MIN_POSITIVE)
    }

    /// An `incast` table: `incasts` incasts of `fanin` one-message tasks
    /// each (no `rate`, `duration` or `tasks`).
    pub(super) fn incast(
        &self,
        p: &str,
        a: &AppTable,
        set: &[(&str, bool)],
        seed: u64,
        out: &Workload,
    ) -> Result<Vec<(f64, TaskDag)>, ConfigError> {
        self.only(p, "incast", set, &["fanin", "message-sizes", "incasts", "period"])?;
        let inc = Incasts {
            fanin: count(self.cx, &format!("{p}.fanin"), a.fanin.unwrap_or(16), 1)?,
            message_bytes: match &a.message_sizes {
                None => vec![5_000.0, 93_000.0],
                Some(v) if v.is_empty() => {
                    return Err(self.at(&format!("{p}.message-sizes"), "needs at least one size"));
                }
                Some(v) => {
                    for (j, b) in v.iter().enumerate() {
                        if !(b.0.is_finite() && b.0 >= 1.0) {
                            return Err(self.at(
                                &format!("{p}.message-sizes[{j}]"),
                                format!("must be at least 1 byte, got {}", b.0),
                            ));
                        }
                    }
                    v.iter().map(|b| b.0).collect()
                }
            },
            incasts: count(self.cx, &format!("{p}.incasts"), a.incasts.unwrap_or(60), 1)?,
            period_s: self.positive(&format!("{p}.period"), Some(a.period.map_or(1e-3, |d| d.0)), "duration")?,
        };
        let flows = (inc.incasts * inc.fanin) as f64;
        let what = format!("`{p}`: {} messages", format_count(flows));
        self.fits(
            &format!("{p}.incasts"),
            what,
            flows,
            task_overhead_bytes(inc.incasts as f64, flows),
            out,
            "use fewer incasts",
        )?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
        inc.tasks(self.topo, &mut rng).map_err(|e| self.gen(p, e))
    }

    /// A `shuffle-job` table: one task at time 0 (no `rate`, `duration` or
    /// `tasks`).
    pub(super) fn shuffle_job(
        &self,
        p: &str,
        a: &AppTable,
        set: &[(&str, bool)],
        out: &Workload,
    ) -> Result<TaskDag, ConfigError> {
        let keys = ["nodes", "first-rack", "bytes-per-pair", "flows-per-pair", "placement", "pattern"];
        self.only(p, "shuffle-job", set, &keys)?;
        let nodes = a.nodes.ok_or_else(|| self.at(p, "needs `nodes` (servers in the job)"))?;
        let name = |key: &str, v: Option<&str>, names: &[&str]| -> Result<Option<String>, ConfigError> {
            match v {
                Some(x) if !names.contains(&x) => {
                    Err(self.at(&format!("{p}.{key}"), format!("unknown {key} `{x}`; known: {}", names.join(", "))))
                }
                v => Ok(v.map(str::to_string)),
            }
        };
        let placement = name("placement", a.placement.as_deref(), &JobPlacement::NAMES)?;
        let pattern = name("pattern", a.pattern.as_deref(), &JobPattern::NAMES)?;
        let first_rack = count(self.cx, &format!("{p}.first-rack"), a.first_rack.unwrap_or(0), 0)?;
        let job = ShuffleJob {
            first_rack: u32::try_from(first_rack)
                .map_err(|_| self.at(&format!("{p}.first-rack"), format!("rack {first_rack} does not exist")))?,
            nodes: count(self.cx, &format!("{p}.nodes"), nodes, 2)?,
            bytes_per_pair: a.bytes_per_pair.map_or(15e6, |b| b.0),
            flows_per_pair: count(self.cx, &format!("{p}.flows-per-pair"), a.flows_per_pair.unwrap_or(1), 1)?,
            placement: placement.as_deref().and_then(JobPlacement::from_name).unwrap_or_default(),
            pattern: pattern.as_deref().and_then(JobPattern::from_name).unwrap_or_default(),
        };
        // At most nodes x (nodes - 1) pairs: refuse before building a job the budget cannot hold.
        let flows = job.nodes as f64 * (job.nodes as f64 - 1.0) * job.flows_per_pair as f64;
        let what = format!("`{p}`: a job of up to {} flows", format_count(flows));
        self.fits(&format!("{p}.nodes"), what, flows, task_overhead_bytes(1.0, flows), out, "make the job smaller")?;
        job.task(self.topo).map_err(|e| match e {
            GenError::InvalidParameter { name, reason } => self.at(&format!("{p}.{name}"), reason),
            other => self.gen(p, other),
        })
    }

    /// A `cluster` table: its jobs (see [`ClusterJobs`]).
    /// A `chunk-store` table's parameters, with its chunks stored before
    /// the run (to `out.stores`).
    pub(super) fn chunk_store(
        &self,
        p: &str,
        a: &AppTable,
        set: &[(&str, bool)],
        seed: u64,
        out: &mut Workload,
    ) -> Result<ChunkStore, ConfigError> {
        self.only(
            p,
            "chunk-store",
            set,
            &[
                "rate",
                "duration",
                "tasks",
                "read-share",
                "sizes",
                "replicas",
                "fault-tolerance",
                "stored",
                "read-from",
                "write",
                "client-racks",
                "erasure",
            ],
        )?;
        let sizes = match &a.sizes {
            Some(t) => self.sizes(&format!("{p}.sizes"), Some(t))?,
            None => SizeDist::Uniform { lo: 100e3, hi: 1e6 },
        };
        let erasure = match a.erasure {
            Some(e) => {
                for (key, set) in [("replicas", a.replicas.is_some()), ("fault-tolerance", a.fault_tolerance.is_some())]
                {
                    if set {
                        return Err(self.at(
                            &format!("{p}.{key}"),
                            "an erasure-coded chunk store has no replicas: its stripe's chunks are one per rack (`erasure`)",
                        ));
                    }
                }
                let data = count(self.cx, &format!("{p}.erasure.data"), e.data, 1)?;
                let parity = count(self.cx, &format!("{p}.erasure.parity"), e.parity, 0)?;
                if a.write.as_deref() == Some("pipeline") {
                    return Err(self.at(
                        &format!("{p}.write"),
                        "an erasure-coded stripe's chunks are written by the client directly, not in a pipeline",
                    ));
                }
                Some(Erasure { data, parity })
            }
            None => None,
        };
        let replicas = count(self.cx, &format!("{p}.replicas"), a.replicas.unwrap_or(3), 1)?;
        let fault_tolerance =
            count(self.cx, &format!("{p}.fault-tolerance"), a.fault_tolerance.unwrap_or(replicas as i64 - 1), 0)?;
        if fault_tolerance + 1 > replicas {
            return Err(self.at(
                &format!("{p}.fault-tolerance"),
                format!("{replicas} replicas cannot span {} racks", fault_tolerance + 1),
            ));
        }
        let read_share = a.read_share.unwrap_or(0.7);
        if !(0.0..=1.0).contains(&read_share) {
            return Err(
                self.at(&format!("{p}.read-share"), format!("must be a probability in [0, 1], got {read_share}"))
            );
        }
        let read_stored_only = match a.read_from.as_deref() {
            None | Some("all") => false,
            Some("stored") => true,
            Some(o) => return Err(self.at(&format!("{p}.read-from"), format!("unknown `{o}`; known: all, stored"))),
        };
        let direct = match a.write.as_deref() {
            None | Some("direct") => true,
            Some("pipeline") => false,
            Some(o) => return Err(self.at(&format!("{p}.write"), format!("unknown `{o}`; known: direct, pipeline"))),
        };
        let stored = count(self.cx, &format!("{p}.stored"), a.stored.unwrap_or(20_000), 0)?;
        if stored == 0 && read_share > 0.0 {
            return Err(self
                .at(&format!("{p}.stored"), "reads need chunks stored before the run: at least 1, or read-share = 0"));
        }
        let cs = ChunkStore { read_share, sizes, replicas, fault_tolerance, direct, read_stored_only, stored, erasure };
        cs.validate().map_err(|e| self.gen(p, e))?;
        let racks = self.topo.hosts().iter().map(|h| h.rack).collect::<std::collections::BTreeSet<_>>().len();
        let (pieces, span) = cs.layout();
        if span > racks {
            let (key, what) = match erasure {
                Some(_) => ("erasure", format!("a stripe of {pieces} chunks")),
                None => ("fault-tolerance", "replicas".to_string()),
            };
            return Err(self.at(&format!("{p}.{key}"), format!("{what} in {span} racks, the datacenter has {racks}")));
        }
        // Reads pick among every chunk-store's chunks, so a read's branches
        // (one replica, or a stripe's data chunks) must suit them all.
        let branches = |e: Option<Erasure>| e.map_or(1, |e| e.data);
        if out.stores.first().is_some_and(|o| branches(o.erasure) != branches(erasure)) {
            return Err(self.at(
                &format!("{p}.erasure"),
                "the `chunk-store` apps of a workload read alike (a read picks among all their chunks): \
                 the same `erasure.data`, or all replicated",
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0057_07ED);
        out.stores.push(ChunkStoreRun {
            replicas: pieces,
            min_racks: span,
            erasure,
            chunks: cs.stored_chunks(&mut rng),
        });
        Ok(cs)
    }

    /// The hosts of the racks listed at `key`, in list order; a rack that
    /// does not exist is an error at its entry.
    pub(super) fn rack_list_hosts(&self, key: &str, rs: &[i64]) -> Result<Vec<u32>, ConfigError> {
        let racks = self.topo.racks().len() as i64;
        let mut v = Vec::new();
        for (j, &r) in rs.iter().enumerate() {
            if !(0..racks).contains(&r) {
                return Err(
                    self.at(&format!("{key}[{j}]"), format!("rack {r} does not exist (racks 0..{})", racks - 1))
                );
            }
            v.extend(rack_hosts(self.topo, r as u32));
        }
        Ok(v)
    }

    /// A `chunk-store` table's client hosts: its `client-racks`, else the
    /// hosts of racks without disks, else every host.
    pub(super) fn chunk_clients(&self, p: &str, a: &AppTable) -> Result<Vec<u32>, ConfigError> {
        if let Some(rs) = &a.client_racks {
            return self.rack_list_hosts(&format!("{p}.client-racks"), rs);
        }
        let n = self.topo.hosts().len() as u32;
        let diskless: Vec<u32> = (0..n)
            .filter(|&h| {
                let rack = self.topo.hosts()[h as usize].rack;
                rack_hosts(self.topo, rack).all(|x| netheat_workloads::storage::disk_write_bps(self.topo, x).is_none())
            })
            .collect();
        Ok(if diskless.is_empty() { (0..n).collect() } else { diskless })
    }

    pub(super) fn cluster(
        &self,
        p: &str,
        a: &AppTable,
        set: &[(&str, bool)],
        seed: u64,
    ) -> Result<ClusterWorkload, ConfigError> {
        let keys = [
            "duration",
            "cpu-load",
            "max-tasks-per-job",
            "max-cores-per-task",
            "memory-per-core",
            "task-mean",
            "bandwidth-median-per-core",
            "bandwidth-sigma",
            "heavy-share",
            "heavy-factor",
            "estimate-sigma",
            "peak-factor",
            "missing-estimate-share",
            "drift-sigma",
            "drift-share",
            "latency-sensitive-share",
            "queries",
            "query-period",
            "jobs",
            "time-scale",
        ];
        self.only(p, "cluster", set, &keys)?;
        let trace = match a.jobs.as_deref() {
            None => {
                if a.time_scale.is_some() {
                    return Err(self.at(&format!("{p}.time-scale"), "is used with `jobs` (a trace) only"));
                }
                None
            }
            Some(name) => {
                for &(key, given) in set {
                    if given
                        && ["cpu-load", "max-tasks-per-job", "max-cores-per-task", "memory-per-core", "task-mean"]
                            .contains(&key)
                    {
                        return Err(self.at(&format!("{p}.{key}"), "does not apply when the jobs come from `jobs`"));
                    }
                }
                Some(std::sync::Arc::new(self.trace_jobs(p, name, a.time_scale)?))
            }
        };
        let duration = self.duration(p, a.duration)?;
        let d = ClusterJobs::default();
        let small = |key: &str, v: Option<i64>, dflt: u32| -> Result<u32, ConfigError> {
            match v {
                None => Ok(dflt),
                Some(x) => u32::try_from(count(self.cx, &format!("{p}.{key}"), x, 1)?)
                    .map_err(|_| self.at(&format!("{p}.{key}"), format!("{x} is too many"))),
            }
        };
        let queries = match &a.queries {
            None => d.queries.clone(),
            Some(qs) => {
                let mut v = Vec::with_capacity(qs.len());
                for (k, q) in qs.iter().enumerate() {
                    let key = format!("{p}.queries[{k}]");
                    for (n, b) in
                        [("partition", q.partition.0), ("intermediate", q.intermediate.0), ("output", q.output.0)]
                    {
                        if !(b.is_finite() && b >= 0.0) {
                            return Err(self.at(&format!("{key}.{n}"), "must be 0 bytes or more"));
                        }
                    }
                    if !(q.compute.0.is_finite() && q.compute.0 >= 0.0) {
                        return Err(self.at(&format!("{key}.compute"), "must be 0 s or more"));
                    }
                    v.push(QueryType {
                        name: q.name.clone(),
                        workers: count(self.cx, &format!("{key}.workers"), q.workers, 1)?,
                        partition_bytes: q.partition.0,
                        intermediate_bytes: q.intermediate.0,
                        output_bytes: q.output.0,
                        compute_s: q.compute.0,
                        worker_cores: small("worker-cores", q.worker_cores, 1)?,
                    });
                }
                v
            }
        };
        let cj = ClusterJobs {
            trace,
            cpu_load: a.cpu_load.unwrap_or(d.cpu_load),
            tasks_max: small("max-tasks-per-job", a.max_tasks_per_job, d.tasks_max)?,
            cores_max: small("max-cores-per-task", a.max_cores_per_task, d.cores_max)?,
            memory_per_core: a.memory_per_core.map_or(d.memory_per_core, |b| b.0),
            task_mean_s: a.task_mean.map_or(d.task_mean_s, |x| x.0),
            bw_median_per_core: a.bandwidth_median_per_core.map_or(d.bw_median_per_core, |x| x.0),
            bw_sigma: a.bandwidth_sigma.unwrap_or(d.bw_sigma),
            heavy_share: a.heavy_share.unwrap_or(d.heavy_share),
            heavy_factor: a.heavy_factor.unwrap_or(d.heavy_factor),
            estimate_sigma: a.estimate_sigma.unwrap_or(d.estimate_sigma),
            peak_factor: a.peak_factor.unwrap_or(d.peak_factor),
            missing_estimate_share: a.missing_estimate_share.unwrap_or(d.missing_estimate_share),
            drift_sigma: a.drift_sigma.unwrap_or(d.drift_sigma),
            drift_share: a.drift_share.unwrap_or(d.drift_share),
            latency_sensitive_share: a.latency_sensitive_share.unwrap_or(d.latency_sensitive_share),
            queries,
            query_period_s: a.query_period.map_or(d.query_period_s, |x| x.0),
        };
        if let Some(q) = cj.queries.iter().find(|q| q.workers > self.topo.hosts().len()) {
            return Err(self.at(
                &format!("{p}.queries"),
                format!(
                    "query `{}` has {} workers; the datacenter has {} hosts",
                    q.name,
                    q.workers,
                    self.topo.hosts().len()
                ),
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        cj.generate(self.topo, duration, &mut rng).map_err(|e| match e {
            GenError::InvalidParameter { name, reason } => self.at(&format!("{p}.{name}"), reason),
            other => self.gen(p, other),
        })
    }

    /// The jobs of the job table `name` of app table `p`: rows grouped by
    /// job id, a job arriving at its earliest row's submit time times
    /// `time_scale`, in first-row order.
    pub(super) fn trace_jobs(
        &self,
        p: &str,
        name: &str,
        time_scale: Option<f64>,
    ) -> Result<Vec<netheat_workloads::apps::cluster::TraceJob>, ConfigError> {
        use netheat_workloads::apps::cluster::{TraceJob, TraceTask};
        let scale = time_scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(self.at(&format!("{p}.time-scale"), format!("must be positive, got {scale}")));
        }
        let rows =
            self.dataset(&format!("{p}.jobs"), name, netheat_data::load_cloudsimpy_jobs, netheat_data::read_jobs_file)?;
        let mut index: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
        let mut jobs: Vec<TraceJob> = Vec::new();
        for r in rows {
            let k = *index.entry(r.job_id).or_insert_with(|| {
                jobs.push(TraceJob { start_s: f64::INFINITY, tasks: Vec::new() });
                jobs.len() - 1
            });
            let j = &mut jobs[k];
            j.start_s = j.start_s.min(r.submit_time_s * scale);
            j.tasks.push(TraceTask {
                cores: r.cpu,
                memory_share: r.memory,
                duration_s: r.duration_s,
                instances: r.instances,
            });
        }
        Ok(jobs)
    }

    /// How a `file-write`, a `write-job` or a `coflow` with `output-ratio`
    /// writes its files: `block`, `replicas` and `fault-tolerance`.
    pub(super) fn cfs_write(&self, p: &str, a: &AppTable) -> Result<CfsWrite, ConfigError> {
        let d = CfsWrite::default();
        let cw = CfsWrite {
            block_bytes: a.block.map_or(d.block_bytes, |x| x.0),
            replicas: count(self.cx, &format!("{p}.replicas"), a.replicas.unwrap_or(d.replicas as i64), 1)?,
            fault_tolerance: count(
                self.cx,
                &format!("{p}.fault-tolerance"),
                a.fault_tolerance.unwrap_or(d.fault_tolerance as i64),
                0,
            )?,
            default_disk_write_bps: None,
        };
        if !(cw.block_bytes.is_finite() && cw.block_bytes > 0.0) {
            return Err(self.at(&format!("{p}.block"), "must be more than 0 bytes"));
        }
        if cw.fault_tolerance + 1 > cw.replicas {
            return Err(self.at(
                &format!("{p}.fault-tolerance"),
                format!("{} replicas cannot span {} racks", cw.replicas, cw.fault_tolerance + 1),
            ));
        }
        Ok(cw)
    }
}
