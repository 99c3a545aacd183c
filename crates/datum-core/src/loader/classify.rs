//! Which YAML files are document files: the one rule, decided by parsing
//! the start of each file, for every reader (a directory, git, memory).
//!
//! A file is a document file when its first YAML document (an empty one,
//! a stray `---`, is passed over) is a mapping with a top-level `datum` key,
//! however it is written: after a byte order mark, quoted, spaced, in flow
//! style, or not first. A first document with a top-level `type: Fleet`,
//! `Host` or `Layer` is a document file too, so that one whose author forgot
//! `datum:` is reported (by the decoder, at its `type` line) instead of
//! being skipped. Anything else is a payload.
//!
//! Reading stops as soon as the answer is known: a document file is
//! usually decided at its first key. A file without the text any document
//! needs (`datum`, or a type's name) is a payload at the cost of reading
//! it, unparsed; any other payload costs at most its first document's
//! top-level keys. A payload is never held to the document size limit,
//! and at most that limit of it is kept in memory while it is read.

use std::io::{self, Read};

use saphyr_parser::{BufferedInput, Event, Parser, ScalarStyle};

use crate::reader::{Opened, ReadError, Reader};

/// What the start of a file says it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// Its first document has a top-level `datum` key, or a top-level
    /// `type` naming a Datum document.
    Document,
    /// Anything else: read no further.
    Payload,
}

/// Whether `text` is a document file (the same rule as [`read_document`]).
pub fn classify(text: &str) -> Class {
    let mut chars = Chars::new(io::Cursor::new(text.as_bytes()), u64::MAX);
    decide(&mut chars)
}

/// Reads one discovered file if it is a document file, up to `limit` bytes;
/// `None` for a payload, whatever its size. A document file over the limit
/// is refused ([`ReadError::TooLarge`]) without being read past it.
pub fn read_document(
    reader: &dyn Reader,
    path: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, ReadError> {
    let io = |source| ReadError::Fs {
        path: path.to_owned(),
        source,
    };
    let too_large = |size| ReadError::TooLarge {
        path: path.to_owned(),
        size,
        limit,
    };
    let Opened {
        bytes: mut input,
        size,
    } = reader.open(path)?;
    // The fleet's own file is never a payload: whatever it holds, the
    // decoder says what is wrong with it.
    let root = path == "datum.yaml";
    if !root {
        let scan = scan(&mut input, HEAD).map_err(io)?;
        if !scan.found {
            return Ok(None);
        }
        input = match scan.head {
            Some(head) => Box::new(io::Cursor::new(head).chain(input)),
            None => reader.open(path)?.bytes,
        };
    }
    let mut chars = Chars::new(input, limit);
    let class = if root {
        Class::Document
    } else {
        decide(&mut chars)
    };
    if let Some(e) = chars.error.take() {
        return Err(io(e));
    }
    if class == Class::Payload {
        return Ok(None);
    }
    if let Some(size) = size.filter(|&size| size > limit) {
        return Err(too_large(size));
    }
    let Chars {
        mut input,
        kept,
        mut total,
        ..
    } = chars;
    let Some(mut kept) = kept else {
        let rest = io::copy(&mut input, &mut io::sink()).map_err(io)?;
        return Err(too_large(total + rest));
    };
    // The rest of the file, stopping one byte past the limit.
    total += (&mut input)
        .take((limit + 1).saturating_sub(total))
        .read_to_end(&mut kept)
        .map_err(io)? as u64;
    if total > limit {
        return Err(too_large(total));
    }
    Ok(Some(kept))
}

/// Text no document file can do without: the `datum` key or the name of
/// a document type, or a backslash (an escape in a double-quoted key could
/// spell either). A file with none of them is a payload, found at the
/// speed of reading it, without parsing.
const NEEDLES: [&str; 5] = ["datum", "Fleet", "Host", "Layer", "\\"];

/// How much of a file the scan keeps for the parser, so that a document
/// file (whose `datum` is usually on its first line) is read once.
const HEAD: usize = 256 << 10;

struct Scan {
    /// One of the [`NEEDLES`] was found.
    found: bool,
    /// Every byte read, when that was at most [`HEAD`].
    head: Option<Vec<u8>>,
}

/// Reads `input` until one of the [`NEEDLES`] appears, or to its end.
fn scan(input: &mut dyn Read, keep: usize) -> io::Result<Scan> {
    static FINDER: std::sync::LazyLock<aho_corasick::AhoCorasick> =
        std::sync::LazyLock::new(|| {
            aho_corasick::AhoCorasick::new(NEEDLES).expect("fixed patterns compile")
        });
    // The last bytes of the previous chunk stay in front, so a needle cut
    // in two by a read is still found.
    const CARRY: usize = 4;
    let mut buf = vec![0u8; CHUNK + CARRY];
    let mut carry = 0;
    let mut head = Some(Vec::new());
    loop {
        let n = match input.read(&mut buf[carry..]) {
            Ok(0) => return Ok(Scan { found: false, head }),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let read = &buf[carry..carry + n];
        head = head.filter(|h| h.len() + n <= keep).map(|mut h| {
            h.extend_from_slice(read);
            h
        });
        let len = carry + n;
        if FINDER.is_match(&buf[..len]) {
            return Ok(Scan { found: true, head });
        }
        let next = len.min(CARRY);
        buf.copy_within(len - next..len, 0);
        carry = next;
    }
}

/// Runs the parser until the class is known.
fn decide<R: Read>(chars: &mut Chars<R>) -> Class {
    let mut parser = Parser::new(BufferedInput::new(&mut *chars));
    let mut walk = Walk::default();
    loop {
        match parser.next_event() {
            Some(Ok((event, _))) => {
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
    drop(parser);
    match &chars.kept {
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
}

impl Walk {
    fn event(&mut self, event: Event<'_>) -> Option<Class> {
        if !self.in_doc {
            return match event {
                Event::DocumentStart(_) => {
                    self.in_doc = true;
                    None
                }
                Event::StreamEnd => Some(Class::Payload),
                _ => None,
            };
        }
        if self.depth == 0 {
            return match event {
                Event::MappingStart(..) => {
                    self.depth = 1;
                    self.expect_key = true;
                    None
                }
                // An empty document is passed over; the next one decides.
                Event::Scalar(text, ScalarStyle::Plain, ..)
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
            Event::MappingStart(..) | Event::SequenceStart(..) => self.depth += 1,
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
            Event::MappingEnd => return Some(Class::Payload),
            Event::Scalar(text, ..) if was_key => {
                if text == "datum" {
                    return Some(Class::Document);
                }
                self.key = Some(text.into_owned());
            }
            Event::Scalar(text, ..) => {
                if self.key.as_deref() == Some("type") && is_datum_type(&text) {
                    return Some(Class::Document);
                }
                self.key = None;
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
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

/// The characters of a byte stream for the parser, decoded as UTF-8 with
/// invalid bytes read as U+FFFD (the decoder reports them properly, for a
/// document file), keeping every byte read while the total is within the
/// limit.
struct Chars<R> {
    input: R,
    /// Every byte read so far; `None` once more than the limit was read.
    kept: Option<Vec<u8>>,
    limit: u64,
    total: u64,
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
    error: Option<io::Error>,
}

const CHUNK: usize = 16 << 10;

impl<R: Read> Chars<R> {
    fn new(input: R, limit: u64) -> Chars<R> {
        Chars {
            input,
            kept: Some(Vec::new()),
            limit,
            total: 0,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
            error: None,
        }
    }

    /// Reads more, keeping the unread tail (a character cut in two).
    fn fill(&mut self) {
        self.chunk.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        loop {
            match self.input.read(&mut self.chunk[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    let read = &self.chunk[self.end..self.end + n];
                    self.total += n as u64;
                    if self.total > self.limit {
                        self.kept = None;
                    } else if let Some(kept) = &mut self.kept {
                        kept.extend_from_slice(read);
                    }
                    self.end += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    self.eof = true;
                }
            }
            return;
        }
    }
}

impl<R: Read> Iterator for Chars<R> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        if self.end - self.start < 4 && !self.eof {
            self.fill();
        }
        let bytes = &self.chunk[self.start..self.end];
        let first = *bytes.first()?;
        let width = match first {
            0x00..=0x7f => 1,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        let decoded = bytes
            .get(..width)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.chars().next());
        match decoded {
            Some(c) => {
                self.start += width;
                Some(c)
            }
            None => {
                self.start += 1;
                Some('\u{fffd}')
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::MemReader;

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

    /// A reader handing out `step` bytes per read.
    struct Trickle<'a>(&'a [u8], usize, usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.0.len() - self.1).min(self.2);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn the_scan_finds_a_needle_cut_by_a_read() {
        let mut text = vec![b'x'; CHUNK - 2];
        text.extend(b"Host: 1\n");
        let scan = scan(&mut Trickle(&text, 0, CHUNK), 1 << 20).unwrap();
        assert!(scan.found);
        assert_eq!(scan.head.unwrap(), text);
        let scan = scan_all(b"key: value\nlist: [a, b]\n");
        assert!(!scan.found);
        assert!(scan_all(b"\"\\x64atum\": v1alpha1\n").found);
    }

    fn scan_all(text: &[u8]) -> Scan {
        scan(&mut Trickle(text, 0, 3), 2).unwrap()
    }

    #[test]
    fn read_document_keeps_documents_whole_and_payloads_unread() {
        let big = format!("items:\n{}", "  - x\n".repeat(8 << 20));
        let doc = "type: Host\nname: h\ndatum: v1alpha1\n";
        let r = MemReader::new()
            .file("big.yaml", big)
            .file("doc.yaml", doc)
            .file("escaped.yaml", "\"\\x64atum\": v1alpha1\n")
            .file("datum.yaml", "anything: 1\n");
        assert_eq!(read_document(&r, "big.yaml", 100).unwrap(), None);
        assert_eq!(
            read_document(&r, "doc.yaml", 100).unwrap().unwrap(),
            doc.as_bytes()
        );
        assert!(read_document(&r, "escaped.yaml", 100).unwrap().is_some());
        assert!(read_document(&r, "datum.yaml", 100).unwrap().is_some());
        assert!(matches!(
            read_document(&r, "doc.yaml", 10),
            Err(ReadError::TooLarge { size, limit: 10, .. }) if size == doc.len() as u64
        ));
    }
}

/// The slow path measured: a 40 MB payload whose text has a type's name in
/// it, so its first document's top-level keys are parsed to the end. Run
/// with `cargo test -p datum-core --release -- --ignored forty_mb`.
#[cfg(test)]
#[test]
#[ignore = "a measurement, not a check"]
fn forty_mb_payload_parsed_to_its_end() {
    let line = format!("  - Host: {}\n", "x".repeat(70));
    let text = format!("items:\n{}", line.repeat((40 << 20) / line.len()));
    let r = crate::reader::MemReader::new().file("big.yaml", text);
    let start = std::time::Instant::now();
    assert_eq!(read_document(&r, "big.yaml", 32 << 20).unwrap(), None);
    eprintln!("40 MB payload parsed to its end: {:?}", start.elapsed());
}
