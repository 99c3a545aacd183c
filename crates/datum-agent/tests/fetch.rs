//! Git mode fetching, against bare repositories on disk as remotes.

mod common;

use datum_core::hint::Hinted as _;
use std::path::Path;

use common::{Work, git, ok};
use datum_agent::fetch::{self, FetchError, GitSource, RemoteError, SourceError};
use datum_agent::repo::{LocalRepo, RepoError};

fn source(remotes: &[String], branch: &str) -> GitSource {
    GitSource::new(remotes.to_vec(), branch.to_owned()).unwrap()
}

/// A work tree with two commits pushed to a bare remote `origin.git`.
fn origin(dir: &Path) -> (Work, String) {
    let mut work = Work::init(&dir.join("work"));
    work.commit("datum.yaml", "fleet: one\n");
    work.commit("hosts.yaml", "host: web1\n");
    let remote = dir.join("origin.git");
    work.bare_remote(&remote);
    (work, remote.to_str().unwrap().to_owned())
}

#[test]
fn fetches_the_branch_tip_from_a_plain_path() {
    let dir = tempfile::tempdir().unwrap();
    let (work, remote) = origin(dir.path());
    let repo = LocalRepo::open_or_init(&dir.path().join("state/repo")).unwrap();
    let fetched = fetch::fetch(&repo, &source(std::slice::from_ref(&remote), "main")).unwrap();
    assert_eq!(fetched.tips[0].commit.to_string(), work.rev("main"));
    assert_eq!(fetched.tips[0].commit_time, work.time("main"));
    assert_eq!(fetched.tips[0].remote, remote);
    assert!(fetched.failures.is_empty(), "{:?}", fetched.failures);
    // The commit and its history are now in the agent's bare repository.
    let local = dir.path().join("state/repo");
    assert_eq!(
        ok(git(&local).args(["rev-parse", "--is-bare-repository"])).trim(),
        "true"
    );
    let log = ok(git(&local)
        .args(["log", "--format=%s"])
        .arg(work.rev("main")));
    assert_eq!(log, "hosts.yaml\ndatum.yaml\n");
}

#[test]
fn fetches_from_a_file_url_and_then_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let (mut work, remote) = origin(dir.path());
    let url = format!("file://{remote}");
    let path = dir.path().join("repo");
    let first = fetch::fetch(
        &LocalRepo::open_or_init(&path).unwrap(),
        &source(std::slice::from_ref(&url), "main"),
    );
    assert_eq!(first.unwrap().tips[0].commit.to_string(), work.rev("main"));

    let newer = work.commit("layer.yaml", "layer: base\n");
    work.push(Path::new(&remote), "HEAD", "main");
    // A second run opens the repository the first one made.
    let second = fetch::fetch(
        &LocalRepo::open_or_init(&path).unwrap(),
        &source(&[url], "main"),
    );
    let second = second.unwrap();
    assert_eq!(second.tips[0].commit.to_string(), newer);
    assert_eq!(second.tips[0].commit_time, work.time(&newer));
}

#[test]
fn a_missing_remote_is_reported_and_the_next_one_used() {
    let dir = tempfile::tempdir().unwrap();
    let (work, remote) = origin(dir.path());
    let gone = dir.path().join("gone.git").to_str().unwrap().to_owned();
    let repo = LocalRepo::open_or_init(&dir.path().join("repo")).unwrap();
    let fetched = fetch::fetch(&repo, &source(&[gone.clone(), remote.clone()], "main")).unwrap();
    assert_eq!(fetched.tips[0].commit.to_string(), work.rev("main"));
    assert_eq!(fetched.tips[0].remote, remote);
    assert_eq!(fetched.failures.len(), 1);
    assert_eq!(fetched.failures[0].remote, gone);
    assert!(
        matches!(fetched.failures[0].error, RemoteError::Connect { .. }),
        "{:?}",
        fetched.failures[0].error
    );
    assert!(
        fetched.failures[0]
            .error
            .to_string()
            .starts_with("cannot reach it: "),
        "{}",
        fetched.failures[0].error
    );
}

#[test]
fn every_remote_is_asked_and_each_tip_kept_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (mut work, first) = origin(dir.path());
    let second = dir.path().join("mirror.git");
    work.bare_remote(&second);
    let ahead = work.commit("x.yaml", "x: 1\n");
    work.push(&second, &ahead, "main");
    let repo = LocalRepo::open_or_init(&dir.path().join("repo")).unwrap();
    let remotes = [first.clone(), second.to_str().unwrap().to_owned()];
    let fetched = fetch::fetch(&repo, &source(&remotes, "main")).unwrap();
    assert_eq!(fetched.tips[0].remote, first);
    assert_eq!(fetched.tips[0].commit.to_string(), work.rev("HEAD~1"));
    // The mirror further down is asked too, and is ahead.
    assert_eq!(fetched.tips[1].remote, remotes[1]);
    assert_eq!(fetched.tips[1].commit.to_string(), ahead);
    assert_eq!(fetched.tips.len(), 2);
}

#[test]
fn a_remote_without_the_branch_is_skipped_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (mut work, remote) = origin(dir.path());
    let staging = work.commit("staging.yaml", "s: 1\n");
    let other = dir.path().join("other.git");
    work.bare_remote(&other);
    work.push(&other, &staging, "staging");
    let repo = LocalRepo::open_or_init(&dir.path().join("repo")).unwrap();
    let remotes = [remote.clone(), other.to_str().unwrap().to_owned()];
    let fetched = fetch::fetch(&repo, &source(&remotes, "staging")).unwrap();
    assert_eq!(fetched.tips[0].commit.to_string(), staging);
    assert_eq!(fetched.failures.len(), 1);
    assert_eq!(
        fetched.failures[0].error.to_string(),
        "it has no branch `staging`"
    );
}

#[test]
fn when_every_remote_fails_each_reason_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let (_work, remote) = origin(dir.path());
    let gone = dir.path().join("gone.git").to_str().unwrap().to_owned();
    let repo = LocalRepo::open_or_init(&dir.path().join("repo")).unwrap();
    let err = fetch::fetch(&repo, &source(&[gone.clone(), remote.clone()], "nope")).unwrap_err();
    let FetchError::AllFailed { branch, failures } = &err;
    assert_eq!(branch, "nope");
    assert_eq!(failures.len(), 2);
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "no remote gave branch `nope`:");
    assert!(
        lines[1].starts_with(&format!("  {gone}: cannot reach it: ")),
        "{text}"
    );
    assert_eq!(lines[2], format!("  {remote}: it has no branch `nope`"));
    assert!(err.hint().unwrap().contains("last input it verified"));
}

#[test]
fn https_and_ssh_remotes_have_a_transport() {
    // Nothing listens on port 1: both fail to connect, which they could not
    // do without a transport for their scheme compiled in.
    let dir = tempfile::tempdir().unwrap();
    let (work, remote) = origin(dir.path());
    let https = "https://127.0.0.1:1/fleet.git".to_owned();
    let ssh = "ssh://datum@127.0.0.1:1/srv/fleet.git".to_owned();
    let repo = LocalRepo::open_or_init(&dir.path().join("repo")).unwrap();
    let fetched = fetch::fetch(&repo, &source(&[https, ssh, remote], "main")).unwrap();
    assert_eq!(fetched.tips[0].commit.to_string(), work.rev("main"));
    let reasons: Vec<String> = fetched
        .failures
        .iter()
        .map(|f| f.error.to_string())
        .collect();
    assert_eq!(reasons.len(), 2);
    for reason in &reasons {
        assert!(reason.starts_with("cannot reach it: "), "{reason}");
        assert!(!reason.to_lowercase().contains("unsupported"), "{reason}");
    }
    // HTTPS connects in process and says so. The ssh program's refusal
    // reaches gix either as its message or, when the pipe closes first, as
    // a handshake that read nothing (seen under load): both mean the
    // transport ran and the connection failed.
    assert!(reasons[0].contains("Connection refused"), "{}", reasons[0]);
    assert!(
        reasons[1].contains("Connection refused") || reasons[1].contains("handshake failed"),
        "{}",
        reasons[1]
    );
}

#[test]
fn sources_are_checked_before_any_fetch() {
    let remote = vec!["/srv/fleet.git".to_owned()];
    assert!(matches!(
        GitSource::new(vec![], "main".into()),
        Err(SourceError::NoRemotes)
    ));
    for branch in ["", "a..b", "has space", "refs/heads/main", "x~1", "end/"] {
        let err = GitSource::new(remote.clone(), branch.into()).unwrap_err();
        assert!(
            matches!(err, SourceError::BadBranch { .. }),
            "{branch}: {err:?}"
        );
        assert!(err.hint().unwrap().contains("short name"));
    }
    let err = GitSource::new(vec!["".into()], "main".into()).unwrap_err();
    assert!(matches!(err, SourceError::BadRemote { .. }), "{err:?}");
    let good = GitSource::new(
        vec![
            "git@example.net:fleet.git".into(),
            "https://example.net/f.git".into(),
        ],
        "release/2025".into(),
    )
    .unwrap();
    assert_eq!(good.branch(), "release/2025");
    assert_eq!(good.remotes().len(), 2);
}

#[test]
fn a_directory_that_is_not_a_repository_is_not_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("notes.txt"), "mine").unwrap();
    let err = LocalRepo::open_or_init(&path).unwrap_err();
    assert!(matches!(err, RepoError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
    assert!(err.hint().unwrap().contains("move it aside"));
    assert_eq!(
        std::fs::read_to_string(path.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_empty_directory_becomes_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let (work, remote) = origin(dir.path());
    let path = dir.path().join("empty");
    std::fs::create_dir(&path).unwrap();
    let repo = LocalRepo::open_or_init(&path).unwrap();
    assert_eq!(repo.path(), path);
    let fetched = fetch::fetch(&repo, &source(&[remote], "main")).unwrap();
    assert_eq!(
        repo.commit_time(fetched.tips[0].commit).unwrap(),
        work.time("main")
    );
}
