//! Loading registered datasets by name: find, verify the checksum, parse.

use crate::alibaba::{self, GpuNode, GpuPod, JobTask, MachineMeta, MachineUsage};
use std::path::Path;

use crate::cdf::{parse_cdf, CdfFormat, EmpiricalCdf};
use crate::coflow::{parse_coflows, CoflowTrace};
use crate::dir::DataDir;
use crate::error::DataError;
use crate::registry::{find, Dataset, Format};
use crate::spatial::{parse_traffic_matrix, TrafficMatrix};
use crate::verify::read_verified;

/// Finds `name`, checks that its format satisfies `ok` (`what` describes the
/// wanted format in the error), and returns it with its verified text and its
/// full path (used as the file name in parse errors).
fn text_of(
    dir: &DataDir,
    name: &str,
    what: &str,
    ok: impl Fn(&Format) -> bool,
) -> Result<(&'static Dataset, String, String), DataError> {
    let ds = find(name)?;
    if !ok(&ds.format) {
        return Err(DataError::WrongFormat {
            name: name.to_string(),
            wanted: what.to_string(),
            actual: format!("a {} dataset (format {})", ds.format.kind(), ds.format.as_str()),
        });
    }
    let bytes = read_verified(dir, ds)?;
    let file = dir.join(ds.path).display().to_string();
    let text = String::from_utf8(bytes).map_err(|e| DataError::parse(&file, 0, format!("not UTF-8 text: {e}")))?;
    Ok((ds, text, file))
}

/// The flow-size CDF `name` (any `cdf-*` dataset), sizes in bytes.
pub fn load_cdf(dir: &DataDir, name: &str) -> Result<EmpiricalCdf, DataError> {
    let (ds, text, file) = text_of(dir, name, "a flow-size CDF", |f| matches!(f, Format::Cdf(_)))?;
    let Format::Cdf(c) = ds.format else { unreachable!("checked above") };
    parse_cdf(&text, &file, c)
}

/// Whether a dataset reference names a file of the user's rather than a
/// registered dataset: registry names (`coflow-fb2010`, `cdf-websearch-hpcc`)
/// have neither a `/` nor a `.`, so a value with either is a path.
pub fn is_file_reference(name: &str) -> bool {
    name.contains('/') || name.contains('.') || name.contains(std::path::MAIN_SEPARATOR)
}

/// The text of a user's file (not in the registry, so no checksum).
fn user_text(path: &Path) -> Result<(String, String), DataError> {
    let bytes = std::fs::read(path).map_err(|e| DataError::Io { file: path.to_path_buf(), source: e })?;
    let file = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|e| DataError::parse(&file, 0, format!("not UTF-8 text: {e}")))?;
    Ok((text, file))
}

/// A flow-size CDF file of the user's: `<bytes> <cumulative probability>`
/// lines, the probability in [0, 1] and ending at 1, `#` comments (the
/// format of the registry's `cdf-fraction` datasets).
pub fn read_cdf_file(path: &Path) -> Result<EmpiricalCdf, DataError> {
    let (text, file) = user_text(path)?;
    parse_cdf(&text, &file, CdfFormat::Fraction)
}

/// A coflow trace file of the user's, in the text format of the
/// Coflow-Benchmark traces (the registry's `coflow-fb2010`).
pub fn read_coflows_file(path: &Path) -> Result<CoflowTrace, DataError> {
    let (text, file) = user_text(path)?;
    parse_coflows(&text, &file)
}

/// A job table file of the user's, with the columns of the registry's
/// `cloudsimpy-jobs` (`,submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk`).
pub fn read_jobs_file(path: &Path) -> Result<Vec<JobTask>, DataError> {
    let (text, file) = user_text(path)?;
    alibaba::parse_jobs(&text, &file)
}

/// The coflow trace `name`.
pub fn load_coflows(dir: &DataDir, name: &str) -> Result<CoflowTrace, DataError> {
    let (_, text, file) = text_of(dir, name, "a coflow trace", |f| *f == Format::Coflow)?;
    parse_coflows(&text, &file)
}

/// The rack-to-rack traffic matrix `name`.
pub fn load_traffic_matrix(dir: &DataDir, name: &str) -> Result<TrafficMatrix, DataError> {
    let (_, text, file) = text_of(dir, name, "a traffic matrix", |f| *f == Format::TrafficMatrix)?;
    parse_traffic_matrix(&text, &file)
}

/// The CloudSimPy task rows `name`.
pub fn load_cloudsimpy_jobs(dir: &DataDir, name: &str) -> Result<Vec<JobTask>, DataError> {
    let (_, text, file) = text_of(dir, name, "a CloudSimPy jobs table", |f| *f == Format::CloudSimPyJobs)?;
    alibaba::parse_jobs(&text, &file)
}

/// The gpu-v2023 pod rows `name`.
pub fn load_gpu_pods(dir: &DataDir, name: &str) -> Result<Vec<GpuPod>, DataError> {
    let (_, text, file) = text_of(dir, name, "a GPU pod list", |f| *f == Format::GpuPods)?;
    alibaba::parse_gpu_pods(&text, &file)
}

/// The gpu-v2023 node rows `name`.
pub fn load_gpu_nodes(dir: &DataDir, name: &str) -> Result<Vec<GpuNode>, DataError> {
    let (_, text, file) = text_of(dir, name, "a GPU node list", |f| *f == Format::GpuNodes)?;
    alibaba::parse_gpu_nodes(&text, &file)
}

/// The v2018 machine meta rows `name`.
pub fn load_machine_meta(dir: &DataDir, name: &str) -> Result<Vec<MachineMeta>, DataError> {
    let (_, text, file) = text_of(dir, name, "a machine meta table", |f| *f == Format::MachineMeta)?;
    alibaba::parse_machine_meta(&text, &file)
}

/// The v2018 machine usage rows `name`.
pub fn load_machine_usage(dir: &DataDir, name: &str) -> Result<Vec<MachineUsage>, DataError> {
    let (_, text, file) = text_of(dir, name, "a machine usage table", |f| *f == Format::MachineUsage)?;
    alibaba::parse_machine_usage(&text, &file)
}
