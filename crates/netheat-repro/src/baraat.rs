//! One Baraat experiment point (Dogar et al., SIGCOMM 2014, §5): build the
//! three-tier datacenter, generate the task workload ([`workload`]), run
//! one policy of `netheat-flowsched` (idealized on the flow engine, or
//! `fifo-lm` through the SPC protocol simulator) and return per-task
//! records.

pub mod point;
pub mod workload;

pub use workload::{AggregationSpec, Placement, SizeLaw, Structure};

use netheat_core::{LinkId, Routing};
use netheat_engine::Stats;
use netheat_flowsched::ideal::{run_ideal_stats, IdealOptions, TaskResult};
use netheat_flowsched::policy::{percentile, policy_by_tag};
use netheat_flowsched::spc::{run_spc, SpcOptions, VirtualCapacity};
use netheat_flowsched::FlowschedError;
use netheat_topology::{Topology, TopologySpec};
use workload::generate;

/// Everything that defines one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSpec {
    /// Pods.
    pub pods: usize,
    /// Racks per pod.
    pub racks_per_pod: usize,
    /// Hosts per rack.
    pub hosts_per_rack: usize,
    /// Host link capacity, bits/s.
    pub host_bps: f64,
    /// ToR oversubscription (host capacity of a rack / its uplink).
    pub oversubscription: f64,
    /// The workload.
    pub workload: AggregationSpec,
    /// Policy tag (see [`netheat_flowsched::POLICIES`]); with `spc`, must be `fifo-lm`.
    pub policy: String,
    /// Heavy threshold as a percentile (0-1) of the generated task sizes.
    pub heavy_percentile: f64,
    /// Load balancers issuing task ids.
    pub lbs: usize,
    /// Heavy-detection poll interval of the idealized run, seconds.
    pub poll_s: f64,
    /// Run the SPC protocol simulator instead of the engine.
    pub spc: bool,
    /// SPC round length, seconds.
    pub rtt_s: f64,
    /// SPC demand headroom, fraction of the host link.
    pub delta_frac: f64,
    /// SPC with virtual capacity (Baraat §4.3.2, RCP's gains).
    pub virtual_capacity: bool,
}

impl PointSpec {
    /// A point with the paper's datacenter shape scaled to the given size.
    pub fn new(
        pods: usize,
        racks_per_pod: usize,
        hosts_per_rack: usize,
        workload: AggregationSpec,
        policy: &str,
    ) -> Self {
        Self {
            pods,
            racks_per_pod,
            hosts_per_rack,
            host_bps: 1e9,
            oversubscription: 2.0,
            workload,
            policy: policy.to_string(),
            heavy_percentile: 0.8,
            lbs: 1,
            poll_s: 100e-6,
            spc: false,
            rtt_s: 100e-6,
            delta_frac: 0.02,
            virtual_capacity: false,
        }
    }
}

/// What a point returns.
#[derive(Debug, Clone)]
pub struct PointResult {
    /// Per task, in arrival order.
    pub tasks: Vec<TaskResult>,
    /// Heavy threshold used (bytes).
    pub threshold: f64,
    /// Number of flows simulated.
    pub flows: usize,
    /// The flow engine's counters for an idealized policy (`None` for the
    /// SPC protocol, which does not run on the engine).
    pub engine: Option<Stats>,
}

/// Builds the three-tier topology of a point.
pub fn build_topology(p: &PointSpec) -> Result<Topology, FlowschedError> {
    if p.pods == 0 || p.racks_per_pod == 0 || p.hosts_per_rack == 0 {
        return Err(FlowschedError::param("topology", "pods, racks-per-pod and hosts-per-rack must be >= 1"));
    }
    if !(p.host_bps > 0.0 && p.oversubscription >= 1.0) {
        return Err(FlowschedError::param("topology", "host link must be > 0 and oversubscription >= 1"));
    }
    let uplink = p.hosts_per_rack as f64 * p.host_bps / p.oversubscription;
    let spec = TopologySpec::three_tier(p.pods, p.racks_per_pod, p.hosts_per_rack, 4, 16, p.host_bps, uplink, None);
    Ok(Topology::build(&spec)?)
}

/// Runs one point.
pub fn run_point(p: &PointSpec) -> Result<PointResult, FlowschedError> {
    if !(0.0..=1.0).contains(&p.heavy_percentile) {
        return Err(FlowschedError::param("heavy-percentile", "must be in [0, 1]"));
    }
    let topo = build_topology(p)?;
    // Rack placement needs the rack size of this topology.
    let w = AggregationSpec { hosts_per_rack: p.hosts_per_rack, ..p.workload.clone() };
    let tasks = generate(&w, &topo)?;
    let sizes: Vec<f64> = tasks.iter().map(|t| t.bytes).collect();
    let threshold = percentile(&sizes, p.heavy_percentile);
    let caps: Vec<f64> = (0..topo.num_links()).map(|l| topo.link_capacity_bps(l as LinkId)).collect();
    let flows = tasks.iter().map(|t| t.flows.len()).sum();
    let (out, engine) = if p.spc {
        if p.policy != "fifo-lm" {
            return Err(FlowschedError::param("policy", "the SPC protocol implements `fifo-lm` only"));
        }
        let o = SpcOptions {
            rtt_s: p.rtt_s,
            delta_frac: p.delta_frac,
            threshold,
            lbs: p.lbs,
            virtual_capacity: p.virtual_capacity.then(VirtualCapacity::default),
            ..SpcOptions::default()
        };
        (run_spc(&caps, &tasks, &o)?.tasks, None)
    } else {
        let sched = policy_by_tag(&p.policy, threshold)?;
        let (r, stats) = run_ideal_stats(&caps, &tasks, sched, &IdealOptions { lbs: p.lbs, poll_s: p.poll_s })?;
        (r, Some(stats))
    };
    Ok(PointResult { tasks: out, threshold, flows, engine })
}
