//! The docs cannot drift: every `$ datum ...` example that shows output in
//! README.md and docs/*.md is run against the example fleets, and what it
//! prints must be exactly what the page shows.
//!
//! An example is a fenced block whose first line starts with `$ datum `;
//! each `$ ` line is a command, the lines under it until the next `$ `
//! line are its output (stdout and stderr in the order they were written,
//! as a terminal shows them); a line `...` in the output
//! stands for any number of lines, so a page may abridge. Commands run in
//! `examples/fleet` unless they name `--fleet`, which is read from the
//! repository root. An HTML comment on the line before the fence adjusts
//! that:
//!
//! - `<!-- doc-test: skip REASON -->`: not run (the reason is required:
//!   output that depends on the machine, say);
//! - `<!-- doc-test: change NAME -->`: run in a git repository whose
//!   `HEAD~1` is `examples/fleet` and whose `HEAD` lays
//!   `examples/changes/NAME/` over it (commits are made with fixed names
//!   and dates, so their ids are the same on every machine).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{copy_tree, datum_process, repo_root};

/// One command of a page, with what the page says it prints.
#[derive(Debug)]
struct Example {
    page: String,
    line: usize,
    args: Vec<String>,
    expected: String,
    setup: Setup,
}

#[derive(Clone, Debug, PartialEq)]
enum Setup {
    Examples,
    Change(String),
    Skip,
}

/// The pages whose examples are checked.
fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

fn directive(line: &str) -> Option<Setup> {
    let body = line
        .trim()
        .strip_prefix("<!-- doc-test:")?
        .strip_suffix("-->")?
        .trim();
    let (word, rest) = body.split_once(' ').unwrap_or((body, ""));
    match word {
        "skip" => {
            assert!(!rest.trim().is_empty(), "`doc-test: skip` needs a reason");
            Some(Setup::Skip)
        }
        "change" => Some(Setup::Change(rest.trim().to_owned())),
        other => panic!("unknown doc-test directive `{other}` in {line:?}"),
    }
}

/// Every example of one page.
fn examples(page: &Path) -> Vec<Example> {
    let name = page
        .strip_prefix(repo_root())
        .unwrap()
        .display()
        .to_string();
    let text = std::fs::read_to_string(page).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("```") {
            i += 1;
            continue;
        }
        let setup = (0..i)
            .rev()
            .map(|j| lines[j])
            .find(|l| !l.trim().is_empty())
            .and_then(directive)
            .unwrap_or(Setup::Examples);
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        if lines.get(start).is_some_and(|l| l.starts_with("$ datum ")) {
            out.extend(block(&name, start, &lines[start..end], &setup));
        }
        i = end + 1;
    }
    out
}

/// The commands of one block, each with the output lines under it.
fn block(page: &str, start: usize, lines: &[&str], setup: &Setup) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if let Some(command) = line.strip_prefix("$ ") {
            let args = split(command);
            assert_eq!(
                args.first().map(String::as_str),
                Some("datum"),
                "{page}:{}: only `datum` commands can be checked",
                start + k + 1
            );
            out.push(Example {
                page: page.to_owned(),
                line: start + k + 1,
                args: args[1..].to_vec(),
                expected: String::new(),
                setup: setup.clone(),
            });
        } else if let Some(last) = out.last_mut() {
            last.expected.push_str(line);
            last.expected.push('\n');
        }
    }
    out
}

/// Splits a command line on spaces, honouring single and double quotes.
fn split(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in command.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (_, c) => {
                assert!(
                    quote.is_some() || !"|;&<>$`".contains(c),
                    "`{command}`: pipes, redirections and variables cannot be checked"
                );
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Lines without trailing spaces, without trailing blank lines.
fn normalise(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// Whether `actual` is `expected`, where an `...` line of `expected`
/// stands for any number of lines.
fn matches(expected: &str, actual: &str) -> bool {
    fn go(want: &[&str], got: &[&str]) -> bool {
        match want.split_first() {
            None => got.is_empty(),
            Some((line, rest)) if line.trim() == "..." => {
                (0..=got.len()).any(|k| go(rest, &got[k..]))
            }
            Some((line, rest)) => got.first() == Some(line) && go(rest, &got[1..]),
        }
    }
    let want: Vec<&str> = expected.lines().map(str::trim_end).collect();
    let got: Vec<&str> = actual.lines().collect();
    go(&want, &got)
}

/// A git repository holding the example fleet, then a change laid over it.
fn changed_repository(dir: &Path, change: &str) -> PathBuf {
    let overlay = repo_root().join("examples/changes").join(change);
    assert!(
        overlay.is_dir(),
        "doc-test change `{change}`: {} does not exist",
        overlay.display()
    );
    let fleet = dir.join("fleet");
    copy_tree(&repo_root().join("examples/fleet"), &fleet);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&fleet)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Datum Docs")
            .env("GIT_AUTHOR_EMAIL", "docs@example.net")
            .env("GIT_COMMITTER_NAME", "Datum Docs")
            .env("GIT_COMMITTER_EMAIL", "docs@example.net")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the example fleet"]);
    copy_tree(&overlay, &fleet);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", change]);
    fleet
}

/// Runs one example; `None` when it printed what the page shows.
fn check(example: &Example) -> Option<String> {
    let tmp = tempfile::tempdir().unwrap();
    // std's Command, to give stdout and stderr one pipe: the output is
    // compared in the order it was written, as a terminal shows it.
    let mut cmd = datum_process();
    cmd.args(&example.args).env("COLUMNS", "100");
    match &example.setup {
        Setup::Skip => return None,
        Setup::Change(name) => {
            cmd.current_dir(changed_repository(tmp.path(), name));
        }
        Setup::Examples if example.args.iter().any(|a| a == "--fleet") => {
            cmd.current_dir(repo_root());
        }
        Setup::Examples => {
            cmd.current_dir(repo_root().join("examples/fleet"));
        }
    }
    let (mut reader, writer) = std::io::pipe().unwrap();
    cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
    let mut child = cmd.spawn().unwrap();
    // The parent's copies of the writer went with `cmd`: drop it so the
    // pipe ends when the child exits.
    drop(cmd);
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut bytes).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let actual = String::from_utf8_lossy(&bytes).into_owned();
    let (expected, actual) = (normalise(&example.expected), normalise(&actual));
    if code == 101 || !matches(&expected, &actual) {
        return Some(format!(
            "{}:{}: `datum {}` (exit {code}) printed:\n{actual}\n--- the page shows:\n{expected}\n",
            example.page,
            example.line,
            example.args.join(" ")
        ));
    }
    None
}

#[test]
fn every_example_in_the_docs_prints_what_it_shows() {
    let all: Vec<Example> = pages().iter().flat_map(|p| examples(p)).collect();
    assert!(
        all.iter().filter(|e| e.setup != Setup::Skip).count() >= 8,
        "the pages should hold examples: {all:?}"
    );
    let failures: Vec<String> = all.iter().filter_map(check).collect();
    assert!(
        failures.is_empty(),
        "{} of {} examples drifted:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn blocks_are_read_as_commands_and_their_output() {
    let lines = [
        "$ datum hosts role=web",
        "web-001  role=web",
        "",
        "$ datum query 'File[a b].mode' --summary",
        "0640  1 host",
    ];
    let ex = block("x.md", 10, &lines, &Setup::Examples);
    assert_eq!(ex.len(), 2);
    assert_eq!(ex[0].args, ["hosts", "role=web"]);
    assert_eq!(ex[0].line, 11);
    assert_eq!(normalise(&ex[0].expected), "web-001  role=web");
    assert_eq!(ex[1].args, ["query", "File[a b].mode", "--summary"]);
    assert_eq!(
        directive("<!-- doc-test: change web-tls -->"),
        Some(Setup::Change("web-tls".into()))
    );
    assert_eq!(directive("plain text"), None);
}

#[test]
fn an_ellipsis_stands_for_any_lines_and_nothing_else_does() {
    assert!(matches("a\n...\nd", "a\nb\nc\nd"));
    assert!(matches("a\n...\nd", "a\nd"));
    assert!(matches("a\n  ...", "a"));
    assert!(!matches("a\n...\nd", "a\nb"));
    assert!(!matches("a\nb", "a\nb\nc"));
    assert!(!matches("a\n...", "b\nc"));
}
