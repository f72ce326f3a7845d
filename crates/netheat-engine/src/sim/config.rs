//! The public types of a run: its parameters ([`SimConfig`], [`DenseMode`])
//! and what it produces ([`SimResult`], [`Stats`]).

use crate::flow::FlowRecord;
use crate::telemetry::LinkWindows;

/// When the engine may switch to dense mode (see [`crate::sim`]'s
/// "Dense mode" section).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DenseMode {
    /// After local repairs that cover a quarter of at least 1,000 active
    /// flows, when the flows' classes aggregate enough to pay; left again
    /// when they stop paying (the default).
    #[default]
    Auto,
    /// Never: every instant is a local repair.
    Off,
    /// Whenever flows are active and no link is down (tests).
    Always,
}

impl DenseMode {
    /// The tags [`DenseMode::parse`] accepts.
    pub const TAGS: [&'static str; 3] = ["auto", "off", "always"];

    /// Parses `auto`, `off` or `always`; an unknown tag is an error that
    /// lists the known ones.
    pub fn parse(tag: &str) -> Result<Self, String> {
        match tag {
            "auto" => Ok(Self::Auto),
            "off" => Ok(Self::Off),
            "always" => Ok(Self::Always),
            _ => Err(format!("unknown dense mode `{tag}`; known: {}", Self::TAGS.join(", "))),
        }
    }
}

/// Run parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Telemetry window length in seconds.
    pub window_s: f64,
    /// Seed of the ECMP hash.
    pub seed: u64,
    /// Stop at this time (events after it are not processed, telemetry is
    /// flushed up to it). `None`: run until no event is left.
    pub end_s: Option<f64>,
    /// Test hook: after every recomputation, verify the whole allocation
    /// against a from-scratch max-min computation and capacity limits, and
    /// panic on a violation. Slow; for tests.
    pub check_invariants: bool,
    /// When to use dense mode (grouped rates for dense cascades).
    pub dense: DenseMode,
    /// Reuse the state of completed flows for new ones (for long runs that
    /// add flows as they go and need only the completion callbacks). Once a
    /// completion's instant is over, its flow is forgotten: its id may be
    /// used again, queries about it answer as for an unknown flow, and
    /// [`Simulation::finish`](crate::Simulation::finish) returns records of
    /// the flows not completed only. Memory then follows the flows in
    /// flight, not all flows ever added. Results do not change; only
    /// tie-breaks between flows that complete at the same time may (they
    /// follow flow indices).
    pub recycle_finished: bool,
    /// Integrate link loads into per-window utilisation. Off, the run keeps
    /// no link telemetry ([`SimResult::link_windows`] is empty) and saves
    /// a little work at every load change.
    pub telemetry: bool,
    /// Telemetry windows `0..max_windows` are recorded; traffic after
    /// `max_windows * window_s` is not (counted in
    /// [`Stats::windows_dropped`]). Bounds the telemetry's memory
    /// (`links * max_windows` entries at most) and keeps window indices in
    /// `u32`. Callers that take inputs from users set it from the memory
    /// budget; the default only guards the index.
    pub max_windows: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            window_s: 1.0,
            seed: 0,
            end_s: None,
            check_invariants: false,
            dense: DenseMode::Auto,
            recycle_finished: false,
            telemetry: true,
            max_windows: u32::MAX,
        }
    }
}

/// Counters describing a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Events processed (arrivals, completions, capacity changes, re-binds,
    /// timers, group callbacks).
    pub events: u64,
    /// Rate recomputations (local repairs with a non-empty region, plus
    /// whole-component fallbacks).
    pub recomputations: u64,
    /// Flows that completed.
    pub flows_completed: u64,
    /// Flow states held (every flow added, or with
    /// [`SimConfig::recycle_finished`] at most about the flows in flight).
    pub flow_slots: u64,
    /// Flows left stranded (by a failure) at the end.
    pub stranded: u64,
    /// Arrivals/departures handled by an exact shortcut without recomputation.
    pub fast_path: u64,
    /// Sum over whole-component fallbacks of the component's number of
    /// flows.
    pub component_flows: u64,
    /// Largest component recomputed by a fallback.
    pub max_component_flows: u64,
    /// Flows moved to another path because of a failure.
    pub reroutes: u64,
    /// Local repairs (recomputations restricted to a region, see
    /// [`crate::sim`]).
    pub repairs: u64,
    /// Sum over local repairs of the final region's number of flows.
    pub region_flows: u64,
    /// Largest final region of a local repair.
    pub max_region_flows: u64,
    /// Allocation rounds of local repairs (a round grows the region).
    pub repair_rounds: u64,
    /// Most rounds taken by one repair.
    pub max_repair_rounds: u64,
    /// Repairs abandoned for a whole-component recomputation because the
    /// region grew beyond 3/4 of the active flows (sizes counted in
    /// `component_flows`).
    pub fallbacks: u64,
    /// Flow rate changes applied by recomputations (the output size: a
    /// lower bound on the work of any exact incremental method).
    pub rate_changes: u64,
    /// Regions widened at once to every reachable flow at or above their
    /// lowest level (dense cascades).
    pub widenings: u64,
    /// Load intervals (partly) after the last telemetry window kept
    /// ([`SimConfig::max_windows`]), whose traffic telemetry dropped.
    pub windows_dropped: u64,
    /// Times the engine switched to dense mode.
    pub dense_entries: u64,
    /// Instants allocated in dense mode (one progressive filling over the
    /// classes each).
    pub dense_instants: u64,
    /// Sum over dense instants of the number of classes allocated.
    pub dense_class_sum: u64,
    /// Light links made heavy in dense mode.
    pub dense_promotions: u64,
    /// Stays in dense mode ended because its work per instant outgrew what
    /// local repairs would pay (flow classes that barely aggregate).
    pub dense_cost_exits: u64,
    /// Dense repairs after which dense mode was not entered because its
    /// classes would not aggregate enough to pay.
    pub dense_declined: u64,
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct SimResult {
    /// One record per flow, in the order flows were added.
    pub flows: Vec<FlowRecord>,
    /// Per-link per-window traffic.
    pub link_windows: LinkWindows,
    /// Counters.
    pub stats: Stats,
    /// Time up to which the run was simulated and telemetry flushed.
    pub end_s: f64,
}
