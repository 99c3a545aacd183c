//! A diagnostic drawn as text: a message with its source snippet, or a
//! table (a conflict's sides) followed by its places; then notes and a
//! hint. What the fleet wrote (paths, names, values, the source line) is
//! escaped ([`crate::printable`]): text from a fleet is shown, never
//! obeyed by the terminal. Also how many diagnostics of one kind text
//! output draws.

use std::collections::BTreeMap;
use std::io;

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::{Plain, Styled, Tag};
use crate::diagnostic::{Code, Diagnostic, Label, Line, Severity};
use crate::printable::{escape, source_line};
use crate::source::{Files, Span};

/// Draws a diagnostic as text, ending with a newline.
pub fn draw(d: &Diagnostic, files: &Files, out: &mut dyn Styled) -> io::Result<()> {
    if d.body.is_empty()
        && !hides_lines(d, files)
        && let Some(primary) = &d.primary
    {
        return snippet(d, files, primary, out);
    }
    table(d, files, out)
}

/// [`draw`] without tags, into any writer.
pub fn write(d: &Diagnostic, files: &Files, out: &mut dyn io::Write) -> io::Result<()> {
    draw(d, files, &mut Plain(out))
}

/// The diagnostic drawn without tags, as a `String`.
pub fn to_text(d: &Diagnostic, files: &Files) -> String {
    super::to_string(|out| draw(d, files, out))
}

/// How many diagnostics of one code and severity text output draws; the
/// rest are counted in one line (JSON output carries every one).
pub const SHOWN_PER_CODE: usize = 20;

/// How many rows of its table, places and notes one diagnostic draws in
/// text; the rest are counted in one line (JSON output carries every one).
/// A conflict between 2,000 layers is twenty rows and twenty places, not
/// 180 KB of text.
pub const SHOWN_PER_DIAGNOSTIC: usize = 20;

/// `and 1980 more places not shown; ...`, or `None` when none were left out.
fn more_line(total: usize, what: &str) -> Option<String> {
    let n = total.checked_sub(SHOWN_PER_DIAGNOSTIC).filter(|&n| n > 0)?;
    Some(format!(
        "and {n} more {what} not shown; `--format json` lists every one"
    ))
}

/// The diagnostics text output draws, in their order, and how many of each
/// code and severity it leaves out: 100,000 bad label values are twenty
/// errors and one line, not 20 MB of text.
pub struct Capped<'d> {
    pub shown: Vec<&'d Diagnostic>,
    /// Sorted by severity (errors first), then code.
    pub left_out: Vec<(Severity, Code, usize)>,
}

pub fn cap(diags: &[Diagnostic]) -> Capped<'_> {
    let mut seen: BTreeMap<(Severity, Code), usize> = BTreeMap::new();
    let mut shown = Vec::with_capacity(diags.len().min(64));
    for d in diags {
        let n = seen.entry((d.severity, d.code)).or_default();
        *n += 1;
        if *n <= SHOWN_PER_CODE {
            shown.push(d);
        }
    }
    let left_out = seen
        .into_iter()
        .filter(|&(_, n)| n > SHOWN_PER_CODE)
        .map(|((s, c), n)| (s, c, n - SHOWN_PER_CODE))
        .collect();
    Capped { shown, left_out }
}

/// `and 99980 more errors of this kind (unknown-field) not shown`.
pub fn left_out_line(severity: Severity, code: Code, n: usize) -> String {
    format!(
        "and {n} more {}{} of this kind ({code}) not shown; `--format json` lists every one",
        severity.as_str(),
        if n == 1 { "" } else { "s" }
    )
}

/// Whether a place it points at is in the declaration of a sensitive
/// resource, whose lines are never shown ([`Files::hides`]).
fn hides_lines(d: &Diagnostic, files: &Files) -> bool {
    d.primary
        .iter()
        .chain(&d.secondary)
        .any(|l| files.hides(l.span))
}

/// `error: message`, the severity tagged.
fn title(d: &Diagnostic, out: &mut dyn Styled) -> io::Result<()> {
    out.tagged(Tag::Severity(d.severity), d.severity.as_str())?;
    writeln!(out, ": {}", escape(&d.message))
}

/// `  = note: text`, the word tagged.
fn remark(out: &mut dyn Styled, tag: Tag, word: &str, text: &str) -> io::Result<()> {
    write!(out, "  = ")?;
    out.tagged(tag, word)?;
    writeln!(out, ": {text}")
}

/// One line of the body, the hosts it names tagged.
fn body_line(line: &Line, out: &mut dyn Styled) -> io::Result<()> {
    write!(out, "  ")?;
    let text = line.text.as_str();
    match line
        .hosts
        .and_then(|(a, b)| Some((text.get(..a)?, text.get(a..b)?, text.get(b..)?)))
    {
        Some((before, hosts, after)) => {
            write!(out, "{}", escape(before))?;
            out.tagged(Tag::Hosts, &escape(hosts))?;
            writeln!(out, "{}", escape(after))
        }
        None => writeln!(out, "{}", escape(text)),
    }
}

/// A report with a table (conflicts) keeps its shape exactly; the places
/// it involves follow as `-->` lines. So does a report pointing into a
/// sensitive resource, whose lines are not shown.
fn table(d: &Diagnostic, files: &Files, out: &mut dyn Styled) -> io::Result<()> {
    title(d, out)?;
    // A table's last line sums it up (`all 500 layers match host web-001
    // at equal precedence`): it is drawn whatever is left out above it.
    match d.body.split_last() {
        Some((last, rows)) if rows.len() > SHOWN_PER_DIAGNOSTIC => {
            for line in &rows[..SHOWN_PER_DIAGNOSTIC] {
                body_line(line, out)?;
            }
            if let Some(more) = more_line(rows.len(), "rows") {
                writeln!(out, "  {more}")?;
            }
            body_line(last, out)?;
        }
        _ => {
            for line in &d.body {
                body_line(line, out)?;
            }
        }
    }
    let hidden = hides_lines(d, files);
    let all: Vec<&Label> = d.primary.iter().chain(&d.secondary).collect();
    let more_places = more_line(all.len(), "places");
    let places: Vec<&Label> = all.into_iter().take(SHOWN_PER_DIAGNOSTIC).collect();
    // An error's places show their lines, as a snippet would: each side
    // of a conflict where it is written.
    let lines = d.is_error() && !hidden;
    let gutter = places
        .iter()
        .map(|l| l.span.start.line.to_string().len())
        .max()
        .unwrap_or(1);
    for label in places {
        write!(out, "  ")?;
        out.tagged(Tag::Place, "-->")?;
        write!(out, " {}", escape(&files.location(label.span)))?;
        if label.text.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "  {}", escape(&label.text))?;
        }
        if lines {
            source_line_with_carets(files, label.span, gutter, out)?;
        }
    }
    if let Some(more) = more_places {
        writeln!(out, "  {more}")?;
    }
    if hidden {
        remark(
            out,
            Tag::Note,
            "note",
            "lines of a resource marked `sensitive: true` are not shown",
        )?;
    }
    for note in d.notes.iter().take(SHOWN_PER_DIAGNOSTIC) {
        remark(out, Tag::Note, "note", &escape(note))?;
    }
    if let Some(more) = more_line(d.notes.len(), "notes") {
        remark(out, Tag::Note, "note", &more)?;
    }
    if let Some(hint) = &d.hint {
        remark(out, Tag::Hint, "hint", &escape(hint))?;
    }
    Ok(())
}

/// The line a place is on, with carets under the place (to the end of the
/// line when it runs on), in a gutter `gutter` digits wide; columns are
/// counted on the screen, so wide characters keep the carets in place.
fn source_line_with_carets(
    files: &Files,
    span: Span,
    gutter: usize,
    out: &mut dyn Styled,
) -> io::Result<()> {
    use unicode_width::UnicodeWidthStr as _;
    let text = files.get(span.file).line(span.start.line);
    let start = char_offset(text, span.start.col);
    let end = if span.end.line == span.start.line && span.end.col > span.start.col {
        char_offset(text, span.end.col)
    } else {
        text.len()
    };
    // One visible character each, tabs too (`␉`), so the carets line up.
    let shown = |s: &str| source_line(s).into_owned();
    let before = shown(&text[..start]).width();
    let marked = shown(&text[start..end]).width().max(1);
    let n = span.start.line;
    writeln!(out, "  {:gutter$} |", "")?;
    writeln!(out, "  {n:>gutter$} | {}", shown(text))?;
    writeln!(
        out,
        "  {:gutter$} | {}{}",
        "",
        " ".repeat(before),
        "^".repeat(marked)
    )
}

/// The message, then the one line it points at drawn by annotate-snippets
/// (in its own colours when the writer shows tags), notes and hint.
fn snippet(d: &Diagnostic, files: &Files, primary: &Label, out: &mut dyn Styled) -> io::Result<()> {
    title(d, out)?;
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let mut group =
        Group::with_level(level).element(one_line_snippet(files, primary, AnnotationKind::Primary));
    // The primary place and the first others, up to the cap.
    let others = SHOWN_PER_DIAGNOSTIC - 1;
    for label in d.secondary.iter().take(others) {
        group = group.element(one_line_snippet(files, label, AnnotationKind::Context));
    }
    let more_places = more_line(d.secondary.len() + 1, "places");
    for note in d.notes.iter().take(SHOWN_PER_DIAGNOSTIC) {
        group = group.element(Level::NOTE.message(escape(note)));
    }
    for more in more_places
        .into_iter()
        .chain(more_line(d.notes.len(), "notes"))
    {
        group = group.element(Level::NOTE.message(more));
    }
    if let Some(hint) = &d.hint {
        group = group.element(Level::HELP.with_name("hint").message(escape(hint)));
    }
    let report: [Group<'_>; 1] = [group];
    let renderer = if out.shows_tags() {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
    .decor_style(DecorStyle::Ascii);
    writeln!(out, "{}", renderer.render(&report))
}

/// A snippet of the one line a label starts on; a span running past the end
/// of its line is cut there, an empty one marks one character.
fn one_line_snippet<'a>(
    files: &'a Files,
    label: &'a Label,
    kind: AnnotationKind,
) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let file = files.get(label.span.file);
    // One visible character for each unprintable one: the columns stay.
    let line = source_line(file.line(label.span.start.line));
    let start = char_offset(&line, label.span.start.col);
    let end = if label.span.end.line == label.span.start.line
        && label.span.end.col > label.span.start.col
    {
        char_offset(&line, label.span.end.col)
    } else if label.span.end.line > label.span.start.line {
        line.len()
    } else {
        start
    };
    let end = if end <= start {
        next_char_end(&line, start)
    } else {
        end
    };
    Snippet::source(line)
        .line_start(label.span.start.line as usize)
        .path(escape(file.path()))
        .annotation(kind.span(start..end).label(escape(&label.text)))
}

/// The byte offset of a 1-based character column in `line`.
fn char_offset(line: &str, col: u32) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i)
}

fn next_char_end(line: &str, start: usize) -> usize {
    line[start..]
        .chars()
        .next()
        .map_or(start, |c| start + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Pos;

    fn files() -> (Files, Span) {
        let mut files = Files::default();
        let id = files.add(
            "roles/web/layer.yaml".into(),
            "resources:\n  File[x]:\n    mdoe: \"0640\"\n".into(),
        );
        let span = Span {
            file: id,
            start: Pos { line: 3, col: 5 },
            end: Pos { line: 3, col: 9 },
        };
        (files, span)
    }

    #[test]
    fn snippet_names_place_line_and_hint() {
        let (files, span) = files();
        let d = Diagnostic::error(Code::UnknownField, "unknown field `mdoe` for File")
            .at(span, "unknown field")
            .hint("did you mean `mode`?");
        let text = to_text(&d, &files);
        assert_eq!(
            text,
            "error: unknown field `mdoe` for File\n \
             --> roles/web/layer.yaml:3:5\n  \
             |\n\
             3 |     mdoe: \"0640\"\n  \
             |     ^^^^ unknown field\n  \
             |\n  \
             = hint: did you mean `mode`?\n"
        );
    }

    #[test]
    fn table_keeps_its_shape() {
        let (files, span) = files();
        let d = Diagnostic::error(Code::Conflict, "conflicting values for File[x].mode")
            .with_body(vec![
                Line::from("0640  a  precedence 30".to_owned()),
                Line::from("0600  b  precedence 30".to_owned()),
            ])
            .at(span, "");
        assert_eq!(
            to_text(&d, &files),
            "error: conflicting values for File[x].mode\n  0640  a  precedence 30\n  0600  b  precedence 30\n  --> roles/web/layer.yaml:3:5\n    |\n  3 |     mdoe: \"0640\"\n    |     ^^^^\n"
        );
        // A warning's table (a conflict waiting for a host) keeps to places.
        let mut w = d.clone();
        w.severity = Severity::Warning;
        assert_eq!(
            to_text(&w, &files),
            "warning: conflicting values for File[x].mode\n  0640  a  precedence 30\n  0600  b  precedence 30\n  --> roles/web/layer.yaml:3:5\n"
        );
    }
}
