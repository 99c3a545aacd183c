//! The refreshes owed to `refresh_only` Execs, kept between runs in
//! `/var/lib/datum/refreshes` (inside the root), one Exec id a line.
//!
//! A refresh is written down before the change that makes it owed and
//! crossed off only once the Exec has run (or its guards say it need not),
//! so a run killed in between leaves it for the next run, as restarts are
//! left (`state`). The file lives beside the lock `state` holds; it is only
//! written by a run holding that lock.

use std::collections::BTreeSet;

use datum_core::schema::{Kind, ResourceId};

use datum_fs::Attrs;

use crate::root::Root;
use crate::state::{STATE_DIR, StateError};

/// The largest `refreshes` file read: thousands of Exec ids.
pub const REFRESHES_LIMIT: u64 = 256 * 1024;

/// The refreshes owed, by Exec id.
#[derive(Debug)]
pub struct Refreshes {
    root: Root,
    owed: BTreeSet<String>,
}

fn file() -> String {
    format!("{STATE_DIR}/refreshes")
}

impl Refreshes {
    /// Reads the refreshes owed; a missing file owes none. The file is
    /// resolved inside the root and read only as a small regular file of
    /// Exec ids; anything else is refused, and what it holds not repeated.
    pub fn open(root: &Root) -> Result<Refreshes, StateError> {
        let refused = |problem: String| StateError::Refused {
            path: root.path(&file()).display().to_string(),
            problem,
        };
        let owed = match root.read_small(&file(), REFRESHES_LIMIT) {
            Ok(None) => BTreeSet::new(),
            Ok(Some(bytes)) => {
                let text =
                    String::from_utf8(bytes).map_err(|_| refused("it is not text".into()))?;
                let mut owed = BTreeSet::new();
                for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    match ResourceId::parse(line) {
                        Ok(id) if id.kind == Kind::Exec => owed.insert(line.to_owned()),
                        _ => return Err(refused("it holds a line that is not an Exec id".into())),
                    };
                }
                owed
            }
            Err(e) => return Err(refused(e.to_string())),
        };
        Ok(Refreshes {
            root: root.clone(),
            owed,
        })
    }

    /// The Execs (by id) owed a refresh.
    pub fn owed(&self) -> &BTreeSet<String> {
        &self.owed
    }

    /// Records refreshes as owed, durably, before the change that causes them.
    pub fn owe<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) -> Result<(), StateError> {
        let before = self.owed.len();
        self.owed.extend(ids.into_iter().map(str::to_owned));
        if self.owed.len() != before {
            self.save()?;
        }
        Ok(())
    }

    /// Crosses off a refresh that is done (or no longer needed).
    pub fn settle(&mut self, id: &str) -> Result<(), StateError> {
        if self.owed.remove(id) {
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> Result<(), StateError> {
        let mut text = String::new();
        for id in &self.owed {
            text.push_str(id);
            text.push('\n');
        }
        let attrs = Attrs {
            mode: Some(0o644),
            ..Attrs::default()
        };
        self.root
            .write_atomic(&file(), text.as_bytes(), attrs)
            .map_err(|source| StateError::Io {
                path: self.root.path(&file()).display().to_string(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_file_that_is_not_exec_ids_or_is_a_link_is_refused_unrepeated() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("var/lib/datum")).unwrap();
        let root = Root::at(dir.path());
        let at = dir.path().join("var/lib/datum/refreshes");
        fs::write(&at, "Exec[a]\nsecret-token-123\n").unwrap();
        let err = Refreshes::open(&root).unwrap_err().to_string();
        assert!(
            err.ends_with("refreshes: it holds a line that is not an Exec id"),
            "{err}"
        );
        assert!(!err.contains("secret-token"));
        fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", &at).unwrap();
        let err = Refreshes::open(&root).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn owed_refreshes_survive_until_settled() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("var/lib/datum")).unwrap();
        let root = Root::at(dir.path());
        {
            let mut r = Refreshes::open(&root).unwrap();
            assert!(r.owed().is_empty());
            r.owe(["Exec[newaliases]", "Exec[reload]"]).unwrap();
            r.settle("Exec[reload]").unwrap();
        }
        let r = Refreshes::open(&root).unwrap();
        assert_eq!(r.owed().iter().collect::<Vec<_>>(), ["Exec[newaliases]"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("var/lib/datum/refreshes")).unwrap(),
            "Exec[newaliases]\n"
        );
    }
}
