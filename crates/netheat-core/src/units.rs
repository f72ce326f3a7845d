//! Unit strings used in configs and on the command line.
//!
//! Bandwidth is decimal (`10Gbps` = 10^10 bit/s; `MB/s` is bytes per second),
//! sizes accept both decimal (`KB`, `MB`, `GB`, `TB`) and binary (`KiB`,
//! `MiB`, `GiB`, `TiB`) prefixes, durations accept `ns`, `us`, `ms`, `s`,
//! `min`, `h`, `d`. A bare number is rejected: units are never guessed.

use thiserror::Error;

/// A unit string that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnitError {
    /// The number part is missing or not a finite number.
    #[error("`{input}` does not start with a number (expected e.g. {example})")]
    NotANumber {
        /// The offending input.
        input: String,
        /// An example of a valid value.
        example: &'static str,
    },
    /// The unit is missing or not one we know.
    #[error("`{input}` has unknown unit `{unit}`; known units: {known}")]
    UnknownUnit {
        /// The offending input.
        input: String,
        /// The unit part that was not recognised.
        unit: String,
        /// The accepted units.
        known: &'static str,
    },
    /// Negative values make no sense for any quantity here.
    #[error("`{input}` is negative")]
    Negative {
        /// The offending input.
        input: String,
    },
}

fn split_number(input: &str, example: &'static str) -> Result<(f64, String), UnitError> {
    let s = input.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E' | '_')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // `e`/`E` may start a unit (`EB`); back off if the number does not parse.
    let mut cut = end;
    loop {
        let num: String = s[..cut].chars().filter(|c| *c != '_').collect();
        if let Ok(v) = num.parse::<f64>() {
            if !v.is_finite() {
                break;
            }
            if v < 0.0 {
                return Err(UnitError::Negative { input: input.to_string() });
            }
            return Ok((v, s[cut..].trim().to_string()));
        }
        if cut == 0 {
            break;
        }
        cut -= 1;
    }
    Err(UnitError::NotANumber { input: input.to_string(), example })
}

const BANDWIDTH_UNITS: &str = "bps, Kbps, Mbps, Gbps, Tbps, B/s, KB/s, MB/s, GB/s";

/// Parses a bandwidth such as `10Gbps` or `50MB/s` into bits per second.
pub fn parse_bandwidth(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(input, "\"10Gbps\"")?;
    let mult = match unit.as_str() {
        "bps" | "b/s" => 1.0,
        "Kbps" | "kbps" | "Kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        "B/s" | "Bps" => 8.0,
        "KB/s" | "kB/s" => 8e3,
        "MB/s" => 8e6,
        "GB/s" => 8e9,
        _ => return Err(UnitError::UnknownUnit { input: input.to_string(), unit, known: BANDWIDTH_UNITS }),
    };
    Ok(v * mult)
}

const BYTE_UNITS: &str = "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";

/// Parses a size such as `256MiB` or `1.25GB` into bytes.
pub fn parse_bytes(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(input, "\"256MiB\"")?;
    let mult = match unit.as_str() {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "PB" => 1e15,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        "PiB" => 1024.0f64.powi(5),
        _ => return Err(UnitError::UnknownUnit { input: input.to_string(), unit, known: BYTE_UNITS }),
    };
    Ok(v * mult)
}

const DURATION_UNITS: &str = "ns, us, ms, s, min, h, d";

/// Parses a duration such as `5min` or `30s` into seconds.
pub fn parse_duration(input: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(input, "\"5min\"")?;
    let mult = match unit.as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" | "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return Err(UnitError::UnknownUnit { input: input.to_string(), unit, known: DURATION_UNITS }),
    };
    Ok(v * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1e10);
        assert_eq!(parse_bandwidth("2.5 Gbps").unwrap(), 2.5e9);
        assert_eq!(parse_bandwidth("50MB/s").unwrap(), 4e8);
        assert_eq!(parse_bandwidth("1_000Mbps").unwrap(), 1e9);
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_bytes("256MiB").unwrap(), 268_435_456.0);
        assert_eq!(parse_bytes("1.25GB").unwrap(), 1.25e9);
        assert_eq!(parse_bytes("8TB").unwrap(), 8e12);
        assert_eq!(parse_duration("5min").unwrap(), 300.0);
        assert_eq!(parse_duration("10ms").unwrap(), 0.01);
        assert_eq!(parse_duration("1d").unwrap(), 86400.0);
    }

    #[test]
    fn rejects_bad_units() {
        assert!(matches!(parse_bandwidth("10"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_bandwidth("10GB"), Err(UnitError::UnknownUnit { .. })));
        assert!(matches!(parse_bandwidth("fast"), Err(UnitError::NotANumber { .. })));
        assert!(matches!(parse_bandwidth("-1Gbps"), Err(UnitError::Negative { .. })));
        assert!(matches!(parse_duration("5 fortnights"), Err(UnitError::UnknownUnit { .. })));
        let msg = parse_bandwidth("10Gbs").unwrap_err().to_string();
        assert!(msg.contains("Gbps"), "{msg}");
    }
}
