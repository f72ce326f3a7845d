//! The numbers in reasons, and JSON strings, written without `core::fmt`.
//!
//! A `place/task` answer carries a reason per ranked host (about 150 bytes
//! each, a hundred per answer). Writing them through `write!` and serde's
//! escaping was over half of the service's decision time per request
//! (docs/serve.md, load benchmark), so the hot path pushes bytes directly:
//! integers through `itoa`, percentages and rates through integers, and
//! strings known to need no escaping as they are. Every function writes what
//! its `core::fmt` / `serde_json` counterpart writes (tests below).

use std::fmt::Write as _;

/// A fraction as a whole percentage (`"85%"`), rounded half to even like
/// `{:.0}`, written through integers (float formatting with a precision
/// falls back to big-number arithmetic on many values).
pub(crate) struct Pct(pub f64);

impl Pct {
    pub(crate) fn push(&self, out: &mut String) {
        let v = (100.0 * self.0).round_ties_even();
        if v.is_finite() && v.abs() < 1e15 {
            out.push_str(itoa::Buffer::new().format(v as i64));
            out.push('%');
        } else {
            write!(out, "{:.0}%", 100.0 * self.0).expect("writing to a String cannot fail");
        }
    }
}

/// A rate in Gbps with two decimals (`"1.25 Gbps"`), or `unlimited`.
pub(crate) struct Gbps(pub f64);

impl Gbps {
    pub(crate) fn push(&self, out: &mut String) {
        if !self.0.is_finite() {
            out.push_str("unlimited");
            return;
        }
        let hundredths = (self.0 / 1e7).round_ties_even();
        if hundredths.abs() >= 1e15 {
            write!(out, "{:.2} Gbps", self.0 / 1e9).expect("writing to a String cannot fail");
            return;
        }
        let c = hundredths as i64;
        if c < 0 {
            out.push('-');
        }
        let (whole, cents) = (c.unsigned_abs() / 100, c.unsigned_abs() % 100);
        out.push_str(itoa::Buffer::new().format(whole));
        out.push('.');
        if cents < 10 {
            out.push('0');
        }
        out.push_str(itoa::Buffer::new().format(cents));
        out.push_str(" Gbps");
    }
}

/// A number as `{}` writes it (`29`, `2.5`), whole values through integers.
pub(crate) struct Num(pub f64);

impl Num {
    pub(crate) fn push(&self, out: &mut String) {
        let x = self.0;
        if x.fract() == 0.0 && x.abs() < 1e15 && !(x == 0.0 && x.is_sign_negative()) {
            out.push_str(itoa::Buffer::new().format(x as i64));
        } else {
            write!(out, "{x}").expect("writing to a String cannot fail");
        }
    }
}

macro_rules! display_by_push {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let mut s = String::with_capacity(16);
                self.push(&mut s);
                f.write_str(&s)
            }
        }
    )*};
}
display_by_push!(Pct, Gbps, Num);

/// Whether `s` is its own JSON string body (no quote, backslash or control
/// character to escape).
pub(crate) fn is_plain(s: &str) -> bool {
    s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// `s` as a JSON string, exactly as `serde_json` writes it.
pub(crate) fn json_str(out: &mut Vec<u8>, s: &str) {
    if is_plain(s) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, s).expect("a string serializes");
    }
}

/// `x` as `serde_json` writes a float (`null` if not finite).
pub(crate) fn json_f64(out: &mut Vec<u8>, x: f64) {
    serde_json::to_writer(&mut *out, &x).expect("a float serializes");
}

/// An integer as JSON.
pub(crate) fn json_int(out: &mut Vec<u8>, x: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

/// `items` as a JSON array, each written by `each`.
pub(crate) fn json_array<T>(out: &mut Vec<u8>, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, x);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_half_to_even_like_a_precision_of_zero() {
        // 0.125 and 0.375 are exact in binary: ties go to the even neighbour,
        // as `{:.0}` does; 100 x 0.855 rounds to exactly 85.5 in floating
        // point, a tie that goes to 86.
        for (x, want) in [(0.125, "12%"), (0.375, "38%"), (0.855, "86%"), (1.0, "100%"), (0.0, "0%"), (2.5, "250%")] {
            assert_eq!(Pct(x).to_string(), want, "{x}");
            assert_eq!(Pct(x).to_string(), format!("{:.0}%", 100.0 * x), "{x}");
        }
        assert_eq!(Pct(f64::NAN).to_string(), "NaN%");
        assert_eq!(Pct(1e300).to_string(), format!("{:.0}%", 1e302));
    }

    #[test]
    fn rates_in_gbps_with_two_decimals() {
        for (x, want) in [
            (1e9, "1.00 Gbps"),
            (2.5e8, "0.25 Gbps"),
            (4e10, "40.00 Gbps"),
            (1.234e9, "1.23 Gbps"),
            (0.0, "0.00 Gbps"),
            (5e7, "0.05 Gbps"),
        ] {
            assert_eq!(Gbps(x).to_string(), want, "{x}");
            assert_eq!(Gbps(x).to_string(), format!("{:.2} Gbps", x / 1e9), "{x}");
        }
        assert_eq!(Gbps(-1.5e9).to_string(), "-1.50 Gbps");
        assert_eq!(Gbps(f64::INFINITY).to_string(), "unlimited");
    }

    #[test]
    fn numbers_as_display_writes_them() {
        for x in [29.0, 0.0, -0.0, -3.0, 2.5, 1e15, 1e16, 1e300, -7.25, f64::NAN, f64::INFINITY, 0.1 + 0.2] {
            assert_eq!(Num(x).to_string(), format!("{x}"), "{x}");
        }
    }

    #[test]
    fn json_strings_and_numbers_as_serde_json_writes_them() {
        for s in ["r4h1", "", "tor \"A\"", "back\\slash", "tab\there", "ünï", "\u{1}"] {
            let mut out = Vec::new();
            json_str(&mut out, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        for x in [0.197072465695911, 1.0, 0.0, -2.5e-9, f64::NAN, f64::INFINITY, 1e300] {
            let mut out = Vec::new();
            json_f64(&mut out, x);
            assert_eq!(out, serde_json::to_vec(&x).unwrap(), "{x}");
        }
        let mut out = Vec::new();
        json_int(&mut out, -42i64);
        json_int(&mut out, 7u32);
        assert_eq!(out, b"-427");
    }
}
