//! Building real git repositories with the `git` CLI for the tests, isolated
//! from the machine's configuration.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary directory holding a repository in `repo/`.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub repo: PathBuf,
}

impl Fixture {
    /// An empty repository whose first branch is `main`.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temporary directory");
        let repo = dir.path().join("repo");
        fs::create_dir_all(&repo).expect("repo directory");
        let f = Fixture { dir, repo };
        f.git(&["-c", "init.defaultBranch=main", "init", "-q"]);
        f
    }

    /// Runs `git` in the repository, isolated from the machine's
    /// configuration, and returns its standard output.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.repo, args)
    }

    /// Runs `git` in `dir`.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.dir.path().join("gitconfig"))
            .env("GIT_AUTHOR_NAME", "Datum Test")
            .env("GIT_AUTHOR_EMAIL", "test@datum.invalid")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "Datum Test")
            .env("GIT_COMMITTER_EMAIL", "test@datum.invalid")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .output()
            .expect("running git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Writes a file below the repository, creating directories.
    pub fn write(&self, path: &str, text: impl AsRef<[u8]>) {
        let full = self.repo.join(path);
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).expect("directories");
        }
        fs::write(full, text).expect("write");
    }

    /// Removes a file below the repository.
    pub fn remove(&self, path: &str) {
        fs::remove_file(self.repo.join(path)).expect("remove");
    }

    /// A symbolic link at `path` (below the repository) to `target`.
    pub fn symlink(&self, target: &str, path: &str) {
        let full = self.repo.join(path);
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).expect("directories");
        }
        std::os::unix::fs::symlink(target, full).expect("symlink");
    }

    /// Commits everything in the work tree, ignored files included (so the
    /// tree holds files a `.gitignore` would ignore, as force-added files
    /// do in real repositories), and returns the commit id.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A", "-f"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Clones the repository into a fresh directory and checks out `rev`
    /// there, returning the clone's path.
    pub fn checkout_copy(&self, rev: &str) -> PathBuf {
        let copy = self
            .dir
            .path()
            .join(format!("copy-{}", rev.replace(['/', '~', '^'], "_")));
        let copy_str = copy.to_string_lossy().into_owned();
        self.git_in(self.dir.path(), &["clone", "-q", "repo", &copy_str]);
        self.git_in(&copy, &["checkout", "-q", "--detach", rev]);
        copy
    }
}

/// Sorted copy of a list.
pub fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}
