//! The Baraat point's tasks: the aggregation tasks of
//! `netheat_workloads::apps::aggregation` (the workload itself: size laws,
//! structures, placement, arrivals), each flow given a fixed path by a
//! seeded hash so that every simulator of a point (idealized runs, the
//! reference, SPC) runs the same paths.

use std::sync::Arc;

use netheat_core::{mix, Routing};
use netheat_flowsched::{FlowschedError, Task, TaskFlow};
pub use netheat_workloads::apps::aggregation::{AggregationSpec, Placement, SizeLaw, Structure, FB2010_REDUCER_CV};
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
    for t in tasks {
        let mut flows = Vec::with_capacity(t.flows.len());
        for f in t.flows {
            let np = routing.num_paths(f.src, f.dst);
            let k = (mix(spec.seed ^ mix(gid)) % np as u64) as usize;
            let mut path = Vec::new();
            routing.path(f.src, f.dst, k, &mut path);
            gid += 1;
            flows.push(TaskFlow { src: f.src, dst: f.dst, bytes: f.bytes, path, delay_s: f.delay_s, feeds: f.feeds });
        }
        out.push(Task { arrival_s: t.arrival_s, bytes: t.bytes, flows });
    }
    Ok(out)
}
