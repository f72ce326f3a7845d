//! Requests and answers of the advisor, as JSON (snake_case, unknown keys
//! rejected). Hosts are named as in the datacenter file (`"r0h1"`) or by
//! id (`4` or `"4"`); ToRs by name (`"tor3"`) or rack index.

use serde::{Deserialize, Serialize};

/// A host or a ToR named by its name or its index.
#[derive(Debug, Clone, PartialEq)]
pub enum Ref {
    /// An index.
    Index(u64),
    /// A name (or an index written as text).
    Name(String),
}

// By hand rather than `#[serde(untagged)]`: an untagged enum buffers each
// value and builds an error for every variant it tries, which cost the
// service's requests a few microseconds per host named.
impl<'de> Deserialize<'de> for Ref {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Ref;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a name (\"r0h1\", \"tor3\") or an index (a whole number of at least 0)")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Ref, E> {
                Ok(Ref::Index(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Ref, E> {
                u64::try_from(v).map(Ref::Index).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Ref, E> {
                Ok(Ref::Name(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Ref, E> {
                Ok(Ref::Name(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A ranked host's quantised key per objective, in the policy's order
/// (serialized as a JSON object, objective tag to key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectiveKeys(pub Vec<(&'static str, i64)>);

impl ObjectiveKeys {
    /// The key of the objective tagged `name`, if the policy has it.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
    }
}

impl std::ops::Index<&str> for ObjectiveKeys {
    type Output = i64;
    fn index(&self, name: &str) -> &i64 {
        &self.0.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no objective {name}")).1
    }
}

impl Serialize for ObjectiveKeys {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, key) in &self.0 {
            m.serialize_entry(name, key)?;
        }
        m.end()
    }
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ref::Index(i) => write!(f, "{i}"),
            Ref::Name(s) => write!(f, "{s:?}"),
        }
    }
}

fn one() -> u32 {
    1
}

/// `place/task`: where should a task go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRequest {
    /// Cores the task requests.
    #[serde(default = "one")]
    pub cores: u32,
    /// Memory it requests, bytes.
    #[serde(default)]
    pub memory_bytes: f64,
    /// Its peak network demand estimate, bits/s (UTP adds it to the ToR's
    /// measured load).
    #[serde(default)]
    pub demand_bps: f64,
    /// Hosts running the job's other tasks (never chosen; the scheduler's
    /// spread objective counts them per rack).
    #[serde(default)]
    pub job_hosts: Vec<Ref>,
    /// The hosts to rank (default: every host).
    pub candidates: Option<Vec<Ref>>,
    /// Free cores of each candidate (default: all of the host's cores).
    pub free_cores: Option<Vec<f64>>,
    /// Free memory of each candidate, bytes (default: all of it).
    pub free_memory_bytes: Option<Vec<f64>>,
    /// ToRs whose hosts must not be chosen (a migration's source).
    #[serde(default)]
    pub avoid_tors: Vec<Ref>,
    /// Most ranked hosts to return (default 100).
    pub limit: Option<usize>,
}

/// One ranked host (names borrowed from the advisor's datacenter: an
/// answer is serialized at once, and a hundred of them per request are
/// cheaper without two copies each).
#[derive(Debug, Clone, Serialize)]
pub struct RankedHost<'a> {
    /// Its name.
    pub host: &'a str,
    /// Its id.
    pub id: u32,
    /// Its ToR.
    pub tor: &'a str,
    /// Outbound utilization of its ToR (missing uplinks count as full).
    pub tor_util: f64,
    /// `tor_util` plus the task's demand over the ToR's uplink capacity.
    pub projected_tor: f64,
    /// The quantised key per objective (lower is better, compared in order).
    pub keys: ObjectiveKeys,
    /// Why it ranks where it does.
    pub reason: crate::TaskReason<'a>,
}

/// A host left out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Excluded<'a> {
    /// Its name.
    pub host: &'a str,
    /// Why.
    pub reason: String,
}

/// The answer to `place/task`.
#[derive(Debug, Clone, Serialize)]
pub struct TaskAnswer<'a> {
    /// The policy that ranked.
    pub policy: String,
    /// Whether telemetry was stale (or absent).
    pub stale: bool,
    /// Why the telemetry-free choice was taken instead, if it was.
    pub fallback: Option<String>,
    /// The best host (`None`: no candidate can take the task).
    pub chosen: Option<&'a str>,
    /// Candidates best first (at most `limit`).
    pub ranked: Vec<RankedHost<'a>>,
    /// Candidates that cannot take the task.
    pub excluded: Vec<Excluded<'a>>,
}

impl TaskAnswer<'_> {
    /// The answer's JSON, byte for byte what `serde_json` writes from the
    /// derived `Serialize` (a test compares them on random requests), but
    /// written straight into `out`: a hundred ranked hosts with a reason
    /// each were most of the service's time per `place/task` request
    /// through serde's escaping of every string and `core::fmt`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        use crate::text::{json_array, json_f64, json_int, json_str};
        out.extend_from_slice(b"{\"policy\":");
        json_str(out, &self.policy);
        out.extend_from_slice(if self.stale { b",\"stale\":true" } else { b",\"stale\":false" });
        out.extend_from_slice(b",\"fallback\":");
        match &self.fallback {
            Some(f) => json_str(out, f),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"chosen\":");
        match self.chosen {
            Some(c) => json_str(out, c),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"ranked\":");
        let mut reason = String::with_capacity(256);
        json_array(out, &self.ranked, |out, r| {
            out.extend_from_slice(b"{\"host\":");
            json_str(out, r.host);
            out.extend_from_slice(b",\"id\":");
            json_int(out, r.id);
            out.extend_from_slice(b",\"tor\":");
            json_str(out, r.tor);
            out.extend_from_slice(b",\"tor_util\":");
            json_f64(out, r.tor_util);
            out.extend_from_slice(b",\"projected_tor\":");
            json_f64(out, r.projected_tor);
            out.extend_from_slice(b",\"keys\":{");
            for (j, (name, key)) in r.keys.0.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                json_str(out, name);
                out.push(b':');
                json_int(out, *key);
            }
            out.extend_from_slice(b"},\"reason\":");
            reason.clear();
            r.reason.push(&mut reason);
            if r.reason.is_plain() {
                // Known to need no escaping: copied as it is.
                out.push(b'"');
                out.extend_from_slice(reason.as_bytes());
                out.push(b'"');
            } else {
                json_str(out, &reason);
            }
            out.push(b'}');
        });
        out.extend_from_slice(b",\"excluded\":");
        json_array(out, &self.excluded, |out, x| {
            out.extend_from_slice(b"{\"host\":");
            json_str(out, x.host);
            out.extend_from_slice(b",\"reason\":");
            json_str(out, &x.reason);
            out.push(b'}');
        });
        out.push(b'}');
    }
}

/// Erasure coding of a block.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Erasure {
    /// Data chunks.
    pub data: usize,
    /// Parity chunks.
    pub parity: usize,
}

fn three() -> usize {
    3
}

/// `place/replicas`: where should a block's pieces go.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaRequest {
    /// Block size, bytes.
    pub bytes: f64,
    /// The writing host (its own copy comes first, HDFS-style; `null`: an
    /// external client).
    pub writer: Option<Ref>,
    /// Copies (ignored with `erasure`).
    #[serde(default = "three")]
    pub replicas: usize,
    /// Fault domains (racks) the copies must span (default: 2, HDFS's
    /// rack-aware default, or fewer with fewer copies).
    pub fault_domains: Option<usize>,
    /// Erasure coding instead of copies: one chunk per rack.
    pub erasure: Option<Erasure>,
}

/// One rack as the replica policy saw it.
#[derive(Debug, Clone, Serialize)]
pub struct RackScore {
    /// Rack name.
    pub rack: String,
    /// Its ToR.
    pub tor: String,
    /// What the policy ranks racks by (higher first).
    pub score: f64,
    /// Whether a piece went there.
    pub chosen: bool,
    /// Hosts of the rack that could take a piece.
    pub eligible: usize,
    /// What the score means.
    pub reason: String,
}

/// The answer to `place/replicas`.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaAnswer {
    /// The policy that placed.
    pub policy: String,
    /// Whether telemetry was stale (or absent).
    pub stale: bool,
    /// Why the telemetry-free choice was taken instead, if it was.
    pub fallback: Option<String>,
    /// Hosts of the pieces (the writer's first when it keeps one).
    pub hosts: Vec<String>,
    /// Every rack, best score first.
    pub racks: Vec<RackScore>,
}

fn yes() -> bool {
    true
}

/// A task on a hot ToR.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigrateTask {
    /// The caller's name for it.
    pub id: String,
    /// Its measured outbound rate leaving the rack, bits/s.
    pub rate_bps: f64,
    /// Latency-sensitive tasks are never moved.
    #[serde(default)]
    pub latency_sensitive: bool,
    /// Whether its job may still be disrupted this window.
    #[serde(default = "yes")]
    pub budget_left: bool,
}

/// `migrate`: which tasks to move off a ToR.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigrateRequest {
    /// The ToR.
    pub tor: Ref,
    /// Its tasks.
    pub tasks: Vec<MigrateTask>,
    /// Utilization to bring it below (default: `placement.hot-threshold`).
    pub threshold: Option<f64>,
}

/// One task's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct TaskVerdict {
    /// The caller's name.
    pub id: String,
    /// Whether to move it.
    #[serde(rename = "move")]
    pub moves: bool,
    /// Why.
    pub reason: String,
}

/// The answer to `migrate`.
#[derive(Debug, Clone, Serialize)]
pub struct MigrateAnswer {
    /// The ToR.
    pub tor: String,
    /// Whether telemetry was stale (or absent): nothing moves then.
    pub stale: bool,
    /// Its outbound utilization now.
    pub utilization: f64,
    /// Its outbound rate, bits/s.
    pub rate_bps: f64,
    /// Its uplink capacity, bits/s.
    pub capacity_bps: f64,
    /// The threshold.
    pub threshold: f64,
    /// The tasks to move, in order.
    #[serde(rename = "move")]
    pub moves: Vec<String>,
    /// Utilization once they have moved.
    pub after_utilization: f64,
    /// Every task's verdict.
    pub tasks: Vec<TaskVerdict>,
}

/// One node of a Kubernetes extender call.
#[derive(Debug, Clone, Serialize)]
pub struct NodeVerdict {
    /// Host id.
    pub host: u32,
    /// Passes the filter.
    pub pass: bool,
    /// Priority, 0-10 (the extender protocol's range).
    pub score: u32,
    /// Why.
    pub reason: String,
}

/// The answer to an extender call.
#[derive(Debug, Clone, Serialize)]
pub struct ExtenderAnswer {
    /// Whether telemetry was stale (or absent): every node passes, all
    /// score 0.
    pub stale: bool,
    /// Per host, in the order asked.
    pub nodes: Vec<NodeVerdict>,
}

/// One ToR uplink now.
#[derive(Debug, Clone, Serialize)]
pub struct UplinkNow {
    /// Directed link id.
    pub link: u32,
    /// Source node.
    pub src: String,
    /// Destination node.
    pub dst: String,
    /// Measured rate (`None`: missing from telemetry).
    pub rate_bps: Option<f64>,
    /// Capacity in force.
    pub capacity_bps: f64,
    /// Rate over capacity.
    pub utilization: Option<f64>,
}

/// One ToR now.
#[derive(Debug, Clone, Serialize)]
pub struct TorNow {
    /// Name.
    pub tor: String,
    /// Rack index.
    pub index: u32,
    /// Outbound utilization of its uplinks (`None`: none measured).
    pub utilization: Option<f64>,
    /// Measured outbound rate, bits/s.
    pub rate_bps: f64,
    /// Uplink capacity in force, bits/s.
    pub capacity_bps: f64,
    /// Above the hot threshold in the last snapshot.
    pub above: bool,
    /// Above it in every snapshot for a whole detection window.
    pub hot: bool,
    /// Its uplinks.
    pub uplinks: Vec<UplinkNow>,
}

/// Every ToR now.
#[derive(Debug, Clone, Serialize)]
pub struct TorsAnswer {
    /// Whether telemetry is stale (or absent).
    pub stale: bool,
    /// Age of the snapshot, seconds.
    pub age_s: Option<f64>,
    /// The hot threshold.
    pub hot_threshold: f64,
    /// The detection window, seconds.
    pub detect_s: f64,
    /// ToRs in rack order.
    pub tors: Vec<TorNow>,
}

/// The advisor's state in brief.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// Time of the telemetry snapshot, Unix seconds.
    pub telemetry_at_s: Option<f64>,
    /// Its age, seconds.
    pub age_s: Option<f64>,
    /// Whether it is stale.
    pub stale: bool,
    /// Age at which it becomes stale, seconds.
    pub stale_after_s: f64,
    /// The hot threshold.
    pub hot_threshold: f64,
    /// Task placement policy.
    pub task_policy: String,
    /// Replica placement policy.
    pub replica_policy: String,
    /// Hosts in the datacenter.
    pub hosts: usize,
    /// ToRs.
    pub tors: usize,
    /// Snapshots observed.
    pub snapshots: u64,
}
