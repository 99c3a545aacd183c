//! `datum agent`: the pull agent. Each run fetches this host's
//! configuration (git or a bundle), verifies it, refuses to go back,
//! applies it and reports; without --once it runs on a schedule.

use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use datum_agent::config;
use datum_agent::cycle::{Agent, REPORTS, RunOptions, RunOutcome};
use datum_agent::report::{Reports, Timestamp};
use datum_apply::root::{Root, host_name};

use crate::command_error::{CommandError, Result};
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::Ui;

/// Converge this host on its own: fetch its configuration from git or as a
/// bundle, verify it, apply it, and report, on a schedule.
///
/// The configuration is /etc/datum/agent.yaml (see docs/agent.md). Every
/// run writes a report under /var/lib/datum/reports and the Prometheus
/// file, even when it applies nothing.
///
/// With --once, one run, exiting with apply's status: 0 nothing changed, 2
/// changes made (or pending, with --noop), 4 failures, 6 changes and
/// failures, 1 the input was refused (the last verified input is applied
/// again all the same), or could not be fetched with nothing verified to
/// fall back to. A new input whose health checks fail is taken back in the
/// same run (6), and refused until a newer one arrives; one waiting for
/// its rollout wave is reported as pending. Without --once, the agent runs
/// every interval at this host's own slot, and sooner after a failed
/// fetch.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run once and exit with the run's status.
    #[arg(long)]
    once: bool,
    /// The configuration file (default: /etc/datum/agent.yaml, under --root).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Treat DIR as /, as `datum apply --root` does: the configuration, the
    /// keys, the agent's repository and state, the reports, the metrics
    /// file, and local remotes and bundle paths are all taken inside it.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The host to run as. By default the content of /etc/datum/host
    /// (under --root), else the system hostname.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Examine and report what would change, changing nothing (an Exec's
    /// unless and onlyif guards run, its command never does).
    #[arg(long)]
    noop: bool,
    /// Apply an input even though it is older than the one applied last
    /// (or not a descendant of it), and record it as the new last one.
    #[arg(long)]
    allow_rollback: bool,
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    let machine = match &args.root {
        Some(dir) => Root::at(super::apply::root_dir(dir)?),
        None => Root::system(),
    };
    let config = match &args.config {
        Some(p) => config::read(p),
        None => config::read_inside(&machine, config::DEFAULT_PATH),
    };
    let config = config.map_err(|e| {
        if let Some((files, diags)) = e.diagnostics() {
            ui.diagnostics(files, diags);
        }
        CommandError::from(e)
    })?;
    let identity = host_name(args.host.as_deref(), &machine)?;
    let agent = Agent {
        config,
        root: machine,
        host: identity.name,
        options: RunOptions {
            noop: args.noop,
            allow_rollback: args.allow_rollback,
            quiet: ui.is_quiet(),
        },
    };
    if args.once {
        let outcome = agent.run_once(ui.stdout());
        return Ok(show(ui, &outcome));
    }
    run_loop(ui, &agent, args.allow_rollback)
}

/// Prints the run's end and gives its status.
fn show(ui: &mut Ui, outcome: &RunOutcome) -> Status {
    for w in &outcome.warnings {
        ui.warning(w);
    }
    if !ui.is_quiet() {
        let _ = writeln!(ui.stdout(), "report: {}", outcome.report.display());
    }
    let _ = ui.flush();
    if let Some(r) = &outcome.refusal {
        ui.error(&CommandError::from(r.clone()));
    }
    outcome.status.into()
}

/// Runs at this host's slot every interval, forever. The first run comes
/// at once when the last one is older than an interval (or there is none),
/// so a new host converges without waiting and a restarted one keeps its
/// slot.
fn run_loop(ui: &mut Ui, agent: &Agent, allow_rollback: bool) -> Result<Status> {
    let schedule = agent.config.schedule;
    let mut agent_options = agent.options;
    let mut failures: u32 = 0;
    let last = Reports::inside(&agent.root, REPORTS)
        .last()
        .ok()
        .flatten()
        .map(|r| r.finished.since_epoch());
    let now = since_epoch(SystemTime::now());
    let due = last.is_none_or(|t| now.saturating_sub(t) >= schedule.interval());
    let mut next = if due {
        SystemTime::now()
    } else {
        schedule.next_run(&agent.host, SystemTime::now(), 0, random())
    };
    loop {
        wait_until(ui, next);
        let run = Agent {
            config: agent.config.clone(),
            root: agent.root.clone(),
            host: agent.host.clone(),
            options: agent_options,
        };
        let outcome = run.run_once(ui.stdout());
        show(ui, &outcome);
        // --allow-rollback is for the run it was given to, not for ever.
        if allow_rollback && outcome.refusal.is_none() {
            agent_options.allow_rollback = false;
        }
        failures = if outcome.fetch_failed {
            failures.saturating_add(1)
        } else {
            0
        };
        next = schedule.next_run(&agent.host, SystemTime::now(), failures, random());
    }
}

fn wait_until(ui: &mut Ui, at: SystemTime) {
    let Ok(wait) = at.duration_since(SystemTime::now()) else {
        return;
    };
    if wait >= Duration::from_secs(1) {
        let _ = writeln!(ui.stdout(), "next run at {}", Timestamp::from(at).rfc3339());
        let _ = ui.flush();
    }
    std::thread::sleep(wait);
}

fn since_epoch(t: SystemTime) -> Duration {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default()
}

/// A random number for the jitter: std's per-process random hash keys.
fn random() -> u64 {
    RandomState::new().hash_one(SystemTime::now())
}
