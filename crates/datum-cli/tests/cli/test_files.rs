//! Every test file is compiled: a `.rs` file under a crate's `tests/` that no
//! test target reaches through `mod` declarations never runs, and nothing
//! says so. Here, one does.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::repo_root;

/// The test targets cargo builds for a crate: `tests/*.rs` and
/// `tests/*/main.rs` (unless `autotests = false`), and every `[[test]]` path.
fn targets(crate_dir: &Path) -> Vec<PathBuf> {
    let manifest = fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let mut targets = Vec::new();
    let auto = !manifest
        .lines()
        .any(|l| l.replace(' ', "") == "autotests=false");
    let tests = crate_dir.join("tests");
    if auto && tests.is_dir() {
        for entry in fs::read_dir(&tests).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path.join("main.rs").is_file() {
                targets.push(path.join("main.rs"));
            } else if path.extension().is_some_and(|e| e == "rs") {
                targets.push(path);
            }
        }
    }
    // `path = "..."` inside a `[[test]]` table.
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if in_test && let Some(value) = line.strip_prefix("path") {
            let value = value.trim_start().trim_start_matches('=').trim();
            targets.push(crate_dir.join(value.trim_matches('"')));
        }
    }
    targets
}

/// The modules a file declares with `mod name;` (an inline `mod name { }`
/// brings no file).
fn declared(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_owned())
        })
        .collect()
}

/// Every file reachable from `targets` by following `mod` declarations.
fn reachable(targets: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut roots: Vec<(PathBuf, bool)> = targets.iter().map(|t| (t.clone(), true)).collect();
    while let Some((file, is_root)) = roots.pop() {
        if !file.is_file() || !seen.insert(file.clone()) {
            continue;
        }
        // A crate root or `mod.rs` holds its children beside it; `a.rs`
        // holds them in `a/`.
        let stem = file.file_stem().unwrap().to_string_lossy();
        let dir = if is_root || stem == "mod" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for name in declared(&file) {
            roots.push((dir.join(format!("{name}.rs")), false));
            roots.push((dir.join(&name).join("mod.rs"), false));
        }
        // `#[path = "x/y.rs"] mod y;`: the file named, beside this one.
        for path in path_attributes(&file) {
            roots.push((file.parent().unwrap().join(path), false));
        }
    }
    seen
}

/// The files `#[path = "..."]` attributes name, as written.
fn path_attributes(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let value = line.trim().strip_prefix("#[path")?.trim_start();
            let value = value.strip_prefix('=')?.trim().strip_suffix(']')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `.rs` files under the crate's `tests/` that no test target compiles.
fn forgotten(crate_dir: &Path) -> Vec<PathBuf> {
    let reached = reachable(&targets(crate_dir));
    let mut files = Vec::new();
    rust_files(&crate_dir.join("tests"), &mut files);
    files.retain(|f| !reached.contains(f));
    files.sort();
    files
}

#[test]
fn no_test_file_is_left_out_of_a_test_target() {
    let mut crates = 0;
    let mut left_out = Vec::new();
    for entry in fs::read_dir(repo_root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            crates += 1;
            left_out.extend(forgotten(&dir));
        }
    }
    assert!(crates >= 4, "found only {crates} crates");
    assert!(
        left_out.is_empty(),
        "these test files are compiled by no test target; declare each as a \
         `mod` of one (tests/cli/main.rs for the CLI tests):\n{left_out:#?}"
    );
}

#[test]
fn a_file_no_target_declares_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"x\"\n\n[[test]]\nname = \"suite\"\npath = \"tests/suite/run.rs\"\n",
    );
    write("tests/cli/main.rs", "mod a;\npub mod b;\nmod inline {}\n");
    write("tests/cli/a.rs", "mod nested;\n");
    write("tests/cli/a/nested.rs", "");
    write("tests/cli/b.rs", "");
    write("tests/cli/forgotten.rs", "");
    write("tests/top.rs", "mod common;\n");
    write("tests/common/mod.rs", "pub mod helper;\n");
    write("tests/common/helper.rs", "");
    write("tests/common/stray.rs", "");
    write("tests/suite/run.rs", "");
    write("tests/suite/unused.rs", "");
    write("tests/fixtures/fleet/datum.yaml", "");
    let names: Vec<_> = forgotten(root)
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "tests/cli/forgotten.rs",
            "tests/common/stray.rs",
            "tests/suite/unused.rs"
        ]
    );
}
