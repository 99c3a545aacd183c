//! What a fleet wrote is shown, never obeyed by the terminal: control
//! characters in file names, labels and values are escaped in every text
//! output, and positions agree between text and JSON whatever the line
//! endings.

use std::fs;
use std::path::Path;

use crate::common::run_in;

/// A layer directory whose name would add a fake row to a conflict report
/// and clear the screen.
const EVIL_DIR: &str = "evil\n  0600  fake  precedence 30\x1b[2J";

/// One host, whose labels and values hold control characters and a
/// right-to-left override, and two layers in conflict, one of them in
/// [`EVIL_DIR`].
fn hostile_fleet(root: &Path) {
    fs::create_dir_all(root.join("roles/web")).unwrap();
    fs::create_dir_all(root.join(EVIL_DIR)).unwrap();
    fs::write(
        root.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: evil\n",
    )
    .unwrap();
    fs::write(
        root.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n  note: \"rtl\\u202Eevil\"\n",
    )
    .unwrap();
    fs::write(
        root.join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels:\n    role: web\n\
         resources:\n  File[motd]:\n    path: /etc/motd\n    mode: \"0644\"\n    content: \"hi\\e[2J\\r\\n\"\n",
    )
    .unwrap();
    fs::write(
        root.join(EVIL_DIR).join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: evil\nprecedence: 30\nmatch:\n  labels:\n    role: web\n\
         resources:\n  File[motd]:\n    mode: \"0600\"\n",
    )
    .unwrap();
}

/// Nothing in `text` acts on a terminal or reorders what it shows.
#[track_caller]
fn printable(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || ('\u{202A}'..='\u{202E}').contains(&c))
        .collect();
    assert!(bad.is_empty(), "{what} printed {bad:?}:\n{text}");
}

#[test]
fn names_labels_and_values_are_escaped_in_every_text_output() {
    let dir = tempfile::tempdir().unwrap();
    hostile_fleet(dir.path());
    let escaped_layer = "evil\\n  0600  fake  precedence 30\\u{1b}[2J";
    for args in [
        &["check"][..],
        &["render", "web-001"],
        &["explain", "File[motd]", "--host", "web-001"],
        &["explain", "--host", "web-001"],
        &["hosts"],
        &["query", "File[motd].content"],
        &["query", "File[motd].mode", "--summary"],
    ] {
        let run = run_in(dir.path(), args);
        printable(&format!("datum {args:?} (stdout)"), &run.stdout);
        printable(&format!("datum {args:?} (stderr)"), &run.stderr);
    }
    // The conflict report keeps its shape: two sides, one row each, and
    // the line of each.
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!(
            "error: conflicting values for File[motd].mode\n  \
             0600  {escaped_layer}  precedence 30\n  \
             0644  roles/web{pad}  precedence 30\n  \
             both layers match host web-001 at equal precedence\n  \
             --> {escaped_layer}/layer.yaml:10:11\n     \
             |\n  \
             10 |     mode: \"0600\"\n     \
             |           ^^^^^^\n  \
             --> roles/web/layer.yaml:11:11\n     \
             |\n  \
             11 |     mode: \"0644\"\n     \
             |           ^^^^^^\n  \
             = hint: give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap\n\n",
            pad = " ".repeat(escaped_layer.len() - "roles/web".len()),
        )
    );
    // Explain rows, label values and content.
    let run = run_in(dir.path(), &["explain", "--host", "web-001"]);
    assert!(
        run.stdout.contains(&format!(
            "    {escaped_layer}  precedence 30  matched role=web\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("    note        rtl\\u{202e}evil\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("content  \"hi\\u{1b}[2J\\r\\n\"  roles/web\n"),
        "{}",
        run.stdout
    );
    let run = run_in(dir.path(), &["hosts"]);
    assert_eq!(run.stdout, "web-001  note=rtl\\u{202e}evil  role=web\n");
    // JSON keeps the text as it is: its strings are escaped by the format.
    let run = run_in(dir.path(), &["hosts", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hosts"][0]["labels"]["note"], "rtl\u{202e}evil");
}

#[test]
fn a_control_character_in_a_source_line_is_shown_as_a_picture() {
    let dir = tempfile::tempdir().unwrap();
    hostile_fleet(dir.path());
    fs::remove_dir_all(dir.path().join(EVIL_DIR)).unwrap();
    // A raw ESC in a comment, on the line an error points at.
    fs::write(
        dir.path().join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch: {}\n\
         resources:\n  File[motd]:\n    path: /etc/motd\n    mode: 0644 # \x1b[2J\u{9b}2J\n",
    )
    .unwrap();
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    printable("check", &run.stderr);
    assert!(
        run.stderr.contains(
            " --> roles/web/layer.yaml:9:11\n  |\n9 |     mode: 0644 # \u{241b}[2J\u{fffd}2J\n  |           ^^^^ an unquoted number\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn lines_ending_in_cr_alone_are_placed_alike_in_text_and_json() {
    for eol in ["\r", "\r\n", "\n"] {
        let dir = tempfile::tempdir().unwrap();
        hostile_fleet(dir.path());
        fs::remove_dir_all(dir.path().join(EVIL_DIR)).unwrap();
        let layer = "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch: {}\n\
                     resources:\n  File[motd]:\n    path: /etc/motd\n    mdoe: \"0644\"\n"
            .replace('\n', eol);
        fs::write(dir.path().join("roles/web/layer.yaml"), layer).unwrap();
        let text = run_in(dir.path(), &["check"]);
        let json = run_in(dir.path(), &["check", "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        let primary = &v["diagnostics"][0]["primary"];
        assert_eq!(
            crate::common::place(&primary["location"]),
            "roles/web/layer.yaml:9:5",
            "{eol:?}"
        );
        assert!(
            text.stderr.contains(
                " --> roles/web/layer.yaml:9:5\n  |\n9 |     mdoe: \"0644\"\n  |     ^^^^ unknown field\n"
            ),
            "{eol:?}:\n{}",
            text.stderr
        );
    }
}

/// Apply's content diff shows what the manifest and the disk hold, both
/// escaped: a file on the host holding terminal controls cannot act on
/// the operator's terminal when apply shows what it would change.
#[test]
fn apply_escapes_both_sides_of_a_content_diff() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    fs::create_dir_all(fleet.join("roles/web")).unwrap();
    fs::write(
        fleet.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: evil\n",
    )
    .unwrap();
    fs::write(
        fleet.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels:\n  role: web\n",
    )
    .unwrap();
    fs::write(
        fleet.join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels:\n    role: web\n\
         resources:\n  File[motd]:\n    path: /etc/motd\n    content: \"new\\e[2J\\r\\n\"\n",
    )
    .unwrap();
    let root = dir.path().join("root");
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::write(root.join("etc/motd"), "old\x1b]0;owned\x07\u{202e}txt\n").unwrap();
    let run = crate::common::apply_under(&root, "web-001", &fleet, &["--noop"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    printable("datum apply --noop (stdout)", &run.stdout);
    assert!(
        run.stdout
            .contains("    -old\\u{1b}]0;owned\\u{7}\\u{202e}txt\n    +new\\u{1b}[2J\\r\n"),
        "{}",
        run.stdout
    );
}

/// `secret encrypt`, `rekey` and `rekey --check` print what the fleet
/// wrote (a secret's path, a damaged line of its `.recipients` file)
/// escaped.
#[test]
fn secret_commands_escape_fleet_paths_and_damaged_recipients_lines() {
    use crate::secret_fleet::Fleet;
    let f = Fleet::new();
    fs::write(
        f.fleet().join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch:\n  labels: {role: web}\n\
         resources:\n  File[db-password]:\n    path: /etc/app/db-password\n    secret: \"secrets/e\\e[2J\\rvil.age\"\n",
    )
    .unwrap();
    let evil = "secrets/e\x1b[2J\rvil.age";
    let shown = "secrets/e\\u{1b}[2J\\rvil.age";
    let run = crate::common::Run::from(
        crate::common::datum()
            .args(["secret", "encrypt", evil])
            .current_dir(f.fleet())
            .write_stdin("x")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    printable("secret encrypt (stdout)", &run.stdout);
    printable("secret encrypt (stderr)", &run.stderr);
    assert!(
        run.stdout.starts_with(&format!("{shown}: encrypted to ")),
        "{}",
        run.stdout
    );
    // A line of its .recipients file damaged with terminal controls.
    let recipients = f.fleet().join(format!("{evil}.recipients"));
    let mut text = fs::read_to_string(&recipients).unwrap();
    text.push_str("web-09\x1b]0;owned\x07 ssh-ed25519\n");
    fs::write(&recipients, text).unwrap();
    let check = f.run(&["secret", "rekey", "--check"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    printable("secret rekey --check (stdout)", &check.stdout);
    printable("secret rekey --check (stderr)", &check.stderr);
    assert!(
        check.stdout.starts_with(&format!(
            "{shown}: needs a rekey (its .recipients file is damaged"
        )),
        "{}",
        check.stdout
    );
    let rekey = f.run(&[
        "secret",
        "rekey",
        "--identity",
        f.key("admin").to_str().unwrap(),
    ]);
    assert_eq!(rekey.code, 0, "{}", rekey.stderr);
    printable("secret rekey (stdout)", &rekey.stdout);
    printable("secret rekey (stderr)", &rekey.stderr);
    assert!(rekey.stdout.starts_with(shown), "{}", rekey.stdout);
}

#[test]
fn a_tab_in_the_indentation_is_shown_and_named() {
    let dir = tempfile::tempdir().unwrap();
    hostile_fleet(dir.path());
    fs::remove_dir_all(dir.path().join(EVIL_DIR)).unwrap();
    fs::write(
        dir.path().join("roles/web/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: web\nprecedence: 30\nmatch: {}\n\
         resources:\n  File[motd]:\n    path: /etc/motd\n\tmode: \"0644\"\n",
    )
    .unwrap();
    let run = run_in(dir.path(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            " --> roles/web/layer.yaml:9:1\n  |\n9 | \u{2409}mode: \"0644\"\n  | ^ a tab\n  |\n  = hint: YAML forbids tabs for indentation; use spaces\n"
        ),
        "{}",
        run.stderr
    );
    // The one-line form points at the tab too.
    let short = run_in(dir.path(), &["check", "--format", "short"]);
    assert!(
        short.stdout.contains("roles/web/layer.yaml:9:1: error[")
            || short.stderr.contains("roles/web/layer.yaml:9:1: error["),
        "{}{}",
        short.stdout,
        short.stderr
    );
}
