//! Packages changed together: when a real run reaches a Package that
//! differs, every later Package that differs too and whose every
//! predecessor is already done (and did not fail) joins it, and the
//! package provider makes all their changes at once (dnf: one
//! transaction). Each joined Package's outcome is reported when the run
//! reaches it, in the order the run would have given anyway.

use super::Run;
use crate::provider::Failure;
use crate::report::{Change, Outcome, Reason, Status};
use crate::spec::{Desired, PackageSpec};

impl Run<'_> {
    /// Converges Package `i` (whose changes are in `outcome`) with every
    /// later Package that can go with it.
    pub(super) fn package_batch(&mut self, i: usize, outcome: &mut Outcome) -> Result<(), Failure> {
        let mut joined: Vec<(usize, Outcome)> = Vec::new();
        for j in 0..self.items.len() {
            if j == i || self.status[j].is_some() || self.batched.contains_key(&j) {
                continue;
            }
            let item = &self.items[j];
            let Desired::Package(spec) = &item.desired else {
                continue;
            };
            let ready = self.deps[j]
                .iter()
                .all(|&(d, _)| matches!(self.status[d], Some(Status::Unchanged | Status::Changed)));
            if item.problem.is_some() || !ready {
                continue;
            }
            // One that cannot be examined now fails on its own turn.
            let Ok(ex) = self.providers.package.examine(spec, &self.cx()) else {
                continue;
            };
            if ex.changes.is_empty() {
                continue;
            }
            joined.push((
                j,
                Outcome {
                    id: item.id.to_string(),
                    summary: item.summary.clone(),
                    status: Status::Changed,
                    changes: ex.changes,
                    notes: ex.notes,
                    reason: None,
                    command: None,
                },
            ));
        }
        for k in std::iter::once(i).chain(joined.iter().map(|(j, _)| *j)) {
            let owed = self.restarted_by[k].clone();
            self.state.restarts.owe(owed).map_err(|e| {
                Failure::new(format!(
                    "cannot record the restarts this change makes owed: {e}"
                ))
            })?;
            self.owe_refreshes(k)?;
        }
        let spec = |k: usize| -> &PackageSpec {
            match &self.items[k].desired {
                Desired::Package(s) => s,
                _ => unreachable!("only Packages are batched"),
            }
        };
        let mut batch: Vec<(&PackageSpec, &[Change])> = vec![(spec(i), &outcome.changes[..])];
        batch.extend(joined.iter().map(|(j, o)| (spec(*j), &o.changes[..])));
        let mut results = self
            .providers
            .package
            .converge_batch(&batch, &self.cx())
            .into_iter();
        let first = results.next().unwrap_or(Ok(()));
        for ((j, mut o), result) in joined.into_iter().zip(results) {
            if let Err(f) = result {
                o.status = Status::Failed;
                o.reason = Some(Reason::Failed(f.0));
            }
            self.batched.insert(j, o);
        }
        first?;
        outcome.status = Status::Changed;
        Ok(())
    }
}
