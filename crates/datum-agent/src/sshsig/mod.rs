//! SSH signatures in the format of `ssh-keygen -Y sign` (the armored
//! `-----BEGIN SSH SIGNATURE-----` block of OpenSSH's PROTOCOL.sshsig),
//! made and checked in process: signing with an OpenSSH ed25519 private key,
//! verifying against an allowed-signers file.
//!
//! A namespace binds a signature to its purpose (`git` for commits, another
//! for bundles), so a signature made for one can never be replayed as the
//! other. Verification answers like `ssh-keygen -Y find-principals`
//! followed by `-Y verify`: it finds the signers whose key made the
//! signature and whose options allow its namespace at the given time.

mod allowed;
mod pattern;
pub(crate) mod time;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use datum_core::hint::Hinted;
use ssh_key::{HashAlg, LineEnding, PrivateKey, SshSig};

pub use allowed::{AllowedSigners, AllowedSignersError, SyntaxProblem, TimeProblemKind};

/// A private key that signs: OpenSSH format, ed25519, not passphrase-protected.
pub struct SigningKey {
    key: PrivateKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret half, even in debug output.
        f.debug_struct("SigningKey")
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

/// A private key file that cannot sign.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read.
    #[error("cannot read the signing key {}: {source}", path.display())]
    Read {
        /// The key file.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// The file is not an OpenSSH private key.
    #[error("{} is not an OpenSSH private key: {source}", path.display())]
    Parse {
        /// The key file.
        path: PathBuf,
        /// What the key parser reported.
        #[source]
        source: ssh_key::Error,
    },
    /// The key is protected by a passphrase, which an unattended run cannot type.
    #[error("the signing key {} is protected by a passphrase", path.display())]
    Encrypted {
        /// The key file.
        path: PathBuf,
    },
    /// The key is not ed25519.
    #[error("the signing key {} is {algorithm}; datum signs with ed25519 keys only", path.display())]
    NotEd25519 {
        /// The key file.
        path: PathBuf,
        /// The key's algorithm, as OpenSSH names it.
        algorithm: String,
    },
}

/// What would fix it.
impl Hinted for KeyError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::Read { .. } | Self::Parse { .. } => {
                "give the private half (the file without .pub), as written by `ssh-keygen -t ed25519`"
            }
            Self::Encrypted { .. } => {
                "keep this key for interactive use, and sign with a key made by `ssh-keygen -t ed25519 -N ''` kept where only the signer reads it"
            }
            Self::NotEd25519 { .. } => "make one with `ssh-keygen -t ed25519`",
        }))
    }
}

/// Signing failed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The namespace is empty, which the format forbids.
    #[error("a signature needs a namespace, and it is empty")]
    EmptyNamespace,
    /// The signature could not be made or encoded.
    #[error("cannot sign: {source}")]
    Crypto {
        /// What the signing library reported.
        #[source]
        source: ssh_key::Error,
    },
}

impl SigningKey {
    /// Reads an OpenSSH private key file.
    pub fn read(path: &Path) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses an OpenSSH private key; `path` only names it in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, KeyError> {
        let key = PrivateKey::from_openssh(text).map_err(|source| KeyError::Parse {
            path: path.to_owned(),
            source,
        })?;
        if key.is_encrypted() {
            return Err(KeyError::Encrypted {
                path: path.to_owned(),
            });
        }
        if key.algorithm() != ssh_key::Algorithm::Ed25519 {
            return Err(KeyError::NotEd25519 {
                path: path.to_owned(),
                algorithm: key.algorithm().to_string(),
            });
        }
        Ok(SigningKey { key })
    }

    /// The public half as one `.pub` line (`ssh-ed25519 AAAA... comment`),
    /// ready for an allowed-signers file after a principal.
    pub fn public_key(&self) -> String {
        self.key
            .public_key()
            .to_openssh()
            .unwrap_or_else(|e| format!("<unencodable key: {e}>"))
    }

    /// `SHA256:...`, as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        self.key.fingerprint(HashAlg::Sha256).to_string()
    }

    /// Signs `message` for `namespace`: the armored text `ssh-keygen -Y
    /// sign` writes to a `.sig` file (SHA-512, lines of 70, final newline).
    /// ed25519 is deterministic: the same key and bytes give the same text.
    pub fn sign(&self, namespace: &str, message: &[u8]) -> Result<String, SignError> {
        if namespace.is_empty() {
            return Err(SignError::EmptyNamespace);
        }
        let signature = self
            .key
            .sign(namespace, HashAlg::Sha512, message)
            .map_err(|source| SignError::Crypto { source })?;
        let mut armored = signature
            .to_pem(LineEnding::LF)
            .map_err(|source| SignError::Crypto { source })?;
        if !armored.ends_with('\n') {
            armored.push('\n');
        }
        Ok(armored)
    }
}

/// Who made a signature that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// The principals of every allowed-signers line that accepted it, in
    /// file order (usually one).
    pub principals: Vec<String>,
    /// The signing key's `SHA256:...` fingerprint.
    pub fingerprint: String,
}

/// A signature that does not prove what it should.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The text is not an armored SSH signature, or it is damaged.
    #[error("not a readable SSH signature: {source}")]
    Malformed {
        /// What the signature parser reported.
        #[source]
        source: ssh_key::Error,
    },
    /// The signature was made for another purpose.
    #[error("the signature is for namespace `{found}`, not `{expected}`")]
    WrongNamespace {
        /// The namespace this verification needs.
        expected: String,
        /// The namespace inside the signature.
        found: String,
    },
    /// A key type datum does not verify.
    #[error(
        "the signature was made with a {algorithm} key ({fingerprint}); datum verifies ed25519 signatures only"
    )]
    UnsupportedKey {
        /// The key's algorithm, as OpenSSH names it.
        algorithm: String,
        /// The key's fingerprint.
        fingerprint: String,
    },
    /// The signature does not match the data: the data changed after signing,
    /// or the signature belongs to other data.
    #[error(
        "the signature by {fingerprint} does not match the signed data: it was altered after signing"
    )]
    Mismatch {
        /// The key's fingerprint.
        fingerprint: String,
        /// What the signature check reported.
        #[source]
        source: ssh_key::Error,
    },
    /// A valid signature, by a key the allowed-signers file does not list.
    #[error("the signing key {fingerprint} is not in the allowed signers file {}", file.display())]
    UnknownSigner {
        /// The key's fingerprint.
        fingerprint: String,
        /// The allowed-signers file.
        file: PathBuf,
    },
    /// The key is listed, but only for other namespaces.
    #[error("the key {fingerprint} ({}:{line}) may not sign namespace `{namespace}`", file.display())]
    NamespaceNotAllowed {
        /// The key's fingerprint.
        fingerprint: String,
        /// The allowed-signers file.
        file: PathBuf,
        /// The line listing the key.
        line: usize,
        /// The namespace of the signature.
        namespace: String,
    },
    /// The key is listed, but its `valid-after` time has not come.
    #[error("the key {fingerprint} ({}:{line}) is valid only after {}", file.display(), time::format_utc(*.valid_after))]
    NotYetValid {
        /// The key's fingerprint.
        fingerprint: String,
        /// The allowed-signers file.
        file: PathBuf,
        /// The line listing the key.
        line: usize,
        /// `valid-after`, in seconds since the epoch.
        valid_after: i64,
    },
    /// The key is listed, but its `valid-before` time has passed.
    #[error("the key {fingerprint} ({}:{line}) expired at {}", file.display(), time::format_utc(*.valid_before))]
    Expired {
        /// The key's fingerprint.
        fingerprint: String,
        /// The allowed-signers file.
        file: PathBuf,
        /// The line listing the key.
        line: usize,
        /// `valid-before`, in seconds since the epoch.
        valid_before: i64,
    },
}

/// What would fix it.
impl Hinted for VerifyError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            Self::Malformed { .. } => {
                "a signature starts with -----BEGIN SSH SIGNATURE-----, as `ssh-keygen -Y sign` writes it"
            }
            Self::WrongNamespace { .. } => {
                "sign again with the namespace this input needs (`ssh-keygen -Y sign -n NAMESPACE`)"
            }
            Self::UnsupportedKey { .. } => "sign with a key made by `ssh-keygen -t ed25519`",
            Self::Mismatch { .. } => {
                "refetch from a source you trust; if the change is wanted, sign it again"
            }
            Self::UnknownSigner { .. } => {
                "if this key should be trusted, add `PRINCIPAL ssh-ed25519 KEY` to the allowed signers file on the host"
            }
            Self::NamespaceNotAllowed { .. } => {
                "add the namespace to that line's namespaces=\"...\" option, or sign with another key"
            }
            Self::NotYetValid { .. } | Self::Expired { .. } => {
                "sign with a key valid now, or change the line's valid-after/valid-before"
            }
        }))
    }
}

impl AllowedSigners {
    /// Checks that `armored` is a signature over `message` for `namespace`,
    /// by a key this file allows for that namespace at `at` (seconds since
    /// the epoch).
    pub fn verify(
        &self,
        namespace: &str,
        message: &[u8],
        armored: &str,
        at: i64,
    ) -> Result<Signer, VerifyError> {
        let signature =
            SshSig::from_pem(armored.trim()).map_err(|source| VerifyError::Malformed { source })?;
        let key = ssh_key::PublicKey::from(signature.public_key().clone());
        let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
        if signature.namespace() != namespace {
            return Err(VerifyError::WrongNamespace {
                expected: namespace.to_owned(),
                found: signature.namespace().to_owned(),
            });
        }
        if key.algorithm() != ssh_key::Algorithm::Ed25519 {
            return Err(VerifyError::UnsupportedKey {
                algorithm: key.algorithm().to_string(),
                fingerprint,
            });
        }
        // The signature is checked before the signer is looked up, so that
        // altered data reads as altered whoever claims to have signed it.
        key.verify(namespace, message, &signature)
            .map_err(|source| VerifyError::Mismatch {
                fingerprint: fingerprint.clone(),
                source,
            })?;
        self.admit(&key, namespace, at, fingerprint)
    }

    /// Finds the lines that accept `key` for `namespace` at `at`; without
    /// one, says why the first line listing the key refused it.
    fn admit(
        &self,
        key: &ssh_key::PublicKey,
        namespace: &str,
        at: i64,
        fingerprint: String,
    ) -> Result<Signer, VerifyError> {
        let mut principals = Vec::new();
        let mut refusal = None;
        let listing = self
            .entries
            .iter()
            .filter(|e| !e.options.cert_authority && e.key.key_data() == key.key_data());
        for entry in listing {
            let why = self.refusal(entry, namespace, at, &fingerprint);
            match why {
                None if !principals.contains(&entry.principals) => {
                    principals.push(entry.principals.clone());
                }
                None => {}
                Some(why) => {
                    refusal.get_or_insert(why);
                }
            }
        }
        if !principals.is_empty() {
            return Ok(Signer {
                principals,
                fingerprint,
            });
        }
        Err(refusal.unwrap_or_else(|| VerifyError::UnknownSigner {
            fingerprint,
            file: self.path.clone(),
        }))
    }

    /// Why `entry`, which lists the signing key, does not accept a
    /// signature for `namespace` at `at`; `None` when it does.
    fn refusal(
        &self,
        entry: &allowed::Entry,
        namespace: &str,
        at: i64,
        fingerprint: &str,
    ) -> Option<VerifyError> {
        let (fingerprint, file, line) = (fingerprint.to_owned(), self.path.clone(), entry.line);
        if !entry.allows_namespace(namespace) {
            let namespace = namespace.to_owned();
            return Some(VerifyError::NamespaceNotAllowed {
                fingerprint,
                file,
                line,
                namespace,
            });
        }
        if let Some(valid_after) = entry.options.valid_after.filter(|&t| at < t) {
            return Some(VerifyError::NotYetValid {
                fingerprint,
                file,
                line,
                valid_after,
            });
        }
        let valid_before = entry.options.valid_before.filter(|&t| at > t)?;
        Some(VerifyError::Expired {
            fingerprint,
            file,
            line,
            valid_before,
        })
    }
}
