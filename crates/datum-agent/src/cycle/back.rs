//! A new input whose health checks failed is taken back: the last verified
//! input is applied again (restarting what its changes restart, and asking
//! the checks again), and the new one is refused until a newer one
//! arrives. Also the rollout wave's wait, reported as pending.

use std::io::Write;

use super::{Agent, Input, Log, Refusal, STATE, Source, hold, refusal};
use crate::repo::{LocalRepo, ObjectId};
use crate::report::{FailedCheck, RolledBack};
use crate::rollback::{Applied, DEFAULT_WALK_LIMIT, StateFile, descends, hex};
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
        self.remember_taken_back(input, &rolled_back, log, out);
        log.rolled_back = Some(rolled_back);
        log.rolled_back_now = true;
        Some((summary, json, previous))
    }

    /// Adds `input`, taken back as `rolled_back` says, to `refused.json`.
    fn remember_taken_back(
        &self,
        input: &Input,
        rolled_back: &RolledBack,
        log: &mut Log,
        out: &mut dyn Write,
    ) {
        let mut taken = hold::TakenBack::load(&self.root).unwrap_or_else(|e| {
            log.note(out, format!("{e}: it is written afresh"));
            hold::TakenBack::default()
        });
        let contents = input.applied.as_ref().and_then(Applied::contents);
        taken.add(hold::Refused {
            input: rolled_back.clone(),
            contents_sha256: contents.map(|c| hex(&c)),
        });
        if let Err(e) = hold::save(&self.root, hold::REFUSED, &taken) {
            log.note(out, e);
        }
    }

    /// Whether `input` is another than the one applied last: only a new
    /// input can be taken back (a check failing after drift was corrected
    /// on the input the host ran already is the host's trouble, not the
    /// input's). A bundle with neither serial nor commit is told from the
    /// last one by its contents' digest (new when either has none).
    pub(super) fn is_new(&self, input: &Input) -> bool {
        if input.cached {
            return false;
        }
        let Ok(Some(last)) = StateFile::inside(&self.root, STATE).load() else {
            return true;
        };
        !input.applied.as_ref().is_some_and(|a| same_input(&last, a))
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

    /// Refuses `input` when it was taken back after its health checks
    /// failed, or is no newer than one that was (`refused.json`, see
    /// [`hold::TakenBack::refuses`]; `repo` places commits), and reports
    /// that rollback again. A record that cannot be read refuses it too:
    /// nothing shows it was not taken back.
    pub(super) fn refused_again(
        &self,
        input: &Input,
        name: &str,
        repo: Option<&LocalRepo>,
        log: &mut Log,
    ) -> Result<(), Refusal> {
        let taken = hold::TakenBack::load(&self.root).map_err(|e| {
            refusal(
                format!("refusing {name}: it cannot be shown not to be an input this host took back: {e}"),
                format!(
                    "the file records the inputs taken back after their health checks failed: put it right, or remove it to let every input in again ({})",
                    self.root.path(hold::REFUSED).display()
                ),
            )
            .because("rolled_back")
        })?;
        let digest = |a: &Applied| a.contents().map(|c| hex(&c));
        let (commit, contents) = (
            input.commit.as_deref(),
            input.applied.as_ref().and_then(digest),
        );
        let offered = hold::Offered {
            commit,
            serial: input.applied.as_ref().and_then(Applied::serial),
            contents: contents.as_deref(),
        };
        let last = StateFile::inside(&self.root, STATE).load().ok().flatten();
        let last_commit = last.and_then(|l| l.commit()).map(|c| c.to_string());
        let last_contents = last.as_ref().and_then(digest);
        let running = last.map(|l| hold::Offered {
            commit: last_commit.as_deref(),
            serial: l.serial(),
            contents: last_contents.as_deref(),
        });
        let ancestor = |a: &str, b: &str| match (
            repo,
            ObjectId::from_hex(a.as_bytes()),
            ObjectId::from_hex(b.as_bytes()),
        ) {
            // A tip that descends from the commit taken back (a fix) is
            // found in a short walk from the tip; only the others need the
            // walk back from the commit taken back.
            (Some(repo), Ok(a), Ok(b)) => {
                !descends(repo, b, a, DEFAULT_WALK_LIMIT)
                    && descends(repo, a, b, DEFAULT_WALK_LIMIT)
            }
            _ => false,
        };
        let Some(refused) = taken.refuses(offered, running, &ancestor) else {
            return Ok(());
        };
        let message = taken_back(name, &refused, offered);
        log.rolled_back = Some(refused.input);
        Err(refusal(
            message,
            "publish a fix or a revert: this host applies the next newer input",
        )
        .because("rolled_back"))
    }

    /// Whether applying `input` ends the wait recorded in `pending.json`:
    /// it is the input pending, or newer (a higher serial; in git mode a
    /// descendant of the pending tip). The input the host ran already,
    /// served again by a lagging mirror, leaves the wait (and when it
    /// started) as it is.
    pub(super) fn ends_wait(&self, input: &Input) -> bool {
        let Ok(Some(w)) = hold::load::<hold::Waiting>(&self.root, hold::PENDING) else {
            return true;
        };
        let serial = input.applied.as_ref().and_then(Applied::serial);
        if w.is(input.commit.as_deref(), serial) {
            return true;
        }
        if let (Some(pending), Some(serial)) = (w.serial, serial) {
            return serial > pending;
        }
        let hex = |c: &Option<String>| {
            c.as_deref()
                .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
        };
        match (&self.config.source, hex(&w.commit), hex(&input.commit)) {
            (Source::Git { .. }, Some(pending), Some(tip)) => {
                LocalRepo::open_or_init(&self.root.path(super::REPO))
                    .is_ok_and(|repo| descends(&repo, pending, tip, DEFAULT_WALK_LIMIT))
            }
            // Nothing places a bundle made outside git: its wait starts
            // again at each sighting anyway.
            _ => true,
        }
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

/// Whether `new` is the input `last` records: the same serial and
/// commit; for a bundle with neither, the same contents.
pub(super) fn same_input(last: &Applied, new: &Applied) -> bool {
    let placed = new.serial().is_some() || new.commit().is_some();
    if !placed {
        return last.serial().is_none()
            && last.commit().is_none()
            && new.contents().is_some()
            && last.contents() == new.contents();
    }
    last.serial() == new.serial() && last.commit() == new.commit()
}

/// Why `offered` (`name`) is refused, `refused` being the input taken back
/// that refuses it.
fn taken_back(name: &str, refused: &hold::Refused, offered: hold::Offered<'_>) -> String {
    let ids: Vec<&str> = (refused.input.failed_checks.iter())
        .map(|c| c.id.as_str())
        .collect();
    let same =
        refused.input.commit.as_deref() == offered.commit && refused.input.serial == offered.serial;
    let what = if same {
        "this host applied it and took it back".to_owned()
    } else {
        let other = match (&refused.input.commit, refused.input.serial) {
            (_, Some(n)) => format!("serial {n}"),
            (Some(c), None) => format!("commit {c}"),
            (None, None) => "an input".to_owned(),
        };
        format!("it is no newer than {other}, which this host applied and took back")
    };
    if ids.is_empty() {
        format!("refusing {name}: {what}, since its health checks failed")
    } else {
        format!(
            "refusing {name}: {what}, since its health checks failed ({})",
            ids.join(", ")
        )
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
