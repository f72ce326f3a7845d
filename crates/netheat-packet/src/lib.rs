//! Packet-level discrete-event simulator of netheat.
//!
//! Where the flow-level engine moves fluid bytes, this crate moves packets:
//! per-port output queues with drop-tail, ECN marking and strict priorities,
//! shared-buffer switches with dynamic thresholds, link serialization plus
//! propagation and switching delay per hop, and transports (NewReno, DCTCP,
//! PIAS, UDP, multipath baselines, CloudBurst) behind one trait selected by
//! tag.
//! Events are ordered by (time in picoseconds, sequence), so runs are
//! deterministic. Scenarios run on it (`netheat-scenario`'s `packet.rs`:
//! CloudBurst's incast experiment and Subways' memcache experiment among
//! them).
#![warn(missing_docs)]

pub mod engine;
pub mod transport;

pub use engine::{
    FlowRecord, FlowSpec, LinkWindow, NetConfig, NewFlows, PathPolicy, PortStats, RunningFlow, SimResult, Simulator,
};
pub use transport::{transport_tags, TransportConfig};

/// Picoseconds per second: the engine's clock and the transports' timers
/// count integer picoseconds.
pub const PS: f64 = 1e12;

/// Errors of the packet engine.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// A configuration value is invalid.
    #[error("invalid packet-engine config: {0}")]
    Config(String),
    /// An unknown transport tag.
    #[error("unknown transport '{tag}'; known: {known}")]
    UnknownTransport {
        /// The tag given.
        tag: String,
        /// Comma-separated known tags.
        known: String,
    },
    /// A flow references a host outside the topology or has no path.
    #[error("flow {flow}: {reason}")]
    BadFlow {
        /// Flow id.
        flow: u64,
        /// Why.
        reason: String,
    },
}
