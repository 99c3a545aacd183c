//! Commit signatures, on commits the real git makes and signs.

mod common;

use datum_core::hint::Hinted as _;
use std::path::PathBuf;

use common::{Key, Work, git, run};
use datum_agent::gitsig::{self, CommitSignatureError};
use datum_agent::repo::{LocalRepo, ObjectId};
use datum_agent::sshsig::{AllowedSigners, Signer, SigningKey, VerifyError};

const NOW: i64 = 1_750_000_000;

struct Setup {
    _dir: tempfile::TempDir,
    work: Work,
    ops: Key,
    stranger: Key,
    signers_file: PathBuf,
    signers: AllowedSigners,
}

impl Setup {
    /// A repository with one unsigned commit; `ops` is allowed, `stranger` not.
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let mut work = Work::init(&dir.path().join("work"));
        work.commit("datum.yaml", "fleet: one\n");
        let ops = Key::generate(dir.path(), "ops", "ed25519");
        let stranger = Key::generate(dir.path(), "stranger", "ed25519");
        let signers_file = dir.path().join("allowed_signers");
        std::fs::write(&signers_file, format!("ops@example.net {}\n", ops.public)).unwrap();
        let signers = AllowedSigners::read(&signers_file).unwrap();
        Setup {
            _dir: dir,
            work,
            ops,
            stranger,
            signers_file,
            signers,
        }
    }

    fn verify(&self, commit: &str) -> Result<Signer, CommitSignatureError> {
        let repo = LocalRepo::open_or_init(&self.work.dir.join(".git")).unwrap();
        gitsig::verify_commit(&repo, id(commit), &self.signers, NOW)
    }

    /// Whether `git verify-commit` with the same allowed signers accepts it.
    fn git_verifies(&self, commit: &str) -> bool {
        let option = format!("gpg.ssh.allowedSignersFile={}", self.signers_file.display());
        let mut command = git(&self.work.dir);
        command.args(["-c", &option, "verify-commit", commit]);
        run(&mut command, b"").status.success()
    }
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.as_bytes()).unwrap()
}

/// `raw` with a `gpgsig` header holding `signature` at the end of its headers.
fn with_signature(raw: &str, signature: &str) -> String {
    let (headers, message) = raw.split_once("\n\n").unwrap();
    let folded = signature.trim_end().replace('\n', "\n ");
    format!("{headers}\ngpgsig {folded}\n\n{message}")
}

#[test]
fn a_commit_signed_by_an_allowed_key_is_accepted() {
    let mut setup = Setup::new();
    let commit = setup
        .work
        .commit_signed("hosts.yaml", "h: 1\n", &setup.ops.private.clone());
    let signer = setup.verify(&commit).unwrap();
    assert_eq!(signer.principals, ["ops@example.net"]);
    assert_eq!(signer.fingerprint, setup.ops.fingerprint());
    assert!(setup.git_verifies(&commit));
}

#[test]
fn an_unsigned_commit_is_refused() {
    let setup = Setup::new();
    let head = setup.work.rev("HEAD");
    let err = setup.verify(&head).unwrap_err();
    assert!(
        matches!(err, CommitSignatureError::Unsigned { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("commit {head} is not signed, and allowed signers are configured")
    );
    assert!(err.hint().unwrap().contains("gpg.format ssh"));
}

#[test]
fn a_commit_signed_by_another_key_is_refused() {
    let mut setup = Setup::new();
    let stranger = setup.stranger.private.clone();
    let commit = setup.work.commit_signed("hosts.yaml", "h: 1\n", &stranger);
    let err = setup.verify(&commit).unwrap_err();
    assert!(
        matches!(
            err,
            CommitSignatureError::Signature {
                source: VerifyError::UnknownSigner { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&setup.stranger.fingerprint()),
        "{err}"
    );
    assert!(!setup.git_verifies(&commit), "git agrees");
}

#[test]
fn a_gpg_signature_is_refused_by_name() {
    let setup = Setup::new();
    let pgp =
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n";
    let commit = setup
        .work
        .write_commit(&with_signature(&setup.work.raw("HEAD"), pgp));
    let err = setup.verify(&commit).unwrap_err();
    assert!(
        matches!(
            err,
            CommitSignatureError::NotSsh {
                format: "OpenPGP",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("carries an OpenPGP signature; datum verifies SSH signatures only")
    );
    let x509 = "-----BEGIN SIGNED MESSAGE-----\nMIAG\n-----END SIGNED MESSAGE-----\n";
    let commit = setup
        .work
        .write_commit(&with_signature(&setup.work.raw("HEAD"), x509));
    let err = setup.verify(&commit).unwrap_err();
    assert!(
        matches!(
            err,
            CommitSignatureError::NotSsh {
                format: "X.509",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_tampered_commit_object_is_refused() {
    let mut setup = Setup::new();
    let signed = setup
        .work
        .commit_signed("hosts.yaml", "h: 1\n", &setup.ops.private.clone());
    let raw = setup.work.raw(&signed);
    assert!(
        raw.contains("\ngpgsig -----BEGIN SSH SIGNATURE-----\n"),
        "{raw}"
    );
    // Same signature, another message: a different object that claims it.
    let tampered = setup
        .work
        .write_commit(&raw.replace("\n\nhosts.yaml\n", "\n\nharmless\n"));
    assert_ne!(tampered, signed);
    let err = setup.verify(&tampered).unwrap_err();
    assert!(
        matches!(
            err,
            CommitSignatureError::Signature {
                source: VerifyError::Mismatch { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("altered after signing"), "{err}");
    assert!(!setup.git_verifies(&tampered), "git agrees");
    // Moving the tree is caught the same way.
    let other_tree = setup.work.rev("HEAD~1^{tree}");
    let this_tree = setup.work.rev("HEAD^{tree}");
    let moved = setup
        .work
        .write_commit(&raw.replace(&this_tree, &other_tree));
    assert!(setup.verify(&moved).is_err());
}

#[test]
fn git_accepts_a_signature_made_here_over_the_same_payload() {
    // Signing the unsigned object and adding the header must give what git
    // itself would: proof that the payload is the commit without `gpgsig`.
    let setup = Setup::new();
    let key = SigningKey::read(&setup.ops.private).unwrap();
    let raw = setup.work.raw("HEAD");
    let signature = key.sign("git", raw.as_bytes()).unwrap();
    let commit = setup.work.write_commit(&with_signature(&raw, &signature));
    assert!(setup.git_verifies(&commit));
    assert!(setup.verify(&commit).is_ok());
}

#[test]
fn a_signature_made_for_another_namespace_is_refused() {
    let setup = Setup::new();
    let key = SigningKey::read(&setup.ops.private).unwrap();
    let raw = setup.work.raw("HEAD");
    let signature = key.sign("datum-bundle", raw.as_bytes()).unwrap();
    let commit = setup.work.write_commit(&with_signature(&raw, &signature));
    let err = setup.verify(&commit).unwrap_err();
    assert!(
        matches!(
            err,
            CommitSignatureError::Signature {
                source: VerifyError::WrongNamespace { .. },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!setup.git_verifies(&commit), "git agrees");
}

#[test]
fn a_commit_missing_from_the_repository_is_a_read_error() {
    let setup = Setup::new();
    let err = setup.verify(&"1".repeat(40)).unwrap_err();
    assert!(matches!(err, CommitSignatureError::Read(_)), "{err:?}");
    assert!(err.to_string().contains(&"1".repeat(40)), "{err}");
}
