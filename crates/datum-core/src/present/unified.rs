//! Content changes as unified diffs, the form `git diff` and `diff -u`
//! print and every reviewer reads: `apply` shows what it writes over a
//! file this way, and `diff` what a change does to a File's content.
//!
//! [`text`] makes the diff (three lines of context); [`draw`] writes it
//! indented, each line tagged by what it is and escaped
//! ([`crate::printable`]): a content line holding `ESC[2J` or a carriage
//! return is shown, never obeyed.

use std::io;

use similar::TextDiff;

use super::{Styled, Tag};
use crate::printable::escape;

/// Text up to this size is shown as a diff; larger, by its digest.
pub const LIMIT: usize = 512 * 1024;

/// Lines of unchanged text shown around each change.
const CONTEXT: usize = 3;

/// `bytes` as text worth a diff: UTF-8, no NUL, at most [`LIMIT`] bytes.
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.len() > LIMIT || bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// The unified diff from `old` to `new`, its header naming each side.
/// Empty when they are equal.
pub fn text(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(old_name, new_name)
        .to_string()
}

/// Writes `diff` (from [`text`]) line by line, each after `indent`:
/// headers, hunks, added and removed lines tagged, context plain. Lines
/// end at `\n` alone: a carriage return is part of its line, shown
/// escaped, so a change of line endings is seen.
pub fn draw(w: &mut dyn Styled, indent: &str, diff: &str) -> io::Result<()> {
    for l in diff.split_terminator('\n') {
        w.write_all(indent.as_bytes())?;
        w.part(tag(l), &escape(l))?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// What a line of a unified diff is: its header, a hunk, a line added or
/// removed, or context (untagged).
pub fn tag(line: &str) -> Option<Tag> {
    match line.as_bytes() {
        [b'-', b'-', b'-', b' ', ..] | [b'+', b'+', b'+', b' ', ..] => Some(Tag::Heading),
        [b'@', b'@', ..] => Some(Tag::Place),
        [b'+', ..] => Some(Tag::Added),
        [b'-', ..] => Some(Tag::Removed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::Marked;

    #[test]
    fn lines_are_tagged_and_escaped() {
        let d = text("a\nb\n", "a\nc\x1b[2J\r\n", "x (old)", "x (new)");
        let mut out = Marked(Vec::new());
        draw(&mut out, "  ", &d).unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "  <Heading|--- x (old)>\n  <Heading|+++ x (new)>\n  <Place|@@ -1,2 +1,2 @@>\n   a\n  <Removed|-b>\n  <Added|+c\\u{1b}[2J\\r>\n"
        );
    }

    #[test]
    fn binary_and_large_content_is_not_text() {
        assert_eq!(as_text(b"a\0b"), None);
        assert_eq!(as_text(&[0xff, 0xfe]), None);
        assert_eq!(as_text(&vec![b'a'; LIMIT + 1]), None);
        assert_eq!(as_text(b"ok\n"), Some("ok\n"));
    }
}
