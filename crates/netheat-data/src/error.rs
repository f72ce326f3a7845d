//! [`DataError`]: every way reading a dataset can fail, each naming the file.

use std::path::PathBuf;

use crate::source::{DirSource, ENV_VAR};

/// A dataset that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The name is not in the registry.
    #[error("unknown dataset `{name}`; known datasets: {known}")]
    UnknownDataset {
        /// The name asked for.
        name: String,
        /// Comma-separated registered names.
        known: String,
    },
    /// The data directory itself does not exist.
    #[error(
        "data directory {} does not exist (chosen by {source_desc}){looked}; \
         point netheat at a copy of the data with --data-dir DIR or {env}=DIR",
        dir.display(),
        env = ENV_VAR
    )]
    MissingDir {
        /// The resolved directory.
        dir: PathBuf,
        /// How it was chosen.
        source_desc: DirSource,
        /// Other places looked at (already formatted, may be empty).
        looked: String,
    },
    /// The dataset file is not in the data directory.
    #[error(
        "dataset `{name}` is missing: no file {rel} in data directory {} (chosen by {source_desc}); \
         point netheat at a copy with --data-dir DIR or {env}=DIR (upstream: {upstream})",
        dir.display(),
        env = ENV_VAR
    )]
    Missing {
        /// Registry name.
        name: String,
        /// Path relative to the data directory.
        rel: String,
        /// The resolved data directory.
        dir: PathBuf,
        /// How the data directory was chosen.
        source_desc: DirSource,
        /// Where to fetch it (`repo@commit path`).
        upstream: String,
    },
    /// The file exists but its SHA-256 is not the registered one.
    #[error(
        "dataset `{name}`: checksum mismatch for {}: expected sha256 {expected}, found {actual}; \
         the file is not the registered upstream version (refusing to use it)",
        file.display()
    )]
    ChecksumMismatch {
        /// Registry name.
        name: String,
        /// Full path of the file.
        file: PathBuf,
        /// Registered SHA-256 (hex).
        expected: String,
        /// SHA-256 of the file (hex).
        actual: String,
    },
    /// The dataset exists but is not in the format the caller asked for.
    #[error("dataset `{name}` is {actual}, not {wanted}")]
    WrongFormat {
        /// Registry name.
        name: String,
        /// What the caller can parse.
        wanted: String,
        /// The registered format.
        actual: String,
    },
    /// Reading the file failed.
    #[error("cannot read {}: {source}", file.display())]
    Io {
        /// Full path of the file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The content is malformed; `line` is 1-based (0 = the file as a whole).
    #[error("{file}:{line}: {reason}")]
    Parse {
        /// File name as given to the parser.
        file: String,
        /// 1-based line number, 0 when the problem is not on one line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl DataError {
    /// A parse error at `file:line`.
    pub fn parse(file: &str, line: usize, reason: impl Into<String>) -> Self {
        Self::Parse { file: file.to_string(), line, reason: reason.into() }
    }
}
