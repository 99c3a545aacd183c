//! What the bundle and agent tests share: a small fleet committed to git
//! with fixed identities and dates, and keys made by the real `ssh-keygen`
//! (the HTTP server they use is `datum_testkit::http::FileServer`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use datum_testkit::command::{git, ok};

/// A key pair written by `ssh-keygen -t ed25519`.
pub struct Key {
    pub private: PathBuf,
    /// The `.pub` line.
    pub public: String,
}

impl Key {
    pub fn new(dir: &Path, name: &str) -> Key {
        let private = dir.join(name);
        ok(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&private));
        let public = fs::read_to_string(private.with_extension("pub"))
            .unwrap()
            .trim_end()
            .to_owned();
        Key { private, public }
    }

    /// An allowed-signers line for this key.
    pub fn signer_line(&self, principal: &str) -> String {
        format!("{principal} {}\n", self.public)
    }
}

/// The fleet the delivery tests converge: two hosts, each with a File from
/// a payload only its role uses, a File with inline content and a
/// Directory, all inside `/srv` so a bare test root needs nothing else.
pub const FLEET: &[(&str, &str)] = &[
    (
        "datum.yaml",
        "datum: v1alpha1\ntype: Fleet\nname: delivery\n",
    ),
    (
        "hosts.yaml",
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n---\n\
         datum: v1alpha1\ntype: Host\nname: db-001\nlabels:\n  role: db\n",
    ),
    (
        "base.yaml",
        "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\nresources:\n\
         \x20 Directory[srv]:\n    path: /srv/app\n    mode: \"0755\"\n\
         \x20 File[motd]:\n    path: /srv/app/motd\n    content: \"release 1\\n\"\n    mode: \"0644\"\n    requires: [\"Directory[srv]\"]\n",
    ),
    (
        "web.yaml",
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels:\n    role: web\nresources:\n\
         \x20 File[site]:\n    path: /srv/app/site.conf\n    source: files/site.conf\n    mode: \"0640\"\n    requires: [\"Directory[srv]\"]\n",
    ),
    (
        "db.yaml",
        "datum: v1alpha1\ntype: Layer\nname: db\nprecedence: 30\nmatch:\n  labels:\n    role: db\nresources:\n\
         \x20 File[db]:\n    path: /srv/app/db.conf\n    source: files/db-only.conf\n",
    ),
    ("files/site.conf", "listen 80;\n"),
    ("files/db-only.conf", "only for databases\n"),
];

/// A git work tree holding [`FLEET`] at `fleet/`, commits a minute apart.
pub struct Repo {
    pub dir: PathBuf,
    next_time: i64,
}

impl Repo {
    /// The work tree at `dir`, with [`FLEET`] committed once.
    pub fn new(dir: &Path) -> Repo {
        fs::create_dir_all(dir).unwrap();
        ok(git(dir).args(["init", "-q"]));
        let mut repo = Repo {
            dir: dir.to_owned(),
            next_time: 1_750_000_000,
        };
        for (path, text) in FLEET {
            repo.write(path, text);
        }
        repo.commit("the fleet", None);
        repo
    }

    /// The committer (and author) time of the next commit, seconds since
    /// the epoch; later commits follow it a minute apart.
    pub fn at(&mut self, time: i64) {
        self.next_time = time;
    }

    pub fn fleet(&self) -> PathBuf {
        self.dir.join("fleet")
    }

    /// Writes `path` (relative to the fleet) without committing.
    pub fn write(&self, path: &str, text: &str) {
        let full = self.fleet().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }

    /// Commits everything, signed by `key` when given; the new id.
    pub fn commit(&mut self, message: &str, key: Option<&Key>) -> String {
        ok(git(&self.dir).args(["add", "-A"]));
        let date = format!("@{} +0000", self.next_time);
        self.next_time += 60;
        let mut c = git(&self.dir);
        c.env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date);
        if let Some(key) = key {
            c.arg("-c")
                .arg("gpg.format=ssh")
                .arg("-c")
                .arg(format!("user.signingkey={}", key.private.display()));
        }
        c.args(["commit", "-q", "--allow-empty", "-m", message]);
        if key.is_some() {
            c.arg("-S");
        }
        ok(&mut c);
        self.rev("HEAD")
    }

    /// Changes the inline motd and commits, signed by `key` when given.
    pub fn release(&mut self, n: u32, key: Option<&Key>) -> String {
        let base = FLEET[2].1.replace("release 1", &format!("release {n}"));
        self.write("base.yaml", &base);
        self.commit(&format!("release {n}"), key)
    }

    pub fn rev(&self, rev: &str) -> String {
        ok(git(&self.dir).args(["rev-parse", rev]))
            .trim()
            .to_owned()
    }

    /// Pushes `rev` to `branch` of the bare repository at `remote`, forcing.
    pub fn push(&self, remote: &Path, rev: &str, branch: &str) {
        ok(git(&self.dir)
            .args(["push", "-q", "--force"])
            .arg(remote)
            .arg(format!("{rev}:refs/heads/{branch}")));
    }

    /// A bare repository at `path` to push to.
    pub fn bare(path: &Path) {
        fs::create_dir_all(path).unwrap();
        ok(git(path).args(["init", "-q", "--bare"]));
    }
}
