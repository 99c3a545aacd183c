//! Colour for the reports people read on a terminal: the style of each tag
//! the core and apply put on their text ([`Tag`]), and [`Painter`], the
//! writer that draws tagged text in those styles.
//!
//! Nothing here reads a report's text: what a part of a line is comes
//! with it, so rewording a line cannot lose its colour, and painting never
//! changes a character (stripping the styles gives back exactly what
//! `--color never` prints). Whether to paint at all is decided by the
//! caller (`--color`, `NO_COLOR`, a terminal).

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use datum_core::diagnostic::Severity;
use datum_core::present::{Styled, Tag};

const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const CHANGED: Style = AnsiColor::Yellow.on_default();
const WINNER: Style = AnsiColor::Green.on_default().bold();
const DISPLACED: Style = AnsiColor::Red.on_default();
const HEADING: Style = Style::new().bold();
const FAILURE: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const GOOD: Style = AnsiColor::Green.on_default().bold();
const PLACE: Style = AnsiColor::Cyan.on_default();
const QUIET: Style = Style::new().dimmed();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// The style a tag is drawn in.
fn style(tag: Tag) -> Style {
    match tag {
        Tag::Severity(Severity::Error) | Tag::Failure => FAILURE,
        Tag::Severity(Severity::Warning) | Tag::Warning => WARNING,
        Tag::Note | Tag::Heading | Tag::Hosts => HEADING,
        Tag::Hint => HINT,
        Tag::Good => GOOD,
        Tag::Added => ADDED,
        Tag::Removed => REMOVED,
        Tag::Changed => CHANGED,
        Tag::Winner => WINNER,
        Tag::Displaced => DISPLACED,
        Tag::Section | Tag::Quiet => QUIET,
        Tag::Place => PLACE,
    }
}

/// `text` in the style of `tag`. A diagnostic's severity keeps the one SGR
/// sequence Datum has always opened it with (`ESC[1;31m`: the bold red of
/// [`FAILURE`], written as one sequence), which scripts reading coloured
/// output match.
fn painted(tag: Tag, text: &str) -> String {
    match tag {
        Tag::Severity(Severity::Error) => format!("\x1b[1;31m{text}\x1b[0m"),
        Tag::Severity(Severity::Warning) => format!("\x1b[1;33m{text}\x1b[0m"),
        tag => {
            let style = style(tag);
            format!("{style}{text}{style:#}")
        }
    }
}

/// Draws tagged text in colour and the rest as it comes.
pub struct Painter<W> {
    inner: W,
}

impl<W: Write> Painter<W> {
    pub fn new(inner: W) -> Painter<W> {
        Painter { inner }
    }
}

impl<W: Write> Write for Painter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Styled for Painter<W> {
    fn tagged(&mut self, tag: Tag, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.inner.write_all(painted(tag, text).as_bytes())
    }

    fn shows_tags(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_TAG: [Tag; 17] = [
        Tag::Severity(Severity::Error),
        Tag::Severity(Severity::Warning),
        Tag::Note,
        Tag::Hint,
        Tag::Failure,
        Tag::Warning,
        Tag::Good,
        Tag::Added,
        Tag::Removed,
        Tag::Changed,
        Tag::Winner,
        Tag::Displaced,
        Tag::Heading,
        Tag::Section,
        Tag::Hosts,
        Tag::Place,
        Tag::Quiet,
    ];

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn every_tag_is_painted_and_strips_back_to_its_text() {
        for tag in EVERY_TAG {
            let mut out = Painter::new(Vec::new());
            write!(out, "a ").unwrap();
            out.tagged(tag, "b → c").unwrap();
            let text = String::from_utf8(out.inner).unwrap();
            assert_ne!(text, "a b → c", "{tag:?} is not painted");
            assert_eq!(plain(&text), "a b → c", "{tag:?}");
        }
    }

    #[test]
    fn what_goes_and_comes_is_red_and_green_and_an_error_bold_red() {
        let mut out = Painter::new(Vec::new());
        out.tagged(Tag::Removed, "0640").unwrap();
        write!(out, " → ").unwrap();
        out.tagged(Tag::Added, "0644").unwrap();
        out.tagged(Tag::Severity(Severity::Error), "error").unwrap();
        out.tagged(Tag::Failure, "1 error").unwrap();
        out.tagged(Tag::Winner, "").unwrap();
        assert_eq!(
            String::from_utf8(out.inner).unwrap(),
            "\x1b[31m0640\x1b[0m → \x1b[32m0644\x1b[0m\x1b[1;31merror\x1b[0m\x1b[1m\x1b[31m1 error\x1b[0m"
        );
    }
}
