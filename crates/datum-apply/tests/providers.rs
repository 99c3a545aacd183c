//! The real providers against the real tools, in temporary roots: dpkg with
//! a `.deb` built here, the shadow tools with `--prefix`, `systemctl
//! --root`, and the filesystem.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use datum_apply::provider::dpkg::Dpkg;
use datum_apply::provider::fs::{Directories, Files, Symlinks};
use datum_apply::provider::shadow::{Groups, Users};
use datum_apply::provider::systemd::Systemd;
use datum_apply::provider::{Context, Pending, Provider, Restarted, ServiceProvider};
use datum_apply::report::{Attribute, Change};
use datum_apply::root::Root;
use datum_testkit::tools;

use datum_apply::spec::{
    DirectorySpec, Ensure, FileSpec, GroupSpec, PackageSpec, ServiceSpec, SymlinkSpec, UserSpec,
};

static PENDING: Pending = Pending {
    paths: std::collections::BTreeSet::new(),
    users: std::collections::BTreeSet::new(),
    groups: std::collections::BTreeSet::new(),
};

fn cx() -> Context<'static> {
    Context {
        noop: false,
        pending: &PENDING,
    }
}

/// Examines, converges, and checks that a second look finds nothing left.
fn converge<S>(p: &dyn Provider<S>, spec: &S) -> Vec<Change> {
    let ex = p.examine(spec, &cx()).unwrap();
    p.converge(spec, &ex.changes, &cx()).unwrap();
    let again = p.examine(spec, &cx()).unwrap();
    assert_eq!(again.changes, [], "still differs after converging");
    ex.changes
}

fn command_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn accounts(root: &Path) {
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
}

fn file(path: &str, content: Option<&str>) -> FileSpec {
    FileSpec {
        path: path.into(),
        ensure: Ensure::Present,
        owner: None,
        group: None,
        mode: None,
        content: content.map(|c| c.as_bytes().to_vec().into()),
        sensitive: false,
        secret: None,
    }
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn a_file_keeps_the_attributes_the_manifest_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    accounts(dir.path());
    let path = dir.path().join("etc/app.conf");
    fs::write(&path, "old\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::chown(&path, Some(1234), Some(4321)).unwrap();
    let files = Files::new(Root::at(dir.path()));
    converge(&files, &file("/etc/app.conf", Some("new\n")));
    assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
    let m = fs::metadata(&path).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o640, 1234, 4321));

    // Only the mode differs: the file is changed in place, not rewritten.
    let inode = m.ino();
    let mut spec = file("/etc/app.conf", Some("new\n"));
    spec.mode = Some(0o600);
    assert_eq!(
        converge(&files, &spec),
        [Change::new(Attribute::Mode, "0640", "0600")]
    );
    assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn a_new_file_gets_0644_and_the_named_owner_from_the_roots_own_accounts() {
    let dir = tempfile::tempdir().unwrap();
    accounts(dir.path());
    // `ops` exists only in this root's files, not on the running system.
    fs::write(
        dir.path().join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/bash\nops:x:2000:2000::/home/ops:/bin/bash\n",
    )
    .unwrap();
    fs::write(dir.path().join("etc/group"), "root:x:0:\nops:x:2000:\n").unwrap();
    let files = Files::new(Root::at(dir.path()));
    let mut spec = file("/etc/plain", None);
    assert_eq!(
        converge(&files, &spec),
        [
            Change::new(Attribute::Ensure, "absent", "present"),
            Change::set(Attribute::Mode, "0644")
        ]
    );
    let plain = fs::metadata(dir.path().join("etc/plain")).unwrap();
    assert_eq!((plain.mode() & 0o7777, plain.len()), (0o644, 0));
    spec.path = "/etc/owned".into();
    spec.owner = Some("ops".into());
    spec.group = Some("ops".into());
    converge(&files, &spec);
    let owned = fs::metadata(dir.path().join("etc/owned")).unwrap();
    assert_eq!((owned.uid(), owned.gid()), (2000, 2000));
    // A name nobody has is a failure, not a guess...
    spec.owner = Some("nobody-here".into());
    let err = files.examine(&spec, &cx()).unwrap_err();
    assert_eq!(
        err.0,
        format!(
            "no user named nobody-here in {}/etc/passwd",
            dir.path().display()
        )
    );
    // ...unless, in a noop run, a User resource before it would add it.
    let mut pending = Pending::default();
    pending.users.insert("nobody-here".into());
    let noop = Context {
        noop: true,
        pending: &pending,
    };
    assert_eq!(
        files.examine(&spec, &noop).unwrap().changes,
        [Change::new(Attribute::Owner, "ops", "nobody-here")]
    );
}

#[test]
fn a_missing_parent_directory_is_a_failure_not_a_mkdir() {
    let dir = tempfile::tempdir().unwrap();
    let files = Files::new(Root::at(dir.path()));
    let err = files
        .examine(&file("/etc/nginx/nginx.conf", Some("x")), &cx())
        .unwrap_err();
    assert_eq!(
        err.0,
        "cannot create /etc/nginx/nginx.conf: the parent directory /etc/nginx does not exist \
         (Datum does not create it on its own: declare a Directory resource for it)"
    );
    assert!(!dir.path().join("etc").exists());
    // In a noop run, a directory an earlier resource would create is fine.
    let mut pending = Pending::default();
    pending.paths.insert("/etc/nginx".into());
    let noop = Context {
        noop: true,
        pending: &pending,
    };
    assert!(
        files
            .examine(&file("/etc/nginx/nginx.conf", Some("x")), &noop)
            .is_ok()
    );
}

#[test]
fn sensitive_content_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("secret"), "password=old\n").unwrap();
    let files = Files::new(Root::at(dir.path()));
    let mut spec = file("/secret", Some("password=new-and-longer\n"));
    spec.sensitive = true;
    let changes = files.examine(&spec, &cx()).unwrap().changes;
    assert_eq!(
        changes,
        [Change::new(
            Attribute::Content,
            "13 bytes",
            "24 bytes (sensitive: not shown)"
        )]
    );
}

#[test]
fn a_huge_file_on_disk_is_compared_without_reading_it_whole() {
    // 64 GiB, sparse: reading it into memory would exhaust the machine.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge");
    fs::File::create(&path).unwrap().set_len(64 << 30).unwrap();
    let files = Files::new(Root::at(dir.path()));
    let changes = files
        .examine(&file("/huge", Some("small\n")), &cx())
        .unwrap()
        .changes;
    assert_eq!(
        changes,
        [Change::new(
            Attribute::Content,
            "68719476736 bytes",
            "6 bytes, sha256 4c47b3e816fbe7d4" // printf 'small\\n' | sha256sum
        )]
    );
}

#[test]
fn content_larger_than_a_diff_is_compared_as_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let want = vec![b'x'; 3 << 20];
    fs::write(&path, &want).unwrap();
    let files = Files::new(Root::at(dir.path()));
    let mut spec = file("/big", None);
    spec.content = Some(want.clone().into());
    assert_eq!(files.examine(&spec, &cx()).unwrap().changes, []);

    // One byte differs, far past what is held in memory at once.
    let mut other = want.clone();
    other[(3 << 20) - 1] = b'y';
    fs::write(&path, &other).unwrap();
    let changes = files.examine(&spec, &cx()).unwrap().changes;
    assert_eq!(changes.len(), 1, "{changes:?}");
    let from = changes[0].from.as_deref().unwrap();
    assert!(from.starts_with("3145728 bytes, sha256 "), "{from}");
    assert_ne!(changes[0].from, changes[0].to);
    spec.sensitive = true;
    assert_eq!(
        files.examine(&spec, &cx()).unwrap().changes,
        [Change::new(
            Attribute::Content,
            "3145728 bytes",
            "3145728 bytes (sensitive: not shown)"
        )]
    );
}

#[test]
fn removing_leaves_what_is_not_ours_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::at(dir.path());
    fs::create_dir_all(dir.path().join("srv/full")).unwrap();
    fs::write(dir.path().join("srv/full/x"), "x").unwrap();
    fs::write(dir.path().join("srv/file"), "x").unwrap();
    let dirs = Directories::new(root.clone());
    let full = DirectorySpec {
        path: "/srv/full".into(),
        ensure: Ensure::Absent,
        owner: None,
        group: None,
        mode: None,
    };
    let ex = dirs.examine(&full, &cx()).unwrap();
    assert_eq!(
        dirs.converge(&full, &ex.changes, &cx()).unwrap_err().0,
        "/srv/full is not empty; Datum removes only empty directories"
    );
    let links = Symlinks::new(root.clone());
    let link = SymlinkSpec {
        path: "/srv/file".into(),
        target: "/elsewhere".into(),
        ensure: Ensure::Present,
    };
    assert_eq!(
        links.examine(&link, &cx()).unwrap_err().0,
        "/srv/file is a file, not a symbolic link; Datum does not replace it"
    );
    let files = Files::new(root);
    let mut gone = file("/srv/full", None);
    gone.ensure = Ensure::Absent;
    assert_eq!(
        files.examine(&gone, &cx()).unwrap_err().0,
        "/srv/full is a directory; a File with ensure: absent removes only a file or a symbolic link"
    );
    // A link at a File's path that should be absent goes; its target stays.
    symlink(dir.path().join("srv/full/x"), dir.path().join("srv/link")).unwrap();
    gone.path = "/srv/link".into();
    converge(&files, &gone);
    assert!(dir.path().join("srv/full/x").exists());
}

#[test]
fn directories_are_created_with_their_mode_and_symlinks_repointed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::at(dir.path());
    let dirs = Directories::new(root.clone());
    let spec = DirectorySpec {
        path: "/srv".into(),
        ensure: Ensure::Present,
        owner: None,
        group: None,
        mode: Some(0o750),
    };
    converge(&dirs, &spec);
    assert_eq!(mode(&dir.path().join("srv")), 0o750);
    let links = Symlinks::new(root);
    let mut link = SymlinkSpec {
        path: "/srv/current".into(),
        target: "releases/1".into(),
        ensure: Ensure::Present,
    };
    converge(&links, &link);
    link.target = "releases/2".into();
    assert_eq!(
        converge(&links, &link),
        [Change::new(Attribute::Target, "releases/1", "releases/2")]
    );
    assert_eq!(
        fs::read_link(dir.path().join("srv/current")).unwrap(),
        Path::new("releases/2")
    );
}

/// A `.deb` of `name` at `version` in the root's archive cache.
fn deb(root: &Path, name: &str, version: &str) {
    let build = tempfile::tempdir().unwrap();
    let pkg = build.path();
    fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    fs::create_dir_all(pkg.join("usr/share/doc").join(name)).unwrap();
    fs::write(pkg.join("usr/share/doc").join(name).join("README"), version).unwrap();
    fs::write(
        pkg.join("DEBIAN/control"),
        format!(
            "Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: t <t@example.invalid>\nDescription: test\n"
        ),
    )
    .unwrap();
    let archives = root.join("var/cache/apt/archives");
    fs::create_dir_all(&archives).unwrap();
    let out = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(pkg)
        .arg(archives.join(format!("{name}_{version}_all.deb")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn packages_install_from_the_roots_archive_cache_with_dpkg() {
    if !tools::installed(&["dpkg-deb", "dpkg"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    deb(root, "hello", "1.0-1");
    deb(root, "hello", "2.0-1");
    let dpkg = Dpkg::new(Root::at(root));
    let mut spec = PackageSpec {
        provider: None,
        name: "hello".into(),
        ensure: Ensure::Present,
        version: None,
    };
    // The highest version there is.
    assert_eq!(
        converge(&dpkg, &spec),
        [Change::new(Attribute::Ensure, "absent", "installed")]
    );
    assert_eq!(dpkg.installed("hello").unwrap().as_deref(), Some("2.0-1"));
    assert_eq!(
        fs::read_to_string(root.join("usr/share/doc/hello/README")).unwrap(),
        "2.0-1"
    );
    // An exact version, downgrading.
    spec.version = Some("1.0-1".into());
    assert_eq!(
        converge(&dpkg, &spec),
        [Change::new(Attribute::Version, "2.0-1", "1.0-1")]
    );
    assert_eq!(dpkg.installed("hello").unwrap().as_deref(), Some("1.0-1"));
    // No .deb, no network: a clear failure.
    spec.version = Some("3.0-1".into());
    let ex = dpkg.examine(&spec, &cx()).unwrap();
    assert_eq!(
        dpkg.converge(&spec, &ex.changes, &cx()).unwrap_err().0,
        format!(
            "no .deb for hello version 3.0-1 in {}/var/cache/apt/archives: under --root, packages \
             are installed only from the root's archive cache, never downloaded",
            root.display()
        )
    );
    spec.version = None;
    spec.ensure = Ensure::Absent;
    assert_eq!(
        converge(&dpkg, &spec),
        [Change::new(
            Attribute::Ensure,
            "installed (1.0-1)",
            "absent"
        )]
    );
    assert_eq!(dpkg.installed("hello").unwrap(), None);
    assert!(!root.join("usr/share/doc/hello/README").exists());
}

#[test]
fn groups_and_users_are_managed_with_the_shadow_tools_under_a_prefix() {
    if !tools::installed(&["useradd", "groupadd"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    accounts(dir.path());
    let root = Root::at(dir.path());
    let groups = Groups::new(root.clone());
    let users = Users::new(root.clone());
    let mut ops = GroupSpec {
        name: "ops".into(),
        ensure: Ensure::Present,
        gid: Some(2000),
        system: false,
    };
    converge(&groups, &ops);
    converge(
        &groups,
        &GroupSpec {
            name: "wheel".into(),
            ensure: Ensure::Present,
            gid: Some(10),
            system: false,
        },
    );
    let mut user = UserSpec {
        name: "ops".into(),
        ensure: Ensure::Present,
        uid: Some(2000),
        group: Some("ops".into()),
        groups: Some(vec!["wheel".into()]),
        home: Some("/home/ops".into()),
        shell: Some("/bin/bash".into()),
        system: false,
    };
    converge(&users, &user);
    let passwd = fs::read_to_string(dir.path().join("etc/passwd")).unwrap();
    assert!(
        passwd.contains(":2000:2000::/home/ops:/bin/bash\n"),
        "{passwd}"
    );
    // A group that does not exist fails the user, unless a noop run would add it.
    let mut late = user.clone();
    late.name = "late".into();
    late.uid = None;
    late.group = Some("later".into());
    assert_eq!(
        users.examine(&late, &cx()).unwrap_err().0,
        format!(
            "late names the group later, which does not exist in {}/etc/group",
            dir.path().display()
        )
    );
    let mut pending = Pending::default();
    pending.groups.insert("later".into());
    let noop = Context {
        noop: true,
        pending: &pending,
    };
    assert_eq!(
        users.examine(&late, &noop).unwrap().changes[0],
        Change::new(Attribute::Ensure, "absent", "present")
    );
    // No home directory is made.
    assert!(!dir.path().join("home").exists());
    user.shell = Some("/bin/sh".into());
    user.groups = Some(vec![]);
    assert_eq!(
        converge(&users, &user),
        [
            Change::new(Attribute::Groups, "wheel", "(none)"),
            Change::new(Attribute::Shell, "/bin/bash", "/bin/sh")
        ]
    );
    ops.gid = Some(2001);
    assert_eq!(
        converge(&groups, &ops),
        [Change::new(Attribute::Gid, "2000", "2001")]
    );
    user.ensure = Ensure::Absent;
    converge(&users, &user);
    assert!(
        !fs::read_to_string(dir.path().join("etc/passwd"))
            .unwrap()
            .contains("ops:")
    );
    // The running system's accounts were never touched.
    assert_eq!(root.uid("root").unwrap(), Some(0));
}

#[test]
fn services_are_enabled_in_a_root_and_never_started_there() {
    if !tools::installed(&["systemctl"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("lib/systemd/system");
    fs::create_dir_all(&units).unwrap();
    fs::write(
        units.join("app.service"),
        "[Unit]\nDescription=app\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
    )
    .unwrap();
    let systemd = Systemd::new(Root::at(dir.path()));
    let mut spec = ServiceSpec {
        name: "app".into(),
        running: Some(true),
        enabled: Some(true),
    };
    let ex = systemd.examine(&spec, &cx()).unwrap();
    assert_eq!(
        ex.changes,
        [Change::new(Attribute::Enabled, "false", "true")]
    );
    assert_eq!(
        ex.notes,
        [format!(
            "not started or stopped: nothing runs from {} (`enabled` decides whether app starts when it boots)",
            dir.path().display()
        )]
    );
    converge(&systemd, &spec);
    let wants = dir
        .path()
        .join("etc/systemd/system/multi-user.target.wants/app.service");
    assert!(wants.symlink_metadata().is_ok());
    assert!(matches!(
        systemd.restart(&spec),
        Ok(Restarted::NotRunning(_))
    ));
    spec.enabled = Some(false);
    converge(&systemd, &spec);
    assert!(wants.symlink_metadata().is_err());
    // A masked unit is not unmasked behind the operator's back.
    command_ok(
        Command::new("systemctl")
            .arg(format!("--root={}", dir.path().display()))
            .args(["mask", "app"]),
    );
    spec.enabled = Some(true);
    assert_eq!(
        systemd.examine(&spec, &cx()).unwrap_err().0,
        "app is masked; Datum does not unmask it"
    );
    // A unit that is not there shows as a change, and fails clearly.
    let missing = ServiceSpec {
        name: "ghost".into(),
        running: None,
        enabled: Some(true),
    };
    let ex = systemd.examine(&missing, &cx()).unwrap();
    assert_eq!(
        ex.changes,
        [Change::new(Attribute::Enabled, "(no unit file)", "true")]
    );
    let err = systemd.converge(&missing, &ex.changes, &cx()).unwrap_err();
    assert!(err.0.contains("systemctl --root="), "{}", err.0);
    assert!(err.0.contains("enable -- ghost` failed"), "{}", err.0);
    // Nor can it start at boot: `enabled: false` holds already, so a run
    // reports nothing to do instead of a change on every run.
    let disabled = ServiceSpec {
        enabled: Some(false),
        ..missing
    };
    let ex = systemd.examine(&disabled, &cx()).unwrap();
    assert_eq!(ex.changes, []);
}
