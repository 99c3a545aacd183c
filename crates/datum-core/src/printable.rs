//! Text that reaches a terminal: what a fleet wrote (a file name, a label,
//! a value, a resource title) is shown, never obeyed.
//!
//! A layer file named with a newline must not add rows to a conflict
//! report, and a label holding `ESC[2J` must not clear the screen of the
//! operator reading it. Every text output (diagnostics, conflict tables,
//! explain, diff, query, hosts) passes what the fleet wrote through
//! [`escape`] before it is printed: control characters (C0, DEL, C1) and
//! the bidirectional overrides that reorder what a terminal shows come out
//! as escapes (`\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`). JSON output needs
//! none of this: its strings are escaped by the format.

use std::borrow::Cow;
use std::io::{self, Write};

/// Whether `c` would act on a terminal, or reorder the text around it,
/// rather than be shown.
pub fn is_unprintable(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every unprintable character written as an escape; borrowed
/// when there is none (the usual case).
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unprintable) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// Appends `c`, escaped when it is unprintable.
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_unprintable(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// One line of text output: `line` escaped (a line holds no line break of
/// its own), then a newline.
pub fn write_line(w: &mut dyn Write, line: &str) -> io::Result<()> {
    w.write_all(escape(line).as_bytes())?;
    w.write_all(b"\n")
}

/// Text on one line as every report shows it: as written when it is
/// plain, quoted and escaped otherwise, long text cut short.
pub fn display_text(s: &str) -> String {
    const MAX: usize = 48;
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.chars().any(is_unprintable)
        && s.chars().count() <= MAX;
    if plain {
        return s.to_owned();
    }
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push_str("…\"");
            return format!("{out} ({} bytes)", s.len());
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => push_escaped(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// `` `text` `` when it reads as written, else quoted and escaped.
pub fn quoted(s: &str) -> String {
    let shown = display_text(s);
    if shown == s { format!("`{s}`") } else { shown }
}

/// A source line as it is shown under a diagnostic: each unprintable
/// character replaced by one visible character (its control picture, `␛`
/// for ESC, `␉` for a tab), so that the columns a diagnostic points at
/// stay where they were.
pub fn source_line(line: &str) -> Cow<'_, str> {
    if !line.chars().any(is_unprintable) {
        return Cow::Borrowed(line);
    }
    Cow::Owned(
        line.chars()
            .map(|c| match c as u32 {
                // A tab too (`␉`): expanded, it would pass for spaces, and
                // a tab where YAML wants spaces is an error to see.
                n @ 0x00..=0x1F => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
                0x7F => '\u{2421}',
                _ if is_unprintable(c) => '\u{FFFD}',
                _ => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_overrides_are_escaped_and_the_rest_is_kept() {
        assert!(matches!(escape("roles/web é ✓"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\nb\rc\td\x1b[2Je\u{7f}f\u{9b}g\u{202e}h"),
            "a\\nb\\rc\\td\\u{1b}[2Je\\u{7f}f\\u{9b}g\\u{202e}h"
        );
    }

    #[test]
    fn a_line_cannot_become_two() {
        let mut out = Vec::new();
        write_line(&mut out, "x\ny").unwrap();
        assert_eq!(out, b"x\\ny\n");
    }

    #[test]
    fn a_source_line_keeps_its_length_in_characters() {
        let line = "  title: \"\x1b[2J\u{9b}\t\u{7f}\"";
        let shown = source_line(line);
        assert_eq!(shown, "  title: \"␛[2J\u{FFFD}␉␡\"");
        assert_eq!(shown.chars().count(), line.chars().count());
    }
}
