//! A commit named by the operator and resolved to its id, as the reader,
//! the walk and every message name it.

use std::fmt;

use gix::ObjectId;

/// A commit named by the operator, resolved to its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Revision {
    spec: String,
    id: ObjectId,
    hex: String,
    short: String,
    time: i64,
}

impl Revision {
    /// `spec` as the operator wrote it, resolved to the commit `id`
    /// (abbreviated `short`) committed at `time`.
    pub(crate) fn new(spec: &str, id: ObjectId, short: String, time: i64) -> Revision {
        Revision {
            spec: spec.to_owned(),
            hex: id.to_string(),
            id,
            short,
            time,
        }
    }

    /// The revision as the operator wrote it (`HEAD~1`, `main`, `v2`, …).
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The full commit id in hexadecimal.
    pub fn id(&self) -> &str {
        &self.hex
    }

    /// The shortest unambiguous abbreviation of the commit id (at least 7
    /// characters, as `git log --oneline` shows it).
    pub fn short(&self) -> &str {
        &self.short
    }

    /// The revision for messages: `HEAD~1 (3f2a9c1)`, or just the short id
    /// when the operator wrote a hash.
    pub fn describe(&self) -> String {
        if self.hex.starts_with(&self.spec) || self.spec.starts_with(&self.short) {
            self.short.clone()
        } else {
            format!("{} ({})", self.spec, self.short)
        }
    }

    /// The commit's committer time, in seconds since the Unix epoch.
    pub fn time(&self) -> i64 {
        self.time
    }

    pub(crate) fn object_id(&self) -> ObjectId {
        self.id
    }
}

impl fmt::Display for Revision {
    /// Shows [`Revision::describe`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}
