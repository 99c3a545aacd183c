//! The version `datum --version` prints: the package version and the commit
//! it was built from. Shared by the build script (which asks git) and the
//! tests of this crate.

/// A commit: its short id and its date (`2026-05-01`).
#[derive(Debug, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    pub date: String,
}

/// `0.1.0 (3f2a9c1d4e5b 2026-05-01)`, or `0.1.0` when no commit is known
/// (a build from a source archive, or without git).
pub fn describe(version: &str, commit: Option<&Commit>) -> String {
    match commit {
        Some(c) => format!("{version} ({} {})", c.id, c.date),
        None => version.to_owned(),
    }
}

/// The commit of the checkout holding this crate. `git` runs git in the
/// crate's directory with the given arguments and gives its output when it
/// succeeds. None when git is missing, this is no repository, or the
/// repository around it is not Datum's (the crate's manifest is not
/// tracked there: sources unpacked inside some other checkout).
pub fn commit(git: &dyn Fn(&[&str]) -> Option<String>) -> Option<Commit> {
    git(&["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let id = git(&["rev-parse", "--short=12", "HEAD"])?;
    let date = git(&["log", "-1", "--format=%cs", "HEAD"])?;
    let valid = !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then_some(Commit { id, date })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_git_the_version_is_the_package_version() {
        assert_eq!(commit(&|_| None), None);
        assert_eq!(describe("0.1.0", None), "0.1.0");
    }

    #[test]
    fn sources_inside_another_repository_claim_no_commit() {
        let git = |args: &[&str]| match args[0] {
            "ls-files" => None,
            "rev-parse" => Some("0123456789ab".to_owned()),
            _ => Some("2026-05-01".to_owned()),
        };
        assert_eq!(commit(&git), None);
    }

    #[test]
    fn a_checkout_names_its_commit_and_date() {
        let git = |args: &[&str]| match args[0] {
            "ls-files" => Some("Cargo.toml".to_owned()),
            "rev-parse" => Some("0123456789ab".to_owned()),
            _ => Some("2026-05-01".to_owned()),
        };
        let c = commit(&git).unwrap();
        assert_eq!(
            describe("0.1.0", Some(&c)),
            "0.1.0 (0123456789ab 2026-05-01)"
        );
        let garbage = |args: &[&str]| {
            Some(
                if args[0] == "rev-parse" {
                    "fatal: x"
                } else {
                    "y"
                }
                .to_owned(),
            )
        };
        assert_eq!(commit(&garbage), None);
    }
}
