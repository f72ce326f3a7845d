//! The error type of the storage crate.

use thiserror::Error;

/// Everything that can go wrong building or running a storage scenario.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum StorageError {
    /// A placement policy tag nobody registered.
    #[error("unknown placement policy {tag:?}; known: {known}")]
    UnknownPolicy {
        /// The tag asked for.
        tag: String,
        /// The registered tags.
        known: String,
    },
    /// A bad scenario parameter.
    #[error("invalid parameter `{key}`: {reason}")]
    Invalid {
        /// The parameter.
        key: String,
        /// Why it is rejected.
        reason: String,
    },
    /// The flow engine refused something.
    #[error(transparent)]
    Engine(#[from] netheat_engine::EngineError),
}

impl StorageError {
    /// An invalid-parameter error.
    pub fn invalid(key: &str, reason: impl Into<String>) -> Self {
        Self::Invalid { key: key.to_string(), reason: reason.into() }
    }
}
