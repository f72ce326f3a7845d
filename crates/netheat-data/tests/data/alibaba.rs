//! Alibaba-derived scheduler inputs: row counts and bad rows named by line.

use std::collections::HashSet;

use netheat_data::alibaba::{parse_gpu_pods, parse_jobs, parse_machine_meta, JOBS_HEADER, PODS_HEADER};
use netheat_data::{
    load_cloudsimpy_jobs, load_gpu_nodes, load_gpu_pods, load_machine_meta, load_machine_usage, DataError,
};

use crate::real;

#[test]
fn cloudsimpy_jobs_has_31756_tasks_in_5216_jobs() {
    let Some(dir) = real() else { return };
    let t = load_cloudsimpy_jobs(&dir, "cloudsimpy-jobs").unwrap();
    assert_eq!(t.len(), 31_756);
    assert_eq!(t.iter().map(|r| r.job_id).collect::<HashSet<_>>().len(), 5_216);
    assert_eq!((t[0].job_id, t[0].task_id, t[0].submit_time_s, t[0].instances), (1, 1, 539.0, 283));
    assert!(t.iter().all(|r| r.instances >= 1 && r.duration_s >= 0.0));
}

#[test]
fn gpu_pods_and_nodes_have_the_documented_counts() {
    let Some(dir) = real() else { return };
    let pods = load_gpu_pods(&dir, "alibaba-gpu-v2023-pods").unwrap();
    assert_eq!(pods.len(), 8_152);
    assert_eq!(pods.iter().filter(|p| p.scheduled_time_s.is_none()).count(), 897);
    assert!(pods.iter().all(|p| p.num_gpu <= 8));
    let p = &pods[0];
    assert_eq!(
        (p.name.as_str(), p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli),
        ("openb-pod-0000", 12000, 16384, 1, 1000)
    );
    assert_eq!(load_gpu_nodes(&dir, "alibaba-gpu-v2023-nodes").unwrap().len(), 1_523);
    let gpu = load_gpu_nodes(&dir, "alibaba-gpu-v2023-gpu-nodes").unwrap();
    assert!(!gpu.is_empty() && gpu.iter().all(|n| n.gpu > 0 && !n.model.is_empty()));
}

#[test]
fn machine_meta_has_4034_machines_with_failure_domains() {
    let Some(dir) = real() else { return };
    let m = load_machine_meta(&dir, "alibaba-v2018-machine-meta").unwrap();
    assert_eq!(m.len(), 17_592);
    assert_eq!(m.iter().map(|r| r.machine_id.as_str()).collect::<HashSet<_>>().len(), 4_034);
    assert_eq!(m.iter().filter(|r| r.failure_domain_2.is_none()).count(), 34);
    let u = load_machine_usage(&dir, "alibaba-v2018-machine-usage-sample").unwrap();
    assert_eq!(u.len(), 100_002);
    assert!(u.iter().all(|r| r.net_in.is_some() && r.net_out.is_some()));
}

#[test]
fn bad_rows_name_file_line_and_column() {
    let jobs = format!("{JOBS_HEADER}\n0,1,2.0,1.0,0.1,1,1,3,0\n1,5,x,1.0,0.1,1,2,3,0\n");
    let e = parse_jobs(&jobs, "jobs.csv").unwrap_err();
    assert!(matches!(e, DataError::Parse { line: 3, .. }));
    assert!(e.to_string().starts_with("jobs.csv:3: duration `x` is not a finite number"), "{e}");

    let e = parse_jobs("a,b\n", "jobs.csv").unwrap_err().to_string();
    assert!(e.starts_with("jobs.csv:1: expected header"), "{e}");

    let pods = format!("{PODS_HEADER}\np0,1000,10,1,1000,,LS,Running,0,5,\np1,1000,10,1,1000,,LS\n");
    let ok = parse_gpu_pods(&pods.lines().take(2).collect::<Vec<_>>().join("\n"), "p.csv").unwrap();
    assert_eq!((ok[0].deletion_time_s, ok[0].scheduled_time_s), (Some(5), None));
    let e = parse_gpu_pods(&pods, "pods.csv").unwrap_err().to_string();
    assert!(e.starts_with("pods.csv:3: expected 11 comma-separated fields, found 7"), "{e}");

    let e = parse_machine_meta("m_1,0,219,17,96,100,USING\nm_2,0,-3,17,96,100,USING\n", "meta.csv")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("meta.csv:2: failure_domain_1 `-3` is not a non-negative integer"), "{e}");
}
