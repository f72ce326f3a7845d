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

/// Serde helpers for unit-bearing numbers that arrive either as a number in
/// SI units (parameters converted before they cross from Python as JSON)
/// or as a unit string read by [`Bandwidth`], [`Bytes`] or [`Duration`],
/// with their JSON Schema (`type` number or string, `format` naming the
/// unit kind).
pub mod si {
    use schemars::schema::{InstanceType, Schema, SchemaObject, SingleOrVec};

    /// The JSON Schema of a unit-bearing number (`format` names the unit kind).
    fn unit_schema(format: &str) -> Schema {
        Schema::Object(SchemaObject {
            instance_type: Some(SingleOrVec::Vec(vec![InstanceType::Number, InstanceType::String])),
            format: Some(format.to_string()),
            ..Default::default()
        })
    }

    macro_rules! si_unit {
        ($name:ident, $ty:ty, $format:literal) => {
            #[doc = concat!("Serde for a ", $format, ": a number in SI units or a unit string ",
                "(read as [`", stringify!($ty), "`]); `#[serde(with = \"netheat_config::units::si::", stringify!($name), "\")]`.")]
            pub mod $name {
                use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, Visitor};
                use serde::Serializer;

                /// Writes the number in SI units.
                pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_f64(*v)
                }

                /// Reads a number or a unit string.
                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
                    struct V;
                    impl<'de> Visitor<'de> for V {
                        type Value = f64;
                        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                            write!(f, concat!("a ", $format, " (a number in SI units or a string with a unit)"))
                        }
                        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                            Ok(v)
                        }
                        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                            Ok(v as f64)
                        }
                        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                            Ok(v as f64)
                        }
                        fn visit_str<E: de::Error>(self, s: &str) -> Result<f64, E> {
                            <$ty>::deserialize(IntoDeserializer::<E>::into_deserializer(s)).map(|u| u.0)
                        }
                    }
                    d.deserialize_any(V)
                }

                /// The schema: a number or a string, `format` naming the unit kind.
                pub fn schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                    super::unit_schema($format)
                }
            }
        };
    }

    si_unit!(bandwidth, crate::units::Bandwidth, "bandwidth");
    si_unit!(bytes, crate::units::Bytes, "bytes");
    si_unit!(duration, crate::units::Duration, "duration");
}
