//! From a scenario file (plus dotted overrides) to its parts: the sections,
//! a built datacenter and a generated workload.
//!
//! Every mistake is a [`ConfigError`] at `file:line:col` of the text the
//! user wrote. The datacenter and the workload are read by the same loaders
//! as `netheat topo` and `netheat workload generate`, on a document derived
//! from the scenario (the datacenter tables alone, or the workload tables
//! moved to the top level, or a referenced file with the overrides written
//! beside `file`); their errors name a key path, which is located again in
//! the text the key came from. An override (`with_override`, a sweep or a
//! variant) that is wrong is reported against the override itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use netheat_config::locate::Locator;
use netheat_config::{load_topology_str, load_workload_str, ConfigError, Workload};
use netheat_data::DataDir;
use netheat_topology::Topology;
use toml_edit::{DocumentMut, Item, Table, TableLike};

use crate::config::Sections;

/// Top-level tables that describe the datacenter.
const DC_TABLES: &[&str] = &["topology", "hosts", "provisioning", "rack-group", "events"];

/// Where overrides are reported (they have no line of their own).
pub const OVERRIDE_FILE: &str = "<override>";

/// A scenario file as written, plus overrides.
#[derive(Debug, Clone)]
pub struct ScenarioDoc {
    /// Path or name of the file, for messages.
    pub file: String,
    /// Its text.
    pub text: String,
    /// Directory relative paths are resolved against.
    pub base: PathBuf,
    /// Dotted keys and their values, applied in order.
    pub overrides: Vec<(String, toml_edit::Value)>,
}

/// The parts of a scenario.
#[derive(Debug)]
pub struct Parts {
    /// The sections, overrides applied.
    pub sections: Sections,
    /// The datacenter.
    pub topology: Arc<Topology>,
    /// Where the datacenter came from (a path or `inline`).
    pub topology_source: String,
    /// The generated workload.
    pub workload: Workload,
}

impl ScenarioDoc {
    /// Reads a scenario file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { file: file.clone(), source })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Self { file, text, base, overrides: Vec::new() })
    }

    /// A scenario from text; `file` names it in messages.
    pub fn from_text(text: &str, file: &str, base: &Path) -> Self {
        Self { file: file.into(), text: text.into(), base: base.into(), overrides: Vec::new() }
    }

    /// Adds an override of the dotted key `key` (`topology.loop-size`,
    /// `workload.traffic.0.load`) with a TOML value written as text
    /// (`4`, `"adaptive"`, `"10Gbps"`, `[1, 2]`).
    pub fn with_override(mut self, key: &str, value_toml: &str) -> Result<Self, ConfigError> {
        let v: toml_edit::Value = value_toml.trim().parse().map_err(|e: toml_edit::TomlError| {
            override_error(key, format!("`{value_toml}` is not a TOML value: {}", e.message().trim()))
        })?;
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(override_error(key, "a key path is names separated by dots, e.g. `routing.policy`"));
        }
        self.overrides.push((key.to_string(), v));
        Ok(self)
    }

    /// The document with the overrides applied, and the keys they set.
    fn applied(&self) -> Result<DocumentMut, ConfigError> {
        let mut doc: DocumentMut = self.text.parse().map_err(|e: toml_edit::TomlError| {
            let (line, column) = e.span().map(|s| Locator::new(&self.text).line_col(s.start)).unwrap_or((1, 1));
            ConfigError::Invalid {
                file: self.file.clone(),
                line,
                column,
                key: String::new(),
                reason: e.message().trim().to_string(),
            }
        })?;
        for (key, value) in &self.overrides {
            set_path(doc.as_table_mut(), key, value.clone()).map_err(|r| override_error(key, r))?;
        }
        Ok(doc)
    }

    /// An error at key path `key` of this scenario: the override that set
    /// it, else its place in the text.
    pub fn at(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let reason = reason.into();
        if let Some((k, _)) = self.override_of(key) {
            return override_error(k, reason);
        }
        let (line, column) = {
            let loc = Locator::new(&self.text);
            loc.line_col(loc.offset_of(key))
        };
        ConfigError::Invalid { file: self.file.clone(), line, column, key: key.into(), reason }
    }

    /// The override that set `key` or a table holding it.
    fn override_of(&self, key: &str) -> Option<&(String, toml_edit::Value)> {
        let norm = normalize(key);
        self.overrides.iter().rev().find(|(k, _)| {
            let k = normalize(k);
            norm == k
                || norm.starts_with(&format!("{k}."))
                || norm.starts_with(&format!("{k}["))
                || k.starts_with(&format!("{norm}."))
        })
    }

    /// Re-locates an error of a derived document: `map` turns its key path
    /// into this scenario's; the error is placed in the scenario text (or
    /// at the override that set the key).
    fn relocate(&self, e: ConfigError, map: impl Fn(&str) -> String) -> ConfigError {
        match e {
            ConfigError::Invalid { key, reason, line, column, .. } => {
                if key.is_empty() {
                    // A syntax error has no key; the derived text keeps
                    // the scenario's lines for what it copied.
                    return ConfigError::Invalid { file: self.file.clone(), line, column, key, reason };
                }
                self.at(&map(&key), reason)
            }
            other => other,
        }
    }

    /// Places an error of a file the scenario refers to (`file`, its
    /// `text`): at this scenario's key when `table.<k>` was set beside
    /// `file` here (`beside(k)`), else in the file itself.
    fn in_file(
        &self,
        e: ConfigError,
        file: &str,
        text: &str,
        table: &str,
        beside: &dyn Fn(&str) -> bool,
    ) -> ConfigError {
        let ConfigError::Invalid { key, reason, line, column, .. } = e else { return e };
        let top =
            key.strip_prefix(table).and_then(|r| r.strip_prefix('.')).map(|r| r.split(['.', '[']).next().unwrap_or(r));
        if top.is_some_and(beside) {
            return self.at(&key, reason);
        }
        let (line, column) = if key.is_empty() {
            (line, column)
        } else {
            let loc = Locator::new(text);
            loc.line_col(loc.offset_of(&key))
        };
        ConfigError::Invalid { file: file.into(), line, column, key, reason }
    }

    /// Reads the sections, builds the datacenter and generates the workload.
    pub fn parts(&self, data: &DataDir) -> Result<Parts, ConfigError> {
        let doc = self.applied()?;
        let text = doc.to_string();
        let sections: Sections = toml::from_str(&text).map_err(|e| {
            let loc = Locator::new(&text);
            let key = e.span().map(|s| loc.key_at(s.start)).unwrap_or_default();
            let err = netheat_config::toml_error(&text, &self.file, &e);
            match err {
                ConfigError::Invalid { key: k, reason, .. } if !k.is_empty() || !key.is_empty() => {
                    let k = if k.is_empty() { key } else { k };
                    self.at(&k, reason)
                }
                other => other,
            }
        })?;
        let seed = sections.scenario.seed;
        let (topology, topology_source) = self.topology(&doc)?;
        let workload = netheat_core::budget::with_flow_bytes(sections.flow_bytes(), || {
            self.workload(&doc, &topology, seed, data)
        })?;
        Ok(Parts { sections, topology: Arc::new(topology), topology_source, workload })
    }

    fn topology(&self, doc: &DocumentMut) -> Result<(Topology, String), ConfigError> {
        let Some(t) = doc.get("topology").and_then(Item::as_table_like) else {
            return Err(
                self.at("", "a scenario needs a [topology] table: `file = \"dc.toml\"` or the datacenter's keys")
            );
        };
        // `[[topology.rack-group]]` and the like: the datacenter's other
        // tables sit beside `[topology]`, as in a datacenter file.
        for other in DC_TABLES.iter().skip(1) {
            if t.contains_key(other) {
                let header = if *other == "rack-group" || *other == "events" {
                    format!("[[{other}]]")
                } else {
                    format!("[{other}]")
                };
                return Err(self.at(
                    &format!("topology.{other}"),
                    format!("`{other}` is a table of its own, as in a datacenter file: write `{header}` at the top level, beside `[topology]`"),
                ));
            }
        }
        if let Some(file) = t.get("file") {
            let Some(rel) = file.as_str() else {
                return Err(self.at("topology.file", "must be a path string"));
            };
            // Capacity events may come with a datacenter file (after its own).
            for other in DC_TABLES.iter().skip(1).filter(|t| **t != "events") {
                if doc.contains_key(other) {
                    return Err(self.at(
                        other,
                        "the datacenter comes from `topology.file`; put this table in that file, or drop `file` and write the datacenter inline",
                    ));
                }
            }
            let path = self.base.join(rel);
            let shown = path.display().to_string();
            let mut overrides = Table::new();
            for (k, v) in t.iter().filter(|(k, _)| *k != "file") {
                overrides.insert(k, v.clone());
            }
            let events = doc.get("events");
            let topo = netheat_config::load_topology_overridden_with_events(&path, &overrides, events).map_err(
                |e| match e {
                    ConfigError::Io { .. } => self.at("topology.file", format!("cannot read `{shown}`")),
                    ConfigError::Invalid { file, key, reason, .. } if file == netheat_config::OVERRIDE_FILE => {
                        self.at(&key, reason)
                    }
                    other => other,
                },
            )?;
            return Ok((topo, shown));
        }
        let mut dc = DocumentMut::new();
        for name in DC_TABLES {
            if let Some(item) = doc.get(name) {
                dc.insert(name, item.clone());
            }
        }
        let topo = load_topology_str(&dc.to_string(), &self.file).map_err(|e| self.relocate(e, str::to_string))?;
        Ok((topo, "inline".into()))
    }

    fn workload(&self, doc: &DocumentMut, topo: &Topology, seed: u64, data: &DataDir) -> Result<Workload, ConfigError> {
        let Some(w) = doc.get("workload").and_then(Item::as_table_like) else {
            return Err(self.at(
                "",
                "a scenario needs a [workload]: `file = \"w.toml\"`, or [[workload.traffic]] / [[workload.app]] tables",
            ));
        };
        let mut wdoc = DocumentMut::new();
        let mut head = Table::new();
        let (file_text, file_name, base) = if let Some(file) = w.get("file") {
            let Some(rel) = file.as_str() else {
                return Err(self.at("workload.file", "must be a path string"));
            };
            for inline in ["traffic", "app"] {
                if w.contains_key(inline) {
                    return Err(self.at(
                        &format!("workload.{inline}"),
                        "the workload comes from `workload.file`; put these tables in that file, or drop `file`",
                    ));
                }
            }
            let path = self.base.join(rel);
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(&path)
                .map_err(|_| self.at("workload.file", format!("cannot read `{shown}`")))?;
            let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
            (Some(text), shown, base)
        } else {
            (None, self.file.clone(), self.base.clone())
        };
        if let Some(text) = &file_text {
            // The file as written, with `duration`/`description` beside
            // `file` overriding its [workload] keys.
            wdoc = text.parse().map_err(|e: toml_edit::TomlError| ConfigError::Invalid {
                file: file_name.clone(),
                line: 1,
                column: 1,
                key: String::new(),
                reason: e.message().trim().to_string(),
            })?;
            let wt = wdoc.entry("workload").or_insert(Item::Table(Table::new()));
            if let Some(wt) = wt.as_table_like_mut() {
                for (k, v) in w.iter() {
                    if k != "file" {
                        wt.insert(k, v.clone());
                    }
                }
            }
        } else {
            for (k, v) in w.iter() {
                if k == "traffic" || k == "app" {
                    wdoc.insert(k, v.clone());
                } else {
                    head.insert(k, v.clone());
                }
            }
            if !head.is_empty() {
                wdoc.insert("workload", Item::Table(head));
            }
        }
        let derived = wdoc.to_string();
        load_workload_str(&derived, &file_name, &base, topo, seed, data).map_err(|e| match &file_text {
            Some(text) => self.in_file(e, &file_name, text, "workload", &|k| w.contains_key(k)),
            None => {
                self.relocate(e, |k| if k.starts_with("workload") { k.to_string() } else { format!("workload.{k}") })
            }
        })
    }
}

/// `a.b.0.c` and `a.b[0].c` name the same key.
fn normalize(key: &str) -> String {
    let mut out = String::new();
    for part in key.split('.') {
        if !out.is_empty() {
            if part.chars().all(|c| c.is_ascii_digit()) {
                out.push_str(&format!("[{part}]"));
                continue;
            }
            out.push('.');
        }
        out.push_str(part);
    }
    out
}

fn override_error(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { file: OVERRIDE_FILE.into(), line: 1, column: 1, key: key.into(), reason: reason.into() }
}

/// Sets `path` (dots; a number indexes an array of tables) to `value`,
/// creating missing tables; refuses to go through a value.
fn set_path(root: &mut Table, path: &str, value: toml_edit::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    set_parts(root, &parts, 0, value)
}

fn set_parts(t: &mut dyn TableLike, parts: &[&str], at: usize, value: toml_edit::Value) -> Result<(), String> {
    let key = parts[at];
    if at + 1 == parts.len() {
        t.insert(key, Item::Value(value));
        return Ok(());
    }
    if t.get(key).is_none() {
        t.insert(key, Item::Table(Table::new()));
    }
    let item = t.get_mut(key).expect("inserted above");
    let here = parts[..=at].join(".");
    if let Ok(idx) = parts[at + 1].parse::<usize>() {
        let Item::ArrayOfTables(arr) = item else {
            return Err(format!("`{here}` is not an array of tables"));
        };
        let n = arr.len();
        let Some(sub) = arr.get_mut(idx) else {
            return Err(format!("`{here}` has {n} entries; there is no entry {idx}"));
        };
        if at + 2 == parts.len() {
            return Err(format!("`{}` names a whole table; set one of its keys", parts.join(".")));
        }
        return set_parts(sub, parts, at + 2, value);
    }
    let Some(sub) = item.as_table_like_mut() else {
        return Err(format!("`{here}` is a value, not a table"));
    };
    set_parts(sub, parts, at + 1, value)
}
