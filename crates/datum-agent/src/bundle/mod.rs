//! Bundles, both ends: [`make`] turns one resolved host into a bundle
//! file (its manifest as `datum render` writes it, exactly the payloads it
//! uses, signed when a key is given); [`open`] checks a bundle file (every
//! check of [`datum_core::bundle::decode`], then the signature against the
//! host's keys) and [`Opened::items`] reads its manifest back into what
//! apply converges to; [`Batch::write_all`] fills a directory with every
//! host's bundle (`bundle --all`).
//!
//! The byte layout is `datum_core::bundle`'s; this module adds what needs
//! keys, files and the apply engine.

mod many;
mod resources;

use std::borrow::Cow;
use std::collections::BTreeMap;

use datum_apply::spec::{Item, items_of};
use datum_core::bundle::{self, Bundle, BundleError, Commit, Decoded, Header, ManifestFormat};
use datum_core::emit;
use datum_core::hint::{Fault, Hinted};
use datum_core::manifest::Manifest;
use datum_core::reader::{ReadError, Reader, SourceError};
use datum_core::schema::Field;

use crate::sshsig::{AllowedSigners, SignError, Signer, SigningKey, VerifyError};

pub use many::{Batch, BatchError};
pub use resources::{BundledResource, ManifestError, resources};

/// The payloads of a fleet that manifests use, read once and shared by
/// every host's bundle: a fleet of thousands of hosts uses a handful.
#[derive(Debug, Default)]
pub struct Payloads {
    content: BTreeMap<String, Vec<u8>>,
}

impl Payloads {
    /// Reads every path in `paths` through `reader` (the fleet's).
    pub fn read<'p>(
        reader: &dyn Reader,
        paths: impl IntoIterator<Item = &'p str>,
        limit: u64,
    ) -> Result<Payloads, MakeError> {
        let mut content = BTreeMap::new();
        for path in paths {
            if content.contains_key(path) {
                continue;
            }
            let bytes = reader
                .read_source(path, limit)
                .map_err(|source| MakeError::Payload {
                    path: path.to_owned(),
                    source,
                })?;
            content.insert(path.to_owned(), bytes);
        }
        Ok(Payloads { content })
    }
}

/// A bundle that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum MakeError {
    /// The Fleet document has no name to record.
    #[error("the fleet has no name: its Fleet document did not load")]
    NoFleetName,
    /// A payload a manifest uses cannot be read.
    #[error("cannot read payload {path}: it {source}")]
    Payload {
        path: String,
        #[source]
        source: SourceError,
    },
    /// A manifest uses a payload that was not read beforehand.
    #[error("{resource} uses payload {path}, which was not read")]
    Unread { resource: String, path: String },
    /// The contents do not make a valid bundle (a payload changed on disk
    /// since the fleet was loaded, a bound exceeded).
    #[error("{0}")]
    Bundle(#[from] BundleError),
    /// Signing failed.
    #[error("{0}")]
    Sign(#[from] SignError),
}

/// A payload the caller did not read is the caller's bug: every source
/// and secret of the fleet is read before any bundle is made.
impl Hinted for MakeError {
    fn fault(&self) -> Fault {
        match self {
            MakeError::Unread { .. } => Fault::Internal,
            _ => Fault::Failed,
        }
    }
}

/// What a bundle records besides its host's configuration: its serial,
/// when it expires, when it may be applied and the commit it was made from
/// (each when known). All of it is signed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stamp<'a> {
    pub serial: Option<u64>,
    pub expires: Option<i64>,
    /// Before when the host may not apply it (its rollout wave's turn).
    pub not_before: Option<i64>,
    pub commit: Option<Commit<'a>>,
}

/// When each host of a release may apply it: the time the bundles are
/// made (the publisher's clock, never a committer's) plus the start of
/// the host's wave in `plan`.
#[derive(Copy, Clone, Debug)]
pub struct Waits<'a> {
    /// Seconds since the epoch.
    pub made: i64,
    pub plan: &'a datum_core::rollout::Plan,
}

impl Waits<'_> {
    /// The host's `not_before`: none for a wave that starts at once, so a
    /// host whose clock is behind the publisher's does not wait for it.
    pub fn not_before(&self, host: datum_core::fleet::HostId) -> Option<i64> {
        let start = self
            .plan
            .wave_of(host)
            .map_or(0, |i| self.plan.waves[i].start);
        (start > 0).then(|| {
            self.made
                .saturating_add(i64::try_from(start).unwrap_or(i64::MAX))
        })
    }
}

/// The bundle file for the host of `manifest`: its manifest in YAML, the
/// payloads it uses (taken from `payloads`), the fleet's name, `stamp`,
/// and a signature by `key` in namespace `datum-bundle` when one is given.
/// The same inputs give the same bytes.
pub fn make(
    manifest: &Manifest<'_>,
    payloads: &Payloads,
    stamp: &Stamp<'_>,
    key: Option<&SigningKey>,
) -> Result<Vec<u8>, MakeError> {
    let fleet = manifest
        .fleet
        .name
        .as_deref()
        .ok_or(MakeError::NoFleetName)?;
    let mut text = Vec::new();
    emit::write_yaml(&mut text, &manifest.tree()).map_err(BundleError::Write)?;
    let mut used = BTreeMap::new();
    for resource in manifest.resources() {
        // A secret travels as its ciphertext, like a source.
        let Some(path) = resource
            .str(Field::Source)
            .or_else(|| resource.str(Field::Secret))
        else {
            continue;
        };
        let content = payloads
            .content
            .get(path)
            .ok_or_else(|| MakeError::Unread {
                resource: resource.id_text().to_owned(),
                path: path.to_owned(),
            })?;
        used.insert(path, content.as_slice());
    }
    let body = Bundle {
        header: Header {
            fleet,
            host: manifest.host_name(),
            serial: stamp.serial,
            expires: stamp.expires,
            not_before: stamp.not_before,
            commit: stamp.commit,
        },
        format: ManifestFormat::Yaml,
        manifest: &text,
        payloads: used,
    }
    .encode_body()?;
    let signature = key
        .map(|k| k.sign(bundle::SIGNATURE_NAMESPACE, &body))
        .transpose()?;
    Ok(bundle::seal(body, signature.as_deref())?)
}

/// A bundle that passed every check: its contents, and who signed it when
/// keys were given.
#[derive(Debug)]
pub struct Opened<'b> {
    pub bundle: Bundle<'b>,
    /// The signer, when the bundle was verified against keys.
    pub signer: Option<Signer>,
    /// Whether the bundle carries a signature (verified or not).
    pub signed: bool,
}

/// Why a bundle is refused.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Damaged, truncated or inconsistent: the core's checks failed.
    #[error("the bundle is damaged: {0}")]
    Damaged(#[from] BundleError),
    /// Keys are configured and the bundle carries no signature.
    #[error("the bundle is not signed, and public keys are configured")]
    Unsigned,
    /// The signature does not verify, or its signer is not trusted.
    #[error("the bundle's signature is refused: {0}")]
    Signature(#[source] VerifyError),
    /// The bundle was made for another host.
    #[error("the bundle is for host {bundle}, and this host is {host}")]
    WrongHost { bundle: String, host: String },
}

/// What would fix it.
impl Hinted for OpenError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(match self {
        OpenError::Damaged(e) => e
            .hint()
            .unwrap_or("make the bundle again with `datum bundle` and fetch it again".into()),
        OpenError::Unsigned => {
            "make bundles with `datum bundle --sign-key KEY`, by a key the public keys file lists".into()
        }
        OpenError::Signature(e) => return e.hint(),
        OpenError::WrongHost { .. } => {
            "a host applies only its own bundle: check the host the bundle was made for, and this host's name (/etc/datum/host, else the system hostname)".into()
        }
    })
    }
}

/// Checks `bytes`: every check of the format, then, when `signers` is
/// given, a signature by one of them (namespace `datum-bundle`, key
/// validity judged at `now`, seconds since the epoch). With `host`, the
/// bundle must be that host's.
pub fn open<'b>(
    bytes: &'b [u8],
    signers: Option<&AllowedSigners>,
    host: Option<&str>,
    now: i64,
) -> Result<Opened<'b>, OpenError> {
    let Decoded {
        bundle,
        signed,
        signature,
    } = bundle::decode(bytes)?;
    let signer = match (signers, signature) {
        (None, _) => None,
        (Some(_), None) => return Err(OpenError::Unsigned),
        (Some(signers), Some(signature)) => Some(
            signers
                .verify(bundle::SIGNATURE_NAMESPACE, signed, signature, now)
                .map_err(OpenError::Signature)?,
        ),
    };
    if let Some(host) = host
        && bundle.header.host != host
    {
        return Err(OpenError::WrongHost {
            bundle: bundle.header.host.to_owned(),
            host: host.to_owned(),
        });
    }
    Ok(Opened {
        bundle,
        signer,
        signed: signature.is_some(),
    })
}

impl<'b> Opened<'b> {
    /// What apply converges to: the manifest's resources, read back, with
    /// `source` content taken from the bundle's payloads. `name` names the
    /// bundle in messages.
    pub fn items(&self, name: &str) -> Result<Vec<Item>, ManifestError> {
        let resources = resources(name, self.bundle.manifest)?;
        // The payloads are in memory already, checked against the manifest.
        Ok(items_of(
            resources,
            &PayloadReader(&self.bundle.payloads),
            u64::MAX,
        ))
    }

    /// The manifest's labels tied to a fact (`label_facts`), to check
    /// against what the host observes.
    pub fn tied(&self) -> Vec<datum_core::facts::Tied> {
        crate::facts::manifest_tied(self.bundle.manifest)
    }

    /// The commit the bundle was made from, when the fleet is in git.
    pub fn commit(&self) -> Option<Commit<'b>> {
        self.bundle.header.commit
    }

    /// What the bundle says about itself (fleet, host, serial, expiry, commit).
    pub fn header(&self) -> &Header<'b> {
        &self.bundle.header
    }
}

/// What reading a document from a bundle meets.
#[derive(Debug, thiserror::Error)]
#[error("a bundle holds no fleet documents")]
struct NoDocuments;

/// A bundle's payloads as the source of `source` content; there are no
/// documents to discover in a bundle.
struct PayloadReader<'p, 'b>(&'p BTreeMap<&'b str, &'b [u8]>);

impl Reader for PayloadReader<'_, '_> {
    fn discover(&self) -> Result<Vec<String>, ReadError> {
        Ok(Vec::new())
    }

    /// A bundle carries rendered templates as `content`, not their files.
    fn list_payloads(&self, _: &str) -> Result<Vec<String>, ReadError> {
        Ok(Vec::new())
    }

    fn read(&self, path: &str, _: u64) -> Result<Vec<u8>, ReadError> {
        Err(ReadError::store(path, NoDocuments))
    }

    fn read_source(&self, path: &str, _: u64) -> Result<Vec<u8>, SourceError> {
        self.0
            .get(path)
            .map(|b| b.to_vec())
            .ok_or(SourceError::Missing)
    }
}
