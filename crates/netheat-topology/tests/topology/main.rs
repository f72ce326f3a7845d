//! Integration tests of the datacenter model, one file per behaviour.

mod common;
mod events;
mod properties;
mod subways;
mod summary;
mod three_tier;
mod two_tier;
