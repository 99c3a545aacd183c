//! Commands the tests run: their output whatever their status, or their
//! stdout with a failure stopping the test; `git` without the machine's
//! configuration.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `command`, feeding `stdin`, and returns its output whatever its status.
pub fn run(command: &mut Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `command` and returns its stdout; a failure panics with its output.
/// A stdin the command was given is kept; otherwise it reads nothing.
pub fn ok(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `git` in `dir` with no user or system configuration and fixed
/// identities, so tests do not depend on the machine.
pub fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ops")
        .env("GIT_AUTHOR_EMAIL", "ops@example.net")
        .env("GIT_COMMITTER_NAME", "Ops")
        .env("GIT_COMMITTER_EMAIL", "ops@example.net")
        .args(["-c", "init.defaultBranch=main"]);
    command
}
