//! The one error a command ends with: a kind that decides the exit status,
//! the message, the error it came from, and hints. Every library error a
//! command meets converts with `?`: its message, hint and kind come from
//! its [`Hinted`] impl, the same way for all of them, in one place here.

use std::error::Error as StdError;
use std::io;
use std::path::{Path, PathBuf};

use datum_core::hint::{Fault, Hinted};

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
    /// Datum broke a promise of its own: a bug, never the operator's doing,
    /// worded and exiting unlike both of the above.
    Internal,
    /// Stdout was closed by a reader that had seen enough (`| head`): not
    /// an error, and nothing is printed.
    BrokenPipe,
}

impl ErrorKind {
    pub fn status(self) -> Status {
        match self {
            ErrorKind::Usage => Status::USAGE,
            ErrorKind::Failed => Status::FAILED,
            ErrorKind::Internal => Status::INTERNAL,
            ErrorKind::BrokenPipe => Status::OK,
        }
    }
}

impl From<Fault> for ErrorKind {
    fn from(fault: Fault) -> ErrorKind {
        match fault {
            Fault::Usage => ErrorKind::Usage,
            Fault::Failed => ErrorKind::Failed,
            Fault::Internal => ErrorKind::Internal,
        }
    }
}

/// The last hint of every internal error: what the operator can do about
/// a bug.
pub const REPORT_BUG: &str = "this is a bug in Datum, not a problem with the fleet or the command line: please report it with the command that failed and this message";

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

    /// A library error: its message, its hint, and the kind its
    /// [`Fault`] gives. An internal one is worded as a bug.
    pub fn hinted(e: impl Hinted + Send + Sync + 'static) -> CommandError {
        let kind = ErrorKind::from(e.fault());
        let message = match kind {
            ErrorKind::Internal => format!("internal error: {e}"),
            _ => e.to_string(),
        };
        let mut err = CommandError::new(kind, message);
        err.hints.extend(e.hints().into_iter().map(String::from));
        if kind == ErrorKind::Internal {
            err.hints.push(REPORT_BUG.to_owned());
        }
        err.with_source(e)
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
            return CommandError::new(ErrorKind::BrokenPipe, e.to_string()).with_source(e);
        }
        CommandError::failed(format!("cannot write output: {e}")).with_source(e)
    }
}

/// A file or directory a command reads or writes itself (`init`'s starter
/// files, `man --out`'s pages, the bundle `bundle --out` names).
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {source}", path.display())]
pub struct FileError {
    /// What was being done: `read`, `create`, `write`.
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl FileError {
    /// The error of doing `what` to `path`, for `map_err`.
    pub fn of(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FileError + use<> {
        let path = path.to_path_buf();
        move |source| FileError { what, path, source }
    }
}

impl Hinted for FileError {}

/// `From` for each error a command meets, through
/// [`CommandError::hinted`]: the library errors below, and the binary's own
/// typed errors where they are declared. (A blanket impl over [`Hinted`]
/// would collide with the one for `io::Error`.)
macro_rules! from_hinted {
    ($($error:ty),* $(,)?) => {
        $(
            impl From<$error> for $crate::command_error::CommandError {
                fn from(e: $error) -> $crate::command_error::CommandError {
                    $crate::command_error::CommandError::hinted(e)
                }
            }
        )*
    };
}
pub(crate) use from_hinted;

from_hinted!(
    datum_core::reader::ReadError,
    datum_core::host::HostError,
    datum_core::host::DoesNotResolve,
    datum_core::selector::SelectorError,
    datum_core::selector::NotCarried,
    datum_core::query::Undeclared,
    datum_core::query::UnsetVar,
    datum_core::query::Unknowable,
    datum_core::explain::TargetError,
    datum_git::GitError,
    datum_fs::manifests::RenderError,
    datum_agent::bundle::BatchError,
    datum_agent::bundle::MakeError,
    datum_apply::engine::ApplyError,
    datum_apply::root::HostNameError,
    datum_apply::trust::FleetTrustError,
    datum_agent::local::BundleFileError,
    datum_agent::config::ConfigError,
    datum_agent::cycle::Refusal,
    datum_agent::sshsig::AllowedSignersError,
    datum_agent::sshsig::KeyError,
    datum_secrets::ReadIdentityError,
    FileError,
);

#[cfg(test)]
mod tests {
    use super::*;
    use datum_core::explain::{Target, TargetError};
    use datum_core::reader::ReadError;
    use datum_git::GitError;

    /// A broken promise of Datum's own.
    #[derive(Debug, thiserror::Error)]
    #[error("payload x was not read")]
    struct Broken;

    impl Hinted for Broken {
        fn fault(&self) -> Fault {
            Fault::Internal
        }
    }

    #[test]
    fn a_bug_is_worded_as_one_and_exits_unlike_any_user_error() {
        let e = CommandError::hinted(Broken);
        assert_eq!(e.kind, ErrorKind::Internal);
        assert_eq!(e.status(), Status::INTERNAL);
        assert_eq!(e.message, "internal error: payload x was not read");
        assert_eq!(e.hints, [REPORT_BUG]);
        assert!(e.source_as::<Broken>().is_some());
        for user in [CommandError::usage("x"), CommandError::failed("x")] {
            assert_ne!(user.status(), e.status());
        }
    }

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
        let e = CommandError::from(datum_core::selector::Selector::parse(&["role="]).unwrap_err());
        assert_eq!(e.kind, ErrorKind::Usage);
        assert_eq!(
            e.message,
            "`role=` is not a label selector: a value for `role` expected at character 6"
        );
        assert_eq!(
            e.hints,
            ["write role=VALUE; `role` alone selects hosts that carry the key"]
        );
        assert!(
            e.source_as::<datum_core::selector::SelectorError>()
                .is_some()
        );
    }
}
