//! Data directory resolution: flag > NETHEAT_DATA > ../shared/data; clear errors.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use netheat_data::dir::project_root_from;
use netheat_data::{load_cdf, DataDir, DataError, DirSource};

use crate::TempDir;

#[test]
fn flag_beats_env_beats_default() {
    let d = DataDir::resolve_with(Some(Path::new("/flag/dir")), Some(OsString::from("/env/dir")), &[]);
    assert_eq!((d.path.as_path(), &d.source), (Path::new("/flag/dir"), &DirSource::Flag));
    let d = DataDir::resolve_with(None, Some(OsString::from("/env/dir")), &[]);
    assert_eq!((d.path.as_path(), &d.source), (Path::new("/env/dir"), &DirSource::Env));
    let d = DataDir::resolve_with(None, Some(OsString::new()), &[]);
    assert!(matches!(d.source, DirSource::Default { .. }), "empty NETHEAT_DATA counts as unset: {d:?}");
}

#[test]
fn default_is_shared_data_next_to_the_project_root() {
    let d = DataDir::resolve_with(None, None, &[]);
    let DirSource::Default { root } = &d.source else { panic!("{d:?}") };
    assert!(root.join("crates/netheat-data/Cargo.toml").is_file(), "{root:?}");
    assert_eq!(d.path, root.parent().unwrap().join("shared/data"));
    assert!(!d.path.to_string_lossy().contains(".."), "normalised: {:?}", d.path);
}

#[test]
fn project_root_is_found_from_a_subdirectory() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = project_root_from(&here.join("src")).unwrap();
    assert!(root.join("crates/netheat-data").is_dir());
    assert_eq!(project_root_from(Path::new("/")), None);
}

#[test]
fn extra_roots_are_used_when_the_cwd_root_has_no_data() {
    let t = TempDir::new();
    t.write("proj/python/netheat/__init__.py", b"");
    t.write("shared/data/README.md", b"x");
    let root: PathBuf = t.0.join("proj");
    let d = DataDir::resolve_with(None, None, std::slice::from_ref(&root));
    // The cwd's root wins when its data exists; otherwise the extra root does.
    if !DataDir::resolve_with(None, None, &[]).exists() {
        assert_eq!(d.path, t.0.join("shared/data"));
        assert_eq!(d.source, DirSource::Default { root });
    } else {
        assert!(d.also_looked.contains(&t.0.join("shared/data")) || d.path == t.0.join("shared/data"));
    }
}

#[test]
fn missing_directory_error_says_where_and_how_to_fix() {
    let d = DataDir::resolve_with(None, Some(OsString::from("/no/such/netheat-data")), &[]);
    let e = load_cdf(&d, "cdf-websearch-hpcc").unwrap_err();
    assert!(matches!(e, DataError::MissingDir { .. }), "{e}");
    let msg = e.to_string();
    for want in ["/no/such/netheat-data", "NETHEAT_DATA environment variable", "--data-dir", "NETHEAT_DATA=DIR"] {
        assert!(msg.contains(want), "missing {want:?} in {msg}");
    }
}

#[test]
fn missing_file_error_names_file_dir_source_and_upstream() {
    let t = TempDir::new();
    let d = DataDir::explicit(&t.0);
    let e = load_cdf(&d, "cdf-websearch-hpcc").unwrap_err();
    assert!(matches!(e, DataError::Missing { .. }), "{e}");
    let msg = e.to_string();
    for want in [
        "cdf-websearch-hpcc",
        "hpcc_traffic_gen/WebSearch_distribution.txt",
        &t.0.display().to_string(),
        "--data-dir flag",
        "NETHEAT_DATA=DIR",
        "alibaba-edu/High-Precision-Congestion-Control@9f4be2a9ead8",
    ] {
        assert!(msg.contains(want), "missing {want:?} in {msg}");
    }
}
