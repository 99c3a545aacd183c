//! Fleet, Host and Layer documents as written, every value with its place.
//!
//! This is the only module that knows YAML. It turns a file's text into
//! typed documents, reporting every problem it finds (not only the first),
//! and for a document it could not read it keeps what it can tell about which
//! hosts the document touches, so the rest of the fleet can still resolve.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::diagnostic::Diagnostic;
use crate::schema::{
    Field, Kind, PathError, ResourceId, Ty, Value, normalise_abs_path, normalise_mode,
    normalise_rel_path, suggest,
};
use crate::source::{FileId, Span};
use crate::yaml::{self, Doc, Plain, Style, classify_plain};

/// The document format version this build reads.
pub const VERSION: &str = "v1alpha1";
/// Every version this build reads.
pub const VERSIONS: &[&str] = &[VERSION];
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
}

#[derive(Debug)]
pub struct DeclaredLabel {
    pub key: Box<str>,
    pub key_span: Span,
    pub values: Vec<(Box<str>, Span)>,
}

#[derive(Debug)]
pub struct HostDoc {
    pub name: Box<str>,
    pub name_span: Span,
    /// As written, in document order.
    pub labels: Vec<LabelDecl>,
}

#[derive(Debug)]
pub struct LayerDoc {
    pub name: Box<str>,
    pub precedence: i32,
    pub precedence_span: Span,
    /// The `match:` key, where an unmatched layer is reported.
    pub match_span: Span,
    pub matcher: Vec<LabelDecl>,
    pub resources: Vec<ResourceDecl>,
}

/// A resource as one layer declares it.
#[derive(Debug)]
pub struct ResourceDecl {
    pub id: ResourceId,
    pub span: Span,
    pub fields: Vec<FieldDecl>,
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
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum DocType {
    Fleet,
    Host,
    Layer,
}

impl DocType {
    fn keys(self) -> &'static [&'static str] {
        match self {
            DocType::Fleet => &["datum", "type", "name", "labels"],
            DocType::Host => &["datum", "type", "name", "labels"],
            DocType::Layer => &["datum", "type", "name", "precedence", "match", "resources"],
        }
    }
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
    });
    out
}

struct Cx<'d, 'a, 'x> {
    doc: &'d Doc<'a>,
    file: FileId,
    diags: &'x mut Vec<Diagnostic>,
    ok: bool,
    /// Label text seen in this file, shared rather than copied per host.
    strings: &'x mut FxHashSet<Arc<str>>,
}

/// A scalar's text and style, or the kind of collection found instead.
enum Scalar<'d> {
    Text(&'d str, Style),
    Seq,
    Map,
}

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    fn shared(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.strings.get(s) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = s.into();
        self.strings.insert(Arc::clone(&shared));
        shared
    }

    fn err(&mut self, d: Diagnostic) {
        self.ok = false;
        self.diags.push(d);
    }

    fn span(&self, i: u32) -> Span {
        self.doc.node(i).span
    }

    fn scalar(&self, i: u32) -> Scalar<'d> {
        match &self.doc.node(i).kind {
            yaml::Kind::Scalar(t, s) => Scalar::Text(t.as_ref(), *s),
            yaml::Kind::Seq => Scalar::Seq,
            yaml::Kind::Map => Scalar::Map,
        }
    }

    fn is_null(&self, i: u32) -> bool {
        matches!(self.scalar(i), Scalar::Text(t, Style::Plain) if classify_plain(t) == Plain::Null)
    }

    fn is_map(&self, i: u32) -> bool {
        matches!(self.scalar(i), Scalar::Map)
    }

    fn found(&self, i: u32) -> &'static str {
        match self.scalar(i) {
            Scalar::Seq => "a list",
            Scalar::Map => "a mapping",
            Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                Plain::Null => "nothing (null)",
                Plain::Bool(_) => "a boolean",
                Plain::Int(_) | Plain::BigInt => "a number",
                Plain::Float => "a number",
                Plain::Str => "text",
            },
            Scalar::Text(..) => "text",
        }
    }

    fn type_error(&mut self, i: u32, what: &str, expected: &str, hint: impl Into<String>) {
        let found = self.found(i);
        let d = Diagnostic::error(
            "wrong-type",
            format!("{what} must be {expected}, found {found}"),
        )
        .at(self.span(i), format!("expected {expected}"))
        .hint(hint);
        self.err(d);
    }

    /// Entries of a mapping as (key text, key node, value node).
    fn entries(&self, map: u32) -> Vec<(&'d str, u32, u32)> {
        let doc: &'d Doc<'a> = self.doc;
        doc.entries(map)
            .filter_map(|(k, v)| match &doc.node(k).kind {
                yaml::Kind::Scalar(t, _) => Some((t.as_ref(), k, v)),
                _ => None,
            })
            .collect()
    }

    /// Text of a scalar read as text: plain scalars as written, except null.
    fn text(&mut self, i: u32, what: &str) -> Option<&'d str> {
        match self.scalar(i) {
            Scalar::Text(t, Style::Plain) if classify_plain(t) == Plain::Null => {
                self.type_error(i, what, "text", "write a value, or remove the key");
                None
            }
            Scalar::Text(t, _) => Some(t),
            _ => {
                self.type_error(i, what, "text", "write a single value");
                None
            }
        }
    }

    fn document(&mut self, out: &mut FileDocs) {
        let doc = self.doc;
        if doc.nodes.is_empty() || self.is_null(0) {
            // An empty document (a stray `---`) is skipped.
            return;
        }
        if !self.is_map(0) {
            let found = self.found(0);
            self.err(
                Diagnostic::error(
                    "not-a-document",
                    format!("a document must be a mapping, found {found}"),
                )
                .at(self.span(0), "this document")
                .hint("a document starts with `datum: v1alpha1`, `type:` and `name:`"),
            );
            return;
        }
        let entries = self.entries(0);
        let get = |key: &str| entries.iter().find(|e| e.0 == key).map(|e| (e.1, e.2));
        let top = self.span(0);
        let top_point = Span {
            file: self.file,
            start: top.start,
            end: top.start,
        };

        // `datum:` first: a document of another version is not read further.
        match get("datum") {
            None => self.err(
                Diagnostic::error("missing-key", "this document has no `datum:` version")
                    .at(top_point, "document starts here")
                    .hint(format!("add `datum: {VERSION}` as its first line")),
            ),
            Some((_, v)) => match self.scalar(v) {
                Scalar::Text(t, _) if t == VERSION => {}
                Scalar::Text(t, _) => {
                    let d = Diagnostic::error(
                        "unsupported-version",
                        format!("unsupported document version `{t}`"),
                    )
                    .at(self.span(v), "unsupported version")
                    .hint(format!("this build of Datum reads {}", VERSIONS.join(", ")));
                    self.err(d);
                }
                _ => self.type_error(
                    v,
                    "`datum`",
                    "a version",
                    format!("write `datum: {VERSION}`"),
                ),
            },
        }

        let ty = match get("type") {
            None => {
                self.err(
                    Diagnostic::error("missing-key", "this document has no `type:`")
                        .at(top_point, "document starts here")
                        .hint("add `type: Host`, `type: Layer` or `type: Fleet`"),
                );
                None
            }
            Some((_, v)) => match self.scalar(v) {
                Scalar::Text(t, _) => match t {
                    "Fleet" => Some(DocType::Fleet),
                    "Host" => Some(DocType::Host),
                    "Layer" => Some(DocType::Layer),
                    other => {
                        let near = suggest(other, ["Fleet", "Host", "Layer"]);
                        let hint = match near {
                            Some(n) => {
                                format!("did you mean `{n}`? The types are Fleet, Host and Layer")
                            }
                            None => "the document types are Fleet, Host and Layer".into(),
                        };
                        self.err(
                            Diagnostic::error(
                                "unknown-type",
                                format!("unknown document type `{other}`"),
                            )
                            .at(self.span(v), "unknown type")
                            .hint(hint),
                        );
                        None
                    }
                },
                _ => {
                    self.type_error(
                        v,
                        "`type`",
                        "Fleet, Host or Layer",
                        "write `type: Layer`, for example",
                    );
                    None
                }
            },
        };
        // A document whose type cannot be read is still searched for the
        // hosts it may touch; its other errors would only be guesses.
        let (ty, quiet) = match ty {
            Some(t) => (t, false),
            None => {
                let layerish = ["precedence", "match", "resources"]
                    .iter()
                    .any(|k| get(k).is_some());
                (
                    if layerish {
                        DocType::Layer
                    } else {
                        DocType::Host
                    },
                    true,
                )
            }
        };
        let mut sink = Vec::new();
        let mut inner = Cx {
            doc: self.doc,
            file: self.file,
            diags: if quiet { &mut sink } else { &mut *self.diags },
            ok: self.ok && !quiet,
            strings: &mut *self.strings,
        };
        for &(key, k, _) in &entries {
            if !ty.keys().contains(&key) {
                let hint = match suggest(key, ty.keys().iter().copied()) {
                    Some(n) => format!("did you mean `{n}`? A {ty:?} takes {}", list(ty.keys())),
                    None => format!("a {ty:?} takes {}", list(ty.keys())),
                };
                inner.err(
                    Diagnostic::error("unknown-key", format!("unknown key `{key}` in a {ty:?}"))
                        .at(inner.span(k), "unknown key")
                        .hint(hint),
                );
            }
        }
        let name = match get("name") {
            None => {
                inner.err(
                    Diagnostic::error("missing-key", "this document has no `name:`")
                        .at(top_point, "document starts here")
                        .hint("add `name:` with the document's name"),
                );
                None
            }
            Some((_, v)) => inner.text(v, "`name`").map(|t| (t, inner.span(v))),
        };
        match ty {
            DocType::Fleet => inner.fleet(name, &get, top_point, out),
            DocType::Host => inner.host(name, &get, out),
            DocType::Layer => inner.layer(name, &get, top_point, out),
        }
        if quiet {
            self.ok = false;
        }
    }

    fn fleet(
        &mut self,
        name: Option<(&str, Span)>,
        get: &dyn Fn(&str) -> Option<(u32, u32)>,
        span: Span,
        out: &mut FileDocs,
    ) {
        let labels = get("labels").and_then(|(_, v)| self.declared_labels(v));
        match name {
            Some((name, _)) if self.ok => out.fleets.push(FleetDoc {
                name: name.into(),
                span,
                labels,
            }),
            _ => out.broken.push(Broken::Fleet),
        }
    }

    fn declared_labels(&mut self, v: u32) -> Option<Vec<DeclaredLabel>> {
        if self.is_null(v) {
            return None;
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`labels`",
                "a mapping of keys to lists of values",
                "write `role: [web, db]`, for example",
            );
            return None;
        }
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            self.label_key(key, k, false);
            let mut values = Vec::new();
            match self.scalar(val) {
                Scalar::Seq => {
                    for item in self.doc.children(val) {
                        if let Some(t) = self.label_value(item) {
                            values.push((t.into(), self.span(item)));
                        }
                    }
                }
                _ => self.type_error(
                    val,
                    &format!("the values of `{key}`"),
                    "a list",
                    format!("write `{key}: [a, b]`"),
                ),
            }
            out.push(DeclaredLabel {
                key: key.into(),
                key_span: self.span(k),
                values,
            });
        }
        Some(out)
    }

    fn host(
        &mut self,
        name: Option<(&str, Span)>,
        get: &dyn Fn(&str) -> Option<(u32, u32)>,
        out: &mut FileDocs,
    ) {
        if let Some((n, span)) = name
            && !valid_host_name(n)
        {
            self.err(
                Diagnostic::error("invalid-host-name", format!("`{n}` is not a valid host name"))
                    .at(span, "invalid host name")
                    .hint("host names are lowercase DNS names: letters, digits, `-` and `.`, at most 253 characters, starting and ending with a letter or digit"),
            );
        }
        let labels = match get("labels") {
            None => Vec::new(),
            Some((_, v)) => self.labels(v, false),
        };
        match name {
            Some((n, span)) if self.ok => out.hosts.push(HostDoc {
                name: n.into(),
                name_span: span,
                labels,
            }),
            Some((n, _)) => out.broken.push(Broken::Host(Some(n.into()))),
            None => out.broken.push(Broken::Host(None)),
        }
    }

    /// A mapping of labels, for a host (`matcher == false`) or a matcher.
    fn labels(&mut self, v: u32, matcher: bool) -> Vec<LabelDecl> {
        if self.is_null(v) && !matcher {
            return Vec::new();
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`labels`",
                "a mapping of label keys to values",
                "write `role: web`, for example",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            let key_ok = self.label_key(key, k, matcher);
            if let Some(value) = self.label_value(val)
                && key_ok
            {
                out.push(LabelDecl {
                    key: self.shared(key),
                    value: self.shared(value),
                    key_span: self.span(k),
                    value_span: self.span(val),
                });
            }
        }
        out
    }

    fn label_key(&mut self, key: &str, k: u32, matcher: bool) -> bool {
        if !valid_label_key(key) {
            self.err(
                Diagnostic::error("invalid-label", format!("`{key}` is not a valid label key"))
                    .at(self.span(k), "invalid label key")
                    .hint("a label key is `name` or `prefix/name`, made of letters, digits, `-`, `_` and `.`"),
            );
            return false;
        }
        if let Some(rest) = key.strip_prefix("datum/") {
            if matcher && key == HOST_LABEL {
                return true;
            }
            let (msg, hint) = if matcher {
                (
                    format!("`{key}` is not a label Datum sets"),
                    format!(
                        "the only `datum/` label is `{HOST_LABEL}`; `datum/{rest}` would match no host"
                    ),
                )
            } else {
                (
                    format!("the label `{key}` is reserved"),
                    format!(
                        "the `datum/` prefix belongs to Datum, which sets `{HOST_LABEL}` itself; choose another key"
                    ),
                )
            };
            self.err(
                Diagnostic::error("reserved-label", msg)
                    .at(self.span(k), "reserved prefix")
                    .hint(hint),
            );
            return false;
        }
        true
    }

    fn label_value(&mut self, v: u32) -> Option<&'d str> {
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) if classify_plain(t) == Plain::Null => {
                self.type_error(
                    v,
                    "a label value",
                    "text",
                    "write a value; labels cannot be empty",
                );
                None
            }
            Scalar::Text(t, _) => {
                if t.is_empty() || t.chars().any(char::is_control) {
                    self.err(
                        Diagnostic::error(
                            "invalid-label",
                            format!("{:?} is not a valid label value", t),
                        )
                        .at(self.span(v), "invalid label value")
                        .hint("a label value is non-empty text on one line"),
                    );
                    return None;
                }
                Some(t)
            }
            _ => {
                self.type_error(
                    v,
                    "a label value",
                    "text",
                    "write one value, such as `role: web`",
                );
                None
            }
        }
    }

    fn layer(
        &mut self,
        name: Option<(&str, Span)>,
        get: &dyn Fn(&str) -> Option<(u32, u32)>,
        top: Span,
        out: &mut FileDocs,
    ) {
        let precedence = match get("precedence") {
            None => {
                self.err(
                    Diagnostic::error("missing-key", "this layer has no `precedence:`")
                        .at(top, "layer starts here")
                        .hint("add `precedence:` with an integer; higher wins (base 0, environment 10, site 20, role 30, host 100 by convention)"),
                );
                None
            }
            Some((_, v)) => self.precedence(v),
        };
        let (matcher, match_span) = match get("match") {
            None => {
                self.err(
                    Diagnostic::error("missing-key", "this layer has no `match:`")
                        .at(top, "layer starts here")
                        .hint("add `match: {labels: {role: web}}`, or `match: {}` to match every host"),
                );
                (None, top)
            }
            Some((k, v)) => (self.matcher(v), self.span(k)),
        };
        let resources = match get("resources") {
            None => Vec::new(),
            Some((_, v)) => self.resources(v),
        };
        out.layer_spans.push(top);
        match (name, precedence, matcher) {
            (Some((name, _)), Some((precedence, precedence_span)), Some(matcher)) if self.ok => {
                out.layers.push(LayerDoc {
                    name: name.into(),
                    precedence,
                    precedence_span,
                    match_span,
                    matcher,
                    resources,
                })
            }
            (_, _, matcher) => out.broken.push(Broken::Layer(matcher)),
        }
    }

    fn precedence(&mut self, v: u32) -> Option<(i32, Span)> {
        let span = self.span(v);
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                Plain::Int(i) => match i32::try_from(i) {
                    Ok(p) => return Some((p, span)),
                    Err(_) => self.err(
                        Diagnostic::error(
                            "out-of-range",
                            format!("precedence {i} is out of range"),
                        )
                        .at(span, "out of range")
                        .hint("precedence is a 32-bit signed integer"),
                    ),
                },
                Plain::BigInt => self.err(
                    Diagnostic::error("out-of-range", format!("precedence {t} is out of range"))
                        .at(span, "out of range")
                        .hint("precedence is a 32-bit signed integer"),
                ),
                _ => self.type_error(
                    v,
                    "`precedence`",
                    "an integer",
                    "write `precedence: 30`, for example",
                ),
            },
            _ => self.type_error(
                v,
                "`precedence`",
                "an integer",
                "write it unquoted: `precedence: 30`",
            ),
        }
        None
    }

    /// A matcher; `None` when it cannot be read whole (it then touches every host).
    fn matcher(&mut self, v: u32) -> Option<Vec<LabelDecl>> {
        if !self.is_map(v) {
            self.type_error(
                v,
                "`match`",
                "a mapping",
                "write `match: {labels: {role: web}}`, or `match: {}` to match every host",
            );
            return None;
        }
        let before = self.diags.len();
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            if key == "labels" {
                if self.is_null(val) {
                    self.type_error(
                        val,
                        "`match.labels`",
                        "a mapping of labels",
                        "write `labels: {role: web}`, or `match: {}` to match every host",
                    );
                    continue;
                }
                out = self.labels(val, true);
            } else {
                let hint = match suggest(key, ["labels"]) {
                    Some(_) => "did you mean `labels`? A matcher takes only `labels` in v1alpha1"
                        .to_owned(),
                    None => "a matcher takes only `labels` in v1alpha1".to_owned(),
                };
                self.err(
                    Diagnostic::error("unknown-key", format!("unknown key `{key}` in `match`"))
                        .at(self.span(k), "unknown key")
                        .hint(hint),
                );
            }
        }
        (self.diags.len() == before).then_some(out)
    }

    fn resources(&mut self, v: u32) -> Vec<ResourceDecl> {
        if self.is_null(v) {
            return Vec::new();
        }
        if !self.is_map(v) {
            self.type_error(
                v,
                "`resources`",
                "a mapping of resource ids to fields",
                "write `Package[nginx]: {ensure: installed}`, for example",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (key, k, val) in self.entries(v) {
            let id = match ResourceId::parse(key) {
                Ok(id) => id,
                Err(e) => {
                    let (msg, hint) = e.describe(key);
                    self.err(
                        Diagnostic::error("invalid-resource", msg)
                            .at(self.span(k), "here")
                            .hint(hint),
                    );
                    continue;
                }
            };
            let fields = if self.is_null(val) {
                Vec::new()
            } else if self.is_map(val) {
                self.fields(&id, val)
            } else {
                self.type_error(
                    val,
                    &format!("`{id}`"),
                    "a mapping of fields",
                    "write its fields below it, or leave it empty to declare it with none",
                );
                Vec::new()
            };
            out.push(ResourceDecl {
                id,
                span: self.span(k),
                fields,
            });
        }
        out
    }

    fn fields(&mut self, id: &ResourceId, map: u32) -> Vec<FieldDecl> {
        let kind = id.kind;
        let mut out = Vec::new();
        for (key, k, v) in self.entries(map) {
            let field = match Field::parse(key).filter(|f| kind.has(*f)) {
                Some(f) => f,
                None => {
                    let names = kind.fields().iter().map(|f| f.name());
                    let mut hint = match suggest(key, names) {
                        Some(n) => format!("did you mean `{n}`? "),
                        None => String::new(),
                    };
                    let elsewhere: Vec<&str> = Field::parse(key)
                        .map(|f| {
                            Kind::ALL
                                .iter()
                                .filter(|k| k.has(f))
                                .map(|k| k.name())
                                .collect()
                        })
                        .unwrap_or_default();
                    if !elsewhere.is_empty() {
                        hint.push_str(&format!("`{key}` is a field of {}. ", elsewhere.join(", ")));
                    }
                    hint.push_str(&format!(
                        "{kind} takes {}",
                        list(&kind.fields().iter().map(|f| f.name()).collect::<Vec<_>>())
                    ));
                    self.err(
                        Diagnostic::error(
                            "unknown-field",
                            format!("unknown field `{key}` for {kind}"),
                        )
                        .at(self.span(k), "unknown field")
                        .hint(hint),
                    );
                    continue;
                }
            };
            if let Some(value) = self.field_value(kind, field, v) {
                out.push(FieldDecl {
                    field,
                    span: self.span(v),
                    value,
                });
            }
        }
        out
    }

    fn field_value(&mut self, kind: Kind, field: Field, v: u32) -> Option<FieldValue> {
        if self.is_null(v) {
            return Some(FieldValue::Unset);
        }
        let what = format!("`{field}`");
        let span = self.span(v);
        let text = |s: &str| FieldValue::Value(Value::Str(s.into()));
        match kind.ty(field) {
            Ty::Text => {
                let t = self.text(v, &what)?;
                if t.is_empty() {
                    self.err(
                        Diagnostic::error("empty-value", format!("{what} must not be empty"))
                            .at(span, "empty")
                            .hint("write a value, or `null` to unset the field"),
                    );
                    return None;
                }
                Some(text(t))
            }
            Ty::Content => {
                let t = self.text(v, &what)?;
                Some(text(t))
            }
            Ty::AbsPath => {
                let t = self.text(v, &what)?;
                match normalise_abs_path(t) {
                    Ok(p) => Some(text(&p)),
                    Err(e) => {
                        let hint = match e {
                            PathError::NotAbsolute => {
                                format!("write an absolute path, such as `/{t}`")
                            }
                            PathError::ParentDir => "write the path without `..`".into(),
                            _ => "write an absolute path".into(),
                        };
                        self.err(
                            Diagnostic::error(
                                "invalid-path",
                                format!("{what} must be an absolute path, found `{t}`"),
                            )
                            .at(span, "not an absolute path")
                            .hint(hint),
                        );
                        None
                    }
                }
            }
            Ty::Source => {
                let t = self.text(v, &what)?;
                match normalise_rel_path(t) {
                    Ok(p) => Some(text(&p)),
                    Err(e) => {
                        let (msg, hint) = match e {
                            PathError::ParentDir => (
                                format!("`source: {t}` leaves the fleet repository through `..`"),
                                "source files live inside the repository; move the file under it".to_owned(),
                            ),
                            PathError::Absolute => (
                                format!("`source: {t}` is an absolute path"),
                                "write the path relative to the fleet root, such as `files/nginx.conf`".to_owned(),
                            ),
                            _ => (
                                format!("`source: {t}` does not name a file"),
                                "write the path relative to the fleet root, such as `files/nginx.conf`".to_owned(),
                            ),
                        };
                        self.err(
                            Diagnostic::error("invalid-source", msg)
                                .at(span, "here")
                                .hint(hint),
                        );
                        None
                    }
                }
            }
            Ty::Mode => match self.scalar(v) {
                Scalar::Text(t, Style::Plain)
                    if matches!(
                        classify_plain(t),
                        Plain::Int(_) | Plain::BigInt | Plain::Float
                    ) =>
                {
                    let digits = t.trim_start_matches("0o");
                    let suggestion = normalise_mode(digits).unwrap_or_else(|| "0640".into());
                    self.err(
                        Diagnostic::error("unquoted-mode", format!("`mode: {t}` must be quoted"))
                            .at(span, "an unquoted number")
                            .hint(format!("write `mode: \"{suggestion}\"`: unquoted, YAML reads {t} as a decimal number, not octal")),
                    );
                    None
                }
                Scalar::Text(t, _) => match normalise_mode(t) {
                    Some(m) => Some(text(&m)),
                    None => {
                        self.err(
                            Diagnostic::error("invalid-mode", format!("`{t}` is not a file mode"))
                                .at(span, "not an octal mode")
                                .hint("a mode is 3 or 4 octal digits (0 to 7) in quotes, such as \"0640\""),
                        );
                        None
                    }
                },
                _ => {
                    self.type_error(
                        v,
                        &what,
                        "a quoted octal mode",
                        "write `mode: \"0640\"`, for example",
                    );
                    None
                }
            },
            Ty::Bool => match self.scalar(v) {
                Scalar::Text(t, Style::Plain) if let Plain::Bool(b) = classify_plain(t) => {
                    Some(FieldValue::Value(Value::Bool(b)))
                }
                Scalar::Text(t, style) => {
                    let hint = if style == Style::Quoted && matches!(t, "true" | "false") {
                        format!("remove the quotes: `{field}: {t}`")
                    } else {
                        format!("write `{field}: true` or `{field}: false`")
                    };
                    self.type_error(v, &what, "true or false", hint);
                    None
                }
                _ => {
                    self.type_error(
                        v,
                        &what,
                        "true or false",
                        format!("write `{field}: true` or `{field}: false`"),
                    );
                    None
                }
            },
            Ty::Id => match self.scalar(v) {
                Scalar::Text(t, Style::Plain) if let Plain::Int(i) = classify_plain(t) => {
                    if (0..=4_294_967_294).contains(&i) {
                        Some(FieldValue::Value(Value::Int(i)))
                    } else {
                        self.err(
                            Diagnostic::error(
                                "out-of-range",
                                format!("{what} {i} is out of range"),
                            )
                            .at(span, "out of range")
                            .hint("ids run from 0 to 4294967294"),
                        );
                        None
                    }
                }
                _ => {
                    self.type_error(
                        v,
                        &what,
                        "an integer",
                        format!("write it unquoted, such as `{field}: 1000`"),
                    );
                    None
                }
            },
            Ty::Word(words) => {
                let t = self.text(v, &what)?;
                if words.contains(&t) {
                    Some(text(t))
                } else {
                    let hint = match suggest(t, words.iter().copied()) {
                        Some(n) => {
                            format!("did you mean `{n}`? {kind} `{field}` takes {}", list(words))
                        }
                        None => format!("{kind} `{field}` takes {}", list(words)),
                    };
                    self.err(
                        Diagnostic::error(
                            "invalid-value",
                            format!("`{t}` is not a valid {what} for {kind}"),
                        )
                        .at(span, "invalid value")
                        .hint(hint),
                    );
                    None
                }
            }
            Ty::List => {
                if !matches!(self.scalar(v), Scalar::Seq) {
                    self.type_error(v, &what, "a list", format!("write `{field}: [a, b]`"));
                    return None;
                }
                let mut items = Vec::new();
                let before = self.ok;
                self.ok = true;
                for item in self.doc.children(v) {
                    if let Some(t) = self.text(item, &format!("an entry of {what}")) {
                        if t.is_empty() {
                            self.err(
                                Diagnostic::error(
                                    "empty-value",
                                    format!("an entry of {what} is empty"),
                                )
                                .at(self.span(item), "empty")
                                .hint("remove it"),
                            );
                        } else {
                            items.push(Box::<str>::from(t));
                        }
                    }
                }
                let ok = self.ok;
                self.ok = before && ok;
                ok.then(|| FieldValue::Value(Value::List(items.into_boxed_slice())))
            }
            Ty::Refs => {
                let items: Vec<u32> = match self.scalar(v) {
                    Scalar::Seq => self.doc.children(v).collect(),
                    Scalar::Text(..) => vec![v],
                    Scalar::Map => {
                        self.type_error(
                            v,
                            &what,
                            "a list of resource ids",
                            format!("write `{field}: [\"Package[nginx]\"]`"),
                        );
                        return None;
                    }
                };
                let mut refs: Vec<(ResourceId, Span)> = Vec::new();
                let before = self.ok;
                self.ok = true;
                for item in items {
                    match self.scalar(item) {
                        Scalar::Text(t, _) => match ResourceId::parse(t) {
                            Ok(id) => {
                                if !refs.iter().any(|(r, _)| *r == id) {
                                    refs.push((id, self.span(item)));
                                }
                            }
                            Err(e) => {
                                let (msg, hint) = e.describe(t);
                                self.err(
                                    Diagnostic::error("invalid-resource", msg)
                                        .at(self.span(item), "here")
                                        .hint(hint),
                                );
                            }
                        },
                        Scalar::Seq => self.type_error(
                            item,
                            &format!("an entry of {what}"),
                            "a resource id",
                            format!(
                                "inside `[...]`, quote each id: `{field}: [\"Package[nginx]\"]`"
                            ),
                        ),
                        Scalar::Map => self.type_error(
                            item,
                            &format!("an entry of {what}"),
                            "a resource id",
                            "write ids such as Package[nginx]",
                        ),
                    }
                }
                let ok = self.ok;
                self.ok = before && ok;
                ok.then_some(FieldValue::Refs(refs))
            }
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Pos;

    fn decode(text: &str) -> (FileDocs, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let docs = decode_file(FileId(0), text, &mut diags);
        (docs, diags)
    }

    fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
        diags.iter().map(|d| d.code).collect()
    }

    const LAYER: &str = "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels:\n    role: web\nresources:\n  Package[nginx]:\n    ensure: installed\n  File[nginx-config]:\n    path: /etc/nginx/nginx.conf\n    mode: \"640\"\n    requires: Package[nginx]\n";

    #[test]
    fn reads_a_layer() {
        let (docs, diags) = decode(LAYER);
        assert!(diags.is_empty(), "{diags:?}");
        let layer = &docs.layers[0];
        assert_eq!(layer.precedence, 30);
        assert_eq!(&*layer.matcher[0].key, "role");
        let file = &layer.resources[1];
        assert_eq!(file.id.to_string(), "File[nginx-config]");
        assert_eq!(
            file.fields[1].value,
            FieldValue::Value(Value::Str("0640".into()))
        );
        assert_eq!(file.fields[1].span.start, Pos { line: 13, col: 11 });
        match &file.fields[2].value {
            FieldValue::Refs(r) => assert_eq!(r[0].0.to_string(), "Package[nginx]"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reads_hosts_and_skips_empty_documents() {
        let (docs, diags) = decode(
            "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n  rack: 12\n---\n---\ndatum: v1alpha1\ntype: Host\nname: db-001\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(docs.hosts.len(), 2);
        assert_eq!(&*docs.hosts[0].labels[1].value, "12");
    }

    #[test]
    fn unknown_fields_types_and_keys_are_suggested() {
        let (_, diags) = decode(&LAYER.replace("mode:", "mdoe:"));
        assert_eq!(codes(&diags), ["unknown-field"]);
        assert!(
            diags[0]
                .hint
                .as_ref()
                .unwrap()
                .starts_with("did you mean `mode`?")
        );
        let (_, diags) = decode(&LAYER.replace("Package[nginx]:", "Pakage[nginx]:"));
        assert_eq!(codes(&diags), ["invalid-resource"]);
        assert!(
            diags[0]
                .hint
                .as_ref()
                .unwrap()
                .contains("did you mean `Package`?")
        );
        let (_, diags) = decode(&LAYER.replace("precedence:", "precedance:"));
        assert_eq!(codes(&diags), ["unknown-key", "missing-key"]);
        assert!(
            diags[0]
                .hint
                .as_ref()
                .unwrap()
                .contains("did you mean `precedence`?")
        );
        let (_, diags) = decode(&LAYER.replace("path:", "target:"));
        assert!(
            diags[0]
                .hint
                .as_ref()
                .unwrap()
                .contains("`target` is a field of Symlink")
        );
    }

    #[test]
    fn modes_must_be_quoted_octal() {
        let (_, diags) = decode(&LAYER.replace("\"640\"", "0640"));
        assert_eq!(codes(&diags), ["unquoted-mode"]);
        assert_eq!(
            diags[0].hint.as_deref(),
            Some(
                "write `mode: \"0640\"`: unquoted, YAML reads 0640 as a decimal number, not octal"
            )
        );
        let (_, diags) = decode(&LAYER.replace("\"640\"", "\"0999\""));
        assert_eq!(codes(&diags), ["invalid-mode"]);
    }

    #[test]
    fn wrong_types_name_what_was_found() {
        let (_, diags) = decode(&LAYER.replace("precedence: 30", "precedence: high"));
        assert_eq!(
            diags[0].message,
            "`precedence` must be an integer, found text"
        );
        let (_, diags) = decode(&LAYER.replace("ensure: installed", "ensure: [installed]"));
        assert_eq!(diags[0].message, "`ensure` must be text, found a list");
        let (_, diags) = decode(&LAYER.replace("ensure: installed", "ensure: instaled"));
        assert!(
            diags[0]
                .hint
                .as_ref()
                .unwrap()
                .starts_with("did you mean `installed`?")
        );
    }

    #[test]
    fn versions_reserved_labels_and_host_names() {
        let (docs, diags) = decode("datum: v2\ntype: Host\nname: a\n");
        assert_eq!(codes(&diags), ["unsupported-version"]);
        assert_eq!(
            diags[0].hint.as_deref(),
            Some("this build of Datum reads v1alpha1")
        );
        assert!(matches!(docs.broken[..], [Broken::Host(Some(_))]));
        let (_, diags) = decode("datum: v1alpha1\ntype: Host\nname: a\nlabels:\n  datum/role: x\n");
        assert_eq!(codes(&diags), ["reserved-label"]);
        let (_, diags) = decode("datum: v1alpha1\ntype: Host\nname: Web_1\n");
        assert_eq!(codes(&diags), ["invalid-host-name"]);
    }

    #[test]
    fn a_broken_layer_keeps_its_matcher() {
        let (docs, diags) = decode(&LAYER.replace("ensure: installed", "ensure: 3"));
        assert_eq!(diags.len(), 1);
        match &docs.broken[..] {
            [Broken::Layer(Some(m))] => assert_eq!(&*m[0].value, "web"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_list_with_brackets_hints_at_quotes() {
        let (_, diags) =
            decode(&LAYER.replace("requires: Package[nginx]", "requires: [Package[nginx]]"));
        assert!(!diags.is_empty());
    }

    #[test]
    fn names() {
        assert!(valid_host_name("web-001.london"));
        assert!(!valid_host_name("-web"));
        assert!(!valid_host_name("web-"));
        assert!(valid_label_key("example.com/team"));
        assert!(!valid_label_key("a/b/c"));
        assert!(!valid_label_key(""));
    }
}
