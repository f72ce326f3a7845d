//! Errors raised while building a topology from a spec.

use thiserror::Error;

/// A spec that cannot be turned into a datacenter.
///
/// `key` is the config key (kebab-case path such as `topology.loop-size` or
/// `rack-group[1].racks`) so the config layer can point at the line.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{key}: {reason}")]
pub struct TopologyError {
    /// Config key path the problem is about.
    pub key: String,
    /// What is wrong, written for the user.
    pub reason: String,
}

impl TopologyError {
    /// Builds an error about `key`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { key: key.into(), reason: reason.into() }
    }
}
