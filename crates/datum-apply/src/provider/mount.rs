//! Filesystems: a Mount's line in `/etc/fstab`, and on the running system
//! whether it is mounted.
//!
//! The line Datum owns is the one whose mount point is the Mount's `path`
//! (a line written by hand for that mount point is taken over, as Puppet
//! does), with a marker comment above it. Every other line of the file is
//! kept byte for byte. Two lines for one mount point are a failure: Datum
//! will not guess which one the host means. The file is read only as a
//! regular file with one link (never through a symbolic link, which it
//! would replace by a copy) and replaced atomically, keeping its owner
//! and mode.
//!
//! On the running system the Mount is then mounted (`mount PATH`, which
//! reads the line just written), remounted when its options changed
//! (`mount -o remount PATH`) or when another filesystem is mounted there
//! (`umount`, then `mount`), or unmounted (`umount PATH`, before its line
//! goes). Under `--root` only the file is edited, and each run says so.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use datum_core::printable::escape;
use datum_fs::Attrs;

use super::command::{self, tool};
use super::{Context, Examined, Failure, Provider, has};
use crate::report::{Attribute, Change};
use crate::root::Root;
use crate::spec::{MountSpec, MountState};

/// The file of mounts.
pub const FSTAB: &str = "/etc/fstab";
/// The comment Datum writes above each line it owns.
pub const MARKER: &str = "# Mount managed by Datum: changes to the next line are overwritten.";
/// The largest fstab read.
const LIMIT: u64 = 1 << 20;
/// What a remount of the same filesystem with new options is shown as.
const REMOUNTED: &str = "remounted with the new options";

pub struct Mounts {
    root: Root,
    /// The running system's mount table; `None` under `--root`.
    mountinfo: Option<PathBuf>,
}

/// One line of fstab, read.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    device: String,
    path: String,
    fstype: String,
    options: String,
    dump: String,
    pass: String,
}

/// What is mounted at a mount point.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mounted {
    source: String,
    fstype: String,
}

impl Mounts {
    pub fn new(root: Root) -> Mounts {
        let mountinfo = root
            .dir()
            .is_none()
            .then(|| PathBuf::from("/proc/self/mountinfo"));
        Mounts { root, mountinfo }
    }

    fn shown(&self) -> String {
        self.root.path(FSTAB).display().to_string()
    }

    /// The file's text and what it is; `None` when there is none.
    fn read(&self) -> Result<Option<(String, Metadata)>, Failure> {
        let shown = self.shown();
        let meta = self
            .root
            .lstat(FSTAB)
            .map_err(|e| Failure::new(format!("cannot inspect {shown}: {e}")))?;
        let Some(meta) = meta else {
            return Ok(None);
        };
        if meta.file_type().is_symlink() {
            return Err(Failure::new(format!(
                "{shown} is a symbolic link: Datum edits it only as a regular file, since writing it would replace the link with a copy"
            )));
        }
        if meta.is_file() && meta.nlink() > 1 {
            return Err(Failure::new(format!(
                "{shown} has {} hard links: Datum edits it only with one, since replacing it would part it from the others",
                meta.nlink()
            )));
        }
        match self.root.read_small(FSTAB, LIMIT) {
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => Ok(Some((text, meta))),
                Err(_) => Err(Failure::new(format!("{shown} is not UTF-8 text"))),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(Failure::new(format!("cannot read {shown}: {e}"))),
        }
    }

    /// What is mounted at `path` on the running system (the topmost), or
    /// `None`; `Ok(None)` under `--root` too.
    fn mounted(&self, path: &str) -> Result<Option<Mounted>, Failure> {
        let Some(file) = &self.mountinfo else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::new(format!("cannot read {}: {e}", file.display())))?;
        Ok(text
            .lines()
            .filter_map(mountinfo_line)
            .rfind(|(p, _)| p == path)
            .map(|(_, m)| m))
    }

    /// The live change, on the running system.
    fn live(
        &self,
        s: &MountSpec,
        old: Option<&Entry>,
        cx: &Context<'_>,
    ) -> Result<Option<Change>, Failure> {
        if self.mountinfo.is_none() {
            return Ok(None);
        }
        let mounted = self.mounted(&s.path)?;
        Ok(match (s.ensure, mounted) {
            (MountState::Mounted, None) => {
                let exists = Path::new(&s.path).is_dir() || cx.pending.paths.contains(&s.path);
                if !exists {
                    return Err(Failure::new(format!(
                        "the mount point {} is not a directory: declare `Directory[{}]` (a Mount comes after the Directory of its mount point)",
                        s.path, s.path
                    )));
                }
                Some(Change::new(Attribute::Mounted, "not mounted", "mounted"))
            }
            (MountState::Mounted, Some(m)) if !same_fs(&m, s) => Some(Change::new(
                Attribute::Mounted,
                format!("{} ({})", escape(&m.source), escape(&m.fstype)),
                format!("{} ({})", s.device, s.fstype),
            )),
            (MountState::Mounted, Some(_)) => old
                .filter(|e| e.options != s.options)
                .map(|_| Change::new(Attribute::Mounted, "mounted", REMOUNTED)),
            (_, Some(_)) => Some(Change::new(Attribute::Mounted, "mounted", "not mounted")),
            (_, None) => None,
        })
    }

    fn write(&self, text: &str, meta: Option<&Metadata>) -> Result<(), Failure> {
        let attrs = match meta {
            Some(m) => Attrs {
                mode: Some(m.mode() & 0o7777),
                uid: Some(m.uid()),
                gid: Some(m.gid()),
            },
            None => Attrs::mode(0o644),
        };
        self.root
            .write_atomic(FSTAB, text.as_bytes(), attrs)
            .map_err(|e| Failure::new(format!("cannot write {}: {e}", self.shown())))
    }

    fn run(&self, args: &[&str], path: &str) -> Result<(), Failure> {
        let program = if args.first() == Some(&"umount") {
            "umount"
        } else {
            "mount"
        };
        let mut cmd = tool(program);
        cmd.args(&args[1..]).arg("--").arg(path);
        command::run(&mut cmd).map(|_| ())
    }
}

impl Provider<MountSpec> for Mounts {
    fn examine(&self, s: &MountSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        let found = self.read()?;
        let text = found.as_ref().map_or("", |(t, _)| t.as_str());
        let owned = owned_line(text, &s.path, &self.shown())?;
        let want = line(s);
        let mut ex = Examined::default();
        let entry = match (s.ensure, &owned) {
            (MountState::Absent, None) => None,
            (MountState::Absent, Some((_, _, raw))) => Some(Change {
                attribute: Attribute::Entry,
                from: Some(escape(raw).into_owned()),
                to: None,
                diff: None,
            }),
            (_, None) => Some(Change::set(Attribute::Entry, &want)),
            (_, Some((_, e, raw))) if *e != entry_of(s) => {
                Some(Change::new(Attribute::Entry, escape(raw), &want))
            }
            _ => None,
        };
        let live = self.live(s, owned.as_ref().map(|(_, e, _)| e), cx)?;
        // Unmounted before its line goes; mounted after it is written.
        if s.ensure == MountState::Mounted {
            ex.changes.extend(entry);
            ex.changes.extend(live);
        } else {
            ex.changes.extend(live);
            ex.changes.extend(entry);
        }
        if let Some(dir) = self.root.dir() {
            ex.notes.push(format!(
                "only {FSTAB} is edited under {}: nothing is mounted or unmounted there",
                dir.display()
            ));
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &MountSpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        let live = changes.iter().find(|c| c.attribute == Attribute::Mounted);
        if live.is_some() && s.ensure != MountState::Mounted {
            self.run(&["umount"], &s.path)?;
        }
        if has(changes, Attribute::Entry) {
            let found = self.read()?;
            let text = found.as_ref().map_or("", |(t, _)| t.as_str());
            let owned = owned_line(text, &s.path, &self.shown())?;
            let edited = edit(
                text,
                owned.map(|(i, _, _)| i),
                (s.ensure != MountState::Absent).then(|| line(s)),
            );
            self.write(&edited, found.as_ref().map(|(_, m)| m))?;
        }
        match live {
            Some(c) if s.ensure == MountState::Mounted && c.to.as_deref() == Some(REMOUNTED) => {
                self.run(&["mount", "-o", "remount"], &s.path)
            }
            Some(_) if s.ensure == MountState::Mounted => {
                if self.mounted(&s.path)?.is_some() {
                    self.run(&["umount"], &s.path)?;
                }
                self.run(&["mount"], &s.path)
            }
            _ => Ok(()),
        }
    }
}

/// The entry a Mount wants, as read back from its line.
fn entry_of(s: &MountSpec) -> Entry {
    Entry {
        device: s.device.clone(),
        path: s.path.clone(),
        fstype: s.fstype.clone(),
        options: s.options.clone(),
        dump: "0".into(),
        pass: s.pass.to_string(),
    }
}

/// A Mount's line: its fields escaped as fstab(5) reads them.
fn line(s: &MountSpec) -> String {
    let e = entry_of(s);
    [&e.device, &e.path, &e.fstype, &e.options, &e.dump, &e.pass]
        .map(|f| field_escape(f))
        .join(" ")
}

/// The line for `path`: its index among the lines, its entry and text.
/// More than one is a failure.
fn owned_line(
    text: &str,
    path: &str,
    shown: &str,
) -> Result<Option<(usize, Entry, String)>, Failure> {
    let found: Vec<(usize, Entry, String)> = text
        .split_inclusive('\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let raw = l.trim_end_matches(['\n', '\r']);
            parse_entry(raw)
                .filter(|e| e.path == path)
                .map(|e| (i, e, raw.to_owned()))
        })
        .collect();
    if found.len() > 1 {
        let lines: Vec<String> = found.iter().map(|(i, _, _)| (i + 1).to_string()).collect();
        return Err(Failure::new(format!(
            "{shown} has {} lines for {path} (lines {}): Datum manages one; remove the others",
            found.len(),
            lines.join(", ")
        )));
    }
    Ok(found.into_iter().next())
}

/// The text with the owned line (at `at`) replaced by `new`, removed
/// (`new` is `None`), or `new` appended; each with the marker above it.
/// Every other line is kept as it was.
fn edit(text: &str, at: Option<usize>, new: Option<String>) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    let marked = |lines: &[String], i: usize| i > 0 && lines[i - 1].trim_end() == MARKER;
    match (at, new) {
        (Some(i), Some(new)) => {
            lines[i] = format!("{new}\n");
            if !marked(&lines, i) {
                lines.insert(i, format!("{MARKER}\n"));
            }
        }
        (Some(i), None) => {
            lines.remove(i);
            if marked(&lines, i) {
                lines.remove(i - 1);
            }
        }
        (None, Some(new)) => {
            if let Some(last) = lines.last_mut().filter(|l| !l.ends_with('\n')) {
                last.push('\n');
            }
            lines.push(format!("{MARKER}\n{new}\n"));
        }
        (None, None) => {}
    }
    lines.concat()
}

/// An fstab line's fields, unescaped; `None` for a comment or blank line.
fn parse_entry(raw: &str) -> Option<Entry> {
    let t = raw.trim();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    let f: Vec<String> = t.split_whitespace().map(field_unescape).collect();
    let get = |i: usize, default: &str| f.get(i).cloned().unwrap_or_else(|| default.to_owned());
    Some(Entry {
        device: get(0, ""),
        path: normal_path(&get(1, "")),
        fstype: get(2, "auto"),
        options: get(3, "defaults"),
        dump: get(4, "0"),
        pass: get(5, "0"),
    })
}

/// A mount point without a trailing `/` (but `/` itself).
fn normal_path(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() && p.starts_with('/') {
        "/".into()
    } else {
        t.to_owned()
    }
}

/// A field of fstab or mountinfo with `\040`-style escapes decoded.
fn field_unescape(f: &str) -> String {
    let b = f.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                let n = d.iter().fold(0u32, |n, c| n * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(n).unwrap_or(b'?'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A field with what would split or end it escaped as octal.
fn field_escape(f: &str) -> String {
    let mut out = String::with_capacity(f.len());
    for c in f.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

/// A line of /proc/self/mountinfo: the mount point, and what is mounted.
fn mountinfo_line(l: &str) -> Option<(String, Mounted)> {
    let (head, tail) = l.split_once(" - ")?;
    let path = field_unescape(head.split(' ').nth(4)?);
    let mut rest = tail.split(' ');
    let fstype = rest.next()?.to_owned();
    let source = field_unescape(rest.next()?);
    Some((path, Mounted { source, fstype }))
}

/// Whether what is mounted is the filesystem the Mount describes: the
/// same type (unless the line lets mount choose), and the same device
/// when both name one Datum can resolve (`UUID=` and `LABEL=` through
/// `/dev/disk`), or the same text for a pseudo device (`tmpfs`).
fn same_fs(m: &Mounted, s: &MountSpec) -> bool {
    let loose = matches!(s.fstype.as_str(), "auto" | "none")
        || (s.fstype == "nfs" && m.fstype.starts_with("nfs"));
    if !loose && m.fstype != s.fstype {
        return false;
    }
    match (device_path(&s.device), device_path(&m.source)) {
        (Some(a), Some(b)) => a == b,
        _ if !s.device.starts_with('/') && !s.device.contains('=') => s.device == m.source,
        _ => true,
    }
}

/// The device file a device names, resolved; `None` when it names none.
fn device_path(device: &str) -> Option<PathBuf> {
    let by = [
        ("UUID=", "by-uuid"),
        ("LABEL=", "by-label"),
        ("PARTUUID=", "by-partuuid"),
        ("PARTLABEL=", "by-partlabel"),
    ];
    let path = match by
        .iter()
        .find_map(|(p, d)| device.strip_prefix(p).map(|v| (d, v)))
    {
        Some((dir, value)) => PathBuf::from(format!("/dev/disk/{dir}/{value}")),
        None if device.starts_with('/') => PathBuf::from(device),
        None => return None,
    };
    std::fs::canonicalize(path).ok()
}

#[cfg(test)]
mod tests;
