//! How higher layers take part in a run: the [`Controller`] callbacks and
//! the [`Ctx`] through which they act on the simulation.

use super::Simulation;
use crate::flow::{FlowRecord, FlowSpec};
use crate::EngineError;
use netheat_core::{LinkId, Routing};

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

/// What a [`Controller`] may do during a callback.
pub struct Ctx<'a, 'r> {
    pub(super) sim: &'a mut Simulation<'r>,
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
    /// Whether the run has flows and every one is stranded by a failure
    /// (none moves until a link comes back).
    pub fn all_flows_stranded(&self) -> bool {
        self.sim.n_active > 0 && self.sim.stranded.len() == self.sim.n_active
    }
}
