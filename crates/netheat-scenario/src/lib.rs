//! One scenario model: any datacenter, any workload, any stack of policies.
//!
//! A [`Scenario`] is one TOML file ([`config`] holds its sections) read into
//! a built datacenter, a generated workload and the policies of each kind of
//! decision ([`doc`]); [`Scenario::run`] runs it on the flow engine
//! ([`flow`]) or the packet engine ([`packet`]) and returns the same
//! per-entity tables either way ([`result`]).
//!
//! ```text
//! scenario.toml ──doc──▶ Parts { sections, topology, workload }
//!                          │ check(): combinations that mean something
//!                          ▼
//!        flow engine: DagRunner + Decisions (routing, scheduling, storage,
//!                     placement)
//!        SPC protocol (`scheduling.policy = "spc"`): the tasks through
//!                     netheat-flowsched's round-based simulator ([`spc`])
//!        packet engine: flows with the transport of [transport]
//!                          ▼
//!        ScenarioResult { flows, tasks, links, queues, blocks, placements,
//!                         migrations, stats }
//! ```
//!
//! Combinations that mean nothing (a transport on the flow engine, a flow
//! scheduler on the packet engine, a storage policy without file writes, a
//! placement policy without compute jobs, the SPC protocol with re-routing,
//! storage or placement policies or capacity events) are refused before
//! anything runs, naming both keys.

pub mod background;
pub mod cluster;
pub mod config;
pub mod doc;
pub mod flow;
pub mod packet;
pub mod placement;
pub mod result;
pub mod spc;
pub mod storage;

use std::path::Path;

use netheat_config::ConfigError;
use netheat_core::budget;
use netheat_data::DataDir;
use netheat_workloads::RunBudget;
use thiserror::Error;

pub use config::{
    schema, DenseSetting, EngineKind, PlacementObjective, PlacementPolicyKind, RoutingPolicy, SchedulingPolicy,
    Sections, StoragePolicy, TransportKind,
};
pub use doc::{Parts, ScenarioDoc};
pub use result::{
    BlockOut, Decision, FlowOut, MigrationOut, PlacementOut, QueueOut, Recorded, ScenarioResult, TaskOut,
};

/// Why a scenario did not run.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The scenario file (or an override) is wrong: `file:line:col: key: reason`.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The run would outgrow the memory budget.
    #[error("{0}")]
    Budget(String),
    /// The memory budget could not be read.
    #[error(transparent)]
    BudgetSetting(#[from] budget::BudgetError),
    /// The flow engine refused something.
    #[error(transparent)]
    Engine(#[from] netheat_engine::EngineError),
    /// A routing policy could not be built.
    #[error(transparent)]
    Routing(#[from] netheat_subways::SubwaysError),
    /// A flow scheduler could not be built.
    #[error(transparent)]
    Scheduling(#[from] netheat_flowsched::FlowschedError),
    /// The packet engine refused something.
    #[error(transparent)]
    Packet(#[from] netheat_packet::PacketError),
    /// A storage policy could not be built or failed.
    #[error(transparent)]
    Storage(#[from] netheat_storage::StorageError),
    /// A placement policy could not be built.
    #[error(transparent)]
    Placement(#[from] netheat_sched::SchedError),
    /// A decision failed during the run.
    #[error("the run stopped: {0}")]
    Run(String),
    /// The caller asked to stop (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
}

/// A scenario ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    doc: ScenarioDoc,
    record: bool,
}

impl Scenario {
    /// Reads a scenario file.
    pub fn from_path(path: &Path) -> Result<Self, ScenarioError> {
        Ok(Self { doc: ScenarioDoc::read(path)?, record: false })
    }

    /// A scenario from text; `file` names it in messages and relative
    /// paths resolve against `base`.
    pub fn from_text(text: &str, file: &str, base: &Path) -> Self {
        Self { doc: ScenarioDoc::from_text(text, file, base), record: false }
    }

    /// The same scenario with the dotted key `key` set to a TOML value
    /// written as text (`"adaptive"`, `4`, `"10Gbps"`).
    pub fn with_override(self, key: &str, value_toml: &str) -> Result<Self, ScenarioError> {
        Ok(Self { doc: self.doc.with_override(key, value_toml)?, ..self })
    }

    /// The same scenario, recording every storage and placement decision
    /// with the state it was taken on in [`ScenarioResult::decisions`].
    pub fn recording(self) -> Self {
        Self { record: true, ..self }
    }

    /// The document (file, text, overrides).
    pub fn doc(&self) -> &ScenarioDoc {
        &self.doc
    }

    /// Reads the sections, builds the datacenter, generates the workload
    /// and checks the combination.
    pub fn parts(&self, data: &DataDir) -> Result<Parts, ScenarioError> {
        let parts = self.doc.parts(data)?;
        self.check(&parts)?;
        Ok(parts)
    }

    /// Refuses combinations that mean nothing, naming both keys.
    fn check(&self, p: &Parts) -> Result<(), ScenarioError> {
        let s = &p.sections;
        let engine = s.scenario.engine;
        let at = |key: &str, reason: String| ScenarioError::Config(self.doc.at(key, reason));
        match engine {
            EngineKind::Flow => {
                if s.transport.is_some() {
                    return Err(at(
                        "transport",
                        "a transport needs `scenario.engine = \"packet\"`; the flow engine moves fluid flows without one".into(),
                    ));
                }
                if s.packet.is_some() {
                    return Err(at("packet", "[packet] sets switch buffers of `scenario.engine = \"packet\"`".into()));
                }
                if s.routing.as_ref().is_some_and(|r| r.least_queued.is_some()) {
                    return Err(at(
                        "routing.least-queued",
                        "chooses paths packet by packet on `scenario.engine = \"packet\"`; the flow engine's `adaptive` and `detour` are the controller's".into(),
                    ));
                }
            }
            EngineKind::Packet => {
                if !p.topology.events().is_empty() {
                    return Err(at(
                        "events",
                        "capacity `[[events]]` (failures, restores, scaling) run on `scenario.engine = \"flow\"`; the packet engine's links keep their capacity".into(),
                    ));
                }
                if let Some(r) = s.routing.as_ref().filter(|r| {
                    matches!(r.policy, RoutingPolicy::Adaptive | RoutingPolicy::Detour) && r.least_queued != Some(true)
                }) {
                    r.lb_params().validate().map_err(|e| at("routing", e.to_string()))?;
                }
                if let Some(r) = s.routing.as_ref().filter(|r| r.least_queued == Some(true)) {
                    if !matches!(r.policy, RoutingPolicy::Adaptive | RoutingPolicy::Detour) {
                        return Err(at(
                            "routing.least-queued",
                            format!("applies to `adaptive` and `detour`, not `{}`", r.policy.tag()),
                        ));
                    }
                    let controller = [
                        ("routing.period", r.period.is_some()),
                        ("routing.ewma-weight", r.ewma_weight.is_some()),
                        ("routing.aggressiveness", r.aggressiveness.is_some()),
                        ("routing.hot-threshold", r.hot_threshold.is_some()),
                        ("routing.hot-duration", r.hot_duration.is_some()),
                        ("routing.detour-share", r.detour_share.is_some()),
                        ("routing.max-intermediate", r.max_intermediate.is_some()),
                    ];
                    if let Some(key) = first_set(&controller) {
                        return Err(at(
                            key,
                            "sets the controller, which `routing.least-queued = true` replaces by per-packet choice"
                                .into(),
                        ));
                    }
                }
                if s.scenario.dense != DenseSetting::Auto {
                    return Err(at(
                        "scenario.dense",
                        "dense mode is the flow engine's (`scenario.engine = \"flow\"`); the packet engine moves packets one by one".into(),
                    ));
                }
                if let Some(sc) = &s.scheduling {
                    if sc.policy.protocol() {
                        return Err(at(
                            "scheduling.policy",
                            format!("`{}` runs Baraat's SPC protocol in its own round-based simulator of fluid rates, with `scenario.engine = \"flow\"`; the packet engine has no SPC switches", sc.policy.tag()),
                        ));
                    }
                    if sc.policy != SchedulingPolicy::FairShare {
                        return Err(at(
                            "scheduling.policy",
                            format!(
                                "`{}` runs on `scenario.engine = \"flow\"` (the idealized schedulers set flow priority classes); on the packet engine priorities come from `transport.kind = \"pias\"`",
                                sc.policy.tag()
                            ),
                        ));
                    }
                }
                if let Some(r) = s.routing.as_ref().filter(|r| r.policy == RoutingPolicy::SubwaysEcmp) {
                    return Err(at(
                        "routing.policy",
                        format!(
                            "`{}` runs on `scenario.engine = \"flow\"`; the packet engine offers `ecmp`, per-packet `adaptive` and `detour` (adaptive over the shortest paths and detours through neighbouring servers)",
                            r.policy.tag()
                        ),
                    ));
                }
                if s.storage.is_some() {
                    return Err(at(
                        "storage",
                        "storage policies place the blocks of `file-write` tasks on `scenario.engine = \"flow\"`"
                            .into(),
                    ));
                }
                if s.placement.is_some() {
                    return Err(at(
                        "placement",
                        "placement policies place the tasks of `compute-job` applications on `scenario.engine = \"flow\"`"
                            .into(),
                    ));
                }
                if let Some(t) = &s.transport {
                    if t.small_queue.is_some()
                        && !matches!(
                            t.kind,
                            TransportKind::Dctcp
                                | TransportKind::Mptcp
                                | TransportKind::DctcpReplication
                                | TransportKind::Cloudburst
                        )
                    {
                        return Err(at(
                            "transport.small-queue",
                            format!(
                                "puts the tasks' data in CloudBurst's small queue; `transport.kind = \"{}\"` has no such choice (use `cloudburst`, `dctcp`, `mptcp` or `dctcp-replication`)",
                                t.kind.tag()
                            ),
                        ));
                    }
                    if t.mptcp_subflows.is_some()
                        && t.kind != TransportKind::Mptcp
                        && t.traffic_kind != Some(TransportKind::Mptcp)
                    {
                        return Err(at(
                            "transport.mptcp-subflows",
                            "chooses the congestion control of `mptcp`'s subflows; neither `transport.kind` nor `transport.traffic-kind` is `mptcp`".into(),
                        ));
                    }
                    if t.spray.is_some() && t.kind != TransportKind::Cloudburst {
                        return Err(at(
                            "transport.spray",
                            format!(
                                "sprays CloudBurst's symbols over paths; `transport.kind = \"{}\"` is not `cloudburst`",
                                t.kind.tag()
                            ),
                        ));
                    }
                    if t.kind == TransportKind::Udp && t.traffic_kind.unwrap_or(t.kind) == TransportKind::Udp {
                        let tcp_only = [
                            ("transport.init-cwnd", t.init_cwnd.is_some()),
                            ("transport.min-rto", t.min_rto.is_some()),
                            ("transport.dctcp-gain", t.dctcp_gain.is_some()),
                        ];
                        if let Some(key) = first_set(&tcp_only) {
                            return Err(at(
                                key,
                                "sets a TCP sender; `transport.kind = \"udp\"` sends datagrams with no window, ACKs or retransmission".into(),
                            ));
                        }
                    }
                    if let Some(c) = t.task_class.filter(|&c| c > 7) {
                        return Err(at(
                            "transport.task-class",
                            format!("the packet engine has 8 strict-priority classes, 0-7; got {c}"),
                        ));
                    }
                    if let Some(v) = &t.pias_thresholds {
                        if v.windows(2).any(|w| w[1].0 <= w[0].0) || v.iter().any(|b| b.0.is_nan() || b.0 < 1.0) {
                            return Err(at(
                                "transport.pias-thresholds",
                                "must be ascending, each at least 1 byte".into(),
                            ));
                        }
                    }
                    if let Some(x) = t.reburst_timeout.filter(|x| x.0.is_nan() || x.0 <= 0.0) {
                        return Err(at("transport.reburst-timeout", format!("must be more than 0 s, got {} s", x.0)));
                    }
                }
                if let Some(a) = s.packet.as_ref().and_then(|p| p.buffer_alpha).filter(|a| !(*a > 0.0 && a.is_finite()))
                {
                    return Err(at("packet.buffer-alpha", format!("must be a positive number, got {a}")));
                }
            }
        }
        if let Some(t) = p.workload.tasks.iter().find(|t| t.2.queue.is_some()) {
            let why = if engine == EngineKind::Packet {
                Some("needs `scenario.engine = \"flow\"`: the packet engine starts every task on arrival")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(at(&format!("workload.app[{}].client-queue", t.1), why.into()));
            }
        }
        if s.scheduling.as_ref().is_some_and(|x| x.policy.protocol()) {
            self.check_spc(p)?;
        }
        if s.storage.is_some()
            && !p
                .workload
                .tasks
                .iter()
                .any(|t| netheat_workloads::apps::cfs::writes_blocks(t.2.kind) || t.2.kind == "chunk-write")
            && p.workload.stores.is_empty()
        {
            return Err(at(
                "storage.policy",
                "there is nothing to place: add a `[[workload.app]]` with `kind = \"file-write\"`, `kind = \"write-job\"`, `kind = \"chunk-store\"` or a `coflow` with `output-ratio`".into(),
            ));
        }
        if p.workload.stores.is_empty() && s.storage.as_ref().is_some_and(|st| st.initial_policy.is_some()) {
            return Err(at(
                "storage.initial-policy",
                "places the chunks a `chunk-store` app stored before the run, and there is none".into(),
            ));
        }
        if let Some(h) = s.storage.as_ref().and_then(|st| st.hedge_reads_after) {
            if !(h.0.is_finite() && h.0 > 0.0) {
                return Err(at("storage.hedge-reads-after", "must be a duration > 0".into()));
            }
            if !p.workload.tasks.iter().any(|t| t.2.read.is_some()) {
                return Err(at(
                    "storage.hedge-reads-after",
                    "has no chunk reads to hedge: the workload has no `chunk-store` app with `read-share` > 0".into(),
                ));
            }
        }
        if !p.workload.stores.is_empty() && s.storage.is_none() {
            return Err(at(
                "workload.app",
                "a `chunk-store` app's chunks need a replica placement: add `[storage]` (`policy = \"uniform\"` for rack-aware uniform placement)".into(),
            ));
        }
        if !p.workload.clusters.is_empty() {
            self.check_cluster(p)?;
        }
        if s.placement.is_some()
            && !p.workload.tasks.iter().any(|t| t.2.job.is_some())
            && p.workload.clusters.is_empty()
        {
            return Err(at(
                "placement.policy",
                "there is nothing to place: add a `[[workload.app]]` with `kind = \"compute-job\"` or `kind = \"cluster\"` to the workload"
                    .into(),
            ));
        }
        if !p.workload.background.is_empty() || !p.workload.precalculated_apps.is_empty() {
            let key = match p.workload.precalculated_apps.first() {
                Some(i) if p.workload.background.is_empty() => format!("workload.app.{i}.precalculated"),
                _ => "workload.traffic".to_string(),
            };
            let why = if engine == EngineKind::Packet {
                Some("precalculated traffic is taken off the links' capacity on `scenario.engine = \"flow\"`; the packet engine queues every packet it carries")
            } else if s.scheduling.as_ref().is_some_and(|x| x.policy.protocol()) {
                Some("precalculated traffic cannot run with `scheduling.policy = \"spc\"` or `\"rcp\"`: the SPC protocol simulator's link capacities are fixed")
            } else if !p.topology.events().is_empty() {
                Some("precalculated traffic cannot run with capacity `[[events]]` of the datacenter yet: its load is taken off the links' nominal capacity")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(at(&key, why.into()));
            }
            if let Some(d) = s.scenario.background_step {
                if !(d.0.is_finite() && d.0 > 0.0) {
                    return Err(at("scenario.background-step", "must be a positive duration".into()));
                }
            }
        }
        if p.workload.flows.is_empty() && p.workload.tasks.is_empty() && p.workload.clusters.is_empty() {
            return Err(at("workload", "the workload generated no flow and no task".into()));
        }
        Ok(())
    }

    /// What a `cluster` app needs: a placement policy to schedule it, the
    /// flow engine, a stop time, and fair sharing (its tasks' flows are
    /// started by its scheduler, outside the flow schedulers' task model;
    /// routing policies route them).
    fn check_cluster(&self, p: &Parts) -> Result<(), ScenarioError> {
        let s = &p.sections;
        let at = |key: &str, reason: String| ScenarioError::Config(self.doc.at(key, reason));
        if p.workload.clusters.len() > 1 {
            return Err(at(
                "workload.app",
                "a scenario runs one `cluster` app (one scheduler); merge the tables".into(),
            ));
        }
        if s.scenario.engine != EngineKind::Flow {
            return Err(at(
                "scenario.engine",
                "a `cluster` app's tasks are placed and migrated by `[placement]` on `scenario.engine = \"flow\"`"
                    .into(),
            ));
        }
        if s.placement.is_none() {
            return Err(at(
                "workload.app",
                "a `cluster` app's tasks need a scheduler: add `[placement]` (`policy = \"bandwidth-oblivious\"` for the scheduler's own objectives)".into(),
            ));
        }
        if s.scenario.duration.is_none() {
            return Err(at(
                "scenario.duration",
                "a `cluster` app's scheduler ticks until the run stops: set `scenario.duration` (its jobs arrive over `workload.duration`)".into(),
            ));
        }
        if let Some(x) = s.scheduling.as_ref().filter(|x| x.policy != SchedulingPolicy::FairShare) {
            return Err(at(
                "scheduling.policy",
                format!(
                    "`{}` cannot run with a `cluster` app yet: its tasks' flows share links fairly, outside the flow schedulers' task model",
                    x.policy.tag()
                ),
            ));
        }
        Ok(())
    }

    /// What `scheduling.policy = "spc"` (or `"rcp"`) cannot run with: the SPC protocol
    /// simulator takes every flow's path and every link's capacity once,
    /// before the run, and runs the tasks' steps as they are.
    fn check_spc(&self, p: &Parts) -> Result<(), ScenarioError> {
        let s = &p.sections;
        let at = |reason: String| ScenarioError::Config(self.doc.at("scheduling.policy", reason));
        let tag = s.scheduling.as_ref().map_or("spc", |x| x.policy.tag());
        if let Some(r) = s.routing.as_ref().filter(|r| r.policy != RoutingPolicy::Ecmp) {
            return Err(at(format!(
                "`{tag}` cannot run with `routing.policy = \"{}\"`: the SPC protocol simulator keeps each flow on the ECMP path drawn when it starts and cannot re-route running flows",
                r.policy.tag()
            )));
        }
        if s.storage.is_some() {
            return Err(at(format!(
                "`{tag}` cannot run with `storage.policy`: storage policies place a block's replicas when its pipeline starts, with the network as it is then, and the SPC protocol simulator takes every task's flows before the run"),
            ));
        }
        if s.placement.is_some() {
            return Err(at(format!(
                "`{tag}` cannot run with `placement.policy`: placement policies choose hosts when a job starts and migrate running tasks, and the SPC protocol simulator takes every task's flows before the run"),
            ));
        }
        if !p.topology.events().is_empty() {
            return Err(at(format!(
                "`{tag}` cannot run with capacity `[[events]]` of the datacenter: the SPC protocol simulator's link capacities are fixed"),
            ));
        }
        if s.scenario.dense != DenseSetting::Auto {
            return Err(at(format!(
                "`{tag}` cannot run with `scenario.dense`: the SPC protocol simulator computes its rates per round, without the flow engine's dense mode"),
            ));
        }
        Ok(())
    }

    /// Runs the scenario. `progress(done, total)` is called about every
    /// thousand engine steps; returning `false` stops the run
    /// ([`ScenarioError::Interrupted`]).
    pub fn run(
        &self,
        data: &DataDir,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<ScenarioResult, ScenarioError> {
        let parts = self.parts(data)?;
        self.run_parts(parts, progress)
    }

    /// Runs already resolved parts (see [`Scenario::parts`]).
    pub fn run_parts(
        &self,
        parts: Parts,
        progress: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<ScenarioResult, ScenarioError> {
        let Parts { sections: s, topology, topology_source, mut workload } = parts;
        let topo = &*topology;
        let seed = s.scenario.seed;
        let workload_bytes = budget::with_flow_bytes(s.flow_bytes(), || workload.estimate_bytes());
        let mut notes = workload.notes.clone();
        notes.extend(netheat_workloads::same_host_note(&workload.flows, &|i| format!("flow {i}")));
        let out = match s.scenario.engine {
            EngineKind::Flow => {
                let window_s = s.scenario.window.map_or(1.0, |d| d.0);
                // The precalculated traffic's flows, then the precalculated
                // apps' flows that wait on nothing (with their task and step).
                let (rows, steps) = background::precalculated_rows(&mut workload);
                let background = if rows.is_empty() {
                    None
                } else {
                    let step = s.scenario.background_step.map_or(1.0, |d| d.0);
                    // The precalculation keeps each of its flows and a window per link and step.
                    let plan = RunBudget::new(topo, rows.len() as u64, budget::memory_budget()?)
                        .map_err(|e| ScenarioError::Budget(format!("precalculated traffic: {e}")))?;
                    let bg = background::precalculate_cached(topo, &rows, step, seed, plan.max_windows, progress)?;
                    background::make_pauses(&mut workload.tasks, &rows, &steps, &bg);
                    Some(bg)
                };
                drop((rows, steps));
                // The flows the run carries (the precalculated ones are pauses now).
                let total =
                    workload.flows.len() as u64 + workload.tasks.iter().map(|t| t.2.num_flows() as u64).sum::<u64>();
                let disks = storage::disk_links(topo, &workload.tasks).iter().flatten().count() as u64;
                let plan = budget::with_flow_bytes(s.flow_bytes(), || -> Result<RunBudget, ScenarioError> {
                    RunBudget::with_device_links(topo, disks, total, budget::memory_budget()?)
                        .map_err(|e| ScenarioError::Budget(e.to_string()))
                })?;
                let compute_jobs = workload.tasks.iter().any(|t| t.2.job.is_some());
                let r = s.routing.clone();
                let lb = r.as_ref().map_or_else(netheat_subways::LbParams::default, config::RoutingSection::lb_params);
                lb.validate().map_err(|e| self.doc.at("routing", e.to_string()))?;
                let sc = s.scheduling.clone();
                let scheduling = sc.as_ref().map_or(SchedulingPolicy::FairShare, |x| x.policy);
                let heavy_bytes = match &sc {
                    Some(x) if x.policy.heavy() => match x.heavy_threshold {
                        Some(b) => b.0,
                        None => {
                            if !(0.0..=1.0).contains(&x.heavy_percentile) {
                                return Err(ScenarioError::Config(
                                    self.doc.at("scheduling.heavy-percentile", "must be within 0-1"),
                                ));
                            }
                            let mut sizes: Vec<f64> = workload.tasks.iter().map(|t| t.2.bytes()).collect();
                            sizes.extend(trace_task_sizes(&workload.flows));
                            netheat_flowsched::policy::percentile(&sizes, x.heavy_percentile)
                        }
                    },
                    _ => f64::INFINITY,
                };
                if let Some(x) = &sc {
                    if x.load_balancers == 0 {
                        return Err(ScenarioError::Config(
                            self.doc.at("scheduling.load-balancers", "must be at least 1"),
                        ));
                    }
                }
                // The protocol's keys are checked whatever the policy (and
                // refused where they would do nothing).
                let spc_opts = sc
                    .as_ref()
                    .map(|x| x.spc_options(heavy_bytes))
                    .transpose()
                    .map_err(|(key, reason)| ScenarioError::Config(self.doc.at(key, reason)))?;
                if let Some(opts) = spc_opts.filter(|_| scheduling.protocol()) {
                    let run = spc::SpcRun {
                        topo,
                        flows: &workload.flows,
                        tasks: workload.tasks,
                        client_counters: sc.as_ref().is_some_and(|x| x.task_ids == config::TaskIds::Client),
                        opts,
                        window_s,
                        links: Recorded::of(&s.scenario).links,
                        flows_table: Recorded::of(&s.scenario).flows,
                        plan,
                        until_s: s.scenario.duration.map(|d| d.0),
                        seed,
                    };
                    let out = spc::run_spc_scenario(run, progress)?;
                    return Ok(finish(out, notes, workload_bytes, &s.scenario, topo, &topology_source));
                }
                let run = flow::FlowRun {
                    topo,
                    flows: &workload.flows,
                    tasks: workload.tasks,
                    routing: r.as_ref().map_or(RoutingPolicy::Ecmp, |x| x.policy),
                    lb,
                    scheduling,
                    heavy_bytes,
                    poll_s: sc
                        .as_ref()
                        .and_then(|x| x.poll_interval)
                        .map_or(netheat_flowsched::IdealOptions::default().poll_s, |d| d.0),
                    lbs: sc.as_ref().map_or(1, |x| x.load_balancers),
                    client_counters: sc.as_ref().is_some_and(|x| x.task_ids == config::TaskIds::Client),
                    window_s,
                    until_s: s.scenario.duration.map(|d| d.0),
                    seed,
                    plan,
                    storage: match &s.storage {
                        None => None,
                        Some(st) => {
                            let cfg = st.policy_config();
                            let cluster = netheat_storage::Cluster::from_topology(topo)?;
                            let policy = netheat_storage::make_policy(st.policy.tag(), &cfg)?;
                            let q = st.decision_interval.map_or(0.0, |d| d.0);
                            if !(q.is_finite() && q >= 0.0) {
                                return Err(ScenarioError::Config(
                                    self.doc.at("storage.decision-interval", "must be a duration >= 0"),
                                ));
                            }
                            let mut run =
                                storage::StorageRun::new(policy, cluster, cfg.delta_s, st.balance_threshold, seed)
                                    .with_decision_interval(q, cfg.threshold_bytes)
                                    .with_free_source(st.free_source)
                                    .with_disks(topo)
                                    .with_failures(topo)
                                    .with_hedged_reads(st.hedge_reads_after.map(|d| d.0));
                            if let Some(iv) = st.rebalance_interval {
                                if !(iv.0.is_finite() && iv.0 > 0.0) {
                                    return Err(ScenarioError::Config(
                                        self.doc.at("storage.rebalance-interval", "must be a duration > 0"),
                                    ));
                                }
                                let target = st.rebalance_target.unwrap_or(0.8 * st.balance_threshold);
                                if !(target > 0.0 && target <= st.balance_threshold) {
                                    return Err(ScenarioError::Config(self.doc.at(
                                        "storage.rebalance-target",
                                        format!(
                                            "must be in (0, balance-threshold = {}], got {target}",
                                            st.balance_threshold
                                        ),
                                    )));
                                }
                                run.rebalancer = Some(storage::Rebalancer::new(iv.0, target));
                            } else if st.rebalance_target.is_some() {
                                return Err(ScenarioError::Config(self.doc.at(
                                    "storage.rebalance-target",
                                    "has no rebalancer to steer: set `storage.rebalance-interval`",
                                )));
                            }
                            let initial = match st.initial_policy {
                                Some(p) if p != st.policy => Some(netheat_storage::make_policy(p.tag(), &cfg)?),
                                _ => None,
                            };
                            run.prepopulate(&workload.stores, initial)
                                .map_err(|e| ScenarioError::Config(self.doc.at("storage.initial-policy", e)))?;
                            run.record = self.record.then(Vec::new);
                            Some(run)
                        }
                    },
                    cluster: match (&s.placement, workload.clusters.into_iter().next()) {
                        (Some(pl), Some(c)) => {
                            let (policy, params) = self.placement_policy(pl)?;
                            let until = s.scenario.duration.map_or(f64::INFINITY, |d| d.0);
                            let warmup = s.scenario.warmup.map_or(0.0, |d| d.0);
                            Some(cluster::ClusterRun::new(
                                topo,
                                c,
                                (policy, params),
                                pl.restart_delay.map_or(cluster::RESTART_DELAY_S, |d| d.0),
                                (until, warmup),
                                seed,
                            ))
                        }
                        _ => None,
                    },
                    placement: match &s.placement {
                        Some(_) if !compute_jobs => None,
                        None => None,
                        Some(pl) => {
                            let mut run = self.placement(pl, topo, seed)?;
                            run.record = self.record.then(Vec::new);
                            Some(run)
                        }
                    },
                    dense: s.scenario.dense.mode(),
                    recorded: Recorded::of(&s.scenario),
                    background,
                };
                let mut out = flow::run_flow(run, progress)?;
                if scheduling == SchedulingPolicy::FifoLm {
                    out.stat("heavy_threshold_bytes", heavy_bytes);
                }
                out
            }
            EngineKind::Packet => packet::run_packet(topo, &workload.flows, &workload.tasks, &s, progress)?,
        };
        Ok(finish(out, notes, workload_bytes, &s.scenario, topo, &topology_source))
    }
}

/// What every run's result carries: the workload's notes first, the seed,
/// the host count, what the memory budget charged for the workload
/// ([`netheat_config::Workload::estimate_bytes`]) and where the datacenter
/// came from.
fn finish(
    mut out: ScenarioResult,
    notes: Vec<String>,
    workload_bytes: f64,
    section: &config::ScenarioSection,
    topo: &netheat_topology::Topology,
    topology_source: &str,
) -> ScenarioResult {
    out.notes.splice(0..0, notes);

    // Tables left out of `scenario.record` (the flow engine did not keep
    // them in the first place).
    out.recorded = Recorded::of(section);
    if !out.recorded.flows {
        out.flows = Vec::new();
    }
    if !out.recorded.links {
        out.links = Vec::new();
        out.links_background = Vec::new();
    }
    if !out.recorded.queues {
        out.queues = Vec::new();
    }
    if let Some(w) = section.warmup {
        out.stat("warmup_s", w.0);
    }
    out.stat("seed", section.seed as f64);
    out.stats.insert("hosts".into(), topo.hosts().len() as f64);
    out.stats.insert("workload_estimate_bytes".into(), workload_bytes);
    out.notes.push(format!("datacenter: {topology_source}"));
    out
}

impl Scenario {
    /// The placement run of `[placement]`: the keys left out take
    /// netheat-sched's `SchedulerParams::default()`.
    fn placement(
        &self,
        pl: &config::PlacementSection,
        topo: &netheat_topology::Topology,
        seed: u64,
    ) -> Result<placement::PlacementRun, ScenarioError> {
        let (policy, params) = self.placement_policy(pl)?;
        Ok(placement::PlacementRun::new(policy, params, topo, seed))
    }

    /// `[placement]`'s policy and parameters (compute jobs and a cluster
    /// alike); a bad value is located at its key.
    fn placement_policy(
        &self,
        pl: &config::PlacementSection,
    ) -> Result<(Box<dyn netheat_sched::PlacementPolicy>, placement::PlacementParams), ScenarioError> {
        let (params, objectives) =
            pl.resolve().map_err(|(key, reason)| ScenarioError::Config(self.doc.at(key, reason)))?;
        Ok((netheat_sched::placement_policy(pl.policy.tag(), &objectives)?, params))
    }
}

/// Total bytes of each trace task (flows sharing a `task_id`) and of each
/// lone open-loop flow: the task sizes a `fifo-lm` threshold is drawn from.
fn trace_task_sizes(flows: &[netheat_workloads::FlowRow]) -> Vec<f64> {
    let mut by: std::collections::BTreeMap<u64, f64> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for f in flows {
        match f.task_id {
            Some(t) => *by.entry(t).or_default() += f.bytes,
            None => out.push(f.bytes),
        }
    }
    out.extend(by.into_values());
    out
}

/// The first of `keys` that the file sets (each key with whether it is set).
fn first_set<'k>(keys: &[(&'k str, bool)]) -> Option<&'k str> {
    keys.iter().find(|(_, set)| *set).map(|(key, _)| *key)
}
