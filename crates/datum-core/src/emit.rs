//! A small ordered tree and its YAML and JSON writers: every structured
//! output of Datum (manifests, `--format json` reports) goes through here,
//! so both formats always agree and keys keep the order they were given.
//! The places and diagnostics every report carries are made trees here too.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::{Serialize, Serializer};
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};

use crate::diagnostic::{Diagnostic, Label};
use crate::source::{Files, Span};
use crate::yaml::{Plain, classify_plain};

/// A value to write.
#[derive(Clone, Debug, PartialEq)]
pub enum Tree<'a> {
    Null,
    Str(Cow<'a, str>),
    Int(i64),
    Bool(bool),
    List(Vec<Tree<'a>>),
    Map(Vec<(Cow<'a, str>, Tree<'a>)>),
}

impl<'a> Tree<'a> {
    pub fn str(s: impl Into<Cow<'a, str>>) -> Tree<'a> {
        Tree::Str(s.into())
    }

    pub fn map() -> Tree<'a> {
        Tree::Map(Vec::new())
    }

    /// Adds a key to a map (keys keep the order they are added in).
    pub fn with(mut self, key: impl Into<Cow<'a, str>>, value: Tree<'a>) -> Tree<'a> {
        self.push(key, value);
        self
    }

    pub fn push(&mut self, key: impl Into<Cow<'a, str>>, value: Tree<'a>) {
        if let Tree::Map(entries) = self {
            entries.push((key.into(), value));
        }
    }

    /// The head of every JSON report: `datum: v1alpha1` and its `type`
    /// (`Check`, `Explain`, ...), to which the report adds its keys. Every
    /// `--format json` output starts so (see `docs/json.md`).
    pub fn document(kind: &'a str) -> Tree<'a> {
        Tree::map()
            .with("datum", Tree::str(crate::VERSION))
            .with("type", Tree::str(kind))
    }

    /// The same tree, owning all its text.
    pub fn into_owned(self) -> Tree<'static> {
        match self {
            Tree::Null => Tree::Null,
            Tree::Str(s) => Tree::Str(Cow::Owned(s.into_owned())),
            Tree::Int(i) => Tree::Int(i),
            Tree::Bool(b) => Tree::Bool(b),
            Tree::List(items) => Tree::List(items.into_iter().map(Tree::into_owned).collect()),
            Tree::Map(entries) => Tree::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    pub fn strs<I, S>(items: I) -> Tree<'a>
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'a, str>>,
    {
        Tree::List(items.into_iter().map(|s| Tree::Str(s.into())).collect())
    }
}

/// Where a span starts, as every JSON report spells a place:
/// `{"path": ..., "line": ..., "column": ...}`.
pub fn location(files: &Files, span: Span) -> Tree<'_> {
    Tree::map()
        .with("path", Tree::str(files.path(span.file)))
        .with("line", Tree::Int(span.start.line.into()))
        .with("column", Tree::Int(span.start.col.into()))
}

/// A diagnostic as data for `--format json`: each place as
/// `{path, line, column}` with its label, and the hosts it hits.
pub fn diagnostic<'a>(files: &'a Files, d: &'a Diagnostic) -> Tree<'a> {
    let label = |l: &'a Label| {
        Tree::map()
            .with("location", location(files, l.span))
            .with("label", Tree::str(l.text.as_str()))
    };
    let mut t = Tree::map()
        .with("severity", Tree::str(d.severity.as_str()))
        .with("code", Tree::str(d.code.as_str()))
        .with("message", Tree::str(d.message.as_str()));
    if !d.body.is_empty() {
        t.push("body", Tree::strs(d.body.iter().map(|l| l.text.as_str())));
    }
    t.push("primary", d.primary.as_ref().map_or(Tree::Null, label));
    t.push(
        "secondary",
        Tree::List(d.secondary.iter().map(label).collect()),
    );
    t.push("notes", Tree::strs(d.notes.iter().map(String::as_str)));
    t.push("hosts", Tree::strs(d.hosts.iter().map(String::as_str)));
    t.push("hint", d.hint.as_deref().map_or(Tree::Null, Tree::str));
    t
}

/// Writes a tree as a YAML document (no `---`), ending with a newline.
pub fn write_yaml(w: &mut dyn Write, tree: &Tree<'_>) -> io::Result<()> {
    let mut out = String::new();
    match tree {
        Tree::Map(entries) if !entries.is_empty() => yaml_map(&mut out, entries, 0),
        Tree::List(items) if !items.is_empty() => yaml_list(&mut out, items, 0),
        other => {
            yaml_inline(&mut out, other, 0);
            out.push('\n');
        }
    }
    w.write_all(out.as_bytes())
}

/// Writes a tree as pretty JSON (two-space indent), ending with a newline.
///
/// serde_json replaced a hand-written writer here (issue 13), giving the
/// same bytes. Measured against it in one criterion run (`benches/json.rs`
/// of commit 8d564f8, 10,000 generated hosts, medians): every manifest
/// (`render --all --format json`) 150 ms against 200; every host's
/// explanation 3.28 s against 2.80 pretty, 1.36 s against 2.05 on one line.
pub fn write_json(w: &mut dyn Write, tree: &Tree<'_>) -> io::Result<()> {
    let mut out = json_bytes(tree, PrettyFormatter::new())?;
    out.push(b'\n');
    w.write_all(&out)
}

/// Writes a tree as JSON on one line, for line-oriented streams.
pub fn write_json_line(w: &mut dyn Write, tree: &Tree<'_>) -> io::Result<()> {
    let mut out = json_bytes(tree, CompactFormatter)?;
    out.push(b'\n');
    w.write_all(&out)
}

/// A tree as JSON in memory, laid out by `layout` (pretty or compact),
/// strings escaped as [`Escapes`] says.
fn json_bytes<F: Formatter>(tree: &impl Serialize, layout: F) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    tree.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        Escapes(layout),
    ))?;
    Ok(out)
}

/// Maps keep their order: a map is written entry by entry, never through a
/// `serde_json::Value`, so the JSON shows keys in the tree's order.
impl Serialize for Tree<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Null => s.serialize_unit(),
            Tree::Str(t) => s.serialize_str(t),
            Tree::Int(i) => s.serialize_i64(*i),
            Tree::Bool(b) => s.serialize_bool(*b),
            Tree::List(items) => s.collect_seq(items),
            Tree::Map(entries) => s.collect_map(entries.iter().map(|(k, v)| (k, v))),
        }
    }
}

/// serde_json's layout `F` with Datum's string escapes, which JSON and
/// double-quoted YAML share: every control character (C0, DEL, C1) and the
/// line and paragraph separators and byte order mark come out as `\uXXXX`
/// (`\n`, `\r`, `\t`, `\"` and `\\` stay short), so no output string holds
/// a character a terminal or a YAML reader would act on. serde_json escapes
/// C0 only, `\b` and `\f` short.
struct Escapes<F>(F);

/// Whether a character serde_json writes as it is needs a `\uXXXX` escape.
fn escaped_too(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// `\uXXXX` for a character of the basic plane (all [`escaped_too`] are).
fn write_u_escape<W: ?Sized + Write>(w: &mut W, c: char) -> io::Result<()> {
    write!(w, "\\u{:04x}", u32::from(c))
}

/// Forwards the layout calls to the inner formatter.
macro_rules! layout {
    ($($name:ident$(($arg:ident: $ty:ty))?),* $(,)?) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)?) -> io::Result<()> {
            self.0.$name(w $(, $arg)?)
        }
    )*};
}

impl<F: Formatter> Formatter for Escapes<F> {
    layout!(
        begin_array,
        end_array,
        begin_array_value(first: bool),
        end_array_value,
        begin_object,
        end_object,
        begin_object_key(first: bool),
        end_object_key,
        begin_object_value,
        end_object_value,
    );

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        // Every character to escape here is at or above DEL.
        if s.bytes().all(|b| b < 0x7f) {
            return w.write_all(s.as_bytes());
        }
        let mut from = 0;
        for (i, c) in s.char_indices().filter(|&(_, c)| escaped_too(c)) {
            w.write_all(&s.as_bytes()[from..i])?;
            write_u_escape(w, c)?;
            from = i + c.len_utf8();
        }
        w.write_all(&s.as_bytes()[from..])
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, e: CharEscape) -> io::Result<()> {
        match e {
            CharEscape::Backspace => write_u_escape(w, '\u{8}'),
            CharEscape::FormFeed => write_u_escape(w, '\u{c}'),
            e => self.0.write_char_escape(w, e),
        }
    }
}

/// A string as a double-quoted scalar, escaped as JSON is ([`Escapes`]):
/// JSON's escapes are YAML's too.
fn quoted(out: &mut String, s: &str) {
    let bytes = json_bytes(&s, CompactFormatter).expect("writing to memory does not fail");
    out.push_str(std::str::from_utf8(&bytes).expect("serde_json writes UTF-8"));
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn is_block(tree: &Tree<'_>) -> bool {
    match tree {
        Tree::Map(e) => !e.is_empty(),
        Tree::List(i) => !i.is_empty(),
        _ => false,
    }
}

fn yaml_map(out: &mut String, entries: &[(Cow<'_, str>, Tree<'_>)], level: usize) {
    for (key, value) in entries {
        indent(out, level);
        yaml_entry(out, key, value, level);
    }
}

/// `key: value` at the current position, then the value's lines.
fn yaml_entry(out: &mut String, key: &str, value: &Tree<'_>, level: usize) {
    yaml_scalar(out, key, level);
    out.push(':');
    match value {
        Tree::Map(e) if !e.is_empty() => {
            out.push('\n');
            yaml_map(out, e, level + 2);
        }
        Tree::List(items) if !items.is_empty() => {
            out.push('\n');
            yaml_list(out, items, level + 2);
        }
        other => {
            out.push(' ');
            yaml_inline(out, other, level + 2);
            out.push('\n');
        }
    }
}

fn yaml_list(out: &mut String, items: &[Tree<'_>], level: usize) {
    for item in items {
        indent(out, level);
        out.push_str("- ");
        match item {
            Tree::Map(e) if !e.is_empty() => {
                // The first key sits after the dash; the rest line up with it.
                yaml_entry(out, &e[0].0, &e[0].1, level + 2);
                yaml_map(out, &e[1..], level + 2);
            }
            Tree::List(inner) if !inner.is_empty() => {
                out.push('\n');
                yaml_list(out, inner, level + 2);
            }
            other => {
                yaml_inline(out, other, level + 2);
                out.push('\n');
            }
        }
    }
}

fn yaml_inline(out: &mut String, tree: &Tree<'_>, level: usize) {
    debug_assert!(!is_block(tree));
    match tree {
        Tree::Null => out.push_str("null"),
        Tree::Str(s) => yaml_scalar(out, s, level),
        Tree::Int(i) => out.push_str(&i.to_string()),
        Tree::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Tree::List(_) => out.push_str("[]"),
        Tree::Map(_) => out.push_str("{}"),
    }
}

/// A string as a YAML scalar: plain when that reads back as the same text
/// (under YAML 1.2 and 1.1 alike), a literal block for multi-line text, and
/// double-quoted otherwise.
fn yaml_scalar(out: &mut String, s: &str, level: usize) {
    if plain_ok(s) {
        out.push_str(s);
    } else if literal_ok(s) {
        let body = s.trim_end_matches('\n');
        let trailing = s.len() - body.len();
        out.push('|');
        match trailing {
            0 => out.push('-'),
            1 => {}
            _ => out.push('+'),
        }
        for line in body.split('\n') {
            out.push('\n');
            if !line.is_empty() {
                indent(out, level);
                out.push_str(line);
            }
        }
        // Lines after the body: its own line end, then the kept empty lines.
        for _ in 1..trailing {
            out.push('\n');
        }
    } else {
        quoted(out, s);
    }
}

fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_alphanumeric() || matches!(first, '/' | '_' | '.')) {
        return false;
    }
    if s.ends_with(' ') || s.contains(':') || s.contains(" #") || s.contains("  ") {
        return false;
    }
    let allowed = |c: char| {
        c.is_alphanumeric()
            || matches!(
                c,
                '/' | '_' | '.' | '-' | '[' | ']' | '@' | '+' | '=' | '~' | ' ' | ',' | '(' | ')'
            )
    };
    if !s.chars().all(allowed) {
        return false;
    }
    if classify_plain(s) != Plain::Str {
        return false;
    }
    // Words and numbers other YAML readers (YAML 1.1) take for booleans or numbers.
    if ["y", "n", "yes", "no", "on", "off"]
        .iter()
        .any(|w| s.eq_ignore_ascii_case(w))
    {
        return false;
    }
    let numberish = s
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | ':' | '+' | '-' | 'e' | 'E'));
    !numberish
}

fn literal_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\t', '\n'])
        && !s.chars().any(|c| {
            (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
        })
        // A line of only spaces would change the block's indentation.
        && !s.split('\n').any(|l| !l.is_empty() && l.trim_start_matches(' ').is_empty())
        && !s.split('\n').any(|l| l.starts_with('\t') && l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;
    use crate::yaml::{self, Kind};
    use proptest::prelude::*;

    fn yaml_text(tree: &Tree<'_>) -> String {
        let mut buf = Vec::new();
        write_yaml(&mut buf, tree).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn writes_nested_yaml() {
        let t = Tree::map()
            .with("host", Tree::str("web-001"))
            .with("mode", Tree::str("0640"))
            .with("list", Tree::strs(["Package[nginx]"]))
            .with("empty", Tree::map())
            .with("count", Tree::Int(3))
            .with(
                "items",
                Tree::List(vec![
                    Tree::map()
                        .with("a", Tree::str("x"))
                        .with("b", Tree::Bool(true)),
                ]),
            )
            .with("text", Tree::str("line one\nline two\n"));
        assert_eq!(
            yaml_text(&t),
            "host: web-001\nmode: \"0640\"\nlist:\n  - Package[nginx]\nempty: {}\ncount: 3\nitems:\n  - a: x\n    b: true\ntext: |\n  line one\n  line two\n"
        );
    }

    #[test]
    fn writes_json() {
        let t = Tree::map()
            .with("a", Tree::strs(["x", "y\"z"]))
            .with("b", Tree::map())
            .with("c", Tree::List(vec![Tree::Null, Tree::List(vec![])]))
            .with("d", Tree::Int(-7));
        let mut buf = Vec::new();
        write_json(&mut buf, &t).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "{\n  \"a\": [\n    \"x\",\n    \"y\\\"z\"\n  ],\n  \"b\": {},\n  \"c\": [\n    null,\n    []\n  ],\n  \"d\": -7\n}\n"
        );
        let mut buf = Vec::new();
        write_json_line(&mut buf, &t).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "{\"a\":[\"x\",\"y\\\"z\"],\"b\":{},\"c\":[null,[]],\"d\":-7}\n"
        );
    }

    #[test]
    fn json_escapes_every_control_the_separators_and_the_bom() {
        let t = Tree::strs([
            "\u{8}\u{c}\u{1}\u{1f}\u{7f}\u{85}\u{9f}\u{2028}\u{2029}\u{feff}",
            "/é\"\\\n\r\t",
        ]);
        let mut buf = Vec::new();
        write_json_line(&mut buf, &t).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            r#"["\u0008\u000c\u0001\u001f\u007f\u0085\u009f\u2028\u2029\ufeff","/é\"\\\n\r\t"]"#
                .to_owned()
                + "\n"
        );
    }

    fn reads_back(s: &str) -> Option<String> {
        let t = Tree::map()
            .with("k", Tree::str(s))
            .with("z", Tree::str("end"));
        let text = yaml_text(&t);
        let mut diags = Vec::new();
        let docs = yaml::parse(FileId(0), &text, &mut diags);
        assert!(diags.is_empty(), "{text:?}: {diags:?}");
        let doc = &docs[0];
        let (_, v) = doc.entries(0).next()?;
        match &doc.node(v).kind {
            Kind::Scalar(t, style) => {
                if *style == yaml::Style::Plain {
                    assert_eq!(classify_plain(t), Plain::Str, "{text:?}");
                }
                Some(t.to_string())
            }
            _ => None,
        }
    }

    #[test]
    fn tricky_strings_read_back() {
        for s in [
            "",
            "0640",
            "yes",
            "true",
            "null",
            "~",
            "1.10",
            "a: b",
            "#x",
            "- x",
            " lead",
            "trail ",
            "x\n",
            "x",
            "\n",
            "a\n\n",
            "a\nb",
            "  a\nb",
            "tab\there",
            "ünï",
            "1_000",
            "12:30",
            "[x]",
            "{x}",
            "x #y",
            "@at",
            "`tick",
            "%p",
            "!bang",
            "&amp",
            "*star",
            "|pipe",
            ">gt",
            "'q'",
            "\"q\"",
            "a\r\nb",
            "\u{2028}",
            "a\n  \nb",
            "-",
            "?",
        ] {
            assert_eq!(reads_back(s).as_deref(), Some(s), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn any_string_reads_back(s in "\\PC*|[ -~\\n\\t]{0,40}") {
            prop_assert_eq!(reads_back(&s), Some(s.clone()));
        }

        #[test]
        fn any_string_reads_back_from_json(s in "\\PC*|[ -~\\n\\t]{0,40}", c in any::<char>()) {
            let s = format!("{s}{c}");
            let mut buf = Vec::new();
            write_json_line(&mut buf, &Tree::map().with(s.clone(), Tree::str(s.as_str()))).unwrap();
            let text = String::from_utf8(buf).unwrap();
            let line = text.strip_suffix('\n').unwrap();
            prop_assert!(!line.chars().any(escaped_too), "{}", line);
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, serde_json::json!({s.clone(): s}));
        }
    }
}
