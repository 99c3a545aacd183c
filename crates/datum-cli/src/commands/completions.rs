//! `datum completions SHELL`: the script that makes a shell complete
//! `datum`, host names included.
//!
//! The script calls `datum` back as the operator types (clap_complete's
//! dynamic engine, through `COMPLETE=SHELL datum -- WORDS`), so host names
//! come from the fleet the shell is in, and the script never goes stale
//! against the binary's options.

use std::ffi::OsStr;

use clap::ValueEnum;
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};

use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

/// The environment variable that turns a run of `datum` into a completion
/// request (clap_complete's convention, shared with jj and others).
pub const VAR: &str = "COMPLETE";

/// Print the shell script that completes datum's commands, options and the
/// fleet's host names.
///
/// Load it from your shell's startup file, so it always matches the datum
/// on PATH:
///
///   bash:       source <(datum completions bash)     (in ~/.bashrc)
///   zsh:        source <(datum completions zsh)      (in ~/.zshrc)
///   fish:       datum completions fish | source      (in config.fish)
///   elvish:     eval (datum completions elvish | slurp)
///   powershell: datum completions powershell | Out-String | Invoke-Expression
///
/// Host names (`render HOST`, `--host`) are read from the fleet of the
/// directory being typed in (or DATUM_FLEET) when Tab is pressed.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

impl Shell {
    fn completer(self) -> &'static dyn EnvCompleter {
        match self {
            Shell::Bash => &Bash,
            Shell::Zsh => &Zsh,
            Shell::Fish => &Fish,
            Shell::Elvish => &Elvish,
            Shell::Powershell => &Powershell,
        }
    }
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    // The script runs `datum` from PATH, not this file's path: a packaged
    // script then keeps working after an upgrade moves the binary.
    args.shell
        .completer()
        .write_registration(VAR, "datum", "datum", "datum", ui.stdout())?;
    ui.flush()?;
    Ok(Status::OK)
}

/// The fleet's host names starting with what is typed, each with its
/// labels as the description (shells that show one, such as zsh and fish).
/// Nothing when there is no fleet here or it does not load: a completion
/// has nowhere to report an error.
pub fn host_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(prefix) = current.to_str() else {
        return Vec::new();
    };
    let Ok((fleet, _)) = root::load(&Settings::completing()) else {
        return Vec::new();
    };
    let mut names: Vec<CompletionCandidate> = fleet
        .hosts
        .iter()
        .enumerate()
        .filter(|(_, h)| h.name.starts_with(prefix))
        .map(|(i, h)| {
            let labels: Vec<String> = fleet
                .labels_of(datum_core::fleet::HostId(i as u32))
                .into_iter()
                .filter(|(k, _)| *k != datum_core::document::HOST_LABEL)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            CompletionCandidate::new(h.name.as_ref()).help(Some(labels.join(" ").into()))
        })
        .collect();
    names.sort_by(|a, b| a.get_value().cmp(b.get_value()));
    names
}
