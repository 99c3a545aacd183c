//! Exit statuses, and the errors a command can end with.

use std::io;

use crate::output;

/// The statuses `datum` exits with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Success, nothing to report.
    Ok = 0,
    /// The fleet is invalid, a host does not resolve, or what was asked for does not exist.
    Failed = 1,
    /// Bad usage: arguments, or no fleet where one was expected.
    Usage = 2,
    /// `diff --exit-code`: something changed (and nothing failed, which
    /// takes precedence with status 1; bad usage, status 2, comes first).
    Changed = 3,
    /// `apply`: some resources failed, or were skipped because one they
    /// come after failed; nothing else changed.
    ApplyFailed = 4,
    /// `apply`: changes were made (or are pending, under `--noop`) and some
    /// resources failed.
    ApplyChangedAndFailed = 6,
}

impl Status {
    /// `apply`: changes were made, or are pending under `--noop`. SPEC §7
    /// fixes it at 2, the number bad usage also exits with.
    pub const APPLY_CHANGED: Status = Status::Usage;
}

/// An error that ends a command, with a hint and the status it exits with.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    pub hint: Option<String>,
    pub status: Status,
    /// Set when stdout was closed by a reader that had seen enough: not an error.
    pub broken_pipe: bool,
}

impl Error {
    pub fn failed(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            hint: None,
            status: Status::Failed,
            broken_pipe: false,
        }
    }

    pub fn usage(message: impl Into<String>) -> Error {
        Error {
            status: Status::Usage,
            ..Error::failed(message)
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// Prints the error (unless stdout merely closed) and gives the status.
    pub fn report(self) -> Status {
        if self.broken_pipe {
            return Status::Ok;
        }
        output::error_line(&self.message, self.hint.as_deref());
        self.status
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error {
            broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
            ..Error::failed(format!("cannot write output: {e}"))
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
