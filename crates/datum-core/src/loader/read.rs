//! Reading each discovered file as far as deciding what it is takes, by
//! the rule of `document::classify`, for every reader (a directory, git,
//! memory): a document file whole, a payload no further than its decision.
//!
//! Reading stops as soon as the answer is known: a document file is
//! usually decided at its first key. A file without the text any document
//! needs (`datum`, or a type's name) is a payload at the cost of reading
//! it, unparsed; any other payload costs at most its first document's
//! top-level keys. A payload is never held to the document size limit,
//! and at most that limit of it is kept in memory while it is read.

use std::io::{self, Read};

use crate::document::classify::{Class, decide};
use crate::document::wide::{Wide, is_wide_document};
use crate::reader::{Opened, ReadError, Reader};
use crate::yaml::events::{CHUNK, Chars};

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
    let mut wide = false;
    if !root {
        let scan = scan(&mut input, HEAD).map_err(io)?;
        if !scan.found {
            return Ok(None);
        }
        // A document saved as UTF-16 or UTF-32 is a document all the same:
        // the loader reports its encoding rather than skip it.
        wide = scan.head.as_deref().is_some_and(is_wide_document);
        input = match scan.head {
            Some(head) => Box::new(io::Cursor::new(head).chain(input)),
            None => reader.open(path)?.bytes,
        };
    }
    let mut chars = Chars::new(input, limit);
    let class = if root || wide {
        Class::Document
    } else {
        decide(&mut chars)
    };
    if let Some(e) = chars.error.take() {
        return Err(io(e));
    }
    // Datum's own output (a manifest `render --all --out` wrote inside the
    // fleet) is never input.
    if matches!(class, Class::Payload | Class::Output) {
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

/// The words of [`NEEDLES`] as they are also looked for: as written, and
/// in each wide encoding (a document saved as UTF-16 is still one).
fn needles() -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = NEEDLES.iter().map(|n| n.as_bytes().to_vec()).collect();
    for wide in [Wide::Utf16Le, Wide::Utf16Be, Wide::Utf32Le, Wide::Utf32Be] {
        all.extend(NEEDLES[..4].iter().map(|n| wide.encode(n)));
    }
    all
}

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
            aho_corasick::AhoCorasick::new(needles()).expect("fixed patterns compile")
        });
    // The last bytes of the previous chunk stay in front, so a needle cut
    // in two by a read is still found.
    // (The longest needle is a word of five characters in UTF-32.)
    const CARRY: usize = 19;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::MemReader;

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
