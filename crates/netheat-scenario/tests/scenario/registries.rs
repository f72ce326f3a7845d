//! Every policy a scenario file can name is one that its policy crate's
//! registry knows and builds: the scenario's enums (which carry the keys'
//! documentation) cannot drift from the registries.

use netheat_scenario::config::{PlacementPolicyKind, RoutingPolicy, SchedulingPolicy, StoragePolicy, TransportKind};
use serde::de::DeserializeOwned;

/// The values a scenario file may give an enum key, from its schema.
fn values<T: schemars::JsonSchema>() -> Vec<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Array(vals)) = m.get("enum") {
                    out.extend(vals.iter().filter_map(|x| x.as_str().map(str::to_string)));
                }
                stack.extend(m.into_iter().filter(|(k, _)| k != "enum").map(|(_, v)| v));
            }
            serde_json::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    assert!(!out.is_empty(), "no values in the schema of {}", std::any::type_name::<T>());
    out
}

fn parse<T: DeserializeOwned>(value: &str) -> T {
    serde_json::from_value(serde_json::Value::String(value.to_string())).unwrap()
}

#[test]
fn every_policy_a_scenario_names_is_registered() {
    for v in values::<RoutingPolicy>() {
        let p = parse::<RoutingPolicy>(&v);
        if p == RoutingPolicy::Ecmp {
            continue; // the engine's own per-flow hash, not a load balancer
        }
        let tag = p.tag();
        assert!(netheat_subways::lb::POLICIES.contains(&tag), "routing.policy = {v:?}: {tag}");
        netheat_subways::load_balancer(tag, &netheat_subways::LbParams::default()).unwrap();
    }
    for v in values::<SchedulingPolicy>() {
        let p = parse::<SchedulingPolicy>(&v);
        if p.protocol() {
            continue; // a protocol simulator, not a flow-engine scheduler (see its docs)
        }
        assert!(netheat_flowsched::POLICIES.contains(&p.tag()), "scheduling.policy = {v:?}");
        netheat_flowsched::policy_by_tag(p.tag(), 1e6).unwrap();
    }
    for v in values::<StoragePolicy>() {
        let tag = parse::<StoragePolicy>(&v).tag();
        assert!(netheat_storage::POLICIES.contains(&tag), "storage.policy = {v:?}");
        assert_eq!(netheat_storage::make_policy(tag, &Default::default()).unwrap().name(), tag);
    }
    for v in values::<PlacementPolicyKind>() {
        let tag = parse::<PlacementPolicyKind>(&v).tag();
        assert!(netheat_sched::POLICIES.contains(&tag), "placement.policy = {v:?}");
        assert_eq!(netheat_sched::placement_policy(tag, &[]).unwrap().name(), tag);
    }
    for v in values::<TransportKind>() {
        // `mptcp` and `dctcp-replication` are two engine flows of DCTCP
        // each (the scenario builds them): their engine tags must exist.
        let k = parse::<TransportKind>(&v);
        for small_queue in [false, true] {
            let tag = k.engine_tag(small_queue);
            assert!(netheat_packet::transport_tags().contains(&tag), "transport.kind = {v:?}: {tag}");
        }
    }
}
