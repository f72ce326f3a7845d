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

// Source layout. This file: the `Simulation` facade (its state, constructor,
// queries and results). Then, by concern:
// - config: SimConfig, DenseMode, Stats, SimResult;
// - controller: Controller, NoController, Ctx;
// - input: add_flow, schedule_*, set_*, rebind_*: validated, queued as events;
// - events: event types, the event queue and the run loop;
// - lifecycle: what events do to flows (start, predict, complete, cancel,
//   change, re-bind, re-route);
// - links: per-link state (flow lists, loads, dirty marks, telemetry);
// - state: per-flow state, the flow-id index, slot reuse;
// - repair: exact local repair, widening, component fallback, verification;
// - boundary: the repair's link summaries and boundary check;
// - dense: dense mode.
mod boundary;
mod config;
mod controller;
mod dense;
mod events;
mod input;
mod lifecycle;
mod links;
mod repair;
mod state;
pub use lifecycle::ecmp_draw;

pub use config::{DenseMode, SimConfig, SimResult, Stats};
pub use controller::{Controller, Ctx, NoController};

use crate::flow::FlowRecord;
use crate::maxmin::Allocator;
use crate::radix::RadixHeap;
use crate::telemetry::LinkWindows;
use crate::{EngineError, Network};
use dense::{Dense, DenseCtl};
use events::{Pred, Queued};
use links::{LinkHot, LinkRep, NO_WINDOW};
use netheat_core::{LinkId, Routing};
use repair::{Packed, Repair};
use state::{FlowState, Hot, IdIndex, SlotBlocks, Status};
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

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
    groups: netheat_core::IdMap<u64, u32>,
    flow_groups: netheat_core::IdMap<u32, Vec<u64>>,
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

impl<'r> Simulation<'r> {
    /// A simulation of `net` at time 0.
    ///
    /// `net` may have links beyond the routing's: devices (a disk, say)
    /// that only explicit routes cross.
    ///
    /// # Panics
    /// If `routing` has more links than `net`.
    pub fn new(net: Network, routing: Option<&'r dyn Routing>, cfg: SimConfig) -> Self {
        if let Some(r) = routing {
            if r.num_links() > net.num_links() {
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
            groups: Default::default(),
            flow_groups: Default::default(),
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

    pub(super) fn record(&self, fi: u32) -> FlowRecord {
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
}
