//! The scenario file: one serde struct per section, owning its keys, their
//! defaults and their documentation.
//!
//! A scenario file is a datacenter document (the `[topology]`, `[hosts]`,
//! `[provisioning]`, `[[rack-group]]` and `[[events]]` tables of
//! `netheat topo`, inline or as `topology.file` with overrides beside it), a
//! workload (`[workload]`, the schema of `netheat workload generate`, inline
//! or as `workload.file`), and one section per kind of decision:
//! `[routing]` (path choice), `[scheduling]` (flow priority), `[storage]`
//! (replica placement), `[placement]` (task placement) and, on the packet
//! engine, `[transport]` and `[packet]`. Defaults of policy parameters are
//! the policies' own (`LbParams::default()`, `PolicyConfig::default()`,
//! `SchedulerParams::default()`, `TransportConfig::default()`, ...), so a
//! value is written down once.
//!
//! [`schema`] exports these structs as JSON Schema (descriptions are the doc
//! comments below): the Python package builds `netheat run --help` and the
//! key tables of `docs/scenarios.md` from it.

use netheat_config::units::{Bytes, Duration};
use schemars::JsonSchema;
use serde::Deserialize;

/// `[scenario]`: what runs and for how long.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ScenarioSection {
    /// Engine that moves the bytes: `flow` (exact fluid max-min sharing;
    /// routing, scheduling and storage policies) or `packet` (queues,
    /// drops and ECN; transports).
    #[serde(default)]
    pub engine: EngineKind,
    /// Simulated time at which the run stops; flows still running are
    /// reported unfinished (`finish_s` is NaN). Default: until every flow
    /// has finished (flow engine) or 1 s after the last start (packet).
    #[schemars(with = "Option<UnitString>")]
    pub duration: Option<Duration>,
    /// Seed of every random draw: workload generators, ECMP hashing and the
    /// policies' own choices. Same seed, same results.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Width of the utilization windows of the `links` table. Default: 1 s
    /// on the flow engine, 1 ms on the packet engine.
    #[schemars(with = "Option<UnitString>")]
    pub window: Option<Duration>,
    /// Flow engine only: when it may switch to dense mode, one rate per
    /// bottleneck group of flow classes where one event moves many rates:
    /// `auto`, `off` or `always`. The allocation is the same either way
    /// (docs/architecture.md); `stats.json` counts the dense instants.
    #[serde(default)]
    pub dense: DenseSetting,
    /// Flows and tasks that start before this run like the others and stay
    /// in the tables, but are left out of the summary values of `netheat
    /// run` and of experiments (`stats.json` gives it as `warmup_s`): a
    /// system measured once it is loaded. Default: 0.
    #[schemars(with = "Option<UnitString>")]
    pub warmup: Option<Duration>,
    /// The large tables to record: `flows` (a row per flow), `links` (a
    /// row per link and utilization window), `queues` (a row per switch
    /// port, packet engine) and `placements` (a row per stay of a task on a
    /// host, placement policies). The `tasks` table, and `blocks` and
    /// `migrations` when their policy runs, are always written. The flow
    /// engine forgets each flow when it finishes; with `flows` its row is
    /// kept (about 72 bytes), without it nothing is, so memory follows the
    /// flows in flight rather than every flow ever started (runs of tens of
    /// millions of flows), and the flow-time summary values are not
    /// computed; without `links` the engine keeps no utilization
    /// windows and the values read from them (`hot_tor_share`, a cluster's
    /// `placement_hot_tor_share`) are not computed. Either way the tasks,
    /// blocks and decisions are the same (only flows that finish at the
    /// same instant may be handled in another order). Default: `["flows",
    /// "links", "queues", "placements"]`.
    #[serde(default = "all_recorded")]
    pub record: Vec<RecordedTable>,
    /// Step of precalculated traffic (`workload.traffic.N.precalculated`):
    /// its load is measured per step of this length and taken off each
    /// link's capacity step by step. Default: 1 s (Sinbad's report interval,
    /// SIGCOMM'13 section 6.2).
    #[schemars(with = "Option<UnitString>")]
    pub background_step: Option<Duration>,
    /// Free text, copied to `stats.json`.
    pub description: Option<String>,
}

/// A table of `scenario.record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecordedTable {
    /// A row per flow.
    Flows,
    /// A row per link and utilization window.
    Links,
    /// A row per switch port (packet engine).
    Queues,
    /// A row per stay of a task on a host (placement policies).
    Placements,
}

fn all_recorded() -> Vec<RecordedTable> {
    vec![RecordedTable::Flows, RecordedTable::Links, RecordedTable::Queues, RecordedTable::Placements]
}

impl ScenarioSection {
    /// Whether `table` is recorded.
    pub fn records(&self, table: RecordedTable) -> bool {
        self.record.contains(&table)
    }
}

/// `scenario.dense`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DenseSetting {
    /// Where a batch of local repairs covers many flows and the classes
    /// aggregate enough to pay.
    #[default]
    Auto,
    /// Never: every instant is a local repair.
    Off,
    /// Whenever flows are active and no link is down.
    Always,
}

impl DenseSetting {
    /// The engine's mode.
    pub fn mode(self) -> netheat_engine::DenseMode {
        match self {
            Self::Auto => netheat_engine::DenseMode::Auto,
            Self::Off => netheat_engine::DenseMode::Off,
            Self::Always => netheat_engine::DenseMode::Always,
        }
    }
}

/// How a unit-string key appears in the schema: a string of format `unit`
/// (`"10Gbps"`, `"256MiB"`, `"5min"`), so help and docs can say so.
pub struct UnitString;

impl JsonSchema for UnitString {
    fn schema_name() -> String {
        "UnitString".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        schemars::schema::SchemaObject {
            instance_type: Some(schemars::schema::InstanceType::String.into()),
            format: Some("unit".into()),
            ..Default::default()
        }
        .into()
    }
}

fn default_seed() -> u64 {
    1
}

impl Default for ScenarioSection {
    fn default() -> Self {
        Self {
            engine: EngineKind::Flow,
            duration: None,
            seed: 1,
            window: None,
            dense: DenseSetting::Auto,
            warmup: None,
            record: all_recorded(),
            background_step: None,
            description: None,
        }
    }
}

/// `scenario.engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    /// The exact flow-level engine.
    #[default]
    Flow,
    /// The packet-level engine.
    Packet,
}

/// `[routing]`: how a flow's path is chosen (Subways' load balancing,
/// CoNEXT'15 §4; on any datacenter, not only Subways wirings).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RoutingSection {
    /// `ecmp` (static per-flow hash over shortest paths, weighted by port
    /// speed: a shortcut through a ToR both servers have ports on is always
    /// taken), `subways-ecmp` (vanilla ECMP of the Subways paper, CoNEXT'15
    /// §4.2-4.3: a server has one rule with one option per ToR it is wired
    /// to, drawn per flow by port speed, so shortcuts are not always taken;
    /// a fabric route is drawn uniformly), `adaptive` (ports and paths drawn
    /// by residual capacity, running flows re-drawn every period) or
    /// `detour` (adaptive plus detours through neighbouring racks' ToRs when
    /// every ToR of a server is hot: running flows move onto them at a
    /// period, and flows that start before the next one take them). The
    /// controller of `adaptive` and
    /// `detour` reads each link's average rate over the period just ended
    /// (§8.1: counters read every period). A ToR whose every link fails at
    /// time 0 (`[[events]]`) is down for these policies from the start: they
    /// never use its ports; later capacity events are seen only through the
    /// rates. On the packet engine `adaptive` and `detour` are the same
    /// controller, which draws each flow's path as it starts and hears the
    /// links' byte counters every period (unless `least-queued`), and
    /// `subways-ecmp` is refused.
    #[serde(default)]
    pub policy: RoutingPolicy,
    /// Packet engine, `adaptive` and `detour`: instead of the controller,
    /// every data packet takes its flow's path with the fewest bytes queued
    /// along it now (a hop costing a packet; ours, not the Subways paper's
    /// mechanism), for `detour` among the shortest paths and detours through
    /// a neighbouring server (one per ToR of the source, with a port on a
    /// ToR the source does not reach). Default: false.
    pub least_queued: Option<bool>,
    /// Controller period: utilization samples and re-binding.
    #[schemars(with = "Option<UnitString>")]
    pub period: Option<Duration>,
    /// Weight of the newest utilization sample in the EWMA, in (0, 1].
    pub ewma_weight: Option<f64>,
    /// Probability that a running flow is re-drawn each period.
    pub aggressiveness: Option<f64>,
    /// Utilization above which a ToR uplink is hot (`detour`).
    pub hot_threshold: Option<f64>,
    /// A ToR stays hot at least this long once detected (`detour`).
    #[schemars(with = "Option<UnitString>")]
    pub hot_duration: Option<Duration>,
    /// Share of a remote ToR's residual uplink capacity offered to detours.
    pub detour_share: Option<f64>,
    /// Most intermediate servers on a detour.
    pub max_intermediate: Option<usize>,
}

impl RoutingSection {
    /// The load balancers' parameters: the Subways defaults
    /// (`netheat_subways::LbParams`) where the section sets none.
    pub fn lb_params(&self) -> netheat_subways::LbParams {
        let d = netheat_subways::LbParams::default();
        netheat_subways::LbParams {
            t_rebind_s: self.period.map_or(d.t_rebind_s, |x| x.0),
            ewma_weight: self.ewma_weight.unwrap_or(d.ewma_weight),
            aggressiveness: self.aggressiveness.unwrap_or(d.aggressiveness),
            hot_threshold: self.hot_threshold.unwrap_or(d.hot_threshold),
            t_duration_s: self.hot_duration.map_or(d.t_duration_s, |x| x.0),
            detour_share: self.detour_share.unwrap_or(d.detour_share),
            max_intermediate: self.max_intermediate.unwrap_or(d.max_intermediate),
            ..d
        }
    }
}

/// `routing.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RoutingPolicy {
    /// Static per-flow hash over shortest paths.
    #[default]
    Ecmp,
    /// Vanilla Subways ECMP: one rule per server with an option per ToR.
    SubwaysEcmp,
    /// Residual-capacity port and path choice, re-drawn every period.
    Adaptive,
    /// Adaptive plus detours through neighbouring racks.
    Detour,
}

impl RoutingPolicy {
    /// The tag of the policy (`netheat_subways::POLICIES` but `ecmp`, which
    /// is the engine's own hash).
    pub fn tag(self) -> &'static str {
        match self {
            Self::Ecmp => "ecmp",
            Self::SubwaysEcmp => "subways-ecmp",
            Self::Adaptive => "adaptive",
            Self::Detour => "detour",
        }
    }
}

/// `[scheduling]`: the priority class of each flow (Baraat, SIGCOMM'14 §3;
/// the idealized schedulers on the flow engine's strict priority classes).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SchedulingSection {
    /// `fair-share` (one class), `sff` (smallest flow first), `stf`
    /// (smallest task first, by total task bytes), `fifo` (tasks served in
    /// arrival order), `fifo-lm` (FIFO with limited multiplexing: a task
    /// that has sent more than the heavy threshold yields to later tasks)
    /// or `spc` (FIFO-LM through Baraat's decentralized Smart Priority Class
    /// protocol, §4.3 Algorithms 1 and 2: every `rtt` each sender requests a
    /// rate and each switch port answers from per-task counters; a
    /// round-based simulator on ECMP paths fixed when the run starts, so
    /// it takes no `adaptive`/`detour` routing, storage or placement policy
    /// and no `[[events]]`) or `rcp` (the same protocol with every flow in
    /// one class: per-flow fair share at the protocol's rounds, the
    /// paper's FS baseline of its testbed and ns-2 runs, §5.1 footnote 4).
    /// A task is an application task of the workload, or a flow of an
    /// open-loop generator (flows of a replayed trace that share a
    /// `task_id` form one task).
    #[serde(default)]
    pub policy: SchedulingPolicy,
    /// `fifo-lm`, `spc`: bytes above which a task is heavy (`spc`: its
    /// bytes reserved at a switch port, the classifier's size proxy,
    /// Baraat §4.3). Default: the `heavy-percentile` of the scenario's task
    /// sizes.
    #[schemars(with = "Option<UnitString>")]
    pub heavy_threshold: Option<Bytes>,
    /// `fifo-lm`, `spc`: the task-size quantile (0-1) used as the heavy
    /// threshold when `heavy-threshold` is not given (Baraat §3.3 sets it
    /// from the workload's size distribution, 80th-90th percentile for
    /// heavy tails; 0.8 as in netheat's Baraat experiment).
    #[serde(default = "default_heavy_percentile")]
    pub heavy_percentile: f64,
    /// `fifo-lm`: how often the bytes sent by tasks larger than the heavy
    /// threshold are read, so a task turns heavy at most this long after it
    /// crosses it (polls that cannot find a crossing yet are skipped: the
    /// rule of netheat-flowsched's `HeavyPoll`, shared with the Baraat
    /// experiment's runner).
    #[schemars(with = "Option<UnitString>")]
    pub poll_interval: Option<Duration>,
    /// `spc`, `rcp`: the protocol's round, one RTT: every round each flow's sender
    /// sends a scheduling request and sends during the next round at the
    /// rate its path's ports answered (Baraat §4.3.1). The default is the
    /// 100 us RTT of the paper's ns-2 micro-benchmarks (§5.3).
    #[schemars(with = "Option<UnitString>")]
    pub rtt: Option<Duration>,
    /// `spc`, `rcp`: Algorithm 1's `delta`, the headroom a sender held back at a
    /// bottleneck adds to the smallest nominal rate of its path in its next
    /// demand, as a fraction of its NIC rate (§4.3.1 calls it "a small
    /// value" without a number; netheat-flowsched's `SpcOptions` default).
    pub delta: Option<f64>,
    /// `spc`: what gets a priority class: `task` (Baraat: a task's flows
    /// share its class max-min) or `flow` (one flow at a time at a
    /// bottleneck, in FIFO order: the per-flow serialization Baraat §5.3
    /// compares intra-task fair sharing with, Figure 16).
    pub class_unit: Option<ClassUnit>,
    /// `spc`: how many consecutive tasks (or flows, with `class-unit =
    /// "flow"`) in FIFO order share one class, at least 1. Baraat §5.3
    /// maps several tiny tasks onto one task id so the cost of switching
    /// between classes is paid once per group (Figure 14); a port sees
    /// only the shared id, so its counters and heavy flag are per class.
    pub class_size: Option<u64>,
    /// `spc`, `rcp`: virtual capacity (Baraat §4.3.2): every port steers the
    /// capacity it hands out from its input and queue each round, with
    /// RCP's gains (0.4 on the rate mismatch, 1 on the queue; the paper
    /// gives none), so allocation held by flows bottlenecked elsewhere goes
    /// to others and a port's input may exceed its capacity for a while (a
    /// fluid queue whose wait a flow's last byte pays). Off by default:
    /// with these gains the controller can cycle without settling where a
    /// task's flows are bottlenecked on different links, and every round of
    /// a cycle costs work (see netheat-flowsched's `VirtualCapacity`).
    pub virtual_capacity: Option<bool>,
    /// Load balancers issuing task ids round-robin (FIFO order is per
    /// balancer, Baraat §3.2).
    #[serde(default = "default_lbs")]
    pub load_balancers: usize,
    /// Who issues task ids, the FIFO order (Baraat §4.1: counters that
    /// start apart and step by their number): `load-balancers` (the
    /// `load-balancers` counters take the tasks in turn, in start order) or
    /// `client` (every client numbers its own tasks: a task's client is
    /// the queue it waits in, else the host its last flow reaches, as each
    /// of Baraat's Memcached clients keeps a counter, §5.1; FIFO across
    /// clients is then approximate).
    #[serde(default)]
    pub task_ids: TaskIds,
}

/// `scheduling.task-ids`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TaskIds {
    /// `load-balancers` counters, in turn.
    #[default]
    LoadBalancers,
    /// A counter per client.
    Client,
}

fn default_heavy_percentile() -> f64 {
    0.8
}

fn default_lbs() -> usize {
    1
}

/// `scheduling.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulingPolicy {
    /// Max-min fair sharing, one class.
    #[default]
    FairShare,
    /// Smallest flow first.
    Sff,
    /// Smallest task first.
    Stf,
    /// Tasks in arrival order.
    Fifo,
    /// FIFO with limited multiplexing.
    FifoLm,
    /// FIFO-LM through Baraat's SPC protocol.
    Spc,
    /// Per-flow fair share through the same protocol, every flow in one
    /// class: sources learn their exact max-min rate each round, the
    /// "optimized RCP" Baraat compares against in its testbed and ns-2
    /// runs (§5.1, footnote 4), with the protocol's round costs.
    Rcp,
}

/// `scheduling.class-unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClassUnit {
    /// A task's flows share its class.
    #[default]
    Task,
    /// Every flow has its own class.
    Flow,
}

impl SchedulingPolicy {
    /// The tag in `netheat_flowsched::POLICIES` (`spc` is not there: it
    /// runs `netheat_flowsched::run_spc_dag`, not the flow engine).
    pub fn tag(self) -> &'static str {
        match self {
            Self::FairShare => "fair-share",
            Self::Sff => "sff",
            Self::Stf => "stf",
            Self::Fifo => "fifo",
            Self::FifoLm => "fifo-lm",
            Self::Spc => "spc",
            Self::Rcp => "rcp",
        }
    }

    /// Whether the policy uses a heavy threshold (`fifo-lm`, `spc`).
    pub fn heavy(self) -> bool {
        matches!(self, Self::FifoLm | Self::Spc)
    }

    /// Whether the policy runs the SPC protocol simulator (`spc`, `rcp`)
    /// rather than the flow engine.
    pub fn protocol(self) -> bool {
        matches!(self, Self::Spc | Self::Rcp)
    }
}

/// `[storage]`: where the replicas of each block of a `file-write`
/// application go (Sinbad, SIGCOMM'13 §4; CCP, the hotspot paper §5).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StorageSection {
    /// `uniform` (rack-aware, uniform), `ccp` (racks by uplink class, the
    /// hotspot paper's chunk placement), `ccp-balance` (CCP as a tweak of
    /// the even spread: racks drawn with weights proportional to uplink per
    /// storage) or `sinbad` (network-balanced: the least-loaded rack
    /// downlinks by an EWMA of reported rates).
    #[serde(default)]
    pub policy: StoragePolicy,
    /// Sinbad: report interval (Δ, SIGCOMM'13 §6.2); hysteresis uses the time left to the next report.
    #[schemars(with = "Option<UnitString>")]
    pub report_interval: Option<Duration>,
    /// Sinbad: EWMA weight of a new report.
    pub ewma_weight: Option<f64>,
    /// Sinbad: blocks smaller than this use the default placement.
    #[schemars(with = "Option<UnitString>")]
    pub small_block: Option<Bytes>,
    /// Decision interval `q` (SIGCOMM'13 sections 5.2, 7.1): a block of at
    /// least `small-block` waits from its request to the next multiple of
    /// `q`, and the blocks waiting then are placed together, fewest blocks
    /// of their file left first (OPT'). The `blocks` table's `start_s` is
    /// the placement, `requested_s` the request. Default 0: every block is
    /// placed when requested.
    #[schemars(with = "Option<UnitString>")]
    pub decision_interval: Option<Duration>,
    /// No bottleneck at sources (SIGCOMM'13 section 7.2's optimistic
    /// bound): a pipeline's hops leave out the writer's server uplinks and
    /// its ToRs' uplinks, as if the writer sat where they are free. A
    /// thought experiment, not a deployable setting.
    #[serde(default)]
    pub free_source: bool,
    /// Storage balance: hosts whose used fraction exceeds the mean by more
    /// than this are avoided while others qualify.
    #[serde(default = "default_balance")]
    pub balance_threshold: f64,
    /// The policy that placed the chunks a `chunk-store` had stored before
    /// the run (default: `policy`). The hotspot paper applies CCP to new
    /// chunks only (NSDI'25 §5.2), the rest having been placed without it:
    /// `initial-policy = "uniform"` with `policy = "ccp"`.
    pub initial_policy: Option<StoragePolicy>,
    /// A background rebalancer checks the storage balance this often; when
    /// a storing host is further than `balance-threshold` from the mean
    /// used fraction, or would be by the next check at twice the fastest
    /// growth seen between two checks, it moves replicas (each move a flow)
    /// until every host is within `rebalance-target`. Default: none.
    #[schemars(with = "Option<UnitString>")]
    pub rebalance_interval: Option<Duration>,
    /// What a triggered rebalancer brings every host back within (fraction
    /// of capacity, at most `balance-threshold`; default 0.8 of it, a low
    /// watermark so it need not act again at the very next check).
    pub rebalance_target: Option<f64>,
    /// A chunk read (a `chunk-store` app's) still missing some of what it
    /// fetches this long after it started fetches more, once: a replicated
    /// chunk's next reachable replica (HDFS's hedged reads,
    /// `dfs.client.hedged.read.threshold.millis`), an erasure-coded chunk's
    /// other reachable chunks of its stripe, one per data chunk still
    /// missing (a degraded read: the hotspot paper, NSDI'25 §3, finds that
    /// Colossus clients make them when a chunk's disk, CPU or network is
    /// overloaded, and that on a hot ToR they add to its load). The read
    /// finishes with the first copy, or the first `data` chunks, to arrive;
    /// the fetches still running then are cancelled (a disk access already
    /// queued is still served). "The Tail at Scale" (Dean and Barroso,
    /// CACM 2013) hedges after the 95th percentile of the expected latency.
    /// Default: none (a read waits for what it asked for).
    #[schemars(with = "Option<UnitString>")]
    pub hedge_reads_after: Option<Duration>,
}

fn default_balance() -> f64 {
    0.1
}

impl SchedulingSection {
    /// The SPC options of the `spc` keys, keys left out at
    /// netheat-flowsched's `SpcOptions::default()`, with the resolved heavy
    /// threshold; a bad value is `(key, reason)`.
    pub fn spc_options(&self, heavy_bytes: f64) -> Result<netheat_flowsched::SpcOptions, (&'static str, &'static str)> {
        let d = netheat_flowsched::SpcOptions::default();
        if self.policy != SchedulingPolicy::Spc {
            if self.class_unit.is_some() {
                return Err(("scheduling.class-unit", "is a setting of `policy = \"spc\"` only"));
            }
            if self.class_size.is_some() {
                return Err(("scheduling.class-size", "is a setting of `policy = \"spc\"` only"));
            }
        }
        if self.class_size == Some(0) {
            return Err(("scheduling.class-size", "must be at least 1"));
        }
        if self.virtual_capacity.is_some() && !matches!(self.policy, SchedulingPolicy::Spc | SchedulingPolicy::Rcp) {
            return Err(("scheduling.virtual-capacity", "is a setting of `policy = \"spc\"` or `\"rcp\"` only"));
        }
        let o = netheat_flowsched::SpcOptions {
            rtt_s: self.rtt.map_or(d.rtt_s, |x| x.0),
            delta_frac: self.delta.unwrap_or(d.delta_frac),
            threshold: heavy_bytes,
            lbs: self.load_balancers,
            class_unit: match self.class_unit.unwrap_or_default() {
                ClassUnit::Task => netheat_flowsched::ClassUnit::Task,
                ClassUnit::Flow => netheat_flowsched::ClassUnit::Flow,
            },
            class_size: if self.policy == SchedulingPolicy::Rcp { u64::MAX } else { self.class_size.unwrap_or(1) },
            virtual_capacity: match self.virtual_capacity {
                Some(true) => Some(netheat_flowsched::VirtualCapacity::default()),
                Some(false) => None,
                None => d.virtual_capacity,
            },
            ..d
        };
        if !(o.rtt_s.is_finite() && o.rtt_s > 0.0) {
            return Err(("scheduling.rtt", "must be a positive duration"));
        }
        if !(o.delta_frac.is_finite() && o.delta_frac >= 0.0) {
            return Err(("scheduling.delta", "must be a fraction of the NIC rate, >= 0"));
        }
        Ok(o)
    }
}

impl StorageSection {
    /// The policy settings, keys left out at netheat-storage's
    /// `PolicyConfig::default()`.
    pub fn policy_config(&self) -> netheat_storage::PolicyConfig {
        let d = netheat_storage::PolicyConfig::default();
        netheat_storage::PolicyConfig {
            delta_s: self.report_interval.map_or(d.delta_s, |x| x.0),
            alpha: self.ewma_weight.unwrap_or(d.alpha),
            threshold_bytes: self.small_block.map_or(d.threshold_bytes, |x| x.0),
        }
    }
}

/// `storage.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StoragePolicy {
    /// Uniform rack-aware placement.
    #[default]
    Uniform,
    /// The hotspot paper's CCP: High over Medium over Low uplink class, strictly.
    Ccp,
    /// CCP as a tweak of the even spread of new chunks: racks drawn with
    /// weights proportional to their uplink bandwidth per storage.
    CcpBalance,
    /// Sinbad.
    Sinbad,
}

impl StoragePolicy {
    /// The tag in `netheat_storage::POLICIES`.
    pub fn tag(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Ccp => "ccp",
            Self::CcpBalance => "ccp-balance",
            Self::Sinbad => "sinbad",
        }
    }
}

/// `[placement]`: the hosts of the tasks of `compute-job` applications and
/// of a `cluster` app's jobs and queries (UTP, the hotspot paper §5.1:
/// ToR-utilization-aware task placement and reactive migration off hot
/// ToRs), with netheat-sched's scheduler model.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PlacementSection {
    /// `bandwidth-oblivious` (the scheduler's own objectives only, never
    /// migrates), `utp` (the hotspot paper's tweak of the scheduler's
    /// low-priority load-balance objective, §5.1: with `cpu-balance` among
    /// the objectives it becomes the larger of the candidate's CPU
    /// utilization and its ToR's projected utilization with the task's
    /// demand; without it, the ToR's projected utilization is added as the
    /// lowest-priority objective; and migrates tasks off hot ToRs),
    /// `reactive-only` (oblivious placement plus the migrations) or
    /// `utp-tiebreak` (ours, the project's earlier reading: the projected
    /// ToR utilization always appended as the last objective, and the
    /// migrations). When a job starts, each of its tasks goes to the best
    /// of `candidates` sampled hosts with free cores and memory (the whole
    /// cluster when none of the sample has room; a host already running
    /// a task of the same job is never chosen); cores and memory are
    /// released when every flow the task sends or receives has finished.
    #[serde(default)]
    pub policy: PlacementPolicyKind,
    /// Hosts sampled per placement.
    pub candidates: Option<usize>,
    /// The scheduler's own objectives, most important first: `spread-job`
    /// (fewer tasks of the job in the candidate's rack), `bin-pack` (fewer
    /// free cores left) and `cpu-balance` (lower CPU utilization after
    /// placement, the scheduler's low-priority load balance that `utp`
    /// tweaks). Default: `["spread-job", "bin-pack", "cpu-balance"]`.
    pub objectives: Option<Vec<PlacementObjective>>,
    /// Utilization above which a ToR's uplinks are hot (the paper's 75%).
    pub hot_threshold: Option<f64>,
    /// Sampling period of ToR outbound utilization (live rates over the
    /// uplink capacity in force).
    #[schemars(with = "Option<UnitString>")]
    pub tick: Option<Duration>,
    /// Detection window and migration period: a ToR whose samples over a
    /// whole window average above the threshold is hot (the paper's
    /// 5-minute average, §3); every window, migrating
    /// policies move the latency-tolerant tasks with the largest outbound
    /// rates off each hot ToR, fewest first.
    #[schemars(with = "Option<UnitString>")]
    pub detect: Option<Duration>,
    /// Migrations allowed per job per detection window (the availability
    /// budget).
    pub budget_per_window: Option<u32>,
    /// `cluster` apps: what a migration costs. The hotspot paper gives no
    /// cost (§5.1 only says migrations must stay within availability
    /// budgets), so a migrated cluster task is restarted: it loses the work
    /// done since it last started and, on its new server, sends nothing for
    /// this delay before running again in full. Default: 25 s, Borg's
    /// median task startup latency (Verma et al., "Large-scale cluster
    /// management at Google with Borg", EuroSys 2015, §3.2), the cost of
    /// starting a task anew. (`compute-job` tasks instead carry their
    /// undelivered bytes to the new host.)
    #[schemars(with = "Option<UnitString>")]
    pub restart_delay: Option<Duration>,
}

impl PlacementSection {
    /// The run's parameters and the scheduler's objectives, keys left out
    /// at netheat-sched's `SchedulerParams::default()`; a bad value is
    /// `(key, reason)`.
    pub fn resolve(
        &self,
    ) -> Result<(crate::placement::PlacementParams, Vec<netheat_sched::Objective>), (&'static str, &'static str)> {
        let d = netheat_sched::SchedulerParams::default();
        let params = crate::placement::PlacementParams {
            candidates: self.candidates.unwrap_or(d.candidates),
            hot_threshold: self.hot_threshold.unwrap_or(d.hot_threshold),
            tick_s: self.tick.map_or(d.tick_s, |x| x.0),
            detect_s: self.detect.map_or(d.detect_s, |x| x.0),
            budget_per_window: self.budget_per_window.unwrap_or(d.budget_per_window),
        };
        if params.candidates == 0 {
            return Err(("placement.candidates", "must be at least 1"));
        }
        if !(params.hot_threshold.is_finite() && params.hot_threshold > 0.0) {
            return Err(("placement.hot-threshold", "must be a utilization above 0"));
        }
        for (key, v) in [("placement.tick", params.tick_s), ("placement.detect", params.detect_s)] {
            if !(v.is_finite() && v > 0.0) {
                return Err((key, "must be a positive duration"));
            }
        }
        if self.restart_delay.is_some_and(|r| !(r.0.is_finite() && r.0 >= 0.0)) {
            return Err(("placement.restart-delay", "must be a duration of 0 s or more"));
        }
        let objectives = match &self.objectives {
            None => d.objectives,
            Some(o) => o.iter().map(|x| x.objective()).collect(),
        };
        Ok((params, objectives))
    }
}

/// `placement.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementPolicyKind {
    /// The scheduler's objectives only.
    #[default]
    BandwidthOblivious,
    /// ToR-utilization-aware placement and migration.
    Utp,
    /// Oblivious placement plus migration.
    ReactiveOnly,
    /// Ours, the project's earlier reading of UTP: the scheduler's
    /// objectives untouched, the projected ToR utilization appended as a
    /// last tie-breaker, and migration.
    UtpTiebreak,
}

impl PlacementPolicyKind {
    /// The tag in `netheat_sched::POLICIES`.
    pub fn tag(self) -> &'static str {
        match self {
            Self::BandwidthOblivious => "bandwidth-oblivious",
            Self::Utp => "utp",
            Self::ReactiveOnly => "reactive-only",
            Self::UtpTiebreak => "utp-tiebreak",
        }
    }
}

/// One of `placement.objectives`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementObjective {
    /// Fewer tasks of the same job in the candidate's rack first.
    SpreadJob,
    /// Fewer free cores left after placement first.
    BinPack,
    /// Lower CPU utilization after placement first.
    CpuBalance,
}

impl PlacementObjective {
    /// The objective of netheat-sched.
    pub fn objective(self) -> netheat_sched::Objective {
        match self {
            Self::SpreadJob => netheat_sched::Objective::SpreadJob,
            Self::BinPack => netheat_sched::Objective::BinPack,
            Self::CpuBalance => netheat_sched::Objective::CpuBalance,
        }
    }
}

/// `[transport]` (packet engine): the end-host transport of every flow.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TransportSection {
    /// Transport of every flow, or of the application tasks' flows when
    /// `traffic-kind` is set: `newreno`, `dctcp` (ECN marking at
    /// `packet.ecn-threshold`), `pias` (DCTCP plus priority demotion by
    /// bytes sent, PIAS NSDI'15), `cloudburst` (multipath with fountain
    /// coding in the small CloudBurst queue, §3 of the CloudBurst slides;
    /// `spray` and `small-queue` turn its two mechanisms off for the
    /// slides' variants A to C), `mptcp` (a message split in two halves
    /// over two subflows on different ECMP paths, done when both are;
    /// `mptcp-subflows` says which congestion control they run) or
    /// `dctcp-replication`
    /// (two DCTCP copies of a message on different ECMP paths; done when
    /// the first is) or `udp` (each message's datagrams of up to 1,472
    /// payload bytes, 28 header bytes each, sent at once with no ACKs,
    /// window or retransmission, so a message with a lost datagram never
    /// finishes: memcache's requests and responses in Subways §8.7).
    #[serde(default)]
    pub kind: TransportKind,
    /// Transport of the open-loop `[[workload.traffic]]` flows. Default:
    /// `kind`.
    pub traffic_kind: Option<TransportKind>,
    /// Strict-priority class (0 is served first) of the application tasks'
    /// flows, for transports that do not choose their own (all but `pias`,
    /// which adds its demotions to it, and CloudBurst, whose symbols always
    /// use the small CloudBurst queue). Open-loop flows take their
    /// `[[workload.traffic]]` table's `priority`. Default: 0.
    pub task_class: Option<u8>,
    /// The application tasks' data packets use the small CloudBurst queue
    /// of `packet.cloudburst-queue`. For `kind = "cloudburst"` this is the
    /// protocol's separate small-buffered queue (default true; false keeps
    /// its symbols in class 1 with the ordinary buffers, the slides'
    /// variants A and B). For `dctcp`, `mptcp` and `dctcp-replication` it
    /// gives a baseline all of CloudBurst's isolation (default false).
    /// Other kinds refuse it.
    pub small_queue: Option<bool>,
    /// `mptcp`: the subflows' congestion control. `lia` (default): MPTCP as
    /// standardized, RFC 6356's linked increases coupling the two windows,
    /// each of which halves on a loss or, once a window, on an ECN echo
    /// (RFC 3168). `dctcp`: two uncoupled DCTCP subflows (ours; each
    /// takes a DCTCP flow's share, so the message takes two on a shared
    /// bottleneck).
    pub mptcp_subflows: Option<MptcpSubflows>,
    /// `kind = "cloudburst"`: the application tasks' symbols are sprayed
    /// packet by packet over all equal-cost paths, CloudBurst's multipath
    /// (false keeps each message on its ECMP path, the slides' variants A
    /// and C). Open-loop CloudBurst traffic always sprays. Default: true.
    pub spray: Option<bool>,
    /// Initial congestion window, packets.
    pub init_cwnd: Option<f64>,
    /// Minimum retransmission timeout.
    #[schemars(with = "Option<UnitString>")]
    pub min_rto: Option<Duration>,
    /// DCTCP gain g.
    pub dctcp_gain: Option<f64>,
    /// `pias`: demotion thresholds in bytes sent, ascending (a flow past
    /// the i-th moves i classes down).
    #[schemars(with = "Option<Vec<UnitString>>")]
    pub pias_thresholds: Option<Vec<Bytes>>,
    /// CloudBurst's re-burst timeout. Default: derived from the datacenter,
    /// the longest time a symbol that is not dropped can take to be
    /// acknowledged on the longest host-to-host path (per link each way:
    /// propagation, a full CloudBurst queue plus one packet of a lower
    /// class on the wire, the packet's own serialization; the 64-byte ACK
    /// back), so the timer fires only when every symbol in flight was lost.
    #[schemars(with = "Option<UnitString>")]
    pub reburst_timeout: Option<Duration>,
}

/// `transport.mptcp-subflows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MptcpSubflows {
    /// RFC 6356's coupled increases over RFC 3168 windows.
    #[default]
    Lia,
    /// Uncoupled DCTCP subflows.
    Dctcp,
}

/// `transport.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    /// TCP NewReno.
    #[default]
    Newreno,
    /// DCTCP.
    Dctcp,
    /// PIAS over DCTCP.
    Pias,
    /// CloudBurst.
    Cloudburst,
    /// A message in two halves on two subflows on different paths
    /// (`mptcp-subflows`: coupled by LIA, or uncoupled DCTCP).
    Mptcp,
    /// Two DCTCP copies on different paths, the first to finish counts.
    DctcpReplication,
    /// UDP datagrams: no ACKs, window or retransmission; a message with a
    /// lost datagram never finishes.
    Udp,
}

impl TransportKind {
    /// The tag as written in scenario files.
    pub fn tag(self) -> &'static str {
        match self {
            Self::Newreno => "newreno",
            Self::Dctcp => "dctcp",
            Self::Pias => "pias",
            Self::Cloudburst => "cloudburst",
            Self::Mptcp => "mptcp",
            Self::DctcpReplication => "dctcp-replication",
            Self::Udp => "udp",
        }
    }

    /// The transport of each copy or subflow in
    /// `netheat_packet::transport_tags()`: `small_queue` (`None`: the
    /// kind's default, on for CloudBurst only) puts the data in the small
    /// CloudBurst queue, `spray` (`None`: on) sprays CloudBurst's symbols.
    /// The engine names CloudBurst's four combinations by the slides'
    /// letters: A neither, B spraying, C the small queue, D both.
    /// `subflows` is `mptcp`'s congestion control.
    pub fn engine_tag(self, small_queue: Option<bool>, spray: Option<bool>, subflows: MptcpSubflows) -> &'static str {
        let small = small_queue == Some(true);
        match self {
            Self::Mptcp if subflows == MptcpSubflows::Lia => {
                if small {
                    "lia-cbq"
                } else {
                    "lia"
                }
            }
            Self::Dctcp | Self::Mptcp | Self::DctcpReplication if small => "dctcp-cbq",
            Self::Dctcp | Self::Mptcp | Self::DctcpReplication => "dctcp",
            Self::Cloudburst => match (spray.unwrap_or(true), small_queue.unwrap_or(true)) {
                (false, false) => "cloudburst-a",
                (true, false) => "cloudburst-b",
                (false, true) => "cloudburst-c",
                (true, true) => "cloudburst-d",
            },
            other => other.tag(),
        }
    }

    /// Whether ECN marking is on by default (DCTCP-based transports).
    pub fn uses_ecn(self) -> bool {
        matches!(self, Self::Dctcp | Self::Pias | Self::Mptcp | Self::DctcpReplication)
    }

    /// Whether the transport is CloudBurst.
    pub fn is_cloudburst(self) -> bool {
        self == Self::Cloudburst
    }
}

/// `[packet]` (packet engine): switch buffers and delays.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PacketSection {
    /// Propagation delay of every link.
    #[schemars(with = "Option<UnitString>")]
    pub propagation_delay: Option<Duration>,
    /// Processing delay per switch hop.
    #[schemars(with = "Option<UnitString>")]
    pub switch_delay: Option<Duration>,
    /// Buffer of each switch port (drop-tail limit), when buffers are not
    /// shared.
    #[schemars(with = "Option<UnitString>")]
    pub port_buffer: Option<Bytes>,
    /// Shared buffer per switch port: each switch shares this times its
    /// number of ports among its ports (ASIC data sheets quote buffer per
    /// port; Broadcom Trident+: 192 KB per 10 Gbps port), a port taking at
    /// most `buffer-alpha` times what is still free (dynamic threshold,
    /// Choudhury and Hahne, ToN 1998). Default: none, static
    /// `port-buffer`s.
    #[schemars(with = "Option<UnitString>")]
    pub shared_buffer: Option<Bytes>,
    /// Dynamic-threshold factor alpha of `shared-buffer`.
    pub buffer_alpha: Option<f64>,
    /// Limit of the small CloudBurst queue of every switch port (served at
    /// strict priority 0; the slides' "aggressive dropping").
    #[schemars(with = "Option<UnitString>")]
    pub cloudburst_queue: Option<Bytes>,
    /// ECN marking threshold K on the instantaneous queue. Default: none,
    /// or 65 packets of 1,500 bytes when a DCTCP-based transport (`dctcp`,
    /// `pias`, `mptcp`, `dctcp-replication`) is in use (DCTCP's K for 10
    /// Gbit/s, SIGCOMM'10 §3.4).
    #[schemars(with = "Option<UnitString>")]
    pub ecn_threshold: Option<Bytes>,
}

/// The sections other than the datacenter and the workload, as read.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Sections {
    /// `[scenario]`.
    #[serde(default)]
    pub scenario: ScenarioSection,
    /// `[routing]`.
    pub routing: Option<RoutingSection>,
    /// `[scheduling]`.
    pub scheduling: Option<SchedulingSection>,
    /// `[storage]`.
    pub storage: Option<StorageSection>,
    /// `[placement]`.
    pub placement: Option<PlacementSection>,
    /// `[transport]`.
    pub transport: Option<TransportSection>,
    /// `[packet]`.
    pub packet: Option<PacketSection>,
    /// The datacenter: `file = "dc.toml"` plus overrides of its
    /// `[topology]` keys, or the `[topology]` keys inline.
    #[schemars(with = "serde_json::Value")]
    pub topology: Option<toml::Value>,
    /// `[hosts]` of an inline datacenter.
    #[schemars(with = "Option<serde_json::Value>")]
    pub hosts: Option<toml::Value>,
    /// `[provisioning]` of an inline datacenter.
    #[schemars(with = "Option<serde_json::Value>")]
    pub provisioning: Option<toml::Value>,
    /// `[[rack-group]]` of an inline datacenter.
    #[schemars(with = "Option<serde_json::Value>")]
    pub rack_group: Option<toml::Value>,
    /// `[[events]]` of an inline datacenter, or capacity events added after
    /// those of `topology.file` (e.g. a ToR down from the start:
    /// `events = [{ at = "0s", nodes = ["tor2"], action = "fail" }]`).
    #[schemars(with = "Option<serde_json::Value>")]
    pub events: Option<toml::Value>,
    /// The workload: `file = "w.toml"`, or `[[workload.traffic]]` and
    /// `[[workload.app]]` tables inline (the schema of `netheat workload
    /// generate`).
    #[schemars(with = "serde_json::Value")]
    pub workload: Option<toml::Value>,
}

impl Sections {
    /// Bytes a flow holds in the run's memory estimates: a flow-engine run
    /// that does not record its flows forgets each one when it finishes
    /// ([`netheat_core::budget::BYTES_PER_UNKEPT_FLOW`]); the SPC protocol
    /// simulator keeps every flow's compact state to the end
    /// ([`netheat_core::budget::BYTES_PER_PROTOCOL_FLOW`], and its row when
    /// the `flows` table is kept:
    /// [`netheat_core::budget::BYTES_PER_PROTOCOL_FLOW_KEPT`]), and so does
    /// the packet engine, with more of it.
    pub fn flow_bytes(&self) -> u64 {
        let spc = self.scheduling.as_ref().is_some_and(|s| s.policy.protocol());
        let kept = self.scenario.records(RecordedTable::Flows);
        if self.scenario.engine == EngineKind::Flow && spc && kept {
            netheat_core::budget::BYTES_PER_PROTOCOL_FLOW_KEPT
        } else if self.scenario.engine == EngineKind::Flow && spc {
            netheat_core::budget::BYTES_PER_PROTOCOL_FLOW
        } else if self.scenario.engine == EngineKind::Flow && !kept {
            netheat_core::budget::BYTES_PER_UNKEPT_FLOW
        } else {
            netheat_core::budget::BYTES_PER_FLOW
        }
    }
}

/// The JSON Schema of a scenario file (descriptions from the doc comments
/// above), for the Python side's help and docs.
pub fn schema() -> String {
    let s = schemars::schema_for!(Sections);
    let mut v = serde_json::to_value(&s).unwrap_or_default();
    // Keys left out take the policy crates' own defaults: show them.
    if let Some(defs) = v.get_mut("definitions").and_then(|d| d.as_object_mut()) {
        for (section, key, value) in policy_defaults() {
            if let Some(prop) = defs.get_mut(section).and_then(|d| d.pointer_mut(&format!("/properties/{key}"))) {
                if let Some(o) = prop.as_object_mut() {
                    o.insert("default".into(), value);
                }
            }
        }
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// A duration as a unit string (`0.01` -> `"10ms"`).
fn seconds(s: f64) -> serde_json::Value {
    let text = if s >= 1.0 && s.fract() == 0.0 {
        format!("{s}s")
    } else if (s * 1e3).fract().abs() < 1e-9 && s >= 1e-3 {
        format!("{}ms", (s * 1e3).round())
    } else {
        format!("{}us", (s * 1e6).round())
    };
    text.into()
}

/// `(definition, key, default)` of every policy key whose default lives in
/// a policy crate (`LbParams`, `PolicyConfig`, `TransportConfig`,
/// `NetConfig`, `SchedulerParams`), read from those crates' `Default`s.
fn policy_defaults() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    let lb = netheat_subways::LbParams::default();
    let st = netheat_storage::PolicyConfig::default();
    let tr = netheat_packet::TransportConfig::default();
    let net = netheat_packet::NetConfig::default();
    let cl = netheat_sched::SchedulerParams::default();
    let spc = netheat_flowsched::SpcOptions::default();
    vec![
        ("RoutingSection", "policy", "ecmp".into()),
        ("RoutingSection", "period", seconds(lb.t_rebind_s)),
        ("RoutingSection", "ewma-weight", lb.ewma_weight.into()),
        ("RoutingSection", "aggressiveness", lb.aggressiveness.into()),
        ("RoutingSection", "hot-threshold", lb.hot_threshold.into()),
        ("RoutingSection", "hot-duration", seconds(lb.t_duration_s)),
        ("RoutingSection", "detour-share", lb.detour_share.into()),
        ("RoutingSection", "max-intermediate", lb.max_intermediate.into()),
        ("SchedulingSection", "poll-interval", seconds(netheat_flowsched::IdealOptions::default().poll_s)),
        ("SchedulingSection", "rtt", seconds(spc.rtt_s)),
        ("SchedulingSection", "delta", spc.delta_frac.into()),
        ("SchedulingSection", "class-unit", "task".into()),
        ("SchedulingSection", "class-size", spc.class_size.into()),
        ("SchedulingSection", "virtual-capacity", spc.virtual_capacity.is_some().into()),
        ("StorageSection", "report-interval", seconds(st.delta_s)),
        ("StorageSection", "ewma-weight", st.alpha.into()),
        ("StorageSection", "small-block", format!("{}MB", st.threshold_bytes / 1e6).into()),
        ("TransportSection", "init-cwnd", tr.init_cwnd.into()),
        ("TransportSection", "min-rto", seconds(tr.rto_min_s)),
        ("TransportSection", "dctcp-gain", tr.dctcp_g.into()),
        ("TransportSection", "task-class", 0.into()),
        ("TransportSection", "small-queue", false.into()),
        (
            "TransportSection",
            "pias-thresholds",
            tr.pias_thresholds.iter().map(|b| serde_json::Value::from(format!("{b}B"))).collect::<Vec<_>>().into(),
        ),
        ("PacketSection", "propagation-delay", seconds(net.prop_delay_s)),
        ("PacketSection", "switch-delay", seconds(net.switch_delay_s)),
        ("PacketSection", "port-buffer", format!("{}B", net.port_buffer_bytes).into()),
        ("PacketSection", "buffer-alpha", net.alpha.into()),
        ("PacketSection", "cloudburst-queue", format!("{}B", net.cloudburst_queue_bytes).into()),
        ("PlacementSection", "candidates", cl.candidates.into()),
        ("PlacementSection", "hot-threshold", cl.hot_threshold.into()),
        ("PlacementSection", "tick", seconds(cl.tick_s)),
        ("PlacementSection", "detect", seconds(cl.detect_s)),
        ("PlacementSection", "budget-per-window", cl.budget_per_window.into()),
        ("PlacementSection", "restart-delay", seconds(crate::cluster::RESTART_DELAY_S)),
    ]
}
