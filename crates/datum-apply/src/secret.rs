//! A File's `secret`: in a real run, decrypted with the host's key into
//! zeroized memory, only to be written into the target; under `--noop`,
//! never decrypted: its ciphertext hash is compared with the one recorded
//! when it was last applied, kept in `/var/lib/datum/secrets`.
//!
//! The record holds hashes of ciphertext and target paths, nothing else.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use datum_fs::Attrs;
use datum_secrets::{DecryptError, Identity, IdentityError, KeyFile, ReadIdentityError, decrypt};

use crate::provider::Failure;
use crate::report::{Attribute, Change};
use crate::root::{Refused, Root};
use crate::spec::{Content, FileSpec};
use crate::state::{STATE_DIR, StateError};

/// The key a host decrypts with unless told otherwise: its SSH host key.
pub const DEFAULT_IDENTITY: &str = "/etc/ssh/ssh_host_ed25519_key";

/// The largest record of applied secrets read: a line per secret target.
pub const RECORD_LIMIT: u64 = 16 << 20;

/// Where the hashes of the secrets last applied are recorded, inside the root.
pub fn record_path() -> String {
    format!("{STATE_DIR}/secrets")
}

/// The host's keys: the identity file at `path` (a path on the host, as
/// the operator wrote it) opened inside the root (a link on the way or at
/// its name leads inside it, never out), only as a regular file (a FIFO is
/// refused, not waited on), never asking for a passphrase.
pub fn read_host_identities(root: &Root, path: &str) -> Result<Vec<Identity>, ReadIdentityError> {
    let shown = Path::new(path);
    let io = |source| ReadIdentityError::Io {
        path: shown.to_owned(),
        source,
    };
    let file = match root.open_regular(path) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(io(crate::root::not_found())),
        Err(Refused::Io(e)) => return Err(io(e)),
        Err(other) => return Err(io(io::Error::other(other.to_string()))),
    };
    KeyFile::from_file(shown, file)?.open(None)
}

/// What a run knows about secrets: the host's key (read once, when the
/// first secret needs it) and the hashes recorded by earlier runs.
pub struct Secrets {
    root: Root,
    /// The identity file as the operator knows it (a path inside the root).
    shown: String,
    identities: OnceLock<Result<Vec<Identity>, String>>,
    /// Target path to the ciphertext hash last applied there.
    recorded: BTreeMap<String, String>,
}

impl Secrets {
    /// Reads the hashes earlier runs recorded. `identity` is a path on the
    /// host (taken inside `root`); by default [`DEFAULT_IDENTITY`]. The
    /// record is read only as a regular file, never through a link at its
    /// name, and at most [`RECORD_LIMIT`] bytes of it.
    pub fn open(root: &Root, identity: Option<&str>) -> Result<Secrets, StateError> {
        let shown = identity.unwrap_or(DEFAULT_IDENTITY).to_owned();
        let recorded = match root.read_small(&record_path(), RECORD_LIMIT) {
            Ok(None) => BTreeMap::new(),
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(sha, path)| (path.to_owned(), sha.to_owned()))
                .collect(),
            Err(e) => {
                return Err(StateError::Refused {
                    path: root.path(&record_path()).display().to_string(),
                    problem: e.to_string(),
                });
            }
        };
        Ok(Secrets {
            root: root.clone(),
            shown,
            identities: OnceLock::new(),
            recorded,
        })
    }

    fn read_identities(&self) -> Result<Vec<Identity>, ReadIdentityError> {
        read_host_identities(&self.root, &self.shown)
    }

    /// For a File with a secret, the spec with its plaintext as content;
    /// `None` for any other File.
    pub fn unseal(&self, spec: &FileSpec) -> Result<Option<FileSpec>, Failure> {
        let Some(secret) = &spec.secret else {
            return Ok(None);
        };
        let identities = self
            .identities
            .get_or_init(|| {
                self.read_identities().map_err(|e| {
                    let why = match e {
                        ReadIdentityError::Invalid {
                            source: IdentityError::PassphraseProtected { .. },
                            ..
                        } => format!(
                            "{e}, and a host never asks for one: give a host key without a passphrase, as sshd's own are (--identity or the agent's `identity`, default {DEFAULT_IDENTITY})"
                        ),
                        e => format!(
                            "{e} (the host key, given by --identity or the agent's `identity`, default {DEFAULT_IDENTITY})"
                        ),
                    };
                    format!("cannot decrypt secret {}: {why}", secret.path)
                })
            })
            .as_ref()
            .map_err(|e| Failure::new(e.clone()))?;
        let plaintext = decrypt(&secret.ciphertext, identities).map_err(|e| match e {
            DecryptError::NotRecipient { .. } => Failure::new(format!(
                "cannot decrypt secret {}: this host is not among its recipients ({e}); run `datum secret rekey {}` in the fleet repository and commit the result",
                secret.path, secret.path
            )),
            e => Failure::new(format!("cannot decrypt secret {}: {e}", secret.path)),
        })?;
        let mut unsealed = spec.clone();
        unsealed.content = Some(Content::from(plaintext.into_zeroizing()));
        Ok(Some(unsealed))
    }

    /// Under `--noop`: a content change when the ciphertext differs from
    /// the one last applied to this path (or none was).
    pub fn noop_change(&self, spec: &FileSpec) -> Option<Change> {
        let secret = spec.secret.as_ref()?;
        let before = self.recorded.get(&spec.path);
        if before == Some(&secret.sha256) {
            return None;
        }
        let short = |sha: &str| format!("secret sha256 {}", &sha[..sha.len().min(16)]);
        Some(Change {
            attribute: Attribute::Content,
            from: Some(before.map_or_else(|| "never applied".to_owned(), |s| short(s))),
            to: Some(format!(
                "{} (not decrypted under --noop)",
                short(&secret.sha256)
            )),
            diff: None,
        })
    }

    /// After a File with a secret was applied (or found as it should be),
    /// records its ciphertext hash for later `--noop` runs.
    pub fn record(&mut self, spec: &FileSpec) -> Result<(), Failure> {
        let Some(secret) = &spec.secret else {
            return Ok(());
        };
        if self.recorded.get(&spec.path) == Some(&secret.sha256) {
            return Ok(());
        }
        self.recorded
            .insert(spec.path.clone(), secret.sha256.clone());
        let mut text = String::new();
        for (path, sha) in &self.recorded {
            text.push_str(&format!("{sha} {path}\n"));
        }
        let attrs = Attrs {
            mode: Some(0o600),
            ..Attrs::default()
        };
        self.root
            .write_atomic(&record_path(), text.as_bytes(), attrs)
            .map_err(|e| {
                Failure::new(format!(
                    "applied, but cannot record the secret's hash in {}: {e}",
                    self.root.path(&record_path()).display()
                ))
            })
    }
}
