//! Every example a command's `--help` ends with runs as written, each in
//! the setting it needs (the example fleet in git, a fleet with secrets, a
//! machine image whose agent pulls from a local remote): an example that
//! drifts from the program fails here. Every command `--help` lists, at
//! every depth, must end with examples.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Run, command_paths, datum};
use crate::diff::Git;
use crate::secret_fleet::{Fleet as SecretFleet, PLAINTEXT, ssh_keygen};

/// A command line: its words, and the files stdin comes from and stdout
/// goes to (`< FILE`, `> FILE`).
struct Line {
    words: Vec<String>,
    stdin: Option<String>,
    stdout: Option<String>,
}

/// Splits a command line on blanks, honouring single quotes; a trailing
/// `< FILE` or `> FILE` is taken apart.
fn words(line: &str) -> Line {
    let (line, stdin) = match line.split_once(" < ") {
        Some((line, file)) => (line, Some(file.trim().to_owned())),
        None => (line, None),
    };
    let (line, stdout) = match line.split_once(" > ") {
        Some((line, file)) => (line, Some(file.trim().to_owned())),
        None => (line, None),
    };
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
    Line {
        words: out,
        stdin,
        stdout,
    }
}

/// The example lines `datum PATH --help` ends with.
fn examples(path: &[String]) -> Vec<String> {
    let help = Run::from(datum().args(path).arg("--help").output().unwrap());
    assert_eq!(help.code, 0, "{path:?} --help: {}", help.stderr);
    let (_, examples) = help
        .stdout
        .split_once("\nExamples:\n")
        .unwrap_or_else(|| panic!("`datum {} --help` ends with no examples", path.join(" ")));
    examples
        .lines()
        .filter_map(|l| l.strip_prefix("  $ "))
        .map(str::to_owned)
        .collect()
}

/// Where examples run: a directory, a home (for `~/`), and the
/// environment.
struct Setting<'a> {
    dir: &'a Path,
    home: &'a Path,
    env: Vec<(&'static str, std::ffi::OsString)>,
}

impl Setting<'_> {
    fn run(&self, line: &str) -> Run {
        let Line {
            words: w,
            stdin,
            stdout,
        } = words(line);
        assert_eq!(w[0], "datum", "{line}");
        let home = format!("{}/", self.home.display());
        let expand = |a: &str| a.replacen("~/", &home, 1);
        let args: Vec<String> = w[1..].iter().map(|a| expand(a)).collect();
        let mut cmd = datum();
        cmd.args(&args)
            .current_dir(self.dir)
            .env("HOME", self.home)
            .env_remove("DATUM_FLEET")
            .env_remove("DATUM_IDENTITY");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(file) = stdin {
            cmd.write_stdin(fs::read(self.dir.join(file)).unwrap());
        }
        let run = Run::from(cmd.output().unwrap());
        match stdout {
            // What the shell would have written, and nothing on the terminal.
            Some(file) => {
                assert!(!run.stdout.is_empty(), "`{line}` printed nothing");
                fs::write(self.dir.join(expand(&file)), &run.stdout).unwrap();
                Run {
                    stdout: String::new(),
                    ..run
                }
            }
            None => run,
        }
    }
}

/// The example fleet in git: two commits, a machine image in `image/`
/// whose agent pulls the fleet from a bare copy at /srv/fleet.git inside
/// it, and a bundle signing key.
fn example_fleet() -> Git {
    let g = Git::with_example("fleet", "");
    g.write_file("roles/web/extra.txt", "x\n");
    g.commit("two");
    for dir in ["image/etc/datum", "image/var", "image/srv"] {
        fs::create_dir_all(g.fleet.join(dir)).unwrap();
    }
    let image = g.fleet.join("image");
    fs::write(image.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    fs::write(image.join("etc/group"), "root:x:0:\n").unwrap();
    fs::write(image.join("etc/datum/host"), "web-001\n").unwrap();
    fs::write(
        image.join("etc/datum/agent.yaml"),
        "git:\n  remotes: [/srv/fleet.git]\n  branch: main\ninsecure_allow_unsigned: true\n",
    )
    .unwrap();
    let clone = Command::new("git")
        .args(["clone", "-q", "--bare", "."])
        .arg(image.join("srv/fleet.git"))
        .current_dir(&g.fleet)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(clone.success());
    // Beside the fleet, untracked, as a pipeline's key would be.
    ssh_keygen(&g.fleet, "bundle-key", "");
    // A directory init is asked into that holds a file already.
    fs::create_dir_all(g.fleet.join("ops")).unwrap();
    fs::write(g.fleet.join("ops/README.md"), "ops\n").unwrap();
    g
}

#[test]
fn every_help_example_runs_as_written() {
    let g = example_fleet();
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join(".config/fish/completions")).unwrap();
    let fleet_setting = Setting {
        dir: &g.fleet,
        home: home.path(),
        env: Vec::new(),
    };
    // The secrets' fleet: the admin's key as ~/.ssh/id_ed25519, a password
    // in a file, an editor that saves what it was given.
    let s = SecretFleet::new();
    let secret_home = tempfile::tempdir().unwrap();
    fs::create_dir_all(secret_home.path().join(".ssh")).unwrap();
    fs::copy(s.key("admin"), secret_home.path().join(".ssh/id_ed25519")).unwrap();
    fs::write(s.fleet().join("db-password.txt"), PLAINTEXT).unwrap();
    let secret_setting = Setting {
        dir: &s.fleet(),
        home: secret_home.path(),
        env: vec![
            ("EDITOR", "true".into()),
            ("VISUAL", "true".into()),
            (
                "DATUM_IDENTITY",
                secret_home.path().join(".ssh/id_ed25519").into(),
            ),
        ],
    };
    let rollout = Git::with_example("rollout", "");
    // Where run reports were collected (none yet: every host is silent).
    fs::create_dir_all(rollout.fleet.join("reports")).unwrap();
    let rollout_setting = Setting {
        dir: &rollout.fleet,
        home: home.path(),
        env: Vec::new(),
    };

    let paths = command_paths();
    let mut ran = 0;
    for path in &paths {
        let lines = examples(path);
        assert!(
            (1..=4).contains(&lines.len()),
            "{path:?}: {} examples",
            lines.len()
        );
        let setting = match path.first().map(String::as_str) {
            Some("secret") => &secret_setting,
            Some("rollout") => &rollout_setting,
            _ => &fleet_setting,
        };
        for line in lines {
            let w = words(&line).words;
            assert!(
                w[1..].starts_with(path),
                "an example of `datum {}` runs it: {line}",
                path.join(" ")
            );
            let run = setting.run(&line);
            // Runs as written: never bad usage, an internal error or a
            // panic. An apply into a bare image reports failed resources
            // (no package system there): status 2, 4 or 6.
            let applies = matches!(path.first().map(String::as_str), Some("apply" | "agent"));
            let fine: &[i32] = if applies { &[0, 2, 4, 6] } else { &[0] };
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
    // Nested commands are among them.
    for nested in [
        ["secret", "encrypt"],
        ["secret", "edit"],
        ["rollout", "plan"],
    ] {
        assert!(paths.iter().any(|p| p == &nested), "{paths:?}");
    }
    assert!(ran >= 40, "{ran} examples");
    // They did what they say.
    assert!(g.fleet.join("web-001.bundle").is_file());
    assert!(
        g.fleet
            .join("image/var/lib/datum/reports/last.json")
            .is_file()
    );
    assert_eq!(s.decrypted(), PLAINTEXT);
    assert!(g.fleet.join("ops/datum.yaml").is_file());
    assert_eq!(
        fs::read_to_string(g.fleet.join("ops/README.md")).unwrap(),
        "ops\n"
    );
    let schema = fs::read_to_string(g.fleet.join("datum.schema.json")).unwrap();
    assert!(schema.starts_with('{'), "{schema}");
    let fish = home.path().join(".config/fish/completions/datum.fish");
    assert!(fs::read_to_string(fish).unwrap().contains("COMPLETE"));
}
