//! Where dnf opens the packages of the root's repositories under
//! `--root`, checked before it installs anything.
//!
//! A repository's metadata (`primary.xml`) gives each package's location:
//! a path relative to the repository (`location href`), or to another
//! address (`xml:base`). dnf opens a package of a local repository at that
//! path on this machine, so a location climbing with `..`, or an
//! `xml:base` naming another directory, would make it read (and install
//! into the root) a file of the host. The locations are asked of dnf
//! itself, with one `dnf repoquery` of every package of the enabled
//! repositories, run as the install is; each is then resolved as dnf
//! does (`xml:base` or the repository's first `baseurl`, joined with the
//! location less its leading `/`) and walked inside the root: a `..` above
//! the root, or a symbolic link on the way, refuses the run. The install
//! then runs with `--cacheonly`, reading the metadata this query loaded
//! into dnf's cache, never the repositories' again.
//!
//! dnf prints what the metadata holds, which may hold line breaks or tabs:
//! its fields are separated by random tokens no repository can forge. An
//! answer that is not UTF-8 (dnf's `.solv` cache holds bytes) is refused.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use crate::provider::local_repo::walk;
use crate::root::Root;

/// What dnf prints for a field without a value.
const NONE: &str = "(none)";

/// Where a repository's packages are found: the path in the root of its
/// first `baseurl`, and the file that configures it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoDir {
    pub path: String,
    pub file: String,
}

/// The repositories Datum handed dnf, by id (one entry per section that
/// defines the id, should several).
pub type Repos = BTreeMap<String, Vec<RepoDir>>;

/// The separators of one run's query.
pub struct Query {
    start: String,
    field: String,
    end: String,
}

impl Query {
    /// Random separators (from the kernel's generator).
    pub fn new() -> Result<Query, String> {
        let mut bytes = [0u8; 24];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        Ok(Query {
            start: format!("@{}s", hex(&bytes[..8])),
            field: format!("@{}f", hex(&bytes[8..16])),
            end: format!("@{}e", hex(&bytes[16..])),
        })
    }

    /// dnf repoquery's arguments: every available package, with its
    /// repository, location, `xml:base` and name.
    pub fn args(&self) -> Vec<String> {
        let f = &self.field;
        vec![
            "repoquery".to_owned(),
            "--available".to_owned(),
            "--qf".to_owned(),
            format!(
                "{}%{{repoid}}{f}%{{location}}{f}%{{baseurl}}{f}%{{name}}-%{{evr}}.%{{arch}}{}",
                self.start, self.end
            ),
        ]
    }

    /// Refuses the first package of `stdout` (dnf's answer) that dnf would
    /// read outside the root `root_dir`, or through a link.
    pub fn check(
        &self,
        root: &Root,
        root_dir: &Path,
        repos: &Repos,
        stdout: &[u8],
    ) -> Result<(), String> {
        // The paths are walked as dnf opens them: a byte that is not
        // UTF-8, replaced, would name another file.
        let stdout = std::str::from_utf8(stdout).map_err(|e| {
            let at = &stdout[e.valid_up_to()..];
            format!(
                "dnf repoquery printed `{}`, which is not UTF-8: a location that is not would be checked as another path than dnf opens, so it is refused",
                String::from_utf8_lossy(&at[..at.len().min(80)]).escape_debug()
            )
        })?;
        let mut records = stdout.split(&self.start);
        if records.next().is_some_and(|lead| !lead.trim().is_empty()) {
            return Err(format!("dnf repoquery printed `{}` first", lead(stdout)));
        }
        for record in records {
            let body = record
                .trim_end_matches('\n')
                .strip_suffix(&self.end)
                .ok_or_else(|| format!("dnf repoquery printed `{}`", lead(record)))?;
            let fields: Vec<&str> = body.split(&self.field).collect();
            let [repo, location, base, package] = fields[..] else {
                return Err(format!("dnf repoquery printed `{}`", lead(record)));
            };
            package_inside(root, root_dir, repos, repo, location, base).map_err(|why| {
                let file = repos
                    .get(repo)
                    .and_then(|d| d.first())
                    .map(|d| format!(" ({})", root.path(&d.file).display()))
                    .unwrap_or_default();
                format!(
                    "repository `{repo}`{file}, package {package}: {why}; under --root dnf opens a package at the path its repository's metadata gives, on this machine, so the run is refused before dnf reads it (rebuild the repository's metadata with plain `createrepo_c DIR`, without --location-prefix or --baseurl)"
                )
            })?;
        }
        Ok(())
    }
}

/// The start of `text`, to show in an error.
fn lead(text: &str) -> String {
    text.chars()
        .take(80)
        .collect::<String>()
        .escape_debug()
        .to_string()
}

/// Refuses a package whose location leads out of the root.
fn package_inside(
    root: &Root,
    root_dir: &Path,
    repos: &Repos,
    repo: &str,
    location: &str,
    base: &str,
) -> Result<(), String> {
    if location.contains("://") && !location.starts_with("file://") {
        return Err(format!(
            "its location `{location}` is on the network, and nothing is downloaded from outside the root"
        ));
    }
    let relative = location.trim_start_matches('/');
    if base != NONE && !base.is_empty() {
        let inside = base
            .strip_prefix("file://")
            .filter(|p| p.starts_with('/') && !p.contains(['%', '?', '#', '\\']))
            .and_then(|p| Path::new(p).strip_prefix(root_dir).ok())
            .ok_or_else(|| {
                format!(
                    "its xml:base `{base}` is not a file:// address inside the root {}",
                    root_dir.display()
                )
            })?;
        let inside = format!("/{}", inside.display());
        return walk(root, &inside, relative)
            .map_err(|e| format!("its location `{location}` under xml:base `{base}` {e}"));
    }
    let dirs = repos
        .get(repo)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| "its repository is none of those Datum read in the root".to_owned())?;
    for dir in dirs {
        walk(root, &dir.path, relative).map_err(|e| format!("its location `{location}` {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt as _;

    fn repos() -> Repos {
        let dir = RepoDir {
            path: "/srv/repo".to_owned(),
            file: "/etc/yum.repos.d/a.repo".to_owned(),
        };
        BTreeMap::from([("a".to_owned(), vec![dir])])
    }

    fn checked(lines: &[[&str; 4]]) -> Result<(), String> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        std::fs::create_dir_all(dir.join("srv/repo/Packages")).unwrap();
        std::fs::create_dir_all(dir.join("srv/other")).unwrap();
        std::os::unix::fs::symlink("/tmp", dir.join("srv/repo/Packages/out")).unwrap();
        let q = Query::new().unwrap();
        let out: String = lines
            .iter()
            .map(|l| format!("{}{}{}\n", q.start, l.join(&q.field), q.end))
            .collect();
        let root = Root::at(&dir);
        q.check(&root, &dir, &repos(), out.as_bytes())
            .map_err(|e| e.replace(&dir.display().to_string(), "ROOT"))
    }

    #[test]
    fn locations_inside_the_root_pass() {
        let inside = [
            ["a", "Packages/x.rpm", NONE, "x-1-1.noarch"],
            ["a", "/x.rpm", NONE, "x-1-1.noarch"],
            ["a", "../other/x.rpm", NONE, "x-1-1.noarch"],
            ["a", "x.rpm", "file://ROOT/srv/other", "x-1-1.noarch"],
        ];
        // The xml:base names the root's directory on this machine.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        std::fs::create_dir_all(dir.join("srv/repo")).unwrap();
        let q = Query::new().unwrap();
        let out: String = inside
            .iter()
            .map(|l| {
                let l = l.map(|f| f.replace("ROOT", &dir.display().to_string()));
                format!("{}{}{}\n", q.start, l.join(&q.field), q.end)
            })
            .collect();
        assert_eq!(
            q.check(&Root::at(&dir), &dir, &repos(), out.as_bytes()),
            Ok(())
        );
    }

    #[test]
    fn locations_leading_out_are_refused_with_the_repository_and_package() {
        for (line, want) in [
            (
                ["a", "../../../x.rpm", NONE, "x-1-1.noarch"],
                "repository `a` (ROOT/etc/yum.repos.d/a.repo), package x-1-1.noarch: its location `../../../x.rpm` leads out of the root",
            ),
            (
                ["a", "x.rpm", "file:///tmp", "x-1-1.noarch"],
                "its xml:base `file:///tmp` is not a file:// address inside the root",
            ),
            (
                ["a", "x.rpm", "https://example.org/", "x-1-1.noarch"],
                "xml:base `https://example.org/`",
            ),
            (
                ["a", "Packages/out/x.rpm", NONE, "x-1-1.noarch"],
                "passes through the symbolic link ROOT/srv/repo/Packages/out",
            ),
            (
                ["a", "http://example.org/x.rpm", NONE, "x-1-1.noarch"],
                "is on the network",
            ),
            (
                ["b", "x.rpm", NONE, "x-1-1.noarch"],
                "repository `b`, package x-1-1.noarch: its repository is none",
            ),
        ] {
            let err = checked(&[line]).unwrap_err();
            assert!(err.contains(want), "{line:?}: {err}");
        }
    }

    /// A name that is not UTF-8 (dnf's cache, `.solv`, holds bytes) is
    /// refused: the check must walk the path dnf opens, and `/srv/\xff` a
    /// link out of the root is not `/srv/\u{fffd}`, which does not exist.
    #[test]
    fn a_location_that_is_not_utf8_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        std::fs::create_dir_all(dir.join("srv/repo")).unwrap();
        let link = std::ffi::OsStr::from_bytes(b"\xff");
        std::os::unix::fs::symlink("/", dir.join("srv").join(link)).unwrap();
        let q = Query::new().unwrap();
        let mut out = format!("{}a{}../", q.start, q.field).into_bytes();
        out.extend_from_slice(b"\xff/x.rpm");
        out.extend_from_slice(
            format!("{}{NONE}{}x-1-1.noarch{}\n", q.field, q.field, q.end).as_bytes(),
        );
        let err = q.check(&Root::at(&dir), &dir, &repos(), &out).unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn an_answer_that_is_not_made_of_whole_records_is_refused() {
        let q = Query::new().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::at(tmp.path());
        for out in [
            "stray\n".to_owned(),
            format!("{}a{}x.rpm{}\n", q.start, q.field, q.end),
            format!(
                "{}a{}x.rpm{}(none){}p\n",
                q.start, q.field, q.field, q.field
            ),
        ] {
            assert!(
                q.check(&root, tmp.path(), &repos(), out.as_bytes())
                    .is_err(),
                "{out}"
            );
        }
    }
}
