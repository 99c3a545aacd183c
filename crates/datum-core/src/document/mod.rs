//! Fleet, Host and Layer documents as written, every value with its place.
//!
//! This is the only module that knows YAML. It turns a file's text into
//! typed documents, reporting every problem it finds (not only the first),
//! and for a document it could not read it keeps what it can tell about which
//! hosts the document touches, so the rest of the fleet can still resolve.
//!
//! - this file: the document types, [`decode_file`], name rules;
//! - `cx`: the decoder context, shared by the readers below;
//! - `kinds`: one document: version, type, keys, name, then the Fleet, Host
//!   or Layer fields;
//! - `labels`: host labels, matchers and `Fleet.labels`;
//! - `resources`: a layer's resources and their fields;
//! - `values`: one reader per field value type;
//! - `vars`: a layer's `vars:`, values of any shape;
//! - `rollout`: `rollout:` in `datum.yaml`, the waves as written.

pub mod classify;
mod cx;
mod kinds;
mod labels;
mod resources;
pub mod rollout;
#[cfg(test)]
mod tests;
mod values;
mod vars;
pub mod wide;

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::diagnostic::Diagnostic;
use crate::schema::{Field, ResourceId, Value};
use crate::source::{FileId, Span};
use crate::vars::VarSetting;
use crate::yaml;

use cx::Cx;

/// Every version this build reads ([`crate::VERSION`] alone).
pub const VERSIONS: &[&str] = &[crate::VERSION];
/// The directory templates and their includes live in: a `template` names
/// a file below it.
pub const TEMPLATE_DIR: &str = "templates";
/// The label every host carries with its own name.
pub const HOST_LABEL: &str = "datum/host";

/// A label as written: key and value with their places.
#[derive(Clone, Debug)]
pub struct LabelDecl {
    /// Shared within a file: thousands of hosts carry the same few labels.
    pub key: Arc<str>,
    pub value: Arc<str>,
    pub key_span: Span,
    pub value_span: Span,
}

#[derive(Debug)]
pub struct FleetDoc {
    pub name: Box<str>,
    pub span: Span,
    /// Declared label keys and their allowed values, when declared.
    pub labels: Option<Vec<DeclaredLabel>>,
    /// `limits.source_bytes`: the largest payload a `source` may name.
    pub source_limit: Option<u64>,
    /// `admins`: public keys every secret is also encrypted to.
    pub admins: Vec<KeyDecl>,
    /// `rollout:`: the waves a change reaches the fleet in, when declared.
    pub rollout: Option<RolloutDecl>,
}

/// `rollout:` as written: the waves in order.
#[derive(Clone, Debug)]
pub struct RolloutDecl {
    /// The `rollout` list.
    pub span: Span,
    /// In the order written; names unique.
    pub waves: Vec<WaveDecl>,
}

/// One wave as written.
#[derive(Clone, Debug)]
pub struct WaveDecl {
    pub name: Box<str>,
    pub name_span: Span,
    /// `hosts`: a label selector as written (`role=web site=london`).
    pub hosts: Option<(Box<str>, Span)>,
    /// `percent`: of the remaining hosts, in hundredths of a percent (1 to 10000).
    pub percent: Option<(u32, Span)>,
    /// `after`: seconds after the previous wave starts (the first: after publication).
    pub after: Option<(u64, Span)>,
    /// The whole wave.
    pub span: Span,
}

/// A public key as written in `keys` or `admins`: its text and place. The
/// core keeps keys as text; `datum-secrets` reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDecl {
    pub text: Box<str>,
    pub span: Span,
}

#[derive(Debug)]
pub struct DeclaredLabel {
    pub key: Box<str>,
    pub key_span: Span,
    pub values: Vec<(Box<str>, Span)>,
    /// `fact:`: the fact the label describes ([`crate::facts`]), and where.
    pub fact: Option<(Box<str>, Span)>,
}

#[derive(Debug)]
pub struct HostDoc {
    pub name: Box<str>,
    pub name_span: Span,
    /// As written, in document order.
    pub labels: Vec<LabelDecl>,
    /// `keys`: the public keys this host decrypts secrets with.
    pub keys: Vec<KeyDecl>,
}

#[derive(Debug)]
pub struct LayerDoc {
    pub name: Box<str>,
    pub name_span: Span,
    pub precedence: i32,
    pub precedence_span: Span,
    /// The `match:` key, where an unmatched layer is reported.
    pub match_span: Span,
    pub matcher: Vec<LabelDecl>,
    pub resources: Vec<ResourceDecl>,
    /// `vars:`, sorted by name.
    pub vars: Vec<VarDecl>,
}

/// One var as one layer sets it.
#[derive(Debug)]
pub struct VarDecl {
    pub name: Box<str>,
    pub name_span: Span,
    /// The value as written.
    pub span: Span,
    pub setting: VarSetting,
}

/// A resource as one layer declares it.
#[derive(Debug)]
pub struct ResourceDecl {
    pub id: ResourceId,
    pub span: Span,
    pub fields: Vec<FieldDecl>,
    /// A problem inside it was reported: the fields that caused it are left
    /// out of `fields`, the rest are kept so that they are still checked,
    /// and the hosts its layer selects get no manifest.
    pub set_aside: bool,
}

/// One field as one layer sets it.
#[derive(Debug)]
pub struct FieldDecl {
    pub field: Field,
    /// The value as written (for a set, the whole list).
    pub span: Span,
    pub value: FieldValue,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldValue {
    Value(Value),
    /// `null`: unsets what lower layers set.
    Unset,
    /// Entries of `requires` or `restart_on`, each with its place.
    Refs(Vec<(ResourceId, Span)>),
}

/// What is known of a document that could not be read, to tell which hosts
/// it touches.
#[derive(Debug)]
pub enum Broken {
    /// A host document; the name when it could be read.
    Host(Option<Box<str>>),
    /// A layer document; its matcher when it could be read whole.
    Layer(Option<Vec<LabelDecl>>),
    /// The Fleet document: every host depends on it.
    Fleet,
}

/// Everything read from one file.
#[derive(Debug, Default)]
pub struct FileDocs {
    pub fleets: Vec<FleetDoc>,
    pub hosts: Vec<HostDoc>,
    pub layers: Vec<LayerDoc>,
    pub broken: Vec<Broken>,
    /// Where each layer document starts, parallel to `layers` then `broken` layers.
    pub layer_spans: Vec<Span>,
    /// Where every resource of every layer document is written, broken
    /// documents included, and whether it says `sensitive: true` there.
    pub regions: Vec<ResourceRegion>,
}

/// The lines a resource's declaration takes in a layer document (its id,
/// its fields, their values), as read from the YAML whatever else is
/// wrong with the document: the lines of a sensitive resource are never
/// shown under a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRegion {
    pub id: ResourceId,
    pub file: FileId,
    pub first_line: u32,
    pub last_line: u32,
    /// The declaration has `sensitive: true`.
    pub sensitive: bool,
}

/// The regions of the resources of one document (see [`ResourceRegion`]).
fn regions(doc: &yaml::Doc<'_>, file: FileId, out: &mut Vec<ResourceRegion>) {
    let text = |i: u32| match &doc.node(i).kind {
        yaml::Kind::Scalar(t, _) => Some(t.as_ref()),
        _ => None,
    };
    if doc.nodes.is_empty() || !matches!(doc.node(0).kind, yaml::Kind::Map) {
        return;
    }
    let Some((_, resources)) = doc.entries(0).find(|&(k, _)| text(k) == Some("resources")) else {
        return;
    };
    if !matches!(doc.node(resources).kind, yaml::Kind::Map) {
        return;
    }
    let entries: Vec<(u32, u32)> = doc.entries(resources).collect();
    for (n, &(k, v)) in entries.iter().enumerate() {
        let Some(id) = text(k).and_then(|t| ResourceId::parse(t).ok()) else {
            continue;
        };
        let first_line = doc.node(k).span.start.line;
        let last_line = match entries.get(n + 1) {
            Some(&(next, _)) => doc.node(next).span.start.line.saturating_sub(1),
            // The last one ends where its deepest value ends; an end at the
            // start of a line belongs to the line before.
            None => (k..doc.node(v).end)
                .map(|i| {
                    let s = doc.node(i).span;
                    if s.end.col <= 1 && s.end.line > s.start.line {
                        s.end.line - 1
                    } else {
                        s.end.line
                    }
                })
                .max()
                .unwrap_or(first_line),
        }
        .max(first_line);
        let sensitive = matches!(doc.node(v).kind, yaml::Kind::Map)
            && doc.entries(v).any(|(fk, fv)| {
                text(fk) == Some("sensitive")
                    && matches!(&doc.node(fv).kind, yaml::Kind::Scalar(t, yaml::Style::Plain) if yaml::classify_plain(t) == yaml::Plain::Bool(true))
            });
        out.push(ResourceRegion {
            id,
            file,
            first_line,
            last_line,
            sensitive,
        });
    }
}

/// The document types, each with every top-level key the decoder takes.
pub fn document_keys() -> [(&'static str, &'static [&'static str]); 3] {
    kinds::document_keys()
}

/// Reads every document of one file.
pub fn decode_file(file: FileId, text: &str, diags: &mut Vec<Diagnostic>) -> FileDocs {
    let mut out = FileDocs::default();
    let mut strings = FxHashSet::default();
    yaml::parse_each(file, text, diags, &mut |doc, diags| {
        // A document cut short by a syntax error is read only to learn which
        // hosts it touches; its other complaints would be about the cut.
        let mut quiet = Vec::new();
        let mut cx = Cx {
            doc: &doc,
            file,
            diags: if doc.truncated { &mut quiet } else { diags },
            ok: !doc.broken,
            strings: &mut strings,
        };
        cx.document(&mut out);
        regions(&doc, file, &mut out.regions);
    });
    out
}

/// `` `a`, `b` and `c` ``, for hints.
fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

/// `[a-z0-9]([a-z0-9.-]*[a-z0-9])?`, at most 253 characters.
pub fn valid_host_name(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 253
        && edge(b[0])
        && edge(b[b.len() - 1])
        && b.iter().all(|&c| edge(c) || c == b'-' || c == b'.')
}

/// `name` or `prefix/name`, each part letters, digits, `-`, `_` and `.`.
pub fn valid_label_key(s: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    };
    match s.split_once('/') {
        Some((prefix, name)) => part(prefix) && part(name),
        None => part(s),
    }
}
