//! SSH private keys as `ssh-keygen` writes them, read as identities; and
//! fingerprints as `ssh-keygen` prints them.

use datum_secrets::{
    DecryptError, IdentityError, KeyKind, ReadIdentityError, decrypt, encrypt, parse_identities,
    read_identities,
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
                source: IdentityError::PassphraseProtected,
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
                source: IdentityError::WrongPassphrase,
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
    assert!(e.hint().contains("ed25519"));
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
