//! Serde wrappers that read unit strings, so a wrong unit is reported at the
//! value's position by the TOML deserialiser.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

macro_rules! unit_type {
    ($name:ident, $parse:path, $what:literal, $example:literal) => {
        #[doc = concat!("A ", $what, " written as a unit string such as `", $example, "`.")]
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name(pub f64);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, concat!("a ", $what, " string with a unit, e.g. \"", $example, "\""))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(|e| E::custom(format!(concat!("invalid ", $what, ": {}"), e)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            concat!("a bare number ({}) is not a ", $what, "; write the unit, e.g. \"", $example, "\""),
                            v
                        )))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            concat!("a bare number ({}) is not a ", $what, "; write the unit, e.g. \"", $example, "\""),
                            v
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Bandwidth, netheat_core::parse_bandwidth, "bandwidth", "10Gbps");
unit_type!(Bytes, netheat_core::parse_bytes, "size", "256MiB");
unit_type!(Duration, netheat_core::parse_duration, "duration", "5min");
