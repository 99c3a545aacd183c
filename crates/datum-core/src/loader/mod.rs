//! From a [`Reader`] to a [`Fleet`]: discovers and reads the files, keeps
//! the document files, decodes them in parallel, checks what no single
//! document can (one Fleet document, unique hosts and layers, declared
//! labels, payloads that exist) and assembles the result.
//!
//! Loading never stops at the first problem. Every problem becomes a
//! diagnostic; a document that fails is set aside, remembering which hosts
//! it touches, so that every host no broken document touches still resolves.
//!
//! - this file: reading, UTF-8, decoding each file;
//! - `read`: each discovered file read as far as telling whether it is a
//!   document file takes (the rule is `document::classify`);
//! - `assemble`: the documents of every file gathered, Fleet documents
//!   checked;
//! - `checks`: duplicate hosts and layers, labels against `Fleet.labels`;
//! - `sources`: payloads named by `source`, read once and digested;
//! - `templates`: the `templates/` directory, when a layer names a template;
//! - `finish`: interning, fold order, what broken documents hold back.

mod assemble;
mod checks;
mod finish;
mod read;
mod sources;
mod templates;
#[cfg(test)]
mod tests;

use rayon::prelude::*;

use crate::diagnostic::{Code, Diagnostic};
use crate::document::wide::wide_encoding;
use crate::document::{self, Broken, FileDocs};
use crate::fleet::{Fleet, cmp_paths};
use crate::reader::{ReadError, Reader};
use crate::source::{FileId, Files, Pos, Span};

use assemble::Assembler;

/// Document files larger than this are refused: no real fleet file comes
/// near it, and the limit bounds the memory one file can take.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

pub use read::read_document;

/// Reads and validates a whole fleet. Fails only when the repository
/// cannot be listed; every problem inside it is a diagnostic on the result.
pub fn load(reader: &dyn Reader) -> Result<Fleet, ReadError> {
    let mut paths = reader.discover()?;
    paths.sort_by(|a, b| cmp_paths(a, b));
    paths.dedup();

    // Read every document file; leave payloads at their first keys.
    let read: Vec<(String, Candidate)> = paths
        .into_par_iter()
        .map(|p| {
            let r = read_document(reader, &p, MAX_FILE_BYTES);
            (p, r)
        })
        .collect();
    let texts = Texts::gather(read);
    let mut loaded: Vec<Loaded> = texts
        .texts
        .par_iter()
        .map(|&(id, utf8)| decode(&texts.files, id, utf8))
        .collect();
    for _ in 0..texts.unreadable {
        loaded.push(Loaded {
            path: String::new(),
            docs: FileDocs::default(),
            diags: Vec::new(),
            unreadable: true,
        });
    }
    let mut asm = Assembler::new(texts.files);
    asm.diags.extend(texts.diags);
    asm.assemble(loaded, reader);
    Ok(asm.finish())
}

/// One candidate file: its bytes when it is a document file, `None` for a
/// payload.
type Candidate = Result<Option<Vec<u8>>, ReadError>;

/// The document files as text, in path order, and what could not be read.
struct Texts {
    files: Files,
    /// Each document file, and whether it was valid UTF-8.
    texts: Vec<(FileId, bool)>,
    /// Files that are not UTF-8 or could not be read, in path order.
    diags: Vec<Diagnostic>,
    /// How many files could not be read at all.
    unreadable: usize,
}

impl Texts {
    fn gather(read: Vec<(String, Candidate)>) -> Texts {
        let mut out = Texts {
            files: Files::default(),
            texts: Vec::new(),
            diags: Vec::new(),
            unreadable: 0,
        };
        for (path, result) in read {
            match result {
                Ok(Some(bytes)) => out.add(path, bytes),
                Ok(None) => {}
                Err(e) => {
                    out.unreadable += 1;
                    out.diags.push(unreadable(&e));
                }
            }
        }
        out
    }

    fn add(&mut self, path: String, bytes: Vec<u8>) {
        if let Some(wide) = wide_encoding(&bytes) {
            // UTF-16 without a byte order mark may be valid UTF-8 byte by
            // byte (its zero bytes are NULs): it is still not a document.
            let text = String::from_utf8_lossy(&bytes).replace('\0', "");
            let id = self.files.add(path, text);
            self.diags.push(
                Diagnostic::error(
                    Code::NotUtf8,
                    format!("this file is {}, not UTF-8", wide.name()),
                )
                .at(Span::point(id, Pos { line: 1, col: 1 }), "its encoding")
                .hint(format!(
                    "save the file as UTF-8 (`iconv -f {} -t UTF-8`)",
                    wide.name()
                )),
            );
            self.texts.push((id, false));
            return;
        }
        match String::from_utf8(bytes) {
            Ok(text) => self.texts.push((self.files.add(path, text), true)),
            Err(e) => {
                let bytes = e.into_bytes();
                let valid = std::str::from_utf8(&bytes)
                    .map_err(|e| e.valid_up_to())
                    .err()
                    .unwrap_or(0);
                let at = position_of(&bytes[..valid]);
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let id = self.files.add(path, text);
                self.diags.push(
                    Diagnostic::error(Code::NotUtf8, "this file is not valid UTF-8")
                        .at(Span::point(id, at), "invalid byte")
                        .hint("save the file as UTF-8"),
                );
                self.texts.push((id, false));
            }
        }
    }
}

fn unreadable(e: &ReadError) -> Diagnostic {
    Diagnostic::error(Code::Unreadable, e.to_string()).note(format!(
        "{} was not read, so every host is held back: it could have held any layer",
        e.path()
    ))
}

/// One file's documents before the fleet is assembled.
struct Loaded {
    path: String,
    docs: FileDocs,
    diags: Vec<Diagnostic>,
    /// Set when the file could not be read at all: it may touch any host.
    unreadable: bool,
}

fn decode(files: &Files, id: FileId, utf8: bool) -> Loaded {
    let text = files.get(id).text();
    let mut diags = Vec::new();
    let mut docs = document::decode_file(id, text, &mut diags);
    if !utf8 {
        // The documents are only a guess at what the file holds: keep
        // what they touch (a layer's matcher is a guess too, so a layer
        // touches every host), and report the encoding alone.
        diags.clear();
        let mut broken = std::mem::take(&mut docs.broken);
        broken.extend(docs.hosts.drain(..).map(|h| Broken::Host(Some(h.name))));
        broken.extend(docs.layers.drain(..).map(|_| Broken::Layer(None)));
        for b in &mut broken {
            if let Broken::Layer(m) = b {
                *m = None;
            }
        }
        if !docs.fleets.is_empty() {
            docs.fleets.clear();
            broken.push(Broken::Fleet);
        }
        docs.broken = broken;
    }
    Loaded {
        path: files.path(id).to_owned(),
        docs,
        diags,
        unreadable: false,
    }
}

/// Line and column just after `bytes`.
fn position_of(bytes: &[u8]) -> Pos {
    let line = bytes.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let last = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&bytes[last..]).chars().count() as u32 + 1;
    Pos { line, col }
}
