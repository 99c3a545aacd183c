//! `datum apply --root DIR` stays inside DIR: links planted (relative and
//! absolute) at every component of every path apply touches never lead
//! it out, small state files are refused unless regular and small, a file
//! with several hard links is replaced rather than changed in place, and a
//! run as root refuses a fleet others could have changed.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, apply_under, datum, run_in};

/// What every file outside the root holds, so output can be searched for it.
const SECRET: &str = "outsidesecret";

/// A fleet with one host whose manifest touches files, directories, a
/// link, and the account databases.
fn fleet(dir: &Path) {
    fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: confine\n",
    )
    .unwrap();
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\n",
    )
    .unwrap();
    fs::write(
        dir.join("base.yaml"),
        r#"datum: v1alpha1
type: Layer
name: base
precedence: 0
match: {}
resources:
  Directory[app]:
    path: /etc/app
    mode: "0750"
  File[app-conf]:
    path: /etc/app/app.conf
    content: "inside\n"
    mode: "0640"
    owner: root
  Directory[app-sub]:
    path: /etc/app/sub
  Symlink[app-current]:
    path: /etc/app/current
    target: /etc/app/app.conf
  File[motd]:
    path: /etc/motd
    content: "hello\n"
  Group[ops]:
    gid: 3000
  User[deploy]:
    uid: 3000
    group: ops
    shell: /bin/sh
"#,
    )
    .unwrap();
}

/// Every path apply touches for that fleet (without the leading `/`),
/// directories before what is in them.
const TOUCHED: &[&str] = &[
    "etc",
    "etc/app",
    "etc/app/app.conf",
    "etc/app/sub",
    "etc/app/current",
    "etc/motd",
    "etc/passwd",
    "etc/group",
    "etc/shadow",
    "etc/gshadow",
    "etc/datum",
    "etc/datum/host",
    "var",
    "var/lib",
    "var/lib/datum",
    "var/lib/datum/apply.lock",
    "var/lib/datum/restarts",
];

/// `BASE/root`, a small machine, and `BASE/outside`, the same tree whose
/// every file holds [`SECRET`].
struct Site {
    base: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let base = tempfile::tempdir().unwrap();
        let site = Site { base };
        for top in ["root", "outside"] {
            let dir = site.base.path().join(top);
            for d in ["etc/datum", "etc/app/sub", "var/lib/datum"] {
                fs::create_dir_all(dir.join(d)).unwrap();
            }
        }
        let root = site.root();
        fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
        fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
        fs::write(root.join("etc/shadow"), "root:*:19000:0:99999:7:::\n").unwrap();
        fs::write(root.join("etc/gshadow"), "root:*::\n").unwrap();
        fs::write(root.join("etc/datum/host"), "web-001\n").unwrap();
        // Inside the root, only the layout: the files apply makes are
        // made by apply.
        fs::remove_dir_all(root.join("etc/app")).unwrap();
        let out = site.outside();
        for path in TOUCHED {
            let p = out.join(path);
            if !p.exists() {
                fs::write(&p, format!("{SECRET}:x:4242:4242:{SECRET}:/:/bin/sh\n")).unwrap();
            }
        }
        fs::write(out.join("etc/datum/host"), format!("{SECRET}\n")).unwrap();
        fs::write(out.join("var/lib/datum/restarts"), format!("{SECRET}\n")).unwrap();
        fs::set_permissions(
            out.join("etc/app/app.conf"),
            fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        site
    }

    fn root(&self) -> PathBuf {
        self.base.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.base.path().join("outside")
    }

    /// Replaces `ROOT/path` (whatever is there) with a link to `target`.
    fn plant(&self, path: &str, target: &Path) {
        let at = self.root().join(path);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(&at).unwrap(),
            Ok(_) => fs::remove_file(&at).unwrap(),
            Err(_) => fs::create_dir_all(at.parent().unwrap()).unwrap(),
        }
        symlink(target, &at).unwrap();
    }

    /// `datum apply --root ROOT ARGS`.
    fn apply(&self, fleet: &Path, args: &[&str]) -> Run {
        let root = self.root();
        let mut all = vec!["apply", "--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        run_in(fleet, &all)
    }
}

/// Everything about a tree a run could change: per entry its type, mode,
/// owner, size, times of change, and content or link target.
fn snapshot(top: &Path) -> BTreeMap<PathBuf, String> {
    snapshot_with(top, true)
}

/// [`snapshot`], without the link count and the time of the last status
/// change when `links` is false: replacing one name of a file with
/// several changes those of the inode the other names keep.
fn snapshot_with(top: &Path, links: bool) -> BTreeMap<PathBuf, String> {
    fn walk(top: &Path, dir: &Path, links: bool, out: &mut BTreeMap<PathBuf, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let m = fs::symlink_metadata(&path).unwrap();
            let what = if m.file_type().is_symlink() {
                format!("link {}", fs::read_link(&path).unwrap().display())
            } else if m.is_file() {
                format!("file {:?}", fs::read(&path).unwrap())
            } else {
                format!("type {:o}", m.mode() & 0o170000)
            };
            let mut line = format!(
                "{what} mode {:o} {}:{} size {} mtime {}.{}",
                m.mode(),
                m.uid(),
                m.gid(),
                m.len(),
                m.mtime(),
                m.mtime_nsec(),
            );
            if links {
                line.push_str(&format!(
                    " links {} ctime {}.{}",
                    m.nlink(),
                    m.ctime(),
                    m.ctime_nsec()
                ));
            }
            out.insert(path.strip_prefix(top).unwrap().to_path_buf(), line);
            if m.is_dir() {
                walk(top, &path, links, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(top, top, links, &mut out);
    out
}

/// The link targets to plant at `path`: absolute, and relative climbing
/// out with `..`, both naming the same path in the outside tree.
fn escapes(site: &Site, path: &str) -> [(String, PathBuf); 2] {
    let depth = path.matches('/').count() + 1;
    let relative = format!("{}outside/{path}", "../".repeat(depth));
    [
        (format!("absolute {path}"), site.outside().join(path)),
        (format!("relative {path}"), PathBuf::from(relative)),
    ]
}

#[test]
fn links_planted_at_every_component_never_lead_apply_out_of_the_root() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    // A clean run first: the plan is what every planted run is compared to.
    let clean = Site::new();
    let first = clean.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
    assert_eq!(
        fs::read_to_string(clean.root().join("etc/app/app.conf")).unwrap(),
        "inside\n"
    );
    let mut cases = 0;
    for path in TOUCHED {
        for (what, target) in escapes(&Site::new(), path) {
            let site = Site::new();
            site.plant(path, &target);
            let before = snapshot(&site.outside());
            let base_before: Vec<_> = fs::read_dir(site.base.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            for args in [
                &["--host", "web-001"][..],
                &[][..],
                &["--host", "web-001", "--noop"][..],
                &["--host", "web-001", "--format", "json"][..],
            ] {
                let run = site.apply(fleet_dir.path(), args);
                let shown = format!(
                    "{what} {args:?}: exit {}\n{}{}",
                    run.code, run.stdout, run.stderr
                );
                assert!(
                    [0, 1, 2, 4, 6].contains(&run.code),
                    "unexpected exit status: {shown}"
                );
                assert!(
                    !run.stdout.to_lowercase().contains(SECRET)
                        && !run.stderr.to_lowercase().contains(SECRET),
                    "an outside file was read into the output: {shown}"
                );
                assert_eq!(
                    snapshot(&site.outside()),
                    before,
                    "the outside tree changed: {shown}"
                );
            }
            let base_after: Vec<_> = fs::read_dir(site.base.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(base_after, base_before, "{what}: created beside the root");
            cases += 1;
        }
    }
    assert_eq!(cases, TOUCHED.len() * 2);
}

#[test]
fn a_link_to_an_outside_directory_is_followed_inside_the_root() {
    // `ROOT/etc -> /somewhere/etc` means `ROOT/somewhere/etc`, as it would
    // in a chroot: apply works there, and not in the real one.
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    let outside_etc = site.outside().join("etc");
    let mirrored = site.root().join(outside_etc.strip_prefix("/").unwrap());
    crate::common::copy_tree(&site.root().join("etc"), &mirrored);
    site.plant("etc", &outside_etc);
    let before = snapshot(&site.outside());
    let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(snapshot(&site.outside()), before);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(
        fs::read_to_string(mirrored.join("app/app.conf")).unwrap(),
        "inside\n",
        "{shown}"
    );
    assert_eq!(
        fs::read_to_string(mirrored.join("motd")).unwrap(),
        "hello\n"
    );
    // The shadow tools resolve paths as any program does: they would
    // follow the link out, so they are not run.
    assert_eq!(run.code, 6, "{shown}");
    assert!(
        run.stdout.contains(
            "/etc is a symbolic link, or passes through one, so they would reach outside"
        ),
        "{shown}"
    );
}

/// The root's state file replaced by `make`, then one run, which must end
/// (a run that blocks on the file, a FIFO, a device, a huge one, fails the
/// test: [`apply_under`]); the refusal takes no time of its own.
fn with_state_file(make: impl FnOnce(&Path)) -> Run {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    make(&site.root().join("var/lib/datum/restarts"));
    apply_under(&site.root(), "web-001", fleet_dir.path(), &[])
}

#[test]
fn dev_zero_or_a_fifo_as_the_state_file_is_refused_at_once() {
    let run = with_state_file(|p| symlink("/dev/zero", p).unwrap());
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @"error: cannot use [ROOT]/var/lib/datum/restarts: it is a symbolic link, and Datum reads this file only as a regular file");
    let run = with_state_file(|p| {
        let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
        assert!(ok);
    });
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @"error: cannot use [ROOT]/var/lib/datum/restarts: it is a FIFO, not a regular file");
    if datum_testkit::tools::root() {
        // The device itself, not a link to it.
        let run = with_state_file(|p| {
            let ok = Command::new("mknod")
                .arg(p)
                .args(["c", "1", "5"])
                .status()
                .unwrap()
                .success();
            assert!(ok);
        });
        assert_eq!(run.code, 1);
        assert!(
            run.stderr.contains("it is a device, not a regular file"),
            "{}",
            run.stderr
        );
    }
    // A huge (sparse) file is refused by its size, unread.
    let run = with_state_file(|p| {
        fs::File::create(p).unwrap().set_len(1 << 40).unwrap();
    });
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @"error: cannot use [ROOT]/var/lib/datum/restarts: it is larger than 262144 bytes");
}

#[test]
fn a_state_file_that_is_not_service_names_is_refused_without_showing_it() {
    let run = with_state_file(|p| {
        fs::write(p, format!("nginx\n\x1b[2J{SECRET}:x:0:0\n")).unwrap();
    });
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @"error: cannot use [ROOT]/var/lib/datum/restarts: line 2 is not a service name; it holds one service name a line, and Datum writes it (remove it to forget the restarts owed)");
}

/// One run without `--host`, the host file made by `make`.
fn with_host_file(make: impl FnOnce(&Path)) -> Run {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    let host = site.root().join("etc/datum/host");
    fs::remove_file(&host).unwrap();
    make(&host);
    let run = site.apply(fleet_dir.path(), &["--noop"]);
    let root = site.root().canonicalize().unwrap();
    let scrub = |s: &str| s.replace(&root.display().to_string(), "[ROOT]");
    Run {
        code: run.code,
        stdout: scrub(&run.stdout),
        stderr: scrub(&run.stderr),
    }
}

#[test]
fn the_host_file_is_read_only_as_a_small_regular_file_and_never_echoed() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("name");
    fs::write(&secret, format!("{SECRET}\n")).unwrap();
    let run = with_host_file(|p| symlink(&secret, p).unwrap());
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @r"
    error: cannot read [ROOT]/etc/datum/host: it is a symbolic link, and Datum reads this file only as a regular file
      = hint: name the host with --host NAME
    ");
    let run = with_host_file(|p| fs::write(p, format!("\x1b[2J{SECRET}\n")).unwrap());
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stderr, @r"
    error: [ROOT]/etc/datum/host does not hold a host name: a host name is lowercase letters, digits, `-` and `.`, at most 253 characters, starting and ending with a letter or digit
      = hint: name the host with --host NAME
    ");
    let run = with_host_file(|p| fs::write(p, "web-001\nroot:x:0:0\n").unwrap());
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("it holds more than one word"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("root:x"), "{}", run.stderr);
    let run = with_host_file(|p| fs::write(p, "x".repeat(5000)).unwrap());
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("it is larger than 1024 bytes"),
        "{}",
        run.stderr
    );
    let run = with_host_file(|p| fs::write(p, " web-001 \n").unwrap());
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_file_with_another_hard_link_is_replaced_and_the_other_name_untouched() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    fs::create_dir_all(site.root().join("etc/app")).unwrap();
    let outside_file = site.outside().join("etc/app/app.conf");
    fs::hard_link(&outside_file, site.root().join("etc/app/app.conf")).unwrap();
    let before = snapshot_with(&site.outside(), false);
    let run = site.apply(fleet_dir.path(), &["--host", "web-001", "--noop"]);
    let root = site.root().canonicalize().unwrap();
    let block: String = run
        .stdout
        .split("would change: ")
        .find(|b| b.starts_with("File[app-conf]"))
        .unwrap()
        .to_owned();
    insta::assert_snapshot!(block.replace(&root.display().to_string(), "[ROOT]"), @r"
    File[app-conf] /etc/app/app.conf
      links 2 hard links -> 1 (replaced by a new file)
      content
        --- /etc/app/app.conf (on disk)
        +++ /etc/app/app.conf (manifest)
        @@ -0,0 +1 @@
        +inside
      mode 0600 -> 0640
    ");
    let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains(SECRET), "{}", run.stdout);
    assert_eq!(snapshot_with(&site.outside(), false), before);
    let inside = fs::symlink_metadata(site.root().join("etc/app/app.conf")).unwrap();
    assert_eq!(inside.nlink(), 1);
    assert_eq!(inside.mode() & 0o7777, 0o640);
    let again = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
}

#[test]
fn a_hard_linked_file_without_content_is_never_re_permissioned_in_place() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    fs::write(
        fleet_dir.path().join("base.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\nresources:\n  \
         File[motd]:\n    path: /etc/motd\n    mode: \"0644\"\n",
    )
    .unwrap();
    let site = Site::new();
    fs::hard_link(
        site.outside().join("etc/motd"),
        site.root().join("etc/motd"),
    )
    .unwrap();
    fs::set_permissions(
        site.root().join("etc/motd"),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let before = snapshot(&site.outside());
    let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    let root = site.root().canonicalize().unwrap();
    let stdout = run.stdout.replace(&root.display().to_string(), "[ROOT]");
    insta::assert_snapshot!(stdout, @r"
    applying web-001: 1 resource, under [ROOT]
    failed: File[motd] /etc/motd
      error: /etc/motd has 2 hard links: changing its mode or owner in place would change every other name of the file too (which may be outside the root), and the manifest gives no content to replace it with; give the File `content` or `source`, or remove the other links
    summary: 1 failed
    ");
    assert_eq!(snapshot(&site.outside()), before);
}

#[test]
fn temporary_files_a_killed_run_left_are_removed_by_the_next_run() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    let first = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
    // What a run killed between creating and renaming leaves: one for a
    // path still managed, one for a path no longer in the manifest, one
    // for the state file; and a name that only looks similar.
    let app = site.root().join("etc/app");
    fs::write(app.join(".app.conf.datum-Ab12Cd"), "half").unwrap();
    fs::write(app.join(".old.conf.datum-Zz9Yy8"), "half").unwrap();
    symlink("/etc/app/app.conf", app.join(".current.datum-Qq1Ww2")).unwrap();
    fs::write(app.join(".keep.datum-toolong1"), "not ours").unwrap();
    let state = site.root().join("var/lib/datum");
    fs::write(state.join(".restarts.datum-Rr5Tt6"), "half").unwrap();
    let noop = site.apply(
        fleet_dir.path(),
        &["--host", "web-001", "--noop", "--format", "json"],
    );
    assert_eq!(noop.code, 0, "{}{}", noop.stdout, noop.stderr);
    assert!(
        noop.stdout.contains(
            "/etc/app/.app.conf.datum-Ab12Cd was left by an interrupted run; a real run removes it"
        ),
        "{}",
        noop.stdout
    );
    assert!(app.join(".app.conf.datum-Ab12Cd").exists());
    let run = site.apply(fleet_dir.path(), &["--host", "web-001", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for gone in [
        ".app.conf.datum-Ab12Cd",
        ".old.conf.datum-Zz9Yy8",
        ".current.datum-Qq1Ww2",
    ] {
        assert!(
            fs::symlink_metadata(app.join(gone)).is_err(),
            "{gone} is still there"
        );
        assert!(
            run.stdout.contains(&format!("removed /etc/app/{gone}")),
            "{}",
            run.stdout
        );
    }
    assert!(app.join(".keep.datum-toolong1").exists());
    assert!(!state.join(".restarts.datum-Rr5Tt6").exists());
}

#[test]
fn the_shadow_tools_do_not_run_when_a_file_they_edit_leads_out() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    for (path, relative) in [
        ("etc/passwd-", false),
        ("etc/.pwd.lock", true),
        ("etc/gshadow", false),
    ] {
        let site = Site::new();
        let target = if relative {
            PathBuf::from(format!("../../outside/{path}"))
        } else {
            site.outside().join(path)
        };
        site.plant(path, &target);
        let before = snapshot(&site.outside());
        let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
        assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
        let root = site.root().canonicalize().unwrap();
        let out = run.stdout.replace(&root.display().to_string(), "[ROOT]");
        assert!(
            out.contains(&format!(
                "refusing to run the shadow tools: [ROOT]/{path} is a symbolic link, or passes through one, so they would reach outside [ROOT]"
            )),
            "{out}"
        );
        assert_eq!(snapshot(&site.outside()), before, "{path}");
    }
    // A backup the tools rewrite, hard-linked to a file outside.
    let site = Site::new();
    fs::hard_link(
        site.outside().join("etc/passwd"),
        site.root().join("etc/group-"),
    )
    .unwrap();
    let before = snapshot(&site.outside());
    let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 6, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("etc/group- has 2 hard links (the tools rewrite it)"),
        "{}",
        run.stdout
    );
    assert_eq!(snapshot(&site.outside()), before);
}

/// A fleet whose host has nothing to apply, so a run without `--root`
/// touches nothing.
fn empty_fleet(dir: &Path) {
    fs::write(
        dir.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: confine\n",
    )
    .unwrap();
    fs::write(
        dir.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: web-001\n",
    )
    .unwrap();
}

/// `datum apply --noop` of the host `web-001` of `fleet`, on this machine,
/// by whoever the tests run as (root, in CI), run by `sudo_uid` or not.
fn apply_as_root(fleet: &Path, extra: &[&str], sudo_uid: Option<&str>) -> Run {
    let mut cmd = datum();
    match sudo_uid {
        Some(uid) => cmd.env("SUDO_UID", uid),
        None => cmd.env_remove("SUDO_UID"),
    };
    let out = cmd
        .args(["apply", "--host", "web-001", "--noop"])
        .args(extra)
        .arg("--fleet")
        .arg(fleet)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_run_as_root_refuses_a_fleet_others_could_have_changed() {
    if !datum_testkit::tools::root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    empty_fleet(dir.path());
    let shown = dir.path().canonicalize().unwrap().display().to_string();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let run = apply_as_root(dir.path(), &[], None);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let stderr = run.stderr.replace(&shown, "[FLEET]");
    insta::assert_snapshot!(stderr, @r"
    error: refusing to apply as root: [FLEET] is writable by every user (mode 0777)
      = hint: whoever can change the fleet can run anything as root through it; make root its owner and `chmod o-w` it
      = hint: --trust-fleet applies it anyway
    ");
    let trusted = apply_as_root(dir.path(), &["--trust-fleet"], None);
    assert_eq!(trusted.code, 0, "{}", trusted.stderr);
    assert!(
        trusted.stdout.starts_with("noop for web-001: 0 resources"),
        "{}",
        trusted.stdout
    );

    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(apply_as_root(dir.path(), &[], None).code, 0);
    let ok = Command::new("chown")
        .arg("4242")
        .arg(dir.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let run = apply_as_root(dir.path(), &[], None);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("is owned by uid"), "{}", run.stderr);
    assert!(run.stderr.contains("--trust-fleet"), "{}", run.stderr);
    // The user who ran sudo may own it; another may not.
    let sudo = apply_as_root(dir.path(), &[], Some("4242"));
    assert_eq!(sudo.code, 0, "{}", sudo.stderr);
    let other = apply_as_root(dir.path(), &[], Some("4243"));
    assert_eq!(other.code, 1, "{}", other.stderr);
    assert!(
        other.stderr.contains("or uid 4243 (who ran sudo)"),
        "{}",
        other.stderr
    );
    // --root applies to a directory, not this machine: no check.
    let machine = tempfile::tempdir().unwrap();
    let out = datum()
        .args(["apply", "--host", "web-001", "--noop", "--root"])
        .arg(machine.path())
        .arg("--fleet")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// A run by a user other than root does not check the fleet: it cannot
/// do as root what the fleet asks, whoever wrote it.
#[test]
fn a_run_as_another_user_trusts_the_fleet() {
    if !datum_testkit::tools::root() || !datum_testkit::tools::installed(&["setpriv"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    empty_fleet(dir.path());
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    for file in ["datum.yaml", "hosts.yaml"] {
        fs::set_permissions(dir.path().join(file), fs::Permissions::from_mode(0o644)).unwrap();
    }
    let binary = assert_cmd::cargo::cargo_bin("datum");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&binary)
        .args(["apply", "--host", "web-001", "--noop", "--fleet"])
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .env_remove("SUDO_UID")
        .env_remove("DATUM_FLEET")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("noop for web-001: 0 resources"),
        "{stderr}"
    );
}

/// `datum agent --once --root ROOT --host web-001`.
fn agent(root: &Path) -> Run {
    let out = datum()
        .args(["agent", "--once", "--host", "web-001", "--root"])
        .arg(root)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_agent_keeps_its_state_reports_and_metrics_inside_the_root() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let outside = base.path().join("outside");
    for d in ["etc/datum", "var/lib/datum/agent", "reports", "prometheus"] {
        fs::create_dir_all(root.join(d)).unwrap();
        fs::create_dir_all(outside.join(d)).unwrap();
    }
    fs::write(
        root.join("etc/datum/agent.yaml"),
        "bundle:\n  url: /srv/bundles/{host}.bundle\ninsecure_allow_unsigned: true\n",
    )
    .unwrap();
    let secret = outside.join("var/lib/datum/agent/applied.json");
    fs::write(
        &secret,
        format!("{{\"mode\":\"{SECRET}\",\"commit_time\":1}}\n"),
    )
    .unwrap();
    // The record of the last input, the reports and the metrics directory:
    // each a link out.
    symlink(&secret, root.join("var/lib/datum/agent/applied.json")).unwrap();
    symlink(outside.join("reports"), root.join("var/lib/datum/reports")).unwrap();
    fs::create_dir_all(root.join("var/lib")).unwrap();
    symlink(
        "../../../outside/prometheus",
        root.join("var/lib/prometheus"),
    )
    .unwrap();
    let before = snapshot(&outside);
    let run = agent(&root);
    let shown = format!("exit {}\n{}{}", run.code, run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{shown}");
    assert!(!shown.to_lowercase().contains(SECRET), "{shown}");
    assert!(
        shown.contains(
            "agent/applied.json is not a record of the last applied input: it is a symbolic link"
        ),
        "{shown}"
    );
    assert_eq!(snapshot(&outside), before, "{shown}");

    // The configuration itself, a link to a file outside: not read, so no
    // line of it can show in a diagnostic.
    fs::write(
        outside.join("etc/datum/agent.yaml"),
        format!("{SECRET}: [\n"),
    )
    .unwrap();
    fs::remove_file(root.join("etc/datum/agent.yaml")).unwrap();
    symlink(
        outside.join("etc/datum/agent.yaml"),
        root.join("etc/datum/agent.yaml"),
    )
    .unwrap();
    let before = snapshot(&outside);
    let run = agent(&root);
    let shown = format!("exit {}\n{}{}", run.code, run.stdout, run.stderr);
    assert_ne!(run.code, 0, "{shown}");
    assert!(!shown.to_lowercase().contains(SECRET), "{shown}");
    assert!(shown.contains("it is a symbolic link"), "{shown}");
    assert_eq!(snapshot(&outside), before);
}

#[test]
fn a_state_directory_linked_out_is_not_created_outside_and_says_why() {
    let fleet_dir = tempfile::tempdir().unwrap();
    fleet(fleet_dir.path());
    let site = Site::new();
    let target = site.outside().join("elsewhere");
    site.plant("var/lib/datum", &target);
    let run = site.apply(fleet_dir.path(), &["--host", "web-001"]);
    assert_eq!(run.code, 1);
    assert!(!target.exists());
    let root = site.root().canonicalize().unwrap();
    let stderr = run.stderr.replace(&root.display().to_string(), "[ROOT]");
    insta::assert_snapshot!(stderr, @"error: cannot use [ROOT]/var/lib/datum: /var/lib/datum is a symbolic link to nothing inside [ROOT]");
}
