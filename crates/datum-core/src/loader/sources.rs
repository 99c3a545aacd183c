//! Payloads named by `source` or `secret`: each distinct one read once, in
//! parallel, and digested; a layer naming one that is missing, outside the
//! root or not a file is refused. Beside each secret, its `.recipients`
//! file is read as text (for `datum check`).

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{FieldDecl, FieldValue, LayerDoc};
use crate::fleet::SourceInfo;
use crate::reader::{Reader, SourceError};
use crate::schema::{Field, Value, suggest};
use crate::source::Span;

use super::assemble::Assembler;

impl Assembler {
    /// Every `source` exists inside the root; each distinct payload is read once.
    pub(super) fn check_sources(&mut self, reader: &dyn Reader) {
        let failed = self.read_sources(reader);
        self.read_recipients(reader);
        if failed.is_empty() {
            return;
        }
        // A payload that cannot be read sets aside the field naming it, and
        // its resource: the rest of the layer is still checked.
        for k in 0..self.layers.len() {
            for r in &mut self.layers[k].doc.resources {
                let mut bad = Vec::new();
                r.fields.retain(|f| match payload_of(f) {
                    Some(p) if failed.contains_key(p) => {
                        bad.push((f.field, p.to_owned(), f.span));
                        false
                    }
                    _ => true,
                });
                if !bad.is_empty() {
                    r.set_aside = true;
                }
                for (field, p, span) in bad {
                    let e = &failed[&p];
                    let hint = source_hint(reader, &p, e);
                    self.diags.push(
                        Diagnostic::error(Code::InvalidSource, format!("{field} `{p}` {e}"))
                            .at(span, field.name())
                            .hint(hint),
                    );
                }
            }
        }
    }

    /// Reads and digests every payload named; returns those that failed.
    fn read_sources(&mut self, reader: &dyn Reader) -> BTreeMap<String, SourceError> {
        let wanted: BTreeSet<&str> = self
            .layers
            .iter()
            .flat_map(|l| sources_of(&l.doc).map(|(_, p, _)| p))
            .collect();
        let wanted: Vec<&str> = wanted.into_iter().collect();
        let limit = self.source_limit;
        let results: Vec<Result<SourceInfo, SourceError>> = wanted
            .par_iter()
            .map(|p| {
                reader.read_source(p, limit).map(|bytes| SourceInfo {
                    sha256: hex(&Sha256::digest(&bytes)),
                    size: bytes.len() as u64,
                })
            })
            .collect();
        let mut failed: BTreeMap<String, SourceError> = BTreeMap::new();
        for (p, r) in wanted.iter().zip(results) {
            match r {
                Ok(info) => {
                    self.sources.insert((*p).to_owned(), info);
                }
                Err(e) => {
                    failed.insert((*p).to_owned(), e);
                }
            }
        }
        failed
    }

    /// The `.recipients` file beside each secret, as text; a secret
    /// without one (or whose file cannot be read as text) gets `None`.
    fn read_recipients(&mut self, reader: &dyn Reader) {
        let secrets: BTreeSet<String> = self
            .layers
            .iter()
            .flat_map(|l| sources_of(&l.doc))
            .filter(|(f, _, _)| *f == Field::Secret)
            .map(|(_, p, _)| p.to_owned())
            .collect();
        for p in secrets {
            let text = reader
                .read_source(&format!("{p}.recipients"), RECIPIENTS_LIMIT)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok());
            self.recipients.insert(p, text);
        }
    }
}

/// More than any recipients file: a line is under 100 bytes.
const RECIPIENTS_LIMIT: u64 = 1 << 20;

/// Each `source` and `secret` a layer sets, with its place, in document order.
fn sources_of(doc: &LayerDoc) -> impl Iterator<Item = (Field, &str, Span)> {
    doc.resources
        .iter()
        .flat_map(|r| &r.fields)
        .filter_map(|f| payload_of(f).map(|p| (f.field, p, f.span)))
}

/// The payload a `source` or `secret` field names.
fn payload_of(f: &FieldDecl) -> Option<&str> {
    match &f.value {
        FieldValue::Value(Value::Str(p)) if matches!(f.field, Field::Source | Field::Secret) => {
            Some(p)
        }
        _ => None,
    }
}

/// The existing file nearest to a missing payload path, close enough to be
/// a typo: looked for in the payload's directory, then in the whole fleet
/// when that directory does not exist.
fn nearest_file(reader: &dyn Reader, path: &str) -> Option<String> {
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mut files = reader.list_payloads(dir).unwrap_or_default();
    if files.is_empty() && !dir.is_empty() {
        files = reader.list_payloads("").unwrap_or_default();
    }
    suggest(path, files.iter().map(String::as_str)).map(str::to_owned)
}

/// What to do about a payload that cannot be read.
fn source_hint(reader: &dyn Reader, path: &str, e: &SourceError) -> String {
    match e {
        SourceError::Missing => {
            let hint = "source paths are relative to the fleet root (the directory holding datum.yaml); check the name, and that the file is committed";
            match nearest_file(reader, path) {
                Some(near) => format!("did you mean `{near}`? {hint}"),
                None => hint.to_owned(),
            }
        }
        SourceError::Escapes { .. } => {
            "payloads must live inside the fleet repository; copy the file in instead of linking to it".to_owned()
        }
        SourceError::NotAFile => {
            "source names a file; a Directory resource manages directories".to_owned()
        }
        SourceError::TooLarge { .. } => {
            "raise `limits: {source_bytes: N}` in datum.yaml if the file belongs in the repository".to_owned()
        }
        SourceError::Io(_) => "check the file's permissions".to_owned(),
        SourceError::Ignored => {
            let what = if reader.is_ignored(path) {
                format!("change the rule that matches `{path}`")
            } else {
                format!("`{path}` is a symbolic link to a path a rule matches: change that rule")
            };
            format!(
                "Datum reads no file `.gitignore` ignores, so that the working tree and a commit give the same fleet: {what}, and commit the file"
            )
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
