//! Execs in the engine, with a fake runner that logs every command line
//! and answers with the exit status and output it is told to: each guard,
//! refresh-only after a change (and owed across a failure and a killed
//! run), a failing command skipping what requires it, and noop.

use std::collections::BTreeMap;
use std::path::PathBuf;

use datum_apply::provider::exec::{Exit, Invocation, Ran, Runner, shown};
use datum_apply::report::CommandOutput;

use super::*;

/// How a command line ends and what it prints, or why it did not start.
type Answer = Result<(Exit, String), String>;

/// Answers each command line with an exit status and output (default:
/// exit 0, no output), or as one that did not start, logging `run LINE`;
/// with `hang`, writes that file and sleeps instead of running `hang_on`.
#[derive(Clone)]
pub struct FakeRunner {
    log: Log,
    answers: Rc<RefCell<BTreeMap<String, Answer>>>,
    hang: Option<(String, PathBuf)>,
}

impl FakeRunner {
    pub fn new(log: &Log) -> FakeRunner {
        FakeRunner {
            log: log.clone(),
            answers: Rc::default(),
            hang: None,
        }
    }

    fn answer(&self, line: &str, code: i32, output: &str) {
        self.end(line, Exit::Code(code), output);
    }

    fn end(&self, line: &str, exit: Exit, output: &str) {
        self.answers
            .borrow_mut()
            .insert(line.to_owned(), Ok((exit, output.to_owned())));
    }

    /// `line` does not start, for `why`.
    fn refuse(&self, line: &str, why: &str) {
        self.answers
            .borrow_mut()
            .insert(line.to_owned(), Err(why.to_owned()));
    }
}

impl Runner for FakeRunner {
    fn run(&self, inv: &Invocation) -> Result<Ran, Failure> {
        let line = shown(&inv.argv);
        self.log.borrow_mut().push(format!("run {line}"));
        if let Some((hang_on, marker)) = &self.hang
            && *hang_on == line
        {
            fs::write(marker, "running").unwrap();
            std::thread::sleep(Duration::from_secs(120));
            return Err(Failure::new("not killed in time"));
        }
        let answer = self.answers.borrow().get(&line).cloned();
        let (exit, output) = answer
            .unwrap_or(Ok((Exit::Code(0), String::new())))
            .map_err(Failure::new)?;
        Ok(Ran {
            exit,
            output,
            omitted: 0,
        })
    }
}

/// Providers whose Execs run through `runner`.
fn with_runner(root: &Root, log: &Log, runner: &FakeRunner) -> Providers {
    let mut p = providers(
        root,
        log,
        &[],
        FakeServices::new(log, OnRestart::Restart, &[]),
    );
    p.exec = Execs::new(root.clone(), Box::new(runner.clone()));
    p
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

#[test]
fn creates_runs_the_command_until_the_path_exists() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    runner.answer("/usr/local/bin/init-db --fresh", 0, "initialised\n");
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(
        "
  Exec[init-db]:
    command: [/usr/local/bin/init-db, --fresh]
    creates: /etc/db-ready
",
    );
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 1);
    let o = status_of(&outcomes, "Exec[init-db]");
    assert_eq!(
        o.changes,
        [Change::set(
            Attribute::Run,
            "/usr/local/bin/init-db --fresh"
        )]
    );
    assert_eq!(
        o.command,
        Some(CommandOutput {
            exit: Exit::Code(0),
            output: "initialised\n".into(),
            omitted: 0
        })
    );
    assert_eq!(taken(&log), ["run /usr/local/bin/init-db --fresh"]);
    // The fake made nothing: until the path is there, it runs again.
    run(&items, &p, &root, false);
    assert_eq!(taken(&log), ["run /usr/local/bin/init-db --fresh"]);
    fs::write(dir.path().join("etc/db-ready"), "").unwrap();
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(summary.unchanged, 1);
    assert_eq!(status_of(&outcomes, "Exec[init-db]").command, None);
    assert!(taken(&log).is_empty());
}

/// An Exec per guard outcome: `onlyif` fails, `unless` succeeds, `unless`
/// fails (the one that runs), and `onlyif` holds but `unless` says done.
const GUARDS: &str = "
  Exec[a]:
    command: [do-a]
    onlyif: [check-a]
  Exec[b]:
    command: [do-b]
    unless: [check-b]
  Exec[c]:
    command: [do-c]
    unless: [check-c]
  Exec[d]:
    command: [do-d]
    onlyif: [check-d]
    unless: [check-d]
";

/// A runner answering the checks of [`GUARDS`].
fn guard_runner(log: &Log) -> FakeRunner {
    let runner = FakeRunner::new(log);
    for (line, code) in [
        ("check-a", 1),
        ("check-b", 0),
        ("check-c", 1),
        ("check-d", 0),
    ] {
        runner.answer(line, code, "");
    }
    runner
}

#[test]
fn onlyif_and_unless_run_first_and_decide_by_their_exit() {
    let (_dir, root, log) = scene();
    let p = with_runner(&root, &log, &guard_runner(&log));
    let items = fleet_items(GUARDS);
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!((summary.changed, summary.unchanged), (1, 3));
    assert_eq!(status_of(&outcomes, "Exec[c]").status, Status::Changed);
    // Notes of the answers are for --noop only.
    assert!(outcomes.iter().all(|o| o.notes.is_empty()), "{outcomes:?}");
    assert_eq!(
        taken(&log),
        [
            "run check-a",
            "run check-b",
            "run check-c",
            "run do-c",
            // onlyif holds, then unless says it is done already.
            "run check-d",
            "run check-d"
        ]
    );
}

#[test]
fn a_shell_command_is_handed_to_sh_and_user_cwd_environment_and_timeout_pass_through() {
    let (_dir, root, log) = scene();
    struct Seen(Rc<RefCell<Vec<Invocation>>>);
    impl Runner for Seen {
        fn run(&self, inv: &Invocation) -> Result<Ran, Failure> {
            self.0.borrow_mut().push(inv.clone());
            Ok(Ran {
                exit: Exit::Code(1),
                output: String::new(),
                omitted: 0,
            })
        }
    }
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut p = with_runner(&root, &log, &FakeRunner::new(&log));
    p.exec = Execs::new(root.clone(), Box::new(Seen(seen.clone())));
    let items = fleet_items(
        "
  Exec[reload]:
    command: [\"newaliases && postfix reload\"]
    shell: true
    unless: [\"test -e /run/ok\"]
    user: postfix
    cwd: /var/spool/postfix
    environment: [LC_ALL=C, \"EMPTY=\"]
    timeout: 20
",
    );
    let (_, outcomes) = run(&items, &p, &root, false);
    let seen = seen.borrow();
    let argvs: Vec<&[String]> = seen.iter().map(|i| i.argv.as_slice()).collect();
    assert_eq!(
        argvs,
        [
            ["/bin/sh", "-c", "test -e /run/ok"],
            ["/bin/sh", "-c", "newaliases && postfix reload"]
        ]
    );
    for inv in seen.iter() {
        assert_eq!(inv.user.as_deref(), Some("postfix"));
        assert_eq!(inv.cwd.as_deref(), Some("/var/spool/postfix"));
        assert_eq!(
            inv.environment,
            [
                ("LC_ALL".to_owned(), "C".to_owned()),
                ("EMPTY".into(), "".into())
            ]
        );
        assert_eq!(inv.timeout, Duration::from_secs(20));
    }
    let o = status_of(&outcomes, "Exec[reload]");
    assert_eq!(o.status, Status::Failed);
    assert_eq!(reason(o).as_deref(), Some("the command failed: exit 1"));
}

const ALIASES: &str = "
  File[aliases]:
    path: /etc/aliases
    content: \"root: ops\\n\"
  Exec[newaliases]:
    command: [newaliases]
    refresh_only: true
    run_on: File[aliases]
";

#[test]
fn a_refresh_only_exec_runs_when_what_it_runs_on_changed_and_only_then() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(ALIASES);
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 2);
    assert_eq!(
        status_of(&outcomes, "Exec[newaliases]").changes,
        [
            Change::set(Attribute::Refresh, "File[aliases] changed"),
            Change::set(Attribute::Run, "newaliases")
        ]
    );
    assert_eq!(taken(&log), ["run newaliases"]);
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!(summary.unchanged, 2);
    assert!(taken(&log).is_empty());
    // An edit by hand is put back, and the command runs for it.
    fs::write(dir.path().join("etc/aliases"), "root: me\n").unwrap();
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 2);
    assert_eq!(taken(&log), ["run newaliases"]);
    // Nothing is left owed.
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/refreshes")).unwrap(),
        ""
    );
}

#[test]
fn a_failing_command_fails_its_exec_with_its_output_and_skips_what_requires_it() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    runner.answer(
        "migrate --all",
        3,
        "applying 0042\nerror: database is locked\n",
    );
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(
        "
  Exec[migrate]:
    command: [migrate, --all]
    unless: [migrated]
  File[app-conf]:
    path: /etc/app.conf
    content: \"ready\\n\"
    requires: Exec[migrate]
  File[motd]:
    path: /etc/motd
    content: \"hello\\n\"
",
    );
    runner.answer("migrated", 1, "");
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(
        (summary.changed, summary.failed, summary.skipped),
        (1, 1, 1)
    );
    let m = status_of(&outcomes, "Exec[migrate]");
    assert_eq!(m.status, Status::Failed);
    assert_eq!(reason(m).as_deref(), Some("the command failed: exit 3"));
    assert_eq!(
        m.command,
        Some(CommandOutput {
            exit: Exit::Code(3),
            output: "applying 0042\nerror: database is locked\n".into(),
            omitted: 0
        })
    );
    let conf = status_of(&outcomes, "File[app-conf]");
    assert_eq!(
        (conf.status, reason(conf).as_deref()),
        (Status::Skipped, Some("Exec[migrate] failed"))
    );
    assert!(!dir.path().join("etc/app.conf").exists());
    assert!(dir.path().join("etc/motd").exists());
    // The report shows the command's end and output under the change.
    let mut human = HumanReporter::new(Vec::new());
    human.resource(m).unwrap();
    assert_eq!(
        String::from_utf8(human.into_inner()).unwrap(),
        "failed: Exec[migrate]\n  run migrate --all\n  exit 3\n  | applying 0042\n  | error: database is locked\n  error: the command failed: exit 3\n"
    );
}

#[test]
fn noop_asks_the_guards_and_never_runs_the_command() {
    let (dir, root, log) = scene();
    fs::write(dir.path().join("etc/done"), "").unwrap();
    let p = with_runner(&root, &log, &guard_runner(&log));
    let items = fleet_items(&format!(
        "{GUARDS}  Exec[done]:\n    command: [setup]\n    creates: /etc/done\n"
    ));
    let (summary, outcomes) = run(&items, &p, &root, true);
    // The guards, as a real run asks them; no command.
    assert_eq!(
        taken(&log),
        [
            "run check-a",
            "run check-b",
            "run check-c",
            "run check-d",
            "run check-d"
        ]
    );
    assert_eq!((summary.would_change, summary.unchanged), (1, 4));
    let notes = |id: &str| status_of(&outcomes, id).notes.clone();
    assert_eq!(
        notes("Exec[a]"),
        ["`onlyif` asked under --noop (check-a): exit 1, so the command would not run"]
    );
    assert_eq!(
        notes("Exec[b]"),
        ["`unless` asked under --noop (check-b): exit 0, so the command would not run"]
    );
    let c = status_of(&outcomes, "Exec[c]");
    assert_eq!(c.status, Status::WouldChange);
    assert_eq!(c.changes, [Change::set(Attribute::Run, "do-c")]);
    assert_eq!(
        c.notes,
        ["`unless` asked under --noop (check-c): exit 1, so it lets the command run"]
    );
    assert_eq!(c.command, None);
    assert_eq!(
        notes("Exec[d]"),
        [
            "`onlyif` asked under --noop (check-d): exit 0, so it lets the command run",
            "`unless` asked under --noop (check-d): exit 0, so the command would not run"
        ]
    );
    // `creates` is looked at; nothing to ask, nothing to note.
    let done = status_of(&outcomes, "Exec[done]");
    assert_eq!((done.status, done.notes.len()), (Status::Unchanged, 0));
    assert!(!dir.path().join("var").exists(), "noop wrote state");
}

#[test]
fn noop_does_not_ask_guards_before_what_would_change_first() {
    let (dir, root, log) = scene();
    fs::write(dir.path().join("etc/marker"), "here\n").unwrap();
    let runner = FakeRunner::new(&log);
    // Asked of the machine as it is, both guards would say "done".
    runner.answer("db-newer", 0, "");
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(&format!(
        "{ALIASES}    unless: [db-newer]
  File[transport]:
    path: /etc/transport
    content: \"relay\\n\"
  Exec[postmap]:
    command: [postmap]
    unless: [db-newer]
    requires: File[transport]
  User[deploy]:
    name: deploy
  File[marker]:
    path: /etc/marker
    content: \"here\\n\"
    requires: User[deploy]
  Exec[as-deploy]:
    command: [deploy-it]
    unless: [db-newer]
    user: deploy
    requires: File[marker]
  Exec[indirect]:
    command: [deploy-it]
    unless: [db-newer]
    requires: File[marker]
"
    ));
    let (summary, outcomes) = run(&items, &p, &root, true);
    assert!(taken(&log).is_empty(), "a guard was asked");
    assert_eq!((summary.would_change, summary.unchanged), (7, 1));
    // File[marker] is unchanged, but what it comes after would change.
    assert_eq!(
        status_of(&outcomes, "Exec[indirect]").notes,
        [
            "`unless` not asked under --noop (db-newer): User[deploy] would change first, and a real run asks it after that"
        ]
    );
    let n = status_of(&outcomes, "Exec[newaliases]");
    assert_eq!(
        n.changes,
        [
            Change::set(Attribute::Refresh, "File[aliases] changed"),
            Change::set(Attribute::Run, "newaliases")
        ]
    );
    assert_eq!(
        n.notes,
        [
            "`unless` not asked under --noop (db-newer): File[aliases] would change first, and a real run asks it after that"
        ]
    );
    let pm = status_of(&outcomes, "Exec[postmap]");
    assert_eq!(pm.status, Status::WouldChange);
    assert_eq!(
        pm.notes,
        [
            "`unless` not asked under --noop (db-newer): File[transport] would change first, and a real run asks it after that"
        ]
    );
    assert_eq!(
        status_of(&outcomes, "Exec[as-deploy]").notes,
        [
            "`unless` not asked under --noop (db-newer): User[deploy] would change first, and a real run asks it after that"
        ]
    );
    // Once nothing before them would change, the guards are asked.
    fs::write(dir.path().join("etc/aliases"), "root: ops\n").unwrap();
    fs::write(dir.path().join("etc/transport"), "relay\n").unwrap();
    let items: Vec<Item> = items
        .into_iter()
        .filter(|i| i.id.to_string() != "User[deploy]")
        .collect();
    let (summary, outcomes) = run(&items, &p, &root, true);
    assert_eq!((summary.would_change, summary.unchanged), (0, 7));
    // The refresh is not due: nothing is asked for it.
    assert_eq!(
        taken(&log),
        ["run db-newer", "run db-newer", "run db-newer"]
    );
    assert!(status_of(&outcomes, "Exec[newaliases]").notes.is_empty());
}

#[test]
fn a_guard_that_does_not_start_or_times_out_fails_the_noop_plan() {
    let (_dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    runner.refuse("check-a", "user app does not exist");
    runner.end("check-b", Exit::TimedOut(Duration::from_secs(5)), "");
    runner.answer("check-c", 1, "");
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(
        "
  Exec[a]:
    command: [do-a]
    unless: [check-a]
  Exec[b]:
    command: [do-b]
    onlyif: [check-b]
    timeout: 5
  Exec[c]:
    command: [do-c]
    unless: [check-c]
  File[after-a]:
    path: /etc/after-a
    content: \"x\\n\"
    requires: Exec[a]
",
    );
    for noop in [true, false] {
        let (summary, outcomes) = run(&items, &p, &root, noop);
        assert_eq!((summary.failed, summary.skipped), (2, 1), "noop {noop}");
        let reason = |id: &str| reason(status_of(&outcomes, id)).unwrap();
        assert_eq!(
            reason("Exec[a]"),
            "`unless` (check-a) did not start: user app does not exist"
        );
        assert_eq!(reason("Exec[b]"), "`onlyif` (check-b) timed out after 5 s");
        assert_eq!(reason("File[after-a]"), "Exec[a] failed");
        let ran = taken(&log);
        assert_eq!(ran.contains(&"run do-c".to_owned()), !noop, "{ran:?}");
        assert!(!ran.iter().any(|l| l == "run do-a" || l == "run do-b"));
    }
}

#[test]
fn a_failed_refresh_stays_owed_and_runs_on_the_next_run() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    runner.answer("newaliases", 75, "temporary failure\n");
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(ALIASES);
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!((summary.changed, summary.failed), (1, 1));
    let owed = dir.path().join("var/lib/datum/refreshes");
    assert_eq!(fs::read_to_string(&owed).unwrap(), "Exec[newaliases]\n");
    // Nothing changes now, but the refresh is still owed.
    runner.answer("newaliases", 0, "");
    let (noop, outcomes) = run(&items, &p, &root, true);
    assert_eq!(noop.would_change, 1);
    assert_eq!(
        status_of(&outcomes, "Exec[newaliases]").changes[0],
        Change::set(
            Attribute::Refresh,
            "owed by an earlier run that did not finish"
        )
    );
    taken(&log);
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!((summary.changed, summary.unchanged), (1, 1));
    assert_eq!(taken(&log), ["run newaliases"]);
    assert_eq!(fs::read_to_string(&owed).unwrap(), "");
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!(summary.unchanged, 2);
}

#[test]
fn a_refresh_a_guard_makes_needless_is_crossed_off() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    let p = with_runner(&root, &log, &runner);
    fs::create_dir_all(dir.path().join("var/lib/datum")).unwrap();
    fs::write(
        dir.path().join("var/lib/datum/refreshes"),
        "Exec[newaliases]\nExec[gone]\n",
    )
    .unwrap();
    fs::write(dir.path().join("etc/aliases.db"), "").unwrap();
    let items = fleet_items(&format!("{ALIASES}    creates: /etc/aliases.db\n"));
    let mut c = Collect::default();
    fs::write(dir.path().join("etc/aliases"), "root: ops\n").unwrap();
    let summary = apply("app-001", &items, &p, &root, &Options::default(), &mut c).unwrap();
    assert_eq!(summary.unchanged, 2);
    assert!(taken(&log).is_empty());
    assert_eq!(
        c.notes,
        [
            "a refresh of Exec[gone] was owed, but the manifest has no such refresh_only Exec: dropped"
        ]
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/refreshes")).unwrap(),
        ""
    );
}

const EXEC_CHILD_ROOT: &str = "DATUM_APPLY_TEST_EXEC_CHILD_ROOT";
const KILLED_EXEC_TEST: &str = "exec::a_refresh_owed_by_a_killed_run_happens_on_the_next_one";

#[test]
fn a_refresh_owed_by_a_killed_run_happens_on_the_next_one() {
    if let Ok(dir) = std::env::var(EXEC_CHILD_ROOT) {
        // The child: changes the file, then hangs running the refresh.
        let root = Root::at(&dir);
        let log = Log::default();
        let mut runner = FakeRunner::new(&log);
        runner.hang = Some(("newaliases".into(), Path::new(&dir).join("running")));
        let p = with_runner(&root, &log, &runner);
        let mut out = HumanReporter::new(std::io::sink());
        apply(
            "app-001",
            &fleet_items(ALIASES),
            &p,
            &root,
            &Options::default(),
            &mut out,
        )
        .unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("etc")).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            KILLED_EXEC_TEST,
            "--nocapture",
            "--test-threads=1",
        ])
        .env(EXEC_CHILD_ROOT, dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !dir.path().join("running").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child ended before running the refresh"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child never got to the refresh"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("etc/aliases")).unwrap(),
        "root: ops\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/refreshes")).unwrap(),
        "Exec[newaliases]\n"
    );
    let root = Root::at(dir.path());
    let log = Log::default();
    let p = with_runner(&root, &log, &FakeRunner::new(&log));
    let (summary, outcomes) = run(&fleet_items(ALIASES), &p, &root, false);
    assert_eq!((summary.changed, summary.unchanged), (1, 1));
    assert_eq!(
        status_of(&outcomes, "Exec[newaliases]").changes[0],
        Change::set(
            Attribute::Refresh,
            "owed by an earlier run that did not finish"
        )
    );
    assert_eq!(taken(&log), ["run newaliases"]);
    let (summary, _) = run(&fleet_items(ALIASES), &p, &root, false);
    assert_eq!(summary.unchanged, 2);
    assert!(taken(&log).is_empty());
}

#[test]
fn creates_is_looked_at_inside_the_root_links_included() {
    let (dir, root, log) = scene();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("ready"), "").unwrap();
    // An absolute link inside the root leads where it would in a chroot.
    std::os::unix::fs::symlink(outside.path(), dir.path().join("srv")).unwrap();
    let runner = FakeRunner::new(&log);
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items("  Exec[init]:\n    command: [init]\n    creates: /srv/ready\n");
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 1, "the file outside the root counted");
    assert_eq!(taken(&log), ["run init"]);
}

/// Two Execs sorting before what they wait for: one runs as a user the
/// run adds, one in a directory it creates (which waits for a package).
const AS_AND_IN: &str = "
  Exec[a-as]:
    command: [as-deploy]
    onlyif: [ready-as]
    user: deploy
  Exec[a-in]:
    command: [in-app]
    onlyif: [ready-in]
    cwd: /etc/app/work
  User[deploy]:
    name: deploy
  Directory[app]:
    path: /etc/app
    requires: Package[zz-app]
  Package[zz-app]:
    ensure: installed
";

#[test]
fn an_exec_runs_after_its_user_and_the_directory_it_runs_in() {
    let (dir, root, log) = scene();
    let runner = FakeRunner::new(&log);
    let p = with_runner(&root, &log, &runner);
    let items = fleet_items(AS_AND_IN);
    // Under --noop, their guards wait for what they come after.
    let (summary, outcomes) = run(&items, &p, &root, true);
    assert!(taken(&log).is_empty(), "a guard was asked");
    assert_eq!(summary.would_change, 5);
    assert_eq!(
        status_of(&outcomes, "Exec[a-as]").notes,
        [
            "`onlyif` not asked under --noop (ready-as): User[deploy] would change first, and a real run asks it after that"
        ]
    );
    assert_eq!(
        status_of(&outcomes, "Exec[a-in]").notes,
        [
            "`onlyif` not asked under --noop (ready-in): Directory[app], Package[zz-app] would change first, and a real run asks it after that"
        ]
    );
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 5);
    let order: Vec<&str> = outcomes.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(
        order,
        [
            "Package[zz-app]",
            "Directory[app]",
            "Exec[a-in]",
            "User[deploy]",
            "Exec[a-as]"
        ]
    );
    assert_eq!(
        taken(&log),
        [
            "install zz-app",
            "run ready-in",
            "run in-app",
            "useradd deploy",
            "run ready-as",
            "run as-deploy"
        ]
    );
    assert!(dir.path().join("etc/app").is_dir());
}

#[test]
fn a_cycle_through_an_execs_user_or_cwd_is_reported_and_nothing_runs() {
    let (dir, root, log) = scene();
    let p = with_runner(&root, &log, &FakeRunner::new(&log));
    // The user and the directory wait for the very Execs that wait for them.
    let items = fleet_items(
        "
  Exec[a-as]:
    command: [as-deploy]
    creates: /etc/as-done
    user: deploy
  Exec[a-in]:
    command: [in-app]
    creates: /etc/in-done
    cwd: /etc/app/work
  User[deploy]:
    name: deploy
    requires: Exec[a-as]
  Directory[app]:
    path: /etc/app
    requires: Exec[a-in]
  File[free]:
    path: /etc/free
    content: \"x\\n\"
",
    );
    let mut c = Collect::default();
    let err = apply("app-001", &items, &p, &root, &Options::default(), &mut c).unwrap_err();
    assert_eq!(
        err.to_string(),
        "resources wait on each other in 2 cycles; nothing was applied
  Directory[app] -> Exec[a-in] -> Directory[app]
    Directory[app] requires Exec[a-in]
    Exec[a-in] runs in Directory[app]
  Exec[a-as] -> User[deploy] -> Exec[a-as]
    Exec[a-as] runs as User[deploy]
    User[deploy] requires Exec[a-as]"
    );
    assert!(taken(&log).is_empty() && c.outcomes.is_empty());
    assert!(!dir.path().join("etc/app").exists());
    assert!(!dir.path().join("etc/free").exists());
}
