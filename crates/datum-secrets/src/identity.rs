//! Private keys that decrypt: an OpenSSH private key file (a host's
//! `/etc/ssh/ssh_host_ed25519_key`, an admin's `~/.ssh/id_ed25519`) or an age
//! identity file (`AGE-SECRET-KEY-1...` lines).
//!
//! Nothing here decides where a key lives: `apply` confines the path under
//! `--root`, the CLI takes `--identity`. Errors never quote the file's
//! content, since it is a private key.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use age::secrecy::{ExposeSecret as _, SecretString};
use zeroize::Zeroizing;

use crate::key::PublicKey;

/// More than any key file: a 16384-bit RSA key is about 13 KiB. Reading
/// stops here so a wrong path (a log, a device) cannot exhaust memory.
pub const MAX_IDENTITY_FILE: u64 = 1 << 20;

/// A private key and the public key it answers to.
pub struct Identity {
    secret: Secret,
    public: PublicKey,
}

enum Secret {
    Ssh(age::ssh::Identity),
    Native(age::x25519::Identity),
}

impl Identity {
    /// A new native age key, from the operating system's random source.
    pub fn generate_age() -> Identity {
        let secret = age::x25519::Identity::generate();
        let public = native_public(&secret);
        Identity {
            secret: Secret::Native(secret),
            public,
        }
    }

    /// The public key to declare in the fleet (a Host's `keys`, `admins`).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// For a native age key, the text of an identity file holding it, in
    /// the layout `age-keygen` writes; `None` for an SSH key, whose file the
    /// caller already has.
    pub fn to_age_identity_file(&self) -> Option<Zeroizing<String>> {
        match &self.secret {
            Secret::Native(key) => Some(Zeroizing::new(format!(
                "# public key: {}\n{}\n",
                self.public,
                key.to_string().expose_secret()
            ))),
            Secret::Ssh(_) => None,
        }
    }

    pub(crate) fn as_age(&self) -> &dyn age::Identity {
        match &self.secret {
            Secret::Ssh(key) => key,
            Secret::Native(key) => key,
        }
    }
}

/// Shows the public half only.
impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

fn native_public(secret: &age::x25519::Identity) -> PublicKey {
    PublicKey::parse(&secret.to_public().to_string())
        .expect("age writes its own public keys in the form it parses")
}

/// Reads and parses an identity file; see [`parse_identities`].
pub fn read_identities(
    path: &Path,
    passphrase: Option<&str>,
) -> Result<Vec<Identity>, ReadIdentityError> {
    let io = |source| ReadIdentityError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(MAX_IDENTITY_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_IDENTITY_FILE {
        return Err(ReadIdentityError::TooLarge {
            path: path.to_owned(),
        });
    }
    parse_identities(&bytes, passphrase).map_err(|source| ReadIdentityError::Invalid {
        path: path.to_owned(),
        source,
    })
}

/// Parses the content of an identity file: an OpenSSH private key (Ed25519
/// or RSA, also RSA in PEM) or an age identity file, which may hold several
/// keys. `passphrase` opens a passphrase-protected SSH key and is ignored
/// otherwise.
pub fn parse_identities(
    bytes: &[u8],
    passphrase: Option<&str>,
) -> Result<Vec<Identity>, IdentityError> {
    let text = std::str::from_utf8(bytes).map_err(|_| IdentityError::Unrecognized)?;
    let first = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .ok_or(IdentityError::NoKeys)?;
    if first == "-----BEGIN OPENSSH PRIVATE KEY-----" || first == "-----BEGIN RSA PRIVATE KEY-----"
    {
        return parse_ssh(text, passphrase).map(|identity| vec![identity]);
    }
    if first.starts_with("-----BEGIN") {
        return Err(IdentityError::UnsupportedFormat);
    }
    if PublicKey::parse(first).is_ok() {
        return Err(IdentityError::PublicKey);
    }
    parse_age_file(text)
}

fn parse_ssh(text: &str, passphrase: Option<&str>) -> Result<Identity, IdentityError> {
    use age::ssh::Identity as Ssh;
    let parsed = Ssh::from_buffer(text.as_bytes(), None).map_err(|_| IdentityError::InvalidSsh)?;
    let key = match parsed {
        Ssh::Unencrypted(key) => key,
        Ssh::Encrypted(key) => {
            let passphrase = passphrase.ok_or(IdentityError::PassphraseProtected)?;
            key.decrypt(SecretString::from(passphrase.to_owned()))
                .map_err(|_| IdentityError::WrongPassphrase)?
        }
        Ssh::Unsupported(why) => return Err(unsupported_ssh(why)),
    };
    let secret = Ssh::Unencrypted(key);
    let recipient =
        age::ssh::Recipient::try_from(secret.clone()).map_err(|_| IdentityError::InvalidSsh)?;
    let public = PublicKey::parse(&recipient.to_string()).map_err(|_| IdentityError::InvalidSsh)?;
    Ok(Identity {
        secret: Secret::Ssh(secret),
        public,
    })
}

fn unsupported_ssh(why: age::ssh::UnsupportedKey) -> IdentityError {
    use age::ssh::UnsupportedKey as U;
    IdentityError::UnsupportedSsh {
        what: match why {
            U::EncryptedPem => "a passphrase-protected PEM key".to_owned(),
            U::EncryptedSsh(cipher) => format!("a key encrypted with {cipher}"),
            U::Hardware(kind) => format!("a hardware security key ({kind})"),
            U::Type(kind) => format!("a `{kind}` key"),
        },
    }
}

/// Lines of `AGE-SECRET-KEY-1...`; blank lines and `#` comments between.
fn parse_age_file(text: &str) -> Result<Vec<Identity>, IdentityError> {
    let mut identities = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what| IdentityError::BadAgeLine {
            line: index + 1,
            what,
        };
        if line.starts_with("AGE-PLUGIN-") || line.starts_with("AGE-SECRET-KEY-PQ-") {
            return Err(bad(
                "a plugin or post-quantum identity, which Datum does not use",
            ));
        }
        if !line.starts_with("AGE-SECRET-KEY-1") {
            return Err(bad("neither an `AGE-SECRET-KEY-1` key nor a `#` comment"));
        }
        let secret = age::x25519::Identity::from_str(line).map_err(|_| bad("a damaged age key"))?;
        let public = native_public(&secret);
        identities.push(Identity {
            secret: Secret::Native(secret),
            public,
        });
    }
    Ok(identities)
}

/// Why the content of an identity file was refused. No variant quotes the
/// content.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// Only comments and blank lines.
    #[error("holds no key")]
    NoKeys,
    /// Neither an OpenSSH private key nor an age identity file.
    #[error("is neither an OpenSSH private key nor an age identity file")]
    Unrecognized,
    /// A PEM block of a kind age cannot read (PKCS#8, EC).
    #[error("is a private key in a format age cannot read")]
    UnsupportedFormat,
    /// A public key: the `.pub` file rather than the key beside it.
    #[error("is a public key; decrypting needs the private key")]
    PublicKey,
    /// Looks like an OpenSSH key but does not parse.
    #[error("is a damaged OpenSSH private key")]
    InvalidSsh,
    /// An SSH key age cannot decrypt with.
    #[error("is {what}, which cannot decrypt age files")]
    UnsupportedSsh { what: String },
    /// Protected by a passphrase, and none was given.
    #[error("is protected by a passphrase")]
    PassphraseProtected,
    /// Protected by a passphrase, and the one given does not open it.
    #[error("does not open with the passphrase given")]
    WrongPassphrase,
    /// A line of an age identity file that is not a key or a comment.
    #[error("line {line} is {what}")]
    BadAgeLine { line: usize, what: &'static str },
}

impl IdentityError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            IdentityError::NoKeys
            | IdentityError::Unrecognized
            | IdentityError::BadAgeLine { .. } => {
                "give an OpenSSH private key (such as /etc/ssh/ssh_host_ed25519_key) or an age identity file"
            }
            IdentityError::UnsupportedFormat => {
                "convert it with `ssh-keygen -p -f KEY`, which rewrites it in the OpenSSH format"
            }
            IdentityError::PublicKey => "give the file without `.pub`",
            IdentityError::InvalidSsh => "check that the file is complete and unmodified",
            IdentityError::UnsupportedSsh { .. } => {
                "use an Ed25519 key (`ssh-keygen -t ed25519`) or a native age key"
            }
            IdentityError::PassphraseProtected | IdentityError::WrongPassphrase => {
                "give the key's passphrase, or use a key without one"
            }
        }
    }
}

/// Why an identity file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadIdentityError {
    /// The file could not be opened or read.
    #[error("cannot read identity {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Larger than [`MAX_IDENTITY_FILE`]: not a key file.
    #[error("identity {} is larger than any key file", path.display())]
    TooLarge { path: PathBuf },
    /// Read, but not a usable key.
    #[error("identity {} {source}", path.display())]
    Invalid {
        path: PathBuf,
        #[source]
        source: IdentityError,
    },
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
