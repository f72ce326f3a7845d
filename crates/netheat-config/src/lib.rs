//! TOML configuration of netheat.
//!
//! Configs use kebab-case keys and unit strings (`"10Gbps"`, `"256MiB"`,
//! `"5min"`). They are deserialised into typed structs ([`schema`]) that
//! reject unknown keys, then checked and turned into a
//! [`netheat_topology::TopologySpec`] ([`topology`]). Every mistake becomes
//! one [`ConfigError`] that names the file, the line and column, the key and
//! the reason, located with [`locate`].
#![warn(missing_docs)]

pub mod error;
pub mod locate;
pub mod schema;
pub mod topology;
pub mod units;

pub use error::ConfigError;

pub use topology::{load_topology, load_topology_str};
