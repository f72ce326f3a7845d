//! The ranking of candidate hosts for one task, shared by every caller that
//! places tasks with a [`PlacementPolicy`]: the scenario layer's
//! `[placement]` (on the engine's live rates) and the live advisor
//! (`netheat-advisor`, on telemetry). Both build the same [`Candidate`]s
//! from a [`TorLoad`] and rank them with the policy's quantised
//! lexicographic objectives, so a decision taken in simulation is the one
//! production takes on the same state.

use netheat_core::HostId;
use netheat_topology::Topology;

use crate::policy::{projected_tor, Candidate, PlacementPolicy};

/// What the ranking reads of the network, per ToR (rack index).
pub trait TorLoad {
    /// Outbound utilization of the ToR's uplinks now (rates over capacity).
    fn utilization(&self, tor: usize) -> f64;
    /// Capacity of the ToR's uplinks in force, bits/s.
    fn capacity_bps(&self, tor: usize) -> f64;
}

/// The task being placed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskAsk {
    /// Cores it requests.
    pub cores: u32,
    /// Memory it requests, bytes.
    pub memory_bytes: f64,
    /// Its peak network demand estimate, bits/s (UTP's addition to the
    /// ToR's measured utilization).
    pub estimate_bps: f64,
}

/// One candidate host, ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRank {
    /// What the objectives compared.
    pub candidate: Candidate,
    /// Measured outbound utilization of the host's ToR.
    pub tor_util: f64,
    /// The candidate's quantised key per objective of the policy (lower is
    /// better; compared lexicographically).
    pub keys: Vec<i64>,
}

/// The candidate host `server` (with `free_cores` cores free) for `ask`,
/// next to the job's other tasks on `others`.
pub fn candidate(
    topo: &Topology,
    load: &dyn TorLoad,
    ask: &TaskAsk,
    others: &[HostId],
    server: HostId,
    free_cores: f64,
) -> (Candidate, f64) {
    let hosts = topo.hosts();
    let h = &hosts[server as usize];
    let rack = h.rack;
    let in_rack = others.iter().filter(|&&o| hosts[o as usize].rack == rack).count() as u32;
    let util = load.utilization(rack as usize);
    let projected = projected_tor(util, ask.estimate_bps, load.capacity_bps(rack as usize));
    (Candidate::new(server, in_rack, h.cores, free_cores, ask.cores, projected), util)
}

/// `sample` (hosts with their free cores) ranked best first by `policy`;
/// ties keep sample order, so the first is [`PlacementPolicy::choose`]'s.
pub fn rank_hosts(
    policy: &dyn PlacementPolicy,
    topo: &Topology,
    load: &dyn TorLoad,
    ask: &TaskAsk,
    others: &[HostId],
    sample: &[(HostId, f64)],
) -> Vec<HostRank> {
    let objectives = policy.objectives();
    let mut out: Vec<HostRank> = sample
        .iter()
        .map(|&(s, free)| {
            let (c, tor_util) = candidate(topo, load, ask, others, s, free);
            HostRank { keys: objectives.iter().map(|o| o.key(&c)).collect(), candidate: c, tor_util }
        })
        .collect();
    out.sort_by(|a, b| a.keys.cmp(&b.keys));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{placement_policy, Objective};

    struct Fixed(Vec<f64>, f64);
    impl TorLoad for Fixed {
        fn utilization(&self, t: usize) -> f64 {
            self.0[t]
        }
        fn capacity_bps(&self, _t: usize) -> f64 {
            self.1
        }
    }

    fn topo() -> Topology {
        use netheat_topology::{FabricSpec, HostSpec, Provisioning, RackKind, RackSpec, TopologySpec};
        let rack = RackSpec { kind: RackKind::Compute, host: HostSpec::with_ports(1, 10e9), tor_uplink_bps: 40e9 };
        let spec = TopologySpec {
            fabric: FabricSpec::TwoTier,
            hosts_per_rack: 2,
            racks: vec![rack; 3],
            tor_ports: None,
            provisioning: Provisioning::default(),
            events: vec![],
            border: None,
        };
        Topology::build(&spec).unwrap()
    }

    #[test]
    fn utp_ranks_by_projected_tor_below_the_scheduler_objectives() {
        let t = topo();
        // ToR 0 at 72%, ToR 1 at 12%, ToR 2 at 43%; 40 Gbps uplinks; a
        // task of 4 Gbps adds 10 points to each.
        let load = Fixed(vec![0.72, 0.12, 0.43], 40e9);
        let ask = TaskAsk { cores: 2, memory_bytes: 0.0, estimate_bps: 4e9 };
        let utp = placement_policy("utp", &[Objective::SpreadJob]).unwrap();
        // Hosts 0 (rack 0), 2 (rack 1), 4 (rack 2); all with 8 free cores.
        let sample = [(0, 8.0), (2, 8.0), (4, 8.0)];
        let r = rank_hosts(utp.as_ref(), &t, &load, &ask, &[], &sample);
        let order: Vec<u32> = r.iter().map(|x| x.candidate.server).collect();
        assert_eq!(order, vec![2, 4, 0]);
        // Projected: 0.22, 0.53, 0.82 -> keys floor(20 x) = 4, 10, 16.
        assert_eq!(r.iter().map(|x| x.keys[1]).collect::<Vec<_>>(), vec![4, 10, 16]);
        // A task of the job already in rack 1 outranks the ToR objective.
        let r = rank_hosts(utp.as_ref(), &t, &load, &ask, &[3], &sample);
        assert_eq!(r[0].candidate.server, 4);
        // The oblivious policy keeps sample order on ties.
        let obl = placement_policy("bandwidth-oblivious", &[Objective::SpreadJob]).unwrap();
        let r = rank_hosts(obl.as_ref(), &t, &load, &ask, &[], &sample);
        assert_eq!(r.iter().map(|x| x.candidate.server).collect::<Vec<_>>(), vec![0, 2, 4]);
    }
}
