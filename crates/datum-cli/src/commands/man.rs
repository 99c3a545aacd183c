//! `datum man [--out DIR]`: manual pages, generated from the same argument
//! definitions as `--help`.

use std::path::PathBuf;

use std::io::Write;

use clap_mangen::Man;
use datum_fs::OutDir;
use roff::{Roff, bold, roman};

use crate::command_error::{FileError, Result};
use crate::exit::Status;
use crate::help;
use crate::settings::Settings;
use crate::ui::Ui;

/// Print datum's manual page, or write one page per command into a
/// directory.
///
/// Without --out, datum(1) goes to stdout (`datum man | man -l -`). With
/// --out DIR, DIR receives datum.1 and datum-COMMAND.1 for every command,
/// ready for a MANPATH directory's man1/.
#[derive(Debug, clap::Args)]
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

/// Every page, datum(1) first, then each command in the order `--help`
/// lists them, each followed by its subcommands'; each with its file name.
fn pages() -> Vec<(String, Page)> {
    let mut cmd = disable_help_subcommands(crate::cli_command());
    cmd.build();
    let source = format!("datum {}", cmd.get_version().unwrap_or_default());
    let mut out = Vec::new();
    collect(&cmd, "", &source, &mut out);
    out
}

fn disable_help_subcommands(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut cmd = cmd.disable_help_subcommand(true);
    for name in names {
        cmd = cmd.mut_subcommand(&name, disable_help_subcommands);
    }
    cmd
}

fn collect(cmd: &clap::Command, path: &str, source: &str, out: &mut Vec<(String, Page)>) {
    let page = Page {
        man: Man::new(cmd.clone())
            .source(source.to_owned())
            .manual("Datum Manual"),
        cmd: cmd.clone(),
        path: path.to_owned(),
    };
    out.push((page.man.get_filename(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_path = match path {
            "" => sub.get_name().to_owned(),
            _ => format!("{path} {}", sub.get_name()),
        };
        collect(sub, &sub_path, source, out);
    }
}

/// One manual page: clap_mangen's sections from the arguments, then
/// EXAMPLES, EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO from
/// [`help::PAGES`], the table `--help`'s examples come from.
struct Page {
    man: Man,
    cmd: clap::Command,
    path: String,
}

impl Page {
    fn render(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let man = &self.man;
        man.render_title(w)?;
        man.render_name_section(w)?;
        man.render_synopsis_section(w)?;
        man.render_description_section(w)?;
        man.render_options_section(w)?;
        if self.cmd.has_subcommands() {
            man.render_subcommands_section(w)?;
        }
        let extra = help::page(&self.path);
        let mut roff = Roff::new();
        if let Some(extra) = extra {
            examples(&mut roff, extra);
        }
        let mut status: Vec<(&str, &str)> = help::COMMON_STATUS.to_vec();
        status.extend(extra.map(|e| e.status).unwrap_or_default());
        status.sort_by_key(|(code, _)| code.split(',').next().and_then(|c| c.parse::<u8>().ok()));
        section(&mut roff, "EXIT STATUS", &status);
        let mut env: Vec<(String, String)> = Vec::new();
        // --fleet (DATUM_FLEET) is taken by every command, and read only by
        // those that read a fleet: the ones whose FILES hold its root.
        let reads_fleet = extra.is_some_and(|e| e.files.contains(&help::FLEET_FILE));
        let args = self.cmd.get_arguments();
        for arg in args.filter(|a| !a.is_hide_set() && (reads_fleet || !a.is_global_set())) {
            if let Some(var) = arg.get_env() {
                let what = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                let option = arg
                    .get_long()
                    .map(|l| format!("The value of --{l}. "))
                    .unwrap_or_default();
                env.push((
                    var.to_string_lossy().into_owned(),
                    format!("{option}{what}"),
                ));
            }
        }
        for (var, what) in help::COMMON_ENV
            .iter()
            .chain(extra.map(|e| e.env).unwrap_or_default())
        {
            if !env.iter().any(|(v, _)| v == var) {
                env.push((var.to_string(), what.to_string()));
            }
        }
        env.sort();
        let env: Vec<(&str, &str)> = env.iter().map(|(v, w)| (v.as_str(), w.as_str())).collect();
        section(&mut roff, "ENVIRONMENT", &env);
        if let Some(extra) = extra.filter(|e| !e.files.is_empty()) {
            section(&mut roff, "FILES", extra.files);
        }
        see_also(&mut roff, &self.path, &self.cmd, extra);
        roff.to_writer(w)?;
        if self.cmd.get_version().is_some() {
            man.render_version_section(w)?;
        }
        Ok(())
    }
}

fn examples(roff: &mut Roff, page: &help::Page) {
    roff.control("SH", ["EXAMPLES"]);
    for (what, line) in page.examples {
        roff.control("PP", []);
        roff.text([roman(format!("{what}:"))]);
        roff.control("RS", ["4"]);
        roff.control("nf", []);
        roff.text([bold(format!("$ {line}"))]);
        roff.control("fi", []);
        roff.control("RE", []);
    }
}

fn section(roff: &mut Roff, heading: &str, items: &[(&str, &str)]) {
    roff.control("SH", [heading]);
    for (term, what) in items {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(*what)]);
    }
}

/// datum(1), the parent, the subcommands, then the related commands the
/// table names.
fn see_also(roff: &mut Roff, path: &str, cmd: &clap::Command, extra: Option<&help::Page>) {
    let page_of = |p: &str| match p {
        "" => "datum".to_owned(),
        _ => format!("datum-{}", p.replace(' ', "-")),
    };
    let mut names: Vec<String> = Vec::new();
    if !path.is_empty() {
        names.push(page_of(""));
        if let Some((parent, _)) = path.rsplit_once(' ') {
            names.push(page_of(parent));
        }
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        names.push(page_of(format!("{path} {}", sub.get_name()).trim_start()));
    }
    for other in extra.map(|e| e.see_also).unwrap_or_default() {
        let name = page_of(other);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(name.as_str()));
        line.push(roman("(1)"));
    }
    roff.text(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's path at every depth, `secret encrypt` included.
    fn paths(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        out.push(path.to_owned());
        for sub in cmd.get_subcommands() {
            let sub_path = format!("{path} {}", sub.get_name());
            paths(sub, sub_path.trim_start(), out);
        }
    }

    #[test]
    fn every_command_and_subcommand_has_a_page_with_every_section() {
        let pages = pages();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        let mut all = Vec::new();
        paths(&crate::cli_command(), "", &mut all);
        assert!(all.contains(&"secret encrypt".to_owned()), "{all:?}");
        assert!(all.contains(&"rollout plan".to_owned()), "{all:?}");
        assert_eq!(names.len(), all.len(), "{names:?}");
        for path in &all {
            let name = match path.as_str() {
                "" => "datum.1".to_owned(),
                p => format!("datum-{}.1", p.replace(' ', "-")),
            };
            let (_, page) = pages
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("`{path}` has no page {name} in {names:?}"));
            let mut text = Vec::new();
            page.render(&mut text).unwrap();
            let text = String::from_utf8(text).unwrap();
            for heading in [
                "NAME",
                "SYNOPSIS",
                "DESCRIPTION",
                "EXAMPLES",
                "\"EXIT STATUS\"",
                "ENVIRONMENT",
                "\"SEE ALSO\"",
            ] {
                assert!(
                    text.contains(&format!("\n.SH {heading}\n")),
                    "{name} has no {heading}:\n{text}"
                );
            }
            // DATUM_FLEET where a fleet is read, and only there.
            let fleet_env = text.contains("\n.TP\n\\fBDATUM_FLEET\\fR\n");
            let no_fleet = ["agent", "facts", "man", "schema", "init"];
            assert_eq!(
                fleet_env,
                !no_fleet.contains(&path.split(' ').next().unwrap()),
                "{name}:\n{text}"
            );
            // The examples are the ones --help ends with, not an EXTRA copy.
            assert!(!text.contains(".SH EXTRA"), "{name}:\n{text}");
        }
    }
}
