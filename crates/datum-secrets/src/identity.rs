//! Private keys that decrypt: an OpenSSH private key file (a host's
//! `/etc/ssh/ssh_host_ed25519_key`, an admin's `~/.ssh/id_ed25519`) or an age
//! identity file (`AGE-SECRET-KEY-1...` lines).
//!
//! Nothing here decides where a key lives: `apply` confines the path under
//! `--root`, the CLI takes `--identity`. Errors never quote the file's
//! content, since it is a private key.

use std::borrow::Cow;
use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use age::secrecy::{ExposeSecret as _, SecretString};
use datum_core::hint::Hinted;
use zeroize::Zeroizing;

use crate::key::PublicKey;
use crate::plaintext::Plaintext;

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
    KeyFile::read(path)?.open(passphrase)
}

/// An identity file read into zeroized memory and not opened yet, so a
/// caller can try one passphrase after another without reading it again.
pub struct KeyFile {
    path: PathBuf,
    bytes: Zeroizing<Vec<u8>>,
}

impl KeyFile {
    /// Reads the file whole, up to [`MAX_IDENTITY_FILE`].
    pub fn read(path: &Path) -> Result<KeyFile, ReadIdentityError> {
        let file = std::fs::File::open(path).map_err(|source| ReadIdentityError::Io {
            path: path.to_owned(),
            source,
        })?;
        KeyFile::from_file(path, file)
    }

    /// Reads a file the caller opened (where and how it may be opened is
    /// the caller's to decide) whole, up to [`MAX_IDENTITY_FILE`]; `path`
    /// names it in messages.
    pub fn from_file(path: &Path, file: std::fs::File) -> Result<KeyFile, ReadIdentityError> {
        let io = |source| ReadIdentityError::Io {
            path: path.to_owned(),
            source,
        };
        let bytes =
            Plaintext::read_from(file.take(MAX_IDENTITY_FILE + 1), MAX_IDENTITY_FILE as usize)
                .map_err(io)?
                .ok_or_else(|| ReadIdentityError::TooLarge {
                    path: path.to_owned(),
                })?;
        Ok(KeyFile {
            path: path.to_owned(),
            bytes: bytes.into_zeroizing(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The identities the file holds; `passphrase` opens a protected one
    /// (see [`parse_identities`]).
    pub fn open(&self, passphrase: Option<&str>) -> Result<Vec<Identity>, ReadIdentityError> {
        parse_identities(&self.bytes, passphrase).map_err(|source| ReadIdentityError::Invalid {
            path: self.path.clone(),
            source,
        })
    }
}

/// Shows the path only.
impl fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Parses the content of an identity file: an OpenSSH private key (Ed25519
/// or RSA, also RSA in PEM), an age identity file, which may hold several
/// keys, or an age identity file encrypted with a passphrase (`age -p`, as
/// the `age` command accepts). `passphrase` opens a passphrase-protected
/// SSH key or age identity file and is ignored otherwise.
pub fn parse_identities(
    bytes: &[u8],
    passphrase: Option<&str>,
) -> Result<Vec<Identity>, IdentityError> {
    if is_age_file(bytes) {
        return parse_encrypted_age(bytes, passphrase, affordable_memory());
    }
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
            let by = Protection::SshKey;
            let passphrase = passphrase.ok_or(IdentityError::PassphraseProtected { by })?;
            key.decrypt(SecretString::from(passphrase.to_owned()))
                .map_err(|_| IdentityError::WrongPassphrase { by })?
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

/// An age file, armored or binary: here, an identity file encrypted with
/// `age -p`.
fn is_age_file(bytes: &[u8]) -> bool {
    let start = bytes.trim_ascii_start();
    start.starts_with(b"age-encryption.org/")
        || start.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----")
}

/// An age identity file encrypted with a passphrase, the way `age -p`
/// writes it and `age -d -i` reads it.
fn parse_encrypted_age(
    bytes: &[u8],
    passphrase: Option<&str>,
    memory: u64,
) -> Result<Vec<Identity>, IdentityError> {
    let by = Protection::AgeFile;
    let decryptor = age::Decryptor::new_buffered(age::armor::ArmoredReader::new(bytes))
        .map_err(|_| IdentityError::InvalidAge)?;
    if !decryptor.is_scrypt() {
        return Err(IdentityError::EncryptedToKeys);
    }
    let passphrase = passphrase.ok_or(IdentityError::PassphraseProtected { by })?;
    let mut scrypt = age::scrypt::Identity::new(SecretString::from(passphrase.to_owned()));
    let allowed = affordable_work_factor(memory);
    scrypt.set_max_work_factor(allowed);
    let mut reader = decryptor
        .decrypt(std::iter::once(&scrypt as &dyn age::Identity))
        .map_err(|e| match e {
            age::DecryptError::DecryptionFailed | age::DecryptError::KeyDecryptionFailed => {
                IdentityError::WrongPassphrase { by }
            }
            age::DecryptError::ExcessiveWork { required, .. } => {
                IdentityError::TooMuchWork { required, allowed }
            }
            _ => IdentityError::InvalidAge,
        })?;
    let payload = crate::plaintext::read_payload(&mut reader, bytes.len())
        .map_err(|_| IdentityError::InvalidAge)?;
    let text = std::str::from_utf8(&payload).map_err(|_| IdentityError::Unrecognized)?;
    let identities = parse_age_file(text)?;
    if identities.is_empty() {
        return Err(IdentityError::NoKeys);
    }
    Ok(identities)
}

/// The most scrypt work Datum does to open an identity file, whatever the
/// memory: 2^22 takes 4 GiB and several seconds, past what `age -p` picks
/// on any machine today (about one second of work), and age's own advice.
const WORK_FACTOR_MAX: u8 = 22;

/// The memory scrypt takes at work factor 2^`log_n` with age's parameters
/// (r = 8): 128 * r bytes for each of its 2^`log_n` blocks.
fn scrypt_memory(log_n: u8) -> u64 {
    1024u64.checked_shl(u32::from(log_n)).unwrap_or(u64::MAX)
}

fn scrypt_size(log_n: u8) -> String {
    let bytes = scrypt_memory(log_n);
    if bytes >= 1 << 30 {
        format!("{} GiB of memory", bytes >> 30)
    } else {
        format!("{} MiB of memory", bytes >> 20)
    }
}

/// The largest scrypt work factor whose memory is at most half of
/// `memory`, the bytes this process may still use, and at most
/// [`WORK_FACTOR_MAX`]: an identity file asking for more is refused before
/// any work, instead of running the machine out of memory (2^22 under a
/// 4 GB limit aborted).
pub fn affordable_work_factor(memory: u64) -> u8 {
    (1..=WORK_FACTOR_MAX)
        .rev()
        .find(|&n| scrypt_memory(n) <= memory / 2)
        .unwrap_or(1)
}

/// The bytes this process may still allocate, as far as it can tell: the
/// least of the memory the system has available, the limits on its address
/// space and data (`ulimit -v`, `-d`), and its control group's limit.
fn affordable_memory() -> u64 {
    let mut least = u64::MAX;
    if let Ok(info) = std::fs::read_to_string("/proc/meminfo")
        && let Some(kb) = info
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    {
        least = least.min(kb.saturating_mul(1024));
    }
    if let Ok(limits) = std::fs::read_to_string("/proc/self/limits") {
        for name in ["Max address space", "Max data size"] {
            let soft = limits
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok());
            if let Some(bytes) = soft {
                least = least.min(bytes);
            }
        }
    }
    for file in [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ] {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(bytes) = text.trim().parse::<u64>()
        {
            least = least.min(bytes);
        }
    }
    least
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
    PassphraseProtected { by: Protection },
    /// Protected by a passphrase, and the one given does not open it.
    #[error("does not open with the passphrase given")]
    WrongPassphrase { by: Protection },
    /// An age file encrypted to keys: a secret, not an identity file.
    #[error("is an age file encrypted to keys, not an identity file")]
    EncryptedToKeys,
    /// Starts like an age file but does not parse or decrypt.
    #[error("is a damaged passphrase-protected age identity file")]
    InvalidAge,
    /// A passphrase-protected age identity file whose scrypt work factor is
    /// far above what this machine does in a second.
    #[error(
        "needs scrypt work factor 2^{required} ({}) to open, more than this machine affords (2^{allowed}, {})",
        scrypt_size(*required),
        scrypt_size(*allowed)
    )]
    TooMuchWork { required: u8, allowed: u8 },
    /// A line of an age identity file that is not a key or a comment.
    #[error("line {line} is {what}")]
    BadAgeLine { line: usize, what: &'static str },
}

/// What the user can do about it.
impl Hinted for IdentityError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
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
            IdentityError::PassphraseProtected { .. } => {
                "Datum asks for the passphrase on a terminal; without one, give an age identity file or a copy of the key without a passphrase"
            }
            IdentityError::WrongPassphrase { by } => by.check_hint(),
            IdentityError::EncryptedToKeys => {
                "give the identity file itself (an identity file encrypted with `age -p` is opened with its passphrase)"
            }
            IdentityError::InvalidAge => "check that the file is complete and unmodified",
            IdentityError::TooMuchWork { .. } => {
                "re-encrypt the identity file with `age -p` on a machine like this one, which picks a work factor it affords"
            }
        }))
    }
}

/// What protects a key file with a passphrase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// An OpenSSH private key with a passphrase (`ssh-keygen -N`).
    SshKey,
    /// An age identity file encrypted with a passphrase (`age -p`).
    AgeFile,
}

impl Protection {
    /// How to check a passphrase with the tool that set it.
    pub fn check_hint(self) -> &'static str {
        match self {
            Protection::SshKey => {
                "check the passphrase with `ssh-keygen -y -f KEY`, which prints the public key when it is right"
            }
            Protection::AgeFile => {
                "check the passphrase with `age -d KEY`, which prints the identity when it is right"
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

/// What is wrong with the key, or where it was looked for.
impl Hinted for ReadIdentityError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            ReadIdentityError::Invalid { source, .. } => source.hint(),
            _ => Some("check the path given to --identity (or DATUM_IDENTITY)".into()),
        }
    }
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
