//! Mapping between byte offsets of a TOML document and key paths.
//!
//! Serde errors carry a byte span but not always the key; validation errors
//! carry the key but no span. Both are located on the parsed document, which
//! keeps the spans of every key and value.

use toml_edit::{ImDocument, Item, Table, Value};

/// A parsed document that can answer "where is this key" and "which key is
/// at this offset".
pub struct Locator<'a> {
    text: &'a str,
    doc: Option<ImDocument<&'a str>>,
}

/// One step of a key path.
enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

fn parse_path(path: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        match part.find('[') {
            Some(i) => {
                out.push(Step::Key(&part[..i]));
                for idx in part[i..].split('[').skip(1) {
                    if let Ok(n) = idx.trim_end_matches(']').parse() {
                        out.push(Step::Index(n));
                    }
                }
            }
            None => out.push(Step::Key(part)),
        }
    }
    out
}

impl<'a> Locator<'a> {
    /// Parses `text`; a document that does not parse locates nothing.
    pub fn new(text: &'a str) -> Self {
        Self { text, doc: ImDocument::parse(text).ok() }
    }

    /// 1-based (line, column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
        (line, col)
    }

    /// Byte offset of a key path (`topology.loop-size`,
    /// `rack-group[1].racks`): the key itself if present, else the closest
    /// enclosing key or table that exists.
    pub fn offset_of(&self, path: &str) -> usize {
        let Some(doc) = &self.doc else { return 0 };
        let mut best = 0;
        let mut item: Option<&Item> = None;
        let mut table: Option<&Table> = Some(doc.as_table());
        let mut value: Option<&Value> = None;
        for step in parse_path(path) {
            match step {
                Step::Key(k) => {
                    let found = if let Some(t) = table {
                        t.get_key_value(k).map(|(key, it)| (key.span(), Some(it), None))
                    } else if let Some(Value::InlineTable(t)) = value {
                        t.get_key_value(k).map(|(key, v)| (key.span(), None, v.as_value()))
                    } else {
                        None
                    };
                    let Some((span, it, v)) = found else { break };
                    if let Some(s) = span {
                        best = s.start;
                    }
                    item = it;
                    value = v;
                    table = it.and_then(|i| i.as_table());
                    if let Some(Item::Value(v)) = it {
                        value = Some(v);
                    }
                }
                Step::Index(n) => {
                    if let Some(Item::ArrayOfTables(a)) = item {
                        let Some(t) = a.get(n) else { break };
                        if let Some(s) = t.span() {
                            best = s.start;
                        }
                        table = Some(t);
                        item = None;
                        value = None;
                    } else if let Some(Value::Array(a)) = value {
                        let Some(v) = a.get(n) else { break };
                        if let Some(s) = v.span() {
                            best = s.start;
                        }
                        value = Some(v);
                        table = None;
                        item = None;
                    } else {
                        break;
                    }
                }
            }
        }
        best
    }

    /// The innermost key path whose key or value covers `offset`.
    pub fn key_at(&self, offset: usize) -> String {
        let Some(doc) = &self.doc else { return String::new() };
        let mut path = String::new();
        walk_table(doc.as_table(), offset, &mut path);
        path
    }
}

fn covers(span: Option<std::ops::Range<usize>>, offset: usize) -> bool {
    span.is_some_and(|s| s.start <= offset && offset < s.end.max(s.start + 1))
}

fn push_key(path: &mut String, k: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(k);
}

fn walk_table(t: &Table, offset: usize, path: &mut String) -> bool {
    for (key, item) in t.iter() {
        let kspan = t.key(key).and_then(|k| k.span());
        let mark = path.len();
        match item {
            Item::Table(sub) => {
                push_key(path, key);
                if walk_table(sub, offset, path) || covers(kspan, offset) {
                    return true;
                }
            }
            Item::ArrayOfTables(a) => {
                for (i, sub) in a.iter().enumerate() {
                    push_key(path, key);
                    path.push_str(&format!("[{i}]"));
                    if walk_table(sub, offset, path) {
                        return true;
                    }
                    path.truncate(mark);
                }
            }
            Item::Value(v) => {
                push_key(path, key);
                if covers(kspan, offset) || walk_value(v, offset, path) {
                    return true;
                }
            }
            Item::None => {}
        }
        path.truncate(mark);
    }
    false
}

fn walk_value(v: &Value, offset: usize, path: &mut String) -> bool {
    if !covers(v.span(), offset) {
        return false;
    }
    match v {
        Value::InlineTable(t) => {
            for (key, sub) in t.iter() {
                let mark = path.len();
                push_key(path, key);
                let kspan = t.key(key).and_then(|k| k.span());
                if covers(kspan, offset) || walk_value(sub, offset, path) {
                    return true;
                }
                path.truncate(mark);
            }
        }
        Value::Array(a) => {
            for (i, sub) in a.iter().enumerate() {
                let mark = path.len();
                path.push_str(&format!("[{i}]"));
                if walk_value(sub, offset, path) {
                    return true;
                }
                path.truncate(mark);
            }
        }
        _ => {}
    }
    true
}
