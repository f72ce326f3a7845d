//! The context every config loader reports errors through: the file name and
//! a [`Locator`] over its text, so a key path becomes `file:line:col`.

use crate::error::ConfigError;
use crate::locate::Locator;

/// File name and locator of the config being read.
pub(crate) struct Cx<'a> {
    pub(crate) file: &'a str,
    pub(crate) locator: Locator<'a>,
}

/// Checks that an integer key is at least `min` and converts it.
pub(crate) fn count(cx: &Cx, key: &str, v: i64, min: i64) -> Result<usize, ConfigError> {
    if v < min {
        return Err(cx.at(key, format!("must be at least {min}, got {v}")));
    }
    Ok(v as usize)
}

impl<'a> Cx<'a> {
    /// A context over `text`, read from `file`.
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Self { file, locator: Locator::new(text) }
    }

    /// An error at the dotted key path `key` (`traffic[0].load`).
    pub(crate) fn at(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let (line, column) = self.locator.line_col(self.locator.offset_of(key));
        ConfigError::Invalid { file: self.file.to_string(), line, column, key: key.to_string(), reason: reason.into() }
    }

    /// A deserialisation error, located by its span and phrased for users.
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let (line, column) = self.locator.line_col(offset);
        let mut reason = e.message().trim().to_string();
        let mut key = self.locator.key_at(offset);
        if let Some(rest) = reason.strip_prefix("unknown field `") {
            // Serde names the field; point the key at it and keep the list of valid ones.
            if let Some((field, tail)) = rest.split_once('`') {
                if !key.ends_with(field) {
                    key = if key.is_empty() { field.to_string() } else { format!("{key}.{field}") };
                }
                reason = format!("unknown key{}", tail.replacen(", expected", "; expected", 1));
            }
        }
        if reason.starts_with("missing field `") {
            reason = reason.replacen("missing field", "missing required key", 1);
        }
        ConfigError::Invalid { file: self.file.to_string(), line, column, key, reason }
    }
}
