//! Integration tests of the storage crate, one file per behaviour: the
//! storage view of a datacenter and the policies on it (the Sinbad and CCP
//! experiment points are tested in netheat-repro).

mod common;
mod policies;
mod view;
