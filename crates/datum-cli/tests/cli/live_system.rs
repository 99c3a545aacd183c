//! Mount and Sysctl on a running system (no `--root`): the real `datum
//! apply` mounts a tmpfs with mount(8), remounts and unmounts it, and
//! writes a kernel parameter under /proc/sys, without touching this
//! machine. It runs inside namespaces of its own (`unshare --mount
//! --net`): a copy of /etc is bound over /etc (so /etc/fstab and
//! /etc/sysctl.d are the copy's), a directory over /var/lib (Datum's
//! state), and the parameter is `net.ipv4.ip_forward`, which belongs to the
//! test's own network namespace. It needs root, util-linux's `unshare`,
//! `findmnt`, `mount` and `umount`, and a machine that lets it take
//! namespaces (a container without CAP_SYS_ADMIN does not); without them
//! it says it was skipped, and fails under `DATUM_TEST_REQUIRE_TOOLS`, as
//! every test that needs the machine does. `system_files.rs` covers
//! everything but the live part either way.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Whether this machine lets the test take its own mount and network
/// namespaces.
fn namespaces() -> bool {
    Command::new("unshare")
        .args(["--mount", "--net", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

fn layer(mount: &str, sysctl: &str) -> String {
    format!(
        "datum: v1alpha1\ntype: Layer\nname: live\nprecedence: 0\nmatch: {{}}\nresources:\n{mount}{sysctl}"
    )
}

fn mount(t: &Path, extra: &str) -> String {
    format!(
        "  Mount[scratch]:\n    path: {}/mnt\n    device: tmpfs\n    fstype: tmpfs\n{extra}",
        t.display()
    )
}

fn sysctl(value: u8) -> String {
    format!("  Sysctl[net.ipv4.ip_forward]:\n    value: {value}\n")
}

/// The script run inside the namespaces: each phase copies its layer in,
/// applies, and records the exit status, the output, the parameter and
/// what is mounted.
const SCRIPT: &str = r#"
set -eu
cp -a /etc "$T/etc"
mount --bind "$T/etc" /etc
mkdir -p "$T/varlib" /etc/sysctl.d
mount --bind "$T/varlib" /var/lib
for phase in 1 2 3 4 5 6; do
    cp "$T/layer$phase.yaml" "$F/layer.yaml"
    args=""
    [ "$phase" = 4 ] && args="--noop"
    set +e
    "$DATUM" apply --host live-001 --fleet "$F" $args > "$T/out$phase" 2>&1
    echo $? > "$T/code$phase"
    set -e
    cat /proc/sys/net/ipv4/ip_forward > "$T/live$phase"
    findmnt -n -o FSTYPE,OPTIONS --mountpoint "$T/mnt" > "$T/mnt$phase" || true
    cp /etc/fstab "$T/fstab$phase" 2>/dev/null || : > "$T/fstab$phase"
done
"#;

#[test]
fn a_mount_and_a_sysctl_converge_on_a_running_system_in_namespaces_of_their_own() {
    use datum_testkit::tools;
    if !tools::root() || !tools::installed(&["unshare", "findmnt", "mount", "umount"]) {
        return;
    }
    if !namespaces() {
        let why = "this machine does not let a test take its own mount and network namespaces (unshare --mount --net)";
        assert!(
            !tools::required(),
            "{why}, and {} is set: the test must run",
            tools::REQUIRE
        );
        eprintln!("skipped: {why}; the running-system side of Mount and Sysctl is untested here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().canonicalize().unwrap();
    let fleet = t.join("fleet");
    fs::create_dir_all(&fleet).unwrap();
    fs::create_dir_all(t.join("mnt")).unwrap();
    fs::write(
        fleet.join("datum.yaml"),
        "datum: v1alpha1\ntype: Fleet\nname: live\n",
    )
    .unwrap();
    fs::write(
        fleet.join("hosts.yaml"),
        "datum: v1alpha1\ntype: Host\nname: live-001\n",
    )
    .unwrap();
    let phases = [
        layer(&mount(&t, "    options: size=1m\n"), &sysctl(1)),
        layer(&mount(&t, "    options: size=1m\n"), &sysctl(1)),
        layer(&mount(&t, "    options: size=2m\n"), &sysctl(0)),
        layer(
            &mount(&t, "    ensure: unmounted\n    options: size=2m\n"),
            &sysctl(0),
        ),
        layer(
            &mount(&t, "    ensure: unmounted\n    options: size=2m\n"),
            &sysctl(0),
        ),
        layer(&mount(&t, "    ensure: absent\n"), &sysctl(0)),
    ];
    for (i, text) in phases.iter().enumerate() {
        fs::write(t.join(format!("layer{}.yaml", i + 1)), text).unwrap();
    }
    let host_fstab = fs::read("/etc/fstab").ok();
    let host_forward = fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap();
    let host_sysctl = Path::new("/etc/sysctl.d/90-datum.conf").exists();
    let status = Command::new("unshare")
        .args([
            "--mount",
            "--net",
            "--propagation",
            "private",
            "sh",
            "-c",
            SCRIPT,
        ])
        .env("T", &t)
        .env("F", &fleet)
        .env("DATUM", assert_cmd::cargo::cargo_bin("datum"))
        .env("NO_COLOR", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let read =
        |name: &str, phase: usize| fs::read_to_string(t.join(format!("{name}{phase}"))).unwrap();
    let code = |phase| read("code", phase).trim().parse::<i32>().unwrap();
    let mnt = format!("{}/mnt", t.display());
    let line = |size: &str| format!("tmpfs {mnt} tmpfs size={size} 0 0\n");

    // 1: the line is added, the tmpfs mounted, the parameter set.
    assert_eq!(code(1), 2, "{}", read("out", 1));
    assert!(
        read("out", 1).contains("mounted not mounted -> mounted"),
        "{}",
        read("out", 1)
    );
    assert!(read("out", 1).contains("live 0 -> 1"), "{}", read("out", 1));
    assert!(read("mnt", 1).starts_with("tmpfs"), "{}", read("mnt", 1));
    assert!(read("mnt", 1).contains("size=1024k"), "{}", read("mnt", 1));
    assert_eq!(read("live", 1), "1\n");
    assert!(
        read("fstab", 1).ends_with(&line("1m")),
        "{}",
        read("fstab", 1)
    );
    // 2: nothing to do.
    assert_eq!(code(2), 0, "{}", read("out", 2));
    // 3: new options remount it; the parameter goes back.
    assert_eq!(code(3), 2, "{}", read("out", 3));
    assert!(
        read("out", 3).contains("mounted mounted -> remounted with the new options"),
        "{}",
        read("out", 3)
    );
    assert!(read("mnt", 3).contains("size=2048k"), "{}", read("mnt", 3));
    assert_eq!(read("live", 3), "0\n");
    // 4: --noop says it would unmount, and does not.
    assert_eq!(code(4), 2, "{}", read("out", 4));
    assert!(
        read("out", 4).contains("would change: Mount[scratch]"),
        "{}",
        read("out", 4)
    );
    assert!(read("mnt", 4).starts_with("tmpfs"));
    // 5: unmounted; its line stays.
    assert_eq!(code(5), 2, "{}", read("out", 5));
    assert_eq!(read("mnt", 5), "");
    assert!(read("fstab", 5).ends_with(&line("2m")));
    // 6: absent: the line goes, with its marker; the copy's own lines stay.
    assert_eq!(code(6), 2, "{}", read("out", 6));
    assert!(!read("fstab", 6).contains(&mnt), "{}", read("fstab", 6));
    if let Some(original) = &host_fstab {
        let mut original = String::from_utf8_lossy(original).into_owned();
        if !original.is_empty() && !original.ends_with('\n') {
            original.push('\n');
        }
        assert_eq!(read("fstab", 6), original);
    }

    // This machine saw none of it.
    assert_eq!(fs::read("/etc/fstab").ok(), host_fstab);
    assert_eq!(
        fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap(),
        host_forward
    );
    assert_eq!(
        Path::new("/etc/sysctl.d/90-datum.conf").exists(),
        host_sysctl
    );
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&mnt), "{mounts}");
}
