//! Every example a command's `--help` ends with runs, against the example
//! fleet, as written: an example that drifts from the program fails here.

use std::fs;
use std::path::Path;

use crate::common::{Run, datum};
use crate::diff::Git;

/// The commands whose help ends with examples.
const COMMANDS: &[&str] = &[
    "render",
    "check",
    "explain",
    "apply",
    "hosts",
    "layers",
    "facts",
    "diff",
    "query",
    "init",
    "man",
    "schema",
    "rollout plan",
    "rollout status",
    "rollout gate",
];

/// Splits a command line on blanks, honouring single quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    out.extend((!word.is_empty()).then_some(word));
    out
}

fn run_in(dir: &Path, args: &[String]) -> Run {
    let mut cmd = datum();
    cmd.args(args).current_dir(dir);
    Run::from(cmd.output().unwrap())
}

#[test]
fn every_help_example_runs_against_the_example_fleet() {
    let g = Git::with_example("fleet", "");
    // A second commit, so HEAD~1 exists, and an uncommitted change, so
    // `datum diff` has something to show.
    g.write_file("roles/web/extra.txt", "x\n");
    g.commit("two");
    // A machine image, as a chroot has it.
    for dir in ["image/etc", "image/var"] {
        fs::create_dir_all(g.fleet.join(dir)).unwrap();
    }
    fs::write(
        g.fleet.join("image/etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\n",
    )
    .unwrap();
    fs::write(g.fleet.join("image/etc/group"), "root:x:0:\n").unwrap();
    // Where run reports were collected (none yet: every host is silent).
    fs::create_dir_all(g.fleet.join("reports")).unwrap();
    let mut ran = 0;
    for cmd in COMMANDS {
        let mut args: Vec<String> = cmd.split(' ').map(String::from).collect();
        args.push("--help".into());
        let help = run_in(&g.fleet, &args);
        assert_eq!(help.code, 0, "{cmd} --help: {}", help.stderr);
        let (_, examples) = help
            .stdout
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`datum {cmd} --help` ends with no examples"));
        let lines: Vec<&str> = examples
            .lines()
            .filter_map(|l| l.strip_prefix("  $ "))
            .collect();
        assert!(
            (1..=4).contains(&lines.len()),
            "{cmd}: {} examples",
            lines.len()
        );
        for line in lines {
            let w = words(line);
            assert_eq!(w[0], "datum", "{line}");
            let named: Vec<&str> = cmd.split(' ').collect();
            assert!(
                w.len() > named.len() && w[1..=named.len()] == named[..],
                "an example of {cmd} runs {cmd}: {line}"
            );
            let run = run_in(&g.fleet, &w[1..]);
            // Runs as written: never bad usage, an internal error or a
            // panic. An apply into a bare image may report failed
            // resources (no package system there): status 4 or 6.
            let fine: &[i32] = if *cmd == "apply" { &[0, 2, 4, 6] } else { &[0] };
            assert!(
                fine.contains(&run.code),
                "`{line}` exited {}:\n{}{}",
                run.code,
                run.stdout,
                run.stderr
            );
            ran += 1;
        }
    }
    assert!(ran >= 25, "{ran} examples");
}
