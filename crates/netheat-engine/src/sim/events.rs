//! The event queue and the loop that drains it: events are taken in
//! `(time, sequence)` order from the pre-run arrivals, the event heap and
//! the current instant's lane, interleaved with completions from the
//! prediction heap; each instant ends with one rate recomputation.

use super::config::SimResult;
use super::controller::{Controller, Ctx, NoController};
use super::state::Status;
use super::Simulation;
use crate::order::heap_order;
use crate::radix::RadixKey;
use netheat_core::LinkId;

#[derive(Debug)]
pub(super) enum RebindTo {
    Path(usize),
    Explicit(Vec<LinkId>),
}

/// A change of a flow's sharing parameters.
#[derive(Debug, Clone, Copy)]
pub(super) enum Change {
    Priority(i32),
    Cap(f64),
    Cancel,
}

#[derive(Debug)]
pub(super) enum Ev {
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
pub(super) struct Queued {
    t: f64,
    seq: u64,
    ev: Ev,
}
// Reversed for a min-heap on (t, seq).
heap_order!(Queued, |a, b| b.t.total_cmp(&a.t).then(b.seq.cmp(&a.seq)));

#[derive(Debug, Clone, Copy)]
pub(super) struct Pred {
    pub(super) t: f64,
    pub(super) flow: u32,
    pub(super) ver: u32,
}
// Earliest time first, then the lowest flow index, then the lowest version
// (the bits of a non-negative `f64` order as the number does).
impl RadixKey for Pred {
    fn key(&self) -> u128 {
        (u128::from((self.t + 0.0).to_bits()) << 64) | (u128::from(self.flow) << 32) | u128::from(self.ver)
    }
}

impl Simulation<'_> {
    pub(super) fn push_event(&mut self, t: f64, ev: Ev) {
        let q = Queued { t, seq: self.seq, ev };
        if self.running && t == self.now {
            self.now_lane.push_back(q);
        } else {
            self.events.push(q);
        }
        self.seq += 1;
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
        self.run_events_until(c, t_end_s);
        if t_end_s.is_finite() && t_end_s > self.now {
            self.now = t_end_s;
        }
    }

    /// Processes every event at times `<= t_end_s` and leaves the clock at
    /// the last of them: running in slices this way ends exactly where
    /// [`Simulation::run`] would (same `end_s`, same telemetry windows).
    pub fn run_events_until<C: Controller + ?Sized>(&mut self, c: &mut C, t_end_s: f64) {
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
        if self.flow_groups.is_empty() {
            return;
        }
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
}
