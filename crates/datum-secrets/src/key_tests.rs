//! Public keys and their fingerprints, against what ssh-keygen printed.

// Keys below were made with `ssh-keygen` for these tests; the expected
// fingerprints are what `ssh-keygen -lf` printed for them. The integration
// tests compare with ssh-keygen live, on fresh keys.
use super::*;

const ED25519: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJGQCHov3YjSOfDpVbgVzDl/b1LfIYibmbDxhNPdaNv root@web-01";
const ED25519_FP: &str = "SHA256:e1Nm0jxvGYDY1U1WrawqcyTSaDLNwvyGBHNRGGsDkJg";
const RSA2048: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDVlf3SEXanUCp/KpGWobWA9aYewqu52RlIu/e6oztXBzJ88e+o2dpzvTACx0iLLucvUpqWf/1v7IKAABaGSQKx3Aej2Zg4nkWZBxPwuSP3V4xZ7chbE9uP5jcm81ioHpMfzaDgzyk+vfQr/84dA1/R81tDX8gQ+sMY5UwieNKlgspN3E+l/BA731OrHZmoOWQ1w4lI7DBydGr1xRBBootbUt+mKkP8tSccslbl9Pna8tMgrNH1zRYoxTnZfV7MulqdYZUzINVw/4tJt8rrYOwr/rJwCNNtY2Li9eZyp8GZTXUIzI915qnOGYeIpEoUNj8FZYhZLwbgwdpuBF1KSSMr r2048";
const RSA2048_FP: &str = "SHA256:8ymdZ/m23VgRbzCNggxsH5qb2/WlEinvT216ysnvm2w";
const RSA1024: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDnu0sqQxBonq9WhSZAxi2eZWGwQyiQtunAMPqH/2+N8sqjA9wkE6VbqsOMrSKAj+U1NyghfBgK038kxYDs0XUCDnrLQYRLtoNPYJZuoG3rKH8h9iQUIwsRZqTYo0AkbyktQdqEWfHFuJLjh+QZP6J/oTbXYTINLscNRzH6EMjV9w== small";
const ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBANp0EI3dvg727Ujz+Wz8YC6hM/NJCCkffLyxsvjZoJuuKLmBa57NzPJl/f+5y5nnEYPklSFKMjTWoVaCCZP3/o= ec";
// The example recipient of the age specification.
const AGE: &str = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";

fn err(text: &str) -> KeyError {
    PublicKey::parse(text).expect_err(text)
}

#[test]
fn ed25519_key_with_comment() {
    let key = PublicKey::parse(ED25519).unwrap();
    assert_eq!(key.kind(), KeyKind::SshEd25519);
    assert_eq!(key.fingerprint().as_str(), ED25519_FP);
    assert_eq!(key.comment(), Some("root@web-01"));
    assert_eq!(key.as_str(), ED25519.strip_suffix(" root@web-01").unwrap());
}

#[test]
fn rsa_key() {
    let key = PublicKey::parse(RSA2048).unwrap();
    assert_eq!(key.kind(), KeyKind::SshRsa);
    assert_eq!(key.fingerprint().as_str(), RSA2048_FP);
}

#[test]
fn age_key_is_its_own_fingerprint() {
    let key = PublicKey::parse(AGE).unwrap();
    assert_eq!(key.kind(), KeyKind::Age);
    assert_eq!(key.fingerprint().as_str(), AGE);
    assert_eq!(key.comment(), None);
}

#[test]
fn surrounding_whitespace_is_ignored_and_comments_do_not_change_identity() {
    let plain = PublicKey::parse(ED25519).unwrap();
    let other = ED25519.replace("root@web-01", "renamed");
    let spaced = PublicKey::parse(&format!("  {other}\n")).unwrap();
    assert_eq!(plain, spaced);
    assert_eq!(spaced.comment(), Some("renamed"));
}

#[test]
fn keys_sort_by_fingerprint() {
    let mut keys: Vec<PublicKey> = [AGE, ED25519, RSA2048]
        .iter()
        .map(|text| text.parse().unwrap())
        .collect();
    keys.sort();
    let order: Vec<&str> = keys.iter().map(|key| key.fingerprint().as_str()).collect();
    assert_eq!(order, [RSA2048_FP, ED25519_FP, AGE]);
}

#[test]
fn debug_names_the_key_by_fingerprint() {
    let shown = format!("{:?}", PublicKey::parse(ED25519).unwrap());
    assert!(shown.contains(ED25519_FP), "{shown}");
}

#[test]
fn empty_text() {
    assert!(matches!(err("  \n"), KeyError::Empty));
}

#[test]
fn unknown_type_points_at_the_first_word() {
    let e = err("  ssh-ed448 AAAA");
    assert!(
        matches!(&e, KeyError::UnknownType { found, .. } if found == "ssh-ed448"),
        "{e:?}"
    );
    assert_eq!(e.span(), 2..11);
    assert!(e.hint().unwrap().contains("ssh-ed25519"));
}

#[test]
fn ecdsa_is_named_unsupported_not_unknown() {
    let e = err(ECDSA);
    assert!(
        matches!(&e, KeyError::UnsupportedSshType { found, .. } if found == "ecdsa-sha2-nistp256"),
        "{e:?}"
    );
    assert_eq!(e.span(), 0..19);
    assert!(e.to_string().contains("age cannot encrypt"));
}

#[test]
fn small_rsa_is_refused() {
    let e = err(RSA1024);
    assert!(matches!(e, KeyError::RsaTooSmall { .. }), "{e:?}");
    assert_eq!(e.span(), 8..RSA1024.len() - " small".len());
}

#[test]
fn a_type_without_data() {
    let e = err("ssh-ed25519");
    assert!(matches!(e, KeyError::MissingKeyData { .. }), "{e:?}");
    assert_eq!(e.span(), 0..11);
}

#[test]
fn data_that_is_not_base64() {
    let e = err("ssh-ed25519 AAAA!!!! comment");
    assert!(matches!(e, KeyError::BadBase64 { .. }), "{e:?}");
    assert_eq!(e.span(), 12..20);
    assert!(
        std::error::Error::source(&e).is_some(),
        "the decode error is kept"
    );
}

#[test]
fn data_of_another_type() {
    let rsa_data = RSA2048.split(' ').nth(1).unwrap();
    let e = err(&format!("ssh-ed25519 {rsa_data}"));
    assert!(
        matches!(&e, KeyError::TypeMismatch { stated, embedded, .. } if stated == "ssh-ed25519" && embedded == "ssh-rsa"),
        "{e:?}"
    );
}

#[test]
fn truncated_data() {
    let data = ED25519.split(' ').nth(1).unwrap();
    let e = err(&format!("ssh-ed25519 {}", &data[..40]));
    assert!(matches!(e, KeyError::InvalidSshKey { .. }), "{e:?}");
}

#[test]
fn private_keys_are_caught() {
    let e = err("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n");
    assert!(matches!(e, KeyError::PrivateKey { .. }), "{e:?}");
    assert!(e.hint().unwrap().contains("never commit"));
    let e = err("AGE-SECRET-KEY-1QQQQ");
    assert!(matches!(e, KeyError::PrivateKey { .. }), "{e:?}");
}

#[test]
fn age_key_with_a_typo() {
    let typo = AGE.replace("ql3z", "ql3q");
    let e = err(&typo);
    assert!(matches!(e, KeyError::InvalidAgeKey { .. }), "{e:?}");
    assert_eq!(e.span(), 0..typo.len());
}

#[test]
fn age_key_with_a_comment() {
    let e = err(&format!("{AGE}  alice"));
    assert!(matches!(e, KeyError::TrailingText { .. }), "{e:?}");
    assert_eq!(e.span(), AGE.len() + 2..AGE.len() + 7);
}

#[test]
fn post_quantum_and_plugin_recipients_are_unsupported() {
    let e = err("age1pq1qqqqqqqqqqqqqqqqqqqqqqqq");
    assert!(
        matches!(&e, KeyError::UnsupportedAgeType { found, .. } if found == "age1pq"),
        "{e:?}"
    );
    let e = err("age1yubikey1qqqqqqqqqqqqqqqq");
    assert!(
        matches!(&e, KeyError::UnsupportedAgeType { found, .. } if found == "age1yubikey"),
        "{e:?}"
    );
}

#[test]
fn fingerprints_parse_only_in_their_written_form() {
    assert_eq!(
        ED25519_FP.parse::<Fingerprint>().unwrap().as_str(),
        ED25519_FP
    );
    assert_eq!(AGE.parse::<Fingerprint>().unwrap().as_str(), AGE);
    for bad in [
        "SHA256:short",
        "SHA256:e1Nm0jxvGYDY1U1WrawqcyTSaDLNwvyGBHNRGGsDkJg=",
        "MD5:aa:bb",
        "e1Nm0jxvGYDY1U1WrawqcyTSaDLNwvyGBHNRGGsDkJg",
        &AGE.to_uppercase(),
        &AGE.replace("ql3z", "ql3q"),
    ] {
        assert!(bad.parse::<Fingerprint>().is_err(), "{bad} was accepted");
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn on_any_text(text in "\\PC{0,120}") {
            let _ = PublicKey::parse(&text);
            let _ = text.parse::<Fingerprint>();
        }

        /// A real key with one character replaced, inserted or deleted:
        /// an error whose span lies inside the text, or a key.
        #[test]
        fn on_a_damaged_key(
            which in 0usize..3,
            at in any::<prop::sample::Index>(),
            op in 0u8..3,
            c in any::<char>(),
        ) {
            let mut chars: Vec<char> = [ED25519, RSA2048, AGE][which].chars().collect();
            let i = at.index(chars.len());
            match op {
                0 => chars[i] = c,
                1 => chars.insert(i, c),
                _ => { chars.remove(i); }
            }
            let text: String = chars.into_iter().collect();
            if let Err(e) = PublicKey::parse(&text) {
                let span = e.span();
                prop_assert!(span.start <= span.end && span.end <= text.len(), "{e:?}");
                prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
            }
        }
    }
}
