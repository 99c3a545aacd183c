//! What the agent keeps between runs beside the input it applied last:
//! a newer input waiting for its rollout wave (`pending.json`), and the
//! inputs it took back because their health checks failed
//! (`refused.json`). Both are small JSON files in the state directory,
//! replaced atomically.
//!
//! ```json
//! {"commit": "3f2a9c1...", "serial": 12, "seen": 1750000000, "due": 1750001800}
//! {"highest_serial": 12, "inputs": [{"commit": "3f2a9c1...", "serial": 12,
//!   "contents_sha256": "…", "failed_checks": [{"id": "Health[site]", "output": "..."}]}]}
//! ```
//!
//! `refused.json` keeps every input taken back (the latest
//! [`MAX_TAKEN_BACK`]), and the highest serial ever taken back apart, so
//! that taking back a second input never lets the first one in again. A
//! record of one input, as agents before it wrote, is read as a list of
//! one.

use std::path::Path;

use datum_apply::root::Root;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::report::{PendingInput, RolledBack};

/// The input waiting for its wave.
pub const PENDING: &str = "/var/lib/datum/agent/pending.json";
/// The input refused since its health checks failed.
pub const REFUSED: &str = "/var/lib/datum/agent/refused.json";

/// A record is a few lines; the failing checks' output is bounded by apply.
const MAX_SIZE: u64 = 1 << 20;

/// An input verified and not applied yet: it waits for its wave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    pub commit: Option<String>,
    pub serial: Option<u64>,
    /// When this host first saw it (its own clock), seconds since the epoch.
    pub seen: i64,
    /// When it becomes due, seconds since the epoch.
    pub due: i64,
}

impl Waiting {
    /// As the run report and the metrics show it.
    pub fn report(&self) -> PendingInput {
        PendingInput {
            commit: self.commit.clone(),
            serial: self.serial,
            due: self.due,
        }
    }

    /// Whether it is the input with `commit` and `serial`.
    pub fn is(&self, commit: Option<&str>, serial: Option<u64>) -> bool {
        self.commit.as_deref() == commit && self.serial == serial
    }
}

/// How many inputs taken back `refused.json` names; the highest serial is
/// kept whatever the count.
pub const MAX_TAKEN_BACK: usize = 64;

/// One input taken back: as the report of the run that took it back says,
/// and its contents' digest (all a bundle made outside git has to tell it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    #[serde(flatten)]
    pub input: RolledBack,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contents_sha256: Option<String>,
}

/// Every input taken back (`refused.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TakenBack {
    /// The highest serial taken back: no bundle at or below it is applied
    /// again (but the one the host runs).
    pub highest_serial: Option<u64>,
    /// The inputs taken back, the latest last.
    pub inputs: Vec<Refused>,
}

/// The input a run is about to apply, as the refusal compares it.
#[derive(Clone, Copy, Debug)]
pub struct Offered<'a> {
    pub commit: Option<&'a str>,
    pub serial: Option<u64>,
    pub contents: Option<&'a str>,
}

impl TakenBack {
    /// Reads `refused.json`: empty when there is none, `Err` with why when
    /// it cannot be read (and then nothing may be shown not taken back).
    pub fn load(root: &Root) -> Result<TakenBack, String> {
        let Some(value) = load::<serde_json::Value>(root, REFUSED)? else {
            return Ok(TakenBack::default());
        };
        let damaged = |e: serde_json::Error| {
            let shown = root.path(REFUSED).display().to_string();
            format!("{shown} is not a record Datum wrote: {e}")
        };
        // As this agent writes it, or (one input) as older ones did.
        if value.get("inputs").is_some() {
            return serde_json::from_value(value).map_err(damaged);
        }
        let r: RolledBack = serde_json::from_value(value).map_err(damaged)?;
        Ok(TakenBack {
            highest_serial: r.serial,
            inputs: vec![Refused {
                input: r,
                contents_sha256: None,
            }],
        })
    }

    /// Adds `refused`, keeping the latest [`MAX_TAKEN_BACK`].
    pub fn add(&mut self, refused: Refused) {
        if let Some(serial) = refused.input.serial {
            self.highest_serial = Some(self.highest_serial.map_or(serial, |h| h.max(serial)));
        }
        self.inputs.retain(|r| r != &refused);
        self.inputs.push(refused);
        let over = self.inputs.len().saturating_sub(MAX_TAKEN_BACK);
        self.inputs.drain(..over);
    }

    /// The input taken back that refuses `offered`, when one does, on a
    /// host that runs `running` (`None`: nothing recorded as applied).
    ///
    /// - with a serial: at or below the highest serial taken back, and
    ///   above the serial the host runs (going lower is the rollback
    ///   check's to refuse, or `--allow-rollback`'s to allow);
    /// - with a commit and no serial (git): another commit than the one
    ///   the host runs, that is one taken back or an ancestor of one
    ///   (`ancestor(a, b)`: whether `a` is `b` or an ancestor of it);
    /// - with neither (a bundle made outside git): the same contents as
    ///   one taken back.
    pub fn refuses(
        &self,
        offered: Offered<'_>,
        running: Option<Offered<'_>>,
        ancestor: &dyn Fn(&str, &str) -> bool,
    ) -> Option<Refused> {
        if let Some(serial) = offered.serial {
            let highest = self.highest_serial?;
            let above = running.and_then(|r| r.serial).is_none_or(|r| serial > r);
            if serial > highest || !above {
                return None;
            }
            // The one taken back with this serial, else the highest one
            // named (one dropped from the list is named by its serial).
            let named = |r: &&Refused| r.input.serial.is_some();
            let found = (self.inputs.iter().rev())
                .find(|r| r.input.serial == Some(serial))
                .or_else(|| {
                    self.inputs
                        .iter()
                        .filter(named)
                        .max_by_key(|r| r.input.serial)
                })
                .filter(|r| r.input.serial == Some(serial) || r.input.serial == Some(highest));
            return Some(found.cloned().unwrap_or(Refused {
                input: RolledBack {
                    commit: None,
                    serial: Some(highest),
                    failed_checks: Vec::new(),
                },
                contents_sha256: None,
            }));
        }
        if let Some(commit) = offered.commit {
            if running.and_then(|r| r.commit) == Some(commit) {
                return None;
            }
            let inputs = || self.inputs.iter().rev();
            return inputs()
                .find(|r| r.input.commit.as_deref() == Some(commit))
                .or_else(|| {
                    inputs().find(|r| {
                        r.input
                            .commit
                            .as_deref()
                            .is_some_and(|c| ancestor(commit, c))
                    })
                })
                .cloned();
        }
        let contents = offered.contents?;
        self.inputs
            .iter()
            .rev()
            .find(|r| {
                r.input.commit.is_none()
                    && r.input.serial.is_none()
                    && r.contents_sha256.as_deref() == Some(contents)
            })
            .cloned()
    }
}

/// The record at `abs`, `None` when there is none. A record that cannot
/// be read is `Err` with why, for the run to note.
pub fn load<T: DeserializeOwned>(root: &Root, abs: &str) -> Result<Option<T>, String> {
    let shown = || root.path(abs).display().to_string();
    match root.read_small(abs, MAX_SIZE) {
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{} is not a record Datum wrote: {e}", shown())),
        Err(e) => Err(format!("cannot read {}: {e}", shown())),
    }
}

/// Replaces the record at `abs` with `value`.
pub fn save<T: Serialize>(root: &Root, abs: &str, value: &T) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", root.path(abs).display());
    let dir = Path::new(abs)
        .parent()
        .map_or("/".to_owned(), |d| d.to_string_lossy().into_owned());
    root.create_dir_all(&dir, 0o755).map_err(fail)?;
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    let attrs = datum_fs::Attrs {
        mode: Some(0o644),
        ..Default::default()
    };
    root.write_atomic(abs, &text, attrs).map_err(fail)
}

/// Removes the record at `abs`; a missing one is not an error.
pub fn clear(root: &Root, abs: &str) -> Result<(), String> {
    root.remove_file(abs)
        .map_err(|e| format!("cannot remove {}: {e}", root.path(abs).display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_damaged_one_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        assert_eq!(load::<Waiting>(&root, PENDING), Ok(None));
        let w = Waiting {
            commit: Some("ab".repeat(20)),
            serial: Some(7),
            seen: 10,
            due: 40,
        };
        save(&root, PENDING, &w).unwrap();
        assert_eq!(load::<Waiting>(&root, PENDING), Ok(Some(w.clone())));
        assert!(w.is(Some(&"ab".repeat(20)), Some(7)));
        assert!(!w.is(Some(&"ab".repeat(20)), None));
        clear(&root, PENDING).unwrap();
        clear(&root, PENDING).unwrap();
        assert_eq!(load::<Waiting>(&root, PENDING), Ok(None));
        std::fs::write(root.path(REFUSED), "{\"commit\": 3").unwrap();
        let err = TakenBack::load(&root).unwrap_err();
        assert!(err.contains("is not a record Datum wrote"), "{err}");
        assert!(err.contains("line 1 column 12"), "{err}");
        std::fs::write(root.path(REFUSED), "{\"inputs\": 3}").unwrap();
        let err = TakenBack::load(&root).unwrap_err();
        assert!(
            err.contains("invalid type: integer `3`, expected a sequence"),
            "{err}"
        );
    }

    fn taken(commit: Option<&str>, serial: Option<u64>, contents: Option<&str>) -> Refused {
        Refused {
            input: RolledBack {
                commit: commit.map(str::to_owned),
                serial,
                failed_checks: Vec::new(),
            },
            contents_sha256: contents.map(str::to_owned),
        }
    }

    fn offered<'a>(
        commit: Option<&'a str>,
        serial: Option<u64>,
        contents: Option<&'a str>,
    ) -> Offered<'a> {
        Offered {
            commit,
            serial,
            contents,
        }
    }

    const NO_HISTORY: &dyn Fn(&str, &str) -> bool = &|_, _| false;

    #[test]
    fn a_serial_at_or_below_the_highest_taken_back_stays_refused_after_another() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        let mut t = TakenBack::load(&root).unwrap();
        t.add(taken(None, Some(6), None));
        t.add(taken(None, Some(7), None));
        save(&root, REFUSED, &t).unwrap();
        let t = TakenBack::load(&root).unwrap();
        let on5 = Some(offered(None, Some(5), None));
        let refused = |n| t.refuses(offered(None, Some(n), None), on5, NO_HISTORY);
        assert_eq!(refused(6).unwrap().input.serial, Some(6));
        assert_eq!(refused(7).unwrap().input.serial, Some(7));
        assert_eq!(refused(8), None);
        // The serial the host runs is not refused here (nor one below it:
        // the rollback check's to refuse).
        assert_eq!(refused(5), None);
        assert_eq!(refused(4), None);
        // Dropped from the list, the highest serial still refuses.
        let mut t = t.clone();
        for n in 0..MAX_TAKEN_BACK as u64 {
            t.add(taken(Some(&format!("{n:040}")), None, None));
        }
        assert_eq!(t.inputs.len(), MAX_TAKEN_BACK);
        let r = t.refuses(offered(None, Some(6), None), on5, NO_HISTORY);
        assert_eq!(r.unwrap().input.serial, Some(7));
    }

    #[test]
    fn a_commit_taken_back_or_an_ancestor_of_one_stays_refused() {
        let (c0, c1, c2, c3) = ("c0", "c1", "c2", "c3");
        // c0 <- c1 <- c2 <- c3
        let order = [c0, c1, c2, c3];
        let place = |c: &str| order.iter().position(|o| *o == c).unwrap();
        let ancestor = |a: &str, b: &str| place(a) <= place(b);
        let mut t = TakenBack::default();
        t.add(taken(Some(c1), None, None));
        t.add(taken(Some(c2), None, None));
        let on0 = Some(offered(Some(c0), None, None));
        let refused = |c| t.refuses(offered(Some(c), None, None), on0, &ancestor);
        assert_eq!(refused(c1).unwrap().input.commit.as_deref(), Some(c1));
        assert_eq!(refused(c2).unwrap().input.commit.as_deref(), Some(c2));
        assert_eq!(refused(c3), None);
        // The commit the host runs is not refused, though an ancestor.
        assert_eq!(refused(c0), None);
        // Only c2 recorded (c1 dropped): c1 is refused as its ancestor.
        let mut only = TakenBack::default();
        only.add(taken(Some(c2), None, None));
        let r = only.refuses(offered(Some(c1), None, None), on0, &ancestor);
        assert_eq!(r.unwrap().input.commit.as_deref(), Some(c2));
    }

    #[test]
    fn a_bundle_made_outside_git_is_refused_by_its_contents_only() {
        let mut t = TakenBack::default();
        t.add(taken(None, None, Some("aa")));
        let refused = |d| t.refuses(offered(None, None, Some(d)), None, NO_HISTORY);
        assert!(refused("aa").is_some());
        assert_eq!(refused("bb"), None);
        assert_eq!(t.refuses(offered(None, None, None), None, NO_HISTORY), None);
        // The record older agents wrote for such a bundle refuses nothing.
        let old = TakenBack {
            highest_serial: None,
            inputs: vec![taken(None, None, None)],
        };
        assert_eq!(
            old.refuses(offered(None, None, Some("aa")), None, NO_HISTORY),
            None
        );
        assert_eq!(
            old.refuses(offered(None, None, None), None, NO_HISTORY),
            None
        );
    }

    #[test]
    fn a_record_of_one_input_as_older_agents_wrote_is_read_as_a_list_of_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::at(dir.path());
        save(&root, REFUSED, &taken(Some("ab"), Some(9), None).input).unwrap();
        let t = TakenBack::load(&root).unwrap();
        assert_eq!(t.highest_serial, Some(9));
        assert_eq!(t.inputs, [taken(Some("ab"), Some(9), None)]);
    }
}
