//! What an error tells the operator besides what went wrong: what to do
//! about it, and whose doing it was. One trait, implemented by every
//! library error of every crate, so the binary turns each of them into its
//! message, hints and exit status the same way, in one place.

use std::borrow::Cow;

/// Whose doing an error is, as far as ending a command goes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    /// The fleet, a file or the machine said no: a host that does not
    /// resolve, a file that cannot be read, a signature that does not hold.
    #[default]
    Failed,
    /// What was asked for cannot be: a malformed argument, a path outside
    /// the fleet, a revision that names no commit.
    Usage,
    /// Datum broke a promise of its own (a payload it read is missing, a
    /// write to memory failed): a bug to report, never the operator's doing.
    Internal,
}

/// An error that may suggest what to do about it.
///
/// Every method has a default (no hint, [`Fault::Failed`]), so an error
/// with nothing to suggest implements it with an empty `impl`.
pub trait Hinted: std::error::Error {
    /// What the operator can do about it, one line; `None` when there is
    /// nothing useful to suggest.
    fn hint(&self) -> Option<Cow<'static, str>> {
        None
    }

    /// What else to suggest, after [`Hinted::hint`], for the few errors
    /// with more than one thing to say.
    fn more_hints(&self) -> Vec<Cow<'static, str>> {
        Vec::new()
    }

    /// Every hint, one `hint:` line each: [`Hinted::hint`], then
    /// [`Hinted::more_hints`]. Not meant to be implemented.
    fn hints(&self) -> Vec<Cow<'static, str>> {
        self.hint().into_iter().chain(self.more_hints()).collect()
    }

    /// Whose doing it is.
    fn fault(&self) -> Fault {
        Fault::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("plain")]
    struct Plain;
    impl Hinted for Plain {}

    #[derive(Debug, thiserror::Error)]
    #[error("one")]
    struct One;
    impl Hinted for One {
        fn hint(&self) -> Option<Cow<'static, str>> {
            Some("do this".into())
        }
    }

    #[test]
    fn an_error_with_nothing_to_say_has_no_hint_and_is_a_failure() {
        assert_eq!(Plain.hint(), None);
        assert!(Plain.hints().is_empty());
        assert_eq!(Plain.fault(), Fault::Failed);
    }

    #[derive(Debug, thiserror::Error)]
    #[error("two")]
    struct Two;
    impl Hinted for Two {
        fn hint(&self) -> Option<Cow<'static, str>> {
            Some("do this".into())
        }
        fn more_hints(&self) -> Vec<Cow<'static, str>> {
            vec!["or that".into()]
        }
    }

    #[test]
    fn the_hint_comes_first_then_the_others() {
        assert_eq!(One.hints(), ["do this"]);
        assert_eq!(Two.hints(), ["do this", "or that"]);
    }
}
