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

/// At most `max_chars` characters of `text`, cut with an ellipsis (`…`) when
/// longer: error messages quote user values through this, so a huge value
/// never makes a huge message.
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => {
            let keep = text[..cut].char_indices().nth(max_chars.saturating_sub(1)).map_or(cut, |(i, _)| i);
            format!("{}…", &text[..keep])
        }
    }
}

/// `text` with every run of non-space characters longer than `max_word`
/// characters [`clip`]ped to `max_word`, and the whole clipped to
/// `max_total`: for messages that quote values they did not choose (a
/// parser's), so one huge value cannot make a huge message.
pub fn clip_words(text: &str, max_word: usize, max_total: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_total + 8));
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push_str(&clip(&rest[..end], max_word));
        rest = &rest[end..];
        let ws = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        if out.len() > 4 * max_total {
            break;
        }
    }
    clip(&out, max_total)
}

/// Longest quote of an input in a [`UnitError`].
const QUOTE: usize = 60;

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
                return Err(UnitError::Negative { input: clip(input, QUOTE) });
            }
            return Ok((v, s[cut..].trim().to_string()));
        }
        // A few characters are enough to give back a unit starting with
        // `e`/`E`; bounding the back-off keeps a huge input linear.
        if cut == 0 || end - cut >= 8 {
            break;
        }
        cut -= 1;
    }
    Err(UnitError::NotANumber { input: clip(input, QUOTE), example })
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
        _ => {
            return Err(UnitError::UnknownUnit {
                input: clip(input, QUOTE),
                unit: clip(&unit, QUOTE),
                known: BANDWIDTH_UNITS,
            })
        }
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
        _ => {
            return Err(UnitError::UnknownUnit {
                input: clip(input, QUOTE),
                unit: clip(&unit, QUOTE),
                known: BYTE_UNITS,
            })
        }
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
        _ => {
            return Err(UnitError::UnknownUnit {
                input: clip(input, QUOTE),
                unit: clip(&unit, QUOTE),
                known: DURATION_UNITS,
            })
        }
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
    fn clip_cuts_with_an_ellipsis() {
        assert_eq!(clip("short", 60), "short");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("ééééé", 3), "éé…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip(&"x".repeat(1000), 60).chars().count(), 60);
    }

    #[test]
    fn clip_words_cuts_long_words_and_the_whole() {
        let long = "9".repeat(5000);
        assert_eq!(
            clip_words(&format!("unknown variant `{long}`, expected one of `a`"), 10, 400),
            "unknown variant `99999999… expected one of `a`"
        );
        assert_eq!(clip_words("a b  c", 10, 400), "a b  c");
        assert_eq!(clip_words(&"ab ".repeat(1000), 10, 20).chars().count(), 20);
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
        // Huge inputs: quoted in at most 60 characters, parsed in linear time.
        let huge = format!("1{}Gbps", "0".repeat(1 << 20));
        let msg = parse_bandwidth(&huge).unwrap_err().to_string();
        assert!(msg.len() < 200 && msg.contains("does not start with a number"), "{msg}");
        let junk = "1e".repeat(1 << 19);
        let msg = parse_duration(&junk).unwrap_err().to_string();
        assert!(msg.len() < 200 && msg.contains('…'), "{msg}");
        let msg = parse_bytes(&format!("5{}", "x".repeat(1 << 20))).unwrap_err().to_string();
        assert!(msg.len() < 300, "{}", msg.len());
    }
}
