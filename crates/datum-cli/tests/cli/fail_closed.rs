//! No host goes past a doubt: a layer whose matcher cannot be read as
//! written holds back every host in every command that produces or applies
//! a manifest; one broken document hides nothing else; Datum never reads
//! its own output; publishing refuses what would fail on the host.

use std::fs;

use crate::common::{Run, apply_under, copy_tree, datum, example, run_in};

/// `examples/fleet` copied, with `role: web` in roles/web misspelt `wbe`:
/// `Fleet.labels` declares `role`, so the matcher names an undeclared value.
fn typo_fleet() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), dir.path());
    let layer = dir.path().join("roles/web/layer.yaml");
    let text = fs::read_to_string(&layer).unwrap();
    assert!(text.contains("    role: web\n"));
    fs::write(&layer, text.replace("    role: web\n", "    role: wbe\n")).unwrap();
    dir
}

/// The matcher's error as `check` draws it: the place, the line, the hint.
fn shows_the_typo(run: &Run) {
    assert!(
        run.stderr.contains(
            "error: `wbe` is not a declared value of label `role`
 --> roles/web/layer.yaml:7:11
  |
7 |     role: wbe
  |           ^^^ undeclared value
  |
  = hint: did you mean `web`?"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_matcher_typo_holds_back_every_host_in_render() {
    let fleet = typo_fleet();
    // A host the misspelt layer was meant for, and one it was not: neither
    // can be vouched for.
    for host in ["web-002", "db-001"] {
        let run = run_in(fleet.path(), &["render", host]);
        assert_eq!(run.code, 1, "{host}: {}", run.stdout);
        assert_eq!(run.stdout, "", "{host}: a manifest was printed");
        shows_the_typo(&run);
        assert!(
            run.stderr.contains(&format!(
                "error: {host} cannot be resolved: documents it depends on failed to load: roles/web/layer.yaml (Layer document)"
            )),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_matcher_typo_holds_back_every_host_in_render_all_and_bundle() {
    let fleet = typo_fleet();
    let out = tempfile::tempdir().unwrap();
    let rendered = out.path().join("rendered");
    let run = run_in(
        fleet.path(),
        &["render", "--all", "--out", rendered.to_str().unwrap()],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    shows_the_typo(&run);
    assert_eq!(fs::read_dir(&rendered).unwrap().count(), 0);
    let bundles = out.path().join("bundles");
    let run = run_in(
        fleet.path(),
        &["bundle", "--all", "--out", bundles.to_str().unwrap()],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    shows_the_typo(&run);
    assert_eq!(fs::read_dir(&bundles).unwrap().count(), 0);
}

#[test]
fn a_matcher_typo_holds_back_every_host_in_apply_and_noop() {
    let fleet = typo_fleet();
    let root = tempfile::tempdir().unwrap();
    for args in [&["--noop"][..], &[]] {
        let run = apply_under(root.path(), "db-001", fleet.path(), args);
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        shows_the_typo(&run);
        assert_eq!(
            fs::read_dir(root.path()).unwrap().count(),
            0,
            "apply wrote into the root"
        );
    }
}

#[test]
fn a_matcher_typo_makes_query_refuse_and_explain_say_so() {
    let fleet = typo_fleet();
    let run = run_in(fleet.path(), &["query", "Package[postgresql].ensure"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.stdout, "");
    shows_the_typo(&run);
    assert!(
        run.stderr.contains(
            "error: no host's value can be known: roles/web/layer.yaml (Layer document) failed to load and could match any host"
        ),
        "{}",
        run.stderr
    );
    // Explain still explains, with what loaded, and ends with the error.
    let run = run_in(
        fleet.path(),
        &["explain", "Package[postgresql]", "--host", "db-001"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("Package[postgresql]"),
        "{}",
        run.stdout
    );
    shows_the_typo(&run);
    assert!(
        run.stderr.contains(
            "note: explained without roles/web/layer.yaml (Layer document), which failed to load; db-001 has no manifest until the errors are fixed"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn an_error_inside_a_resource_holds_back_only_the_hosts_its_layer_selects() {
    let fleet = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), fleet.path());
    let layer = fleet.path().join("roles/web/layer.yaml");
    let text = fs::read_to_string(&layer).unwrap();
    fs::write(
        &layer,
        text.replace("ensure: installed", "ensure: instaled"),
    )
    .unwrap();
    let run = run_in(fleet.path(), &["render", "web-002"]);
    assert_eq!(run.code, 1);
    let run = run_in(fleet.path(), &["render", "db-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("host: db-001\n"));
}

/// A fleet whose `hosts.yaml` holds `first`, then `second`.
fn two_hosts_in_one_file(first: &str, second: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: f\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("hosts.yaml"),
        format!("{first}---\n{second}"),
    )
    .unwrap();
    fs::write(
        dir.path().join("base.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\nresources:\n  Package[curl]: {}\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_host_after_a_broken_host_in_the_same_file_still_renders() {
    // The `[` is never closed: the parser reads on past the `---`.
    let fleet = two_hosts_in_one_file(
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: [web\n",
        "datum: v1alpha1\ntype: Host\nname: web-002\nlabels:\n  role: web\n",
    );
    let run = run_in(fleet.path(), &["render", "web-002"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("host: web-002\n"), "{}", run.stdout);
    let run = run_in(fleet.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("hosts.yaml:"), "{}", run.stderr);
}

#[test]
fn a_host_not_found_while_a_file_failed_to_load_names_that_file() {
    // The name of the second host is inside the broken part.
    let fleet = two_hosts_in_one_file(
        "datum: v1alpha1\ntype: Host\nname: web-001\n",
        "datum: v1alpha1\ntype: Host\nname: [web-009\n",
    );
    let run = run_in(fleet.path(), &["render", "web-009"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "error: no host named `web-009` in this fleet
  = hint: hosts.yaml failed to load and may declare it: fix it first; `datum check` lists every problem"
        ),
        "{}",
        run.stderr
    );
}

/// Every file below `dir`, with its bytes, sorted.
fn tree(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.extend(
                tree(&path)
                    .into_iter()
                    .map(|(n, b)| (format!("{name}/{n}"), b)),
            );
        } else {
            out.push((name, fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn render_all_into_the_fleet_any_number_of_times_gives_the_same_files() {
    let fleet = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), fleet.path());
    let mut before = None;
    for round in 0..3 {
        let out = fleet.path().join("rendered");
        let run = run_in(
            fleet.path(),
            &["render", "--all", "--out", out.to_str().unwrap()],
        );
        assert_eq!(run.code, 0, "round {round}: {}", run.stderr);
        assert_eq!(run.stderr, "", "round {round}");
        let files = tree(&out);
        assert_eq!(files.len(), 5, "round {round}");
        match &before {
            None => before = Some(files),
            Some(first) => assert_eq!(&files, first, "round {round}"),
        }
        let check = run_in(fleet.path(), &["check"]);
        assert_eq!(check.code, 0, "round {round}: {}", check.stderr);
    }
}

#[test]
fn bundle_all_into_the_fleet_any_number_of_times_gives_the_same_files() {
    let fleet = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), fleet.path());
    let mut before = None;
    for round in 0..3 {
        let out = fleet.path().join("bundles");
        // The expiry counts from SOURCE_DATE_EPOCH: rounds a second apart
        // would otherwise differ in it.
        let run = Run::from(
            datum()
                .env("SOURCE_DATE_EPOCH", "1750000000")
                .args(["bundle", "--all", "--out", out.to_str().unwrap()])
                .arg("--fleet")
                .arg(fleet.path())
                .output()
                .unwrap(),
        );
        assert_eq!(run.code, 0, "round {round}: {}", run.stderr);
        let files = tree(&out);
        assert_eq!(files.len(), 5, "round {round}");
        match &before {
            None => before = Some(files),
            Some(first) => assert_eq!(&files, first, "round {round}"),
        }
    }
}

#[test]
fn a_manifest_document_inside_an_input_file_is_refused_with_its_place() {
    let fleet = two_hosts_in_one_file(
        "datum: v1alpha1\ntype: Host\nname: web-001\n",
        "datum: v1alpha1\ntype: Manifest\nhost: web-001\n",
    );
    let run = run_in(fleet.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "error: a Manifest is what Datum writes, never a document of the fleet\n --> hosts.yaml:6:7"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_missing_source_sets_aside_only_its_resource_and_check_reports_every_other_error() {
    let fleet = tempfile::tempdir().unwrap();
    let dir = fleet.path();
    fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: f\n",
    )
    .unwrap();
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {role: web}\n---\ndatum: v1alpha1\ntype: Host\nname: db-001\nlabels: {role: db}\n",
    )
    .unwrap();
    fs::create_dir(dir.join("templates")).unwrap();
    fs::write(dir.join("templates/motd.j2"), "{{ vars.banner }}\n").unwrap();
    fs::write(
        dir.join("web.yaml"),
        r#"datum: v1alpha1
type: Layer
name: web
precedence: 30
match: {labels: {role: web}}
resources:
  File[app]:
    path: /etc/app.conf
    source: files/app.conf
  Package[nginx]:
    requires: Package[openssl]
  File[a]:
    path: /a
    requires: File[b]
  File[b]:
    path: /b
    requires: File[a]
  Exec[migrate]:
    command: [migrate]
  File[motd]:
    path: /etc/motd
    template: templates/motd.j2
"#,
    )
    .unwrap();
    let run = run_in(dir, &["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    codes.sort();
    // The missing payload, and every error independent of it, in one run.
    assert_eq!(
        codes,
        [
            "cycle",
            "invalid-source",
            "template-error",
            "unguarded-exec",
            "unknown-reference"
        ],
        "{}",
        run.stdout
    );
    assert_eq!(report["held_back"], serde_json::json!(["web-001"]));
    // The host it touches has no manifest; the others do.
    let run = run_in(dir, &["render", "web-001"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    let run = run_in(dir, &["render", "db-001"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn bundle_all_leaves_out_a_host_that_could_not_decrypt_its_secret() {
    let f = crate::secret_fleet::Fleet::new();
    let run = f.encrypt(crate::secret_fleet::PLAINTEXT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // web-03 joins the web role after the secret was encrypted: it
    // receives the secret and is not among its recipients.
    let key = crate::secret_fleet::ssh_keygen(&f.tmp.path().join("keys"), "web-03", "");
    let hosts = f.fleet().join("hosts.yaml");
    let mut text = fs::read_to_string(&hosts).unwrap();
    text.push_str(&format!(
        "---\ndatum: v1alpha1\ntype: Host\nname: web-03\nlabels: {{role: web}}\nkeys: [\"{key}\"]\n"
    ));
    fs::write(&hosts, text).unwrap();
    let out = f.tmp.path().join("bundles");
    let run = f.run(&["bundle", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "error: host web-03 receives secrets/db.age but is not among its recipients: it cannot decrypt it"
        ),
        "{}",
        run.stderr
    );
    let mut files: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "db-01.bundle",
            "mail-01.bundle",
            "web-01.bundle",
            "web-02.bundle"
        ]
    );
    // Asked for alone, it is refused the same way.
    let one = f.tmp.path().join("web-03.bundle");
    let run = f.run(&["bundle", "web-03", "--out", one.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!one.exists());
}

#[test]
fn bundle_all_holds_back_exactly_the_hosts_a_damaged_secret_reaches() {
    let f = crate::secret_fleet::Fleet::new();
    let run = f.encrypt(crate::secret_fleet::PLAINTEXT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The ciphertext is cut inside its header: its recipients file still
    // names every web host, so only reading the file shows it.
    let secret = f.fleet().join("secrets/db.age");
    fs::write(&secret, b"age-encryption.org/v1\n-> X25519 abc\n").unwrap();
    let out = f.tmp.path().join("bundles");
    let run = f.run(&["bundle", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "error: secrets/db.age is not a secret hosts can decrypt: its header does not end (no `---` line)\n"
        ),
        "{}",
        run.stderr
    );
    // Where the fleet gives it to the hosts.
    assert!(
        run.stderr.contains("roles/web/layer.yaml:10:13"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("2 hosts got no bundle"),
        "{}",
        run.stderr
    );
    let mut files: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // The web hosts receive it; db-01 and mail-01 do not.
    assert_eq!(files, ["db-01.bundle", "mail-01.bundle"]);
    // Asked for alone, a web host is refused, and the others are not.
    let one = f.tmp.path().join("web-01.bundle");
    let run = f.run(&["bundle", "web-01", "--out", one.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("secrets/db.age is not a secret hosts can decrypt"),
        "{}",
        run.stderr
    );
    assert!(!one.exists());
    let other = f.tmp.path().join("db-01.bundle");
    let run = f.run(&["bundle", "db-01", "--out", other.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(other.exists());
}

#[test]
fn a_bundle_goes_to_stdout_with_out_dash_and_only_for_one_host() {
    let fleet = example("fleet");
    let file = tempfile::tempdir().unwrap();
    let path = file.path().join("web-001.bundle");
    let run = run_in(
        &fleet,
        &["bundle", "web-001", "--out", path.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = crate::common::datum()
        .args(["bundle", "web-001", "--out", "-", "--fleet"])
        .arg(&fleet)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, fs::read(&path).unwrap());
    let run = run_in(&fleet, &["bundle", "--all", "--out", "-"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
}

#[test]
fn two_new_secrets_are_encrypted_one_after_the_other() {
    let f = crate::secret_fleet::Fleet::new();
    let dir = f.fleet().join("roles/db");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: db\nprecedence: 30\nmatch: {labels: {role: db}}\nresources:\n  File[api-token]:\n    path: /etc/app/api-token\n    secret: secrets/api.age\n",
    )
    .unwrap();
    // secrets/db.age first, while secrets/api.age does not exist yet.
    let run = f.encrypt("one");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(f.recipients().contains("host web-01"), "{}", f.recipients());
    let run = crate::common::datum()
        .args(["secret", "encrypt", "secrets/api.age"])
        .current_dir(f.fleet())
        .write_stdin("two")
        .output()
        .unwrap();
    let run = Run::from(run);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let recipients = fs::read_to_string(f.fleet().join("secrets/api.age.recipients")).unwrap();
    assert!(recipients.contains("host db-01"), "{recipients}");
    let check = f.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
}
