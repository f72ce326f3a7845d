//! The one error type of the Subways crate.

use thiserror::Error;

/// Why a Subways policy or experiment cannot run as asked.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SubwaysError {
    /// A load-balancing tag that is not registered.
    #[error("unknown load-balancing policy `{name}`; known: {known}")]
    UnknownPolicy {
        /// The tag given.
        name: String,
        /// The registered tags, comma-separated.
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
    /// The engine refused something (a bug in a policy, reported, not hidden).
    #[error(transparent)]
    Engine(#[from] netheat_engine::EngineError),
}

impl SubwaysError {
    /// Shorthand for [`SubwaysError::InvalidParameter`].
    pub fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        SubwaysError::InvalidParameter { name: name.into(), reason: reason.into() }
    }
}
