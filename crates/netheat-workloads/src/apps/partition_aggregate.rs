//! Partition-aggregate queries (web search style), one or two stages.
//!
//! One stage: the aggregator sends a request of `request_bytes` to every
//! other host of its rack; each worker computes for `compute_s` seconds
//! (a timer) and answers with `selectivity · response_bytes`; the task ends
//! with the last answer. Uncontended, its time is
//! `request time + compute_s + response time`.
//!
//! Two stages: the top aggregator sends the request to `mid_aggregators`
//! (default 30) mid-level aggregators, one in each of as many other racks;
//! each mid-level aggregator runs the one-stage query on its own rack, then
//! after all its workers answered computes for `mid_compute_s` and answers
//! the top with `mid_response_bytes`.

use netheat_core::HostId;
use netheat_topology::Topology;
use rand::Rng;

use super::{check_host, check_nonneg, choose, rack_hosts, rack_of};
use crate::dag::{StepId, TaskDag};
use crate::GenError;

/// Parameters of a partition-aggregate query.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionAggregate {
    /// Request size, bytes.
    pub request_bytes: f64,
    /// Response of a worker at selectivity 1, bytes.
    pub response_bytes: f64,
    /// Fraction of a worker's full response that matches the query, in
    /// `[0, 1]`; a worker sends `selectivity · response_bytes`.
    pub selectivity: f64,
    /// Worker compute time before responding, seconds.
    pub compute_s: f64,
    /// Mid-level aggregators of a two-stage query.
    pub mid_aggregators: usize,
    /// Mid-level compute time after its workers answered, seconds.
    pub mid_compute_s: f64,
    /// Response of a mid-level aggregator to the top, bytes.
    pub mid_response_bytes: f64,
}

impl Default for PartitionAggregate {
    /// 2 KB requests, 20 KB responses, selectivity 1, 1 ms compute, 30
    /// mid-level aggregators answering 20 KB after 1 ms.
    fn default() -> Self {
        Self {
            request_bytes: 2e3,
            response_bytes: 20e3,
            selectivity: 1.0,
            compute_s: 1e-3,
            mid_aggregators: 30,
            mid_compute_s: 1e-3,
            mid_response_bytes: 20e3,
        }
    }
}

impl PartitionAggregate {
    fn validate(&self) -> Result<(), GenError> {
        check_nonneg("request_bytes", self.request_bytes)?;
        check_nonneg("response_bytes", self.response_bytes)?;
        check_nonneg("compute_s", self.compute_s)?;
        check_nonneg("mid_compute_s", self.mid_compute_s)?;
        check_nonneg("mid_response_bytes", self.mid_response_bytes)?;
        if !(0.0..=1.0).contains(&self.selectivity) {
            return Err(GenError::param("selectivity", format!("{} is outside [0, 1]", self.selectivity)));
        }
        Ok(())
    }

    /// Adds the one-stage query of `agg` on its rack after `deps`; returns
    /// the workers' response steps.
    fn rack_query(&self, dag: &mut TaskDag, topo: &Topology, agg: HostId, deps: &[StepId]) -> Vec<StepId> {
        let mut resp = Vec::new();
        for w in rack_hosts(topo, rack_of(topo, agg)).filter(|&w| w != agg) {
            let r = dag.flow(agg, w, self.request_bytes, deps);
            let c = dag.delay(self.compute_s, &[r]);
            resp.push(dag.flow(w, agg, self.selectivity * self.response_bytes, &[c]));
        }
        resp
    }

    /// A one-stage query aggregated at `agg`.
    pub fn one_stage(&self, topo: &Topology, agg: HostId) -> Result<TaskDag, GenError> {
        self.validate()?;
        check_host(topo, "agg", agg)?;
        if topo.hosts_per_rack() < 2 {
            return Err(GenError::NotEnoughHosts("a one-stage query needs at least 2 hosts per rack".into()));
        }
        let mut dag = TaskDag::new("partition-aggregate-1");
        self.rack_query(&mut dag, topo, agg, &[]);
        Ok(dag)
    }

    /// A two-stage query from `top` through the given mid-level aggregators.
    pub fn two_stage(&self, topo: &Topology, top: HostId, mids: &[HostId]) -> Result<TaskDag, GenError> {
        self.validate()?;
        check_host(topo, "top", top)?;
        let mut dag = TaskDag::new("partition-aggregate-2");
        for &m in mids {
            check_host(topo, "mids", m)?;
            let req = dag.flow(top, m, self.request_bytes, &[]);
            let mut resp = self.rack_query(&mut dag, topo, m, &[req]);
            if resp.is_empty() {
                resp.push(req);
            }
            let c = dag.delay(self.mid_compute_s, &resp);
            dag.flow(m, top, self.mid_response_bytes, &[c]);
        }
        Ok(dag)
    }

    /// Draws `mid_aggregators` mid-level aggregators for `top`: distinct
    /// racks other than `top`'s, uniformly, and a uniform host in each.
    pub fn pick_mids<R: Rng + ?Sized>(
        &self,
        topo: &Topology,
        top: HostId,
        rng: &mut R,
    ) -> Result<Vec<HostId>, GenError> {
        check_host(topo, "top", top)?;
        let own = rack_of(topo, top);
        let racks: Vec<u32> = (0..topo.racks().len() as u32).filter(|&r| r != own).collect();
        let chosen = choose(rng, &racks, self.mid_aggregators).ok_or_else(|| {
            GenError::NotEnoughHosts(format!(
                "{} mid-level aggregators need as many other racks; there are {}",
                self.mid_aggregators,
                racks.len()
            ))
        })?;
        Ok(chosen.into_iter().map(|r| rack_hosts(topo, r).start + rng.gen_range(0..topo.hosts_per_rack())).collect())
    }

    /// A two-stage query from a uniformly drawn top aggregator.
    pub fn random_two_stage<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<TaskDag, GenError> {
        let top = rng.gen_range(0..topo.hosts().len() as HostId);
        let mids = self.pick_mids(topo, top, rng)?;
        self.two_stage(topo, top, &mids)
    }

    /// A one-stage query at a uniformly drawn aggregator.
    pub fn random_one_stage<R: Rng + ?Sized>(&self, topo: &Topology, rng: &mut R) -> Result<TaskDag, GenError> {
        let agg = rng.gen_range(0..topo.hosts().len() as HostId);
        self.one_stage(topo, agg)
    }
}
