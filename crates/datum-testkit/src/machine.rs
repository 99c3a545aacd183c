//! A machine root real commands run in: programs of this machine copied
//! into a directory with the shared libraries they load (as `ldd` lists
//! them), so a test can have Datum chroot there and run them.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Copies each program into `root` at the path it has on this machine, with
/// the libraries it loads. A name is looked up in `PATH` (`touch` becomes
/// `/usr/bin/touch`); an absolute path (`/bin/sh`) is taken as it is.
/// Returns where each program went, inside the root.
///
/// Panics when a program is not on this machine: the test needs it, and a
/// test that cannot run must not pass.
pub fn install_programs(root: &Path, programs: &[&str]) -> Vec<String> {
    let mut placed = Vec::new();
    for program in programs {
        let path = find(program).unwrap_or_else(|| panic!("no `{program}` on this machine"));
        install_program_at(root, program, &path.display().to_string());
        placed.push(path.display().to_string());
    }
    placed
}

/// Copies `program` (found as [`install_programs`] finds it) to the
/// absolute path `at` inside `root`, with the libraries it loads at their
/// own paths.
pub fn install_program_at(root: &Path, program: &str, at: &str) {
    let path = find(program).unwrap_or_else(|| panic!("no `{program}` on this machine"));
    copy_to(&path, &root.join(at.trim_start_matches('/')), 0o755);
    for lib in libraries(&path) {
        copy_in(root, &lib, 0o755);
    }
}

/// `program` as this machine's shell would find it.
fn find(program: &str) -> Option<PathBuf> {
    if program.starts_with('/') {
        return Path::new(program).exists().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The shared libraries `ldd` says `program` loads, the dynamic loader
/// included (none for a static program).
fn libraries(program: &Path) -> Vec<PathBuf> {
    let out = Command::new("ldd").arg(program).output().expect("ldd runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once(" => ") {
                Some((_, rest)) => rest.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// Copies `path` of this machine (links followed) to the same path under
/// `root`.
fn copy_in(root: &Path, path: &Path, mode: u32) {
    copy_to(
        path,
        &root.join(path.strip_prefix("/").expect("an absolute path")),
        mode,
    );
}

fn copy_to(path: &Path, to: &Path, mode: u32) {
    if to.exists() {
        return;
    }
    fs::create_dir_all(to.parent().expect("a parent")).unwrap();
    fs::copy(path, to).unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
    fs::set_permissions(to, fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_and_its_loader_are_copied_where_they_live() {
        let dir = tempfile_dir();
        let placed = install_programs(&dir, &["/bin/sh"]);
        assert_eq!(placed, ["/bin/sh"]);
        assert!(dir.join("bin/sh").is_file());
        let libs = libraries(Path::new("/bin/sh"));
        assert!(!libs.is_empty(), "a dynamic /bin/sh loads libc");
        for lib in libs {
            assert!(dir.join(lib.strip_prefix("/").unwrap()).is_file());
        }
        let _ = fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("testkit-machine-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}
