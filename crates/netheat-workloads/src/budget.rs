//! The hard cap of every generator: stop with an error once the flows (or
//! tasks) generated so far would hold more than the memory budget
//! ([`netheat_core::budget`]), in case an estimate made before generating
//! was off.

use netheat_core::budget::{self, format_count, BudgetError};

use crate::GenError;

/// How many flows fit in the memory budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowCap {
    /// Flows that fit.
    pub limit: usize,
    /// The budget in bytes.
    pub budget: u64,
}

impl FlowCap {
    /// The cap under the current budget ([`budget::memory_budget`]).
    pub fn current() -> Result<Self, BudgetError> {
        Ok(Self::of(budget::memory_budget()?))
    }

    /// The cap under a budget of `budget` bytes (at least one flow).
    pub fn of(budget: u64) -> Self {
        let limit = usize::try_from(budget::items_within(budget, budget::flow_bytes())).unwrap_or(usize::MAX);
        Self { limit, budget }
    }

    /// The error for `n` flows of `what`, over the cap; `hint` says what to do.
    pub fn exceeded(&self, n: usize, what: &str, hint: &str) -> BudgetError {
        BudgetError::Over {
            what: what.to_string(),
            estimate_bytes: n as f64 * budget::flow_bytes() as f64,
            budget_bytes: self.budget,
            hint: hint.to_string(),
        }
    }

    /// `Ok` while `n` flows of `what` still fit; the error says that
    /// generating stopped and why.
    pub fn check(&self, n: usize, what: &str) -> Result<(), GenError> {
        if n <= self.limit {
            return Ok(());
        }
        Err(GenError::Budget(self.exceeded(
            n,
            &format!("{what} (generating stopped at {})", format_count(n as f64)),
            "generate fewer flows (a lower load, rate or duration)",
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_follows_the_budget() {
        let cap = FlowCap::of(10 * netheat_core::BYTES_PER_FLOW);
        assert_eq!(cap.limit, 10);
        assert!(cap.check(10, "flows").is_ok());
        let msg = cap.check(11, "the flows of `x`").unwrap_err().to_string();
        assert!(msg.starts_with("the flows of `x` (generating stopped at 11) would hold about"), "{msg}");
        assert_eq!(FlowCap::of(1).limit, 1);
    }
}
