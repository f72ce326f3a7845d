//! The Kubernetes scheduler extender protocol (`k8s.io/kube-scheduler/extender/v1`):
//! an `ExtenderArgs` body in, an `ExtenderFilterResult` or a `HostPriorityList`
//! out, decided by [`Advisor::extender`].
//!
//! Those Go types carry no JSON tags, so their keys are the Go field names:
//! `{"Pod", "Nodes", "NodeNames"}` in; `{"Nodes", "NodeNames", "FailedNodes",
//! "FailedAndUnresolvableNodes", "Error"}` and `[{"Host", "Score"}]` out,
//! scores within 0..[`MAX_EXTENDER_PRIORITY`]. Go's decoder matches keys
//! ignoring case, so older schedulers' lower-case keys are accepted too.
//!
//! `Nodes` is a full `v1.NodeList` (sent when the extender is not
//! `nodeCacheCapable`): only `items[].metadata.name` and `.labels` are read,
//! and a filter answer returns the passing items as they came. `NodeNames`
//! (`nodeCacheCapable: true`) is a list of names. A node is a datacenter host
//! by its name, or by the value of the node label
//! [`ExtenderOptions::node_label`] (which needs full Nodes; with names only,
//! by name); a host id written as digits is accepted wherever a host is
//! named. The pod's network demand is the bandwidth in its annotation
//! [`ExtenderOptions::demand_annotation`] (none: 0).
//!
//! The whole call is here, in one pass over the body, because the scheduler
//! calls it at its own rate (docs/serve.md, load benchmark).

use serde_json::{Map, Value};

use crate::{Advisor, AdvisorError};

/// `MaxExtenderPriority` of the extender API: scores are 0..10.
pub const MAX_EXTENDER_PRIORITY: u32 = 10;

/// The annotation that carries a pod's network demand unless configured otherwise.
pub const DEFAULT_DEMAND_ANNOTATION: &str = "netheat.io/network-demand";

/// How Kubernetes objects map to the datacenter.
#[derive(Debug, Clone)]
pub struct ExtenderOptions {
    /// Node label whose value names the node's datacenter host (`None`: the node's name does).
    pub node_label: Option<String>,
    /// Pod annotation holding its network demand (`"2Gbps"`).
    pub demand_annotation: String,
    /// The datacenter file, for messages.
    pub datacenter: String,
}

impl Default for ExtenderOptions {
    fn default() -> Self {
        Self { node_label: None, demand_annotation: DEFAULT_DEMAND_ANNOTATION.into(), datacenter: String::new() }
    }
}

/// An answer, and the warning to log when some nodes map to no host.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtenderReply {
    /// The answer's JSON text.
    pub json: String,
    /// One line about the nodes that map to no datacenter host, if any.
    pub warning: Option<String>,
}

/// What the service reads of an `ExtenderArgs`.
struct Args {
    /// `namespace/name` of the pod, for messages.
    pod: String,
    demand_bps: f64,
    /// Candidate node names, in the order sent.
    names: Vec<String>,
    /// Each node's host key: its name, or its label's value (`None`: no such label).
    keys: Vec<Option<String>>,
    by_label: bool,
    /// The `NodeList` as sent (full form).
    node_list: Option<Map<String, Value>>,
}

/// A call's arguments with its nodes mapped to hosts.
struct Call {
    args: Args,
    /// Host of each node, in the order sent (`None`: maps to none).
    hosts: Vec<Option<u32>>,
    /// The mapped hosts alone, in order.
    mapped: Vec<u32>,
    /// Each unmapped node and why.
    unmapped: Vec<(String, String)>,
    warning: Option<String>,
}

fn malformed(msg: impl Into<String>) -> AdvisorError {
    AdvisorError::Malformed(msg.into())
}

/// `doc[name]`, else a key equal to `name` ignoring case (as Go's encoding/json decodes).
fn field<'a>(doc: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    doc.get(name).or_else(|| doc.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

/// A JSON value's type as Python names it (the messages predate this module).
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// A request body as a JSON object: [`AdvisorError::Malformed`] if it is not JSON or not an object.
pub fn json_object(body: &[u8]) -> Result<Map<String, Value>, AdvisorError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(malformed(format!("the body must be a JSON object, got {}", type_name(&other)))),
        Err(e) => Err(malformed(format!("malformed JSON: {e}"))),
    }
}

fn pod_demand(pod: &Map<String, Value>, annotation: &str) -> Result<(String, f64), AdvisorError> {
    let meta = pod.get("metadata").and_then(Value::as_object);
    let text = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty());
    let who = format!("{}/{}", text("namespace").unwrap_or("default"), text("name").unwrap_or("?"));
    let value = meta.and_then(|m| m.get("annotations")).and_then(Value::as_object).and_then(|a| a.get(annotation));
    match value {
        None | Some(Value::Null) => Ok((who, 0.0)),
        Some(Value::String(s)) => match netheat_core::units::parse_bandwidth(s) {
            Ok(bps) => Ok((who, bps)),
            Err(e) => Err(AdvisorError::Request(format!("pod {who}: annotation {annotation}: {e}"))),
        },
        Some(other) => Err(AdvisorError::Request(format!(
            "pod {who}: annotation {annotation} must be a string such as \"2Gbps\", got {other}"
        ))),
    }
}

fn parse_args(body: &[u8], opts: &ExtenderOptions) -> Result<Args, AdvisorError> {
    let doc = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(malformed("ExtenderArgs must be a JSON object with Pod and Nodes or NodeNames")),
        Err(e) => return Err(malformed(format!("malformed JSON: {e}"))),
    };
    let Some(Value::Object(pod)) = field(&doc, "Pod") else {
        return Err(malformed("ExtenderArgs has no Pod object"));
    };
    let (pod, demand_bps) = pod_demand(pod, &opts.demand_annotation)?;
    match (field(&doc, "Nodes"), field(&doc, "NodeNames")) {
        (Some(nodes), _) if !nodes.is_null() => {
            let Value::Object(list) = nodes else {
                return Err(malformed("ExtenderArgs.Nodes must be a NodeList object with items"));
            };
            let items: &[Value] = match list.get("items") {
                None | Some(Value::Null) => &[],
                Some(Value::Array(a)) => a,
                Some(_) => return Err(malformed("ExtenderArgs.Nodes.items must be a list of Node objects")),
            };
            let label = opts.node_label.as_deref();
            let mut names = Vec::with_capacity(items.len());
            let mut keys = Vec::with_capacity(items.len());
            for (i, node) in items.iter().enumerate() {
                let meta = node.get("metadata").and_then(Value::as_object);
                let Some(name) = meta.and_then(|m| m.get("name")).and_then(Value::as_str) else {
                    return Err(malformed(format!("ExtenderArgs.Nodes.items[{i}] has no metadata.name")));
                };
                keys.push(match label {
                    None => Some(name.to_owned()),
                    Some(l) => meta
                        .and_then(|m| m.get("labels"))
                        .and_then(Value::as_object)
                        .and_then(|ls| ls.get(l))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                });
                names.push(name.to_owned());
            }
            Ok(Args { pod, demand_bps, names, keys, by_label: label.is_some(), node_list: Some(list.clone()) })
        }
        (_, Some(node_names)) if !node_names.is_null() => {
            let names: Option<Vec<String>> = node_names
                .as_array()
                .and_then(|a| a.iter().map(|n| n.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>());
            let Some(names) = names else {
                return Err(malformed("ExtenderArgs.NodeNames must be a list of node names"));
            };
            let keys = names.iter().cloned().map(Some).collect();
            Ok(Args { pod, demand_bps, names, keys, by_label: false, node_list: None })
        }
        _ => Err(malformed("ExtenderArgs has neither Nodes nor NodeNames")),
    }
}

impl Advisor {
    /// Host of each node (`None` if it maps to none) and, for those, why.
    fn map_nodes(&self, args: &Args, opts: &ExtenderOptions) -> (Vec<Option<u32>>, Vec<(String, String)>) {
        let mut unmapped = Vec::new();
        let hosts = args
            .names
            .iter()
            .zip(&args.keys)
            .map(|(name, key)| {
                // Exact names (and host ids written as digits) only: no trimming.
                let host = key.as_deref().filter(|k| k.trim() == *k).and_then(|k| self.topology().host_ref(k));
                if host.is_none() {
                    let dc = &opts.datacenter;
                    let label = opts.node_label.as_deref().unwrap_or_default();
                    let why = match key {
                        _ if !args.by_label => {
                            format!("node {name} is not a host of {dc} (hosts are named like r0h0)")
                        }
                        None => format!("node {name} has no label {label}, which names its datacenter host"),
                        Some(k) => format!("node {name}: label {label}={k} names no host of {dc}"),
                    };
                    unmapped.push((name.clone(), format!("netheat: {why}")));
                }
                host
            })
            .collect();
        (hosts, unmapped)
    }

    /// What both calls start with: the arguments read, the nodes mapped.
    fn call(&self, verb: &str, body: &[u8], opts: &ExtenderOptions) -> Result<Call, AdvisorError> {
        let args = parse_args(body, opts)?;
        let (hosts, unmapped) = self.map_nodes(&args, opts);
        let warning = Self::unmapped_warning(verb, &args, &unmapped);
        let mapped = hosts.iter().flatten().copied().collect();
        Ok(Call { args, hosts, mapped, unmapped, warning })
    }

    fn unmapped_warning(verb: &str, args: &Args, unmapped: &[(String, String)]) -> Option<String> {
        let (_, first) = unmapped.first()?;
        let mut shown: Vec<&str> = unmapped.iter().take(5).map(|(n, _)| n.as_str()).collect();
        if unmapped.len() > 5 {
            shown.push("...");
        }
        Some(format!(
            "scheduler/{verb}: pod {}: {} of {} node(s) map to no datacenter host ({}): {}",
            args.pod,
            unmapped.len(),
            args.names.len(),
            shown.join(", "),
            first.strip_prefix("netheat: ").unwrap_or(first)
        ))
    }

    /// `POST /scheduler/filter`: the `ExtenderFilterResult` for an
    /// `ExtenderArgs` body. Nodes whose ToR is hot, or would be with the
    /// pod's demand, fail with the reason; nodes that map to no host fail too.
    pub fn extender_filter_json(
        &self,
        now_s: f64,
        body: &[u8],
        opts: &ExtenderOptions,
    ) -> Result<ExtenderReply, AdvisorError> {
        let Call { args, hosts, mapped, unmapped, warning } = self.call("filter", body, opts)?;
        let answer = self.extender(now_s, &mapped, args.demand_bps)?;
        let mut verdicts = answer.nodes.into_iter();
        let mut failed: Map<String, Value> = unmapped.into_iter().map(|(n, why)| (n, Value::String(why))).collect();
        let mut passing = Vec::new();
        for (i, (name, h)) in args.names.iter().zip(&hosts).enumerate() {
            if h.is_none() {
                continue;
            }
            let v = verdicts.next().expect("one verdict per mapped host");
            if v.pass {
                passing.push(i);
            } else {
                failed.insert(name.clone(), Value::String(format!("netheat: {}", v.reason)));
            }
        }
        let (nodes, node_names) = match args.node_list {
            Some(mut list) => {
                let items = match list.remove("items") {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                let kept: Vec<Value> = items
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| passing.binary_search(i).is_ok())
                    .map(|(_, v)| v)
                    .collect();
                list.insert("items".into(), Value::Array(kept));
                (Value::Object(list), Value::Null)
            }
            None => {
                (Value::Null, Value::Array(passing.iter().map(|&i| Value::String(args.names[i].clone())).collect()))
            }
        };
        let mut out = Map::new();
        out.insert("Nodes".into(), nodes);
        out.insert("NodeNames".into(), node_names);
        out.insert("FailedNodes".into(), Value::Object(failed));
        out.insert("FailedAndUnresolvableNodes".into(), Value::Object(Map::new()));
        out.insert("Error".into(), Value::String(String::new()));
        Ok(ExtenderReply { json: Value::Object(out).to_string(), warning })
    }

    /// `POST /scheduler/prioritize`: the `HostPriorityList` for an
    /// `ExtenderArgs` body, the advisor's 0..10 score per node in the order
    /// sent, 0 for nodes that map to no host.
    pub fn extender_prioritize_json(
        &self,
        now_s: f64,
        body: &[u8],
        opts: &ExtenderOptions,
    ) -> Result<ExtenderReply, AdvisorError> {
        let Call { args, hosts, mapped, warning, .. } = self.call("prioritize", body, opts)?;
        let mut scores = self.extender_scores(now_s, &mapped, args.demand_bps)?.into_iter();
        let mut json = String::with_capacity(2 + args.names.len() * 32);
        json.push('[');
        for (i, (name, h)) in args.names.iter().zip(&hosts).enumerate() {
            let score = if h.is_some() { scores.next().unwrap_or(0).min(MAX_EXTENDER_PRIORITY) } else { 0 };
            if i > 0 {
                json.push(',');
            }
            json.push_str("{\"Host\":");
            json.push_str(&Value::String(name.clone()).to_string());
            json.push_str(",\"Score\":");
            json.push_str(&score.to_string());
            json.push('}');
        }
        json.push(']');
        Ok(ExtenderReply { json, warning })
    }
}
