//! The scenario reference, generated from the schema (docs/scenario-reference.md:
//! every key is documented once, next to its definition in `schema.rs`).
//!
//! [`json_schema`] is the JSON Schema (draft 7) of a scenario file, derived with
//! schemars from the config structs and their doc comments; [`markdown`] renders the
//! same schema as a human-readable reference. Both are checked into `docs/`
//! (`docs/scenario.schema.json`, `docs/scenario-reference.md`) and a test below fails
//! when they drift from the code; regenerate them with
//! `cargo run -p dcnsim-core --example gen_reference`.
//!
//! Output is deterministic: keys appear in declaration order (schemars'
//! `preserve_order`), sections in the order their tables are first reached from the
//! top level.

use super::schema::Scenario;
use schemars::gen::{SchemaGenerator, SchemaSettings};
use schemars::schema::{ArrayValidation, InstanceType, Metadata, ObjectValidation, RootSchema, Schema, SchemaObject, SingleOrVec, StringValidation};
use std::fmt::Write as _;

/// Command that regenerates the checked-in reference files.
pub const REGENERATE: &str = "cargo run -p dcnsim-core --example gen_reference";
/// Markdown reference, relative to the workspace root.
pub const MARKDOWN_PATH: &str = "docs/scenario-reference.md";
/// JSON Schema, relative to the workspace root.
pub const JSON_SCHEMA_PATH: &str = "docs/scenario.schema.json";

const VARIANT_DEF: &str = "Variant";

/// The schema of a scenario file as schemars derives it, adjusted to what the loader
/// accepts: no `null` for optional keys (TOML has none; the key is simply left out),
/// no `null` inside default values, and the `[[variant]]` tables that
/// [`super::Document`] removes before deserializing.
pub fn root_schema() -> RootSchema {
    let settings = SchemaSettings::draft07().with(|s| s.option_add_null_type = false);
    let mut root = SchemaGenerator::new(settings).into_root_schema_for::<Scenario>();
    clean_defaults(&mut root.schema);
    for def in root.definitions.values_mut() {
        if let Schema::Object(o) = def {
            clean_defaults(o);
        }
    }
    root.definitions.insert(VARIANT_DEF.to_string(), Schema::Object(variant_schema()));
    let variant_prop = SchemaObject {
        metadata: meta(
            "Named variants of the base scenario, for comparisons: each overrides some keys of the base \
             (see `[[variant]]`).",
        ),
        instance_type: Some(InstanceType::Array.into()),
        array: Some(Box::new(ArrayValidation { items: Some(SingleOrVec::Single(Box::new(Schema::new_ref(format!("#/definitions/{VARIANT_DEF}"))))), ..Default::default() })),
        ..Default::default()
    };
    root.schema.object().properties.insert("variant".to_string(), Schema::Object(variant_prop));
    root
}

/// `[[variant]]`: a name plus any keys of the base scenario (merged by `Document::scenario`).
fn variant_schema() -> SchemaObject {
    let mut obj = ObjectValidation::default();
    obj.required.insert("name".to_string());
    obj.properties.insert(
        "name".to_string(),
        Schema::Object(SchemaObject {
            metadata: meta(
                "Variant name, non-empty and unique within the file; selects the variant \
                 (`dcnsim run --variant NAME`, `dcnsim.run(..., variant=NAME)`) and is reported as `variant` \
                 in summary.json.",
            ),
            instance_type: Some(InstanceType::String.into()),
            string: Some(Box::new(StringValidation { min_length: Some(1), ..Default::default() })),
            ..Default::default()
        }),
    );
    obj.properties.insert(
        super::REMOVE_KEY.to_string(),
        Schema::Object(SchemaObject {
            metadata: meta(
                "Key paths of the base scenario to drop before this variant's own keys merge in: the one way \
                 to switch a mechanism off in a variant (`remove = [\"switch.pfc\"]`) or to replace a table \
                 whole (remove it and write it again, e.g. a static XOFF made dynamic). A path the base does \
                 not set is an error. Writing an empty table (`switch.pfc = {}`) merges into the base's and \
                 changes nothing.",
            ),
            instance_type: Some(InstanceType::Array.into()),
            array: Some(Box::new(ArrayValidation {
                items: Some(SingleOrVec::Single(Box::new(Schema::Object(SchemaObject { instance_type: Some(InstanceType::String.into()), ..Default::default() })))),
                ..Default::default()
            })),
            ..Default::default()
        }),
    );
    // Any other key overrides the base: additionalProperties stays unconstrained.
    SchemaObject {
        metadata: meta(
            "`[[variant]]`: a named set of overrides of the base scenario. Every key other than `name` has \
             the same meaning and syntax as in the base file and replaces the base value: tables (such as \
             `[switch]` or `switch.pfc`) merge key by key, recursively, while every other value, arrays \
             included (`[[workload]]`, `fct_bins`, `flows`), replaces the base value as a whole; a table \
             whose `model` (`switch.buffer`) or AQM `kind` (`switch.aqm`) the variant changes is replaced \
             whole, since another model or kind takes other keys; `remove` drops base keys first. The merged \
             result must be a valid scenario; it is validated like the base, and errors name the variant. \
             Without a variant selected, the base scenario runs.",
        ),
        instance_type: Some(InstanceType::Object.into()),
        object: Some(Box::new(obj)),
        ..Default::default()
    }
}

fn meta(description: &str) -> Option<Box<Metadata>> {
    Some(Box::new(Metadata { description: Some(description.to_string()), ..Default::default() }))
}

/// The placeholder a key's doc comment writes where its default goes ("Default {default}")
/// and the schema's `default` is substituted, rendered as the value would be written in a
/// scenario file: the default is declared once, in the code that builds the table's
/// defaults, and no doc comment can quote a stale number.
pub const DEFAULT_PLACEHOLDER: &str = "{default}";

/// Tidy one schema and the schemas inside it: drop `null` from default values (`"default":
/// null` for optional keys, `null` members of table defaults: a default that contains
/// `null` would not validate against the schema it annotates); write each default into its
/// description's [`DEFAULT_PLACEHOLDER`]; close the tables of a kind (`switch.aqm`'s), whose
/// reader refuses unknown keys as every table's does.
fn clean_defaults(s: &mut SchemaObject) {
    let unit = ref_name(s).map(str::to_string);
    if let Some(m) = s.metadata.as_mut() {
        if let Some(d) = m.default.take() {
            m.default = strip_nulls(d);
        }
        if let (Some(text), Some(d)) = (m.description.as_mut(), m.default.as_ref()) {
            *text = text.replace(DEFAULT_PLACEHOLDER, &toml_literal(d, unit.as_deref()));
        }
    }
    if let Some(o) = s.object.as_mut() {
        for p in o.properties.values_mut() {
            if let Schema::Object(p) = p {
                clean_defaults(p);
            }
        }
    }
    if let Some(a) = s.array.as_mut() {
        if let Some(SingleOrVec::Single(item)) = a.items.as_mut() {
            if let Schema::Object(i) = item.as_mut() {
                clean_defaults(i);
            }
        }
    }
    let tagged = tagged_variants(s).is_some();
    for v in s.subschemas.as_mut().and_then(|x| x.one_of.as_mut()).into_iter().flatten() {
        if let Schema::Object(v) = v {
            if tagged {
                // the kind's own description says what choosing it means
                let about = v.metadata.as_ref().and_then(|m| m.description.clone());
                if let Some(Schema::Object(tag)) = v.object().properties.get_mut(TAG) {
                    tag.metadata().description = about;
                }
                v.object().additional_properties = Some(Box::new(Schema::Bool(false)));
            }
            clean_defaults(v);
        }
    }
}

/// A default as a scenario file writes it: a quantity in the largest unit that holds it
/// exactly ("15ms", not "15000000000ps"), a string quoted, a number or boolean as it is.
fn toml_literal(v: &serde_json::Value, unit: Option<&str>) -> String {
    let scales: &[(&str, u64)] = match unit {
        Some("Duration") => &[("s", 1_000_000_000_000), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000), ("ps", 1)],
        Some("Bytes") => &[("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000), ("B", 1)],
        Some("Rate") => &[("Tbps", 1_000_000_000_000), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000), ("bps", 1)],
        _ => &[],
    };
    let base = scales.last().map(|(u, _)| *u);
    let value = |s: &str| base.and_then(|b| s.strip_suffix(b)).and_then(|n| n.parse::<u64>().ok());
    match v {
        serde_json::Value::String(s) => match value(s) {
            // no time is "0s" (as scenario files write it); no size or rate the base unit
            Some(0) if unit == Some("Duration") => "\"0s\"".to_string(),
            Some(0) => format!("\"0{}\"", base.unwrap_or_default()),
            Some(n) => {
                let (u, m) = scales.iter().find(|(_, m)| n % m == 0).expect("the base unit divides every value");
                format!("\"{}{u}\"", n / m)
            }
            None => format!("\"{s}\""),
        },
        other => other.to_string(),
    }
}

fn strip_nulls(v: serde_json::Value) -> Option<serde_json::Value> {
    use serde_json::Value;
    match v {
        Value::Null => None,
        Value::Object(m) => Some(Value::Object(m.into_iter().filter_map(|(k, v)| strip_nulls(v).map(|v| (k, v))).collect())),
        Value::Array(a) => Some(Value::Array(a.into_iter().filter_map(strip_nulls).collect())),
        other => Some(other),
    }
}

/// The JSON Schema of a scenario file, pretty-printed, with a trailing newline.
pub fn json_schema() -> String {
    let mut s = serde_json::to_string_pretty(&root_schema()).expect("a schema always serializes");
    s.push('\n');
    s
}

// ------------------------------------------------------------------ markdown

/// How a property's value is shaped, after following `$ref`s.
enum Shape<'a> {
    /// A table (struct) defined in `definitions`.
    Table(&'a str),
    /// An array of tables.
    Tables(&'a str),
    /// Anything else.
    Value,
}

/// The definition a schema refers to: `{"$ref"}` or `{"allOf": [{"$ref"}]}` (schemars
/// wraps references that carry a field's doc comment in `allOf`).
fn ref_name(s: &SchemaObject) -> Option<&str> {
    if let Some(r) = &s.reference {
        return r.strip_prefix("#/definitions/");
    }
    let all = s.subschemas.as_ref()?.all_of.as_ref()?;
    match all.as_slice() {
        [Schema::Object(o)] => o.reference.as_deref()?.strip_prefix("#/definitions/"),
        _ => None,
    }
}

fn as_object(s: &Schema) -> Option<&SchemaObject> {
    match s {
        Schema::Object(o) => Some(o),
        Schema::Bool(_) => None,
    }
}

fn description(s: &SchemaObject) -> &str {
    s.metadata.as_ref().and_then(|m| m.description.as_deref()).unwrap_or("")
}

fn array_item(s: &SchemaObject) -> Option<&SchemaObject> {
    match s.array.as_ref()?.items.as_ref()? {
        SingleOrVec::Single(i) => as_object(i),
        SingleOrVec::Vec(_) => None,
    }
}

fn is_table(def: &SchemaObject) -> bool {
    def.object.is_some() || tagged_variants(def).is_some()
}

/// The tag every table of a kind-chosen table carries (scenario/tagged.rs).
const TAG: &str = "kind";

/// A table whose `kind` chooses its keys (`switch.aqm`): each kind's name and table, from the
/// schema of an internally tagged enum (one object per kind, its `kind` a single value).
fn tagged_variants(def: &SchemaObject) -> Option<Vec<(String, &SchemaObject)>> {
    let one_of = def.subschemas.as_ref()?.one_of.as_ref()?;
    one_of
        .iter()
        .map(|v| {
            let v = as_object(v)?;
            let tag = as_object(v.object.as_ref()?.properties.get(TAG)?)?;
            match tag.enum_values.as_deref() {
                Some([serde_json::Value::String(name)]) => Some((name.clone(), v)),
                _ => None,
            }
        })
        .collect()
}

/// Enumeration values (and their doc comments) of a unit-only enum definition.
fn enum_values(def: &SchemaObject) -> Option<Vec<(String, String)>> {
    fn text(v: &serde_json::Value) -> String {
        v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
    }
    if let Some(vals) = &def.enum_values {
        return Some(vals.iter().map(|v| (text(v), String::new())).collect());
    }
    let one_of = def.subschemas.as_ref()?.one_of.as_ref()?;
    let mut out = Vec::new();
    for s in one_of {
        let o = as_object(s)?;
        let v = match (&o.enum_values, &o.const_value) {
            (Some(vals), _) if vals.len() == 1 => &vals[0],
            (_, Some(c)) => c,
            _ => return None,
        };
        out.push((text(v), description(o).to_string()));
    }
    Some(out)
}

/// A value type with its own entry under "Value types": units, enumerations.
fn is_value_type(def: &SchemaObject) -> bool {
    enum_values(def).is_some() || def.metadata.as_ref().and_then(|m| m.title.as_ref()).is_some()
}

fn anchor(def_name: &str) -> String {
    def_name.to_ascii_lowercase()
}

/// Markdown table cells: one line, no unescaped `|`.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// A table of the reference: one `definitions` entry and the key paths that use it.
struct Section<'a> {
    def: &'a str,
    paths: Vec<String>,
}

struct Walker<'a> {
    root: &'a RootSchema,
    sections: Vec<Section<'a>>,
    /// Units and enumerations, with the keys that use them.
    value_types: Vec<Section<'a>>,
}

impl<'a> Walker<'a> {
    fn def(&self, name: &str) -> &'a SchemaObject {
        self.root.definitions.get(name).and_then(as_object).unwrap_or_else(|| panic!("schema has no definition {name}"))
    }

    /// The table a definition lets be written once or as an array of them
    /// (`switch.architecture`): `anyOf` the table and an array of it.
    fn one_or_many(&self, def: &'a SchemaObject) -> Option<&'a str> {
        match def.subschemas.as_ref()?.any_of.as_ref()?.as_slice() {
            [Schema::Object(one), Schema::Object(many)] => {
                let r = ref_name(one)?;
                (array_item(many).and_then(ref_name) == Some(r) && is_table(self.def(r))).then_some(r)
            }
            _ => None,
        }
    }

    fn shape(&self, s: &'a SchemaObject) -> Shape<'a> {
        if let Some(r) = ref_name(s) {
            if is_table(self.def(r)) {
                return Shape::Table(r);
            }
            if let Some(t) = self.one_or_many(self.def(r)) {
                return Shape::Table(t);
            }
        }
        if let Some(item) = array_item(s) {
            if let Some(r) = ref_name(item) {
                if is_table(self.def(r)) {
                    return Shape::Tables(r);
                }
            }
        }
        Shape::Value
    }

    fn note_value_type(&mut self, s: &'a SchemaObject, key_path: String) {
        let target = ref_name(s).or_else(|| array_item(s).and_then(ref_name));
        if let Some(r) = target {
            if is_value_type(self.def(r)) {
                match self.value_types.iter_mut().find(|v| v.def == r) {
                    // a key of several kinds (switch.aqm's target) is listed once
                    Some(v) if v.paths.contains(&key_path) => {}
                    Some(v) => v.paths.push(key_path),
                    None => self.value_types.push(Section { def: r, paths: vec![key_path] }),
                }
            }
        }
    }

    /// Visit the keys of a table reached at `path` (empty for the top level).
    fn visit(&mut self, table: &'a SchemaObject, path: &str) {
        if let Some(kinds) = tagged_variants(table) {
            for (_, t) in kinds {
                self.visit(t, path);
            }
            return;
        }
        let Some(obj) = table.object.as_ref() else {
            return;
        };
        for (key, prop) in &obj.properties {
            let Some(prop) = as_object(prop) else {
                continue;
            };
            self.note_value_type(prop, if path.is_empty() { key.to_string() } else { format!("{path}.{key}") });
            let (def, shown, child) = match self.shape(prop) {
                Shape::Value => continue,
                Shape::Table(d) if path.is_empty() => (d, format!("[{key}]"), key.to_string()),
                Shape::Tables(d) if path.is_empty() => (d, format!("[[{key}]]"), key.to_string()),
                Shape::Table(d) => (d, format!("{path}.{key}"), format!("{path}.{key}")),
                Shape::Tables(d) => (d, format!("{path}.{key}[]"), format!("{path}.{key}[]")),
            };
            // A table used in several places (links) gets one section listing every path.
            match self.sections.iter_mut().find(|s| s.def == def) {
                Some(sec) => sec.paths.push(shown),
                None => self.sections.push(Section { def, paths: vec![shown] }),
            }
            let d = self.def(def);
            self.visit(d, &child);
        }
    }

    /// The Type cell of a key.
    fn type_text(&self, s: &SchemaObject) -> String {
        if let Some(r) = ref_name(s) {
            let d = self.def(r);
            if is_table(d) {
                return format!("table, see [{}](#{})", self.section_title(r), anchor(r));
            }
            if let Some(t) = self.one_or_many(d) {
                return format!("table, or array of tables, see [{}](#{})", self.section_title(t), anchor(t));
            }
            if let Some(vals) = enum_values(d) {
                let v: Vec<String> = vals.iter().map(|(v, _)| format!("`\"{v}\"`")).collect();
                return format!("[one of](#{}) {}", anchor(r), v.join(", "));
            }
            let title = d.metadata.as_ref().and_then(|m| m.title.clone()).unwrap_or_else(|| r.to_string());
            return match units(d) {
                Some(u) => format!("[{title}](#{}): {u}", anchor(r)),
                None => format!("[{title}](#{})", anchor(r)),
            };
        }
        if let Some(item) = array_item(s) {
            if let Some(r) = ref_name(item) {
                if is_table(self.def(r)) {
                    return format!("array of tables, see [{}](#{})", self.section_title(r), anchor(r));
                }
            }
            return format!("array of {}", self.type_text(item));
        }
        let t = match &s.instance_type {
            Some(SingleOrVec::Single(t)) => **t,
            _ => return "any".to_string(),
        };
        match t {
            InstanceType::Integer => "integer".to_string(),
            InstanceType::Number => "number".to_string(),
            InstanceType::Boolean => "boolean".to_string(),
            InstanceType::String => "string".to_string(),
            InstanceType::Array => "array".to_string(),
            InstanceType::Object => "table".to_string(),
            InstanceType::Null => "null".to_string(),
        }
    }

    fn section_title(&self, def: &str) -> String {
        let sec = self.sections.iter().find(|s| s.def == def).expect("every table has a section");
        sec.paths.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
    }

    /// The keys of `table`, without its `kind` when `skip_tag` (a kind's own heading says it).
    fn key_table(&self, out: &mut String, table: &SchemaObject, skip_tag: bool) {
        let obj = table.object.as_ref().expect("a table");
        out.push_str("| Key | Type | Required | Description |\n|---|---|---|---|\n");
        for (key, prop) in &obj.properties {
            let Some(prop) = as_object(prop).filter(|_| !(key == TAG && skip_tag)) else {
                continue;
            };
            let required = if obj.required.contains(key) { "required" } else { "optional" };
            let _ = writeln!(out, "| `{key}` | {} | {required} | {} |", self.type_text(prop), cell(description(prop)));
        }
        let closed = matches!(obj.additional_properties.as_deref(), Some(Schema::Bool(false)));
        if !closed {
            out.push_str("| *(any other key)* | as in the base scenario | optional | Overrides that key of the base scenario. |\n");
        }
        out.push('\n');
    }
}

/// The unit suffixes a unit type accepts (its `x-units`), as "`B`, `KB`, ...".
fn units(def: &SchemaObject) -> Option<String> {
    let u = def.extensions.get("x-units")?.as_array()?;
    Some(u.iter().filter_map(|v| v.as_str()).map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", "))
}

/// A table's doc comment without its leading "`[name]`:" label (the heading says it).
fn intro(def: &SchemaObject) -> String {
    let d = description(def).trim();
    let rest = match d.strip_prefix('`').and_then(|r| r.split_once('`')) {
        Some((_, after)) => after.trim_start_matches(['.', ':']).trim_start(),
        None => d,
    };
    let mut c = rest.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The scenario reference as Markdown.
pub fn markdown() -> String {
    let root = root_schema();
    let mut w = Walker { root: &root, sections: Vec::new(), value_types: Vec::new() };
    w.visit(&root.schema, "");

    let mut out = String::new();
    out.push_str("# Scenario file reference\n\n");
    let _ = writeln!(
        out,
        "<!-- Generated from the doc comments in crates/dcnsim-core/src/scenario/schema.rs by `{REGENERATE}`. \
         Do not edit by hand: a test fails when this file and the schema disagree. -->\n"
    );
    out.push_str(
        "A scenario is a TOML file (or, from Python, a dict / JSON document of the same shape). \
         This page lists every key it may contain, table by table, in declaration order. \
         Unknown keys are errors, and so is a key that does not apply to the chosen `kind` \
         (each `kind`-dependent key says which kinds use it). \
         Quantities are strings with a unit (`\"100Gbps\"`, `\"200ns\"`, `\"750KB\"`); \
         a bare number where a unit is needed is an error; see [Value types](#value-types). \
         *Optional* keys may be left out: the description gives the default (and the valid range, \
         which `dcnsim validate` checks). Some optional keys are required by particular kinds; \
         their descriptions say so, and leaving them out is reported by name.\n\n",
    );
    let _ = writeln!(
        out,
        "The same schema is available as JSON Schema (draft 7) in [`scenario.schema.json`](scenario.schema.json), \
         for editors that validate TOML against a JSON Schema. It checks types, units and required keys; \
         cross-key rules (ranges, keys per `kind`) are checked by `dcnsim validate`.\n"
    );

    out.push_str("## Contents\n\n- [Top level](#top-level)\n");
    for s in &w.sections {
        let _ = writeln!(out, "- [{}](#{})", w.section_title(s.def), anchor(s.def));
    }
    out.push_str("- [Value types](#value-types)\n\n");

    out.push_str("## Top level\n\n");
    let top = intro(&root.schema);
    if !top.is_empty() {
        let _ = writeln!(out, "{top}\n");
    }
    w.key_table(&mut out, &root.schema, false);

    for s in &w.sections {
        let def = w.def(s.def);
        let _ = writeln!(out, "<a id=\"{}\"></a>\n\n## {}\n", anchor(s.def), w.section_title(s.def));
        let text = intro(def);
        if !text.is_empty() {
            let _ = writeln!(out, "{text}\n");
        }
        match tagged_variants(def) {
            None => w.key_table(&mut out, def, false),
            Some(kinds) => {
                for (name, t) in kinds {
                    let _ = writeln!(out, "### `{TAG} = \"{name}\"`\n\n{}\n", cell(description(t)));
                    w.key_table(&mut out, t, true);
                }
            }
        }
    }

    out.push_str("## Value types\n\n");
    // Quantities with units first, then enumerations, each in order of first use.
    let (quantities, enums): (Vec<&Section>, Vec<&Section>) = w.value_types.iter().partition(|v| enum_values(w.def(v.def)).is_none());
    for v in quantities.into_iter().chain(enums) {
        let def = w.def(v.def);
        let used_by = v.paths.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
        let heading = match (def.metadata.as_ref().and_then(|m| m.title.clone()), enum_values(def)) {
            (Some(t), _) => t,
            (None, Some(_)) => format!("Values of {used_by}"),
            (None, None) => v.def.to_string(),
        };
        let _ = writeln!(out, "<a id=\"{}\"></a>\n\n### {heading}\n", anchor(v.def));
        let text = description(def).trim();
        if !text.is_empty() {
            let _ = writeln!(out, "{}\n", text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        if let Some(vals) = enum_values(def) {
            for (val, d) in vals {
                if d.is_empty() {
                    let _ = writeln!(out, "- `\"{val}\"`");
                } else {
                    let _ = writeln!(out, "- `\"{val}\"`: {}", d.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
            out.push('\n');
        } else {
            if let Some(u) = units(def) {
                let _ = writeln!(out, "Units: {u}.\n");
            }
            if let Some(m) = def.metadata.as_ref() {
                let ex: Vec<String> = m.examples.iter().filter_map(|e| e.as_str()).map(|e| format!("`\"{e}\"`")).collect();
                if !ex.is_empty() {
                    let _ = writeln!(out, "Examples: {}.\n", ex.join(", "));
                }
            }
            let _ = writeln!(out, "Used by {used_by}.\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario-reference.md");
    const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.schema.json");

    fn check_file(path: &str, generated: &str) {
        let on_disk = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path} ({e}); run `{REGENERATE}`"));
        if on_disk != generated {
            let line = on_disk.lines().zip(generated.lines()).position(|(a, b)| a != b).map(|i| i + 1);
            panic!(
                "{path} is out of date with the scenario schema (first difference at line {}); \
                 run `{REGENERATE}` and commit the result",
                line.map(|l| l.to_string()).unwrap_or_else(|| "end of file".to_string())
            );
        }
    }

    #[test]
    fn checked_in_reference_is_up_to_date() {
        check_file(MD_FILE, &markdown());
    }

    #[test]
    fn checked_in_json_schema_is_up_to_date() {
        check_file(SCHEMA_FILE, &json_schema());
    }

    /// Every key of every table has a doc comment: a new key cannot be added undocumented.
    #[test]
    fn every_key_is_documented() {
        let root = root_schema();
        let mut tables: Vec<(String, &SchemaObject)> = vec![("(top level)".to_string(), &root.schema)];
        for (name, def) in &root.definitions {
            if let Some(o) = as_object(def) {
                if o.object.is_some() {
                    tables.push((name.clone(), o));
                }
                for (kind, t) in tagged_variants(o).into_iter().flatten() {
                    tables.push((format!("{name}({kind})"), t));
                }
            }
        }
        let mut missing = Vec::new();
        for (name, t) in &tables {
            for (key, prop) in &t.object.as_ref().unwrap().properties {
                let documented = as_object(prop).map(|p| !description(p).trim().is_empty()).unwrap_or(false);
                if !documented {
                    missing.push(format!("{name}.{key}"));
                }
            }
        }
        assert!(missing.is_empty(), "keys without a doc comment (give unit, default and range): {missing:?}");
        // and each table itself is described
        for (name, t) in &tables {
            assert!(!description(t).trim().is_empty(), "table {name} has no doc comment");
        }
    }

    #[test]
    fn reference_covers_every_table_and_key() {
        let md = markdown();
        for heading in [
            "## `[scenario]`",
            "## `[topology]`",
            "## `[switch]`",
            "## `switch.buffer`",
            "## `switch.aqm`",
            "## `[transport]`",
            "## `transport.udp`",
            "## `[[workload]]`",
            "## `workload.flows[]`",
            "## `[metrics]`",
            "## `[[variant]]`",
            "### rate",
            "### duration",
            "### size",
        ] {
            assert!(md.contains(heading), "missing section {heading}");
        }
        let root = root_schema();
        for def in root.definitions.values().filter_map(as_object) {
            if let Some(o) = &def.object {
                for key in o.properties.keys() {
                    assert!(md.contains(&format!("| `{key}` |")), "key {key} missing from the reference");
                }
            }
            for (kind, t) in tagged_variants(def).into_iter().flatten() {
                assert!(md.contains(&format!("### `kind = \"{kind}\"`")), "kind {kind} missing from the reference");
                for key in t.object.as_ref().unwrap().properties.keys().filter(|k| *k != TAG) {
                    assert!(md.contains(&format!("| `{key}` |")), "key {key} of kind {kind} missing from the reference");
                }
            }
        }
        assert_eq!(md, markdown(), "deterministic");
        assert_eq!(json_schema(), json_schema(), "deterministic");
    }

    /// Every default a doc comment shows is the code's: the doc writes [`DEFAULT_PLACEHOLDER`]
    /// and the schema's default (from the table's `defaults()` or serde default, which the
    /// mechanism's constants give) is written in; no doc comment quotes a number, quantity or
    /// boolean of its own ("Default: the MTU" and other derived defaults are words).
    #[test]
    fn doc_comments_quote_no_default_of_their_own() {
        fn descriptions(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(serde_json::Value::String(d)) = m.get("description") {
                        out.push(d.clone());
                    }
                    m.values().for_each(|v| descriptions(v, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| descriptions(v, out)),
                _ => {}
            }
        }
        let settings = SchemaSettings::draft07().with(|s| s.option_add_null_type = false);
        let raw = serde_json::to_value(SchemaGenerator::new(settings).into_root_schema_for::<Scenario>()).unwrap();
        let mut raw_docs = Vec::new();
        descriptions(&raw, &mut raw_docs);
        let literal = quoting_defaults(&raw_docs);
        assert!(literal.is_empty(), "doc comments quoting a default instead of {DEFAULT_PLACEHOLDER}: {literal:#?}");
        let mut done = Vec::new();
        descriptions(&serde_json::to_value(root_schema()).unwrap(), &mut done);
        let left: Vec<&String> = done.iter().filter(|d| d.contains(DEFAULT_PLACEHOLDER)).collect();
        assert!(left.is_empty(), "{DEFAULT_PLACEHOLDER} without a default in the schema (give the table's defaults() the key): {left:#?}");
        // the check finds a quoted default
        assert_eq!(quoting_defaults(&["Queues. Default 1; >= 1.".to_string(), "Default: the MTU.".to_string()]).len(), 1);
    }

    /// The descriptions that write a literal default: "Default" then a digit, a quote, true or
    /// false.
    fn quoting_defaults(docs: &[String]) -> Vec<&String> {
        docs.iter()
            .filter(|d| {
                d.match_indices("Default").any(|(i, _)| {
                    let rest = d[i + "Default".len()..].trim_start();
                    rest.starts_with(|c: char| c.is_ascii_digit() || c == '"') || rest.starts_with("true") || rest.starts_with("false")
                })
            })
            .collect()
    }

    #[test]
    fn unit_examples_parse_and_defaults_have_no_nulls() {
        let root = root_schema();
        for (name, parse) in [
            ("Rate", (|s: &str| crate::sim::units::parse_rate(s).is_some()) as fn(&str) -> bool),
            ("Duration", |s| crate::sim::units::parse_duration(s).is_some()),
            ("Bytes", |s| crate::sim::units::parse_size(s).is_some()),
        ] {
            let d = as_object(&root.definitions[name]).unwrap();
            let m = d.metadata.as_ref().unwrap();
            assert!(!m.examples.is_empty());
            for e in &m.examples {
                assert!(parse(e.as_str().unwrap()), "{name} example {e} does not parse");
            }
        }
        assert!(!json_schema().contains("null"), "no null may appear in the schema");
    }

    /// A value of the schema's `default` as a scenario file holds it.
    fn toml_of(v: &serde_json::Value) -> Option<toml::Value> {
        match v {
            serde_json::Value::Bool(b) => Some(toml::Value::Boolean(*b)),
            serde_json::Value::Number(n) => n.as_i64().map(toml::Value::Integer).or_else(|| n.as_f64().map(toml::Value::Float)),
            serde_json::Value::String(s) => Some(toml::Value::String(s.clone())),
            _ => None,
        }
    }

    /// Every (table path, key, default) the schema documents for a table `value` sets, as
    /// `(path of tables, key, value)`: the places to write a default out.
    fn documented_defaults(root: &RootSchema, value: &toml::Table, s: &SchemaObject, path: Vec<String>, out: &mut Vec<(Vec<String>, String, String, toml::Value)>) {
        let s = match ref_name(s) {
            Some(r) => as_object(&root.definitions[r]).unwrap(),
            None => s,
        };
        let kind = value.get(TAG).and_then(|k| k.as_str());
        let s = match tagged_variants(s).and_then(|v| v.into_iter().find(|(n, _)| Some(n.as_str()) == kind)) {
            Some((_, t)) => t,
            None => s,
        };
        let Some(obj) = s.object.as_ref() else { return };
        let def = path.join(".");
        for (k, p) in &obj.properties {
            let Some(p) = as_object(p) else { continue };
            match value.get(k) {
                None => {
                    if let Some(d) = p.metadata.as_ref().and_then(|m| m.default.as_ref()).and_then(toml_of) {
                        out.push((path.clone(), k.clone(), def.clone(), d));
                    }
                }
                Some(toml::Value::Table(t)) => {
                    let mut sub = path.clone();
                    sub.push(k.clone());
                    documented_defaults(root, t, p, sub, out);
                }
                Some(toml::Value::Array(a)) => {
                    if let Some(item) = array_item(p) {
                        for (i, v) in a.iter().enumerate() {
                            if let toml::Value::Table(t) = v {
                                let mut sub = path.clone();
                                sub.push(format!("{k}[{i}]"));
                                documented_defaults(root, t, item, sub, out);
                            }
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Every table the schema `s` declares, as an empty table in `value` (nested ones
    /// filled in too); a kind-chosen table's path and kinds go to `kinds` instead (its keys
    /// depend on the kind). Tables inside arrays (workloads, links) are left out.
    fn every_table(root: &RootSchema, s: &SchemaObject, value: &mut toml::Table, path: Vec<String>, kinds: &mut Vec<(Vec<String>, Vec<String>)>) {
        let s = match ref_name(s) {
            Some(r) => as_object(&root.definitions[r]).unwrap(),
            None => s,
        };
        let Some(obj) = s.object.as_ref() else { return };
        for (k, p) in &obj.properties {
            let Some(p) = as_object(p) else { continue };
            let def = match ref_name(p) {
                Some(r) => as_object(&root.definitions[r]).unwrap(),
                None => p,
            };
            let mut sub = path.clone();
            sub.push(k.clone());
            if let Some(v) = tagged_variants(def) {
                kinds.push((sub, v.into_iter().map(|(n, _)| n).collect()));
            } else if def.object.as_ref().is_some_and(|o| !o.properties.is_empty()) {
                let t = value.entry(k.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                every_table(root, def, t.as_table_mut().unwrap(), sub, kinds);
            }
        }
    }

    /// The table at `path` (keys, `name[i]` for an array's entry) of `t`.
    fn table_at<'t>(t: &'t mut toml::Table, path: &[String]) -> &'t mut toml::Table {
        path.iter().fold(t, |t, part| {
            let v = match part.split_once('[') {
                Some((name, i)) => &mut t.get_mut(name).unwrap().as_array_mut().unwrap()[i.trim_end_matches(']').parse::<usize>().unwrap()],
                None => t.get_mut(part).unwrap(),
            };
            v.as_table_mut().unwrap()
        })
    }

    /// Writing out a key's documented default (the schema's, which the reference shows)
    /// builds the same simulation as leaving the key out, in every shipped small scenario
    /// and variant and the fingerprint coverage files: the defaults the reference shows are
    /// the ones the builder uses. A default the scenario cannot take (a static buffer's
    /// queue beside a shared model) is refused by validation and skipped.
    #[test]
    fn documented_defaults_are_the_builders() {
        use super::super::{configure, Document, RunOptions};
        let root = root_schema();
        let base = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for dir in ["python/dcnsim/scenarios", "bench/fingerprint"] {
            for e in std::fs::read_dir(format!("{base}/{dir}")).unwrap().flatten() {
                let p = e.path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if name.ends_with(".toml") && (dir == "bench/fingerprint" || name.ends_with("_small.toml") || name.starts_with("dumbbell") || name.starts_with("roce")) {
                    files.push(p);
                }
            }
        }
        files.sort();
        // the flows compared as values: formatting thousands of them cost most of the test
        let built = |t: &toml::Table| -> Result<(String, Vec<crate::workload::FlowSpec>), super::super::ScenarioError> {
            let s = Document::from_table(t.clone())?.scenario(None)?;
            let (topo, routes, cfg, mut arrivals) = configure(&s, &RunOptions::default())?;
            let specs: Vec<_> = std::iter::from_fn(|| arrivals.pop()).collect();
            Ok((format!("{topo:?}{routes:?}{cfg:?}"), specs))
        };
        // and the tables no shipped scenario leaves at their defaults
        let extra = "[scenario]\nname = \"defaults\"\nmax_time = \"1ms\"\n\
                     [topology]\nkind = \"dumbbell\"\nsenders = 2\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck = { rate = \"10Gbps\", delay = \"1us\" }\n\
                     [switch]\nbuffer = { model = \"shared\" }\nfq_codel = {}\nqcn = {}\nint = {}\nload_balance = { kind = \"flowlet\" }\ntrim = {}\n[transport]\nqcn = {}\nhpcc = {}\ntimely = {}\nswift = {}\nbbr = {}\nnscc = {}\n\
                     [metrics]\nqueue_sample = \"10us\"\ncapture = { ports = [\"left\"] }\n\
                     [[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 2, size = \"10KB\" }]\n\
                     [[variant]]\nname = \"static\"\nremove = [\"switch.buffer\", \"switch.fq_codel\"]\n";
        // and the keys the first leaves to their defaults only under another configuration
        let extra2 = "[scenario]\nname = \"defaults2\"\n\
                      [topology]\nkind = \"dumbbell\"\nsenders = 2\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck = { rate = \"10Gbps\", delay = \"1us\" }\n\
                      [switch]\nqueues = 2\nbuffer = { model = \"shared\", ingress_pool = \"9MB\" }\npfc = { alpha = 1.0 }\nci = {}\naqm = { kind = \"ramp\", kmin = \"10KB\", kmax = \"100KB\" }\n\
                      [[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 2, size = \"10KB\" }]\n\
                      [[variant]]\nname = \"static\"\nremove = [\"switch.pfc.alpha\", \"switch.buffer.ingress_pool\"]\nswitch.buffer = { model = \"static\" }\nswitch.pfc = { xoff = \"100KB\" }\n";
        // and the tables that cannot run beside those two's
        let extra3 = "[scenario]\nname = \"defaults3\"\n\
                      [topology]\nkind = \"dumbbell\"\nsenders = 2\nhost_link = { rate = \"10Gbps\", delay = \"1us\" }\nbottleneck = { rate = \"10Gbps\", delay = \"1us\" }\n\
                      [switch]\narchitecture = { kind = \"cioq\" }\naqm = { kind = \"step\", threshold = \"20KB\" }\ndrc = {}\nsfc = {}\n\
                      [faults]\nlinks = [{ link = \"left->right\", at = \"100us\", state = \"down\" }]\n\
                      [[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 2, size = \"10KB\" }]\n";
        let mut checked = std::collections::BTreeSet::new();
        for (f, text) in files
            .iter()
            .map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap()))
            .chain([("(inline)".to_string(), extra.to_string()), ("(inline 2)".to_string(), extra2.to_string()), ("(inline 3)".to_string(), extra3.to_string())])
        {
            let doc = Document::from_toml(&text).unwrap();
            let mut names: Vec<Option<String>> = vec![None];
            names.extend(doc.variant_names().into_iter().map(Some));
            for v in names {
                let merged = doc.merged(v.as_deref()).unwrap();
                let plain = built(&merged).unwrap_or_else(|e| panic!("{f} {v:?} does not build: {e}"));
                let mut found = Vec::new();
                documented_defaults(&root, &merged, &root.schema, Vec::new(), &mut found);
                for (path, key, table, value) in found {
                    let mut t = merged.clone();
                    table_at(&mut t, &path).insert(key.clone(), value.clone());
                    if let Ok(explicit) = built(&t) {
                        assert!(
                            explicit == plain,
                            "{f}{}: writing {table}.{key} = {value} (its documented default) changes the simulation",
                            v.as_ref().map(|v| format!(" variant {v}")).unwrap_or_default()
                        );
                        let table: String = table.split('.').map(|p| p.split('[').next().unwrap()).collect::<Vec<_>>().join(".");
                        checked.insert(format!("{table}.{key}"));
                    }
                }
            }
        }
        // every documented default was checked somewhere: every table the schema declares
        // (filled in from it, so that a new table's defaults cannot be missed), each kind of
        // a kind-chosen table in a document of its own
        let mut documented = std::collections::BTreeSet::new();
        let mut full = toml::Table::new();
        let mut kinds = Vec::new();
        every_table(&root, &root.schema, &mut full, Vec::new(), &mut kinds);
        assert!(["switch.pfc", "switch.fq_codel", "transport.swift", "metrics.capture"].iter().all(|t| {
            let mut v = Some(&full);
            t.split('.').for_each(|k| v = v.and_then(|v| v.get(k)).and_then(|v| v.as_table()));
            v.is_some()
        }), "the schema's tables were not all found: {full}");
        assert!(kinds.iter().any(|(p, k)| p == &["switch", "aqm"] && k.len() >= 7), "switch.aqm's kinds not found: {kinds:?}");
        let mut every = Vec::new();
        documented_defaults(&root, &full, &root.schema, Vec::new(), &mut every);
        for (path, names) in &kinds {
            for kind in names {
                let mut t = toml::Table::new();
                let (last, head) = path.split_last().unwrap();
                let mut at = &mut t;
                for k in head {
                    at = at.entry(k.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new())).as_table_mut().unwrap();
                }
                at.insert(last.clone(), toml::Value::Table(toml::Table::from_iter([(TAG.to_string(), toml::Value::String(kind.clone()))])));
                documented_defaults(&root, &t, &root.schema, Vec::new(), &mut every);
            }
        }
        for (_, key, table, _) in every {
            let table: String = table.split('.').map(|p| p.split('[').next().unwrap()).collect::<Vec<_>>().join(".");
            documented.insert(format!("{table}.{key}"));
        }
        let unchecked: Vec<&String> = documented.difference(&checked).collect();
        assert!(unchecked.is_empty(), "documented defaults no scenario here writes out: {unchecked:?}");
        assert!(checked.len() >= 60, "only {} keys' defaults checked: {checked:?}", checked.len());
    }

    /// Keys of `value` that the schema `s` does not declare.
    fn undeclared(root: &RootSchema, value: &toml::Value, s: &SchemaObject, path: &str, out: &mut Vec<String>) {
        let s = match ref_name(s) {
            Some(r) => as_object(&root.definitions[r]).unwrap(),
            None => s,
        };
        // a kind's table: the keys of the kind the value names
        let kind = value.get(TAG).and_then(|k| k.as_str());
        let s = match tagged_variants(s).and_then(|v| v.into_iter().find(|(n, _)| Some(n.as_str()) == kind)) {
            Some((_, t)) => t,
            None => s,
        };
        match value {
            toml::Value::Table(t) => {
                let Some(obj) = s.object.as_ref() else { return };
                let closed = matches!(obj.additional_properties.as_deref(), Some(Schema::Bool(false)));
                for (k, v) in t {
                    match obj.properties.get(k).and_then(as_object) {
                        Some(p) => undeclared(root, v, p, &format!("{path}.{k}"), out),
                        // a variant's overrides follow the top-level schema
                        None if !closed => {
                            let mut one = toml::Table::new();
                            one.insert(k.clone(), v.clone());
                            undeclared(root, &toml::Value::Table(one), &root.schema, path, out)
                        }
                        None => out.push(format!("{path}.{k}")),
                    }
                }
            }
            toml::Value::Array(a) => {
                if let Some(item) = array_item(s) {
                    for (i, v) in a.iter().enumerate() {
                        undeclared(root, v, item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }

    #[test]
    fn shipped_scenarios_use_only_declared_keys() {
        let root = root_schema();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/dcnsim/scenarios");
        let mut files: Vec<_> = std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
        files.sort();
        for f in files {
            let mut v: toml::Value = std::fs::read_to_string(&f).unwrap().parse().unwrap();
            let mut out = Vec::new();
            // `[sweep]` (dcnsim sweep's grid) names keys by their dotted paths: each must be a
            // declared key of the scenario
            if let Some(toml::Value::Table(sweep)) = v.as_table_mut().unwrap().remove("sweep") {
                for (key, values) in sweep.iter().filter(|(k, _)| *k != "seeds") {
                    let mut point = values.as_array().and_then(|a| a.first()).cloned().unwrap();
                    for part in key.rsplit('.') {
                        point = toml::Value::Table(toml::map::Map::from_iter([(part.to_string(), point)]));
                    }
                    undeclared(&root, &point, &root.schema, "", &mut out);
                }
            }
            undeclared(&root, &v, &root.schema, "", &mut out);
            assert!(out.is_empty(), "{}: keys not in the schema: {out:?}", f.display());
        }
        // and the walker does catch an undeclared key, in the base and in a variant
        let bad: toml::Value = "[switch]\nbogus = 1\naqm = { kind = \"step\", threshold = \"1KB\", kmin = \"1KB\" }\n[[variant]]\nname = \"x\"\nswitch.nope = 2\n".parse().unwrap();
        let mut out = Vec::new();
        undeclared(&root, &bad, &root.schema, "", &mut out);
        assert_eq!(out, vec![".switch.aqm.kmin".to_string(), ".switch.bogus".to_string(), ".variant[0].switch.nope".to_string()]);
    }
}
