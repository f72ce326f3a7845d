//! The single error type of the engine, with messages meant for end users.
//!
//! Errors are reported when input is handed to the simulator (flows, capacity
//! changes, timers, controller actions) so that a run itself never fails.

use netheat_core::{HostId, LinkId};
use thiserror::Error;

/// Everything that can be wrong with input given to the simulator.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EngineError {
    /// An explicit route names a link the network does not have.
    #[error("flow {flow}: route uses link {link}, but the network has only {num_links} links")]
    LinkOutOfRange {
        /// Flow id.
        flow: u64,
        /// The offending link.
        link: LinkId,
        /// Number of directed links in the network.
        num_links: usize,
    },
    /// An explicit route visits the same directed link twice.
    #[error("flow {flow}: route visits link {link} twice")]
    RepeatedLink {
        /// Flow id.
        flow: u64,
        /// The repeated link.
        link: LinkId,
    },
    /// An explicit route is empty although source and destination differ.
    #[error("flow {flow}: explicit route is empty but source {src} differs from destination {dst}")]
    EmptyRoute {
        /// Flow id.
        flow: u64,
        /// Source host.
        src: HostId,
        /// Destination host.
        dst: HostId,
    },
    /// Size is negative, NaN or infinite.
    #[error("flow {flow}: size must be a finite number of bytes >= 0, got {bytes}")]
    InvalidBytes {
        /// Flow id.
        flow: u64,
        /// The offending size.
        bytes: f64,
    },
    /// Start time is NaN or infinite.
    #[error("flow {flow}: start time must be a finite number of seconds, got {start_s}")]
    InvalidStart {
        /// Flow id.
        flow: u64,
        /// The offending start time.
        start_s: f64,
    },
    /// Start time lies in the simulated past.
    #[error("flow {flow}: start time {start_s} s is before the current simulation time {now_s} s")]
    StartBeforeNow {
        /// Flow id.
        flow: u64,
        /// Requested start.
        start_s: f64,
        /// Current simulation time.
        now_s: f64,
    },
    /// Weight is not a finite positive number.
    #[error("flow {flow}: weight must be finite and > 0, got {weight}")]
    InvalidWeight {
        /// Flow id.
        flow: u64,
        /// The offending weight.
        weight: f64,
    },
    /// Rate cap is negative or NaN.
    #[error("flow {flow}: rate cap must be >= 0 bits/s, got {cap_bps}")]
    InvalidRateCap {
        /// Flow id.
        flow: u64,
        /// The offending cap.
        cap_bps: f64,
    },
    /// Two flows share an id.
    #[error("flow id {0} is used twice")]
    DuplicateFlowId(u64),
    /// No flow with this id was added.
    #[error("unknown flow id {0}")]
    UnknownFlow(u64),
    /// The flow has not started yet or has already finished.
    #[error("flow {0} is not running (it has not started yet or has already finished)")]
    FlowNotRunning(u64),
    /// ECMP or path-index routing was asked for without a [`netheat_core::Routing`].
    #[error("flow {flow}: ECMP/path-index routes need a Routing, but the simulation has none")]
    NoRouting {
        /// Flow id.
        flow: u64,
    },
    /// A host id is not below the routing's number of hosts.
    #[error("flow {flow}: host {host} does not exist (the topology has {num_hosts} hosts)")]
    HostOutOfRange {
        /// Flow id.
        flow: u64,
        /// The offending host.
        host: HostId,
        /// Number of hosts.
        num_hosts: usize,
    },
    /// A path index is not below the number of paths of the host pair.
    #[error("flow {flow}: path index {index} does not exist: {src} -> {dst} has {num_paths} paths")]
    PathIndexOutOfRange {
        /// Flow id.
        flow: u64,
        /// Requested index.
        index: usize,
        /// Source host.
        src: HostId,
        /// Destination host.
        dst: HostId,
        /// Number of paths of the pair.
        num_paths: usize,
    },
    /// The routing has no path between two distinct hosts.
    #[error("flow {flow}: the topology has no path from host {src} to host {dst}")]
    NoPath {
        /// Flow id.
        flow: u64,
        /// Source host.
        src: HostId,
        /// Destination host.
        dst: HostId,
    },
    /// A capacity is negative, NaN or infinite.
    #[error("link {link}: capacity must be a finite number of bits/s >= 0, got {cap_bps}")]
    InvalidCapacity {
        /// The link.
        link: LinkId,
        /// The offending capacity.
        cap_bps: f64,
    },
    /// A link id is not below the number of links.
    #[error("link {link} does not exist: the network has {num_links} links")]
    UnknownLink {
        /// The offending link.
        link: LinkId,
        /// Number of directed links.
        num_links: usize,
    },
    /// A time is NaN, infinite, or before the current simulation time.
    #[error("time {t_s} s is not valid: it must be finite and not before the current time {now_s} s")]
    InvalidTime {
        /// The offending time.
        t_s: f64,
        /// Current simulation time.
        now_s: f64,
    },
    /// A flow group id was registered twice.
    #[error("flow group {0} is already registered")]
    DuplicateGroup(u64),
    /// The routing has links the network lacks.
    #[error("the routing has {routing_links} links but the network has only {network_links}")]
    RoutingMismatch {
        /// Links according to the routing.
        routing_links: usize,
        /// Links according to the network.
        network_links: usize,
    },
}
