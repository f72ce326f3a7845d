//! Exact, event-driven, flow-level (fluid) network simulator.
//!
//! Flows share directed links by weighted max-min fairness with strict
//! priority classes and per-flow rate caps ([`max_min_rates`]). Rates change
//! only at events (arrivals, completions, capacity changes, re-binding,
//! timers), so between events every flow progresses linearly and completion
//! times are exact, not time-stepped. See [`sim`] for the event loop and its
//! incremental recomputation (exact local repair around each event, checked
//! by bottleneck conditions), [`telemetry`] for per-window link utilisation.

pub mod error;
pub mod flow;
mod hops;
pub mod maxmin;
pub mod network;
mod order;
mod radix;
pub mod sim;
pub mod telemetry;

pub use error::EngineError;
pub use flow::{FlowRecord, FlowSpec, Route, StrandReason};
pub use maxmin::max_min_rates;
pub use network::Network;
pub use sim::{ecmp_draw, Controller, Ctx, DenseMode, NoController, SimConfig, SimResult, Simulation, Stats};
pub use telemetry::{LinkWindows, WindowSample};
