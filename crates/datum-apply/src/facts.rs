//! What a host observes about itself: its OS release (from os-release),
//! architecture, kernel, virtualization, CPUs and memory, for `datum
//! facts`, for the labels `datum.yaml` ties to facts (checked before a run
//! changes anything), and for run reports.
//!
//! Under `--root` the facts that belong to the tree come from it (the OS
//! release, read from `ROOT/etc/os-release` or `ROOT/usr/lib/os-release`
//! through the confined root, links included); the others describe the
//! running machine, whatever the root holds, and [`Facts::from_root`] says
//! which is which.
//!
//! Virtualization is detected as systemd-detect-virt does, from files
//! anyone may read: a container first (`/run/systemd/container`,
//! `/run/.containerenv`, `/.dockerenv`, WSL's kernel release, OpenVZ's
//! `/proc/vz`), then a virtual machine (the DMI vendor and product names,
//! `/sys/hypervisor/type`, the `hypervisor` CPU flag, which names no
//! hypervisor: `vm-other`).
//!
//! The os-release reader here is small and private; the Package providers
//! have one of their own (to be made one).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use datum_core::emit::Tree;
use datum_core::facts::Observed;
use datum_core::present::{Styled, Tag, Text, line, table};
use nix::fcntl::OFlag;

use crate::root::Root;

/// The most of os-release (or any file here) that is read.
const READ_LIMIT: u64 = 64 * 1024;
/// Where os-release is, in the order os-release(5) says to look.
pub const OS_RELEASE: [&str; 2] = ["/etc/os-release", "/usr/lib/os-release"];

/// A fact's value, or why it could not be observed.
pub type Seen<T> = Result<T, String>;

/// What the host observes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// os-release, and the path it was read from (inside the root).
    pub os_release: Seen<(OsRelease, String)>,
    pub arch: Seen<String>,
    pub kernel: Seen<String>,
    pub virtualization: Seen<Virtualization>,
    pub cpus: Seen<u64>,
    pub memory_bytes: Seen<u64>,
    /// `--root`, when the OS release came from a directory.
    pub root: Option<PathBuf>,
}

/// The keys of os-release the facts use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OsRelease {
    pub id: String,
    pub id_like: Vec<String>,
    pub version_id: Option<String>,
    pub pretty_name: Option<String>,
}

/// What the host runs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Virtualization {
    /// `none`, or systemd-detect-virt's name for it (`kvm`, `docker`).
    pub name: String,
    /// `none`, `vm` or `container`.
    pub kind: &'static str,
}

impl Facts {
    /// The facts of `root`'s tree and of the machine Datum runs on.
    pub fn observe(root: &Root) -> Facts {
        Facts::observe_on(root, Path::new("/"))
    }

    /// As [`Facts::observe`], with the running machine's `/proc`, `/sys`
    /// and `/run` read below `machine` (for tests).
    pub fn observe_on(root: &Root, machine: &Path) -> Facts {
        let uname = nix::sys::utsname::uname().map_err(|e| format!("uname: {e}"));
        let text = |name: &std::ffi::OsStr| name.to_string_lossy().into_owned();
        Facts {
            os_release: os_release(root),
            arch: uname
                .as_ref()
                .map(|u| text(u.machine()))
                .map_err(Clone::clone),
            kernel: uname
                .as_ref()
                .map(|u| text(u.release()))
                .map_err(Clone::clone),
            virtualization: Ok(virtualization(machine)),
            cpus: cpus(machine),
            memory_bytes: memory(machine),
            root: root.dir().map(Path::to_path_buf),
        }
    }

    /// The OS release's facts (`os`, `os_id`, `os_version`), or why there
    /// are none.
    fn os(&self) -> [(&'static str, Seen<String>); 3] {
        match &self.os_release {
            Ok((r, _)) => [
                (
                    "os",
                    Ok(datum_core::facts::os_label(&r.id, r.version_id.as_deref())),
                ),
                ("os_id", Ok(r.id.clone())),
                (
                    "os_version",
                    r.version_id
                        .clone()
                        .ok_or_else(|| "os-release has no VERSION_ID".to_owned()),
                ),
            ],
            Err(e) => [
                ("os", Err(e.clone())),
                ("os_id", Err(e.clone())),
                ("os_version", Err(e.clone())),
            ],
        }
    }

    /// The facts a label may be tied to ([`datum_core::facts::TIEABLE`]).
    pub fn observed(&self) -> Observed {
        let mut out: Observed = self
            .os()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        out.insert("arch".into(), self.arch.clone());
        out.insert(
            "virtualization".into(),
            self.virtualization
                .as_ref()
                .map(|v| v.name.clone())
                .map_err(Clone::clone),
        );
        out
    }

    /// Every fact, by name, as text or a number, `None` when unobserved;
    /// with why it was not, and whether it comes from the root's tree.
    pub fn all(&self) -> Vec<Fact> {
        let text = |v: &Seen<String>| v.clone().map(FactValue::Text);
        let mut out: Vec<Fact> = self
            .os()
            .into_iter()
            .map(|(name, v)| Fact::new(name, text(&v), true))
            .collect();
        let like = self
            .os_release
            .as_ref()
            .map(|(r, _)| FactValue::List(r.id_like.clone()))
            .map_err(Clone::clone);
        out.push(Fact::new("os_like", like, true));
        let pretty = self
            .os_release
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|(r, _)| {
                r.pretty_name
                    .clone()
                    .map(FactValue::Text)
                    .ok_or_else(|| "os-release has no PRETTY_NAME".to_owned())
            });
        out.push(Fact::new("os_name", pretty, true));
        out.push(Fact::new("arch", text(&self.arch), false));
        out.push(Fact::new("kernel", text(&self.kernel), false));
        let virt = |f: fn(&Virtualization) -> String| {
            self.virtualization
                .as_ref()
                .map(|v| FactValue::Text(f(v)))
                .map_err(Clone::clone)
        };
        out.push(Fact::new("virtualization", virt(|v| v.name.clone()), false));
        out.push(Fact::new(
            "virtualization_type",
            virt(|v| v.kind.to_owned()),
            false,
        ));
        let num = |v: &Seen<u64>| v.clone().map(FactValue::Number);
        out.push(Fact::new("cpus", num(&self.cpus), false));
        out.push(Fact::new("memory_bytes", num(&self.memory_bytes), false));
        out
    }

    /// Every fact as a JSON object (`null` for what was not observed), as
    /// run reports and `datum facts --format json` carry it.
    pub fn tree(&self) -> Tree<'static> {
        let mut t = Tree::map();
        for f in self.all() {
            t.push(f.name, f.value.map_or(Tree::Null, FactValue::tree));
        }
        t
    }

    /// `datum facts --format json`: every fact, where the OS release was
    /// read, which facts come from the root's tree, and why any fact was
    /// not observed.
    pub fn document(&self) -> Tree<'static> {
        let all = self.all();
        let mut t = Tree::document("Facts");
        if let Some(dir) = &self.root {
            t.push("root", Tree::str(dir.display().to_string()));
        }
        t.push("facts", self.tree());
        t.push(
            "os_release",
            self.os_release_path()
                .map_or(Tree::Null, |p| Tree::str(p.display().to_string())),
        );
        t.push(
            "from_root",
            Tree::strs(all.iter().filter(|f| f.from_root).map(|f| f.name)),
        );
        let mut unobserved = Tree::map();
        for f in &all {
            if let Err(why) = &f.value {
                unobserved.push(f.name, Tree::str(why.clone()));
            }
        }
        t.push("unobserved", unobserved);
        t
    }

    /// `datum facts`: the facts of the tree (where its os-release is),
    /// then those of the machine, aligned.
    pub fn write(&self, out: &mut dyn Styled) -> std::io::Result<()> {
        let all = self.all();
        let tree = match (&self.root, self.os_release_path()) {
            (_, Some(p)) => format!("from {}", p.display()),
            (Some(dir), None) => format!("from the tree at {}", dir.display()),
            (None, None) => "from this machine's os-release".to_owned(),
        };
        let machine = match &self.root {
            Some(_) => "from the machine Datum runs on (not the root)",
            None => "from this machine",
        };
        for (heading, from_root) in [(tree.as_str(), true), (machine, false)] {
            line(out, "", Text::tagged(Tag::Heading, format!("{heading}:")))?;
            if let (true, Err(why)) = (from_root, &self.os_release) {
                line(
                    out,
                    "  ",
                    Text::tagged(Tag::Failure, format!("unknown: {why}")),
                )?;
                continue;
            }
            let rows: Vec<Vec<Text>> = all
                .iter()
                .filter(|f| f.from_root == from_root)
                .map(|f| {
                    let value = match &f.value {
                        Ok(FactValue::Number(n)) if f.name == "memory_bytes" => Text::from(
                            format!("{n} ({:.1} GiB)", *n as f64 / f64::from(1u32 << 30)),
                        ),
                        Ok(v) => Text::from(v.to_string()),
                        Err(why) => Text::tagged(Tag::Failure, format!("unknown: {why}")),
                    };
                    vec![Text::from(f.name), value]
                })
                .collect();
            table(out, "  ", &rows)?;
        }
        Ok(())
    }

    /// Where the OS release was read, shown as on this machine.
    pub fn os_release_path(&self) -> Option<PathBuf> {
        let (_, path) = self.os_release.as_ref().ok()?;
        Some(match &self.root {
            Some(dir) => dir.join(path.trim_start_matches('/')),
            None => PathBuf::from(path),
        })
    }
}

/// One fact, for output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    pub name: &'static str,
    pub value: Seen<FactValue>,
    /// It describes the root's tree (the OS release), not the machine.
    pub from_root: bool,
}

impl Fact {
    fn new(name: &'static str, value: Seen<FactValue>, from_root: bool) -> Fact {
        Fact {
            name,
            value,
            from_root,
        }
    }
}

/// A fact's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FactValue {
    Text(String),
    Number(u64),
    List(Vec<String>),
}

impl FactValue {
    pub fn tree(self) -> Tree<'static> {
        match self {
            FactValue::Text(s) => Tree::str(s),
            FactValue::Number(n) => Tree::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            FactValue::List(items) => Tree::strs(items),
        }
    }
}

impl std::fmt::Display for FactValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FactValue::Text(s) => f.write_str(s),
            FactValue::Number(n) => write!(f, "{n}"),
            FactValue::List(items) if items.is_empty() => f.write_str("(none)"),
            FactValue::List(items) => f.write_str(&items.join(" ")),
        }
    }
}

/// os-release from the root, through links inside it, with the path it
/// was read from; why not, when there is none or it has no `ID`.
pub fn os_release(root: &Root) -> Seen<(OsRelease, String)> {
    let mut tried = Vec::new();
    for path in OS_RELEASE {
        match root.open(path, OFlag::O_RDONLY, true) {
            Ok(file) => {
                let mut bytes = Vec::new();
                file.take(READ_LIMIT)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read {}: {e}", root.path(path).display()))?;
                let text = String::from_utf8_lossy(&bytes);
                return parse_os_release(&text)
                    .map(|r| (r, path.to_owned()))
                    .ok_or_else(|| format!("{} has no ID", root.path(path).display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tried.push(root.path(path).display().to_string());
            }
            Err(e) => return Err(format!("cannot read {}: {e}", root.path(path).display())),
        }
    }
    Err(format!("no os-release ({})", tried.join(" nor ")))
}

/// os-release's `KEY=value` lines, values quoted as a shell would
/// (os-release(5)); `None` without an `ID`. A missing ID is `linux` by
/// the specification, but a tree without one says nothing about its OS.
fn parse_os_release(text: &str) -> Option<OsRelease> {
    let mut keys = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            keys.insert(k.trim(), unquote(v.trim()));
        }
    }
    let id = keys.get("ID").filter(|v| !v.is_empty())?.clone();
    Some(OsRelease {
        id,
        id_like: keys
            .get("ID_LIKE")
            .map(|v| v.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default(),
        version_id: keys.get("VERSION_ID").filter(|v| !v.is_empty()).cloned(),
        pretty_name: keys.get("PRETTY_NAME").filter(|v| !v.is_empty()).cloned(),
    })
}

/// A value in double or single quotes, with a double-quoted value's
/// backslash escapes, or bare.
fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        return v[1..v.len() - 1].to_owned();
    }
    let Some(inner) = v
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .filter(|_| v.len() >= 2)
    else {
        return v.to_owned();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(next) = chars.next()
        {
            if !matches!(next, '$' | '"' | '\\' | '`') {
                out.push('\\');
            }
            out.push(next);
        } else {
            out.push(c);
        }
    }
    out
}

/// A small file of the machine, trimmed; `None` when it cannot be read.
fn read(machine: &Path, rel: &str) -> Option<String> {
    let file = std::fs::File::open(machine.join(rel)).ok()?;
    let mut text = String::new();
    file.take(READ_LIMIT).read_to_string(&mut text).ok()?;
    Some(text.trim().to_owned())
}

/// What the machine runs in: a container, then a virtual machine.
fn virtualization(machine: &Path) -> Virtualization {
    let found = |name: &str, kind| Virtualization {
        name: name.to_owned(),
        kind,
    };
    if let Some(c) = container(machine) {
        return found(&c, "container");
    }
    if let Some(vm) = vm(machine) {
        return found(&vm, "vm");
    }
    found("none", "none")
}

fn container(machine: &Path) -> Option<String> {
    // Written by systemd (and most container managers) for the container.
    if let Some(name) = read(machine, "run/systemd/container").filter(|n| !n.is_empty()) {
        return Some(if name == "oci" {
            "container-other".into()
        } else {
            name
        });
    }
    if machine.join("run/.containerenv").exists() {
        return Some("podman".into());
    }
    if machine.join(".dockerenv").exists() {
        return Some("docker".into());
    }
    let release = read(machine, "proc/sys/kernel/osrelease").unwrap_or_default();
    if release.contains("Microsoft") || release.contains("WSL") {
        return Some("wsl".into());
    }
    if machine.join("proc/vz").exists() && !machine.join("proc/bc").exists() {
        return Some("openvz".into());
    }
    None
}

/// DMI names, as systemd-detect-virt matches them (a prefix of the vendor
/// or product), then Xen's own file, then the CPU flag.
fn vm(machine: &Path) -> Option<String> {
    const DMI: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "amazon"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "oracle"),
        ("VirtualBox", "oracle"),
        ("Oracle Corporation", "oracle"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Hyper-V", "microsoft"),
        ("Apple Virtualization", "apple"),
        ("Google Compute Engine", "google"),
    ];
    for file in [
        "product_name",
        "sys_vendor",
        "board_vendor",
        "bios_vendor",
        "product_version",
    ] {
        let Some(value) = read(machine, &format!("sys/class/dmi/id/{file}")) else {
            continue;
        };
        if let Some((_, name)) = DMI.iter().find(|(prefix, _)| value.starts_with(prefix)) {
            return Some((*name).to_owned());
        }
    }
    let vendor = read(machine, "sys/class/dmi/id/sys_vendor").unwrap_or_default();
    let product = read(machine, "sys/class/dmi/id/product_name").unwrap_or_default();
    if vendor == "Microsoft Corporation" && product == "Virtual Machine" {
        return Some("microsoft".into());
    }
    if read(machine, "sys/hypervisor/type").as_deref() == Some("xen") {
        return Some("xen".into());
    }
    let cpuinfo = read(machine, "proc/cpuinfo").unwrap_or_default();
    let flagged = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    flagged.then(|| "vm-other".to_owned())
}

/// The CPUs online (`0-3,6`), else the processors /proc/cpuinfo lists.
fn cpus(machine: &Path) -> Seen<u64> {
    if let Some(online) = read(machine, "sys/devices/system/cpu/online")
        && let Some(n) = count_ranges(&online)
    {
        return Ok(n);
    }
    let cpuinfo = read(machine, "proc/cpuinfo").ok_or_else(|| {
        "neither /sys/devices/system/cpu/online nor /proc/cpuinfo can be read".to_owned()
    })?;
    let n = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count() as u64;
    if n == 0 {
        return Err("/proc/cpuinfo lists no processor".into());
    }
    Ok(n)
}

/// How many numbers a list of ranges such as `0-3,6` holds.
fn count_ranges(list: &str) -> Option<u64> {
    let mut n = 0u64;
    for part in list.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?),
            None => {
                let a = part.parse::<u64>().ok()?;
                (a, a)
            }
        };
        n += b.checked_sub(a)? + 1;
    }
    (n > 0).then_some(n)
}

/// `MemTotal` of /proc/meminfo, in bytes.
fn memory(machine: &Path) -> Seen<u64> {
    let meminfo =
        read(machine, "proc/meminfo").ok_or_else(|| "/proc/meminfo cannot be read".to_owned())?;
    meminfo
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("MemTotal:")?;
            let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            kib.checked_mul(1024)
        })
        .ok_or_else(|| "/proc/meminfo has no MemTotal".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plant(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn os_release_reads_as_a_shell_would() {
        let r = parse_os_release(
            "# comment\nNAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME='Rocky Linux 9.4 (Blue Onyx)'\nX=\"a \\\"b\\\" \\\\ \\$c\"\n",
        )
        .unwrap();
        assert_eq!(r.id, "rocky");
        assert_eq!(r.id_like, ["rhel", "centos", "fedora"]);
        assert_eq!(r.version_id.as_deref(), Some("9.4"));
        assert_eq!(
            r.pretty_name.as_deref(),
            Some("Rocky Linux 9.4 (Blue Onyx)")
        );
        assert_eq!(unquote("\"a \\\"b\\\" \\\\ \\$c\""), "a \"b\" \\ $c");
        assert_eq!(parse_os_release("NAME=x\n"), None);
        assert_eq!(parse_os_release("ID=arch\n").unwrap().version_id, None);
    }

    #[test]
    fn the_os_release_comes_from_the_root_through_its_own_links() {
        let dir = tempfile::tempdir().unwrap();
        plant(
            dir.path(),
            "usr/lib/os-release",
            "ID=debian\nVERSION_ID=\"13\"\n",
        );
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        // Absolute, as distributions ship it: it leads inside the root.
        std::os::unix::fs::symlink("/usr/lib/os-release", dir.path().join("etc/os-release"))
            .unwrap();
        let facts = Facts::observe(&Root::at(dir.path()));
        let observed = facts.observed();
        assert_eq!(observed["os"], Ok("debian-13".to_owned()));
        assert_eq!(observed["os_version"], Ok("13".to_owned()));
        assert_eq!(
            facts.os_release_path().unwrap(),
            dir.path().join("etc/os-release")
        );
        let empty = tempfile::tempdir().unwrap();
        let none = Facts::observe(&Root::at(empty.path()));
        let why = none.observed()["os"].clone().unwrap_err();
        assert!(why.starts_with("no os-release ("), "{why}");
    }

    #[test]
    fn virtualization_is_a_container_first_then_a_vm() {
        let m = tempfile::tempdir().unwrap();
        assert_eq!(virtualization(m.path()).name, "none");
        plant(
            m.path(),
            "proc/cpuinfo",
            "processor\t: 0\nflags\t\t: fpu hypervisor sse\n",
        );
        assert_eq!(virtualization(m.path()).name, "vm-other");
        plant(m.path(), "sys/class/dmi/id/sys_vendor", "QEMU\n");
        assert_eq!(
            virtualization(m.path()),
            Virtualization {
                name: "qemu".into(),
                kind: "vm"
            }
        );
        plant(m.path(), "sys/class/dmi/id/product_name", "KVM\n");
        assert_eq!(virtualization(m.path()).name, "kvm");
        plant(m.path(), ".dockerenv", "");
        assert_eq!(
            virtualization(m.path()),
            Virtualization {
                name: "docker".into(),
                kind: "container"
            }
        );
        plant(m.path(), "run/systemd/container", "lxc\n");
        assert_eq!(virtualization(m.path()).name, "lxc");
    }

    #[test]
    fn cpus_and_memory_are_counted_from_the_kernel_files() {
        let m = tempfile::tempdir().unwrap();
        assert!(cpus(m.path()).is_err());
        plant(m.path(), "proc/cpuinfo", "processor\t: 0\nprocessor\t: 1\n");
        assert_eq!(cpus(m.path()), Ok(2));
        plant(m.path(), "sys/devices/system/cpu/online", "0-3,6\n");
        assert_eq!(cpus(m.path()), Ok(5));
        plant(
            m.path(),
            "proc/meminfo",
            "MemTotal:       2048 kB\nMemFree: 1 kB\n",
        );
        assert_eq!(memory(m.path()), Ok(2048 * 1024));
        assert_eq!(count_ranges("3-1"), None);
    }
}
