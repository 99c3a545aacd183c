//! A zypper Repository: `/etc/zypp/repos.d/datum-NAME.repo`, its key
//! beside it (`datum-NAME.asc`) and imported into the rpm database, whose
//! keys are the ones zypper trusts (it is never asked to import one).
//! With a key, both the repository's metadata (`repomd.xml.asc`) and each
//! package must be signed by it (`repo_gpgcheck=1`, `pkg_gpgcheck=1`:
//! zypper would otherwise take a package whose checksum signed metadata
//! lists, whoever signed the package); zypper does not refresh
//! the repository by itself (`autorefresh=0`): Datum does when it changes.
//! A key Datum imported leaves the rpm database when its Repository is
//! removed or given another key, unless another of Datum's Repositories
//! holds it.

use std::io::Write as _;

use super::super::Failure;
use super::super::command::{self, tool};
use super::super::dnf::DBPATH;
use super::super::local_repo::stays_inside;
use crate::root::Root;
use crate::spec::{Ensure, RepositorySpec};

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

/// After a zypper Repository's files were converged: the key it held
/// before (`before`) leaves the rpm database when the Repository no
/// longer has it and no other Repository of Datum's holds it (Datum
/// imported it); the key it has now is imported.
pub fn keys(root: &Root, s: &RepositorySpec, before: Option<String>) -> Result<(), Failure> {
    let now = s.key.as_deref().filter(|_| s.ensure == Ensure::Present);
    if let Some(old) = before.as_deref().and_then(body)
        && now.and_then(body).as_deref() != Some(old.as_str())
        && !others_hold(root, &s.name, &old)?
    {
        forget(root, &old)?;
    }
    match now {
        Some(k) => import(root, k),
        None => Ok(()),
    }
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

/// Removes from the rpm database the `gpg-pubkey` entries holding the
/// key whose body is `key`.
fn forget(root: &Root, key: &str) -> Result<(), Failure> {
    const END: &str = "@@datum-end-of-key@@";
    let mut query = rpm(root)?;
    query.args(["-q", "gpg-pubkey", "--qf"]).arg(format!(
        "%{{NAME}}-%{{VERSION}}-%{{RELEASE}}\n%{{DESCRIPTION}}\n{END}\n"
    ));
    let out = command::output(&mut query)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let entries: Vec<&str> = text
        .split(END)
        .filter_map(|entry| {
            let (nvr, description) = entry.trim().split_once('\n')?;
            (body(description).as_deref() == Some(key)).then_some(nvr.trim())
        })
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let mut erase = rpm(root)?;
    erase.arg("-e").args(entries);
    command::run(&mut erase).map(drop)
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
