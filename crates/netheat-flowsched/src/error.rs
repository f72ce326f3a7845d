//! Errors of the flow-scheduling crate.

use thiserror::Error;

/// Why a scheduling run cannot be set up or completed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FlowschedError {
    /// An unknown policy tag.
    #[error("unknown flow-scheduling policy `{tag}`; known: {known}")]
    UnknownPolicy {
        /// The tag asked for.
        tag: String,
        /// Comma-separated known tags.
        known: String,
    },
    /// A parameter is out of its valid range.
    #[error("`{name}`: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The engine rejected an operation.
    #[error(transparent)]
    Engine(#[from] netheat_engine::EngineError),
    /// A task of the reference (fluid max-min) model never finished: one of
    /// its flows crosses a link with no capacity.
    #[error("task {task} never finished (a flow has no capacity)")]
    Unfinished {
        /// Index of the task in the input order.
        task: usize,
    },
    /// The topology could not be built.
    #[error("topology: {0}")]
    Topology(#[from] netheat_topology::TopologyError),
}

impl FlowschedError {
    /// Shorthand for [`FlowschedError::InvalidParameter`].
    pub fn param(name: impl Into<String>, reason: impl Into<String>) -> Self {
        FlowschedError::InvalidParameter { name: name.into(), reason: reason.into() }
    }
}
