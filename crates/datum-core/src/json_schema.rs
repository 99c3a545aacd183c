//! A JSON Schema (draft 2020-12) for Fleet, Host and Layer documents, for
//! editors: completion, hover text and errors as you type.
//!
//! It is generated, not written: the document keys come from the decoder's
//! own list ([`document::document_keys`]), and the resource types, their
//! fields, the type of each field and the words of each `ensure` from
//! [`schema`](crate::schema), the table the loader reads fields with. A key
//! the decoder takes that this module cannot describe is left open and
//! named by [`undescribed`], which a test holds empty.
//!
//! The schema accepts what the loader accepts, with one simplification: a
//! host name must be a YAML string (the loader also reads an unquoted
//! number as a name). What it cannot say, the loader still checks: labels
//! against `Fleet.labels`, references between resources, conflicts.

use std::borrow::Cow;

use crate::names::Rule;

mod name;
use name::name_schema;

use crate::document::{self, HOST_LABEL, VERSIONS};
use crate::emit::Tree;
use crate::schema::{Field, Kind, SECONDS_MAX, Ty};

/// The draft the schema is written in.
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A label key: `name` or `prefix/name`, letters, digits, `-`, `_`, `.`
/// (as [`document::valid_label_key`] reads it).
const LABEL_KEY: &str = r"^([A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+$";
/// A label value: non-empty text on one line, no control characters.
const LABEL_VALUE: &str = r"^[^\x00-\x1f\x7f-\x9f]+$";
/// A host name (as [`document::valid_host_name`] reads it).
const HOST_NAME: &str = r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$";
/// A path component `..`, refused in every path.
const PARENT_DIR: &str = r"(^|/)\.\.(/|$)";
/// A relative path with at least one real component (not only `.` and `/`).
const SOME_COMPONENT: &str = r"(^|/)([^/.]|\.[^/.]|\.\.[^/])";

/// An environment entry: a name, `=`, then the value (maybe empty).
const ENV_ENTRY: &str = r"^[A-Za-z_][A-Za-z0-9_]*=[^\x00]*$";

/// An entry of a command line: text without a NUL byte.
fn argv_entry() -> Tree<'static> {
    Tree::map()
        .with("type", text_types())
        .with("pattern", Tree::str(r"^[^\x00]*$"))
}

/// The whole schema: one document, whichever of the three types it is.
pub fn schema() -> Tree<'static> {
    let mut defs = Tree::map();
    let mut branches = Vec::new();
    for (ty, keys) in document::document_keys() {
        let def = format!("{ty}Document");
        branches.push(
            Tree::map()
                .with(
                    "if",
                    Tree::map()
                        .with(
                            "properties",
                            Tree::map().with("type", Tree::map().with("const", Tree::str(ty))),
                        )
                        .with("required", Tree::strs(["type"])),
                )
                .with("then", reference(&def)),
        );
        defs.push(def, document_def(ty, keys));
    }
    for kind in Kind::ALL {
        defs.push(kind.name(), resource_def(kind));
    }
    defs.push("ResourceId", resource_id());
    defs.push("LabelValue", label_value());
    let types: Vec<&str> = document::document_keys().iter().map(|(t, _)| *t).collect();
    Tree::map()
        .with("$schema", Tree::str(DRAFT))
        .with(
            "title",
            Tree::str(format!("Datum {} documents", VERSIONS.join(", "))),
        )
        .with(
            "description",
            Tree::str("A Fleet, Host or Layer document of a Datum fleet repository."),
        )
        .with("type", Tree::str("object"))
        .with("required", Tree::strs(["datum", "type", "name"]))
        .with(
            "properties",
            Tree::map().with("datum", version()).with(
                "type",
                Tree::map()
                    .with("description", Tree::str("The document type."))
                    .with("enum", Tree::strs(types)),
            ),
        )
        .with("allOf", Tree::List(branches))
        .with("$defs", defs)
}

/// Keys the decoder takes that the schema does not describe, as
/// `Type.key`. Empty when the schema is complete.
pub fn undescribed() -> Vec<String> {
    document::document_keys()
        .iter()
        .flat_map(|(ty, keys)| {
            keys.iter()
                .filter(|k| key_schema(ty, k).is_none())
                .map(move |k| format!("{ty}.{k}"))
        })
        .collect()
}

fn reference(def: &str) -> Tree<'static> {
    Tree::map().with("$ref", Tree::str(format!("#/$defs/{def}")))
}

fn described(description: impl Into<Cow<'static, str>>) -> Tree<'static> {
    Tree::map().with("description", Tree::Str(description.into()))
}

fn types(names: &[&'static str]) -> Tree<'static> {
    Tree::strs(names.iter().copied())
}

fn version() -> Tree<'static> {
    described("The document format version.").with("enum", Tree::strs(VERSIONS.iter().copied()))
}

/// One document type: every key the decoder takes, nothing else.
fn document_def(ty: &'static str, keys: &'static [&'static str]) -> Tree<'static> {
    let mut properties = Tree::map();
    for key in keys {
        // An undescribed key is left open rather than refused: the loader
        // takes it (`undescribed` names it for the test that fails).
        properties.push(*key, key_schema(ty, key).unwrap_or_else(Tree::map));
    }
    let required: Vec<&str> = keys.iter().copied().filter(|k| required(ty, k)).collect();
    Tree::map()
        .with("title", Tree::str(ty))
        .with("type", Tree::str("object"))
        .with("required", Tree::strs(required))
        .with("properties", properties)
        .with("additionalProperties", Tree::Bool(false))
}

fn required(ty: &str, key: &str) -> bool {
    matches!(key, "datum" | "type" | "name")
        || (ty == "Layer" && matches!(key, "precedence" | "match"))
}

/// The schema of one key of one document type; `None` for a key this
/// module does not know.
fn key_schema(ty: &str, key: &str) -> Option<Tree<'static>> {
    let tree = match (ty, key) {
        (_, "datum") => version(),
        (_, "type") => Tree::map().with("const", Tree::str(ty.to_owned())),
        ("Host", "name") => described(
            "The host's name: a lowercase DNS name, unique in the fleet. Every host also carries the label datum/host with it.",
        )
        .with("type", Tree::str("string"))
        .with("maxLength", Tree::Int(253))
        .with("pattern", Tree::str(HOST_NAME)),
        ("Fleet", "name") => described("The fleet's name.").with("type", text_types()),
        ("Layer", "name") => described("The layer's name.").with("type", text_types()),
        ("Fleet", "labels") => fleet_labels(),
        ("Fleet", "limits") => fleet_limits(),
        ("Fleet", "rollout") => fleet_rollout(),
        ("Host", "keys") => public_keys(
            "The public keys this host decrypts secrets with: usually its SSH host key (/etc/ssh/ssh_host_ed25519_key.pub), or an age key.",
        ),
        ("Fleet", "admins") => public_keys(
            "Public keys every secret is also encrypted to, so the people holding them can edit and re-encrypt secrets.",
        ),
        ("Host", "labels") => described("The host's labels; layers match hosts by them.")
            .with("type", types(&["object", "null"]))
            .with("propertyNames", host_label_key())
            .with("additionalProperties", reference("LabelValue")),
        ("Layer", "precedence") => described(
            "Higher is applied later and wins. By convention base 0, environment 10, site 20, role 30, host 100.",
        )
        .with("type", Tree::str("integer"))
        .with("minimum", Tree::Int(i32::MIN.into()))
        .with("maximum", Tree::Int(i32::MAX.into())),
        ("Layer", "match") => layer_match(),
        ("Layer", "resources") => resources(),
        ("Layer", "vars") => layer_vars(),
        _ => return None,
    };
    Some(tree)
}

/// A Fleet's declared label keys and values.
fn fleet_labels() -> Tree<'static> {
    described(
        "Declared label keys and their allowed values: with it, an undeclared key or value in a host or a matcher is an error.",
    )
    .with("type", types(&["object", "null"]))
    .with("propertyNames", host_label_key())
    .with(
        "additionalProperties",
        Tree::map().with(
            "anyOf",
            Tree::List(vec![
                declared_values(),
                described("The values, and the fact the label describes: apply and the agent refuse a host whose label disagrees with what it observes.")
                    .with("type", Tree::str("object"))
                    .with("required", Tree::strs(["values"]))
                    .with(
                        "properties",
                        Tree::map().with("values", declared_values()).with(
                            "fact",
                            Tree::map().with(
                                "enum",
                                Tree::strs(crate::facts::tieable_names()),
                            ),
                        ),
                    )
                    .with("additionalProperties", Tree::Bool(false)),
            ]),
        ),
    )
}

/// The values a declared label takes.
fn declared_values() -> Tree<'static> {
    Tree::map()
        .with("type", Tree::str("array"))
        .with("items", reference("LabelValue"))
}

/// A Fleet's limits for the loader.
fn fleet_limits() -> Tree<'static> {
    described("Limits the loader holds the fleet to.")
        .with("type", Tree::str("object"))
        .with(
            "properties",
            Tree::map().with(
                "source_bytes",
                described("The largest payload a `source` may name, in bytes (default 64 MiB).")
                    .with("type", Tree::str("integer"))
                    .with("minimum", Tree::Int(1)),
            ),
        )
        .with("additionalProperties", Tree::Bool(false))
}

/// A Fleet's rollout waves (`document::rollout` reads them).
fn fleet_rollout() -> Tree<'static> {
    let wave = Tree::map()
        .with("type", Tree::str("object"))
        .with("required", Tree::strs(["name"]))
        .with(
            "properties",
            Tree::map()
                .with(
                    "name",
                    described("The wave's name, as reports and `datum rollout status` show it.")
                        .with("type", Tree::str("string"))
                        .with("pattern", Tree::str("^[A-Za-z0-9._-]{1,63}$")),
                )
                .with(
                    "hosts",
                    described(
                        "A label selector (`role=web site=london`, `datum/host=web-001,web-002`): the remaining hosts this wave takes. Without it, every remaining host.",
                    )
                    .with("type", Tree::str("string"))
                    .with("minLength", Tree::Int(1)),
                )
                .with(
                    "percent",
                    described(
                        "The share of the remaining (selected) hosts this wave takes, rounded up, chosen by the SHA-256 digest of each host's name: more than 0, at most 100, two decimals at most.",
                    )
                    .with("type", Tree::str("number"))
                    .with("exclusiveMinimum", Tree::Int(0))
                    .with("maximum", Tree::Int(100)),
                )
                .with(
                    "after",
                    described(
                        "How long after the previous wave starts this one starts (the first wave: after publication): `30m`, `2h 30m`, `1 day`, `PT2H`; at most 30 days.",
                    )
                    .with(
                        "anyOf",
                        Tree::List(vec![
                            Tree::map().with("type", Tree::str("string")),
                            Tree::map().with("const", Tree::Int(0)),
                        ]),
                    ),
                ),
        )
        .with("additionalProperties", Tree::Bool(false));
    described(
        "The waves a change reaches the fleet in, in order; hosts no wave takes are in the last. The first wave that takes a host keeps it.",
    )
    .with("type", Tree::str("array"))
    .with("minItems", Tree::Int(1))
    .with("maxItems", Tree::Int(crate::document::rollout::MAX_WAVES as i64))
    .with("items", wave)
}

/// A Layer's matcher.
fn layer_match() -> Tree<'static> {
    described(
        "The hosts this layer applies to: those carrying every listed label with exactly that value, or one of the values of a list (`role: [web, cache]`). `match: {}` matches every host.",
    )
    .with("type", Tree::str("object"))
    .with(
        "properties",
        Tree::map().with(
            "labels",
            Tree::map()
                .with("type", Tree::str("object"))
                .with("propertyNames", matcher_label_key())
                .with(
                    "additionalProperties",
                    Tree::map().with(
                        "anyOf",
                        Tree::List(vec![
                            reference("LabelValue"),
                            Tree::map()
                                .with("type", Tree::str("array"))
                                .with("minItems", Tree::Int(1))
                                .with("items", reference("LabelValue")),
                        ]),
                    ),
                ),
        ),
    )
    .with("additionalProperties", Tree::Bool(false))
}

/// A Layer's vars.
fn layer_vars() -> Tree<'static> {
    described(
        "Values templates read as `vars.NAME`: text, numbers, booleans, lists or mappings. A var folds like a field: the highest precedence wins, equal precedences must agree, and `null` unsets it.",
    )
    .with("type", types(&["object", "null"]))
    .with("propertyNames", Tree::map().with("pattern", Tree::str(VAR_NAME)))
    .with(
        "additionalProperties",
        Tree::map().with(
            "type",
            types(&["string", "number", "boolean", "array", "object", "null"]),
        ),
    )
}

/// A var name ([`crate::vars::valid_var_name`]).
const VAR_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";

/// A list of public keys: OpenSSH `ssh-ed25519` or `ssh-rsa` lines, or
/// native `age1...` keys. `datum check` reads each one whole.
fn public_keys(description: &'static str) -> Tree<'static> {
    described(description)
        .with("type", Tree::str("array"))
        .with(
            "items",
            Tree::map()
                .with("type", Tree::str("string"))
                .with("pattern", Tree::str(PUBLIC_KEY)),
        )
}

/// The start of a key Datum can encrypt to.
const PUBLIC_KEY: &str = r"^\s*(ssh-ed25519 |ssh-rsa |age1)";

/// Text as the loader reads it: a plain scalar is its text.
fn text_types() -> Tree<'static> {
    types(&["string", "number", "boolean"])
}

fn host_label_key() -> Tree<'static> {
    Tree::map()
        .with("pattern", Tree::str(LABEL_KEY))
        .with("not", Tree::map().with("pattern", Tree::str("^datum/")))
}

/// A matcher may also name `datum/host`, the one label Datum sets.
fn matcher_label_key() -> Tree<'static> {
    Tree::map().with(
        "anyOf",
        Tree::List(vec![
            Tree::map().with("const", Tree::str(HOST_LABEL)),
            host_label_key(),
        ]),
    )
}

fn label_value() -> Tree<'static> {
    described("A label value: non-empty text on one line.")
        .with("type", text_types())
        .with("pattern", Tree::str(LABEL_VALUE))
}

/// `Type[title]`, of a known type.
fn resource_id() -> Tree<'static> {
    // A Cron's title names its file, so it follows that name's rule.
    let kinds: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| **k != Kind::Cron)
        .map(|k| k.name())
        .collect();
    // The title: no brackets or control characters, no space at either end.
    let inner = r"[^\[\]\x00-\x1f\x7f-\x9f]";
    let edge = r"[^\[\]\s\x00-\x1f\x7f-\x9f]";
    let cron = Rule::CronName
        .patterns()
        .0
        .trim_start_matches('^')
        .trim_end_matches('$');
    described("A resource id, Type[title], such as Package[nginx].")
        .with("type", Tree::str("string"))
        .with(
            "pattern",
            Tree::str(format!(
                r"^(({})\[{edge}({inner}*{edge})?\]|Cron\[{cron}\])$",
                kinds.join("|")
            )),
        )
}

fn resources() -> Tree<'static> {
    let mut by_kind = Tree::map();
    for kind in Kind::ALL {
        by_kind.push(format!(r"^{}\[", kind.name()), reference(kind.name()));
    }
    described(
        "The resources this layer declares, by id (Type[title]), each with the fields it sets.",
    )
    .with("type", types(&["object", "null"]))
    .with("propertyNames", reference("ResourceId"))
    .with("patternProperties", by_kind)
}

/// A resource type: its fields, each as the loader reads it.
fn resource_def(kind: Kind) -> Tree<'static> {
    let mut properties = Tree::map();
    for &field in kind.fields() {
        properties.push(field.name(), field_schema(kind, field));
    }
    Tree::map()
        .with("title", Tree::str(kind.name()))
        .with(
            "description",
            Tree::str(format!(
                "The fields of a {kind} this layer sets; `null` unsets a field set by lower layers."
            )),
        )
        .with("type", types(&["object", "null"]))
        .with("properties", properties)
        .with("additionalProperties", Tree::Bool(false))
}

/// One field: its type, plus `null`, which unsets it.
fn field_schema(kind: Kind, field: Field) -> Tree<'static> {
    if let Some(rule) = crate::names::rule(kind, field) {
        return name_schema(kind.ty(field), rule);
    }
    let ty = kind.ty(field);
    match ty {
        Ty::AbsPath | Ty::Source | Ty::Template => path_schema(ty),
        Ty::List | Ty::Argv | Ty::Env | Ty::Refs => list_schema(ty),
        Ty::Text => described("Text.")
            .with("type", types(&["string", "number", "boolean", "null"]))
            .with("minLength", Tree::Int(1)),
        Ty::Content => described("Text, which may be empty.")
            .with("type", types(&["string", "number", "boolean", "null"])),
        Ty::Mode => described("A file mode: 3 or 4 octal digits, quoted (\"0640\").")
            .with("type", types(&["string", "null"]))
            .with("pattern", Tree::str("^[0-7]{3,4}$")),
        Ty::Bool => described("true or false.").with("type", types(&["boolean", "null"])),
        Ty::Id => described("A numeric id.")
            .with("type", types(&["integer", "null"]))
            .with("minimum", Tree::Int(0))
            .with("maximum", Tree::Int(4_294_967_294)),
        Ty::Word(words) => described(format!("One of {}.", words.join(", "))).with(
            "enum",
            Tree::List(
                words
                    .iter()
                    .map(|w| Tree::str(*w))
                    .chain([Tree::Null])
                    .collect(),
            ),
        ),
        Ty::Seconds => described(format!(
            "A whole number of seconds, from 1 to {SECONDS_MAX}."
        ))
        .with("type", types(&["integer", "null"]))
        .with("minimum", Tree::Int(1))
        .with("maximum", Tree::Int(SECONDS_MAX)),
        Ty::Schedule => described(
            "When cron runs the command: five fields (minute hour day-of-month month day-of-week, such as `*/15 * * * *`) or a shortcut such as `@daily`.",
        )
        .with("type", types(&["string", "null"]))
        .with("pattern", Tree::str(SCHEDULE)),
        Ty::Pass => described("fsck's pass: 0 (not checked), 1 (the root filesystem) or 2.")
            .with("type", types(&["integer", "null"]))
            .with("minimum", Tree::Int(0))
            .with("maximum", Tree::Int(2)),
    }
}

/// A cron schedule's shape; `crate::cron` checks each field's range too.
const SCHEDULE: &str = r"^\s*(@(reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*,/-]+(\s+[0-9A-Za-z*,/-]+){4})\s*$";

/// A path field: absolute, a fleet file, or a template.
fn path_schema(ty: Ty) -> Tree<'static> {
    let not_parent = || {
        Tree::map().with(
            "not",
            Tree::map()
                .with("type", Tree::str("string"))
                .with("pattern", Tree::str(PARENT_DIR)),
        )
    };
    match ty {
        Ty::AbsPath => described("An absolute path.")
            .with("type", types(&["string", "null"]))
            .with("pattern", Tree::str("^/"))
            .with("allOf", Tree::List(vec![not_parent()])),
        Ty::Source => described(
            "A file of the fleet repository, by its path relative to the fleet root (it must exist).",
        )
        .with("type", types(&["string", "number", "boolean", "null"]))
        .with("pattern", Tree::str(SOME_COMPONENT))
        .with(
            "allOf",
            Tree::List(vec![
                not_parent(),
                Tree::map().with(
                    "not",
                    Tree::map()
                        .with("type", Tree::str("string"))
                        .with("pattern", Tree::str("^/")),
                ),
            ]),
        ),
        _ => described(
            "A template under templates/, by its path relative to the fleet root (it must exist), rendered for each host as the File's content.",
        )
        .with("type", types(&["string", "null"]))
        .with("pattern", Tree::str("^(\\./)*templates/"))
        .with("allOf", Tree::List(vec![not_parent()])),
    }
}

/// A field that is a list (or, for refs, one entry or a list).
fn list_schema(ty: Ty) -> Tree<'static> {
    match ty {
        Ty::List => described("A list of text, replaced whole by a higher layer.")
            .with("type", types(&["array", "null"]))
            .with(
                "items",
                Tree::map()
                    .with("type", text_types())
                    .with("minLength", Tree::Int(1)),
            ),
        Ty::Argv => described(
            "A command line as a list: the program (not empty; looked up in PATH unless it is a path), then each argument as its own entry. No shell reads it unless `shell: true`.",
        )
        .with("type", types(&["array", "null"]))
        .with("minItems", Tree::Int(1))
        .with("items", argv_entry()),
        Ty::Env => described(
            "Environment variables for the command, as NAME=value entries; each name once.",
        )
        .with("type", types(&["array", "null"]))
        .with("uniqueItems", Tree::Bool(true))
        .with(
            "items",
            Tree::map()
                .with("type", Tree::str("string"))
                .with("pattern", Tree::str(ENV_ENTRY)),
        ),
        _ => described(
            "Resource ids: one, or a list. Entries from every matching layer are united.",
        )
        .with(
            "anyOf",
            Tree::List(vec![
                Tree::map().with("type", Tree::str("null")),
                reference("ResourceId"),
                Tree::map()
                    .with("type", Tree::str("array"))
                    .with("items", reference("ResourceId")),
            ]),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'t>(tree: &'t Tree<'static>, path: &[&str]) -> Option<&'t Tree<'static>> {
        let mut at = tree;
        for key in path {
            let Tree::Map(entries) = at else { return None };
            at = &entries.iter().find(|(k, _)| k == key)?.1;
        }
        Some(at)
    }

    fn keys(tree: &Tree<'static>) -> Vec<String> {
        match tree {
            Tree::Map(entries) => entries.iter().map(|(k, _)| k.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn every_key_the_decoder_takes_is_described() {
        assert_eq!(undescribed(), Vec::<String>::new());
        let schema = schema();
        for (ty, doc_keys) in document::document_keys() {
            let props = get(&schema, &["$defs", &format!("{ty}Document"), "properties"])
                .unwrap_or_else(|| panic!("no {ty}Document"));
            assert_eq!(keys(props), doc_keys.to_vec(), "{ty}");
        }
    }

    #[test]
    fn every_type_field_and_word_of_the_loader_table_is_in_the_schema() {
        let schema = schema();
        for kind in Kind::ALL {
            let props = get(&schema, &["$defs", kind.name(), "properties"])
                .unwrap_or_else(|| panic!("no definition for {kind}"));
            let names: Vec<&str> = kind.fields().iter().map(|f| f.name()).collect();
            assert_eq!(keys(props), names, "{kind}");
            // An Exec has no `ensure`: it runs a command, it keeps nothing present.
            if kind.has(Field::Ensure) {
                let ensure = get(props, &["ensure", "enum"]).unwrap();
                let mut words: Vec<Tree> =
                    kind.ensure_words().iter().map(|w| Tree::str(*w)).collect();
                words.push(Tree::Null);
                assert_eq!(ensure, &Tree::List(words), "{kind}");
            }
            let pattern = format!(r"^{}\[", kind.name());
            assert!(
                get(
                    &schema,
                    &[
                        "$defs",
                        "LayerDocument",
                        "properties",
                        "resources",
                        "patternProperties",
                        &pattern
                    ]
                )
                .is_some(),
                "{kind} is not reachable from resources"
            );
            let Some(Tree::Str(id)) = get(&schema, &["$defs", "ResourceId", "pattern"]) else {
                panic!("no id pattern")
            };
            assert!(id.contains(kind.name()), "{kind} is not in {id}");
        }
    }

    #[test]
    fn the_version_is_the_one_this_build_reads() {
        let schema = schema();
        assert_eq!(
            get(&schema, &["properties", "datum", "enum"]),
            Some(&Tree::strs(VERSIONS.iter().copied()))
        );
        assert_eq!(get(&schema, &["$schema"]), Some(&Tree::str(DRAFT)));
    }
}
