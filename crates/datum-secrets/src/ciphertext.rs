//! Age ciphertext: encrypting to public keys, decrypting with identities,
//! and the hash the manifest records.
//!
//! Ciphertext is written ASCII-armored (`-----BEGIN AGE ENCRYPTED
//! FILE-----`). Git treats binary files as opaque: a pull request shows
//! "binary file changed", merges cannot show the conflict, and some review
//! tools hide the file. Armored text shows up as a changed text file like
//! any other, survives copy and paste, and needs no `.gitattributes`. The
//! cost is a third more bytes, which secrets are small enough to afford.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read, Write as _};

use age::armor::{ArmoredReader, ArmoredWriter, Format};
use sha2::{Digest as _, Sha256};

use crate::identity::Identity;
use crate::key::{Fingerprint, PublicKey};
use crate::plaintext::{Plaintext, read_payload};

/// Encrypts `plaintext` to every key in `recipients`, as armored age text.
///
/// Keys are sorted by fingerprint and repeated keys dropped first, so the
/// same set of keys gives the same header layout whatever order the caller
/// found them in (the bytes still differ on every call: age draws a fresh
/// file key each time).
pub fn encrypt(plaintext: &[u8], recipients: &[PublicKey]) -> Result<Vec<u8>, EncryptError> {
    encrypt_as(plaintext, recipients, Format::AsciiArmor)
}

/// Encrypts `plaintext` to every key in `recipients` as binary age: what a
/// sealed bundle carries, where nobody reads or diffs the bytes and a
/// third more of them for every host would cost.
pub fn encrypt_binary(plaintext: &[u8], recipients: &[PublicKey]) -> Result<Vec<u8>, EncryptError> {
    encrypt_as(plaintext, recipients, Format::Binary)
}

fn encrypt_as(
    plaintext: &[u8],
    recipients: &[PublicKey],
    format: Format,
) -> Result<Vec<u8>, EncryptError> {
    let unique: BTreeMap<&Fingerprint, &PublicKey> = recipients
        .iter()
        .map(|key| (key.fingerprint(), key))
        .collect();
    if unique.is_empty() {
        return Err(EncryptError::NoRecipients);
    }
    if unique.len() > MAX_RECIPIENTS {
        return Err(EncryptError::TooManyRecipients {
            count: unique.len(),
        });
    }
    let encryptor =
        age::Encryptor::with_recipients(unique.values().map(|key| key.recipient.as_dyn()))
            .map_err(|source| EncryptError::Age { source })?;
    let mut out = Vec::with_capacity(plaintext.len() * 4 / 3 + 1024);
    let armored = ArmoredWriter::wrap_output(&mut out, format)?;
    let mut writer = encryptor.wrap_output(armored)?;
    writer.write_all(plaintext)?;
    writer.finish()?.finish()?;
    Ok(out)
}

/// The most recipients a secret may be encrypted to: one stanza each in
/// its header. Decrypting tries an identity against each stanza (an age
/// key does a key exchange for every X25519 one), so the count bounds the
/// work a secret can ask of every host it reaches. A secret for more hosts
/// than this is better split.
pub const MAX_RECIPIENTS: usize = 10_000;

/// The most stanzas a secret's header may hold: one per recipient, and
/// the one of random type age adds to every file ("grease").
pub const MAX_STANZAS: usize = MAX_RECIPIENTS + 1;

/// The largest header a secret may have, in bytes: `MAX_STANZAS` stanzas
/// of the largest keys Datum takes (RSA, about 1 KB each), and room over.
pub const MAX_HEADER: usize = 16 << 20;

/// What the header of age ciphertext says, read without a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Its stanzas: one per recipient.
    pub stanzas: usize,
    /// Encrypted to a passphrase rather than to keys.
    pub passphrase: bool,
    /// Its length in bytes, once unarmored, up to and with its MAC line.
    len: usize,
}

/// Reads and checks the header of age ciphertext (armored or binary), as
/// `datum check` does for every secret: one pass over its lines, refusing
/// one over [`MAX_HEADER`] bytes or [`MAX_STANZAS`] stanzas before age
/// parses it, then age's own parser over the whole header at once.
pub fn header(ciphertext: &[u8]) -> Result<Header, HeaderError> {
    let len = scan(ciphertext)?;
    let decryptor = age::Decryptor::new_buffered(WholeHeader::new(ciphertext, len.bytes))
        .map_err(|e| HeaderError::Invalid { why: e.to_string() })?;
    Ok(Header {
        stanzas: len.stanzas,
        passphrase: decryptor.is_scrypt(),
        len: len.bytes,
    })
}

struct Scanned {
    bytes: usize,
    stanzas: usize,
}

/// Finds where the header ends (after its `---` MAC line) and counts its
/// stanzas, reading no more than [`MAX_HEADER`] bytes of it.
fn scan(ciphertext: &[u8]) -> Result<Scanned, HeaderError> {
    if ciphertext.is_empty() {
        return Err(HeaderError::Empty);
    }
    let armored = ciphertext.trim_ascii_start().starts_with(b"-----BEGIN");
    if !armored && !ciphertext.starts_with(VERSION_LINE) {
        return Err(HeaderError::NotAge);
    }
    let mut reader = ArmoredReader::new(ciphertext);
    let mut buf: Vec<u8> = Vec::new();
    let mut line_start = 0;
    let mut stanzas = 0;
    let mut chunk = [0u8; 8192];
    loop {
        let n = reader
            .read(&mut chunk)
            .map_err(|e| HeaderError::Invalid { why: e.to_string() })?;
        if n == 0 {
            return Err(if buf.is_empty() {
                HeaderError::Empty
            } else if !buf.starts_with(VERSION_LINE) {
                HeaderError::NotAge
            } else {
                HeaderError::Unterminated
            });
        }
        let from = buf.len();
        buf.extend_from_slice(&chunk[..n]);
        for at in memchr_all(&buf[from..]).map(|i| from + i) {
            let line = &buf[line_start..at];
            if line_start == 0 {
                if line != &VERSION_LINE[..VERSION_LINE.len() - 1] {
                    return Err(HeaderError::NotAge);
                }
            } else if line.starts_with(b"-> ") {
                stanzas += 1;
                if stanzas > MAX_STANZAS {
                    return Err(HeaderError::TooManyStanzas);
                }
            } else if line.starts_with(b"---") {
                return Ok(Scanned {
                    bytes: at + 1,
                    stanzas,
                });
            }
            line_start = at + 1;
        }
        if line_start == 0 && buf.len() >= VERSION_LINE.len() && !buf.starts_with(VERSION_LINE) {
            return Err(HeaderError::NotAge);
        }
        if buf.len() > MAX_HEADER {
            return Err(HeaderError::TooLarge);
        }
    }
}

const VERSION_LINE: &[u8] = b"age-encryption.org/v1\n";

/// The offsets of the newlines in `bytes`.
fn memchr_all(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
}

/// Age's header parser (0.12, pinned) asks its reader for one more line
/// each time the header is incomplete and parses the whole header again
/// from its start: quadratic in the header's lines (40,000 stanzas took
/// two minutes). This reader answers that first request with the whole
/// header, which [`scan`] has already measured, so age parses it once.
struct WholeHeader<'a> {
    inner: ArmoredReader<io::BufReader<&'a [u8]>>,
    header: usize,
    given: bool,
    #[cfg(test)]
    requests: usize,
}

impl<'a> WholeHeader<'a> {
    fn new(ciphertext: &'a [u8], header: usize) -> Self {
        WholeHeader {
            inner: ArmoredReader::new(ciphertext),
            header,
            given: false,
            #[cfg(test)]
            requests: 0,
        }
    }
}

impl Read for WholeHeader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl BufRead for WholeHeader<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
    }
    fn read_until(&mut self, byte: u8, buf: &mut Vec<u8>) -> io::Result<usize> {
        #[cfg(test)]
        {
            self.requests += 1;
        }
        if self.given {
            return self.inner.read_until(byte, buf);
        }
        self.given = true;
        (&mut self.inner).take(self.header as u64).read_to_end(buf)
    }
}

/// Why a secret's header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("the file is empty")]
    Empty,
    #[error("it does not start with `age-encryption.org/v1`")]
    NotAge,
    #[error("its header does not end (no `---` line)")]
    Unterminated,
    #[error("its header holds more than {MAX_STANZAS} stanzas (one per recipient, and age's own)")]
    TooManyStanzas,
    #[error("its header is larger than {} MiB", MAX_HEADER >> 20)]
    TooLarge,
    #[error("its header does not parse: {why}")]
    Invalid { why: String },
}

impl HeaderError {
    /// Whether the header asks for more than Datum reads, rather than
    /// being damaged.
    pub fn is_too_large(&self) -> bool {
        matches!(self, HeaderError::TooManyStanzas | HeaderError::TooLarge)
    }
}

/// Decrypts age ciphertext (armored or binary) with the first identity
/// that is among its recipients.
pub fn decrypt(ciphertext: &[u8], identities: &[Identity]) -> Result<Plaintext, DecryptError> {
    if identities.is_empty() {
        return Err(DecryptError::NoIdentities);
    }
    let header = header(ciphertext).map_err(|e| {
        if e.is_too_large() {
            DecryptError::TooLarge(e)
        } else {
            DecryptError::Corrupt { source: e.into() }
        }
    })?;
    let decryptor = age::Decryptor::new_buffered(WholeHeader::new(ciphertext, header.len))
        .map_err(|source| DecryptError::Corrupt {
            source: source.into(),
        })?;
    if decryptor.is_scrypt() {
        return Err(DecryptError::Passphrase);
    }
    let mut reader = decryptor
        .decrypt(identities.iter().map(Identity::as_age))
        .map_err(|source| match source {
            age::DecryptError::NoMatchingKeys => DecryptError::NotRecipient {
                tried: identities
                    .iter()
                    .map(|id| id.public_key().fingerprint().clone())
                    .collect(),
            },
            source => DecryptError::Corrupt {
                source: source.into(),
            },
        })?;
    let mut payload =
        read_payload(&mut reader, ciphertext.len()).map_err(|source| DecryptError::Corrupt {
            source: source.into(),
        })?;
    Ok(Plaintext::new(std::mem::take(&mut *payload)))
}

/// The lowercase hex SHA-256 of ciphertext bytes, as the manifest records
/// it (`secret_sha256`): a change to the file is a change to the hash,
/// without anyone decrypting.
pub fn ciphertext_sha256(ciphertext: &[u8]) -> String {
    Sha256::digest(ciphertext)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Why encryption failed.
#[derive(Debug, thiserror::Error)]
pub enum EncryptError {
    /// The recipient list was empty: the result could never be decrypted.
    #[error("a secret needs at least one recipient")]
    NoRecipients,
    /// More keys than a secret's header may hold ([`MAX_STANZAS`]).
    #[error(
        "a secret may be encrypted to at most {MAX_STANZAS} keys, and this one has {count}: split it into secrets for fewer hosts"
    )]
    TooManyRecipients { count: usize },
    /// Age refused the recipients.
    #[error("age cannot encrypt to these keys: {source}")]
    Age {
        #[source]
        source: age::EncryptError,
    },
    /// Writing the ciphertext failed.
    #[error("cannot write the ciphertext: {0}")]
    Io(#[from] std::io::Error),
}

/// Why decryption failed.
#[derive(Debug, thiserror::Error)]
pub enum DecryptError {
    /// No identity was given to decrypt with.
    #[error("no identity to decrypt with")]
    NoIdentities,
    /// The ciphertext is intact but none of the identities is among its
    /// recipients: the secret must be re-encrypted to include this key.
    #[error(
        "none of the keys given ({}) is a recipient of this secret",
        join(tried)
    )]
    NotRecipient { tried: Vec<Fingerprint> },
    /// The file is encrypted to a passphrase, not to keys.
    #[error("the secret is encrypted with a passphrase, not to keys")]
    Passphrase,
    /// The header asks for more work than Datum does for one secret.
    #[error("the ciphertext is refused: {0}")]
    TooLarge(HeaderError),
    /// Not age ciphertext, or age ciphertext that was changed or cut short:
    /// the header, its MAC or the payload does not check out.
    #[error("the ciphertext is damaged or is not an age file: {source}")]
    Corrupt {
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn join(fingerprints: &[Fingerprint]) -> String {
    let names: Vec<&str> = fingerprints.iter().map(Fingerprint::as_str).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_lowercase_hex_of_the_bytes() {
        // The SHA-256 of "abc" from FIPS 180-2, appendix B.1.
        assert_eq!(
            ciphertext_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn an_empty_recipient_list_is_refused() {
        assert!(matches!(
            encrypt(b"x", &[]),
            Err(EncryptError::NoRecipients)
        ));
    }

    #[test]
    fn decrypting_with_no_identity_is_refused() {
        let key = Identity::generate_age();
        let sealed = encrypt(b"x", &[key.public_key().clone()]).unwrap();
        assert!(matches!(
            decrypt(&sealed, &[]),
            Err(DecryptError::NoIdentities)
        ));
    }

    /// An armored-or-binary header of `n` stanzas that age would refuse
    /// only after parsing it.
    fn stanzas(n: usize) -> Vec<u8> {
        let mut age = b"age-encryption.org/v1\n".to_vec();
        for _ in 0..n {
            age.extend_from_slice(b"-> x y\nAAAA\n");
        }
        age.extend_from_slice(b"--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
        age.extend_from_slice(&[0; 64]);
        age
    }

    #[test]
    fn a_header_of_too_many_stanzas_is_refused_before_age_parses_it() {
        let many = stanzas(MAX_STANZAS + 1);
        assert_eq!(header(&many), Err(HeaderError::TooManyStanzas));
        let key = Identity::generate_age();
        let e = decrypt(&many, &[key]).unwrap_err();
        assert!(
            matches!(e, DecryptError::TooLarge(HeaderError::TooManyStanzas)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "the ciphertext is refused: its header holds more than 10001 stanzas (one per recipient, and age's own)"
        );
    }

    #[test]
    fn an_empty_or_garbage_file_has_no_header() {
        assert_eq!(header(b""), Err(HeaderError::Empty));
        assert_eq!(header(b"hello\n"), Err(HeaderError::NotAge));
        assert_eq!(header(&[b'x'; 100_000]), Err(HeaderError::NotAge));
        assert_eq!(
            header(b"age-encryption.org/v1\n-> X25519 abc\n"),
            Err(HeaderError::Unterminated)
        );
        // Well formed lines age itself refuses: a stanza without a body.
        assert!(matches!(
            header(b"age-encryption.org/v1\n--- AAAA\n"),
            Err(HeaderError::Invalid { .. })
        ));
    }

    #[test]
    fn a_header_counts_one_stanza_per_recipient() {
        let keys: Vec<PublicKey> = (0..3)
            .map(|_| Identity::generate_age().public_key().clone())
            .collect();
        let sealed = encrypt(b"x", &keys).unwrap();
        let h = header(&sealed).unwrap();
        // Age adds one stanza of its own (grease) to some files.
        assert!((3..=4).contains(&h.stanzas), "{h:?}");
        assert!(!h.passphrase);
    }

    #[test]
    fn age_is_handed_the_whole_header_in_one_request() {
        let keys: Vec<PublicKey> = (0..200)
            .map(|_| Identity::generate_age().public_key().clone())
            .collect();
        let sealed = encrypt(b"x", &keys).unwrap();
        let len = header(&sealed).unwrap().len;
        let mut reader = WholeHeader::new(&sealed, len);
        age::Decryptor::new_buffered(&mut reader).unwrap();
        // One request per line would be over 600 (and as many parses of
        // the header so far).
        assert_eq!(reader.requests, 1);
    }

    #[test]
    fn encrypting_to_more_keys_than_a_header_may_hold_is_refused() {
        let keys: Vec<PublicKey> = (0..=MAX_RECIPIENTS)
            .map(|_| Identity::generate_age().public_key().clone())
            .collect();
        assert!(matches!(
            encrypt(b"x", &keys),
            Err(EncryptError::TooManyRecipients { count }) if count == MAX_RECIPIENTS + 1
        ));
        // The most it takes is sealed, and reads back.
        let sealed = encrypt(b"x", &keys[..MAX_RECIPIENTS]).unwrap();
        assert!(header(&sealed).unwrap().stanzas >= MAX_RECIPIENTS);
    }

    #[test]
    fn output_is_armored_text() {
        let key = Identity::generate_age();
        let sealed = encrypt(b"x", &[key.public_key().clone()]).unwrap();
        let text = String::from_utf8(sealed).expect("armor is ASCII");
        assert!(
            text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----\n"),
            "{text}"
        );
        assert!(
            text.ends_with("-----END AGE ENCRYPTED FILE-----\n"),
            "{text}"
        );
    }
}
