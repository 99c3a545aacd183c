//! Where zypper will open each package of the root's repositories, checked
//! to stay inside the root before an install under `--root`.
//!
//! zypper opens a package of a `file://` repository at the repository's
//! `baseurl` joined with the package's location in the metadata
//! (primary.xml's `location href`, and `xml:base`), as a path of this
//! machine: a location climbing with `..`, an absolute one, or an
//! `xml:base` naming another directory would have it read (and install
//! into the root) a file of the host. The zypper tested (1.14) reads a
//! `..` location from within the repository's directory, but copies the
//! package into its cache at the location joined to
//! `/var/cache/zypp/packages/ALIAS`, `..` followed: out of the root, over
//! a file of this machine, deleted afterwards.
//!
//! What is checked is the metadata zypper itself will use: the solv file
//! of its cache in the root (`/var/cache/zypp/solv/ALIAS/solv`), which
//! libzypp loads and takes each location from. Reading the repository
//! directory instead (`repo2solv` on it) would check what zypper last
//! downloaded only if nothing changed since; the cache is what the
//! transaction reads. So, just before the install, zypper is asked to
//! bring that cache up to date with what it downloaded (a refresh does;
//! without one, `zypper refresh --build-only`, which rebuilds it only
//! when it is stale: the install then finds it current and rebuilds
//! nothing), and libsolv's `dumpsolv
//! -j` prints it, as JSON (every string escaped), which is read as a
//! stream: a repository of any size is checked in bounded memory.
//!
//! For each package the location is `mediadir/mediafile` (`mediafile`
//! left out, libsolv's `NAME-VERSION-RELEASE.ARCH.rpm`; `mediadir` void,
//! the architecture), walked component by component from each `baseurl`
//! directory and from zypper's package cache
//! (`/var/cache/zypp/packages/ALIAS`): `..` may not climb above the root, nor back out of a
//! symbolic link, and a link on the way may not lead out of the root. An
//! absolute location, an `xml:base` (`mediabase`), or anything that does
//! not parse is refused: it is not guessed where zypper would go.

use std::io::BufReader;
use std::path::Path;
use std::process::Stdio;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::super::Failure;
use super::super::command::{shown, tool};
use super::super::local_repo::stays_inside;
use crate::root::Root;

/// Where zypper keeps the solv file of each repository, by alias.
const SOLV_CACHE: &str = "/var/cache/zypp/solv";
/// Where zypper copies each package before installing it, by alias.
const PACKAGE_CACHE: &str = "/var/cache/zypp/packages";
/// The largest number of components a location may have.
const DEPTH_LIMIT: usize = 256;
/// The most paths remembered while walking a repository's locations.
const SEEN_LIMIT: usize = 1 << 14;

/// One repository as zypper is given it: its alias, the root's file that
/// configures it (for messages) and its `baseurl` directories, as paths
/// of the root.
#[derive(Debug)]
pub struct Repo {
    pub alias: String,
    pub file: String,
    pub dirs: Vec<String>,
}

/// The repositories of a relocated `.repo` file (`text`, as the scratch
/// directory holds it, every `baseurl` a `file://` directory under
/// `root_dir`), `file` naming the root's file in messages.
pub fn repos(text: &str, file: &str, root_dir: &Path) -> Result<Vec<Repo>, Failure> {
    let prefix = format!("file://{}", root_dir.display());
    let mut out: Vec<Repo> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(alias) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push(Repo {
                alias: alias.trim().to_owned(),
                file: file.to_owned(),
                dirs: Vec::new(),
            });
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("baseurl") {
            continue;
        }
        let Some(repo) = out.last_mut() else {
            return Err(Failure::new(format!("{file}: `baseurl` outside a section")));
        };
        for url in value.split_whitespace() {
            let inside = url
                .strip_prefix(&prefix)
                .filter(|p| p.is_empty() || p.starts_with('/'))
                .ok_or_else(|| {
                    Failure::new(format!("{file}: `{url}` is not a directory of the root"))
                })?;
            repo.dirs
                .push(format!("/{}", inside.trim_start_matches('/')));
        }
    }
    out.retain(|r| !r.alias.eq_ignore_ascii_case("main"));
    Ok(out)
}

/// Refuses the run when a package of `repo` (its solv file in the root's
/// zypper cache) would be opened outside the root.
pub fn check(root: &Root, repo: &Repo) -> Result<(), Failure> {
    // libzypp names the cache by the alias, a `/` made `_`.
    let solv = format!("{SOLV_CACHE}/{}/solv", repo.alias.replace('/', "_"));
    let shown_solv = root.path(&solv).display().to_string();
    stays_inside(root, &solv).map_err(Failure::new)?;
    let Some(file) = root
        .open_regular(&solv)
        .map_err(|e| Failure::new(format!("cannot read zypper's cache {shown_solv}: {e}")))?
    else {
        // zypper, which has just built what it could, has nothing of this
        // repository to install from.
        return Ok(());
    };
    let mut cmd = tool("dumpsolv");
    cmd.arg("-j")
        .stdin(Stdio::from(file))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| Failure::new(format!("cannot run `{}`: {e}", shown(&cmd))))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(Failure::new("`dumpsolv`: no output to read"));
    };
    let mut de = serde_json::Deserializer::from_reader(BufReader::new(stdout));
    let mut refused = None;
    let mut seen = Seen::default();
    let mut each = |p: Package| {
        if refused.is_none() {
            refused = where_(root, &mut seen, repo, &p).err();
        }
    };
    let parsed = Top(&mut each).deserialize(&mut de).and_then(|()| de.end());
    // Whatever happened, dumpsolv is waited for: the pipe closed with the
    // reader, it cannot block writing.
    drop(de);
    let status = child
        .wait()
        .map_err(|e| Failure::new(format!("`dumpsolv`: {e}")))?;
    if let Some(f) = refused {
        return Err(f);
    }
    if !status.success() {
        return Err(Failure::new(format!(
            "`dumpsolv -j` could not read zypper's cache {shown_solv} ({status}): the locations of the repository `{}`'s packages cannot be checked; run `zypper --root DIR refresh --force` on it",
            repo.alias
        )));
    }
    parsed.map_err(|e| {
        Failure::new(format!(
            "cannot read what `dumpsolv -j` printed of {shown_solv}: {e}: the locations of the repository `{}`'s packages cannot be checked",
            repo.alias
        ))
    })
}

/// What a package's location is made of, as libsolv keeps it.
#[derive(Default)]
struct Package {
    name: Option<String>,
    arch: Option<String>,
    evr: Option<String>,
    /// `Some(None)`: present but void.
    mediadir: Option<Option<String>>,
    mediafile: Option<Option<String>>,
    mediabase: Option<Option<String>>,
}

impl Package {
    fn shown(&self) -> String {
        format!(
            "{}-{}.{}",
            self.name.as_deref().unwrap_or("?"),
            self.evr.as_deref().unwrap_or("?"),
            self.arch.as_deref().unwrap_or("?")
        )
    }

    /// The location relative to the repository's directory; `None` for
    /// a solvable without one (libsolv gives none without `mediafile`).
    fn location(&self) -> Result<Option<String>, String> {
        let dir = match &self.mediadir {
            None => None,
            Some(Some(d)) => Some(d.clone()),
            Some(None) => Some(self.arch.clone().ok_or("no architecture")?),
        };
        let file = match &self.mediafile {
            Some(Some(f)) => f.clone(),
            Some(None) => {
                let (Some(n), Some(evr), Some(a)) = (&self.name, &self.evr, &self.arch) else {
                    return Err("no name, version or architecture to name its file".into());
                };
                // libsolv leaves the epoch out of the file's name.
                let evr = match evr.split_once(':') {
                    Some((e, rest)) if e.bytes().all(|b| b.is_ascii_digit()) => rest,
                    _ => evr.as_str(),
                };
                format!("{n}-{evr}.{a}.rpm")
            }
            None => return Ok(None),
        };
        Ok(Some(match dir {
            Some(d) => format!("{d}/{file}"),
            None => file,
        }))
    }
}

/// Refuses a package whose location, from any of the repository's
/// directories, would lead out of the root.
fn where_(root: &Root, seen: &mut Seen, repo: &Repo, p: &Package) -> Result<(), Failure> {
    let refuse = |why: String| {
        Failure::new(format!(
            "{}: repository `{}`: package {}: {why}; under --root zypper opens a package at its location as a path of this machine, so every location must stay inside the root: fix the repository's metadata (createrepo_c writes locations below the repository)",
            repo.file,
            repo.alias,
            p.shown()
        ))
    };
    if let Some(Some(base)) = &p.mediabase {
        return Err(refuse(format!(
            "its location has an xml:base (`{base}`), which names another place to read it from"
        )));
    }
    let Some(location) = p
        .location()
        .map_err(|e| refuse(format!("{e} (not parsed)")))?
    else {
        return Ok(());
    };
    if location.starts_with('/') {
        return Err(refuse(format!("its location `{location}` is absolute")));
    }
    for dir in &repo.dirs {
        walk(root, seen, dir, &location)
            .map_err(|e| refuse(format!("its location `{location}` {e}")))?;
    }
    // zypper copies the package into its cache at the location, too.
    let cache = format!("{PACKAGE_CACHE}/{}", repo.alias.replace('/', "_"));
    walk(root, seen, &cache, &location).map_err(|e| {
        refuse(format!(
            "its location `{location}`, from {cache} where zypper copies the package, {e}"
        ))
    })
}

/// Walks `location` from the root's directory `dir` as the kernel and a
/// lexical normalisation both would: `..` may neither climb above the
/// root nor step back out of a link; each component reached may not be a
/// link leading out of the root. `seen` remembers what was found of the
/// directories already walked (most packages share a few).
fn walk(root: &Root, seen: &mut Seen, dir: &str, location: &str) -> Result<(), String> {
    let mut at: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    let parts: Vec<&str> = location.split('/').collect();
    if parts.len() > DEPTH_LIMIT {
        return Err("has too many components".into());
    }
    for c in parts {
        match c {
            "" | "." => {}
            ".." => {
                let abs = format!("/{}", at.join("/"));
                if at.pop().is_none() {
                    return Err("climbs above the root".into());
                }
                if seen.is_link(root, &abs)? {
                    return Err(format!(
                        "climbs back out of the symbolic link {}",
                        root.path(&abs).display()
                    ));
                }
            }
            c => {
                at.push(c);
                seen.is_link(root, &format!("/{}", at.join("/")))?;
            }
        }
    }
    Ok(())
}

/// Paths of the root already looked at: whether each is a link (one
/// leading inside the root; one leading out is refused at once). Never
/// more than [`SEEN_LIMIT`] of them.
#[derive(Default)]
struct Seen(std::collections::HashMap<String, bool>);

impl Seen {
    /// Whether `abs` is a link (leading inside the root); a link leading
    /// out of it, or nowhere, is refused. A missing path is no link.
    fn is_link(&mut self, root: &Root, abs: &str) -> Result<bool, String> {
        if let Some(link) = self.0.get(abs) {
            return Ok(*link);
        }
        let link = root
            .lstat(abs)
            .map_err(|e| format!("cannot be followed: {}: {e}", root.path(abs).display()))?
            .is_some_and(|m| m.file_type().is_symlink());
        if link {
            stays_inside(root, abs)?;
        }
        if self.0.len() >= SEEN_LIMIT {
            self.0.clear();
        }
        self.0.insert(abs.to_owned(), link);
        Ok(link)
    }
}

/// The top of dumpsolv's JSON: `{"repositories": [{..., "solvables":
/// [...]}]}`; each solvable handed to the callback, nothing kept.
struct Top<'f>(&'f mut dyn FnMut(Package));
/// A list of repositories, or of solvables.
struct List<'f>(&'f mut dyn FnMut(Package), bool);
/// One repository, or one solvable.
struct Object<'f>(&'f mut dyn FnMut(Package), bool);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("dumpsolv's JSON")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "repositories" {
                map.next_value_seed(List(&mut *self.0, false))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for List<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for List<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Object(&mut *self.0, self.1))?
            .is_some()
        {}
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Object<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Object<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a repository or a solvable")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let solvable = self.1;
        let mut p = Package::default();
        while let Some(key) = map.next_key::<String>()? {
            match (solvable, key.as_str()) {
                (false, "solvables") => map.next_value_seed(List(&mut *self.0, true))?,
                (true, "solvable:name") => p.name = map.next_value()?,
                (true, "solvable:arch") => p.arch = map.next_value()?,
                (true, "solvable:evr") => p.evr = map.next_value()?,
                (true, "solvable:mediadir") => p.mediadir = Some(map.next_value()?),
                (true, "solvable:mediafile") => p.mediafile = Some(map.next_value()?),
                (true, "solvable:mediabase") => p.mediabase = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if solvable {
            (self.0)(p);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packages dumpsolv's JSON `text` holds, by name and location.
    fn parsed(text: &str) -> Result<Vec<(String, Option<String>, bool)>, serde_json::Error> {
        let mut out = Vec::new();
        let mut each = |p: Package| {
            let base = matches!(p.mediabase, Some(Some(_)));
            out.push((p.shown(), p.location().ok().flatten(), base));
        };
        let mut de = serde_json::Deserializer::from_reader(text.as_bytes());
        Top(&mut each).deserialize(&mut de)?;
        de.end()?;
        Ok(out)
    }

    #[test]
    fn locations_are_read_from_dumpsolvs_json_whatever_their_characters() {
        let text = r#"{"repositories": [{"repository:repomd": [{"x": {"y": [1, null]}}],
            "solvables": [
              {"solvable:name": "a", "solvable:arch": "noarch", "solvable:evr": "1:2.0-1",
               "solvable:mediafile": null, "solvable:summary": "}{"},
              {"solvable:name": "b", "solvable:arch": "x86_64", "solvable:evr": "1-1",
               "solvable:mediadir": "../\n..", "solvable:mediafile": "b\"c.rpm"},
              {"solvable:name": "c", "solvable:mediafile": "c.rpm",
               "solvable:mediabase": "file:///opt"},
              {"solvable:name": "pattern"}
            ]}]}"#;
        assert_eq!(
            parsed(text).unwrap(),
            [
                (
                    "a-1:2.0-1.noarch".into(),
                    Some("a-2.0-1.noarch.rpm".into()),
                    false
                ),
                (
                    "b-1-1.x86_64".into(),
                    Some("../\n../b\"c.rpm".into()),
                    false
                ),
                ("c-?.?".into(), Some("c.rpm".into()), true),
                ("pattern-?.?".into(), None, false),
            ]
        );
        // What is not dumpsolv's JSON is an error, never a pass.
        assert!(parsed(r#"{"repositories": [{"solvables": [{"solvable:name": 1}]}]}"#).is_err());
        assert!(
            parsed("{\"repositories\": [{\"solvables\": [{\"solvable:mediadir\": \"a\nb\"}]}]}")
                .is_err()
        );
        assert!(parsed(r#"{"repositories": []} trailing"#).is_err());
    }

    #[test]
    fn a_location_may_not_climb_above_the_root_nor_leave_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("root");
        std::fs::create_dir_all(dir.join("srv/repo/sub")).unwrap();
        std::fs::create_dir_all(dir.join("srv/other")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), dir.join("srv/out")).unwrap();
        std::os::unix::fs::symlink("repo", dir.join("srv/in")).unwrap();
        let root = Root::at(&dir);
        let walk = |l: &str| walk(&root, &mut Seen::default(), "/srv/repo", l);
        assert_eq!(walk("sub/./a.rpm"), Ok(()));
        assert_eq!(walk("../other/a.rpm"), Ok(()));
        assert_eq!(walk("../in/a.rpm"), Ok(()));
        assert_eq!(
            walk("../../../../a.rpm").unwrap_err(),
            "climbs above the root"
        );
        let out = walk("../out/a.rpm").unwrap_err();
        assert!(
            out.contains("srv/out is a symbolic link that leads out"),
            "{out}"
        );
        let back = walk("../in/../../a.rpm").unwrap_err();
        assert!(
            back.contains("climbs back out of the symbolic link"),
            "{back}"
        );
        let deep = "a/".repeat(DEPTH_LIMIT + 1);
        assert_eq!(walk(&deep).unwrap_err(), "has too many components");
    }

    #[test]
    fn an_absolute_location_or_an_xml_base_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::at(tmp.path());
        let repo = Repo {
            alias: "r".into(),
            file: "/etc/zypp/repos.d/r.repo".into(),
            dirs: vec!["/srv/repo".into()],
        };
        let package = |dir: Option<&str>, base: Option<&str>| Package {
            name: Some("p".into()),
            arch: Some("noarch".into()),
            evr: Some("1-1".into()),
            mediadir: dir.map(|d| Some(d.to_owned())),
            mediafile: Some(None),
            mediabase: base.map(|b| Some(b.to_owned())),
        };
        assert!(
            where_(
                &root,
                &mut Seen::default(),
                &repo,
                &package(Some("sub"), None)
            )
            .is_ok()
        );
        let abs = where_(
            &root,
            &mut Seen::default(),
            &repo,
            &package(Some("/etc"), None),
        )
        .unwrap_err()
        .0;
        assert!(
            abs.starts_with("/etc/zypp/repos.d/r.repo: repository `r`: package p-1-1.noarch: its location `/etc/p-1-1.noarch.rpm` is absolute"),
            "{abs}"
        );
        let base = where_(
            &root,
            &mut Seen::default(),
            &repo,
            &package(None, Some("file:///opt")),
        )
        .unwrap_err()
        .0;
        assert!(base.contains("an xml:base (`file:///opt`)"), "{base}");
        // Inside the root from a deep repository, but not from zypper's
        // package cache, five levels down.
        let deep = Repo {
            dirs: vec!["/a/b/c/d/e/f".into()],
            ..repo
        };
        let five = package(Some("../../../../.."), None);
        assert!(where_(&root, &mut Seen::default(), &deep, &five).is_ok());
        let six = package(Some("../../../../../.."), None);
        let cache = where_(&root, &mut Seen::default(), &deep, &six)
            .unwrap_err()
            .0;
        assert!(
            cache.contains("from /var/cache/zypp/packages/r where zypper copies the package, climbs above the root"),
            "{cache}"
        );
    }

    #[test]
    fn the_repositories_are_read_from_the_relocated_files() {
        let text = "[main]\nx=1\n[a]\nname=a\nbaseurl=file:///r/srv/a file:///r/srv/b\n# [b]: enabled=0, left out by Datum\n[c]\nbaseurl = file:///r\n";
        let got = repos(text, "F", Path::new("/r")).unwrap();
        let got: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|r| {
                (
                    r.alias.as_str(),
                    r.dirs.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(got, [("a", vec!["/srv/a", "/srv/b"]), ("c", vec!["/"])]);
        let err = repos("[a]\nbaseurl=file:///rx/srv\n", "F", Path::new("/r"))
            .unwrap_err()
            .0;
        assert!(err.contains("is not a directory of the root"), "{err}");
    }
}
