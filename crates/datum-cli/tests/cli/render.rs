use crate::common::{Run, datum, example, run_in};

#[test]
fn renders_the_example_host() {
    let run = run_in(&example("fleet"), &["render", "web-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn renders_json_that_parses() {
    let run = run_in(
        &example("fleet"),
        &["render", "web-001", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["host"], "web-001");
    assert_eq!(v["type"], "Manifest");
    assert_eq!(v["resources"]["File[nginx-config]"]["mode"], "0600");
    assert_eq!(v["layers"][4], "hosts/web-001");
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn finds_the_fleet_from_the_working_directory_and_the_environment() {
    let fleet = example("fleet");
    let from_cwd = Run::from(
        datum()
            .current_dir(fleet.join("roles/web"))
            .args(["render", "db-001"])
            .output()
            .unwrap(),
    );
    let from_env = Run::from(
        datum()
            .env("DATUM_FLEET", &fleet)
            .args(["render", "db-001"])
            .output()
            .unwrap(),
    );
    let explicit = run_in(&fleet, &["render", "db-001"]);
    assert_eq!(explicit.code, 0);
    assert_eq!(from_cwd.stdout, explicit.stdout);
    assert_eq!(from_env.stdout, explicit.stdout);
}

#[test]
fn no_fleet_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::from(
        datum()
            .current_dir(dir.path())
            .args(["render", "web-001"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 64);
    insta::assert_snapshot!(run.stderr, @r"
    error: no datum.yaml in this directory or any parent
      = hint: run datum inside a fleet repository, or pass --fleet DIR
      = hint: to start a fleet here, run `datum init`
    ");
}

#[test]
fn an_unknown_host_names_the_nearest() {
    let run = run_in(&example("fleet"), &["render", "web-01"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr, @r"
    error: no host named `web-01` in this fleet
      = hint: the nearest host name is `web-001`; `datum hosts` lists them all
    ");
}

#[test]
fn a_conflict_prints_nothing_on_stdout_and_the_report_on_stderr() {
    let run = run_in(&example("conflict"), &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr);
}

#[test]
fn a_host_without_conflict_in_a_conflicting_fleet_renders() {
    let run = run_in(&example("conflict"), &["render", "web-002"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("mode: \"0640\""));
}

#[test]
fn render_all_writes_one_file_per_host() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("manifests");
    let run = run_in(
        &example("fleet"),
        &["render", "--all", "--out", dir.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cache-001.yaml",
            "db-001.yaml",
            "web-001.yaml",
            "web-002.yaml",
            "web-003.yaml"
        ]
    );
    let single = run_in(&example("fleet"), &["render", "web-001"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("web-001.yaml")).unwrap(),
        single.stdout
    );
}

#[test]
fn render_all_gives_a_failing_host_no_file() {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("web-001.json"), "stale").unwrap();
    let run = run_in(
        &example("conflict"),
        &[
            "render",
            "--all",
            "--out",
            out.path().to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 1);
    assert!(!out.path().join("web-001.json").exists());
    assert!(out.path().join("web-002.json").exists());
    assert!(
        run.stderr
            .contains("error: conflicting values for File[nginx-config].mode")
    );
}

#[test]
fn render_all_fails_on_an_error_in_a_document_no_host_uses() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = tmp.path().join("fleet");
    crate::common::copy_tree(&example("fleet"), &fleet);
    // Matches no host (a host gone from the fleet), so every host still
    // renders. (A value `Fleet.labels` does not declare would be a matcher
    // that cannot be read as written, holding back every host.)
    std::fs::create_dir_all(fleet.join("extra")).unwrap();
    std::fs::write(
        fleet.join("extra/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: unused\nprecedence: 5\nmatch:\n  labels:\n    datum/host: retired-001\nresources:\n  File[x]:\n    path: /x\n    colour: blue\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let run = run_in(&fleet, &["render", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.starts_with("rendered 5 of 5 hosts into "));
    assert!(
        run.stderr
            .starts_with("error: unknown field `colour` for File\n  --> extra/layer.yaml:11:5\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.ends_with(
            "error: every host was rendered, but the fleet has 1 error\n  = hint: `datum check` lists every problem\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn render_all_leaves_the_directory_exact_and_only_its_own_files_go() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path();
    let fleet = example("fleet");
    let render = |format: &str| {
        run_in(
            &fleet,
            &[
                "render",
                "--all",
                "--out",
                dir.to_str().unwrap(),
                "--format",
                format,
            ],
        )
    };
    // Manifests from an earlier run: in the other format, and of a host
    // that no longer exists; and a temporary file a killed run left.
    assert_eq!(render("json").code, 0);
    std::fs::rename(dir.join("db-001.json"), dir.join("gone-001.json")).unwrap();
    std::fs::write(dir.join(".web-009.yaml.tmp"), "datum: v1").unwrap();
    // Files that are not render's: other names, other content, a link, a
    // directory.
    std::fs::write(dir.join("README.md"), "keep").unwrap();
    std::fs::write(dir.join("notes.yaml"), "keep: me\n").unwrap();
    std::fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: x\n",
    )
    .unwrap();
    std::fs::write(dir.join("Upper.yaml"), "datum: v1alpha1\ntype: Manifest\n").unwrap();
    std::os::unix::fs::symlink(dir.join("web-001.json"), dir.join("link-001.yaml")).unwrap();
    std::fs::create_dir(dir.join("sub-001.yaml")).unwrap();

    let run = render("yaml");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "rendered 5 of 5 hosts into {}, removed 6 stale files\n",
            dir.display()
        )
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "README.md",
            "Upper.yaml",
            "cache-001.yaml",
            "datum.yaml",
            "db-001.yaml",
            "link-001.yaml",
            "notes.yaml",
            "sub-001.yaml",
            "web-001.yaml",
            "web-002.yaml",
            "web-003.yaml",
        ]
    );
    // A second run has nothing left to remove.
    let again = render("yaml");
    assert_eq!(
        again.stdout,
        format!("rendered 5 of 5 hosts into {}\n", dir.display())
    );
}

#[test]
fn output_is_identical_across_thread_counts_and_runs() {
    let fleet = example("fleet");
    let outs: Vec<String> = ["1", "2", "8", "1"]
        .iter()
        .map(|threads| {
            let dir = tempfile::tempdir().unwrap();
            let out = datum()
                .env("RAYON_NUM_THREADS", threads)
                .args(["render", "--all", "--out"])
                .arg(dir.path())
                .arg("--fleet")
                .arg(&fleet)
                .output()
                .unwrap();
            assert!(out.status.success());
            let mut all = String::new();
            for host in ["cache-001", "db-001", "web-001", "web-002", "web-003"] {
                all.push_str(
                    &std::fs::read_to_string(dir.path().join(format!("{host}.yaml"))).unwrap(),
                );
            }
            all
        })
        .collect();
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_host_untouched_by_broken_documents_renders_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    crate::common::copy_tree(&example("fleet"), &fleet);
    std::fs::write(
        fleet.join("roles/db/layer.yaml"),
        std::fs::read_to_string(fleet.join("roles/db/layer.yaml"))
            .unwrap()
            .replace("ensure: running", "ensure: runing"),
    )
    .unwrap();
    let web = run_in(&fleet, &["render", "web-001"]);
    assert_eq!(web.code, 0, "{}", web.stderr);
    assert_eq!(
        web.stdout,
        run_in(&example("fleet"), &["render", "web-001"]).stdout
    );
    assert_eq!(
        web.stderr,
        "warning: 1 error elsewhere in the fleet, none touching web-001; run `datum check` to see them\n"
    );
    let db = run_in(&fleet, &["render", "db-001"]);
    assert_eq!(db.code, 1);
    assert_eq!(db.stdout, "");
    assert!(db.stderr.contains("error: db-001 cannot be resolved: documents it depends on failed to load: roles/db/layer.yaml (Layer document)"), "{}", db.stderr);
}

#[test]
fn the_host_is_taken_as_a_word_or_as_host() {
    let word = run_in(&example("fleet"), &["render", "web-001"]);
    let option = run_in(&example("fleet"), &["render", "--host", "web-001"]);
    assert_eq!(word.code, 0, "{}", word.stderr);
    assert_eq!(option.code, 0, "{}", option.stderr);
    assert_eq!(word.stdout, option.stdout);
    // Both at once is bad usage, as is --host with --all.
    assert_eq!(
        run_in(
            &example("fleet"),
            &["render", "web-001", "--host", "web-002"]
        )
        .code,
        64
    );
    assert_eq!(
        run_in(
            &example("fleet"),
            &["render", "--host", "web-001", "--all", "--out", "x"]
        )
        .code,
        64
    );
}
