//! A zypper Repository: `/etc/zypp/repos.d/datum-NAME.repo`, its key
//! beside it (`datum-NAME.asc`) and imported into the rpm database, whose
//! keys are the ones zypper trusts (it is never asked to import one).
//! With a key, the repository's metadata (`repomd.xml.asc`) must be
//! signed by it, and each package signed too (`repo_gpgcheck=1`,
//! `pkg_gpgcheck=1`: zypper would otherwise take a package whose checksum
//! signed metadata lists, unsigned): rpm takes a package signed by any
//! key of the rpm database, this one or another; zypper does not refresh
//! the repository by itself (`autorefresh=0`): Datum does when it changes.
//! A key Datum imported (recorded in `datum-NAME.keys` beside the file)
//! leaves the rpm database when its Repository is removed or given
//! another key, unless another of Datum's Repositories holds it; a key
//! that was in the database before Datum imported it is left there.
//! Examining checks the database holds the key ([`in_rpm_database`]);
//! converging first checks rpm takes it ([`validate`]), before any file
//! is written.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;

use super::super::Failure;
use super::super::command::{self, tool};
use super::super::dnf::DBPATH;
use super::super::local_repo::stays_inside;
use crate::root::Root;
use crate::spec::{Ensure, RepositorySpec};
use datum_fs::Attrs;

/// The names of Datum's zypper Repositories that changed in the run
/// (zypper's aliases): the next install refreshes them, and only them
/// of the repositories zypper has read before.
pub type Changed = std::sync::Arc<std::sync::Mutex<BTreeSet<String>>>;

/// The largest key file read back.
const KEY_LIMIT: u64 = 1 << 20;

/// Where a zypper Repository's file and key are kept.
pub fn paths(name: &str) -> (String, String) {
    (
        format!("{}/datum-{name}.repo", super::REPOS_DIR),
        format!("{}/datum-{name}.asc", super::REPOS_DIR),
    )
}

/// The `.repo` file zypper reads, `key` being where its key is kept.
pub fn content(head: &str, s: &RepositorySpec, key: &str) -> Result<String, Failure> {
    if !s.suites.is_empty() || !s.components.is_empty() {
        return Err(Failure::new(
            "`suites` and `components` are apt's: a zypper Repository takes only `url` and `key`",
        ));
    }
    let check = match &s.key {
        Some(_) => format!("gpgcheck=1\nrepo_gpgcheck=1\npkg_gpgcheck=1\ngpgkey=file://{key}\n"),
        None => "gpgcheck=0\n".to_owned(),
    };
    Ok(format!(
        "{head}[{name}]\nname={name}\nbaseurl={}\nenabled=1\nautorefresh=0\n{check}",
        s.url,
        name = s.name
    ))
}

/// The key a Repository's key file holds now (before it is changed).
pub fn held(root: &Root, path: &str) -> Option<String> {
    let bytes = root.read_small(path, KEY_LIMIT).ok().flatten()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Where the rpm database entries of the keys Datum imported for
/// Repository `name` are recorded (`gpg-pubkey-VERSION-RELEASE`, one a
/// line): zypper reads only the `.repo` files of the directory.
pub fn record_path(name: &str) -> String {
    format!("{}/datum-{name}.keys", super::REPOS_DIR)
}

/// After a zypper Repository's files were converged: its key is in the
/// rpm database (imported when missing), and the entries Datum imported
/// that it no longer wants leave it, unless another of Datum's
/// Repositories holds the same key. An entry is Datum's when a record
/// ([`record_path`]) lists it: a key already in the database that none
/// lists (the operator imported it) is never removed.
pub fn keys(root: &Root, s: &RepositorySpec) -> Result<(), Failure> {
    let want = s
        .key
        .as_deref()
        .filter(|_| s.ensure == Ensure::Present)
        .and_then(body);
    let mine = recorded(root, &record_path(&s.name));
    let mut keep = BTreeSet::new();
    if let Some(want) = &want {
        let entries = |root: &Root| -> Result<Vec<String>, Failure> {
            Ok(in_database(root)?
                .into_iter()
                .filter(|(_, b)| b == want)
                .map(|(nvr, _)| nvr)
                .collect())
        };
        let there = entries(root)?;
        if there.is_empty() {
            import(root, s.key.as_deref().unwrap_or_default())?;
            keep.extend(entries(root)?);
        } else {
            let ours = datum_imported(root)?;
            keep.extend(there.into_iter().filter(|nvr| ours.contains(nvr)));
        }
    }
    let bodies: BTreeMap<String, String> = in_database(root)?.into_iter().collect();
    let gone: Vec<String> = mine
        .iter()
        .filter(|nvr| !keep.contains(*nvr))
        .filter(|nvr| {
            // Another Repository of Datum's holding the same key keeps it.
            let b = bodies.get(*nvr);
            b.is_some_and(|b| !others_hold(root, &s.name, b).unwrap_or(true))
        })
        .cloned()
        .collect();
    if !gone.is_empty() {
        let mut erase = rpm(root)?;
        erase.arg("-e").args(&gone);
        command::run(&mut erase)?;
    }
    keep_record(root, &s.name, &keep)
}

/// Whether the rpm database of `root` holds `key` (armored), the key
/// zypper checks signatures with.
pub fn in_rpm_database(root: &Root, key: &str) -> Result<bool, Failure> {
    let Some(want) = body(key) else {
        return Ok(false);
    };
    Ok(in_database(root)?.iter().any(|(_, b)| *b == want))
}

/// Checks that rpm takes `key` as a public key, by importing it into a
/// scratch rpm database of its own: before any file of the Repository is
/// written, so that a key rpm refuses leaves nothing behind.
pub fn validate(key: &str) -> Result<(), Failure> {
    let scratch = |e: std::io::Error| {
        Failure::new(format!(
            "cannot prepare a scratch rpm database to check the key: {e}"
        ))
    };
    let dir = tempfile::Builder::new()
        .prefix("datum-keycheck-")
        .tempdir()
        .map_err(scratch)?;
    let file = dir.path().join("key.asc");
    std::fs::write(&file, key).map_err(scratch)?;
    let db = dir.path().join("db");
    std::fs::create_dir(&db).map_err(scratch)?;
    let mut cmd = tool("rpm");
    cmd.arg("--dbpath").arg(&db).arg("--import").arg(&file);
    let out = command::output(&mut cmd)?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.trim().replace(&file.display().to_string(), "the key");
    Err(Failure::new(format!(
        "rpm refuses `key` as a public key ({said}), so zypper could not trust it; nothing was written: give the armored OpenPGP public key, as `gpg --armor --export KEYID` prints it (-----BEGIN PGP PUBLIC KEY BLOCK----- ...)"
    )))
}

/// The entries a record lists.
fn recorded(root: &Root, path: &str) -> BTreeSet<String> {
    held(root, path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gpg-pubkey-"))
        .map(str::to_owned)
        .collect()
}

/// The entries every record of Datum's lists (`datum-*.keys`).
fn datum_imported(root: &Root) -> Result<BTreeSet<String>, Failure> {
    let dir = super::REPOS_DIR;
    let names = root
        .list(dir)
        .map_err(|e| Failure::new(format!("cannot list {}: {e}", root.path(dir).display())))?;
    Ok(names
        .iter()
        .map(|n| n.to_string_lossy())
        .filter(|n| n.starts_with("datum-") && n.ends_with(".keys"))
        .flat_map(|n| recorded(root, &format!("{dir}/{n}")))
        .collect())
}

/// Writes the entries Datum imported for Repository `name` (removes the
/// record when none).
fn keep_record(root: &Root, name: &str, keep: &BTreeSet<String>) -> Result<(), Failure> {
    let path = record_path(name);
    let failed = |e: std::io::Error| {
        Failure::new(format!("cannot write {}: {e}", root.path(&path).display()))
    };
    if keep.is_empty() {
        if root.lstat(&path).map_err(failed)?.is_some() {
            root.remove_file(&path).map_err(failed)?;
        }
        return Ok(());
    }
    let mut text = format!(
        "# Managed by Datum: the keys Datum imported into the rpm database for Repository[{name}], removed with it\n"
    );
    for nvr in keep {
        text.push_str(nvr);
        text.push('\n');
    }
    if held(root, &path).as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    root.write_atomic(&path, text.as_bytes(), Attrs::mode(0o644))
        .map_err(failed)
}

/// The base64 body of an armored key: what rpm keeps of it too (under
/// its own armor headers), whitespace and the checksum line left out.
fn body(armored: &str) -> Option<String> {
    let (_, rest) = armored.split_once("-----BEGIN PGP PUBLIC KEY BLOCK-----")?;
    let (block, _) = rest.split_once("-----END PGP PUBLIC KEY BLOCK-----")?;
    // After the rest of the BEGIN line: headers, a blank line, the body.
    let lines: Vec<&str> = block.lines().skip(1).map(str::trim).collect();
    let start = lines.iter().position(|l| l.is_empty()).map_or(0, |i| i + 1);
    let text: String = lines[start..]
        .iter()
        .filter(|l| !l.starts_with('='))
        .copied()
        .collect();
    (!text.is_empty()).then_some(text)
}

/// Whether another Repository of Datum's (a `datum-*.asc` of
/// [`super::REPOS_DIR`] but `name`'s) holds the key whose body is `key`.
fn others_hold(root: &Root, name: &str, key: &str) -> Result<bool, Failure> {
    let dir = super::REPOS_DIR;
    let names = root
        .list(dir)
        .map_err(|e| Failure::new(format!("cannot list {}: {e}", root.path(dir).display())))?;
    let mine = format!("datum-{name}.asc");
    Ok(names.iter().any(|n| {
        let n = n.to_string_lossy();
        n.starts_with("datum-")
            && n.ends_with(".asc")
            && *n != *mine
            && held(root, &format!("{dir}/{n}"))
                .and_then(|k| body(&k))
                .as_deref()
                == Some(key)
    }))
}

/// The `gpg-pubkey` entries of the rpm database, each with the body of
/// the key it holds.
fn in_database(root: &Root) -> Result<Vec<(String, String)>, Failure> {
    const END: &str = "@@datum-end-of-key@@";
    let mut query = rpm(root)?;
    query.args(["-q", "gpg-pubkey", "--qf"]).arg(format!(
        "%{{NAME}}-%{{VERSION}}-%{{RELEASE}}\n%{{DESCRIPTION}}\n{END}\n"
    ));
    let out = command::output(&mut query)?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split(END)
        .filter_map(|entry| {
            let (nvr, description) = entry.trim().split_once('\n')?;
            Some((nvr.trim().to_owned(), body(description)?))
        })
        .collect())
}

/// rpm on the root's database.
fn rpm(root: &Root) -> Result<std::process::Command, Failure> {
    stays_inside(root, DBPATH).map_err(Failure::new)?;
    let mut cmd = tool("rpm");
    if let Some(dir) = root.dir() {
        cmd.arg("--root").arg(dir).args(["--dbpath", DBPATH]);
    }
    Ok(cmd)
}

/// Imports `key` (armored) into the rpm database of `root`, where zypper
/// finds the keys it trusts. Importing a key already there changes nothing.
pub fn import(root: &Root, key: &str) -> Result<(), Failure> {
    let mut cmd = rpm(root)?;
    let mut file = tempfile::Builder::new()
        .prefix("datum-key-")
        .tempfile()
        .map_err(|e| Failure::new(format!("cannot keep the key to import: {e}")))?;
    file.write_all(key.as_bytes())
        .map_err(|e| Failure::new(format!("cannot keep the key to import: {e}")))?;
    cmd.arg("--import").arg(file.path());
    command::run(&mut cmd).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(key: bool, suites: &[&str]) -> RepositorySpec {
        RepositorySpec {
            name: "vendor".into(),
            ensure: Ensure::Present,
            provider: None,
            url: "file:///srv/repo".into(),
            suites: suites.iter().map(|s| (*s).into()).collect(),
            components: vec![],
            key: key.then(|| "KEY".into()),
        }
    }

    #[test]
    fn the_repo_file_checks_signatures_with_the_key_beside_it() {
        let (repo, key) = paths("vendor");
        assert_eq!(repo, "/etc/zypp/repos.d/datum-vendor.repo");
        assert_eq!(key, "/etc/zypp/repos.d/datum-vendor.asc");
        assert_eq!(
            content("# head\n", &spec(true, &[]), &key).unwrap(),
            "# head\n[vendor]\nname=vendor\nbaseurl=file:///srv/repo\nenabled=1\nautorefresh=0\n\
             gpgcheck=1\nrepo_gpgcheck=1\npkg_gpgcheck=1\ngpgkey=file:///etc/zypp/repos.d/datum-vendor.asc\n"
        );
        assert!(
            content("", &spec(false, &[]), &key)
                .unwrap()
                .ends_with("autorefresh=0\ngpgcheck=0\n")
        );
        let err = content("", &spec(true, &["x"]), &key).unwrap_err().0;
        assert!(err.contains("are apt's"), "{err}");
    }

    #[test]
    fn a_key_is_known_by_its_body_whatever_its_armor() {
        let gpg = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBGsU0oIB\nCADcnOjI\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----\n";
        let rpm = "-----BEGIN PGP PUBLIC KEY BLOCK-----\nVersion: rpm-4.18.0\n\nmQENBGsU0oIBCADc\nnOjI\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----\n";
        assert_eq!(body(gpg).as_deref(), Some("mQENBGsU0oIBCADcnOjI"));
        assert_eq!(body(gpg), body(rpm));
        assert_eq!(body("not a key"), None);
    }
}
