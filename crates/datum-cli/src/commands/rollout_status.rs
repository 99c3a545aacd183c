//! `datum rollout status` and `datum rollout gate`: the rollout of one
//! revision (HEAD, or --rev), wave by wave, from a directory of run reports
//! collected from the hosts (read as `check --reports` reads them).

use std::path::PathBuf;

use datum_agent::report::Timestamp;
use datum_agent::reported::{read_reports, rollout_view};
use datum_core::diagnostic::Diagnostic;
use datum_core::fleet::Fleet;
use datum_core::rollout;
use datum_core::rollout::status::{Collector, Status as RolloutStatus};
use datum_core::{loader, present};
use datum_git::{GitError, Repo};

use super::ReportFormat;
use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::{Format, Ui};

/// Where each wave's hosts stand with a revision, from their run reports.
///
/// For each wave of the rollout declared at the revision, its hosts
/// updated (their newest report applied the revision), pending (holding it
/// until their wave's time), failed (their newest run of it failed), rolled
/// back (their health checks failed and they put the previous input back),
/// silent (no report in --silent-after), and behind (on another revision).
/// Failed, rolled back and silent hosts are listed by name. Exit status: 0,
/// or 1 when the fleet at the revision has errors.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    common: Common,
    /// The output format: aligned text, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

/// Fail when a wave's failed and rolled-back hosts are too many.
///
/// Counts, in every wave (or the one --wave names), the hosts whose run of
/// the revision failed or rolled back, as `rollout status` does. Exit
/// status: 1 when in some wave they are more than --max-failed of its
/// hosts (each such wave is printed with those hosts), or when the fleet at
/// the revision has errors; 0 otherwise. Silent hosts count only with
/// --max-silent; otherwise they are noted.
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    #[command(flatten)]
    common: Common,
    /// The largest share of a wave's hosts that may fail or roll back:
    /// `0%`, `10%`, `2.5%`.
    #[arg(long, value_name = "PERCENT", value_parser = max_failed)]
    max_failed: u32,
    /// Also fail a wave whose silent hosts are more than this share of
    /// its hosts: a change that cuts hosts off the network leaves them
    /// silent rather than failed. Off by default, since hosts that are
    /// down for other reasons are silent too.
    #[arg(long, value_name = "PERCENT", value_parser = max_failed)]
    max_silent: Option<u32>,
    /// Judge only this wave.
    #[arg(long, value_name = "NAME")]
    wave: Option<String>,
    /// The output format: lines of text, or one JSON document.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

/// What status and gate share.
#[derive(Debug, clap::Args)]
struct Common {
    /// A directory of run reports collected from hosts (POSTed to
    /// report_url, or copied from /var/lib/datum/reports), searched a few
    /// levels deep; any layout, since each report names its host.
    #[arg(long, value_name = "DIR")]
    reports: PathBuf,
    /// The revision being rolled out: its commit is what hosts are
    /// compared with, and its datum.yaml and hosts give the waves.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    rev: String,
    /// A host whose newest report is older than this is silent: `30m`,
    /// `2h`, `1d`. Choose more than the agents' interval and splay.
    #[arg(long, value_name = "DURATION", default_value = "2h", value_parser = silent_after)]
    silent_after: u64,
    /// Take the status as of this time (RFC 3339 UTC,
    /// `2026-12-06T10:00:00Z`) instead of now: later reports are left out.
    #[arg(long, value_name = "TIME", value_parser = as_of)]
    at: Option<Timestamp>,
}

fn silent_after(text: &str) -> std::result::Result<u64, String> {
    match datum_agent::config::parse_duration(text) {
        Some(d) if d.as_secs() > 0 => Ok(d.as_secs()),
        _ => Err(format!(
            "`{text}` is not a duration: write a number and a unit, or several: `30m`, `2h`, `1d12h`"
        )),
    }
}

fn max_failed(text: &str) -> std::result::Result<u32, String> {
    let number = text.strip_suffix('%').unwrap_or(text);
    match datum_core::document::rollout::parse_percent(number) {
        Some(p) if p <= 10_000 => Ok(p),
        _ => Err(format!(
            "`{text}` is not a percentage from 0% to 100%: write `10%`, `0%` or `2.5%`"
        )),
    }
}

fn as_of(text: &str) -> std::result::Result<Timestamp, String> {
    Timestamp::parse_rfc3339(text).ok_or_else(|| {
        format!("`{text}` is not a UTC time in RFC 3339: write `2026-12-06T10:00:00Z`")
    })
}

/// A rollout's status, with what is needed to show it.
struct Taken {
    fleet: Fleet,
    status: RolloutStatus,
    revision: String,
    as_of: String,
    /// The fleet's load errors and the rollout's, then unreadable reports.
    diagnostics: Vec<Diagnostic>,
    errors: bool,
}

fn take(ui: &mut Ui, settings: &Settings, args: &Common) -> Result<Taken> {
    if !args.reports.is_dir() {
        return Err(CommandError::usage(format!(
            "--reports {} is not a directory",
            args.reports.display()
        ))
        .hint("name the directory the hosts' run reports were collected in"));
    }
    let dir = root::locate(ui, settings)?;
    let repo = match Repo::discover(&dir) {
        Err(GitError::NotARepository { path }) => {
            return Err(CommandError::usage(format!(
                "not inside a git repository: {}",
                path.display()
            ))
            .hint("the hosts' reports name the commit they run: run this in the fleet's git work tree (a CI checkout of it)"));
        }
        other => other?,
    };
    let revision = repo.resolve(&args.rev)?;
    let fleet = loader::load(&repo.reader(&revision)?)?;
    let plan = rollout::plan(&fleet);
    let mut diagnostics: Vec<Diagnostic> = fleet
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    diagnostics.extend(plan.problems.iter().cloned());
    let errors = !diagnostics.is_empty();
    let as_of = args
        .at
        .unwrap_or_else(|| Timestamp::from(std::time::SystemTime::now()));
    let ms = u64::try_from(as_of.since_epoch().as_millis()).unwrap_or(u64::MAX);
    let mut collector = Collector::new(revision.id(), ms, args.at.is_some());
    let unread = read_reports(&args.reports, |_, record| {
        collector.add(rollout_view(&record))
    })
    .map_err(|e| CommandError::failed(e.to_string()).with_source(e))?;
    diagnostics.extend(unread);
    let status = collector.status(&fleet, &plan, args.silent_after);
    Ok(Taken {
        fleet,
        status,
        revision: revision.describe(),
        as_of: as_of.rfc3339(),
        diagnostics,
        errors,
    })
}

pub fn status(ui: &mut Ui, settings: &Settings, args: StatusArgs) -> Result<Status> {
    let t = take(ui, settings, &args.common)?;
    match args.format {
        ReportFormat::Text => {
            ui.diagnostics(&t.fleet.files, &t.diagnostics);
            let mut out = ui.styled_stdout();
            present::rollout::status(&mut out, &t.fleet, &t.status, &t.revision, &t.as_of)?;
            out.flush()?;
        }
        ReportFormat::Json => {
            let tree = t
                .status
                .tree(&t.fleet, &t.revision, &t.as_of, &t.diagnostics);
            ui.write_tree(&tree, Format::Json)?
        }
    }
    ui.flush()?;
    Ok(if t.errors { Status::FAILED } else { Status::OK })
}

pub fn gate(ui: &mut Ui, settings: &Settings, args: GateArgs) -> Result<Status> {
    let t = take(ui, settings, &args.common)?;
    if let Some(name) = &args.wave
        && !t.status.waves.iter().any(|w| &w.name == name)
    {
        let names: Vec<&str> = t.status.waves.iter().map(|w| w.name.as_str()).collect();
        return Err(CommandError::usage(format!(
            "the rollout at {} has no wave `{name}`",
            t.revision
        ))
        .hint(format!("its waves are {}", names.join(", "))));
    }
    let verdict = t
        .status
        .gate(args.max_failed, args.max_silent, args.wave.as_deref());
    match args.format {
        ReportFormat::Text => {
            ui.diagnostics(&t.fleet.files, &t.diagnostics);
            let mut out = ui.styled_stdout();
            present::rollout::gate(&mut out, &t.fleet, &verdict, &t.revision)?;
            out.flush()?;
        }
        ReportFormat::Json => {
            let tree = verdict.tree(&t.fleet, &t.revision, &t.as_of, &t.diagnostics);
            ui.write_tree(&tree, Format::Json)?
        }
    }
    ui.flush()?;
    Ok(if t.errors || !verdict.tripped.is_empty() {
        Status::FAILED
    } else {
        Status::OK
    })
}
