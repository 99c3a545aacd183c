//! What a bundle needs from its manifest: the host it is for and each
//! `source` with its `source_sha256`, read from the YAML or JSON that
//! `render` writes (JSON is YAML, so one reader serves both), so the
//! payload set can be held to exactly what the manifest uses.

use std::collections::{BTreeMap, BTreeSet};

use super::{BundleError, Field, hex, invalid};
use crate::yaml::events::{Event, EventError, Skip, StrEvents};

/// How values nobody reads are passed over: a manifest nests four levels,
/// and a hostile one must not make the reader work for nothing.
const SKIP: Skip<'static> = Skip {
    max_depth: 16,
    too_deep: "the manifest is nested too deep",
    alias: "a manifest holds no YAML aliases",
};

/// A File's `source`, as the manifest writes it.
#[derive(Debug)]
struct Source {
    resource: String,
    path: String,
    sha256: Option<String>,
}

/// Checks that `manifest` is for `host` and that `recorded` (payload path
/// and digest, in path order) is exactly the set of sources it uses, each
/// with the digest the manifest expects.
pub(super) fn check<'p>(
    manifest: &[u8],
    host: &str,
    recorded: impl Iterator<Item = (&'p str, &'p [u8; 32])>,
) -> Result<(), BundleError> {
    let text = std::str::from_utf8(manifest)
        .map_err(|_| invalid(Field::Manifest, 0, "it is not UTF-8"))?;
    let (manifest_host, sources) = scan(text)?;
    if manifest_host != host {
        return Err(BundleError::HostMismatch {
            manifest: manifest_host,
            bundle: host.to_owned(),
        });
    }
    let recorded: BTreeMap<&str, &[u8; 32]> = recorded.collect();
    let mut used = BTreeSet::new();
    for s in sources {
        let Some(expected) = s.sha256 else {
            return Err(BundleError::NoSourceDigest {
                resource: s.resource,
                path: s.path,
            });
        };
        let Some(digest) = recorded.get(s.path.as_str()) else {
            return Err(BundleError::MissingPayload {
                resource: s.resource,
                path: s.path,
            });
        };
        let payload = hex(*digest);
        if payload != expected {
            return Err(BundleError::SourceDigest {
                resource: s.resource,
                path: s.path,
                manifest: expected,
                payload,
            });
        }
        used.insert(s.path);
    }
    match recorded.keys().find(|p| !used.contains(**p)) {
        Some(extra) => Err(BundleError::ExtraPayload {
            path: (*extra).to_owned(),
        }),
        None => Ok(()),
    }
}

/// The manifest's host and its sources.
fn scan(text: &str) -> Result<(String, Vec<Source>), BundleError> {
    let mut r = StrEvents::of_str(text);
    let result = manifest(&mut r);
    result.map_err(|e| BundleError::Manifest {
        line: e.line,
        column: e.column,
        message: e.message,
    })
}

/// The one document a manifest is, read as [`scan`] says.
fn manifest(r: &mut StrEvents<'_>) -> Result<(String, Vec<Source>), EventError> {
    r.expect(|e| matches!(e, Event::StreamStart), "the start of the text")?;
    match r.next()? {
        Event::DocumentStart => {}
        _ => return Err(r.error("the manifest is empty")),
    }
    r.expect(|e| matches!(e, Event::MappingStart), "a mapping")?;
    let top = top(r)?;
    r.expect(
        |e| matches!(e, Event::DocumentEnd),
        "the end of the document",
    )?;
    match r.next()? {
        Event::StreamEnd => {}
        _ => return Err(r.error("a manifest is one YAML document, this text holds more")),
    }
    match top {
        (Some(kind), _, _) if kind != "Manifest" => {
            Err(r.error(&format!("the document is of type {kind}, not Manifest")))
        }
        (None, _, _) => Err(r.error("the document has no `type: Manifest`")),
        (_, None, _) => Err(r.error("the manifest has no `host`")),
        (_, Some(host), sources) => Ok((host, sources)),
    }
}

type Top = (Option<String>, Option<String>, Vec<Source>);

/// The top-level mapping: `type`, `host` and `resources` are read, the
/// rest is skipped.
fn top(r: &mut StrEvents<'_>) -> Result<Top, EventError> {
    let (mut kind, mut host, mut sources) = (None, None, None);
    while let Some(key) = r.key()? {
        let slot_taken = match key.as_str() {
            "type" => kind.replace(r.scalar()?).is_some(),
            "host" => host.replace(r.scalar()?).is_some(),
            "resources" => sources.replace(resources(r)?).is_some(),
            _ => {
                r.skip(0, &SKIP)?;
                false
            }
        };
        if slot_taken {
            return Err(r.error(&format!("the key `{key}` appears twice")));
        }
    }
    Ok((kind, host, sources.unwrap_or_default()))
}

/// `resources`: id to fields; only `source` or `secret` and its digest matter.
fn resources(r: &mut StrEvents<'_>) -> Result<Vec<Source>, EventError> {
    r.expect(
        |e| matches!(e, Event::MappingStart),
        "a mapping of resources",
    )?;
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    while let Some(id) = r.key()? {
        if !ids.insert(id.clone()) {
            return Err(r.error(&format!("the resource `{id}` appears twice")));
        }
        r.expect(|e| matches!(e, Event::MappingStart), "a mapping of fields")?;
        let (mut path, mut sha256) = (None, None);
        while let Some(field) = r.key()? {
            let slot_taken = match field.as_str() {
                // A secret's payload is its ciphertext, carried like a source.
                "source" | "secret" => path.replace(r.scalar()?).is_some(),
                "source_sha256" | "secret_sha256" => sha256.replace(r.scalar()?).is_some(),
                _ => {
                    r.skip(0, &SKIP)?;
                    false
                }
            };
            if slot_taken {
                return Err(r.error(&format!("{id}: the field `{field}` appears twice")));
            }
        }
        if let Some(path) = path {
            out.push(Source {
                resource: id,
                path,
                sha256,
            });
        }
    }
    Ok(out)
}
