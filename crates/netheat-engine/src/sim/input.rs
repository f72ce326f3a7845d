//! The inputs of a run: flows, capacity changes, timers, flow groups and
//! changes to running flows, validated and queued as events.

use super::events::{Change, Ev, RebindTo};
use super::state::{FlowState, Hot, Positions, RouteKind, Status};
use super::Simulation;
use crate::flow::{FlowSpec, Route};
use crate::hops::Hops;
use crate::maxmin::BN_NONE;
use crate::EngineError;
use netheat_core::{HostId, LinkId};

impl Simulation<'_> {
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
                let n = self.check_path_index(id, f.src, f.dst, None)?;
                (RouteKind::Ecmp(u32::try_from(n).unwrap_or(u32::MAX)), Vec::new())
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

    /// Fires [`Controller::on_timer`](super::Controller::on_timer) with `token` at `t_s`.
    pub fn schedule_timer(&mut self, t_s: f64, token: u64) -> Result<(), EngineError> {
        self.check_time(t_s)?;
        self.push_event(t_s, Ev::Timer(token));
        Ok(())
    }

    /// Registers a group of flows;
    /// [`Controller::on_group_complete`](super::Controller::on_group_complete)
    /// fires once all of them have completed (at once if they already have).
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

    /// Checks a routed flow's hosts and path index; returns the number of
    /// paths between its hosts (0 from a host to itself).
    fn check_path_index(&self, flow: u64, src: HostId, dst: HostId, k: Option<usize>) -> Result<usize, EngineError> {
        let r = self.routing.ok_or(EngineError::NoRouting { flow })?;
        let num_hosts = r.num_hosts();
        for h in [src, dst] {
            if h as usize >= num_hosts {
                return Err(EngineError::HostOutOfRange { flow, host: h, num_hosts });
            }
        }
        if src == dst {
            return Ok(0);
        }
        let np = r.num_paths(src, dst);
        if np == 0 {
            return Err(EngineError::NoPath { flow, src, dst });
        }
        match k {
            Some(k) if k >= np => Err(EngineError::PathIndexOutOfRange { flow, index: k, src, dst, num_paths: np }),
            _ => Ok(np),
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
}
