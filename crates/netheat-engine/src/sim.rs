//! The event loop: flows arrive, share links by weighted max-min fairness,
//! and complete; links change capacity or fail; controllers react.
//!
//! # Exactness
//! Rates change only at events, so each flow's remaining bytes are stored as
//! of its last rate change (`left`, `t_last`) and updated lazily. Completion
//! times are predicted when a rate changes and kept in a monotone radix heap
//! (earliest time, then lowest flow index, first). A flow has at
//! most one valid entry (older ones are stale and dropped at the top): a
//! flow that speeds up gets a new, earlier entry, while one that slows down
//! keeps its entry, which is moved to the current prediction when it reaches
//! the top. A valid entry at the top that equals the flow's prediction *is*
//! the completion: no remaining-bytes comparison with an epsilon is needed
//! there; a flow whose remainder is below `max(1e-6 B, 1e-12·size)` when its
//! rate changes is completed at once.
//!
//! Events are ordered by `(time, sequence number)` for determinism. All events
//! at one timestamp are applied (including what controller callbacks schedule
//! for "now") before a single rate recomputation.
//!
//! # Incremental recomputation: exact local repair
//! Each link keeps the list of its active flows with O(1) swap-remove (every
//! flow stores its position in each of its links' lists). Every active flow
//! also keeps its *bottleneck*: the link that froze it in the allocation that
//! set its rate, or its cap.
//!
//! An allocation is the (weighted, capped, prioritised) max-min fair one iff
//! it is feasible and every flow `f` of class `p` is at its cap or has a link
//! `l` that is saturated for class `p` (`c_l - load_{<=p}(l) <= EPS·c_l`,
//! counting the loads of classes `<= p`) on which `f` is maximal among the
//! class-`p` flows (`r_f + EPS·c_l >= w_f · max_g r_g/w_g`). Each class is
//! max-min fair on the capacity left by the classes before it, so this per
//! class condition characterises the allocation uniquely; `EPS = 1e-11`.
//!
//! After the events of one instant, only a *region* R of flows is
//! reallocated:
//! 1. R starts with the arriving, re-bound and re-classed (priority or cap
//!    changed) flows; the links that departed flows leave saturated (or
//!    nearly: load at least `1 - 1e-6` of capacity), of re-bound flows' old
//!    and new paths and of capacity changes are *event links*; they and
//!    all links of R's flows are *touched* (the set T). A link a departed
//!    flow leaves clearly slack only has its load lowered: no flow can be
//!    bottlenecked on it, so nothing else there changes.
//! 2. For every link of T a per-class summary of the flows outside R (fixed
//!    rates) is built by scanning its flow list: load, max normalised rate,
//!    and the tightest condition of the outside flows bottlenecked there.
//!    A link that is clearly slack (load below `1 - 1e-6` of capacity, so
//!    no flow can be bottlenecked on it) and is not an event link
//!    gets a *light* summary instead, without a scan: one entry for all
//!    classes whose outside load is the link's load minus R's current rates
//!    on it. If R's new rates would saturate it, or bottleneck an R flow on
//!    it, the boundary check turns it into a full summary and the round
//!    repeats. In a big fabric most links of a region are slack core links
//!    carrying thousands of flows, so this removes most of the scanning.
//! 3. Progressive filling ([`crate::maxmin`]) allocates R alone on the
//!    capacities reduced by the outside load, recording each R flow's
//!    bottleneck. Light links are left out (unless all of a flow's links
//!    are light): a link that does not saturate does not change progressive
//!    filling, and one that the new rates would fill is caught by step 4.
//!    With most of a region's links slack, the allocation then works on a
//!    few links per flow instead of the whole path.
//! 4. Boundary check, per link of T and class: an outside flow bottlenecked
//!    on the link becomes invalid if the link is no longer saturated or a
//!    flow on it now has a larger normalised rate; if an R flow is
//!    bottlenecked on the link, outside flows of its class with a larger
//!    normalised rate, and outside flows of lower priority with a positive
//!    rate, must give way; a link above capacity (its capacity dropped) hands
//!    all its outside flows with a positive rate to R. Invalid flows join R
//!    and steps 2-4 repeat (R is reallocated from scratch; only the links
//!    whose outside set changed are rescanned).
//! 5. When nothing is added every flow satisfies the condition above (the
//!    outside flows whose bottleneck is not in T see exactly the same link as
//!    before), so the result equals a full recomputation up to the
//!    tolerance. New rates, bottlenecks, link loads (re-summed exactly from
//!    the summaries), telemetry and completion predictions are applied, only
//!    for flows whose rate changed.
//!
//! A cascade only moves flows at or above the level of the flow that
//! triggered it (progressive filling is unchanged below it). When R exceeds
//! 64 flows and 1/16 of the active flows, it is *widened* once to every flow
//! reachable from it through flows whose normalised rate is at least R's
//! lowest (plus lower priority classes), which replaces many hop-by-hop
//! rounds by one; if R exceeds 3/4 of the active flows, the repair falls
//! back to reallocating the whole connected component (BFS over the
//! flow/link graph), as earlier versions did for every event. Both are only
//! choices of R: the boundary check decides correctness. [`Stats`] counts
//! repairs, region sizes, rounds, widenings and fallbacks.
//!
//! Cost per instant: O(Σ_{l∈T, not light} |flows(l)|) for the link scans plus
//! O((|R|·h + |T|) log |T|) per round for the allocation, with usually 2
//! rounds (one when nothing is invalid). This is proportional to what the
//! event really changes when cascades stay local, e.g. when most links have
//! slack and flows are limited by their host links (regions of a few flows).
//! It is *not* small when many links are saturated and share flows densely:
//! removing one flow from a saturated link shifts the rates of most flows
//! above its level, so the region, and the number of rates that change,
//! is a sizeable fraction of all active flows (e.g. ~1,000 changed rates per
//! event among ~5,000 active flows in the 10k-flow incast-like benchmark),
//! and per event the cost is then comparable to a full component
//! recomputation.
//!
//! Exact shortcuts that skip the repair (each keeps every flow's bottleneck
//! valid, so the allocation stays max-min fair):
//! * an arriving flow that is alone on all its links gets
//!   `min(cap, link capacities)`;
//! * an arriving capped flow whose links all have slack > its cap + EPS·c
//!   (or whose cap is 0) gets its cap (no flow can be bottlenecked on an
//!   unsaturated link, the new flow is capped);
//! * a departing flow with rate 0 changes nothing; links a departing flow
//!   leaves empty just drop to rate 0, and clearly slack ones lose its rate
//!   (a departure whose links are all slack repairs nothing).
//!
//! # Dense mode
//! Where one event really changes a large share of all rates (thousands of
//! flows started at once over oversubscribed uplinks: every completion
//! shifts about a fifth of them), any method that keeps one rate per flow
//! pays for each. After a local repair whose region covers a quarter of at
//! least 1,000 active flows, if a sample of the flows says their classes
//! aggregate enough to pay, the engine switches to *dense mode*
//! (`dense.rs`, [`DenseMode`]): flows with the same heavy links (links not
//! clearly slack), class and normalised cap form one class allocated as a
//! single flow of summed weight, classes frozen by the same link share one
//! rate and a virtual clock, and each instant is one progressive filling
//! over the classes. Slack links are left out of the filling but keep exact
//! loads, and one that the new rates would fill becomes heavy at once, so
//! the allocation is the same max-min one. Anything but arrivals,
//! completions, timers and group callbacks (capacity changes, re-binds,
//! priority, cap or cancellation changes) hands every flow its rate back
//! and the next repair reallocates everything; short stays make re-entry
//! wait for more dense repairs. Dense mode also leaves when its work per
//! instant (classes and their links) outgrows what local repairs would pay
//! for the rates that change, i.e. where classes barely aggregate. Property
//! tests compare dense mode with the local repair on every random case
//! above.
//!
//! # Failures
//! When a link drops to capacity 0, ECMP/path-index flows crossing it move to
//! the first path (in index order after their current one) whose links all
//! have capacity > 0; without one they stay put with rate 0 and are marked
//! stranded. Explicit-route flows are stranded with rate 0. When any link
//! comes back from 0, stranded flows are re-examined in id order.

use crate::flow::{FlowRecord, FlowSpec, Route, StrandReason};
use crate::hops::Hops;
use crate::maxmin::{max_min_rates, Allocator, FlowSet, BN_CAP, BN_NONE};
use crate::order::heap_order;
use crate::radix::{RadixHeap, RadixKey};
use crate::telemetry::LinkWindows;
use crate::{EngineError, Network};
use netheat_core::{HostId, LinkId, Routing};
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

mod dense;
use dense::{Dense, DenseCtl};

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
    /// [`Simulation::finish`] returns records of the flows not completed
    /// only. Memory then follows the flows in flight, not all flows ever
    /// added. Results do not change; only tie-breaks between flows that
    /// complete at the same time may (they follow flow indices).
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

/// Hooks through which higher layers (schedulers, replication, policies)
/// react to the simulation. All methods default to doing nothing.
///
/// Callbacks run while the events of one timestamp are being applied, before
/// the rates are recomputed: rate queries return the allocation in force just
/// before this timestamp.
pub trait Controller {
    /// A flow completed.
    fn on_flow_complete(&mut self, ctx: &mut Ctx<'_, '_>, flow: &FlowRecord) {
        let _ = (ctx, flow);
    }
    /// A timer scheduled with [`Ctx::schedule_timer`] fired.
    fn on_timer(&mut self, ctx: &mut Ctx<'_, '_>, token: u64) {
        let _ = (ctx, token);
    }
    /// Every flow of a group registered with [`Ctx::register_group`] completed.
    fn on_group_complete(&mut self, ctx: &mut Ctx<'_, '_>, group: u64) {
        let _ = (ctx, group);
    }
}

/// A controller that does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoController;
impl Controller for NoController {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Status {
    Pending,
    Active,
    Done,
    /// A completed flow forgotten by `recycle_finished`; its slot is free.
    Free,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RouteKind {
    Explicit,
    Ecmp,
    Index(u32),
}

#[derive(Debug)]
// Laid out by hand in 256 bytes: the first 64 hold what completions,
// predictions and repairs read, the next 96 the path and list positions,
// the rest what only records and routing need. (Aligning it to cache lines
// as well was slower: a growing vector of over-aligned elements is copied
// on every reallocation instead of being remapped.)
#[repr(C)]
struct FlowState {
    /// Version of the flow's valid entry in the prediction heap.
    ver: u32,
    /// Bottleneck of the current rate: a link id, [`BN_CAP`] or [`BN_NONE`].
    bn: u32,
    prio: i32,
    status: Status,
    rate: f64,
    left: f64,
    t_last: f64,
    /// Predicted completion time at the current rate (infinite at rate 0).
    pred: f64,
    /// Time of the valid heap entry (infinite if none). It is at most
    /// `pred`: a flow that slows down keeps its earlier entry, which is
    /// moved to `pred` when it reaches the top (one heap operation instead
    /// of a push now and a stale pop later).
    entry_t: f64,
    bytes: f64,
    path: Hops,
    /// Position of this flow in `link_flows[path[h]]`.
    pos: Positions,
    weight: f64,
    cap: f64,
    id: u64,
    src: HostId,
    dst: HostId,
    start_s: f64,
    finish_s: f64,
    /// Bytes delivered when the flow was cancelled (NaN: not cancelled).
    cancelled: f64,
    task_id: Option<u64>,
    kind: RouteKind,
    path_id: Option<u32>,
    stranded: Option<StrandReason>,
}

// 256 bytes on 64-bit targets (see above).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<FlowState>() == 256);

/// Hops whose list positions a flow keeps inline (a three-tier path has
/// 6): the moved entry's position is then updated in the flow's state
/// itself, one cache miss fewer per hop when a flow leaves its links.
const POS_INLINE: usize = 8;

/// A flow's position in each of its links' lists.
#[derive(Debug, Clone, Default)]
struct Positions {
    inline: [u32; POS_INLINE],
    /// Hops from `POS_INLINE` on (long explicit paths).
    spill: Vec<u32>,
}

impl Positions {
    fn reset(&mut self, hops: usize) {
        self.spill.clear();
        self.spill.resize(hops.saturating_sub(POS_INLINE), 0);
    }
    fn get(&self, h: usize) -> u32 {
        if h < POS_INLINE {
            self.inline[h]
        } else {
            self.spill[h - POS_INLINE]
        }
    }
    fn set(&mut self, h: usize, p: u32) {
        if h < POS_INLINE {
            self.inline[h] = p;
        } else {
            self.spill[h - POS_INLINE] = p;
        }
    }
}

impl FlowState {
    /// Bytes delivered when the flow was cancelled, if it was.
    fn cancelled_bytes(&self) -> Option<f64> {
        (!self.cancelled.is_nan()).then_some(self.cancelled)
    }

    fn done_eps(&self) -> f64 {
        (1e-12 * self.bytes).max(1e-6)
    }
}

#[derive(Debug)]
enum RebindTo {
    Path(usize),
    Explicit(Vec<LinkId>),
}

/// A change of a flow's sharing parameters.
#[derive(Debug, Clone, Copy)]
enum Change {
    Priority(i32),
    Cap(f64),
    Cancel,
}

#[derive(Debug)]
enum Ev {
    Arrival(u32),
    Capacity { link: LinkId, cap: f64 },
    Rebind { flow: u32, to: RebindTo },
    Change { flow: u32, change: Change },
    Timer(u64),
    Group(u64),
}

/// Where the next event waits (see [`Simulation::next_source`]).
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The sorted arrivals given before the run.
    Pending,
    /// The event heap.
    Heap,
    /// Events queued for the current time while its instant runs.
    Lane,
}

#[derive(Debug)]
struct Queued {
    t: f64,
    seq: u64,
    ev: Ev,
}
// Reversed for a min-heap on (t, seq).
heap_order!(Queued, |a, b| b.t.total_cmp(&a.t).then(b.seq.cmp(&a.seq)));

#[derive(Debug, Clone, Copy)]
struct Pred {
    t: f64,
    flow: u32,
    ver: u32,
}
// Earliest time first, then the lowest flow index, then the lowest version
// (the bits of a non-negative `f64` order as the number does).
impl RadixKey for Pred {
    fn key(&self) -> u128 {
        (u128::from((self.t + 0.0).to_bits()) << 64) | (u128::from(self.flow) << 32) | u128::from(self.ver)
    }
}

/// The component's flows copied into contiguous arrays while the BFS visits
/// them, so the allocator streams through memory instead of chasing each
/// flow's state and path allocation several times.
#[derive(Default, Debug)]
struct Packed {
    off: Vec<u32>,
    links: Vec<LinkId>,
    weight: Vec<f64>,
    cap: Vec<f64>,
    prio: Vec<i32>,
}

impl Packed {
    fn clear(&mut self) {
        self.off.clear();
        self.off.push(0);
        self.links.clear();
        self.weight.clear();
        self.cap.clear();
        self.prio.clear();
    }
    fn push(&mut self, f: &FlowState) {
        self.push_links(f, |_| true);
    }
    /// Like [`Packed::push`], with only the links of `f` that `keep` selects.
    fn push_links(&mut self, f: &FlowState, keep: impl Fn(LinkId) -> bool) {
        self.links.extend(f.path.iter().copied().filter(|&l| keep(l)));
        self.off.push(self.links.len() as u32);
        self.weight.push(f.weight);
        self.cap.push(f.cap);
        self.prio.push(f.prio);
    }
}

impl FlowSet for Packed {
    fn len(&self) -> usize {
        self.weight.len()
    }
    fn path(&self, i: usize) -> &[LinkId] {
        &self.links[self.off[i] as usize..self.off[i + 1] as usize]
    }
    fn weight(&self, i: usize) -> f64 {
        self.weight[i]
    }
    fn cap(&self, i: usize) -> f64 {
        self.cap[i]
    }
    fn priority(&self, i: usize) -> i32 {
        self.prio[i]
    }
}

/// Relative tolerance of the bottleneck conditions of the local repair: a
/// link is saturated when its free capacity is at most `EPS·c`, and a flow is
/// maximal on it when `r + EPS·c >= w·(max normalised rate on the link)`.
const EPS: f64 = 1e-11;
/// Up to this many classes on a link, a scan finds a flow's class by a
/// linear search; beyond, by a map.
const CLASS_SCAN_MAX: usize = 8;
/// A link whose load is below `1 - LIGHT_SLACK` of its capacity is slack
/// enough to be summarised from its load (far above the saturation
/// tolerance `EPS`).
const LIGHT_SLACK: f64 = 1e-6;
/// Regions of at most this many flows are never widened nor replaced by a
/// whole-component recomputation.
const FALLBACK_MIN: usize = 64;
/// A region above `FALLBACK_MIN` flows and `1/WIDEN_DIV` of the active flows
/// is widened by level (see [`Simulation::widen`]).
const WIDEN_DIV: usize = 16;

/// Hasher of the flow-id index: ids are the user's integers, often
/// consecutive, and controllers look them up per flow and per poll, so the
/// SplitMix64 finaliser replaces SipHash (a simulator's input is not an
/// attacker's; the map is never iterated, so results do not depend on it).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = mix(x);
    }
}

/// Flow id -> flow index. Callers mostly number their flows 0, 1, 2, ...:
/// such ids live in a plain vector (4 bytes per id, no hashing); an id far
/// beyond the number of flows goes to a hash map instead, so memory stays
/// proportional to the flows whatever the ids.
#[derive(Default)]
struct IdIndex {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
}

impl IdIndex {
    const FREE: u32 = u32::MAX;
    /// Ids below `2 * flows + DENSE_SLACK` go to the vector.
    const DENSE_SLACK: u64 = 1 << 16;

    fn get(&self, id: u64) -> Option<u32> {
        if let Some(&i) = self.dense.get(id as usize) {
            if i != Self::FREE {
                return Some(i);
            }
        }
        if self.sparse.is_empty() {
            None
        } else {
            self.sparse.get(&id).copied()
        }
    }

    /// Adds a new id (not present) for flow index `idx`; `added` flows were
    /// added before it (with recycled slots, more than `idx`).
    fn insert(&mut self, id: u64, idx: u32, added: u64) {
        if id < 2 * added + Self::DENSE_SLACK {
            let i = id as usize;
            if i >= self.dense.len() {
                let n = (i + 1).max(self.dense.len() * 3 / 2);
                self.dense.resize(n, Self::FREE);
            }
            self.dense[i] = idx;
        } else {
            self.sparse.insert(id, idx);
        }
    }

    /// Forgets an id.
    fn remove(&mut self, id: u64) {
        match self.dense.get_mut(id as usize) {
            Some(i) if *i != Self::FREE => *i = Self::FREE,
            _ => {
                self.sparse.remove(&id);
            }
        }
    }
}

/// Slots of forgotten flows handed out again in blocks: a block is reused
/// once every flow in it is forgotten, and its slots in order. Flows added
/// together (a task's) then stay side by side in memory, as without reuse;
/// reusing single slots as they free up scatters them, and costs more in
/// cache misses than the memory saves.
#[derive(Debug)]
struct SlotBlocks {
    /// Flows not forgotten, per block.
    live: Vec<u32>,
    /// Blocks whose every slot is free, not the current one.
    free: Vec<u32>,
    /// The block being handed out, and its next slot (`BLOCK`: none).
    cur: u32,
    next: u32,
}

impl Default for SlotBlocks {
    fn default() -> Self {
        Self { live: Vec::new(), free: Vec::new(), cur: 0, next: Self::BLOCK }
    }
}

impl SlotBlocks {
    const BLOCK: u32 = 64;

    /// A free slot, if a block has one to hand out.
    fn take(&mut self) -> Option<u32> {
        if self.next >= Self::BLOCK {
            let b = self.free.pop()?;
            self.cur = b;
            self.next = 0;
        }
        let slot = self.cur * Self::BLOCK + self.next;
        self.next += 1;
        self.live[self.cur as usize] += 1;
        Some(slot)
    }

    /// Slot `slot`, just appended, is in use.
    fn grow(&mut self, slot: u32) {
        let b = (slot / Self::BLOCK) as usize;
        if b >= self.live.len() {
            self.live.resize(b + 1, 0);
        }
        self.live[b] += 1;
    }

    /// Slot `slot` is free; `slots` exist in all.
    fn release(&mut self, slot: u32, slots: usize) {
        let b = slot / Self::BLOCK;
        self.live[b as usize] -= 1;
        // A full block, not being handed out, with no flow left.
        let whole = ((b + 1) * Self::BLOCK) as usize <= slots;
        if self.live[b as usize] == 0 && whole && !(b == self.cur && self.next < Self::BLOCK) {
            self.free.push(b);
        }
    }
}

/// SplitMix64 finaliser: a fixed, portable hash for ECMP decisions.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The simulator. Borrows the routing (if any) used for ECMP / path-index
/// routes and for re-routing around failures.
pub struct Simulation<'r> {
    routing: Option<&'r dyn Routing>,
    cfg: SimConfig,
    cap: Vec<f64>,
    now: f64,
    running: bool,
    flows: Vec<FlowState>,
    id_index: IdIndex,
    /// Flows ever added (more than `flows.len()` once slots are reused).
    added: u64,
    /// Reuse of forgotten flows' slots (`recycle_finished`).
    slots: SlotBlocks,
    /// Flows completed in the current instant, forgotten at its end.
    to_free: Vec<u32>,
    link_flows: Vec<Vec<(u32, u32)>>,
    /// Per-link load and telemetry state, together so an update touches one
    /// cache line.
    lk: Vec<LinkHot>,
    windows: LinkWindows,
    pending: Vec<(f64, u64, u32)>,
    pending_head: usize,
    pending_sorted: bool,
    events: BinaryHeap<Queued>,
    /// Events for the current time queued while its instant runs (flows a
    /// controller adds to start now): every event already queued for this
    /// time has a smaller sequence number, so a FIFO keeps them in
    /// `(time, sequence)` order without the heap.
    now_lane: VecDeque<Queued>,
    /// Completion predictions, stale ones dropped when they reach the top.
    completions: RadixHeap<Pred>,
    seq: u64,
    dirty: Vec<u32>,
    epoch: u32,
    comp_flows: Vec<u32>,
    comp_links: Vec<u32>,
    new_rates: Vec<f64>,
    packed: Packed,
    link_acc: Vec<f64>,
    alloc: Allocator,
    stranded: BTreeSet<u32>,
    /// Links with no capacity (failed).
    down_links: usize,
    groups: HashMap<u64, u32>,
    flow_groups: HashMap<u32, Vec<u64>>,
    stats: Stats,
    path_buf: Vec<LinkId>,
    n_active: usize,
    /// Flows that must be reallocated at the next repair (arrivals, moves).
    seeds: Vec<u32>,
    rep: Repair,
    hot: Vec<Hot>,
    /// Dense-mode state while the engine is in it.
    dense: Option<Box<Dense>>,
    dense_ctl: DenseCtl,
    /// Flows reallocated by the last repair or component recomputation.
    last_region: usize,
    /// The next repair must recompute every flow (after dense mode).
    full_repair: bool,
}

/// No window is being accumulated.
const NO_WINDOW: u32 = u32::MAX;

/// Per-link state that changes with every load update.
#[derive(Clone, Copy, Debug)]
struct LinkHot {
    /// Time of the last load change.
    tel_t: f64,
    /// Bytes of window `win` not yet handed to the telemetry.
    acc: f64,
    win: u32,
}

/// The fields of a flow that the repair's link scans read, packed apart from
/// [`FlowState`] so scans stay in cache. `rate` and `bn` mirror the state;
/// the repair's marks sit here too, so a scan touches one line per flow.
#[derive(Clone, Copy, Debug)]
struct Hot {
    rate: f64,
    weight: f64,
    prio: i32,
    bn: u32,
    /// Epoch in which the flow joined the repair's region.
    seen: u32,
    /// Epoch of the boundary check that listed it as a violator.
    viol: u32,
}

/// Per (link, priority class) summary used by the boundary check of a
/// repair. `out_*` cover the flows outside the region (fixed rates), `r_*`
/// the region's flows with their new rates.
#[derive(Clone, Copy, Debug)]
struct ClassStat {
    prio: i32,
    out_load: f64,
    out_maxn: f64,
    /// Min over outside flows bottlenecked at this link of `(r + tol) / w`.
    out_bn_thr: f64,
    out_pos: bool,
    r_load: f64,
    r_maxn: f64,
    /// Min over region flows bottlenecked at this link of `(r + tol) / w`.
    r_thr: f64,
}

impl ClassStat {
    /// A class with no flows yet.
    fn empty(prio: i32) -> Self {
        Self {
            prio,
            out_load: 0.0,
            out_maxn: 0.0,
            out_bn_thr: f64::INFINITY,
            out_pos: false,
            r_load: 0.0,
            r_maxn: 0.0,
            r_thr: f64::INFINITY,
        }
    }
}

/// Scratch space of the local repair, reused across events.
#[derive(Default, Debug)]
struct Repair {
    /// The region's flows.
    reg: Vec<u32>,
    /// Links touched by the region or by the events (T).
    tlinks: Vec<u32>,
    /// Links whose outside summary must be rebuilt.
    stale: Vec<u32>,
    /// Per-link repair state, one struct per link so a repair touching a
    /// link pays one cache miss, not one per field.
    lr: Vec<LinkRep>,
    cls: Vec<ClassStat>,
    /// Capacities reduced by the load of outside flows.
    rcap: Vec<f64>,
    viol: Vec<u32>,
    viol_epoch: u32,
    wl_epoch: u32,
    /// Class -> position in the segment being scanned (links with many
    /// classes only).
    cls_idx: HashMap<i32, u32>,
}

/// The state of one link that events and repairs read together, in one
/// cache line: its load and capacity (a copy of `Simulation::cap`) sit with
/// the repair's marks, so touching a link costs one miss, not three.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct LinkRep {
    /// Current load, bits/s.
    load: f64,
    /// Capacity, bits/s (kept equal to `Simulation::cap`).
    cap: f64,
    /// Queued in `Simulation::dirty`.
    dirty: bool,
    /// Sum of the current rates of the region's flows on it, valid in
    /// epoch `ro_epoch`.
    reg_old: f64,
    /// Segment `[start, start + len)` of `cls`.
    seg: (u32, u32),
    /// Epoch in which the link was touched (also used by the whole-component
    /// fallback's BFS).
    seen: u32,
    /// Epoch in which its load must be re-summed.
    chg: u32,
    /// Epoch in which its summary is *light* (see [`Simulation::light_link`]).
    light: u32,
    /// Epoch in which it must be scanned in full (event links, and light
    /// links the region came to saturate).
    full: u32,
    ro_epoch: u32,
    wl_seen: u32,
    /// Its outside summary must be rebuilt.
    stale: bool,
}

impl LinkRep {
    /// Clearly slack: loaded below `1 - LIGHT_SLACK` of its capacity, so no
    /// flow can be bottlenecked on it.
    fn slack(&self) -> bool {
        self.load < self.cap * (1.0 - LIGHT_SLACK)
    }
}

impl<'r> Simulation<'r> {
    /// A simulation of `net` at time 0.
    ///
    /// # Panics
    /// If `routing` has a different number of links than `net`.
    pub fn new(net: Network, routing: Option<&'r dyn Routing>, cfg: SimConfig) -> Self {
        if let Some(r) = routing {
            if r.num_links() != net.num_links() {
                panic!(
                    "{}",
                    EngineError::RoutingMismatch { routing_links: r.num_links(), network_links: net.num_links() }
                );
            }
        }
        let cap = net.capacities().to_vec();
        let n = cap.len();
        let lr = cap.iter().map(|&c| LinkRep { cap: c, ..LinkRep::default() }).collect();
        let down_links = cap.iter().filter(|&&c| c <= 0.0).count();
        let windows = LinkWindows::new(cfg.window_s, cap.clone()).with_max_windows(cfg.max_windows);
        Self {
            routing,
            cfg,
            cap,
            now: 0.0,
            running: false,
            flows: Vec::new(),
            id_index: IdIndex::default(),
            added: 0,
            slots: SlotBlocks::default(),
            to_free: Vec::new(),
            link_flows: vec![Vec::new(); n],
            lk: vec![LinkHot { tel_t: 0.0, acc: 0.0, win: NO_WINDOW }; n],
            windows,
            pending: Vec::new(),
            pending_head: 0,
            pending_sorted: true,
            events: BinaryHeap::new(),
            now_lane: VecDeque::new(),
            completions: RadixHeap::default(),
            seq: 0,
            dirty: Vec::new(),
            epoch: 0,
            comp_flows: Vec::new(),
            comp_links: Vec::new(),
            new_rates: Vec::new(),
            packed: Packed::default(),
            link_acc: vec![0.0; n],
            alloc: Allocator::default(),
            stranded: BTreeSet::new(),
            down_links,
            groups: HashMap::new(),
            flow_groups: HashMap::new(),
            stats: Stats::default(),
            path_buf: Vec::new(),
            n_active: 0,
            seeds: Vec::new(),
            hot: Vec::new(),
            rep: Repair { lr, rcap: vec![0.0; n], ..Repair::default() },
            dense: None,
            dense_ctl: DenseCtl::default(),
            last_region: 0,
            full_repair: false,
        }
    }

    /// Current simulation time in seconds.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Number of directed links.
    pub fn num_links(&self) -> usize {
        self.cap.len()
    }

    /// Counters so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    fn check_links(&self, flow: u64, path: &[LinkId]) -> Result<(), EngineError> {
        for (i, &l) in path.iter().enumerate() {
            if l as usize >= self.cap.len() {
                return Err(EngineError::LinkOutOfRange { flow, link: l, num_links: self.cap.len() });
            }
            if path[..i].contains(&l) {
                return Err(EngineError::RepeatedLink { flow, link: l });
            }
        }
        Ok(())
    }

    fn check_path_index(&self, flow: u64, src: HostId, dst: HostId, k: Option<usize>) -> Result<(), EngineError> {
        let r = self.routing.ok_or(EngineError::NoRouting { flow })?;
        for h in [src, dst] {
            if h as usize >= r.num_hosts() {
                return Err(EngineError::HostOutOfRange { flow, host: h, num_hosts: r.num_hosts() });
            }
        }
        if src == dst {
            return Ok(());
        }
        let np = r.num_paths(src, dst);
        if np == 0 {
            return Err(EngineError::NoPath { flow, src, dst });
        }
        match k {
            Some(k) if k >= np => Err(EngineError::PathIndexOutOfRange { flow, index: k, src, dst, num_paths: np }),
            _ => Ok(()),
        }
    }

    fn check_time(&self, t: f64) -> Result<(), EngineError> {
        if t.is_finite() && t >= self.now {
            Ok(())
        } else {
            Err(EngineError::InvalidTime { t_s: t, now_s: self.now })
        }
    }

    fn check_link(&self, link: LinkId) -> Result<(), EngineError> {
        if (link as usize) < self.cap.len() {
            Ok(())
        } else {
            Err(EngineError::UnknownLink { link, num_links: self.cap.len() })
        }
    }

    fn flow_index(&self, id: u64) -> Result<u32, EngineError> {
        self.id_index.get(id).ok_or(EngineError::UnknownFlow(id))
    }

    fn push_event(&mut self, t: f64, ev: Ev) {
        let q = Queued { t, seq: self.seq, ev };
        if self.running && t == self.now {
            self.now_lane.push_back(q);
        } else {
            self.events.push(q);
        }
        self.seq += 1;
    }

    /// Adds a flow; it starts at `start_s`, which must not be before
    /// [`Simulation::now`].
    pub fn add_flow(&mut self, f: FlowSpec) -> Result<(), EngineError> {
        let id = f.id;
        if !(f.bytes.is_finite() && f.bytes >= 0.0) {
            return Err(EngineError::InvalidBytes { flow: id, bytes: f.bytes });
        }
        if !f.start_s.is_finite() {
            return Err(EngineError::InvalidStart { flow: id, start_s: f.start_s });
        }
        if f.start_s < self.now {
            return Err(EngineError::StartBeforeNow { flow: id, start_s: f.start_s, now_s: self.now });
        }
        if !(f.weight.is_finite() && f.weight > 0.0) {
            return Err(EngineError::InvalidWeight { flow: id, weight: f.weight });
        }
        if let Some(c) = f.rate_cap_bps {
            if c.is_nan() || c < 0.0 {
                return Err(EngineError::InvalidRateCap { flow: id, cap_bps: c });
            }
        }
        let (kind, path) = match f.route {
            Route::Explicit(p) => {
                if p.is_empty() && f.src != f.dst {
                    return Err(EngineError::EmptyRoute { flow: id, src: f.src, dst: f.dst });
                }
                self.check_links(id, &p)?;
                (RouteKind::Explicit, p)
            }
            Route::Ecmp => {
                self.check_path_index(id, f.src, f.dst, None)?;
                (RouteKind::Ecmp, Vec::new())
            }
            Route::PathIndex(k) => {
                self.check_path_index(id, f.src, f.dst, Some(k))?;
                (RouteKind::Index(k as u32), Vec::new())
            }
        };
        if self.id_index.get(id).is_some() {
            return Err(EngineError::DuplicateFlowId(id));
        }
        let reuse = if self.cfg.recycle_finished { self.slots.take() } else { None };
        let idx = reuse.unwrap_or(self.flows.len() as u32);
        if self.cfg.recycle_finished && reuse.is_none() {
            self.slots.grow(idx);
        }
        self.id_index.insert(id, idx, self.added);
        self.added += 1;
        let state = FlowState {
            id,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start_s: f.start_s,
            weight: f.weight,
            cap: f.rate_cap_bps.unwrap_or(f64::INFINITY),
            prio: f.priority,
            task_id: f.task_id,
            kind,
            path: Hops::from(path),
            pos: Positions::default(),
            path_id: None,
            status: Status::Pending,
            stranded: None,
            rate: 0.0,
            left: f.bytes,
            t_last: f.start_s,
            ver: 0,
            pred: f64::INFINITY,
            entry_t: f64::INFINITY,
            finish_s: f64::NAN,
            bn: BN_NONE,
            cancelled: f64::NAN,
        };
        let hot = Hot { rate: 0.0, weight: f.weight, prio: f.priority, bn: BN_NONE, seen: 0, viol: 0 };
        if let Some(fi) = reuse {
            let i = fi as usize;
            // Versions go on from the slot's last flow, so prediction
            // entries it left in the queue stay stale.
            let ver = self.flows[i].ver.wrapping_add(1);
            self.flows[i] = FlowState { ver, ..state };
            self.hot[i] = hot;
        } else {
            self.flows.push(state);
            self.stats.flow_slots = self.flows.len() as u64;
            self.hot.push(hot);
        }
        if self.running {
            self.push_event(f.start_s, Ev::Arrival(idx));
        } else {
            // Pre-run arrivals go to a sorted vector instead of the heap: one
            // sort beats a million heap pushes and keeps the heap small.
            if let Some(&(t, _, _)) = self.pending.last() {
                if f.start_s < t {
                    self.pending_sorted = false;
                }
            }
            self.pending.push((f.start_s, self.seq, idx));
            self.seq += 1;
        }
        Ok(())
    }

    /// Adds several flows, stopping at the first invalid one.
    pub fn add_flows(&mut self, fs: impl IntoIterator<Item = FlowSpec>) -> Result<(), EngineError> {
        for f in fs {
            self.add_flow(f)?;
        }
        Ok(())
    }

    /// Sets the capacity of `link` to `cap_bps` at time `t_s` (0 = failure).
    pub fn schedule_capacity(&mut self, t_s: f64, link: LinkId, cap_bps: f64) -> Result<(), EngineError> {
        self.check_time(t_s)?;
        self.check_link(link)?;
        if !(cap_bps.is_finite() && cap_bps >= 0.0) {
            return Err(EngineError::InvalidCapacity { link, cap_bps });
        }
        self.push_event(t_s, Ev::Capacity { link, cap: cap_bps });
        Ok(())
    }

    /// Fires [`Controller::on_timer`] with `token` at `t_s`.
    pub fn schedule_timer(&mut self, t_s: f64, token: u64) -> Result<(), EngineError> {
        self.check_time(t_s)?;
        self.push_event(t_s, Ev::Timer(token));
        Ok(())
    }

    /// Registers a group of flows; [`Controller::on_group_complete`] fires
    /// once all of them have completed (at once if they already have).
    pub fn register_group(&mut self, group: u64, flow_ids: &[u64]) -> Result<(), EngineError> {
        if self.groups.contains_key(&group) {
            return Err(EngineError::DuplicateGroup(group));
        }
        let mut idx = Vec::with_capacity(flow_ids.len());
        for &id in flow_ids {
            idx.push(self.flow_index(id)?);
        }
        idx.sort_unstable();
        idx.dedup();
        let mut remaining = 0;
        for &i in &idx {
            if self.flows[i as usize].status != Status::Done {
                remaining += 1;
                self.flow_groups.entry(i).or_default().push(group);
            }
        }
        if remaining == 0 {
            self.push_event(self.now, Ev::Group(group));
        } else {
            self.groups.insert(group, remaining);
        }
        Ok(())
    }

    /// Moves a running flow to path `k` of the routing, now.
    pub fn rebind_path(&mut self, flow_id: u64, k: usize) -> Result<(), EngineError> {
        let fi = self.flow_index(flow_id)?;
        let f = &self.flows[fi as usize];
        if f.status != Status::Active {
            return Err(EngineError::FlowNotRunning(flow_id));
        }
        self.check_path_index(flow_id, f.src, f.dst, Some(k))?;
        self.push_event(self.now, Ev::Rebind { flow: fi, to: RebindTo::Path(k) });
        Ok(())
    }

    /// Moves a flow to priority class `priority` now (lower is served
    /// first); rates are recomputed exactly at the current time. A flow that
    /// has not started yet starts in the new class; a finished flow is left
    /// as it is.
    pub fn set_priority(&mut self, flow_id: u64, priority: i32) -> Result<(), EngineError> {
        let fi = self.flow_index(flow_id)?;
        self.push_event(self.now, Ev::Change { flow: fi, change: Change::Priority(priority) });
        Ok(())
    }

    /// Sets (or with `None` removes) a flow's rate cap now, in bits/s.
    pub fn set_rate_cap(&mut self, flow_id: u64, cap_bps: Option<f64>) -> Result<(), EngineError> {
        let fi = self.flow_index(flow_id)?;
        if let Some(c) = cap_bps {
            if !(c.is_finite() && c >= 0.0) {
                return Err(EngineError::InvalidRateCap { flow: flow_id, cap_bps: c });
            }
        }
        self.push_event(self.now, Ev::Change { flow: fi, change: Change::Cap(cap_bps.unwrap_or(f64::INFINITY)) });
        Ok(())
    }

    /// Cancels a flow now: it leaves its links (the others' rates are
    /// repaired exactly), never completes (`finish_s` is NaN, no completion
    /// callback) and its record shows the bytes delivered until now. A flow
    /// that has not started never starts; a finished flow is left as it is.
    pub fn cancel_flow(&mut self, flow_id: u64) -> Result<(), EngineError> {
        let fi = self.flow_index(flow_id)?;
        self.push_event(self.now, Ev::Change { flow: fi, change: Change::Cancel });
        Ok(())
    }

    /// Moves a running flow to an explicit list of links, now.
    pub fn rebind_explicit(&mut self, flow_id: u64, path: Vec<LinkId>) -> Result<(), EngineError> {
        let fi = self.flow_index(flow_id)?;
        let f = &self.flows[fi as usize];
        if f.status != Status::Active {
            return Err(EngineError::FlowNotRunning(flow_id));
        }
        if path.is_empty() {
            return Err(EngineError::EmptyRoute { flow: flow_id, src: f.src, dst: f.dst });
        }
        self.check_links(flow_id, &path)?;
        self.push_event(self.now, Ev::Rebind { flow: fi, to: RebindTo::Explicit(path) });
        Ok(())
    }

    /// Current rate of a flow in bits/s (0 unless running); `None` for an
    /// unknown id.
    pub fn flow_rate_bps(&self, flow_id: u64) -> Option<f64> {
        self.id_index.get(flow_id).map(|i| {
            let f = &self.flows[i as usize];
            if f.status == Status::Active {
                self.dense_flow(i).map_or(f.rate, |x| x.0)
            } else {
                0.0
            }
        })
    }

    /// Bytes a flow has delivered so far (exact at the current time: a
    /// running flow's progress since its last rate change is included);
    /// `None` for an unknown id.
    pub fn flow_bytes_sent(&self, flow_id: u64) -> Option<f64> {
        self.id_index.get(flow_id).map(|i| {
            let f = &self.flows[i as usize];
            if let Some(b) = f.cancelled_bytes() {
                return b;
            }
            match f.status {
                // (A forgotten flow is not in the index.)
                Status::Done | Status::Free => f.bytes,
                Status::Pending => 0.0,
                Status::Active => {
                    let left = match self.dense_flow(i) {
                        Some((_, left)) => left,
                        None => (f.left - f.rate * (self.now - f.t_last) / 8.0).max(0.0),
                    };
                    f.bytes - left
                }
            }
        })
    }

    /// Current sum of flow rates on a link, bits/s.
    pub fn link_rate_bps(&self, link: LinkId) -> f64 {
        self.rep.lr[link as usize].load
    }

    /// Current capacity of a link, bits/s.
    pub fn link_capacity_bps(&self, link: LinkId) -> f64 {
        self.cap[link as usize]
    }

    /// Current rate / current capacity of a link (0 for a failed link).
    pub fn link_utilization(&self, link: LinkId) -> f64 {
        let c = self.cap[link as usize];
        if c > 0.0 {
            self.rep.lr[link as usize].load / c
        } else {
            0.0
        }
    }

    /// Runs to the end without a controller.
    pub fn run(self) -> SimResult {
        self.run_with(&mut NoController)
    }

    /// Runs to the end (or `end_s`) with a controller.
    pub fn run_with<C: Controller + ?Sized>(mut self, c: &mut C) -> SimResult {
        let end = self.cfg.end_s.unwrap_or(f64::INFINITY);
        self.run_until(c, end);
        self.finish()
    }

    /// Processes every event at times `<= t_end_s`, then advances the clock
    /// to `t_end_s` (if finite). Can be called repeatedly; flows, timers and
    /// capacity changes may be added in between.
    pub fn run_until<C: Controller + ?Sized>(&mut self, c: &mut C, t_end_s: f64) {
        if !self.pending_sorted {
            self.pending[self.pending_head..].sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            self.pending_sorted = true;
        }
        self.running = true;
        while let Some(t) = self.next_time() {
            if t > t_end_s {
                break;
            }
            self.now = t;
            loop {
                if let Some(fi) = self.pop_completion_at(t) {
                    self.stats.events += 1;
                    if self.dense.is_none() {
                        self.complete_flow(fi);
                    }
                    self.notify_complete(c, fi);
                    continue;
                }
                let Some(ev) = self.pop_event_at(t) else { break };
                self.stats.events += 1;
                // Timers and group callbacks change no rate by themselves
                // (what a controller does in them arrives as events).
                if self.dense.is_some() && !matches!(ev, Ev::Arrival(_) | Ev::Timer(_) | Ev::Group(_)) {
                    self.dense_leave(true);
                }
                self.apply(ev, c);
            }
            if self.dense.is_some() {
                self.dense_recompute();
            } else {
                self.repair();
                if self.dense_should_enter() {
                    self.dense_enter();
                }
            }
            self.forget_completed();
        }
        self.running = false;
        if t_end_s.is_finite() && t_end_s > self.now {
            self.now = t_end_s;
        }
    }

    /// Frees the slots of the flows completed in the instant just ended
    /// (`recycle_finished`). Not before: events of that instant may still
    /// name them.
    fn forget_completed(&mut self) {
        for k in 0..self.to_free.len() {
            let fi = self.to_free[k];
            let f = &mut self.flows[fi as usize];
            f.status = Status::Free;
            let id = f.id;
            self.id_index.remove(id);
            self.slots.release(fi, self.flows.len());
        }
        self.to_free.clear();
    }

    /// Time of the next event (arrival, completion, capacity change, timer),
    /// or `None` when nothing is left to happen. Lets callers run in slices
    /// with [`Simulation::run_until`] (progress reports, interruption).
    pub fn next_event_time(&mut self) -> Option<f64> {
        if !self.pending_sorted {
            self.pending[self.pending_head..].sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            self.pending_sorted = true;
        }
        self.next_time()
    }

    /// Ends the run at the current time: flushes telemetry and returns the
    /// records (with [`SimConfig::recycle_finished`], of the flows not
    /// completed only).
    pub fn finish(mut self) -> SimResult {
        self.dense_leave(false);
        let end = self.now;
        let links = if self.cfg.telemetry { self.cap.len() } else { 0 };
        for l in 0..links {
            self.integrate(l);
            let h = self.lk[l];
            if h.win != NO_WINDOW {
                self.windows.add_to_window(l as LinkId, h.win, h.acc);
            }
        }
        let mut stranded = 0;
        let flows = (0..self.flows.len())
            .filter(|&i| self.flows[i].status != Status::Free)
            .map(|i| {
                let mut rec = self.record(i as u32);
                let f = &self.flows[i];
                if f.status == Status::Active {
                    let left = (f.left - f.rate * (end - f.t_last) / 8.0).max(0.0);
                    rec.bytes_delivered = f.bytes - left;
                    if f.stranded.is_some() {
                        stranded += 1;
                    }
                } else {
                    rec.stranded = None;
                }
                rec
            })
            .collect();
        self.stats.stranded = stranded;
        SimResult { flows, link_windows: self.windows, stats: self.stats, end_s: end }
    }

    fn record(&self, fi: u32) -> FlowRecord {
        let f = &self.flows[fi as usize];
        let done = f.status == Status::Done;
        FlowRecord {
            id: f.id,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start_s: f.start_s,
            finish_s: f.finish_s,
            fct_s: f.finish_s - f.start_s,
            task_id: f.task_id,
            priority: f.prio,
            path_id: f.path_id,
            bytes_delivered: f.cancelled_bytes().unwrap_or(if done { f.bytes } else { 0.0 }),
            stranded: f.stranded,
        }
    }

    fn next_time(&mut self) -> Option<f64> {
        let queued = self.next_queued_time();
        if self.dense.is_some() {
            let t = self.dense_next_time().unwrap_or(f64::INFINITY).min(queued);
            return (t < f64::INFINITY).then_some(t);
        }
        while let Some(&p) = self.completions.peek() {
            if !self.settle_top(p) {
                break;
            }
        }
        let t = self.completions.peek().map_or(f64::INFINITY, |p| p.t).min(queued);
        (t < f64::INFINITY).then_some(t)
    }

    fn pop_completion_at(&mut self, t: f64) -> Option<u32> {
        if self.dense.is_some() {
            return self.dense_pop_completion(t);
        }
        while let Some(&p) = self.completions.peek() {
            if self.settle_top(p) {
                continue;
            }
            if p.t <= t {
                self.completions.pop();
                return Some(p.flow);
            }
            return None;
        }
        None
    }

    /// Handles the top prediction `p` if it is not due as it stands: drops
    /// a stale one, and moves the entry of a flow that slowed down to its
    /// current prediction. Returns whether the top changed.
    fn settle_top(&mut self, p: Pred) -> bool {
        let f = &mut self.flows[p.flow as usize];
        if f.status != Status::Active || f.ver != p.ver {
            self.completions.pop();
            return true;
        }
        if f.pred > p.t {
            if f.pred.is_finite() {
                f.entry_t = f.pred;
                self.completions.pop();
                self.completions.push(Pred { t: f.pred, ..p });
            } else {
                f.entry_t = f64::INFINITY;
                self.completions.pop();
            }
            return true;
        }
        false
    }

    /// Where the next event comes from: the initial arrivals, the event
    /// heap or the current instant's lane, whichever is first in
    /// `(time, sequence)` order; with its time.
    fn next_source(&self) -> Option<(f64, Source)> {
        // Sequence numbers are unique across the three, so no ties.
        fn first(a: Option<(f64, u64, Source)>, b: Option<(f64, u64, Source)>) -> Option<(f64, u64, Source)> {
            match (a, b) {
                (Some(x), Some(y)) => Some(if (y.0, y.1) < (x.0, x.1) { y } else { x }),
                (x, y) => x.or(y),
            }
        }
        let p = self.pending.get(self.pending_head).map(|&(t, s, _)| (t, s, Source::Pending));
        let h = self.events.peek().map(|q| (q.t, q.seq, Source::Heap));
        let l = self.now_lane.front().map(|q| (q.t, q.seq, Source::Lane));
        first(first(p, h), l).map(|(t, _, src)| (t, src))
    }

    /// Time of the next queued event (infinite if none).
    fn next_queued_time(&self) -> f64 {
        let p = self.pending.get(self.pending_head).map_or(f64::INFINITY, |e| e.0);
        let h = self.events.peek().map_or(f64::INFINITY, |q| q.t);
        let l = self.now_lane.front().map_or(f64::INFINITY, |q| q.t);
        p.min(h).min(l)
    }

    fn pop_event_at(&mut self, t: f64) -> Option<Ev> {
        let (qt, src) = self.next_source()?;
        if qt > t {
            return None;
        }
        match src {
            Source::Pending => {
                let (_, _, idx) = self.pending[self.pending_head];
                self.pending_head += 1;
                if self.pending_head == self.pending.len() {
                    self.pending.clear();
                    self.pending_head = 0;
                }
                Some(Ev::Arrival(idx))
            }
            Source::Heap => self.events.pop().map(|q| q.ev),
            Source::Lane => self.now_lane.pop_front().map(|q| q.ev),
        }
    }

    fn apply<C: Controller + ?Sized>(&mut self, ev: Ev, c: &mut C) {
        match ev {
            Ev::Arrival(fi) => {
                if self.flows[fi as usize].status == Status::Done {
                    return; // cancelled before it started
                }
                let done = if self.dense.is_some() { self.dense_arrive(fi) } else { self.activate(fi) };
                if done {
                    self.notify_complete(c, fi);
                }
            }
            Ev::Capacity { link, cap } => self.set_capacity_now(link, cap),
            Ev::Rebind { flow, to } => self.rebind_now(flow, to),
            Ev::Change { flow, change } => self.change_now(flow, change),
            Ev::Timer(token) => c.on_timer(&mut Ctx { sim: self }, token),
            Ev::Group(g) => c.on_group_complete(&mut Ctx { sim: self }, g),
        }
    }

    fn notify_complete<C: Controller + ?Sized>(&mut self, c: &mut C, fi: u32) {
        let rec = self.record(fi);
        if self.cfg.recycle_finished {
            self.to_free.push(fi);
        }
        c.on_flow_complete(&mut Ctx { sim: self }, &rec);
        if let Some(gs) = self.flow_groups.remove(&fi) {
            for g in gs {
                let rem = self.groups.get_mut(&g).expect("registered group");
                *rem -= 1;
                if *rem == 0 {
                    self.groups.remove(&g);
                    c.on_group_complete(&mut Ctx { sim: self }, g);
                }
            }
        }
    }

    fn mark_dirty(&mut self, l: LinkId) {
        if !self.rep.lr[l as usize].dirty {
            self.rep.lr[l as usize].dirty = true;
            self.dirty.push(l);
        }
    }

    fn set_load(&mut self, l: usize, new: f64) {
        if new != self.rep.lr[l].load {
            if self.cfg.telemetry {
                self.integrate(l);
                self.lk[l].tel_t = self.now;
            }
            self.rep.lr[l].load = new;
        }
    }

    /// Adds the link's traffic since its last load change to its telemetry.
    /// The bytes of the window being filled accumulate in [`LinkHot`] and go
    /// to [`LinkWindows`] when the link moves past it (same sums, in the
    /// same order, as adding each interval there).
    fn integrate(&mut self, l: usize) {
        let (t1, w) = (self.now, self.cfg.window_s);
        let h = self.lk[l];
        let load = self.rep.lr[l].load;
        if t1 <= h.tel_t || load <= 0.0 {
            return;
        }
        let max = u64::from(self.cfg.max_windows);
        let first = (h.tel_t / w).floor();
        if first >= max as f64 {
            // Past the last kept window (see `SimConfig::max_windows`).
            if h.win != NO_WINDOW {
                self.windows.add_to_window(l as LinkId, h.win, h.acc);
                self.lk[l].win = NO_WINDOW;
            }
            self.stats.windows_dropped += 1;
            return;
        }
        let mut k = first as u64;
        if u64::from(h.win) == k && t1 <= (k + 1) as f64 * w {
            self.lk[l].acc += load * (t1 - h.tel_t) / 8.0;
            return;
        }
        if h.win != NO_WINDOW {
            self.windows.add_to_window(l as LinkId, h.win, h.acc);
            self.lk[l].win = NO_WINDOW;
        }
        let mut a = h.tel_t;
        loop {
            let end = (k + 1) as f64 * w;
            let b = t1.min(end);
            if b > a {
                let bytes = load * (b - a) / 8.0;
                if t1 <= end && k < u64::from(NO_WINDOW) {
                    self.lk[l].win = k as u32;
                    self.lk[l].acc = bytes;
                } else {
                    self.windows.add_to_window(l as LinkId, k as u32, bytes);
                }
            }
            if t1 <= end {
                break;
            }
            a = end;
            k += 1;
            if k >= max {
                self.stats.windows_dropped += 1;
                break;
            }
        }
    }

    fn attach(&mut self, fi: u32) {
        let f = &mut self.flows[fi as usize];
        f.pos.reset(f.path.len());
        for (h, &l) in f.path.iter().enumerate() {
            let list = &mut self.link_flows[l as usize];
            f.pos.set(h, list.len() as u32);
            list.push((fi, h as u32));
        }
    }

    fn detach(&mut self, fi: u32) {
        let path = std::mem::take(&mut self.flows[fi as usize].path);
        let pos = std::mem::take(&mut self.flows[fi as usize].pos);
        for (h, &l) in path.iter().enumerate() {
            let list = &mut self.link_flows[l as usize];
            let p = pos.get(h) as usize;
            list.swap_remove(p);
            if let Some(&(g, gh)) = list.get(p) {
                self.flows[g as usize].pos.set(gh as usize, p as u32);
            }
        }
        let f = &mut self.flows[fi as usize];
        f.path = path;
        f.pos = pos;
    }

    fn ecmp_pick(&self, r: &dyn Routing, f: &FlowState) -> usize {
        let n = r.num_paths(f.src, f.dst);
        let h = mix(self.cfg.seed ^ mix(f.id ^ mix(((f.src as u64) << 32) | f.dst as u64)));
        let u = (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let total: f64 = (0..n).map(|k| r.path_weight(f.src, f.dst, k)).sum();
        let mut x = u * total;
        for k in 0..n {
            let w = r.path_weight(f.src, f.dst, k);
            if x < w {
                return k;
            }
            x -= w;
        }
        n - 1
    }

    /// Puts a routed flow on path `k`, or if that crosses a failed link, on
    /// the first later path (cyclically) that does not; else strands it on
    /// `k`. The flow must be detached.
    fn route_flow(&mut self, fi: u32, k: usize) {
        let r = self.routing.expect("validated: routed flows have a routing");
        let (src, dst) = (self.flows[fi as usize].src, self.flows[fi as usize].dst);
        let n = r.num_paths(src, dst);
        let mut buf = std::mem::take(&mut self.path_buf);
        let mut chosen = None;
        for j in 0..n {
            let kk = (k + j) % n;
            r.path(src, dst, kk, &mut buf);
            for &l in &buf {
                assert!(
                    (l as usize) < self.cap.len(),
                    "routing returned link {l} but the network has {} links",
                    self.cap.len()
                );
            }
            if buf.iter().all(|&l| self.cap[l as usize] > 0.0) {
                chosen = Some(kk);
                break;
            }
        }
        let kk = match chosen {
            Some(kk) => kk,
            None => {
                r.path(src, dst, k, &mut buf);
                k
            }
        };
        let f = &mut self.flows[fi as usize];
        f.path.set(&buf);
        f.path_id = Some(kk as u32);
        self.path_buf = buf;
        self.update_strand(fi);
    }

    fn update_strand(&mut self, fi: u32) {
        // No link down and no flow stranded: the flow is not stranded now
        // (a stranded one would be in the set), and cannot become so.
        if self.down_links == 0 && self.stranded.is_empty() {
            return;
        }
        let f = &mut self.flows[fi as usize];
        let down = f.path.iter().copied().find(|&l| self.cap[l as usize] <= 0.0);
        f.stranded = down.map(|link| match f.kind {
            RouteKind::Explicit => StrandReason::ExplicitLinkDown { link },
            _ => StrandReason::NoPathAvailable { link },
        });
        if f.stranded.is_some() {
            self.stranded.insert(fi);
        } else {
            self.stranded.remove(&fi);
        }
    }

    /// Marks a flow started, routes it and puts it on its links' lists;
    /// returns true if it completed at once (no bytes, or to itself).
    fn start_flow(&mut self, fi: u32) -> bool {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        f.status = Status::Active;
        f.t_last = now;
        f.left = f.bytes;
        f.rate = 0.0;
        self.hot[fi as usize].rate = 0.0;
        if f.src == f.dst || f.bytes == 0.0 {
            f.status = Status::Done;
            f.finish_s = now;
            f.left = 0.0;
            self.stats.flows_completed += 1;
            return true;
        }
        self.n_active += 1;
        self.route_new(fi);
        self.attach(fi);
        false
    }

    /// Starts a flow. Returns true if it completed at once.
    fn activate(&mut self, fi: u32) -> bool {
        if self.start_flow(fi) {
            return true;
        }
        // Exact shortcuts (see module docs).
        let f = &self.flows[fi as usize];
        let short = if f.path.iter().all(|&l| self.link_flows[l as usize].len() == 1) {
            let mut best = (f.cap, BN_CAP);
            for &l in &f.path {
                if self.cap[l as usize] < best.0 {
                    best = (self.cap[l as usize], l);
                }
            }
            Some(best)
        } else if f.cap.is_finite()
            && f.path.iter().all(|&l| {
                let c = self.cap[l as usize];
                f.cap == 0.0 || c - self.rep.lr[l as usize].load - f.cap > EPS * c
            })
        {
            Some((f.cap, BN_CAP))
        } else {
            None
        };
        match short {
            Some((rate, bn)) => {
                self.stats.fast_path += 1;
                self.flows[fi as usize].rate = rate;
                self.flows[fi as usize].bn = bn;
                self.hot[fi as usize].rate = rate;
                self.hot[fi as usize].bn = bn;
                self.predict(fi);
                for h in 0..self.flows[fi as usize].path.len() {
                    let l = self.flows[fi as usize].path[h] as usize;
                    self.set_load(l, self.rep.lr[l].load + rate);
                }
            }
            None => self.seeds.push(fi),
        }
        false
    }

    /// Chooses a starting flow's path (ECMP hash, path index or explicit).
    fn route_new(&mut self, fi: u32) {
        match self.flows[fi as usize].kind {
            RouteKind::Explicit => self.update_strand(fi),
            RouteKind::Ecmp => {
                let r = self.routing.expect("validated");
                let k = self.ecmp_pick(r, &self.flows[fi as usize]);
                self.route_flow(fi, k);
            }
            RouteKind::Index(k) => self.route_flow(fi, k as usize),
        }
    }

    fn predict(&mut self, fi: u32) {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        if f.rate <= 0.0 {
            f.pred = f64::INFINITY;
            return;
        }
        let t = if f.left <= f.done_eps() { now } else { now + f.left * 8.0 / f.rate };
        f.pred = t.max(now);
        // A valid entry at or before the new time stays (see `entry_t`).
        if f.pred < f.entry_t {
            f.ver = f.ver.wrapping_add(1);
            f.entry_t = f.pred;
            self.completions.push(Pred { t: f.pred, flow: fi, ver: f.ver });
            // Stale predictions are dropped lazily at the top; compact when
            // they dominate so the heap stays O(active flows).
            if self.completions.len() > 4 * self.n_active + 1024 {
                let flows = &self.flows;
                self.completions.retain(|p| {
                    let f = &flows[p.flow as usize];
                    f.status == Status::Active && f.ver == p.ver
                });
            }
        }
    }

    /// Marks a running flow finished now and takes it off its links' lists
    /// (finished flows keep no path); returns its path and the rate it had.
    fn end_flow(&mut self, fi: u32) -> (Hops, f64) {
        let now = self.now;
        let f = &mut self.flows[fi as usize];
        f.status = Status::Done;
        f.finish_s = now;
        f.left = 0.0;
        let rate = f.rate;
        f.rate = 0.0;
        self.hot[fi as usize].rate = 0.0;
        self.stats.flows_completed += 1;
        self.n_active -= 1;
        self.detach(fi);
        self.stranded.remove(&fi);
        let f = &mut self.flows[fi as usize];
        f.pos = Positions::default();
        (std::mem::take(&mut f.path), rate)
    }

    fn complete_flow(&mut self, fi: u32) {
        let (path, rate) = self.end_flow(fi);
        if rate > 0.0 {
            for &l in &path {
                let li = l as usize;
                if self.link_flows[li].is_empty() {
                    self.set_load(li, 0.0);
                } else if !self.rep.lr[li].dirty && self.rep.lr[li].slack() {
                    // Clearly slack: no flow is bottlenecked here, so the
                    // departure changes only the load (no event link, no
                    // scan of what may be thousands of flows).
                    self.set_load(li, (self.rep.lr[li].load - rate).max(0.0));
                } else {
                    self.mark_dirty(l);
                }
            }
        }
    }

    fn set_capacity_now(&mut self, link: LinkId, cap: f64) {
        let old = self.cap[link as usize];
        self.cap[link as usize] = cap;
        self.rep.lr[link as usize].cap = cap;
        self.mark_dirty(link);
        if cap <= 0.0 && old > 0.0 {
            self.down_links += 1;
            let on: Vec<u32> = self.link_flows[link as usize].iter().map(|e| e.0).collect();
            for fi in on {
                match self.flows[fi as usize].kind {
                    RouteKind::Explicit => self.update_strand(fi),
                    _ => self.reroute(fi),
                }
            }
        } else if cap > 0.0 && old <= 0.0 {
            self.down_links -= 1;
            let list: Vec<u32> = self.stranded.iter().copied().collect();
            for fi in list {
                match self.flows[fi as usize].kind {
                    RouteKind::Explicit => self.update_strand(fi),
                    _ => self.reroute(fi),
                }
            }
        }
    }

    fn reroute(&mut self, fi: u32) {
        let old = self.flows[fi as usize].path_id;
        let k = old.unwrap_or(0) as usize;
        self.move_flow(fi, |s| s.route_flow(fi, k));
        if self.flows[fi as usize].path_id != old {
            self.stats.reroutes += 1;
        }
    }

    fn move_flow(&mut self, fi: u32, place: impl FnOnce(&mut Self)) {
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.mark_dirty(l);
        }
        self.detach(fi);
        place(self);
        self.attach(fi);
        // The new links' loads do not include the flow's current rate: they
        // must be scanned in full, not summarised from their loads.
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.mark_dirty(l);
        }
        self.seeds.push(fi);
    }

    fn change_now(&mut self, fi: u32, change: Change) {
        if let Change::Cancel = change {
            return self.cancel_now(fi);
        }
        let set = |s: &mut Self| {
            let f = &mut s.flows[fi as usize];
            match change {
                Change::Priority(p) => {
                    f.prio = p;
                    s.hot[fi as usize].prio = p;
                }
                Change::Cap(c) => f.cap = c,
                Change::Cancel => unreachable!("handled above"),
            }
        };
        match self.flows[fi as usize].status {
            Status::Done | Status::Free => {}
            // Not arrived yet: it arrives with the new parameters.
            Status::Pending => set(self),
            // Same path: the flow only seeds a local repair. Its links are
            // not event links, so slack ones get light summaries (their
            // loads include the flow's current rate, which the region
            // subtracts); a class or cap matters only on saturated links,
            // which are scanned in full.
            Status::Active => {
                set(self);
                self.seeds.push(fi);
            }
        }
    }

    /// Stops a flow now: off its links (the rest is repaired), never
    /// completes, records the bytes it delivered.
    fn cancel_now(&mut self, fi: u32) {
        let now = self.now;
        match self.flows[fi as usize].status {
            Status::Done | Status::Free => {}
            Status::Pending => {
                let f = &mut self.flows[fi as usize];
                f.status = Status::Done;
                f.cancelled = 0.0;
            }
            Status::Active => {
                let f = &self.flows[fi as usize];
                let left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
                let sent = f.bytes - left;
                self.complete_flow(fi);
                self.stats.flows_completed -= 1;
                let f = &mut self.flows[fi as usize];
                f.finish_s = f64::NAN;
                f.cancelled = sent;
            }
        }
    }

    fn rebind_now(&mut self, fi: u32, to: RebindTo) {
        if self.flows[fi as usize].status != Status::Active {
            return; // finished in the same instant: nothing to move
        }
        match to {
            RebindTo::Path(k) => {
                self.flows[fi as usize].kind = RouteKind::Index(k as u32);
                self.move_flow(fi, |s| s.route_flow(fi, k));
            }
            RebindTo::Explicit(p) => self.move_flow(fi, |s| {
                let f = &mut s.flows[fi as usize];
                f.kind = RouteKind::Explicit;
                f.path = Hops::from(p);
                f.path_id = None;
                s.update_strand(fi);
            }),
        }
    }

    fn next_epoch(&mut self) -> u32 {
        if self.epoch == u32::MAX {
            self.rep.lr.iter_mut().for_each(|x| x.seen = 0);
            self.hot.iter_mut().for_each(|h| h.seen = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.epoch
    }

    /// Puts an active flow into the region (epoch `e`).
    fn reg_add(&mut self, fi: u32, e: u32) {
        self.hot[fi as usize].seen = e;
        self.rep.reg.push(fi);
        let rate = self.hot[fi as usize].rate;
        for h in 0..self.flows[fi as usize].path.len() {
            let l = self.flows[fi as usize].path[h];
            self.touch_link(l, e);
            self.mark_stale(l);
            let li = l as usize;
            if self.rep.lr[li].ro_epoch != e {
                self.rep.lr[li].ro_epoch = e;
                self.rep.lr[li].reg_old = 0.0;
            }
            self.rep.lr[li].reg_old += rate;
        }
    }

    /// Whether a stale link may get a light summary in epoch `e`: clearly
    /// slack (so no flow is bottlenecked on it) and not an event link.
    fn can_be_light(&self, l: LinkId, e: u32) -> bool {
        let l = l as usize;
        self.rep.lr[l].full != e && self.rep.lr[l].slack()
    }

    /// The summary of a slack link without scanning its flows: one entry
    /// for every class, whose outside load is the link's load minus the
    /// region's current rates on it. Exact as long as the link stays slack
    /// and no region flow is bottlenecked on it; the boundary check turns it
    /// into a full summary otherwise.
    fn light_link(&mut self, l: LinkId, e: u32) {
        let li = l as usize;
        let reg = if self.rep.lr[li].ro_epoch == e { self.rep.lr[li].reg_old } else { 0.0 };
        let start = self.rep.cls.len();
        self.rep.cls.push(ClassStat { out_load: (self.rep.lr[li].load - reg).max(0.0), ..ClassStat::empty(i32::MIN) });
        self.rep.lr[li].seg = (start as u32, 1);
        self.rep.lr[li].stale = false;
        self.rep.lr[li].light = e;
    }

    fn touch_link(&mut self, l: LinkId, e: u32) {
        if self.rep.lr[l as usize].seen != e {
            self.rep.lr[l as usize].seen = e;
            self.rep.tlinks.push(l);
            self.mark_stale(l);
        }
    }

    fn mark_stale(&mut self, l: LinkId) {
        if !self.rep.lr[l as usize].stale {
            self.rep.lr[l as usize].stale = true;
            self.rep.stale.push(l);
        }
    }

    /// Rebuilds the per-class summary of the outside flows of link `l`.
    /// With `widen = Some((p, x))`, outside flows of class `p` with a
    /// normalised rate `>= x` or of a class after `p` first join the region.
    fn scan_link(&mut self, l: LinkId, e: u32, widen: Option<(i32, f64)>) {
        let start = self.rep.cls.len();
        let tol = EPS * self.rep.lr[l as usize].cap;
        // Class lookup: the last class found (flows of a task sit together
        // in a link's list), then a linear search while classes are few,
        // then a map (task-serialising policies put hundreds of classes on
        // a link; a linear search per flow would be quadratic).
        let mut last = usize::MAX;
        self.rep.cls_idx.clear();
        for j in 0..self.link_flows[l as usize].len() {
            let g = self.link_flows[l as usize][j].0;
            let f = self.hot[g as usize];
            let seg = &self.rep.cls[start..];
            let found = if last < seg.len() && seg[last].prio == f.prio {
                Some(last)
            } else if seg.len() <= CLASS_SCAN_MAX {
                seg.iter().position(|x| x.prio == f.prio)
            } else {
                if self.rep.cls_idx.is_empty() {
                    for (k, x) in seg.iter().enumerate() {
                        self.rep.cls_idx.insert(x.prio, k as u32);
                    }
                }
                self.rep.cls_idx.get(&f.prio).map(|&k| k as usize)
            };
            let k = match found {
                Some(k) => k,
                None => {
                    if !self.rep.cls_idx.is_empty() {
                        self.rep.cls_idx.insert(f.prio, (self.rep.cls.len() - start) as u32);
                    }
                    self.rep.cls.push(ClassStat::empty(f.prio));
                    self.rep.cls.len() - 1 - start
                }
            };
            last = k;
            if self.hot[g as usize].seen == e {
                continue;
            }
            if let Some((p, x)) = widen {
                if f.prio > p || (f.prio == p && f.rate >= x * f.weight) {
                    self.reg_add(g, e);
                    continue;
                }
            }
            let st = &mut self.rep.cls[start + k];
            st.out_load += f.rate;
            st.out_maxn = st.out_maxn.max(f.rate / f.weight);
            st.out_pos |= f.rate > 0.0;
            if f.bn == l {
                st.out_bn_thr = st.out_bn_thr.min((f.rate + tol) / f.weight);
            }
        }
        let seg = &mut self.rep.cls[start..];
        if seg.len() > 1 {
            seg.sort_by_key(|x| x.prio);
        }
        self.rep.lr[l as usize].seg = (start as u32, seg.len() as u32);
        self.rep.lr[l as usize].stale = false;
        self.rep.lr[l as usize].light = 0;
    }

    /// Adds the outside flows of `l` selected by `pick` to the violators.
    fn collect(&mut self, l: LinkId, e: u32, pick: impl Fn(&Hot) -> bool) {
        let ve = self.rep.viol_epoch;
        for &(g, _) in &self.link_flows[l as usize] {
            let h = &mut self.hot[g as usize];
            if h.seen != e && h.viol != ve && pick(h) {
                h.viol = ve;
                self.rep.viol.push(g);
            }
        }
    }

    /// Boundary check of link `l` (see module docs); pushes invalid outside
    /// flows to `rep.viol`.
    /// Returns whether a light summary must become a full one.
    fn check_boundary(&mut self, l: LinkId, e: u32) -> bool {
        let c = self.rep.lr[l as usize].cap;
        let tol = EPS * c;
        let (start, len) = self.rep.lr[l as usize].seg;
        let (start, len) = (start as usize, len as usize);
        if self.rep.lr[l as usize].light == e {
            let st = self.rep.cls[start];
            if st.r_thr < f64::INFINITY || st.out_load + st.r_load > c * (1.0 - LIGHT_SLACK) {
                self.rep.lr[l as usize].full = e;
                self.mark_stale(l);
                return true;
            }
            return false;
        }
        let total: f64 = self.rep.cls[start..start + len].iter().map(|x| x.out_load + x.r_load).sum();
        if total > c + tol {
            // Over capacity (capacity dropped): every outside flow with a
            // positive rate must be reallocated.
            self.collect(l, e, |f| f.rate > 0.0);
            return false;
        }
        // Last class with a positive outside rate (so "any outside traffic
        // of a lower priority than class j" is one comparison).
        let last_pos = (0..len).rev().find(|&j| self.rep.cls[start + j].out_pos);
        let mut cum = 0.0;
        for j in 0..len {
            let st = self.rep.cls[start + j];
            cum += st.out_load + st.r_load;
            let maxn = st.out_maxn.max(st.r_maxn);
            let sat = c - cum <= tol;
            let p = st.prio;
            // (a) outside flows bottlenecked here must still be maximal on a
            // saturated link.
            if st.out_bn_thr < f64::INFINITY && (!sat || st.out_bn_thr < maxn) {
                self.collect(l, e, |f| f.prio == p && f.bn == l && (!sat || (f.rate + tol) / f.weight < maxn));
            }
            // (b) region flows bottlenecked here must be maximal too: outside
            // flows above them give way, and so does any outside traffic of
            // lower priority.
            if st.r_thr < f64::INFINITY {
                let thr = st.r_thr;
                if st.out_maxn > thr {
                    self.collect(l, e, |f| f.prio == p && f.rate / f.weight > thr);
                }
                if last_pos.is_some_and(|k| k > j) {
                    self.collect(l, e, |f| f.prio > p && f.rate > 0.0);
                }
            }
        }
        false
    }

    /// Reallocates after the events of one instant by exact local repair
    /// (see module docs), falling back to the connected component.
    fn repair(&mut self) {
        if self.full_repair {
            // Back from dense mode: reallocate everything once.
            self.full_repair = false;
            for k in 0..self.dirty.len() {
                let l = self.dirty[k] as usize;
                self.rep.lr[l].dirty = false;
            }
            self.dirty.clear();
            self.seeds.clear();
            let links: Vec<u32> =
                (0..self.cap.len() as u32).filter(|&l| !self.link_flows[l as usize].is_empty()).collect();
            self.recompute_component(&links);
            return;
        }
        self.last_region = 0;
        if self.dirty.is_empty() && self.seeds.is_empty() {
            return;
        }
        let e = self.next_epoch();
        self.rep.reg.clear();
        self.rep.tlinks.clear();
        self.rep.cls.clear();
        for k in 0..self.dirty.len() {
            let l = self.dirty[k];
            self.rep.lr[l as usize].dirty = false;
            self.rep.lr[l as usize].chg = e;
            self.rep.lr[l as usize].full = e;
            self.touch_link(l, e);
        }
        self.dirty.clear();
        for k in 0..self.seeds.len() {
            let fi = self.seeds[k];
            if self.flows[fi as usize].status == Status::Active && self.hot[fi as usize].seen != e {
                self.reg_add(fi, e);
                for &l in &self.flows[fi as usize].path {
                    self.rep.lr[l as usize].chg = e;
                }
            }
        }
        self.seeds.clear();
        let mut rounds = 0u64;
        let mut widened = false;
        let mut pf_done = false;
        loop {
            rounds += 1;
            for k in 0..self.rep.stale.len() {
                let l = self.rep.stale[k];
                if self.rep.lr[l as usize].stale {
                    if self.can_be_light(l, e) {
                        self.light_link(l, e);
                    } else {
                        self.scan_link(l, e, None);
                    }
                }
            }
            self.rep.stale.clear();
            // Reset the region part of every summary.
            for k in 0..self.rep.tlinks.len() {
                let l = self.rep.tlinks[k] as usize;
                let (s0, n) = self.rep.lr[l].seg;
                let mut out = 0.0;
                for st in &mut self.rep.cls[s0 as usize..(s0 + n) as usize] {
                    st.r_load = 0.0;
                    st.r_maxn = 0.0;
                    st.r_thr = f64::INFINITY;
                    out += st.out_load;
                }
                self.rep.rcap[l] = (self.cap[l] - out).max(0.0);
            }
            if !self.rep.reg.is_empty() {
                // Light links leave the allocation: it cannot be bound by
                // them (the boundary check turns one the new rates would
                // fill into a full link, and the round repeats), and a
                // link that does not saturate does not change progressive
                // filling. A flow with only light links keeps them all, so
                // that it still gets a finite rate.
                self.packed.clear();
                for k in 0..self.rep.reg.len() {
                    let f = &self.flows[self.rep.reg[k] as usize];
                    let lr = &self.rep.lr;
                    if f.path.iter().any(|&l| lr[l as usize].light != e) {
                        self.packed.push_links(f, |l| lr[l as usize].light != e);
                    } else {
                        self.packed.push(f);
                    }
                }
                self.alloc.allocate(&self.rep.rcap, &self.packed, &mut self.new_rates);
                pf_done = true;
                for k in 0..self.rep.reg.len() {
                    let r = self.new_rates[k];
                    let w = self.packed.weight[k];
                    let p = self.packed.prio[k];
                    let bn = self.alloc.bn[k];
                    for &l in &self.flows[self.rep.reg[k] as usize].path {
                        let (s0, n) = self.rep.lr[l as usize].seg;
                        let seg = &mut self.rep.cls[s0 as usize..(s0 + n) as usize];
                        let st = if self.rep.lr[l as usize].light == e {
                            &mut seg[0]
                        } else {
                            // Segments are sorted by class once scanned.
                            let k = seg.binary_search_by_key(&p, |x| x.prio).expect("class scanned");
                            &mut seg[k]
                        };
                        st.r_load += r;
                        st.r_maxn = st.r_maxn.max(r / w);
                        if bn == l {
                            st.r_thr = st.r_thr.min((r + EPS * self.cap[l as usize]) / w);
                        }
                    }
                }
            }
            self.rep.viol.clear();
            if self.rep.viol_epoch == u32::MAX {
                self.hot.iter_mut().for_each(|h| h.viol = 0);
                self.rep.viol_epoch = 0;
            }
            self.rep.viol_epoch += 1;
            let mut again = false;
            for k in 0..self.rep.tlinks.len() {
                let l = self.rep.tlinks[k];
                again |= self.check_boundary(l, e);
            }
            if self.rep.viol.is_empty() && !again {
                break;
            }
            for k in 0..self.rep.viol.len() {
                let g = self.rep.viol[k];
                self.reg_add(g, e);
            }
            let big = self.rep.reg.len() > FALLBACK_MIN;
            if big && !widened && WIDEN_DIV * self.rep.reg.len() > self.n_active {
                // A dense cascade: rather than growing hop by hop, take in
                // at once every flow it can reach at or above its lowest
                // level (see module docs). Only a guess: the boundary check
                // still decides.
                widened = true;
                self.stats.widenings += 1;
                let npf = if pf_done { self.new_rates.len() } else { 0 };
                self.widen(e, npf);
            }
            if big && 4 * self.rep.reg.len() > 3 * self.n_active {
                self.stats.repair_rounds += rounds;
                self.stats.max_repair_rounds = self.stats.max_repair_rounds.max(rounds);
                self.stats.fallbacks += 1;
                for k in 0..self.rep.stale.len() {
                    let l = self.rep.stale[k];
                    self.rep.lr[l as usize].stale = false;
                }
                self.rep.stale.clear();
                let links = std::mem::take(&mut self.rep.tlinks);
                self.recompute_component(&links);
                self.rep.tlinks = links;
                return;
            }
        }
        self.stats.repair_rounds += rounds;
        self.stats.max_repair_rounds = self.stats.max_repair_rounds.max(rounds);
        let n = self.rep.reg.len() as u64;
        self.last_region = self.rep.reg.len();
        if n > 0 {
            self.stats.recomputations += 1;
            self.stats.repairs += 1;
            self.stats.region_flows += n;
            self.stats.max_region_flows = self.stats.max_region_flows.max(n);
        }
        let now = self.now;
        for k in 0..self.rep.reg.len() {
            let fi = self.rep.reg[k];
            let nr = self.new_rates[k];
            let f = &mut self.flows[fi as usize];
            f.bn = self.alloc.bn[k];
            self.hot[fi as usize].bn = f.bn;
            if nr != f.rate {
                f.left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
                f.t_last = now;
                f.rate = nr;
                self.hot[fi as usize].rate = nr;
                self.stats.rate_changes += 1;
                self.predict(fi);
                for &l in &self.flows[fi as usize].path {
                    self.rep.lr[l as usize].chg = e;
                }
            }
        }
        // Re-sum the loads of links whose flows or rates changed (the others
        // keep their exact previous sums).
        for k in 0..self.rep.tlinks.len() {
            let l = self.rep.tlinks[k] as usize;
            if self.rep.lr[l].chg != e {
                continue;
            }
            let (s0, n) = self.rep.lr[l].seg;
            let load: f64 = self.rep.cls[s0 as usize..(s0 + n) as usize].iter().map(|x| x.out_load + x.r_load).sum();
            self.set_load(l, load);
        }
        if self.cfg.check_invariants {
            if let Err(msg) = self.verify() {
                panic!("invariant violated at t={}: {msg}", self.now);
            }
        }
    }

    /// Adds to the region every flow reachable from it through flows whose
    /// normalised rate is at least the region's lowest (old or new, for the
    /// region's highest priority class `p`), and all reachable flows of
    /// lower priority. `npf` region flows have new rates in `new_rates`.
    fn widen(&mut self, e: u32, npf: usize) {
        let mut p = i32::MAX;
        for &fi in &self.rep.reg {
            p = p.min(self.flows[fi as usize].prio);
        }
        let mut x = f64::INFINITY;
        for (k, &fi) in self.rep.reg.iter().enumerate() {
            let f = &self.flows[fi as usize];
            if f.prio != p {
                continue;
            }
            if f.rate > 0.0 || k >= npf {
                x = x.min(f.rate / f.weight);
            }
            if k < npf {
                x = x.min(self.new_rates[k] / f.weight);
            }
        }
        let x = x * (1.0 - 1e-9);
        if self.rep.wl_epoch == u32::MAX {
            self.rep.lr.iter_mut().for_each(|x| x.wl_seen = 0);
            self.rep.wl_epoch = 0;
        }
        self.rep.wl_epoch += 1;
        let mut qi = 0;
        while qi < self.rep.reg.len() {
            let fi = self.rep.reg[qi];
            qi += 1;
            for h in 0..self.flows[fi as usize].path.len() {
                let l = self.flows[fi as usize].path[h] as usize;
                if self.rep.lr[l].wl_seen == self.rep.wl_epoch {
                    continue;
                }
                self.rep.lr[l].wl_seen = self.rep.wl_epoch;
                // The criterion does not depend on the link, so once `l` is
                // visited its flows are decided and its summary is final.
                self.scan_link(l as LinkId, e, Some((p, x)));
            }
        }
    }

    /// Reallocates the whole connected component of `links` from scratch.
    fn recompute_component(&mut self, links: &[u32]) {
        let e = self.next_epoch();
        self.comp_flows.clear();
        self.comp_links.clear();
        for &l in links {
            if self.rep.lr[l as usize].seen != e {
                self.rep.lr[l as usize].seen = e;
                self.comp_links.push(l);
            }
        }
        // BFS over the flow/link bipartite graph.
        self.packed.clear();
        let mut qi = 0;
        while qi < self.comp_links.len() {
            let l = self.comp_links[qi] as usize;
            qi += 1;
            for &(fi, _) in &self.link_flows[l] {
                if self.hot[fi as usize].seen != e {
                    self.hot[fi as usize].seen = e;
                    self.comp_flows.push(fi);
                    self.packed.push(&self.flows[fi as usize]);
                    for &m in &self.flows[fi as usize].path {
                        if self.rep.lr[m as usize].seen != e {
                            self.rep.lr[m as usize].seen = e;
                            self.comp_links.push(m);
                        }
                    }
                }
            }
        }
        let now = self.now;
        self.last_region = self.comp_flows.len();
        if !self.comp_flows.is_empty() {
            self.stats.recomputations += 1;
            let n = self.comp_flows.len() as u64;
            self.stats.component_flows += n;
            self.stats.max_component_flows = self.stats.max_component_flows.max(n);
            self.alloc.allocate(&self.cap, &self.packed, &mut self.new_rates);
            for k in 0..self.comp_flows.len() {
                let fi = self.comp_flows[k];
                let nr = self.new_rates[k];
                let f = &mut self.flows[fi as usize];
                f.bn = self.alloc.bn[k];
                self.hot[fi as usize].bn = f.bn;
                if nr != f.rate {
                    // Settle progress at the old rate before switching.
                    f.left = (f.left - f.rate * (now - f.t_last) / 8.0).max(0.0);
                    f.t_last = now;
                    f.rate = nr;
                    self.hot[fi as usize].rate = nr;
                    self.stats.rate_changes += 1;
                    self.predict(fi);
                }
            }
        }
        // Link loads from the packed paths: no second pass over flow states.
        for &l in &self.comp_links {
            self.link_acc[l as usize] = 0.0;
        }
        for (k, &r) in self.new_rates.iter().enumerate().take(self.comp_flows.len()) {
            for &l in self.packed.path(k) {
                self.link_acc[l as usize] += r;
            }
        }
        for k in 0..self.comp_links.len() {
            let l = self.comp_links[k] as usize;
            self.set_load(l, self.link_acc[l]);
        }
        if self.cfg.check_invariants {
            if let Err(msg) = self.verify() {
                panic!("invariant violated at t={}: {msg}", self.now);
            }
        }
    }

    /// Checks the whole current allocation against a from-scratch max-min
    /// computation and the capacity limits.
    fn verify(&self) -> Result<(), String> {
        let active: Vec<usize> = (0..self.flows.len()).filter(|&i| self.flows[i].status == Status::Active).collect();
        let spec: Vec<(Vec<LinkId>, f64, f64, i32)> = active
            .iter()
            .map(|&i| {
                let f = &self.flows[i];
                (f.path.to_vec(), f.weight, f.cap, f.prio)
            })
            .collect();
        let expect = max_min_rates(&self.cap, &spec);
        let mut sum = vec![0.0; self.cap.len()];
        for (k, &i) in active.iter().enumerate() {
            let f = &self.flows[i];
            let scale = f.path.iter().map(|&l| self.cap[l as usize]).fold(1.0, f64::max);
            if (f.rate - expect[k]).abs() > 1e-9 * scale {
                return Err(format!("flow {} has rate {} but a full recomputation gives {}", f.id, f.rate, expect[k]));
            }
            if f.rate < 0.0 {
                return Err(format!("flow {} has negative rate {}", f.id, f.rate));
            }
            for &l in &f.path {
                sum[l as usize] += f.rate;
            }
            if f.rate == 0.0 && f.cap > 0.0 {
                // Must be blocked by a failed link or by strictly higher
                // priority traffic saturating a link of its path.
                let blocked = f.path.iter().any(|&l| {
                    let c = self.cap[l as usize];
                    let hi: f64 = self.link_flows[l as usize]
                        .iter()
                        .map(|&(g, _)| &self.flows[g as usize])
                        .filter(|g| g.prio < f.prio)
                        .map(|g| g.rate)
                        .sum();
                    c <= 0.0 || hi >= c * (1.0 - 1e-9)
                });
                if !blocked {
                    return Err(format!("flow {} starves without a reason", f.id));
                }
            }
        }
        for (l, &s) in sum.iter().enumerate() {
            if s > self.cap[l] * (1.0 + 1e-9) + 1e-9 {
                return Err(format!("link {l} carries {s} > capacity {}", self.cap[l]));
            }
            if (s - self.rep.lr[l].load).abs() > 1e-9 * self.cap[l].max(1.0) {
                return Err(format!("link {l} load {} differs from flow sum {s}", self.rep.lr[l].load));
            }
        }
        Ok(())
    }
}

/// What a [`Controller`] may do during a callback.
pub struct Ctx<'a, 'r> {
    sim: &'a mut Simulation<'r>,
}

impl Ctx<'_, '_> {
    /// Current simulation time.
    pub fn now(&self) -> f64 {
        self.sim.now
    }
    /// The routing, if the simulation has one.
    pub fn routing(&self) -> Option<&dyn Routing> {
        self.sim.routing
    }
    /// Adds a flow starting at or after now (a start of exactly now joins the
    /// current instant's rate recomputation).
    pub fn add_flow(&mut self, f: FlowSpec) -> Result<(), EngineError> {
        self.sim.add_flow(f)
    }
    /// Schedules [`Controller::on_timer`] at `t_s >= now`.
    pub fn schedule_timer(&mut self, t_s: f64, token: u64) -> Result<(), EngineError> {
        self.sim.schedule_timer(t_s, token)
    }
    /// Moves a running flow to path `k` of the routing.
    pub fn rebind_path(&mut self, flow_id: u64, k: usize) -> Result<(), EngineError> {
        self.sim.rebind_path(flow_id, k)
    }
    /// Moves a running flow to an explicit link list.
    pub fn rebind_explicit(&mut self, flow_id: u64, path: Vec<LinkId>) -> Result<(), EngineError> {
        self.sim.rebind_explicit(flow_id, path)
    }
    /// Moves a flow to another priority class now (see [`Simulation::set_priority`]).
    pub fn set_priority(&mut self, flow_id: u64, priority: i32) -> Result<(), EngineError> {
        self.sim.set_priority(flow_id, priority)
    }
    /// Cancels a flow now (see [`Simulation::cancel_flow`]).
    pub fn cancel_flow(&mut self, flow_id: u64) -> Result<(), EngineError> {
        self.sim.cancel_flow(flow_id)
    }
    /// Sets or removes a flow's rate cap now (see [`Simulation::set_rate_cap`]).
    pub fn set_rate_cap(&mut self, flow_id: u64, cap_bps: Option<f64>) -> Result<(), EngineError> {
        self.sim.set_rate_cap(flow_id, cap_bps)
    }
    /// Sets a link's capacity at `t_s >= now` (0 = failure).
    pub fn set_capacity(&mut self, t_s: f64, link: LinkId, cap_bps: f64) -> Result<(), EngineError> {
        self.sim.schedule_capacity(t_s, link, cap_bps)
    }
    /// Registers a flow group (see [`Simulation::register_group`]).
    pub fn register_group(&mut self, group: u64, flow_ids: &[u64]) -> Result<(), EngineError> {
        self.sim.register_group(group, flow_ids)
    }
    /// Current sum of flow rates on a link, bits/s.
    pub fn link_rate_bps(&self, link: LinkId) -> f64 {
        self.sim.link_rate_bps(link)
    }
    /// Current capacity of a link, bits/s.
    pub fn link_capacity_bps(&self, link: LinkId) -> f64 {
        self.sim.link_capacity_bps(link)
    }
    /// Current rate / capacity of a link.
    pub fn link_utilization(&self, link: LinkId) -> f64 {
        self.sim.link_utilization(link)
    }
    /// Current rate of a flow (see [`Simulation::flow_rate_bps`]).
    pub fn flow_rate_bps(&self, flow_id: u64) -> Option<f64> {
        self.sim.flow_rate_bps(flow_id)
    }
    /// Bytes a flow has delivered so far (see [`Simulation::flow_bytes_sent`]).
    pub fn flow_bytes_sent(&self, flow_id: u64) -> Option<f64> {
        self.sim.flow_bytes_sent(flow_id)
    }
}

#[cfg(test)]
mod tests {
    use super::{IdIndex, SlotBlocks};

    #[test]
    fn slot_blocks_are_reused_whole_and_in_order() {
        const B: u32 = SlotBlocks::BLOCK;
        let mut s = SlotBlocks::default();
        assert_eq!(s.take(), None);
        // Two blocks and one slot appended.
        for slot in 0..2 * B + 1 {
            s.grow(slot);
        }
        let n = (2 * B + 1) as usize;
        // Block 1 loses all but one flow, block 0 all: only block 0 is free.
        for slot in B..2 * B - 1 {
            s.release(slot, n);
        }
        assert_eq!(s.take(), None);
        for slot in 0..B {
            s.release(slot, n);
        }
        let got: Vec<u32> = (0..B).map(|_| s.take().expect("block 0 is free")).collect();
        assert_eq!(got, (0..B).collect::<Vec<_>>());
        assert_eq!(s.take(), None);
        // Block 1's last flow leaves, then block 0 (fully handed out) empties
        // again: the block freed last is handed out first.
        s.release(2 * B - 1, n);
        for slot in 0..B {
            s.release(slot, n);
        }
        let got: Vec<u32> = (0..2 * B).map(|_| s.take().expect("blocks 0 and 1")).collect();
        assert_eq!(got, (0..2 * B).collect::<Vec<_>>());
        // The partial last block (one slot) is never handed out.
        s.release(2 * B, n);
        assert_eq!(s.take(), None);
    }

    #[test]
    fn id_index_small_and_far_ids() {
        let mut ix = IdIndex::default();
        // In order, out of order, and one far beyond the flow count.
        let ids = [0u64, 5, 3, 1 << 40, 70_000, 2];
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(ix.get(id), None);
            ix.insert(id, k as u32, k as u64);
        }
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(ix.get(id), Some(k as u32), "id {id}");
        }
        // 70,000 is beyond 2 * 4 + 65,536 flows: in the map, like 2^40.
        assert_eq!(ix.sparse.len(), 2);
        assert!(ix.dense.len() < 100);
        assert_eq!(ix.get(4), None);
        assert_eq!(ix.get(69_999), None);
        assert_eq!(ix.get(u64::MAX), None);
        // Forgotten ids, in the vector and in the map; then reused.
        ix.remove(5);
        ix.remove(1 << 40);
        assert_eq!(ix.get(5), None);
        assert_eq!(ix.get(1 << 40), None);
        assert_eq!(ix.get(3), Some(2));
        assert_eq!(ix.sparse.len(), 1);
        ix.insert(5, 9, 6);
        assert_eq!(ix.get(5), Some(9));
    }
}
