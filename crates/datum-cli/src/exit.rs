//! The statuses `datum` exits with, each number written once (apply's
//! and the agent's are [`RunStatus`]'s, which their run reports record).

use std::process::ExitCode;

use datum_apply::RunStatus;

/// An exit status. Commands end with one; an error's kind gives theirs
/// (the error module maps kinds to statuses; this one knows no errors).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Status(u8);

impl Status {
    /// Success, nothing to report.
    pub const OK: Status = Status(0);
    /// The fleet is invalid, a host does not resolve, or what was asked for
    /// does not exist.
    pub const FAILED: Status = Status(1);
    /// Bad usage (EX_USAGE from sysexits.h): arguments (clap's errors of
    /// every kind), an option the form used does not take, `--fleet` or
    /// `--root` that is not a directory, no fleet where one was expected,
    /// an unknown revision. Never 2, which `apply` exits with for "changes
    /// made": a monitor must be able to tell the two apart.
    pub const USAGE: Status = Status(64);
    /// `diff --exit-code`: something changed (and nothing failed, which
    /// takes precedence with status 1; bad usage comes first).
    pub const CHANGED: Status = Status(3);
    /// `apply`: changes were made, or are pending under `--noop` (SPEC §7).
    pub const APPLY_CHANGED: Status = Status(RunStatus::Changed.code());
    /// `apply`: some resources failed, or were skipped because one they
    /// come after failed; nothing else changed.
    pub const APPLY_FAILED: Status = Status(RunStatus::Failed.code());
    /// `apply`: changes were made (or are pending, under `--noop`) and some
    /// resources failed.
    pub const APPLY_CHANGED_AND_FAILED: Status = Status(RunStatus::ChangedAndFailed.code());
    /// A bug in Datum (EX_SOFTWARE from sysexits.h): a promise of its own
    /// broken, never a problem of the fleet, the machine or the command
    /// line, so that no script mistakes one for the other.
    pub const INTERNAL: Status = Status(70);
}

impl Status {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        self.0
    }
}

/// `apply` and `agent --once` exit as their run ended: one mapping, apply's.
impl From<RunStatus> for Status {
    fn from(status: RunStatus) -> Status {
        Status(status.code())
    }
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_ex_usage_a_bug_ex_software_and_no_two_statuses_collide() {
        assert_eq!(Status::USAGE, Status(64));
        assert_eq!(Status::INTERNAL, Status(70));
        let all = [
            Status::OK,
            Status::FAILED,
            Status::CHANGED,
            Status::USAGE,
            Status::APPLY_CHANGED,
            Status::APPLY_FAILED,
            Status::APPLY_CHANGED_AND_FAILED,
            Status::INTERNAL,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn a_run_that_applied_nothing_fails_and_one_that_changed_nothing_is_ok() {
        assert_eq!(Status::from(RunStatus::NotApplied), Status::FAILED);
        assert_eq!(Status::from(RunStatus::Unchanged), Status::OK);
        assert_eq!(Status::from(RunStatus::Changed), Status::APPLY_CHANGED);
    }
}
