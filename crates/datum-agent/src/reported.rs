//! `datum check --reports DIR`: the run reports collected from hosts (as
//! POSTed to `report_url`, or copied from their `/var/lib/datum/reports`),
//! checked against the fleet, so that a pull request can put the inventory
//! right before a host refuses to apply.
//!
//! Every `*.json` file below DIR (a few directories deep, no link
//! followed, hidden names skipped) that is a run report counts
//! ([`read_reports`], which `datum rollout status` reads them with too); for each
//! host the newest report that carries facts is the one compared. Each
//! label the fleet ties to a fact that disagrees with it is an error at
//! the host's label; a file that is not a readable run report, and a
//! report of a host the fleet does not declare, are warnings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use datum_core::diagnostic::{Code, Diagnostic};
use datum_core::facts::{Observed, TIEABLE, check};
use datum_core::fleet::Fleet;
use rayon::prelude::*;

use crate::report::RunRecord;

/// How deep below DIR reports are looked for (`DIR/site/web-001/x.json`).
const DEPTH: usize = 4;
/// The largest report read (reports carry diffs).
const MAX_BYTES: u64 = 64 << 20;
/// How many reports are parsed at once.
const CHUNK: usize = 256;

/// Why the directory could not be read at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the reports directory {}", path.display())]
pub struct ReportsError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The newest report of a host that carries facts, and its file.
struct Newest {
    path: PathBuf,
    record: RunRecord,
}

/// Reads every run report below `dir` (every `*.json` file, a few
/// directories deep, no link followed, hidden names skipped, in path
/// order) and hands each to `each` with its path. Any layout of a
/// collector's directory works, since a report names its host: reports
/// POSTed to `report_url` and stored as they came, `DIR/<host>.json`,
/// `DIR/<host>/last.json`, whole copies of hosts' report directories. A
/// report found twice (`last.json` beside its `<run-id>.json`) is handed
/// over twice. Files that are not run reports are warnings.
pub fn read_reports(
    dir: &Path,
    mut each: impl FnMut(&Path, RunRecord),
) -> Result<Vec<Diagnostic>, ReportsError> {
    let mut files = Vec::new();
    walk(dir, DEPTH, &mut files).map_err(|source| ReportsError {
        path: dir.to_owned(),
        source,
    })?;
    files.sort();
    let mut diags = Vec::new();
    // Parsed in parallel a chunk at a time (so memory holds one chunk of
    // reports, however many there are), handed over in path order.
    for chunk in files.chunks(CHUNK) {
        let read: Vec<Result<RunRecord, String>> = chunk.par_iter().map(|p| read_one(p)).collect();
        for (path, record) in chunk.iter().zip(read) {
            match record {
                Ok(r) => each(path, r),
                Err(why) => diags.push(
                    Diagnostic::warning(
                        Code::BadReport,
                        format!("{} is not a run report Datum can read: {why}", path.display()),
                    )
                    .hint("the directory should hold the JSON run reports hosts write to /var/lib/datum/reports or POST to report_url"),
                ),
            }
        }
    }
    Ok(diags)
}

/// One report file, or why it is not one.
fn read_one(path: &Path) -> Result<RunRecord, String> {
    let bytes = crate::file::read_file(path, MAX_BYTES).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())?;
    RunRecord::from_json(&text).map_err(|e| e.to_string())
}

/// The diagnostics of `check --reports DIR` for `fleet`.
pub fn check_reports(fleet: &Fleet, dir: &Path) -> Result<Vec<Diagnostic>, ReportsError> {
    let mut newest: BTreeMap<String, Newest> = BTreeMap::new();
    let mut diags = read_reports(dir, |path, record| {
        if record.facts.is_null() {
            return;
        }
        let newer = newest.get(&record.host).is_none_or(|n| {
            (&record.finished, &record.run_id) > (&n.record.finished, &n.record.run_id)
        });
        if newer {
            let path = path.to_owned();
            newest.insert(record.host.clone(), Newest { path, record });
        }
    })?;
    for (host, n) in &newest {
        let Some(id) = fleet.host_id(host) else {
            diags.push(
                Diagnostic::warning(
                    Code::BadReport,
                    format!(
                        "{} reports host `{host}`, which the fleet does not declare",
                        n.path.display()
                    ),
                )
                .hint("remove the reports of hosts that left the fleet, or declare the host"),
            );
            continue;
        };
        let whence = format!(
            "as {host} last reported, at {} ({})",
            n.record.finished.rfc3339(),
            n.path.display()
        );
        diags.extend(check(
            &fleet.tied(id),
            &observed(&n.record),
            host,
            Some(&fleet.files),
            &whence,
        ));
    }
    Ok(diags)
}

/// The facts a report carries that labels may be tied to.
pub fn observed(record: &RunRecord) -> Observed {
    TIEABLE
        .iter()
        .map(|(name, _)| {
            let seen = match record.facts.get(name) {
                Some(serde_json::Value::String(v)) => Ok(v.clone()),
                _ => Err("its report does not carry it".to_owned()),
            };
            ((*name).to_owned(), seen)
        })
        .collect()
}

/// The `*.json` files below `dir`, `depth` levels deep at most.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() && depth > 0 {
            walk(&path, depth - 1, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// What `datum rollout status` needs of a report.
pub fn rollout_view(record: &RunRecord) -> datum_core::rollout::status::Reported {
    let ms = record.finished.since_epoch().as_millis();
    datum_core::rollout::status::Reported {
        host: record.host.clone(),
        run_id: record.run_id.to_string(),
        finished: u64::try_from(ms).unwrap_or(u64::MAX),
        finished_text: record.finished.rfc3339(),
        commit: record.commit.clone(),
        exit_status: record.exit_status,
        failed: record.counts.failed,
        pending: record.pending.as_ref().map(|p| (p.commit.clone(), p.due)),
        rolled_back: record.rolled_back.as_ref().map(|r| {
            let checks = r.failed_checks.iter().map(|c| c.id.clone()).collect();
            (r.commit.clone(), checks)
        }),
        refused: record
            .refused
            .as_ref()
            .map(|r| (r.commit.clone(), r.reason.clone())),
    }
}
