//! One document: its version, type, keys and name, then the fields of a
//! Fleet, Host or Layer.

use crate::VERSION;
use crate::diagnostic::{Code, Diagnostic};
use crate::schema::suggest;
use crate::source::Span;

use super::cx::{Cx, Scalar};
use super::{
    Broken, FileDocs, FleetDoc, HostDoc, KeyDecl, LayerDoc, VERSIONS, list, valid_host_name,
};
use crate::yaml::{Plain, Style, classify_plain};

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum DocType {
    Fleet,
    Host,
    Layer,
}

impl DocType {
    fn keys(self) -> &'static [&'static str] {
        match self {
            DocType::Fleet => &[
                "datum", "type", "name", "labels", "limits", "admins", "rollout",
            ],
            DocType::Host => &["datum", "type", "name", "labels", "keys"],
            DocType::Layer => &[
                "datum",
                "type",
                "name",
                "precedence",
                "match",
                "resources",
                "vars",
            ],
        }
    }
}

/// Each document type by name with the keys it takes, for the editor
/// schema (`json_schema`).
pub(super) fn document_keys() -> [(&'static str, &'static [&'static str]); 3] {
    [
        ("Fleet", DocType::Fleet.keys()),
        ("Host", DocType::Host.keys()),
        ("Layer", DocType::Layer.keys()),
    ]
}

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    /// Reads one document into `out`: as a Fleet, Host or Layer when it can
    /// be read whole, else as what it tells about the hosts it touches.
    pub(super) fn document(&mut self, out: &mut FileDocs) {
        let doc = self.doc;
        if doc.nodes.is_empty() || self.is_null(0) {
            // An empty document (a stray `---`) is skipped.
            return;
        }
        if !self.is_map(0) {
            let found = self.found(0);
            self.err(
                Diagnostic::error(
                    Code::NotADocument,
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
        self.version(get("datum"), get("type"), top_point);
        // A document whose type cannot be read is still searched for the
        // hosts it may touch; its other errors would only be guesses.
        let (ty, quiet) = match self.doc_type(get("type"), top_point) {
            Some(t) => (t, false),
            None => (guess_type(&get), true),
        };
        let mut sink = Vec::new();
        let mut inner = Cx {
            doc: self.doc,
            file: self.file,
            diags: if quiet { &mut sink } else { &mut *self.diags },
            ok: self.ok && !quiet,
            strings: &mut *self.strings,
        };
        inner.unknown_keys(ty, &entries);
        let name = match get("name") {
            None => {
                inner.err(
                    Diagnostic::error(Code::MissingKey, "this document has no `name:`")
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

    /// `datum:`, the format version; `entry` is its key and value nodes,
    /// `ty` those of `type:`.
    fn version(&mut self, entry: Option<(u32, u32)>, ty: Option<(u32, u32)>, top: Span) {
        let datum_type = ty.filter(|&(_, v)| {
            matches!(self.scalar(v), Scalar::Text("Fleet" | "Host" | "Layer", _))
        });
        match entry {
            // Without `datum:`, the type is what made this file a document file.
            None if let Some((k, v)) = datum_type => {
                let at = Span {
                    end: self.span(v).end,
                    ..self.span(k)
                };
                self.err(
                    Diagnostic::error(
                        Code::MissingKey,
                        "this looks like a Datum document but has no `datum:` version",
                    )
                    .at(at, "a Datum document type, with no version")
                    .hint(format!(
                        "add `datum: {VERSION}` as its first line (a file that is not a \
                         Datum document needs a name ending in neither .yaml nor .yml)"
                    )),
                )
            }
            None => self.err(
                Diagnostic::error(Code::MissingKey, "this document has no `datum:` version")
                    .at(top, "document starts here")
                    .hint(format!("add `datum: {VERSION}` as its first line")),
            ),
            Some((_, v)) => match self.scalar(v) {
                Scalar::Text(t, _) if t == VERSION => {}
                Scalar::Text(t, _) => {
                    let d = Diagnostic::error(
                        Code::UnsupportedVersion,
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
    }

    /// `type:`; `None` when it is missing or not one of the three.
    fn doc_type(&mut self, entry: Option<(u32, u32)>, top: Span) -> Option<DocType> {
        let Some((_, v)) = entry else {
            self.err(
                Diagnostic::error(Code::MissingKey, "this document has no `type:`")
                    .at(top, "document starts here")
                    .hint("add `type: Host`, `type: Layer` or `type: Fleet`"),
            );
            return None;
        };
        match self.scalar(v) {
            Scalar::Text("Fleet", _) => Some(DocType::Fleet),
            Scalar::Text("Host", _) => Some(DocType::Host),
            Scalar::Text("Layer", _) => Some(DocType::Layer),
            Scalar::Text("Manifest", _) => {
                self.err(
                    Diagnostic::error(
                        Code::UnknownType,
                        "a Manifest is what Datum writes, never a document of the fleet",
                    )
                    .at(self.span(v), "Datum's output")
                    .hint("a file whose first document is a Manifest is skipped as output; move this one out of the fleet, or delete it"),
                );
                None
            }
            Scalar::Text(other, _) => {
                let hint = match suggest(other, ["Fleet", "Host", "Layer"]) {
                    Some(n) => format!("did you mean `{n}`? The types are Fleet, Host and Layer"),
                    None => "the document types are Fleet, Host and Layer".into(),
                };
                self.err(
                    Diagnostic::error(
                        Code::UnknownType,
                        format!("unknown document type `{other}`"),
                    )
                    .at(self.span(v), "unknown type")
                    .hint(hint),
                );
                None
            }
            _ => {
                self.type_error(
                    v,
                    "`type`",
                    "Fleet, Host or Layer",
                    "write `type: Layer`, for example",
                );
                None
            }
        }
    }

    fn unknown_keys(&mut self, ty: DocType, entries: &[(&str, u32, u32)]) {
        for &(key, k, _) in entries {
            if !ty.keys().contains(&key) {
                let hint = match suggest(key, ty.keys().iter().copied()) {
                    Some(n) => format!("did you mean `{n}`? A {ty:?} takes {}", list(ty.keys())),
                    None => format!("a {ty:?} takes {}", list(ty.keys())),
                };
                self.err(
                    Diagnostic::error(Code::UnknownKey, format!("unknown key `{key}` in a {ty:?}"))
                        .at(self.span(k), "unknown key")
                        .hint(hint),
                );
            }
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
        let source_limit = get("limits").and_then(|(_, v)| self.limits(v));
        let admins = get("admins").map_or_else(Vec::new, |(_, v)| self.keys(v, "`admins`"));
        let rollout = get("rollout").and_then(|(_, v)| self.rollout(v));
        match name {
            Some((name, _)) if self.ok => out.fleets.push(FleetDoc {
                name: name.into(),
                span,
                labels,
                source_limit,
                admins,
                rollout,
            }),
            _ => out.broken.push(Broken::Fleet),
        }
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
                Diagnostic::error(Code::InvalidHostName, format!("`{n}` is not a valid host name"))
                    .at(span, "invalid host name")
                    .hint("host names are lowercase DNS names: letters, digits, `-` and `.`, at most 253 characters, starting and ending with a letter or digit"),
            );
        }
        let labels = match get("labels") {
            None => Vec::new(),
            Some((_, v)) => self.labels(v, false),
        };
        let keys = get("keys").map_or_else(Vec::new, |(_, v)| self.keys(v, "`keys`"));
        match name {
            Some((n, span)) if self.ok => out.hosts.push(HostDoc {
                name: n.into(),
                name_span: span,
                labels,
                keys,
            }),
            Some((n, _)) => out.broken.push(Broken::Host(Some(n.into()))),
            None => out.broken.push(Broken::Host(None)),
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
                    Diagnostic::error(Code::MissingKey, "this layer has no `precedence:`")
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
                    Diagnostic::error(Code::MissingKey, "this layer has no `match:`")
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
        let vars = match get("vars") {
            None => Vec::new(),
            Some((_, v)) => self.vars(v),
        };
        out.layer_spans.push(top);
        match (name, precedence, matcher) {
            (Some((name, name_span)), Some((precedence, precedence_span)), Some(matcher))
                if self.ok =>
            {
                out.layers.push(LayerDoc {
                    name: name.into(),
                    name_span,
                    precedence,
                    precedence_span,
                    match_span,
                    matcher,
                    resources,
                    vars,
                })
            }
            // A document cut short by a syntax error could have said
            // anything past the cut: its matcher, however much of it was
            // read, is not the one its author wrote, so it touches every
            // host.
            (_, _, _) if self.doc.truncated => out.broken.push(Broken::Layer(None)),
            (_, _, matcher) => out.broken.push(Broken::Layer(matcher)),
        }
    }

    /// `keys` or `admins`: a list of public keys, each one line of text.
    /// What a key is, is `datum-secrets`' to say (`datum check`); here
    /// only the shape.
    fn keys(&mut self, v: u32, what: &str) -> Vec<KeyDecl> {
        let hint = "write a list of public keys: `[\"ssh-ed25519 AAAA...\"]` or `[age1...]`";
        if !matches!(self.scalar(v), Scalar::Seq) {
            self.type_error(v, what, "a list of public keys", hint);
            return Vec::new();
        }
        let mut keys = Vec::new();
        for item in self.doc.children(v) {
            if let Some(t) = self.text(item, &format!("an entry of {what}")) {
                if t.trim().is_empty() {
                    self.err(
                        Diagnostic::error(Code::EmptyValue, format!("an entry of {what} is empty"))
                            .at(self.span(item), "empty")
                            .hint(hint),
                    );
                } else {
                    keys.push(KeyDecl {
                        text: t.into(),
                        span: self.span(item),
                    });
                }
            }
        }
        keys
    }

    /// `limits: {source_bytes: N}`: the largest payload a `source` may name.
    fn limits(&mut self, v: u32) -> Option<u64> {
        if !self.is_map(v) {
            self.type_error(
                v,
                "`limits`",
                "a mapping",
                "write `limits: {source_bytes: 67108864}`, for example",
            );
            return None;
        }
        let mut source_bytes = None;
        for (key, k, val) in self.entries(v) {
            if key != "source_bytes" {
                self.err(
                    Diagnostic::error(Code::UnknownKey, format!("unknown limit `{key}`"))
                        .at(self.span(k), "unknown limit")
                        .hint("`limits` takes `source_bytes`: the largest payload a `source` may name"),
                );
                continue;
            }
            match self.scalar(val) {
                Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                    Plain::Int(i) if i > 0 => source_bytes = u64::try_from(i).ok(),
                    _ => self.type_error(
                        val,
                        "`source_bytes`",
                        "a positive number of bytes",
                        "write `source_bytes: 67108864` (64 MiB), for example",
                    ),
                },
                _ => self.type_error(
                    val,
                    "`source_bytes`",
                    "a positive number of bytes",
                    "write it unquoted: `source_bytes: 67108864`",
                ),
            }
        }
        source_bytes
    }

    fn precedence(&mut self, v: u32) -> Option<(i32, Span)> {
        let span = self.span(v);
        match self.scalar(v) {
            Scalar::Text(t, Style::Plain) => match classify_plain(t) {
                Plain::Int(i) => match i32::try_from(i) {
                    Ok(p) => return Some((p, span)),
                    Err(_) => self.err(
                        Diagnostic::error(
                            Code::OutOfRange,
                            format!("precedence {i} is out of range"),
                        )
                        .at(span, "out of range")
                        .hint("precedence is a 32-bit signed integer"),
                    ),
                },
                Plain::BigInt => self.err(
                    Diagnostic::error(Code::OutOfRange, format!("precedence {t} is out of range"))
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
}

/// The type a document without a readable `type:` most likely has.
fn guess_type(get: &dyn Fn(&str) -> Option<(u32, u32)>) -> DocType {
    let layerish = ["precedence", "match", "resources"]
        .iter()
        .any(|k| get(k).is_some());
    if layerish {
        DocType::Layer
    } else {
        DocType::Host
    }
}
