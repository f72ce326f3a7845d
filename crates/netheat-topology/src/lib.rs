//! The datacenter model of netheat.
//!
//! A [`Topology`] is built from a [`TopologySpec`] (which the config crate
//! fills from TOML) and holds hosts with their hardware, racks typed
//! `compute`/`disk`/`mixed` with an uplink class, ToR switches, aggregation
//! blocks, a spine layer, and every physical link as two directed links with
//! their own capacity and a [`Layer`] tag. Three kinds are supported:
//!
//! * `two-tier`: hosts, ToRs and one non-blocking core; each ToR uplink is a
//!   single aggregated directed link each way;
//! * `three-tier`: a Clos/fat-tree with pods, aggregation switches and
//!   spines, individual uplinks, ECMP;
//! * `subways`: the Clos fabric with servers wired to several adjacent ToRs
//!   (Type 0, 1 and 2 wiring, see [`build`]).
//!
//! Routing ([`routing`]) enumerates shortest paths on demand, and capacity
//! changes and failures ([`events`]) are compiled to per-link records the
//! engine replays. [`size`] counts a datacenter before it is built and
//! checks it against the memory budget.
#![warn(missing_docs)]

pub mod build;
pub mod error;
pub mod events;
pub mod model;
pub mod routing;
pub mod size;
pub mod spec;
pub mod summary;

pub use error::TopologyError;
pub use model::*;
pub use size::{Count, Dimensions, TopologySize};
pub use spec::*;
pub use summary::Summary;
