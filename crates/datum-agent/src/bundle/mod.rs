//! Bundles, both ends: [`make`] turns one resolved host into a bundle
//! file (its manifest as `datum render` writes it, exactly the payloads it
//! uses, sealed to the host's keys when asked, signed when a key is given);
//! [`open`] checks a bundle file (every check of
//! [`datum_core::bundle::decode`], the signature against the trusted keys,
//! the host, then, for a sealed one, decrypts it with the host's key) and
//! [`Opened::items`] reads its manifest back into what apply converges to; [`Batch::write_all`] fills a directory with every
//! host's bundle (`bundle --all`).
//!
//! The byte layout is `datum_core::bundle`'s; this module adds what needs
//! keys, files and the apply engine.

mod many;
mod resources;

use std::borrow::Cow;
use std::collections::BTreeMap;

use datum_apply::root::Root;
use datum_apply::secret::{DEFAULT_IDENTITY, read_host_identities};
use datum_apply::spec::{Item, items_of};
use datum_core::bundle::{
    self, Body, Bundle, BundleError, Commit, Decoded, Header, ManifestFormat,
};
use datum_core::emit;
use datum_core::hint::{Fault, Hinted};
use datum_core::manifest::Manifest;
use datum_core::reader::{ReadError, Reader, SourceError};
use datum_core::schema::Field;

use datum_secrets::{DecryptError, EncryptError, Identity, Plaintext, PublicKey};

use crate::sshsig::time::{format_utc, span};
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
    /// `--seal`, and the host declares no key to seal to.
    #[error("it declares no `keys` to seal its bundle to")]
    NoKeys,
    /// `--seal`, and a key of the host does not parse.
    #[error("a key of its `keys` cannot be sealed to: {0}")]
    BadKey(String),
    /// Encrypting to the host's keys failed.
    #[error("cannot seal its bundle: {0}")]
    Seal(#[source] Box<EncryptError>),
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

/// The keys a host's bundle is sealed to: its Host document's `keys`.
pub fn host_keys(manifest: &Manifest<'_>) -> Result<Vec<PublicKey>, MakeError> {
    let host = manifest.fleet.host(manifest.host);
    let keys = host
        .keys
        .iter()
        .map(|decl| PublicKey::parse(&decl.text).map_err(|e| MakeError::BadKey(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    if keys.is_empty() {
        return Err(MakeError::NoKeys);
    }
    Ok(keys)
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
/// With `seal`, the manifest and payloads are encrypted to the host's
/// `keys` ([`host_keys`]) and only the header stays in clear. The same
/// inputs give the same bytes, unless sealed (age draws a fresh key each
/// time).
pub fn make(
    manifest: &Manifest<'_>,
    payloads: &Payloads,
    stamp: &Stamp<'_>,
    key: Option<&SigningKey>,
    seal: bool,
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
    let recipients = if seal {
        Some(host_keys(manifest)?)
    } else {
        None
    };
    let bundle = Bundle {
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
    };
    let body = match recipients {
        None => bundle.encode_body()?,
        Some(keys) => {
            let contents = bundle.encode_contents()?;
            let ciphertext = datum_secrets::encrypt_binary(&contents, &keys)
                .map_err(|e| MakeError::Seal(Box::new(e)))?;
            bundle::encode_sealed_body(&bundle.header, &ciphertext)?
        }
    };
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
    /// Whether it was sealed to the host's keys.
    pub sealed: bool,
    /// The SHA-256 of its clear contents ([`bundle::contents_sha256`]):
    /// what tells two releases of one serial apart.
    pub contents_sha256: [u8; 32],
}

/// The host's keys, read only when a sealed bundle needs them: the
/// identity file (the agent's `identity`, `datum apply --identity`) read
/// inside the root. The error says why they cannot be had.
pub type HostKeys<'k> = &'k dyn Fn() -> Result<Vec<Identity>, String>;

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
    /// Sealed, and the host's key cannot be read.
    #[error("the bundle is sealed, and this host's key cannot be read: {0}")]
    NoHostKey(String),
    /// Sealed to other keys than this host's.
    #[error("the bundle is sealed to other keys than this host's: {0}")]
    NotSealedToHost(#[source] DecryptError),
    /// Sealed, and the ciphertext does not decrypt (damaged, not age).
    #[error("the sealed bundle cannot be opened: {0}")]
    Unseal(#[source] DecryptError),
}

impl OpenError {
    /// The `reason` label of `datum_input_refusals_total` for it.
    pub fn reason(&self) -> &'static str {
        match self {
            OpenError::Damaged(_) | OpenError::Unseal(_) => "damaged",
            OpenError::Unsigned => "unsigned",
            OpenError::Signature(_) => "signature",
            OpenError::WrongHost { .. } => "wrong_host",
            OpenError::NoHostKey(_) | OpenError::NotSealedToHost(_) => "sealed",
        }
    }
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
        OpenError::NoHostKey(_) => {
            "a sealed bundle is opened with the host key: set `identity` in the agent configuration (`--identity` for `datum apply`) to the private key whose public half is in the Host's `keys`".into()
        }
        OpenError::NotSealedToHost(_) => {
            "the Host's `keys` in the fleet do not name this host's key (`identity`): put its public key there (from /etc/ssh/ssh_host_ed25519_key.pub) and bundle again".into()
        }
        OpenError::Unseal(_) => {
            "the file was altered or cut short after it was signed: fetch it again, or make it again with `datum bundle --seal`".into()
        }
    })
    }
}

/// Checks `bytes`: every check of the format, then, when `signers` is
/// given, a signature by one of them (namespace `datum-bundle`, key
/// validity judged at `now`, seconds since the epoch). With `host`, the
/// bundle must be that host's. A sealed bundle is decrypted only after
/// all of that, with `keys`, into `clear` (which the result borrows), and
/// its contents then get every check clear contents get.
pub fn open<'b>(
    bytes: &'b [u8],
    signers: Option<&AllowedSigners>,
    host: Option<&str>,
    now: i64,
    keys: HostKeys<'_>,
    clear: &'b mut Option<Plaintext>,
) -> Result<Opened<'b>, OpenError> {
    let Decoded {
        header,
        body,
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
        && header.host != host
    {
        return Err(OpenError::WrongHost {
            bundle: header.host.to_owned(),
            host: host.to_owned(),
        });
    }
    let (bundle, contents_sha256, sealed) = match body {
        Body::Clear { bundle, contents } => (bundle, bundle::contents_sha256(contents), false),
        Body::Sealed(ciphertext) => {
            let identities = keys().map_err(OpenError::NoHostKey)?;
            let plain = datum_secrets::decrypt(ciphertext, &identities).map_err(|e| match e {
                DecryptError::NotRecipient { .. } | DecryptError::NoIdentities => {
                    OpenError::NotSealedToHost(e)
                }
                e => OpenError::Unseal(e),
            })?;
            let plain: &'b [u8] = clear.insert(plain).as_bytes();
            let bundle = bundle::read_contents(header, plain)?;
            (bundle, bundle::contents_sha256(plain), true)
        }
    };
    Ok(Opened {
        bundle,
        signer,
        signed: signature.is_some(),
        sealed,
        contents_sha256,
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

/// The host's keys for a sealed bundle: the identity file at `identity`
/// (by default the SSH host key), read inside `root` as secrets read it.
pub fn read_host_key(root: &Root, identity: Option<&str>) -> Result<Vec<Identity>, String> {
    let path = identity.unwrap_or(DEFAULT_IDENTITY);
    read_host_identities(root, path).map_err(|e| {
        format!(
            "{e} (the host key, given by `identity` in the agent configuration or --identity, default {DEFAULT_IDENTITY})"
        )
    })
}

/// Why a bundle that expired at `expires` is refused at `now`: one
/// message for the agent and `datum apply --bundle`.
pub fn expired(name: &str, expires: i64, now: i64) -> String {
    format!(
        "refusing {name}: it expired at {} ({} ago)",
        format_utc(expires),
        span(now - expires)
    )
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
