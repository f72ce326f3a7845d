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

use std::path::{Path, PathBuf};

use netheat_core::budget::{self, format_count, format_number, task_overhead_bytes};
use netheat_data::DataDir;
use netheat_topology::{StorageKind, Topology};
use netheat_workloads::apps::aggregation::{
    self, AggregationSpec, MidHost, Placement as AggPlacement, SizeLaw, Structure,
};
use netheat_workloads::apps::cfs::CfsWrite;
use netheat_workloads::apps::chunks::{ChunkStore, ChunkStoreRun};
use netheat_workloads::apps::cluster::{ClusterJobs, ClusterWorkload, QueryType};
use netheat_workloads::apps::coflow::{map_rack_shuffles, MappedShuffles, RackShuffle, WriteJobs};
use netheat_workloads::apps::compute::{ComputeJobs, RandomPlacement};
use netheat_workloads::apps::incast::Incasts;
use netheat_workloads::apps::memcache::Memcache;
use netheat_workloads::apps::partition_aggregate::PartitionAggregate;
use netheat_workloads::apps::shuffle::{DataParallel, JobPattern, JobPlacement, Shuffle, ShuffleJob};
use netheat_workloads::apps::storage_ops::Retrieval;
use netheat_workloads::apps::{choose, poisson_starts_n, rack_hosts};
use netheat_workloads::{
    read_flows_csv, Batches, FlowCap, FlowRow, GenError, Horizon, LinkSet, OnOff, Pattern, Poisson, Replay, SizeDist,
    TaskDag,
};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use crate::cx::{count, Cx};
use crate::error::ConfigError;
use crate::units::{Bandwidth, Bytes, Duration};

/// A workload file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadFile {
    /// Defaults shared by the tables.
    #[serde(default)]
    pub workload: WorkloadSection,
    /// Open-loop generators.
    #[serde(default)]
    pub traffic: Vec<TrafficTable>,
    /// Application structures.
    #[serde(default)]
    pub app: Vec<AppTable>,
}

/// `[workload]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadSection {
    /// Default horizon of every generator.
    pub duration: Option<Duration>,
    /// Free text.
    pub description: Option<String>,
}

/// `kind` of a `[[traffic]]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrafficKind {
    /// Poisson arrivals at a target load.
    Poisson,
    /// On-off bursty sources.
    OnOff,
    /// Synchronised batches.
    Batches,
    /// A flow CSV replayed.
    Replay,
    /// A rack-level coflow trace mapped onto hosts.
    Coflow,
}

/// `kind` of an `[[app]]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppKind {
    /// One- or two-stage partition-aggregate queries.
    PartitionAggregate,
    /// Parallel chunk retrieval from `k` servers.
    Retrieval,
    /// MapReduce shuffles.
    Shuffle,
    /// Data-parallel rounds with barriers.
    DataParallel,
    /// Memcache-like request/response.
    Memcache,
    /// The coflow trace, one task per coflow (completion = last flow);
    /// with `output-ratio`, MapReduce jobs (`mr-job`) whose reducers write
    /// their output to the cluster file system after their shuffle.
    Coflow,
    /// Write-only jobs (ingestion and preprocessing; the Sinbad paper's
    /// bin-5 jobs, SIGCOMM'13 §7.1): map tasks that each write a file, the
    /// job's width and bytes those of a shuffle of the coflow trace
    /// `dataset` drawn at random, times `bytes-scale`; Poisson starts at
    /// `rate`. The scenario's `[storage]` policy places the blocks.
    WriteJob,
    /// Cluster-file-system file writes: blocks through replication
    /// pipelines (replicas placed by the scenario's `[storage]` policy).
    FileWrite,
    /// Chunk store operations: reads of stored chunks and writes of new
    /// ones between client hosts and the disks of storage hosts (the
    /// hotspot paper's chunk traffic, NSDI'25 §2.2, §4.3); the scenario's
    /// `[storage]` policy places the chunks, those stored before the run
    /// included.
    ChunkStore,
    /// Long-running compute jobs: tasks requesting cores and memory, each
    /// sending rate-capped flows to peers of its job (hosts chosen by the
    /// scenario's `[placement]` policy when the job starts).
    ComputeJob,
    /// A Borg-like cluster: jobs of tasks asking cores and memory, each
    /// running for a time once placed and sending a rate-capped flow to a
    /// server in another rack, with analytical queries beside them (the
    /// hotspot paper's setting, §5.1); the scenario's `[placement]` policy
    /// schedules them, keeps tasks that fit nowhere pending and migrates
    /// tasks off hot ToRs.
    Cluster,
    /// One shuffle job on given servers, all its flows at time 0 (the
    /// Subways paper's jobs, CoNEXT'15 §8.2-8.4); completes with its last
    /// flow.
    ShuffleJob,
    /// Tasks of flows into aggregators, sized by a task-size law, arriving
    /// at a target load of the aggregators' links (the Baraat paper's
    /// workloads, SIGCOMM'14 §5.2).
    Aggregation,
    /// Trains of incasts: `fanin` senders in other racks each send one
    /// message to a receiver; one task per message (the CloudBurst slides'
    /// small-message incasts).
    Incast,
}

/// `pattern` of a generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatternName {
    /// Uniform source, uniform other destination.
    Uniform,
    /// Destination in another rack.
    InterRack,
    /// Rack pairs weighted by a traffic-matrix dataset (`matrix`).
    Matrix,
}

/// `links` of a Poisson generator: the link set whose load is targeted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinksName {
    /// ToR uplinks, up direction.
    TorUplinks,
    /// Host NIC links, up direction.
    HostUplinks,
}

/// `dist` of a size table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistName {
    /// Always `size`.
    Constant,
    /// Exponential with `mean`.
    Exponential,
    /// Bounded Pareto with `shape`, `min`, `max`.
    BoundedPareto,
    /// Log-normal with `mean` and `sigma` (of ln size).
    Lognormal,
    /// Piecewise-linear CDF from a dataset (`cdf`).
    Empirical,
    /// The built-in web-search CDF.
    WebSearch,
    /// Uniform between `min` and `max`.
    Uniform,
}

/// A size distribution, e.g. `{ dist = "bounded-pareto", shape = 1.1, min = "10KB", max = "1GB" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SizesTable {
    /// Which law.
    pub dist: DistName,
    /// `constant`: the size.
    pub size: Option<Bytes>,
    /// `exponential`, `lognormal`: the mean.
    pub mean: Option<Bytes>,
    /// `lognormal`: standard deviation of ln(size).
    pub sigma: Option<f64>,
    /// `bounded-pareto`: tail index.
    pub shape: Option<f64>,
    /// `bounded-pareto`: smallest size.
    pub min: Option<Bytes>,
    /// `bounded-pareto`: largest size.
    pub max: Option<Bytes>,
    /// `empirical`: a CDF dataset of the registry (`netheat data list`), or
    /// a file of yours (a value with a `/` or a `.`, relative to the
    /// workload file): `<bytes> <cumulative probability>` lines, the
    /// probability in [0, 1] ending at 1, `#` comments.
    pub cdf: Option<String>,
}

/// One `[[traffic]]` table; which keys apply depends on `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TrafficTable {
    /// Generator.
    pub kind: TrafficKind,
    /// `poisson`: target load in (0, 1].
    pub load: Option<f64>,
    /// `poisson`: link set of the load (default `tor-uplinks`).
    pub links: Option<LinksName>,
    /// `poisson`, `on-off`, `batches`: flow sizes.
    pub sizes: Option<SizesTable>,
    /// `poisson`, `batches`: endpoints (default `uniform`).
    pub pattern: Option<PatternName>,
    /// `pattern = "matrix"`: the traffic-matrix dataset.
    pub matrix: Option<String>,
    /// Horizon (default `[workload] duration`).
    pub duration: Option<Duration>,
    /// `poisson`: stop after this many flows instead.
    pub flows: Option<i64>,
    /// Priority class of the generated flows (lower first; default 0).
    pub priority: Option<i64>,
    /// `on-off`: mean on period.
    pub on_mean: Option<Duration>,
    /// `on-off`: mean off period.
    pub off_mean: Option<Duration>,
    /// `on-off`: flows per second of a source while on.
    pub rate_on: Option<f64>,
    /// `on-off`: source hosts (indices or names; default every host).
    pub sources: Option<Vec<String>>,
    /// `on-off`: destinations only in other racks.
    pub inter_rack: Option<bool>,
    /// `batches`: flows per batch.
    pub k: Option<i64>,
    /// `batches`: time between batches.
    pub period: Option<Duration>,
    /// `batches`, `replay`: time of the first flow.
    pub offset: Option<Duration>,
    /// `batches`: number of batches.
    pub batches: Option<i64>,
    /// `replay`: flow CSV, relative to the workload file.
    pub file: Option<String>,
    /// `replay`, `coflow`: multiplier of trace times (0.5 = twice as fast).
    pub time_scale: Option<f64>,
    /// `coflow`: multiplier of trace bytes (default 1): a cluster smaller
    /// than the trace's replays its jobs scaled down (the Sinbad paper's
    /// EC2 experiment, SIGCOMM'13 §7.1: 100 of the trace's 3,000 machines).
    pub bytes_scale: Option<f64>,
    /// `replay`: loop the trace until this time.
    pub repeat_until: Option<Duration>,
    /// `coflow`: the trace dataset (default `coflow-fb2010`), or a trace
    /// file of yours in its format (the Coflow-Benchmark text format; a
    /// value with a `/` or a `.`, relative to the workload file).
    pub dataset: Option<String>,
    /// Any kind: in a scenario, simulate this traffic alone, once, before
    /// the run, and give the run what it leaves of each link step by step
    /// (`scenario.background-step`): a background no decision of the run
    /// can change (Sinbad's simulation, SIGCOMM'13 section 7.2). Flow
    /// engine only; the run lasts at least as long as this traffic does
    /// (cut it with `scenario.duration`). `netheat workload generate` writes
    /// its flows like any other's. Default: false.
    pub precalculated: Option<bool>,
}

/// One `[[app]]` table; which keys apply depends on `kind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AppTable {
    /// Structure.
    pub kind: AppKind,
    /// Tasks per second (Poisson starts); not for `coflow`.
    pub rate: Option<f64>,
    /// Horizon (default `[workload] duration`).
    pub duration: Option<Duration>,
    /// At most this many tasks.
    pub tasks: Option<i64>,
    /// `partition-aggregate`: 1 or 2.
    pub stages: Option<i64>,
    /// `partition-aggregate`, `memcache`: request size.
    pub request: Option<Bytes>,
    /// `partition-aggregate`, `memcache`: response size.
    pub response: Option<Bytes>,
    /// `partition-aggregate`: fraction of the response sent, in [0, 1].
    pub selectivity: Option<f64>,
    /// `partition-aggregate`, `data-parallel`: compute time. `aggregation`:
    /// the mean of each sender's exponential compute time before it answers
    /// (default 0).
    pub compute: Option<Duration>,
    /// `partition-aggregate` (2 stages): mid-level aggregators.
    pub mid_aggregators: Option<i64>,
    /// `aggregation` with `structure = "two-stage"` and `placement =
    /// "rack"`: which host of its rack a mid-level aggregator is, `random`
    /// (drawn per task; the default) or `first` (the rack's first host: one
    /// mid-level aggregator per rack, whose link takes all of the rack's
    /// mid-level tasks; ours).
    pub mid_host: Option<String>,
    /// `partition-aggregate` (2 stages): mid-level compute time.
    /// `aggregation` (two-stage): a mid-level aggregator's mean compute time
    /// before it forwards (default `compute`; `"0s"`: only the workers
    /// compute, as Baraat's Figure 11 has it).
    pub mid_compute: Option<Duration>,
    /// `partition-aggregate` (2 stages): mid-level response size.
    pub mid_response: Option<Bytes>,
    /// `retrieval`: bytes per server.
    pub chunk: Option<Bytes>,
    /// `retrieval`: servers read in parallel.
    pub servers: Option<i64>,
    /// `retrieval`: charge device read time of `hdd`, `ssd` or `ram` hosts.
    pub device: Option<String>,
    /// `shuffle`, `data-parallel`, `shuffle-job`: bytes per ordered pair
    /// (`shuffle-job`: per flow).
    pub bytes_per_pair: Option<Bytes>,
    /// `shuffle-job`: servers in the job (at least 2).
    pub nodes: Option<i64>,
    /// `shuffle-job`: rack of the job's first server (default 0).
    pub first_rack: Option<i64>,
    /// `shuffle-job`: flows from each sender to each receiver (default 1).
    pub flows_per_pair: Option<i64>,
    /// `shuffle-job`: `contiguous` (consecutive servers from the first
    /// server of `first-rack`, the default) or `two-loops` (half in the
    /// Subways loop of `first-rack` from its position 0, half in the next
    /// loop; a datacenter without loops uses its clusters). `aggregation`:
    /// `rack` (the default: workers are the aggregator's rack mates),
    /// `pool` (workers from a pool spread over the datacenter) or
    /// `front-end` (the `aggregators` clients are the first hosts, each
    /// task's `fanout` servers drawn from the racks without clients; load on
    /// the clients' links or their racks' uplinks, the smaller).
    pub placement: Option<String>,
    /// `shuffle-job`: `all-to-all` (every server to every other, the
    /// default) or `into-last-rack` (the servers of the job's last rack
    /// receive from all the others).
    pub pattern: Option<String>,
    /// `shuffle`: mappers.
    pub mappers: Option<i64>,
    /// `shuffle`: reducers.
    pub reducers: Option<i64>,
    /// `data-parallel`: workers.
    pub workers: Option<i64>,
    /// `data-parallel`: rounds.
    pub iterations: Option<i64>,
    /// `memcache`: server processing time.
    pub service: Option<Duration>,
    /// `memcache`: racks holding the servers (default every rack).
    pub server_racks: Option<Vec<i64>>,
    /// `memcache`, `chunk-store`: racks holding the clients (default every
    /// rack; `chunk-store`: the racks whose hosts have no disk, else every
    /// rack).
    pub client_racks: Option<Vec<i64>>,
    /// `chunk-store`: probability that an operation reads a stored chunk
    /// (default 0.7); the others write a new one.
    pub read_share: Option<f64>,
    /// `chunk-store`: chunk sizes (default uniform 100 KB - 1 MB, the range
    /// of the hotspot paper's §4.3 request sizes).
    pub sizes: Option<SizesTable>,
    /// `chunk-store`: chunks stored before the run, placed by
    /// `storage.initial-policy` (default 20,000).
    pub stored: Option<i64>,
    /// `chunk-store`: which chunks reads pick among, uniformly: `all`
    /// (every chunk stored so far, written ones included; default) or
    /// `stored` (the chunks stored before the run only).
    pub read_from: Option<String>,
    /// `chunk-store`: `direct` (the client writes each replica itself, as
    /// Colossus clients do, §2.2; default) or `pipeline` (client → r1 → r2
    /// ..., all hops at once).
    pub write: Option<String>,
    /// `coflow`, `write-job`: the trace dataset (default `coflow-fb2010`),
    /// or a trace file of yours in its format (the Coflow-Benchmark text
    /// format; a value with a `/` or a `.`, relative to the workload file).
    pub dataset: Option<String>,
    /// `coflow`, and `cluster` with `jobs`: multiplier of trace times (0.5 =
    /// twice as fast).
    pub time_scale: Option<f64>,
    /// `coflow`: multiplier of trace bytes (default 1; the Sinbad paper's
    /// EC2 experiment scales jobs to 100 of the trace's 3,000 machines,
    /// SIGCOMM'13 §7.1). `write-job`: bytes a job writes per byte of the
    /// shuffle whose shape it takes (required).
    pub bytes_scale: Option<f64>,
    /// `coflow`: bytes each reducer writes to the cluster file system per
    /// byte it received in its shuffle, once the shuffle's last flow into
    /// it finished (default none: the tasks are shuffles only). The tasks
    /// become `mr-job`s; `block`, `replicas` and `fault-tolerance` apply
    /// as for `file-write`.
    pub output_ratio: Option<f64>,
    /// `coflow`: in a scenario, run the shuffles' flows alone, once, before
    /// the run, as `[[traffic]]`'s `precalculated` does, and in the run make
    /// each of them a pause of the time it took there: the shuffles are a
    /// background no decision of the run changes, while their jobs still
    /// wait for them (a reducer's output write starts when its shuffle
    /// input has arrived; Sinbad's simulation, SIGCOMM'13 section 7.2,
    /// precalculates the shuffles and measures the jobs). Flow engine only.
    /// Default: false.
    pub precalculated: Option<bool>,
    /// `file-write`: bytes of each file (default 1 GiB).
    pub file_size: Option<Bytes>,
    /// `file-write`, `write-job`, `coflow` with `output-ratio`: block size
    /// (default 256 MiB, HDFS's).
    pub block: Option<Bytes>,
    /// `file-write`: files of `1 + G` full blocks, `G` geometric with mean
    /// `mean-file-blocks - 1` (the maximum-entropy count for a mean), instead
    /// of `file-size`: the Sinbad paper's file lengths (SIGCOMM'13 section
    /// 4.3: 32% of the blocks written are full-size, so 0.32 / 0.68 full
    /// blocks besides the last, 1.47 on average).
    pub mean_file_blocks: Option<f64>,
    /// `file-write`, `chunk-store`, `write-job`, `coflow` with
    /// `output-ratio`: replicas per block (default 3).
    pub replicas: Option<i64>,
    /// `file-write`, `chunk-store`, `write-job`, `coflow` with
    /// `output-ratio`: rack failures a block survives; its
    /// replicas span at least this plus one racks (default 1; `chunk-store`:
    /// replicas - 1, a rack each).
    pub fault_tolerance: Option<i64>,
    /// `compute-job`: tasks of each job (default 8; `tasks` caps the
    /// number of jobs).
    pub tasks_per_job: Option<i64>,
    /// `compute-job`: cores each task requests (default 4).
    pub cores_per_task: Option<i64>,
    /// `compute-job`: memory each task requests (default 16 GB).
    pub memory_per_task: Option<Bytes>,
    /// `compute-job`: other tasks of its job each task sends to, the next
    /// ones in ring order (default 2).
    pub peers: Option<i64>,
    /// `compute-job`: how long each flow lasts at its rate cap (default 1 h).
    pub task_duration: Option<Duration>,
    /// `compute-job`: network demand per core, the same for every job
    /// (default: heavy-tailed across jobs, bounded Pareto of shape 1.1
    /// from 1 Mbit/s to 1 Gbit/s per core). A task's historical estimate
    /// is this times its cores.
    pub bandwidth_per_core: Option<Bandwidth>,
    /// `compute-job`: sigma of the log-normal (mean one) drift of each
    /// task's actual demand from the estimate (default 0.5). `cluster`:
    /// sigma of the log-normal factor a drifting task's demand takes in a
    /// detection window (default 0.3).
    pub drift_sigma: Option<f64>,
    /// `cluster`: share of all cores that running tasks ask for (default
    /// 0.6); sets the steady-state population at time 0 and the Poisson
    /// arrival rate of jobs.
    pub cpu_load: Option<f64>,
    /// `cluster`: tasks per job, uniform in 1..=this (default 20).
    pub max_tasks_per_job: Option<i64>,
    /// `cluster`: cores per task, uniform in 1..=this (default 4).
    pub max_cores_per_task: Option<i64>,
    /// `cluster`: memory a task asks per core (default 4 GB).
    pub memory_per_core: Option<Bytes>,
    /// `cluster`: mean time a task runs once placed, exponential (default
    /// 1 h).
    pub task_mean: Option<Duration>,
    /// `cluster`: median network demand per core; per job log-normal
    /// around it (default 10 Mbit/s).
    pub bandwidth_median_per_core: Option<Bandwidth>,
    /// `cluster`: sigma of ln(demand per core) across jobs (default 1).
    pub bandwidth_sigma: Option<f64>,
    /// `cluster`: share of jobs `heavy-factor` times heavier (default 0.05).
    pub heavy_share: Option<f64>,
    /// `cluster`: demand multiplier of heavy jobs (default 12).
    pub heavy_factor: Option<f64>,
    /// `cluster`: sigma of ln(estimate / actual) of the historical peak
    /// estimate the scheduler sees, one error per job (default 0.3).
    pub estimate_sigma: Option<f64>,
    /// `cluster`: peak over mean of that estimate (default 1.5).
    pub peak_factor: Option<f64>,
    /// `cluster`: share of jobs without an estimate; the scheduler then uses
    /// the mean demand of the job's running tasks (default 0).
    pub missing_estimate_share: Option<f64>,
    /// `cluster`: share of running tasks whose demand drifts by a
    /// log-normal factor of sigma `drift-sigma` in each detection window
    /// (default 0.1; `drift-sigma` defaults to 0.3 here).
    pub drift_share: Option<f64>,
    /// `cluster`: share of latency-sensitive jobs, never migrated (default
    /// 0.3).
    pub latency_sensitive_share: Option<f64>,
    /// `cluster`: analytical queries run beside the jobs, one of each every
    /// `query-period`, their workers placed by the same policy: tables
    /// `{ name, workers, partition, intermediate, output, compute,
    /// worker-cores }` (default: `small`, 4 workers, 20 MB partitions, 10 MB
    /// intermediate, 2 MB output, 50 ms per stage; `large`, 16 workers,
    /// 100/50/10 MB, 200 ms; one core each). Their tasks are of kind
    /// `query-<name>`. `[]`: none.
    pub queries: Option<Vec<QueryTable>>,
    /// `cluster`: the jobs from a trace instead of drawn ones: a job table
    /// of the registry (`cloudsimpy-jobs`, Alibaba-derived batch jobs) or a
    /// CSV of yours with its columns (a value with a `/` or a `.`, relative
    /// to the workload file): a job arrives at its first task row's
    /// `submit_time` (times `time-scale`), and each row is `instances_num`
    /// tasks of `cpu` cores (rounded up to whole cores), `memory` of a
    /// server's memory and `duration` seconds. Network demand is drawn per
    /// job as for drawn jobs (`bandwidth-*`, `heavy-*`): the traces carry
    /// none. `cpu-load`, `max-tasks-per-job`, `max-cores-per-task`,
    /// `memory-per-core` and `task-mean` do not apply.
    pub jobs: Option<String>,
    /// `cluster`: time between query launches (default 1 min).
    pub query_period: Option<Duration>,
    /// `aggregation`: the task-size law: `bing` (85% of tasks 20 KB per
    /// flow, 15% ten times that; the default), `data-analytics` (the
    /// shuffle sizes of the coflow trace `dataset`, split evenly over the
    /// flows), `uniform` (every flow 2-50 KB, or `flow-size-range`), `pareto` (shape 1.1, 5 KB
    /// minimum per flow, capped at 1,000x) or `fixed` (every task
    /// `task-size`, split evenly over its flows).
    pub task_sizes: Option<String>,
    /// `aggregation`: `one-stage` (the default: workers answer the
    /// aggregator), `two-stage` (`mid-aggregators` mid-levels each collect
    /// from `fanout` workers, then forward `selectivity` of their bytes) or
    /// `storage` (a client reads `fanout` chunks).
    pub structure: Option<String>,
    /// `aggregation`: flows per task, or workers per mid-level (default:
    /// the other hosts of a rack).
    pub fanout: Option<i64>,
    /// `aggregation`: coefficient of variation of log-normal factors of
    /// mean 1 applied to each flow of a task (default 0: none).
    pub flow_cv: Option<f64>,
    /// `aggregation`: mean utilisation of the aggregators' host links, in
    /// (0, 1) (default 0.8; with `placement = "pool"`, or that of the
    /// worker pool's links if higher).
    pub load: Option<f64>,
    /// `aggregation`: hosts receiving tasks, spread evenly over the
    /// datacenter (default: one per pod, the paper's spread; 0: every host).
    pub aggregators: Option<i64>,
    /// `aggregation`: every task arrives at time 0 (a data-parallel batch;
    /// `load` unused).
    pub batch: Option<bool>,
    /// `aggregation` with `task-sizes = "fixed"`: the bytes of every task,
    /// split evenly over its flows (Baraat §5.1: 800 KB multi-gets).
    pub task_size: Option<Bytes>,
    /// `aggregation` with `task-sizes = "uniform"`: the range of the flow
    /// sizes, `[low, high]` (default `["2KB", "50KB"]`, Baraat §5.2; its §2
    /// Figure 3 uses 5-40 KB).
    pub flow_size_range: Option<Vec<Bytes>>,
    /// `aggregation`: each aggregator (client) serves one task at a time; a
    /// task arriving while its client is busy waits in the client's FIFO
    /// queue, and its time counts from its arrival, the wait included (the
    /// tasks table's `queued_s`; Baraat §5.1's Memcached clients). Flow
    /// engine and the SPC simulator (`spc`, `rcp`), not the packet engine
    /// (default false).
    pub client_queue: Option<bool>,
    /// `incast`: senders per incast, each in another rack than the receiver
    /// (default 16).
    pub fanin: Option<i64>,
    /// `incast`: message sizes, one per incast, cycled (default `["5000B",
    /// "93000B"]`).
    pub message_sizes: Option<Vec<Bytes>>,
    /// `incast`: number of incasts (default 60).
    pub incasts: Option<i64>,
    /// `incast`: mean time between incasts; each gap is uniform in 0.5-1.5
    /// times it (default 1 ms).
    pub period: Option<Duration>,
}

/// One analytical query kind of a `cluster` app.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct QueryTable {
    /// Name: its tasks are of kind `query-<name>`.
    pub name: String,
    /// Workers (and as many storage servers, and half as many shuffle
    /// servers, drawn uniformly).
    pub workers: i64,
    /// Input partition each worker reads.
    pub partition: Bytes,
    /// Intermediate data each worker writes to a shuffle server and reads
    /// back.
    pub intermediate: Bytes,
    /// Output each worker writes.
    pub output: Bytes,
    /// Compute per stage.
    pub compute: Duration,
    /// Cores each worker asks for (default 1).
    pub worker_cores: Option<i64>,
}

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

/// Names of the keys set in a table, for "not used by kind" checks.
macro_rules! present {
    ($t:expr, $($field:ident => $key:literal),* $(,)?) => {
        vec![$( ($key, $t.$field.is_some()) ),*]
    };
}

impl Wcx<'_> {
    fn at(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        self.cx.at(key, reason)
    }

    fn gen(&self, key: &str, e: GenError) -> ConfigError {
        self.at(key, e.to_string())
    }

    /// Refuses, at `key`, a table whose estimate (`flows` flows and
    /// `extra_bytes` more) does not fit the memory budget together with what
    /// the tables before it hold.
    fn fits(
        &self,
        key: &str,
        what: String,
        flows: f64,
        extra_bytes: f64,
        out: &Workload,
        hint: &str,
    ) -> Result<(), ConfigError> {
        let held = out.estimate_bytes();
        let what = if held > 0.0 { format!("{what}, with the tables before it,") } else { what };
        let budget = budget::memory_budget()?;
        budget::check_against(budget, &what, held + flows * budget::flow_bytes() as f64 + extra_bytes, hint)
            .map_err(|e| self.at(key, e.to_string()))
    }

    /// The memory budget in bytes.
    fn budget(&self) -> Result<f64, ConfigError> {
        Ok(budget::memory_budget()? as f64)
    }

    /// The key of the duration a table uses: its own or `[workload]`'s.
    fn duration_key(&self, prefix: &str, own: Option<Duration>) -> String {
        if own.is_some() || self.default_duration.is_none() {
            format!("{prefix}.duration")
        } else {
            "workload.duration".into()
        }
    }

    fn only(&self, prefix: &str, kind: &str, set: &[(&str, bool)], allowed: &[&str]) -> Result<(), ConfigError> {
        match set.iter().find(|(k, on)| *on && !allowed.contains(k)) {
            Some((k, _)) => Err(self.at(&format!("{prefix}.{k}"), format!("is not used by kind \"{kind}\""))),
            None => Ok(()),
        }
    }

    fn duration(&self, prefix: &str, own: Option<Duration>) -> Result<f64, ConfigError> {
        match own.map(|d| d.0).or(self.default_duration) {
            Some(d) if d.is_finite() && d > 0.0 => Ok(d),
            Some(d) => Err(self.at(&format!("{prefix}.duration"), format!("must be positive, got {d} s"))),
            None => Err(self.at(prefix, "needs `duration` (here or in [workload])")),
        }
    }

    fn positive(&self, key: &str, v: Option<f64>, what: &str) -> Result<f64, ConfigError> {
        match v {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            Some(x) => Err(self.at(key, format!("must be a positive {what}, got {x}"))),
            None => Err(self.at(key, format!("missing required key (a positive {what})"))),
        }
    }

    fn sizes(&self, key: &str, s: Option<&SizesTable>) -> Result<SizeDist, ConfigError> {
        let s = s.ok_or_else(|| self.at(key, "missing required key, e.g. sizes = { dist = \"web-search\" }"))?;
        let need = |v: Option<f64>, k: &str| v.ok_or_else(|| self.at(&format!("{key}.{k}"), "missing required key"));
        let set = present!(s, size => "size", mean => "mean", sigma => "sigma", shape => "shape", min => "min", max => "max", cdf => "cdf");
        let dist = match s.dist {
            DistName::Constant => {
                self.only(key, "constant", &set, &["size"])?;
                SizeDist::Constant(need(s.size.map(|b| b.0), "size")?)
            }
            DistName::Exponential => {
                self.only(key, "exponential", &set, &["mean"])?;
                SizeDist::Exponential { mean: need(s.mean.map(|b| b.0), "mean")? }
            }
            DistName::BoundedPareto => {
                self.only(key, "bounded-pareto", &set, &["shape", "min", "max"])?;
                SizeDist::BoundedPareto {
                    shape: need(s.shape, "shape")?,
                    lo: need(s.min.map(|b| b.0), "min")?,
                    hi: need(s.max.map(|b| b.0), "max")?,
                }
            }
            DistName::Lognormal => {
                self.only(key, "lognormal", &set, &["mean", "sigma"])?;
                let (mean, sigma) = (need(s.mean.map(|b| b.0), "mean")?, need(s.sigma, "sigma")?);
                if !(mean > 0.0 && sigma.is_finite() && sigma >= 0.0) {
                    return Err(
                        self.at(key, format!("lognormal needs mean > 0 and sigma >= 0, got {mean} and {sigma}"))
                    );
                }
                SizeDist::log_normal_with_mean(mean, sigma)
            }
            DistName::Uniform => {
                self.only(key, "uniform", &set, &["min", "max"])?;
                let (lo, hi) = (need(s.min.map(|b| b.0), "min")?, need(s.max.map(|b| b.0), "max")?);
                if hi < lo {
                    return Err(
                        self.at(&format!("{key}.max"), format!("must be at least `min` ({lo} bytes), got {hi}"))
                    );
                }
                SizeDist::Uniform { lo, hi }
            }
            DistName::WebSearch => {
                self.only(key, "web-search", &set, &[])?;
                SizeDist::web_search()
            }
            DistName::Empirical => {
                self.only(key, "empirical", &set, &["cdf"])?;
                let name = s.cdf.as_deref().ok_or_else(|| self.at(&format!("{key}.cdf"), "missing required key"))?;
                let cdf =
                    self.dataset(&format!("{key}.cdf"), name, netheat_data::load_cdf, netheat_data::read_cdf_file)?;
                SizeDist::empirical(&cdf.points).map_err(|e| self.gen(&format!("{key}.cdf"), e))?
            }
        };
        dist.validate().map_err(|e| self.gen(key, e))?;
        Ok(dist)
    }

    fn pattern(&self, prefix: &str, name: Option<PatternName>, matrix: Option<&str>) -> Result<Pattern, ConfigError> {
        match (name, matrix) {
            (None | Some(PatternName::Uniform), None) => Ok(Pattern::Uniform),
            (Some(PatternName::InterRack), None) => Ok(Pattern::InterRack),
            (None | Some(PatternName::Matrix), Some(ds)) => {
                let tm = netheat_data::load_traffic_matrix(self.data, ds)
                    .map_err(|e| self.at(&format!("{prefix}.matrix"), e.to_string()))?;
                let racks = self.topo.racks().len() as f64;
                budget::check_against(
                    budget::memory_budget()?,
                    &format!("a rack-to-rack matrix of {} racks", format_count(racks)),
                    racks * racks * 8.0,
                    "use a datacenter with fewer racks for matrix traffic",
                )
                .map_err(|e| self.at(&format!("{prefix}.matrix"), e.to_string()))?;
                Ok(Pattern::RackMatrix(fold_matrix(&tm.matrix, self.topo.racks().len())))
            }
            (Some(PatternName::Matrix), None) => {
                Err(self.at(&format!("{prefix}.pattern"), "pattern \"matrix\" needs `matrix = \"<dataset>\"`"))
            }
            (Some(p), Some(_)) => Err(self.at(
                &format!("{prefix}.matrix"),
                format!("is only used with pattern \"matrix\", not {:?}", p).to_lowercase(),
            )),
        }
    }

    fn traffic(&self, i: usize, t: &TrafficTable, seed: u64, out: &mut Workload) -> Result<Vec<FlowRow>, ConfigError> {
        let p = format!("traffic[{i}]");
        let set = present!(t,
            load => "load", links => "links", sizes => "sizes", pattern => "pattern", matrix => "matrix",
            duration => "duration", flows => "flows", priority => "priority", on_mean => "on-mean",
            off_mean => "off-mean", rate_on => "rate-on", sources => "sources", inter_rack => "inter-rack", k => "k",
            period => "period", offset => "offset", batches => "batches", file => "file", time_scale => "time-scale",
            repeat_until => "repeat-until", dataset => "dataset", bytes_scale => "bytes-scale",
        );
        let mut rows = match t.kind {
            TrafficKind::Poisson => {
                self.only(
                    &p,
                    "poisson",
                    &set,
                    &["load", "links", "sizes", "pattern", "matrix", "duration", "flows", "priority"],
                )?;
                let load = self.positive(&format!("{p}.load"), t.load, "fraction")?;
                let links = match t.links.unwrap_or(LinksName::TorUplinks) {
                    LinksName::TorUplinks => LinkSet::TorUplinks,
                    LinksName::HostUplinks => LinkSet::HostUplinks,
                };
                let horizon = match t.flows {
                    Some(n) => Horizon::Flows(count(self.cx, &format!("{p}.flows"), n, 1)?),
                    None => Horizon::Duration(self.duration(&p, t.duration)?),
                };
                let sizes = self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?;
                let pattern = self.pattern(&p, t.pattern, t.matrix.as_deref())?;
                let gen = Poisson::new(links, load, sizes, horizon).with_pattern(pattern);
                let lambda = gen.calibration(self.topo).map_err(|e| self.gen(&p, e))?.lambda_per_s;
                let (flows, key, hint) = match horizon {
                    Horizon::Flows(n) => (n as f64, format!("{p}.flows"), "lower `flows`".to_string()),
                    Horizon::Duration(d) => {
                        // One second alone too large: the rate (load) is the problem.
                        if lambda * budget::flow_bytes() as f64 > self.budget()? {
                            (
                                lambda * d,
                                format!("{p}.load"),
                                format!("lower `load` ({}) or use larger flows", format_number(load)),
                            )
                        } else {
                            (
                                lambda * d,
                                self.duration_key(&p, t.duration),
                                format!("lower `duration` ({} s) or `load`, or use larger flows", format_number(d)),
                            )
                        }
                    }
                };
                let what = match horizon {
                    Horizon::Flows(_) => format!("`{p}`: {} flows", format_count(flows)),
                    Horizon::Duration(d) => format!(
                        "`{p}`: about {} flows ({} per second for {} s)",
                        format_count(flows.round()),
                        format_count(lambda.round()),
                        format_number(d)
                    ),
                };
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                gen.generate(self.topo, seed).map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::OnOff => {
                self.only(
                    &p,
                    "on-off",
                    &set,
                    &["sizes", "duration", "priority", "on-mean", "off-mean", "rate-on", "sources", "inter-rack"],
                )?;
                let sources = match &t.sources {
                    None => (0..self.topo.hosts().len() as u32).collect(),
                    Some(v) => v
                        .iter()
                        .enumerate()
                        .map(|(j, h)| {
                            self.topo
                                .host_ref(h)
                                .ok_or_else(|| self.at(&format!("{p}.sources[{j}]"), format!("unknown host `{h}`")))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                };
                let gen = OnOff {
                    sources,
                    on_mean_s: self.positive(&format!("{p}.on-mean"), t.on_mean.map(|d| d.0), "duration")?,
                    off_mean_s: self.positive(&format!("{p}.off-mean"), t.off_mean.map(|d| d.0), "duration")?,
                    rate_on_per_s: self.positive(&format!("{p}.rate-on"), t.rate_on, "rate (flows/s)")?,
                    sizes: self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?,
                    inter_rack_only: t.inter_rack.unwrap_or(false),
                    duration_s: self.duration(&p, t.duration)?,
                };
                let per_s = gen.sources.len() as f64 * gen.mean_rate_per_source();
                let flows = per_s * gen.duration_s;
                let (key, hint) = if per_s * budget::flow_bytes() as f64 > self.budget()? {
                    (format!("{p}.rate-on"), format!("lower `rate-on` ({})", format_number(gen.rate_on_per_s)))
                } else {
                    (
                        self.duration_key(&p, t.duration),
                        format!("lower `duration` ({} s) or `rate-on`", format_number(gen.duration_s)),
                    )
                };
                let what = format!(
                    "`{p}`: about {} flows ({} per second for {} s)",
                    format_count(flows.round()),
                    format_count(per_s.round()),
                    format_number(gen.duration_s)
                );
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                gen.generate(self.topo, seed).map_err(|e| match &e {
                    GenError::InvalidParameter { name, .. } if name == "on_mean_s" => {
                        self.gen(&format!("{p}.on-mean"), e)
                    }
                    _ => self.gen(&p, e),
                })?
            }
            TrafficKind::Batches => {
                self.only(
                    &p,
                    "batches",
                    &set,
                    &["sizes", "pattern", "matrix", "priority", "k", "period", "offset", "batches"],
                )?;
                let k = count(self.cx, &format!("{p}.k"), t.k.ok_or_else(|| self.at(&p, "needs `k`"))?, 1)?;
                let n = count(self.cx, &format!("{p}.batches"), t.batches.unwrap_or(1), 1)?;
                let flows = k as f64 * n as f64;
                let (key, hint) = if k as f64 * budget::flow_bytes() as f64 > self.budget()? {
                    (format!("{p}.k"), format!("lower `k` ({k})"))
                } else {
                    (format!("{p}.batches"), format!("lower `batches` ({n}) or `k`"))
                };
                let what = format!("`{p}`: {} batches of {} flows", format_count(n as f64), format_count(k as f64));
                self.fits(&key, what, flows, 0.0, out, &hint)?;
                Batches {
                    k,
                    period_s: self.positive(&format!("{p}.period"), t.period.map(|d| d.0).or(Some(1.0)), "duration")?,
                    offset_s: t.offset.map_or(0.0, |d| d.0),
                    batches: n,
                    sizes: self.sizes(&format!("{p}.sizes"), t.sizes.as_ref())?,
                    pattern: self.pattern(&p, t.pattern, t.matrix.as_deref())?,
                }
                .generate(self.topo, seed)
                .map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::Replay => {
                self.only(&p, "replay", &set, &["file", "time-scale", "offset", "repeat-until", "priority"])?;
                let f = t.file.as_deref().ok_or_else(|| self.at(&p, "needs `file` (a flow CSV)"))?;
                let path = self.resolve(f);
                let topo = self.topo;
                let rows = read_flows_csv(&path, &|s| topo.host_ref(s))
                    .map_err(|e| self.at(&format!("{p}.file"), e.to_string()))?;
                let replay = Replay {
                    time_scale: t.time_scale.unwrap_or(1.0),
                    offset_s: t.offset.map_or(0.0, |d| d.0),
                    repeat_until_s: t.repeat_until.map(|d| d.0),
                };
                let (lo, hi) = rows
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r.start_s), hi.max(r.start_s)));
                let flows = replay.estimate(rows.len(), if rows.is_empty() { 0.0 } else { hi - lo });
                let what = format!(
                    "`{p}`: {} flows ({} rows, repeated)",
                    format_count(flows),
                    format_count(rows.len() as f64)
                );
                // The rows read and the replayed copies are held at once.
                let key = if t.repeat_until.is_some() { format!("{p}.repeat-until") } else { format!("{p}.file") };
                self.fits(
                    &key,
                    what,
                    rows.len() as f64 + flows,
                    0.0,
                    out,
                    "lower `repeat-until` or replay fewer rows",
                )?;
                replay.apply(&rows, self.topo.hosts().len()).map_err(|e| self.gen(&p, e))?
            }
            TrafficKind::Coflow => {
                self.only(&p, "coflow", &set, &["dataset", "time-scale", "bytes-scale", "duration", "priority"])?;
                let mapped =
                    self.coflows(&p, t.dataset.as_deref(), (t.time_scale, t.bytes_scale), t.duration, seed, out)?;
                mapped.rows()
            }
        };
        if let Some(pr) = t.priority {
            let pr = i32::try_from(pr).map_err(|_| self.at(&format!("{p}.priority"), "out of range"))?;
            rows.iter_mut().for_each(|r| r.priority = pr);
        }
        Ok(rows)
    }

    fn resolve(&self, f: &str) -> PathBuf {
        let p = Path::new(f);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// The coflow trace a `dataset` key names (default `coflow-fb2010`): a
    /// registered dataset, or a file of the user's (a value with a `/` or a
    /// `.`), relative to the workload file.
    fn coflow_trace(&self, key: &str, name: Option<&str>) -> Result<netheat_data::CoflowTrace, ConfigError> {
        let name = name.unwrap_or(DEFAULT_COFLOW);
        self.dataset(key, name, netheat_data::load_coflows, netheat_data::read_coflows_file)
    }

    /// What a dataset key (`key`) names: the registered dataset `name`
    /// (`load`), or, when `name` is a path (a `/` or a `.`), the user's file
    /// in the same format relative to the workload file (`read`).
    fn dataset<T>(
        &self,
        key: &str,
        name: &str,
        load: fn(&DataDir, &str) -> Result<T, netheat_data::DataError>,
        read: fn(&Path) -> Result<T, netheat_data::DataError>,
    ) -> Result<T, ConfigError> {
        let got = if netheat_data::is_file_reference(name) { read(&self.resolve(name)) } else { load(self.data, name) };
        got.map_err(|e| self.at(key, e.to_string()))
    }

    fn coflows(
        &self,
        p: &str,
        dataset: Option<&str>,
        (time_scale, bytes_scale): (Option<f64>, Option<f64>),
        duration: Option<Duration>,
        seed: u64,
        out: &mut Workload,
    ) -> Result<MappedShuffles, ConfigError> {
        let trace = self.coflow_trace(&format!("{p}.dataset"), dataset)?;
        let scale = time_scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(self.at(&format!("{p}.time-scale"), format!("must be positive, got {scale}")));
        }
        let bytes = bytes_scale.unwrap_or(1.0);
        if !(bytes.is_finite() && bytes > 0.0) {
            return Err(self.at(&format!("{p}.bytes-scale"), format!("must be positive, got {bytes}")));
        }
        let until = duration.map(|d| d.0).or(self.default_duration).unwrap_or(f64::INFINITY);
        let shuffles: Vec<RackShuffle> =
            trace.coflows.iter().map(|c| rack_shuffle(c, scale, bytes)).filter(|s| s.start_s < until).collect();
        let flows: f64 = shuffles.iter().map(|s| s.mapper_racks.len() as f64 * s.reducers.len() as f64).sum();
        let key = if duration.is_some() { format!("{p}.duration") } else { format!("{p}.dataset") };
        let what = format!("`{p}`: {} shuffles of {} flows", format_count(shuffles.len() as f64), format_count(flows));
        // In an `[[app]]` table (`p` is `app[i]`) every shuffle is a task of
        // one step a flow; a `[[traffic]]` table's are plain flows.
        let tasks = if p.starts_with("app[") { task_overhead_bytes(shuffles.len() as f64, flows) } else { 0.0 };
        self.fits(&key, what, flows, tasks, out, "replay part of the trace with a shorter `duration`")?;
        let mapped = map_rack_shuffles(self.topo, &shuffles, seed).map_err(|e| self.gen(p, e))?;
        out.local_bytes += mapped.local_bytes;
        if mapped.folded {
            out.notes.push(format!(
                "{p}: the trace has {} racks and the topology {}: trace rack t was placed on rack t mod {}",
                trace.racks,
                self.topo.racks().len(),
                self.topo.racks().len()
            ));
        }
        if mapped.local_bytes > 0.0 {
            out.notes.push(format!(
                "{p}: {:.0} bytes between a mapper and a reducer on the same host stay local (not simulated)",
                mapped.local_bytes
            ));
        }
        Ok(mapped)
    }

    /// An `aggregation` table: `tasks` tasks (default 10,000, the paper's),
    /// arrivals from `load` (no `rate` or `duration`).
    fn aggregation(
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
    fn client_uplink_bps(&self, clients: Option<i64>, hpr: usize) -> f64 {
        let n = clients.unwrap_or(i64::from(self.topo.num_pods().max(1))).max(1) as usize;
        let racks = n.div_ceil(hpr.max(1)).min(self.topo.tors().len());
        (0..racks as u32).map(|r| self.topo.tor_uplink_bps(r)).sum::<f64>().max(f64::MIN_POSITIVE)
    }

    /// An `incast` table: `incasts` incasts of `fanin` one-message tasks
    /// each (no `rate`, `duration` or `tasks`).
    fn incast(
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
    fn shuffle_job(&self, p: &str, a: &AppTable, set: &[(&str, bool)], out: &Workload) -> Result<TaskDag, ConfigError> {
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
    fn chunk_store(
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
            ],
        )?;
        let sizes = match &a.sizes {
            Some(t) => self.sizes(&format!("{p}.sizes"), Some(t))?,
            None => SizeDist::Uniform { lo: 100e3, hi: 1e6 },
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
        let cs = ChunkStore { read_share, sizes, replicas, fault_tolerance, direct, read_stored_only, stored };
        cs.validate().map_err(|e| self.gen(p, e))?;
        let racks = self.topo.hosts().iter().map(|h| h.rack).collect::<std::collections::BTreeSet<_>>().len();
        if fault_tolerance + 1 > racks {
            return Err(self.at(
                &format!("{p}.fault-tolerance"),
                format!("replicas in {} racks, the datacenter has {racks}", fault_tolerance + 1),
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0057_07ED);
        out.stores.push(ChunkStoreRun { replicas, min_racks: fault_tolerance + 1, chunks: cs.stored_chunks(&mut rng) });
        Ok(cs)
    }

    /// The hosts of the racks listed at `key`, in list order; a rack that
    /// does not exist is an error at its entry.
    fn rack_list_hosts(&self, key: &str, rs: &[i64]) -> Result<Vec<u32>, ConfigError> {
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
    fn chunk_clients(&self, p: &str, a: &AppTable) -> Result<Vec<u32>, ConfigError> {
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

    fn cluster(&self, p: &str, a: &AppTable, set: &[(&str, bool)], seed: u64) -> Result<ClusterWorkload, ConfigError> {
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
    fn trace_jobs(
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
    fn cfs_write(&self, p: &str, a: &AppTable) -> Result<CfsWrite, ConfigError> {
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

    fn app(&self, i: usize, a: &AppTable, seed: u64, out: &mut Workload) -> Result<Vec<(f64, TaskDag)>, ConfigError> {
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
            read_share => "read-share", sizes => "sizes", stored => "stored", read_from => "read-from", write => "write",
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
