//! Records the commit `datum --version` names (`DATUM_VERSION`), asking git
//! when the sources are a git checkout and falling back to the package
//! version when they are not.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/version.rs"]
mod version;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
    };
    let commit = version::commit(&git);
    let pkg = std::env::var("CARGO_PKG_VERSION").expect("set by cargo");
    println!(
        "cargo:rustc-env=DATUM_VERSION={}",
        version::describe(&pkg, commit.as_ref())
    );
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/version.rs");
    if commit.is_some() {
        // Rebuilt when HEAD moves: HEAD itself, the branch it names, and
        // packed refs (worktrees keep HEAD apart from the shared refs).
        let at = |p: String| {
            let p = PathBuf::from(p);
            if p.is_absolute() { p } else { dir.join(p) }
        };
        if let Some(git_dir) = git(&["rev-parse", "--git-dir"]).map(at) {
            watch(&git_dir.join("HEAD"));
        }
        if let Some(common) = git(&["rev-parse", "--git-common-dir"]).map(at) {
            watch(&common.join("packed-refs"));
            if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
                watch(&common.join(branch));
            }
        }
    }
}

fn watch(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}
