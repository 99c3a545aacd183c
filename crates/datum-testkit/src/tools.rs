//! What a test needs of the machine beyond Rust: system tools (dpkg, the
//! shadow tools, systemctl, systemd-analyze, age...) and being root. A
//! test asks [`installed`] or [`root`] first and returns when told `false`;
//! it never passes by skipping in CI, where `DATUM_TEST_REQUIRE_TOOLS` is
//! set (`.ci/run` installs the tools) and a missing one fails the test.

use std::path::{Path, PathBuf};

/// Set (to anything but empty or `0`), a missing tool or a run as another
/// user than root fails the test instead of skipping it.
pub const REQUIRE: &str = "DATUM_TEST_REQUIRE_TOOLS";

/// Whether a missing tool must fail the test.
pub fn required() -> bool {
    std::env::var_os(REQUIRE).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Where `name` is on PATH, as the tests will run it.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether every tool in `names` is installed, for a test that runs them:
/// says which it uses (on stderr, shown with the test's output), or that
/// the test is skipped. Under [`REQUIRE`], a missing tool panics: the
/// test fails rather than pass without running.
pub fn installed(names: &[&str]) -> bool {
    let (found, missing): (Vec<_>, Vec<_>) = names
        .iter()
        .map(|n| (*n, which(n)))
        .partition(|(_, p)| p.is_some());
    for (name, path) in &found {
        eprintln!(
            "using {name}: {}",
            path.as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        );
    }
    let missing: Vec<&str> = missing.into_iter().map(|(n, _)| n).collect();
    settle(missing.is_empty(), || {
        format!("{} not installed", missing.join(", "))
    })
}

/// Whether the test runs as root, for one that needs to be (to own files
/// as others, make a device, be the user a root-only check is about).
/// Under [`REQUIRE`], not being root fails the test.
pub fn root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    // The owner of this process's own /proc entry is its effective user.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    settle(root, || "not running as root".to_owned())
}

fn settle(ok: bool, why: impl FnOnce() -> String) -> bool {
    if ok {
        return true;
    }
    let why = why();
    assert!(
        !required(),
        "{why}, and {REQUIRE} is set: the test must run, not be skipped (CI installs the tools in .ci/run)"
    );
    eprintln!("skipped: {why} (with {REQUIRE}=1 this fails the test)");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sh_is_found_and_a_made_up_tool_is_not() {
        assert!(which("sh").is_some());
        assert!(which("datum-no-such-tool").is_none());
    }

    #[test]
    fn a_missing_tool_is_a_skip_only_when_not_required() {
        if required() {
            let missing = std::panic::catch_unwind(|| installed(&["datum-no-such-tool"]));
            assert!(missing.is_err());
        } else {
            assert!(!installed(&["datum-no-such-tool"]));
        }
        assert!(installed(&["sh"]));
    }
}
