//! Reading a bundle back: every length is checked against the bytes left
//! and its bound before it is used, and nothing is copied out of the input.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::{
    Body, Bundle, BundleError, Commit, Decoded, Field, Header, MAGIC, ManifestFormat,
    OLDEST_VERSION, VERSION, bounded, check_commit, check_fleet, check_host, check_path,
    check_signature, hex, invalid, limits, manifest,
};

/// Reads a whole bundle and checks its integrity: structure and bounds,
/// and, for contents in clear, each payload against its recorded digest
/// and the payload set against the manifest's sources. Sealed contents are
/// returned as they are, for the caller to decrypt and read with
/// [`read_contents`]. The signature is returned, not verified: that needs
/// the trusted keys, which the caller holds.
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, BundleError> {
    let mut r = Cursor { bytes, at: 0 };
    let (header, version) = header(&mut r)?;
    // Versions 1 and 2 have no sealed flag: their contents are in clear.
    let sealed = version >= 3 && r.flag(Field::SealedFlag)?;
    let body = if sealed {
        Body::Sealed(r.blob(Field::Sealed, limits::SEALED)?)
    } else {
        let start = r.at;
        let (bundle, digests) = contents(&mut r, header.clone())?;
        Body::Clear {
            contents: &bytes[start..r.at],
            bundle: checked(bundle, &digests)?,
        }
    };
    let signed = &bytes[..r.at];
    let signature = match r.flag(Field::SignatureFlag)? {
        false => None,
        true => {
            let at = r.at;
            let sig = r.str(Field::Signature, limits::SIGNATURE)?;
            check_signature(sig, at)?;
            Some(sig)
        }
    };
    if r.at != bytes.len() {
        return Err(BundleError::Trailing {
            at: r.at,
            left: bytes.len() - r.at,
        });
    }
    Ok(Decoded {
        header,
        body,
        signed,
        signature,
    })
}

/// Reads the clear contents of a bundle with `header` (the decrypted
/// contents of a sealed one) with every check [`decode`] makes of contents
/// in clear. Byte offsets in errors count from the start of `clear`. The
/// whole of `clear` must be the contents: nothing may follow.
pub fn read_contents<'a>(header: Header<'a>, clear: &'a [u8]) -> Result<Bundle<'a>, BundleError> {
    let mut r = Cursor {
        bytes: clear,
        at: 0,
    };
    let (bundle, digests) = contents(&mut r, header)?;
    if r.at != clear.len() {
        return Err(BundleError::Trailing {
            at: r.at,
            left: clear.len() - r.at,
        });
    }
    checked(bundle, &digests)
}

/// The SHA-256 of a bundle's clear contents (format, manifest, payloads):
/// one release's contents give one digest, whether the bundle was sealed
/// or not, whatever its expiry or signature.
pub fn contents_sha256(clear: &[u8]) -> [u8; 32] {
    Sha256::digest(clear).into()
}

/// Each payload against its recorded digest, and the payload set against
/// the manifest's sources.
fn checked<'a>(bundle: Bundle<'a>, digests: &[&[u8; 32]]) -> Result<Bundle<'a>, BundleError> {
    for ((path, content), recorded) in bundle.payloads.iter().zip(digests) {
        let actual: [u8; 32] = Sha256::digest(content).into();
        if actual != **recorded {
            return Err(BundleError::PayloadDigest {
                path: (*path).to_owned(),
                recorded: hex(*recorded),
                actual: hex(&actual),
            });
        }
    }
    let recorded = bundle.payloads.keys().copied().zip(digests.iter().copied());
    manifest::check(bundle.manifest, bundle.header.host, recorded)?;
    Ok(bundle)
}

/// The magic, the version and the header's fields; gives the version read.
fn header<'a>(r: &mut Cursor<'a>) -> Result<(Header<'a>, u32), BundleError> {
    if r.bytes.len() < MAGIC.len() || &r.bytes[..MAGIC.len()] != MAGIC {
        return Err(BundleError::NotABundle);
    }
    r.at = MAGIC.len();
    let found = u32::from_be_bytes(*r.array(Field::Version)?);
    if !(OLDEST_VERSION..=VERSION).contains(&found) {
        return Err(BundleError::Version { found });
    }
    let at = r.at;
    let fleet = r.str(Field::Fleet, limits::FLEET)?;
    check_fleet(fleet, at)?;
    let at = r.at;
    let host = r.str(Field::Host, limits::HOST)?;
    check_host(host, at)?;
    // Version 1 has neither field: a bundle with no serial and no expiry.
    let (serial, expires) = if found >= 2 {
        let serial = match r.flag(Field::SerialFlag)? {
            false => None,
            true => Some(u64::from_be_bytes(*r.array(Field::Serial)?)),
        };
        let expires = match r.flag(Field::ExpiresFlag)? {
            false => None,
            true => Some(i64::from_be_bytes(*r.array(Field::Expires)?)),
        };
        (serial, expires)
    } else {
        (None, None)
    };
    // Versions 1 and 2 carry no wait.
    let not_before = match found >= 3 && r.flag(Field::NotBeforeFlag)? {
        false => None,
        true => Some(i64::from_be_bytes(*r.array(Field::NotBefore)?)),
    };
    let commit = match r.flag(Field::CommitFlag)? {
        false => None,
        true => {
            let at = r.at;
            let id = r.str(Field::CommitId, limits::COMMIT)?;
            check_commit(id, at)?;
            let time = i64::from_be_bytes(*r.array(Field::CommitTime)?);
            Some(Commit { id, time })
        }
    };
    let header = Header {
        fleet,
        host,
        serial,
        expires,
        not_before,
        commit,
    };
    Ok((header, found))
}

/// The clear contents' fields, with each payload's recorded digest in path order.
fn contents<'a>(
    r: &mut Cursor<'a>,
    header: Header<'a>,
) -> Result<(Bundle<'a>, Vec<&'a [u8; 32]>), BundleError> {
    let at = r.at;
    let code = r.array::<1>(Field::Format)?[0];
    let format = ManifestFormat::from_code(code)
        .ok_or_else(|| invalid(Field::Format, at, format!("unknown format code {code}")))?;
    let manifest = r.blob(Field::Manifest, limits::MANIFEST)?;
    let (payloads, digests) = payloads(r)?;
    let bundle = Bundle {
        header,
        format,
        manifest,
        payloads,
    };
    Ok((bundle, digests))
}

type Payloads<'a> = (BTreeMap<&'a str, &'a [u8]>, Vec<&'a [u8; 32]>);

fn payloads<'a>(r: &mut Cursor<'a>) -> Result<Payloads<'a>, BundleError> {
    let at = r.at;
    let count = u32::from_be_bytes(*r.array(Field::PayloadCount)?) as u64;
    bounded(Field::PayloadCount, count, limits::PAYLOADS, at)?;
    // Each payload takes at least 45 bytes, so a count the input cannot
    // hold is refused before anything is reserved for it.
    let room = (r.bytes.len() - r.at) as u64 / 45;
    if count > room {
        return Err(BundleError::Truncated {
            at,
            field: Field::PayloadCount,
            needed: count * 45,
            left: r.bytes.len() - r.at,
        });
    }
    let mut map = BTreeMap::new();
    let mut digests = Vec::with_capacity(count as usize);
    let mut previous: Option<&str> = None;
    for _ in 0..count {
        let at = r.at;
        let path = r.str(Field::PayloadPath, limits::PATH)?;
        check_path(path, at)?;
        if let Some(prev) = previous
            && prev >= path
        {
            return Err(BundleError::Unsorted {
                at,
                path: path.to_owned(),
                previous: prev.to_owned(),
            });
        }
        previous = Some(path);
        digests.push(r.array::<32>(Field::PayloadDigest)?);
        map.insert(path, r.blob(Field::Payload, limits::PAYLOAD)?);
    }
    Ok((map, digests))
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, field: Field, len: u64) -> Result<&'a [u8], BundleError> {
        let left = self.bytes.len() - self.at;
        if len > left as u64 {
            return Err(BundleError::Truncated {
                at: self.at,
                field,
                needed: len,
                left,
            });
        }
        let out = &self.bytes[self.at..self.at + len as usize];
        self.at += len as usize;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, field: Field) -> Result<&'a [u8; N], BundleError> {
        let b = self.take(field, N as u64)?;
        Ok(b.try_into().expect("take returns exactly N bytes"))
    }

    fn flag(&mut self, field: Field) -> Result<bool, BundleError> {
        let at = self.at;
        match self.array::<1>(field)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(invalid(field, at, format!("{other} is neither 0 nor 1"))),
        }
    }

    /// A length-prefixed field: the length is checked against `max` and the
    /// bytes left before the bytes are touched.
    fn sized(
        &mut self,
        field: Field,
        len: u64,
        at: usize,
        max: u64,
    ) -> Result<&'a [u8], BundleError> {
        bounded(field, len, max, at)?;
        self.take(field, len)
    }

    fn str(&mut self, field: Field, max: u64) -> Result<&'a str, BundleError> {
        let at = self.at;
        let len = u32::from_be_bytes(*self.array(field)?) as u64;
        let b = self.sized(field, len, at, max)?;
        std::str::from_utf8(b).map_err(|_| invalid(field, at, "it is not UTF-8"))
    }

    fn blob(&mut self, field: Field, max: u64) -> Result<&'a [u8], BundleError> {
        let at = self.at;
        let len = u64::from_be_bytes(*self.array(field)?);
        self.sized(field, len, at, max)
    }
}
