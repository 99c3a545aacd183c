//! Presentation, the top of the core: every answer drawn as text for a
//! person to read, and the diagnostics drawn with their source lines.
//!
//! Text goes to a [`Styled`] writer. A renderer tags the parts of a line a
//! terminal may set off with what they are ([`Tag`]: a winning value, a
//! removed line, the hosts a problem hits) and never says how they look:
//! the CLI maps each tag to a colour, and [`Plain`] drops the tags, so the
//! text is the same either way and rewording a line cannot lose its colour.
//! Everything a fleet wrote is escaped ([`crate::printable`]) before it is
//! written, tagged or not.
//!
//! - `diagnostic`: a diagnostic as text: its table, each place with its line.
//! - `check`: `check`'s closing line.
//! - `explain`, `diff`, `query`, `hosts`, `rollout`: each report as text.
//! - `unified`: a content change as a unified diff (`diff` and `apply`).

pub mod check;
pub mod diagnostic;
pub mod diff;
pub mod explain;
pub mod hosts;
pub mod query;
pub mod rollout;
#[cfg(test)]
mod tests;
pub mod unified;

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr as _;

use crate::diagnostic::Severity;
use crate::printable::escape;
use crate::report::column_widths;

/// What a part of a line is, for a terminal to show it so. Tags name what
/// the text means, never a colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    /// The word opening a diagnostic: `error` or `warning`.
    Severity(Severity),
    /// `note:`, under a diagnostic or on its own.
    Note,
    /// `hint:`, under a diagnostic.
    Hint,
    /// Something failed or fails: a count of errors, a failed resource,
    /// hosts that no longer resolve.
    Failure,
    /// A count of warnings.
    Warning,
    /// Something came right: no errors, an error fixed, hosts that resolve now.
    Good,
    /// What a change adds: a line, a layer, a new value.
    Added,
    /// What a change takes away: a line, a layer, an old value.
    Removed,
    /// Something that changes, as a whole.
    Changed,
    /// The value that stands, and the layer it comes from.
    Winner,
    /// What the winner displaced.
    Displaced,
    /// A title: the first line of an explanation, a summary.
    Heading,
    /// The title of a section inside a report: read past, not at.
    Section,
    /// Names of hosts a line is about.
    Hosts,
    /// A place: the `-->` before a location, a hunk of a content diff.
    Place,
    /// Something passed over.
    Quiet,
}

/// Where text is drawn: an [`io::Write`] that also takes tagged text.
pub trait Styled: Write {
    /// Writes `text` (already escaped) as `tag` says; the plain writer
    /// writes the text alone.
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        let _ = tag;
        self.write_all(text.as_bytes())
    }

    /// Whether tags show. A drawing a library colours by itself (a
    /// diagnostic's source snippet) is drawn in colour only then.
    fn shows_tags(&self) -> bool {
        false
    }

    /// Writes `text` (already escaped) tagged when there is a tag, plain
    /// when not; empty text is not tagged.
    fn part(&mut self, tag: Option<Tag>, text: &str) -> io::Result<()> {
        match tag {
            Some(tag) if !text.is_empty() => self.tagged(tag, text),
            _ => self.write_all(text.as_bytes()),
        }
    }
}

impl<S: Styled + ?Sized> Styled for &mut S {
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        (**self).tagged(tag, text)
    }

    fn shows_tags(&self) -> bool {
        (**self).shows_tags()
    }
}

impl<S: Styled + ?Sized> Styled for Box<S> {
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        (**self).tagged(tag, text)
    }

    fn shows_tags(&self) -> bool {
        (**self).shows_tags()
    }
}

/// A writer that drops the tags: the text exactly as the plain output.
#[derive(Debug, Default)]
pub struct Plain<W>(pub W);

impl<W: Write> Write for Plain<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> Styled for Plain<W> {}

/// A writer that shows each tag as `<Tag|text>`: what a test compares to
/// see that a renderer tags what it should.
#[derive(Debug, Default)]
pub struct Marked<W>(pub W);

impl<W: Write> Write for Marked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> Styled for Marked<W> {
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        write!(self.0, "<{tag:?}|{text}>")
    }
}

/// Draws into a `String` with `draw`, dropping the tags: for tests and
/// tools that keep the text.
pub fn to_string(draw: impl FnOnce(&mut dyn Styled) -> io::Result<()>) -> String {
    let mut out = Plain(Vec::new());
    draw(&mut out).expect("drawing into memory does not fail");
    String::from_utf8(out.0).expect("reports are UTF-8")
}

/// Pieces of text, each tagged or not.
type Pieces = Vec<(Option<Tag>, String)>;

/// Text in pieces, some of them tagged: a line, or one cell of a table.
/// Its pieces hold what the fleet wrote as written; they are escaped when
/// drawn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text(Pieces);

impl Text {
    pub fn tagged(tag: Tag, text: impl Into<String>) -> Text {
        Text(vec![(Some(tag), text.into())])
    }

    /// Adds plain text.
    pub fn and(mut self, text: impl Into<String>) -> Text {
        self.0.push((None, text.into()));
        self
    }

    /// Adds tagged text.
    pub fn and_tagged(mut self, tag: Tag, text: impl Into<String>) -> Text {
        self.0.push((Some(tag), text.into()));
        self
    }

    /// This text, then `sep`, then `more`.
    pub fn then(mut self, sep: &str, more: &Text) -> Text {
        self.0.push((None, sep.to_owned()));
        self.0.extend(more.0.iter().cloned());
        self
    }

    /// The pieces escaped, as drawn.
    fn escaped(&self) -> Pieces {
        self.0
            .iter()
            .map(|(tag, text)| (*tag, escape(text).into_owned()))
            .collect()
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text(vec![(None, text)])
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text::from(text.to_owned())
    }
}

/// Writes escaped pieces, the line's trailing blanks left out.
fn write_pieces(out: &mut dyn Styled, pieces: &[(Option<Tag>, String)]) -> io::Result<()> {
    let whole: String = pieces.iter().map(|(_, t)| t.as_str()).collect();
    let mut left = whole.trim_end().len();
    for (tag, text) in pieces {
        let text = &text[..text.len().min(left)];
        left -= text.len();
        out.part(*tag, text)?;
    }
    Ok(())
}

/// One line: `indent`, then the text escaped, then a newline.
pub fn line(out: &mut dyn Styled, indent: &str, text: impl Into<Text>) -> io::Result<()> {
    out.write_all(indent.as_bytes())?;
    for (tag, text) in text.into().escaped() {
        out.part(tag, &text)?;
    }
    out.write_all(b"\n")
}

/// Rows each on a line after `indent`, padded so each column lines up on
/// a terminal (widths in display columns, measured escaped); the last
/// column is not padded, nor is any line left with trailing blanks.
pub fn table(out: &mut dyn Styled, indent: &str, rows: &[Vec<Text>]) -> io::Result<()> {
    table_with(out, indent, rows, |_, _| Ok(()))
}

/// [`table`], with `after(out, i)` writing what goes under row `i`.
pub fn table_with(
    out: &mut dyn Styled,
    indent: &str,
    rows: &[Vec<Text>],
    mut after: impl FnMut(&mut dyn Styled, usize) -> io::Result<()>,
) -> io::Result<()> {
    let cells: Vec<Vec<Pieces>> = rows
        .iter()
        .map(|row| row.iter().map(Text::escaped).collect())
        .collect();
    let width = |cell: &Pieces| cell.iter().map(|(_, t)| t.width()).sum();
    let widths = column_widths(cells.iter().map(|row| row.iter().map(width)));
    for (i, row) in cells.iter().enumerate() {
        let mut pieces = vec![(None, indent.to_owned())];
        for (c, cell) in row.iter().enumerate() {
            pieces.extend(cell.iter().cloned());
            if c + 1 < row.len() {
                pieces.push((None, " ".repeat(widths[c] - width(cell) + 2)));
            }
        }
        write_pieces(out, &pieces)?;
        out.write_all(b"\n")?;
        after(out, i)?;
    }
    Ok(())
}
