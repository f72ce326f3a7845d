//! The registry table: well-formed, unique, and matching the real files.

use std::collections::HashSet;

use netheat_data::verify::sha256_hex;
use netheat_data::{find, status, DataError, Format, Status, DATASETS};

use crate::real;

#[test]
fn names_and_paths_are_unique_and_well_formed() {
    let mut names = HashSet::new();
    let mut paths = HashSet::new();
    for d in DATASETS {
        assert!(names.insert(d.name), "duplicate name {}", d.name);
        assert!(paths.insert(d.path), "duplicate path {}", d.path);
        assert!(d.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", d.name);
        assert!(!d.path.starts_with('/') && !d.path.contains(".."), "{}", d.path);
        assert_eq!(d.sha256.len(), 64, "{}", d.name);
        assert!(d.sha256.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{}", d.name);
        assert!(d.upstream.repo.contains('/') && d.upstream.commit.len() >= 12, "{}", d.name);
        assert!(d.upstream.url().starts_with("https://github.com/"), "{}", d.name);
        assert!(!d.description.is_empty() && d.size > 0, "{}", d.name);
    }
    for wanted in [
        "coflow-fb2010",
        "cdf-websearch-hpcc",
        "cdf-fbhadoop-hpcc",
        "cdf-alistorage-hpcc",
        "cdf-googlerpc-hpcc",
        "cdf-w1-homamodule",
        "cdf-w5-homamodule",
        "tm-cluster-a",
        "tm-cluster-b",
        "tm-cluster-c",
        "cloudsimpy-jobs",
        "alibaba-gpu-v2023-pods",
        "alibaba-v2018-machine-meta",
    ] {
        assert!(find(wanted).is_ok(), "{wanted} not registered");
    }
}

#[test]
fn unknown_name_lists_known_names() {
    let e = find("no-such-data").unwrap_err();
    assert!(matches!(e, DataError::UnknownDataset { .. }));
    let msg = e.to_string();
    assert!(msg.contains("no-such-data") && msg.contains("coflow-fb2010"), "{msg}");
}

#[test]
fn every_registered_file_is_present_with_its_checksum_and_size() {
    let Some(dir) = real() else { return };
    for d in DATASETS {
        let path = dir.join(d.path);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(bytes.len() as u64, d.size, "{}", d.name);
        assert_eq!(sha256_hex(&bytes), d.sha256, "{} (computed)", d.name);
        assert_eq!(status(&dir, d).unwrap(), Status::Present, "{}", d.name);
    }
}

#[test]
fn registry_agrees_with_sha256sums_of_the_data_dir() {
    let Some(dir) = real() else { return };
    let Ok(sums) = std::fs::read_to_string(dir.join("SHA256SUMS")) else {
        eprintln!("note: no SHA256SUMS in the data directory; skipping");
        return;
    };
    for d in DATASETS {
        let line = sums
            .lines()
            .find(|l| l.trim_end().ends_with(&format!("./{}", d.path)))
            .unwrap_or_else(|| panic!("{} not in SHA256SUMS", d.path));
        assert!(line.starts_with(d.sha256), "{}: SHA256SUMS has {line}", d.name);
    }
}

#[test]
fn every_registered_dataset_parses() {
    let Some(dir) = real() else { return };
    for d in DATASETS {
        let r = match d.format {
            Format::Coflow => netheat_data::load_coflows(&dir, d.name).map(|_| ()),
            Format::Cdf(_) => netheat_data::load_cdf(&dir, d.name).map(|_| ()),
            Format::TrafficMatrix => netheat_data::load_traffic_matrix(&dir, d.name).map(|_| ()),
            Format::CloudSimPyJobs => netheat_data::load_cloudsimpy_jobs(&dir, d.name).map(|_| ()),
            Format::GpuPods => netheat_data::load_gpu_pods(&dir, d.name).map(|_| ()),
            Format::GpuNodes => netheat_data::load_gpu_nodes(&dir, d.name).map(|_| ()),
            Format::MachineMeta => netheat_data::load_machine_meta(&dir, d.name).map(|_| ()),
            Format::MachineUsage => netheat_data::load_machine_usage(&dir, d.name).map(|_| ()),
        };
        r.unwrap_or_else(|e| panic!("{}: {e}", d.name));
    }
}

#[test]
fn loading_with_the_wrong_parser_is_refused() {
    let dir = netheat_data::DataDir::explicit("/nonexistent");
    let e = netheat_data::load_cdf(&dir, "coflow-fb2010").unwrap_err();
    assert!(matches!(e, DataError::WrongFormat { .. }), "{e}");
    assert!(e.to_string().contains("not a flow-size CDF"), "{e}");
}

/// A workload tells a registry name from a file of the user's by a `/` or a
/// `.` (`netheat_data::is_file_reference`): no registered name may have one.
#[test]
fn no_registered_name_reads_as_a_file_path() {
    for d in DATASETS {
        assert!(!netheat_data::is_file_reference(d.name), "{} would be read as a file path", d.name);
    }
    assert!(netheat_data::is_file_reference("./sizes.cdf") && netheat_data::is_file_reference("traces/fb"));
}
