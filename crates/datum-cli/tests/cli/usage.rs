//! Bad usage exits 64 (EX_USAGE) in every command and for every kind of
//! argument error, never 2, which `apply` exits with for "changes made".
//! Help and version still succeed.

use crate::common::{Run, datum, example};

/// Runs `datum ARGS` in `dir`, with no fleet in the environment.
fn run_at(dir: &std::path::Path, args: &[&str]) -> Run {
    let run = Run::from(datum().current_dir(dir).args(args).output().unwrap());
    assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
    run
}

/// Asserts that `datum ARGS` (run from inside the example fleet) is a usage
/// error whose first stderr line starts with `error`, containing `says`.
#[track_caller]
fn usage(args: &[&str], says: &str) {
    let run = run_at(&example("fleet"), args);
    assert_eq!(run.code, 64, "datum {args:?}:\n{}", run.stderr);
    assert_eq!(run.stdout, "", "datum {args:?}");
    assert!(
        run.stderr.contains(says),
        "datum {args:?} should say {says:?}:\n{}",
        run.stderr
    );
}

#[test]
fn clap_errors_of_every_kind_exit_64_in_every_command() {
    let every = [
        &["render", "web-001"][..],
        &["check"],
        &["explain", "--host", "web-001"],
        &["apply", "--noop", "--host", "web-001"],
        &["hosts"],
        &["diff"],
        &["query", "File[motd].mode"],
    ];
    for args in every {
        // An unknown flag.
        let mut with = args.to_vec();
        with.push("--bogus");
        usage(&with, "unexpected argument '--bogus'");
        // An unknown --format value.
        let mut with = args.to_vec();
        with.extend(["--format", "xml"]);
        usage(&with, "invalid value 'xml' for '--format <FORMAT>'");
        // An unknown --color value (a global option).
        let mut with = args.to_vec();
        with.extend(["--color", "sometimes"]);
        usage(&with, "invalid value 'sometimes' for '--color <WHEN>'");
        // An option missing its value.
        let mut with = args.to_vec();
        with.push("--fleet");
        usage(&with, "a value is required for '--fleet <DIR>'");
    }
    // Missing arguments, one per command that has some.
    usage(
        &["render"],
        "the following required arguments were not provided",
    );
    usage(&["explain"], "name the host to explain");
    usage(&["query"], "<ID.FIELD>");
    usage(&["render", "--all"], "--out <DIR>");
    // Arguments that cannot go together, too many, or a bad value type.
    usage(
        &["render", "web-001", "--all", "--out", "x"],
        "cannot be used with '--all'",
    );
    usage(&["check", "extra"], "unexpected argument 'extra'");
    usage(&["diff", "a", "b", "c"], "unexpected argument 'c'");
    // No subcommand, or an unknown one.
    usage(&[], "Usage: datum [OPTIONS] <COMMAND>");
    usage(&["rendr"], "unrecognized subcommand 'rendr'");
}

#[test]
fn an_option_the_form_does_not_take_is_bad_usage() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("m");
    let run = run_at(
        &example("fleet"),
        &["render", "web-001", "--out", dir.to_str().unwrap()],
    );
    assert_eq!(run.code, 64, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: --out applies only to --all: `render HOST` prints to stdout\n  \
         = hint: redirect stdout (datum render HOST > FILE), or use --all --out DIR for every host\n"
    );
    assert!(!dir.exists());
}

#[test]
fn the_fleet_and_the_root_must_be_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "").unwrap();
    let file = file.to_str().unwrap();
    // No fleet here or above.
    let run = run_at(tmp.path(), &["check"]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .starts_with("error: no datum.yaml in this directory or any parent\n")
    );
    // --fleet that is not a directory, or holds no datum.yaml.
    let run = run_at(tmp.path(), &["--fleet", file, "hosts"]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .starts_with(&format!("error: {file} is not a directory\n"))
    );
    let run = run_at(
        tmp.path(),
        &["hosts", "--fleet", tmp.path().to_str().unwrap()],
    );
    assert_eq!(run.code, 64);
    assert!(run.stderr.contains("holds no datum.yaml"), "{}", run.stderr);
    // apply's --root that is a file.
    usage(
        &["apply", "--host", "web-001", "--root", file],
        &format!("error: --root {file} is not a directory"),
    );
}

#[test]
fn malformed_arguments_exit_64() {
    usage(
        &["hosts", "role in web"],
        "`role in web` is not a label selector",
    );
    usage(
        &["query", "File[motd].mode", "--where", "role!"],
        "`role!` is not a label selector",
    );
    usage(
        &["explain", "nginx", "--host", "web-001"],
        "`nginx` is not a resource id",
    );
    usage(&["query", "File[nginx-config]"], "names no field");
}

#[test]
fn explain_takes_the_host_as_a_word_or_as_host_and_the_id_in_either_order() {
    let fleet = example("fleet");
    let want = run_at(
        &fleet,
        &["explain", "File[nginx-config].mode", "--host", "web-001"],
    );
    assert_eq!(want.code, 0, "{}", want.stderr);
    for args in [
        &["explain", "web-001", "File[nginx-config].mode"][..],
        &["explain", "File[nginx-config].mode", "web-001"],
    ] {
        let run = run_at(&fleet, args);
        assert_eq!(
            (run.code, &run.stdout),
            (0, &want.stdout),
            "{args:?}: {}",
            run.stderr
        );
    }
    let whole = run_at(&fleet, &["explain", "--host", "web-001"]);
    let word = run_at(&fleet, &["explain", "web-001"]);
    assert_eq!(
        (word.code, &word.stdout),
        (0, &whole.stdout),
        "{}",
        word.stderr
    );
    // Too many words: the command meant, when it can be told.
    let meant = "hint: datum explain 'File[nginx-config].mode' --host web-001";
    let args = [
        "explain",
        "File[nginx-config].mode",
        "nginx",
        "--host",
        "web-001",
    ];
    usage(
        &args,
        "explain takes one resource or field with --host web-001",
    );
    usage(&args, meant);
    // An id alone names no host.
    usage(
        &["explain", "File[nginx-config]"],
        "`File[nginx-config]` is a resource or field: name the host it is explained for too",
    );
    // Two hosts, or two ids: neither can be told apart.
    usage(
        &["explain", "web-001", "web-002"],
        "explain takes a host and one resource or field: `web-001` and `web-002` given",
    );
}

#[test]
fn help_and_version_succeed() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["--version"],
        &["-V"],
        &["help"],
        &["help", "render"],
        &["render", "--help"],
        &["apply", "-h"],
    ] {
        let run = run_at(&example("fleet"), args);
        assert_eq!(run.code, 0, "datum {args:?}: {}", run.stderr);
        assert!(!run.stdout.is_empty(), "datum {args:?}");
        assert_eq!(run.stderr, "", "datum {args:?}");
    }
}

#[test]
fn a_datum_yml_beside_a_missing_datum_yaml_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        example("fleet").join("datum.yaml"),
        dir.path().join("datum.yml"),
    )
    .unwrap();
    let want = format!(
        "  = hint: {} is there: the fleet file is named datum.yaml, with an `a` (rename it)\n",
        dir.path().join("datum.yml").display()
    );
    // Found from the current directory up, and named with --fleet.
    let mut cmd = crate::common::datum();
    cmd.arg("check").current_dir(dir.path());
    let run = crate::common::Run::from(cmd.output().unwrap());
    assert_eq!(run.code, 64);
    assert!(run.stderr.ends_with(&want), "{}", run.stderr);
    let run = crate::common::run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 64);
    assert!(run.stderr.ends_with(&want), "{}", run.stderr);
}

/// `apply --identity` is a path on the host, read inside `--root`: a
/// relative one would quietly name a file at the root's top rather than in
/// the current directory, so it is bad usage.
#[test]
fn a_relative_identity_is_bad_usage() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    usage(
        &[
            "apply",
            "web-001",
            "--root",
            root,
            "--identity",
            "keys/host",
        ],
        "`keys/host` is a relative path",
    );
}
