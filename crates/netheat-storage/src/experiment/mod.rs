//! Storage experiments on the flow engine: the Sinbad point ([`sinbad`]:
//! block writes against a background precalculated from the shuffles of the
//! Facebook coflow trace), the CCP point ([`ccp`]: chunk reads and writes on racks
//! of mixed uplink classes) and the prediction of the emulated HDFS bench
//! ([`hdfs`]: `make bench-hdfs`'s cluster, background and writers).
//!
//! Every point runs the baseline (`uniform`) and the policy under test on
//! the same generated workload (same seed: identical files, writers and
//! background flows), so per-block comparisons are paired. Percentiles are
//! [`netheat_core::stats::quantile`], netheat's one definition.

mod ccp;
mod hdfs;
mod sinbad;

pub use ccp::{ccp_point, CcpSpec};
pub use hdfs::{hdfs_cluster, run_hdfs_bench, HdfsBenchSpec, HdfsBlock, HdfsWriter, PipelineModel};
pub use sinbad::{
    run_sinbad_policy, sinbad_background, sinbad_cluster, sinbad_point, validate_sinbad, BlockRec, PointOut, RunMode,
    RunOut, SinbadBackground, SinbadSpec, BACKGROUND_STEP_S, CV_WINDOW_S,
};

/// `Ok` when `v` is positive and finite, else an invalid-parameter error
/// naming `key`.
fn positive(key: &str, v: f64) -> Result<(), crate::StorageError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(crate::StorageError::invalid(key, format!("must be positive, got {v}")))
    }
}
