//! What a command's `--help` and its manual page say beyond its arguments:
//! examples, exit statuses, environment, files and related commands, each
//! written once under the command's path (`""` for datum itself, `"secret
//! encrypt"` for a nested one). `--help` ends with the examples (attached
//! by [`attach`] to the command tree every parse uses) and `datum man`
//! renders all of it, so the two never disagree; the tests run every
//! example and fail on a command without one.

mod pages;

pub use pages::{FLEET_FILE, PAGES};

/// One command's extra text.
pub struct Page {
    /// The command's words after `datum`, blank-separated.
    pub path: &'static str,
    /// What an example does, and its command line as typed (`< FILE` at the
    /// end feeds FILE to stdin, `> FILE` writes stdout to FILE; `~/` is the
    /// home directory, as a shell expands it).
    pub examples: &'static [(&'static str, &'static str)],
    /// Statuses beyond the ones every command exits with ([`COMMON_STATUS`]).
    pub status: &'static [(&'static str, &'static str)],
    /// Environment variables read beyond those of the arguments (`env = ..`).
    pub env: &'static [(&'static str, &'static str)],
    /// Files read or written.
    pub files: &'static [(&'static str, &'static str)],
    /// Related commands' paths, beyond datum itself, the parent and the
    /// subcommands.
    pub see_also: &'static [&'static str],
}

/// The statuses of every command (src/exit.rs; docs/commands.md).
pub const COMMON_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    (
        "1",
        "The fleet is invalid, a host does not resolve, or what was asked for does not exist.",
    ),
    (
        "64",
        "Bad usage: an argument error, an option the form used does not take, no fleet found, an unknown revision.",
    ),
    (
        "70",
        "An internal error: a bug in Datum, never a problem of the fleet, the machine or the command line.",
    ),
];

/// The environment of every command (beyond `--fleet`'s DATUM_FLEET, which
/// the arguments list).
pub const COMMON_ENV: &[(&str, &str)] = &[(
    "NO_COLOR",
    "When set, --color auto colours nothing; --color always still colours.",
)];

/// The page of the command at `path`, if it has one.
pub fn page(path: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.path == path)
}

/// The examples as `--help` ends with them: a `# what` line above each
/// `$ command`.
pub fn examples_text(page: &Page) -> String {
    let mut text = String::from("Examples:");
    for (what, line) in page.examples {
        text.push_str(&format!("\n  # {what}\n  $ {line}"));
    }
    text
}

/// `cmd` with every (sub)command's examples after its help. Every parse
/// goes through it (main.rs), so `--help` shows them.
pub fn attach(cmd: clap::Command) -> clap::Command {
    attach_at(cmd, "")
}

fn attach_at(mut cmd: clap::Command, path: &str) -> clap::Command {
    if let Some(page) = page(path) {
        cmd = cmd.after_help(examples_text(page));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |sub| attach_at(sub, &sub_path));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's path, at every depth.
    fn paths(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        out.push(path.to_owned());
        for sub in cmd.get_subcommands() {
            paths(sub, format!("{path} {}", sub.get_name()).trim_start(), out);
        }
    }

    /// A command line's words as a shell splits them (single quotes), less
    /// a trailing `< FILE` or `> FILE`.
    fn words(line: &str) -> Vec<String> {
        let line = line.split_once(" < ").map_or(line, |(l, _)| l);
        let line = line.split_once(" > ").map_or(line, |(l, _)| l);
        let mut out = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => out.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
                c => word.push(c),
            }
        }
        out.extend((!word.is_empty()).then_some(word));
        out
    }

    /// The path of the (sub)command a parse ended in.
    fn matched(matches: &clap::ArgMatches) -> String {
        let mut path = Vec::new();
        let mut m = matches;
        while let Some((name, sub)) = m.subcommand() {
            path.push(name.to_owned());
            m = sub;
        }
        path.join(" ")
    }

    #[test]
    fn every_command_at_every_depth_has_two_to_four_examples_or_one() {
        let mut all = Vec::new();
        paths(&crate::cli_command(), "", &mut all);
        for path in &all {
            let page =
                page(path).unwrap_or_else(|| panic!("`datum {path}` has no page in help.rs"));
            assert!(
                (1..=4).contains(&page.examples.len()),
                "`datum {path}`: {} examples",
                page.examples.len()
            );
        }
        for page in PAGES {
            assert!(
                all.iter().any(|p| p == page.path),
                "no command `{}`",
                page.path
            );
            for other in page.see_also {
                assert!(
                    all.iter().any(|p| p == other),
                    "{}: no command `{other}`",
                    page.path
                );
            }
        }
    }

    #[test]
    fn every_example_parses_as_the_command_it_is_an_example_of() {
        for page in PAGES {
            for (_, line) in page.examples {
                let words = words(line);
                let matches = crate::cli_command()
                    .try_get_matches_from(&words)
                    .unwrap_or_else(|e| panic!("`{line}` does not parse:\n{e}"));
                let path = matched(&matches);
                assert!(
                    page.path.is_empty()
                        || path == page.path
                        || path.starts_with(&format!("{} ", page.path)),
                    "`{line}` runs `{path}`, not `{}`",
                    page.path
                );
            }
        }
    }

    #[test]
    fn help_ends_with_the_examples() {
        let mut cmd = attach(crate::cli_command());
        let help = cmd
            .find_subcommand_mut("secret")
            .unwrap()
            .find_subcommand_mut("encrypt")
            .unwrap()
            .render_help()
            .to_string();
        assert!(
            help.ends_with(
                "Examples:\n  # Encrypt a password from a file\n  $ datum secret encrypt secrets/db.age < db-password.txt\n"
            ),
            "{help}"
        );
    }
}
