//! Flow/message-size CDFs in the text formats of the public sources.
//!
//! Three layouts are read, all into an [`EmpiricalCdf`] of
//! `(bytes, cumulative probability)` points normalised to `[0, 1]`:
//!
//! - [`CdfFormat::Percent`]: `<bytes> <cdf_percent>` (HPCC `traffic_gen`,
//!   parsimon `distributions/*.txt`); percentages are divided by 100.
//! - [`CdfFormat::Fraction`]: `<bytes> <cdf>` with the probability already in
//!   `[0, 1]` (HKUST TrafficGenerator, the HomaModule `w*_cdf.txt`); lines
//!   starting with `#` are comments.
//! - [`CdfFormat::HomaMeanFirst`]: HomaSimulation `sizeDistributions`: the
//!   first line is the mean size, then `<size> <cum_prob>`. Sizes are
//!   multiplied by `bytes_per_unit`; the DCTCP files are in packets and the
//!   registry uses 1460 bytes per packet, the size factor HomaSimulation's own
//!   `adjustLoadFac.py` applies to them.
//!
//! Checks are strict: exactly two numbers per line, sizes finite,
//! non-negative and non-decreasing, probabilities within range and
//! non-decreasing, and the last probability equal to 1 (within 1e-9 after
//! scaling; it is then set to exactly 1). Consecutive points with the same
//! size (HomaSimulation's `FacebookKeyValue_Sampled.txt` rounds its sampled
//! tail to whole bytes) are merged into one point carrying the highest
//! probability, which is the CDF's value at that size; the result has
//! strictly increasing sizes.

use crate::error::DataError;
use crate::text::{data_lines, number};

/// The text layout of a CDF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CdfFormat {
    /// `<bytes> <cdf_percent>` (0..100).
    Percent,
    /// `<bytes> <cdf>` (0..1), `#` comment lines allowed.
    Fraction,
    /// First line the mean, then `<size> <cum_prob>`; size unit in bytes.
    HomaMeanFirst {
        /// Bytes per size unit (1, or bytes per packet).
        bytes_per_unit: u32,
    },
}

impl CdfFormat {
    /// Short name: `cdf-percent`, `cdf-fraction`, `cdf-homa` or `cdf-homa-packets`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CdfFormat::Percent => "cdf-percent",
            CdfFormat::Fraction => "cdf-fraction",
            CdfFormat::HomaMeanFirst { bytes_per_unit: 1 } => "cdf-homa",
            CdfFormat::HomaMeanFirst { .. } => "cdf-homa-packets",
        }
    }
}

/// An empirical CDF of sizes: `points[i] = (bytes, P(size <= bytes))`.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalCdf {
    /// Points with strictly increasing bytes and non-decreasing probability
    /// ending at exactly 1.
    pub points: Vec<(f64, f64)>,
}

impl EmpiricalCdf {
    /// Builds a CDF from points, applying the strict checks (errors name `file`, line 0).
    pub fn new(points: Vec<(f64, f64)>, file: &str) -> Result<Self, DataError> {
        let lines: Vec<usize> = vec![0; points.len()];
        check(points, &lines, file)
    }

    /// Mean size in bytes, taking each step's mass at its upper point (the
    /// convention of a step CDF; the mass at the first point is at that point).
    pub fn mean_step(&self) -> f64 {
        let mut prev = 0.0;
        let mut sum = 0.0;
        for &(x, p) in &self.points {
            sum += x * (p - prev);
            prev = p;
        }
        sum
    }

    /// The largest size.
    pub fn max_bytes(&self) -> f64 {
        self.points.last().map(|p| p.0).unwrap_or(0.0)
    }
}

/// Parses CDF text in `format`; `file` names it in errors.
pub fn parse_cdf(text: &str, file: &str, format: CdfFormat) -> Result<EmpiricalCdf, DataError> {
    let mut lines = data_lines(text).peekable();
    let (scale_x, scale_p) = match format {
        CdfFormat::Percent => (1.0, 100.0),
        CdfFormat::Fraction => (1.0, 1.0),
        CdfFormat::HomaMeanFirst { bytes_per_unit } => {
            let Some((n, l)) = lines.next() else {
                return Err(DataError::parse(file, 0, "empty file: expected the mean size on line 1"));
            };
            let toks: Vec<&str> = l.split_whitespace().collect();
            if toks.len() != 1 {
                return Err(DataError::parse(
                    file,
                    n,
                    format!("expected the mean size alone, found {} fields", toks.len()),
                ));
            }
            let mean = number(file, n, "mean size", toks[0])?;
            if mean < 0.0 {
                return Err(DataError::parse(file, n, format!("mean size {mean} is negative")));
            }
            (f64::from(bytes_per_unit), 1.0)
        }
    };
    let mut points = Vec::new();
    let mut line_nos = Vec::new();
    for (n, l) in lines {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() != 2 {
            return Err(DataError::parse(
                file,
                n,
                format!("expected `<size> <cumulative probability>`, found {} fields", toks.len()),
            ));
        }
        let x = number(file, n, "size", toks[0])?;
        let p = number(file, n, "cumulative probability", toks[1])?;
        if p < 0.0 || p > scale_p * (1.0 + 1e-9) {
            return Err(DataError::parse(file, n, format!("cumulative probability {p} is outside [0, {scale_p}]")));
        }
        points.push((x * scale_x, p / scale_p));
        line_nos.push(n);
    }
    check(points, &line_nos, file)
}

fn check(mut points: Vec<(f64, f64)>, lines: &[usize], file: &str) -> Result<EmpiricalCdf, DataError> {
    if points.is_empty() {
        return Err(DataError::parse(file, 0, "no CDF points"));
    }
    let mut prev: Option<(f64, f64)> = None;
    for (i, &(x, p)) in points.iter().enumerate() {
        let n = lines[i];
        if !x.is_finite() || x < 0.0 {
            return Err(DataError::parse(file, n, format!("size {x} must be finite and non-negative")));
        }
        if !(0.0..=1.0 + 1e-9).contains(&p) {
            return Err(DataError::parse(file, n, format!("cumulative probability {p} is outside [0, 1]")));
        }
        if let Some((px, pp)) = prev {
            if x < px {
                return Err(DataError::parse(file, n, format!("size {x} decreases (previous {px})")));
            }
            if p < pp {
                return Err(DataError::parse(file, n, format!("cumulative probability {p} decreases (previous {pp})")));
            }
        }
        prev = Some((x, p));
    }
    let last = points.len() - 1;
    if (points[last].1 - 1.0).abs() > 1e-9 {
        return Err(DataError::parse(
            file,
            lines[last],
            format!("the CDF ends at {} instead of 1 (truncated distribution?)", points[last].1),
        ));
    }
    points[last].1 = 1.0;
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(points.len());
    for (x, p) in points {
        let p = p.min(1.0);
        match merged.last_mut() {
            Some(m) if m.0 == x => m.1 = p,
            _ => merged.push((x, p)),
        }
    }
    Ok(EmpiricalCdf { points: merged })
}
