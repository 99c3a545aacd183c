//! A new input whose health checks failed is taken back: the last verified
//! input is applied again (restarting what its changes restart, and asking
//! the checks again), and the new one is refused until a newer one
//! arrives. Also the rollout wave's wait, reported as pending.

use std::io::Write;

use super::{Agent, Input, Log, Refusal, STATE, Source, hold, refusal};
use crate::report::{FailedCheck, RolledBack};
use crate::rollback::{Applied, StateFile};
use datum_apply::Summary;

impl Agent {
    /// `input` changed the host and a health check failed: applies the
    /// last verified input again (restarting what its changes restart),
    /// which asks the checks again, and records `input` as refused until a
    /// newer one arrives. Gives that run's summary and report and the
    /// input put back; `None` when there is nothing to go back to (the
    /// host's first input stays applied, and is recorded).
    pub(super) fn roll_back(
        &self,
        input: &Input,
        resources: &serde_json::Value,
        observed: &datum_apply::facts::Facts,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Option<(Summary, serde_json::Value, Input)> {
        let failed = failed_checks(resources);
        let ids: Vec<&str> = failed.iter().map(|c| c.id.as_str()).collect();
        let what = input
            .commit
            .as_deref()
            .map_or_else(|| "the new input".to_owned(), |c| format!("commit {c}"));
        let why = match self.previous_input(log, out) {
            Ok(Some(previous)) => Ok(previous),
            Ok(None) => Err("this host applied nothing before it to go back to".to_owned()),
            Err(r) => Err(format!(
                "the last verified input cannot be applied again: {}",
                r.message
            )),
        };
        let previous = match why {
            Ok(previous) => previous,
            Err(why) => {
                let ids = ids.join(", ");
                let text = format!(
                    "health checks failed after applying {what} ({ids}), and {why}: it stays applied"
                );
                log.note(out, text);
                return None;
            }
        };
        log.note(
            out,
            format!(
                "health checks failed after applying {what} ({}): applying the last verified input again{}, and refusing {what} until a newer input arrives",
                ids.join(", "),
                previous
                    .commit
                    .as_deref()
                    .map_or_else(String::new, |c| format!(" (commit {c})"))
            ),
        );
        let (summary, json) = match self.apply_items(&previous.items, observed, out) {
            Ok(applied) => applied,
            Err(r) => {
                log.note(
                    out,
                    format!("putting the last verified input back failed: {}", r.message),
                );
                return None;
            }
        };
        if summary.health_failed > 0 {
            log.note(
                out,
                "the health checks fail on the last verified input too: the host needs a look"
                    .to_owned(),
            );
        }
        let rolled_back = RolledBack {
            commit: input.commit.clone(),
            serial: input.applied.as_ref().and_then(Applied::serial),
            failed_checks: failed,
        };
        // The host runs what was put back, from where it is kept.
        log.source = Some(self.kept_at().to_owned());
        if let Err(e) = hold::save(&self.root, hold::REFUSED, &rolled_back) {
            log.note(out, e);
        }
        log.rolled_back = Some(rolled_back);
        log.rolled_back_now = true;
        Some((summary, json, previous))
    }

    /// Whether `input` is another than the one applied last: only a new
    /// input can be taken back (a check failing after drift was corrected
    /// on the input the host ran already is the host's trouble, not the
    /// input's). A bundle with neither serial nor commit cannot be told
    /// from the last one, so it counts as new.
    pub(super) fn is_new(&self, input: &Input) -> bool {
        if input.cached {
            return false;
        }
        let Ok(Some(last)) = StateFile::inside(&self.root, STATE).load() else {
            return true;
        };
        let serial = input.applied.as_ref().and_then(Applied::serial);
        let placed = serial.is_some() || input.commit.is_some();
        !placed || last.serial() != serial || last.commit().map(|c| c.to_string()) != input.commit
    }

    /// Where the last verified input is kept.
    fn kept_at(&self) -> &'static str {
        match self.config.source {
            Source::Git { .. } => super::REPO,
            Source::Bundle { .. } => super::CACHED_BUNDLE,
        }
    }

    /// The last verified input, checked again, to put back after a failed
    /// health check; `None` when none was applied.
    fn previous_input(&self, log: &mut Log, out: &mut dyn Write) -> Result<Option<Input>, Refusal> {
        match &self.config.source {
            Source::Git { fleet, .. } => self.git_previous(fleet, log, out),
            Source::Bundle { .. } => self.bundle_previous(log, out),
        }
    }

    /// Refuses `input` when it is the one taken back after its health
    /// checks failed (`refused.json`), and reports that rollback again.
    pub(super) fn refused_again(
        &self,
        input: &Input,
        name: &str,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<(), Refusal> {
        let refused: Option<hold::Refused> = match hold::load(&self.root, hold::REFUSED) {
            Ok(r) => r,
            Err(e) => {
                log.note(out, e);
                None
            }
        };
        let serial = input.applied.as_ref().and_then(Applied::serial);
        let Some(refused) =
            refused.filter(|r| hold::is_refused(r, input.commit.as_deref(), serial))
        else {
            return Ok(());
        };
        let ids: Vec<&str> = refused
            .failed_checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        let message = format!(
            "refusing {name}: this host applied it and took it back, since its health checks failed ({})",
            ids.join(", ")
        );
        log.rolled_back = Some(refused);
        Err(refusal(
            message,
            "publish a fix or a revert: this host applies the next newer input",
        )
        .because("rolled_back"))
    }

    /// Records `waiting` as the input pending (unless under noop) and
    /// reports it.
    pub(super) fn wait_for(&self, waiting: &hold::Waiting, log: &mut Log, out: &mut dyn Write) {
        if !self.options.noop
            && let Err(e) = hold::save(&self.root, hold::PENDING, waiting)
        {
            log.note(out, e);
        }
        let what = match (&waiting.commit, waiting.serial) {
            (Some(c), Some(n)) => format!("commit {c} (serial {n})"),
            (Some(c), None) => format!("commit {c}"),
            (None, Some(n)) => format!("serial {n}"),
            (None, None) => "the new input".to_owned(),
        };
        log.note(
            out,
            format!(
                "{what} waits for this host's rollout wave until {}: the host stays on the input it runs",
                crate::sshsig::time::format_utc(waiting.due)
            ),
        );
        log.pending = Some(waiting.report());
    }
}

/// The health checks that failed, from apply's JSON report, with what they
/// printed (or, when they printed nothing, how they ended).
fn failed_checks(report: &serde_json::Value) -> Vec<FailedCheck> {
    let Some(checks) = report.get("health").and_then(|h| h.as_array()) else {
        return Vec::new();
    };
    checks
        .iter()
        .filter(|c| c["status"] == "failed")
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or("").to_owned();
            let output = field("output");
            FailedCheck {
                id: field("id"),
                output: if output.is_empty() {
                    field("detail")
                } else {
                    output
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_checks_keep_their_output_or_else_how_they_ended() {
        let report = serde_json::json!({"health": [
            {"id": "Health[a]", "status": "passed", "detail": "exit 0", "output": ""},
            {"id": "Health[b]", "status": "failed", "detail": "exit 3", "output": "not ready\n"},
            {"id": "Health[c]", "status": "failed", "detail": "timed out after 5s", "output": ""},
        ]});
        assert_eq!(
            failed_checks(&report),
            [
                FailedCheck {
                    id: "Health[b]".into(),
                    output: "not ready\n".into()
                },
                FailedCheck {
                    id: "Health[c]".into(),
                    output: "timed out after 5s".into()
                },
            ]
        );
        assert_eq!(failed_checks(&serde_json::Value::Null), []);
    }
}
