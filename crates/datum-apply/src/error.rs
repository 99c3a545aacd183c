//! Why a run did not start (a dependency cycle, the lock or the state, a
//! report that could not be written), and what to do about it.

use std::borrow::Cow;

use datum_core::hint::Hinted;

use crate::graph::Cycle;
use crate::report::Summary;
use crate::state::StateError;

/// Why a run did not start.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Resources wait on each other in a circle; nothing was applied.
    #[error("{}", cycles_message(.0))]
    Cycles(Vec<Cycle>),
    /// The lock or the state directory.
    #[error(transparent)]
    State(#[from] StateError),
    /// The reporter could not write. The run went on to the end regardless
    /// (stopping half way would leave the machine between two states for no
    /// gain); this is how it ended.
    #[error("cannot write the report: {source}")]
    Report {
        source: std::io::Error,
        summary: Summary,
    },
}

/// Another run holding the lock is the one trouble with something to do
/// about it.
impl Hinted for ApplyError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            ApplyError::State(StateError::Locked { .. }) => Some(
                "wait for that run to finish; the lock is released when it ends, even if it is killed"
                    .into(),
            ),
            _ => None,
        }
    }
}

fn cycles_message(cycles: &[Cycle]) -> String {
    let mut lines = vec![match cycles.len() {
        1 => "resources wait on each other in a cycle; nothing was applied".to_owned(),
        n => format!("resources wait on each other in {n} cycles; nothing was applied"),
    }];
    for c in cycles {
        lines.push(format!("  {}", c.chain()));
        for (i, (id, why)) in c.steps.iter().enumerate() {
            let next = &c.steps[(i + 1) % c.steps.len()].0;
            lines.push(format!("    {id} {} {next}", why.phrase()));
        }
    }
    lines.join("\n")
}
