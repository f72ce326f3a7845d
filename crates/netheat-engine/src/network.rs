//! The simulated network: directed links and their nominal capacities.
//!
//! Topology structure (which links form which path) is not needed here: flows
//! carry explicit link lists, or obtain them from a [`Routing`].

use crate::EngineError;
use netheat_core::{LinkId, Routing};

/// A set of directed links with nominal capacities in bits per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    cap: Vec<f64>,
}

impl Network {
    /// Builds a network from per-link capacities (bits/s), indexed by [`LinkId`].
    ///
    /// # Panics
    /// If a capacity is negative, NaN or infinite; use [`Network::try_new`]
    /// to get an error instead.
    pub fn new(capacity_bps: Vec<f64>) -> Self {
        match Self::try_new(capacity_bps) {
            Ok(n) => n,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`Network::new`] but reports an invalid capacity as an error.
    pub fn try_new(capacity_bps: Vec<f64>) -> Result<Self, EngineError> {
        for (l, &c) in capacity_bps.iter().enumerate() {
            if !(c.is_finite() && c >= 0.0) {
                return Err(EngineError::InvalidCapacity { link: l as LinkId, cap_bps: c });
            }
        }
        Ok(Self { cap: capacity_bps })
    }

    /// Takes every link and its capacity from a topology's routing view.
    pub fn from_routing(r: &dyn Routing) -> Self {
        Self::new((0..r.num_links()).map(|l| r.link_capacity_bps(l as LinkId)).collect())
    }

    /// Number of directed links.
    pub fn num_links(&self) -> usize {
        self.cap.len()
    }

    /// Nominal capacity of a link in bits/s.
    pub fn capacity_bps(&self, link: LinkId) -> f64 {
        self.cap[link as usize]
    }

    /// All nominal capacities, indexed by link.
    pub fn capacities(&self) -> &[f64] {
        &self.cap
    }
}
