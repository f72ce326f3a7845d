//! The advisor file: the scenario file's `[placement]` and `[storage]`
//! sections (the same structs, so a key means the same in simulation and in
//! production) plus `[advisor]`, what only a live service has.
//!
//! ```toml
//! [placement]              # docs/scenarios.md; without it: policy = "utp"
//! policy = "utp"
//! hot-threshold = 0.75
//! [storage]                # docs/scenarios.md; without it: policy = "sinbad"
//! policy = "sinbad"
//! [advisor]
//! stale-after = "2min"
//! ```

use std::path::Path;

use netheat_config::units::Duration;
use netheat_config::ConfigError;
use netheat_scenario::config::{PlacementSection, StorageSection, UnitString};
use netheat_scenario::{PlacementPolicyKind, StoragePolicy};
use schemars::JsonSchema;
use serde::Deserialize;

/// `[advisor]`: the live service's own settings.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AdvisorSection {
    /// Telemetry older than this is stale: answers say `"stale": true` and
    /// fall back to the policy's telemetry-free choice (task placement
    /// without the ToR objective, Sinbad's replicas uniform among the
    /// racks it allows).
    #[schemars(with = "Option<UnitString>")]
    pub stale_after: Option<Duration>,
    /// Seed of the random tie-breaks (equal rack scores are drawn at
    /// random, as in the simulator).
    #[serde(default)]
    pub seed: u64,
}

/// The default of `advisor.stale-after`, seconds.
pub const STALE_AFTER_S: f64 = 120.0;

/// A whole advisor file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AdvisorFile {
    /// Task placement: the scenario file's `[placement]`.
    pub placement: Option<PlacementSection>,
    /// Replica placement: the scenario file's `[storage]`.
    pub storage: Option<StorageSection>,
    /// The service's own settings.
    #[serde(default)]
    pub advisor: AdvisorSection,
}

impl Default for AdvisorFile {
    fn default() -> Self {
        let placement: PlacementSection = toml::from_str("").expect("every key has a default");
        let storage: StorageSection = toml::from_str("").expect("every key has a default");
        Self {
            placement: Some(PlacementSection { policy: PlacementPolicyKind::Utp, ..placement }),
            storage: Some(StorageSection { policy: StoragePolicy::Sinbad, ..storage }),
            advisor: AdvisorSection::default(),
        }
    }
}

impl AdvisorFile {
    /// Reads `text` (named `file` in errors: `file:line:col: key: reason`).
    /// A section left out takes the live defaults (UTP, Sinbad).
    pub fn from_text(text: &str, file: &str) -> Result<Self, ConfigError> {
        let mut f: AdvisorFile = toml::from_str(text).map_err(|e| netheat_config::toml_error(text, file, &e))?;
        // The storage and placement keys that only a simulation has: the
        // advisor answers each request as it comes, on the network as it is.
        let st = f.storage.as_ref();
        let bad = if f.placement.as_ref().is_some_and(|p| p.restart_delay.is_some()) {
            Some((
                "placement.restart-delay",
                "what a migration costs is a simulation setting (a cluster app's restarted tasks); the advisor only answers where to run a task",
            ))
        } else if st.is_some_and(|st| st.decision_interval.is_some_and(|d| d.0 != 0.0)) {
            Some(("storage.decision-interval", "batching requests into decision intervals is a simulation setting; the advisor places each block when asked"))
        } else if st.is_some_and(|st| st.initial_policy.is_some()) {
            Some((
                "storage.initial-policy",
                "what placed a simulated store before its run is a simulation setting; the advisor places the blocks it is asked about",
            ))
        } else if st.is_some_and(|st| st.rebalance_interval.is_some() || st.rebalance_target.is_some()) {
            Some((
                "storage.rebalance-interval",
                "the rebalancer is the simulated cluster's; a real cluster runs its own (the HDFS balancer)",
            ))
        } else if st.is_some_and(|st| st.hedge_reads_after.is_some()) {
            Some((
                "storage.hedge-reads-after",
                "hedged and degraded reads are the storage client's (HDFS: dfs.client.hedged.read.threshold.millis); the advisor places replicas",
            ))
        } else if st.is_some_and(|st| st.free_source) {
            Some((
                "storage.free-source",
                "sources without a bottleneck are the simulation's optimistic bound, not a placement",
            ))
        } else {
            None
        };
        if let Some((key, reason)) = bad {
            let loc = netheat_config::locate::Locator::new(text);
            let (line, column) = loc.line_col(loc.offset_of(key));
            return Err(ConfigError::Invalid {
                file: file.to_string(),
                line,
                column,
                key: key.into(),
                reason: reason.into(),
            });
        }
        let d = AdvisorFile::default();
        f.placement = f.placement.or(d.placement);
        f.storage = f.storage.or(d.storage);
        Ok(f)
    }

    /// Reads a file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
        Self::from_text(&text, &file)
    }

    /// Telemetry age after which answers are stale, seconds.
    pub fn stale_after_s(&self) -> f64 {
        self.advisor.stale_after.map_or(STALE_AFTER_S, |d| d.0)
    }
}

/// The JSON Schema of the advisor file (for `--help` and the docs): the
/// `[placement]` and `[storage]` definitions are the scenario schema's,
/// with the policy crates' defaults, and the live defaults (UTP, Sinbad,
/// the stale age) written in.
pub fn schema() -> serde_json::Value {
    let mut v = serde_json::to_value(schemars::schema_for!(AdvisorFile)).expect("a schema serializes");
    let scenario: serde_json::Value = serde_json::from_str(&netheat_scenario::schema()).expect("valid JSON");
    let put = |v: &mut serde_json::Value, path: &str, value: serde_json::Value| {
        if let Some(o) = v.pointer_mut(path).and_then(|p| p.as_object_mut()) {
            o.insert("default".into(), value);
        }
    };
    for def in ["PlacementSection", "StorageSection"] {
        if let (Some(d), Some(src)) =
            (v.pointer_mut(&format!("/definitions/{def}")), scenario.pointer(&format!("/definitions/{def}")))
        {
            *d = src.clone();
        }
    }
    // Simulation-only keys (refused by `from_text`).
    if let Some(props) = v.pointer_mut("/definitions/StorageSection/properties").and_then(|p| p.as_object_mut()) {
        for key in [
            "decision-interval",
            "free-source",
            "hedge-reads-after",
            "initial-policy",
            "rebalance-interval",
            "rebalance-target",
        ] {
            props.remove(key);
        }
    }
    if let Some(props) = v.pointer_mut("/definitions/PlacementSection/properties").and_then(|p| p.as_object_mut()) {
        props.remove("restart-delay");
    }
    put(&mut v, "/definitions/PlacementSection/properties/policy", "utp".into());
    put(&mut v, "/definitions/StorageSection/properties/policy", "sinbad".into());
    put(&mut v, "/definitions/AdvisorSection/properties/stale-after", format!("{STALE_AFTER_S}s").into());
    put(&mut v, "/definitions/AdvisorSection/properties/seed", 0.into());
    v
}
