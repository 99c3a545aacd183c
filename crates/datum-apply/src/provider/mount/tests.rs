use super::*;

fn spec(path: &str, options: &str) -> MountSpec {
    MountSpec {
        path: path.into(),
        ensure: MountState::Mounted,
        device: "LABEL=my disk".into(),
        fstype: "ext4".into(),
        options: options.into(),
        pass: 2,
    }
}

const FSTAB_TEXT: &str = "# /etc/fstab: static file system information.\n\
UUID=1234   /      ext4  errors=remount-ro  0  1\n\
\t/dev/sdb1 /srv/data\\040x xfs defaults 0 2\n\
proc /proc proc defaults\n";

#[test]
fn lines_and_mountinfo_read_with_their_escapes() {
    let e = parse_entry("\t/dev/sdb1 /srv/data\\040x/ xfs defaults 0 2").unwrap();
    assert_eq!(
        (e.device.as_str(), e.path.as_str()),
        ("/dev/sdb1", "/srv/data x")
    );
    let short = parse_entry("proc /proc proc").unwrap();
    assert_eq!(
        (short.options.as_str(), short.pass.as_str()),
        ("defaults", "0")
    );
    assert_eq!(parse_entry("  # comment"), None);
    assert_eq!(
        line(&spec("/mnt/a b", "defaults")),
        "LABEL=my\\040disk /mnt/a\\040b ext4 defaults 0 2"
    );
    assert_eq!(field_unescape(&field_escape("a b\t\\c")), "a b\t\\c");
    let (path, m) = mountinfo_line(
        "36 35 98:0 /mnt1 /mnt/my\\040dir rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
    )
    .unwrap();
    assert_eq!(path, "/mnt/my dir");
    assert_eq!(
        m,
        Mounted {
            source: "/dev/root".into(),
            fstype: "ext3".into()
        }
    );
}

#[test]
fn the_owned_line_is_found_by_mount_point_and_two_are_refused() {
    let (i, e, raw) = owned_line(FSTAB_TEXT, "/srv/data x", "fstab")
        .unwrap()
        .unwrap();
    assert_eq!((i, e.fstype.as_str()), (2, "xfs"));
    assert_eq!(raw, "\t/dev/sdb1 /srv/data\\040x xfs defaults 0 2");
    assert_eq!(owned_line(FSTAB_TEXT, "/srv", "fstab").unwrap(), None);
    let twice = format!("{FSTAB_TEXT}tmpfs /proc tmpfs defaults 0 0\n");
    let err = owned_line(&twice, "/proc", "/etc/fstab").unwrap_err();
    assert_eq!(
        err.0,
        "/etc/fstab has 2 lines for /proc (lines 4, 5): Datum manages one; remove the others"
    );
}

#[test]
fn edits_keep_every_other_line_byte_for_byte() {
    let new = line(&spec("/srv/data x", "noatime"));
    let replaced = edit(FSTAB_TEXT, Some(2), Some(new.clone()));
    assert_eq!(
        replaced,
        format!(
            "# /etc/fstab: static file system information.\n\
UUID=1234   /      ext4  errors=remount-ro  0  1\n{MARKER}\n{new}\nproc /proc proc defaults\n"
        )
    );
    // Again: the marker is found, not added twice.
    let again = edit(&replaced, Some(3), Some(new.clone()));
    assert_eq!(again, replaced);
    let removed = edit(&replaced, Some(3), None);
    assert_eq!(
        removed,
        "# /etc/fstab: static file system information.\n\
UUID=1234   /      ext4  errors=remount-ro  0  1\nproc /proc proc defaults\n"
    );
    // A last line without its newline gets one before the new line.
    let appended = edit("proc /proc proc defaults", None, Some(new.clone()));
    assert_eq!(
        appended,
        format!("proc /proc proc defaults\n{MARKER}\n{new}\n")
    );
    assert_eq!(
        edit("", None, Some(new.clone())),
        format!("{MARKER}\n{new}\n")
    );
}

#[test]
fn what_is_mounted_is_the_same_filesystem_by_type_and_device() {
    let tmpfs = MountSpec {
        device: "tmpfs".into(),
        fstype: "tmpfs".into(),
        ..spec("/mnt/t", "size=1m")
    };
    let m = |source: &str, fstype: &str| Mounted {
        source: source.into(),
        fstype: fstype.into(),
    };
    assert!(same_fs(&m("tmpfs", "tmpfs"), &tmpfs));
    assert!(!same_fs(&m("tmpfs", "ramfs"), &tmpfs));
    assert!(!same_fs(&m("other", "tmpfs"), &tmpfs));
    let nfs = MountSpec {
        device: "server:/export".into(),
        fstype: "nfs".into(),
        ..spec("/mnt/n", "defaults")
    };
    assert!(same_fs(&m("server:/export", "nfs4"), &nfs));
    // A label Datum cannot resolve here says nothing against the device.
    assert!(same_fs(&m("/dev/sdz9", "ext4"), &spec("/x", "defaults")));
}
