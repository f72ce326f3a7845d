//! What a scenario run produces: per-entity rows with the same columns
//! whichever engine ran, and run statistics.
//!
//! Tables (their Parquet files are named after them):
//! * `flows`: one row per flow: `flow_id, src, dst, bytes, start_s,
//!   finish_s, fct_s, task_id (-1: none; null in Python and Parquet),
//!   priority, path_id (-1: explicit; null likewise)`;
//! * `tasks`: one row per task: application tasks of the workload (their
//!   `kind`) and flows of a trace that share a `task_id` (`kind = "trace"`):
//!   `task_id, kind, table (-1: trace), start_s, finish_s, tct_s, flows, bytes`
//!   (its flow steps and their bytes; a hedged read's include the fetches
//!   its hedge added, whether or not they started), `floor_s` (the least
//!   time any schedule needs: bytes into a host over its NIC),
//!   `network_s, io_s` (its critical path's flow and device seconds) and
//!   `queued_s` (its wait in its client's queue; `tct_s` includes it);
//! * `links`: utilization of every directed link that carried bytes, per
//!   window: `link, window, utilization, background` (the part of the
//!   utilization that is precalculated traffic's, [`crate::background`]);
//! * `queues` (packet engine): per directed link, `link, mean_queue_bytes,
//!   max_queue_bytes, drops, marks, tx_bytes`;
//! * `blocks` (storage policies): per block written, `task_id, block,
//!   bytes, writer, replicas, racks, requested_s` (the writer asks for
//!   replicas), `start_s` (they are chosen and the write starts: later than
//!   the request under `storage.decision-interval`), `finish_s, write_s`
//!   (from the start, the paper's block write time) and
//!   `write_from_request_s`;
//! * `placements` (`[placement]`, unless left out of `scenario.record`):
//!   one row per stay of a task on a host: `task_id` (its job's row in
//!   `tasks`: a `compute-job`, a `cluster-job` or, for a query worker, the
//!   `query-<name>` row), `job` (jobs numbered in start order; a query's
//!   number among the queries), `task` (index in the job, or worker
//!   index), `host, rack, tor_util` (the ToR's outbound utilization when
//!   chosen: live for compute jobs, the last sample for a cluster), `start_s,
//!   finish_s` (until its flows finished, its run ended or it moved; NaN:
//!   still there), `migrated` (it arrived by a migration);
//! * `migrations` (`[placement]`, migrating policies): one row per task
//!   moved off a hot ToR: `time_s, task_id, job, task, from_host, to_host,
//!   tor` (the hot one), `rate_bps` (its measured outbound rate leaving the
//!   rack), `bytes_moved` (bytes not yet delivered, carried on by new flows;
//!   0 for a cluster task, which restarts).
//!
//! A flow cut by a migration (or by the end of a cluster task's run, or
//! cancelled because its hedged read had what it needed) keeps its row
//! with the bytes it delivered and `finish_s` at the cut; a
//! compute job's remaining bytes are a new flow (id from 2^62 up) of the
//! same task between the task's new hosts.

use std::collections::BTreeMap;

use netheat_engine::FlowRecord;

/// One row of `flows`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowOut {
    /// Flow id (a trace's own ids are kept).
    pub flow_id: u64,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes.
    pub bytes: f64,
    /// Start, seconds.
    pub start_s: f64,
    /// Finish, seconds (NaN: unfinished).
    pub finish_s: f64,
    /// Completion time, seconds.
    pub fct_s: f64,
    /// Task id, -1 for none.
    pub task_id: i64,
    /// Priority class when it started.
    pub priority: i32,
    /// ECMP path index, -1 for explicit routes.
    pub path_id: i64,
}

impl FlowOut {
    /// A flow between two ports of one host: it never enters the network
    /// and finishes at its start.
    pub fn local(flow_id: u64, host: u32, bytes: f64, start_s: f64, task_id: i64, priority: i32) -> Self {
        Self {
            flow_id,
            src: host,
            dst: host,
            bytes,
            start_s,
            finish_s: start_s,
            fct_s: 0.0,
            task_id,
            priority,
            path_id: -1,
        }
    }

    /// A row from a flow-engine record, with the given id and task.
    pub fn from_record(f: &FlowRecord, flow_id: u64, task: Option<u64>) -> Self {
        Self {
            flow_id,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start_s: f.start_s,
            finish_s: f.finish_s,
            fct_s: f.fct_s,
            task_id: task.map_or(-1, |t| t as i64),
            priority: f.priority,
            path_id: f.path_id.map_or(-1, i64::from),
        }
    }
}

/// One row of `tasks`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOut {
    /// Task id (the `task_id` of its flows).
    pub task_id: u64,
    /// Kind: the application (`partition-aggregate`, `file-write`, ...) or `trace`.
    pub kind: String,
    /// Index of the workload's `[[app]]` table, -1 for trace tasks.
    pub table: i64,
    /// Start, seconds.
    pub start_s: f64,
    /// Finish, seconds (NaN: unfinished).
    pub finish_s: f64,
    /// Flows.
    pub flows: u64,
    /// Bytes.
    pub bytes: f64,
    /// The least time any schedule needs for the task: the bytes its flows
    /// carry into each host over that host's NIC capacity, the largest
    /// (every byte into a host crosses its ports; [`set_floors`]). NaN
    /// for a task without network bytes.
    pub floor_s: f64,
    /// Seconds of the task's critical path in flows (the network's share
    /// of its time; netheat-workloads' `TaskRecord::critical_path`; a trace
    /// task's whole time). NaN where the engine keeps no step times (the
    /// packet engine, SPC, a cluster's tasks) or the task did not finish.
    pub network_s: f64,
    /// Seconds of the task's critical path in device steps (disk queueing
    /// and service; the rest of its time is compute and waits). NaN as
    /// `network_s`.
    pub io_s: f64,
    /// Seconds the task waited in its client's queue before it began (an
    /// `aggregation` app's `client-queue`; 0 without one, NaN if it never
    /// began). Its `finish_s - start_s` includes the wait.
    pub queued_s: f64,
}

/// Sets every task's [`TaskOut::floor_s`] from its flows' rows.
pub fn set_floors(out: &mut ScenarioResult, topo: &netheat_topology::Topology) {
    let mut floors = Floors::default();
    for f in &out.flows {
        floors.add(f);
    }
    floors.apply(&mut out.tasks, topo);
}

/// The bytes each task's flows carry into each host, folded one flow row
/// at a time (in any order), for [`TaskOut::floor_s`].
#[derive(Debug, Default)]
pub struct Floors {
    /// Bytes into (task, host); summed in the order flows are folded in,
    /// never iterated where order matters (the floor is a maximum).
    into: netheat_core::IdMap<TaskHost, f64>,
}

/// A (task, destination host) key of [`Floors`], hashed as one word (the
/// map's hasher mixes it; equality still compares both fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TaskHost(i64, u32);

impl std::hash::Hash for TaskHost {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64((self.0 as u64).rotate_left(32) ^ u64::from(self.1));
    }
}

impl Floors {
    /// Folds in one flow row (flows to their own host cross no link).
    pub fn add(&mut self, f: &FlowOut) {
        if f.src != f.dst {
            self.add_bytes(f.task_id, f.dst, f.bytes);
        }
    }

    /// Folds in `bytes` of task `task_id` into host `dst` from another
    /// host (what [`Floors::add`] takes of a flow row; a task id below 0,
    /// no task, is left out).
    pub fn add_bytes(&mut self, task_id: i64, dst: u32, bytes: f64) {
        if task_id >= 0 {
            *self.into.entry(TaskHost(task_id, dst)).or_default() += bytes;
        }
    }

    /// Sets the floors of `tasks` (NaN for a task without network bytes).
    pub fn apply(&self, tasks: &mut [TaskOut], topo: &netheat_topology::Topology) {
        let mut floor: netheat_core::IdMap<i64, f64> = netheat_core::IdMap::default();
        for (&TaskHost(task, host), &bytes) in &self.into {
            let nic: f64 = topo.hosts()[host as usize].ports.iter().map(|p| p.speed_bps).sum();
            let t = bytes * 8.0 / nic;
            let e = floor.entry(task).or_insert(t);
            *e = e.max(t);
        }
        for t in tasks {
            t.floor_s = floor.get(&(t.task_id as i64)).copied().unwrap_or(f64::NAN);
        }
    }
}

/// One row of `blocks`.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockOut {
    /// Task (file write) id.
    pub task_id: u64,
    /// Block index in its file.
    pub block: u32,
    /// Bytes.
    pub bytes: f64,
    /// Writing host.
    pub writer: u32,
    /// Replica hosts, pipeline order, as `a;b;c`.
    pub replicas: String,
    /// Distinct racks of the replicas.
    pub racks: u32,
    /// When the writer asked for the block's replicas, seconds.
    pub requested_s: f64,
    /// Start of the block's write (its placement), seconds: the request,
    /// or the next decision under `storage.decision-interval`.
    pub start_s: f64,
    /// End of its last hop, seconds (NaN: unfinished).
    pub finish_s: f64,
}

/// One row of `placements`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementOut {
    /// Runner task id of the job (its row in `tasks`).
    pub task_id: u64,
    /// Compute job number, in start order.
    pub job: u32,
    /// Task index in the job.
    pub task: u32,
    /// Host.
    pub host: u32,
    /// Its rack (ToR).
    pub rack: u32,
    /// Outbound utilization of the ToR when the host was chosen.
    pub tor_util: f64,
    /// Start of the stay, seconds.
    pub start_s: f64,
    /// End of the stay: the task's flows finished or it moved (NaN: neither).
    pub finish_s: f64,
    /// Whether it arrived by a migration.
    pub migrated: bool,
}

/// One row of `migrations`.
#[derive(Debug, Clone, PartialEq)]
pub struct MigrationOut {
    /// When, seconds.
    pub time_s: f64,
    /// Runner task id of the job.
    pub task_id: u64,
    /// Compute job number.
    pub job: u32,
    /// Task index in the job.
    pub task: u32,
    /// Host it left.
    pub from_host: u32,
    /// Host it went to.
    pub to_host: u32,
    /// The hot ToR (rack) it left.
    pub tor: u32,
    /// Its measured outbound rate leaving the rack, bits/s.
    pub rate_bps: f64,
    /// Bytes not yet delivered, carried on by new flows.
    pub bytes_moved: f64,
}

/// One row of `queues`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueOut {
    /// Directed link (its output port).
    pub link: u32,
    /// Time-averaged occupancy, bytes.
    pub mean_queue_bytes: f64,
    /// Peak occupancy, bytes.
    pub max_queue_bytes: u64,
    /// Packets dropped.
    pub drops: u64,
    /// Packets ECN-marked.
    pub marks: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct ScenarioResult {
    /// `flow` or `packet`.
    pub engine: String,
    /// Flows, by id.
    pub flows: Vec<FlowOut>,
    /// Tasks.
    pub tasks: Vec<TaskOut>,
    /// `(link, window, utilization)` for links that carried bytes; with
    /// precalculated traffic, the utilization counts its bytes too.
    pub links: Vec<(u32, u32, f64)>,
    /// The precalculated traffic's part of each `links` row's utilization,
    /// row by row (empty without precalculated traffic: all zero).
    pub links_background: Vec<f64>,
    /// Window width of `links`, seconds.
    pub window_s: f64,
    /// Blocks written under a storage policy.
    pub blocks: Vec<BlockOut>,
    /// Stays of compute tasks on hosts under a placement policy.
    pub placements: Vec<PlacementOut>,
    /// Tasks moved off hot ToRs.
    pub migrations: Vec<MigrationOut>,
    /// Per-port queues (packet engine).
    pub queues: Vec<QueueOut>,
    /// Run statistics (counts and times) for `stats.json`.
    pub stats: BTreeMap<String, f64>,
    /// Facts a user should know.
    pub notes: Vec<String>,
    /// Every placement decision with the state it was taken on, in order
    /// (only when the run records them: [`crate::Scenario::recording`]).
    pub decisions: Vec<Decision>,
    /// Which of the large tables the run kept (`scenario.record`); the
    /// others are empty because they were not recorded, not because
    /// nothing happened.
    pub recorded: Recorded,
}

/// Which of the large tables a run kept (`scenario.record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// The `flows` table.
    pub flows: bool,
    /// The `links` table.
    pub links: bool,
    /// The `queues` table.
    pub queues: bool,
    /// The `placements` table.
    pub placements: bool,
}

impl Default for Recorded {
    fn default() -> Self {
        Self { flows: true, links: true, queues: true, placements: true }
    }
}

impl Recorded {
    /// From `scenario.record`.
    pub fn of(section: &crate::config::ScenarioSection) -> Self {
        use crate::config::RecordedTable as T;
        Self {
            flows: section.records(T::Flows),
            links: section.records(T::Links),
            queues: section.records(T::Queues),
            placements: section.records(T::Placements),
        }
    }
}

/// One decision of a run and the state it was taken on: enough to take it
/// again outside the simulation (the live advisor's test does).
#[derive(Debug, Clone)]
pub enum Decision {
    /// A task placed (or moved) by the `[placement]` policy.
    Task {
        /// When, seconds.
        time_s: f64,
        /// The task.
        ask: netheat_sched::TaskAsk,
        /// Hosts of the job's other tasks.
        others: Vec<u32>,
        /// The candidate hosts with their free cores, in sample order.
        sample: Vec<(u32, f64)>,
        /// Per uplink of the candidates' ToRs: link, rate and capacity in
        /// force, bits/s.
        uplinks: Vec<(u32, f64, f64)>,
        /// The host chosen.
        chosen: u32,
    },
    /// The tasks chosen to move off a hot ToR.
    Migration {
        /// When, seconds.
        time_s: f64,
        /// The hot ToR (rack index).
        tor: u32,
        /// Its sampled outbound rate, bits/s.
        tor_rate_bps: f64,
        /// Its uplink capacity in force, bits/s.
        tor_capacity_bps: f64,
        /// The hot threshold.
        threshold: f64,
        /// The tasks on it.
        candidates: Vec<netheat_sched::MigrationCandidate>,
        /// Their indices chosen, in order.
        picked: Vec<usize>,
    },
    /// A link-rate report to the `[storage]` policy.
    Report {
        /// When, seconds.
        time_s: f64,
        /// Measured rate per directed link, bits/s.
        rates: Vec<Option<f64>>,
    },
    /// A block's replicas placed by the `[storage]` policy.
    Replicas {
        /// When, seconds.
        time_s: f64,
        /// The block.
        request: netheat_storage::PlacementRequest,
        /// Bytes stored per host before it.
        used: Vec<f64>,
        /// The random state its ties were broken with.
        rng: Box<rand_chacha::ChaCha8Rng>,
        /// The hosts chosen (local piece first).
        hosts: Vec<u32>,
    },
}

impl Decision {
    /// When it was taken, seconds.
    pub fn time_s(&self) -> f64 {
        match self {
            Decision::Task { time_s, .. }
            | Decision::Migration { time_s, .. }
            | Decision::Report { time_s, .. }
            | Decision::Replicas { time_s, .. } => *time_s,
        }
    }
}

impl ScenarioResult {
    /// An empty result of `engine`.
    pub fn new(engine: &str) -> Self {
        Self { engine: engine.into(), ..Self::default() }
    }

    /// Sets a statistic.
    pub fn stat(&mut self, name: &str, v: f64) {
        self.stats.insert(name.into(), v);
    }
}

/// Tasks of a trace: flows sharing a `task_id` below `app_base` (the
/// first application task id), one row each (start: first flow's start; finish: last flow's,
/// NaN if any flow did not finish).
pub fn trace_tasks(flows: &[FlowOut], app_base: u64) -> Vec<TaskOut> {
    let mut acc = TraceTasks::default();
    for f in flows {
        acc.add(f, app_base);
    }
    acc.into_tasks()
}

/// The rows of [`trace_tasks`], folded one flow row at a time (in any
/// order), for runs that do not keep their flows.
#[derive(Debug, Default)]
pub struct TraceTasks {
    by: BTreeMap<u64, TaskOut>,
}

impl TraceTasks {
    /// Folds in one flow row, if it belongs to a trace task (a task id
    /// below `app_base`).
    pub fn add(&mut self, f: &FlowOut, app_base: u64) {
        if f.task_id < 0 || f.task_id as u64 >= app_base {
            return;
        }
        let t = self.by.entry(f.task_id as u64).or_insert(TaskOut {
            task_id: f.task_id as u64,
            kind: "trace".into(),
            table: -1,
            start_s: f64::INFINITY,
            finish_s: f64::NEG_INFINITY,
            flows: 0,
            bytes: 0.0,
            floor_s: f64::NAN,
            network_s: f64::NAN,
            io_s: f64::NAN,
            queued_s: 0.0,
        });
        t.start_s = t.start_s.min(f.start_s);
        t.finish_s = if f.finish_s.is_nan() || t.finish_s.is_nan() { f64::NAN } else { t.finish_s.max(f.finish_s) };
        t.flows += 1;
        t.bytes += f.bytes;
    }

    /// The rows, by task id. A trace task is flows only: all its time is
    /// network (`network_s` its time, `io_s` 0; NaN unfinished).
    pub fn into_tasks(self) -> Vec<TaskOut> {
        self.by
            .into_values()
            .map(|mut t| {
                t.network_s = t.finish_s - t.start_s;
                t.io_s = if t.finish_s.is_nan() { f64::NAN } else { 0.0 };
                t
            })
            .collect()
    }
}
