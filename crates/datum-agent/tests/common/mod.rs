//! Helpers shared by the integration tests: keys made by the real
//! `ssh-keygen` and git work trees (the commands they run come from
//! `datum_testkit::command`).

#![allow(dead_code)] // each test binary uses its own share of these

use std::path::{Path, PathBuf};
use std::process::Command;

pub use datum_testkit::command::{git, ok, run};

/// A key pair written by `ssh-keygen` in `dir`.
pub struct Key {
    /// The private key file.
    pub private: PathBuf,
    /// The `.pub` line, without its newline.
    pub public: String,
}

impl Key {
    /// `ssh-keygen -t KIND` without a passphrase, comment `name`.
    pub fn generate(dir: &Path, name: &str, kind: &str) -> Key {
        Key::generate_with(dir, name, kind, "")
    }

    /// As [`Key::generate`], protected by `passphrase`.
    pub fn generate_with(dir: &Path, name: &str, kind: &str, passphrase: &str) -> Key {
        let private = dir.join(name);
        ok(Command::new("ssh-keygen")
            .args(["-q", "-t", kind, "-N", passphrase, "-C", name, "-f"])
            .arg(&private));
        let public = std::fs::read_to_string(private.with_extension("pub"))
            .unwrap()
            .trim_end()
            .to_owned();
        Key { private, public }
    }

    /// `SHA256:...` as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        let line = ok(Command::new("ssh-keygen")
            .arg("-lf")
            .arg(self.private.with_extension("pub")));
        line.split_whitespace().nth(1).unwrap().to_owned()
    }
}

/// A work tree whose commits tests push to bare remotes.
pub struct Work {
    /// The work tree.
    pub dir: PathBuf,
    /// Seconds since the epoch given to the next commit.
    next_time: i64,
}

impl Work {
    /// `git init` in `dir` (created).
    pub fn init(dir: &Path) -> Work {
        std::fs::create_dir_all(dir).unwrap();
        ok(git(dir).arg("init").arg("-q"));
        Work {
            dir: dir.to_owned(),
            next_time: 1_700_000_000,
        }
    }

    /// Writes `file` and commits it, each commit a minute after the last.
    /// Returns the id.
    pub fn commit(&mut self, file: &str, text: &str) -> String {
        self.commit_with(file, text, &[], &[])
    }

    /// As [`Work::commit`], signed by the SSH private key at `key` the way
    /// git signs (`gpg.format=ssh`, `commit -S`).
    pub fn commit_signed(&mut self, file: &str, text: &str, key: &Path) -> String {
        let signing_key = format!("user.signingkey={}", key.display());
        let config = ["-c", "gpg.format=ssh", "-c", signing_key.as_str()];
        self.commit_with(file, text, &config, &["-S"])
    }

    fn commit_with(&mut self, file: &str, text: &str, before: &[&str], after: &[&str]) -> String {
        std::fs::write(self.dir.join(file), text).unwrap();
        ok(git(&self.dir).args(["add", file]));
        let date = format!("@{} +0000", self.next_time);
        self.next_time += 60;
        ok(git(&self.dir)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .args(before)
            .args(["commit", "-q", "-m", file])
            .args(after));
        self.rev("HEAD")
    }

    /// The raw commit object `rev` names.
    pub fn raw(&self, rev: &str) -> String {
        ok(git(&self.dir).args(["cat-file", "commit", rev]))
    }

    /// Writes `raw` as a commit object (no branch moves) and returns its id.
    pub fn write_commit(&self, raw: &str) -> String {
        let mut command = git(&self.dir);
        command.args(["hash-object", "-t", "commit", "-w", "--stdin"]);
        let output = run(&mut command, raw.as_bytes());
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// The full id `rev` names.
    pub fn rev(&self, rev: &str) -> String {
        ok(git(&self.dir).args(["rev-parse", rev]))
            .trim()
            .to_owned()
    }

    /// The committer time of `rev`.
    pub fn time(&self, rev: &str) -> i64 {
        ok(git(&self.dir).args(["log", "-1", "--format=%ct", rev]))
            .trim()
            .parse()
            .unwrap()
    }

    /// A bare clone of this work tree at `path`, the way a remote is made.
    pub fn bare_remote(&self, path: &Path) {
        ok(git(&self.dir)
            .args(["clone", "-q", "--bare", "."])
            .arg(path));
    }

    /// `git push --force` of `rev` to `branch` on the remote at `path`.
    pub fn push(&self, path: &Path, rev: &str, branch: &str) {
        ok(git(&self.dir)
            .args(["push", "-q", "--force"])
            .arg(path)
            .arg(format!("{rev}:refs/heads/{branch}")));
    }
}
