//! The advisor takes the simulator's decisions: every placement decision of
//! a scenario run is recorded with the state it was taken on
//! (`Scenario::recording`), that state is given to an [`Advisor`] the way
//! telemetry would give it, and the advisor must decide the same.
//! Plus hand-computed answers on a small datacenter.

use std::path::{Path, PathBuf};

use netheat_advisor::{Advisor, AdvisorFile, MigrateRequest, MigrateTask, Ref, ReplicaRequest, TaskRequest};
use netheat_data::DataDir;
use netheat_scenario::{Decision, Scenario};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn recorded(file: &str, overrides: &[(&str, &str)]) -> (Advisor, Vec<Decision>) {
    let mut s = Scenario::from_path(&root().join(file)).unwrap();
    for (k, v) in overrides {
        s = s.with_override(k, v).unwrap();
    }
    let s = s.recording();
    let data = DataDir::explicit("/nonexistent");
    let parts = s.parts(&data).unwrap();
    let file = AdvisorFile {
        placement: parts.sections.placement.clone(),
        storage: parts.sections.storage.clone(),
        ..AdvisorFile::default()
    };
    let advisor = Advisor::new((*parts.topology).clone(), &file).unwrap();
    let res = s.run_parts(parts, &mut |_, _| true).unwrap();
    (advisor, res.decisions)
}

#[test]
fn utp_placements_and_migrations_of_a_run_are_the_advisors() {
    // The UTP example for an hour and a half: jobs arrive for an hour.
    let (mut adv, log) = recorded(
        "examples/scenarios/placement-utp.toml",
        &[("scenario.duration", "\"90min\""), ("workload.duration", "\"1h\"")],
    );
    let (mut tasks, mut moves, mut skipped) = (0, 0, 0);
    for d in &log {
        match d {
            Decision::Task { time_s, ask, others, sample, uplinks, chosen } => {
                if sample.iter().any(|&(_, free)| free < f64::from(ask.cores)) {
                    // A full cluster: the run overcommits, the advisor
                    // (rightly) reports no room.
                    skipped += 1;
                    continue;
                }
                let links: Vec<u32> = uplinks.iter().map(|u| u.0).collect();
                let rates: Vec<f64> = uplinks.iter().map(|u| u.1).collect();
                let caps: Vec<f64> = uplinks.iter().map(|u| u.2).collect();
                adv.observe(*time_s, &links, &rates, Some(&caps)).unwrap();
                let req = TaskRequest {
                    cores: ask.cores,
                    memory_bytes: ask.memory_bytes,
                    demand_bps: ask.estimate_bps,
                    job_hosts: others.iter().map(|&h| Ref::Index(h.into())).collect(),
                    candidates: Some(sample.iter().map(|&(h, _)| Ref::Index(h.into())).collect()),
                    free_cores: Some(sample.iter().map(|&(_, f)| f).collect()),
                    free_memory_bytes: None,
                    avoid_tors: vec![],
                    limit: None,
                };
                let a = adv.place_task(*time_s, &req).unwrap();
                assert!(!a.stale);
                assert_eq!(a.chosen, Some(adv.host_name(*chosen)), "decision at {time_s} s");
                tasks += 1;
            }
            Decision::Migration { time_s, tor, tor_rate_bps, tor_capacity_bps, threshold, candidates, picked } => {
                // The ToR's sampled rate, spread over its uplinks by capacity.
                let up = adv.topology().tors()[*tor as usize].up.clone();
                let caps: Vec<f64> = up.iter().map(|&l| adv.topology().links()[l as usize].capacity_bps).collect();
                let total: f64 = caps.iter().sum();
                assert!((total - tor_capacity_bps).abs() < 1.0);
                let rates: Vec<f64> = caps.iter().map(|c| tor_rate_bps * c / total).collect();
                adv.observe(*time_s, &up, &rates, Some(&caps)).unwrap();
                let req = MigrateRequest {
                    tor: Ref::Index((*tor).into()),
                    tasks: candidates
                        .iter()
                        .map(|c| MigrateTask {
                            id: c.task.to_string(),
                            rate_bps: c.rate_bps,
                            latency_sensitive: c.latency_sensitive,
                            budget_left: c.budget_left,
                        })
                        .collect(),
                    threshold: Some(*threshold),
                };
                let a = adv.migrate(*time_s, &req).unwrap();
                let want: Vec<String> = picked.iter().map(|&i| candidates[i].task.to_string()).collect();
                assert_eq!(a.moves, want, "migration at {time_s} s");
                moves += 1;
            }
            _ => {}
        }
    }
    eprintln!("{tasks} placements and {moves} migration choices taken again ({skipped} overcommitted skipped)");
    assert!(tasks >= 300, "{tasks}");
    assert!(moves >= 1, "{moves}");
}

#[test]
fn sinbad_replicas_of_a_run_are_the_advisors() {
    let (mut adv, log) = recorded(
        "examples/scenarios/storage-sinbad.toml",
        &[("scenario.duration", "\"30s\""), ("workload.duration", "\"20s\"")],
    );
    let (mut blocks, mut reports) = (0, 0);
    for d in &log {
        match d {
            Decision::Report { time_s, rates } => {
                let links: Vec<u32> = (0..rates.len() as u32).filter(|&l| rates[l as usize].is_some()).collect();
                let r: Vec<f64> = rates.iter().flatten().copied().collect();
                adv.observe(*time_s, &links, &r, None).unwrap();
                reports += 1;
            }
            Decision::Replicas { time_s, request, used, rng, hosts } => {
                if reports == 0 {
                    continue; // before any report the advisor has no telemetry (stale)
                }
                adv.set_storage(Some(used), None).unwrap();
                let netheat_storage::Redundancy::Replicate { r, f } = request.redundancy else { panic!() };
                let req = ReplicaRequest {
                    bytes: request.bytes,
                    writer: request.writer.map(|w| Ref::Index(w.into())),
                    replicas: r,
                    fault_domains: Some(f + 1),
                    erasure: None,
                };
                let a = adv.place_replicas_with(*time_s, &req, &mut rng.clone()).unwrap();
                assert!(!a.stale);
                let want: Vec<&str> = hosts.iter().map(|&h| adv.host_name(h)).collect();
                assert_eq!(a.hosts, want, "block at {time_s} s");
                blocks += 1;
            }
            _ => {}
        }
    }
    eprintln!("{blocks} blocks placed again after {reports} reports");
    assert!(blocks >= 50, "{blocks}");
}

/// two-tier-4x4.toml: 4 racks of 4 hosts (32 cores), 10 Gbps ToR uplinks
/// (tor<r> -> core is link 32 + 2r).
fn small(config: &str) -> Advisor {
    let topo = netheat_config::load_topology(&root().join("examples/topologies/two-tier-4x4.toml")).unwrap();
    Advisor::new(topo, &AdvisorFile::from_text(config, "advisor.toml").unwrap()).unwrap()
}

const T: f64 = 1_800_000_000.0;

#[test]
fn extender_filters_the_hot_tor_and_scores_by_projected_utilization() {
    let mut a = small("");
    // ToRs at 10%, 20%, 80%, 0%.
    a.observe(T, &[32, 34, 36, 38], &[1e9, 2e9, 8e9, 0.0], None).unwrap();
    let x = a.extender(T + 1.0, &[0, 4, 8, 12], 1e9).unwrap();
    assert!(!x.stale);
    // Projected with a 1 Gbps pod: 20%, 30%, 90%, 10% -> floor(10 (1 - p)).
    let got: Vec<(bool, u32)> = x.nodes.iter().map(|n| (n.pass, n.score)).collect();
    assert_eq!(got, vec![(true, 8), (true, 7), (false, 1), (true, 9)]);
    assert!(x.nodes[2].reason.contains("tor2 at 80%"), "{}", x.nodes[2].reason);
    // A 6 Gbps pod would push tor1 to 80%: filtered too.
    let x = a.extender(T + 1.0, &[4], 6e9).unwrap();
    assert!(!x.nodes[0].pass);
    // Stale after 2 minutes: everything passes, no preference.
    let x = a.extender(T + 121.0, &[0, 8], 1e9).unwrap();
    assert!(x.stale);
    assert!(x.nodes.iter().all(|n| n.pass && n.score == 0));
}

#[test]
fn extender_protocol_reads_extender_args_and_answers_in_go_field_names() {
    use netheat_advisor::{AdvisorError, ExtenderOptions};
    let mut a = small("");
    a.observe(T, &[32, 34, 36, 38], &[1e9, 2e9, 8e9, 0.0], None).unwrap();
    let opts = ExtenderOptions { datacenter: "dc.toml".into(), ..ExtenderOptions::default() };
    // Names only, lower-case keys (older schedulers), a 1 Gbps pod: the scores of the test above,
    // and 0 for a node that is no host.
    let body = br#"{"pod": {"metadata": {"name": "web", "annotations": {"netheat.io/network-demand": "1Gbps"}}},
        "nodenames": ["r0h0", "r1h0", "r2h0", "r3h0", "nope"]}"#;
    let r = a.extender_prioritize_json(T + 1.0, body, &opts).unwrap();
    let want = r#"[{"Host":"r0h0","Score":8},{"Host":"r1h0","Score":7},{"Host":"r2h0","Score":1},{"Host":"r3h0","Score":9},{"Host":"nope","Score":0}]"#;
    assert_eq!(r.json, want);
    let w = r.warning.unwrap();
    assert!(
        w.starts_with("scheduler/prioritize: pod default/web: 1 of 5 node(s) map to no datacenter host (nope)"),
        "{w}"
    );
    // Filter on full Nodes tied to hosts by a label: the passing items come back whole.
    let opts = ExtenderOptions { node_label: Some("host".into()), ..opts };
    let node =
        |n: &str, h: &str| format!(r#"{{"metadata": {{"name": "{n}", "uid": "u-{n}", "labels": {{"host": "{h}"}}}}}}"#);
    let body = format!(
        r#"{{"Pod": {{"metadata": {{"name": "web", "namespace": "shop", "annotations": {{"netheat.io/network-demand": "1Gbps"}}}}}},
            "Nodes": {{"kind": "NodeList", "items": [{}, {}, {{"metadata": {{"name": "k3"}}}}]}}}}"#,
        node("k0", "r0h1"),
        node("k2", "r2h1")
    );
    let r = a.extender_filter_json(T + 1.0, body.as_bytes(), &opts).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    assert_eq!(v["Nodes"]["kind"], "NodeList");
    assert_eq!(v["Nodes"]["items"].as_array().unwrap().len(), 1);
    assert_eq!(v["Nodes"]["items"][0]["metadata"]["uid"], "u-k0");
    assert!(v["NodeNames"].is_null() && v["Error"] == "" && v["FailedAndUnresolvableNodes"] == serde_json::json!({}));
    let failed = v["FailedNodes"].as_object().unwrap();
    assert_eq!(failed.len(), 2);
    assert!(failed["k2"].as_str().unwrap().starts_with("netheat: tor2 at 80% + 1.00 Gbps would be 90%"), "{failed:?}");
    assert!(failed["k3"].as_str().unwrap().contains("has no label host"), "{failed:?}");
    // Bad input: not JSON / not ExtenderArgs is Malformed (400), a bad demand is a Request error (422).
    let err = |b: &[u8]| a.extender_prioritize_json(T + 1.0, b, &opts).unwrap_err();
    assert!(matches!(err(b"{"), AdvisorError::Malformed(m) if m.starts_with("malformed JSON")));
    assert!(matches!(err(b"[1]"), AdvisorError::Malformed(m) if m.contains("must be a JSON object")));
    assert!(
        matches!(err(br#"{"NodeNames": []}"#), AdvisorError::Malformed(m) if m == "ExtenderArgs has no Pod object")
    );
    assert!(
        matches!(err(br#"{"Pod": {}, "NodeNames": "r0h0"}"#), AdvisorError::Malformed(m) if m.contains("must be a list"))
    );
    let bad = br#"{"Pod": {"metadata": {"annotations": {"netheat.io/network-demand": "fast"}}}, "NodeNames": []}"#;
    assert!(
        matches!(err(bad), AdvisorError::Request(m) if m.starts_with("pod default/?: annotation netheat.io/network-demand: "))
    );
    // The placement endpoints tell the two apart the same way.
    assert!(matches!(a.place_task_json(T, b"{not json"), Err(AdvisorError::Malformed(_))));
    assert!(matches!(a.place_task_json(T, b"[1, 2]"), Err(AdvisorError::Malformed(m)) if m.ends_with("got list")));
    assert!(matches!(a.place_task_json(T, br#"{"cores": "x"}"#), Err(AdvisorError::Request(_))));
}

#[test]
fn utp_ranks_cool_tors_first_and_falls_back_when_stale() {
    let mut a = small("");
    a.observe(T, &[32, 34, 36, 38], &[1e9, 2e9, 8e9, 0.5e9], None).unwrap();
    let req = TaskRequest {
        cores: 4,
        memory_bytes: 0.0,
        demand_bps: 2e9,
        job_hosts: vec![Ref::Name("r3h0".into())],
        candidates: Some(["r0h0", "r1h0", "r2h0", "r3h1"].iter().map(|s| Ref::Name(s.to_string())).collect()),
        free_cores: Some(vec![8.0, 8.0, 8.0, 8.0]),
        free_memory_bytes: None,
        avoid_tors: vec![],
        limit: None,
    };
    let x = a.place_task(T, &req).unwrap();
    // spread-job puts r3h1 (a task of the job in rack 3) last; bin-pack
    // ties (4 free cores left: key 1); UTP's load balance (hotspot paper
    // §5.1) scores max(CPU after, projected ToR): CPU after is 28/32 =
    // 87.5% everywhere, projected 30%, 40%, 100% -> keys 17, 17, 20: r0h0
    // and r1h0 tie on their servers' load (sample order), r2h0 after them.
    let order: Vec<&str> = x.ranked.iter().map(|r| r.host).collect();
    assert_eq!(order, vec!["r0h0", "r1h0", "r2h0", "r3h1"]);
    assert_eq!(x.ranked[0].keys["utp-balance"], 17);
    assert_eq!(x.ranked[2].keys["utp-balance"], 20);
    assert_eq!(x.chosen, Some("r0h0"));
    // Stale: the scheduler's objectives only (sample order on ties).
    let x = a.place_task(T + 600.0, &req).unwrap();
    assert!(x.stale && x.fallback.is_some());
    assert_eq!(x.policy, "bandwidth-oblivious");
    // A host with too few cores is excluded with the reason.
    let req = TaskRequest { free_cores: Some(vec![2.0, 8.0, 8.0, 8.0]), ..req };
    let x = a.place_task(T, &req).unwrap();
    assert_eq!(x.excluded[0].host, "r0h0");
    assert_eq!(x.chosen, Some("r1h0"));
}

#[test]
fn migration_moves_the_fewest_largest_tasks() {
    let mut a = small("[placement]\npolicy = \"utp\"\nhot-threshold = 0.7\n");
    a.observe(T, &[36], &[9e9], None).unwrap();
    let task = |id: &str, gbps: f64, ls: bool| MigrateTask {
        id: id.into(),
        rate_bps: gbps * 1e9,
        latency_sensitive: ls,
        budget_left: true,
    };
    // 90% on 10 Gbps, threshold 70%: moving 3 Gbps (the largest movable:
    // the 4 Gbps task is latency-sensitive) brings it to 60%.
    let req = MigrateRequest {
        tor: Ref::Name("tor2".into()),
        tasks: vec![task("a", 1.0, false), task("b", 4.0, true), task("c", 3.0, false), task("d", 1.0, false)],
        threshold: None,
    };
    let x = a.migrate(T, &req).unwrap();
    assert_eq!(x.moves, vec!["c"]);
    assert!((x.after_utilization - 0.6).abs() < 1e-12);
    assert_eq!(x.tasks[1].reason, "latency-sensitive: never moved");
}

#[test]
fn bad_input_is_refused_with_its_reason() {
    let e = AdvisorFile::from_text("[placement]\npolicy = \"utp\"\nhot-treshold = 0.7\n", "adv.toml").unwrap_err();
    assert!(e.to_string().starts_with("adv.toml:3:1: "), "{e}");
    // Simulation-only storage keys.
    let e = AdvisorFile::from_text("[storage]\npolicy = \"sinbad\"\ndecision-interval = \"10s\"\n", "adv.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("adv.toml:3:1: ") && e.contains("storage.decision-interval"), "{e}");
    let e = AdvisorFile::from_text("[storage]\nfree-source = true\n", "adv.toml").unwrap_err().to_string();
    assert!(e.starts_with("adv.toml:2:1: ") && e.contains("storage.free-source"), "{e}");
    let e = AdvisorFile::from_text("[storage]\npolicy = \"sinbad\"\nhedge-reads-after = \"50ms\"\n", "adv.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("adv.toml:3:1: ") && e.contains("storage.hedge-reads-after"), "{e}");
    let e = AdvisorFile::from_text("[placement]\npolicy = \"utp\"\nrestart-delay = \"25s\"\n", "adv.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("adv.toml:3:1: ") && e.contains("placement.restart-delay"), "{e}");
    assert!(AdvisorFile::from_text("[storage]\ndecision-interval = \"0s\"\n", "adv.toml").is_ok());
    let mut a = small("");
    let e = a.observe(T, &[999], &[1.0], None).unwrap_err().to_string();
    assert!(e.contains("unknown link 999"), "{e}");
    let e = a.place_task_json(T, "{\"cores\": 1, \"candidates\": [\"r9h9\"]}".as_bytes()).unwrap_err().to_string();
    assert!(e.contains("unknown host \"r9h9\""), "{e}");
    let e = a.migrate_json(T, "{\"tor\": \"tor9\", \"tasks\": []}".as_bytes()).unwrap_err().to_string();
    assert!(e.contains("unknown ToR"), "{e}");
    let e = a
        .place_replicas_json(T, "{\"bytes\": 1e6, \"replicas\": 3, \"fault_domains\": 9}".as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot be placed"), "{e}");
    assert!(a.place_task_json(T, "not json".as_bytes()).is_err());
}

#[test]
fn hdfs_load_report_is_the_receive_utilization_per_host() {
    let mut a = small("");
    assert_eq!(a.hdfs_loads().lines().filter(|l| !l.starts_with('#')).count(), 1); // the header only
                                                                                   // r0h1's downlink (8*0 + 2*1 + 1 = 3) at 2.5 of 10 Gbps; r1h0's (9) at 10.
    a.observe(T, &[3, 9], &[2.5e9, 10e9], None).unwrap();
    let text = a.hdfs_loads();
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows, vec!["r0h1,0.250000,1800000000.000", "r1h0,1.000000,1800000000.000"]);
}

#[test]
fn place_task_answers_are_byte_for_byte_what_serde_writes() {
    // The service's answer is written by hand (`TaskAnswer::write_json`) for
    // speed; it must be exactly the derived `Serialize`'s JSON, on every
    // path: fresh and stale telemetry, unmeasured uplinks, exclusions,
    // fractional free cores, limits, and each objective's reason.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let configs = [
        "",
        "[placement]\npolicy = \"bandwidth-oblivious\"\n",
        "[placement]\npolicy = \"utp\"\nobjectives = [\"cpu-balance\", \"spread-job\"]\n",
    ];
    let mut checked = 0;
    for config in configs {
        let mut a = small(config);
        for round in 0..200 {
            // Uplinks 32, 34, 36, 38; now and then one of them unreported.
            let (mut links, mut rates) = (vec![], vec![]);
            for l in [32u32, 34, 36, 38] {
                if rng.gen_bool(0.9) {
                    links.push(l);
                    rates.push(rng.gen_range(0.0..1.2e10));
                }
            }
            a.observe(T, &links, &rates, None).unwrap();
            let n = rng.gen_range(1..=16usize);
            let mut cands: Vec<u32> = (0..16).collect();
            for i in 0..n {
                cands.swap(i, rng.gen_range(i..16));
            }
            cands.truncate(n);
            let req = TaskRequest {
                cores: rng.gen_range(1..=8),
                memory_bytes: if rng.gen_bool(0.2) { 1e12 } else { 0.0 },
                demand_bps: rng.gen_range(0.0..3e9),
                job_hosts: (0..rng.gen_range(0..3)).map(|_| Ref::Index(rng.gen_range(0..16))).collect(),
                candidates: Some(
                    cands
                        .iter()
                        .map(
                            |&h| {
                                if h % 2 == 0 {
                                    Ref::Index(h.into())
                                } else {
                                    Ref::Name(format!("r{}h{}", h / 4, h % 4))
                                }
                            },
                        )
                        .collect(),
                ),
                free_cores: rng.gen_bool(0.7).then(|| (0..n).map(|_| (rng.gen_range(0..=64) as f64) / 2.0).collect()),
                free_memory_bytes: None,
                avoid_tors: if rng.gen_bool(0.2) { vec![Ref::Name("tor1".into())] } else { vec![] },
                limit: rng.gen_bool(0.3).then(|| rng.gen_range(0..8)),
            };
            let now = if round % 5 == 0 { T + 600.0 } else { T + 1.0 };
            let body = serde_json::to_vec(&serde_json::json!({
                "cores": req.cores,
                "memory_bytes": req.memory_bytes,
                "demand_bps": req.demand_bps,
                "job_hosts": req.job_hosts.iter().map(ref_json).collect::<Vec<_>>(),
                "candidates": req.candidates.as_ref().unwrap().iter().map(ref_json).collect::<Vec<_>>(),
                "free_cores": req.free_cores,
                "avoid_tors": req.avoid_tors.iter().map(ref_json).collect::<Vec<_>>(),
                "limit": req.limit,
            }))
            .unwrap();
            // The reference reads the same body (serde_json's float parsing
            // may differ from the value written by the last bit).
            let parsed: TaskRequest = serde_json::from_slice(&body).unwrap();
            let want = serde_json::to_vec(&a.place_task(now, &parsed).unwrap()).unwrap();
            let got = a.place_task_json(now, &body).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap(), "{config:?} round {round}");
            checked += 1;
        }
    }
    assert_eq!(checked, 600);
}

fn ref_json(r: &Ref) -> serde_json::Value {
    match r {
        Ref::Index(i) => (*i).into(),
        Ref::Name(s) => s.clone().into(),
    }
}
