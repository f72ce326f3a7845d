//! Paper reproductions: the experiment points of `netheat reproduce`.
//!
//! The policy crates hold the policies (`netheat-flowsched`'s schedulers,
//! `netheat-storage`'s replica placements, `netheat-subways`' load
//! balancers, `netheat-packet`'s
//! transports); this crate holds the experiments of the papers they
//! reproduce, one module per paper: a datacenter, a workload and a policy
//! in, records out.
//!
//! * [`baraat`]: Baraat's task workloads and one experiment point
//!   (Dogar et al., SIGCOMM 2014);
//! * [`hdfs`]: the prediction of the emulated HDFS bench (`make
//!   bench-hdfs`'s cluster, background and writers);
//! * [`cloudburst`]: the CloudBurst incast network and point on the packet
//!   engine, kept for `make bench`'s `packet_bench` and `make
//!   validate-ns3`'s leaf-spine cross-check (the experiment itself is a
//!   scenario: `experiments/scenarios/cloudburst-incast.toml`).
//!
//! The storage point ([`hdfs`]) runs the baseline (`uniform`) and the
//! policy under test on the same generated workload (same seed: identical
//! files, writers and background flows), so per-block comparisons are
//! paired. Percentiles are
//! [`netheat_core::stats::quantile`], netheat's one definition.
//!
//! Errors are those of the policy crate each experiment runs
//! ([`netheat_flowsched::FlowschedError`],
//! [`netheat_storage::StorageError`], [`netheat_packet::PacketError`],
//! [`netheat_subways::SubwaysError`]).
//!
//! [`points`] is the registry of the experiment point kinds (`baraat`):
//! each declares its parameters once, as a serde struct with a JSON
//! Schema, beside its run. (Sinbad's simulation, the hotspot paper's UTP
//! cluster and its CCP chunk store are scenarios:
//! `experiments/scenarios/sinbad-fb2010.toml`,
//! `experiments/scenarios/utp-cluster.toml`,
//! `experiments/scenarios/ccp-chunks.toml`.)
#![warn(missing_docs)]

pub mod baraat;
pub mod cloudburst;
pub mod hdfs;
pub mod points;

/// `Ok` when `v` is positive and finite, else an invalid-parameter error
/// naming `key`.
fn positive(key: &str, v: f64) -> Result<(), netheat_storage::StorageError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(netheat_storage::StorageError::invalid(key, format!("must be positive, got {v}")))
    }
}
