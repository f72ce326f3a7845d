//! Alibaba-derived scheduler and cluster inputs (CSV).
//!
//! - CloudSimPy `jobs.csv` ([`JobTask`]): header
//!   `,submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk`.
//! - gpu-v2023 pod list ([`GpuPod`]) and node lists ([`GpuNode`]), with headers.
//! - v2018 `machine_meta.csv` ([`MachineMeta`]) and `machine_usage.csv`
//!   ([`MachineUsage`]), headerless, columns as in the v2018 schema.
//!
//! Errors name `file:line` and the column. Units are those of the files.

use crate::error::DataError;
use crate::text::{csv_fields, integer, number};

/// One task of a CloudSimPy job (all instances of a task share its request).
#[derive(Debug, Clone, PartialEq)]
pub struct JobTask {
    /// Job id.
    pub job_id: u64,
    /// Task id.
    pub task_id: u64,
    /// Submission time of the job, seconds.
    pub submit_time_s: f64,
    /// Duration of each instance, seconds.
    pub duration_s: f64,
    /// CPU request per instance (cores, normalised as in the file).
    pub cpu: f64,
    /// Memory request per instance (normalised to a machine's memory).
    pub memory: f64,
    /// Number of instances.
    pub instances: u32,
    /// Disk request per instance (as in the file).
    pub disk: f64,
}

/// One pod of the Alibaba GPU cluster trace (2023).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPod {
    /// Pod name.
    pub name: String,
    /// CPU request, milli-cores.
    pub cpu_milli: u64,
    /// Memory request, MiB.
    pub memory_mib: u64,
    /// Number of GPUs requested (0..8).
    pub num_gpu: u32,
    /// GPU share for GPU-sharing pods, milli-GPU.
    pub gpu_milli: u32,
    /// Allowed GPU models separated by `|`; empty when unconstrained.
    pub gpu_spec: String,
    /// QoS class (`LS`, `BE`, `Burstable`, ...).
    pub qos: String,
    /// Final phase (`Running`, `Succeeded`, `Failed`, `Pending`).
    pub pod_phase: String,
    /// Creation time, seconds.
    pub creation_time_s: u64,
    /// Deletion time, seconds, if recorded.
    pub deletion_time_s: Option<u64>,
    /// Scheduling time, seconds, if the pod was scheduled.
    pub scheduled_time_s: Option<u64>,
}

/// One node of the Alibaba GPU cluster trace (2023).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuNode {
    /// Node serial name.
    pub sn: String,
    /// CPU capacity, milli-cores.
    pub cpu_milli: u64,
    /// Memory capacity, MiB.
    pub memory_mib: u64,
    /// Number of GPUs.
    pub gpu: u32,
    /// GPU model; empty for CPU-only nodes.
    pub model: String,
}

/// One row of Alibaba v2018 `machine_meta.csv` (a machine's state from `time_s`).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineMeta {
    /// Machine id (`m_<n>`).
    pub machine_id: String,
    /// Time of this record, seconds.
    pub time_s: u64,
    /// First-level failure domain.
    pub failure_domain_1: u32,
    /// Second-level failure domain, if recorded.
    pub failure_domain_2: Option<String>,
    /// Number of CPUs.
    pub cpu_num: u32,
    /// Normalised memory size (0..100).
    pub mem_size: f64,
    /// Machine status (`USING`, ...).
    pub status: String,
}

/// One row of Alibaba v2018 `machine_usage.csv`; empty fields are `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineUsage {
    /// Machine id.
    pub machine_id: String,
    /// Time, seconds.
    pub time_s: f64,
    /// CPU utilisation, percent.
    pub cpu_util_percent: Option<f64>,
    /// Memory utilisation, percent.
    pub mem_util_percent: Option<f64>,
    /// Normalised memory bandwidth (0..100).
    pub mem_gps: Option<f64>,
    /// Cache misses per thousand instructions.
    pub mkpi: Option<f64>,
    /// Normalised incoming network traffic (0..100).
    pub net_in: Option<f64>,
    /// Normalised outgoing network traffic (0..100).
    pub net_out: Option<f64>,
    /// Disk I/O percent (abnormal values -1 or 101 as in the trace).
    pub disk_io_percent: Option<f64>,
}

fn rows(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r'))).filter(|(_, l)| !l.trim().is_empty())
}

fn header<'a>(text: &'a str, file: &str, expected: &str) -> Result<impl Iterator<Item = (usize, &'a str)>, DataError> {
    let mut it = rows(text);
    match it.next() {
        Some((_, h)) if h.trim() == expected => Ok(it),
        Some((n, h)) => Err(DataError::parse(file, n, format!("expected header `{expected}`, found `{h}`"))),
        None => Err(DataError::parse(file, 0, format!("empty file: expected header `{expected}`"))),
    }
}

fn non_negative(file: &str, n: usize, what: &str, tok: &str) -> Result<f64, DataError> {
    let v = number(file, n, what, tok)?;
    if v < 0.0 {
        return Err(DataError::parse(file, n, format!("column `{what}`: {v} is negative")));
    }
    Ok(v)
}

fn optional_number(file: &str, n: usize, what: &str, tok: &str) -> Result<Option<f64>, DataError> {
    if tok.is_empty() {
        Ok(None)
    } else {
        number(file, n, what, tok).map(Some)
    }
}

fn optional_int(file: &str, n: usize, what: &str, tok: &str) -> Result<Option<u64>, DataError> {
    if tok.is_empty() {
        Ok(None)
    } else {
        integer(file, n, what, tok).map(Some)
    }
}

/// Header of CloudSimPy `jobs.csv`.
pub const JOBS_HEADER: &str = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk";
/// Header of the gpu-v2023 pod lists.
pub const PODS_HEADER: &str =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";
/// Header of the gpu-v2023 node lists.
pub const NODES_HEADER: &str = "sn,cpu_milli,memory_mib,gpu,model";

/// Parses CloudSimPy `jobs.csv`.
pub fn parse_jobs(text: &str, file: &str) -> Result<Vec<JobTask>, DataError> {
    let mut out = Vec::new();
    for (n, row) in header(text, file, JOBS_HEADER)? {
        let f = csv_fields(file, n, row, 9)?;
        out.push(JobTask {
            submit_time_s: non_negative(file, n, "submit_time", f[1])?,
            duration_s: non_negative(file, n, "duration", f[2])?,
            cpu: non_negative(file, n, "cpu", f[3])?,
            memory: non_negative(file, n, "memory", f[4])?,
            job_id: integer(file, n, "job_id", f[5])?,
            task_id: integer(file, n, "task_id", f[6])?,
            instances: integer(file, n, "instances_num", f[7])?,
            disk: non_negative(file, n, "disk", f[8])?,
        });
    }
    Ok(out)
}

/// Parses a gpu-v2023 pod list.
pub fn parse_gpu_pods(text: &str, file: &str) -> Result<Vec<GpuPod>, DataError> {
    let mut out = Vec::new();
    for (n, row) in header(text, file, PODS_HEADER)? {
        let f = csv_fields(file, n, row, 11)?;
        if f[0].is_empty() {
            return Err(DataError::parse(file, n, "column `name` is empty"));
        }
        out.push(GpuPod {
            name: f[0].to_string(),
            cpu_milli: integer(file, n, "cpu_milli", f[1])?,
            memory_mib: integer(file, n, "memory_mib", f[2])?,
            num_gpu: integer(file, n, "num_gpu", f[3])?,
            gpu_milli: integer(file, n, "gpu_milli", f[4])?,
            gpu_spec: f[5].to_string(),
            qos: f[6].to_string(),
            pod_phase: f[7].to_string(),
            creation_time_s: integer(file, n, "creation_time", f[8])?,
            deletion_time_s: optional_int(file, n, "deletion_time", f[9])?,
            scheduled_time_s: optional_int(file, n, "scheduled_time", f[10])?,
        });
    }
    Ok(out)
}

/// Parses a gpu-v2023 node list.
pub fn parse_gpu_nodes(text: &str, file: &str) -> Result<Vec<GpuNode>, DataError> {
    let mut out = Vec::new();
    for (n, row) in header(text, file, NODES_HEADER)? {
        let f = csv_fields(file, n, row, 5)?;
        out.push(GpuNode {
            sn: f[0].to_string(),
            cpu_milli: integer(file, n, "cpu_milli", f[1])?,
            memory_mib: integer(file, n, "memory_mib", f[2])?,
            gpu: integer(file, n, "gpu", f[3])?,
            model: f[4].to_string(),
        });
    }
    Ok(out)
}

/// Parses Alibaba v2018 `machine_meta.csv` (no header).
pub fn parse_machine_meta(text: &str, file: &str) -> Result<Vec<MachineMeta>, DataError> {
    let mut out = Vec::new();
    for (n, row) in rows(text) {
        let f = csv_fields(file, n, row, 7)?;
        if f[0].is_empty() {
            return Err(DataError::parse(file, n, "column `machine_id` is empty"));
        }
        out.push(MachineMeta {
            machine_id: f[0].to_string(),
            time_s: integer(file, n, "time_stamp", f[1])?,
            failure_domain_1: integer(file, n, "failure_domain_1", f[2])?,
            failure_domain_2: (!f[3].is_empty()).then(|| f[3].to_string()),
            cpu_num: integer(file, n, "cpu_num", f[4])?,
            mem_size: non_negative(file, n, "mem_size", f[5])?,
            status: f[6].to_string(),
        });
    }
    Ok(out)
}

/// Parses Alibaba v2018 `machine_usage.csv` rows (no header).
pub fn parse_machine_usage(text: &str, file: &str) -> Result<Vec<MachineUsage>, DataError> {
    let mut out = Vec::new();
    for (n, row) in rows(text) {
        let f = csv_fields(file, n, row, 9)?;
        out.push(MachineUsage {
            machine_id: f[0].to_string(),
            time_s: number(file, n, "time_stamp", f[1])?,
            cpu_util_percent: optional_number(file, n, "cpu_util_percent", f[2])?,
            mem_util_percent: optional_number(file, n, "mem_util_percent", f[3])?,
            mem_gps: optional_number(file, n, "mem_gps", f[4])?,
            mkpi: optional_number(file, n, "mkpi", f[5])?,
            net_in: optional_number(file, n, "net_in", f[6])?,
            net_out: optional_number(file, n, "net_out", f[7])?,
            disk_io_percent: optional_number(file, n, "disk_io_percent", f[8])?,
        });
    }
    Ok(out)
}
