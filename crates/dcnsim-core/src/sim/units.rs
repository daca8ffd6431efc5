//! Quantities with units, as written in scenario files: rates ("100Gbps"),
//! durations ("200ns"), sizes ("750KB", "1MiB"). Bare numbers are rejected
//! where a unit is needed (docs/scenario-reference.md, "Value types").
//!
//! Size prefixes follow SI/IEC: KB = 1000 B, KiB = 1024 B (the seeds quote
//! "1 MB queue" and "byte counter 2097152", i.e. 2 MiB, so both are needed).

use crate::sim::SimTime;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s.char_indices().find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_')).map(|(i, _)| i).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let num: f64 = s[..end].replace('_', "").parse().ok()?;
    Some((num, s[end..].trim()))
}

fn parse_with(s: &str, units: &[(&str, f64)]) -> Option<f64> {
    let (n, unit) = split_number(s)?;
    units.iter().find(|(u, _)| *u == unit).map(|(_, m)| n * m)
}

const RATE_UNITS: &[(&str, f64)] = &[("bps", 1.0), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12)];
const TIME_UNITS: &[(&str, f64)] = &[("ps", 1.0), ("ns", 1e3), ("us", 1e6), ("ms", 1e9), ("s", 1e12)];
const SIZE_UNITS: &[(&str, f64)] = &[("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0), ("MiB", 1048576.0), ("GiB", 1073741824.0)];

// The largest value of each kind a scenario may state, so that the arithmetic built on
// them (bytes x 8 x 10^12 / rate, time x rate, now + duration) cannot leave u64: a
// duration of at most 10^18 ps can be added to another and still fit, a size of at most
// 10^15 B times 8 x 10^12 fits u128. Larger values are refused as out of range, not clamped.
/// Largest rate: 1000 Tbps.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;
/// Largest duration: 10^6 s (about 11.6 days of simulated time).
pub const MAX_DURATION: SimTime = SimTime(1_000_000_000_000_000_000);
/// Largest size: 10^15 B (1000000GB).
pub const MAX_SIZE: u64 = 1_000_000_000_000_000;

/// Why a quantity did not parse.
#[derive(Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// Not a number followed by a known unit; what is wrong, when it can be said ("" else).
    Malformed(String),
    /// Well formed but larger than the kind's maximum (the maximum, written with a unit).
    OutOfRange(&'static str),
}

/// What is wrong with a quantity that did not parse, for the error message ("" when it
/// is simply not a number and a unit).
fn diagnose(s: &str, units: &[(&str, f64)]) -> String {
    let t = s.trim();
    if t.starts_with('-') {
        return "negative; ".to_string();
    }
    let names: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
    if let Some((_, unit)) = split_number(t) {
        if unit.starts_with(['e', 'E']) && unit.len() > 1 && unit[1..].trim_start_matches(['+', '-']).starts_with(|c: char| c.is_ascii_digit()) {
            return "exponent notation is not accepted (write the digits, e.g. \"1500ns\"); ".to_string();
        }
        if let Some(right) = names.iter().find(|u| u.eq_ignore_ascii_case(unit) && **u != unit) {
            return format!("unit \"{unit}\" is not known (units are case-sensitive: \"{right}\"); ");
        }
        if !unit.is_empty() && !names.contains(&unit) {
            return format!("unit \"{unit}\" is not known; ");
        }
    }
    String::new()
}

fn parse_bounded(s: &str, units: &[(&str, f64)], max: u64, max_text: &'static str) -> Result<u64, QuantityError> {
    let v = parse_with(s, units).filter(|v| v.is_finite()).ok_or_else(|| QuantityError::Malformed(diagnose(s, units)))?.round();
    if v > max as f64 {
        return Err(QuantityError::OutOfRange(max_text));
    }
    Ok(v as u64)
}

/// Parse a rate string such as "100Gbps" into bits per second.
pub fn parse_rate_checked(s: &str) -> Result<u64, QuantityError> {
    parse_bounded(s, RATE_UNITS, MAX_RATE_BPS, "1000Tbps")
}
/// Parse a duration string such as "200ns" into simulated time.
pub fn parse_duration_checked(s: &str) -> Result<SimTime, QuantityError> {
    parse_bounded(s, TIME_UNITS, MAX_DURATION.0, "1000000s").map(SimTime)
}
/// Parse a size string such as "750KB" into bytes.
pub fn parse_size_checked(s: &str) -> Result<u64, QuantityError> {
    parse_bounded(s, SIZE_UNITS, MAX_SIZE, "1000000GB")
}
/// [`parse_rate_checked`], any error as `None`.
pub fn parse_rate(s: &str) -> Option<u64> {
    parse_rate_checked(s).ok()
}
/// [`parse_duration_checked`], any error as `None`.
pub fn parse_duration(s: &str) -> Option<SimTime> {
    parse_duration_checked(s).ok()
}
/// [`parse_size_checked`], any error as `None`.
pub fn parse_size(s: &str) -> Option<u64> {
    parse_size_checked(s).ok()
}

macro_rules! unit_type {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $parse:ident, $expect:expr, $fmt:expr) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(|e| match e {
                            QuantityError::Malformed(why) => E::custom(format!("invalid value \"{}\": {}expected {}", s, why, $expect)),
                            QuantityError::OutOfRange(max) => E::custom(format!("invalid value \"{}\": out of range, expected at most \"{}\"", s, max)),
                        })
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("invalid value {}, expected {} (a bare number has no unit)", v, $expect)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("invalid value {}, expected {} (a bare number has no unit)", v, $expect)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("invalid value {}, expected {} (a bare number has no unit)", v, $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f: fn(&$inner) -> String = $fmt;
                s.serialize_str(&f(&self.0))
            }
        }
    };
}

unit_type!(
    /// A link or sending rate in bits per second, written "100Gbps", "40Mbps".
    Rate, u64, parse_rate_checked, "a rate with a unit, e.g. \"100Gbps\" (bps, Kbps, Mbps, Gbps, Tbps)",
    |v| format!("{}bps", v)
);
unit_type!(
    /// A duration, written "200ns", "4us", "10ms".
    Duration, SimTime, parse_duration_checked, "a duration with a unit, e.g. \"200ns\" (ps, ns, us, ms, s)",
    |v| format!("{}ps", v.0)
);
unit_type!(
    /// A size in bytes, written "1500B", "750KB" (1000 B), "2MiB" (1048576 B).
    Bytes, u64, parse_size_checked, "a size with a unit, e.g. \"750KB\" (B, KB, MB, GB, KiB, MiB, GiB)",
    |v| format!("{}B", v)
);

// ------------------------------------------------------------ JSON Schema
// The unit types are strings in scenario files; their schema says so, with the
// accepted suffixes as a `pattern` (ECMA-262) that mirrors `split_number` + the
// unit tables above.

/// A number as `split_number` accepts it: digits with optional `_` separators
/// and at most one decimal point (no sign, no exponent).
const NUMBER_PATTERN: &str = r"(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)";

/// `^\s*NUMBER\s*(unit|unit|...)\s*$` for one of the unit tables above.
pub(crate) fn unit_pattern(units: &[(&str, f64)]) -> String {
    let alts: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
    format!(r"^\s*{NUMBER_PATTERN}\s*(?:{})\s*$", alts.join("|"))
}

/// The duration pattern without its anchors, for schemas that embed it.
pub(crate) fn duration_pattern_body() -> String {
    let alts: Vec<&str> = TIME_UNITS.iter().map(|(u, _)| *u).collect();
    format!(r"\s*{NUMBER_PATTERN}\s*(?:{})\s*", alts.join("|"))
}

/// A string schema with a title, description, pattern and examples.
pub(crate) fn string_schema(title: &str, description: &str, pattern: String, examples: &[&str]) -> schemars::schema::Schema {
    use schemars::schema::{InstanceType, Metadata, SchemaObject, StringValidation};
    SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        metadata: Some(Box::new(Metadata {
            title: Some(title.to_string()),
            description: Some(description.to_string()),
            examples: examples.iter().map(|e| serde_json::Value::String(e.to_string())).collect(),
            ..Default::default()
        })),
        string: Some(Box::new(StringValidation { pattern: Some(pattern), ..Default::default() })),
        ..Default::default()
    }
    .into()
}

macro_rules! unit_schema {
    ($name:ident, $title:expr, $units:expr, $description:expr, [$($example:expr),*]) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                let mut s = string_schema($title, $description, unit_pattern($units), &[$($example),*]);
                if let schemars::schema::Schema::Object(o) = &mut s {
                    // The accepted suffixes, for the generated reference (unknown keywords are
                    // ignored by JSON Schema validators).
                    let units: Vec<serde_json::Value> = $units.iter().map(|(u, _)| serde_json::Value::from(*u)).collect();
                    o.extensions.insert("x-units".to_string(), serde_json::Value::Array(units));
                }
                s
            }
        }
    };
}

unit_schema!(
    Rate,
    "rate",
    RATE_UNITS,
    "A rate in bits per second, written as a number and a unit: bps, Kbps, Mbps, Gbps, Tbps \
     (SI prefixes: 1 Kbps = 1000 bps). Rounded to whole bits per second; at most 1000Tbps. A bare number is an error.",
    ["100Gbps", "2.5Gbps", "40Mbps"]
);
unit_schema!(
    Duration,
    "duration",
    TIME_UNITS,
    "A duration, written as a number and a unit: ps, ns, us, ms, s. Rounded to whole picoseconds \
     (the simulation clock); at most 1000000s. A bare number is an error.",
    ["200ns", "1.5us", "10ms"]
);
unit_schema!(
    Bytes,
    "size",
    SIZE_UNITS,
    "A size in bytes, written as a number and a unit: B, KB, MB, GB (powers of 1000) or KiB, MiB, \
     GiB (powers of 1024). Rounded to whole bytes; at most 1000000GB. A bare number is an error.",
    ["750KB", "1500B", "2MiB"]
);

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_units() {
        assert_eq!(parse_rate("100Gbps"), Some(100_000_000_000));
        assert_eq!(parse_rate("40 Mbps"), Some(40_000_000));
        assert_eq!(parse_rate("2.5Gbps"), Some(2_500_000_000));
        assert_eq!(parse_duration("200ns"), Some(SimTime(200_000)));
        assert_eq!(parse_duration("1.5us"), Some(SimTime(1_500_000)));
        assert_eq!(parse_duration("4ms"), Some(SimTime::from_ms(4)));
        assert_eq!(parse_size("750KB"), Some(750_000));
        assert_eq!(parse_size("2MiB"), Some(2_097_152));
        assert_eq!(parse_size("1_500B"), Some(1500));
        assert_eq!(parse_rate("100"), None);
        assert_eq!(parse_rate("100gbps"), None);
        assert_eq!(parse_size("KB"), None);
        assert_eq!(parse_size("-5KB"), None);
    }
    #[test]
    fn values_beyond_the_maximum_are_refused_not_clamped() {
        assert_eq!(parse_size_checked("1000000GB"), Ok(MAX_SIZE));
        assert_eq!(parse_size_checked("1000000.001GB"), Err(QuantityError::OutOfRange("1000000GB")));
        assert_eq!(parse_size_checked("99999999999999999999GB"), Err(QuantityError::OutOfRange("1000000GB")));
        assert!(matches!(parse_size_checked("1e30GB"), Err(QuantityError::Malformed(w)) if w.contains("exponent")));
        assert_eq!(parse_rate_checked("1000Tbps"), Ok(MAX_RATE_BPS));
        assert_eq!(parse_rate_checked("1001Tbps"), Err(QuantityError::OutOfRange("1000Tbps")));
        assert_eq!(parse_duration_checked("1000000s"), Ok(MAX_DURATION));
        assert_eq!(parse_duration_checked("20000000s"), Err(QuantityError::OutOfRange("1000000s")));
        // the maxima leave room for the arithmetic built on them
        assert!(MAX_DURATION.0.checked_mul(2).is_some());
        assert!((MAX_SIZE as u128 * 8 * 1_000_000_000_000).checked_mul(1).is_some());
        #[derive(Deserialize, Debug)]
        struct T {
            #[allow(dead_code)]
            b: Bytes,
        }
        let e = toml::from_str::<T>("b = \"99999999999999999999GB\"").unwrap_err().to_string();
        assert!(e.contains("out of range") && e.contains("1000000GB"), "{e}");
    }
    #[test]
    fn malformed_quantities_say_what_is_wrong() {
        #[derive(Deserialize, Debug)]
        struct T {
            #[allow(dead_code)]
            d: Option<Duration>,
            #[allow(dead_code)]
            r: Option<Rate>,
        }
        let e = |t: &str| toml::from_str::<T>(t).unwrap_err().to_string();
        assert!(e("d = \"-5us\"").contains("negative"), "{}", e("d = \"-5us\""));
        assert!(e("d = \"1.5e3ns\"").contains("exponent notation"), "{}", e("d = \"1.5e3ns\""));
        assert!(e("d = \"1e30s\"").contains("exponent notation"));
        let g = e("r = \"10gbps\"");
        assert!(g.contains("case-sensitive") && g.contains("\"Gbps\""), "{g}");
        assert!(e("r = \"10furlongs\"").contains("unit \"furlongs\" is not known"));
        assert!(!e("r = \"fast\"").contains("not known"), "{}", e("r = \"fast\""));
    }
    #[test]
    fn bare_numbers_are_rejected() {
        #[derive(Deserialize, Debug)]
        struct T {
            #[allow(dead_code)]
            r: Rate,
        }
        let e = toml::from_str::<T>("r = 100").unwrap_err().to_string();
        assert!(e.contains("bare number"), "{e}");
        let ok: T = toml::from_str("r = \"10Gbps\"").unwrap();
        assert_eq!(ok.r, Rate(10_000_000_000));
    }
}
