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
use std::io::Write as _;

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
    let unique: BTreeMap<&Fingerprint, &PublicKey> = recipients
        .iter()
        .map(|key| (key.fingerprint(), key))
        .collect();
    if unique.is_empty() {
        return Err(EncryptError::NoRecipients);
    }
    let encryptor =
        age::Encryptor::with_recipients(unique.values().map(|key| key.recipient.as_dyn()))
            .map_err(|source| EncryptError::Age { source })?;
    let mut out = Vec::with_capacity(plaintext.len() * 4 / 3 + 1024);
    let armored = ArmoredWriter::wrap_output(&mut out, Format::AsciiArmor)?;
    let mut writer = encryptor.wrap_output(armored)?;
    writer.write_all(plaintext)?;
    writer.finish()?.finish()?;
    Ok(out)
}

/// Decrypts age ciphertext (armored or binary) with the first identity
/// that is among its recipients.
pub fn decrypt(ciphertext: &[u8], identities: &[Identity]) -> Result<Plaintext, DecryptError> {
    if identities.is_empty() {
        return Err(DecryptError::NoIdentities);
    }
    let decryptor =
        age::Decryptor::new_buffered(ArmoredReader::new(ciphertext)).map_err(|source| {
            DecryptError::Corrupt {
                source: source.into(),
            }
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
