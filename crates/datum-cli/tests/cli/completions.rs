//! `datum completions SHELL` and `datum man`: the shell script completes
//! host names from the fleet through a real bash, and every command has a
//! manual page.

use std::path::Path;
use std::process::Command;

use crate::common::{Run, command_paths, datum, example};

/// The directory holding the `datum` binary under test, for PATH: the
/// completion script calls `datum` by name.
fn bin_dir() -> std::path::PathBuf {
    let bin = assert_cmd::cargo::cargo_bin("datum");
    bin.parent().unwrap().to_path_buf()
}

/// What bash's completion offers for `words` (the last one is being typed),
/// after loading `datum completions bash`, run in `cwd`.
fn bash_completes(cwd: &Path, words: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <(datum completions bash) || exit 9
COMP_WORDS=({words})
COMP_CWORD={cword}
COMP_TYPE=9
_clap_complete_datum datum '{current}' '{previous}'
printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        cword = words.len() - 1,
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let mut cmd = Command::new("bash");
    cmd.arg("--norc")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("DATUM_FLEET")
        .env_remove("COMPLETE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "bash: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_host_names_for_render_from_the_fleet_it_is_in() {
    let got = bash_completes(&example("fleet"), &["datum", "render", "web"], &[]);
    assert_eq!(got, ["web-001", "web-002", "web-003"]);
}

#[test]
fn bash_completes_host_names_after_host_from_datum_fleet() {
    let elsewhere = tempfile::tempdir().unwrap();
    let fleet = example("conflict");
    let got = bash_completes(
        elsewhere.path(),
        &["datum", "explain", "File[motd]", "--host", ""],
        &[("DATUM_FLEET", fleet.to_str().unwrap())],
    );
    assert_eq!(got, ["web-001", "web-002"]);
}

#[test]
fn bash_completes_commands_and_nothing_breaks_outside_a_fleet() {
    let nowhere = tempfile::tempdir().unwrap();
    let commands = bash_completes(nowhere.path(), &["datum", "co"], &[]);
    assert_eq!(commands, ["completions"]);
    // No fleet: no host names, and no error text in the candidates.
    let hosts = bash_completes(nowhere.path(), &["datum", "render", ""], &[]);
    assert!(
        hosts.iter().all(|h| h.starts_with('-')),
        "only options are offered: {hosts:?}"
    );
}

#[test]
fn every_shell_gets_a_script_that_calls_datum_back() {
    for (shell, marker) in [
        ("bash", "complete -o nospace -o bashdefault"),
        ("zsh", "compdef"),
        ("fish", "complete --keep-order --exclusive --command datum"),
        ("elvish", "set edit:completion:arg-completer[datum]"),
        (
            "powershell",
            "Register-ArgumentCompleter -Native -CommandName datum",
        ),
    ] {
        let run = Run::from(datum().args(["completions", shell]).output().unwrap());
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}:\n{}", run.stdout);
        assert!(
            run.stdout.contains("COMPLETE"),
            "{shell} calls back:\n{}",
            run.stdout
        );
    }
    let bad = Run::from(datum().args(["completions", "tcsh"]).output().unwrap());
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains("invalid value 'tcsh'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn man_prints_the_top_page_and_writes_one_per_command() {
    let top = Run::from(datum().arg("man").output().unwrap());
    assert_eq!(top.code, 0, "{}", top.stderr);
    assert!(
        top.stdout.starts_with(".ie \\n(.g .ds Aq \\(aq"),
        "{}",
        top.stdout
    );
    assert!(top.stdout.contains("\n.TH datum 1 "), "{}", top.stdout);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let run = Run::from(datum().arg("man").arg("--out").arg(&out).output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // Every command `--help` lists has its page, nested ones included
    // (datum-secret-encrypt.1).
    let paths = command_paths();
    for path in &paths {
        let page = match path.is_empty() {
            true => "datum.1".to_owned(),
            false => format!("datum-{}.1", path.join("-")),
        };
        assert!(names.contains(&page), "no page for {path:?}: {names:?}");
    }
    assert!(names.contains(&"datum-secret-encrypt.1".to_owned()));
    assert!(names.contains(&"datum-rollout-plan.1".to_owned()));
    assert_eq!(names.len(), paths.len(), "{names:?}");
    assert!(names.contains(&"datum.1".to_owned()));
    let render = std::fs::read_to_string(out.join("datum-render.1")).unwrap();
    assert!(render.contains(".TH datum-render 1"), "{render}");
    assert!(
        render.contains("Render every host, in parallel"),
        "{render}"
    );
    assert_eq!(
        run.stderr,
        format!(
            "wrote {} manual pages into {}\n",
            names.len(),
            out.display()
        )
    );
}

#[test]
fn every_manual_page_formats_cleanly_with_examples_exit_status_and_see_also() {
    if !datum_testkit::tools::installed(&["groff", "man"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = Run::from(
        datum()
            .arg("man")
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let page = entry.unwrap().path();
        // -ww: every warning groff has; -z: format, print nothing.
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
            .unwrap();
        assert!(out.status.success(), "{page:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{page:?}");
    }
    // As man shows it: the nested page, with what --help ends with.
    let out = Command::new("man")
        .arg("-l")
        .arg(dir.path().join("datum-secret-encrypt.1"))
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MAN_KEEP_FORMATTING", "")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // man may embolden with backspaces when not on a terminal: drop them.
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    for section in [
        "EXAMPLES",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "SEE ALSO",
    ] {
        assert!(
            plain.contains(&format!("\n{section}\n")),
            "{section}:\n{plain}"
        );
    }
    assert!(
        plain.contains("$ datum secret encrypt secrets/db.age < db-password.txt"),
        "{plain}"
    );
    assert!(plain.contains("\n       64     Bad  usage:"), "{plain}");
    assert!(
        plain.contains("datum(1), datum-secret(1), datum-secret-edit(1)"),
        "{plain}"
    );
    let help = Run::from(
        datum()
            .args(["secret", "encrypt", "--help"])
            .output()
            .unwrap(),
    );
    assert!(
        help.stdout
            .contains("  $ datum secret encrypt secrets/db.age < db-password.txt\n"),
        "the page's example is --help's: {}",
        help.stdout
    );
}

/// What the completion engine offers fish for `words` (the last one is
/// being typed), run in `cwd`: fish, like zsh, keeps `role=w` one word.
fn fish_completes(cwd: &Path, words: &[&str]) -> Vec<String> {
    let out = datum()
        .current_dir(cwd)
        .env("COMPLETE", "fish")
        .env_remove("DATUM_FLEET")
        .arg("--")
        .args(words)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

#[test]
fn explain_and_query_complete_the_resource_ids_and_vars_of_the_fleet() {
    let fleet = example("fleet");
    let files = [
        "File[motd]",
        "File[nginx-config]",
        "File[redis-config]",
        "File[resolv-conf]",
        "File[sysctl-tuning]",
    ];
    // After the host, and as the first word (host names come too).
    assert_eq!(
        fish_completes(&fleet, &["datum", "explain", "web-001", "F"]),
        files
    );
    assert_eq!(fish_completes(&fleet, &["datum", "explain", "F"]), files);
    assert_eq!(
        fish_completes(&fleet, &["datum", "explain", "w"]),
        ["web-001", "web-002", "web-003"]
    );
    assert_eq!(
        fish_completes(&fleet, &["datum", "query", "File[n"]),
        ["File[nginx-config]"]
    );
    // After the id and a dot, the fields of its type.
    assert_eq!(
        fish_completes(&fleet, &["datum", "query", "File[motd].mo"]),
        ["File[motd].mode"]
    );
    let fields = fish_completes(&fleet, &["datum", "query", "File[motd]."]);
    assert!(
        fields.contains(&"File[motd].content".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"File[motd].owner".to_owned()),
        "{fields:?}"
    );
    assert!(fish_completes(&fleet, &["datum", "query", "File[nosuch]."]).is_empty());
    let templates = example("templates");
    let vars = fish_completes(&templates, &["datum", "query", "vars."]);
    assert!(vars.contains(&"vars.search_domain".to_owned()), "{vars:?}");
    assert!(vars.iter().all(|v| v.starts_with("vars.")), "{vars:?}");
}

#[test]
fn selectors_complete_label_keys_then_their_values() {
    let fleet = example("fleet");
    assert_eq!(fish_completes(&fleet, &["datum", "hosts", "ro"]), ["role="]);
    assert_eq!(
        fish_completes(&fleet, &["datum", "hosts", "role=w"]),
        ["role=web"]
    );
    // Declared values, and after `!=` and a comma.
    assert_eq!(
        fish_completes(&fleet, &["datum", "hosts", "role="]),
        ["role=cache", "role=db", "role=web"]
    );
    assert_eq!(
        fish_completes(&fleet, &["datum", "hosts", "role=web,site!=l"]),
        ["role=web,site!=london"]
    );
    // Carried labels: datum/host's values are the host names.
    assert_eq!(
        fish_completes(&fleet, &["datum", "hosts", "datum/host=db"]),
        ["datum/host=db-001"]
    );
    assert_eq!(
        fish_completes(
            &fleet,
            &["datum", "query", "File[motd].mode", "--where", "env"]
        ),
        ["environment="]
    );
    // A key no host carries and datum.yaml does not declare: nothing.
    assert!(fish_completes(&fleet, &["datum", "hosts", "colour=r"]).is_empty());
}

#[test]
fn bash_completes_label_values_after_the_equals_sign_it_splits_at() {
    // Bash splits `role=w` at `=` (COMP_WORDBREAKS): the words datum gets
    // are `role`, `=`, `w`, and the candidate replaces `w` alone.
    let fleet = example("fleet");
    let got = bash_completes(&fleet, &["datum", "hosts", "role", "=", "w"], &[]);
    assert_eq!(got, ["web"]);
    let got = bash_completes(&fleet, &["datum", "hosts", "site!", "=", "l"], &[]);
    assert_eq!(got, ["london"]);
    // After a comma: the next key (`web,site=` replaces `web,si`), then its
    // values.
    let got = bash_completes(&fleet, &["datum", "hosts", "role", "=", "web,si"], &[]);
    assert_eq!(got, ["web,site="]);
    let got = bash_completes(
        &fleet,
        &["datum", "hosts", "role", "=", "web,site", "=", "f"],
        &[],
    );
    assert_eq!(got, ["frankfurt"]);
    // A key, whole, as in any shell.
    assert_eq!(
        bash_completes(&fleet, &["datum", "hosts", "ro"], &[]),
        ["role="]
    );
}

#[test]
fn bundle_and_layers_complete_host_names() {
    let fleet = example("fleet");
    assert_eq!(
        bash_completes(&fleet, &["datum", "bundle", "w"], &[]),
        ["web-001", "web-002", "web-003"]
    );
    assert_eq!(
        fish_completes(&fleet, &["datum", "layers", "--host", "w"]),
        ["web-001", "web-002", "web-003"]
    );
}

#[test]
fn a_big_fleet_offers_a_bounded_sorted_list() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path();
    std::fs::write(
        fleet.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: big\n",
    )
    .unwrap();
    let mut hosts = String::new();
    for i in 0..3000 {
        hosts.push_str(&format!(
            "---\ndatum: v1alpha1\ntype: Host\nname: h{i:05}\nlabels: {{rack: r{}}}\n",
            i % 1000
        ));
    }
    std::fs::write(fleet.join("hosts.yaml"), hosts).unwrap();
    let names = fish_completes(fleet, &["datum", "render", "h"]);
    let want: Vec<String> = (0..500).map(|i| format!("h{i:05}")).collect();
    assert_eq!(names, want);
    // Narrowed by what is typed, from anywhere in the order.
    assert_eq!(
        fish_completes(fleet, &["datum", "render", "h0299"]),
        (2990..3000).map(|i| format!("h{i:05}")).collect::<Vec<_>>()
    );
    let racks = fish_completes(fleet, &["datum", "hosts", "rack=r"]);
    assert_eq!(racks.len(), 500);
    assert!(racks.is_sorted(), "{racks:?}");
}
