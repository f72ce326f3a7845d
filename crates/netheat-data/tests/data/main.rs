//! Integration tests of netheat-data: one file per behaviour.
//!
//! Tests on the real files use the data directory resolved as netheat does
//! (`NETHEAT_DATA`, else `../shared/data` next to the project root) and skip
//! with a printed note when it is absent. Malformed-input and checksum tests
//! use inline fixtures and temporary directories.

mod alibaba;
mod cdf;
mod checksum;
mod coflow;
mod dir;
mod registry;
mod spatial;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use netheat_data::DataDir;

/// The real data directory, or `None` (with a note) when it is absent.
pub fn real() -> Option<DataDir> {
    let d = DataDir::resolve(None);
    if d.exists() {
        Some(d)
    } else {
        eprintln!("note: data directory {} ({}) absent; skipping real-data test", d.path.display(), d.source);
        None
    }
}

/// A fresh empty temporary directory, removed by the returned guard.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Creates `netheat-data-test-<pid>-<n>` under the system temp dir.
    pub fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "netheat-data-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        Self(p)
    }

    /// Writes `rel` (creating parent directories) with `bytes`.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, bytes).expect("write");
        p
    }
}

impl Default for TempDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
