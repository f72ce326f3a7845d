//! Workload files: open-loop traffic generators and application structures
//! in TOML, turned into flows and tasks on a given topology.
//!
//! ```toml
//! [workload]
//! duration = "10s"                 # default horizon of every generator
//!
//! [[traffic]]                      # open-loop flows, any number of tables
//! kind = "poisson"                 # poisson | on-off | batches | replay | coflow
//! load = 0.4                       # of the link set's capacity
//! links = "tor-uplinks"            # tor-uplinks | host-uplinks
//! sizes = { dist = "empirical", cdf = "cdf-websearch-hpcc" }
//! pattern = "inter-rack"           # uniform | inter-rack | matrix (with matrix = "<dataset>")
//! precalculated = false            # in a scenario: run alone first, then taken off link capacity
//!
//! [[app]]                          # tasks whose flows depend on each other
//! kind = "partition-aggregate"     # partition-aggregate | retrieval | shuffle | data-parallel | memcache | coflow
//!                                  # | file-write | chunk-store | compute-job | cluster | shuffle-job
//!                                  # | aggregation | incast
//! rate = 50.0                      # tasks per second (Poisson starts)
//! stages = 2
//! ```
//!
//! Every table is checked against its `kind`: a key that the kind does not
//! use is an error, as are unknown keys, bad units, impossible values and
//! dangling references (an unknown dataset, a missing trace file, a rack
//! that does not exist). Datasets are read through [`netheat_data`] from the
//! data directory given by the caller; where a key names a dataset (`cdf`,
//! `dataset`), a value with a `/` or a `.` is instead a file of the user's
//! in the same format, relative to the workload file (`cdf =
//! "./my-sizes.cdf"`, `dataset = "traces/my-coflows.txt"`), read without a
//! checksum. Each table draws from its own seed
//! (derived from the run's seed and its position), so adding a table does
//! not change what the others generate.
//!
//! Modules: [`schema`] (the serde tables), `context` (checks and lookups
//! every table shares), `traffic` (`[[traffic]]` generators), `apps`
//! (`[[app]]` kinds) and `kinds` (the app kinds with builders of their own).

/// Names of the keys set in a table, for "not used by kind" checks.
macro_rules! present {
    ($t:expr, $($field:ident => $key:literal),* $(,)?) => {
        vec![$( ($key, $t.$field.is_some()) ),*]
    };
}

mod apps;
mod context;
mod kinds;
pub mod schema;
mod traffic;

use std::path::Path;

use netheat_core::budget::{self, task_overhead_bytes};
use netheat_data::DataDir;
use netheat_topology::Topology;
use netheat_workloads::apps::chunks::ChunkStoreRun;
use netheat_workloads::apps::cluster::ClusterWorkload;
use netheat_workloads::apps::coflow::RackShuffle;
use netheat_workloads::{FlowRow, GenError, TaskDag};
use rand_chacha::ChaCha8Rng;

use crate::cx::Cx;
use crate::error::ConfigError;

pub use schema::*;

/// What a workload file produces on a topology.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Open-loop flows of every `[[traffic]]` table, sorted by start time
    /// (stable), ids `0..n`, but those of `precalculated` tables.
    pub flows: Vec<FlowRow>,
    /// Flows of the `precalculated` `[[traffic]]` tables, sorted by start
    /// time (stable), ids `0..n` of their own.
    pub background: Vec<FlowRow>,
    /// Tasks of every `[[app]]` table but `cluster`: `(start_s, table
    /// index, task)`, in table order then start order.
    pub tasks: Vec<(f64, usize, TaskDag)>,
    /// Indices of the `[[app]]` tables with `precalculated = true`: a
    /// scenario precalculates their tasks' flows that wait on nothing and
    /// makes each a pause of its precalculated time
    /// ([`TaskDag::precalculate`]).
    pub precalculated_apps: Vec<usize>,
    /// Facts a user should know (folded racks, local bytes, ...).
    pub notes: Vec<String>,
    /// Coflow bytes between a mapper and a reducer drawn on the same host,
    /// exchanged locally and not simulated.
    pub local_bytes: f64,
    /// Jobs of every `cluster` app table: `(table index, jobs)`.
    pub clusters: Vec<(usize, ClusterWorkload)>,
    /// The chunks every `chunk-store` app table had stored before the run,
    /// in table order.
    pub stores: Vec<ChunkStoreRun>,
}

impl Workload {
    /// What the memory budget charges for these flows and tasks in a run:
    /// every flow at [`budget::flow_bytes`] (the engine's and the tables'
    /// share: less when a scenario does not keep its flows), every task and
    /// step at [`budget::BYTES_PER_TASK`] and [`budget::BYTES_PER_TASK_STEP`].
    /// The tables are checked against the budget with it as they are
    /// generated; a scenario reports it as `workload_estimate_bytes`.
    pub fn estimate_bytes(&self) -> f64 {
        let task_flows: usize = self.tasks.iter().map(|t| t.2.num_flows()).sum();
        let task_steps: usize = self.tasks.iter().map(|t| t.2.steps.len()).sum();
        (self.flows.len() + task_flows) as f64 * budget::flow_bytes() as f64
            + task_overhead_bytes(self.tasks.len() as f64, task_steps as f64)
    }

    /// The same workload with the `precalculated` traffic's flows among the
    /// others (stably by start, ids renumbered): what a run outside a
    /// scenario, which has no precalculation, makes of them.
    pub fn with_background_as_flows(mut self) -> Self {
        if !self.background.is_empty() {
            self.flows.append(&mut self.background);
            self.flows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
            for (i, r) in self.flows.iter_mut().enumerate() {
                r.flow_id = i as u64;
            }
        }
        self
    }
}

/// Coflow trace sizes are in MB of 2^20 bytes, as the coflow simulators
/// that published the trace read them.
pub const COFLOW_MB: f64 = 1_048_576.0;

/// A coflow of a trace as a shuffle between racks: its times multiplied by
/// `time_scale`, its bytes (MB of [`COFLOW_MB`]) by `bytes_scale`.
fn rack_shuffle(c: &netheat_data::Coflow, time_scale: f64, bytes_scale: f64) -> RackShuffle {
    RackShuffle {
        id: u64::from(c.id),
        start_s: c.arrival_ms as f64 / 1e3 * time_scale,
        mapper_racks: c.mapper_racks.clone(),
        reducers: c.reducers.iter().map(|&(r, mb)| (r, mb * COFLOW_MB * bytes_scale)).collect(),
    }
}

/// The default coflow dataset.
pub const DEFAULT_COFLOW: &str = "coflow-fb2010";

/// Reads a workload file and generates it on `topo` with `seed`.
pub fn load_workload(path: &Path, topo: &Topology, seed: u64, data: &DataDir) -> Result<Workload, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_workload_str(&text, &file, &base, topo, seed, data)
}

/// Like [`load_workload`] from text; `file` names it in messages and
/// relative trace paths are resolved against `base`.
pub fn load_workload_str(
    text: &str,
    file: &str,
    base: &Path,
    topo: &Topology,
    seed: u64,
    data: &DataDir,
) -> Result<Workload, ConfigError> {
    let cx = Cx::new(file, text);
    let raw: WorkloadFile = toml::from_str(text).map_err(|e| cx.toml_error(&e))?;
    if raw.traffic.is_empty() && raw.app.is_empty() {
        return Err(cx.at("", "a workload needs at least one [[traffic]] or [[app]] table"));
    }
    let w = Wcx { cx: &cx, topo, data, base, default_duration: raw.workload.duration.map(|d| d.0) };
    let mut out = Workload::default();
    for (i, t) in raw.traffic.iter().enumerate() {
        let mut rows = w.traffic(i, t, table_seed(seed, 0, i), &mut out)?;
        if t.precalculated == Some(true) {
            out.background.append(&mut rows);
        } else {
            out.flows.append(&mut rows);
        }
    }
    for flows in [&mut out.flows, &mut out.background] {
        flows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        for (i, r) in flows.iter_mut().enumerate() {
            r.flow_id = i as u64;
        }
    }
    for (i, a) in raw.app.iter().enumerate() {
        for (start, dag) in w.app(i, a, table_seed(seed, 1, i), &mut out)? {
            out.tasks.push((start, i, dag));
        }
    }
    Ok(out)
}

/// Seed of table `i` of section `section` (0 traffic, 1 app): SplitMix64 of
/// the run seed and the position, so tables draw independent streams.
pub fn table_seed(seed: u64, section: u64, i: usize) -> u64 {
    let mut z = seed ^ (section << 32 | i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Draws one task of an application structure.
type TaskBuilder<'a> = Box<dyn FnMut(&mut ChaCha8Rng) -> Result<TaskDag, GenError> + 'a>;

struct Wcx<'a> {
    cx: &'a Cx<'a>,
    topo: &'a Topology,
    data: &'a DataDir,
    base: &'a Path,
    default_duration: Option<f64>,
}

/// A rack-to-rack matrix of `n` racks on a topology of `racks` racks: rack
/// `t` of the matrix becomes rack `t mod racks` (identity when the
/// topology has at least `n` racks; extra racks get no traffic).
pub fn fold_matrix(m: &[Vec<f64>], racks: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; racks]; racks];
    for (i, row) in m.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            out[i % racks][j % racks] += v;
        }
    }
    out
}
