//! One agent run: fetch the host's input (git or bundle), verify it, refuse
//! going back, apply it, record it, and report, whatever happened.
//!
//! The order matters for trust: nothing is applied that has not passed
//! every check configured, and when fetching fails the input applied is
//! the last one that passed them (checked again, since keys may have been
//! revoked since). A refusal applies nothing and is reported like any run,
//! with exit status 1.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use datum_apply::engine::{ApplyError, Options};
use datum_apply::root::Root;
use datum_apply::spec::{Item, items};
use datum_apply::{HumanReporter, JsonReporter, Providers, Reporter, Summary};
use datum_core::diagnostic::Diagnostic;
use datum_core::manifest::Manifest;
use datum_core::source::Files;
use datum_core::{host, loader};

use crate::bundle;
use crate::config::{Config, Source};
use crate::fetch::{self, GitSource};
use crate::gitsig;
use crate::http::{self, FetchOptions, Location};
use crate::metrics;
use crate::repo::{LocalRepo, ObjectId};
use crate::report::{self, Counts, Mode, Reports, RunRecord, Timestamp};
use crate::rollback::{self, Applied, Policy, Progress, StateFile};
use crate::sshsig::AllowedSigners;

/// The agent's own repository (git mode), under the root.
pub const REPO: &str = "/var/lib/datum/repo";
/// The record of the input applied last.
pub const STATE: &str = "/var/lib/datum/agent/applied.json";
/// The last bundle that passed every check (bundle mode).
pub const CACHED_BUNDLE: &str = "/var/lib/datum/agent/verified.bundle";
/// The run reports.
pub const REPORTS: &str = "/var/lib/datum/reports";
/// How long posting a report may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// How a run behaves, from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Examine and report, change nothing (the record of the last input
    /// and the cached bundle are left alone too).
    pub noop: bool,
    /// Apply an input the rollback check refuses, and say so.
    pub allow_rollback: bool,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub hint: String,
}

fn refusal(message: impl Into<String>, hint: impl Into<String>) -> Refusal {
    Refusal {
        message: message.into(),
        hint: hint.into(),
    }
}

/// What a run did.
#[derive(Debug)]
pub struct RunOutcome {
    pub record: RunRecord,
    /// Set when nothing was applied; the record's exit status is then 1.
    pub refusal: Option<Refusal>,
    /// Problems that did not change the run (a report that could not be
    /// written or sent).
    pub warnings: Vec<String>,
    /// Fetching failed this run (the schedule retries sooner).
    pub fetch_failed: bool,
    /// Where the report was written.
    pub report: PathBuf,
}

/// An input that passed every check, ready to apply.
struct Input {
    items: Vec<Item>,
    commit: Option<String>,
    /// What to record once applied; `None` when it cannot be compared later.
    applied: Option<Applied>,
    cached: bool,
    /// A fresh bundle's bytes, kept once applied for when fetching fails.
    bundle: Option<Vec<u8>>,
}

/// What the run learns on the way, whatever the outcome.
#[derive(Default)]
struct Log {
    notes: Vec<String>,
    fetch_failed: bool,
    source: Option<String>,
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
    /// A path of the host, under the root.
    fn path(&self, abs: &Path) -> PathBuf {
        self.root.path(&abs.to_string_lossy())
    }

    /// Runs one cycle; progress and apply's changes go to `out`.
    pub fn run_once(&self, out: &mut dyn Write) -> RunOutcome {
        let started = Timestamp::from(SystemTime::now());
        let mut log = Log::default();
        let mode = match self.config.source {
            Source::Git { .. } => Mode::Git,
            Source::Bundle { .. } => Mode::Bundle,
        };
        let input = match &self.config.source {
            Source::Git { source, fleet } => self.git_input(source, fleet, &mut log, out),
            Source::Bundle { url } => self.bundle_input(url, &mut log, out),
        };
        let (summary, resources, refusal, commit, cached) = match input {
            Err(r) => (None, serde_json::Value::Null, Some(r), None, false),
            Ok(input) => match self.apply(&input, &mut log, out) {
                Ok((summary, json)) => (Some(summary), json, None, input.commit, input.cached),
                Err(r) => (None, serde_json::Value::Null, Some(r), None, false),
            },
        };
        let fetch_failed = log.fetch_failed;
        let exit_status = match (&summary, &refusal) {
            (Some(s), None) => status(s),
            _ => 1,
        };
        if let Some(r) = &refusal {
            log.notes.push(r.message.clone());
        }
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
            exit_status,
        };
        let (record, report, warnings) = publish(
            &self.root,
            run,
            &self.config.metrics,
            self.config.report_url.as_deref(),
        );
        RunOutcome {
            record,
            refusal,
            warnings,
            fetch_failed,
            report,
        }
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
            Err(e) => Err(refusal(e.to_string(), e.hint())),
        }
    }

    fn signers(&self, path: Option<&PathBuf>) -> Result<Option<AllowedSigners>, Refusal> {
        let Some(path) = path else {
            return Ok(None);
        };
        AllowedSigners::read(&self.path(path))
            .map(Some)
            .map_err(|e| refusal(e.to_string(), e.hint()))
    }

    fn policy(&self) -> Policy {
        Policy {
            allow_rollback: self.options.allow_rollback,
            ..Policy::default()
        }
    }

    fn git_input(
        &self,
        source: &GitSource,
        fleet: &str,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Input, Refusal> {
        let last = self.last_applied(log, out)?;
        let signers = self.signers(self.config.allowed_signers.as_ref())?;
        let repo_dir = self.root.path(REPO);
        let repo = LocalRepo::open_or_init(&repo_dir).map_err(|e| {
            let hint = e.hint();
            refusal(e.to_string(), hint)
        })?;
        let remotes = source
            .remotes()
            .iter()
            .map(|r| remote_under_root(r, &self.root))
            .collect();
        let local = GitSource::new(remotes, source.branch().to_owned())
            .map_err(|e| refusal(e.to_string(), e.hint()))?;
        let (commit, time, origin, cached) = match fetch::fetch(&repo, &local) {
            Ok(fetched) => {
                for failure in &fetched.failures {
                    log.note(
                        out,
                        format!(
                            "remote {} failed ({}); the next one was tried",
                            shown_remote(&failure.remote, source, &local),
                            failure.error
                        ),
                    );
                }
                let remote = shown_remote(&fetched.remote, source, &local);
                let _ = writeln!(out, "fetched {} from {remote}", fetched.commit);
                (fetched.commit, fetched.commit_time, remote, false)
            }
            Err(e) => {
                log.fetch_failed = true;
                log.note(out, e.to_string());
                let Some(Applied::Git {
                    commit,
                    commit_time,
                }) = last
                else {
                    return Err(refusal(
                        "fetching failed, and no verified input is cached to fall back to",
                        e.hint(),
                    ));
                };
                log.note(
                    out,
                    format!("applying the last verified input instead: commit {commit}"),
                );
                (commit, commit_time, REPO.to_owned(), true)
            }
        };
        if let Some(signers) = &signers {
            let signer = gitsig::verify_commit(&repo, commit, signers, now_secs())
                .map_err(|e| refusal(e.to_string(), e.hint()))?;
            let _ = writeln!(
                out,
                "commit {commit} is signed by {} ({})",
                signer.principals.join(", "),
                signer.fingerprint
            );
        }
        if !cached {
            match rollback::check_git(&repo, last.as_ref(), commit, &self.policy()) {
                Ok(Progress::Allowed(why)) => {
                    log.note(out, format!("--allow-rollback: applying it anyway: {why}"))
                }
                Ok(_) => {}
                Err(e) => return Err(refusal(e.to_string(), e.hint())),
            }
        }
        log.source = Some(origin.clone());
        let items = self.git_items(&repo_dir, fleet, commit)?;
        Ok(Input {
            items,
            commit: Some(commit.to_string()),
            applied: Some(Applied::Git {
                commit,
                commit_time: time,
            }),
            cached,
            bundle: None,
        })
    }

    /// The host's resources in the fleet at `commit` of the agent's repository.
    fn git_items(&self, repo: &Path, fleet: &str, commit: ObjectId) -> Result<Vec<Item>, Refusal> {
        let git = |e: datum_git::GitError| {
            refusal(
                e.to_string(),
                "check `fleet` in the agent configuration: the fleet's directory inside the repository",
            )
        };
        let repo = datum_git::Repo::open_bare(repo, fleet).map_err(git)?;
        let rev = repo.resolve(&commit.to_string()).map_err(git)?;
        let reader = repo.reader(&rev).map_err(git)?;
        let fleet = loader::load(&reader).map_err(|e| {
            refusal(
                e.to_string(),
                "check the repository: the fleet cannot be read",
            )
        })?;
        let resolved = match host::resolve(&fleet, &self.host) {
            Ok(r) => r,
            Err(e) => {
                let message = with_diagnostics(e.to_string(), &fleet.files, e.diagnostics());
                return Err(refusal(message, e.hint()));
            }
        };
        if let Err(e) = resolved.require_ok() {
            let message = with_diagnostics(e.to_string(), &fleet.files, &resolved.problems);
            return Err(refusal(
                message,
                "fix the fleet and push: `datum check` shows the same errors",
            ));
        }
        let manifest = Manifest::new(&fleet, resolved.host, &resolved.resolution);
        Ok(items(&manifest, &reader))
    }

    fn bundle_input(
        &self,
        template: &str,
        log: &mut Log,
        out: &mut dyn Write,
    ) -> Result<Input, Refusal> {
        let last = self.last_applied(log, out)?;
        let signers = self.signers(self.config.public_keys.as_ref())?;
        let url = http::expand(template, &self.host).map_err(|e| {
            refusal(
                e.to_string(),
                e.hint()
                    .unwrap_or("check `bundle.url` in the agent configuration"),
            )
        })?;
        let fetched = match http::locate(&url) {
            Ok(Location::File(path)) => {
                let path = self.path(&path);
                http::read_file(&path, FetchOptions::default().max_bytes)
            }
            Ok(Location::Http(u)) => http::fetch(&u, &FetchOptions::default()),
            Err(e) => Err(e),
        };
        let cache = self.root.path(CACHED_BUNDLE);
        let (bytes, origin, cached) = match fetched {
            Ok(bytes) => {
                let _ = writeln!(
                    out,
                    "fetched {} ({} bytes)",
                    http::redact(&url),
                    bytes.len()
                );
                (bytes, url.clone(), false)
            }
            Err(e) => {
                log.fetch_failed = true;
                let hint = e.hint().unwrap_or("");
                log.note(out, format!("fetching the bundle failed: {e}"));
                // Only a regular file, never through a link at its name,
                // no larger than a fetched bundle may be.
                match self
                    .root
                    .read_small(CACHED_BUNDLE, FetchOptions::default().max_bytes)
                {
                    Ok(Some(bytes)) => {
                        log.note(
                            out,
                            format!(
                                "applying the last verified input instead: {}",
                                cache.display()
                            ),
                        );
                        (bytes, CACHED_BUNDLE.to_owned(), true)
                    }
                    Ok(None) | Err(_) => {
                        return Err(refusal(
                            "fetching failed, and no verified input is cached to fall back to",
                            if hint.is_empty() {
                                "check the bundle URL and the server"
                            } else {
                                hint
                            },
                        ));
                    }
                }
            }
        };
        log.source = Some(origin.clone());
        let name = if cached {
            CACHED_BUNDLE.to_owned()
        } else {
            http::redact(&url)
        };
        let opened = bundle::open(&bytes, signers.as_ref(), Some(&self.host), now_secs())
            .map_err(|e| refusal(format!("refusing {name}: {e}"), e.hint()))?;
        if let Some(signer) = &opened.signer {
            let _ = writeln!(
                out,
                "the bundle is signed by {} ({})",
                signer.principals.join(", "),
                signer.fingerprint
            );
        }
        let commit = match opened.commit() {
            None => {
                log.note(
                    out,
                    "the bundle records no commit (it was made outside git), so going back cannot be detected".to_owned(),
                );
                None
            }
            Some(c) => {
                let id = ObjectId::from_hex(c.id.as_bytes())
                    .map_err(|e| refusal(format!("refusing {name}: bad commit id: {e}"), ""))?;
                if !cached {
                    match rollback::check_bundle(last.as_ref(), Some(id), c.time, &self.policy()) {
                        Ok(Progress::Allowed(why)) => {
                            log.note(out, format!("--allow-rollback: applying it anyway: {why}"))
                        }
                        Ok(_) => {}
                        Err(e) => return Err(refusal(e.to_string(), e.hint())),
                    }
                }
                Some((id, c.time))
            }
        };
        let items = opened.items(&name).map_err(|e| {
            refusal(
                e.to_string(),
                "make the bundle again with `datum bundle`, by the same Datum release as the agent",
            )
        })?;
        Ok(Input {
            items,
            commit: commit.map(|(id, _)| id.to_string()),
            applied: commit.map(|(commit, commit_time)| Applied::Bundle {
                commit: Some(commit),
                commit_time,
            }),
            cached,
            bundle: (!cached).then_some(bytes),
        })
    }

    /// Applies `input`, then records it (unless under noop).
    fn apply(
        &self,
        input: &Input,
        log: &mut Log,
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
                json: JsonReporter::new(&mut json),
            };
            datum_apply::apply(
                &self.host,
                &input.items,
                &providers,
                &self.root,
                &options,
                &mut tee,
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
        let resources = apply_report(&json);
        if !self.options.noop {
            if let Some(applied) = &input.applied
                && let Err(e) = StateFile::inside(&self.root, STATE).record(applied)
            {
                log.note(out, e.to_string());
            }
            if let Some(bytes) = &input.bundle
                && let Err(e) = save_bundle(&self.root, bytes)
            {
                log.note(
                    out,
                    format!("the verified bundle was not kept for when fetching fails: {e}"),
                );
            }
        }
        Ok((summary, resources))
    }
}

/// Apply's JSON report (what [`datum_apply::JsonReporter`] wrote) as the
/// run record's `resources`; null when there is none.
pub fn apply_report(json: &[u8]) -> serde_json::Value {
    serde_json::from_slice(json).unwrap_or(serde_json::Value::Null)
}

/// A finished run, before it has an id: what [`publish`] records.
#[derive(Debug)]
pub struct Run {
    pub host: String,
    pub started: Timestamp,
    pub mode: Mode,
    /// Where the input came from (a password in a URL is hidden).
    pub source: Option<String>,
    pub commit: Option<String>,
    pub cached_input: bool,
    /// Fetching failed this run: counted in the total carried from run to run.
    pub fetch_failed: bool,
    pub notes: Vec<String>,
    /// Apply's counts, when anything was applied.
    pub summary: Option<Summary>,
    /// Apply's JSON report, or null.
    pub resources: serde_json::Value,
    pub exit_status: i32,
}

/// Records a finished run: its report under `/var/lib/datum/reports` and
/// the Prometheus file `metrics` (both under `root`), and a POST to
/// `report_url`. Gives the record, the report's path, and what could not
/// be done, as warnings: reporting never changes a run's outcome.
pub fn publish(
    root: &Root,
    run: Run,
    metrics: &Path,
    report_url: Option<&str>,
) -> (RunRecord, PathBuf, Vec<String>) {
    let mut warnings = Vec::new();
    let reports = Reports::inside(root, REPORTS);
    let previous = reports.last().ok().flatten();
    let fetch_failures_total =
        previous.map_or(0, |p| p.fetch_failures_total) + u64::from(run.fetch_failed);
    let run_id = match reports.next_run_id(run.started) {
        Ok(id) => id,
        Err(e) => {
            warnings.push(format!("no run id: {e}"));
            report::RunId::next(run.started, None).expect("an id without a predecessor")
        }
    };
    let record = RunRecord {
        run_id,
        host: run.host,
        started: run.started,
        finished: Timestamp::from(SystemTime::now()),
        mode: run.mode,
        source: run.source.as_deref().map(http::redact),
        commit: run.commit,
        cached_input: run.cached_input,
        fetch_failures_total,
        notes: run.notes,
        counts: run.summary.as_ref().map(Counts::from).unwrap_or_default(),
        resources: run.resources,
        exit_status: run.exit_status,
    };
    let report = reports
        .dir()
        .join(format!("{}.json", record.run_id.as_str()));
    if let Err(e) = reports.write(&record) {
        warnings.push(format!("the run report was not written: {}", chain(&e)));
    }
    let prom = root.path(&metrics.to_string_lossy());
    let written = metrics::write_inside(root, &metrics.to_string_lossy(), &record);
    if let Err(e) = written {
        warnings.push(format!(
            "the metrics file {} was not written: {e}",
            prom.display()
        ));
    }
    if let Some(url) = report_url {
        let opts = FetchOptions {
            timeout: POST_TIMEOUT,
            ..FetchOptions::default()
        };
        if let Some(w) = report::post(url, &record, &opts) {
            warnings.push(w.to_string());
        }
    }
    (record, report, warnings)
}

/// Keeps a verified bundle for when fetching fails, inside the root.
fn save_bundle(root: &Root, bytes: &[u8]) -> io::Result<()> {
    let dir = Path::new(CACHED_BUNDLE)
        .parent()
        .map_or("/".to_owned(), |d| d.to_string_lossy().into_owned());
    root.create_dir_all(&dir, 0o755)?;
    let attrs = datum_apply::disk::Attrs {
        mode: Some(0o600),
        ..Default::default()
    };
    root.write_atomic(CACHED_BUNDLE, bytes, attrs)
}

/// 0, 2, 4 or 6, as `datum apply` exits.
pub fn status(summary: &Summary) -> i32 {
    i32::from(summary.changes()) * 2 + i32::from(summary.failures()) * 4
}

/// A local remote (a path or `file://` URL) moved under the root, so that
/// `--root` holds every path the agent touches; other remotes as written.
fn remote_under_root(remote: &str, root: &Root) -> String {
    if root.dir().is_none() {
        return remote.to_owned();
    }
    if remote.starts_with('/') {
        return root.path(remote).display().to_string();
    }
    if let Some(path) = remote.strip_prefix("file://")
        && path.starts_with('/')
    {
        return format!("file://{}", root.path(path).display());
    }
    remote.to_owned()
}

/// A remote as configured, for messages and the report (not its place
/// under the root).
fn shown_remote(remote: &str, configured: &GitSource, local: &GitSource) -> String {
    let index = local.remotes().iter().position(|r| r == remote);
    index
        .and_then(|i| configured.remotes().get(i))
        .map_or_else(|| remote.to_owned(), |r| http::redact(r))
}

fn with_diagnostics(message: String, files: &Files, diags: &[Diagnostic]) -> String {
    let mut text = Vec::new();
    for d in diags.iter().filter(|d| d.is_error()) {
        let _ = d.render(files, false, &mut text);
    }
    let text = String::from_utf8_lossy(&text);
    if text.trim().is_empty() {
        message
    } else {
        format!("{message}\n{}", text.trim_end())
    }
}

fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    crate::cause::chain(e)
}

/// Apply's progress to the terminal and its JSON report to the run record.
pub struct Tee<H, J> {
    pub human: H,
    pub json: J,
}

impl<H: Reporter, J: Reporter> Reporter for Tee<H, J> {
    fn start(&mut self, run: &datum_apply::report::RunInfo) -> io::Result<()> {
        let json = self.json.start(run);
        self.human.start(run).and(json)
    }

    fn note(&mut self, text: &str) -> io::Result<()> {
        let json = self.json.note(text);
        self.human.note(text).and(json)
    }

    fn resource(&mut self, outcome: &datum_apply::report::Outcome) -> io::Result<()> {
        let json = self.json.resource(outcome);
        self.human.resource(outcome).and(json)
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let json = self.json.finish(summary);
        self.human.finish(summary).and(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_remotes_move_under_the_root_and_others_do_not() {
        let root = Root::at("/tmp/r");
        assert_eq!(remote_under_root("/srv/f.git", &root), "/tmp/r/srv/f.git");
        assert_eq!(
            remote_under_root("file:///srv/f.git", &root),
            "file:///tmp/r/srv/f.git"
        );
        for other in ["https://h/f.git", "ssh://git@h/f.git", "git@h:f.git"] {
            assert_eq!(remote_under_root(other, &root), other);
        }
        assert_eq!(
            remote_under_root("/srv/f.git", &Root::system()),
            "/srv/f.git"
        );
    }

    #[test]
    fn the_status_is_apply_s() {
        let mut s = Summary::default();
        assert_eq!(status(&s), 0);
        s.count(datum_apply::Status::WouldChange);
        assert_eq!(status(&s), 2);
        s.count(datum_apply::Status::Skipped);
        assert_eq!(status(&s), 6);
        let mut f = Summary::default();
        f.count(datum_apply::Status::Failed);
        assert_eq!(status(&f), 4);
    }
}
