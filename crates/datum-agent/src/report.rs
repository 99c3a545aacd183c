//! Run reports: what each run did, kept where an operator or a monitor can
//! read it. A directory (by default `/var/lib/datum/reports`) holds
//! `<run-id>.json` for the last [`KEEP`] runs and `last.json`, a copy of
//! the newest; every file is replaced atomically. A report can also be
//! POSTed to a URL, best effort.
//!
//! Nothing here reads the clock: times come in as parameters.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use datum_apply::Summary;
use datum_apply::root::{Refused, Root};
use datum_fs::{Attrs, write_atomic_in};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::calendar::Utc;
use crate::http::{self, FetchError, FetchOptions};

/// How many runs the directory keeps.
pub const KEEP: usize = 20;
/// The newest run's report.
pub const LAST: &str = "last.json";
/// Reports can hold diffs of configuration files: only root reads them.
const MODE: u32 = 0o600;

/// One run, as the report file holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: RunId,
    pub host: String,
    pub started: Timestamp,
    pub finished: Timestamp,
    pub mode: Mode,
    /// The git remote or bundle URL the input came from (without
    /// credentials); `None` for a local apply.
    pub source: Option<String>,
    /// The commit applied, when the input came from git.
    pub commit: Option<String>,
    /// Fetching failed and the last verified input was applied instead.
    pub cached_input: bool,
    /// Fetch failures over the host's life, carried from run to run.
    pub fetch_failures_total: u64,
    /// What the operator should know: fetch errors, refusals, fallbacks.
    pub notes: Vec<String>,
    /// Resources per status, as apply's JSON report has them (`summary`;
    /// reports written before it were named `counts`).
    #[serde(rename = "summary", alias = "counts")]
    pub counts: Counts,
    /// The apply JSON report, as apply wrote it.
    pub resources: serde_json::Value,
    pub exit_status: i32,
    /// What the host observed as the run started (`datum facts`); null
    /// in a report written before Datum recorded facts.
    #[serde(default)]
    pub facts: serde_json::Value,
    /// Its labels tied to a fact that disagreed with them: the run was
    /// refused.
    #[serde(default)]
    pub label_mismatches: Vec<crate::facts::LabelMismatch>,
    /// The agent applies input no signature vouches for
    /// (`insecure_allow_unsigned: true`).
    #[serde(default)]
    pub insecure_allow_unsigned: bool,
    /// When the input the host runs expires (seconds since the epoch), when
    /// it does: a bundle's signed `expires`.
    #[serde(default)]
    pub input_expires: Option<i64>,
    /// Inputs refused over the host's life, by reason, carried from run to
    /// run.
    #[serde(default)]
    pub input_refusals_total: std::collections::BTreeMap<String, u64>,
    /// A newer input, verified, that waits for its rollout wave: the host
    /// stays on what it runs until `due`. `None` when nothing waits.
    #[serde(default)]
    pub pending: Option<PendingInput>,
    /// This run applied an input whose health checks failed and put the
    /// host back on the previous verified input. `None` when it did not.
    #[serde(default)]
    pub rolled_back: Option<RolledBack>,
    /// The input this run refused, when it refused one: as far as it was
    /// read before the refusal (commit, serial), and why. `None` when
    /// nothing was refused.
    #[serde(default)]
    pub refused: Option<RefusedInput>,
}

/// An input a run refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedInput {
    /// Its commit, when it was read before the refusal.
    pub commit: Option<String>,
    /// Its serial, when it is a bundle read before the refusal.
    pub serial: Option<u64>,
    /// Why, as `datum_input_refusals_total{reason}` counts it.
    pub reason: String,
}

/// An input the agent verified but has not applied yet (its wave's time
/// has not come).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingInput {
    /// Its commit, when it came from git.
    pub commit: Option<String>,
    /// Its serial, when it is a bundle that carries one.
    pub serial: Option<u64>,
    /// When it becomes due, seconds since the Unix epoch.
    pub due: i64,
}

/// An input taken back because its health checks failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolledBack {
    /// The input refused from now on: its commit, when it came from git.
    pub commit: Option<String>,
    /// Its serial, when it is a bundle that carries one.
    pub serial: Option<u64>,
    /// The checks that failed, by name, with what they printed.
    pub failed_checks: Vec<FailedCheck>,
}

/// One health check that failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    /// The resource id (`Health[nginx]`).
    pub id: String,
    /// What it printed or why it failed, as the apply report has it.
    pub output: String,
}

/// Where the input came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Git,
    Bundle,
    /// `datum apply` on a checkout already on the host.
    Local,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Git => "git",
            Mode::Bundle => "bundle",
            Mode::Local => "local",
        }
    }
}

/// Resources per final status, every status present.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    // In the order apply's JSON summary gives them.
    pub changed: u64,
    pub would_change: u64,
    pub failed: u64,
    pub skipped: u64,
    pub unchanged: u64,
}

impl Counts {
    /// Each status's name (as apply's JSON summary spells it) and count.
    pub fn by_status(&self) -> [(&'static str, u64); 5] {
        [
            ("changed", self.changed),
            ("failed", self.failed),
            ("skipped", self.skipped),
            ("unchanged", self.unchanged),
            ("would_change", self.would_change),
        ]
    }
}

impl From<&Summary> for Counts {
    fn from(s: &Summary) -> Counts {
        // Destructured whole, so a status added to apply fails to compile here.
        let Summary {
            unchanged,
            changed,
            would_change,
            failed,
            skipped,
            // A failed health check counts among the run's failures (its
            // status); the checks themselves are in the apply report.
            health_passed: _,
            health_failed: _,
        } = *s;
        Counts {
            unchanged: unchanged as u64,
            changed: changed as u64,
            would_change: would_change as u64,
            failed: failed as u64,
            skipped: skipped as u64,
        }
    }
}

impl RunRecord {
    pub fn duration(&self) -> Duration {
        self.finished.0.saturating_sub(self.started.0)
    }

    /// The report file's text: the record's fields, keys sorted, beside
    /// `datum: v1alpha1` and `type: RunReport`.
    pub fn to_json(&self) -> String {
        /// The JSON contract's envelope first (docs/json.md), then the
        /// record's fields in the order they are declared.
        #[derive(Serialize)]
        struct Envelope<'a> {
            datum: &'static str,
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            record: &'a RunRecord,
        }
        let doc = Envelope {
            datum: "v1alpha1",
            kind: "RunReport",
            record: self,
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("a record is plain data");
        text.push('\n');
        text
    }

    /// Reads a report file's text back.
    pub fn from_json(text: &str) -> Result<RunRecord, serde_json::Error> {
        use serde::de::Error as _;
        let mut value: serde_json::Value = serde_json::from_str(text)?;
        let Some(map) = value.as_object_mut() else {
            return Err(serde_json::Error::custom("a run report is a JSON object"));
        };
        if map.remove("type").as_ref().and_then(|t| t.as_str()) != Some("RunReport") {
            return Err(serde_json::Error::custom(
                "not a run report: `type` is not RunReport",
            ));
        }
        map.remove("datum");
        serde_json::from_value(value)
    }
}

/// A run's id: its start time to the second, then a counter, so ids sort
/// in run order (`20260102T030405Z-0000`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(String);

impl RunId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id for a run that started at `started`, given the newest id so
    /// far: the time's own id, unless that would not sort after `newest`
    /// (a second run within one second, or a clock set back), in which
    /// case `newest` with its counter raised. Ids therefore always grow.
    pub fn next(started: Timestamp, newest: Option<&RunId>) -> Option<RunId> {
        let own = RunId(format!("{}-0000", started.compact()));
        match newest {
            Some(n) if *n >= own => {
                let (time, counter) = n.0.split_once('-')?;
                let counter: u32 = counter.parse().ok()?;
                (counter < 9999).then(|| RunId(format!("{time}-{:04}", counter + 1)))
            }
            _ => Some(own),
        }
    }

    /// Whether `s` has the shape of a run id.
    pub fn parse(s: &str) -> Option<RunId> {
        let b = s.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        let ok = b.len() == 21
            && digits(0..8)
            && b[8] == b'T'
            && digits(9..15)
            && &b[15..17] == b"Z-"
            && digits(17..21);
        ok.then(|| RunId(s.to_owned()))
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for RunId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for RunId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunId, D::Error> {
        let s = String::deserialize(d)?;
        RunId::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("{s:?} is not a run id")))
    }
}

/// A time since the Unix epoch to the millisecond, written in RFC 3339
/// (`2026-01-02T03:04:05.123Z`). Times before the epoch count as the epoch;
/// times after the year 9999 as its last millisecond.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(Duration);

/// 9999-12-31T23:59:59.999Z.
const LAST_MS: u64 = 253_402_300_799_999;

impl Timestamp {
    pub fn from_millis(ms: u64) -> Timestamp {
        Timestamp(Duration::from_millis(ms.min(LAST_MS)))
    }

    pub fn since_epoch(&self) -> Duration {
        self.0
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn rfc3339(&self) -> String {
        let t = self.utc();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            t.year,
            t.month,
            t.day,
            t.hour,
            t.minute,
            t.second,
            self.0.subsec_millis()
        )
    }

    /// `YYYYMMDDTHHMMSSZ`, for run ids and file names.
    fn compact(&self) -> String {
        let t = self.utc();
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            t.year, t.month, t.day, t.hour, t.minute, t.second
        )
    }

    fn utc(&self) -> Utc {
        // At most LAST_MS, so always within the calendar.
        Utc::from_seconds(self.0.as_secs() as i64).expect("a timestamp is at most 9999-12-31")
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (UTC, as [`Timestamp::rfc3339`]
    /// writes it); the fraction is cut to milliseconds.
    pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
        let (main, frac) = match s.strip_suffix('Z')?.split_once('.') {
            Some((m, f)) => (m, Some(f)),
            None => (s.strip_suffix('Z')?, None),
        };
        let b = main.as_bytes();
        if b.len() != 19
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
        {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u64> {
            let t = &main[r];
            t.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| t.parse().ok())?
        };
        let narrow = |n: u64| i8::try_from(n).ok();
        let utc = Utc {
            year: i16::try_from(num(0..4)?).ok()?,
            month: narrow(num(5..7)?)?,
            day: narrow(num(8..10)?)?,
            hour: narrow(num(11..13)?)?,
            minute: narrow(num(14..16)?)?,
            second: narrow(num(17..19)?)?,
        };
        let secs = u64::try_from(utc.seconds()?).ok()?;
        let ms = match frac {
            None => 0,
            Some(f) if !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()) => {
                format!("{:0<3}", &f[..f.len().min(3)]).parse().ok()?
            }
            Some(_) => return None,
        };
        Some(Timestamp::from_millis(secs * 1000 + ms))
    }
}

impl From<SystemTime> for Timestamp {
    fn from(t: SystemTime) -> Timestamp {
        let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp::from_millis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse_rfc3339(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("{s:?} is not an RFC 3339 UTC time")))
    }
}

/// A problem reading or writing the report directory.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not a run report")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("more than 9999 runs share the start time of {newest}: no run id is left")]
    NoRunId { newest: RunId },
}

/// The report directory.
#[derive(Clone, Debug)]
pub struct Reports {
    root: Root,
    /// The directory, as an absolute path inside `root`.
    abs: String,
    dir: PathBuf,
}

/// The largest report read back: one holds every resource of a run.
pub const REPORT_LIMIT: u64 = 64 << 20;

impl Reports {
    /// The reports in `dir` (on this machine, as it is named).
    pub fn new(dir: impl Into<PathBuf>) -> Reports {
        let dir: PathBuf = dir.into();
        let abs = std::path::absolute(&dir).unwrap_or_else(|_| dir.clone());
        Reports::inside(&Root::system(), &abs.to_string_lossy())
    }

    /// The reports in the directory `abs` of `root`: every path resolved
    /// inside it, the reports read only as small regular files.
    pub fn inside(root: &Root, abs: &str) -> Reports {
        Reports {
            root: root.clone(),
            abs: abs.to_owned(),
            dir: root.path(abs),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn abs(&self, name: &str) -> String {
        format!("{}/{name}", self.abs.trim_end_matches('/'))
    }

    /// The run ids that have a report, oldest first; none when the
    /// directory does not exist yet. Other files are ignored.
    pub fn run_ids(&self) -> Result<Vec<RunId>, ReportError> {
        let names = self
            .root
            .list(&self.abs)
            .map_err(|e| self.io("list", &self.dir, e))?;
        let mut ids: Vec<RunId> = names
            .iter()
            .filter_map(|name| {
                name.to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .and_then(RunId::parse)
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// The id for a run that started at `started` (see [`RunId::next`]).
    pub fn next_run_id(&self, started: Timestamp) -> Result<RunId, ReportError> {
        let ids = self.run_ids()?;
        RunId::next(started, ids.last()).ok_or_else(|| ReportError::NoRunId {
            newest: ids.last().cloned().unwrap_or(RunId(String::new())),
        })
    }

    /// Writes `<run-id>.json` and `last.json`, then removes the reports
    /// beyond the newest [`KEEP`].
    pub fn write(&self, record: &RunRecord) -> Result<(), ReportError> {
        let dir = self
            .root
            .create_dir_all(&self.abs, 0o755)
            .map_err(|e| self.io("create", &self.dir, e))?;
        let text = record.to_json();
        let attrs = Attrs {
            mode: Some(MODE),
            ..Attrs::default()
        };
        for name in [format!("{}.json", record.run_id), LAST.to_owned()] {
            write_atomic_in(&dir, name.as_ref(), text.as_bytes(), attrs)
                .map_err(|e| self.io("write", &self.dir.join(&name), e))?;
        }
        let ids = self.run_ids()?;
        for old in &ids[..ids.len().saturating_sub(KEEP)] {
            let name = format!("{old}.json");
            self.root
                .remove_file(&self.abs(&name))
                .map_err(|e| self.io("remove", &self.dir.join(&name), e))?;
        }
        Ok(())
    }

    /// The newest run's record, if any run was reported. It is read only
    /// as a regular file (never through a link at its name), at most
    /// [`REPORT_LIMIT`] bytes.
    pub fn last(&self) -> Result<Option<RunRecord>, ReportError> {
        let path = self.dir.join(LAST);
        let bytes = match self.root.read_small(&self.abs(LAST), REPORT_LIMIT) {
            Ok(None) => return Ok(None),
            Ok(Some(b)) => b,
            Err(Refused::Io(e)) => return Err(self.io("read", &path, e)),
            Err(other) => return Err(self.io("read", &path, io::Error::other(other.to_string()))),
        };
        let text = String::from_utf8_lossy(&bytes);
        RunRecord::from_json(&text)
            .map(Some)
            .map_err(|source| ReportError::Parse { path, source })
    }

    fn io(&self, action: &'static str, path: &Path, source: io::Error) -> ReportError {
        ReportError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// A report that could not be sent. Sending is best effort: the run's
/// outcome does not depend on it.
#[derive(Debug)]
pub struct PostWarning(pub FetchError);

impl fmt::Display for PostWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the run report was not sent: {}", self.0)
    }
}

/// POSTs the record's JSON to `url`, within `opts.timeout`; a failure
/// comes back as a warning, never as an error.
pub fn post(url: &str, record: &RunRecord, opts: &FetchOptions) -> Option<PostWarning> {
    http::post_json(url, record.to_json().as_bytes(), opts)
        .err()
        .map(PostWarning)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse_rfc3339(s).unwrap()
    }

    #[test]
    fn times_are_written_in_rfc3339() {
        // Expected values from Python's datetime, an independent calendar.
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
            (LAST_MS, "9999-12-31T23:59:59.999Z"),
        ];
        for (ms, text) in cases {
            let t = Timestamp::from_millis(ms);
            assert_eq!(t.rfc3339(), text);
            assert_eq!(Timestamp::parse_rfc3339(text), Some(t));
        }
        assert_eq!(
            Timestamp::from_millis(u64::MAX).rfc3339(),
            "9999-12-31T23:59:59.999Z"
        );
        let before = UNIX_EPOCH - Duration::from_secs(1);
        assert_eq!(
            Timestamp::from(before).rfc3339(),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        for day in (0..146_097 * 2).step_by(7) {
            let t = Timestamp::from_millis(day as u64 * 86_400_000 + 45_296_789);
            assert_eq!(Timestamp::parse_rfc3339(&t.rfc3339()), Some(t));
        }
    }

    #[test]
    fn only_wellformed_utc_times_are_read() {
        assert_eq!(ts("2024-01-02T03:04:05Z"), ts("2024-01-02T03:04:05.000Z"));
        assert_eq!(
            ts("2024-01-02T03:04:05.1Z").since_epoch().subsec_millis(),
            100
        );
        assert_eq!(
            ts("2024-01-02T03:04:05.123456789Z")
                .since_epoch()
                .subsec_millis(),
            123
        );
        for bad in [
            "2024-01-02T03:04:05",
            "2024-01-02 03:04:05Z",
            "2024-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "1969-12-31T23:59:59Z",
            "2024-01-02T03:04:05.Z",
            "2024-01-02T03:04:05+01:00",
            "+024-01-02T03:04:05Z",
            "2024-01-02T03:04:05.1aZ",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn run_ids_follow_the_clock_and_always_grow() {
        let t = ts("2026-01-02T03:04:05.678Z");
        let first = RunId::next(t, None).unwrap();
        assert_eq!(first.as_str(), "20260102T030405Z-0000");
        let same_second = RunId::next(t, Some(&first)).unwrap();
        assert_eq!(same_second.as_str(), "20260102T030405Z-0001");
        let clock_back = RunId::next(ts("2025-12-31T00:00:00Z"), Some(&same_second)).unwrap();
        assert_eq!(clock_back.as_str(), "20260102T030405Z-0002");
        let later = RunId::next(ts("2026-01-02T03:04:06Z"), Some(&clock_back)).unwrap();
        assert_eq!(later.as_str(), "20260102T030406Z-0000");
        let full = RunId::parse("20260102T030405Z-9999").unwrap();
        assert_eq!(RunId::next(t, Some(&full)), None);
        for bad in [
            "20260102T030405Z-000",
            "20260102T030405Z-00001",
            "last",
            "2026010xT030405Z-0000",
        ] {
            assert_eq!(RunId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn counts_take_every_status_from_apply() {
        let mut s = Summary::default();
        for status in [
            datum_apply::Status::Changed,
            datum_apply::Status::Changed,
            datum_apply::Status::Failed,
            datum_apply::Status::Skipped,
            datum_apply::Status::Unchanged,
            datum_apply::Status::WouldChange,
        ] {
            s.count(status);
        }
        let c = Counts::from(&s);
        assert_eq!(
            c.by_status(),
            [
                ("changed", 2),
                ("failed", 1),
                ("skipped", 1),
                ("unchanged", 1),
                ("would_change", 1)
            ]
        );
    }
}
