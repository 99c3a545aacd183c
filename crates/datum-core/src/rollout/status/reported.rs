//! What `rollout status` reads of one run report, and what it makes of it.

/// What one run report says, as far as a rollout cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    pub host: String,
    pub run_id: String,
    /// When the run finished, milliseconds since the Unix epoch.
    pub finished: u64,
    /// `finished` as the report writes it (RFC 3339).
    pub finished_text: String,
    /// The commit the run applied.
    pub commit: Option<String>,
    pub exit_status: i32,
    /// Resources that failed.
    pub failed: u64,
    /// A verified input waiting for its wave: its commit and when it is due
    /// (seconds since the epoch).
    pub pending: Option<(Option<String>, i64)>,
    /// An input this run took back: its commit and the checks that failed.
    pub rolled_back: Option<(Option<String>, Vec<String>)>,
    /// An input this run refused: its commit, when it was read, and why.
    pub refused: Option<(Option<String>, String)>,
}

impl Reported {
    /// The run applied `rev` without failures: exit 0 or 2, or exit 1 only
    /// because it refused another input (the host then applied `rev`, the
    /// last verified one, again).
    pub(super) fn succeeded(&self, rev: Option<&str>) -> bool {
        // A refusal naming no commit (a damaged file) is not of `rev`
        // either: the run applied `rev` fine.
        let refused_other = self
            .refused
            .as_ref()
            .is_some_and(|(c, _)| c.as_deref() != rev);
        self.failed == 0
            && (matches!(self.exit_status, 0 | 2)
                || (self.exit_status == 1 && refused_other && self.commit.as_deref() == rev))
    }

    /// This run refused `rev`.
    pub(super) fn refused(&self, rev: Option<&str>) -> bool {
        self.refused
            .as_ref()
            .is_some_and(|(c, _)| c.is_some() && c.as_deref() == rev)
    }

    pub(super) fn key(&self) -> (u64, &str) {
        (self.finished, &self.run_id)
    }
}
