//! `datum man [--out DIR]`: manual pages, generated from the same argument
//! definitions as `--help`.

use std::path::PathBuf;

use clap::CommandFactory;
use clap_mangen::Man;
use datum_fs::OutDir;

use crate::Cli;
use crate::command_error::{FileError, Result};
use crate::exit::Status;
use crate::settings::Settings;
use crate::ui::Ui;

/// Print datum's manual page, or write one page per command into a
/// directory.
///
/// Without --out, datum(1) goes to stdout (`datum man | man -l -`). With
/// --out DIR, DIR receives datum.1 and datum-COMMAND.1 for every command,
/// ready for a MANPATH directory's man1/.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  # datum(1) on the terminal\n  $ datum man\n  # Every page into a directory for MANPATH\n  $ datum man --out man1"
)]
pub struct Args {
    /// Where to write the pages (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    let pages = pages();
    match args.out {
        None => {
            let (_, top) = &pages[0];
            top.render(ui.stdout())?;
            ui.flush()?;
        }
        Some(dir) => {
            let out = OutDir::create(&dir).map_err(FileError::of("create", &dir))?;
            for (name, page) in &pages {
                let path = dir.join(name);
                let mut text = Vec::new();
                page.render(&mut text)?;
                out.write(name, &text)
                    .map_err(FileError::of("write", &path))?;
                ui.detail(&format!("wrote {}", path.display()));
            }
            out.commit().map_err(FileError::of("write", &dir))?;
            ui.status(&format!(
                "wrote {} manual pages into {}",
                pages.len(),
                dir.display()
            ));
        }
    }
    Ok(Status::OK)
}

/// Every page, datum(1) first, then the commands in the order `--help`
/// lists them; each with its file name.
fn pages() -> Vec<(String, Man)> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let source = format!("datum {}", cmd.get_version().unwrap_or_default());
    let page = |c: clap::Command| {
        let man = Man::new(c).source(source.clone()).manual("Datum Manual");
        (man.get_filename(), man)
    };
    let mut out = vec![page(cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push(page(sub.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page() {
        let names: Vec<String> = pages().into_iter().map(|(n, _)| n).collect();
        let cmd = Cli::command();
        assert_eq!(names[0], "datum.1");
        for sub in cmd.get_subcommands() {
            assert!(
                names.contains(&format!("datum-{}.1", sub.get_name())),
                "{} has no page in {names:?}",
                sub.get_name()
            );
        }
        assert_eq!(names.len(), cmd.get_subcommands().count() + 1);
    }
}
