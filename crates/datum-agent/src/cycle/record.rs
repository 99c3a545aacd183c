//! A finished run recorded: its report under `/var/lib/datum/reports`, the
//! Prometheus textfile, and a POST to the report URL; shared with `datum
//! apply`, which records its runs the same way.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use datum_apply::root::Root;
use datum_apply::{Reporter, RunStatus, Summary};

use super::REPORTS;
use crate::ca::CaFile;
use crate::http::{self, FetchOptions};
use crate::metrics;
use crate::report::{self, Counts, Mode, Reports, RunRecord, Timestamp};

/// How long posting a report may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

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
    pub status: RunStatus,
    /// What the host observed ([`crate::facts::json`]).
    pub facts: serde_json::Value,
    /// Its labels tied to a fact that disagreed (the run was refused).
    pub label_mismatches: Vec<crate::facts::LabelMismatch>,
    /// Input is applied without any signature check.
    pub insecure_allow_unsigned: bool,
    /// When the input the host runs expires.
    pub input_expires: Option<i64>,
    /// The input refused, when one was: counted by reason.
    pub refused: Option<report::RefusedInput>,
    /// A newer input waiting for its rollout wave.
    pub pending: Option<report::PendingInput>,
    /// The input taken back after its health checks failed.
    pub rolled_back: Option<report::RolledBack>,
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
    ca: Option<&CaFile>,
) -> (RunRecord, PathBuf, Vec<String>) {
    let mut warnings = Vec::new();
    let reports = Reports::inside(root, REPORTS);
    let previous = reports.last().ok().flatten();
    let fetch_failures_total =
        previous.as_ref().map_or(0, |p| p.fetch_failures_total) + u64::from(run.fetch_failed);
    let mut input_refusals_total = previous.map(|p| p.input_refusals_total).unwrap_or_default();
    if let Some(r) = &run.refused {
        *input_refusals_total.entry(r.reason.clone()).or_insert(0) += 1;
    }
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
        exit_status: run.status.code().into(),
        facts: run.facts,
        label_mismatches: run.label_mismatches,
        insecure_allow_unsigned: run.insecure_allow_unsigned,
        input_expires: run.input_expires,
        input_refusals_total,
        pending: run.pending,
        rolled_back: run.rolled_back,
        refused: run.refused,
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
            ca: ca.cloned(),
            ..FetchOptions::default()
        };
        if let Some(w) = report::post(url, &record, &opts) {
            warnings.push(w.to_string());
        }
    }
    (record, report, warnings)
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

    fn health(&mut self, checked: &datum_apply::report::Checked) -> io::Result<()> {
        let json = self.json.health(checked);
        self.human.health(checked).and(json)
    }
}
