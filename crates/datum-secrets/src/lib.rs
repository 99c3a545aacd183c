//! Secrets for Datum: age encryption to the keys hosts and admins declare,
//! decryption with a host's or an admin's private key, and the recipients
//! file that records who a secret was encrypted to.
//!
//! This crate holds what the core must not: randomness and key files. The
//! core knows a secret only as a ciphertext path and its hash.
//!
//! - [`key`]: public keys ([`PublicKey::parse`]: `ssh-ed25519`, `ssh-rsa`,
//!   `age1...`) and their [`Fingerprint`]s.
//! - [`identity`]: private keys that decrypt ([`read_identities`],
//!   [`parse_identities`], [`KeyFile`] to try passphrases): OpenSSH private
//!   keys and age identity files, plain or passphrase-protected.
//! - [`ciphertext`]: [`encrypt`] to public keys as armored age text,
//!   [`decrypt`] with identities, [`ciphertext_sha256`] for the manifest.
//! - [`plaintext`]: [`Plaintext`], decrypted bytes zeroed on drop and never
//!   printed.
//! - [`fleet`]: the recipients each secret of a fleet should have, from
//!   the resolution, and the `check` of its recipients file ([`Plan`]).
//! - [`recipients`]: the `PATH.recipients` file ([`Recipients`]), its
//!   strict parser and writer, and [`Recipients::compare`] for rekeying.
//! - [`store`]: the fleet's secret files as `datum secret` works on them
//!   ([`Store`]): encrypted to their recipients, opened, edited through a
//!   [`scratch`] copy that is wiped, rekeyed.
#![forbid(unsafe_code)]

pub mod ciphertext;
pub mod fleet;
pub mod identity;
pub mod key;
pub mod plaintext;
pub mod recipients;
pub mod scratch;
pub mod store;

pub use ciphertext::{
    DecryptError, EncryptError, Header, HeaderError, MAX_RECIPIENTS, MAX_STANZAS,
    ciphertext_sha256, decrypt, encrypt, encrypt_binary, header,
};
pub use fleet::{Plan, SecretPlan, Stored};
pub use identity::{
    Identity, IdentityError, KeyFile, MAX_IDENTITY_FILE, Protection, ReadIdentityError,
    parse_identities, read_identities,
};
pub use key::{Fingerprint, KeyError, KeyKind, PublicKey};
pub use plaintext::Plaintext;
pub use recipients::{
    Holder, Recipient, Recipients, RecipientsChange, RecipientsError, RecipientsErrorKind,
    recipients_path,
};
pub use store::{Creating, Edited, EditorEnd, Sealed, Store, StoreError};
