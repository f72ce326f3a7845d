//! The registry of experiment point kinds: one definition per parameter.
//!
//! Each paper experiment kind (`baraat`) declares its parameters once, as a serde
//! struct next to its implementation (kebab-case keys, unknown keys
//! rejected, every key defaulted, a doc comment per key that becomes its
//! description in the JSON Schema), and one [`PointKind`] entry beside it
//! built with [`point_kind!`](crate::point_kind). [`KINDS`] lists those
//! entries; the Python binding has one entry point (`run_point(kind,
//! params_json, seed)`) and derives each kind's parameter list (name, type,
//! default, help) from [`PointKind::schema`].
//!
//! Unit-bearing keys ([`bandwidth`], [`bytes`], [`duration`]) accept a
//! number in SI units or a unit string (`"10Gbps"`, `"256MiB"`, `"5min"`,
//! read by `netheat_config::units`); the schema marks them with `format`
//! `bandwidth`, `bytes` or `duration` (`path` for file paths).

use std::path::PathBuf;

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, RootSchema, Schema, SchemaObject, SingleOrVec};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// What can go wrong with a point.
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    /// No kind of that tag.
    #[error("unknown point kind {kind:?}; known: {known}")]
    UnknownKind {
        /// The tag asked for.
        kind: String,
        /// The registered tags.
        known: String,
    },
    /// A parameter that is not one of the kind's, or whose value is wrong.
    #[error("key `{key}`: {reason}")]
    Param {
        /// The parameter's name.
        key: String,
        /// Why it is rejected.
        reason: String,
    },
    /// The parameters are not a JSON object.
    #[error("point parameters: {0}")]
    Json(String),
    /// A datacenter file (or one of its overrides) that cannot be used.
    #[error(transparent)]
    Config(#[from] netheat_config::ConfigError),
    /// Parameters the kind rejects as a whole (an unknown policy...): the
    /// policy crate's own error, chained.
    #[error(transparent)]
    Input(Cause),
    /// A simulation that could not run.
    #[error(transparent)]
    Engine(Cause),
    /// A dataset that is missing or malformed.
    #[error(transparent)]
    Data(Cause),
}

/// The error of the crate a point calls, kept whole (message and source
/// chain) under the [`PointError`] class that says whose fault it is.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// One column of an output table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// 64-bit floats.
    F64(Vec<f64>),
    /// Signed 64-bit integers.
    I64(Vec<i64>),
    /// Unsigned 64-bit integers.
    U64(Vec<u64>),
    /// Unsigned 32-bit integers.
    U32(Vec<u32>),
    /// Signed 32-bit integers.
    I32(Vec<i32>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings.
    Str(Vec<String>),
}

/// A table: named columns, in order.
pub type Table = Vec<(String, Column)>;

/// What one point produced: its values (the numbers metrics aggregate, in
/// the order the kind reports them), tables, notes for the user, and
/// `extra` numbers the Python side needs to finish the tables (not values).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointOutput {
    /// Name -> number.
    pub values: Vec<(String, f64)>,
    /// Output kind (`tasks`, `series`...) -> table.
    pub tables: Vec<(String, Table)>,
    /// What the user should know about the point.
    pub notes: Vec<String>,
    /// Numbers that are not values (`window_s`...).
    pub extra: Vec<(String, f64)>,
}

/// Where a point looks for data files (traces).
#[derive(Debug, Clone, Default)]
pub struct PointEnv {
    /// Project roots tried after the one found from the current directory
    /// (see `netheat_data::DataDir::resolve_with`).
    pub extra_roots: Vec<PathBuf>,
}

impl PointEnv {
    /// The data directory: `flag` > `$NETHEAT_DATA` > `shared/data` under a root.
    pub fn data_dir(&self, flag: Option<&std::path::Path>) -> netheat_data::DataDir {
        netheat_data::DataDir::resolve_with(flag, std::env::var_os(netheat_data::ENV_VAR), &self.extra_roots)
    }
}

/// The topology overrides of a point: `topology.<key>` parameters, as a
/// TOML table (`<key>` -> value).
pub type TopologyOverrides = toml_edit::Table;

/// A registered point kind: its tag, the JSON Schema of its parameters,
/// and how to check and run a point.
pub struct PointKind {
    /// The tag experiment files name (`kind = "baraat"`).
    pub tag: &'static str,
    /// Parameters without a usable default (the Python loader requires them).
    pub required: &'static [&'static str],
    /// The JSON Schema of the parameters (see [`params_schema`]).
    pub schema: fn() -> Value,
    /// The default parameters, serialized.
    pub defaults: fn() -> Value,
    /// Parses the parameters (after [`check_keys`]) without running; returns
    /// them serialized back (units in SI, defaults filled in).
    pub check: fn(Value) -> Result<Value, PointError>,
    /// Runs one point: parameters, topology overrides, seed, environment.
    pub run: fn(Value, &TopologyOverrides, u64, &PointEnv) -> Result<PointOutput, PointError>,
}

/// Writes a kind's [`PointKind`] entry from its tag, its parameter struct
/// and its run function `fn(P, &TopologyOverrides, u64, &PointEnv) ->
/// Result<PointOutput, PointError>`.
#[macro_export]
macro_rules! point_kind {
    ($tag:literal, $params:ty, $run:path) => {
        $crate::point_kind!($tag, $params, $run, required = []);
    };
    ($tag:literal, $params:ty, $run:path, required = [$($req:literal),*]) => {
        /// This kind's entry of [`crate::points::KINDS`].
        pub const POINT: $crate::points::PointKind = $crate::points::PointKind {
            tag: $tag,
            required: &[$($req),*],
            schema: || $crate::points::params_schema::<$params>(&[$($req),*]),
            defaults: || serde_json::to_value(<$params>::default()).unwrap_or_default(),
            check: |v| {
                $crate::points::parse::<$params>(v)
                    .and_then(|p| serde_json::to_value(p).map_err(|e| $crate::points::PointError::Json(e.to_string())))
            },
            run: |v, o, seed, env| $run($crate::points::parse::<$params>(v)?, o, seed, env),
        };
    };
}

/// Every registered point kind.
pub const KINDS: &[&PointKind] = &[&crate::baraat::point::POINT];

/// The kind registered under `tag`.
pub fn kind(tag: &str) -> Result<&'static PointKind, PointError> {
    KINDS.iter().copied().find(|k| k.tag == tag).ok_or_else(|| PointError::UnknownKind {
        kind: tag.to_string(),
        known: KINDS.iter().map(|k| k.tag).collect::<Vec<_>>().join(", "),
    })
}

/// The registered tags, in registry order.
pub fn tags() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.tag).collect()
}

/// The JSON Schema of `P` (a kind's parameter struct) with every
/// property's default filled in from `P::default()` and `required` listed.
pub fn params_schema<P: schemars::JsonSchema + Serialize + Default>(required: &[&str]) -> Value {
    let s = schemars::gen::SchemaSettings::draft07().with(|s| s.inline_subschemas = false);
    let root: RootSchema = s.into_generator().into_root_schema_for::<P>();
    let mut v = serde_json::to_value(&root).unwrap_or_default();
    let defaults = serde_json::to_value(P::default()).unwrap_or_default();
    if let (Some(props), Some(d)) = (v.get_mut("properties").and_then(Value::as_object_mut), defaults.as_object()) {
        for (k, prop) in props.iter_mut() {
            if let (Some(o), Some(x)) = (prop.as_object_mut(), d.get(k)) {
                if required.contains(&k.as_str()) {
                    o.remove("default");
                } else {
                    o.insert("default".into(), x.clone());
                }
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.insert("required".into(), Value::from(required.to_vec()));
    }
    v
}

/// The property names of a schema from [`params_schema`].
pub fn schema_keys(schema: &Value) -> Vec<String> {
    schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// Deserializes one kind's parameters; a value that does not fit names its key.
pub fn parse<P: DeserializeOwned>(v: Value) -> Result<P, PointError> {
    match serde_json::from_value::<P>(v.clone()) {
        Ok(p) => Ok(p),
        Err(e) => {
            // Every key has a default: the key that fails alone is the culprit.
            if let Value::Object(m) = v {
                for (k, x) in m {
                    let one = Value::Object(Map::from_iter([(k.clone(), x)]));
                    if let Err(e) = serde_json::from_value::<P>(one) {
                        return Err(PointError::Param { key: k, reason: e.to_string() });
                    }
                }
            }
            Err(PointError::Json(e.to_string()))
        }
    }
}

/// Splits a point's parameters into the kind's own keys and its
/// `topology.<key>` overrides (for kinds with a `topology` key); an unknown
/// key is an error naming the closest valid one.
pub fn check_keys(kind: &PointKind, params: Value) -> Result<(Value, TopologyOverrides), PointError> {
    let Value::Object(m) = params else {
        return Err(PointError::Json("expected a JSON object of parameters".into()));
    };
    let keys = schema_keys(&(kind.schema)());
    let has_topology = keys.iter().any(|k| k == "topology");
    let mut own = Map::new();
    let mut overrides = TopologyOverrides::new();
    for (k, v) in m {
        if keys.contains(&k) {
            own.insert(k, v);
        } else if let Some(key) = k.strip_prefix("topology.").filter(|s| has_topology && !s.is_empty()) {
            let value = toml_value(&v)
                .ok_or_else(|| PointError::Param { key: k.clone(), reason: format!("{v} is not a TOML value") })?;
            overrides.insert(key, toml_edit::Item::Value(value));
        } else {
            let hint = netheat_config::closest_name(&k, keys.iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(PointError::Param {
                key: k.clone(),
                reason: format!("unknown parameter of point kind {:?}{hint} (valid: {})", kind.tag, keys.join(", ")),
            });
        }
    }
    Ok((Value::Object(own), overrides))
}

fn toml_value(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => a.iter().map(toml_value).collect::<Option<toml_edit::Array>>()?.into(),
        _ => return None,
    })
}

/// Checks a point's parameters (keys, types, units) without running it;
/// returns the kind's own parameters as read (SI units, defaults filled in).
pub fn check_point(tag: &str, params: Value) -> Result<Value, PointError> {
    let k = kind(tag)?;
    let (own, _) = check_keys(k, params)?;
    (k.check)(own)
}

/// Runs one point of kind `tag` with `params` (a JSON object) and `seed`.
pub fn run_point(tag: &str, params: Value, seed: u64, env: &PointEnv) -> Result<PointOutput, PointError> {
    let k = kind(tag)?;
    let (own, overrides) = check_keys(k, params)?;
    (k.run)(own, &overrides, seed, env)
}

/// The JSON Schema of kind `tag`'s parameters.
pub fn schema(tag: &str) -> Result<Value, PointError> {
    Ok((kind(tag)?.schema)())
}

/// The JSON Schema of a file path.
pub fn path_schema(_: &mut SchemaGenerator) -> Schema {
    Schema::Object(SchemaObject {
        instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::String))),
        format: Some("path".into()),
        ..Default::default()
    })
}

pub use netheat_config::units::si::{bandwidth, bytes, duration};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_round_trips_its_defaults_and_documents_every_key() {
        let tags = tags();
        assert_eq!(tags, ["baraat"]);
        for k in KINDS {
            let defaults = (k.defaults)();
            let fields: Vec<String> = defaults.as_object().unwrap().keys().cloned().collect();
            let schema = (k.schema)();
            // The schema lists every field of the struct (flattened ones included), no more.
            assert_eq!(schema_keys(&schema), fields, "{}", k.tag);
            for (name, prop) in schema["properties"].as_object().unwrap() {
                let d = prop.get("description").and_then(Value::as_str).unwrap_or("");
                assert!(!d.trim().is_empty(), "{}: `{name}` has no description", k.tag);
                if !k.required.contains(&name.as_str()) {
                    assert_eq!(prop.get("default"), Some(&defaults[name]), "{}: `{name}`", k.tag);
                }
            }
            // Serialized defaults read back to the same parameters.
            assert_eq!((k.check)(defaults.clone()).unwrap(), defaults, "{}", k.tag);
        }
    }

    #[test]
    fn unknown_key_names_the_closest_valid_one() {
        let e = check_point("baraat", json!({"host-lnik": 1e9})).unwrap_err();
        match e {
            PointError::Param { key, reason } => {
                assert_eq!(key, "host-lnik");
                assert!(reason.contains("did you mean `host-link`?"), "{reason}");
            }
            other => panic!("{other}"),
        }
        assert!(matches!(kind("baraats"), Err(PointError::UnknownKind { .. })));
    }

    #[test]
    fn unit_strings_and_si_numbers_are_both_accepted() {
        // 10 Gbps = 1e10 bit/s; 5 min = 300 s.
        let p = check_point("baraat", json!({"host-link": "10Gbps", "compute": "5min"})).unwrap();
        assert_eq!((p["host-link"].as_f64(), p["compute"].as_f64()), (Some(1e10), Some(300.0)));
        // A wrong unit or a wrong type names its key.
        for (bad, key) in [(json!({"host-link": "10 parsecs"}), "host-link"), (json!({"pods": "many"}), "pods")] {
            match check_point("baraat", bad).unwrap_err() {
                PointError::Param { key: k, .. } => assert_eq!(k, key),
                other => panic!("{other}"),
            }
        }
    }

    #[test]
    fn closest_names_a_near_key() {
        use netheat_config::closest_name;
        assert_eq!(closest_name("host-lnik", ["host-link", "hosts-per-rack", "load"]), Some("host-link"));
        assert_eq!(closest_name("zzzzzzzz", ["load"]), None);
    }
}
