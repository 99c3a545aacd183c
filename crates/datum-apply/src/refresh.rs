//! The refreshes owed to `refresh_only` Execs, kept between runs in
//! `/var/lib/datum/refreshes` (inside the root), one Exec id a line.
//!
//! A refresh is written down before the change that makes it owed and
//! crossed off only once the Exec has run (or its guards say it need not),
//! so a run killed in between leaves it for the next run, as restarts are
//! left (`state`). The file lives beside the lock `state` holds; it is only
//! written by a run holding that lock.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::PathBuf;

use crate::disk::{self, Attrs};
use crate::root::Root;
use crate::state::{STATE_DIR, StateError};

/// The refreshes owed, by Exec id.
#[derive(Debug)]
pub struct Refreshes {
    path: PathBuf,
    owed: BTreeSet<String>,
}

impl Refreshes {
    /// Reads the refreshes owed; a missing file owes none.
    pub fn open(root: &Root) -> Result<Refreshes, StateError> {
        let path = root.path(STATE_DIR).join("refreshes");
        let owed = match fs::read_to_string(&path) {
            Ok(text) => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeSet::new(),
            Err(source) => {
                return Err(StateError::Io {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        Ok(Refreshes { path, owed })
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
        disk::write_atomic(&self.path, text.as_bytes(), attrs).map_err(|source| StateError::Io {
            path: self.path.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
