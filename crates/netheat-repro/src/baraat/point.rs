//! The `baraat` experiment point: its parameters (one definition each) and
//! its run, summarising the task completion times.

use std::path::PathBuf;

use netheat_core::stats;
use netheat_flowsched::FlowschedError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::workload::{load_fb2010_task_sizes, to_flowsched};
use super::{run_point, AggregationSpec, Placement, PointSpec, SizeLaw, Structure};
use crate::points::{self, Column, PointEnv, PointError, PointOutput, TopologyOverrides};

/// The parameters of a `baraat` point. The defaults are the paper's setting
/// (§5.2): workers are the other 39 hosts of the aggregator's rack, one
/// aggregator per pod, selectivity 3%.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct BaraatParams {
    /// fair-share, sff, stf, fifo, fifo-lm or spc (SPC protocol)
    pub policy: String,
    /// task sizes: bing, data_analytics (Facebook 2010 trace, from the data directory), uniform, or pareto (ours)
    pub workload: String,
    /// one-stage, two-stage (partition-aggregate) or storage
    pub app: String,
    /// rack (the paper's, §5.2: workers are the other hosts of the aggregator's rack) or pool (ours: workers
    /// from a pool spread over the datacenter)
    pub placement: String,
    /// flows per task, or workers per mid-level aggregator (two-stage)
    pub fanout: usize,
    /// share of its inputs' bytes a two-stage mid-level forwards
    pub selectivity: f64,
    /// data directory for data_analytics (default: $NETHEAT_DATA, else ../shared/data)
    #[schemars(schema_with = "points::path_schema")]
    pub data_dir: Option<PathBuf>,
    /// mid-level aggregators of a two-stage task (0: fanout)
    pub mids: usize,
    /// skew of the flows within a task: coefficient of variation of log-normal factors of mean 1 (0: none;
    /// 0.389 is the Facebook 2010 shuffles' median)
    pub flow_cv: f64,
    /// load of the aggregators' host links
    pub load: f64,
    /// tasks per point
    pub tasks: usize,
    /// hosts receiving tasks, spread evenly (30: one per pod; 0: all)
    pub aggregators: usize,
    /// hosts sending task flows, pool placement only (0: all)
    pub workers: usize,
    /// mean compute time (exponential) before a worker answers, and before a two-stage mid-level aggregator
    /// forwards once it has its inputs
    #[serde(with = "points::duration")]
    #[schemars(schema_with = "points::duration::schema")]
    pub compute: f64,
    /// all tasks arrive at once (data-parallel batch)
    pub batch: bool,
    /// tasks of a batch (with `batch`)
    pub batch_tasks: usize,
    /// pods
    pub pods: usize,
    /// racks per pod
    pub racks_per_pod: usize,
    /// hosts per rack
    pub hosts_per_rack: usize,
    /// host link capacity
    #[serde(with = "points::bandwidth")]
    #[schemars(schema_with = "points::bandwidth::schema")]
    pub host_link: f64,
    /// ToR oversubscription
    pub oversubscription: f64,
    /// FIFO-LM heavy threshold: task-size percentile (0-1), nearest rank (one of the task sizes; a policy
    /// parameter, not a reported metric)
    pub heavy_percentile: f64,
    /// task-id counters (stride = their number)
    pub load_balancers: usize,
    /// SPC round length
    #[serde(with = "points::duration")]
    #[schemars(schema_with = "points::duration::schema")]
    pub rtt: f64,
}

impl Default for BaraatParams {
    fn default() -> Self {
        Self {
            policy: "fifo-lm".into(),
            workload: "bing".into(),
            app: "one-stage".into(),
            placement: "rack".into(),
            fanout: 39,
            selectivity: 0.03,
            data_dir: None,
            mids: 0,
            flow_cv: 0.0,
            load: 0.8,
            tasks: 10000,
            aggregators: 30,
            workers: 0,
            compute: 0.0,
            batch: false,
            batch_tasks: 400,
            pods: 30,
            racks_per_pod: 30,
            hosts_per_rack: 40,
            host_link: 1e9,
            oversubscription: 2.0,
            heavy_percentile: 0.8,
            load_balancers: 1,
            rtt: 100e-6,
        }
    }
}

fn to_point(e: FlowschedError) -> PointError {
    match e {
        e @ (FlowschedError::Engine(_) | FlowschedError::Unfinished { .. }) => PointError::Engine(e.into()),
        other => PointError::Input(other.into()),
    }
}

/// Runs one `baraat` point: the task table (`task_id`, `bytes`, `start_s`,
/// `finish_s`, `tct_s`) and the task-time summary values.
pub fn run(p: BaraatParams, _: &TopologyOverrides, seed: u64, env: &PointEnv) -> Result<PointOutput, PointError> {
    let spc = p.policy == "spc";
    let kind = SizeLaw::parse(&p.workload).map_err(|e| to_point(to_flowsched(e)))?;
    let app = Structure::parse(&p.app).map_err(|e| to_point(to_flowsched(e)))?;
    let placement = Placement::parse(&p.placement).map_err(|e| to_point(to_flowsched(e)))?;
    let task_sizes = if kind == SizeLaw::DataAnalytics {
        let dir = env.data_dir(p.data_dir.as_deref());
        Some(load_fb2010_task_sizes(&dir).map_err(|e| PointError::Data(e.into()))?)
    } else {
        None
    };
    let w = AggregationSpec {
        kind,
        app,
        fanout: p.fanout,
        mids: p.mids,
        load: p.load,
        tasks: if p.batch { p.batch_tasks } else { p.tasks },
        aggregators: p.aggregators,
        workers: p.workers,
        batch: p.batch,
        seed,
        flow_cv: p.flow_cv,
        compute_s: p.compute,
        mid_compute_s: None,
        uniform_bytes: (2e3, 50e3),
        placement,
        hosts_per_rack: p.hosts_per_rack,
        selectivity: p.selectivity,
        task_sizes,
        // The point runs the paper's §5.2 simulations: no fixed task sizes
        // or client queues (the §5.1 testbed is experiments/baraat-testbed.toml).
        task_bytes: 0.0,
        client_queue: false,
        client_uplink_bps: f64::INFINITY,
        mid_host: netheat_workloads::apps::aggregation::MidHost::Random,
    };
    let policy = if spc { "fifo-lm" } else { p.policy.as_str() };
    let mut s = PointSpec::new(p.pods, p.racks_per_pod, p.hosts_per_rack, w, policy);
    s.host_bps = p.host_link;
    s.oversubscription = p.oversubscription;
    s.heavy_percentile = p.heavy_percentile;
    s.lbs = p.load_balancers;
    s.spc = spc;
    s.rtt_s = p.rtt;
    let r = run_point(&s).map_err(to_point)?;

    let tct: Vec<f64> = r.tasks.iter().map(|t| t.tct_s()).collect();
    let done: Vec<f64> = tct.iter().copied().filter(|x| !x.is_nan()).collect();
    // Every byte of a one-stage or storage task crosses its receiver's host
    // link, so no scheduler finishes a task before bytes * 8 / capacity: the
    // 99th percentile of those times over this point's p99 is the lowest p99
    // ratio any policy can reach against this one (two-stage tasks spread
    // their bytes over mid-levels: no such bound here).
    let mut floor = f64::NAN;
    if p.app != "two-stage" && !done.is_empty() {
        let least: Vec<f64> =
            r.tasks.iter().filter(|t| !t.tct_s().is_nan()).map(|t| t.bytes * 8.0 / p.host_link).collect();
        floor = stats::quantile(&least, 0.99) / stats::quantile(&done, 0.99);
    }
    let q = stats::quantiles(&done, &[0.5, 0.95, 0.99]);
    let max = if done.is_empty() { f64::NAN } else { done.iter().copied().fold(f64::NEG_INFINITY, f64::max) };
    let values = vec![
        ("mean_tct_s".to_string(), stats::mean(&done)),
        ("median_tct_s".to_string(), q[0]),
        ("p95_tct_s".to_string(), q[1]),
        ("p99_tct_s".to_string(), q[2]),
        ("max_tct_s".to_string(), max),
        ("p99_floor".to_string(), floor),
        ("tasks".to_string(), tct.len() as f64),
        ("flows".to_string(), r.flows as f64),
    ];
    let table = vec![
        ("task_id".to_string(), Column::I64(r.tasks.iter().map(|t| t.id as i64).collect())),
        ("bytes".to_string(), Column::F64(r.tasks.iter().map(|t| t.bytes).collect())),
        ("start_s".to_string(), Column::F64(r.tasks.iter().map(|t| t.start_s).collect())),
        ("finish_s".to_string(), Column::F64(r.tasks.iter().map(|t| t.finish_s).collect())),
        ("tct_s".to_string(), Column::F64(tct)),
    ];
    Ok(PointOutput { values, tables: vec![("tasks".to_string(), table)], ..Default::default() })
}

crate::point_kind!("baraat", BaraatParams, run);
