//! `datum apply` with Cron, Mount and Sysctl resources under `--root`: the
//! real binary writes `/etc/cron.d/datum-NAME`, edits `/etc/fstab` and
//! writes `/etc/sysctl.d/90-datum.conf` inside a temporary root. Each is
//! installed, changed, removed, asked about under `--noop` (which changes
//! nothing), run again unchanged, and met with a link planted at its name.
//! The running system's side (mount(8), /proc/sys) is `live_system.rs`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use crate::common::{Run, datum};

/// A machine root with accounts and the directories cron and sysctl
/// read, and a fleet of one host beside it.
pub(crate) struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    pub(crate) fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene { dir };
        for d in [
            "root/etc/cron.d",
            "root/etc/sysctl.d",
            "root/srv/data",
            "fleet",
        ] {
            fs::create_dir_all(s.dir.path().join(d)).unwrap();
        }
        s.write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
        s.write("etc/group", "root:x:0:\n");
        fs::write(
            s.fleet().join("datum.yaml"),
            "datum: v1alpha1\ntype: Fleet\nname: sys\n",
        )
        .unwrap();
        fs::write(
            s.fleet().join("hosts.yaml"),
            "datum: v1alpha1\ntype: Host\nname: app-001\n",
        )
        .unwrap();
        s
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    pub(crate) fn fleet(&self) -> PathBuf {
        self.dir.path().join("fleet")
    }

    /// A file of the root.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.root().join(rel)).ok()
    }

    pub(crate) fn layer(&self, resources: &str) {
        fs::write(
            self.fleet().join("layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: app\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
            ),
        )
        .unwrap();
    }

    /// `datum apply --host app-001 --root ROOT ARGS`; the root reads `[ROOT]`.
    pub(crate) fn apply(&self, args: &[&str]) -> Run {
        let out = datum()
            .args(["apply", "--host", "app-001", "--root"])
            .arg(self.root())
            .args(args)
            .arg("--fleet")
            .arg(self.fleet())
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
        let real = self.root().canonicalize().unwrap().display().to_string();
        Run {
            code: run.code,
            stdout: run.stdout.replace(&real, "[ROOT]"),
            stderr: run.stderr.replace(&real, "[ROOT]"),
        }
    }

    /// Applies twice: the first run changes (2), the second finds
    /// nothing to do (0). Gives the first run.
    fn converges(&self) -> Run {
        let first = self.apply(&[]);
        assert_eq!(first.code, 2, "{}{}", first.stdout, first.stderr);
        let second = self.apply(&[]);
        assert_eq!(second.code, 0, "{}{}", second.stdout, second.stderr);
        assert!(
            !second.stdout.lines().any(|l| l.starts_with("changed:")),
            "{}",
            second.stdout
        );
        first
    }

    /// Under `--noop`: a change is reported (2) and nothing is written.
    fn noop_changes_nothing(&self, rels: &[&str]) {
        let before: Vec<Option<String>> = rels.iter().map(|r| self.read(r)).collect();
        let run = self.apply(&["--noop"]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("would change:"), "{}", run.stdout);
        let after: Vec<Option<String>> = rels.iter().map(|r| self.read(r)).collect();
        assert_eq!(before, after);
    }
}

const CRON: &str = "  Cron[backup]:\n    schedule: '30 2 * * mon-fri'\n    user: root\n    command: /usr/local/bin/backup --quiet > /var/log/backup.log\n    environment: [\"MAILTO=ops@example.com\"]\n";

#[test]
fn a_cron_entry_is_installed_changed_and_removed_as_its_own_file() {
    let s = Scene::new();
    // `mon-fri` is a name in a range: crontab(5) allows none.
    s.layer(CRON);
    let refused = s.apply(&[]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("the day of week field `mon-fri` uses the name `mon` in a range or list"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("layer.yaml:8:15"),
        "{}",
        refused.stderr
    );
    let cron = CRON.replace("mon-fri", "1-5");
    s.layer(&cron);
    s.noop_changes_nothing(&["etc/cron.d/datum-backup"]);
    let first = s.converges();
    assert!(
        first
            .stdout
            .contains("changed: Cron[backup] /etc/cron.d/datum-backup"),
        "{}",
        first.stdout
    );
    let path = s.root().join("etc/cron.d/datum-backup");
    assert_eq!(
        s.read("etc/cron.d/datum-backup").unwrap(),
        "# Cron[backup], managed by Datum: changes here are overwritten.\nMAILTO=ops@example.com\n30 2 * * 1-5 root /usr/local/bin/backup --quiet > /var/log/backup.log\n"
    );
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o644);

    s.layer(&cron.replace("30 2", "45 3"));
    s.noop_changes_nothing(&["etc/cron.d/datum-backup"]);
    let changed = s.converges();
    assert!(
        changed
            .stdout
            .contains("-30 2 * * 1-5 root /usr/local/bin/backup")
            && changed
                .stdout
                .contains("+45 3 * * 1-5 root /usr/local/bin/backup"),
        "{}",
        changed.stdout
    );

    // What is removed needs only its name.
    s.layer("  Cron[backup]:\n    ensure: absent\n");
    s.converges();
    assert!(!path.exists());
}

#[test]
fn a_link_planted_at_a_cron_file_is_replaced_never_followed() {
    let s = Scene::new();
    let passwd = s.read("etc/passwd").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", s.root().join("etc/cron.d/datum-x")).unwrap();
    s.layer("  Cron[x]:\n    schedule: '@hourly'\n    user: root\n    command: date +\\%F\n");
    let run = s.converges();
    assert!(
        run.stdout
            .contains("type symbolic link to /etc/passwd -> file"),
        "{}",
        run.stdout
    );
    let meta = fs::symlink_metadata(s.root().join("etc/cron.d/datum-x")).unwrap();
    assert!(meta.is_file());
    assert_eq!(s.read("etc/passwd").unwrap(), passwd);
    assert!(
        s.read("etc/cron.d/datum-x")
            .unwrap()
            .ends_with("@hourly root date +\\%F\n")
    );
}

const SYSCTLS: &str = "  Sysctl[vm.swappiness]:\n    value: 10\n  Sysctl[forward]:\n    name: net.ipv4.ip_forward\n    value: '1'\n";
const SYSCTL_FILE: &str = "etc/sysctl.d/90-datum.conf";
const SYSCTL_HEAD: &str =
    "# Kernel parameters of Sysctl resources, managed by Datum: changes here are overwritten.\n";

#[test]
fn sysctls_share_one_sorted_file_written_whole() {
    let s = Scene::new();
    s.layer(SYSCTLS);
    s.noop_changes_nothing(&[SYSCTL_FILE]);
    let first = s.converges();
    assert_eq!(
        s.read(SYSCTL_FILE).unwrap(),
        format!("{SYSCTL_HEAD}net.ipv4.ip_forward = 1\nvm.swappiness = 10\n")
    );
    // Under --root the running kernel is left alone, and each run says so.
    assert!(
        first.stdout.contains(
            "note: only /etc/sysctl.d/90-datum.conf is written under [ROOT]: the running kernel is not the tree's"
        ),
        "{}",
        first.stdout
    );
    let again = s.apply(&[]);
    assert!(
        again
            .stdout
            .contains("note: only /etc/sysctl.d/90-datum.conf")
    );
    assert!(!s.root().join("proc").exists());

    s.layer(&SYSCTLS.replace("value: 10", "value: 60"));
    s.noop_changes_nothing(&[SYSCTL_FILE]);
    let changed = s.converges();
    assert!(
        changed.stdout.contains("value 10 -> 60"),
        "{}",
        changed.stdout
    );

    s.layer("  Sysctl[vm.swappiness]:\n    ensure: absent\n  Sysctl[forward]:\n    name: net.ipv4.ip_forward\n    value: '1'\n");
    s.noop_changes_nothing(&[SYSCTL_FILE]);
    let removed = s.converges();
    assert!(
        removed.stdout.contains("value 60 -> (none)"),
        "{}",
        removed.stdout
    );
    assert_eq!(
        s.read(SYSCTL_FILE).unwrap(),
        format!("{SYSCTL_HEAD}net.ipv4.ip_forward = 1\n")
    );
}

#[test]
fn a_link_planted_at_the_sysctl_file_is_replaced_never_followed() {
    let s = Scene::new();
    s.write("etc/motd", "hello\n");
    std::os::unix::fs::symlink("../motd", s.root().join(SYSCTL_FILE)).unwrap();
    s.layer(SYSCTLS);
    s.converges();
    assert!(
        fs::symlink_metadata(s.root().join(SYSCTL_FILE))
            .unwrap()
            .is_file()
    );
    assert_eq!(s.read("etc/motd").unwrap(), "hello\n");
}

/// An fstab written by hand: comments, tabs, and no newline at its end.
const FSTAB: &str = "# /etc/fstab: static file system information.\n#\n# <file system> <mount point>   <type>  <options>       <dump>  <pass>\nUUID=0a1b\t/\text4\terrors=remount-ro 0       1\n/swapfile none swap sw 0 0";
const MOUNT: &str = "  Mount[data]:\n    path: /srv/data\n    device: LABEL=data disk\n    fstype: ext4\n    options: defaults,noatime\n    pass: 2\n";
const MARKER: &str = "# Mount managed by Datum: changes to the next line are overwritten.\n";

#[test]
fn a_mount_owns_its_fstab_line_and_keeps_every_other_byte() {
    let s = Scene::new();
    s.write("etc/fstab", FSTAB);
    s.layer(MOUNT);
    s.noop_changes_nothing(&["etc/fstab"]);
    let first = s.converges();
    let line = "LABEL=data\\040disk /srv/data ext4 defaults,noatime 0 2\n";
    assert_eq!(
        s.read("etc/fstab").unwrap(),
        format!("{FSTAB}\n{MARKER}{line}")
    );
    assert!(
        first.stdout.contains(
            "note: only /etc/fstab is edited under [ROOT]: nothing is mounted or unmounted there"
        ),
        "{}",
        first.stdout
    );
    assert_eq!(
        fs::metadata(s.root().join("etc/fstab")).unwrap().mode() & 0o777,
        0o644
    );

    // A changed line is replaced where it stands; the others stay.
    fs::set_permissions(
        s.root().join("etc/fstab"),
        fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    s.layer(&MOUNT.replace("defaults,noatime", "ro"));
    s.noop_changes_nothing(&["etc/fstab"]);
    let changed = s.converges();
    assert!(
        changed.stdout.contains(
            "entry LABEL=data\\040disk /srv/data ext4 defaults,noatime 0 2 -> LABEL=data\\040disk /srv/data ext4 ro 0 2"
        ),
        "{}",
        changed.stdout
    );
    assert_eq!(
        s.read("etc/fstab").unwrap(),
        format!("{FSTAB}\n{MARKER}LABEL=data\\040disk /srv/data ext4 ro 0 2\n")
    );
    // Its mode is kept.
    assert_eq!(
        fs::metadata(s.root().join("etc/fstab")).unwrap().mode() & 0o777,
        0o640
    );

    s.layer("  Mount[data]:\n    ensure: absent\n    path: /srv/data\n");
    s.noop_changes_nothing(&["etc/fstab"]);
    s.converges();
    assert_eq!(s.read("etc/fstab").unwrap(), format!("{FSTAB}\n"));
}

#[test]
fn a_line_written_by_hand_for_the_mount_point_is_taken_over_in_place() {
    let s = Scene::new();
    let before = "proc /proc proc defaults 0 0\n/dev/sdb1\t/srv/data/  xfs defaults 0 0\ntmpfs /tmp tmpfs defaults 0 0\n";
    s.write("etc/fstab", before);
    s.layer(MOUNT);
    s.converges();
    assert_eq!(
        s.read("etc/fstab").unwrap(),
        format!(
            "proc /proc proc defaults 0 0\n{MARKER}LABEL=data\\040disk /srv/data ext4 defaults,noatime 0 2\ntmpfs /tmp tmpfs defaults 0 0\n"
        )
    );
    // Two lines for one mount point: Datum will not choose.
    s.write(
        "etc/fstab",
        &format!("{before}/dev/sdc1 /srv/data ext4 defaults 0 0\n"),
    );
    let run = s.apply(&[]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "[ROOT]/etc/fstab has 2 lines for /srv/data (lines 2, 4): Datum manages one; remove the others"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_link_planted_at_fstab_is_refused_and_nothing_changes() {
    let s = Scene::new();
    s.write("etc/fstab.real", FSTAB);
    std::os::unix::fs::symlink("fstab.real", s.root().join("etc/fstab")).unwrap();
    s.layer(MOUNT);
    let run = s.apply(&[]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("[ROOT]/etc/fstab is a symbolic link: Datum edits it only as a regular file"),
        "{}",
        run.stdout
    );
    assert_eq!(s.read("etc/fstab.real").unwrap(), FSTAB);
    assert!(
        fs::symlink_metadata(s.root().join("etc/fstab"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn mistakes_in_the_three_types_are_errors_at_their_line() {
    let s = Scene::new();
    s.layer(
        "  Cron[nightly.backup]:\n    schedule: '0 3 * *'\n    user: root\n    command: date +%F\n\
         \x20 Sysctl[net..x]:\n    value: \"1\\n2\"\n\
         \x20 Mount[m]:\n    path: /m\n    device: '#x'\n    fstype: Ext4\n    options: 'a, b'\n    pass: 3\n",
    );
    let run = crate::common::run_in(&s.fleet(), &["check"]);
    assert_eq!(run.code, 1);
    for (place, what) in [
        (
            "layer.yaml:7:3",
            "`Cron[nightly.backup]` would be the file /etc/cron.d/datum-nightly.backup, which cron does not read: it holds `.`",
        ),
        (
            "layer.yaml:8:15",
            "`0 3 * *` is not a cron schedule: a schedule has five fields",
        ),
        (
            "layer.yaml:10:14",
            "`date +%F` is not a command line for cron: it holds a bare `%`",
        ),
        (
            "layer.yaml:12:12",
            "is not text on one line: it holds `\\n`",
        ),
        (
            "layer.yaml:15:13",
            "`#x` is not a device /etc/fstab can hold: it starts with `#`",
        ),
        (
            "layer.yaml:16:13",
            "`Ext4` is not a filesystem type: it holds `E`",
        ),
        (
            "layer.yaml:17:14",
            "`a, b` is not a list of mount options: it holds a space",
        ),
        ("layer.yaml:18:11", "`pass` must be 0, 1 or 2"),
    ] {
        assert!(run.stderr.contains(what), "{what}\n{}", run.stderr);
        assert!(run.stderr.contains(place), "{place}\n{}", run.stderr);
    }
    // A key defaulting to the title is checked once the host is folded.
    s.layer("  Sysctl[net..x]:\n    value: 1\n");
    let run = crate::common::run_in(&s.fleet(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "Sysctl[net..x] is named by its title, which is not a kernel parameter (sysctl) key: it holds an empty component or `..`"
        ) && run.stderr.contains("layer.yaml:7:3"),
        "{}",
        run.stderr
    );
}
