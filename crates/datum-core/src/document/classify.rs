//! Which YAML files are document files: the one rule, decided by parsing
//! the start of a file, for every reader (a directory, git, memory).
//!
//! A file is a document file when its first YAML document (an empty one,
//! a stray `---`, is passed over) is a mapping with a top-level `datum` key,
//! however it is written: after a byte order mark, quoted, spaced, in flow
//! style, or not first. A first document with a top-level `type: Fleet`,
//! `Host` or `Layer` is a document file too, so that one whose author forgot
//! `datum:` is reported (by the decoder, at its `type` line) instead of
//! being skipped. A first document with `type: Manifest` is Datum's own
//! output (`datum render --all --out DIR` run inside the fleet): never
//! input, wherever it sits. Anything else is a payload.
//!
//! Parsing stops as soon as the answer is known: a document file is
//! usually decided at its first key, and a payload costs at most its first
//! document's top-level keys. How much of a file is read around this is
//! the loader's business.

use std::io::{self, Read};

use crate::yaml::events::{Chars, Event, Events};

/// What the start of a file says it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Its first document has a top-level `datum` key, or a top-level
    /// `type` naming a Datum document.
    Document,
    /// Anything else: read no further.
    Payload,
    /// What Datum writes (`type: Manifest`): never read as input.
    Output,
}

/// Whether `text` is a document file (the same rule the loader applies to
/// a file as it reads it, through `decide`).
pub fn classify(text: &str) -> Class {
    let mut chars = Chars::new(io::Cursor::new(text.as_bytes()), u64::MAX);
    decide(&mut chars)
}

/// Runs the parser until the class is known.
pub(crate) fn decide<R: Read>(chars: &mut Chars<R>) -> Class {
    let mut events = Events::of_chars(&mut *chars);
    let mut walk = Walk::default();
    loop {
        match events.pull() {
            Some(Ok(event)) => {
                if let Some(class) = walk.event(event) {
                    return class;
                }
            }
            None => return Class::Payload,
            // A syntax error before the answer: only a line that plainly
            // starts a Datum document makes it one (its decoder then reports
            // the error); a broken payload, a template, is left alone.
            Some(Err(_)) => break,
        }
    }
    drop(events);
    match &chars.kept {
        Some(kept) if is_output(kept) => Class::Output,
        Some(kept) if looks_like_document(kept) => Class::Document,
        _ => Class::Payload,
    }
}

/// Where the walk through the first document's events is.
#[derive(Default)]
struct Walk {
    /// Inside a document.
    in_doc: bool,
    /// Collections open in the first non-empty document (1: its top mapping).
    depth: usize,
    /// At depth 1, whether the next node is a key.
    expect_key: bool,
    /// The top-level key whose value comes next, when it was a scalar.
    key: Option<String>,
    /// A top-level `datum` key was seen: a document file, or Datum's output
    /// when its `type` says so.
    datum: bool,
}

impl Walk {
    fn event(&mut self, event: Event<'_>) -> Option<Class> {
        if !self.in_doc {
            return match event {
                Event::DocumentStart => {
                    self.in_doc = true;
                    None
                }
                Event::StreamEnd => Some(Class::Payload),
                _ => None,
            };
        }
        if self.depth == 0 {
            return match event {
                Event::MappingStart => {
                    self.depth = 1;
                    self.expect_key = true;
                    None
                }
                // An empty document is passed over; the next one decides.
                Event::Scalar(text, true)
                    if matches!(&*text, "" | "~" | "null" | "Null" | "NULL") =>
                {
                    None
                }
                Event::DocumentEnd => {
                    self.in_doc = false;
                    None
                }
                _ => Some(Class::Payload),
            };
        }
        if self.depth == 1 {
            return self.top_level(event);
        }
        match event {
            Event::MappingStart | Event::SequenceStart => self.depth += 1,
            Event::MappingEnd | Event::SequenceEnd => {
                self.depth -= 1;
                if self.depth == 1 {
                    // A collection ended: a key or a value, whichever it was.
                    self.expect_key = !self.expect_key;
                }
            }
            _ => {}
        }
        None
    }

    /// One event directly inside the top mapping of the first document.
    fn top_level(&mut self, event: Event<'_>) -> Option<Class> {
        let was_key = self.expect_key;
        match event {
            Event::MappingEnd if self.datum => return Some(Class::Document),
            Event::MappingEnd => return Some(Class::Payload),
            Event::Scalar(text, _) if was_key => {
                if text == "datum" {
                    self.datum = true;
                }
                self.key = Some(text.into_owned());
            }
            Event::Scalar(text, _) => {
                if self.key.as_deref() == Some("type") {
                    if text == OUTPUT_TYPE {
                        return Some(Class::Output);
                    }
                    if self.datum || is_datum_type(&text) {
                        return Some(Class::Document);
                    }
                }
                self.key = None;
            }
            Event::MappingStart | Event::SequenceStart => {
                self.key = None;
                self.depth += 1;
                // The flip happens when the collection ends.
                return None;
            }
            _ => self.key = None,
        }
        self.expect_key = !was_key;
        None
    }
}

/// The `type` of what Datum writes.
const OUTPUT_TYPE: &str = "Manifest";

fn is_datum_type(text: &str) -> bool {
    matches!(text, "Fleet" | "Host" | "Layer")
}

/// Whether a line of a file that does not parse starts a Datum document:
/// `datum:` (or `type: Fleet|Host|Layer`) at its start, quoted or spaced.
fn looks_like_document(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.lines().enumerate().any(|(i, line)| {
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        match key_of(line) {
            Some(("datum", _)) => true,
            Some(("type", rest)) => {
                let value = rest.split('#').next().unwrap_or("").trim();
                let value = value.trim_matches(|c| c == '"' || c == '\'');
                is_datum_type(value)
            }
            _ => false,
        }
    })
}

/// Whether a file that does not parse says, at the start of a line of its
/// first document, that it is Datum's output (`type: Manifest`).
fn is_output(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .skip_while(|l| l.starts_with("---") || l.trim().is_empty() || l.starts_with('#'))
        .take_while(|l| !l.starts_with("---"))
        .any(|line| {
            key_of(line).is_some_and(|(key, rest)| {
                let value = rest.split('#').next().unwrap_or("").trim();
                key == "type" && value.trim_matches(|c| c == '"' || c == '\'') == OUTPUT_TYPE
            })
        })
}

/// The key at the very start of a line (plain or quoted) and what follows
/// its colon.
fn key_of(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = match line.as_bytes().first()? {
        q @ (b'"' | b'\'') => {
            let end = line[1..].find(*q as char)? + 1;
            (&line[1..end], &line[end + 1..])
        }
        _ => {
            let end = line.find([':', ' ', '\t']).unwrap_or(line.len());
            (&line[..end], &line[end..])
        }
    };
    let rest = rest.trim_start_matches([' ', '\t']).strip_prefix(':')?;
    Some((key, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_however_datum_is_written() {
        for text in [
            "datum: v1alpha1\ntype: Host\n",
            "\u{feff}datum: v1alpha1\n",
            "\"datum\": v1alpha1\n",
            "'datum': v1alpha1\n",
            "datum : v1alpha1\n",
            "{datum: v1alpha1, type: Host, name: x}\n",
            "type: Layer\nname: x\ndatum: v1alpha1\n",
            "name: x\nlabels: {a: b}\nlist: [1, {datum: 2}]\ndatum: v1alpha1\n",
            "# a comment\n---\ndatum: v1alpha1\n",
            "---\n---\ndatum: v1alpha1\n",
            "type: Host\nname: forgot-the-version\n",
            "type: \"Fleet\"\n",
            "? [complex]\n: x\ntype: Layer\n",
            // Broken before the answer, but a line plainly starts one.
            "\tdatum: v1alpha1\n",
            "name: x\n bad: [\ndatum: v1alpha1\n",
        ] {
            assert_eq!(classify(text), Class::Document, "{text:?}");
        }
    }

    #[test]
    fn payloads() {
        for text in [
            "",
            "server:\n  datum: 1\n",
            "- datum: v1alpha1\n",
            "just text\n",
            "type: Deployment\nspec: {type: Host}\n",
            "type: [Host]\ndata: 1\n",
            "key: value\n---\ndatum: v1alpha1\n",
            "{{ template }}: [\n",
            "a: b\n  datum: v1alpha1\n",
        ] {
            assert_eq!(classify(text), Class::Payload, "{text:?}");
        }
    }

    #[test]
    fn datums_own_output_is_told_apart() {
        for text in [
            "datum: v1alpha1\ntype: Manifest\nhost: web-001\n",
            "{datum: v1alpha1, type: Manifest, host: x}\n",
            "type: Manifest\ndatum: v1alpha1\n",
            "---\ndatum: v1alpha1\ntype: \"Manifest\"\n",
            // Broken, as a hand edit may leave it.
            "datum: v1alpha1\nhost: [x\ntype: Manifest\n",
        ] {
            assert_eq!(classify(text), Class::Output, "{text:?}");
        }
        // Input stays input: a manifest later in the file is the decoder's
        // to refuse, and a broken input file is not taken for output.
        for text in [
            "datum: v1alpha1\ntype: Host\n---\ndatum: v1alpha1\ntype: Manifest\n",
            "datum: v1alpha1\nname: [x\n---\ntype: Manifest\n",
        ] {
            assert_eq!(classify(text), Class::Document, "{text:?}");
        }
    }

    #[test]
    fn invalid_utf8_is_read_past() {
        let bytes = b"\xff\xfe: 1\ndatum: v1alpha1\n";
        let mut chars = Chars::new(io::Cursor::new(&bytes[..]), u64::MAX);
        assert_eq!(decide(&mut chars), Class::Document);
        let text: String = Chars::new(io::Cursor::new("é€😀".as_bytes()), 10).collect();
        assert_eq!(text, "é€😀");
    }

    #[test]
    fn a_payload_is_read_no_further_than_its_decision() {
        // Each read hands out one byte, counting them.
        struct Counting<'a>(&'a [u8], usize);
        impl Read for Counting<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len() - self.1).min(1);
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        let mut text = b"- a list\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 1 << 20));
        let mut chars = Chars::new(Counting(&text, 0), 100);
        assert_eq!(decide(&mut chars), Class::Payload);
        assert!(chars.input.1 < 100, "read {} bytes", chars.input.1);
    }
}
