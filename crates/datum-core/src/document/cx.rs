//! The decoder context: the document being read, where its problems go,
//! and the small readers every part of the decoder shares.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span};
use crate::yaml::{self, Doc, Plain, Style, classify_plain};

/// Reads one document; a problem found sets `ok` to false, so the document
/// is set aside rather than used.
pub(super) struct Cx<'d, 'a, 'x> {
    pub(super) doc: &'d Doc<'a>,
    pub(super) file: FileId,
    pub(super) diags: &'x mut Vec<Diagnostic>,
    pub(super) ok: bool,
    /// Label text seen in this file, shared rather than copied per host.
    pub(super) strings: &'x mut FxHashSet<Arc<str>>,
}

/// A scalar's text and style, or the kind of collection found instead.
pub(super) enum Scalar<'d> {
    Text(&'d str, Style),
    Seq,
    Map,
}

impl<'d, 'a, 'x> Cx<'d, 'a, 'x> {
    pub(super) fn shared(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.strings.get(s) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = s.into();
        self.strings.insert(Arc::clone(&shared));
        shared
    }

    pub(super) fn err(&mut self, d: Diagnostic) {
        self.ok = false;
        self.diags.push(d);
    }

    pub(super) fn span(&self, i: u32) -> Span {
        self.doc.node(i).span
    }

    pub(super) fn scalar(&self, i: u32) -> Scalar<'d> {
        match &self.doc.node(i).kind {
            yaml::Kind::Scalar(t, s) => Scalar::Text(t.as_ref(), *s),
            yaml::Kind::Seq => Scalar::Seq,
            yaml::Kind::Map => Scalar::Map,
        }
    }

    pub(super) fn is_null(&self, i: u32) -> bool {
        matches!(self.scalar(i), Scalar::Text(t, Style::Plain) if classify_plain(t) == Plain::Null)
    }

    pub(super) fn is_map(&self, i: u32) -> bool {
        matches!(self.scalar(i), Scalar::Map)
    }

    pub(super) fn found(&self, i: u32) -> &'static str {
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

    pub(super) fn type_error(
        &mut self,
        i: u32,
        what: &str,
        expected: &str,
        hint: impl Into<String>,
    ) {
        let found = self.found(i);
        let d = Diagnostic::error(
            Code::WrongType,
            format!("{what} must be {expected}, found {found}"),
        )
        .at(self.span(i), format!("expected {expected}"))
        .hint(hint);
        self.err(d);
    }

    /// Entries of a mapping as (key text, key node, value node).
    pub(super) fn entries(&self, map: u32) -> Vec<(&'d str, u32, u32)> {
        let doc: &'d Doc<'a> = self.doc;
        doc.entries(map)
            .filter_map(|(k, v)| match &doc.node(k).kind {
                yaml::Kind::Scalar(t, _) => Some((t.as_ref(), k, v)),
                _ => None,
            })
            .collect()
    }

    /// Text of a scalar read as text: plain scalars as written, except null.
    pub(super) fn text(&mut self, i: u32, what: &str) -> Option<&'d str> {
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
}
