//! The scheduler's own parameters and their defaults, shared by every run
//! that places tasks with a [`crate::PlacementPolicy`]: a scenario's
//! `[placement]` (over `compute-job` tasks or a `cluster` app), whose
//! defaults are these.

use crate::policy::Objective;

/// What the scheduler itself is configured with: how many candidates it
/// samples, its objectives, how it samples ToR utilization and decides a
/// ToR is hot, and its migration budget.
///
/// Read (by serde) with
/// kebab-case keys; `tick` and `detect` are durations (seconds or a unit
/// string such as `"5min"`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", default)]
pub struct SchedulerParams {
    /// Migrations allowed per job per detection window.
    pub budget_per_window: u32,
    /// Candidates sampled per placement.
    pub candidates: usize,
    /// The scheduler's own objectives, most important first: spread-job, bin-pack, cpu-balance,
    /// utp-balance, tor-utilization.
    pub objectives: Vec<Objective>,
    /// Utilization sampling period, seconds.
    #[serde(rename = "tick", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub tick_s: f64,
    /// Hot detection window, seconds.
    #[serde(rename = "detect", with = "netheat_config::units::si::duration")]
    #[schemars(schema_with = "netheat_config::units::si::duration::schema")]
    pub detect_s: f64,
    /// Utilization above which a ToR is hot.
    pub hot_threshold: f64,
}

impl Default for SchedulerParams {
    fn default() -> Self {
        Self {
            budget_per_window: 2,
            candidates: 32,
            // Borg-like (§5.1): spreading, bin packing, and the low-priority
            // load balance across servers that UTP tweaks.
            objectives: vec![Objective::SpreadJob, Objective::BinPack, Objective::CpuBalance],
            tick_s: 30.0,
            detect_s: 300.0,
            hot_threshold: 0.75,
        }
    }
}
