//! apt under `--root`, from the deb822 sources files of the root
//! (`/etc/apt/sources.list.d/*.sources`): the Repositories Datum manages
//! there (`datum-*.sources`) and the root's others.
//!
//! apt opens every path its sources name as a path of this machine, and
//! reads the machine's own configuration: so it is given none of either.
//! Its configuration is a file of its own (`APT_CONFIG`, read before any
//! other, which points apt's `/etc/apt` at a scratch directory holding
//! nothing but the rewritten sources); its state, cache and logs are the
//! root's (`/var/lib/apt`, `/var/cache/apt`, `/var/log/apt`), the dpkg
//! database the root's, and dpkg runs with `--root`; what they write there
//! is checked first ([`super::written`]). In the sources ([`deb822`]):
//!
//! - `URIs` must be `file:` addresses: each is made the root's own
//!   (`file:///srv/repo` is `ROOT/srv/repo`) and checked as a dnf
//!   repository is ([`crate::provider::local_repo`]). An address on the
//!   network cannot be reached (nothing is downloaded from outside the
//!   root): in Datum's own files it is refused, in the root's others it is
//!   left out with a note naming the file and line ([`notes`]), with its
//!   source when that has no `file:` address;
//! - a `Signed-By` key file (on the field's line or continued) is read
//!   inside the root as a regular file, never through a link at its name,
//!   and copied into the scratch directory (an armored key written inline
//!   is kept as it is, as is a fingerprint);
//! - a source with `Trusted` or `Allow-*` (apt would skip or weaken the
//!   signature check) or `InRelease-Path` is refused;
//! - a source with `Enabled: no` is left out.
//!
//! One-line-style sources (`/etc/apt/sources.list`, `*.list`) are not
//! read under `--root`: a note says so for each that has an entry.
//!
//! apt runs without network (`unshare --net`), its programs (methods,
//! gpgv) this machine's, never the root's.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::deb822::{self, Field, Remote};
use crate::provider::Failure;
use crate::provider::command::{self, tool};
use crate::provider::local_repo::{checked, repository_dir, stays_inside, walk};
use crate::root::Root;

/// Where apt reads its sources, in the root.
pub const SOURCES_DIR: &str = "/etc/apt/sources.list.d";
/// The largest sources or key file read from the root.
const LIMIT: u64 = 1 << 20;
/// Where apt and dpkg write in the root.
const WRITTEN: [&str; 5] = [
    "/var/lib/apt",
    "/var/lib/dpkg",
    "/var/cache/apt",
    "/var/log/apt",
    "/var/log",
];

/// apt's package lists, in the root.
const LISTS: &str = "/var/lib/apt/lists";

/// The one-line-style sources file of the root, beside its `*.list`.
const SOURCES_LIST: &str = "/etc/apt/sources.list";

/// The names of the root's deb822 sources files (`*.sources`), sorted.
pub fn sources(root: &Root) -> Result<Vec<String>, Failure> {
    names(root, ".sources")
}

/// The names of the files of [`SOURCES_DIR`] ending with `suffix`, sorted
/// (none when it does not exist).
fn names(root: &Root, suffix: &str) -> Result<Vec<String>, Failure> {
    stays_inside(root, SOURCES_DIR).map_err(Failure::new)?;
    let names = match root.list(SOURCES_DIR) {
        Ok(names) => names,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(Failure::new(format!(
                "cannot list {}: {e}",
                root.path(SOURCES_DIR).display()
            )));
        }
    };
    let mut names: Vec<String> = names
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    Ok(names)
}

/// How a sources file of the root is read: Datum's own refuse an address
/// on the network, the root's others leave it out.
fn remote(name: &str) -> Remote {
    if name.starts_with("datum-") {
        Remote::Refuse
    } else {
        Remote::Skip
    }
}

/// A sources file of the root (`name` in [`SOURCES_DIR`]), rewritten with
/// `relocate`; an error names the file.
fn read_sources(
    root: &Root,
    name: &str,
    relocate: impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<deb822::Rewritten, Failure> {
    let abs = format!("{SOURCES_DIR}/{name}");
    let bytes = root
        .read_small(&abs, LIMIT)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", root.path(&abs).display())))?
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    deb822::rewrite(&text, remote(name), relocate)
        .map_err(|e| Failure::new(format!("{}: {e}", root.path(&abs).display())))
}

/// What of the root's sources apt is not given under `--root`, one note
/// each: an address on the network (with its file and line), a
/// one-line-style sources file that has an entry. A file Datum cannot
/// read is left to the install, which fails on it.
pub fn notes(root: &Root) -> Vec<String> {
    let mut notes = Vec::new();
    for name in sources(root).unwrap_or_default() {
        if remote(&name) == Remote::Refuse {
            continue;
        }
        let Ok(read) = read_sources(root, &name, |_, v| Ok(v.to_owned())) else {
            continue;
        };
        let path = root.path(&format!("{SOURCES_DIR}/{name}"));
        for (line, uri) in read.skipped {
            notes.push(format!(
                "{}: line {line}: `{uri}` is not a file: address, which apt cannot reach under --root (nothing is downloaded from outside the root): apt is not given it",
                path.display()
            ));
        }
    }
    let lists = names(root, ".list").unwrap_or_default();
    let lists = std::iter::once(SOURCES_LIST.to_owned())
        .chain(lists.iter().map(|n| format!("{SOURCES_DIR}/{n}")));
    for abs in lists {
        let Ok(Some(bytes)) = root.read_small(&abs, LIMIT) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let entry = text
            .lines()
            .map(str::trim)
            .any(|l| !l.is_empty() && !l.starts_with('#'));
        if entry {
            notes.push(format!(
                "{}: one-line-style sources are not read under --root, only the deb822 `.sources` files of {SOURCES_DIR}: write its entries as a `.sources` file for apt to read them",
                root.path(&abs).display()
            ));
        }
    }
    notes
}

/// apt-get's failure, with what it reads under `--root`.
pub fn with_hint(f: Failure) -> Failure {
    Failure::new(format!(
        "{}; under --root, apt reads only the root's deb822 sources ({SOURCES_DIR}/*.sources), from their file: addresses inside the root",
        f.0
    ))
}

/// apt's scratch configuration for one run.
pub struct AptRoot {
    dir: tempfile::TempDir,
    root_dir: PathBuf,
}

impl AptRoot {
    /// The scratch configuration for the root's sources files ([`sources`]),
    /// rewritten; `None` when none of them has a source apt can read under
    /// `--root` (then nothing is prepared in the root).
    pub fn new(root: &Root, root_dir: &Path) -> Result<Option<AptRoot>, Failure> {
        let io = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(format!("cannot prepare apt's {what}: {e}"))
        };
        let dir = tempfile::Builder::new()
            .prefix("datum-apt-")
            .tempdir()
            .map_err(|e| io("scratch directory", &e))?;
        let etc = dir.path().join("etc");
        for d in [
            "sources.list.d",
            "apt.conf.d",
            "trusted.gpg.d",
            "preferences.d",
            "keys",
        ] {
            std::fs::create_dir_all(etc.join(d)).map_err(|e| io(d, &e))?;
        }
        let shown = [root_dir, dir.path()]
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>();
        if shown.iter().any(|p| p.contains(['"', '\n'])) {
            return Err(Failure::new(format!(
                "{} holds `\"` or a line break, which apt's configuration cannot quote",
                shown[0]
            )));
        }
        if write_sources(root, root_dir, &etc)? == 0 {
            return Ok(None);
        }
        for abs in WRITTEN {
            stays_inside(root, abs).map_err(Failure::new)?;
        }
        for abs in [
            "/var/lib/apt/lists/partial",
            "/var/cache/apt/archives/partial",
            "/var/log/apt",
        ] {
            root.create_dir_all(abs, 0o755).map_err(|e| {
                Failure::new(format!("cannot create {}: {e}", root.path(abs).display()))
            })?;
        }
        super::written::check(root, true)?;
        let conf = apt_conf(root_dir, &etc);
        std::fs::write(dir.path().join("apt.conf"), conf).map_err(|e| io("apt.conf", &e))?;
        Ok(Some(AptRoot {
            dir,
            root_dir: root_dir.to_owned(),
        }))
    }

    /// apt-get with this configuration only, without network.
    pub fn apt_get(&self) -> Command {
        let mut cmd = tool("unshare");
        cmd.env("APT_CONFIG", self.dir.path().join("apt.conf"))
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["--net", "--", "apt-get"]);
        cmd
    }

    /// apt-get reading the package lists [`AptRoot::freeze_lists`] copied.
    pub fn apt_get_frozen(&self) -> Command {
        let mut cmd = self.apt_get();
        cmd.arg(format!(
            "-oDir::State::lists={}/",
            self.dir.path().join("lists").display()
        ));
        cmd
    }

    /// Copies apt's package lists of the root into the scratch directory,
    /// for the check and the install to read the same ones: apt links a
    /// `file:` repository's index into its lists, by its path on this
    /// machine, and would otherwise read it again as the repository holds
    /// it when it installs, after the check ([`written`] made sure those
    /// links lead inside the root).
    ///
    /// [`written`]: super::written
    pub fn freeze_lists(&self, root: &Root) -> Result<(), Failure> {
        let to = self.dir.path().join("lists");
        let io = |what: &dyn std::fmt::Display, e: &dyn std::fmt::Display| {
            Failure::new(format!("cannot copy apt's list {what}: {e}"))
        };
        std::fs::create_dir_all(to.join("partial")).map_err(|e| io(&to.display(), &e))?;
        let real_root = self
            .root_dir
            .canonicalize()
            .map_err(|e| io(&self.root_dir.display(), &e))?;
        let names = root
            .list(LISTS)
            .map_err(|e| io(&root.path(LISTS).display(), &e))?;
        for name in names {
            let Some(name) = name.to_str() else { continue };
            let abs = format!("{LISTS}/{name}");
            let shown = root.path(&abs);
            match root.lstat(&abs) {
                Ok(Some(m)) if m.is_file() || m.file_type().is_symlink() => {}
                Ok(_) => continue,
                Err(e) => return Err(io(&shown.display(), &e)),
            }
            // A link is apt's, by the path on this machine of a file of
            // the root: that file, opened inside the root.
            let inside = shown
                .canonicalize()
                .ok()
                .and_then(|p| Some(format!("/{}", p.strip_prefix(&real_root).ok()?.to_str()?)))
                .ok_or_else(|| io(&shown.display(), &"it leads out of the root, or nowhere"))?;
            let mut from = root
                .open_regular(&inside)
                .map_err(|e| io(&shown.display(), &e))?
                .ok_or_else(|| io(&shown.display(), &"it is gone"))?;
            let mut copy =
                std::fs::File::create(to.join(name)).map_err(|e| io(&shown.display(), &e))?;
            std::io::copy(&mut from, &mut copy).map_err(|e| io(&shown.display(), &e))?;
        }
        Ok(())
    }

    /// Refuses the run when apt would read a package of the transaction
    /// (`wanted`, as `apt-get install` is given them, dependencies
    /// included) from outside the root: apt opens a `file:` repository's
    /// package at the path its index gives (`Filename:`, which may climb
    /// with `..`), on this machine. apt itself says where, with
    /// `--print-uris` (one run that changes nothing), from the lists
    /// [`AptRoot::freeze_lists`] copied, which the install then reads.
    pub fn check_archives(&self, root: &Root, wanted: &[String]) -> Result<(), Failure> {
        self.freeze_lists(root)?;
        let mut cmd = self.apt_get_frozen();
        cmd.args([
            "install",
            "--print-uris",
            "-y",
            "-q",
            "--allow-downgrades",
            "--",
        ])
        .args(wanted);
        let out = command::run(&mut cmd).map_err(with_hint)?;
        archives_inside(root, &self.root_dir, &out).map_err(Failure::new)
    }

    /// Whether apt has package lists of the root's repositories (named
    /// after their addresses, which hold the root's path).
    pub fn has_lists(&self, root: &Root) -> bool {
        let mangled = self.root_dir.display().to_string().replace('/', "_");
        root.list("/var/lib/apt/lists").is_ok_and(|names| {
            names.iter().any(|n| {
                let n = n.to_string_lossy();
                n.starts_with(&mangled) && n.ends_with("_Packages")
            })
        })
    }
}

/// Writes the root's sources files, rewritten, into the scratch `etc`
/// (their keys into `etc/keys`); how many sources they keep.
fn write_sources(root: &Root, root_dir: &Path, etc: &Path) -> Result<usize, Failure> {
    let mut keys = 0;
    let mut kept = 0;
    for name in sources(root)? {
        let out = read_sources(root, &name, |field, value| match field {
            Field::Uri => relocate_uri(root, root_dir, value),
            Field::Key => {
                keys += 1;
                copy_key(root, value, &etc.join(format!("keys/{keys}")))
            }
        })?;
        kept += out.sources;
        std::fs::write(etc.join("sources.list.d").join(&name), out.text)
            .map_err(|e| Failure::new(format!("cannot prepare apt's sources: {e}")))?;
    }
    Ok(kept)
}

/// Refuses the first archive of apt's `--print-uris` answer (lines
/// `'URI' FILE SIZE HASH`, the URI quoted by apt: a space in it is `%20`)
/// that apt would read outside the root `root_dir`, or through a link.
fn archives_inside(root: &Root, root_dir: &Path, printed: &str) -> Result<(), String> {
    for line in printed.lines().filter(|l| l.starts_with('\'')) {
        let (uri, file) = line[1..]
            .split_once("' ")
            .ok_or_else(|| format!("apt-get --print-uris printed `{}`", line.escape_debug()))?;
        let file = file.split(' ').next().unwrap_or_default();
        let why = match uri.strip_prefix("file:").filter(|p| p.starts_with('/')) {
            None => Err(
                "is not a file: address, and nothing is downloaded from outside the root"
                    .to_owned(),
            ),
            Some(path) => match percent_decoded(path) {
                None => Err("is not a path apt's quoting gives".to_owned()),
                Some(path) => match Path::new(&path).strip_prefix(root_dir) {
                    Err(_) => Err("is not inside the root".to_owned()),
                    Ok(rel) => walk(root, "/", &rel.to_string_lossy()),
                },
            },
        };
        why.map_err(|why| {
            format!(
                "package {file}: apt would read it from `{uri}`, which {why}; under --root apt opens a package at the path its repository's index gives (`Filename:`), on this machine, so the run is refused before apt reads it (rebuild the index with `dpkg-scanpackages` in the repository's directory)"
            )
        })?;
    }
    Ok(())
}

/// `text` with apt's `%XX` quoting undone once, as its file method does;
/// `None` when that is not UTF-8 or still holds a `%XX` (quoted twice: what
/// it names could not be told).
fn percent_decoded(text: &str) -> Option<String> {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    let decoded = String::from_utf8(out).ok()?;
    let twice = decoded
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && hex(w[1]).is_some() && hex(w[2]).is_some());
    (!twice).then_some(decoded)
}

/// apt's configuration: `/etc/apt` is `etc` (scratch), its state, cache,
/// logs and dpkg the root's (`root_dir`).
fn apt_conf(root_dir: &Path, etc: &Path) -> String {
    let r = root_dir.display();
    let e = etc.display();
    format!(
        "Dir::Etc \"{e}/\";\nDir::Etc::Main \"/dev/null\";\nDir::Etc::Parts \"apt.conf.d/\";\n\
             Dir::Etc::SourceList \"/dev/null\";\nDir::Etc::SourceParts \"sources.list.d/\";\n\
             Dir::Etc::Trusted \"{e}/trusted.gpg\";\nDir::Etc::TrustedParts \"trusted.gpg.d/\";\n\
             Dir::Etc::Preferences \"{e}/preferences\";\nDir::Etc::PreferencesParts \"preferences.d/\";\n\
             Dir::State \"{r}/var/lib/apt/\";\nDir::State::status \"{r}/var/lib/dpkg/status\";\n\
             Dir::Cache \"{r}/var/cache/apt/\";\nDir::Log \"{r}/var/log/apt/\";\n\
             APT::Sandbox::User \"root\";\nAcquire::Languages \"none\";\n\
             APT::Install-Recommends \"false\";\nDPkg::Use-Pty \"false\";\n\
             DPkg::Options {{ \"--root={r}\"; \"--log={r}/var/log/dpkg.log\"; \"--force-confdef\"; \"--force-confold\"; }};\n"
    )
}

/// A `file:` address of a source made the root's, checked.
fn relocate_uri(root: &Root, root_dir: &Path, value: &str) -> Result<String, String> {
    let path = value
        .strip_prefix("file://")
        .or_else(|| value.strip_prefix("file:"))
        .ok_or_else(|| {
            format!(
                "`{value}` is not a file: address: under --root nothing is downloaded from outside the root; serve the repository from a directory in the root (`file:///srv/repo`)"
            )
        })?;
    checked(path, value)?;
    repository_dir(root, path)?;
    Ok(format!(
        "file://{}",
        root_dir.join(path.trim_start_matches('/')).display()
    ))
}

/// The key file `path` of the root (a regular file, never through a link
/// at its name) copied to `to` with its extension (apt reads `.asc` as
/// armored, `.gpg` as binary); the copy's path.
fn copy_key(root: &Root, path: &str, to: &Path) -> Result<String, String> {
    let ext = if path.ends_with(".gpg") { "gpg" } else { "asc" };
    checked(path, path)?;
    let key = root
        .read_small(path, LIMIT)
        .map_err(|e| format!("cannot read the key {}: {e}", root.path(path).display()))?
        .ok_or_else(|| format!("the key {} does not exist", root.path(path).display()))?;
    let copy = to.with_extension(ext);
    std::fs::write(&copy, key).map_err(|e| format!("cannot copy the key: {e}"))?;
    Ok(copy.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apts_quoting_is_undone_once() {
        assert_eq!(
            percent_decoded("/r/a%2bb%7ec%20d_1.deb").as_deref(),
            Some("/r/a+b~c d_1.deb")
        );
        assert_eq!(percent_decoded("/r/%2e%2e/x").as_deref(), Some("/r/../x"));
        assert_eq!(percent_decoded("/r/100%").as_deref(), Some("/r/100%"));
        // Quoted twice, or not UTF-8: refused.
        assert_eq!(percent_decoded("/r/%252e%252e/x"), None);
        assert_eq!(percent_decoded("/r/%ff"), None);
    }

    #[test]
    fn archives_leading_out_of_the_root_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        std::fs::create_dir_all(dir.join("srv/repo")).unwrap();
        let root = Root::at(&dir);
        let r = dir.display();
        let line = |uri: &str| format!("Need to get 0 B\n'{uri}' x_1_all.deb 720 MD5Sum:00\n");
        let inside = line(&format!("file:{r}/srv/repo/./x%2b_1_all.deb"));
        assert_eq!(archives_inside(&root, &dir, &inside), Ok(()));
        for (uri, want) in [
            (
                format!("file:{r}/srv/repo/../../../x.deb"),
                "leads out of the root",
            ),
            (
                format!("file:{r}/srv/repo/%2e%2e/%2e%2e/%2e%2e/x.deb"),
                "leads out of the root",
            ),
            ("file:/tmp/x.deb".to_owned(), "is not inside the root"),
            (
                "http://example.org/x.deb".to_owned(),
                "is not a file: address",
            ),
        ] {
            let err = archives_inside(&root, &dir, &line(&uri)).unwrap_err();
            assert!(
                err.starts_with(&format!(
                    "package x_1_all.deb: apt would read it from `{uri}`, which {want}"
                )),
                "{uri}: {err}"
            );
        }
        assert!(archives_inside(&root, &dir, "'file:/x\n").is_err());
    }
}
