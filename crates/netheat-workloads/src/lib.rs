//! Traffic for netheat experiments.
//!
//! Today: reading user flow traces ([`flows_csv`]). Generators and loaders
//! for public datasets build on the same [`FlowRow`] record.
#![warn(missing_docs)]

pub mod flows_csv;

pub use flows_csv::{parse_flows_csv, read_flows_csv, FlowRow, WorkloadError};
