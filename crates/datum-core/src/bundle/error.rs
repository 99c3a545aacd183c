//! Why bytes are not a bundle: which field, where, and what would fix it.

use std::borrow::Cow;
use std::fmt;
use std::io;

use super::{OLDEST_VERSION, VERSION};
use crate::hint::Hinted;

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
    SealedFlag,
    Sealed,
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
            Field::SealedFlag => "the sealed flag",
            Field::Sealed => "the sealed contents",
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
