//! What the agent keeps between runs beside the input it applied last:
//! a newer input waiting for its rollout wave (`pending.json`), and the
//! input it took back because its health checks failed (`refused.json`).
//! Both are small JSON files in the state directory, replaced atomically.
//!
//! ```json
//! {"commit": "3f2a9c1...", "serial": 12, "seen": 1750000000, "due": 1750001800}
//! {"commit": "3f2a9c1...", "serial": 12, "failed_checks": [{"id": "Health[site]", "output": "..."}]}
//! ```

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

/// The input put back after its health checks failed, as the report of
/// the run that put it back says.
pub type Refused = RolledBack;

/// Whether `refused` is the input with `commit` and `serial`.
pub fn is_refused(refused: &Refused, commit: Option<&str>, serial: Option<u64>) -> bool {
    refused.commit.as_deref() == commit && refused.serial == serial
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
        let err = load::<Refused>(&root, REFUSED).unwrap_err();
        assert!(err.contains("is not a record Datum wrote"), "{err}");
    }
}
