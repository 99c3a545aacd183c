//! A root's dnf configuration (its `dnf.conf` and `.repo` files), made
//! safe to hand dnf under `--root`.
//!
//! dnf opens every path its configuration names as a path of this
//! machine, following links as it goes: a `.repo` file planted in a root
//! could make it read the host's files. So, before dnf sees them, every
//! path they name is checked or copied here:
//!
//! - `baseurl` must be a `file://` address (or a plain absolute path), is
//!   made the root's own (`file:///srv/repo` is `ROOT/srv/repo`), its
//!   variables (`$releasever`, `$basearch`, `$arch`, the root's
//!   `/etc/dnf/vars`) expanded here, and no component of it, nor anything
//!   in the repository's directory, may be a symbolic link;
//! - `gpgkey` files and the TLS files (`sslcacert`, `sslclientcert`,
//!   `sslclientkey` and their `proxy_` twins) are read inside the root as
//!   regular files, never through a link at their name, and copied into
//!   the scratch directory dnf is given;
//! - `mirrorlist`, `metalink` and addresses on the network are refused:
//!   under `--root` nothing is downloaded from outside the root;
//! - a repository with `enabled=0` is left out (dnf would not read it);
//! - the root's settings of where dnf keeps its own files (`cachedir`,
//!   `persistdir`, `logdir`, `reposdir`, `varsdir`, plugins) are left out:
//!   dnf keeps them in the root, where they are checked for links;
//! - `skip_if_unavailable` is left out, and dnf told not to skip: a
//!   repository dnf cannot load fails the run.
//!
//! Anything else is refused with the file, line and what to change.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::locations::{RepoDir, Repos};
use crate::provider::local_repo::{checked, repository_dir, stays_inside};
use crate::root::Root;

/// The largest key, certificate or variable file read from the root.
const FILE_LIMIT: u64 = 1 << 20;
/// Where dnf reads its variables (inside the root, under `--installroot`).
pub const VARS_DIRS: [&str; 2] = ["/etc/dnf/vars", "/etc/yum/vars"];

/// Options naming files dnf reads: copied from the root.
const FILE_OPTIONS: [&str; 6] = [
    "sslcacert",
    "sslclientcert",
    "sslclientkey",
    "proxy_sslcacert",
    "proxy_sslclientcert",
    "proxy_sslclientkey",
];
/// Options reaching for another source than a `baseurl`: refused.
const NETWORK_OPTIONS: [&str; 2] = ["mirrorlist", "metalink"];
/// Where dnf keeps its own files or finds more configuration: left out,
/// dnf keeps its defaults inside the root.
const OWN_OPTIONS: [&str; 10] = [
    "cachedir",
    "system_cachedir",
    "persistdir",
    "logdir",
    "reposdir",
    "varsdir",
    "pluginpath",
    "pluginconfpath",
    "installroot",
    "config_file_path",
];

/// Whether dnf may go on without a repository it cannot load: left out,
/// dnf is told no ([`SKIP_NONE`]). The install reads only the metadata the
/// location check loaded ([`super::locations`]), from dnf's cache: a
/// repository the check skipped would be read from whatever cache of it
/// the root holds, never checked.
const SKIP_OPTIONS: [&str; 1] = ["skip_if_unavailable"];
/// dnf's option that fails a run on a repository it cannot load.
pub const SKIP_NONE: &str = "--setopt=skip_if_unavailable=False";

/// Rewrites a root's dnf configuration files for dnf under `--root`.
pub struct Relocator<'a> {
    root: &'a Root,
    root_dir: &'a Path,
    scratch: &'a Path,
    vars: BTreeMap<String, String>,
    copies: usize,
    /// The enabled repositories read so far, where their packages are.
    repos: Repos,
}

impl<'a> Relocator<'a> {
    /// Reads the root's variables: `releasever` (given), `basearch` and
    /// `arch` (this machine's, as dnf takes them), and one per file of
    /// [`VARS_DIRS`] (its first line), each a regular file.
    pub fn new(
        root: &'a Root,
        root_dir: &'a Path,
        scratch: &'a Path,
        releasever: Option<&str>,
    ) -> Result<Relocator<'a>, String> {
        let mut vars = BTreeMap::new();
        let (arch, basearch) = arches();
        vars.insert("arch".to_owned(), arch.to_owned());
        vars.insert("basearch".to_owned(), basearch.to_owned());
        if let Some(v) = releasever {
            vars.insert("releasever".to_owned(), v.to_owned());
        }
        for dir in VARS_DIRS.iter().rev() {
            stays_inside(root, dir)?;
            let names = root
                .list(dir)
                .map_err(|e| format!("cannot list {}: {e}", root.path(dir).display()))?;
            for name in names {
                let name = name.to_string_lossy().into_owned();
                let abs = format!("{dir}/{name}");
                let bytes = root
                    .read_small(&abs, FILE_LIMIT)
                    .map_err(|e| format!("{}: {e}", root.path(&abs).display()))?
                    .unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes);
                let value = text.lines().next().unwrap_or("").trim().to_owned();
                vars.insert(name, value);
            }
        }
        Ok(Relocator {
            root,
            root_dir,
            scratch,
            vars,
            copies: 0,
            repos: Repos::new(),
        })
    }

    /// The enabled repositories of the files rewritten, by id, with the
    /// directory in the root of their first `baseurl`.
    pub fn repos(&self) -> &Repos {
        &self.repos
    }

    /// `text` (a `.repo` file or dnf.conf, the root's `file`) with every
    /// path relocated as the module says; an error names the line
    /// (1-based) and what to do.
    pub fn rewrite(&mut self, text: &str, file: &str) -> Result<String, String> {
        let sections = parse(text);
        let mut out = String::with_capacity(text.len());
        for section in &sections {
            let repo = section.name.as_deref().is_some_and(|n| n != "main");
            if repo && !section.enabled() {
                let _ = writeln!(
                    out,
                    "# [{}]: enabled=0, left out by Datum",
                    section.name.as_deref().unwrap_or_default()
                );
                continue;
            }
            if let Some(h) = section.header {
                let _ = writeln!(out, "{h}");
            }
            for item in &section.items {
                match item {
                    Item::Raw(line) => {
                        let _ = writeln!(out, "{line}");
                    }
                    Item::Option(o) => {
                        let value = self
                            .option(o)
                            .map_err(|e| format!("line {}: `{}`: {e}", o.line, o.key))?;
                        if repo && o.key.eq_ignore_ascii_case("baseurl") {
                            self.note_repo(section, o, file);
                        }
                        if let Some(v) = value {
                            let _ = writeln!(out, "{}={v}", o.key);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The value one option is written with, `None` to leave it out.
    fn option(&mut self, o: &Opt<'_>) -> Result<Option<String>, String> {
        let key = o.key.to_ascii_lowercase();
        let values: Vec<&str> = o
            .values
            .iter()
            .flat_map(|v| v.split(|c: char| c.is_whitespace() || c == ','))
            .filter(|v| !v.is_empty())
            .collect();
        if OWN_OPTIONS.contains(&key.as_str()) || SKIP_OPTIONS.contains(&key.as_str()) {
            return Ok(None);
        }
        if values.is_empty() {
            return Ok(Some(String::new()));
        }
        if NETWORK_OPTIONS.contains(&key.as_str()) {
            return Err("under --root nothing is downloaded from outside the root, and dnf reads a repository only from a `baseurl` inside it; give `baseurl=file:///...` (a directory in the root) or disable the repository (`enabled=0`)".into());
        }
        if key == "include" {
            return Err("under --root a repository's configuration is read from this file only; copy what it includes here".into());
        }
        if key == "baseurl" {
            let urls = values
                .iter()
                .map(|u| self.repository(u))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Some(urls.join(" ")));
        }
        if key == "gpgkey" {
            let urls = values
                .iter()
                .map(|u| {
                    let path = local(u)?;
                    self.copy(path, "key").map(|p| format!("file://{p}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Some(urls.join(" ")));
        }
        if FILE_OPTIONS.contains(&key.as_str()) {
            let [one] = values[..] else {
                return Err("names more than one file".into());
            };
            let path = one.strip_prefix("file://").unwrap_or(one);
            checked(path, one)?;
            return self.copy(path, "file").map(Some);
        }
        Ok(Some(o.values.join(" ")))
    }

    /// Notes where the repository of `section` keeps its packages: its
    /// first `baseurl` (checked by [`Relocator::option`]), by its id as
    /// written and with dnf's variables expanded.
    fn note_repo(&mut self, section: &Section<'_>, o: &Opt<'_>, file: &str) {
        let first = o
            .values
            .iter()
            .flat_map(|v| v.split(|c: char| c.is_whitespace() || c == ','))
            .find(|v| !v.is_empty());
        let Some(path) = first
            .and_then(|u| local(u).ok())
            .and_then(|p| self.expand(p).ok())
        else {
            return;
        };
        let name = section.name.clone().unwrap_or_default();
        let mut ids = vec![name.clone()];
        if let Ok(expanded) = self.expand(&name)
            && expanded != name
        {
            ids.push(expanded);
        }
        for id in ids {
            self.repos.entry(id).or_default().push(RepoDir {
                path: path.clone(),
                file: file.to_owned(),
            });
        }
    }

    /// A `baseurl` address made the root's, checked.
    fn repository(&self, url: &str) -> Result<String, String> {
        let path = self.expand(local(url)?)?;
        checked(&path, url)?;
        repository_dir(self.root, &path)?;
        let inside = self.root_dir.join(path.trim_start_matches('/'));
        let inside = inside.display().to_string();
        if inside.contains(['$', ' ', ',']) {
            return Err(format!(
                "the root's directory {inside} holds `$`, a space or a comma, which dnf would read as part of its syntax"
            ));
        }
        Ok(format!("file://{inside}"))
    }

    /// Copies the file `path` of the root (a regular file, never through
    /// a link at its name) into the scratch directory; its new path.
    fn copy(&mut self, path: &str, what: &str) -> Result<String, String> {
        let path = self.expand(path)?;
        checked(&path, &path)?;
        let bytes = self
            .root
            .read_small(&path, FILE_LIMIT)
            .map_err(|e| {
                format!(
                    "cannot read the {what} {}: {e}",
                    self.root.path(&path).display()
                )
            })?
            .ok_or_else(|| {
                format!(
                    "the {what} {} does not exist",
                    self.root.path(&path).display()
                )
            })?;
        self.copies += 1;
        let copy = self.scratch.join(format!("files/{}", self.copies));
        std::fs::write(&copy, bytes).map_err(|e| format!("cannot copy the {what}: {e}"))?;
        Ok(copy.display().to_string())
    }

    /// `text` with dnf's `$NAME` and `${NAME}` replaced by their values;
    /// an unknown one is refused (dnf would leave it as it is, and where
    /// it leads could not be checked).
    fn expand(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (name, tail) = match after.strip_prefix('{') {
                Some(inner) => match inner.split_once('}') {
                    Some((n, t)) => (n, t),
                    None => return Err(format!("`${{` without `}}` in `{text}`")),
                },
                None => {
                    let len = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    (&after[..len], &after[len..])
                }
            };
            let value = self
                .vars
                .get(name)
                .filter(|_| !name.is_empty())
                .ok_or_else(|| {
                    format!(
                        "`{text}` uses `${name}`, which is not one of dnf's variables here (releasever, arch, basearch, and the files of the root's {})",
                        VARS_DIRS.join(" and ")
                    )
                })?;
            if value.contains('$') {
                return Err(format!("the variable `{name}` holds `$`"));
            }
            out.push_str(value);
            rest = tail;
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The path of a local address: `file:///PATH` or `/PATH`; anything else
/// is on the network, refused.
fn local(url: &str) -> Result<&str, String> {
    if let Some(path) = url.strip_prefix("file://") {
        return Ok(path);
    }
    if url.starts_with('/') {
        return Ok(url);
    }
    Err(format!(
        "`{url}` is not a file:// address: under --root nothing is downloaded from outside the root; serve the repository from a directory in the root (`file:///srv/repo`) or disable it (`enabled=0`)"
    ))
}

/// dnf's `arch` and `basearch` on this machine.
fn arches() -> (&'static str, &'static str) {
    match std::env::consts::ARCH {
        "x86" => ("i686", "i386"),
        "arm" => ("armv7hl", "armhfp"),
        "powerpc64" if cfg!(target_endian = "little") => ("ppc64le", "ppc64le"),
        "powerpc64" => ("ppc64", "ppc64"),
        "loongarch64" => ("loongarch64", "loongarch64"),
        "riscv64" => ("riscv64", "riscv64"),
        other => (other, other),
    }
}

/// An option of an ini file: its key (trimmed), the line it starts on,
/// its value and continuation lines.
struct Opt<'t> {
    key: &'t str,
    line: usize,
    values: Vec<&'t str>,
}

enum Item<'t> {
    /// A comment or blank line, kept as it is.
    Raw(&'t str),
    Option(Opt<'t>),
}

/// The lines before the first header (no name), or a `[NAME]` section.
struct Section<'t> {
    header: Option<&'t str>,
    name: Option<String>,
    items: Vec<Item<'t>>,
}

impl Section<'_> {
    /// Whether `enabled` (dnf's default: yes) is not false.
    fn enabled(&self) -> bool {
        !self.items.iter().any(|i| match i {
            Item::Option(o) if o.key.eq_ignore_ascii_case("enabled") => matches!(
                o.values.join("").trim().to_ascii_lowercase().as_str(),
                "0" | "no" | "false" | "off"
            ),
            _ => false,
        })
    }
}

/// Splits an ini file as dnf reads it: `[NAME]` headers, `KEY=VALUE`
/// options continued by indented lines, `#` and `;` comments.
fn parse(text: &str) -> Vec<Section<'_>> {
    let mut sections = vec![Section {
        header: None,
        name: None,
        items: Vec::new(),
    }];
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        let section = sections.last_mut().expect("one section at least");
        let continuation = line.starts_with([' ', '\t']) && !trimmed.is_empty();
        if continuation && let Some(Item::Option(o)) = section.items.last_mut() {
            o.values.push(trimmed);
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            section.items.push(Item::Raw(line));
        } else if trimmed.starts_with('[') {
            let name = trimmed
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            sections.push(Section {
                header: Some(line),
                name: Some(name),
                items: Vec::new(),
            });
        } else {
            let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
            section.items.push(Item::Option(Opt {
                key: key.trim(),
                line: n + 1,
                values: vec![value.trim()],
            }));
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relocated(text: &str) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("srv/a/repodata")).unwrap();
        std::fs::create_dir_all(root.join("etc/dnf/vars")).unwrap();
        std::fs::write(root.join("etc/dnf/vars/stream"), "9-stream\nignored\n").unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(scratch.join("files")).unwrap();
        let r = Root::at(&root);
        let mut rel = Relocator::new(&r, &root, &scratch, Some("9.3")).unwrap();
        let shown = root.display().to_string();
        rel.rewrite(text, "/etc/yum.repos.d/a.repo")
            .map(|t| t.replace(&shown, "ROOT"))
            .map_err(|t| t.replace(&shown, "ROOT"))
    }

    #[test]
    fn addresses_are_the_roots_and_the_rest_is_kept() {
        let (_, basearch) = arches();
        let out = relocated(
            "# baseurl=https://x\n[a]\nname=A $releasever\nbaseurl=file:///srv/a\n  /srv/$stream/$basearch, file:///srv/${releasever}\nenabled=1\ncachedir=/x\nskip_if_unavailable=1\n[off]\nbaseurl=https://example.org\nenabled=0\n",
        )
        .unwrap();
        assert_eq!(
            out,
            format!(
                "# baseurl=https://x\n[a]\nname=A $releasever\nbaseurl=file://ROOT/srv/a file://ROOT/srv/9-stream/{basearch} file://ROOT/srv/9.3\nenabled=1\n# [off]: enabled=0, left out by Datum\n"
            )
        );
    }

    #[test]
    fn the_network_unknown_variables_and_url_syntax_are_refused() {
        for (text, want) in [
            (
                "[a]\nbaseurl=https://example.org/r\n",
                "line 2: `baseurl`: `https://example.org/r` is not a file:// address",
            ),
            (
                "[a]\nbaseurl=file:///srv/a\nmirrorlist=file:///srv/list\n",
                "line 3: `mirrorlist`: under --root nothing is downloaded",
            ),
            ("[a]\nmetalink=https://m\n", "line 2: `metalink`"),
            ("[a]\nbaseurl=file:///srv/$nope\n", "uses `$nope`"),
            ("[a]\nbaseurl=file:///srv/%2e%2e/x\n", "holds `%`"),
            (
                "[a]\nbaseurl=file://localhost/srv\n",
                "not an absolute path",
            ),
            ("[a]\nbaseurl=file:///srv/../x\n", "without `..`"),
            ("[a]\ngpgkey=https://example.org/k\n", "line 2: `gpgkey`"),
            (
                "[a]\nsslcacert=/etc/pki/ca.pem\n",
                "the file ROOT/etc/pki/ca.pem does not exist",
            ),
        ] {
            let err = relocated(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
