//! Rollback refusal on a real history, and the record of the last input.

mod common;

use common::{Work, git, ok};
use datum_agent::repo::{LocalRepo, ObjectId};
use datum_agent::rollback::{
    self, Applied, Placement, Policy, Progress, RollbackError, StateError, StateFile,
};
use datum_core::hint::Hinted as _;

/// main: c1 - c2 - c3; side: c1 - s1 (a rewritten history).
struct History {
    _dir: tempfile::TempDir,
    work: Work,
    c1: ObjectId,
    c2: ObjectId,
    c3: ObjectId,
    s1: ObjectId,
}

impl History {
    fn new() -> History {
        let dir = tempfile::tempdir().unwrap();
        let mut work = Work::init(&dir.path().join("work"));
        let c1 = id(&work.commit("a.yaml", "a: 1\n"));
        let c2 = id(&work.commit("b.yaml", "b: 1\n"));
        let c3 = id(&work.commit("c.yaml", "c: 1\n"));
        ok(git(&work.dir)
            .args(["checkout", "-q", "-b", "side"])
            .arg(c1.to_string()));
        let s1 = id(&work.commit("s.yaml", "s: 1\n"));
        History {
            _dir: dir,
            work,
            c1,
            c2,
            c3,
            s1,
        }
    }

    fn repo(&self) -> LocalRepo {
        LocalRepo::open_or_init(&self.work.dir.join(".git")).unwrap()
    }

    fn applied(&self, commit: ObjectId) -> Applied {
        let commit_time = self.repo().commit_time(commit).unwrap();
        Applied::Git {
            commit,
            commit_time,
        }
    }

    fn check(
        &self,
        last: ObjectId,
        tip: ObjectId,
        policy: &Policy,
    ) -> Result<Progress, RollbackError> {
        rollback::check_git(&self.repo(), Some(&self.applied(last)), tip, policy)
    }
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.as_bytes()).unwrap()
}

fn refuse() -> Policy {
    Policy::default()
}

fn allow() -> Policy {
    Policy {
        allow_rollback: true,
        ..Policy::default()
    }
}

#[test]
fn the_first_input_and_the_same_input_are_accepted() {
    let h = History::new();
    let first = rollback::check_git(&h.repo(), None, h.c3, &refuse()).unwrap();
    assert!(matches!(first, Progress::First), "{first:?}");
    assert!(matches!(
        h.check(h.c3, h.c3, &refuse()).unwrap(),
        Progress::Same
    ));
}

#[test]
fn a_fast_forward_is_accepted() {
    let h = History::new();
    assert!(matches!(
        h.check(h.c1, h.c3, &refuse()).unwrap(),
        Progress::Forward
    ));
    assert!(matches!(
        h.check(h.c2, h.c3, &refuse()).unwrap(),
        Progress::Forward
    ));
}

#[test]
fn an_older_commit_is_refused_as_behind() {
    let h = History::new();
    let err = h.check(h.c3, h.c1, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::Behind { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "refusing to go back: commit {} is older than {}, the commit applied last",
            h.c1, h.c3
        )
    );
    assert!(err.hint().unwrap().contains("--allow-rollback"));
}

#[test]
fn a_diverged_history_is_refused_as_rewritten() {
    let h = History::new();
    let err = h.check(h.c3, h.s1, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::Diverged { .. }), "{err:?}");
    assert!(
        err.to_string().contains("the history was rewritten"),
        "{err}"
    );
    // s1 is newer than c3 by the clock: time alone would have let it in.
    assert!(h.work.time(&h.s1.to_string()) > h.work.time(&h.c3.to_string()));
}

#[test]
fn allow_rollback_accepts_and_keeps_the_reason() {
    let h = History::new();
    for tip in [h.c1, h.s1] {
        match h.check(h.c3, tip, &allow()).unwrap() {
            Progress::Allowed(RollbackError::Behind { .. } | RollbackError::Diverged { .. }) => {}
            other => panic!("{other:?}"),
        }
    }
    // A forward move is still just that.
    assert!(matches!(
        h.check(h.c1, h.c3, &allow()).unwrap(),
        Progress::Forward
    ));
}

#[test]
fn a_last_commit_missing_from_the_repository_is_refused() {
    let h = History::new();
    let stranger = id(&"7".repeat(40));
    let last = Applied::Git {
        commit: stranger,
        commit_time: 0,
    };
    let err = rollback::check_git(&h.repo(), Some(&last), h.c3, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::Unknown { .. }), "{err:?}");
    let allowed = rollback::check_git(&h.repo(), Some(&last), h.c3, &allow()).unwrap();
    assert!(matches!(
        allowed,
        Progress::Allowed(RollbackError::Unknown { .. })
    ));
}

#[test]
fn the_walk_is_bounded() {
    let h = History::new();
    let short = Policy {
        allow_rollback: false,
        walk_limit: 2,
    };
    let err = h.check(h.c1, h.c3, &short).unwrap_err();
    assert!(
        matches!(err, RollbackError::TooFar { limit: 2, .. }),
        "{err:?}"
    );
    let enough = Policy {
        allow_rollback: false,
        walk_limit: 3,
    };
    assert!(matches!(
        h.check(h.c1, h.c3, &enough).unwrap(),
        Progress::Forward
    ));
}

#[test]
fn a_git_tip_after_a_bundle_without_commit_is_compared_by_time() {
    let h = History::new();
    let c2_time = h.work.time(&h.c2.to_string());
    let last = Applied::Bundle {
        serial: None,
        expires: None,
        commit: None,
        commit_time: c2_time,
        contents: None,
    };
    let repo = h.repo();
    assert!(matches!(
        rollback::check_git(&repo, Some(&last), h.c3, &refuse()).unwrap(),
        Progress::Forward
    ));
    let err = rollback::check_git(&repo, Some(&last), h.c1, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::Older { .. }), "{err:?}");
    // A bundle made from a commit is placed by ancestry like any commit.
    let last = Applied::Bundle {
        serial: None,
        expires: None,
        commit: Some(h.c3),
        commit_time: 0,
        contents: None,
    };
    let err = rollback::check_git(&repo, Some(&last), h.c2, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::Behind { .. }), "{err:?}");
}

fn place(serial: Option<u64>, commit: Option<ObjectId>, commit_time: i64) -> Placement {
    Placement {
        serial,
        commit,
        commit_time,
        contents: None,
    }
}

/// Bundles with serials are ordered by serial alone: a commit dated years
/// ahead (or two in the same second) changes nothing.
#[test]
fn bundles_with_serials_are_ordered_by_serial_and_never_by_time() {
    let c = |n: &str| Some(id(&n.repeat(40)));
    let year_2030 = 1_900_000_000;
    let last = Applied::Bundle {
        serial: Some(10),
        expires: None,
        commit: c("a"),
        commit_time: year_2030,
        contents: None,
    };
    let check = |p, policy: &Policy| rollback::check_bundle(Some(&last), p, policy);
    // Newer serial, older clock: forward.
    assert!(matches!(
        check(place(Some(11), c("b"), 1_750_000_000), &refuse()).unwrap(),
        Progress::Forward
    ));
    // Older serial, newer clock: back.
    let err = check(place(Some(9), c("b"), 2_000_000_000), &refuse()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "refusing to go back: the bundle's serial is 9, lower than 10, the serial applied last"
    );
    // The same serial and commit (re-signed, say): the same input.
    assert!(matches!(
        check(place(Some(10), c("a"), 0), &refuse()).unwrap(),
        Progress::Same
    ));
    let err = check(place(Some(10), c("b"), year_2030), &refuse()).unwrap_err();
    assert!(
        matches!(err, RollbackError::SameSerial { serial: 10, .. }),
        "{err}"
    );
    let err = check(place(None, c("b"), year_2030 + 1), &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::NoSerial { last: 10 }), "{err}");
    assert!(matches!(
        check(place(None, None, 0), &allow()).unwrap(),
        Progress::Allowed(RollbackError::NoSerial { .. })
    ));
}

/// The first serial after a format-1 bundle (no serial) is placed as
/// format-1 bundles were: by its commit, and by commit time against
/// another commit. From then on the serial decides.
#[test]
fn the_first_serial_after_a_format_1_bundle_is_placed_by_its_commit() {
    let c = |n: &str| Some(id(&n.repeat(40)));
    let legacy = Applied::Bundle {
        serial: None,
        expires: None,
        commit: c("a"),
        commit_time: 1_750_000_000,
        contents: Some([1; 32]),
    };
    let check = |p| rollback::check_bundle(Some(&legacy), p, &refuse());
    // An older commit with any serial: back.
    let err = check(place(Some(3), c("b"), 1_749_999_999)).unwrap_err();
    assert!(matches!(err, RollbackError::Older { .. }), "{err}");
    // A newer one: forward.
    assert!(matches!(
        check(place(Some(3), c("b"), 1_750_000_001)).unwrap(),
        Progress::Forward
    ));
    // The same commit bundled again: the same release, with the same contents.
    let same = Placement {
        contents: Some([1; 32]),
        ..place(Some(3), c("a"), 1_750_000_000)
    };
    assert!(matches!(check(same).unwrap(), Progress::Same));
    let other = Placement {
        contents: Some([2; 32]),
        ..same
    };
    let err = check(other).unwrap_err();
    assert!(matches!(err, RollbackError::OtherContents { .. }), "{err}");
    assert!(
        err.to_string().starts_with(&format!(
            "refusing the bundle: it has commit {}, as the bundle applied last, and other contents (sha256 0202",
            "a".repeat(40)
        )),
        "{err}"
    );
    // No commit after one: cannot be placed.
    let err = check(place(Some(3), None, 1_750_000_001)).unwrap_err();
    assert!(matches!(err, RollbackError::NoCommit { .. }), "{err}");
}

/// Without a commit, only the contents tell two bundles of one serial
/// apart: the same contents (re-signed with a fresh expiry) are the same
/// bundle, others are refused; a record without contents cannot tell.
#[test]
fn the_same_serial_without_a_commit_must_have_the_same_contents() {
    let last = Applied::Bundle {
        serial: Some(5),
        expires: None,
        commit: None,
        commit_time: 0,
        contents: Some([7; 32]),
    };
    let new = |contents| Placement {
        contents,
        ..place(Some(5), None, 0)
    };
    let check = |p, policy: &Policy| rollback::check_bundle(Some(&last), p, policy);
    assert!(matches!(
        check(new(Some([7; 32])), &refuse()).unwrap(),
        Progress::Same
    ));
    let err = check(new(Some([8; 32])), &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::OtherContents { .. }), "{err}");
    assert!(matches!(
        check(new(Some([8; 32])), &allow()).unwrap(),
        Progress::Allowed(RollbackError::OtherContents { .. })
    ));
    // The same commit and serial: the contents decide too.
    let c = Some(id(&"a".repeat(40)));
    let with_commit = Applied::Bundle {
        serial: Some(5),
        expires: None,
        commit: c,
        commit_time: 0,
        contents: Some([7; 32]),
    };
    let p = Placement {
        contents: Some([8; 32]),
        ..place(Some(5), c, 0)
    };
    assert!(rollback::check_bundle(Some(&with_commit), p, &refuse()).is_err());
    let older = Applied::Bundle {
        serial: Some(5),
        expires: None,
        commit: None,
        commit_time: 0,
        contents: None,
    };
    assert!(matches!(
        rollback::check_bundle(Some(&older), new(Some([8; 32])), &refuse()).unwrap(),
        Progress::Same
    ));
}

#[test]
fn bundles_may_not_be_older_than_the_last_input() {
    let c = |n: &str| Some(id(&n.repeat(40)));
    let last = Applied::Bundle {
        serial: None,
        expires: None,
        commit: c("a"),
        commit_time: 1_750_000_000,
        contents: None,
    };
    let check = |commit, time, policy: &Policy| {
        rollback::check_bundle(Some(&last), place(None, commit, time), policy)
    };
    assert!(matches!(
        rollback::check_bundle(None, place(None, c("b"), 1), &refuse()).unwrap(),
        Progress::First
    ));
    assert!(matches!(
        check(c("a"), 1_750_000_000, &refuse()).unwrap(),
        Progress::Same
    ));
    assert!(matches!(
        check(c("b"), 1_750_000_000, &refuse()).unwrap(),
        Progress::Forward
    ));
    // No commit after a commit cannot be placed, whatever its time.
    let err = check(None, 1_750_000_060, &refuse()).unwrap_err();
    assert!(matches!(err, RollbackError::NoCommit { .. }), "{err}");
    let err = check(c("b"), 1_749_999_999, &refuse()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "refusing to go back: the new input was committed at 2025-06-15T15:06:39Z, \
         before the input applied last (2025-06-15T15:06:40Z)"
    );
    assert!(matches!(
        check(c("b"), 1, &allow()).unwrap(),
        Progress::Allowed(RollbackError::Older { .. })
    ));
    // After git mode, a bundle is compared with the commit's time.
    let git = Applied::Git {
        commit: id(&"a".repeat(40)),
        commit_time: 100,
    };
    assert!(rollback::check_bundle(Some(&git), place(None, c("b"), 99), &refuse()).is_err());
}

#[test]
fn the_record_round_trips_and_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateFile::new(dir.path().join("var/lib/datum/last-applied.json"));
    assert_eq!(state.load().unwrap(), None);
    let records = [
        Applied::Git {
            commit: id(&"ab".repeat(20)),
            commit_time: 1_750_000_000,
        },
        Applied::Bundle {
            serial: None,
            expires: None,
            commit: Some(id(&"cd".repeat(20))),
            commit_time: -5,
            contents: None,
        },
        Applied::Bundle {
            serial: Some(u64::MAX),
            expires: None,
            commit: None,
            commit_time: 42,
            contents: None,
        },
        Applied::Bundle {
            serial: Some(12),
            expires: Some(1_900_000_000),
            commit: Some(id(&"cd".repeat(20))),
            commit_time: 0,
            contents: Some([0xa5; 32]),
        },
    ];
    for applied in records {
        state.record(&applied).unwrap();
        assert_eq!(state.load().unwrap(), Some(applied));
    }
    let names: Vec<_> = std::fs::read_dir(state.path().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        ["last-applied.json"],
        "no temporary file is left behind"
    );
}

#[test]
fn the_record_is_json_a_person_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateFile::new(dir.path().join("last.json"));
    let commit = id(&"ab".repeat(20));
    state
        .record(&Applied::Git {
            commit,
            commit_time: 7,
        })
        .unwrap();
    let text = std::fs::read_to_string(state.path()).unwrap();
    assert_eq!(
        text,
        format!(
            "{{\n  \"commit\": \"{commit}\",\n  \"commit_time\": 7,\n  \"mode\": \"git\"\n}}\n"
        )
    );
}

#[test]
fn a_damaged_record_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("last.json");
    let state = StateFile::new(&path);
    let hex = "ab".repeat(20);
    let cases = [
        ("", "EOF"),
        ("[]", "not a JSON object"),
        (
            "{\"mode\":\"git\",\"commit_time\":1}",
            "a git record needs `commit`",
        ),
        (
            &format!("{{\"mode\":\"svn\",\"commit\":\"{hex}\",\"commit_time\":1}}"),
            "`mode` is neither \"git\" nor \"bundle\"",
        ),
        (
            &format!("{{\"mode\":\"git\",\"commit\":\"{hex}\"}}"),
            "`commit_time` is missing",
        ),
        (
            "{\"mode\":\"git\",\"commit\":\"xyz\",\"commit_time\":1}",
            "`commit` is not a commit id",
        ),
        (
            "{\"mode\":\"bundle\",\"commit\":5,\"commit_time\":1}",
            "`commit` is not a string",
        ),
        ("{\"commit_time\":1}", "`mode` is missing"),
    ];
    for (text, expected) in cases {
        std::fs::write(&path, text).unwrap();
        let err = state.load().unwrap_err();
        assert!(matches!(err, StateError::Corrupt { .. }), "{text}: {err:?}");
        let message = err.to_string();
        assert!(
            message.contains(expected) && message.contains(path.to_str().unwrap()),
            "{text}: {message}"
        );
        assert!(err.hint().unwrap().contains("--allow-rollback"));
        // What the file holds is never repeated.
        assert!(
            !message.contains("svn") && !message.contains("xyz"),
            "{message}"
        );
    }
    // A link at its name, a FIFO: refused, not followed or waited on.
    let outside = dir.path().join("outside.json");
    std::fs::write(&outside, "{\"mode\":\"svn\"}").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let message = state.load().unwrap_err().to_string();
    assert!(message.contains("it is a symbolic link"), "{message}");
    std::fs::remove_file(&path).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    let message = state.load().unwrap_err().to_string();
    assert!(message.contains("it is a FIFO"), "{message}");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, vec![b' '; 100_000]).unwrap();
    assert!(
        state
            .load()
            .unwrap_err()
            .to_string()
            .contains("larger than")
    );
    // Keys it does not know are someone else's business.
    std::fs::write(
        &path,
        format!("{{\"mode\":\"git\",\"commit\":\"{hex}\",\"commit_time\":1,\"by\":\"v2\"}}"),
    )
    .unwrap();
    assert!(state.load().unwrap().is_some());
}

#[test]
fn a_record_that_cannot_be_written_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let state = StateFile::new(blocker.join("last.json"));
    let err = state
        .record(&Applied::Bundle {
            serial: None,
            expires: None,
            commit: None,
            commit_time: 1,
            contents: None,
        })
        .unwrap_err();
    assert!(matches!(err, StateError::Write { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(&blocker.join("last.json").display().to_string())
    );
}

#[test]
fn a_bundle_made_outside_git_is_the_same_only_with_the_same_contents() {
    let last = Applied::Bundle {
        serial: None,
        expires: None,
        commit: None,
        commit_time: 0,
        contents: Some([7; 32]),
    };
    let new = |contents| Placement {
        contents,
        ..place(None, None, 0)
    };
    let check = |p| rollback::check_bundle(Some(&last), p, &refuse()).unwrap();
    assert!(matches!(check(new(Some([7; 32]))), Progress::Same));
    // Other contents cannot be placed: nothing tells going back.
    assert!(matches!(check(new(Some([8; 32]))), Progress::Forward));
    assert!(matches!(check(new(None)), Progress::Forward));
}
