//! Integration tests of config loading, one file per behaviour.

mod bad_input;
mod examples;
mod too_large;
mod workload;
mod workload_budget;

use netheat_config::ConfigError;

/// Loads TOML text and expects an error; returns (line, key, reason).
pub fn fails(text: &str) -> (usize, String, String) {
    match netheat_config::load_topology_str(text, "dc.toml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(ConfigError::Invalid { file, line, key, reason, .. }) => {
            assert_eq!(file, "dc.toml");
            (line, key, reason)
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}
