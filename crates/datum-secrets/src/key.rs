//! Public keys that hosts and admins declare, and the fingerprints that name
//! them in recipients files.
//!
//! A key is written the way the tools that made it print it: an OpenSSH
//! public key line (`ssh-ed25519 AAAA... comment`, also `ssh-rsa`) or a
//! native age recipient (`age1...`). Errors carry a byte range into the text
//! that was parsed, so a caller that knows where the text sits in a file can
//! point at `path:line:column`.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use base64::Engine as _;
use base64::prelude::{BASE64_STANDARD, BASE64_STANDARD_NO_PAD};
use datum_core::hint::Hinted;
use sha2::{Digest as _, Sha256};

/// The three kinds of key age can encrypt to that Datum accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyKind {
    /// An OpenSSH Ed25519 key, the default host key of current systems.
    SshEd25519,
    /// An OpenSSH RSA key of at least 2048 bits.
    SshRsa,
    /// A native age X25519 key (`age1...`).
    Age,
}

impl KeyKind {
    /// The word that starts such a key (`age` for native keys).
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::SshEd25519 => "ssh-ed25519",
            KeyKind::SshRsa => "ssh-rsa",
            KeyKind::Age => "age",
        }
    }
}

/// What names a key in a recipients file: `SHA256:...` for an SSH key,
/// exactly as `ssh-keygen -l` prints it, or the `age1...` key itself.
///
/// Fingerprints compare as text, so sorting them is stable across runs and
/// machines.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(Box<str>);

impl Fingerprint {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn of_ssh_blob(blob: &[u8]) -> Fingerprint {
        let digest = Sha256::digest(blob);
        Fingerprint(format!("SHA256:{}", BASE64_STANDARD_NO_PAD.encode(digest)).into())
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = &'static str;

    /// Accepts what [`Fingerprint::as_str`] produces and nothing else, so a
    /// recipients file cannot hold a fingerprint no key could have.
    fn from_str(text: &str) -> Result<Fingerprint, &'static str> {
        if let Some(hash) = text.strip_prefix("SHA256:") {
            return match BASE64_STANDARD_NO_PAD.decode(hash) {
                Ok(bytes) if bytes.len() == 32 => Ok(Fingerprint(text.into())),
                Ok(_) => Err("an SSH fingerprint holds 32 bytes (43 base64 characters)"),
                Err(_) => Err("the part after `SHA256:` is not unpadded base64"),
            };
        }
        if text.starts_with("age1") {
            return match age::x25519::Recipient::from_str(text) {
                Ok(key) if key.to_string() == text => Ok(Fingerprint(text.into())),
                Ok(_) => Err("an age key is written in lower case"),
                Err(reason) => Err(reason),
            };
        }
        Err("a fingerprint is `SHA256:...` (an SSH key) or `age1...` (an age key)")
    }
}

/// A public key a secret can be encrypted to.
///
/// Two keys are equal when their fingerprints are: the comment of an SSH key
/// is a label for people and changes nothing about who can decrypt.
#[derive(Clone)]
pub struct PublicKey {
    kind: KeyKind,
    /// The key without its comment: `ssh-ed25519 AAAA...` or `age1...`.
    text: Box<str>,
    comment: Option<Box<str>>,
    fingerprint: Fingerprint,
    pub(crate) recipient: AgeRecipient,
}

#[derive(Clone)]
pub(crate) enum AgeRecipient {
    Ssh(age::ssh::Recipient),
    Native(age::x25519::Recipient),
}

impl AgeRecipient {
    pub(crate) fn as_dyn(&self) -> &dyn age::Recipient {
        match self {
            AgeRecipient::Ssh(key) => key,
            AgeRecipient::Native(key) => key,
        }
    }
}

impl PublicKey {
    /// Parses one key. Surrounding whitespace is ignored; anything else that
    /// is not a key is an error pointing into `text`.
    pub fn parse(text: &str) -> Result<PublicKey, KeyError> {
        let start = text.len() - text.trim_start().len();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(KeyError::Empty);
        }
        let end = start + trimmed.len();
        if is_private_key(trimmed) {
            return Err(KeyError::PrivateKey { span: start..end });
        }
        // A key is one line: a break inside one would make two lines of a
        // `.recipients` file out of one entry.
        if let Some(at) = trimmed.find(['\n', '\r']) {
            return Err(KeyError::LineBreak {
                span: start + at..start + at + 1,
            });
        }
        let word_end = trimmed
            .find(char::is_whitespace)
            .map_or(end, |at| start + at);
        let first = &text[start..word_end];
        match first {
            "ssh-ed25519" | "ssh-rsa" => parse_ssh(text, start..word_end, end),
            _ if first.starts_with("age1") => parse_age(text, start..word_end, end),
            _ if is_known_ssh_type(first) => Err(KeyError::UnsupportedSshType {
                found: first.to_owned(),
                span: start..word_end,
            }),
            _ => Err(KeyError::UnknownType {
                found: first.chars().take(40).collect(),
                span: start..word_end,
            }),
        }
    }

    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    /// The comment after an SSH key (`root@web-01`), if any.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// The key as age and OpenSSH write it, without the comment.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for PublicKey {
    type Err = KeyError;

    fn from_str(text: &str) -> Result<PublicKey, KeyError> {
        PublicKey::parse(text)
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("kind", &self.kind)
            .field("fingerprint", &self.fingerprint.as_str())
            .field("comment", &self.comment)
            .finish()
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &PublicKey) -> bool {
        self.fingerprint == other.fingerprint
    }
}

impl Eq for PublicKey {}

impl PartialOrd for PublicKey {
    fn partial_cmp(&self, other: &PublicKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PublicKey {
    fn cmp(&self, other: &PublicKey) -> std::cmp::Ordering {
        self.fingerprint.cmp(&other.fingerprint)
    }
}

impl std::hash::Hash for PublicKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.fingerprint.hash(state);
    }
}

fn is_private_key(text: &str) -> bool {
    text.starts_with("-----BEGIN") || text.starts_with("AGE-SECRET-KEY-")
}

/// SSH key types OpenSSH can make that age cannot encrypt to, so the error
/// can say "not supported" rather than "not a key".
fn is_known_ssh_type(word: &str) -> bool {
    word == "ssh-dss"
        || word.starts_with("ecdsa-sha2-")
        || word.starts_with("sk-")
        || word.ends_with("-cert-v01@openssh.com")
}

/// `type base64 [comment]`, where the base64 decodes to an SSH wire blob
/// whose first string repeats the type.
fn parse_ssh(text: &str, type_span: Range<usize>, end: usize) -> Result<PublicKey, KeyError> {
    let stated = &text[type_span.clone()];
    let rest = &text[type_span.end..end];
    let blob_start = type_span.end + (rest.len() - rest.trim_start().len());
    if blob_start == end {
        return Err(KeyError::MissingKeyData { span: type_span });
    }
    let blob_end = text[blob_start..end]
        .find(char::is_whitespace)
        .map_or(end, |at| blob_start + at);
    let span = blob_start..blob_end;
    let encoded = &text[span.clone()];
    let blob = BASE64_STANDARD
        .decode(encoded)
        .map_err(|source| KeyError::BadBase64 {
            span: span.clone(),
            source,
        })?;
    let embedded = ssh_blob_type(&blob).ok_or(KeyError::InvalidSshKey {
        kind: stated.to_owned(),
        span: span.clone(),
    })?;
    if embedded != stated.as_bytes() {
        return Err(KeyError::TypeMismatch {
            stated: stated.to_owned(),
            embedded: String::from_utf8_lossy(embedded).chars().take(40).collect(),
            span,
        });
    }
    // The fields of the key (Ed25519: its type and 32 bytes; RSA: its
    // type, exponent and modulus), and nothing after them.
    let fields = if stated == "ssh-ed25519" { 2 } else { 3 };
    let used = ssh_blob_fields(&blob, fields).ok_or(KeyError::InvalidSshKey {
        kind: stated.to_owned(),
        span: span.clone(),
    })?;
    if used < blob.len() {
        return Err(KeyError::TrailingKeyData {
            kind: stated.to_owned(),
            extra: blob.len() - used,
            span,
        });
    }
    let canonical = format!("{stated} {}", BASE64_STANDARD.encode(&blob));
    let recipient = age::ssh::Recipient::from_str(&canonical).map_err(|e| {
        use age::ssh::ParseRecipientKeyError as E;
        match e {
            E::RsaModulusTooSmall => KeyError::RsaTooSmall { span: span.clone() },
            E::RsaModulusTooLarge => KeyError::RsaTooLarge { span: span.clone() },
            _ => KeyError::InvalidSshKey {
                kind: stated.to_owned(),
                span: span.clone(),
            },
        }
    })?;
    let comment = text[blob_end..end].trim();
    Ok(PublicKey {
        kind: if stated == "ssh-rsa" {
            KeyKind::SshRsa
        } else {
            KeyKind::SshEd25519
        },
        text: canonical.into(),
        comment: (!comment.is_empty()).then(|| comment.into()),
        fingerprint: Fingerprint::of_ssh_blob(&blob),
        recipient: AgeRecipient::Ssh(recipient),
    })
}

/// The key type string an SSH wire blob starts with (a big-endian u32
/// length, then that many bytes).
fn ssh_blob_type(blob: &[u8]) -> Option<&[u8]> {
    let (len, rest) = blob.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    rest.get(..len)
}

/// How many bytes the first `count` fields of an SSH wire blob take (each
/// a big-endian u32 length, then that many bytes); `None` when the blob
/// ends before them.
fn ssh_blob_fields(blob: &[u8], count: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..count {
        let len = blob.get(at..at + 4)?;
        let len = usize::try_from(u32::from_be_bytes(len.try_into().ok()?)).ok()?;
        at = at.checked_add(4 + len).filter(|&end| end <= blob.len())?;
    }
    Some(at)
}

fn parse_age(text: &str, span: Range<usize>, end: usize) -> Result<PublicKey, KeyError> {
    if span.end != end {
        let trailing =
            span.end + (text[span.end..end].len() - text[span.end..end].trim_start().len());
        return Err(KeyError::TrailingText {
            span: trailing..end,
        });
    }
    let word = &text[span.clone()];
    // Bech32 puts the type before the last `1`: `age` for X25519, longer
    // prefixes for post-quantum and plugin recipients.
    let prefix = word.rsplit_once('1').map_or(word, |(prefix, _)| prefix);
    if !prefix.eq_ignore_ascii_case("age") {
        return Err(KeyError::UnsupportedAgeType {
            found: prefix.chars().take(40).collect(),
            span,
        });
    }
    let recipient =
        age::x25519::Recipient::from_str(word).map_err(|reason| KeyError::InvalidAgeKey {
            reason,
            span: span.clone(),
        })?;
    let canonical = recipient.to_string();
    Ok(PublicKey {
        kind: KeyKind::Age,
        fingerprint: Fingerprint(canonical.as_str().into()),
        text: canonical.into(),
        comment: None,
        recipient: AgeRecipient::Native(recipient),
    })
}

/// Why a public key was refused. Each variant that points into the text
/// has a `span`: a byte range of the string given to [`PublicKey::parse`].
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Nothing but whitespace.
    #[error("the key is empty")]
    Empty,
    /// A private key (`-----BEGIN ...` or `AGE-SECRET-KEY-...`) where a
    /// public one belongs.
    #[error("this is a private key, not a public one")]
    PrivateKey { span: Range<usize> },
    /// The first word is neither an SSH key type nor an age key.
    #[error("`{found}` is not a key type Datum knows")]
    UnknownType { found: String, span: Range<usize> },
    /// A real SSH key type (ECDSA, DSA, security keys, certificates) that
    /// age cannot encrypt to.
    #[error("age cannot encrypt to `{found}` keys")]
    UnsupportedSshType { found: String, span: Range<usize> },
    /// An `age1...` word whose prefix is not plain `age`: a post-quantum or
    /// plugin recipient, which cannot be mixed with SSH recipients.
    #[error("`{found}` recipients are not supported")]
    UnsupportedAgeType { found: String, span: Range<usize> },
    /// An SSH key type with nothing after it.
    #[error("the key type is not followed by the key data")]
    MissingKeyData { span: Range<usize> },
    /// The SSH key data is not base64.
    #[error("the key data is not valid base64: {source}")]
    BadBase64 {
        span: Range<usize>,
        #[source]
        source: base64::DecodeError,
    },
    /// The key data names another type than the word before it.
    #[error("the key data is a `{embedded}` key, but the line says `{stated}`")]
    TypeMismatch {
        stated: String,
        embedded: String,
        span: Range<usize>,
    },
    /// A line break inside the key: a key is one line.
    #[error("a key is one line, and this one has a line break in it")]
    LineBreak { span: Range<usize> },
    /// Bytes in the key data after the key's own fields.
    #[error("the key data has {extra} bytes after the `{kind}` key")]
    TrailingKeyData {
        kind: String,
        extra: usize,
        span: Range<usize>,
    },
    /// The key data decodes but is not a valid key of its type.
    #[error("the key data is not a valid `{kind}` key")]
    InvalidSshKey { kind: String, span: Range<usize> },
    /// An RSA key under 2048 bits, which age refuses as too weak.
    #[error("the RSA key is shorter than 2048 bits")]
    RsaTooSmall { span: Range<usize> },
    /// An RSA key over 16384 bits, more than age will handle.
    #[error("the RSA key is longer than 16384 bits")]
    RsaTooLarge { span: Range<usize> },
    /// An `age1...` key whose checksum or encoding is wrong.
    #[error("not a valid age key: {reason}")]
    InvalidAgeKey {
        reason: &'static str,
        span: Range<usize>,
    },
    /// Text after an age key, which has no comment field.
    #[error("unexpected text after the age key")]
    TrailingText { span: Range<usize> },
}

/// What the user can do about it.
impl Hinted for KeyError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self {
            KeyError::Empty | KeyError::UnknownType { .. } => {
                "a key starts with `ssh-ed25519`, `ssh-rsa` or `age1`; a host's SSH key is in /etc/ssh/ssh_host_ed25519_key.pub"
            }
            KeyError::PrivateKey { .. } => {
                "never commit a private key; use the public half (`ssh-keygen -y -f KEY`, or the `# public key:` line of an age identity file) and replace the private key if it was shared"
            }
            KeyError::UnsupportedSshType { .. } | KeyError::RsaTooSmall { .. } => {
                "use an Ed25519 key: the host's /etc/ssh/ssh_host_ed25519_key.pub, or make one with `ssh-keygen -t ed25519`"
            }
            KeyError::UnsupportedAgeType { .. } => {
                "use a native X25519 age key (`age1` followed by 58 characters) or an SSH key"
            }
            KeyError::RsaTooLarge { .. } => "use an Ed25519 key or an RSA key of 4096 bits",
            KeyError::LineBreak { .. } => {
                "write each key on one line, as in its `.pub` file: `TYPE BASE64 [COMMENT]`"
            }
            KeyError::MissingKeyData { .. }
            | KeyError::TrailingKeyData { .. }
            | KeyError::BadBase64 { .. }
            | KeyError::TypeMismatch { .. }
            | KeyError::InvalidSshKey { .. } => {
                "copy the whole line of the `.pub` file: `TYPE BASE64 [COMMENT]`"
            }
            KeyError::InvalidAgeKey { .. } => {
                "copy the key again from the `# public key:` line or `age-keygen -y`"
            }
            KeyError::TrailingText { .. } => {
                "an age key takes no comment; put a note in a YAML comment (` # ...`) instead"
            }
        }))
    }
}

impl KeyError {
    /// The bytes of the parsed text the error is about; the whole text for
    /// [`KeyError::Empty`], which is `0..0`.
    pub fn span(&self) -> Range<usize> {
        match self {
            KeyError::Empty => 0..0,
            KeyError::PrivateKey { span }
            | KeyError::UnknownType { span, .. }
            | KeyError::UnsupportedSshType { span, .. }
            | KeyError::UnsupportedAgeType { span, .. }
            | KeyError::MissingKeyData { span }
            | KeyError::LineBreak { span }
            | KeyError::TrailingKeyData { span, .. }
            | KeyError::BadBase64 { span, .. }
            | KeyError::TypeMismatch { span, .. }
            | KeyError::InvalidSshKey { span, .. }
            | KeyError::RsaTooSmall { span }
            | KeyError::RsaTooLarge { span }
            | KeyError::InvalidAgeKey { span, .. }
            | KeyError::TrailingText { span } => span.clone(),
        }
    }
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
