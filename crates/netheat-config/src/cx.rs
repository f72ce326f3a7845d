//! The context every config loader reports errors through: the file name and
//! a [`Locator`] over its text, so a key path becomes `file:line:col`.

use netheat_core::{clip, clip_words};

use crate::error::ConfigError;
use crate::locate::Locator;

/// Longest word of a reason (a run of characters without white space,
/// e.g. a quoted value; longer ones are cut with `…`). Long enough for
/// paths; units and generators quote at most 60 characters of a value
/// themselves.
const QUOTE: usize = 160;

/// Longest reason of a message.
const MAX_REASON: usize = 400;

/// Longest key path of a message.
const MAX_KEY: usize = 100;

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
    /// Words of the reason are cut to [`QUOTE`] characters and the reason
    /// to [`MAX_REASON`] (see [`netheat_core::clip_words`]).
    pub(crate) fn at(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let (line, column) = self.locator.line_col(self.locator.offset_of(key));
        ConfigError::Invalid {
            file: self.file.to_string(),
            line,
            column,
            key: clip(key, MAX_KEY),
            reason: clip_words(&reason.into(), QUOTE, MAX_REASON),
        }
    }

    /// A deserialisation error, located by its span and phrased for users.
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let (line, column) = self.locator.line_col(offset);
        let mut reason = e.message().trim().to_string();
        if reason.is_empty() {
            // The parser names nothing for some mistakes (a key without a
            // value, a control character).
            reason = "this is not valid TOML: a value is missing or a character is not allowed here".into();
        }
        let mut key = self.locator.key_at(offset);
        if let Some(rest) = reason.strip_prefix("unknown field `") {
            // Serde names the field; point the key at it and keep the list of valid ones.
            if let Some((field, tail)) = rest.split_once('`') {
                if !key.ends_with(field) {
                    key = if key.is_empty() { field.to_string() } else { format!("{key}.{field}") };
                }
                reason = match closest(field, tail) {
                    Some(best) => {
                        format!("unknown key; did you mean `{best}`?{}", tail.replacen(", expected", " Expected", 1))
                    }
                    None => format!("unknown key{}", tail.replacen(", expected", "; expected", 1)),
                };
            }
        }
        if reason.starts_with("missing field `") {
            reason = reason.replacen("missing field", "missing required key", 1);
        }
        ConfigError::Invalid {
            file: self.file.to_string(),
            line,
            column,
            key: clip(&key, MAX_KEY),
            reason: clip_words(&reason, QUOTE, MAX_REASON),
        }
    }
}

/// The valid key closest to `field` among those serde lists in `tail`
/// (`, expected one of `a`, `b``), if one is close enough to be a typo:
/// at most a third of its letters edited (and at least one allowed).
fn closest(field: &str, tail: &str) -> Option<String> {
    closest_name(field, tail.split('`').skip(1).step_by(2)).map(str::to_string)
}

/// The name among `valid` closest to `key`, if one is close enough to be a
/// typo: at most a third of its letters edited (and at least one allowed).
/// Every "did you mean" of netheat's Rust side uses this rule.
pub fn closest_name<'a>(key: &str, valid: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (key.chars().count() / 3).max(1);
    valid
        .into_iter()
        .map(|n| (edit_distance(key, n), n))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// Levenshtein distance between two short strings.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A TOML deserialisation error of `text` (read from `file`) as a located
/// [`ConfigError`], phrased as every netheat config error is (unknown keys
/// name the closest valid one).
pub fn toml_error(text: &str, file: &str, e: &toml::de::Error) -> ConfigError {
    Cx::new(file, text).toml_error(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_key_is_a_typo_away() {
        let tail = ", expected one of `policy`, `period`, `ewma-weight`";
        assert_eq!(closest("polcy", tail).as_deref(), Some("policy"));
        assert_eq!(closest("ewma_weight", tail).as_deref(), Some("ewma-weight"));
        assert_eq!(closest("bandwidth", tail), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
