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
    /// A recorded run reached a time past the link windows it may keep
    /// ([`crate::Windows::max_windows`]).
    #[error(
        "the run reached {t_s} s of simulated time, past the {max_windows} link windows of {window_s} s it may keep"
    )]
    WindowsExceeded {
        /// The time reached, seconds.
        t_s: f64,
        /// Window width, seconds.
        window_s: f64,
        /// Windows that may be kept.
        max_windows: u32,
    },
    /// The caller's progress callback asked the run to stop (Ctrl-C).
    #[error("stopped by the caller")]
    Interrupted,
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
