//! `datum init`: a starter fleet that checks clean, and never clobbers.

use std::fs;
use std::path::Path;

use crate::common::{Run, datum, run_in};

fn init(cwd: &Path, args: &[&str]) -> Run {
    let run = Run::from(
        datum()
            .current_dir(cwd)
            .arg("init")
            .args(args)
            .output()
            .unwrap(),
    );
    assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
    run
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_new_fleet_checks_clean_with_warnings_denied() {
    let tmp = tempfile::tempdir().unwrap();
    let run = init(tmp.path(), &["fleet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "created a fleet in fleet: datum.yaml, base/layer.yaml, roles/web/layer.yaml, hosts/web-001.yaml, datum.schema.json\n\
         next: `datum check --fleet fleet`, then `datum render web-001 --fleet fleet`\n"
    );
    let fleet = tmp.path().join("fleet");
    assert_eq!(
        files(&fleet),
        [
            "base/layer.yaml",
            "datum.schema.json",
            "datum.yaml",
            "hosts/web-001.yaml",
            "roles/web/layer.yaml"
        ]
    );
    let check = run_in(&fleet, &["check", "--deny-warnings"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(check.stderr, "");
    assert_eq!(
        check.stdout,
        "checked 1 host against 2 layers: no errors, no warnings\n"
    );
    // Labels declared, a base and a role layer, one host: all in play.
    let render = run_in(&fleet, &["render", "web-001"]);
    assert_eq!(render.code, 0, "{}", render.stderr);
    assert!(
        render.stdout.contains("layers:\n  - base\n  - roles/web\n"),
        "{}",
        render.stdout
    );
    let datum_yaml = fs::read_to_string(fleet.join("datum.yaml")).unwrap();
    assert!(datum_yaml.contains("labels:\n  role: [web]\n"));
}

#[test]
fn every_document_carries_the_schema_modeline_relative_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(init(tmp.path(), &[]).code, 0);
    for (file, schema) in [
        ("datum.yaml", "datum.schema.json"),
        ("base/layer.yaml", "../datum.schema.json"),
        ("roles/web/layer.yaml", "../../datum.schema.json"),
        ("hosts/web-001.yaml", "../datum.schema.json"),
    ] {
        let text = fs::read_to_string(tmp.path().join(file)).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(first, format!("# yaml-language-server: $schema={schema}"));
        // The language server reads the path relative to the document.
        let dir = tmp.path().join(file).parent().unwrap().to_path_buf();
        assert!(dir.join(schema).is_file(), "{file}: {schema}");
    }
    let printed = datum().arg("schema").output().unwrap().stdout;
    assert_eq!(
        fs::read(tmp.path().join("datum.schema.json")).unwrap(),
        printed,
        "the schema written is the one `datum schema` prints"
    );
}

#[test]
fn a_directory_that_holds_files_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let run = init(tmp.path(), &[]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @r"
    error: . is not empty (it holds `notes.txt`)
      = hint: pass --force to add the fleet's files beside what is there, or name a new directory: datum init DIR
    ");
    assert_eq!(files(tmp.path()), ["notes.txt"]);

    let forced = init(tmp.path(), &["--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(
        fs::read_to_string(tmp.path().join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(tmp.path().join("datum.yaml").is_file());
}

#[test]
fn an_existing_file_is_never_overwritten_even_when_forced() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("roles/web")).unwrap();
    fs::write(tmp.path().join("roles/web/layer.yaml"), "mine").unwrap();
    let run = init(tmp.path(), &["--force"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("error: . already holds `roles/web/layer.yaml`; nothing was written\n"),
        "{}",
        run.stderr
    );
    assert_eq!(files(tmp.path()), ["roles/web/layer.yaml"]);
    assert_eq!(
        fs::read_to_string(tmp.path().join("roles/web/layer.yaml")).unwrap(),
        "mine"
    );
}

#[test]
fn a_git_repository_alone_counts_as_empty() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join(".git")).unwrap();
    let run = init(tmp.path(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(tmp.path().join("datum.yaml").is_file());
}

#[test]
fn without_a_fleet_the_error_points_at_init() {
    let tmp = tempfile::tempdir().unwrap();
    let run = Run::from(
        datum()
            .current_dir(tmp.path())
            .arg("check")
            .output()
            .unwrap(),
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("run `datum init`"), "{}", run.stderr);
}
