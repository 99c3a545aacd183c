//! Why a run applied no new input: the message, the hint, the reason the
//! refusal metric counts, and which input it was, as far as it was read.

use datum_core::hint::Hinted;

use crate::report::RefusedInput;

/// Why nothing was applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub message: String,
    pub hint: String,
    /// Why, in one word, for `datum_input_refusals_total{reason=...}`.
    pub reason: &'static str,
    /// The refused input's commit and serial, as far as they were read.
    pub input: (Option<String>, Option<u64>),
}

impl Refusal {
    /// The same refusal, counted under `reason`.
    pub(super) fn because(self, reason: &'static str) -> Refusal {
        Refusal { reason, ..self }
    }

    /// The same refusal, of the input with this commit and serial.
    pub(super) fn of(self, commit: Option<String>, serial: Option<u64>) -> Refusal {
        let input = (commit, serial);
        Refusal { input, ..self }
    }

    /// What the run report says of it.
    pub(super) fn reported(&self) -> RefusedInput {
        RefusedInput {
            commit: self.input.0.clone(),
            serial: self.input.1,
            reason: self.reason.to_owned(),
        }
    }
}

/// Every refusal says what to do, even as an empty line.
impl Hinted for Refusal {
    fn hint(&self) -> Option<std::borrow::Cow<'static, str>> {
        Some(self.hint.clone().into())
    }
}

pub(super) fn refusal(message: impl Into<String>, hint: impl Into<String>) -> Refusal {
    Refusal {
        message: message.into(),
        hint: hint.into(),
        reason: "other",
        input: (None, None),
    }
}

/// A refusal saying what `e` says, with its hint.
pub(super) fn refused(e: &impl Hinted) -> Refusal {
    refusal(e.to_string(), e.hint().unwrap_or_default())
}
