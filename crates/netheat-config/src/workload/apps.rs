//! `[[app]]` tables: each kind's keys checked, then its tasks drawn.

use netheat_core::budget::{self, format_count, format_number, task_overhead_bytes};
use netheat_topology::StorageKind;
use netheat_workloads::apps::coflow::WriteJobs;
use netheat_workloads::apps::compute::{ComputeJobs, RandomPlacement};
use netheat_workloads::apps::memcache::Memcache;
use netheat_workloads::apps::partition_aggregate::PartitionAggregate;
use netheat_workloads::apps::shuffle::{DataParallel, Shuffle};
use netheat_workloads::apps::storage_ops::Retrieval;
use netheat_workloads::apps::{choose, poisson_starts_n};
use netheat_workloads::{FlowCap, SizeDist, TaskDag};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{rack_shuffle, AppKind, AppTable, TaskBuilder, Wcx, Workload};
use crate::cx::count;
use crate::error::ConfigError;
use crate::units::{Bytes, Duration};

impl Wcx<'_> {
    pub(super) fn app(
        &self,
        i: usize,
        a: &AppTable,
        seed: u64,
        out: &mut Workload,
    ) -> Result<Vec<(f64, TaskDag)>, ConfigError> {
        let p = format!("app[{i}]");
        let set = present!(a,
            rate => "rate", duration => "duration", tasks => "tasks", stages => "stages", request => "request",
            response => "response", selectivity => "selectivity", compute => "compute",
            mid_aggregators => "mid-aggregators", mid_host => "mid-host", mid_compute => "mid-compute", mid_response => "mid-response",
            chunk => "chunk", servers => "servers", device => "device", bytes_per_pair => "bytes-per-pair",
            mappers => "mappers", reducers => "reducers", workers => "workers", iterations => "iterations",
            service => "service", server_racks => "server-racks", client_racks => "client-racks", dataset => "dataset", time_scale => "time-scale",
            bytes_scale => "bytes-scale", output_ratio => "output-ratio", precalculated => "precalculated",
            file_size => "file-size", block => "block", replicas => "replicas", fault_tolerance => "fault-tolerance",
            tasks_per_job => "tasks-per-job", cores_per_task => "cores-per-task", memory_per_task => "memory-per-task",
            peers => "peers", task_duration => "task-duration", bandwidth_per_core => "bandwidth-per-core",
            drift_sigma => "drift-sigma", nodes => "nodes", first_rack => "first-rack",
            flows_per_pair => "flows-per-pair", placement => "placement", pattern => "pattern",
            task_sizes => "task-sizes", structure => "structure", fanout => "fanout", flow_cv => "flow-cv",
            load => "load", aggregators => "aggregators", batch => "batch", task_size => "task-size",
            client_queue => "client-queue", fanin => "fanin",
            message_sizes => "message-sizes", incasts => "incasts", period => "period",
            mean_file_blocks => "mean-file-blocks", cpu_load => "cpu-load",
            flow_size_range => "flow-size-range", max_tasks_per_job => "max-tasks-per-job", max_cores_per_task => "max-cores-per-task",
            memory_per_core => "memory-per-core", task_mean => "task-mean",
            bandwidth_median_per_core => "bandwidth-median-per-core", bandwidth_sigma => "bandwidth-sigma",
            heavy_share => "heavy-share", heavy_factor => "heavy-factor", estimate_sigma => "estimate-sigma",
            peak_factor => "peak-factor", missing_estimate_share => "missing-estimate-share",
            drift_share => "drift-share", latency_sensitive_share => "latency-sensitive-share",
            queries => "queries", query_period => "query-period", jobs => "jobs",
            read_share => "read-share", sizes => "sizes", stored => "stored", read_from => "read-from", write => "write", erasure => "erasure",
        );
        let limit = match a.tasks {
            Some(n) => count(self.cx, &format!("{p}.tasks"), n, 1)?,
            None => usize::MAX,
        };
        if a.kind == AppKind::Coflow {
            let mut keys =
                vec!["dataset", "time-scale", "bytes-scale", "duration", "tasks", "output-ratio", "precalculated"];
            if a.output_ratio.is_some() {
                keys.extend(["block", "replicas", "fault-tolerance"]);
            }
            self.only(&p, "coflow", &set, &keys)?;
            if a.precalculated == Some(true) {
                out.precalculated_apps.push(i);
            }
            let mut mapped =
                self.coflows(&p, a.dataset.as_deref(), (a.time_scale, a.bytes_scale), a.duration, seed, out)?;
            if let Some(ratio) = a.output_ratio {
                let key = format!("{p}.output-ratio");
                if !(ratio.is_finite() && ratio >= 0.0) {
                    return Err(self.at(&key, format!("must be a number >= 0, got {ratio}")));
                }
                let cw = self.cfs_write(&p, a)?;
                mapped.tasks.truncate(limit);
                mapped.reducers.truncate(limit);
                let received: f64 = mapped.reducers.iter().flatten().map(|r| r.bytes).sum();
                let blocks =
                    received * ratio / cw.block_bytes + mapped.reducers.iter().map(Vec::len).sum::<usize>() as f64;
                let what = format!("`{p}`: the shuffles' output writes, about {} blocks", format_count(blocks));
                self.fits(
                    &key,
                    what,
                    blocks * cw.replicas as f64,
                    task_overhead_bytes(0.0, blocks * (cw.replicas + 1) as f64),
                    out,
                    "write less with a smaller `output-ratio`",
                )?;
                mapped.write_outputs(self.topo, &cw, ratio, seed).map_err(|e| self.gen(&p, e))?;
            }
            return Ok(mapped.tasks.into_iter().take(limit).map(|(s, _, d)| (s, d)).collect());
        }
        if a.kind == AppKind::ShuffleJob {
            return self.shuffle_job(&p, a, &set, out).map(|dag| vec![(0.0, dag)]);
        }
        if a.kind == AppKind::Cluster {
            let jobs = self.cluster(&p, a, &set, seed)?;
            out.clusters.push((i, jobs));
            return Ok(Vec::new());
        }
        if a.kind == AppKind::Aggregation {
            return self.aggregation(&p, a, &set, seed, out);
        }
        if a.kind == AppKind::Incast {
            return self.incast(&p, a, &set, seed, out);
        }
        let common = ["rate", "duration", "tasks"];
        let rate = self.positive(&format!("{p}.rate"), a.rate, "rate (tasks/s)")?;
        let duration = self.duration(&p, a.duration)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED);
        // Flows and steps of one task, and the key that sets them.
        let per_task: (f64, f64, String);
        let others = |k: usize| (self.topo.hosts_per_rack() as f64 - 1.0).max(0.0) * k as f64;
        let b = |v: Option<Bytes>, d: f64| v.map_or(d, |x| x.0);
        let s = |v: Option<Duration>, d: f64| v.map_or(d, |x| x.0);
        let allow = |extra: &[&'static str]| -> Vec<&'static str> { common.iter().chain(extra).copied().collect() };
        let mut build: TaskBuilder<'_> = match a.kind {
            AppKind::PartitionAggregate => {
                let stages = a.stages.unwrap_or(1);
                let mut keys = allow(&["stages", "request", "response", "selectivity", "compute"]);
                if stages == 2 {
                    keys.extend(["mid-aggregators", "mid-compute", "mid-response"]);
                } else if stages != 1 {
                    return Err(self.at(&format!("{p}.stages"), format!("must be 1 or 2, got {stages}")));
                }
                self.only(&p, "partition-aggregate", &set, &keys)?;
                let d = PartitionAggregate::default();
                let pa = PartitionAggregate {
                    request_bytes: b(a.request, d.request_bytes),
                    response_bytes: b(a.response, d.response_bytes),
                    selectivity: a.selectivity.unwrap_or(d.selectivity),
                    compute_s: s(a.compute, d.compute_s),
                    mid_aggregators: match a.mid_aggregators {
                        Some(n) => count(self.cx, &format!("{p}.mid-aggregators"), n, 1)?,
                        None => d.mid_aggregators,
                    },
                    mid_compute_s: s(a.mid_compute, d.mid_compute_s),
                    mid_response_bytes: b(a.mid_response, d.mid_response_bytes),
                };
                per_task = if stages == 1 {
                    (others(2), others(3), p.clone())
                } else {
                    let m = pa.mid_aggregators as f64;
                    (m * (2.0 + others(2)), m * (3.0 + others(3)), format!("{p}.mid-aggregators"))
                };
                let topo = self.topo;
                if stages == 1 {
                    Box::new(move |r| pa.random_one_stage(topo, r))
                } else {
                    Box::new(move |r| pa.random_two_stage(topo, r))
                }
            }
            AppKind::Retrieval => {
                self.only(&p, "retrieval", &set, &allow(&["chunk", "servers", "device"]))?;
                let device = match a.device.as_deref() {
                    None => None,
                    Some("hdd") => Some(StorageKind::Hdd),
                    Some("ssd") => Some(StorageKind::Ssd),
                    Some("ram") => Some(StorageKind::Ram),
                    Some(o) => {
                        return Err(
                            self.at(&format!("{p}.device"), format!("unknown device `{o}`; known: hdd, ram, ssd"))
                        )
                    }
                };
                let rt = Retrieval {
                    chunk_bytes: b(a.chunk, 1e6),
                    k: count(self.cx, &format!("{p}.servers"), a.servers.unwrap_or(6), 1)?,
                    device,
                };
                per_task = (rt.k as f64, 2.0 * rt.k as f64, format!("{p}.servers"));
                let topo = self.topo;
                Box::new(move |r| rt.random_task(topo, r))
            }
            AppKind::Shuffle => {
                self.only(&p, "shuffle", &set, &allow(&["bytes-per-pair", "mappers", "reducers"]))?;
                let sh = Shuffle {
                    bytes_per_pair: b(a.bytes_per_pair, 15e6),
                    mappers: count(self.cx, &format!("{p}.mappers"), a.mappers.unwrap_or(10), 1)?,
                    reducers: count(self.cx, &format!("{p}.reducers"), a.reducers.unwrap_or(10), 1)?,
                };
                let pairs = sh.mappers as f64 * sh.reducers as f64;
                let key = if sh.reducers > sh.mappers { "reducers" } else { "mappers" };
                per_task = (pairs, pairs, format!("{p}.{key}"));
                let topo = self.topo;
                Box::new(move |r| sh.random_task(topo, r))
            }
            AppKind::DataParallel => {
                self.only(&p, "data-parallel", &set, &allow(&["bytes-per-pair", "compute", "workers", "iterations"]))?;
                let dp = DataParallel {
                    bytes_per_pair: b(a.bytes_per_pair, 1e6),
                    compute_s: s(a.compute, 0.0),
                    iterations: count(self.cx, &format!("{p}.iterations"), a.iterations.unwrap_or(1), 1)?,
                };
                let workers = count(self.cx, &format!("{p}.workers"), a.workers.unwrap_or(8), 2)?;
                let (w, it) = (workers as f64, dp.iterations as f64);
                let key = if dp.iterations > workers { "iterations" } else { "workers" };
                per_task = (it * w * (w - 1.0), it * (w * w + 1.0), format!("{p}.{key}"));
                let topo = self.topo;
                let all: Vec<u32> = (0..topo.hosts().len() as u32).collect();
                if workers > all.len() {
                    return Err(self.at(
                        &format!("{p}.workers"),
                        format!("{workers} workers but the topology has {} hosts", all.len()),
                    ));
                }
                Box::new(move |r| {
                    let w = choose(r, &all, workers).expect("checked above");
                    dp.task(topo, &w)
                })
            }
            AppKind::Memcache => {
                self.only(
                    &p,
                    "memcache",
                    &set,
                    &allow(&["request", "response", "service", "server-racks", "client-racks"]),
                )?;
                let d = Memcache::default();
                let mc = Memcache {
                    request_bytes: b(a.request, d.request_bytes),
                    response_bytes: b(a.response, d.response_bytes),
                    service_s: s(a.service, d.service_s),
                };
                per_task = (2.0, 3.0, p.clone());
                let hosts_of = |key: &str, rs: &Option<Vec<i64>>| -> Result<Vec<u32>, ConfigError> {
                    match rs {
                        None => Ok((0..self.topo.hosts().len() as u32).collect()),
                        Some(rs) => self.rack_list_hosts(&format!("{p}.{key}"), rs),
                    }
                };
                let servers = hosts_of("server-racks", &a.server_racks)?;
                let topo = self.topo;
                match &a.client_racks {
                    None => Box::new(move |r| mc.random_task(topo, &servers, r)),
                    Some(_) => {
                        let clients = hosts_of("client-racks", &a.client_racks)?;
                        Box::new(move |r| mc.random_task_between(topo, &clients, &servers, r))
                    }
                }
            }
            AppKind::ChunkStore => {
                let cs = self.chunk_store(&p, a, &set, seed, out)?;
                // A read: one disk access and one flow; a write: the
                // request, and a flow and a disk write per replica.
                let r = cs.replicas as f64;
                per_task = (r.max(1.0), (1.0 + 2.0 * r).max(2.0), format!("{p}.replicas"));
                let topo = self.topo;
                let clients = self.chunk_clients(&p, a)?;
                let mut op = 0u64;
                Box::new(move |rng| {
                    op += 1;
                    cs.op(topo, &clients, op - 1, rng)
                })
            }
            AppKind::FileWrite => {
                self.only(
                    &p,
                    "file-write",
                    &set,
                    &allow(&["file-size", "block", "replicas", "fault-tolerance", "mean-file-blocks"]),
                )?;
                let cw = self.cfs_write(&p, a)?;
                if a.file_size.is_some() && a.mean_file_blocks.is_some() {
                    return Err(
                        self.at(&format!("{p}.mean-file-blocks"), "give `file-size` or `mean-file-blocks`, not both")
                    );
                }
                // Files of a fixed size, or of 1 + G blocks (P(G >= j) = q^j,
                // mean q / (1 - q) = m - 1).
                let (size, q) = match a.mean_file_blocks {
                    Some(m) => {
                        if !(m.is_finite() && m >= 1.0) {
                            return Err(self.at(&format!("{p}.mean-file-blocks"), "must be a number >= 1"));
                        }
                        (m * cw.block_bytes, (m - 1.0) / m)
                    }
                    None => (b(a.file_size, 1024.0 * 1024.0 * 1024.0), 0.0),
                };
                if !(size.is_finite() && size > 0.0) {
                    return Err(self.at(&format!("{p}.file-size"), "must be more than 0 bytes"));
                }
                let blocks = (size / cw.block_bytes).ceil();
                per_task = (blocks * cw.replicas as f64, blocks * (cw.replicas + 1) as f64, format!("{p}.file-size"));
                let topo = self.topo;
                let n = topo.hosts().len() as u32;
                let geometric = a.mean_file_blocks.is_some();
                Box::new(move |r| {
                    use rand::Rng;
                    let writer = r.gen_range(0..n);
                    let bytes = if geometric {
                        let u: f64 = 1.0 - r.gen::<f64>();
                        let extra = if q > 0.0 { (u.ln() / q.ln()).floor() } else { 0.0 };
                        (1.0 + extra) * cw.block_bytes
                    } else {
                        size
                    };
                    cw.task(topo, writer, bytes, r).map(|w| w.dag)
                })
            }
            AppKind::WriteJob => {
                self.only(
                    &p,
                    "write-job",
                    &set,
                    &allow(&["dataset", "bytes-scale", "block", "replicas", "fault-tolerance"]),
                )?;
                let cw = self.cfs_write(&p, a)?;
                let trace = self.coflow_trace(&format!("{p}.dataset"), a.dataset.as_deref())?;
                let Some(scale) = a.bytes_scale else {
                    return Err(self.at(
                        &format!("{p}.bytes-scale"),
                        "is required: bytes written per byte of the shuffle a job takes its shape from",
                    ));
                };
                if !(scale.is_finite() && scale > 0.0) {
                    return Err(self.at(&format!("{p}.bytes-scale"), format!("must be positive, got {scale}")));
                }
                let jobs = WriteJobs {
                    shapes: trace.coflows.iter().map(|c| rack_shuffle(c, 1.0, 1.0)).collect(),
                    bytes_scale: scale,
                    write: cw,
                };
                let flows = jobs.mean_flows();
                per_task = (flows, flows * 4.0 / 3.0, format!("{p}.bytes-scale"));
                let topo = self.topo;
                Box::new(move |r| jobs.random_task(topo, r))
            }
            AppKind::ComputeJob => {
                let keys = [
                    "tasks-per-job",
                    "cores-per-task",
                    "memory-per-task",
                    "peers",
                    "task-duration",
                    "bandwidth-per-core",
                    "drift-sigma",
                ];
                self.only(&p, "compute-job", &set, &allow(&keys))?;
                let d = ComputeJobs::default();
                let cj = ComputeJobs {
                    tasks: count(self.cx, &format!("{p}.tasks-per-job"), a.tasks_per_job.unwrap_or(d.tasks as i64), 1)?,
                    cores_per_task: match a.cores_per_task {
                        None => d.cores_per_task,
                        Some(c) => u32::try_from(count(self.cx, &format!("{p}.cores-per-task"), c, 1)?)
                            .map_err(|_| self.at(&format!("{p}.cores-per-task"), format!("{c} cores is too many")))?,
                    },
                    memory_per_task_bytes: b(a.memory_per_task, d.memory_per_task_bytes),
                    bw_per_core: match a.bandwidth_per_core {
                        None => d.bw_per_core,
                        Some(bw) if bw.0.is_finite() && bw.0 > 0.0 => SizeDist::Constant(bw.0),
                        Some(bw) => {
                            return Err(self.at(
                                &format!("{p}.bandwidth-per-core"),
                                format!("must be positive, got {} bit/s", bw.0),
                            ))
                        }
                    },
                    drift_sigma: a.drift_sigma.unwrap_or(d.drift_sigma),
                    duration_s: s(a.task_duration, d.duration_s),
                    peers: count(self.cx, &format!("{p}.peers"), a.peers.unwrap_or(d.peers as i64), 0)?,
                };
                if !(cj.memory_per_task_bytes.is_finite() && cj.memory_per_task_bytes >= 0.0) {
                    return Err(self.at(&format!("{p}.memory-per-task"), "must be 0 bytes or more"));
                }
                if !(cj.drift_sigma.is_finite() && cj.drift_sigma >= 0.0) {
                    return Err(
                        self.at(&format!("{p}.drift-sigma"), format!("must be 0 or more, got {}", cj.drift_sigma))
                    );
                }
                if !(cj.duration_s.is_finite() && cj.duration_s > 0.0) {
                    return Err(
                        self.at(&format!("{p}.task-duration"), format!("must be positive, got {} s", cj.duration_s))
                    );
                }
                if cj.peers >= cj.tasks {
                    let key = if a.peers.is_some() { format!("{p}.peers") } else { format!("{p}.tasks-per-job") };
                    return Err(self.at(
                        &key,
                        format!("each task sends to {} other tasks of its job, which has {}", cj.peers, cj.tasks),
                    ));
                }
                let fit = self
                    .topo
                    .hosts()
                    .iter()
                    .filter(|h| h.cores >= cj.cores_per_task && h.memory_bytes >= cj.memory_per_task_bytes)
                    .count();
                if fit < cj.tasks {
                    return Err(self.at(
                        &format!("{p}.tasks-per-job"),
                        format!(
                            "a job's {} tasks run on distinct hosts with {} cores and {:.0} bytes of memory; {fit} hosts have them",
                            cj.tasks, cj.cores_per_task, cj.memory_per_task_bytes
                        ),
                    ));
                }
                let flows = (cj.tasks * cj.peers) as f64;
                per_task = (flows, flows, format!("{p}.tasks-per-job"));
                let topo = self.topo;
                // Each job on distinct uniform hosts with room for one task:
                // the generator does not know which jobs still run; a
                // `[placement]` policy tracks that and places them again.
                Box::new(move |r| cj.job(topo, &mut RandomPlacement::default(), r).map(|j| j.dag))
            }
            AppKind::Coflow | AppKind::ShuffleJob | AppKind::Aggregation | AppKind::Incast | AppKind::Cluster => {
                unreachable!("handled above")
            }
        };
        // Estimate before drawing anything: tasks times their flows and steps.
        let (flows, steps, task_key) = per_task;
        let task_bytes = flows * budget::flow_bytes() as f64 + task_overhead_bytes(1.0, steps);
        let expected = (rate * duration).min(limit as f64);
        let budget = self.budget()?;
        let (key, hint) = if task_bytes > budget {
            (
                task_key.clone(),
                format!("make each task smaller (`{}`)", task_key.rsplit('.').next().unwrap_or(&task_key)),
            )
        } else if a.tasks.is_some() && (limit as f64) < rate * duration {
            (format!("{p}.tasks"), format!("lower `tasks` ({limit})"))
        } else if rate * task_bytes > budget {
            (format!("{p}.rate"), format!("lower `rate` ({})", format_number(rate)))
        } else {
            (self.duration_key(&p, a.duration), format!("lower `duration` ({} s) or `rate`", format_number(duration)))
        };
        let what = format!(
            "`{p}`: about {} {} of {} flows",
            format_count(expected.round()),
            if expected.round() == 1.0 { "task" } else { "tasks" },
            format_count(flows)
        );
        self.fits(&key, what, expected * flows, task_overhead_bytes(expected, expected * steps), out, &hint)?;
        let starts = poisson_starts_n(rate, duration, seed, limit).map_err(|e| self.gen(&p, e))?;
        // Hard cap while building, in case the estimate was off.
        let cap = FlowCap::current()?;
        let mut total = out.flows.len() + out.tasks.iter().map(|t| t.2.num_flows()).sum::<usize>();
        let mut tasks = Vec::with_capacity(starts.len());
        for t in starts {
            let dag = build(&mut rng).map_err(|e| self.gen(&p, e))?;
            total += dag.num_flows();
            cap.check(total, &format!("the tasks of `{p}`")).map_err(|e| self.gen(&key, e))?;
            tasks.push((t, dag));
        }
        Ok(tasks)
    }
}
