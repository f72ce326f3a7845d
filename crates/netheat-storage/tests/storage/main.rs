//! Integration tests of the storage crate, one file per behaviour: the
//! storage view of a datacenter, the policies on it, and the Sinbad and CCP
//! experiment points.

mod common;
mod experiment;
mod policies;
mod view;
