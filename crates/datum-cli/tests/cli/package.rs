//! The Debian package's metadata: every asset `[package.metadata.deb]`
//! lists is made by `contrib/deb/assets.sh` (run here with the binary under
//! test) or exists in the repository, and CI builds and lists the package.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::repo_root;

/// `(source, destination)` of each asset in the crate's deb metadata.
fn assets() -> Vec<(String, String)> {
    let manifest = fs::read_to_string(repo_root().join("crates/datum-cli/Cargo.toml")).unwrap();
    let deb = manifest
        .split("[package.metadata.deb]")
        .nth(1)
        .expect("deb metadata");
    let list = deb
        .split("assets = [")
        .nth(1)
        .unwrap()
        .split("\n]")
        .next()
        .unwrap();
    list.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('['))
        .map(|l| {
            let parts: Vec<&str> = l.split('"').collect();
            (parts[1].to_owned(), parts[3].to_owned())
        })
        .collect()
}

/// Files in `dir` matching `pattern` (a `*` in the last component only).
fn matching(dir: &Path, pattern: &str) -> Vec<String> {
    let (prefix, suffix) = pattern.split_once('*').unwrap_or((pattern, ""));
    let mut out: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    if pattern.contains('*') {
                        n.starts_with(prefix) && n.ends_with(suffix)
                    } else {
                        n == pattern
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn every_packaged_asset_is_made_by_the_assets_script() {
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("deb-assets");
    let out = Command::new("bash")
        .arg(repo_root().join("contrib/deb/assets.sh"))
        .arg(assert_cmd::cargo::cargo_bin("datum"))
        .arg(&made)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let assets = assets();
    let dests: Vec<&str> = assets.iter().map(|(_, d)| d.as_str()).collect();
    for want in [
        "usr/bin/",
        "usr/share/man/man1/",
        "usr/share/bash-completion/completions/datum",
        "usr/share/zsh/vendor-completions/_datum",
        "usr/share/fish/vendor_completions.d/datum.fish",
        "usr/lib/systemd/system/",
    ] {
        assert!(
            dests.contains(&want),
            "nothing installed at {want}: {dests:?}"
        );
    }
    for (source, dest) in &assets {
        if let Some(rel) = source.strip_prefix("target/release/deb-assets/") {
            let path = made.join(rel);
            let (dir, name) = (path.parent().unwrap(), path.file_name().unwrap());
            let found = matching(dir, &name.to_string_lossy());
            assert!(!found.is_empty(), "{source} (for {dest}) is not made");
        } else if source != "target/release/datum" {
            let path = repo_root().join("crates/datum-cli").join(source);
            assert!(path.is_file(), "{source} does not exist");
        }
    }
    // Every unit under contrib/systemd is shipped.
    for unit in fs::read_dir(repo_root().join("contrib/systemd")).unwrap() {
        let name = unit.unwrap().file_name().to_string_lossy().into_owned();
        let source = format!("../../contrib/systemd/{name}");
        assert!(
            assets.iter().any(|(s, _)| *s == source),
            "{name} is not packaged"
        );
    }
    // One compressed page per command, and datum(1).
    let pages = matching(&made.join("man"), "*.1.gz");
    assert!(pages.contains(&"datum.1.gz".to_owned()), "{pages:?}");
    assert!(
        pages.contains(&"datum-completions.1.gz".to_owned()),
        "{pages:?}"
    );
    assert_eq!(
        matching(&made.join("man"), "*"),
        pages,
        "only compressed pages"
    );
    let zsh = fs::read_to_string(made.join("completions/_datum")).unwrap();
    assert!(zsh.starts_with("#compdef datum\n"));
    assert!(zsh.ends_with("_clap_dynamic_completer_datum \"$@\"\n"));
}

#[test]
fn ci_builds_the_package_and_lists_it() {
    let ci = fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(ci.contains("bash contrib/deb/build.sh"), "{ci}");
    let build = fs::read_to_string(repo_root().join("contrib/deb/build.sh")).unwrap();
    assert!(build.contains("cargo build --release --locked -p datum-cli"));
    assert!(build.contains("dpkg-deb -c \"$deb\""));
}

/// The package script, run on the binary under test, makes a package
/// dpkg reads: its fields from the crate's metadata, dependencies found by
/// dpkg-shlibdeps, and every asset at the place the metadata names.
#[test]
fn the_package_script_packs_what_the_metadata_lists() {
    if !datum_testkit::tools::installed(&["dpkg-deb", "dpkg-shlibdeps", "python3"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(repo_root().join("contrib/deb/build.sh"))
        .env("DATUM_DEB_BIN", assert_cmd::cargo::cargo_bin("datum"))
        .env("CARGO_TARGET_DIR", tmp.path())
        // Compressing the debug binary is most of the time and not what
        // this tests.
        .env("DATUM_DEB_COMPRESSION", "none")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let deb = stdout.lines().next().unwrap();
    assert!(deb.starts_with(&*tmp.path().join("debian/datum_0.1.0-1_").to_string_lossy()));
    let info = Command::new("dpkg-deb").args(["-f", deb]).output().unwrap();
    let control = String::from_utf8(info.stdout).unwrap();
    for want in ["Package: datum\n", "Version: 0.1.0-1\n", "Section: admin\n"] {
        assert!(control.contains(want), "{want} missing from\n{control}");
    }
    assert!(control.contains("Depends: libc6 (>= "), "{control}");
    let listing = Command::new("dpkg-deb").args(["-c", deb]).output().unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    for (_, dest) in assets() {
        let dest = format!("./{dest}");
        assert!(listing.contains(&dest), "nothing at {dest} in\n{listing}");
    }
    for want in [
        "./usr/bin/datum\n",
        "./usr/share/man/man1/datum-apply.1.gz\n",
        "./usr/lib/systemd/system/datum-agent.timer\n",
        "./usr/share/doc/datum/copyright\n",
    ] {
        assert!(listing.contains(want), "{want} missing from\n{listing}");
    }
    assert!(listing.contains("-rwxr-xr-x root/root"), "{listing}");
}
