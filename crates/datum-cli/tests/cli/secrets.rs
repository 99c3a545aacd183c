//! Secrets end to end, with keys made here (OpenSSH Ed25519 by ssh-keygen,
//! native age in process): `datum secret encrypt`, `edit` and `rekey`,
//! `check`'s recipient rules, `apply` decrypting under `--root`, and that
//! the plaintext appears nowhere but in the target file.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, datum};
use crate::secret_fleet::{Fleet, PLAINTEXT, apply, contains, files_under};

#[test]
fn encrypt_writes_the_ciphertext_for_the_receiving_hosts_and_the_admins() {
    let f = Fleet::new();
    let run = f.encrypt(PLAINTEXT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "secrets/db.age: encrypted to admins (1 key), web-01, web-02\n"
    );
    let sealed = fs::read_to_string(f.fleet().join("secrets/db.age")).unwrap();
    assert!(sealed.starts_with("-----BEGIN AGE ENCRYPTED FILE-----\n"));
    let mut want = [
        format!("admin {}", f.fingerprint(&f.admin_pub)),
        format!("host web-01 {}", f.fingerprint(&f.web01_pub)),
        format!("host web-02 {}", f.web02.public_key()),
    ];
    want.sort();
    assert_eq!(
        f.recipients(),
        format!(
            "# Recipients of the secret beside this file. Written by `datum secret`; do not edit.\n{}\n",
            want.join("\n")
        )
    );
    assert_eq!(f.decrypted(), PLAINTEXT);
    let check = f.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(check.stderr, "");
    assert_eq!(f.run(&["secret", "rekey", "--check"]).code, 0);
    // explain shows the layer that set the secret and its recipients.
    let explain = f.run(&["explain", "File[db-password]", "--host", "web-02"]);
    assert!(
        explain
            .stdout
            .contains("    secret  secrets/db.age        roles/web\n"),
        "{}",
        explain.stdout
    );
    assert!(
        explain.stdout.contains(&format!(
            "  recipients of secrets/db.age\n    admin   {}\n",
            f.fingerprint(&f.admin_pub)
        )),
        "{}",
        explain.stdout
    );
}

#[test]
fn check_and_rekey_check_read_every_ciphertext_header() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let secret = f.fleet().join("secrets/db.age");
    let mut many = b"age-encryption.org/v1\n".to_vec();
    for _ in 0..40_000 {
        many.extend_from_slice(b"-> x y\nAAAA\n");
    }
    many.extend_from_slice(b"--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
    let cases: [(&[u8], &str); 4] = [
        (b"", "the file is empty"),
        (
            b"not a secret\n",
            "it does not start with `age-encryption.org/v1`",
        ),
        (
            b"age-encryption.org/v1\n-> X25519 abc\n",
            "its header does not end (no `---` line)",
        ),
        (
            &many,
            "its header holds more than 10001 stanzas (one per recipient, and age's own)",
        ),
    ];
    for (bytes, why) in cases {
        fs::write(&secret, bytes).unwrap();
        let check = f.run(&["check"]);
        assert_eq!(check.code, 1, "{why}: {}", check.stderr);
        assert!(
            check.stderr.contains(&format!(
                "error: secrets/db.age is not a secret hosts can decrypt: {why}\n"
            )),
            "{}",
            check.stderr
        );
        assert!(
            check.stderr.contains("roles/web/layer.yaml:10:13"),
            "{}",
            check.stderr
        );
        let rekey = f.run(&["secret", "rekey", "--check"]);
        assert_eq!(rekey.code, 1, "{why}: {}", rekey.stderr);
        assert_eq!(
            rekey.stdout,
            format!("secrets/db.age: cannot be rekeyed ({why})\n")
        );
    }
}

#[test]
fn check_catches_a_missing_and_an_extra_recipient_and_rekey_fixes_both() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    // db-01 now receives the secret too: it cannot decrypt it.
    f.set_matcher("role: [web, db]");
    let check = f.run(&["check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stderr.contains(
            "error: host db-01 receives secrets/db.age but is not among its recipients: it cannot decrypt it\n"
        ),
        "{}",
        check.stderr
    );
    assert!(
        check.stderr.contains("roles/web/layer.yaml:10:13"),
        "{}",
        check.stderr
    );
    assert!(
        check.stderr.contains("set by roles/web for db-01"),
        "{}",
        check.stderr
    );
    let stale = f.run(&["secret", "rekey", "--check"]);
    assert_eq!(stale.code, 1);
    assert_eq!(stale.stdout, "secrets/db.age: needs a rekey (adds db-01)\n");
    // Rekeying needs an admin's key.
    let refused = f.run(&["secret", "rekey"]);
    assert_eq!(refused.code, 64, "{}", refused.stderr);
    assert!(refused.stderr.contains("--identity"), "{}", refused.stderr);
    let admin = f.key("admin");
    let rekey = f.run(&["secret", "rekey", "--identity", admin.to_str().unwrap()]);
    assert_eq!(rekey.code, 0, "{}", rekey.stderr);
    assert_eq!(
        rekey.stdout,
        "secrets/db.age: encrypted to admins (1 key), db-01, web-01, web-02\n"
    );
    assert!(f.recipients().contains("host db-01 "));
    assert_eq!(f.decrypted(), PLAINTEXT);
    assert_eq!(f.run(&["check"]).code, 0);
    // Back to the web hosts only: db-01 can still decrypt what it no longer
    // receives, a warning.
    f.set_matcher("role: web");
    let check = f.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check.stderr.contains(&format!(
            "warning: secrets/db.age is encrypted to recipients it should not have: db-01 ({}) no longer receives it\n",
            f.fingerprint(&f.db01_pub)
        )),
        "{}",
        check.stderr
    );
    assert!(
        check
            .stderr
            .contains("it is brought to its hosts by roles/web only"),
        "{}",
        check.stderr
    );
    assert_eq!(f.run(&["check", "--deny-warnings"]).code, 1);
    let rekey = f.run(&[
        "secret",
        "rekey",
        "secrets/db.age",
        "--identity",
        admin.to_str().unwrap(),
    ]);
    assert_eq!(rekey.code, 0, "{}", rekey.stderr);
    assert!(!f.recipients().contains("db-01"));
    assert_eq!(f.run(&["check", "--deny-warnings"]).code, 0);
}

#[test]
fn check_refuses_a_receiving_host_without_a_key_and_a_key_that_is_not_one() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    f.set_matcher("role: [web, mail]");
    let check = f.run(&["check"]);
    assert_eq!(check.code, 1);
    assert!(
        check.stderr.contains(
            "error: host mail-01 receives secrets/db.age but declares no key to decrypt it with\n"
        ),
        "{}",
        check.stderr
    );
    // A private key pasted where the public one belongs.
    let hosts = fs::read_to_string(f.fleet().join("hosts.yaml")).unwrap();
    fs::write(
        f.fleet().join("hosts.yaml"),
        hosts.replace(&f.db01_pub, "AGE-SECRET-KEY-1QQQ"),
    )
    .unwrap();
    let check = f.run(&["check"]);
    assert!(
        check.stderr.contains(
            "error: an entry of `keys` of db-01 is not a usable public key: this is a private key, not a public one\n"
        ),
        "{}",
        check.stderr
    );
    assert!(check.stderr.contains("hosts.yaml:17:9"), "{}", check.stderr);
}

/// A `keys` entry is one line, and its key data holds the key and nothing
/// more: a line break (which would forge a line of a `.recipients` file)
/// and bytes after an Ed25519 key are refused where they are written.
#[test]
fn check_refuses_a_key_with_a_line_break_or_trailing_key_data() {
    let f = Fleet::new();
    let hosts = fs::read_to_string(f.fleet().join("hosts.yaml")).unwrap();
    let (kind, rest) = f.db01_pub.split_once(' ').unwrap();
    let (blob, _comment) = rest.split_once(' ').unwrap();
    // 51 bytes of an Ed25519 blob are 68 base64 characters, no padding:
    // `AAAA` more decodes to three zero bytes after the key.
    assert_eq!(blob.len(), 68);
    let cases = [
        (
            format!("{kind} {blob} db-01\\nweb-09 x"),
            "a key is one line, and this one has a line break in it",
            "hosts.yaml:17:",
        ),
        (
            format!("{kind} {blob}AAAA db-01"),
            "the key data has 3 bytes after the `ssh-ed25519` key",
            "hosts.yaml:17:",
        ),
    ];
    for (key, problem, place) in cases {
        fs::write(
            f.fleet().join("hosts.yaml"),
            hosts.replace(&format!("\"{}\"", f.db01_pub), &format!("\"{key}\"")),
        )
        .unwrap();
        let check = f.run(&["check"]);
        assert_eq!(check.code, 1, "{key}: {}", check.stderr);
        assert!(
            check.stderr.contains(&format!(
                "error: an entry of `keys` of db-01 is not a usable public key: {problem}\n"
            )),
            "{key}: {}",
            check.stderr
        );
        assert!(check.stderr.contains(place), "{key}: {}", check.stderr);
    }
}

#[test]
fn apply_decrypts_into_the_target_with_mode_0600_for_ssh_and_age_keys() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    // web-01 decrypts with its SSH host key, where apply looks by default.
    let root = f.machine("web-01", "web-01");
    let target = root.path().join("etc/app/db-password");
    let noop = apply(&f.fleet(), root.path(), &["--noop"]);
    assert_eq!(noop.code, 2, "{}{}", noop.stdout, noop.stderr);
    assert!(
        noop.stdout.contains("(not decrypted under --noop)"),
        "{}",
        noop.stdout
    );
    assert!(!target.exists());
    let run = apply(&f.fleet(), root.path(), &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(fs::read_to_string(&target).unwrap(), PLAINTEXT);
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert_eq!(apply(&f.fleet(), root.path(), &[]).code, 0);
    assert_eq!(apply(&f.fleet(), root.path(), &["--noop"]).code, 0);
    // A new secret: --noop sees it by its ciphertext, without decrypting.
    let edited = f.editor("editor.sh", "printf 'rotated-value' > \"$1\"");
    let edit = datum()
        .args(["secret", "edit", "secrets/db.age", "--identity"])
        .arg(f.key("admin"))
        .env("EDITOR", &edited)
        .env_remove("VISUAL")
        .current_dir(f.fleet())
        .output()
        .unwrap();
    assert!(
        edit.status.success(),
        "{}",
        String::from_utf8_lossy(&edit.stderr)
    );
    let noop = apply(&f.fleet(), root.path(), &["--noop"]);
    assert_eq!(noop.code, 2, "{}", noop.stdout);
    assert_eq!(fs::read_to_string(&target).unwrap(), PLAINTEXT);
    assert_eq!(apply(&f.fleet(), root.path(), &[]).code, 2);
    assert_eq!(fs::read_to_string(&target).unwrap(), "rotated-value");
    // web-02 decrypts with a native age identity given by --identity.
    let root2 = f.machine("web-02", "web-02.age");
    let run = apply(
        &f.fleet(),
        root2.path(),
        &["--identity", "/etc/ssh/ssh_host_ed25519_key"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        fs::read_to_string(root2.path().join("etc/app/db-password")).unwrap(),
        "rotated-value"
    );
}

#[test]
fn a_host_that_is_not_a_recipient_fails_that_file_naming_rekey() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    f.set_matcher("role: [web, db]");
    let root = f.machine("db-01", "db-01");
    let run = apply(&f.fleet(), root.path(), &[]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "failed: File[db-password] /etc/app/db-password\n  error: cannot decrypt secret secrets/db.age: this host is not among its recipients"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("run `datum secret rekey secrets/db.age` in the fleet repository"),
        "{}",
        run.stdout
    );
    assert!(!root.path().join("etc/app/db-password").exists());
}

#[test]
fn edit_round_trips_through_the_editor() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let before = f.recipients();
    // The editor sees the plaintext and appends to it.
    let script = f.editor(
        "append.sh",
        "grep -q '^PLAINTEXT-7f3a9c' \"$1\" || exit 9\nprintf '%s' '-and-more' >> \"$1\"",
    );
    let run = f.edit(&f.key("admin"), &script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(f.decrypted(), format!("{PLAINTEXT}-and-more"));
    assert_eq!(f.recipients(), before);
    // A failing editor changes nothing.
    let script = f.editor("fail.sh", "exit 3");
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    assert_eq!(f.edit(&f.key("admin"), &script, &[]).code, 1);
    assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
    // A key that is no recipient cannot open it.
    let run = f.edit(&f.key("db-01"), &script, &[]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("cannot decrypt secrets/db.age: none of the keys given"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_plaintext_is_nowhere_but_in_the_target() {
    let f = Fleet::new();
    let fleet = f.fleet();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(&fleet)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    let mut outputs: Vec<(String, Run)> = Vec::new();
    fn record(outputs: &mut Vec<(String, Run)>, what: &str, run: Run) {
        assert_ne!(run.code, 101, "{what}: {}", run.stderr);
        outputs.push((what.to_owned(), run));
    }
    record(&mut outputs, "encrypt", f.encrypt(PLAINTEXT));
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "one"]);
    // Rotate it, so diff has a secret change to show.
    let script = f.editor(
        "rotate.sh",
        &format!("printf '%s' '{PLAINTEXT}-v2' > \"$1\""),
    );
    let edit = datum()
        .args(["-v", "secret", "edit", "secrets/db.age"])
        .env("DATUM_IDENTITY", f.key("admin"))
        .env("EDITOR", &script)
        .env_remove("VISUAL")
        .current_dir(&fleet)
        .output()
        .unwrap();
    record(&mut outputs, "edit", Run::from(edit));
    let admin = f.key("admin");
    let admin = admin.to_str().unwrap();
    let out = f.tmp.path().join("out");
    let bundle = f.tmp.path().join("web-01.bundle");
    for args in [
        vec!["check"],
        vec!["check", "--format", "json"],
        vec!["render", "web-01"],
        vec!["render", "web-01", "--format", "json"],
        vec!["render", "--all", "--out", out.to_str().unwrap()],
        vec!["explain", "File[db-password]", "--host", "web-01"],
        vec!["explain", "--host", "web-01", "--format", "json"],
        vec!["query", "File[db-password].secret"],
        vec![
            "query",
            "File[db-password].secret",
            "--summary",
            "--format",
            "json",
        ],
        vec!["diff"],
        vec!["diff", "--format", "json"],
        vec!["hosts"],
        vec!["secret", "rekey", "--check"],
        vec!["secret", "rekey", "--identity", admin],
        // The rotation is not committed (diff shows it): bundle HEAD anyway.
        vec![
            "bundle",
            "web-01",
            "--allow-dirty",
            "--out",
            bundle.to_str().unwrap(),
        ],
    ] {
        let run = f.run(&args);
        assert!(
            run.code == 0 || args[0] == "diff",
            "{args:?}: {}",
            run.stderr
        );
        if args.contains(&"json") {
            crate::json_contract::assert_conforms(&args.join(" "), &run);
        }
        record(&mut outputs, &args.join(" "), run);
    }
    let diff = &outputs.iter().find(|(w, _)| w == "diff").unwrap().1;
    assert!(
        diff.stdout.contains("secret_sha256"),
        "diff says the secret changed: {}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("web-01, web-02"),
        "and for whom: {}",
        diff.stdout
    );
    assert!(
        !diff.stdout.contains("@@"),
        "a secret is a changed hash, never a diff: {}",
        diff.stdout
    );
    // Apply from the fleet and from the bundle, with reports.
    let root = f.machine("web-01", "web-01");
    let target = root.path().join("etc/app/db-password");
    for extra in [
        vec!["--noop"],
        vec!["--report"],
        vec!["--format", "json"],
        vec!["--noop", "--format", "json"],
        vec!["-v"],
    ] {
        let run = apply(&fleet, root.path(), &extra);
        record(&mut outputs, &format!("apply {}", extra.join(" ")), run);
    }
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        format!("{PLAINTEXT}-v2")
    );
    let root2 = f.machine("web-01", "web-01");
    let target2 = root2.path().join("etc/app/db-password");
    let run = Run::from(
        datum()
            .args([
                "apply",
                "--report",
                "--root",
                root2.path().to_str().unwrap(),
                "--allow-unsigned",
                "--bundle",
            ])
            .arg(&bundle)
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    record(&mut outputs, "apply --bundle", run);
    assert_eq!(
        fs::read_to_string(&target2).unwrap(),
        PLAINTEXT,
        "the bundle carries the committed ciphertext"
    );
    // Nothing printed holds it.
    let needle = PLAINTEXT.as_bytes();
    for (what, run) in &outputs {
        assert!(
            !run.stdout.contains(PLAINTEXT) && !run.stderr.contains(PLAINTEXT),
            "`datum {what}` printed the plaintext:\n{}{}",
            run.stdout,
            run.stderr
        );
    }
    // No file holds it: the fleet (but the ciphertext), the rendered
    // manifests, the bundle, both roots (reports and state included) but
    // the targets.
    let mut files = Vec::new();
    files_under(&fleet, Path::new("/"), &mut files);
    files_under(&out, Path::new("/"), &mut files);
    files_under(root.path(), &target, &mut files);
    files_under(root2.path(), &target2, &mut files);
    files.push((bundle.clone(), fs::read(&bundle).unwrap()));
    let reports: Vec<_> = files
        .iter()
        .filter(|(p, _)| p.to_string_lossy().contains("var/lib/datum"))
        .collect();
    assert!(
        reports.iter().any(|(p, _)| p.ends_with("secrets")),
        "the state records the secret's hash: {:?}",
        reports.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    assert!(
        reports
            .iter()
            .any(|(p, _)| p.to_string_lossy().contains("reports")),
        "reports were written"
    );
    for (path, bytes) in &files {
        assert!(
            !contains(bytes, needle),
            "{} holds the plaintext",
            path.display()
        );
    }
}

/// An editor that records where the file it edits is, and its modes, keeps
/// a hard link to its inode in `kept`, appends to it and exits `status`.
fn spying_editor(f: &Fleet, kept: &Path, status: u8) -> PathBuf {
    let k = kept.display();
    f.editor(
        &format!("spy-{status}.sh"),
        &format!(
            "printf '%s' \"$1\" > {k}/path\nstat -c %a \"$1\" > {k}/mode\n\
             stat -c %a \"$(dirname \"$1\")\" > {k}/dirmode\nln \"$1\" {k}/link\n\
             printf '%s' '-more' >> \"$1\"\nexit {status}"
        ),
    )
}

/// An editor that signals Datum (found by walking up from its parent) with
/// `signal` while it runs, keeps a hard link to its file in `kept`, then
/// saves a change and exits 0.
fn signalling_editor(f: &Fleet, kept: &Path, signal: &str) -> PathBuf {
    let k = kept.display();
    f.editor(
        &format!("signal-{signal}.sh"),
        &format!(
            "p=$PPID\nwhile [ \"$(cat /proc/$p/comm)\" != datum ]; do p=$(cut -d' ' -f4 /proc/$p/stat); done\n\
             ln \"$1\" {k}/link\nkill -{signal} $p\nsleep 0.2\n\
             printf '%s' '-more' >> \"$1\"\nexit 0"
        ),
    )
}

#[test]
fn a_signal_while_the_editor_runs_never_leaves_the_plaintext_behind() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let scratch = f.tmp.path().join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    let sealed = fs::read(f.fleet().join("secrets/db.age")).unwrap();
    // A hang-up or termination: the edit is dropped, the copy wiped.
    for signal in ["HUP", "TERM"] {
        let kept = f.tmp.path().join(format!("kept-{signal}"));
        fs::create_dir_all(&kept).unwrap();
        let editor = signalling_editor(&f, &kept, signal);
        let run = f.edit(&f.key("admin"), &editor, &[("TMPDIR", Some(&scratch))]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "stopped by SIG{signal} while the editor `{}` ran; secrets/db.age is unchanged",
                editor.display()
            )),
            "{}",
            run.stderr
        );
        let linked = fs::read(kept.join("link")).unwrap();
        assert!(
            !linked.is_empty() && linked.iter().all(|b| *b == 0),
            "{linked:?}"
        );
        assert_eq!(fs::read_dir(&scratch).unwrap().count(), 0);
        assert_eq!(fs::read(f.fleet().join("secrets/db.age")).unwrap(), sealed);
    }
    // Ctrl-C reaches the editor too, which may well carry on: Datum does.
    let kept = f.tmp.path().join("kept-INT");
    fs::create_dir_all(&kept).unwrap();
    let editor = signalling_editor(&f, &kept, "INT");
    let run = f.edit(&f.key("admin"), &editor, &[("TMPDIR", Some(&scratch))]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(f.decrypted(), format!("{PLAINTEXT}-more"));
    assert_eq!(fs::read_dir(&scratch).unwrap().count(), 0);
}

#[test]
fn secret_commands_leave_no_core_file() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let kept = f.tmp.path().join("kept");
    fs::create_dir_all(&kept).unwrap();
    let editor = f.editor(
        "limits.sh",
        &format!(
            "p=$PPID\nwhile [ \"$(cat /proc/$p/comm)\" != datum ]; do p=$(cut -d' ' -f4 /proc/$p/stat); done\n\
             grep 'Max core file size' /proc/$p/limits > {}/core",
            kept.display()
        ),
    );
    let run = f.edit(&f.key("admin"), &editor, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let core = fs::read_to_string(kept.join("core")).unwrap();
    let words: Vec<&str> = core.split_whitespace().collect();
    assert_eq!(words[words.len() - 3..], ["0", "0", "bytes"], "{core}");
}

#[test]
fn edit_keeps_the_plaintext_in_a_private_directory_and_zeroes_the_file() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let scratch = f.tmp.path().join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    // Saved or not (the editor exits 0, then 3), the file is zeroed.
    for (status, code) in [(0, 0), (3, 1)] {
        let kept = f.tmp.path().join(format!("kept-{status}"));
        fs::create_dir_all(&kept).unwrap();
        let editor = spying_editor(&f, &kept, status);
        let saved = f.decrypted().len() + "-more".len();
        let run = f.edit(&f.key("admin"), &editor, &[("TMPDIR", Some(&scratch))]);
        assert_eq!(run.code, code, "{}", run.stderr);
        let read = |name: &str| fs::read_to_string(kept.join(name)).unwrap();
        let path = PathBuf::from(read("path"));
        let dir = path.parent().unwrap();
        assert_eq!(dir.parent().unwrap(), scratch, "{}", path.display());
        assert!(
            dir.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("datum-secret-"),
            "{}",
            path.display()
        );
        assert_eq!(path.file_name().unwrap(), "db", "named after the secret");
        assert_eq!(read("dirmode").trim(), "700");
        assert_eq!(read("mode").trim(), "600");
        assert!(!dir.exists(), "the directory is removed");
        // The inode the editor held: as long as what was saved, all zeros.
        let linked = fs::read(kept.join("link")).unwrap();
        assert_eq!(linked.len(), saved);
        assert!(linked.iter().all(|b| *b == 0), "{linked:?}");
    }
    assert_eq!(f.decrypted(), format!("{PLAINTEXT}-more"));
    assert_eq!(fs::read_dir(&scratch).unwrap().count(), 0);
}

#[test]
fn edit_prefers_the_runtime_directory_when_tmpdir_is_unset() {
    let f = Fleet::new();
    assert_eq!(f.encrypt(PLAINTEXT).code, 0);
    let runtime = f.tmp.path().join("runtime");
    let kept = f.tmp.path().join("kept");
    fs::create_dir_all(&runtime).unwrap();
    fs::create_dir_all(&kept).unwrap();
    let editor = spying_editor(&f, &kept, 0);
    let env = [
        ("TMPDIR", None),
        ("XDG_RUNTIME_DIR", Some(runtime.as_path())),
    ];
    // A runtime directory others may enter (one inherited through `su` or
    // `sudo -E` is another's) is passed over for the system's.
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o755)).unwrap();
    let run = f.edit(&f.key("admin"), &editor, &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = PathBuf::from(fs::read_to_string(kept.join("path")).unwrap());
    assert_ne!(path.parent().unwrap().parent().unwrap(), runtime);
    // Private to this user, as systemd makes it: used.
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
    fs::remove_dir_all(&kept).unwrap();
    fs::create_dir_all(&kept).unwrap();
    let run = f.edit(&f.key("admin"), &editor, &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = PathBuf::from(fs::read_to_string(kept.join("path")).unwrap());
    assert_eq!(path.parent().unwrap().parent().unwrap(), runtime);
    // TMPDIR, when set, is the user's choice and wins.
    let scratch = f.tmp.path().join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    fs::remove_dir_all(&kept).unwrap();
    fs::create_dir_all(&kept).unwrap();
    let env = [
        ("TMPDIR", Some(scratch.as_path())),
        ("XDG_RUNTIME_DIR", Some(runtime.as_path())),
    ];
    assert_eq!(f.edit(&f.key("admin"), &editor, &env).code, 0);
    let path = PathBuf::from(fs::read_to_string(kept.join("path")).unwrap());
    assert_eq!(path.parent().unwrap().parent().unwrap(), scratch);
}
