//! The pieces in the order an agent cycle uses them: fetch from remotes,
//! verify the tip's signature, refuse a rollback, record what was applied.

mod common;

use std::path::Path;

use common::{Key, Work};
use datum_agent::fetch::{self, GitSource};
use datum_agent::gitsig::{self, CommitSignatureError};
use datum_agent::repo::{LocalRepo, ObjectId};
use datum_agent::rollback::{self, Applied, Policy, Progress, RollbackError, StateFile};
use datum_agent::sshsig::{AllowedSigners, VerifyError};

const NOW: i64 = 1_750_000_000;

/// Everything a cycle needs; all of it under one temporary directory.
struct Host {
    repo: std::path::PathBuf,
    state: StateFile,
    signers: AllowedSigners,
    source: GitSource,
}

#[derive(Debug)]
enum Outcome {
    Applied(ObjectId, Progress),
    Unsigned(CommitSignatureError),
    Refused(RollbackError),
}

impl Host {
    /// One cycle: what it would apply, or why it refuses.
    fn cycle(&self, policy: &Policy) -> Outcome {
        let repo = LocalRepo::open_or_init(&self.repo).unwrap();
        let fetched = fetch::fetch(&repo, &self.source).unwrap();
        if let Err(e) = gitsig::verify_commit(&repo, fetched.tips[0].commit, &self.signers, NOW) {
            return Outcome::Unsigned(e);
        }
        let last = self.state.load().unwrap();
        match rollback::check_git(&repo, last.as_ref(), fetched.tips[0].commit, policy) {
            Ok(progress) => {
                let applied = Applied::Git {
                    commit: fetched.tips[0].commit,
                    commit_time: fetched.tips[0].commit_time,
                };
                self.state.record(&applied).unwrap();
                Outcome::Applied(fetched.tips[0].commit, progress)
            }
            Err(refusal) => Outcome::Refused(refusal),
        }
    }
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.as_bytes()).unwrap()
}

#[test]
fn signed_commits_move_forward_and_never_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let ops = Key::generate(dir.path(), "ops", "ed25519");
    let stranger = Key::generate(dir.path(), "stranger", "ed25519");
    let signers_file = root.join("etc/datum/allowed_signers");
    std::fs::create_dir_all(signers_file.parent().unwrap()).unwrap();
    std::fs::write(&signers_file, format!("ops {}\n", ops.public)).unwrap();

    let mut work = Work::init(&dir.path().join("work"));
    let c1 = work.commit_signed("datum.yaml", "fleet: one\n", &ops.private);
    let remote = dir.path().join("origin.git");
    work.bare_remote(&remote);
    let gone = dir.path().join("gone.git");
    let host = Host {
        repo: root.join("var/lib/datum/repo"),
        state: StateFile::new(root.join("var/lib/datum/last-applied.json")),
        signers: AllowedSigners::read(&signers_file).unwrap(),
        source: GitSource::new(
            vec![path(&gone), format!("file://{}", path(&remote))],
            "main".into(),
        )
        .unwrap(),
    };
    let strict = Policy::default();

    match host.cycle(&strict) {
        Outcome::Applied(commit, Progress::First) => assert_eq!(commit, id(&c1)),
        other => panic!("{other:?}"),
    }
    match host.cycle(&strict) {
        Outcome::Applied(_, Progress::Same) => {}
        other => panic!("{other:?}"),
    }

    let c2 = work.commit_signed("hosts.yaml", "host: web1\n", &ops.private);
    work.push(&remote, &c2, "main");
    match host.cycle(&strict) {
        Outcome::Applied(commit, Progress::Forward) => assert_eq!(commit, id(&c2)),
        other => panic!("{other:?}"),
    }

    // A commit by a key the host does not trust changes nothing.
    let bad = work.commit_signed("evil.yaml", "x: 1\n", &stranger.private);
    work.push(&remote, &bad, "main");
    match host.cycle(&strict) {
        Outcome::Unsigned(CommitSignatureError::Signature {
            commit,
            source: VerifyError::UnknownSigner { .. },
        }) => assert_eq!(commit, id(&bad)),
        other => panic!("{other:?}"),
    }
    assert_eq!(host.state.load().unwrap().unwrap().commit(), Some(id(&c2)));

    // The remote is reset to the older, validly signed c1: a replay.
    work.push(&remote, &c1, "main");
    assert!(matches!(
        host.cycle(&strict),
        Outcome::Refused(RollbackError::Behind { .. })
    ));
    assert_eq!(host.state.load().unwrap().unwrap().commit(), Some(id(&c2)));
    let allowed = Policy {
        allow_rollback: true,
        ..Policy::default()
    };
    match host.cycle(&allowed) {
        Outcome::Applied(commit, Progress::Allowed(RollbackError::Behind { .. })) => {
            assert_eq!(commit, id(&c1))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(host.state.load().unwrap().unwrap().commit(), Some(id(&c1)));

    // Everything the cycle wrote is under the root, and nothing else was.
    let mut written: Vec<_> = walk(&root);
    written.retain(|p| !p.starts_with("var/lib/datum/repo/"));
    written.sort();
    assert_eq!(
        written,
        [
            "etc/datum/allowed_signers",
            "var/lib/datum/last-applied.json"
        ]
    );
}

fn path(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

/// Every file under `root`, relative to it.
fn walk(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                files.push(relative.to_str().unwrap().to_owned());
            }
        }
    }
    files
}
