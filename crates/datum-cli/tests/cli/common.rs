//! Running `datum` the way a user does, with a quiet, colourless terminal.

use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `examples/<name>`.
pub fn example(name: &str) -> PathBuf {
    repo_root().join("examples").join(name)
}

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The `datum` binary with a clean environment.
pub fn datum() -> assert_cmd::Command {
    assert_cmd::Command::from_std(datum_process())
}

/// [`datum`] as std's Command, for a test that sets up its pipes itself.
pub fn datum_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("datum"));
    cmd.env_remove("DATUM_FLEET")
        .env("NO_COLOR", "1")
        .env("RAYON_NUM_THREADS", "2");
    cmd
}

/// What a run printed and how it ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8(o.stdout).unwrap(),
            stderr: String::from_utf8(o.stderr).unwrap(),
        }
    }
}

/// Runs `datum ARGS --fleet DIR`.
pub fn run_in(fleet: &Path, args: &[&str]) -> Run {
    let mut cmd = datum();
    cmd.args(args);
    with_fleet(cmd, fleet)
}

/// Runs `cmd` with `--fleet DIR` last; Datum must not have panicked.
fn with_fleet(mut cmd: assert_cmd::Command, fleet: &Path) -> Run {
    let out = cmd.arg("--fleet").arg(fleet).output().unwrap();
    let run = Run::from(out);
    assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
    run
}

/// `datum apply --host HOST --root ROOT ARGS --fleet FLEET`, killed if it
/// has not ended within five minutes (a run that blocks fails the test
/// instead of hanging it, and no slow machine takes that long); the root's
/// path in the output reads `[ROOT]`.
pub fn apply_under(root: &Path, host: &str, fleet: &Path, args: &[&str]) -> Run {
    let mut cmd = datum();
    cmd.timeout(std::time::Duration::from_secs(300))
        .args(["apply", "--host", host, "--root"])
        .arg(root)
        .args(args);
    let run = with_fleet(cmd, fleet);
    let real = root.canonicalize().unwrap().display().to_string();
    Run {
        code: run.code,
        stdout: run.stdout.replace(&real, "[ROOT]"),
        stderr: run.stderr.replace(&real, "[ROOT]"),
    }
}

/// Copies a directory tree (regular files and directories only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A JSON location (`{path, line, column}`) as `path:line:column`, so tests
/// can say where in one line. Panics on anything else: every location in
/// Datum's JSON has the three parts.
pub fn place(location: &serde_json::Value) -> String {
    let path = location["path"].as_str().expect("a location has a path");
    let line = location["line"].as_u64().expect("a location has a line");
    let column = location["column"]
        .as_u64()
        .expect("a location has a column");
    format!("{path}:{line}:{column}")
}

/// Every command's path (`[]` for datum itself, `["secret", "encrypt"]`),
/// at every depth, as `--help` lists them under "Commands:".
pub fn command_paths() -> Vec<Vec<String>> {
    fn walk(path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let help = Run::from(datum().args(&path).arg("--help").output().unwrap());
        assert_eq!(help.code, 0, "{path:?} --help: {}", help.stderr);
        out.push(path.clone());
        let Some((_, listed)) = help.stdout.split_once("Commands:\n") else {
            return;
        };
        let subs: Vec<String> = listed
            .split("\n\n")
            .next()
            .unwrap()
            .lines()
            // A command's line starts at two spaces; wrapped help goes deeper.
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .map(|l| l.split_whitespace().next().unwrap().to_owned())
            .filter(|c| c != "help")
            .collect();
        for sub in subs {
            let mut p = path.clone();
            p.push(sub);
            walk(p, out);
        }
    }
    let mut out = Vec::new();
    walk(Vec::new(), &mut out);
    out
}
