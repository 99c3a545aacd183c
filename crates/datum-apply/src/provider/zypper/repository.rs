//! A zypper Repository: `/etc/zypp/repos.d/datum-NAME.repo`, its key
//! beside it (`datum-NAME.asc`) and imported into the rpm database, whose
//! keys are the ones zypper trusts (it is never asked to import one).
//! With a key, both the repository's metadata (`repomd.xml.asc`) and each
//! package must be signed by it (`repo_gpgcheck=1`, `pkg_gpgcheck=1`:
//! zypper would otherwise take a package whose checksum signed metadata
//! lists, whoever signed the package); zypper does not refresh
//! the repository by itself (`autorefresh=0`): Datum does when it changes.

use std::io::Write as _;

use super::super::Failure;
use super::super::command::{self, tool};
use super::super::dnf::DBPATH;
use super::super::local_repo::stays_inside;
use crate::root::Root;
use crate::spec::RepositorySpec;

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

/// Imports `key` (armored) into the rpm database of `root`, where zypper
/// finds the keys it trusts. Importing a key already there changes nothing.
pub fn import(root: &Root, key: &str) -> Result<(), Failure> {
    stays_inside(root, DBPATH).map_err(Failure::new)?;
    let mut file = tempfile::Builder::new()
        .prefix("datum-key-")
        .tempfile()
        .map_err(|e| Failure::new(format!("cannot keep the key to import: {e}")))?;
    file.write_all(key.as_bytes())
        .map_err(|e| Failure::new(format!("cannot keep the key to import: {e}")))?;
    let mut cmd = tool("rpm");
    if let Some(dir) = root.dir() {
        cmd.arg("--root").arg(dir).args(["--dbpath", DBPATH]);
    }
    cmd.arg("--import").arg(file.path());
    command::run(&mut cmd).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Ensure;

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
}
