//! Kernel parameters: one file for every Sysctl of the host,
//! `/etc/sysctl.d/90-datum.conf` (read at boot by systemd-sysctl or
//! procps), and the running kernel's value under `/proc/sys`.
//!
//! The file is Datum's: it is written whole, a header then one `key =
//! value` line per parameter, sorted by key, atomically and never through
//! a link (a link planted at its name is replaced by the file). A key it
//! holds that no Sysctl manages any more stays until a Sysctl with
//! `ensure: absent` removes it, as a File left out of the fleet stays.
//!
//! On the running system a value that differs is written to
//! `/proc/sys/KEY` before the file is, so a value the kernel refuses
//! (`EINVAL`) fails the resource and is not kept for the next boot. Under
//! `--root` only the file is written; the running kernel is not the
//! tree's, and each run says so. Removing a parameter (`ensure: absent`)
//! leaves the running value alone: nothing says what it should go back to.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use datum_core::printable::escape;
use datum_fs::Attrs;

use super::{Context, Examined, Failure, Provider, has};
use crate::report::{Attribute, Change};
use crate::root::{Refused, Root};
use crate::spec::{Ensure, SysctlSpec};

/// The file every Sysctl of a host is written to.
pub const SYSCTL_FILE: &str = "/etc/sysctl.d/90-datum.conf";
/// The largest file read back.
const LIMIT: u64 = 1 << 20;

pub struct Sysctls {
    root: Root,
    /// `/proc/sys` of the running kernel; `None` under `--root`.
    proc_sys: Option<PathBuf>,
}

/// The file as found.
struct Found {
    /// Each key's value.
    values: BTreeMap<String, String>,
    /// A symbolic link stands at its name.
    link: bool,
}

impl Sysctls {
    pub fn new(root: Root) -> Sysctls {
        let proc_sys = root.dir().is_none().then(|| PathBuf::from("/proc/sys"));
        Sysctls { root, proc_sys }
    }

    /// The provider with the running kernel's parameters under `proc_sys`
    /// (for tests), whatever the root.
    pub fn with_proc_sys(root: Root, proc_sys: PathBuf) -> Sysctls {
        Sysctls {
            root,
            proc_sys: Some(proc_sys),
        }
    }

    fn read(&self) -> Result<Found, Failure> {
        let shown = self.root.path(SYSCTL_FILE).display().to_string();
        match self.root.read_small(SYSCTL_FILE, LIMIT) {
            Ok(None) => Ok(Found {
                values: BTreeMap::new(),
                link: false,
            }),
            Ok(Some(bytes)) => Ok(Found {
                values: parse(&String::from_utf8_lossy(&bytes)),
                link: false,
            }),
            Err(Refused::Link) => Ok(Found {
                values: BTreeMap::new(),
                link: true,
            }),
            Err(e) => Err(Failure::new(format!("cannot read {shown}: {e}"))),
        }
    }

    /// The file of a `--root` (or `/`), from each key's value.
    fn write(&self, values: &BTreeMap<String, String>) -> Result<(), Failure> {
        let mut text = String::from(
            "# Kernel parameters of Sysctl resources, managed by Datum: changes here are overwritten.\n",
        );
        for (k, v) in values {
            text.push_str(&format!("{k} = {v}\n"));
        }
        self.root
            .write_atomic(SYSCTL_FILE, text.as_bytes(), Attrs::mode(0o644))
            .map_err(|e| {
                Failure::new(format!(
                    "cannot write {}: {e}",
                    self.root.path(SYSCTL_FILE).display()
                ))
            })
    }

    /// The running value of `key`, words separated by one space.
    fn live(&self, key: &str) -> Result<Option<String>, Failure> {
        let Some(dir) = &self.proc_sys else {
            return Ok(None);
        };
        let path = dir.join(proc_path(key));
        match std::fs::read_to_string(&path) {
            Ok(v) => Ok(Some(words(&v))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Failure::new(format!(
                "the running kernel has no parameter {key} ({} does not exist)",
                path.display()
            ))),
            Err(e) => Err(Failure::new(format!("cannot read {}: {e}", path.display()))),
        }
    }

    fn set_live(&self, key: &str, value: &str) -> Result<(), Failure> {
        let Some(dir) = &self.proc_sys else {
            return Ok(());
        };
        let path = dir.join(proc_path(key));
        // Truncated as the shell's `>` does: procfs ignores it, a file
        // standing in for it in a test does not.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut f| f.write_all(value.as_bytes()));
        written.map_err(|e| {
            Failure::new(format!(
                "the running kernel refused {key} = {}: {e}",
                escape(value)
            ))
        })
    }
}

impl Provider<SysctlSpec> for Sysctls {
    fn examine(&self, s: &SysctlSpec, _cx: &Context<'_>) -> Result<Examined, Failure> {
        let found = self.read()?;
        let mut ex = Examined::default();
        if found.link {
            ex.changes
                .push(Change::new(Attribute::Type, "symbolic link", "file"));
        }
        let have = found.values.get(&s.name).map(|v| words(v));
        let want = words(&s.value);
        match (s.ensure, have) {
            (Ensure::Present, None) => ex.changes.push(Change::set(Attribute::Value, &want)),
            (Ensure::Present, Some(h)) if h != want => {
                ex.changes
                    .push(Change::new(Attribute::Value, escape(&h), &want));
            }
            (Ensure::Absent, Some(h)) => {
                ex.changes.push(Change {
                    attribute: Attribute::Value,
                    from: Some(escape(&h).into_owned()),
                    to: None,
                    diff: None,
                });
                if self.proc_sys.is_some() {
                    ex.notes.push(format!(
                        "the running kernel keeps its value of {} until the next boot: nothing says what it should go back to",
                        s.name
                    ));
                }
            }
            _ => {}
        }
        // A parameter being removed is not read: its module may be gone.
        if s.ensure == Ensure::Present
            && let Some(live) = self.live(&s.name)?
            && live != want
        {
            ex.changes
                .push(Change::new(Attribute::Live, escape(&live), &want));
        }
        if let Some(dir) = self.root.dir() {
            ex.notes.push(format!(
                "only {SYSCTL_FILE} is written under {}: the running kernel is not the tree's, and its value is neither read nor changed",
                dir.display()
            ));
        }
        Ok(ex)
    }

    fn converge(
        &self,
        s: &SysctlSpec,
        changes: &[Change],
        _cx: &Context<'_>,
    ) -> Result<(), Failure> {
        if has(changes, Attribute::Live) {
            self.set_live(&s.name, &words(&s.value))?;
        }
        if has(changes, Attribute::Value) || has(changes, Attribute::Type) {
            // Read again: another Sysctl of this run may have written it.
            let mut values = self.read()?.values;
            match s.ensure {
                Ensure::Present => values.insert(s.name.clone(), words(&s.value)),
                Ensure::Absent => values.remove(&s.name),
            };
            self.write(&values)?;
        }
        Ok(())
    }
}

/// `key = value` lines; blank lines and comments (`#`, `;`) skipped, a
/// leading `-` (ignore failures, in systemd's reading) dropped.
fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';']))
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            Some((
                k.trim().trim_start_matches('-').to_owned(),
                v.trim().to_owned(),
            ))
        })
        .collect()
}

/// A value's words separated by one space, as the kernel shows a
/// parameter of several (`32768\t60999` is `32768 60999`).
fn words(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The file of `key` below `/proc/sys`: with `.` separators, `/` and `.`
/// swap (a `.` inside a component is written `/`); with `/` first, the
/// key is the path (sysctl.d(5)).
fn proc_path(key: &str) -> String {
    let first = key.find(['.', '/']);
    match first.map(|i| &key[i..=i]) {
        Some("/") | None => key.to_owned(),
        _ => key
            .chars()
            .map(|c| match c {
                '.' => '/',
                '/' => '.',
                c => c,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_files_below_proc_sys_as_sysctl_d_says() {
        assert_eq!(proc_path("net.ipv4.ip_forward"), "net/ipv4/ip_forward");
        assert_eq!(
            proc_path("net.ipv4.conf.eth0/100.rp_filter"),
            "net/ipv4/conf/eth0.100/rp_filter"
        );
        assert_eq!(
            proc_path("net/ipv4/conf/eth0.100/rp_filter"),
            "net/ipv4/conf/eth0.100/rp_filter"
        );
        assert_eq!(proc_path("kernel"), "kernel");
    }

    /// A root with /etc/sysctl.d, and a stand-in for /proc/sys holding
    /// `vm/swappiness` (60) and `net/ipv4/ip_local_port_range`.
    fn scene() -> (tempfile::TempDir, Sysctls) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("root/etc/sysctl.d")).unwrap();
        let proc_sys = dir.path().join("proc/sys");
        std::fs::create_dir_all(proc_sys.join("vm")).unwrap();
        std::fs::create_dir_all(proc_sys.join("net/ipv4")).unwrap();
        std::fs::write(proc_sys.join("vm/swappiness"), "60\n").unwrap();
        std::fs::write(
            proc_sys.join("net/ipv4/ip_local_port_range"),
            "32768\t60999\n",
        )
        .unwrap();
        let p = Sysctls::with_proc_sys(Root::at(dir.path().join("root")), proc_sys);
        (dir, p)
    }

    fn spec(name: &str, ensure: Ensure, value: &str) -> SysctlSpec {
        SysctlSpec {
            name: name.into(),
            ensure,
            value: value.into(),
        }
    }

    #[test]
    fn the_running_value_is_compared_and_written_before_the_file() {
        let (dir, p) = scene();
        let pending = crate::provider::Pending::default();
        let cx = Context {
            noop: false,
            pending: &pending,
        };
        let s = spec("vm.swappiness", Ensure::Present, "10");
        let ex = p.examine(&s, &cx).unwrap();
        assert_eq!(
            ex.changes,
            [
                Change::set(Attribute::Value, "10"),
                Change::new(Attribute::Live, "60", "10")
            ]
        );
        p.converge(&s, &ex.changes, &cx).unwrap();
        let proc =
            |rel: &str| std::fs::read_to_string(dir.path().join("proc/sys").join(rel)).unwrap();
        assert_eq!(proc("vm/swappiness"), "10");
        assert!(p.examine(&s, &cx).unwrap().changes.is_empty());
        // Tabs in the kernel's value read as one space.
        let range = spec(
            "net.ipv4.ip_local_port_range",
            Ensure::Present,
            "32768 60999",
        );
        let ex = p.examine(&range, &cx).unwrap();
        assert_eq!(ex.changes, [Change::set(Attribute::Value, "32768 60999")]);
        // A key the kernel lacks fails; removing one is fine, with a note.
        let missing = spec("vm.nosuch", Ensure::Present, "1");
        let err = p.examine(&missing, &cx).unwrap_err();
        assert!(
            err.0
                .starts_with("the running kernel has no parameter vm.nosuch"),
            "{}",
            err.0
        );
        let gone = spec("vm.swappiness", Ensure::Absent, "");
        let ex = p.examine(&gone, &cx).unwrap();
        assert_eq!(ex.changes.len(), 1);
        assert!(
            ex.notes[0].contains("keeps its value of vm.swappiness"),
            "{:?}",
            ex.notes
        );
        assert!(
            p.examine(&spec("vm.nosuch", Ensure::Absent, ""), &cx)
                .unwrap()
                .changes
                .is_empty()
        );
    }

    #[test]
    fn the_file_reads_as_sysctl_does() {
        let values = parse("# x\n; y\n\nvm.swappiness=10\n -net.a = 1 2 \nbroken\n");
        assert_eq!(values["vm.swappiness"], "10");
        assert_eq!(values["net.a"], "1 2");
        assert_eq!(values.len(), 2);
        assert_eq!(words("32768\t60999\n"), "32768 60999");
    }
}
