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
//! wait flag      u8        (version 3 on) 0: no wait; 1: followed by
//!   not_before   i64       seconds since 1970-01-01 UTC before which no agent applies it
//! commit flag    u8        0: not from git; 1: followed by
//!   commit id    str       lowercase hex, 40 (SHA-1) or 64 (SHA-256) digits
//!   commit time  i64       committer time, seconds since 1970-01-01 UTC
//! ---- the contents ----
//! sealed flag    u8        (version 3 on) 0: the contents follow in clear; 1: followed by
//!   sealed       blob      age ciphertext (binary) of exactly the clear contents below,
//!                          encrypted to the host's SSH keys (at most 2 GiB); nothing else follows
//! the clear contents ([`read_contents`]):
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
//! A sealed bundle (`datum bundle --seal`) keeps its header in clear, so
//! an agent can tell whose it is, which fleet, and where it stands in the
//! order of releases before it decrypts anything; the signature covers the
//! ciphertext, so an agent checks who made it before it spends a key on it,
//! and nobody can swap the ciphertext of one signed bundle into another.
//! The clear contents inside are byte for byte those of the same bundle
//! unsealed, so they read and check the same way ([`read_contents`]), and
//! their SHA-256 ([`contents_sha256`]) names the same release whether it
//! was sealed or not (age draws a fresh key each time, so the ciphertext
//! differs at every run).
//!
//! Version 2 (no wait flag and no sealed flag: no wait, the contents
//! always in clear) and version 1 (nor the serial and expires flags) are
//! still read, as unsealed bundles without those fields, so agents can be
//! upgraded before the bundles are; an agent that has applied a bundle with
//! a serial refuses one without (see `datum_agent::rollback`). An older
//! reader refuses a newer version with "bundle format version 3 is not
//! supported". A field added to the header later bumps the version again:
//! every header field is signed, and a reader must never skip one it does
//! not understand.

mod decode;
mod error;
mod manifest;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

use sha2::{Digest, Sha256};

pub use decode::{contents_sha256, decode, read_contents};
pub use error::{BundleError, Field};

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
    pub const SEALED: u64 = 2 << 30;
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

/// A bundle read back: its header, its contents (checked, or still
/// sealed), the exact bytes its signature covers and the signature, still
/// to be verified by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub header: Header<'a>,
    pub body: Body<'a>,
    /// The body: every byte before the signature flag.
    pub signed: &'a [u8],
    /// The armored SSH signature, when the bundle carries one.
    pub signature: Option<&'a str>,
}

/// What follows a bundle's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// The contents in clear, read and checked; `contents` are their bytes
    /// as the file holds them (what [`contents_sha256`] digests).
    Clear {
        bundle: Bundle<'a>,
        contents: &'a [u8],
    },
    /// The age ciphertext of the clear contents, to be decrypted with the
    /// host's key and read with [`read_contents`].
    Sealed(&'a [u8]),
}

impl<'a> Decoded<'a> {
    /// The bundle, when its contents are in clear.
    pub fn clear(&self) -> Option<&Bundle<'a>> {
        match &self.body {
            Body::Clear { bundle, .. } => Some(bundle),
            Body::Sealed(_) => None,
        }
    }
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
        let mut write = || -> io::Result<()> {
            write_header(w, &self.header)?;
            w.write_all(&[0])?;
            self.write_contents(w, &digests)
        };
        write().map_err(BundleError::Write)
    }

    /// The clear contents alone (format, manifest, payloads), checked as
    /// [`Bundle::encode_body`] checks them: the bytes a sealed bundle
    /// encrypts ([`encode_sealed_body`]).
    pub fn encode_contents(&self) -> Result<Vec<u8>, BundleError> {
        let digests = self.check()?;
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write_contents(&mut out, &digests)
            .map_err(BundleError::Write)?;
        Ok(out)
    }

    /// Checks the contents and returns each payload's digest, in path order.
    fn check(&self) -> Result<Vec<[u8; 32]>, BundleError> {
        check_header(&self.header)?;
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

    fn write_contents(&self, w: &mut dyn Write, digests: &[[u8; 32]]) -> io::Result<()> {
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
            + 1
            + (8 + self.manifest.len())
            + 4
            + payloads
    }
}

/// The body of a sealed bundle: `header` in clear, then `ciphertext`, the
/// age encryption of the contents [`Bundle::encode_contents`] gave for a
/// bundle with this header. The signature ([`seal`]) then covers both.
pub fn encode_sealed_body(header: &Header<'_>, ciphertext: &[u8]) -> Result<Vec<u8>, BundleError> {
    check_header(header)?;
    bounded(Field::Sealed, ciphertext.len() as u64, limits::SEALED, 0)?;
    let mut out = Vec::with_capacity(ciphertext.len() + 512);
    let mut write = || -> io::Result<()> {
        write_header(&mut out, header)?;
        out.write_all(&[1])?;
        write_blob(&mut out, ciphertext)
    };
    write().map_err(BundleError::Write)?;
    Ok(out)
}

fn check_header(h: &Header<'_>) -> Result<(), BundleError> {
    check_fleet(h.fleet, 0)?;
    check_host(h.host, 0)?;
    if let Some(c) = &h.commit {
        check_commit(c.id, 0)?;
    }
    Ok(())
}

/// The magic, the version and the header: everything before the sealed flag.
fn write_header(w: &mut dyn Write, h: &Header<'_>) -> io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(&VERSION.to_be_bytes())?;
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
        Some(at) => {
            w.write_all(&[1])?;
            w.write_all(&at.to_be_bytes())?;
        }
    }
    match &h.commit {
        None => w.write_all(&[0])?,
        Some(c) => {
            w.write_all(&[1])?;
            write_str(w, c.id)?;
            w.write_all(&c.time.to_be_bytes())?;
        }
    }
    Ok(())
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
