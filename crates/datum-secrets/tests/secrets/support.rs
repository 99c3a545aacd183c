//! Keys made on the spot, and what `ssh-keygen` says about them.

use std::path::{Path, PathBuf};
use std::process::Command;

use datum_secrets::{Identity, PublicKey, read_identities};

/// An SSH key pair made by `ssh-keygen` in a directory of its own.
pub struct SshKey {
    pub private: PathBuf,
    pub public_text: String,
    _dir: tempfile::TempDir,
}

impl SshKey {
    pub fn public(&self) -> PublicKey {
        PublicKey::parse(&self.public_text).unwrap()
    }

    pub fn identities(&self) -> Vec<Identity> {
        read_identities(&self.private, None).unwrap()
    }

    /// The `SHA256:...` field of `ssh-keygen -l -E sha256 -f KEY.pub`.
    pub fn keygen_fingerprint(&self) -> String {
        let out = run(Command::new("ssh-keygen")
            .args(["-l", "-E", "sha256", "-f"])
            .arg(self.private.with_extension("pub")));
        out.split_whitespace().nth(1).unwrap().to_owned()
    }
}

/// `ssh-keygen -t KIND [extra...] -N PASSPHRASE -f DIR/key`.
pub fn ssh_keygen(kind: &str, passphrase: &str, extra: &[&str]) -> SshKey {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("key");
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", passphrase, "-C", "test@datum"])
        .args(extra)
        .arg("-f")
        .arg(&private));
    let public_text = std::fs::read_to_string(private.with_extension("pub")).unwrap();
    SshKey {
        private,
        public_text,
        _dir: dir,
    }
}

pub fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A native age key written to an identity file, as an admin would keep it.
pub fn age_key_file(dir: &Path, name: &str) -> (PathBuf, PublicKey) {
    let identity = Identity::generate_age();
    let path = dir.join(name);
    std::fs::write(&path, identity.to_age_identity_file().unwrap().as_bytes()).unwrap();
    (path, identity.public_key().clone())
}
