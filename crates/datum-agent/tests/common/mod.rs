//! Helpers shared by the integration tests: keys made by the real
//! `ssh-keygen`, and commands whose failure stops the test with their output.

#![allow(dead_code)] // each test binary uses its own share of these

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `command`, feeding `stdin`, and returns its output whatever its status.
pub fn run(command: &mut Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `command` and returns its stdout; a failure panics with stderr.
pub fn ok(command: &mut Command) -> String {
    let output = run(command, b"");
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

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
