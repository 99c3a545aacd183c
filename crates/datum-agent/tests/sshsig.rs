//! Signatures made and checked here agree with the real `ssh-keygen -Y`,
//! in both directions, with keys `ssh-keygen` generates.

mod common;

use datum_core::hint::Hinted as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Key, ok, run};
use datum_agent::sshsig::{AllowedSigners, KeyError, SignError, SigningKey, VerifyError};

const NOW: i64 = 1_750_000_000; // 2025-06-15

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn key(&self, name: &str) -> Key {
        Key::generate(self.dir.path(), name, "ed25519")
    }

    /// Writes an allowed-signers file and reads it with datum.
    fn signers(&self, text: &str) -> (PathBuf, AllowedSigners) {
        let path = self.path("allowed_signers");
        std::fs::write(&path, text).unwrap();
        let signers = AllowedSigners::read(&path).unwrap_or_else(|e| panic!("{e}"));
        (path, signers)
    }

    /// `ssh-keygen -Y sign`: the armored signature of `message`.
    fn keygen_sign(&self, key: &Key, namespace: &str, message: &[u8]) -> String {
        let file = self.path("message");
        std::fs::write(&file, message).unwrap();
        let sig = self.path("message.sig");
        let _ = std::fs::remove_file(&sig);
        ok(Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", namespace, "-f"])
            .arg(&key.private)
            .arg(&file));
        std::fs::read_to_string(sig).unwrap()
    }

    /// Whether `ssh-keygen -Y verify` accepts `signature` for `principal`.
    fn keygen_verifies(
        &self,
        signers: &Path,
        principal: &str,
        namespace: &str,
        message: &[u8],
        signature: &str,
        at: Option<i64>,
    ) -> bool {
        let sig = self.path("check.sig");
        std::fs::write(&sig, signature).unwrap();
        let mut command = Command::new("ssh-keygen");
        command.args(["-Y", "verify", "-f"]).arg(signers);
        command
            .args(["-I", principal, "-n", namespace, "-s"])
            .arg(&sig);
        if let Some(at) = at {
            command
                .arg("-O")
                .arg(format!("verify-time={}", keygen_time(at)));
        }
        run(&mut command, message).status.success()
    }
}

/// `YYYYMMDDHHMMSSZ` for `ssh-keygen -O verify-time`.
fn keygen_time(at: i64) -> String {
    let out = ok(Command::new("date")
        .args(["-u", "-d"])
        .arg(format!("@{at}"))
        .arg("+%Y%m%d%H%M%SZ"));
    out.trim().to_owned()
}

fn signing_key(key: &Key) -> SigningKey {
    SigningKey::read(&key.private).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ssh_keygen_verifies_what_datum_signs() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (file, _) = setup.signers(&format!("ops@example.net {}\n", key.public));
    let message = b"manifest bytes\n";
    let signature = signing_key(&key).sign("datum", message).unwrap();
    assert!(
        signature.starts_with("-----BEGIN SSH SIGNATURE-----\n"),
        "{signature}"
    );
    assert!(setup.keygen_verifies(&file, "ops@example.net", "datum", message, &signature, None));
    // The same check refuses what it should, so the line above means something.
    assert!(!setup.keygen_verifies(&file, "ops@example.net", "git", message, &signature, None));
    assert!(!setup.keygen_verifies(
        &file,
        "ops@example.net",
        "datum",
        b"other",
        &signature,
        None
    ));
}

#[test]
fn datum_verifies_what_ssh_keygen_signs() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (_, signers) = setup.signers(&format!("ops@example.net {}\n", key.public));
    let signature = setup.keygen_sign(&key, "datum", b"hello");
    let signer = signers.verify("datum", b"hello", &signature, NOW).unwrap();
    assert_eq!(signer.principals, ["ops@example.net"]);
    assert_eq!(signer.fingerprint, key.fingerprint());
}

#[test]
fn datum_writes_the_same_bytes_as_ssh_keygen() {
    // ed25519 is deterministic, and both hash with SHA-512 and wrap at 70.
    let setup = Setup::new();
    let key = setup.key("ops");
    let message = b"the same input, twice";
    let ours = signing_key(&key).sign("datum", message).unwrap();
    assert_eq!(ours, setup.keygen_sign(&key, "datum", message));
    assert_eq!(ours, signing_key(&key).sign("datum", message).unwrap());
}

#[test]
fn the_public_half_and_fingerprint_match_ssh_keygen() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let signing = signing_key(&key);
    assert_eq!(signing.public_key(), key.public);
    assert_eq!(signing.fingerprint(), key.fingerprint());
    assert!(!format!("{signing:?}").contains("PRIVATE"));
}

#[test]
fn altered_data_is_refused_as_altered() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (_, signers) = setup.signers(&format!("ops {}\n", key.public));
    let signature = setup.keygen_sign(&key, "datum", b"install nginx");
    let err = signers
        .verify("datum", b"install evil", &signature, NOW)
        .unwrap_err();
    assert!(matches!(err, VerifyError::Mismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("altered after signing"), "{err}");
}

#[test]
fn a_signature_for_another_namespace_is_refused() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (_, signers) = setup.signers(&format!("ops {}\n", key.public));
    let signature = setup.keygen_sign(&key, "file", b"x");
    let err = signers.verify("datum", b"x", &signature, NOW).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the signature is for namespace `file`, not `datum`"
    );
}

#[test]
fn a_key_not_listed_is_refused_and_named() {
    let setup = Setup::new();
    let (ops, stranger) = (setup.key("ops"), setup.key("stranger"));
    let (file, signers) = setup.signers(&format!("ops {}\n", ops.public));
    let signature = setup.keygen_sign(&stranger, "datum", b"x");
    let err = signers.verify("datum", b"x", &signature, NOW).unwrap_err();
    assert!(matches!(err, VerifyError::UnknownSigner { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "the signing key {} is not in the allowed signers file {}",
            stranger.fingerprint(),
            file.display()
        )
    );
    assert!(
        err.hint()
            .unwrap()
            .contains("allowed signers file on the host")
    );
    assert!(!setup.keygen_verifies(&file, "ops", "datum", b"x", &signature, None));
}

#[test]
fn the_namespaces_option_restricts_a_key_as_ssh_keygen_does() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (file, signers) =
        setup.signers(&format!("ops namespaces=\"git,datum-*\" {}\n", key.public));
    let bundle = setup.keygen_sign(&key, "datum-bundle", b"x");
    assert!(signers.verify("datum-bundle", b"x", &bundle, NOW).is_ok());
    assert!(setup.keygen_verifies(&file, "ops", "datum-bundle", b"x", &bundle, None));
    let other = setup.keygen_sign(&key, "file", b"x");
    let err = signers.verify("file", b"x", &other, NOW).unwrap_err();
    assert!(
        matches!(err, VerifyError::NamespaceNotAllowed { line: 1, .. }),
        "{err:?}"
    );
    assert!(!setup.keygen_verifies(&file, "ops", "file", b"x", &other, None));
}

#[test]
fn validity_windows_agree_with_ssh_keygen() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (file, signers) = setup.signers(&format!(
        "# rotated yearly\nops valid-after=\"20250101Z\",valid-before=\"20260101Z\" {}\n",
        key.public
    ));
    let signature = setup.keygen_sign(&key, "datum", b"x");
    let cases = [
        (1_735_689_599, Some("valid only after 2025-01-01T00:00:00Z")),
        (1_735_689_600, None),
        (NOW, None),
        (1_767_225_600, None),
        (1_767_225_601, Some("expired at 2026-01-01T00:00:00Z")),
    ];
    for (at, refusal) in cases {
        let ours = signers.verify("datum", b"x", &signature, at);
        let theirs = setup.keygen_verifies(&file, "ops", "datum", b"x", &signature, Some(at));
        assert_eq!(
            ours.is_ok(),
            theirs,
            "at {at}: datum {ours:?}, ssh-keygen {theirs}"
        );
        match (ours, refusal) {
            (Ok(_), None) => {}
            (Err(e), Some(expected)) => {
                let text = e.to_string();
                assert!(text.contains(expected) && text.contains(":2)"), "{text}");
            }
            (other, _) => panic!("at {at}: {other:?}"),
        }
    }
}

#[test]
fn every_line_listing_the_key_names_its_principals() {
    let setup = Setup::new();
    let (ops, other) = (setup.key("ops"), setup.key("other"));
    let (_, signers) = setup.signers(&format!(
        "alice {}\nbob {}\nops namespaces=\"git\" {}\nops,ci {}\n",
        ops.public, other.public, ops.public, ops.public
    ));
    let signature = setup.keygen_sign(&ops, "datum", b"x");
    let signer = signers.verify("datum", b"x", &signature, NOW).unwrap();
    assert_eq!(signer.principals, ["alice", "ops,ci"]);
}

#[test]
fn a_cert_authority_line_does_not_admit_plain_signatures() {
    let setup = Setup::new();
    let key = setup.key("ca");
    let (file, signers) = setup.signers(&format!("*@example.net cert-authority {}\n", key.public));
    let signature = setup.keygen_sign(&key, "datum", b"x");
    let err = signers.verify("datum", b"x", &signature, NOW).unwrap_err();
    assert!(matches!(err, VerifyError::UnknownSigner { .. }), "{err:?}");
    assert!(!setup.keygen_verifies(&file, "a@example.net", "datum", b"x", &signature, None));
}

#[test]
fn signatures_by_other_key_types_are_refused_by_name() {
    let setup = Setup::new();
    let ec = Key::generate(setup.dir.path(), "ec", "ecdsa");
    let (_, signers) = setup.signers(&format!("ops {}\n", ec.public));
    let signature = setup.keygen_sign(&ec, "datum", b"x");
    let err = signers.verify("datum", b"x", &signature, NOW).unwrap_err();
    assert!(matches!(err, VerifyError::UnsupportedKey { .. }), "{err:?}");
    assert!(err.to_string().contains("ecdsa-sha2-nistp256"), "{err}");
}

#[test]
fn damaged_signatures_are_refused_as_unreadable() {
    let setup = Setup::new();
    let key = setup.key("ops");
    let (_, signers) = setup.signers(&format!("ops {}\n", key.public));
    let good = setup.keygen_sign(&key, "datum", b"x");
    let truncated: String = good.lines().take(3).collect::<Vec<_>>().join("\n");
    for bad in [
        "",
        "not a signature",
        "-----BEGIN PGP SIGNATURE-----\n",
        truncated.as_str(),
    ] {
        let err = signers.verify("datum", b"x", bad, NOW).unwrap_err();
        assert!(
            matches!(err, VerifyError::Malformed { .. }),
            "{bad:?}: {err:?}"
        );
    }
    // One flipped character inside the base64 body.
    let flipped = good.replacen("AAAA", "AAAB", 1);
    assert!(signers.verify("datum", b"x", &flipped, NOW).is_err());
}

#[test]
fn keys_that_cannot_sign_unattended_are_refused_with_a_hint() {
    let setup = Setup::new();
    let locked = Key::generate_with(setup.dir.path(), "locked", "ed25519", "secret words");
    let err = SigningKey::read(&locked.private).unwrap_err();
    assert!(matches!(err, KeyError::Encrypted { .. }), "{err:?}");
    assert!(err.hint().unwrap().contains("-N ''"));

    let ec = Key::generate(setup.dir.path(), "ec", "ecdsa");
    let err = SigningKey::read(&ec.private).unwrap_err();
    assert!(matches!(err, KeyError::NotEd25519 { .. }), "{err:?}");
    assert!(err.to_string().contains("ecdsa-sha2-nistp256"), "{err}");

    let ops = setup.key("ops");
    let err = SigningKey::read(&ops.private.with_extension("pub")).unwrap_err();
    assert!(matches!(err, KeyError::Parse { .. }), "{err:?}");
    let err = SigningKey::read(&setup.path("missing")).unwrap_err();
    assert!(matches!(err, KeyError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn an_empty_namespace_cannot_sign() {
    let setup = Setup::new();
    let key = signing_key(&setup.key("ops"));
    assert!(matches!(key.sign("", b"x"), Err(SignError::EmptyNamespace)));
}
