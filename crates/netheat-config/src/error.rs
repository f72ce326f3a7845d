//! The one error type of the config crate.

use netheat_core::BudgetError;
use thiserror::Error;

/// A config that cannot be used, written for the person who wrote it.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// Path as given.
        file: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file was read but something in it is wrong.
    #[error("{file}:{line}:{column}: {}{reason}", if key.is_empty() { String::new() } else { format!("key `{key}`: ") })]
    Invalid {
        /// Path as given.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted key path (`topology.loop-size`, `rack-group[1].racks`), or
        /// empty for a syntax error.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The memory budget cannot be read (an invalid
    /// `NETHEAT_MEMORY_BUDGET`): not about the file.
    #[error(transparent)]
    Budget(#[from] BudgetError),
}
