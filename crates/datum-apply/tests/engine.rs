//! The engine with fake providers for packages, services, users and groups
//! (and the real filesystem providers in a temporary root): failures,
//! skips, noop, and restarts, including one owed by a run that was killed;
//! and the property that a second run over any generated manifest changes
//! nothing (with the real shadow tools for accounts where installed).
//! Execs, with a fake runner, are in `engine/exec.rs`.

#[path = "engine/exec.rs"]
mod exec;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;
use std::time::{Duration, Instant};

use datum_apply::engine::{Options, apply};
use datum_apply::provider::exec::Execs;
use datum_apply::provider::fs::{Directories, Files, Symlinks};
use datum_apply::provider::{
    Context, Examined, Failure, Provider, Providers, Restarted, ServiceProvider, has,
};
use datum_apply::report::{
    Attribute, Change, HumanReporter, JsonReporter, Outcome, Reporter, RunInfo, Status, Summary,
};
use datum_apply::root::Root;
use datum_apply::spec::{GroupSpec, Item, PackageSpec, ServiceSpec, UserSpec, items};
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::MemReader;

/// The items of host `app-001` in a one-layer fleet.
fn fleet_items(resources: &str) -> Vec<Item> {
    let reader = MemReader::new()
        .file("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: t\n")
        .file("hosts.yaml", "datum: v1alpha1\ntype: Host\nname: app-001\n")
        .file(
            "layer.yaml",
            format!(
                "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
            ),
        );
    let fleet = loader::load(&reader).unwrap();
    let host = fleet.host_id("app-001").unwrap();
    let res = datum_core::resolve::resolve_host(&fleet, host);
    assert!(res.is_ok(), "{:?}", res.problems);
    items(&Manifest::new(&fleet, host, &res), &reader)
}

type Log = Rc<RefCell<Vec<String>>>;

/// Things known by name: present or not; converging adds them, or fails
/// for the names in `fail`.
struct Named {
    kind: &'static str,
    present: RefCell<BTreeSet<String>>,
    fail: BTreeSet<String>,
    log: Log,
}

impl Named {
    fn new(kind: &'static str, log: &Log, fail: &[&str]) -> Named {
        Named {
            kind,
            present: RefCell::default(),
            fail: fail.iter().map(|s| s.to_string()).collect(),
            log: log.clone(),
        }
    }

    fn examine(&self, name: &str) -> Result<Examined, Failure> {
        let mut ex = Examined::default();
        if !self.present.borrow().contains(name) {
            ex.changes
                .push(Change::new(Attribute::Ensure, "absent", "present"));
        }
        Ok(ex)
    }

    fn converge(&self, name: &str) -> Result<(), Failure> {
        self.log.borrow_mut().push(format!("{} {name}", self.kind));
        if self.fail.contains(name) {
            return Err(Failure::new(format!("{name} would not install")));
        }
        self.present.borrow_mut().insert(name.to_owned());
        Ok(())
    }
}

impl Provider<PackageSpec> for Named {
    fn examine(&self, s: &PackageSpec, _: &Context<'_>) -> Result<Examined, Failure> {
        Named::examine(self, &s.name)
    }
    fn converge(&self, s: &PackageSpec, _: &[Change], _: &Context<'_>) -> Result<(), Failure> {
        Named::converge(self, &s.name)
    }
}

impl Provider<UserSpec> for Named {
    fn examine(&self, s: &UserSpec, _: &Context<'_>) -> Result<Examined, Failure> {
        Named::examine(self, &s.name)
    }
    fn converge(&self, s: &UserSpec, _: &[Change], _: &Context<'_>) -> Result<(), Failure> {
        Named::converge(self, &s.name)
    }
}

impl Provider<GroupSpec> for Named {
    fn examine(&self, s: &GroupSpec, _: &Context<'_>) -> Result<Examined, Failure> {
        Named::examine(self, &s.name)
    }
    fn converge(&self, s: &GroupSpec, _: &[Change], _: &Context<'_>) -> Result<(), Failure> {
        Named::converge(self, &s.name)
    }
}

/// What a fake service manager does when asked to restart.
#[derive(Clone)]
enum OnRestart {
    Restart,
    Fail,
    /// Write this file, then hang until killed.
    Hang(std::path::PathBuf),
}

/// A service manager that runs everything it is told to and logs restarts.
struct FakeServices {
    running: RefCell<BTreeSet<String>>,
    on_restart: OnRestart,
    log: Log,
}

impl FakeServices {
    fn new(log: &Log, on_restart: OnRestart, running: &[&str]) -> FakeServices {
        FakeServices {
            running: RefCell::new(running.iter().map(|s| s.to_string()).collect()),
            on_restart,
            log: log.clone(),
        }
    }
}

impl Provider<ServiceSpec> for FakeServices {
    fn examine(&self, s: &ServiceSpec, _: &Context<'_>) -> Result<Examined, Failure> {
        let mut ex = Examined::default();
        let have = self.running.borrow().contains(&s.name);
        if let Some(want) = s.running
            && want != have
        {
            ex.changes.push(Change::new(
                Attribute::Ensure,
                have.to_string(),
                want.to_string(),
            ));
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &ServiceSpec,
        changes: &[Change],
        _: &Context<'_>,
    ) -> Result<(), Failure> {
        if has(changes, Attribute::Ensure) {
            let verb = if s.running == Some(true) {
                "start"
            } else {
                "stop"
            };
            self.log.borrow_mut().push(format!("{verb} {}", s.name));
            if s.running == Some(true) {
                self.running.borrow_mut().insert(s.name.clone());
            } else {
                self.running.borrow_mut().remove(&s.name);
            }
        }
        Ok(())
    }
}

impl ServiceProvider for FakeServices {
    fn restart(&self, s: &ServiceSpec) -> Result<Restarted, Failure> {
        match &self.on_restart {
            OnRestart::Restart => {
                self.log.borrow_mut().push(format!("restart {}", s.name));
                Ok(Restarted::Yes)
            }
            OnRestart::Fail => Err(Failure::new(format!("{} did not come back", s.name))),
            OnRestart::Hang(marker) => {
                fs::write(marker, "restarting").unwrap();
                std::thread::sleep(Duration::from_secs(120));
                Err(Failure::new("not killed in time"))
            }
        }
    }
}

fn providers(
    root: &Root,
    log: &Log,
    failing_packages: &[&str],
    services: FakeServices,
) -> Providers {
    Providers {
        file: Box::new(Files::new(root.clone())),
        directory: Box::new(Directories::new(root.clone())),
        symlink: Box::new(Symlinks::new(root.clone())),
        package: Box::new(Named::new("install", log, failing_packages)),
        service: Box::new(services),
        user: Box::new(Named::new("useradd", log, &[])),
        group: Box::new(Named::new("groupadd", log, &[])),
        exec: Execs::new(root.clone(), Box::new(exec::FakeRunner::new(log))),
        cron: Box::new(datum_apply::provider::cron::Crons::new(root.clone())),
        mount: Box::new(datum_apply::provider::mount::Mounts::new(root.clone())),
        sysctl: Box::new(datum_apply::provider::sysctl::Sysctls::new(root.clone())),
        repository: Box::new(datum_apply::provider::repository::Repositories::new(
            root.clone(),
            Default::default(),
        )),
    }
}

/// Collects outcomes.
#[derive(Default)]
struct Collect {
    outcomes: Vec<Outcome>,
    notes: Vec<String>,
}

impl Reporter for Collect {
    fn start(&mut self, _: &RunInfo) -> std::io::Result<()> {
        Ok(())
    }
    fn note(&mut self, text: &str) -> std::io::Result<()> {
        self.notes.push(text.to_owned());
        Ok(())
    }
    fn resource(&mut self, o: &Outcome) -> std::io::Result<()> {
        self.outcomes.push(o.clone());
        Ok(())
    }
    fn finish(&mut self, _: &Summary) -> std::io::Result<()> {
        Ok(())
    }
}

/// A temporary root with an empty `/etc`, and a log for the fakes.
fn scene() -> (tempfile::TempDir, Root, Log) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("etc")).unwrap();
    let root = Root::at(dir.path());
    (dir, root, Log::default())
}

fn run(items: &[Item], p: &Providers, root: &Root, noop: bool) -> (Summary, Vec<Outcome>) {
    let mut c = Collect::default();
    let summary = apply(
        "app-001",
        items,
        p,
        root,
        &Options {
            noop,
            ..Options::default()
        },
        &mut c,
    )
    .unwrap();
    (summary, c.outcomes)
}

fn status_of<'a>(outcomes: &'a [Outcome], id: &str) -> &'a Outcome {
    outcomes.iter().find(|o| o.id == id).unwrap()
}

/// An outcome's reason as the reports print it.
fn reason(o: &Outcome) -> Option<String> {
    o.reason.as_ref().map(ToString::to_string)
}

const APP: &str = "
  Package[app]:
    ensure: installed
  File[app-conf]:
    path: /etc/app.conf
    content: \"port 80\\n\"
    requires: Package[app]
  Service[app]:
    ensure: running
    restart_on: File[app-conf]
";

#[test]
fn a_failed_resource_skips_its_dependents_and_independent_ones_go_on() {
    let (dir, root, log) = scene();
    let items = fleet_items(&format!(
        "{APP}
  Package[tools]:
    ensure: installed
  File[motd]:
    path: /etc/motd
    content: \"hello\\n\"
"
    ));
    let p = providers(
        &root,
        &log,
        &["app"],
        FakeServices::new(&log, OnRestart::Restart, &[]),
    );
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(status_of(&outcomes, "Package[app]").status, Status::Failed);
    assert_eq!(
        reason(status_of(&outcomes, "Package[app]")).as_deref(),
        Some("app would not install")
    );
    let conf = status_of(&outcomes, "File[app-conf]");
    assert_eq!(
        (conf.status, reason(conf).as_deref()),
        (Status::Skipped, Some("Package[app] failed"))
    );
    let svc = status_of(&outcomes, "Service[app]");
    assert_eq!(
        (svc.status, reason(svc).as_deref()),
        (Status::Skipped, Some("File[app-conf] was skipped"))
    );
    assert_eq!(
        status_of(&outcomes, "Package[tools]").status,
        Status::Changed
    );
    assert_eq!(status_of(&outcomes, "File[motd]").status, Status::Changed);
    assert_eq!(
        (summary.changed, summary.failed, summary.skipped),
        (2, 1, 2)
    );
    // Nothing after the failure was touched; the service was never started.
    assert!(!dir.path().join("etc/app.conf").exists());
    assert_eq!(*log.borrow(), ["install app", "install tools"]);
}

#[test]
fn noop_examines_everything_and_converges_nothing() {
    let (dir, root, log) = scene();
    let items = fleet_items(APP);
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &[]),
    );
    let (summary, outcomes) = run(&items, &p, &root, true);
    assert_eq!(summary.would_change, 3);
    assert!(log.borrow().is_empty(), "{:?}", log.borrow());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "only etc/");
    // A service that would start needs no restart besides.
    assert_eq!(
        status_of(&outcomes, "Service[app]").changes,
        [Change::new(Attribute::Ensure, "false", "true")]
    );
}

#[test]
fn a_service_restarts_when_its_configuration_changed_and_only_then() {
    let (dir, root, log) = scene();
    let items = fleet_items(APP);
    // Already running: the new configuration needs a restart.
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &["app"]),
    );
    let (summary, outcomes) = run(&items, &p, &root, false);
    assert_eq!(summary.changed, 3);
    assert_eq!(*log.borrow(), ["install app", "restart app"]);
    assert_eq!(
        status_of(&outcomes, "Service[app]").changes,
        [Change::set(Attribute::Restart, "File[app-conf] changed")]
    );
    log.borrow_mut().clear();
    let (summary, _) = run(&items, &p, &root, false);
    assert_eq!(summary.unchanged, 3);
    assert!(log.borrow().is_empty());
    // An edit by hand is put back, and the service restarts for it.
    fs::write(dir.path().join("etc/app.conf"), "port 81\n").unwrap();
    let (noop, outcomes) = run(&items, &p, &root, true);
    assert_eq!(noop.would_change, 2);
    assert_eq!(
        status_of(&outcomes, "Service[app]").changes,
        [Change::set(Attribute::Restart, "File[app-conf] changed")]
    );
    assert!(log.borrow().is_empty());
    run(&items, &p, &root, false);
    assert_eq!(*log.borrow(), ["restart app"]);
}

#[test]
fn a_service_being_started_or_wanted_stopped_is_not_restarted() {
    let (dir, root, log) = scene();
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &["stopme"]),
    );
    let items = fleet_items(&format!(
        "{APP}
  File[other]:
    path: /etc/other.conf
    content: \"x\\n\"
  Service[stopme]:
    ensure: stopped
    restart_on: File[other]
"
    ));
    run(&items, &p, &root, false);
    assert_eq!(*log.borrow(), ["install app", "start app", "stop stopme"]);
    assert!(
        fs::read_to_string(dir.path().join("var/lib/datum/restarts"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_failed_restart_stays_owed_and_happens_on_the_next_run() {
    let (dir, root, log) = scene();
    let items = fleet_items(APP);
    let failing = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Fail, &["app"]),
    );
    let (summary, outcomes) = run(&items, &failing, &root, false);
    assert_eq!((summary.changed, summary.failed), (2, 1));
    assert_eq!(
        reason(status_of(&outcomes, "Service[app]")).as_deref(),
        Some("app did not come back")
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/restarts")).unwrap(),
        "app\n"
    );
    // The next run, by a fresh process: its fakes know nothing of the
    // package, so the manifest leaves it out.
    let working = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &["app"]),
    );
    let items = fleet_items(
        "
  File[app-conf]:
    path: /etc/app.conf
    content: \"port 80\\n\"
  Service[app]:
    ensure: running
    restart_on: File[app-conf]
",
    );
    let (summary, outcomes) = run(&items, &working, &root, false);
    assert_eq!((summary.changed, summary.unchanged), (1, 1));
    assert_eq!(
        status_of(&outcomes, "Service[app]").changes,
        [Change::set(
            Attribute::Restart,
            "owed by an earlier run that did not finish"
        )]
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/restarts")).unwrap(),
        ""
    );
}

const CHILD_ROOT: &str = "DATUM_APPLY_TEST_CHILD_ROOT";
const KILLED_TEST: &str = "a_restart_owed_by_a_killed_run_happens_on_the_next_one";

fn killable_items() -> Vec<Item> {
    fleet_items(
        "
  File[app-conf]:
    path: /etc/app.conf
    content: \"port 80\\n\"
  Service[app]:
    restart_on: File[app-conf]
",
    )
}

#[test]
fn a_restart_owed_by_a_killed_run_happens_on_the_next_one() {
    if let Ok(dir) = std::env::var(CHILD_ROOT) {
        // The child: changes the file, then hangs in the restart until killed.
        let root = Root::at(&dir);
        let log = Log::default();
        let marker = Path::new(&dir).join("restarting");
        let p = providers(
            &root,
            &log,
            &[],
            FakeServices::new(&log, OnRestart::Hang(marker), &["app"]),
        );
        let mut out = HumanReporter::new(std::io::sink());
        apply(
            "app-001",
            &killable_items(),
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
        .args(["--exact", KILLED_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ROOT, dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !dir.path().join("restarting").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child ended before restarting"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child never got to the restart"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no cleanup.
    child.wait().unwrap();
    // The change was made and the restart is on record.
    assert_eq!(
        fs::read_to_string(dir.path().join("etc/app.conf")).unwrap(),
        "port 80\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("var/lib/datum/restarts")).unwrap(),
        "app\n"
    );

    let root = Root::at(dir.path());
    let log = Log::default();
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &["app"]),
    );
    // Nothing differs any more, yet the restart is owed: noop says so.
    let (noop, outcomes) = run(&killable_items(), &p, &root, true);
    assert_eq!((noop.would_change, noop.unchanged), (1, 1));
    assert_eq!(
        status_of(&outcomes, "Service[app]").changes,
        [Change::set(
            Attribute::Restart,
            "owed by an earlier run that did not finish"
        )]
    );
    let (summary, _) = run(&killable_items(), &p, &root, false);
    assert_eq!((summary.changed, summary.unchanged), (1, 1));
    assert_eq!(*log.borrow(), ["restart app"]);
    // Done once, crossed off.
    let (summary, _) = run(&killable_items(), &p, &root, false);
    assert_eq!(summary.unchanged, 2);
    assert_eq!(*log.borrow(), ["restart app"]);
}

#[test]
fn the_json_report_gives_each_resource_its_status_and_changes() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("etc")).unwrap();
    fs::write(dir.path().join("etc/app.conf"), "port 81\n").unwrap();
    fs::set_permissions(
        dir.path().join("etc/app.conf"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let root = Root::at(dir.path());
    let log = Log::default();
    let p = providers(
        &root,
        &log,
        &["app"],
        FakeServices::new(&log, OnRestart::Restart, &["app"]),
    );
    let items = fleet_items(
        "
  Package[app]:
    ensure: installed
  File[app-conf]:
    path: /etc/app.conf
    mode: \"0600\"
    content: \"port 80\\n\"
",
    );
    let mut out = Vec::new();
    apply(
        "app-001",
        &items,
        &p,
        &root,
        &Options {
            noop: true,
            ..Options::default()
        },
        &mut JsonReporter::new(&mut out),
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{
  "datum": "v1alpha1",
  "type": "ApplyReport",
  "host": "app-001",
  "root": "{}",
  "noop": true,
  "notes": [],
  "resources": [
    {{
      "id": "File[app-conf]",
      "summary": "/etc/app.conf",
      "status": "would_change",
      "changes": [
        {{
          "attribute": "content",
          "diff": "--- /etc/app.conf (on disk)\n+++ /etc/app.conf (manifest)\n@@ -1 +1 @@\n-port 81\n+port 80\n"
        }},
        {{
          "attribute": "mode",
          "from": "0644",
          "to": "0600"
        }}
      ]
    }},
    {{
      "id": "Package[app]",
      "summary": "app",
      "status": "would_change",
      "changes": [
        {{
          "attribute": "ensure",
          "from": "absent",
          "to": "present"
        }}
      ]
    }}
  ],
  "health": [],
  "summary": {{
    "changed": 0,
    "would_change": 2,
    "failed": 0,
    "skipped": 0,
    "unchanged": 0,
    "health_passed": 0,
    "health_failed": 0
  }}
}}
"#,
            dir.path().display()
        )
    );
}

/// A reporter whose output is gone after the first line.
struct Closed;

impl Reporter for Closed {
    fn start(&mut self, _: &RunInfo) -> std::io::Result<()> {
        Ok(())
    }
    fn note(&mut self, _: &str) -> std::io::Result<()> {
        Ok(())
    }
    fn resource(&mut self, _: &Outcome) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn finish(&mut self, _: &Summary) -> std::io::Result<()> {
        panic!("called after the reporter failed")
    }
}

#[test]
fn a_reporter_that_fails_does_not_stop_the_run_half_way() {
    let (_dir, root, log) = scene();
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &["app"]),
    );
    let err = apply(
        "app-001",
        &fleet_items(APP),
        &p,
        &root,
        &Options::default(),
        &mut Closed,
    )
    .unwrap_err();
    let datum_apply::ApplyError::Report { source, summary } = err else {
        panic!("{err}")
    };
    assert_eq!(source.kind(), std::io::ErrorKind::BrokenPipe);
    assert_eq!(summary.changed, 3);
    assert_eq!(*log.borrow(), ["install app", "restart app"]);
}

#[test]
fn a_restart_owed_by_a_service_no_longer_managed_is_dropped_with_a_note() {
    let (dir, root, log) = scene();
    let state = dir.path().join("var/lib/datum");
    fs::create_dir_all(&state).unwrap();
    fs::write(state.join("restarts"), "gone\n").unwrap();
    let p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &[]),
    );
    let items = fleet_items("  Package[app]:\n    ensure: installed\n");
    let mut noop = Collect::default();
    apply(
        "app-001",
        &items,
        &p,
        &root,
        &Options {
            noop: true,
            ..Options::default()
        },
        &mut noop,
    )
    .unwrap();
    assert_eq!(
        noop.notes,
        [
            "a restart of gone is owed, but no Service in the manifest manages it: a real run drops it"
        ]
    );
    assert_eq!(
        fs::read_to_string(state.join("restarts")).unwrap(),
        "gone\n"
    );
    let mut real = Collect::default();
    apply("app-001", &items, &p, &root, &Options::default(), &mut real).unwrap();
    assert_eq!(
        real.notes,
        ["a restart of gone was owed, but no Service in the manifest manages it: dropped"]
    );
    assert_eq!(fs::read_to_string(state.join("restarts")).unwrap(), "");
    assert!(!log.borrow().iter().any(|l| l.contains("gone")));
}

/// One generated resource: YAML lines under `resources:`.
fn generated_resource(kind: u8, a: u8, b: u8) -> String {
    let modes = ["0600", "0640", "0644", "0755"];
    let mode = |x: u8| match x % 5 {
        4 => String::new(),
        m => format!("    mode: \"{}\"\n", modes[m as usize]),
    };
    match kind % 7 {
        0 => format!(
            "  File[f{}]:\n    path: /etc/f{}.conf\n    content: \"v{}\\n\"\n{}",
            a % 4,
            a % 4,
            b % 3,
            mode(b / 3)
        ),
        1 => format!(
            "  File[g{}]:\n    path: /srv/data/g{}.txt\n    content: \"{}\"\n{}    requires: Directory[srv]\n",
            a % 3,
            a % 3,
            "x".repeat(usize::from(b % 4)),
            mode(b / 4)
        ),
        2 => format!(
            "  Directory[sub]:\n    path: /srv/data/sub\n{}    requires: Directory[srv]\n",
            mode(a)
        ),
        3 => format!(
            "  Symlink[l{}]:\n    path: /etc/l{}\n    target: /etc/f{}.conf\n",
            a % 3,
            a % 3,
            b % 4
        ),
        4 => format!(
            "  Group[grp{}]:\n    gid: {}\n",
            a % 2,
            3000 + u32::from(a % 2)
        ),
        5 => format!(
            "  User[usr{}]:\n    uid: {}\n    home: /home/usr{}\n    shell: /bin/sh\n",
            a % 2,
            4000 + u32::from(a % 2),
            a % 2
        ),
        _ => format!(
            "  Service[svc{}]:\n    ensure: {}\n  Package[pkg{}]:\n    ensure: installed\n",
            a % 2,
            if b.is_multiple_of(2) {
                "running"
            } else {
                "stopped"
            },
            a % 2
        ),
    }
}

/// A layer's resources: the generated ones, one declaration per id (the
/// first wins, as a layer may declare an id once).
fn generated_manifest(parts: &[(u8, u8, u8)]) -> String {
    let mut seen = BTreeSet::new();
    // The directory the `g` files and `sub` live in.
    let mut out = String::from("  Directory[srv]:\n    path: /srv/data\n");
    for &(kind, a, b) in parts {
        let text = generated_resource(kind, a, b);
        let ids: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .collect();
        if ids.iter().all(|id| !seen.contains(*id)) {
            seen.extend(ids.iter().map(|s| s.to_string()));
            out.push_str(&text);
        }
    }
    out
}

fn real_accounts(root: &Root) -> Option<Providers> {
    datum_testkit::tools::installed(&["useradd", "groupadd"]).then(|| {
        let log = Log::default();
        let mut p = providers(
            root,
            &log,
            &[],
            FakeServices::new(&log, OnRestart::Restart, &[]),
        );
        p.user = Box::new(datum_apply::provider::shadow::Users::new(root.clone()));
        p.group = Box::new(datum_apply::provider::shadow::Groups::new(root.clone()));
        p
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Converges, always: whatever the manifest of files, directories,
    /// symbolic links, users and groups (the shadow tools under the root,
    /// where installed) and services (the fake), the first run under
    /// `--root` leaves nothing for a second one to do.
    #[test]
    fn a_second_apply_changes_nothing(
        parts in proptest::collection::vec((0u8..7, 0u8..8, 0u8..16), 1..10)
    ) {
        let resources = generated_manifest(&parts);
        let items = fleet_items(&resources);
        let (dir, root, log) = scene();
        fs::write(dir.path().join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
        fs::write(dir.path().join("etc/group"), "root:x:0:\n").unwrap();
        // Datum creates no parent directory on its own.
        fs::create_dir_all(dir.path().join("srv")).unwrap();
        fs::create_dir_all(dir.path().join("home")).unwrap();
        let services = FakeServices::new(&log, OnRestart::Restart, &[]);
        let p = real_accounts(&root).unwrap_or_else(|| providers(&root, &log, &[], services));
        let (first, outcomes) = run(&items, &p, &root, false);
        proptest::prop_assert_eq!(first.failed, 0, "{}\n{:?}", resources, outcomes);
        let (second, outcomes) = run(&items, &p, &root, false);
        proptest::prop_assert_eq!(
            (second.changed, second.failed, second.skipped),
            (0, 0, 0),
            "{}\n{:?}",
            resources,
            outcomes
        );
        let (noop, _) = run(&items, &p, &root, true);
        proptest::prop_assert_eq!(noop.would_change, 0);
    }
}

/// Packages that log each batch they are handed, then install its
/// packages one by one (failing those named).
struct Batching(Named);

impl Provider<PackageSpec> for Batching {
    fn examine(&self, s: &PackageSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        Provider::<PackageSpec>::examine(&self.0, s, cx)
    }
    fn converge(&self, s: &PackageSpec, c: &[Change], cx: &Context<'_>) -> Result<(), Failure> {
        Provider::<PackageSpec>::converge(&self.0, s, c, cx)
    }
    fn converge_batch(
        &self,
        batch: &[(&PackageSpec, &[Change])],
        cx: &Context<'_>,
    ) -> Vec<Result<(), Failure>> {
        let names: Vec<&str> = batch.iter().map(|(s, _)| s.name.as_str()).collect();
        self.0
            .log
            .borrow_mut()
            .push(format!("batch {}", names.join(" ")));
        batch.iter().map(|(s, c)| self.converge(s, c, cx)).collect()
    }
}

#[test]
fn packages_whose_predecessors_are_done_are_changed_in_one_batch() {
    let (_dir, root, log) = scene();
    let items = fleet_items(
        "
  Package[a]:
    ensure: installed
  Package[b]:
    ensure: installed
  Package[d]:
    ensure: installed
  File[f]:
    path: /etc/f
    content: \"x\\n\"
    requires: Package[a]
  Package[c]:
    ensure: installed
    requires: File[f]
",
    );
    let mut p = providers(
        &root,
        &log,
        &[],
        FakeServices::new(&log, OnRestart::Restart, &[]),
    );
    let named = Named::new("install", &log, &["d"]);
    named.present.borrow_mut().insert("b".to_owned());
    p.package = Box::new(Batching(named));
    let (summary, outcomes) = run(&items, &p, &root, false);
    // b is installed already; c waits for File[f], which waits for a.
    assert_eq!(
        log.borrow().as_slice(),
        [
            "batch a d",
            "install a",
            "install d",
            "batch c",
            "install c"
        ]
    );
    // Each outcome is its own, reported in the run's order.
    let order: Vec<(&str, Status)> = outcomes.iter().map(|o| (o.id.as_str(), o.status)).collect();
    assert_eq!(
        order,
        [
            ("Package[a]", Status::Changed),
            ("File[f]", Status::Changed),
            ("Package[b]", Status::Unchanged),
            ("Package[c]", Status::Changed),
            ("Package[d]", Status::Failed),
        ]
    );
    assert_eq!(
        reason(status_of(&outcomes, "Package[d]")).as_deref(),
        Some("d would not install")
    );
    assert_eq!((summary.changed, summary.failed), (3, 1));
    // Under --noop nothing is handed over at all.
    log.borrow_mut().clear();
    let (_, outcomes) = run(&items, &p, &root, true);
    assert!(log.borrow().is_empty(), "{:?}", log.borrow());
    assert_eq!(
        status_of(&outcomes, "Package[d]").status,
        Status::WouldChange
    );
}
