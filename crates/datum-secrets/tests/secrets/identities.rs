//! SSH private keys as `ssh-keygen` writes them, read as identities; and
//! fingerprints as `ssh-keygen` prints them.

use age::armor::{ArmoredWriter, Format};
use age::secrecy::SecretString;
use datum_core::hint::Hinted as _;
use datum_secrets::{
    DecryptError, Identity, IdentityError, KeyKind, Protection, ReadIdentityError, decrypt,
    encrypt, parse_identities, read_identities,
};

use crate::support::ssh_keygen;

#[test]
fn fingerprints_equal_ssh_keygen() {
    for (kind, extra) in [("ed25519", &[][..]), ("rsa", &["-b", "2048"][..])] {
        let key = ssh_keygen(kind, "", extra);
        assert_eq!(
            key.public().fingerprint().as_str(),
            key.keygen_fingerprint(),
            "{kind}"
        );
    }
}

#[test]
fn an_ssh_identity_answers_to_its_pub_file() {
    let key = ssh_keygen("ed25519", "", &[]);
    let identities = key.identities();
    assert_eq!(identities.len(), 1);
    assert_eq!(identities[0].public_key(), &key.public());
    assert_eq!(identities[0].public_key().kind(), KeyKind::SshEd25519);
    assert!(identities[0].to_age_identity_file().is_none());
}

#[test]
fn rsa_keys_in_openssh_and_pem_format_decrypt() {
    for extra in [&["-b", "2048"][..], &["-b", "2048", "-m", "PEM"][..]] {
        let key = ssh_keygen("rsa", "", extra);
        let identities = key.identities();
        assert_eq!(identities[0].public_key(), &key.public(), "{extra:?}");
        let sealed = encrypt(b"rsa secret", &[key.public()]).unwrap();
        let opened = decrypt(&sealed, &identities).unwrap();
        assert_eq!(opened.as_bytes(), b"rsa secret", "{extra:?}");
    }
}

#[test]
fn a_passphrase_protected_key_needs_its_passphrase() {
    let key = ssh_keygen("ed25519", "correct horse", &[]);
    let e = read_identities(&key.private, None).unwrap_err();
    assert!(
        matches!(
            e,
            ReadIdentityError::Invalid {
                source: IdentityError::PassphraseProtected {
                    by: Protection::SshKey
                },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("protected by a passphrase"), "{e}");

    let e = read_identities(&key.private, Some("wrong")).unwrap_err();
    assert!(
        matches!(
            e,
            ReadIdentityError::Invalid {
                source: IdentityError::WrongPassphrase {
                    by: Protection::SshKey
                },
                ..
            }
        ),
        "{e:?}"
    );

    let identities = read_identities(&key.private, Some("correct horse")).unwrap();
    assert_eq!(identities[0].public_key(), &key.public());
    let sealed = encrypt(b"behind a passphrase", &[key.public()]).unwrap();
    assert_eq!(
        decrypt(&sealed, &identities).unwrap().as_bytes(),
        b"behind a passphrase"
    );
}

#[test]
fn a_passphrase_is_ignored_for_an_unprotected_key() {
    let key = ssh_keygen("ed25519", "", &[]);
    let identities = read_identities(&key.private, Some("unused")).unwrap();
    assert_eq!(identities[0].public_key(), &key.public());
}

#[test]
fn an_ecdsa_private_key_is_refused_by_name() {
    let key = ssh_keygen("ecdsa", "", &[]);
    let bytes = std::fs::read(&key.private).unwrap();
    let e = parse_identities(&bytes, None).unwrap_err();
    assert!(
        matches!(&e, IdentityError::UnsupportedSsh { what } if what.contains("ecdsa-sha2-nistp256")),
        "{e:?}"
    );
    assert!(e.hint().unwrap().contains("ed25519"));
}

#[test]
fn a_host_key_that_is_not_a_recipient_gets_the_distinct_error() {
    let (host, stranger) = (
        ssh_keygen("ed25519", "", &[]),
        ssh_keygen("ed25519", "", &[]),
    );
    let sealed = encrypt(b"for host only", &[host.public()]).unwrap();
    match decrypt(&sealed, &stranger.identities()) {
        Err(DecryptError::NotRecipient { tried }) => {
            assert_eq!(tried, [stranger.public().fingerprint().clone()]);
        }
        other => panic!("expected NotRecipient, got {other:?}"),
    }
}

#[test]
fn a_damaged_private_key_is_an_error_not_a_panic() {
    for kind in ["ed25519", "rsa"] {
        let key = ssh_keygen(
            kind,
            "",
            &["-b", "2048"][..if kind == "rsa" { 2 } else { 0 }],
        );
        let text = std::fs::read_to_string(&key.private).unwrap();
        let body_start = text.find('\n').unwrap() + 1;
        let body_end = text.rfind("-----END").unwrap();
        for at in (body_start..body_end).step_by(13) {
            let mut damaged = text.clone().into_bytes();
            if damaged[at] == b'\n' {
                continue;
            }
            damaged[at] = if damaged[at] == b'A' { b'z' } else { b'A' };
            // Any outcome but a panic; a key that still parses must still
            // be a key (some bytes, like padding and comments, are slack).
            if let Ok(identities) = parse_identities(&damaged, None) {
                assert_eq!(identities.len(), 1);
            }
        }
        // Cut short.
        let cut = &text.as_bytes()[..text.len() / 2];
        assert!(parse_identities(cut, None).is_err(), "{kind}");
    }
}

/// An age identity file holding `identity`, encrypted with `passphrase` the
/// way `age -p` does (armored or binary), at a small scrypt work factor.
fn age_protected(identity: &Identity, passphrase: &str, log_n: u8, armor: bool) -> Vec<u8> {
    use std::io::Write as _;
    let mut recipient = age::scrypt::Recipient::new(SecretString::from(passphrase.to_owned()));
    recipient.set_work_factor(log_n);
    let encryptor =
        age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            .unwrap();
    let format = if armor {
        Format::AsciiArmor
    } else {
        Format::Binary
    };
    let mut out = Vec::new();
    let armored = ArmoredWriter::wrap_output(&mut out, format).unwrap();
    let mut writer = encryptor.wrap_output(armored).unwrap();
    writer
        .write_all(identity.to_age_identity_file().unwrap().as_bytes())
        .unwrap();
    writer.finish().unwrap().finish().unwrap();
    out
}

#[test]
fn an_age_identity_file_encrypted_with_a_passphrase_opens_with_it() {
    let identity = Identity::generate_age();
    let sealed = encrypt(b"behind age -p", &[identity.public_key().clone()]).unwrap();
    for armor in [true, false] {
        let file = age_protected(&identity, "correct horse", 10, armor);
        let e = parse_identities(&file, None).unwrap_err();
        assert!(
            matches!(
                e,
                IdentityError::PassphraseProtected {
                    by: Protection::AgeFile
                }
            ),
            "{e:?}"
        );
        let e = parse_identities(&file, Some("wrong")).unwrap_err();
        assert!(
            matches!(
                e,
                IdentityError::WrongPassphrase {
                    by: Protection::AgeFile
                }
            ),
            "{e:?}"
        );
        assert!(e.hint().unwrap().contains("age -d KEY"), "{:?}", e.hint());
        let opened = parse_identities(&file, Some("correct horse")).unwrap();
        assert_eq!(opened.len(), 1);
        assert_eq!(opened[0].public_key(), identity.public_key());
        assert_eq!(
            decrypt(&sealed, &opened).unwrap().as_bytes(),
            b"behind age -p"
        );
    }
}

#[test]
fn an_age_file_that_is_no_protected_identity_is_refused_by_name() {
    // A secret, encrypted to keys, given where an identity belongs.
    let identity = Identity::generate_age();
    let secret = encrypt(b"not a key", &[identity.public_key().clone()]).unwrap();
    let e = parse_identities(&secret, Some("anything")).unwrap_err();
    assert!(matches!(e, IdentityError::EncryptedToKeys), "{e:?}");
    assert!(e.to_string().contains("encrypted to keys"), "{e}");
    // Cut short or damaged: an error, never a panic.
    let file = age_protected(&identity, "pw", 10, true);
    for cut in [file.len() / 3, file.len() / 2, file.len() - 40] {
        let e = parse_identities(&file[..cut], Some("pw")).unwrap_err();
        assert!(matches!(e, IdentityError::InvalidAge), "{cut}: {e:?}");
    }
    // A passphrase-protected file of something other than age keys.
    let mut recipient = age::scrypt::Recipient::new(SecretString::from("pw".to_owned()));
    recipient.set_work_factor(10);
    let sealed =
        age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            .unwrap();
    let mut out = Vec::new();
    let mut writer = sealed.wrap_output(&mut out).unwrap();
    std::io::Write::write_all(&mut writer, b"hello\n").unwrap();
    writer.finish().unwrap();
    let e = parse_identities(&out, Some("pw")).unwrap_err();
    assert!(
        matches!(e, IdentityError::BadAgeLine { line: 1, .. }),
        "{e:?}"
    );
}

#[test]
fn an_age_identity_file_asking_for_excessive_scrypt_work_is_refused_before_it() {
    let identity = Identity::generate_age();
    let file = age_protected(&identity, "pw", 10, false);
    // The stanza's work factor, raised to 2^40 (the MAC is checked after
    // the work, so the refusal must come first, or the test would hang).
    let text = String::from_utf8_lossy(&file).into_owned();
    let at = text.find("-> scrypt ").unwrap();
    let line_end = at + text[at..].find('\n').unwrap();
    assert!(text[..line_end].ends_with(" 10"));
    let mut raised = file.clone();
    raised[line_end - 2..line_end].copy_from_slice(b"40");
    let e = parse_identities(&raised, Some("pw")).unwrap_err();
    assert!(
        matches!(e, IdentityError::TooMuchWork { required: 40, .. }),
        "{e:?}"
    );
}
