//! The Baraat point's tasks: the aggregation tasks of
//! `netheat_workloads::apps::aggregation` (the workload itself: size laws,
//! structures, placement, arrivals), each flow given a fixed path by a
//! seeded hash so that every simulator of a point (idealized runs, the
//! reference, SPC) runs the same paths.

use std::sync::Arc;

use netheat_core::{mix, Routing};
use netheat_flowsched::{FlowschedError, Task, TaskFlow};
pub use netheat_workloads::apps::aggregation::{AggregationSpec, Placement, SizeLaw, Structure, FB2010_REDUCER_CV};
use netheat_workloads::dag::{Step, TaskDag};
use netheat_workloads::GenError;

/// Registry name of the Facebook 2010 coflow trace (`netheat-data`), the
/// source of the data-analytics task-size law.
pub const FB2010_DATASET: &str = "coflow-fb2010";

/// The data-analytics task sizes
/// (`netheat_data::CoflowTrace::shuffle_sizes_bytes`) from a data directory.
pub fn load_fb2010_task_sizes(dir: &netheat_data::DataDir) -> Result<Arc<Vec<f64>>, FlowschedError> {
    let trace = netheat_data::load_coflows(dir, FB2010_DATASET)
        .map_err(|e| FlowschedError::param("workload", format!("data_analytics needs the Facebook 2010 trace: {e}")))?;
    Ok(Arc::new(trace.shuffle_sizes_bytes()))
}

pub(crate) fn to_flowsched(e: GenError) -> FlowschedError {
    match e {
        GenError::InvalidParameter { name, reason } => FlowschedError::param(name, reason),
        other => FlowschedError::param("workload", other.to_string()),
    }
}

/// Generates the tasks (sorted by arrival) on a routing: the aggregation
/// tasks on its hosts (the load's base is host 0's link), and a path per
/// flow, the `mix(seed ^ mix(g))`-th of its shortest paths for the `g`-th
/// flow in task order.
pub fn generate(spec: &AggregationSpec, routing: &dyn Routing) -> Result<Vec<Task>, FlowschedError> {
    let n_hosts = routing.num_hosts();
    // Host link capacity: the first link of any path from host 0.
    let mut p = Vec::new();
    if n_hosts >= 2 {
        routing.path(0, 1, 0, &mut p);
    }
    let c = p.first().map_or(f64::NAN, |&l| routing.link_capacity_bps(l));
    let tasks = netheat_workloads::apps::aggregation::generate(spec, n_hosts, c).map_err(to_flowsched)?;
    let mut gid = 0u64;
    let mut out = Vec::with_capacity(tasks.len());
    for (arrival_s, dag) in tasks {
        let mut t = task_of(arrival_s, &dag);
        for f in &mut t.flows {
            let np = routing.num_paths(f.src, f.dst);
            let k = (mix(spec.seed ^ mix(gid)) % np as u64) as usize;
            routing.path(f.src, f.dst, k, &mut f.path);
            gid += 1;
        }
        out.push(t);
    }
    Ok(out)
}

/// A DAG of flows, each after the flows feeding it or after one delay step
/// that follows them (what `aggregation` tasks are), as the runner's task:
/// flows in step order, a delay as the flow's `delay_s`, and each feeding
/// flow's `feeds` pointing at the flow it feeds. Paths are left empty.
fn task_of(arrival_s: f64, dag: &TaskDag) -> Task {
    let mut index: Vec<Option<u32>> = vec![None; dag.steps.len()];
    let mut flows: Vec<TaskFlow> = Vec::with_capacity(dag.num_flows());
    for (k, step) in dag.steps.iter().enumerate() {
        let Step::Flow { src, dst, bytes, .. } = *step else { continue };
        let (delay_s, feeders) = match dag.deps(k) {
            &[d] => match dag.steps[d] {
                Step::Delay { seconds } => (seconds, dag.deps(d)),
                // (Aggregation tasks have no device steps.)
                Step::Flow { .. } | Step::Io { .. } => (0.0, dag.deps(k)),
            },
            deps => (0.0, deps),
        };
        let me = flows.len() as u32;
        for &j in feeders {
            if let Some(i) = index[j] {
                flows[i as usize].feeds = Some(me);
            }
        }
        index[k] = Some(me);
        flows.push(TaskFlow { src, dst, bytes, path: Vec::new(), delay_s, feeds: None });
    }
    Task { arrival_s, bytes: dag.bytes(), flows }
}
