//! The serde schema of workload files: one struct per table, kebab-case
//! keys, unknown keys refused. Generation is in the sibling modules.

use serde::Deserialize;

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

/// An erasure code of a `chunk-store`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ErasureTable {
    /// Data chunks a stripe (at least 1).
    pub data: i64,
    /// Parity chunks a stripe (at least 0).
    pub parity: i64,
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
    /// `chunk-store`: erasure-coded chunks instead of replicas, e.g.
    /// `{ data = 6, parity = 3 }` (RS(6, 3)): a stripe of `data` chunks of
    /// a chunk's bytes / `data` plus `parity` more, one per rack, placed by
    /// the storage policy; a read fetches the data chunks in parallel, a
    /// write sends all of them from the client (`write = "direct"`). Not
    /// with `replicas` or `fault-tolerance`.
    pub erasure: Option<ErasureTable>,
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
