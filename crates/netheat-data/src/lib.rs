//! Public datasets netheat reads from a data directory: registry, checksums, parsers.
//!
//! netheat never bundles third-party data. It reads it from a *data
//! directory* ([`DataDir`]) chosen by `--data-dir`, else `NETHEAT_DATA`, else
//! `../shared/data` next to the project root. The static [`registry`] records
//! for each file netheat uses its relative path, its upstream repository,
//! commit and path, its SHA-256, its format and a description, so a user
//! elsewhere can fetch a copy and point netheat at it.
//!
//! Loaders ([`load_cdf`], [`load_coflows`], [`load_traffic_matrix`], ...)
//! verify the checksum before parsing (once per file per process, see
//! [`verify`]) and return plain structs. The parsers themselves take text and
//! a file name, so malformed input is reported as `file:line: reason`.
#![warn(missing_docs)]

pub mod alibaba;
pub mod cdf;
pub mod coflow;
pub mod dir;
pub mod error;
pub mod load;
pub mod registry;
pub mod source;
pub mod spatial;
mod text;
pub mod verify;

pub use alibaba::{GpuNode, GpuPod, JobTask, MachineMeta, MachineUsage};
pub use cdf::{CdfFormat, EmpiricalCdf};
pub use coflow::{Coflow, CoflowTrace};
pub use dir::{DataDir, DirSource, ENV_VAR};
pub use error::DataError;
pub use load::{
    is_file_reference, load_cdf, load_cloudsimpy_jobs, load_coflows, load_gpu_nodes, load_gpu_pods, load_machine_meta,
    load_machine_usage, load_traffic_matrix, read_cdf_file, read_coflows_file, read_jobs_file,
};
pub use registry::{find, Dataset, Format, Upstream, DATASETS};
pub use spatial::{Pod, TrafficMatrix};
pub use verify::{status, Status};
