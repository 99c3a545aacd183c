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

/// A repository in the root whose index (`Filename:`) puts its package
/// outside the root, where the `.deb` is, and nowhere inside: apt, asked
/// where it would read the transaction's packages, names that path, and
/// the run is refused before apt reads it; nothing is installed.
#[test]
fn a_package_whose_index_leads_out_of_the_root_is_refused() {
    use std::process::Command;
    if !apt_tools() || !datum_testkit::tools::installed(&["sha256sum"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    datum_testkit::packages::debian(&root);
    fs::create_dir_all(root.join("etc/apt/sources.list.d")).unwrap();
    fs::create_dir_all(root.join("etc/datum")).unwrap();
    fs::write(root.join("etc/datum/host"), "debian-001\n").unwrap();
    let repo = root.join("srv/repo");
    datum_testkit::packages::deb(&repo, "hello-datum", "1.0-1", None);
    let gnupg = tmp.path().join("gnupg");
    let key = datum_testkit::packages::apt_repository(&repo, &gnupg);
    // The index rewritten, its Release and InRelease made again (signed
    // with the same key), the package moved out of the root.
    let deb = "hello-datum_1.0-1_all.deb";
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::rename(repo.join(deb), outside.join(deb)).unwrap();
    let index = fs::read_to_string(repo.join("Packages")).unwrap().replace(
        &format!("Filename: ./{deb}"),
        &format!("Filename: ../../../outside/{deb}"),
    );
    assert!(index.contains("../../../outside/"), "{index}");
    fs::write(repo.join("Packages"), &index).unwrap();
    let sum = Command::new("sha256sum")
        .arg(repo.join("Packages"))
        .output()
        .unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let sum = sum.split_whitespace().next().unwrap();
    fs::write(
        repo.join("Release"),
        format!(
            "Origin: t\nLabel: t\nSHA256:\n {sum} {} Packages\n",
            index.len()
        ),
    )
    .unwrap();
    let signed = Command::new("gpg")
        .env("GNUPGHOME", &gnupg)
        .args(["--batch", "--yes", "--passphrase", "", "--clearsign", "-o"])
        .arg(repo.join("InRelease"))
        .arg(repo.join("Release"))
        .status()
        .unwrap();
    assert!(signed.success());
    fs::create_dir_all(root.join("etc/apt/keyrings")).unwrap();
    fs::write(root.join("etc/apt/keyrings/local.asc"), key).unwrap();
    let run = with_sources(
        tmp.path(),
        &root,
        "local.sources",
        "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nSigned-By: /etc/apt/keyrings/local.asc\n",
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    let want = format!(
        "package {deb}: apt would read it from `file:{}/../../../outside/{deb}`, which leads out of the root",
        repo.display()
    );
    assert!(run.stdout.contains(&want), "{want}\n{}", run.stdout);
    assert!(!root.join("usr/share/hello-datum/version").exists());
}

/// The install reads the package lists the check read: apt links a
/// `file:` repository's index into its lists, and an index changed once
/// the check has run (here by an `apt-get` that swaps it in after
/// `--print-uris`, as a process of the root could), its `Filename:`
/// leading out of the root to a `.deb` of this machine, is never read.
#[test]
fn the_install_reads_the_lists_the_check_read() {
    use std::os::unix::fs::PermissionsExt;
    if !apt_tools() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (root, key) = debian_with_repo(tmp.path());
    fs::create_dir_all(root.join("etc/apt/keyrings")).unwrap();
    fs::write(root.join("etc/apt/keyrings/local.asc"), &key).unwrap();
    let repo = root.join("srv/repo");
    let deb = "hello-datum_2.0-1_all.deb";
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let later = tmp.path().join("Packages.later");
    let index = fs::read_to_string(repo.join("Packages")).unwrap().replace(
        &format!("Filename: ./{deb}"),
        &format!("Filename: ../../../outside/{deb}"),
    );
    assert!(index.contains("../../../outside/"), "{index}");
    fs::write(&later, index).unwrap();
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let (r, o, l) = (repo.display(), outside.display(), later.display());
    fs::write(
        bin.join("apt-get"),
        format!(
            "#!/bin/sh\n/usr/bin/apt-get \"$@\"\nst=$?\ncase \" $* \" in *' --print-uris '*)\n\
             cp {l} {r}/Packages && mv {r}/{deb} {o}/ ;;\nesac\nexit $st\n"
        ),
    )
    .unwrap();
    fs::set_permissions(bin.join("apt-get"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(
        root.join("etc/apt/sources.list.d/local.sources"),
        "Types: deb\nURIs: file:///srv/repo\nSuites: ./\nSigned-By: /etc/apt/keyrings/local.asc\n",
    )
    .unwrap();
    let dir = tmp.path().join("fleet");
    fleet(&dir, "  Package[hello-datum]:\n    ensure: installed\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = crate::common::datum()
        .env("PATH", path)
        .args(["apply", "--root", root.to_str().unwrap(), "--fleet"])
        .arg(&dir)
        .output()
        .unwrap();
    let run = Run::from(out);
    assert!(outside.join(deb).exists() && !repo.join(deb).exists());
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    // apt looked for the package where the checked index puts it.
    assert!(
        run.stdout.contains(&format!("{}/./{deb}", repo.display())),
        "{}",
        run.stdout
    );
    assert!(!root.join("usr/share/hello-datum/version").exists());
}
