//! The bundle: one host's manifest and exactly the payloads it references,
//! in one file a host can fetch, check and apply without the repository.
//!
//! Bytes in, bytes out: the caller renders the manifest, reads the payloads
//! and signs; this module only lays them out, and on the way back refuses
//! anything truncated, altered or out of bounds. Building is
//! [`Bundle::encode_body`] (the bytes a signature covers) then [`seal`];
//! reading is [`decode`].
//!
//! # Layout (format version 3)
//!
//! Integers are big-endian. `str` is a `u32` length then that many UTF-8
//! bytes; `blob` is a `u64` length then that many bytes. Every field has a
//! fixed place, so one set of contents has exactly one encoding.
//!
//! ```text
//! magic          13 bytes  "datum-bundle\n"
//! version        u32       3
//! ---- the header ([`Header`]) ----
//! fleet          str       the Fleet document's name (1..=1024 bytes, no control characters)
//! host           str       a host name by the spec's rule (at most 253 bytes)
//! serial flag    u8        0: no serial; 1: followed by
//!   serial       u64       the bundle's place in the order of releases (no clock decides it)
//! expires flag   u8        0: never expires; 1: followed by
//!   expires      i64       seconds since 1970-01-01 UTC after which no agent moves to it
//! wait flag      u8        0: no wait; 1: followed by (version 3)
//!   not_before   i64       seconds since 1970-01-01 UTC before which no agent applies it
//! commit flag    u8        0: not from git; 1: followed by
//!   commit id    str       lowercase hex, 40 (SHA-1) or 64 (SHA-256) digits
//!   commit time  i64       committer time, seconds since 1970-01-01 UTC
//! format         u8        1: the manifest is YAML; 2: JSON
//! manifest       blob      the bytes `datum render` writes (at most 64 MiB, UTF-8)
//! payload count  u32       at most 1,048,576
//! per payload, paths strictly ascending (byte order):
//!   path         str       relative, `/`-separated, no `.`, `..` or empty part (at most 4096 bytes)
//!   sha256       32 bytes  digest of the content
//!   content      blob      at most 1 GiB
//! ---------------- everything above is the signed body ----------------
//! signature flag u8        0: unsigned; 1: followed by
//!   signature    str       an armored SSH signature (`ssh-keygen -Y sign`,
//!                          namespace "datum-bundle") over the body (at most 64 KiB)
//! end of file              nothing may follow
//! ```
//!
//! Why this shape: lengths come before what they measure and nothing points
//! forward, so the file is written and read in one pass; the signature is
//! last so a verifier can hash the body as it reads it. Each payload's
//! digest is recorded and must match both its content and the manifest's
//! `source_sha256` for every File that uses it, and the payload set must be
//! exactly the manifest's sources: without a signature this catches damage,
//! with one it catches any change.
//!
//! Decoding borrows from the input and checks every length against the
//! bytes that remain and a maximum before using it, so a hostile file costs
//! at most its own size in memory.
//!
//! Versions 1 (without the serial and expires flags) and 2 (without the
//! not_before flag) are still read, as bundles without those fields, so
//! agents can be upgraded before the bundles are; an agent that has applied
//! a bundle with a serial refuses one without (see
//! `datum_agent::rollback`). An older reader refuses a newer version ("bundle
//! format version 3 is not supported"). A field added
//! to the header later bumps the version again: every header field is
//! signed, and a reader must never skip one it does not understand.

mod decode;
mod manifest;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

use sha2::{Digest, Sha256};

use crate::hint::Hinted;

pub use decode::decode;

/// The first bytes of every bundle.
pub const MAGIC: &[u8; 13] = b"datum-bundle\n";
/// The format version this build writes (and the newest it reads).
pub const VERSION: u32 = 3;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// The SSH signature namespace (`ssh-keygen -Y sign -n`) of a bundle
/// signature, so a signature made for anything else (a git commit, say)
/// never verifies as a bundle's.
pub const SIGNATURE_NAMESPACE: &str = "datum-bundle";

/// Bounds a decoder enforces before reading a field.
pub mod limits {
    pub const FLEET: u64 = 1024;
    pub const HOST: u64 = 253;
    pub const COMMIT: u64 = 64;
    pub const MANIFEST: u64 = 64 << 20;
    pub const PAYLOADS: u64 = 1 << 20;
    pub const PATH: u64 = 4096;
    pub const PAYLOAD: u64 = 1 << 30;
    pub const SIGNATURE: u64 = 64 << 10;
}

/// How the manifest bytes are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ManifestFormat {
    Yaml,
    Json,
}

impl ManifestFormat {
    fn code(self) -> u8 {
        match self {
            ManifestFormat::Yaml => 1,
            ManifestFormat::Json => 2,
        }
    }

    fn from_code(code: u8) -> Option<ManifestFormat> {
        match code {
            1 => Some(ManifestFormat::Yaml),
            2 => Some(ManifestFormat::Json),
            _ => None,
        }
    }
}

/// The git commit a bundle was made from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Commit<'a> {
    /// Lowercase hex.
    pub id: &'a str,
    /// Committer time, seconds since the Unix epoch: what rollback refusal compares.
    pub time: i64,
}

/// What a bundle says about itself: who it is for, and where it stands in
/// the order of releases, and when it may be applied. Every field is
/// covered by the signature. New signed fields go here, with a format
/// version bump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    /// The Fleet document's name.
    pub fleet: &'a str,
    /// The host the bundle is for.
    pub host: &'a str,
    /// The bundle's place in the order of releases: an agent never applies
    /// a lower serial than the one it applied last. By default the
    /// first-parent depth of the commit (`datum bundle --serial` sets it).
    pub serial: Option<u64>,
    /// Seconds since the epoch after which an agent no longer moves to it.
    pub expires: Option<i64>,
    /// Seconds since the epoch before which an agent does not apply it:
    /// its rollout wave's turn, by the publisher's clock.
    pub not_before: Option<i64>,
    /// The commit it was made from, when the fleet is in git.
    pub commit: Option<Commit<'a>>,
}

impl<'a> Header<'a> {
    /// A header naming only the fleet and host.
    pub fn new(fleet: &'a str, host: &'a str) -> Header<'a> {
        Header {
            fleet,
            host,
            serial: None,
            expires: None,
            not_before: None,
            commit: None,
        }
    }
}

/// What a bundle holds, borrowed from the caller (to encode) or from the
/// file (after [`decode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle<'a> {
    pub header: Header<'a>,
    pub format: ManifestFormat,
    pub manifest: &'a [u8],
    /// Payload path (as the manifest's `source` names it) to content.
    pub payloads: BTreeMap<&'a str, &'a [u8]>,
}

/// A bundle read back: its contents, the exact bytes its signature covers
/// and the signature, still to be verified by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub bundle: Bundle<'a>,
    /// The body: every byte before the signature flag.
    pub signed: &'a [u8],
    /// The armored SSH signature, when the bundle carries one.
    pub signature: Option<&'a str>,
}

impl Bundle<'_> {
    /// The body of the bundle: the bytes a signature covers. Fails when the
    /// contents are not a valid bundle (a bad name, a payload the manifest
    /// does not reference or whose digest it contradicts, a bound exceeded).
    pub fn encode_body(&self) -> Result<Vec<u8>, BundleError> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_body(&mut out)?;
        Ok(out)
    }

    /// Writes the body to `w` in one pass, after checking the contents as
    /// [`Bundle::encode_body`] does; nothing is written if they are invalid.
    pub fn write_body(&self, w: &mut dyn Write) -> Result<(), BundleError> {
        let digests = self.check()?;
        self.write_checked(w, &digests).map_err(BundleError::Write)
    }

    /// Checks the contents and returns each payload's digest, in path order.
    fn check(&self) -> Result<Vec<[u8; 32]>, BundleError> {
        check_fleet(self.header.fleet, 0)?;
        check_host(self.header.host, 0)?;
        if let Some(c) = &self.header.commit {
            check_commit(c.id, 0)?;
        }
        bounded(
            Field::Manifest,
            self.manifest.len() as u64,
            limits::MANIFEST,
            0,
        )?;
        bounded(
            Field::PayloadCount,
            self.payloads.len() as u64,
            limits::PAYLOADS,
            0,
        )?;
        let mut digests = Vec::with_capacity(self.payloads.len());
        for (path, content) in &self.payloads {
            check_path(path, 0)?;
            bounded(Field::Payload, content.len() as u64, limits::PAYLOAD, 0)?;
            digests.push(Sha256::digest(content).into());
        }
        let recorded = self.payloads.keys().copied().zip(digests.iter());
        manifest::check(self.manifest, self.header.host, recorded)?;
        Ok(digests)
    }

    fn write_checked(&self, w: &mut dyn Write, digests: &[[u8; 32]]) -> io::Result<()> {
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_be_bytes())?;
        let h = &self.header;
        write_str(w, h.fleet)?;
        write_str(w, h.host)?;
        match h.serial {
            None => w.write_all(&[0])?,
            Some(serial) => {
                w.write_all(&[1])?;
                w.write_all(&serial.to_be_bytes())?;
            }
        }
        match h.expires {
            None => w.write_all(&[0])?,
            Some(expires) => {
                w.write_all(&[1])?;
                w.write_all(&expires.to_be_bytes())?;
            }
        }
        match h.not_before {
            None => w.write_all(&[0])?,
            Some(at) => w.write_all(&[&[1], &at.to_be_bytes()[..]].concat())?,
        }
        match &h.commit {
            None => w.write_all(&[0])?,
            Some(c) => {
                w.write_all(&[1])?;
                write_str(w, c.id)?;
                w.write_all(&c.time.to_be_bytes())?;
            }
        }
        w.write_all(&[self.format.code()])?;
        write_blob(w, self.manifest)?;
        w.write_all(&(self.payloads.len() as u32).to_be_bytes())?;
        for ((path, content), digest) in self.payloads.iter().zip(digests) {
            write_str(w, path)?;
            w.write_all(digest)?;
            write_blob(w, content)?;
        }
        Ok(())
    }

    /// The body's size, so encoding allocates once.
    fn encoded_len(&self) -> usize {
        let h = &self.header;
        let commit = h.commit.map_or(0, |c| 4 + c.id.len() + 8);
        let payloads: usize = self
            .payloads
            .iter()
            .map(|(p, c)| 4 + p.len() + 32 + 8 + c.len())
            .sum();
        MAGIC.len()
            + 4
            + (4 + h.fleet.len())
            + (4 + h.host.len())
            + (1 + h.serial.map_or(0, |_| 8))
            + (1 + h.expires.map_or(0, |_| 8))
            + (1 + h.not_before.map_or(0, |_| 8))
            + 1
            + commit
            + 1
            + (8 + self.manifest.len())
            + 4
            + payloads
    }
}

/// A whole bundle: `body` (from [`Bundle::encode_body`]) followed by the
/// signature trailer. `signature` is an armored SSH signature over `body`.
pub fn seal(mut body: Vec<u8>, signature: Option<&str>) -> Result<Vec<u8>, BundleError> {
    match signature {
        None => body.push(0),
        Some(sig) => {
            check_signature(sig, body.len())?;
            body.push(1);
            write_str(&mut body, sig).map_err(BundleError::Write)?;
        }
    }
    Ok(body)
}

fn write_str(w: &mut dyn Write, s: &str) -> io::Result<()> {
    w.write_all(&(s.len() as u32).to_be_bytes())?;
    w.write_all(s.as_bytes())
}

fn write_blob(w: &mut dyn Write, b: &[u8]) -> io::Result<()> {
    w.write_all(&(b.len() as u64).to_be_bytes())?;
    w.write_all(b)
}

/// Which part of a bundle a problem is in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Magic,
    Version,
    Fleet,
    Host,
    SerialFlag,
    Serial,
    ExpiresFlag,
    Expires,
    NotBeforeFlag,
    NotBefore,
    CommitFlag,
    CommitId,
    CommitTime,
    Format,
    Manifest,
    PayloadCount,
    PayloadPath,
    PayloadDigest,
    Payload,
    SignatureFlag,
    Signature,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Magic => "the bundle signature bytes",
            Field::Version => "the format version",
            Field::Fleet => "the fleet name",
            Field::Host => "the host name",
            Field::SerialFlag => "the serial flag",
            Field::Serial => "the serial",
            Field::ExpiresFlag => "the expiry flag",
            Field::Expires => "the expiry time",
            Field::NotBeforeFlag => "the not-before flag",
            Field::NotBefore => "the not-before time",
            Field::CommitFlag => "the commit flag",
            Field::CommitId => "the commit id",
            Field::CommitTime => "the commit time",
            Field::Format => "the manifest format",
            Field::Manifest => "the manifest",
            Field::PayloadCount => "the payload count",
            Field::PayloadPath => "a payload path",
            Field::PayloadDigest => "a payload digest",
            Field::Payload => "a payload",
            Field::SignatureFlag => "the signature flag",
            Field::Signature => "the signature",
        })
    }
}

/// Why bytes are not a valid bundle, or contents cannot make one. Byte
/// offsets (`at`) count from the start of the file; they are 0 for
/// problems found while encoding.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The input does not start with [`MAGIC`].
    #[error("not a Datum bundle: it does not start with `datum-bundle`")]
    NotABundle,
    /// A format version this build does not read.
    #[error(
        "bundle format version {found} is not supported: this build reads versions {OLDEST_VERSION} to {VERSION}"
    )]
    Version { found: u32 },
    /// The input ends inside a field.
    #[error("the bundle is truncated at byte {at}: {field} needs {needed} bytes, {left} remain")]
    Truncated {
        at: usize,
        field: Field,
        needed: u64,
        left: usize,
    },
    /// A length or count over its bound in [`limits`].
    #[error("{field} at byte {at} is {len} long, over the limit of {max}")]
    TooLong {
        at: usize,
        field: Field,
        len: u64,
        max: u64,
    },
    /// A field whose bytes break its rule.
    #[error("{field} at byte {at} is invalid: {why}")]
    Invalid {
        at: usize,
        field: Field,
        why: String,
    },
    /// Payload paths must be strictly ascending, so each appears once.
    #[error(
        "payload {path} at byte {at} is out of order or repeated (it must sort after {previous})"
    )]
    Unsorted {
        at: usize,
        path: String,
        previous: String,
    },
    /// Bytes after the signature trailer.
    #[error("{left} unexpected bytes after the end of the bundle at byte {at}")]
    Trailing { at: usize, left: usize },
    /// A payload's content does not hash to the digest recorded beside it.
    #[error(
        "payload {path} does not match its recorded sha256 (recorded {recorded}, content {actual})"
    )]
    PayloadDigest {
        path: String,
        recorded: String,
        actual: String,
    },
    /// The manifest cannot be read, or lacks what a manifest has.
    #[error("the manifest, line {line} column {column}: {message}")]
    Manifest {
        line: usize,
        column: usize,
        message: String,
    },
    /// The manifest names another host than the bundle.
    #[error("the manifest is for host {manifest}, the bundle for host {bundle}")]
    HostMismatch { manifest: String, bundle: String },
    /// A manifest `source` with no payload in the bundle.
    #[error("{resource} uses source {path}, which the bundle does not carry")]
    MissingPayload { resource: String, path: String },
    /// A payload no manifest `source` uses.
    #[error("the bundle carries payload {path}, which the manifest does not use")]
    ExtraPayload { path: String },
    /// A manifest `source` without its digest.
    #[error("{resource} sets source {path} without source_sha256")]
    NoSourceDigest { resource: String, path: String },
    /// The manifest's digest for a source and the payload's differ.
    #[error(
        "{resource} expects source {path} with sha256 {manifest}, the bundle's payload has {payload}"
    )]
    SourceDigest {
        resource: String,
        path: String,
        manifest: String,
        payload: String,
    },
    /// Writing the body failed.
    #[error("cannot write the bundle")]
    Write(#[source] io::Error),
}

/// What the operator can do about it.
impl Hinted for BundleError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        use BundleError::*;
        let hint = match self {
            NotABundle => Some("check the URL or path: it should name a file `datum bundle` wrote"),
            Version { .. } => Some("produce the bundle with the same Datum release as the agent"),
            Truncated { .. } => {
                Some("the file was cut short, perhaps by an interrupted download: fetch it again")
            }
            PayloadDigest { .. }
            | SourceDigest { .. }
            | MissingPayload { .. }
            | ExtraPayload { .. } => Some(
                "the bundle was altered after it was made: make it again with `datum bundle` and do not edit it",
            ),
            _ => None,
        };
        hint.map(Cow::Borrowed)
    }
}

fn bounded(field: Field, len: u64, max: u64, at: usize) -> Result<(), BundleError> {
    if len > max {
        return Err(BundleError::TooLong {
            at,
            field,
            len,
            max,
        });
    }
    Ok(())
}

fn invalid(field: Field, at: usize, why: impl Into<String>) -> BundleError {
    BundleError::Invalid {
        at,
        field,
        why: why.into(),
    }
}

fn check_fleet(name: &str, at: usize) -> Result<(), BundleError> {
    bounded(Field::Fleet, name.len() as u64, limits::FLEET, at)?;
    if name.is_empty() {
        return Err(invalid(Field::Fleet, at, "it is empty"));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid(Field::Fleet, at, "it holds a control character"));
    }
    Ok(())
}

fn check_host(name: &str, at: usize) -> Result<(), BundleError> {
    bounded(Field::Host, name.len() as u64, limits::HOST, at)?;
    if !crate::document::valid_host_name(name) {
        return Err(invalid(
            Field::Host,
            at,
            format!("{name:?} is not a host name (lowercase letters, digits, `-` and `.`)"),
        ));
    }
    Ok(())
}

fn check_commit(id: &str, at: usize) -> Result<(), BundleError> {
    bounded(Field::CommitId, id.len() as u64, limits::COMMIT, at)?;
    let hex = id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !(hex && (id.len() == 40 || id.len() == 64)) {
        return Err(invalid(
            Field::CommitId,
            at,
            format!("{id:?} is not 40 or 64 lowercase hex digits"),
        ));
    }
    Ok(())
}

/// A payload path as the manifest's `source` holds it: normalised and
/// inside the fleet, so a host can never be made to look outside it.
fn check_path(path: &str, at: usize) -> Result<(), BundleError> {
    bounded(Field::PayloadPath, path.len() as u64, limits::PATH, at)?;
    let why = if path.is_empty() {
        "it is empty"
    } else if path.starts_with('/') {
        "it is absolute"
    } else if path.contains('\0') || path.chars().any(char::is_control) {
        "it holds a control character"
    } else if path
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        "it has an empty, `.` or `..` part"
    } else {
        return Ok(());
    };
    Err(invalid(Field::PayloadPath, at, format!("{path:?}: {why}")))
}

fn check_signature(sig: &str, at: usize) -> Result<(), BundleError> {
    bounded(Field::Signature, sig.len() as u64, limits::SIGNATURE, at)?;
    if !sig.starts_with("-----BEGIN SSH SIGNATURE-----") {
        return Err(invalid(
            Field::Signature,
            at,
            "it is not an armored SSH signature (`-----BEGIN SSH SIGNATURE-----`)",
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
