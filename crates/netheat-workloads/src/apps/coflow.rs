//! Rack-level shuffles (such as the Facebook 2010 coflow trace) mapped onto
//! the hosts of a topology.
//!
//! A [`RackShuffle`] names the racks of its mappers and, per reducer, its
//! rack and the bytes it receives in total. On a topology, trace rack `t`
//! becomes rack `t mod R` (the identity when the topology has at least as
//! many racks as the trace; folding is reported by [`MappedShuffles::folded`]),
//! each mapper and each reducer a uniformly drawn host of its rack, and
//! every reducer receives an equal share of its bytes from every mapper, so
//! a shuffle is `mappers x reducers` flows. A mapper and a reducer drawn on
//! the same host exchange their share locally: it is counted in
//! [`MappedShuffles::local_bytes`], not simulated.
//!
//! Jobs that write to the cluster file system (Sinbad, SIGCOMM'13 section
//! 7.1's workload): [`MappedShuffles::write_outputs`] makes each shuffle a
//! MapReduce job (`mr-job`) whose reducers write their output through
//! replication pipelines once their shuffle input has arrived, and
//! [`WriteJobs`] draws write-only jobs (ingestion and preprocessing,
//! `write-job`: map tasks that write, no shuffle) whose shapes come from
//! the same trace. The scenario's storage policy places their blocks as
//! it places a `file-write`'s ([`super::cfs::WRITE_KINDS`]).

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::{Rng, RngCore};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::cfs::{uniform_rack_aware, CfsWrite};
use super::rack_hosts;
use crate::budget::FlowCap;
use crate::dag::{StepId, TaskDag};
use crate::{FlowRow, GenError};

/// One shuffle between racks.
#[derive(Debug, Clone, PartialEq)]
pub struct RackShuffle {
    /// Identifier (the trace's coflow id), copied to the flows' task id.
    pub id: u64,
    /// Start time, seconds.
    pub start_s: f64,
    /// Rack of each mapper.
    pub mapper_racks: Vec<u32>,
    /// `(rack, bytes received in total)` of each reducer.
    pub reducers: Vec<(u32, f64)>,
}

/// Shuffles placed on hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedShuffles {
    /// `(start_s, shuffle id, task)` per shuffle, in input order.
    pub tasks: Vec<(f64, u64, TaskDag)>,
    /// Bytes exchanged between a mapper and a reducer on the same host.
    pub local_bytes: f64,
    /// Whether trace racks were folded onto fewer topology racks.
    pub folded: bool,
    /// Per shuffle (as `tasks`), its reducers: host, bytes received (the
    /// local share included) and the flow steps that bring them.
    pub reducers: Vec<Vec<MappedReducer>>,
}

/// A reducer of a mapped shuffle.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedReducer {
    /// Its host.
    pub host: HostId,
    /// Bytes it receives, those from a mapper on its own host included.
    pub bytes: f64,
    /// The flow steps into it.
    pub flows: Vec<StepId>,
}

impl MappedShuffles {
    /// Flows of every shuffle.
    pub fn num_flows(&self) -> usize {
        self.tasks.iter().map(|t| t.2.num_flows()).sum()
    }

    /// The shuffles' flows as an open-loop trace (every flow starts with its
    /// shuffle, task id = shuffle id), sorted by start time, ids from 0.
    pub fn rows(&self) -> Vec<FlowRow> {
        let mut out = Vec::with_capacity(self.num_flows());
        for (start, id, dag) in &self.tasks {
            for step in &dag.steps {
                if let crate::dag::Step::Flow { src, dst, bytes, .. } = *step {
                    out.push(FlowRow {
                        flow_id: 0,
                        start_s: *start,
                        src,
                        dst,
                        bytes,
                        task_id: Some(*id),
                        priority: 0,
                        weight: 1.0,
                        rate_cap_bps: None,
                    });
                }
            }
        }
        out.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        for (i, r) in out.iter_mut().enumerate() {
            r.flow_id = i as u64;
        }
        out
    }

    /// Makes every shuffle a MapReduce job that writes its output: each
    /// reducer, once its last input flow finished, writes `output_ratio`
    /// times the bytes it received as one file through `write`'s
    /// replication pipelines (the reducer is the writer; no compute time
    /// is modelled). The tasks' kind becomes `mr-job`. Returns the bytes
    /// written (replicas not counted).
    pub fn write_outputs(
        &mut self,
        topo: &Topology,
        write: &CfsWrite,
        output_ratio: f64,
        seed: u64,
    ) -> Result<f64, GenError> {
        if !(output_ratio.is_finite() && output_ratio >= 0.0) {
            return Err(GenError::param("output_ratio", format!("{output_ratio} must be >= 0")));
        }
        let cap = FlowCap::current()?;
        let mut flows = self.num_flows();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0075_7075);
        let mut written = 0.0;
        for ((_, _, dag), reducers) in self.tasks.iter_mut().zip(&self.reducers) {
            dag.kind = "mr-job";
            for r in reducers {
                let bytes = r.bytes * output_ratio;
                flows += write.replicas * (bytes / write.block_bytes).ceil() as usize;
                cap.check(flows, "the jobs' shuffle and write flows")?;
                write.append_with(dag, topo, r.host, bytes, &r.flows, uniform_rack_aware, &mut rng)?;
                written += bytes;
            }
        }
        Ok(written)
    }
}

/// Write-only jobs (Sinbad, SIGCOMM'13 section 7.1: ingestion and
/// preprocessing jobs, map tasks only, that write what they read): a job
/// takes the shape of a shuffle drawn uniformly from `shapes` (a trace's),
/// each of its mappers becoming a task on a host of its rack that writes
/// an equal share of the shuffle's bytes times `bytes_scale` as one file,
/// all at once. The public trace has shuffles only, so their sizes and
/// widths stand in for those of the jobs that write without one.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteJobs {
    /// The shuffles whose shapes jobs take.
    pub shapes: Vec<RackShuffle>,
    /// Multiplier of a shape's bytes (its reducers' total) to the job's
    /// bytes written.
    pub bytes_scale: f64,
    /// How the files are written.
    pub write: CfsWrite,
}

impl WriteJobs {
    /// Mean flows a job has: per mapper, its file's blocks times the
    /// replicas.
    pub fn mean_flows(&self) -> f64 {
        let flows: f64 = self
            .shapes
            .iter()
            .map(|s| {
                let total: f64 = s.reducers.iter().map(|r| r.1).sum::<f64>() * self.bytes_scale;
                let per = total / s.mapper_racks.len().max(1) as f64;
                s.mapper_racks.len() as f64 * (per / self.write.block_bytes).ceil() * self.write.replicas as f64
            })
            .sum();
        flows / self.shapes.len().max(1) as f64
    }

    /// One job: a shape drawn with `rng`, its writers drawn in their
    /// racks (trace rack `t` on rack `t mod R`).
    pub fn random_task(&self, topo: &Topology, rng: &mut dyn RngCore) -> Result<TaskDag, GenError> {
        if self.shapes.is_empty() {
            return Err(GenError::param("shapes", "no shuffle to draw a job's shape from"));
        }
        if !(self.bytes_scale.is_finite() && self.bytes_scale >= 0.0) {
            return Err(GenError::param("bytes_scale", format!("{} must be >= 0", self.bytes_scale)));
        }
        let racks = topo.racks().len() as u32;
        if racks == 0 || topo.hosts_per_rack() == 0 {
            return Err(GenError::NotEnoughHosts("the topology has no hosts to place jobs on".into()));
        }
        let shape = &self.shapes[rng.gen_range(0..self.shapes.len())];
        if shape.mapper_racks.is_empty() {
            return Err(GenError::param("shapes", format!("shuffle {} has no mappers", shape.id)));
        }
        let total: f64 = shape.reducers.iter().map(|r| r.1).sum::<f64>() * self.bytes_scale;
        let per = total / shape.mapper_racks.len() as f64;
        let mut dag = TaskDag::new("write-job");
        for &t in &shape.mapper_racks {
            let r = rack_hosts(topo, t % racks);
            let host = r.start + rng.gen_range(0..r.end - r.start);
            self.write.append_with(&mut dag, topo, host, per, &[], uniform_rack_aware, rng)?;
        }
        Ok(dag)
    }
}

/// Places `shuffles` on `topo` (see the module docs), seeded.
pub fn map_rack_shuffles(topo: &Topology, shuffles: &[RackShuffle], seed: u64) -> Result<MappedShuffles, GenError> {
    let racks = topo.racks().len() as u32;
    if racks == 0 || topo.hosts_per_rack() == 0 {
        return Err(GenError::NotEnoughHosts("the topology has no hosts to place shuffles on".into()));
    }
    let cap = FlowCap::current()?;
    let mut flows = 0usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut host_in = |trace_rack: u32| -> HostId {
        let r = rack_hosts(topo, trace_rack % racks);
        r.start + rng.gen_range(0..r.end - r.start)
    };
    let mut out = MappedShuffles {
        tasks: Vec::with_capacity(shuffles.len()),
        local_bytes: 0.0,
        folded: false,
        reducers: Vec::with_capacity(shuffles.len()),
    };
    for s in shuffles {
        if !(s.start_s.is_finite() && s.start_s >= 0.0) {
            return Err(GenError::param("start_s", format!("shuffle {}: {} is not a time >= 0", s.id, s.start_s)));
        }
        if s.mapper_racks.is_empty() {
            return Err(GenError::param("mapper_racks", format!("shuffle {} has no mappers", s.id)));
        }
        out.folded |= s.mapper_racks.iter().chain(s.reducers.iter().map(|r| &r.0)).any(|&r| r >= racks);
        let mappers: Vec<HostId> = s.mapper_racks.iter().map(|&r| host_in(r)).collect();
        let mut dag = TaskDag::new("coflow");
        let mut reducers = Vec::with_capacity(s.reducers.len());
        for &(rack, bytes) in &s.reducers {
            if !(bytes.is_finite() && bytes >= 0.0) {
                return Err(GenError::param("reducers", format!("shuffle {}: {bytes} is not a size", s.id)));
            }
            let reducer = host_in(rack);
            flows += mappers.len();
            cap.check(flows, "the shuffles' flows")?;
            let share = bytes / mappers.len() as f64;
            let mut into = Vec::with_capacity(mappers.len());
            for &m in &mappers {
                if m == reducer {
                    out.local_bytes += share;
                } else {
                    into.push(dag.flow(m, reducer, share, &[]));
                }
            }
            reducers.push(MappedReducer { host: reducer, bytes, flows: into });
        }
        out.tasks.push((s.start_s, s.id, dag));
        out.reducers.push(reducers);
    }
    Ok(out)
}
