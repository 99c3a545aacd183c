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

/// Lines that differ, once the lines both sides start and end with are set
/// aside, beyond which no line diff is computed. The diff's cost grows
/// with the lines compared times the lines that differ (Myers): two
/// 512 KiB files with no line in common would take minutes. A bound on
/// lines, not on time, keeps the output the same on every machine.
pub const MAX_DIFFERING_LINES: usize = 4000;

/// The unified diff from `old` to `new`, its header naming each side.
/// Empty when they are equal. When more than [`MAX_DIFFERING_LINES`]
/// lines differ, one hunk line says how many, in place of the lines.
pub fn text(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let (removed, added, start) = differing(old, new);
    if removed + added > MAX_DIFFERING_LINES {
        return format!(
            "--- {old_name}\n+++ {new_name}\n@@ -{},{removed} +{},{added} @@ {} lines differ: too many to show as a diff (at most {MAX_DIFFERING_LINES})\n",
            start + 1,
            start + 1,
            removed + added,
        );
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(old_name, new_name)
        .to_string()
}

/// Lines of `old` and of `new` between the lines both begin with and the
/// lines both end with, and how many lines they begin with in common.
fn differing(old: &str, new: &str) -> (usize, usize, usize) {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (a.len() - head - tail, b.len() - head - tail, head)
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
    fn a_change_of_too_many_lines_is_counted_not_diffed() {
        let old = "a\n".repeat(MAX_DIFFERING_LINES);
        let new = "b\n".repeat(MAX_DIFFERING_LINES);
        let body = format!("keep\n{old}end\n");
        let changed = format!("keep\n{new}end\n");
        let d = text(&body, &changed, "x (old)", "x (new)");
        assert_eq!(
            d,
            format!(
                "--- x (old)\n+++ x (new)\n@@ -2,{n} +2,{n} @@ {} lines differ: too many to show as a diff (at most {MAX_DIFFERING_LINES})\n",
                2 * MAX_DIFFERING_LINES,
                n = MAX_DIFFERING_LINES,
            )
        );
        // At the bound, the lines are shown.
        let half = MAX_DIFFERING_LINES / 2;
        let d = text(&"a\n".repeat(half), &"b\n".repeat(half), "o", "n");
        assert_eq!(d.lines().filter(|l| l.starts_with("+b")).count(), half);
        assert_eq!(text("same\n", "same\n", "o", "n"), "");
    }

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
