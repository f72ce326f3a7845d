//! Every policy a scenario file can name is one that its policy crate's
//! registry knows and builds: the scenario's enums (which carry the keys'
//! documentation) cannot drift from the registries.

use netheat_scenario::config::{
    MptcpSubflows, PlacementPolicyKind, RoutingPolicy, SchedulingPolicy, StoragePolicy, TransportKind,
};
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
        for small_queue in [None, Some(false), Some(true)] {
            for spray in [None, Some(false), Some(true)] {
                for subflows in [MptcpSubflows::Lia, MptcpSubflows::Dctcp] {
                    let tag = k.engine_tag(small_queue, spray, subflows);
                    assert!(netheat_packet::transport_tags().contains(&tag), "transport.kind = {v:?}: {tag}");
                }
            }
        }
    }
}

/// The converse: every tag a policy registry builds can be named in a
/// scenario file, so a policy the README and docs list is one a user can run.
#[test]
fn every_registered_policy_can_be_named_in_a_scenario() {
    let tags = |names: Vec<String>, tag: &dyn Fn(&str) -> &'static str| -> Vec<&'static str> {
        names.iter().map(|v| tag(v)).collect()
    };
    let routing = tags(values::<RoutingPolicy>(), &|v| parse::<RoutingPolicy>(v).tag());
    for t in netheat_subways::lb::POLICIES {
        assert!(routing.contains(t), "routing policy {t:?} cannot be named in `routing.policy`");
    }
    let scheduling = tags(values::<SchedulingPolicy>(), &|v| parse::<SchedulingPolicy>(v).tag());
    for t in netheat_flowsched::POLICIES {
        assert!(scheduling.contains(t), "flow scheduler {t:?} cannot be named in `scheduling.policy`");
    }
    let storage = tags(values::<StoragePolicy>(), &|v| parse::<StoragePolicy>(v).tag());
    for t in netheat_storage::POLICIES {
        assert!(storage.contains(t), "replica placement {t:?} cannot be named in `storage.policy`");
    }
    let placement = tags(values::<PlacementPolicyKind>(), &|v| parse::<PlacementPolicyKind>(v).tag());
    for t in netheat_sched::POLICIES {
        assert!(placement.contains(t), "task placement {t:?} cannot be named in `placement.policy`");
    }
}

/// `placement.objectives`' documented default is the scheduler's own.
#[test]
fn placement_objectives_default_to_the_schedulers() {
    let s: netheat_scenario::config::PlacementSection = toml::from_str("").unwrap();
    let (_, objectives) = s.resolve().unwrap();
    use netheat_sched::Objective::*;
    assert_eq!(objectives, [SpreadJob, BinPack, CpuBalance]);
}
