//! YAML text to a tree of nodes that remember where they were written.
//!
//! The tree is flat: nodes are stored in document order and each collection
//! records where its descendants end, so walking it allocates nothing. The
//! rules Datum adds to YAML live here: no anchors, aliases or tags, no
//! duplicate keys, scalar keys only, and a nesting limit so that no input can
//! make loading slow or deep.

use std::borrow::Cow;

use rustc_hash::FxHashSet;
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError};

use crate::diagnostic::Diagnostic;
use crate::source::{FileId, Pos, Span};

/// Collections nested deeper than this are refused. Datum's own documents
/// nest five levels at most.
pub(crate) const MAX_DEPTH: usize = 32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    Quoted,
    Block,
}

#[derive(Debug)]
pub(crate) enum Kind<'a> {
    Scalar(Cow<'a, str>, Style),
    Seq,
    Map,
}

#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub kind: Kind<'a>,
    pub span: Span,
    /// Index one past this node's last descendant.
    pub end: u32,
}

/// One YAML document. An empty document has no nodes.
#[derive(Debug, Default)]
pub(crate) struct Doc<'a> {
    pub nodes: Vec<Node<'a>>,
    /// Set when this document broke a rule; it is still decoded, so that
    /// every other error in it is reported too.
    pub broken: bool,
    /// Set when a syntax error cut the document short: what was read is
    /// only good for telling which hosts it touches.
    pub truncated: bool,
}

impl<'a> Doc<'a> {
    pub fn node(&self, i: u32) -> &Node<'a> {
        &self.nodes[i as usize]
    }

    /// The children of a collection, in order (keys and values alternate in a map).
    pub fn children(&self, i: u32) -> Children<'_, 'a> {
        Children {
            doc: self,
            next: i + 1,
            end: self.nodes[i as usize].end,
        }
    }

    /// Key-value pairs of a mapping.
    pub fn entries(&self, i: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut it = self.children(i);
        std::iter::from_fn(move || Some((it.next()?, it.next()?)))
    }
}

pub(crate) struct Children<'d, 'a> {
    doc: &'d Doc<'a>,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_, '_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next = self.doc.nodes[i as usize].end;
        Some(i)
    }
}

fn pos(m: &Marker) -> Pos {
    Pos {
        line: m.line() as u32,
        col: m.col() as u32 + 1,
    }
}

struct Open {
    node: u32,
    is_map: bool,
    /// Keys seen so far, by hash, once a map is too large to scan.
    key_hashes: Option<FxHashSet<u64>>,
    key_count: u32,
    /// Whether the next child of a map is a key.
    expect_key: bool,
}

/// Maps with more keys than this index them by hash to find duplicates.
const SCAN_KEYS: u32 = 16;

fn key_hash(key: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(key)
}

/// The keys of a map still being built, with their node indices.
fn open_keys<'d, 'a>(d: &'d Doc<'a>, map: u32) -> impl Iterator<Item = (u32, &'d str)> + 'd {
    let mut next = map + 1;
    let len = d.nodes.len() as u32;
    let mut is_key = true;
    std::iter::from_fn(move || {
        while next < len {
            let i = next;
            next = d.nodes[i as usize].end;
            let was_key = is_key;
            is_key = !is_key;
            if was_key && let Kind::Scalar(t, _) = &d.nodes[i as usize].kind {
                return Some((i, t.as_ref()));
            }
        }
        None
    })
}

/// Every document of `text` at once (see [`parse_each`]).
#[cfg(test)]
pub(crate) fn parse<'a>(file: FileId, text: &'a str, diags: &mut Vec<Diagnostic>) -> Vec<Doc<'a>> {
    let mut docs = Vec::new();
    parse_each(file, text, diags, &mut |doc, _| docs.push(doc));
    docs
}

/// Parses every document in `text`, handing each to `each` as soon as it
/// is complete, so a file of thousands of documents never holds all their
/// trees at once. Problems become diagnostics. After a syntax error,
/// parsing starts again at the next `---` line, so one broken document does
/// not hide the others in its file.
pub(crate) fn parse_each<'a>(
    file: FileId,
    text: &'a str,
    diags: &mut Vec<Diagnostic>,
    each: &mut dyn FnMut(Doc<'a>, &mut Vec<Diagnostic>),
) {
    let mut from = 0usize;
    let mut line_offset = 0u32;
    while let Some(error_line) = parse_from(file, &text[from..], line_offset, each, diags) {
        // Resume at the first `---` line after the error, if any.
        let Some((at, line)) = next_separator(text, from, line_offset, error_line) else {
            break;
        };
        from = at;
        line_offset = line - 1;
    }
}

/// The byte offset and line of the first `---` line after `after_line`.
fn next_separator(
    text: &str,
    from: usize,
    line_offset: u32,
    after_line: u32,
) -> Option<(usize, u32)> {
    let mut at = from;
    for (line, l) in (line_offset + 1..).zip(text[from..].split_inclusive('\n')) {
        let separator =
            l == "---" || l.starts_with("---\n") || l.starts_with("--- ") || l.starts_with("---\r");
        if line > after_line && separator {
            return Some((at, line));
        }
        at += l.len();
    }
    None
}

/// Parses documents until the end or a syntax error; returns the line of
/// the error, if one stopped it.
fn parse_from<'a>(
    file: FileId,
    text: &'a str,
    line_offset: u32,
    docs: &mut dyn FnMut(Doc<'a>, &mut Vec<Diagnostic>),
    diags: &mut Vec<Diagnostic>,
) -> Option<u32> {
    let mut parser = Parser::new_from_str(text);
    let mut doc: Option<Doc<'a>> = None;
    let mut stack: Vec<Open> = Vec::new();
    // Depth of collections being skipped because they are nested too deep.
    let mut skipping = 0usize;
    let at = |m: &Marker| {
        let mut p = pos(m);
        p.line += line_offset;
        p
    };
    let span_of = |s: &saphyr_parser::Span| Span {
        file,
        start: at(&s.start),
        end: at(&s.end),
    };
    loop {
        let (event, span) = match parser.next_event() {
            None => break,
            Some(Ok(ev)) => ev,
            Some(Err(e)) => {
                let where_ = at(e.marker());
                diags.push(scan_error(file, text, where_, line_offset, &e));
                if let Some(mut d) = doc.take() {
                    d.broken = true;
                    d.truncated = true;
                    // Collections left open end where the text stopped.
                    let len = d.nodes.len() as u32;
                    for open in &stack {
                        d.nodes[open.node as usize].end = len;
                    }
                    docs(d, diags);
                }
                return Some(where_.line);
            }
        };
        let span = span_of(&span);
        let Some(d) = doc.as_mut() else {
            match event {
                Event::DocumentStart(_) => {
                    doc = Some(Doc {
                        // Enough for a host document without growing.
                        nodes: Vec::with_capacity(24),
                        ..Doc::default()
                    });
                    stack.clear();
                }
                Event::StreamEnd => break,
                _ => {}
            }
            continue;
        };
        if skipping > 0 {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => skipping += 1,
                Event::SequenceEnd | Event::MappingEnd => skipping -= 1,
                _ => {}
            }
            continue;
        }
        match event {
            Event::DocumentEnd => {
                docs(doc.take().unwrap_or_default(), diags);
            }
            Event::Alias(_) => {
                d.broken = true;
                diags.push(
                    Diagnostic::error("yaml-alias", "YAML aliases are not allowed")
                        .at(span, "alias")
                        .hint(
                            "write the value out in full: an alias hides where a value comes from",
                        ),
                );
                push_leaf(
                    d,
                    &mut stack,
                    Kind::Scalar(Cow::Borrowed(""), Style::Plain),
                    span,
                    diags,
                );
            }
            Event::Scalar(text, style, anchor, tag) => {
                refuse_decorations(d, span, anchor, tag.is_some(), diags);
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
                };
                push_leaf(d, &mut stack, Kind::Scalar(text, style), span, diags);
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                let is_map = matches!(event, Event::MappingStart(..));
                refuse_decorations(d, span, anchor, tag.is_some(), diags);
                if stack.len() >= MAX_DEPTH {
                    d.broken = true;
                    diags.push(
                        Diagnostic::error(
                            "yaml-depth",
                            format!("collections are nested more than {MAX_DEPTH} levels deep"),
                        )
                        .at(span, "too deep")
                        .hint("Datum documents nest a few levels at most; flatten this value"),
                    );
                    // The skipped collection stands as one empty value of its parent.
                    push_leaf(
                        d,
                        &mut stack,
                        Kind::Scalar(Cow::Borrowed(""), Style::Plain),
                        span,
                        diags,
                    );
                    skipping = 1;
                    continue;
                }
                check_key_slot(d, &stack, span, diags);
                let idx = d.nodes.len() as u32;
                d.nodes.push(Node {
                    kind: if is_map { Kind::Map } else { Kind::Seq },
                    span,
                    end: idx + 1,
                });
                stack.push(Open {
                    node: idx,
                    is_map,
                    key_hashes: None,
                    key_count: 0,
                    expect_key: true,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(open) = stack.pop() {
                    let end = d.nodes.len() as u32;
                    let node = &mut d.nodes[open.node as usize];
                    node.end = end;
                    node.span.end = span.end;
                    close_child(&mut stack);
                }
            }
            Event::StreamEnd => {
                docs(doc.take().unwrap_or_default(), diags);
                break;
            }
            Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => {}
        }
    }
    if let Some(d) = doc.take() {
        docs(d, diags);
    }
    None
}

fn refuse_decorations(
    d: &mut Doc<'_>,
    span: Span,
    anchor: usize,
    tagged: bool,
    diags: &mut Vec<Diagnostic>,
) {
    if anchor != 0 {
        d.broken = true;
        diags.push(
            Diagnostic::error("yaml-anchor", "YAML anchors are not allowed")
                .at(span, "anchored here")
                .hint("repeat the value where it is needed, or move it to a layer that several hosts match"),
        );
    }
    if tagged {
        d.broken = true;
        diags.push(
            Diagnostic::error("yaml-tag", "YAML tags are not allowed")
                .at(span, "tagged here")
                .hint("remove the tag; quote the value if it must be read as text"),
        );
    }
}

/// Records a finished child in its parent map: the next child flips between key and value.
fn close_child(stack: &mut [Open]) {
    if let Some(parent) = stack.last_mut()
        && parent.is_map
    {
        parent.expect_key = !parent.expect_key;
    }
}

/// Before a collection is pushed: a collection cannot be a mapping key.
fn check_key_slot(d: &mut Doc<'_>, stack: &[Open], span: Span, diags: &mut Vec<Diagnostic>) {
    if let Some(parent) = stack.last()
        && parent.is_map
        && parent.expect_key
    {
        d.broken = true;
        diags.push(
            Diagnostic::error("yaml-key", "a mapping key must be a plain value")
                .at(span, "a collection used as a key")
                .hint("keys are names such as `labels` or `File[motd]`"),
        );
    }
}

fn push_leaf<'a>(
    d: &mut Doc<'a>,
    stack: &mut [Open],
    kind: Kind<'a>,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    if let Some(parent) = stack.last_mut()
        && parent.is_map
        && parent.expect_key
        && let Kind::Scalar(text, _) = &kind
    {
        let key: &str = text;
        let seen = if parent.key_count < SCAN_KEYS {
            open_keys(d, parent.node).any(|(_, k)| k == key)
        } else {
            let hashes = parent.key_hashes.get_or_insert_with(|| {
                open_keys(d, parent.node)
                    .map(|(_, k)| key_hash(k))
                    .collect()
            });
            !hashes.insert(key_hash(key)) && open_keys(d, parent.node).any(|(_, k)| k == key)
        };
        parent.key_count += 1;
        if seen {
            d.broken = true;
            let first = open_keys(d, parent.node)
                .find(|&(_, k)| k == key)
                .map(|(i, _)| d.node(i).span);
            let mut diag =
                Diagnostic::error("yaml-duplicate-key", format!("duplicate key `{key}`"))
                    .at(span, "duplicate key")
                    .hint("a key may appear once in a mapping; remove one of them");
            if let Some(first) = first {
                diag = diag.also(first, "first defined here");
            }
            diags.push(diag);
        }
    }
    let idx = d.nodes.len() as u32;
    d.nodes.push(Node {
        kind,
        span,
        end: idx + 1,
    });
    close_child(stack);
}

fn scan_error(file: FileId, text: &str, at: Pos, line_offset: u32, e: &ScanError) -> Diagnostic {
    let rel = (at.line - line_offset).saturating_sub(1) as usize;
    let line = text.lines().nth(rel).unwrap_or("");
    if e.info().contains("unknown anchor") {
        return Diagnostic::error("yaml-alias", "YAML aliases are not allowed")
            .at(Span::point(file, at), "alias")
            .hint("write the value out in full: an alias hides where a value comes from");
    }
    if e.info() == "recursion limit exceeded" {
        return Diagnostic::error(
            "yaml-depth",
            format!("collections are nested more than {MAX_DEPTH} levels deep"),
        )
        .at(Span::point(file, at), "too deep")
        .hint("Datum documents nest a few levels at most; flatten this value");
    }
    let mut d = Diagnostic::error("yaml-syntax", format!("malformed YAML: {}", e.info()))
        .at(Span::point(file, at), "here");
    // `[Package[nginx]]`: brackets inside a flow list are YAML syntax.
    if let Some(i) = line.find('[')
        && line[i + 1..].contains('[')
    {
        return d.hint("inside `[...]`, quote each resource id: `requires: [\"Package[nginx]\"]`");
    }
    // A bracket left open on an earlier line is the usual cause.
    for back in 1..=5 {
        let Some(n) = rel.checked_sub(back) else {
            break;
        };
        let Some(prev) = text.lines().nth(n) else {
            break;
        };
        if let Some((col, open)) = unclosed_bracket(prev) {
            let close = if open == '[' { ']' } else { '}' };
            let line_no = at.line - back as u32;
            let span = Span::point(
                file,
                Pos {
                    line: line_no,
                    col: col as u32 + 1,
                },
            );
            d = d.also(span, format!("this `{open}` is never closed"));
            return d.hint(format!(
                "close the `{open}` opened on line {line_no} with `{close}`"
            ));
        }
    }
    d.hint("check the indentation and quoting on this line and the one above it")
}

/// The column (0-based, in characters) and kind of the last flow bracket a
/// line opens without closing, ignoring quoted text and comments.
fn unclosed_bracket(line: &str) -> Option<(usize, char)> {
    let mut open: Vec<(usize, char)> = Vec::new();
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.chars().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' if prev == ' ' => break,
                '[' | '{' => open.push((i, c)),
                ']' | '}' => {
                    open.pop();
                }
                _ => {}
            },
        }
        prev = c;
    }
    open.last().copied()
}

/// How a plain scalar reads under the YAML 1.2 core schema.
#[derive(Debug, PartialEq)]
pub(crate) enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer literal that does not fit 64 bits.
    BigInt,
    Float,
    Str,
}

pub(crate) fn classify_plain(s: &str) -> Plain {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "true" | "True" | "TRUE" => return Plain::Bool(true),
        "false" | "False" | "FALSE" => return Plain::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return Plain::Float,
        _ => {}
    }
    let int = |digits: &str, radix: u32, neg: bool| -> Plain {
        match i64::from_str_radix(digits, radix) {
            Ok(v) => Plain::Int(if neg { -v } else { v }),
            Err(_) => Plain::BigInt,
        }
    };
    if let Some(rest) = s.strip_prefix("0o")
        && !rest.is_empty()
        && rest.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return int(rest, 8, false);
    }
    if let Some(rest) = s.strip_prefix("0x")
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return int(rest, 16, false);
    }
    let (neg, unsigned) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return int(unsigned, 10, neg);
    }
    if is_float(unsigned) {
        return Plain::Float;
    }
    Plain::Str
}

/// `(\.[0-9]+ | [0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let whole = digits(&mut i);
    let mut frac = 0;
    let mut dot = false;
    if i < b.len() && b[i] == b'.' {
        dot = true;
        i += 1;
        frac = digits(&mut i);
    }
    if whole == 0 && (frac == 0 || !dot) {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
        diags.iter().map(|d| d.code).collect()
    }

    fn parse_ok(text: &str) -> (Vec<Doc<'_>>, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let docs = parse(FileId(0), text, &mut diags);
        (docs, diags)
    }

    #[test]
    fn builds_a_flat_tree() {
        let (docs, diags) = parse_ok("a: 1\nb:\n  - x\n  - {c: d}\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(docs.len(), 1);
        let d = &docs[0];
        let entries: Vec<_> = d.entries(0).collect();
        assert_eq!(entries.len(), 2);
        let (_, b) = entries[1];
        assert_eq!(d.children(b).count(), 2);
        assert_eq!(d.node(b).span.start, Pos { line: 3, col: 3 });
    }

    #[test]
    fn several_documents_and_empty_ones() {
        let (docs, diags) = parse_ok("a: 1\n---\n---\nb: 2\n");
        assert!(diags.is_empty());
        assert_eq!(docs.len(), 3);
        assert!(
            docs[1].nodes.is_empty()
                || matches!(docs[1].nodes[0].kind, Kind::Scalar(ref t, Style::Plain) if t.is_empty())
        );
    }

    #[test]
    fn refuses_duplicates_anchors_aliases_and_tags() {
        let (_, diags) = parse_ok("a: 1\na: 2\n");
        assert_eq!(diags[0].code, "yaml-duplicate-key");
        assert_eq!(
            diags[0].primary.as_ref().unwrap().span.start,
            Pos { line: 2, col: 1 }
        );
        let (_, diags) = parse_ok("a: &x 1\nb: *x\n");
        let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["yaml-anchor", "yaml-alias"]);
        let (_, diags) = parse_ok("a: !!str 1\n");
        assert_eq!(diags[0].code, "yaml-tag");
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        // Block sequences nest on one line: `- - - x`.
        let text = format!("{}x\n", "- ".repeat(10_000));
        let (_, diags) = parse_ok(&text);
        assert_eq!(codes(&diags), ["yaml-depth"]);
        // Flow collections: the scanner stops them first.
        let text = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let (_, diags) = parse_ok(&text);
        assert_eq!(codes(&diags), ["yaml-depth"]);
    }

    #[test]
    fn malformed_yaml_points_at_the_problem() {
        let (_, diags) = parse_ok("a: [1, 2\nb: 3\n");
        assert_eq!(diags[0].code, "yaml-syntax");
    }

    #[test]
    fn parsing_resumes_after_a_broken_document() {
        let (docs, diags) = parse_ok("a: 1\n---\nb: [1\nc: 2\n---\nd: 4\n");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].primary.as_ref().unwrap().span.start.line, 4);
        // The first document, the broken one, and the one after it.
        assert_eq!(docs.len(), 3);
        assert!(docs[1].broken);
        let last = &docs[2];
        assert!(!last.broken);
        assert_eq!(last.node(1).span.start, Pos { line: 6, col: 1 });
    }

    #[test]
    fn core_schema() {
        assert_eq!(classify_plain("0640"), Plain::Int(640));
        assert_eq!(classify_plain("0o640"), Plain::Int(0o640));
        assert_eq!(classify_plain("-12"), Plain::Int(-12));
        assert_eq!(classify_plain("yes"), Plain::Str);
        assert_eq!(classify_plain("1.10"), Plain::Float);
        assert_eq!(classify_plain("1e3"), Plain::Float);
        assert_eq!(classify_plain("1.2.3"), Plain::Str);
        assert_eq!(classify_plain("~"), Plain::Null);
        assert_eq!(classify_plain("True"), Plain::Bool(true));
        assert_eq!(classify_plain("99999999999999999999"), Plain::BigInt);
        assert_eq!(classify_plain("."), Plain::Str);
        assert_eq!(classify_plain("-"), Plain::Str);
    }
}
