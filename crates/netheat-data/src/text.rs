//! Small helpers shared by the line-oriented parsers.

use crate::error::DataError;

/// Non-blank lines that are not `#` comments, with 1-based line numbers.
pub(crate) fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Parses a finite number, naming what it is on failure.
pub(crate) fn number(file: &str, line: usize, what: &str, tok: &str) -> Result<f64, DataError> {
    match tok.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(DataError::parse(file, line, format!("{what} `{tok}` is not a finite number"))),
    }
}

/// Parses a non-negative integer, naming what it is on failure.
pub(crate) fn integer<T: std::str::FromStr>(file: &str, line: usize, what: &str, tok: &str) -> Result<T, DataError> {
    tok.trim()
        .parse::<T>()
        .map_err(|_| DataError::parse(file, line, format!("{what} `{tok}` is not a non-negative integer")))
}

/// A CSV row split on commas (the registered CSVs have no quoted fields),
/// checked to have `n` fields.
pub(crate) fn csv_fields<'a>(file: &str, line: usize, row: &'a str, n: usize) -> Result<Vec<&'a str>, DataError> {
    if row.contains('"') {
        return Err(DataError::parse(file, line, "quoted CSV fields are not supported"));
    }
    let f: Vec<&str> = row.split(',').map(str::trim).collect();
    if f.len() != n {
        return Err(DataError::parse(file, line, format!("expected {n} comma-separated fields, found {}", f.len())));
    }
    Ok(f)
}
