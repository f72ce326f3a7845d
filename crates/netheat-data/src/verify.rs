//! SHA-256 verification of dataset files, cached per process.
//!
//! A file is hashed the first time it is used; a success is remembered by
//! (path, size, modification time, expected hash) so repeated loads in one
//! process skip the hash. A changed file (size or mtime) is hashed again. A
//! mismatch is never cached and never parsed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::dir::DataDir;
use crate::error::DataError;
use crate::registry::Dataset;

/// The state of one dataset file in a data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Present with the registered checksum.
    Present,
    /// Not in the data directory.
    Missing,
    /// Present with another checksum (hex of the actual one).
    ChecksumMismatch {
        /// SHA-256 of the file found.
        actual: String,
    },
}

impl Status {
    /// `present`, `missing` or `checksum-mismatch`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Present => "present",
            Status::Missing => "missing",
            Status::ChecksumMismatch { .. } => "checksum-mismatch",
        }
    }
}

type Key = (PathBuf, u64, Option<SystemTime>, &'static str);

fn cache() -> &'static Mutex<HashMap<PathBuf, Key>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Key>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn key_of(path: &Path, ds: &Dataset) -> Option<Key> {
    let m = std::fs::metadata(path).ok()?;
    Some((path.to_path_buf(), m.len(), m.modified().ok(), ds.sha256))
}

fn is_cached(path: &Path, ds: &Dataset) -> bool {
    let Some(k) = key_of(path, ds) else { return false };
    cache().lock().map(|c| c.get(path) == Some(&k)).unwrap_or(false)
}

fn remember(path: &Path, ds: &Dataset) {
    if let (Some(k), Ok(mut c)) = (key_of(path, ds), cache().lock()) {
        c.insert(path.to_path_buf(), k);
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, DataError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DataError::Io { file: path.to_path_buf(), source: e }),
    }
}

/// Whether `ds` is present in `dir` with its registered checksum.
pub fn status(dir: &DataDir, ds: &Dataset) -> Result<Status, DataError> {
    let path = dir.join(ds.path);
    if is_cached(&path, ds) {
        return Ok(Status::Present);
    }
    let Some(bytes) = read(&path)? else { return Ok(Status::Missing) };
    let actual = sha256_hex(&bytes);
    if actual == ds.sha256 {
        remember(&path, ds);
        Ok(Status::Present)
    } else {
        Ok(Status::ChecksumMismatch { actual })
    }
}

/// The bytes of `ds`, after checking that the data directory and the file
/// exist and that the checksum matches.
pub fn read_verified(dir: &DataDir, ds: &Dataset) -> Result<Vec<u8>, DataError> {
    dir.require()?;
    let path = dir.join(ds.path);
    let cached = is_cached(&path, ds);
    let Some(bytes) = read(&path)? else {
        return Err(DataError::Missing {
            name: ds.name.to_string(),
            rel: ds.path.to_string(),
            dir: dir.path.clone(),
            source_desc: dir.source.clone(),
            upstream: ds.upstream.to_string(),
        });
    };
    if !cached {
        let actual = sha256_hex(&bytes);
        if actual != ds.sha256 {
            return Err(DataError::ChecksumMismatch {
                name: ds.name.to_string(),
                file: path,
                expected: ds.sha256.to_string(),
                actual,
            });
        }
        remember(&path, ds);
    }
    Ok(bytes)
}

/// How many files this process has verified and cached (for tests and diagnostics).
pub fn cached_count() -> usize {
    cache().lock().map(|c| c.len()).unwrap_or(0)
}

/// Whether `ds` in `dir` is in the verification cache (a later load will not re-hash it).
pub fn is_verified(dir: &DataDir, ds: &Dataset) -> bool {
    is_cached(&dir.join(ds.path), ds)
}
