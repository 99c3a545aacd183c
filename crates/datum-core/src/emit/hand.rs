//! The JSON writer Datum had before [`super::write_json`] went through
//! serde_json, kept for the one run that compares the two
//! (`benches/json.rs` in datum-bench) and for the test that they agree.

use super::Tree;
use std::io::{self, Write};

/// Writes a tree as pretty JSON (two-space indent), ending with a newline.
pub fn write_json(w: &mut dyn Write, tree: &Tree<'_>) -> io::Result<()> {
    let mut out = String::new();
    json(&mut out, tree, 0);
    out.push('\n');
    w.write_all(out.as_bytes())
}

/// Writes a tree as JSON on one line, for line-oriented streams.
pub fn write_json_line(w: &mut dyn Write, tree: &Tree<'_>) -> io::Result<()> {
    let mut out = String::new();
    json_compact(&mut out, tree);
    out.push('\n');
    w.write_all(out.as_bytes())
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json(out: &mut String, tree: &Tree<'_>, level: usize) {
    match tree {
        Tree::Map(entries) if !entries.is_empty() => {
            out.push_str("{\n");
            for (i, (k, v)) in entries.iter().enumerate() {
                indent(out, level + 2);
                json_string(out, k);
                out.push_str(": ");
                json(out, v, level + 2);
                if i + 1 < entries.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push('}');
        }
        Tree::List(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                indent(out, level + 2);
                json(out, v, level + 2);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, level);
            out.push(']');
        }
        other => json_compact(out, other),
    }
}

fn json_compact(out: &mut String, tree: &Tree<'_>) {
    match tree {
        Tree::Null => out.push_str("null"),
        Tree::Str(s) => json_string(out, s),
        Tree::Int(i) => out.push_str(&i.to_string()),
        Tree::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Tree::List(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_compact(out, v);
            }
            out.push(']');
        }
        Tree::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(out, k);
                out.push(':');
                json_compact(out, v);
            }
            out.push('}');
        }
    }
}
