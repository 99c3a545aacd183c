//! One agent run: fetch the host's input (git or bundle), verify it, refuse
//! going back, apply it, record it, and report, whatever happened.
//!
//! The order matters for trust: nothing is applied that has not passed
//! every check configured. When fetching fails, when the new input is
//! refused, and while it waits for its rollout wave, the input applied is
//! the last one that passed them (checked again, since keys may have been
//! revoked since), so drift is corrected every run. A refusal is reported
//! like any run, with exit status 1, even when the last verified input was
//! applied. A new input whose health checks fail is taken back: the last
//! verified input is applied again, and the new one refused from then on.
//!
//! - `git`, `bundle`: each mode's input, fetched and checked;
//! - `hold`: the pending and the rolled-back input, kept between runs;
//! - `record`: the finished run's report, metrics and POST.

mod back;
mod bundle;
mod git;
pub mod hold;
mod record;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use datum_apply::engine::{ApplyError, Options};
use datum_apply::root::Root;
use datum_apply::spec::Item;
use datum_apply::{HumanReporter, JsonReporter, Providers, RunStatus, Summary};
use datum_core::hint::Hinted;

use crate::ca::CaFile;
use crate::config::{Config, Source};
use crate::facts::{self, LabelMismatch};
use crate::report::{Mode, PendingInput, RolledBack, RunRecord, Timestamp};
use crate::rollback::{Applied, Policy, StateFile};
use crate::sshsig::AllowedSigners;

/// The most an allowed-signers file may hold.
const SIGNERS_LIMIT: u64 = 1 << 20;

pub use record::{Run, Tee, apply_report, publish};

/// The agent's own repository (git mode), under the root.
pub const REPO: &str = "/var/lib/datum/repo";
/// The record of the input applied last.
pub const STATE: &str = "/var/lib/datum/agent/applied.json";
/// The last bundle that passed every check (bundle mode).
pub const CACHED_BUNDLE: &str = "/var/lib/datum/agent/verified.bundle";
/// The name of the fleet whose bundles this host applies, recorded on the
/// first bundle applied (bundle mode).
pub const FLEET: &str = "/var/lib/datum/agent/fleet";
/// The run reports.
pub const REPORTS: &str = "/var/lib/datum/reports";
/// How a run behaves, from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Examine and report, change nothing (the record of the last input
    /// and the cached bundle are left alone too).
    pub noop: bool,
    /// Apply an input the rollback check refuses, and say so.
    pub allow_rollback: bool,
    /// Leave out the progress lines (what was fetched, who signed it);
    /// notes, changes and errors are still written (`-q`).
    pub quiet: bool,
}

/// The agent for one host.
#[derive(Debug)]
pub struct Agent {
    pub config: Config,
    pub root: Root,
    /// The host's name, by apply's rules.
    pub host: String,
    pub options: RunOptions,
}

/// Why nothing was applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub message: String,
    pub hint: String,
    /// Why, in one word, for `datum_input_refusals_total{reason=...}`.
    pub reason: &'static str,
}

impl Refusal {
    /// The same refusal, counted under `reason`.
    fn because(self, reason: &'static str) -> Refusal {
        Refusal { reason, ..self }
    }
}

/// Every refusal says what to do, even as an empty line.
impl Hinted for Refusal {
    fn hint(&self) -> Option<std::borrow::Cow<'static, str>> {
        Some(self.hint.clone().into())
    }
}

fn refusal(message: impl Into<String>, hint: impl Into<String>) -> Refusal {
    Refusal {
        message: message.into(),
        hint: hint.into(),
        reason: "other",
    }
}

/// A refusal saying what `e` says, with its hint.
fn refused(e: &impl Hinted) -> Refusal {
    refusal(e.to_string(), e.hint().unwrap_or_default())
}

/// What a run did.
#[derive(Debug)]
pub struct RunOutcome {
    pub record: RunRecord,
    /// How it ended, as the process exits and the record says.
    pub status: RunStatus,
    /// Set when the input was refused (the status is then
    /// [`RunStatus::NotApplied`], even when the last verified input was
    /// applied instead).
    pub refusal: Option<Refusal>,
    /// Problems that did not change the run (a report that could not be
    /// written or sent).
    pub warnings: Vec<String>,
    /// Fetching failed this run (the schedule retries sooner).
    pub fetch_failed: bool,
    /// Where the report was written.
    pub report: PathBuf,
}

/// What converging gave: apply's summary and JSON report, the refusal,
/// the commit the host runs, and whether the input was the cached one.
type Converged = (
    Option<Summary>,
    serde_json::Value,
    Option<Refusal>,
    Option<String>,
    bool,
);

/// An input that passed every check, ready to apply.
struct Input {
    items: Vec<Item>,
    commit: Option<String>,
    /// Before when it may not be applied (a bundle's signed `not_before`).
    not_before: Option<i64>,
    /// What to record once applied; `None` when it cannot be compared later.
    applied: Option<Applied>,
    cached: bool,
    /// A fresh bundle's bytes, kept once applied for when fetching fails.
    bundle: Option<Vec<u8>>,
    /// The fleet to record as this host's, when none is recorded yet.
    fleet: Option<String>,
}

/// What the run learns on the way, whatever the outcome.
#[derive(Default)]
struct Log {
    notes: Vec<String>,
    fetch_failed: bool,
    source: Option<String>,
    /// The facts labels may be tied to, observed as the run starts.
    observed: datum_core::facts::Observed,
    /// The tied labels that disagreed with them.
    mismatches: Vec<LabelMismatch>,
    /// When the input the host runs expires (the last applied, until a
    /// new one is).
    expires: Option<i64>,
    /// The input the host runs has expired: the run exits 1 even when
    /// applying succeeds.
    stale: bool,
    /// The new input, refused while the last verified one was applied:
    /// the run exits 1 even when applying succeeds.
    refused: Option<Refusal>,
    /// A newer input waiting for its wave.
    pending: Option<PendingInput>,
    /// The input taken back after its health checks failed (in this run
    /// or an earlier one, while it is still what the source offers).
    rolled_back: Option<RolledBack>,
    /// This run applied an input whose checks failed and took it back.
    rolled_back_now: bool,
}

impl Log {
    fn note(&mut self, out: &mut dyn Write, text: String) {
        let _ = writeln!(out, "note: {text}");
        self.notes.push(text);
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Agent {
    /// A progress line on `out`, unless quiet.
    fn progress(&self, out: &mut dyn Write, line: std::fmt::Arguments<'_>) {
        if !self.options.quiet {
            let _ = writeln!(out, "{line}");
        }
    }

    /// A path of the host, under the root.
    fn path(&self, abs: &Path) -> PathBuf {
        self.root.path(&abs.to_string_lossy())
    }

    /// Runs one cycle; progress and apply's changes go to `out`.
    pub fn run_once(&self, out: &mut dyn Write) -> RunOutcome {
        let started = Timestamp::from(SystemTime::now());
        let observed = datum_apply::facts::Facts::observe(&self.root);
        let mut log = Log {
            observed: observed.observed(),
            ..Log::default()
        };
        let mode = match self.config.source {
            Source::Git { .. } => Mode::Git,
            Source::Bundle { .. } => Mode::Bundle,
        };
        let ca = self.ca_file();
        let input = match (&self.config.source, &ca) {
            (_, Err(r)) => Err(r.clone()),
            (
                Source::Git {
                    source,
                    fleet,
                    max_age,
                },
                Ok(_),
            ) => self.git_input(source, fleet, *max_age, &mut log, out),
            (Source::Bundle { url }, Ok(ca)) => self.bundle_input(url, ca.as_ref(), &mut log, out),
        };
        let (summary, resources, refusal, commit, cached) =
            self.converge(input, &observed, &mut log, out);
        let refusal = refusal.or_else(|| log.refused.take());
        let fetch_failed = log.fetch_failed;
        let status = match (&summary, &refusal) {
            (_, Some(_)) => RunStatus::NotApplied,
            (Some(_), None) if log.stale => RunStatus::NotApplied,
            // The host changed, and a check failed: it stands on the
            // input it ran before.
            (Some(_), None) if log.rolled_back_now => RunStatus::ChangedAndFailed,
            (Some(s), None) => s.status(),
            // Nothing to apply yet: the first input waits for its wave.
            (None, None) => RunStatus::Unchanged,
        };
        if let Some(r) = &refusal {
            log.notes.push(r.message.clone());
        }
        let unsigned = self.say_unsigned(&mut log, out);
        let run = Run {
            host: self.host.clone(),
            started,
            mode,
            source: log.source,
            commit,
            cached_input: cached,
            fetch_failed: log.fetch_failed,
            notes: log.notes,
            summary,
            resources,
            status,
            facts: facts::json(&observed),
            label_mismatches: log.mismatches,
            insecure_allow_unsigned: unsigned,
            input_expires: log.expires,
            refusal_reason: refusal.as_ref().map(|r| r.reason),
            pending: log.pending,
            rolled_back: log.rolled_back,
        };
        let (record, report, warnings) = publish(
            &self.root,
            run,
            &self.config.metrics,
            self.config.report_url.as_deref(),
            ca.as_ref().ok().and_then(Option::as_ref),
        );
        RunOutcome {
            record,
            status,
            refusal,
            warnings,
            fetch_failed,
            report,
        }
    }

    /// When the input `applied` stops being fresh enough to move to
    /// ([`Applied::stale_after`]).
    fn expiry_of(&self, applied: &Applied) -> Option<i64> {
        let max_age = match &self.config.source {
            Source::Git { max_age, .. } => *max_age,
            Source::Bundle { .. } => None,
        };
        applied.stale_after(max_age)
    }

    /// Applies a checked `input`: what the run then reports (summary,
    /// apply's JSON, the refusal, the commit the host runs, whether the
    /// input was the cached one).
    fn converge(
        &self,
        input: Result<Option<Input>, Refusal>,
        observed: &datum_apply::facts::Facts,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Converged {
        let refused = |r| {
            (
                None,
                serde_json::Value::Null,
                Some(r),
                self.running(),
                false,
            )
        };
        match input {
            Err(r) => refused(r),
            Ok(None) => (None, serde_json::Value::Null, None, None, false),
            Ok(Some(input)) => match self.apply(&input, observed, log, out) {
                Ok((summary, json, instead)) => {
                    // After a rollback the host runs the input put back.
                    let runs = instead.as_ref().unwrap_or(&input);
                    if let Some(applied) = &runs.applied {
                        log.expires = self.expiry_of(applied);
                    }
                    // A host waiting for its wave runs what it should:
                    // not a stale input.
                    let cached = (runs.cached || instead.is_some()) && log.pending.is_none();
                    (Some(summary), json, None, runs.commit.clone(), cached)
                }
                Err(r) => refused(r),
            },
        }
    }

    /// Notes, every run, that input is applied unverified
    /// (`insecure_allow_unsigned` and no signers); whether it is.
    fn say_unsigned(&self, log: &mut Log, out: &mut dyn Write) -> bool {
        let (setting, file) = match self.config.source {
            Source::Git { .. } => ("allowed_signers", &self.config.allowed_signers),
            Source::Bundle { .. } => ("public_keys", &self.config.public_keys),
        };
        let unsigned = self.config.insecure_allow_unsigned && file.is_none();
        if unsigned {
            log.note(
                out,
                format!(
                    "insecure_allow_unsigned: no `{setting}` is configured, so input is applied without checking who made it"
                ),
            );
        }
        unsigned
    }

    /// The commit the host runs: the one recorded as applied last, for
    /// the report and the metrics of a run that applied nothing new.
    fn running(&self) -> Option<String> {
        let last = StateFile::inside(&self.root, STATE).load().ok().flatten()?;
        last.commit().map(|c| c.to_string())
    }

    /// The last applied input, or a refusal when its record is damaged
    /// (unless rollback is allowed, which writes a fresh one).
    fn last_applied(&self, log: &mut Log, out: &mut dyn Write) -> Result<Option<Applied>, Refusal> {
        match StateFile::inside(&self.root, STATE).load() {
            Ok(last) => Ok(last),
            Err(e) if self.options.allow_rollback => {
                log.note(
                    out,
                    format!("{e}; --allow-rollback: going on as if nothing had been applied"),
                );
                Ok(None)
            }
            Err(e) => Err(refused(&e)),
        }
    }

    /// The signers input must be signed by (`setting` names the file's
    /// key). With none configured, every input is refused, unless
    /// `insecure_allow_unsigned: true`, which every run then notes.
    fn signers(
        &self,
        path: Option<&PathBuf>,
        setting: &str,
    ) -> Result<Option<AllowedSigners>, Refusal> {
        let Some(path) = path else {
            if self.config.insecure_allow_unsigned {
                // Said at the end of every run ([`Agent::run_once`]).
                return Ok(None);
            }
            return Err(refusal(
                format!(
                    "refusing unverified input: no `{setting}` is configured, so nothing can show who made the input"
                ),
                format!(
                    "list the keys that sign the input in a file named by `{setting}` (docs/agent.md); to run without signatures anyway, set `insecure_allow_unsigned: true`"
                ),
            ));
        };
        let shown = self.path(path);
        self.read_in_root(path, SIGNERS_LIMIT)
            .and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8"))
            })
            .map_err(|source| crate::sshsig::AllowedSignersError::Read {
                path: shown.clone(),
                source,
            })
            .and_then(|text| AllowedSigners::parse(&shown, &text))
            .map(Some)
            .map_err(|e| refused(&e))
    }

    /// The file at `abs` inside the root, as a regular file of at most
    /// `limit` bytes: a link at its name or in its path never leads out
    /// of the root, and a FIFO is refused rather than waited on. The
    /// signer and CA files decide what the agent trusts: read through a
    /// link to the host's own files, a syntax error would copy a line of
    /// them into the report.
    fn read_in_root(&self, abs: &Path, limit: u64) -> io::Result<Vec<u8>> {
        match self.root.read_regular(&abs.to_string_lossy(), limit) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(datum_apply::root::not_found()),
            Err(datum_apply::root::Refused::Io(e)) => Err(e),
            Err(other) => Err(io::Error::other(other.to_string())),
        }
    }

    /// The CAs of `ca_file`, read afresh each run (so a renewed CA needs
    /// no restart); a file that cannot be used refuses the run.
    fn ca_file(&self) -> Result<Option<CaFile>, Refusal> {
        let Some(path) = &self.config.ca_file else {
            return Ok(None);
        };
        let shown = self.path(path);
        self.read_in_root(path, crate::ca::MAX_SIZE)
            .map_err(|e| crate::ca::CaError::Read {
                path: shown.clone(),
                why: e.to_string(),
            })
            .and_then(|bytes| CaFile::parse(&shown, &bytes))
            .map(Some)
            .map_err(|e| refused(&e))
    }

    fn policy(&self) -> Policy {
        Policy {
            allow_rollback: self.options.allow_rollback,
            ..Policy::default()
        }
    }

    /// Refuses a host whose labels tied to a fact disagree with what it
    /// observes; `files` places the labels (a fleet's).
    fn check_labels(
        &self,
        tied: &[datum_core::facts::Tied],
        files: Option<&datum_core::source::Files>,
        log: &mut Log,
    ) -> Result<(), Refusal> {
        match facts::compare(tied, &log.observed, &self.host, files) {
            None => Ok(()),
            Some(d) => {
                log.mismatches = d.mismatches;
                Err(refusal(
                    format!(
                        "refusing to apply: this host's labels disagree with what it observes\n{}",
                        d.text
                    ),
                    d.hint,
                )
                .because("labels"))
            }
        }
    }

    /// Applies `input`, then records it (unless under noop). When it
    /// changed something and a health check failed, the last verified
    /// input is applied again and given back as the one the host runs,
    /// and `input` is refused from then on ([`Agent::roll_back`]).
    fn apply(
        &self,
        input: &Input,
        observed: &datum_apply::facts::Facts,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<(Summary, serde_json::Value, Option<Input>), Refusal> {
        let (summary, resources) = self.apply_items(&input.items, observed, out)?;
        if self.options.noop {
            return Ok((summary, resources, None));
        }
        if summary.health_failed > 0
            && self.is_new(input)
            && let Some(back) = self.roll_back(input, &resources, observed, log, out)
        {
            return Ok((back.0, back.1, Some(back.2)));
        }
        // Kept, then recorded: a kept bundle older than the record is refused.
        if let Some(bytes) = &input.bundle
            && let Err(e) = save_bundle(&self.root, bytes)
        {
            let kept = format!("the verified bundle was not kept for when fetching fails: {e}");
            log.note(out, kept);
        }
        if let Some(applied) = &input.applied
            && let Err(e) = StateFile::inside(&self.root, STATE).record(applied)
        {
            log.note(out, e.to_string());
        }
        if let Some(fleet) = &input.fleet
            && let Err(e) = save_fleet(&self.root, fleet)
        {
            log.note(out, format!("the fleet's name was not recorded: {e}"));
        }
        if !input.cached
            && self.ends_wait(input)
            && let Err(e) = hold::clear(&self.root, hold::PENDING)
        {
            log.note(out, e);
        }
        Ok((summary, resources, None))
    }

    /// Runs apply on `items`: its summary and JSON report.
    fn apply_items(
        &self,
        items: &[Item],
        observed: &datum_apply::facts::Facts,
        out: &mut dyn Write,
    ) -> Result<(Summary, serde_json::Value), Refusal> {
        let providers = Providers::system(&self.root);
        let options = Options {
            noop: self.options.noop,
            identity: self
                .config
                .identity
                .as_ref()
                .map(|p| p.display().to_string()),
        };
        let mut json = Vec::new();
        let result = {
            let mut tee = Tee {
                human: HumanReporter::new(&mut *out),
                json: JsonReporter::new(&mut json).with_facts(observed.tree()),
            };
            datum_apply::apply(
                &self.host, items, &providers, &self.root, &options, &mut tee,
            )
        };
        let summary = match result {
            Ok(summary) => summary,
            Err(ApplyError::Report { summary, .. }) => summary,
            Err(e) => {
                let hint = match e {
                    ApplyError::State(datum_apply::state::StateError::Locked { .. }) => {
                        "another run is applying; this one will run again at its next slot"
                    }
                    _ => "fix the fleet: `datum apply --noop` on a checkout shows the same",
                };
                return Err(refusal(e.to_string(), hint));
            }
        };
        Ok((summary, apply_report(&json)))
    }
}

/// Records `fleet` as the host's fleet, inside the root.
fn save_fleet(root: &Root, fleet: &str) -> io::Result<()> {
    let dir = Path::new(FLEET)
        .parent()
        .map_or("/".to_owned(), |d| d.to_string_lossy().into_owned());
    root.create_dir_all(&dir, 0o755)?;
    let attrs = datum_fs::Attrs {
        mode: Some(0o644),
        ..Default::default()
    };
    root.write_atomic(FLEET, format!("{fleet}\n").as_bytes(), attrs)
}

/// Keeps a verified bundle for when fetching fails, inside the root.
fn save_bundle(root: &Root, bytes: &[u8]) -> io::Result<()> {
    let dir = Path::new(CACHED_BUNDLE)
        .parent()
        .map_or("/".to_owned(), |d| d.to_string_lossy().into_owned());
    root.create_dir_all(&dir, 0o755)?;
    let attrs = datum_fs::Attrs {
        mode: Some(0o600),
        ..Default::default()
    };
    root.write_atomic(CACHED_BUNDLE, bytes, attrs)
}
