//! The `datum` command: parses arguments, runs one subcommand, maps the
//! outcome to an exit status. Everything it knows about fleets comes from
//! `datum-core`; this crate only reads the environment (once, into
//! [`settings::Settings`]) and prints.
//!
//! - [`commands`]: one file per subcommand: its arguments, and a `run` that
//!   calls the core for a report value and prints it through the [`ui::Ui`].
//! - [`ui`]: stdout, stderr and colour, handed to every command.
//! - [`command_error`]: the one error a command ends with (kind, message,
//!   source, hints), and the conversions from every library error.
//! - [`exit`]: the exit statuses, each number written once.
//! - [`root`]: finding and loading the fleet.
//! - [`settings`]: the environment, read once before the command runs.
#![forbid(unsafe_code)]

/// mimalloc: the loader and resolver allocate many small values from
/// several threads, where glibc's allocator spends more time than parsing.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod command_error;
mod commands;
mod editor;
mod exit;
mod held;
mod help;
mod paint;
mod passphrase;
mod root;
mod settings;
mod ui;
#[cfg(test)]
mod version;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

use crate::commands::Command;
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::Ui;

/// Datum resolves what every host of a fleet receives, and why.
///
/// A fleet is a directory (a git repository) holding datum.yaml, Host
/// documents that give hosts their labels, and Layer documents that match
/// hosts by label and declare resources at a precedence. Datum folds the
/// matching layers of a host into one manifest, refuses ambiguity, and
/// keeps the origin of every value.
#[derive(Debug, Parser)]
#[command(name = "datum", version = env!("DATUM_VERSION"), max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Options every subcommand takes.
#[derive(Debug, clap::Args)]
struct GlobalArgs {
    /// The fleet root (the directory holding datum.yaml). By default Datum
    /// looks in the current directory and its parents.
    #[arg(long, global = true, env = "DATUM_FLEET", value_name = "DIR")]
    fleet: Option<std::path::PathBuf>,
    #[command(flatten)]
    color: colorchoice_clap::Color,
    /// Print only results and errors: no notes, warnings or progress
    /// messages on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say more on stderr: where the fleet was found, what was loaded and
    /// how long it took, every file written.
    #[arg(short, long, global = true)]
    verbose: bool,
}

impl GlobalArgs {
    fn verbosity(&self) -> ui::Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => ui::Verbosity::Quiet,
            (_, true) => ui::Verbosity::Verbose,
            _ => ui::Verbosity::Normal,
        }
    }
}

/// Whether a command line that clap refused asked for `--format json`: then
/// the refusal is also printed as JSON, as every failure is.
fn asks_for_json(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<_> = args.collect();
    args.iter().any(|a| a == "--format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json")
}

/// Clap's message without its `error: ` prefix and the usage that follows.
fn first_line(rendered: &str) -> String {
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

/// The command tree every parse, completion and manual page uses: the
/// derived one, with each command's examples after its help.
fn cli_command() -> clap::Command {
    help::attach(Cli::command())
}

/// The command line, parsed against [`cli_command`].
fn parse() -> Result<Cli, clap::Error> {
    let mut cmd = cli_command();
    let matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

fn main() -> ExitCode {
    // `COMPLETE=bash datum -- WORDS`, as the script of `datum completions`
    // runs it: print the candidates and exit.
    clap_complete::CompleteEnv::with_factory(cli_command)
        .var(commands::completions::VAR)
        .complete();
    let cli = match parse() {
        Ok(cli) => cli,
        // Help and --version print to stdout and succeed; anything else is
        // bad usage, with the status every other usage error exits with.
        Err(e) => {
            let _ = e.print();
            if !e.use_stderr() {
                return Status::OK.into();
            }
            if asks_for_json(std::env::args_os().skip(1)) {
                let mut ui = Ui::new(anstream::ColorChoice::Never);
                return ui.usage_failure(first_line(&e.render().to_string())).into();
            }
            return Status::USAGE.into();
        }
    };
    let mut ui = Ui::new(cli.global.color.as_choice()).with_verbosity(cli.global.verbosity());
    if cli.command.reports_json() {
        ui.reports_json();
    }
    let settings = Settings::new(cli.global.fleet.clone());
    let status = match commands::run(&mut ui, &settings, cli.command) {
        Ok(status) => status,
        Err(e) => ui.error(&e),
    };
    ui.finish(status).into()
}
