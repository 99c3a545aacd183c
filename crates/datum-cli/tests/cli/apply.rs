//! `datum apply` under `--root`, on a temporary directory seeded like a
//! small Debian machine: accounts, a dpkg database, `.deb` files in the
//! archive cache (built here with dpkg-deb), no network.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Run, datum, example, fixture, run_in};

/// A temporary machine root with what a minimal Debian system has.
fn machine() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in [
        "etc/sysctl.d",
        "etc/datum",
        "var/lib/dpkg/info",
        "var/lib/dpkg/updates",
        "var/cache/apt/archives",
        "var/log",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    fs::write(root.join("etc/shadow"), "root:*:19000:0:99999:7:::\n").unwrap();
    fs::write(root.join("etc/gshadow"), "root:*::\n").unwrap();
    fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    let archives = root.join("var/cache/apt/archives");
    deb(&archives, "openssh-server", "1:9.2p1-2", Some("ssh"));
    deb(&archives, "nginx", "1.22.1-9", Some("nginx"));
    dir
}

/// Builds `NAME_VERSION_all.deb` into `dir`, shipping a systemd unit.
fn deb(dir: &Path, name: &str, version: &str, unit: Option<&str>) {
    let build = tempfile::tempdir().unwrap();
    let pkg = build.path().join("pkg");
    fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    fs::write(
        pkg.join("DEBIAN/control"),
        format!(
            "Package: {name}\nVersion: {version}\nArchitecture: all\n\
             Maintainer: Datum tests <tests@example.invalid>\nDescription: a stand-in for tests\n"
        ),
    )
    .unwrap();
    if let Some(unit) = unit {
        fs::create_dir_all(pkg.join("lib/systemd/system")).unwrap();
        fs::write(
            pkg.join(format!("lib/systemd/system/{unit}.service")),
            format!(
                "[Unit]\nDescription={unit}\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
            ),
        )
        .unwrap();
    }
    let file = version.replace(':', "%3a");
    let out = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&pkg)
        .arg(dir.join(format!("{name}_{file}_all.deb")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `datum apply --root ROOT ARGS --fleet FLEET`.
fn apply(fleet: &Path, root: &Path, args: &[&str]) -> Run {
    let mut all = vec!["apply", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    run_in(fleet, &all)
}

/// `datum apply` as a process to kill or to starve of output.
fn spawn_apply(fleet: &Path, root: &Path, host: &str, out: Stdio, err: Stdio) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("datum"))
        .env_remove("DATUM_FLEET")
        .arg("--fleet")
        .arg(fleet)
        .args(["apply", "--host", host, "--root"])
        .arg(root)
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap()
}

/// Output with the temporary root replaced by `[ROOT]`.
fn scrub(text: &str, root: &Path) -> String {
    let real = root.canonicalize().unwrap();
    text.replace(&real.display().to_string(), "[ROOT]")
}

/// Everything about a tree that a change could touch: per entry its type,
/// mode, owner, size, modification time, and content or link target.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let m = fs::symlink_metadata(&path).unwrap();
            let what = if m.file_type().is_symlink() {
                format!("link {}", fs::read_link(&path).unwrap().display())
            } else if m.is_dir() {
                "dir".to_owned()
            } else {
                let bytes = fs::read(&path).unwrap();
                format!("file {:x?}", fxhash(&bytes))
            };
            let line = format!(
                "{what} mode {:o} {}:{} size {} mtime {}.{}",
                m.mode(),
                m.uid(),
                m.gid(),
                m.len(),
                m.mtime(),
                m.mtime_nsec()
            );
            out.insert(path.strip_prefix(root).unwrap().to_path_buf(), line);
            if m.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    let m = fs::metadata(root).unwrap();
    out.insert(
        PathBuf::from("."),
        format!("mtime {}.{}", m.mtime(), m.mtime_nsec()),
    );
    walk(root, root, &mut out);
    out
}

/// A 64-bit FNV-1a digest: enough to tell contents apart in a test.
fn fxhash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

fn statuses(json: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_example_host_converges_then_stays_put_and_noop_changes_nothing() {
    let m = machine();
    let root = m.path();
    // The machine says who it is.
    fs::write(root.join("etc/datum/host"), "web-001\n").unwrap();
    let fleet = example("fleet");

    let first = apply(&fleet, root, &["--format", "json"]);
    assert_eq!(first.code, 2, "{}\n{}", first.stdout, first.stderr);
    let all = statuses(&first.stdout);
    assert_eq!(all.len(), 13);
    for (id, status) in &all {
        assert_eq!(status, "changed", "{id}");
    }
    // What the first run did, seen from inside the root.
    assert_eq!(
        fs::read_to_string(root.join("etc/motd")).unwrap(),
        "This host is managed by Datum; local changes are overwritten.\n"
    );
    let conf = fs::metadata(root.join("etc/nginx/nginx.conf")).unwrap();
    assert_eq!(conf.permissions().mode() & 0o7777, 0o600);
    assert_eq!(
        fs::read_link(root.join("var/www/current")).unwrap(),
        Path::new("/srv/releases/current")
    );
    let passwd = fs::read_to_string(root.join("etc/passwd")).unwrap();
    assert!(
        passwd.contains("ops:x:2000:2000::/home/ops:/bin/bash\n"),
        "{passwd}"
    );
    assert!(
        fs::read_to_string(root.join("etc/group"))
            .unwrap()
            .contains("ops:x:2000:\n")
    );
    let status = fs::read_to_string(root.join("var/lib/dpkg/status")).unwrap();
    assert!(
        status.contains("Package: nginx\nStatus: install ok installed\n"),
        "{status}"
    );
    assert!(status.contains("Package: openssh-server\nStatus: install ok installed\n"));
    for unit in ["ssh", "nginx"] {
        let wants = root.join(format!(
            "etc/systemd/system/multi-user.target.wants/{unit}.service"
        ));
        assert!(wants.symlink_metadata().is_ok(), "{unit} is not enabled");
    }

    let second = apply(&fleet, root, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    insta::assert_snapshot!("second_run", scrub(&second.stdout, root));

    // An edit by hand: noop shows the diff and leaves every byte alone.
    fs::write(
        root.join("etc/motd"),
        "This host is managed by Datum; local changes are overwritten.\nHand edit.\n",
    )
    .unwrap();
    let before = tree(root);
    let noop = apply(&fleet, root, &["--noop"]);
    assert_eq!(noop.code, 2, "{}\n{}", noop.stdout, noop.stderr);
    assert_eq!(tree(root), before);
    insta::assert_snapshot!("noop_after_a_hand_edit", scrub(&noop.stdout, root));
    let noop_json = apply(&fleet, root, &["--noop", "--format", "json"]);
    assert_eq!(noop_json.code, 2);
    assert_eq!(tree(root), before);
    let would: Vec<_> = statuses(&noop_json.stdout)
        .into_iter()
        .filter(|(_, s)| s != "unchanged")
        .collect();
    assert_eq!(
        would,
        [("File[motd]".to_owned(), "would_change".to_owned())]
    );

    // The real run puts it back, and then there is nothing left to do.
    let fix = apply(&fleet, root, &[]);
    assert_eq!(fix.code, 2, "{}", fix.stdout);
    assert_eq!(apply(&fleet, root, &[]).code, 0);
}

#[test]
fn the_first_run_prints_every_change() {
    let m = machine();
    let run = apply(&example("fleet"), m.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!("first_run", scrub(&run.stdout, m.path()));
}

#[test]
fn noop_on_a_fresh_machine_plans_everything_and_creates_nothing() {
    // Later resources count on what earlier ones would create: the config
    // file in the directory that would be made, owned by the user who
    // would be added.
    let m = machine();
    let before = tree(m.path());
    let run = apply(
        &example("fleet"),
        m.path(),
        &["--host", "web-001", "--noop", "--format", "json"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    for (id, status) in statuses(&run.stdout) {
        assert_eq!(status, "would_change", "{id}");
    }
    assert_eq!(tree(m.path()), before);
}

#[test]
fn a_symbolic_link_planted_at_a_file_is_replaced_and_its_target_untouched() {
    let m = machine();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("shadow-copy");
    fs::write(&target, "precious\n").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
    symlink(&target, m.path().join("etc/motd")).unwrap();

    let noop = apply(
        &example("fleet"),
        m.path(),
        &["--host", "web-001", "--noop"],
    );
    assert!(
        noop.stdout.contains(&format!(
            "  type symbolic link to {} -> file\n",
            target.display()
        )),
        "{}",
        noop.stdout
    );
    let run = apply(&example("fleet"), m.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious\n");
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    let motd = fs::symlink_metadata(m.path().join("etc/motd")).unwrap();
    assert!(motd.file_type().is_file());
    assert_eq!(motd.permissions().mode() & 0o7777, 0o644);
    assert_eq!(
        fs::read_to_string(m.path().join("etc/motd")).unwrap(),
        "This host is managed by Datum; local changes are overwritten.\n"
    );
}

#[test]
fn a_failure_skips_only_what_comes_after_it() {
    let m = machine();
    let fleet = fixture("apply/skips");
    let run = apply(&fleet, m.path(), &["--host", "app-001"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    insta::assert_snapshot!("failure_skips_dependents", scrub(&run.stdout, m.path()));
    assert!(m.path().join("etc/independent.conf").is_file());
    assert!(!m.path().join("etc/after.conf").exists());
    // Failures alone: 4.
    let again = apply(&fleet, m.path(), &["--host", "app-001", "--format", "json"]);
    assert_eq!(again.code, 4, "{}", again.stdout);
    assert_eq!(
        statuses(&again.stdout),
        [
            ("File[broken]".to_owned(), "failed".to_owned()),
            ("File[after-broken]".to_owned(), "skipped".to_owned()),
            ("File[independent]".to_owned(), "unchanged".to_owned()),
            ("Service[app]".to_owned(), "skipped".to_owned()),
        ]
    );
}

#[test]
fn quiet_prints_only_the_errors_and_the_status_says_the_rest() {
    let m = machine();
    let fleet = fixture("apply/skips");
    let run = apply(&fleet, m.path(), &["--host", "app-001", "-q"]);
    assert_eq!(run.code, 6, "{}\n{}", run.stdout, run.stderr);
    // The failure and its error; no start line, change, skip or summary.
    assert_eq!(
        scrub(&run.stdout, m.path()),
        "failed: File[broken] /missing/broken.conf\n  error: cannot create /missing/broken.conf: the parent directory /missing does not exist (Datum does not create it on its own: declare a Directory resource for it)\n"
    );
    assert_eq!(run.stderr, "");
    assert!(m.path().join("etc/independent.conf").is_file());
    // A run with changes and no failure prints nothing at all.
    let m = machine();
    let run = apply(&example("fleet"), m.path(), &["--host", "web-001", "-q"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
}

#[test]
fn a_cycle_through_automatic_edges_names_every_resource_and_changes_nothing() {
    let m = machine();
    let before = tree(m.path());
    let run = apply(&fixture("apply/cycle"), m.path(), &["--host", "app-001"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr, @r"
    error: resources wait on each other in 2 cycles; nothing was applied
      Directory[app] -> File[app-conf] -> Directory[app]
        Directory[app] requires File[app-conf]
        File[app-conf] is inside Directory[app]
      File[alice-key] -> User[alice] -> File[alice-key]
        File[alice-key] is owned by User[alice]
        User[alice] requires File[alice-key]
    ");
    assert_eq!(tree(m.path()), before);
}

#[test]
fn a_host_that_does_not_resolve_changes_nothing() {
    let m = machine();
    let before = tree(m.path());
    let run = apply(&example("conflict"), m.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("error: conflicting values for File[nginx-config].mode"),
        "{}",
        run.stderr
    );
    assert_eq!(tree(m.path()), before);
}

#[test]
fn an_unknown_host_says_where_its_name_came_from() {
    let m = machine();
    fs::write(m.path().join("etc/datum/host"), "web-01\n").unwrap();
    let run = apply(&example("fleet"), m.path(), &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        scrub(&run.stderr, m.path()),
        "note: the host name `web-01` came from [ROOT]/etc/datum/host; --host NAME names another\n\
         error: no host named `web-01` in this fleet\n  = hint: the nearest host name is `web-001`; `datum hosts` lists them all\n"
    );
}

#[test]
fn a_second_run_fails_clearly_while_the_lock_is_held() {
    let m = machine();
    let lock = m.path().join("var/lib/datum/apply.lock");
    fs::create_dir_all(lock.parent().unwrap()).unwrap();
    // Held far longer than any wait below, so a slow machine cannot see it
    // released; killed once the run is refused.
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "600"])
        .spawn()
        .unwrap();
    // Wait until the holder has the lock (bounded: fails only if it never
    // does).
    let start = Instant::now();
    while Command::new("flock")
        .args(["--nonblock"])
        .arg(&lock)
        .arg("true")
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "flock never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = apply(&example("fleet"), m.path(), &["--host", "web-001"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(run.code, 1);
    assert_eq!(
        scrub(&run.stderr, m.path()),
        "error: another datum apply is running: [ROOT]/var/lib/datum/apply.lock is locked\n  \
         = hint: wait for that run to finish; the lock is released when it ends, even if it is killed\n"
    );
    assert!(!m.path().join("etc/motd").exists());
}

#[test]
fn a_root_that_is_not_a_directory_is_bad_usage() {
    let run = Run::from(
        datum()
            .arg("--fleet")
            .arg(example("fleet"))
            .args([
                "apply",
                "--root",
                "/nonexistent/datum-root",
                "--host",
                "web-001",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 64);
    assert_eq!(
        run.stderr,
        "error: --root /nonexistent/datum-root is not a directory\n"
    );
}

/// A fleet with one File whose 200 MB content comes from `source`.
fn big_fleet(dir: &Path, content: &[u8]) {
    fs::create_dir_all(dir.join("files")).unwrap();
    // The payload is over the default limit of 64 MiB: the fleet raises it.
    fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: big\nlimits: {source_bytes: 1073741824}\n",
    )
    .unwrap();
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: big-001\n",
    )
    .unwrap();
    fs::write(
        dir.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: big\nprecedence: 0\nmatch: {}\nresources:\n  \
         File[big]:\n    path: /data/big.bin\n    mode: \"0640\"\n    source: files/big.bin\n",
    )
    .unwrap();
    fs::write(dir.join("files/big.bin"), content).unwrap();
}

/// Temporary files a killed write left beside the target.
fn leftovers(dir: &Path) -> usize {
    fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".big.bin.datum-")
        })
        .count()
}

#[test]
fn a_run_killed_while_writing_leaves_the_old_file_or_the_new_one_never_a_mix() {
    const SIZE: usize = 200 * 1024 * 1024;
    let old: Vec<u8> = (0..SIZE).map(|i| b'a' + (i % 7) as u8).collect();
    let new: Vec<u8> = (0..SIZE).map(|i| b'n' + (i % 5) as u8).collect();
    let fleet = tempfile::tempdir().unwrap();
    big_fleet(fleet.path(), &new);
    let m = tempfile::tempdir().unwrap();
    let data = m.path().join("data");
    fs::create_dir_all(&data).unwrap();
    let target = data.join("big.bin");

    // Kill points: before the write starts, as soon as the temporary file
    // appears, with half of it written, and with all of it written (during
    // the fsync before the rename).
    let points: [Option<u64>; 4] = [None, Some(0), Some(SIZE as u64 / 2), Some(SIZE as u64)];
    let mut mid_write = 0;
    for point in points {
        fs::write(&target, &old).unwrap();
        let mut child = spawn_apply(
            fleet.path(),
            m.path(),
            "big-001",
            Stdio::null(),
            Stdio::null(),
        );
        let start = Instant::now();
        match point {
            None => std::thread::sleep(Duration::from_millis(30)),
            Some(size) => loop {
                let written = fs::read_dir(&data).unwrap().find_map(|e| {
                    let e = e.ok()?;
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(".big.bin.datum-")
                        .then(|| e.metadata().map(|m| m.len()).unwrap_or(0))
                });
                if written.is_some_and(|w| w >= size) || child.try_wait().unwrap().is_some() {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(120),
                    "the write never started"
                );
                std::thread::sleep(Duration::from_micros(200));
            },
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let now = fs::read(&target).unwrap();
        let left = leftovers(&data);
        eprintln!(
            "killed at {point:?}: {}, {left} temporary file(s) left",
            if now == old {
                "old content"
            } else if now == new {
                "new content"
            } else {
                "MIXED"
            }
        );
        if left > 0 {
            mid_write += 1;
        }
        assert!(
            now == old || now == new,
            "killed at {point:?}: the file is neither the old content nor the new ({} bytes)",
            now.len()
        );
    }
    assert!(
        mid_write >= 1,
        "no kill landed while the file was being written"
    );

    // A run left alone finishes the job and clears what the killed ones left.
    fs::write(&target, &old).unwrap();
    let run = apply(fleet.path(), m.path(), &["--host", "big-001"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("sha256"), "{}", run.stdout);
    assert!(fs::read(&target).unwrap() == new);
    assert_eq!(leftovers(&data), 0);
}

#[test]
fn a_closed_stdout_does_not_stop_the_run_and_the_status_still_tells() {
    let m = machine();
    let mut child = spawn_apply(
        &example("fleet"),
        m.path(),
        "web-001",
        Stdio::piped(),
        Stdio::piped(),
    );
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // Every resource was applied: the next run has nothing to do.
    assert_eq!(
        apply(&example("fleet"), m.path(), &["--host", "web-001"]).code,
        0
    );
}
