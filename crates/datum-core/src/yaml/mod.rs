//! YAML text to a tree of nodes that remember where they were written.
//!
//! The tree is flat: nodes are stored in document order and each collection
//! records where its descendants end, so walking it allocates nothing. The
//! rules Datum adds to YAML live here: no anchors, aliases or tags, no
//! duplicate keys, scalar keys only, and a nesting limit so that no input can
//! make loading slow or deep.

pub(crate) mod events;
mod lines;
mod plain;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use rustc_hash::FxHashSet;
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError};

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Pos, Span};

pub(crate) use plain::{Plain, classify_plain};

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
/// parsing starts again at the first `---` line after the start of the
/// document it broke (a `---` at the start of a line always ends a
/// document, whatever the parser made of what came before, such as a `[`
/// never closed), so one broken document does not hide the others in its
/// file.
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
        let Some((at, line)) = lines::next_separator(text, from, line_offset, error_line) else {
            break;
        };
        from = at;
        line_offset = line - 1;
    }
}

/// Parses documents until the end or a syntax error; when one stopped it,
/// returns the line the broken document started on (the error's line when
/// it came between documents).
fn parse_from<'a>(
    file: FileId,
    text: &'a str,
    line_offset: u32,
    docs: &mut dyn FnMut(Doc<'a>, &mut Vec<Diagnostic>),
    diags: &mut Vec<Diagnostic>,
) -> Option<u32> {
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder::default();
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
                let started = builder
                    .doc
                    .as_ref()
                    .map_or(where_.line, |_| builder.started);
                builder.cut_short(docs, diags);
                return Some(started.min(where_.line));
            }
        };
        if !builder.event(event, span_of(&span), docs, diags) {
            break;
        }
    }
    if let Some(d) = builder.doc.take() {
        docs(d, diags);
    }
    None
}

/// The document being built from parser events.
#[derive(Default)]
struct Builder<'a> {
    doc: Option<Doc<'a>>,
    /// Collections open in `doc`, innermost last.
    stack: Vec<Open>,
    /// Depth of collections being skipped because they are nested too deep.
    skipping: usize,
    /// The line `doc` started on.
    started: u32,
}

impl<'a> Builder<'a> {
    /// Takes one event, handing each finished document to `docs`; false at
    /// the end of the stream.
    fn event(
        &mut self,
        event: Event<'a>,
        span: Span,
        docs: &mut dyn FnMut(Doc<'a>, &mut Vec<Diagnostic>),
        diags: &mut Vec<Diagnostic>,
    ) -> bool {
        let Some(d) = self.doc.as_mut() else {
            match event {
                Event::DocumentStart(_) => {
                    self.started = span.start.line;
                    self.doc = Some(Doc {
                        // Enough for a host document without growing.
                        nodes: Vec::with_capacity(24),
                        ..Doc::default()
                    });
                    self.stack.clear();
                }
                Event::StreamEnd => return false,
                _ => {}
            }
            return true;
        };
        if self.skipping > 0 {
            match event {
                Event::SequenceStart(..) | Event::MappingStart(..) => self.skipping += 1,
                Event::SequenceEnd | Event::MappingEnd => self.skipping -= 1,
                _ => {}
            }
            return true;
        }
        match event {
            Event::DocumentEnd => {
                docs(self.doc.take().unwrap_or_default(), diags);
            }
            Event::Alias(_) => alias(d, &mut self.stack, span, diags),
            Event::Scalar(text, style, anchor, tag) => {
                refuse_decorations(d, span, anchor, tag.is_some(), diags);
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
                    ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
                };
                push_leaf(d, &mut self.stack, Kind::Scalar(text, style), span, diags);
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                let is_map = matches!(event, Event::MappingStart(..));
                refuse_decorations(d, span, anchor, tag.is_some(), diags);
                if !open_collection(d, &mut self.stack, is_map, span, diags) {
                    self.skipping = 1;
                }
            }
            Event::SequenceEnd | Event::MappingEnd => close_collection(d, &mut self.stack, span),
            Event::StreamEnd => {
                docs(self.doc.take().unwrap_or_default(), diags);
                return false;
            }
            Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => {}
        }
        true
    }

    /// After a syntax error: the document read so far goes out marked as cut
    /// short, its collections left open ending where the text stopped.
    fn cut_short(
        &mut self,
        docs: &mut dyn FnMut(Doc<'a>, &mut Vec<Diagnostic>),
        diags: &mut Vec<Diagnostic>,
    ) {
        if let Some(mut d) = self.doc.take() {
            d.broken = true;
            d.truncated = true;
            let len = d.nodes.len() as u32;
            for open in &self.stack {
                d.nodes[open.node as usize].end = len;
            }
            docs(d, diags);
        }
    }
}

/// The value standing for an alias or a collection too deep to read.
fn empty<'a>() -> Kind<'a> {
    Kind::Scalar(Cow::Borrowed(""), Style::Plain)
}

/// An alias is refused; it stands as one empty value.
fn alias(d: &mut Doc<'_>, stack: &mut [Open], span: Span, diags: &mut Vec<Diagnostic>) {
    d.broken = true;
    diags.push(
        Diagnostic::error(Code::YamlAlias, "YAML aliases are not allowed")
            .at(span, "alias")
            .hint("write the value out in full: an alias hides where a value comes from"),
    );
    push_leaf(d, stack, empty(), span, diags);
}

/// Opens a sequence or mapping; false when it is nested too deep, in which
/// case it stands as one empty value and its contents are to be skipped.
fn open_collection(
    d: &mut Doc<'_>,
    stack: &mut Vec<Open>,
    is_map: bool,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    if stack.len() >= MAX_DEPTH {
        d.broken = true;
        diags.push(
            Diagnostic::error(
                Code::YamlDepth,
                format!("collections are nested more than {MAX_DEPTH} levels deep"),
            )
            .at(span, "too deep")
            .hint("Datum documents nest a few levels at most; flatten this value"),
        );
        push_leaf(d, stack, empty(), span, diags);
        return false;
    }
    check_key_slot(d, stack, span, diags);
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
    true
}

/// Closes the innermost open collection, which ends at `span`.
fn close_collection(d: &mut Doc<'_>, stack: &mut Vec<Open>, span: Span) {
    if let Some(open) = stack.pop() {
        let end = d.nodes.len() as u32;
        let node = &mut d.nodes[open.node as usize];
        node.end = end;
        node.span.end = span.end;
        close_child(stack);
    }
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
            Diagnostic::error(Code::YamlAnchor, "YAML anchors are not allowed")
                .at(span, "anchored here")
                .hint("repeat the value where it is needed, or move it to a layer that several hosts match"),
        );
    }
    if tagged {
        d.broken = true;
        diags.push(
            Diagnostic::error(Code::YamlTag, "YAML tags are not allowed")
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
            Diagnostic::error(Code::YamlKey, "a mapping key must be a plain value")
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
                Diagnostic::error(Code::YamlDuplicateKey, format!("duplicate key `{key}`"))
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
        return Diagnostic::error(Code::YamlAlias, "YAML aliases are not allowed")
            .at(Span::point(file, at), "alias")
            .hint("write the value out in full: an alias hides where a value comes from");
    }
    if e.info() == "recursion limit exceeded" {
        return Diagnostic::error(
            Code::YamlDepth,
            format!("collections are nested more than {MAX_DEPTH} levels deep"),
        )
        .at(Span::point(file, at), "too deep")
        .hint("Datum documents nest a few levels at most; flatten this value");
    }
    // A tab in the indentation: point at it, and say why. The scanner may
    // stop on the line before, scanning a value the tab's line continues.
    let tab_line = |n: usize| {
        let l = text.lines().nth(n)?;
        let indent = &l[..l.len() - l.trim_start_matches([' ', '\t']).len()];
        indent.find('\t')
    };
    let tabbed = tab_line(rel).map(|col| (at.line, col)).or_else(|| {
        e.info()
            .contains("tab")
            .then(|| tab_line(rel + 1).map(|col| (at.line + 1, col)))
            .flatten()
    });
    if let Some((line, tab)) = tabbed {
        let at = Pos {
            line,
            col: tab as u32 + 1,
        };
        return Diagnostic::error(Code::YamlSyntax, format!("malformed YAML: {}", e.info()))
            .at(Span::point(file, at), "a tab")
            .hint("YAML forbids tabs for indentation; use spaces");
    }
    let mut d = Diagnostic::error(Code::YamlSyntax, format!("malformed YAML: {}", e.info()))
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
