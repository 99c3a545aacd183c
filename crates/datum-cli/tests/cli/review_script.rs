//! `contrib/ci/datum-review.sh`, the script the CI snippets of
//! docs/reviewing-changes.md run: on a real git repository of the example
//! fleet, with the `datum` under test on PATH (or installed by a stand-in
//! `cargo`), it checks, diffs and writes the pull-request comment.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, copy_tree, example, repo_root};

fn script() -> PathBuf {
    repo_root().join("contrib/ci/datum-review.sh")
}

fn bin_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("datum")
        .parent()
        .unwrap()
        .to_path_buf()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A repository whose first commit is the example fleet and whose second
/// lays `change` over it (a directory of `examples/changes`, or none).
fn repository(dir: &Path, change: Option<&str>) -> PathBuf {
    let fleet = dir.join("repo");
    copy_tree(&example("fleet"), &fleet);
    git(&fleet, &["init", "-q", "-b", "main"]);
    git(&fleet, &["add", "-A"]);
    git(&fleet, &["commit", "-q", "-m", "fleet"]);
    if let Some(change) = change {
        copy_tree(&example("changes").join(change), &fleet);
    }
    git(&fleet, &["add", "-A"]);
    git(&fleet, &["commit", "-q", "--allow-empty", "-m", "change"]);
    fleet
}

/// Runs the script in `repo` with PATH = `path` + the system's.
fn review(repo: &Path, path: &[&Path], env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut dirs: Vec<String> = path.iter().map(|p| p.display().to_string()).collect();
    dirs.push("/usr/local/bin:/usr/bin:/bin".to_owned());
    let mut cmd = Command::new("bash");
    cmd.arg(script())
        .args(args)
        .current_dir(repo)
        .env("PATH", dirs.join(":"))
        .env("NO_COLOR", "1")
        .env_remove("DATUM_FLEET")
        .env_remove("DATUM_SOURCE")
        .env("DATUM_REVIEW_OUT", repo.join("out"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

fn read(repo: &Path, file: &str) -> String {
    fs::read_to_string(repo.join("out").join(file)).unwrap()
}

#[test]
fn a_change_that_resolves_gets_a_comment_with_its_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repository(tmp.path(), None);
    // A change of mode on the web role: three hosts change.
    let layer = repo.join("roles/web/layer.yaml");
    let text = fs::read_to_string(&layer).unwrap();
    fs::write(&layer, text.replace("mode: \"0640\"", "mode: \"0644\"")).unwrap();
    git(&repo, &["commit", "-q", "-am", "web mode"]);
    let run = review(&repo, &[&bin_dir()], &[], &["HEAD~1"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let diff = read(&repo, "diff.txt");
    assert!(diff.contains("mode  0640 → 0644  roles/web"), "{diff}");
    assert_eq!(run.stdout, diff);
    let comment = read(&repo, "comment.md");
    assert!(
        comment.starts_with("### Datum: 2 hosts change, 0 added, 0 removed, 3 unchanged\n"),
        "{comment}"
    );
    assert!(
        comment
            .contains("`datum check`: checked 5 hosts against 9 layers: no errors, no warnings\n")
    );
    assert!(comment.contains("<details open><summary>datum diff HEAD~1 HEAD</summary>"));
    assert!(
        comment.contains(&format!("```text\n{diff}```\n")),
        "{comment}"
    );
    let json: serde_json::Value = serde_json::from_str(&read(&repo, "diff.json")).unwrap();
    assert_eq!(json["changed"], true);
    assert!(run.stderr.contains("datum-review: 2 hosts change"));
}

#[test]
fn a_change_that_does_not_resolve_fails_with_its_errors_in_the_comment() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repository(tmp.path(), Some("web-tls-conflict"));
    let run = review(&repo, &[&bin_dir()], &[], &["HEAD~1", "HEAD"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let comment = read(&repo, "comment.md");
    assert!(
        comment.starts_with("### Datum: the change does not resolve\n"),
        "{comment}"
    );
    assert!(comment.contains("error: conflicting values for File[nginx-config].mode"));
    assert!(comment.contains("<details open><summary>datum check</summary>"));
}

#[test]
fn no_change_says_so_and_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repository(tmp.path(), None);
    let run = review(&repo, &[&bin_dir()], &[], &["HEAD~1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let comment = read(&repo, "comment.md");
    assert!(
        comment.starts_with("### Datum: no host changes\n"),
        "{comment}"
    );
    assert!(comment.contains("<details><summary>"));
}

#[test]
fn an_unknown_base_is_not_a_failure_of_the_change() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repository(tmp.path(), None);
    let run = review(&repo, &[&bin_dir()], &[], &["nosuchbranch"]);
    assert!(
        run.code != 0 && run.code != 1,
        "{}: {}",
        run.code,
        run.stderr
    );
    assert!(read(&repo, "comment.md").starts_with("### Datum: datum diff could not run"));
    let usage = review(&repo, &[&bin_dir()], &[], &[]);
    assert_eq!(usage.code, 64);
}

#[test]
fn without_datum_on_path_it_installs_from_datum_source() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repository(tmp.path(), None);
    // A stand-in `cargo` that records its arguments and "installs" the
    // datum under test into CARGO_HOME/bin.
    let tools = tmp.path().join("tools");
    let cargo_home = tmp.path().join("cargo-home");
    fs::create_dir_all(&tools).unwrap();
    let log = tmp.path().join("cargo.log");
    fs::write(
        tools.join("cargo"),
        format!(
            "#!/bin/sh\necho \"$@\" > {log}\nmkdir -p \"$CARGO_HOME/bin\"\nln -s {datum} \"$CARGO_HOME/bin/datum\"\n",
            log = log.display(),
            datum = assert_cmd::cargo::cargo_bin("datum").display()
        ),
    )
    .unwrap();
    fs::set_permissions(tools.join("cargo"), fs::Permissions::from_mode(0o755)).unwrap();
    let source = tmp.path().join("datum-src");
    fs::create_dir_all(source.join("crates/datum-cli")).unwrap();

    let missing = review(&repo, &[&tools], &[], &["HEAD~1"]);
    assert_eq!(missing.code, 69, "{}", missing.stderr);
    assert!(missing.stderr.contains("set DATUM_SOURCE"));

    let run = review(
        &repo,
        &[&tools],
        &[
            ("DATUM_SOURCE", source.to_str().unwrap()),
            ("CARGO_HOME", cargo_home.to_str().unwrap()),
        ],
        &["HEAD~1"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!(
            "install --locked --quiet --path {}/crates/datum-cli\n",
            source.display()
        )
    );
    assert!(run.stderr.contains("installing datum from"));
    assert!(read(&repo, "comment.md").starts_with("### Datum: no host changes"));
}

#[test]
fn the_ci_snippets_run_the_script_and_hold_no_placeholders() {
    let page = fs::read_to_string(repo_root().join("docs/reviewing-changes.md")).unwrap();
    let ci = page.split("## In CI").nth(1).expect("an In CI section");
    let blocks: Vec<&str> = ci
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(blocks.len(), 2, "a GitHub workflow and a GitLab job");
    for block in blocks {
        assert!(block.contains("contrib/ci/datum-review.sh"), "{block}");
        assert!(block.contains("comment.md"), "{block}");
        for marker in ["<datum", "# - install", "TODO", "your-org", "example.com"] {
            assert!(
                !block.contains(marker),
                "placeholder {marker:?} in:\n{block}"
            );
        }
    }
    let mode = fs::metadata(script()).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "the script is executable");
}
