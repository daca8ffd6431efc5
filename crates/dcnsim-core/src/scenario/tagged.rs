//! Tables whose `kind` chooses which keys apply (`switch.aqm`): read as one struct per kind,
//! with errors that name the key inside the table.
//!
//! serde's derive for an internally tagged enum buffers the table before it knows the kind,
//! so an error inside it carries only the table's path (`switch.aqm`), and a key of another
//! kind reads as an unknown key. [`split`] takes the kind out of the table, [`body`] reads
//! the rest as that kind's struct and words its errors the scenario's way: the inner key is
//! prefixed ([`IN_KEY`]) for `Document::scenario` to append to the path, and a key that
//! belongs to other kinds says which.

use schemars::JsonSchema;
use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};

/// Prefix of an error message whose key lies inside the table the error is reported at:
/// "at `threshold`: missing ...". `Document::scenario` moves it into the error's key.
pub(crate) const IN_KEY: &str = "at `";

/// The table's `tag` value, one of `kinds`, and the rest of its keys.
pub(crate) fn split<'de, 'k, D: Deserializer<'de>>(d: D, tag: &str, kinds: &'k [&'k str]) -> Result<(&'k str, toml::Table), D::Error> {
    let mut t = toml::Table::deserialize(d)?;
    let names = || kinds.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
    let kind = match t.remove(tag) {
        None => return Err(D::Error::custom(format!("{IN_KEY}{tag}`: missing; expected one of {}", names()))),
        Some(toml::Value::String(s)) => s,
        Some(other) => return Err(D::Error::custom(format!("{IN_KEY}{tag}`: invalid value {other}, expected one of {}", names()))),
    };
    match kinds.iter().find(|k| **k == kind) {
        Some(k) => Ok((k, t)),
        None => Err(D::Error::custom(format!("{IN_KEY}{tag}`: {}", super::suggest(&format!("unknown variant `{kind}`, expected one of {}", backticked(kinds)))))),
    }
}

fn backticked(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Read `t` (the table without its tag) as kind `kind`'s struct `T`. `owners(key)` lists the
/// other kinds that take `key`, for the error of a key set under the wrong kind.
pub(crate) fn body<T: DeserializeOwned, E: Error>(t: toml::Table, tag: &str, kind: &str, owners: impl Fn(&str) -> Vec<&'static str>) -> Result<T, E> {
    serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
        let path = e.path().to_string();
        let msg = super::serde_message(e.into_inner());
        let msg = msg.as_str();
        let quoted = |m: &str| m.split('`').nth(1).unwrap_or("").to_string();
        let (key, text) = if msg.starts_with("missing field `") {
            (quoted(msg), format!("missing; required with {tag} = \"{kind}\""))
        } else if msg.starts_with("unknown field `") {
            let key = quoted(msg);
            let others = owners(&key);
            let text = match others.is_empty() {
                true => super::suggest(msg),
                false => {
                    let names: Vec<String> = others.iter().map(|k| format!("\"{k}\"")).collect();
                    format!("only used with {tag} = {}, not \"{kind}\"", names.join(" or "))
                }
            };
            (key, text)
        } else {
            (if path == "." { String::new() } else { path }, super::suggest(msg))
        };
        match key.is_empty() {
            true => E::custom(text),
            false => E::custom(format!("{IN_KEY}{key}`: {text}")),
        }
    })
}

/// The keys struct `T` takes (its schema's properties), for [`body`]'s `owners`.
pub(crate) fn keys<T: JsonSchema>() -> Vec<String> {
    let root = schemars::gen::SchemaGenerator::default().into_root_schema_for::<T>();
    root.schema.object.map(|o| o.properties.keys().cloned().collect()).unwrap_or_default()
}
