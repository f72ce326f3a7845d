//! TOML configuration of netheat.
//!
//! Configs use kebab-case keys and unit strings (`"10Gbps"`, `"256MiB"`,
//! `"5min"`). They are deserialised into typed structs ([`schema`]) that
//! reject unknown keys, then checked and turned into a
//! [`netheat_topology::TopologySpec`] ([`topology`]). Every mistake becomes
//! one [`ConfigError`] that names the file, the line and column, the key and
//! the reason, located with [`locate`]. Workload files ([`workload`]) are
//! read the same way and generated on a built topology.
#![warn(missing_docs)]

mod cx;
pub mod error;
pub mod locate;
pub mod schema;
pub mod topology;
pub mod units;
pub mod workload;

pub use cx::{closest_name, toml_error};
pub use error::ConfigError;

pub use topology::{
    load_topology, load_topology_overridden, load_topology_overridden_with_events, load_topology_str, OVERRIDE_FILE,
};
pub use workload::{load_workload, load_workload_str, Workload};
