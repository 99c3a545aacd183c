//! Colour, `-q`, `-v` and `--version`: colour only with `--color always`
//! or a terminal (never under NO_COLOR or in a pipe), and painting never
//! changes the text; `-q` and `-v` on every command.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Run, copy_tree, datum, example, repo_root};

const ESC: char = '\x1b';

fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == ESC {
            // CSI: ESC [ parameters final-letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs datum in `cwd` with `args`; `env` is set, NO_COLOR removed unless
/// given.
fn run(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = datum();
    cmd.current_dir(cwd).args(args).env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = Run::from(cmd.output().unwrap());
    assert_ne!(run.code, 101, "{}", run.stderr);
    run
}

/// `git` in `dir` with fixed names and dates.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The example fleet in a repository, with the web mode raised in the
/// work tree.
fn changed_fleet(dir: &Path) -> std::path::PathBuf {
    let fleet = dir.join("fleet");
    copy_tree(&example("fleet"), &fleet);
    git(&fleet, &["init", "-q", "-b", "main"]);
    git(&fleet, &["add", "-A"]);
    git(&fleet, &["commit", "-q", "-m", "fleet"]);
    let layer = fleet.join("roles/web/layer.yaml");
    let text = fs::read_to_string(&layer).unwrap();
    fs::write(&layer, text.replace("mode: \"0640\"", "mode: \"0644\"")).unwrap();
    fleet
}

#[test]
fn diff_is_red_and_green_with_color_always_and_the_same_text_without() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = changed_fleet(tmp.path());
    let plain = run(&fleet, &["diff"], &[]);
    let coloured = run(&fleet, &["diff", "--color", "always"], &[]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(!plain.stdout.contains(ESC), "piped output has no colour");
    assert!(
        coloured
            .stdout
            .contains("\x1b[31m0640\x1b[0m → \x1b[32m0644\x1b[0m"),
        "{}",
        coloured.stdout
    );
    assert_eq!(strip(&coloured.stdout), plain.stdout);
    // NO_COLOR wins over a terminal's auto, not over an explicit flag.
    let no_color = run(&fleet, &["diff", "--color", "auto"], &[("NO_COLOR", "1")]);
    assert!(!no_color.stdout.contains(ESC));
    let forced = run(&fleet, &["diff", "--color", "always"], &[("NO_COLOR", "1")]);
    assert_eq!(forced.stdout, coloured.stdout);
}

#[test]
fn explain_shows_the_winner_green_and_the_displaced_red() {
    let fleet = example("fleet");
    let args = ["explain", "File[nginx-config]", "--host", "web-001"];
    let plain = run(&fleet, &args, &[]);
    let coloured = run(&fleet, &[&args[..], &["--color", "always"]].concat(), &[]);
    assert!(!plain.stdout.contains(ESC));
    assert_eq!(strip(&coloured.stdout), plain.stdout);
    assert!(
        coloured.stdout.contains(
            "mode    \x1b[1m\x1b[32m0600\x1b[0m                   \x1b[1m\x1b[32mhosts/web-001\x1b[0m  \x1b[31moverrides 0640 from roles/web\x1b[0m"
        ),
        "{}",
        coloured.stdout
    );
}

#[test]
fn check_colours_headings_hosts_and_counts_only_when_asked() {
    let fleet = example("conflict");
    let plain = run(&fleet, &["check"], &[("NO_COLOR", "1")]);
    let coloured = run(&fleet, &["check", "--color", "always"], &[]);
    assert!(!plain.stdout.contains(ESC) && !plain.stderr.contains(ESC));
    assert_eq!(strip(&coloured.stderr), plain.stderr);
    assert_eq!(strip(&coloured.stdout), plain.stdout);
    assert!(
        coloured
            .stderr
            .contains("\x1b[1;31merror\x1b[0m: conflicting")
    );
    assert!(
        coloured
            .stderr
            .contains("match host \x1b[1mweb-001\x1b[0m at equal")
    );
    assert!(coloured.stdout.contains("\x1b[1m\x1b[31m1 error\x1b[0m"));
}

#[test]
fn apply_plans_in_red_and_green() {
    let tmp = tempfile::tempdir().unwrap();
    let (fleet, root) = (tmp.path().join("fleet"), tmp.path().join("root"));
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::create_dir_all(&fleet).unwrap();
    fs::write(
        fleet.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: t\n",
    )
    .unwrap();
    fs::write(
        fleet.join("h.yaml"),
        "datum: v1alpha1\ntype: Host\nname: h\n",
    )
    .unwrap();
    fs::write(
        fleet.join("base.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: b\nprecedence: 0\nmatch: {}\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: |\n      new\n",
    )
    .unwrap();
    fs::write(root.join("etc/motd"), "old\n").unwrap();
    let args = [
        "apply",
        "--host",
        "h",
        "--noop",
        "--root",
        root.to_str().unwrap(),
    ];
    let plain = run(&fleet, &args, &[]);
    let coloured = run(&fleet, &[&args[..], &["--color", "always"]].concat(), &[]);
    assert!(!plain.stdout.contains(ESC), "{}", plain.stdout);
    assert_eq!(strip(&coloured.stdout), plain.stdout);
    assert!(
        coloured
            .stdout
            .contains("    \x1b[31m-old\x1b[0m\n    \x1b[32m+new\x1b[0m\n"),
        "{}",
        coloured.stdout
    );
}

#[test]
fn quiet_and_verbose_are_taken_by_every_command() {
    let help = run(&repo_root(), &["--help"], &[]);
    let commands: Vec<String> = help
        .stdout
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 10, "{commands:?}");
    for command in &commands {
        let sub = run(&repo_root(), &[command, "--help"], &[]);
        assert!(
            sub.stdout.contains("-q, --quiet"),
            "{command}:\n{}",
            sub.stdout
        );
        assert!(
            sub.stdout.contains("-v, --verbose"),
            "{command}:\n{}",
            sub.stdout
        );
    }
    let both = run(&repo_root(), &["check", "-q", "-v"], &[]);
    assert_ne!(both.code, 0);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}

#[test]
fn quiet_silences_messages_and_verbose_says_what_was_loaded() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = run(tmp.path(), &["init", "-q", "a"], &[]);
    assert_eq!(
        (quiet.code, quiet.stdout.as_str(), quiet.stderr.as_str()),
        (0, "", "")
    );
    let normal = run(tmp.path(), &["init", "b"], &[]);
    assert!(normal.stderr.starts_with("created a fleet in b"));
    // Errors are never silenced.
    let refused = run(tmp.path(), &["init", "-q", "a"], &[]);
    assert_eq!(refused.code, 1);
    assert!(refused.stderr.starts_with("error: a is not empty"));

    let verbose = run(&example("fleet"), &["check", "-v"], &[]);
    assert_eq!(verbose.code, 0);
    let lines: Vec<&str> = verbose.stderr.lines().collect();
    let root = example("fleet").canonicalize().unwrap();
    assert_eq!(lines[0], format!("info: fleet root: {}", root.display()));
    assert!(
        lines[1].starts_with("info: loaded 12 document files: 5 hosts, 9 layers, 0 errors in "),
        "{}",
        verbose.stderr
    );
    assert_eq!(
        verbose.stdout,
        run(&example("fleet"), &["check"], &[]).stdout
    );
    let plain = run(&example("fleet"), &["check"], &[]);
    assert_eq!(plain.stderr, "");
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let run = run(&repo_root(), &["--version"], &[]);
    assert_eq!(run.code, 0);
    let version = env!("CARGO_PKG_VERSION");
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_owned());
    match head {
        // Built in a checkout: `datum 0.1.0 (3f2a9c1d4e5b 2026-05-01)`.
        Some(id) => {
            let prefix = format!("datum {version} ({id} ");
            assert!(
                run.stdout.starts_with(&prefix),
                "{} vs {prefix}",
                run.stdout
            );
            let date = run.stdout[prefix.len()..].trim_end().trim_end_matches(')');
            assert_eq!(date.len(), 10, "{}", run.stdout);
        }
        None => assert_eq!(run.stdout, format!("datum {version}\n")),
    }
}
