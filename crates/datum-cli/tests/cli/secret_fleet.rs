//! The secret tests' fleet, shared by the `secret`, `apply` and agent
//! tests: an admin and hosts with keys made here (OpenSSH Ed25519 by
//! ssh-keygen, native age in process), a layer giving a secret to the web
//! hosts, and machine roots holding a host's key.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use datum_secrets::{Identity, decrypt, read_identities};

use crate::common::{Run, datum, run_in};

/// What the tests encrypt: it must never be found outside the target.
pub const PLAINTEXT: &str = "PLAINTEXT-7f3a9c-correct-horse-battery";

/// A fleet with an admin (SSH key), web-01 (SSH host key), web-02 (native
/// age key), db-01 (SSH host key) and mail-01 (no key); `roles/web` gives
/// `secrets/db.age` to the web hosts.
pub struct Fleet {
    pub tmp: tempfile::TempDir,
    pub admin_pub: String,
    pub web01_pub: String,
    pub web02: Identity,
    pub db01_pub: String,
}

impl Fleet {
    pub fn new() -> Fleet {
        let tmp = tempfile::tempdir().unwrap();
        let keys = tmp.path().join("keys");
        fs::create_dir_all(&keys).unwrap();
        let admin_pub = ssh_keygen(&keys, "admin", "");
        let web01_pub = ssh_keygen(&keys, "web-01", "");
        let db01_pub = ssh_keygen(&keys, "db-01", "");
        let web02 = Identity::generate_age();
        fs::write(
            keys.join("web-02.age"),
            web02.to_age_identity_file().unwrap().as_bytes(),
        )
        .unwrap();
        let f = Fleet {
            tmp,
            admin_pub,
            web01_pub,
            web02,
            db01_pub,
        };
        let fleet = f.fleet();
        fs::create_dir_all(fleet.join("secrets")).unwrap();
        fs::write(
            fleet.join("datum.yaml"),
            format!(
                "datum: v1alpha1\ntype: Fleet\nname: secrets\nadmins:\n  - {}\n",
                f.admin_pub
            ),
        )
        .unwrap();
        fs::write(
            fleet.join("hosts.yaml"),
            format!(
                "datum: v1alpha1\ntype: Host\nname: web-01\nlabels: {{role: web}}\nkeys: [\"{}\"]\n---\n\
                 datum: v1alpha1\ntype: Host\nname: web-02\nlabels: {{role: web}}\nkeys: [{}]\n---\n\
                 datum: v1alpha1\ntype: Host\nname: db-01\nlabels: {{role: db}}\nkeys: [\"{}\"]\n---\n\
                 datum: v1alpha1\ntype: Host\nname: mail-01\nlabels: {{role: mail}}\n",
                f.web01_pub,
                f.web02.public_key(),
                f.db01_pub
            ),
        )
        .unwrap();
        f.set_matcher("role: web");
        f
    }

    /// Makes a second admin, `NAME`, whose key has `passphrase` (the
    /// fleet's secrets are encrypted to it from then on); its private key.
    pub fn add_admin(&self, name: &str, passphrase: &str) -> PathBuf {
        let public = ssh_keygen(&self.tmp.path().join("keys"), name, passphrase);
        fs::write(
            self.fleet().join("datum.yaml"),
            format!(
                "datum: v1alpha1\ntype: Fleet\nname: secrets\nadmins:\n  - {}\n  - {public}\n",
                self.admin_pub
            ),
        )
        .unwrap();
        self.key(name)
    }

    /// An executable editor script `NAME` with `body` after `#!/bin/sh`;
    /// the file it edits is `$1`.
    pub fn editor(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = self.tmp.path().join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// `datum secret edit secrets/db.age` with `identity` in
    /// DATUM_IDENTITY, `editor` as $EDITOR and `env` set (`None` removes).
    pub fn edit(&self, identity: &Path, editor: &Path, env: &[(&str, Option<&Path>)]) -> Run {
        let mut cmd = datum();
        cmd.args(["secret", "edit", "secrets/db.age"])
            .env("DATUM_IDENTITY", identity)
            .env("EDITOR", editor)
            .env_remove("VISUAL")
            .current_dir(self.fleet());
        for (name, value) in env {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        let run = Run::from(cmd.output().unwrap());
        assert_ne!(run.code, 101, "{}", run.stderr);
        run
    }

    pub fn fleet(&self) -> PathBuf {
        self.tmp.path().join("fleet")
    }

    pub fn key(&self, name: &str) -> PathBuf {
        self.tmp.path().join("keys").join(name)
    }

    pub fn set_matcher(&self, labels: &str) {
        let dir = self.fleet().join("roles/web");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels: {{{labels}}}\n\
                 resources:\n  File[db-password]:\n    path: /etc/app/db-password\n    secret: secrets/db.age\n"
            ),
        )
        .unwrap();
    }

    pub fn run(&self, args: &[&str]) -> Run {
        run_in(&self.fleet(), args)
    }

    /// `datum secret encrypt secrets/db.age` with `plaintext` on stdin.
    pub fn encrypt(&self, plaintext: &str) -> Run {
        let out = datum()
            .args(["secret", "encrypt", "secrets/db.age"])
            .current_dir(self.fleet())
            .write_stdin(plaintext)
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_ne!(run.code, 101, "{}", run.stderr);
        run
    }

    pub fn recipients(&self) -> String {
        fs::read_to_string(self.fleet().join("secrets/db.age.recipients")).unwrap()
    }

    /// The secret decrypted with the admin's key, as a test would check it.
    pub fn decrypted(&self) -> String {
        let ids = read_identities(&self.key("admin"), None).unwrap();
        let sealed = fs::read(self.fleet().join("secrets/db.age")).unwrap();
        String::from_utf8(decrypt(&sealed, &ids).unwrap().as_bytes().to_vec()).unwrap()
    }

    pub fn fingerprint(&self, public: &str) -> String {
        datum_secrets::PublicKey::parse(public)
            .unwrap()
            .fingerprint()
            .to_string()
    }

    /// A machine root for `host`, holding `key` as its SSH host key.
    pub fn machine(&self, host: &str, key: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("etc/ssh")).unwrap();
        fs::create_dir_all(root.path().join("etc/app")).unwrap();
        fs::create_dir_all(root.path().join("etc/datum")).unwrap();
        fs::write(root.path().join("etc/datum/host"), format!("{host}\n")).unwrap();
        fs::copy(
            self.key(key),
            root.path().join("etc/ssh/ssh_host_ed25519_key"),
        )
        .unwrap();
        root
    }
}

/// Makes `NAME` and `NAME.pub` with `ssh-keygen -t ed25519 -N PASSPHRASE`;
/// gives the public line.
pub fn ssh_keygen(dir: &Path, name: &str, passphrase: &str) -> String {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f"])
        .arg(dir.join(name))
        .status()
        .unwrap();
    assert!(status.success());
    fs::read_to_string(dir.join(format!("{name}.pub")))
        .unwrap()
        .trim()
        .to_owned()
}

pub fn apply(fleet: &Path, root: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["apply", "--root", root.to_str().unwrap()];
    args.extend(extra);
    run_in(fleet, &args)
}

/// Every file under `dir`, except `skip`, as bytes with its path.
pub fn files_under(dir: &Path, skip: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let ty = entry.file_type().unwrap();
        if ty.is_dir() {
            files_under(&path, skip, out);
        } else if ty.is_file() && path != skip {
            out.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
}

pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
