//! Small YAML files that are not fleet documents (the agent's
//! `/etc/datum/agent.yaml`, a bundle's manifest read back), read by the
//! same reader as fleet documents: the same rules (no anchors, aliases or
//! tags, no duplicate keys, bounded nesting) and the same `path:line:column`
//! diagnostics. What the keys mean is the caller's business; this module
//! only hands out the tree, every node with its place.
//!
//! ```
//! use datum_core::settings;
//! use datum_core::source::Files;
//!
//! let mut files = Files::default();
//! let id = files.add("agent.yaml".into(), "interval: 30m\n".into());
//! let doc = settings::parse(id, files.get(id).text()).unwrap();
//! let root = doc.root().unwrap();
//! let (key, _, value) = root.entries().next().unwrap();
//! assert_eq!((key, value.scalar_text()), ("interval", Some("30m")));
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span};
use crate::yaml::{self, Doc, Plain, Style, classify_plain};

/// One YAML document, parsed.
#[derive(Debug)]
pub struct Settings<'a> {
    doc: Doc<'a>,
}

/// Parses `text`, which must hold at most one YAML document. Every problem
/// the YAML reader finds is returned, each with its place in `file`.
pub fn parse(file: FileId, text: &str) -> Result<Settings<'_>, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut docs = Vec::new();
    yaml::parse_each(file, text, &mut diags, &mut |doc, _| docs.push(doc));
    if docs.len() > 1
        && let Some(second) = docs[1].nodes.first()
    {
        diags.push(
            Diagnostic::error(
                Code::SeveralDocuments,
                "this file holds more than one document",
            )
            .at(second.span, "a second document")
            .hint("remove the `---` line and what follows it"),
        );
    }
    let broken = docs.iter().any(|d| d.broken);
    if !diags.is_empty() || broken {
        return Err(diags);
    }
    Ok(Settings {
        doc: docs.into_iter().next().unwrap_or_default(),
    })
}

impl<'a> Settings<'a> {
    /// The document's top node; `None` for an empty file.
    pub fn root(&self) -> Option<Node<'_, 'a>> {
        (!self.doc.nodes.is_empty()).then_some(Node {
            doc: &self.doc,
            index: 0,
        })
    }
}

/// A node of the tree: a scalar, a list or a mapping, with its place.
#[derive(Clone, Copy, Debug)]
pub struct Node<'s, 'a> {
    doc: &'s Doc<'a>,
    index: u32,
}

/// What a node holds, as the YAML 1.2 core schema reads a plain scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'s> {
    /// A plain `null`, `~` or nothing.
    Null,
    /// A plain `true` or `false`.
    Bool(bool),
    /// A plain integer that fits 64 bits.
    Int(i64),
    /// A plain number that is not a 64-bit integer (a float, or too large).
    Number(&'s str),
    /// A quoted or block scalar, or a plain one that is none of the above.
    Text(&'s str),
    List,
    Map,
}

impl<'s, 'a> Node<'s, 'a> {
    fn node(&self) -> &'s yaml::Node<'a> {
        self.doc.node(self.index)
    }

    /// Where the node is written.
    pub fn span(&self) -> Span {
        self.node().span
    }

    /// The file the node is in.
    pub fn file(&self) -> FileId {
        self.span().file
    }

    /// What the node holds.
    pub fn value(&self) -> Value<'s> {
        match &self.node().kind {
            yaml::Kind::Seq => Value::List,
            yaml::Kind::Map => Value::Map,
            yaml::Kind::Scalar(text, Style::Plain) => match classify_plain(text) {
                Plain::Null => Value::Null,
                Plain::Bool(b) => Value::Bool(b),
                Plain::Int(i) => Value::Int(i),
                Plain::BigInt | Plain::Float => Value::Number(text),
                Plain::Str => Value::Text(text),
            },
            yaml::Kind::Scalar(text, _) => Value::Text(text),
        }
    }

    /// A scalar's text as written (a plain `1.10` is `"1.10"`), whatever
    /// it reads as; `None` for a list or a mapping.
    pub fn scalar_text(&self) -> Option<&'s str> {
        match &self.node().kind {
            yaml::Kind::Scalar(text, _) => Some(text),
            _ => None,
        }
    }

    /// What the node is, for messages: `text`, `a list`, `a number`, ...
    pub fn found(&self) -> &'static str {
        match self.value() {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Number(_) => "a number",
            Value::Text(_) => "text",
            Value::List => "a list",
            Value::Map => "a mapping",
        }
    }

    /// A mapping's entries in the order written, as (key text, key place,
    /// value); nothing for a scalar or a list. Keys are scalars and unique:
    /// the reader refuses anything else.
    pub fn entries(&self) -> impl Iterator<Item = (&'s str, Span, Node<'s, 'a>)> + 's {
        let doc = self.doc;
        let pairs = match self.node().kind {
            yaml::Kind::Map => Some(doc.entries(self.index)),
            _ => None,
        };
        pairs.into_iter().flatten().filter_map(move |(k, v)| {
            let key = doc.node(k);
            match &key.kind {
                yaml::Kind::Scalar(text, _) => {
                    Some((text.as_ref(), key.span, Node { doc, index: v }))
                }
                _ => None,
            }
        })
    }

    /// A list's items in order; nothing for a scalar or a mapping.
    pub fn items(&self) -> impl Iterator<Item = Node<'s, 'a>> + 's {
        let doc = self.doc;
        let children = match self.node().kind {
            yaml::Kind::Seq => Some(doc.children(self.index)),
            _ => None,
        };
        children
            .into_iter()
            .flatten()
            .map(move |index| Node { doc, index })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Files;

    fn with<R>(
        text: &str,
        f: impl FnOnce(Result<Settings<'_>, Vec<Diagnostic>>, &Files) -> R,
    ) -> R {
        let mut files = Files::default();
        let id = files.add("agent.yaml".into(), text.into());
        let parsed = parse(id, files.get(id).text());
        f(parsed, &files)
    }

    #[test]
    fn values_read_as_the_core_schema_says() {
        let text = "a: 1\nb: '1'\nc: true\nd: ~\ne: 1.5\nf: [x, y]\ng: {h: i}\nj: |\n  block\n";
        with(text, |parsed, files| {
            let doc = parsed.unwrap();
            let root = doc.root().unwrap();
            let got: Vec<(&str, Value<'_>, String)> = root
                .entries()
                .map(|(k, span, v)| (k, v.value(), files.location(span)))
                .collect();
            assert_eq!(
                got,
                [
                    ("a", Value::Int(1), "agent.yaml:1:1".into()),
                    ("b", Value::Text("1"), "agent.yaml:2:1".into()),
                    ("c", Value::Bool(true), "agent.yaml:3:1".into()),
                    ("d", Value::Null, "agent.yaml:4:1".into()),
                    ("e", Value::Number("1.5"), "agent.yaml:5:1".into()),
                    ("f", Value::List, "agent.yaml:6:1".into()),
                    ("g", Value::Map, "agent.yaml:7:1".into()),
                    ("j", Value::Text("block\n"), "agent.yaml:8:1".into()),
                ]
            );
            let (_, _, list) = root.entries().nth(5).unwrap();
            let items: Vec<_> = list.items().map(|n| n.scalar_text()).collect();
            assert_eq!(items, [Some("x"), Some("y")]);
            assert_eq!(
                files.location(list.items().nth(1).unwrap().span()),
                "agent.yaml:6:8"
            );
            assert_eq!(list.entries().count(), 0);
            assert_eq!(list.found(), "a list");
        });
    }

    #[test]
    fn the_document_rules_hold_here_too() {
        for (text, code) in [
            ("a: 1\na: 2\n", Code::YamlDuplicateKey),
            ("a: &x 1\nb: *x\n", Code::YamlAlias),
            ("a: [\n", Code::YamlSyntax),
            ("a: 1\n---\nb: 2\n", Code::SeveralDocuments),
        ] {
            with(text, |parsed, _| {
                let diags = parsed.unwrap_err();
                assert!(diags.iter().any(|d| d.code == code), "{text:?}: {diags:?}");
            });
        }
        with("", |parsed, _| assert!(parsed.unwrap().root().is_none()));
    }
}
