//! The one error a command ends with: a kind that decides the exit status,
//! the message, the error it came from, and hints. Every library error a
//! command meets converts with `?`; which kind it is and what hint it
//! carries is decided here, once, not in each command.

use std::error::Error as StdError;
use std::io;

use datum_apply::engine::ApplyError;
use datum_apply::state::StateError;
use datum_core::explain::TargetError;
use datum_core::host::{DoesNotResolve, HostError};
use datum_core::query::{Undeclared, UnsetVar};
use datum_core::reader::ReadError;
use datum_core::selector::{NotCarried, SelectorError};
use datum_git::GitError;

use crate::exit::Status;

/// What went wrong, as far as the exit status is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The command line asks for something that cannot be: a malformed
    /// argument, no fleet where one was expected, an unknown revision.
    Usage,
    /// The fleet or the machine said no: a host that does not resolve, a
    /// name nothing declares, a file that cannot be read or written.
    Failed,
    /// Stdout was closed by a reader that had seen enough (`| head`): not
    /// an error, and nothing is printed.
    BrokenPipe,
}

impl ErrorKind {
    pub fn status(self) -> Status {
        match self {
            ErrorKind::Usage => Status::USAGE,
            ErrorKind::Failed => Status::FAILED,
            ErrorKind::BrokenPipe => Status::OK,
        }
    }
}

/// An error that ends a command.
///
/// The message already says what the source said (as it is shown to the
/// operator); the source is kept for what the kind and hints are decided
/// from, and for anyone walking the chain.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub kind: ErrorKind,
    pub message: String,
    #[source]
    pub source: Option<Box<dyn StdError + Send + Sync>>,
    /// Printed under the message, one `hint:` line each.
    pub hints: Vec<String>,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CommandError {
        CommandError {
            kind,
            message: message.into(),
            source: None,
            hints: Vec::new(),
        }
    }

    pub fn usage(message: impl Into<String>) -> CommandError {
        CommandError::new(ErrorKind::Usage, message)
    }

    pub fn failed(message: impl Into<String>) -> CommandError {
        CommandError::new(ErrorKind::Failed, message)
    }

    /// An error of `kind` whose message is the source's own.
    fn from_error(kind: ErrorKind, source: impl StdError + Send + Sync + 'static) -> CommandError {
        CommandError::new(kind, source.to_string()).with_source(source)
    }

    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> CommandError {
        self.source = Some(Box::new(source));
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CommandError {
        self.hints.push(hint.into());
        self
    }

    pub fn status(&self) -> Status {
        self.kind.status()
    }

    /// The library error this one came from, if it is a `T`.
    pub fn source_as<T: StdError + 'static>(&self) -> Option<&T> {
        self.source.as_deref()?.downcast_ref()
    }
}

pub type Result<T> = std::result::Result<T, CommandError>;

/// Writing output failed; a closed pipe is how `| head` says "enough".
impl From<io::Error> for CommandError {
    fn from(e: io::Error) -> CommandError {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return CommandError::from_error(ErrorKind::BrokenPipe, e);
        }
        CommandError::failed(format!("cannot write output: {e}")).with_source(e)
    }
}

impl From<ReadError> for CommandError {
    fn from(e: ReadError) -> CommandError {
        CommandError::from_error(ErrorKind::Failed, e)
    }
}

/// Bad usage when the operator named something that is not there, a
/// failure when git could not be read.
impl From<GitError> for CommandError {
    fn from(e: GitError) -> CommandError {
        match e {
            GitError::NotARepository { .. }
            | GitError::Bare { .. }
            | GitError::OutsideWorkTree { .. } => CommandError::from_error(ErrorKind::Usage, e)
                .hint(
                    "datum diff compares git revisions: run it on a fleet inside a git work tree",
                ),
            GitError::UnknownRevision { .. } => CommandError::from_error(ErrorKind::Usage, e).hint(
                "name a commit: HEAD~1, a branch, a tag or an id; in CI, fetch enough history for the base revision (actions/checkout: fetch-depth: 0)",
            ),
            _ => CommandError::from_error(ErrorKind::Failed, e),
        }
    }
}

impl From<ApplyError> for CommandError {
    fn from(e: ApplyError) -> CommandError {
        let locked = matches!(e, ApplyError::State(StateError::Locked { .. }));
        let err = CommandError::from_error(ErrorKind::Failed, e);
        if locked {
            return err.hint(
                "wait for that run to finish; the lock is released when it ends, even if it is killed",
            );
        }
        err
    }
}

/// `render --all` could not fill its directory.
impl From<datum_fs::manifests::RenderError> for CommandError {
    fn from(e: datum_fs::manifests::RenderError) -> CommandError {
        CommandError::from_error(ErrorKind::Failed, e)
    }
}

/// A bundle that could not be made or written.
impl From<datum_agent::bundle::BatchError> for CommandError {
    fn from(e: datum_agent::bundle::BatchError) -> CommandError {
        CommandError::from_error(ErrorKind::Failed, e)
    }
}

/// The machine's own name could not be read.
impl From<datum_apply::root::HostError> for CommandError {
    fn from(e: datum_apply::root::HostError) -> CommandError {
        CommandError::from_error(ErrorKind::Failed, e).hint("name the host with --host NAME")
    }
}

impl From<HostError> for CommandError {
    fn from(e: HostError) -> CommandError {
        let hint = e.hint();
        CommandError::from_error(ErrorKind::Failed, e).hint(hint)
    }
}

impl From<DoesNotResolve> for CommandError {
    fn from(e: DoesNotResolve) -> CommandError {
        CommandError::from_error(ErrorKind::Failed, e)
    }
}

/// A `KEY=VALUE` argument that is not one.
impl From<SelectorError> for CommandError {
    fn from(e: SelectorError) -> CommandError {
        let hint = e.hint();
        CommandError::from_error(ErrorKind::Usage, e).hint(hint)
    }
}

/// A selector label no host carries.
impl From<NotCarried> for CommandError {
    fn from(e: NotCarried) -> CommandError {
        let hint = e.hint();
        CommandError::from_error(ErrorKind::Failed, e).hint(hint)
    }
}

/// A query for a resource no layer declares.
impl From<Undeclared> for CommandError {
    fn from(e: Undeclared) -> CommandError {
        let hint = e.hint();
        CommandError::from_error(ErrorKind::Failed, e).hint(hint)
    }
}

/// A query for a var no layer sets.
impl From<UnsetVar> for CommandError {
    fn from(e: UnsetVar) -> CommandError {
        let hint = e.hint();
        CommandError::from_error(ErrorKind::Failed, e).hint(hint)
    }
}

/// A resource or field argument that names none: bad usage when the text
/// is not even shaped like an id; a failure when it names a type or field
/// the schema does not have.
impl From<TargetError> for CommandError {
    fn from(e: TargetError) -> CommandError {
        let kind = if e.is_malformed() {
            ErrorKind::Usage
        } else {
            ErrorKind::Failed
        };
        let hint = e.hint();
        CommandError::from_error(kind, e).hint(hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datum_core::explain::Target;

    #[test]
    fn a_closed_pipe_is_success_and_other_write_errors_fail() {
        let pipe = CommandError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(pipe.kind, ErrorKind::BrokenPipe);
        assert_eq!(pipe.status(), Status::OK);
        let full = CommandError::from(io::Error::other("disk full"));
        assert_eq!(full.status(), Status::FAILED);
        assert_eq!(full.message, "cannot write output: disk full");
        assert_eq!(full.source().unwrap().to_string(), "disk full");
    }

    #[test]
    fn usage_and_failure_exit_differently() {
        assert_eq!(CommandError::usage("x").status(), Status::USAGE);
        assert_eq!(CommandError::failed("x").status(), Status::FAILED);
        assert_ne!(Status::USAGE, Status::FAILED);
    }

    #[test]
    fn an_unknown_revision_is_bad_usage_with_a_hint_and_its_source() {
        let e = CommandError::from(GitError::UnknownRevision {
            rev: "nope".into(),
            repo: "/r".into(),
            reason: "not found".into(),
        });
        assert_eq!(e.kind, ErrorKind::Usage);
        assert_eq!(e.message, "`nope` does not name a commit in /r (not found)");
        assert_eq!(e.hints.len(), 1);
        assert!(e.source().unwrap().is::<GitError>());
        assert!(e.source_as::<GitError>().is_some());
        assert!(e.source_as::<ReadError>().is_none());
    }

    #[test]
    fn a_target_is_bad_usage_only_when_malformed() {
        let parse = |text| CommandError::from(Target::parse(text).unwrap_err());
        let shape = parse("nginx");
        assert_eq!(shape.kind, ErrorKind::Usage);
        assert_eq!(shape.message, "`nginx` is not a resource id");
        assert!(shape.source_as::<TargetError>().is_some());
        let field = parse("File[x].mdoe");
        assert_eq!(field.kind, ErrorKind::Failed);
        assert_eq!(field.message, "File has no field `mdoe`");
    }

    #[test]
    fn a_malformed_selector_is_bad_usage() {
        let e = CommandError::from(datum_core::selector::Selector::parse(&["role"]).unwrap_err());
        assert_eq!(e.kind, ErrorKind::Usage);
        assert_eq!(e.message, "`role` is not a label selector");
        assert_eq!(
            e.hints,
            [
                "write KEY=VALUE, such as role=web, role=web,cache (either value) or datum/host=web-001"
            ]
        );
        assert!(
            e.source_as::<datum_core::selector::SelectorError>()
                .is_some()
        );
    }
}
