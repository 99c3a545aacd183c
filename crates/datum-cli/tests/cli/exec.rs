//! `datum apply` with Execs under `--root`, chrooted for real into a
//! machine root that holds this machine's `sh`, `test`, `touch`, `rm` and
//! `cp` (with their libraries). Each is a wrapper that logs the command
//! line it was started with to `ROOT/ran.log` (the outermost one only: a
//! program a logged one starts is not logged) and runs the real program.
//! Commands name paths inside the root relatively (`touch srv/ready`), as
//! their working directory is the root's `/`. Everything else is the real
//! binary: guards, refreshes, failures, noop, the report.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::common::{Run, apply_under};

/// The programs the fleets below run, each with the path its wrapper has.
const PROGRAMS: [(&str, &str); 6] = [
    ("sh", "/usr/bin/sh"),
    ("/bin/sh", "/bin/sh"),
    ("test", "/usr/bin/test"),
    ("touch", "/usr/bin/touch"),
    ("rm", "/usr/bin/rm"),
    ("cp", "/usr/bin/cp"),
];

/// Logs how it was started, unless a logged program started it, then runs
/// the real program.
fn wrapper(shown: &str, real: &str) -> String {
    format!(
        "#!/usr/lib/real/dash\n[ -n \"$DATUM_TEST_LOGGED\" ] || printf '%s\\n' \"{shown} $*\" >> /ran.log\nexport DATUM_TEST_LOGGED=1\nexec {real} \"$@\"\n"
    )
}

/// A machine root, a fleet beside it, and a directory holding the fake chroot.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new(resources: &str) -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene { dir };
        for d in ["root/etc", "root/srv", "fleet"] {
            fs::create_dir_all(s.dir.path().join(d)).unwrap();
        }
        fs::write(
            s.root().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\n",
        )
        .unwrap();
        let root = s.root();
        datum_testkit::machine::install_program_at(&root, "/bin/sh", "/usr/lib/real/dash");
        for (program, at) in PROGRAMS {
            let name = program.rsplit('/').next().unwrap();
            let real = format!("/usr/lib/real/{name}");
            datum_testkit::machine::install_program_at(&root, program, &real);
            let shown = if program.starts_with('/') {
                program
            } else {
                name
            };
            let to = root.join(at.trim_start_matches('/'));
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::write(&to, wrapper(shown, &real)).unwrap();
            fs::set_permissions(&to, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(
            s.fleet().join("datum.yaml"),
            "datum: v1alpha1\ntype: Fleet\nname: exec\n",
        )
        .unwrap();
        fs::write(
            s.fleet().join("hosts.yaml"),
            "datum: v1alpha1\ntype: Host\nname: app-001\n",
        )
        .unwrap();
        s.layer(resources);
        s
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn fleet(&self) -> PathBuf {
        self.dir.path().join("fleet")
    }

    fn layer(&self, resources: &str) {
        fs::write(
            self.fleet().join("layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: app\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
            ),
        )
        .unwrap();
    }

    /// `datum apply --host app-001 --root ROOT ARGS`; the root's path in
    /// the output reads `[ROOT]`.
    fn apply(&self, args: &[&str]) -> Run {
        apply_under(&self.root(), "app-001", &self.fleet(), args)
    }

    /// The command lines run since the last call.
    fn ran(&self) -> Vec<String> {
        let log = self.root().join("ran.log");
        let text = fs::read_to_string(&log).unwrap_or_default();
        let _ = fs::remove_file(&log);
        text.lines().map(str::to_owned).collect()
    }

    fn exists(&self, path: &str) -> bool {
        self.root().join(path).exists()
    }
}

const GUARDS: &str = r#"  Exec[init]:
    command: [sh, -c, "echo initialised; touch srv/ready"]
    creates: /srv/ready
  Exec[only-flagged]:
    command: [touch, srv/flagged-ran]
    onlyif: [test, -e, srv/flag]
    requires: Exec[init]
  Exec[unless-ready]:
    command: [touch, srv/unless-ran]
    unless: [test, -e, srv/ready]
    requires: Exec[init]
"#;

#[test]
fn each_guard_decides_whether_its_command_runs() {
    let s = Scene::new(GUARDS);
    let first = s.apply(&[]);
    assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
    insta::assert_snapshot!("guards_first_run", first.stdout);
    assert_eq!(
        s.ran(),
        [
            "sh -c echo initialised; touch srv/ready",
            "test -e srv/flag",
            "test -e srv/ready"
        ]
    );
    assert!(s.exists("srv/ready"));
    assert!(!s.exists("srv/flagged-ran") && !s.exists("srv/unless-ran"));
    // `creates` now exists: not even a command runs for it. The others
    // ask their guards again, which still say no.
    let second = s.apply(&[]);
    assert_eq!(second.code, 0, "{}{}", second.stdout, second.stderr);
    assert_eq!(
        second.stdout,
        "applying app-001: 3 resources, under [ROOT]\nsummary: 3 unchanged\n"
    );
    assert_eq!(s.ran(), ["test -e srv/flag", "test -e srv/ready"]);
    // The flag appears: onlyif holds, its command runs, once per run.
    fs::write(s.root().join("srv/flag"), "").unwrap();
    let third = s.apply(&[]);
    assert_eq!(third.code, 2);
    assert_eq!(
        s.ran(),
        [
            "test -e srv/flag",
            "touch srv/flagged-ran",
            "test -e srv/ready"
        ]
    );
    assert!(s.exists("srv/flagged-ran"));
}

const ALIASES: &str = r#"  File[aliases]:
    path: /etc/aliases
    content: "root: ops\n"
  Exec[newaliases]:
    command: [sh, -c, "cp etc/aliases etc/aliases.db; echo rebuilt aliases"]
    refresh_only: true
    run_on: File[aliases]
"#;

#[test]
fn a_refresh_only_exec_runs_after_its_file_changes_and_only_then() {
    let s = Scene::new(ALIASES);
    let first = s.apply(&[]);
    assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
    insta::assert_snapshot!("refresh_after_file_change", first.stdout);
    assert_eq!(
        fs::read_to_string(s.root().join("etc/aliases.db")).unwrap(),
        "root: ops\n"
    );
    assert_eq!(s.ran().len(), 1);
    // Nothing changed: nothing runs.
    let second = s.apply(&[]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    assert!(s.ran().is_empty());
    // The fleet changes the file: the command runs again, after the write.
    s.layer(&ALIASES.replace("root: ops", "root: ops, oncall"));
    let third = s.apply(&[]);
    assert_eq!(third.code, 2);
    assert_eq!(s.ran().len(), 1);
    assert_eq!(
        fs::read_to_string(s.root().join("etc/aliases.db")).unwrap(),
        "root: ops, oncall\n"
    );
    assert_eq!(
        fs::read_to_string(s.root().join("var/lib/datum/refreshes")).unwrap(),
        ""
    );
}

const MIGRATE: &str = r#"  Exec[migrate]:
    command: [sh, -c, "echo applying 0042; echo 'error: database is locked' >&2; exit 3"]
    unless: [test, -e, srv/migrated]
  File[app-ready]:
    path: /srv/app-ready
    content: "ready\n"
    requires: Exec[migrate]
  File[motd]:
    path: /etc/motd
    content: "hello\n"
"#;

#[test]
fn a_failing_command_fails_its_exec_and_skips_its_dependents() {
    let s = Scene::new(MIGRATE);
    let run = s.apply(&[]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    insta::assert_snapshot!("failing_command_skips_dependents", run.stdout);
    assert!(!s.exists("srv/app-ready"));
    assert!(s.exists("etc/motd"));
    s.ran();
    let json = s.apply(&["--format", "json"]);
    assert_eq!(json.code, 4, "{}", json.stdout);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let migrate = &report["resources"][0];
    assert_eq!(migrate["id"], "Exec[migrate]");
    assert_eq!(migrate["status"], "failed");
    assert_eq!(
        migrate["command"],
        serde_json::json!({
            "exit": "exit 3",
            "code": 3,
            "output": "applying 0042\nerror: database is locked\n",
            "omitted_bytes": 0
        })
    );
    assert_eq!(report["resources"][1]["status"], "skipped");
}

#[test]
fn noop_runs_no_command_and_says_what_would_run() {
    let s = Scene::new(&format!("{GUARDS}{ALIASES}"));
    let noop = s.apply(&["--noop"]);
    assert_eq!(noop.code, 2, "{}{}", noop.stdout, noop.stderr);
    insta::assert_snapshot!("noop", noop.stdout);
    assert!(s.ran().is_empty(), "a command ran under --noop");
    assert!(!s.exists("srv/ready") && !s.exists("var"));
}

const CONVERGING: &str = r#"  Exec[migrate]:
    command: ["touch srv/migrated"]
    shell: true
    unless: ["test -e srv/migrated"]
  Exec[seed]:
    command: [rm, srv/needs-seed]
    onlyif: [test, -e, srv/needs-seed]
"#;

#[test]
fn noop_asks_the_guards_so_a_converged_host_exits_0() {
    let s = Scene::new(CONVERGING);
    let pending = s.apply(&["--noop"]);
    assert_eq!(pending.code, 2, "{}{}", pending.stdout, pending.stderr);
    assert_eq!(
        pending.stdout,
        "noop for app-001: 2 resources, under [ROOT]; nothing will be changed
would change: Exec[migrate]
  run /bin/sh -c 'touch srv/migrated'
  note: `unless` asked under --noop (/bin/sh -c 'test -e srv/migrated'): exit 1, so it lets the command run
unchanged: Exec[seed]
  note: `onlyif` asked under --noop (test -e srv/needs-seed): exit 1, so the command would not run
summary: 1 would change, 1 unchanged
"
    );
    assert_eq!(
        s.ran(),
        ["/bin/sh -c test -e srv/migrated", "test -e srv/needs-seed"]
    );
    assert!(!s.exists("srv/migrated") && !s.exists("var"));
    assert_eq!(s.apply(&[]).code, 2);
    assert!(s.exists("srv/migrated"));
    s.ran();
    // Converged: the guards say so, and monitoring hears 0.
    let converged = s.apply(&["--noop", "--format", "json"]);
    assert_eq!(
        converged.code, 0,
        "{}{}",
        converged.stdout, converged.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&converged.stdout).unwrap();
    assert_eq!(report["summary"]["unchanged"], 2);
    assert_eq!(
        report["resources"][0]["notes"],
        serde_json::json!([
            "`unless` asked under --noop (/bin/sh -c 'test -e srv/migrated'): exit 0, so the command would not run"
        ])
    );
    assert_eq!(
        s.ran(),
        ["/bin/sh -c test -e srv/migrated", "test -e srv/needs-seed"]
    );
    // The machine drifts: the guard sees it.
    fs::write(s.root().join("srv/needs-seed"), "").unwrap();
    let drifted = s.apply(&["--noop"]);
    assert_eq!(drifted.code, 2, "{}", drifted.stdout);
    assert!(
        drifted
            .stdout
            .contains("would change: Exec[seed]\n  run rm srv/needs-seed\n"),
        "{}",
        drifted.stdout
    );
    assert!(s.exists("srv/needs-seed"));
}

#[test]
fn a_guard_that_cannot_start_under_noop_fails_its_exec() {
    let s = Scene::new(&format!(
        "{CONVERGING}  Exec[as-ghost]:\n    command: [touch, srv/x]\n    unless: [test, -e, srv/x]\n    user: ghost\n"
    ));
    let noop = s.apply(&["--noop"]);
    assert_eq!(noop.code, 6, "{}{}", noop.stdout, noop.stderr);
    assert!(
        noop.stdout.starts_with(
            "noop for app-001: 3 resources, under [ROOT]; nothing will be changed
failed: Exec[as-ghost]
  error: `unless` (test -e srv/x) did not start: user ghost does not exist
"
        ),
        "{}",
        noop.stdout
    );
    assert!(!s.ran().contains(&"touch srv/x".to_owned()));
}

#[test]
fn a_guard_that_cannot_start_fails_its_exec_instead_of_answering() {
    let s = Scene::new(
        "  Exec[seed]:\n    command: [rm, srv/needs-seed]\n    onlyif: [test, -e, srv/needs-seed]\n",
    );
    fs::remove_file(s.root().join("usr/bin/test")).unwrap();
    for args in [&["--noop"][..], &[]] {
        let run = s.apply(args);
        assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(
                "failed: Exec[seed]
  error: `onlyif` (test -e srv/needs-seed) did not start: cannot run `test -e srv/needs-seed`: no program `test` in PATH inside the root (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
"
            ),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.ends_with("summary: 1 failed\n"),
            "{}",
            run.stdout
        );
    }
}

/// A shared library whose constructor creates `marker` wherever it is
/// loaded: what an `LD_PRELOAD` would run.
fn preload_library(dir: &std::path::Path, marker: &std::path::Path) -> PathBuf {
    let c = dir.join("evil.c");
    fs::write(
        &c,
        format!(
            "#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void planted(void) {{ int fd = open(\"{}\", O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let so = dir.join("evil.so");
    let built = std::process::Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .expect("gcc runs (CI installs it)");
    assert!(built.success());
    so
}

#[test]
fn an_execs_environment_reaches_only_the_command_inside_the_root() {
    // LD_PRELOAD names a library outside the root. Set on a program of the
    // host (chroot(8), as Datum once did), it would run as root there,
    // before any chroot: the marker outside would appear. Set on the
    // command itself, inside the root, the path names nothing there.
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran-on-the-host");
    let so = preload_library(outside.path(), &marker);
    let resources = format!(
        r#"  Exec[migrate]:
    command: [touch, srv/migrated]
    unless: [test, -e, srv/migrated]
    environment: ["LD_PRELOAD={}"]
"#,
        so.display()
    );
    let s = Scene::new(&resources);
    let noop = s.apply(&["--noop"]);
    assert_eq!(noop.code, 2, "{}{}", noop.stdout, noop.stderr);
    assert!(!marker.exists(), "the guard's environment reached the host");
    let run = s.apply(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(s.exists("srv/migrated"));
    assert!(
        !marker.exists(),
        "the command's environment reached the host"
    );
    // The same library inside the root, at the same path: the command
    // loads it there, and what it does stays inside the root.
    let inside = s.root().join(so.strip_prefix("/").unwrap());
    fs::create_dir_all(inside.parent().unwrap()).unwrap();
    fs::copy(&so, &inside).unwrap();
    fs::remove_file(s.root().join("srv/migrated")).unwrap();
    let run = s.apply(&[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(!marker.exists(), "the library ran on the host");
    assert!(
        s.root().join(marker.strip_prefix("/").unwrap()).exists(),
        "the environment never reached the command"
    );
}

#[test]
fn execs_that_do_not_say_when_they_run_are_refused_with_their_place() {
    let resolving = r#"  File[conf]:
    path: /etc/app.conf
    content: "x\n"
  Exec[shell-args]:
    command: [echo, hi]
    shell: true
    creates: /srv/x
  Exec[refresh-alone]:
    command: [reload]
    refresh_only: true
  Exec[run-on-alone]:
    command: [reload]
    creates: /srv/y
    run_on: File[conf]
"#;
    let s = Scene::new(&format!(
        "{resolving}  Exec[bad-values]:\n    command: []\n    creates: /srv/z\n    timeout: 0\n    environment: [\"1X=2\"]\n"
    ));
    let check = crate::common::run_in(&s.fleet(), &["check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    insta::assert_snapshot!("refused_values", check.stderr);
    s.layer(resolving);
    let check = crate::common::run_in(&s.fleet(), &["check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    insta::assert_snapshot!("refused", check.stderr);
    // Nothing is applied from a fleet that does not resolve.
    let run = s.apply(&[]);
    assert_eq!(run.code, 1);
    assert!(s.ran().is_empty());
    assert!(!s.exists("etc/app.conf"));
}

#[test]
fn a_run_that_may_not_enter_the_root_fails_each_exec_and_says_why() {
    let s = Scene::new("  Exec[x]:\n    command: [touch, srv/x]\n    creates: /srv/x\n");
    // Everything belongs to `nobody`, who runs Datum: files can be written,
    // the root cannot be entered.
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(s.dir.path())
        .status()
        .unwrap();
    assert!(chown.success());
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("datum"))
        .args(["apply", "--host", "app-001", "--root"])
        .arg(s.root())
        .arg("--fleet")
        .arg(s.fleet())
        .env("NO_COLOR", "1")
        .output()
        .expect("setpriv runs");
    let run = Run::from(out);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "  error: cannot run `touch srv/x`: not permitted to enter the root (Operation not permitted (os error 1)): commands under --root need Datum to run as root\n"
        ),
        "{}",
        run.stdout
    );
    assert!(!s.exists("srv/x"));
}
