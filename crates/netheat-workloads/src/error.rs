//! Errors of the generators and application structures.

use netheat_core::BudgetError;
use thiserror::Error;

/// A generator or application structure that cannot be built as asked.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GenError {
    /// A parameter is out of its valid range.
    #[error("`{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name as in the docs (`load`, `points[3]`, ...).
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The topology does not have the hosts (or racks, or devices) needed.
    #[error("not enough hosts: {0}")]
    NotEnoughHosts(String),
    /// What is being generated would not fit the memory budget (or the
    /// budget cannot be read).
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

impl GenError {
    /// Shorthand for [`GenError::InvalidParameter`].
    pub fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        GenError::InvalidParameter { name: name.into(), reason: reason.into() }
    }
}
