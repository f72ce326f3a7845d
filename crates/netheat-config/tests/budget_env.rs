//! `NETHEAT_MEMORY_BUDGET` as the readers see it. One test in its own
//! binary: it sets the process environment, which no other test may read
//! at the same time.

use netheat_config::{load_topology_str, ConfigError};

const DC: &str =
    "[topology]\nkind = \"two-tier\"\nracks = 4\nhosts-per-rack = 4\nhost-link = \"10Gbps\"\ntor-uplink = \"10Gbps\"\n";

#[test]
fn the_environment_sets_the_budget_and_a_bad_value_is_not_about_the_file() {
    std::env::set_var("NETHEAT_MEMORY_BUDGET", "lots");
    match load_topology_str(DC, "dc.toml") {
        Err(e @ ConfigError::Budget(_)) => {
            assert_eq!(
                e.to_string(),
                "NETHEAT_MEMORY_BUDGET: `lots` does not start with a number (expected e.g. \"256MiB\")"
            );
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
    std::env::set_var("NETHEAT_MEMORY_BUDGET", "0KiB");
    assert!(matches!(load_topology_str(DC, "dc.toml"), Err(ConfigError::Budget(_))));
    // 21 nodes and 40 links of 1 KiB each: 61 KiB is just enough.
    std::env::set_var("NETHEAT_MEMORY_BUDGET", "60KiB");
    match load_topology_str(DC, "dc.toml") {
        Err(ConfigError::Invalid { key, reason, .. }) => {
            assert_eq!(key, "topology.racks");
            assert!(reason.contains("over the memory budget of 60.0 KiB"), "{reason}");
        }
        other => panic!("expected an over-budget error, got {other:?}"),
    }
    std::env::set_var("NETHEAT_MEMORY_BUDGET", "61KiB");
    assert_eq!(netheat_core::memory_budget().unwrap(), 61 * 1024);
    load_topology_str(DC, "dc.toml").unwrap();
    // The scoped and process-wide budgets take precedence over the environment.
    netheat_core::with_memory_budget(1 << 30, || assert_eq!(netheat_core::memory_budget().unwrap(), 1 << 30));
    netheat_core::set_memory_budget(5 << 30).unwrap();
    assert_eq!(netheat_core::memory_budget().unwrap(), 5 << 30);
    std::env::remove_var("NETHEAT_MEMORY_BUDGET");
}
