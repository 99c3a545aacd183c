//! Reading private keys: the formats accepted and the errors for the rest.

use super::*;

fn err(text: &str) -> IdentityError {
    parse_identities(text.as_bytes(), None).expect_err(text)
}

fn secret_line(identity: &Identity) -> String {
    let file = identity.to_age_identity_file().unwrap();
    file.lines()
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"))
        .unwrap()
        .to_owned()
}

#[test]
fn a_generated_key_writes_a_file_that_reads_back() {
    let key = Identity::generate_age();
    let file = key.to_age_identity_file().unwrap();
    assert!(
        file.starts_with(&format!("# public key: {}\n", key.public_key())),
        "{}",
        &*file
    );
    let read = parse_identities(file.as_bytes(), None).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].public_key(), key.public_key());
}

#[test]
fn age_files_hold_several_keys_between_comments_and_blank_lines() {
    let (one, two) = (Identity::generate_age(), Identity::generate_age());
    let text = format!(
        "# created: by a test\n\n{}\n   # indented comment\n{}\r\n",
        secret_line(&one),
        secret_line(&two)
    );
    let read = parse_identities(text.as_bytes(), None).unwrap();
    let publics: Vec<&PublicKey> = read.iter().map(Identity::public_key).collect();
    assert_eq!(publics, [one.public_key(), two.public_key()]);
}

#[test]
fn a_bad_line_is_named_by_number_and_not_quoted() {
    let key = Identity::generate_age();
    let mut damaged = secret_line(&key);
    damaged.replace_range(20..21, if &damaged[20..21] == "Q" { "P" } else { "Q" });
    let text = format!("# c\n{}\n{damaged}\n", secret_line(&key));
    let e = err(&text);
    assert!(
        matches!(e, IdentityError::BadAgeLine { line: 3, .. }),
        "{e:?}"
    );
    let shown = format!("{e} {e:?}");
    assert!(
        !shown.contains("AGE-SECRET-KEY"),
        "the key must not be echoed: {shown}"
    );

    let e = err("AGE-SECRET-KEY-1\nhello\n");
    assert!(
        matches!(e, IdentityError::BadAgeLine { line: 1, .. }),
        "{e:?}"
    );
    let e = err(&format!("{}\nhello\n", secret_line(&key)));
    assert!(
        matches!(e, IdentityError::BadAgeLine { line: 2, .. }),
        "{e:?}"
    );
    let e = err("AGE-PLUGIN-YUBIKEY-1QQQ\n");
    assert!(e.to_string().contains("plugin"), "{e}");
}

#[test]
fn a_public_key_file_is_recognised() {
    let key = Identity::generate_age();
    let e = err(&format!("{}\n", key.public_key()));
    assert!(matches!(e, IdentityError::PublicKey), "{e:?}");
    let e = err(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJGQCHov3YjSOfDpVbgVzDl/b1LfIYibmbDxhNPdaNv root@web-01\n",
    );
    assert!(matches!(e, IdentityError::PublicKey), "{e:?}");
    assert!(e.hint().unwrap().contains(".pub"));
}

#[test]
fn empty_binary_and_foreign_pem_files() {
    assert!(matches!(err("# nothing\n\n"), IdentityError::NoKeys));
    assert!(matches!(err(""), IdentityError::NoKeys));
    let e = parse_identities(&[0xff, 0xfe, 0], None).unwrap_err();
    assert!(matches!(e, IdentityError::Unrecognized), "{e:?}");
    let e = err("-----BEGIN PRIVATE KEY-----\nMC4CAQ==\n-----END PRIVATE KEY-----\n");
    assert!(matches!(e, IdentityError::UnsupportedFormat), "{e:?}");
}

#[test]
fn a_damaged_openssh_key() {
    let e = err("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n");
    assert!(matches!(e, IdentityError::InvalidSsh), "{e:?}");
}

#[test]
fn debug_shows_the_public_half_only() {
    let key = Identity::generate_age();
    let shown = format!("{key:?}");
    assert!(
        shown.contains(key.public_key().fingerprint().as_str()),
        "{shown}"
    );
    assert!(!shown.contains("AGE-SECRET-KEY"), "{shown}");
}

#[test]
fn reading_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let e = read_identities(&missing, None).unwrap_err();
    assert!(matches!(e, ReadIdentityError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("missing"), "{e}");

    let public = dir.path().join("key.pub");
    std::fs::write(
        &public,
        format!("{}\n", Identity::generate_age().public_key()),
    )
    .unwrap();
    let e = read_identities(&public, None).unwrap_err();
    assert!(
        matches!(
            e,
            ReadIdentityError::Invalid {
                source: IdentityError::PublicKey,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("key.pub is a public key"), "{e}");
}

#[test]
fn an_oversized_file_is_not_read_into_memory() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    std::fs::write(&big, vec![b'#'; MAX_IDENTITY_FILE as usize + 1]).unwrap();
    let e = read_identities(&big, None).unwrap_err();
    assert!(matches!(e, ReadIdentityError::TooLarge { .. }), "{e:?}");
    // Exactly the limit is still read (and here holds no key).
    std::fs::write(&big, vec![b'#'; MAX_IDENTITY_FILE as usize]).unwrap();
    let e = read_identities(&big, None).unwrap_err();
    assert!(
        matches!(
            e,
            ReadIdentityError::Invalid {
                source: IdentityError::NoKeys,
                ..
            }
        ),
        "{e:?}"
    );
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_identities(&bytes, None);
        }

        #[test]
        fn on_age_like_lines(text in "(AGE-SECRET-KEY-1[A-Z0-9]{0,70}|# .{0,10}|\n){0,4}") {
            let _ = parse_identities(text.as_bytes(), None);
        }
    }
}

/// An age identity file sealed with `passphrase` at work factor 2^10,
/// with its stanza then claiming 2^`log_n` (its MAC, checked after the
/// work, no longer holds).
fn asking_for(log_n: u8) -> Vec<u8> {
    use std::io::Write as _;
    let identity = Identity::generate_age();
    let mut recipient = age::scrypt::Recipient::new(SecretString::from("pw".to_owned()));
    recipient.set_work_factor(10);
    let encryptor =
        age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            .unwrap();
    let mut out = Vec::new();
    let mut writer = encryptor.wrap_output(&mut out).unwrap();
    writer
        .write_all(identity.to_age_identity_file().unwrap().as_bytes())
        .unwrap();
    writer.finish().unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let at = text.find("-> scrypt ").unwrap();
    let end = at + text[at..].find('\n').unwrap();
    assert!(text[..end].ends_with(" 10"));
    let mut raised = out[..end - 2].to_vec();
    raised.extend_from_slice(log_n.to_string().as_bytes());
    raised.extend_from_slice(&out[end..]);
    raised
}

#[test]
fn the_scrypt_work_an_identity_file_may_ask_for_follows_the_memory_there_is() {
    // 2^n takes 2^(n + 10) bytes; half the memory is what is offered.
    assert_eq!(affordable_work_factor(4 << 30), 21);
    assert_eq!(affordable_work_factor(200 << 20), 16);
    assert_eq!(affordable_work_factor(u64::MAX), 22);
    assert_eq!(affordable_work_factor(0), 1);
}

#[test]
fn an_identity_file_asking_for_more_memory_than_there_is_is_refused_before_any_work() {
    // 2^18 takes 256 MiB; with 64 MiB to spare, 2^15 (32 MiB, half) is the most.
    let e = parse_encrypted_age(&asking_for(18), Some("pw"), 64 << 20).unwrap_err();
    assert!(
        matches!(
            e,
            IdentityError::TooMuchWork {
                required: 18,
                allowed: 15
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "needs scrypt work factor 2^18 (256 MiB of memory) to open, more than this machine affords (2^15, 32 MiB of memory)"
    );
}
