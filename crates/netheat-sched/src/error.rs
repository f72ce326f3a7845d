//! The one error type of the scheduler crate.

use thiserror::Error;

/// Why a scheduling run cannot proceed as asked.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SchedError {
    /// A placement policy tag that is not registered.
    #[error("unknown placement policy `{name}`; known: {known}")]
    UnknownPolicy {
        /// The tag given.
        name: String,
        /// The registered tags.
        known: String,
    },
    /// A parameter out of range.
    #[error("`{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The engine refused an operation.
    #[error(transparent)]
    Engine(#[from] netheat_engine::EngineError),
    /// An analytical query task could not be built during the run (its
    /// sizes or host sets are unusable).
    #[error("query task: {0}")]
    Query(netheat_workloads::GenError),
}

impl SchedError {
    /// Shorthand for [`SchedError::InvalidParameter`].
    pub fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        SchedError::InvalidParameter { name: name.into(), reason: reason.into() }
    }
}
