//! A scenario file as parsed: its base table and `[[variant]]` overrides merged key by key
//! (`remove` lists keys a variant takes away), before validation.

use super::*;

/// A parsed scenario file: the base table and its variants, not yet validated.
#[derive(Debug, Clone)]
pub struct Document {
    base: toml::Table,
    variants: Vec<(String, toml::Table)>,
}

impl Document {
    /// Parse TOML text.
    pub fn from_toml(text: &str) -> Result<Document, ScenarioError> {
        let line_of = |at: usize| text[..at].matches('\n').count() + 1;
        // the TOML parser refuses these without a word of why
        if let Some(at) = text.find('\0') {
            return Err(err("", format!("malformed TOML: a NUL byte (line {}); expected text (is this a binary file?)", line_of(at))));
        }
        if let Some(at) = text.char_indices().find(|&(i, c)| c == '\r' && text.as_bytes().get(i + 1) != Some(&b'\n')).map(|(i, _)| i) {
            return Err(err(
                "",
                format!("malformed TOML: a carriage return not followed by a line feed (line {}); expected lines ending in LF or CR LF (old Mac line ends?)", line_of(at)),
            ));
        }
        let v: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let msg = e.message().replace('\n', " ");
            let pos = e.span().map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" (line {line})")
            });
            err("", format!("malformed TOML: {}{}", msg.trim(), pos.unwrap_or_default()))
        })?;
        Document::from_table(v)
    }

    /// Parse JSON text (a scenario given as a dict).
    pub fn from_json(text: &str) -> Result<Document, ScenarioError> {
        let v: toml::Value = serde_json::from_str(text).map_err(|e| err("", format!("malformed JSON scenario: {e}")))?;
        match v {
            toml::Value::Table(t) => Document::from_table(t),
            _ => Err(err("", "a scenario must be a table (dict) at the top level")),
        }
    }

    pub(super) fn from_table(mut base: toml::Table) -> Result<Document, ScenarioError> {
        // `[sweep]` is the grid `dcnsim sweep` runs (keys to vary, seeds); a single run ignores it
        match base.remove("sweep") {
            None | Some(toml::Value::Table(_)) => {}
            Some(other) => return Err(err("sweep", format!("invalid value {other}, expected a table of key paths and value lists"))),
        }
        let mut variants = Vec::new();
        if let Some(v) = base.remove("variant") {
            let arr = match v {
                toml::Value::Array(a) => a,
                _ => return Err(err("variant", "expected an array of tables ([[variant]])")),
            };
            for (i, item) in arr.into_iter().enumerate() {
                let mut t = match item {
                    toml::Value::Table(t) => t,
                    other => return Err(err(format!("variant[{i}]"), format!("invalid value {other}, expected a table"))),
                };
                let name = match t.remove("name") {
                    Some(toml::Value::String(s)) if !s.is_empty() => s,
                    Some(other) => return Err(err(format!("variant[{i}].name"), format!("invalid value {other}, expected a non-empty string"))),
                    None => return Err(err(format!("variant[{i}].name"), "missing; every variant needs a name")),
                };
                if variants.iter().any(|(n, _): &(String, toml::Table)| *n == name) {
                    return Err(err(format!("variant[{i}].name"), format!("duplicate variant name \"{name}\"")));
                }
                variants.push((name, t));
            }
        }
        Ok(Document { base, variants })
    }

    /// Pairs of variants (earlier, later) whose resolved scenarios are equal (see
    /// [`identical_pairs`]).
    pub fn identical_variants(&self) -> Result<Vec<(String, String)>, ScenarioError> {
        identical_pairs(&self.resolve_all(None)?.1)
    }

    pub fn variant_names(&self) -> Vec<String> {
        self.variants.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The scenario to run, base (`None`) or a named variant, once the base and every
    /// variant have been validated: a file with one invalid variant is refused whichever
    /// part of it is run, as `validate` refuses it.
    pub fn resolve(&self, variant: Option<&str>) -> Result<Scenario, ScenarioError> {
        Ok(self.resolve_all(variant)?.0)
    }

    /// [`Document::resolve`], with every variant's validated scenario beside the selected
    /// one (in file order), for what compares them.
    pub fn resolve_all(&self, variant: Option<&str>) -> Result<(Scenario, Vec<(&str, Scenario)>), ScenarioError> {
        let selected = self.scenario(variant)?;
        let mut all = Vec::with_capacity(self.variants.len());
        for (name, _) in &self.variants {
            let s = if Some(name.as_str()) == variant { selected.clone() } else { self.scenario(Some(name))? };
            all.push((name.as_str(), s));
        }
        if variant.is_some() {
            self.scenario(None)?;
        }
        Ok((selected, all))
    }

    /// The base table (`None`) or a named variant merged into it, not yet validated: what
    /// the variant runs, as a scenario file would spell it.
    pub fn merged(&self, variant: Option<&str>) -> Result<toml::Table, ScenarioError> {
        let mut t = self.base.clone();
        if let Some(name) = variant {
            let (_, over) = self.variants.iter().find(|(n, _)| n == name).ok_or_else(|| match self.variants.is_empty() {
                true => err("variant", format!("no variant named \"{name}\": the file has no [[variant]] tables")),
                false => {
                    let names: Vec<&str> = self.variants.iter().map(|(n, _)| n.as_str()).collect();
                    err("variant", unknown_name("no variant named", name, &names))
                }
            })?;
            let mut over = over.clone();
            if let Some(paths) = over.remove(REMOVE_KEY) {
                remove_paths(&mut t, &paths, name)?;
            }
            merge(&mut t, &over);
        }
        Ok(t)
    }

    /// The validated scenario for the base (`None`) or a named variant (this one only).
    pub fn scenario(&self, variant: Option<&str>) -> Result<Scenario, ScenarioError> {
        let t = self.merged(variant)?;
        let s: Scenario = serde_path_to_error::deserialize(toml::Value::Table(t.clone())).map_err(|e| {
            let path = e.path().to_string();
            let mut key = if path == "." { String::new() } else { path };
            let mut msg = serde_message(e.into_inner());
            if msg.starts_with("invalid type: unit variant") {
                msg = not_a_name(&t, &key).unwrap_or(msg);
            }
            // a kind's table names the key inside it (scenario/tagged.rs)
            if let Some((inner, rest)) = msg.strip_prefix(tagged::IN_KEY).and_then(|r| r.split_once("`: ")) {
                key = format!("{key}.{inner}");
                msg = rest.to_string();
            }
            let key = match variant {
                Some(v) if !key.is_empty() => format!("{key} (variant \"{v}\")"),
                _ => key,
            };
            if key.starts_with("switch.ecn") {
                msg = "switch.ecn is now switch.aqm: write { kind = \"step\", threshold = K } for DCTCP's step, \
                       { kind = \"ramp\", kmin, kmax, pmax } for the RED ramp on the instantaneous queue"
                    .to_string();
            }
            err(key, suggest(&msg))
        })?;
        validate(&s).map_err(|e| match variant {
            Some(v) if !e.key.is_empty() => err(format!("{} (variant \"{v}\")", e.key), e.message),
            _ => e,
        })?;
        Ok(s)
    }
}

/// Pairs of variants (earlier, later) whose validated scenarios are equal, every key read
/// as the engine reads it (a value written out that equals the default still counts as a
/// difference): a comparison of the two would measure nothing.
pub(super) fn identical_pairs(variants: &[(&str, Scenario)]) -> Result<Vec<(String, String)>, ScenarioError> {
    let mut seen: Vec<(&str, serde_json::Value)> = Vec::with_capacity(variants.len());
    let mut pairs = Vec::new();
    for (name, s) in variants {
        let v = serde_json::to_value(s).map_err(|e| err("variant", e.to_string()))?;
        if let Some((first, _)) = seen.iter().find(|(_, w)| *w == v) {
            pairs.push((first.to_string(), name.to_string()));
        }
        seen.push((name, v));
    }
    Ok(pairs)
}

/// The value at a dotted key path as serde's errors write it ("workload[0].kind").
pub(super) fn value_at<'a>(t: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Value> {
    let mut table = t;
    let mut segments = path.split('.').peekable();
    while let Some(seg) = segments.next() {
        let (name, mut rest) = seg.find('[').map_or((seg, ""), |i| (&seg[..i], &seg[i..]));
        let mut v = table.get_mut(name)?;
        while let Some(r) = rest.strip_prefix('[') {
            let (n, after) = r.split_once(']')?;
            v = v.as_array_mut()?.get_mut(n.parse::<usize>().ok()?)?;
            rest = after;
        }
        if segments.peek().is_none() {
            return Some(v);
        }
        table = v.as_table_mut()?;
    }
    None
}

/// For a key that takes a name (an enumeration) given a number, a boolean, a list or a
/// table: the error the toml deserializer words as "invalid type: unit variant" (naming
/// the wrong type), with the type given and the names the key takes.
pub(super) fn not_a_name(t: &toml::Table, key: &str) -> Option<String> {
    let mut t = t.clone();
    let v = value_at(&mut t, key)?;
    let given = format!("invalid type: {} {v}, expected a string", v.type_str());
    // the names: what the deserializer lists for a string that is none of them
    *v = toml::Value::String(String::new());
    let names = match serde_path_to_error::deserialize::<_, Scenario>(toml::Value::Table(t)) {
        Err(e) if e.path().to_string() == key => suggest(&serde_message(e.into_inner())).split_once("expected ").map(|(_, l)| l.to_string()),
        _ => None,
    };
    Some(names.map_or(given.clone(), |l| format!("{given}: {l}")))
}

/// A deserializer's error on one line, without the " in `path`" the toml deserializer
/// appends (the error's key says it).
pub(crate) fn serde_message(e: impl fmt::Display) -> String {
    let mut msg = e.to_string().replace('\n', " ").trim_end().to_string();
    if let Some(i) = msg.rfind(" in `").filter(|_| msg.ends_with('`')) {
        msg.truncate(i);
    }
    msg
}

/// serde's "unknown field `x`, expected one of `a`, `b`" and "unknown variant `x`, ..." in
/// the scenario's words, with the closest allowed name when one is near: "unknown variant"
/// read as a `[[variant]]` table, and a typo should name its fix.
pub fn suggest(msg: &str) -> String {
    let (what, rest) = if let Some(r) = msg.strip_prefix("unknown field `") {
        ("unknown key", r)
    } else if let Some(r) = msg.strip_prefix("unknown variant `") {
        ("invalid value", r)
    } else {
        return msg.to_string();
    };
    let Some((got, tail)) = rest.split_once('`') else { return msg.to_string() };
    let allowed: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    unknown_name(what, got, &allowed)
}

/// `{what} "got" (did you mean "x"?), expected one of "a", "b"`: the suggestion is the
/// allowed name nearest `got` (Damerau-Levenshtein, ignoring case, within a quarter of its
/// length or 2), else the only one `got` begins.
pub(super) fn unknown_name(what: &str, got: &str, allowed: &[&str]) -> String {
    let lower = got.to_lowercase();
    let prefixed: Vec<&str> = allowed.iter().copied().filter(|a| a.to_lowercase().starts_with(&lower) && !got.is_empty()).collect();
    let near = allowed
        .iter()
        .map(|a| (strsim::damerau_levenshtein(&lower, &a.to_lowercase()), *a))
        .filter(|&(d, a)| d <= 2.max(a.len() / 4) && d < a.len())
        .min()
        .or_else(|| (prefixed.len() == 1).then(|| (0, prefixed[0])));
    let hint = near.map(|(_, a)| format!(" (did you mean \"{a}\"?)")).unwrap_or_default();
    let list = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ");
    match allowed.is_empty() {
        true => format!("{what} \"{got}\"{hint}"),
        false => format!("{what} \"{got}\"{hint}, expected one of {list}"),
    }
}

/// The variant key listing base keys to drop before the variant's own keys merge in: how a
/// variant switches a mechanism off (`remove = ["switch.pfc"]`) or replaces a table whole
/// (remove it, then write it).
pub const REMOVE_KEY: &str = "remove";

/// Drop each dotted key path of `paths` (the variant's `remove`) from `base`. A path the
/// base does not have is an error: a typo would otherwise leave the mechanism on.
pub(super) fn remove_paths(base: &mut toml::Table, paths: &toml::Value, variant: &str) -> Result<(), ScenarioError> {
    let key = format!("{REMOVE_KEY} (variant \"{variant}\")");
    let list = match paths {
        toml::Value::Array(a) => a,
        other => return Err(err(key, format!("invalid value {other}, expected a list of key paths such as [\"switch.pfc\"]"))),
    };
    for p in list {
        let Some(path) = p.as_str().filter(|s| !s.is_empty()) else {
            return Err(err(key, format!("invalid value {p}, expected a key path such as \"switch.pfc\"")));
        };
        let (parents, last) = match path.rsplit_once('.') {
            Some((a, b)) => (a.split('.').collect::<Vec<_>>(), b),
            None => (Vec::new(), path),
        };
        let mut t = &mut *base;
        for part in parents {
            t = match t.get_mut(part) {
                Some(toml::Value::Table(inner)) => inner,
                _ => return Err(err(key, format!("invalid value \"{path}\": the base scenario has no table \"{part}\" there; expected a key path of the base"))),
            };
        }
        if t.remove(last).is_none() {
            return Err(err(key, format!("invalid value \"{path}\": the base scenario does not set it; expected a key path of the base")));
        }
    }
    Ok(())
}

/// Deep-merge `over` into `base`: tables merge recursively, other values replace. A table
/// whose `model` (`switch.buffer`) or AQM `kind` (`switch.aqm`) the variant changes is
/// replaced whole: another model or AQM takes other keys (a static buffer has no pool, a
/// step marker no RED thresholds), so the base's would not fit it.
pub(super) fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !changes_kind(k, b, o) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Whether `over` sets a table's `model` (or `switch.aqm`'s `kind`) to another value than
/// `base` has.
pub(super) fn changes_kind(key: &str, base: &toml::Table, over: &toml::Table) -> bool {
    let differs = |field: &str| over.get(field).is_some_and(|v| base.get(field) != Some(v));
    differs("model") || (key == "aqm" && differs("kind"))
}

// ------------------------------------------------------------------ validation
