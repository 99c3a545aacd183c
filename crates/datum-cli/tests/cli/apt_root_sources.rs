//! `datum apply --root` on a Debian-like root whose own deb822 sources
//! (not Datum's Repositories) name a local repository: apt reads them as
//! it reads Datum's, addresses on the network left out with a note naming
//! the file and line, and one-line-style sources said to be unread.

use std::fs;
use std::path::Path;

use crate::apt_root::{apt_tools, debian_with_repo, fleet};
use crate::common::Run;
use crate::package_root::apply;

/// The root's own sources file `NAME` holding `text`, and a Package to
/// install: the run's output.
fn with_sources(tmp: &Path, root: &Path, name: &str, text: &str) -> Run {
    fs::write(root.join("etc/apt/sources.list.d").join(name), text).unwrap();
    let dir = tmp.join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    apply(&dir, root, &["--format", "json"])
}

#[test]
fn the_roots_own_sources_are_read_and_network_ones_are_noted() {
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    fs::create_dir_all(root.join("etc/apt/keyrings")).unwrap();
    fs::write(root.join("etc/apt/keyrings/local.asc"), &key).unwrap();
    fs::write(
        root.join("etc/apt/sources.list"),
        "# the image's\ndeb http://deb.debian.org/debian bookworm main\n",
    )
    .unwrap();
    let run = with_sources(
        tmp.path(),
        &root,
        "local.sources",
        "Types: deb\nURIs: https://deb.debian.org/debian\nSuites: bookworm\n\
         Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
         Types: deb\nURIs: file:///srv/repo\nSuites: ./\nSigned-By: /etc/apt/keyrings/local.asc\n",
    );
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        fs::read_to_string(root.join("usr/share/hello-datum/version")).unwrap(),
        "2.0-1\n"
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let file = root.join("etc/apt/sources.list.d/local.sources");
    assert_eq!(
        v["resources"][0]["notes"],
        serde_json::json!([
            format!(
                "{}: line 2: `https://deb.debian.org/debian` is not a file: address, which apt cannot reach under --root (nothing is downloaded from outside the root): apt is not given it",
                file.display()
            ),
            format!(
                "{}: one-line-style sources are not read under --root, only the deb822 `.sources` files of /etc/apt/sources.list.d: write its entries as a `.sources` file for apt to read them",
                root.join("etc/apt/sources.list").display()
            ),
        ])
    );
    // Settled: nothing to do, nothing noted.
    let again = apply(&tmp.path().join("fleet"), &root, &["--format", "json"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        !again.stdout.contains("not read under --root")
            && !again.stdout.contains("apt is not given it"),
        "{}",
        again.stdout
    );
}

/// The root's own sources are checked as Datum's are: a source that skips
/// the signature check is refused at its line, a key file is read inside
/// the root (never this machine's); nothing is installed.
#[test]
fn the_roots_own_sources_are_checked_as_datums_are() {
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    let host_key = tmp.path().join("hostkey.asc");
    fs::write(&host_key, key).unwrap();
    let file = root.join("etc/apt/sources.list.d/local.sources");
    for (text, want) in [
        (
            "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nTrusted: yes\n".to_owned(),
            format!("{}: line 4: `Trusted`: under --root", file.display()),
        ),
        (
            format!(
                "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nSigned-By: {}\n",
                host_key.display()
            ),
            format!(
                "{}: line 4: `Signed-By`: the key {} does not exist",
                file.display(),
                root.join(host_key.strip_prefix("/").unwrap()).display()
            ),
        ),
    ] {
        let run = with_sources(tmp.path(), &root, "local.sources", &text);
        assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(&want), "{want}\n{}", run.stdout);
        assert!(!root.join("usr/share/hello-datum/version").exists());
    }
}
