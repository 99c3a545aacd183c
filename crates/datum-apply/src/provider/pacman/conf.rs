//! Where a root's pacman keeps its keyring: the `GPGDir` of its
//! pacman.conf's `[options]`, read as pacman reads it, `Include`d files
//! too, all inside the root.
//!
//! pacman takes the first `GPGDir` it meets, following each `Include`
//! where it stands (a file's section carries on into what it includes,
//! and back). Datum does the same inside the root: each file read as a
//! regular file (never through a link at its name), at most 1 MiB, at
//! most [`DEPTH`] includes deep and [`FILES`] files in all; a pattern's
//! wildcards (`*`, `?`) only in its last component, matched against that
//! directory's names inside the root, in order. A pacman.conf, or a file
//! it includes, that Datum cannot read fails the Repository: guessing the
//! default keyring would put the key where pacman does not look.

use super::super::Failure;
use crate::root::Root;

/// The keyring when pacman.conf names none.
pub const DEFAULT: &str = "/etc/pacman.d/gnupg";
/// The largest pacman.conf, or included file, read.
const LIMIT: u64 = 1 << 20;
/// How deep includes are followed.
const DEPTH: usize = 10;
/// How many files are read in all.
const FILES: usize = 256;

/// The root's keyring directory, as a path inside it.
pub fn gpgdir_of(root: &Root) -> Result<String, Failure> {
    let mut walk = Walk {
        root,
        read: 0,
        options: false,
    };
    Ok(walk
        .file("/etc/pacman.conf", 0)?
        .unwrap_or_else(|| DEFAULT.to_owned()))
}

/// Reading a pacman.conf and what it includes.
struct Walk<'a> {
    root: &'a Root,
    /// Files read so far.
    read: usize,
    /// Whether the line being read is in `[options]`.
    options: bool,
}

impl Walk<'_> {
    /// The first `GPGDir` in the file `path` (inside the root) and what
    /// it includes; `None` when it names none, or is missing.
    fn file(&mut self, path: &str, depth: usize) -> Result<Option<String>, Failure> {
        let shown = self.root.path(path).display().to_string();
        self.read += 1;
        if self.read > FILES || depth > DEPTH {
            return Err(Failure::new(format!(
                "{shown}: pacman.conf includes more than {FILES} files, or more than {DEPTH} deep: Datum cannot tell which keyring (GPGDir) pacman uses"
            )));
        }
        let text = self.root.read_small(path, LIMIT).map_err(|e| {
            Failure::new(format!(
                "cannot read {shown}, where Datum looks for pacman's keyring (GPGDir): {e}"
            ))
        })?;
        let Some(text) = text else { return Ok(None) };
        let text = String::from_utf8_lossy(&text).into_owned();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or_default().trim();
            if line.starts_with('[') && line.ends_with(']') {
                self.options = line == "[options]";
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "GPGDir" if self.options && value.starts_with('/') => {
                    return Ok(Some(value.to_owned()));
                }
                "Include" if self.options => {
                    let at = || format!("{shown}:{}:1: {raw}", n + 1);
                    for inner in expand(self.root, value)
                        .map_err(|why| Failure::new(format!("{}\n  {why}", at())))?
                    {
                        if let Some(dir) = self.file(&inner, depth + 1)? {
                            return Ok(Some(dir));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

/// The files an `Include` pattern names inside the root, in order.
fn expand(root: &Root, pattern: &str) -> Result<Vec<String>, String> {
    let Some((dir, last)) = pattern
        .rsplit_once('/')
        .filter(|_| pattern.starts_with('/'))
    else {
        return Err(format!(
            "`{pattern}` is not an absolute path: Datum cannot tell which keyring (GPGDir) pacman uses; hint: name the included file by its absolute path"
        ));
    };
    let wild = |s: &str| s.contains(['*', '?', '[']);
    if wild(dir) || last.contains('[') {
        return Err(
            "Datum follows an Include's wildcards `*` and `?` in its last component only, to tell which keyring (GPGDir) pacman uses; hint: name the directory without wildcards"
                .to_owned(),
        );
    }
    if !wild(last) {
        return Ok(vec![pattern.to_owned()]);
    }
    let names = root
        .list(if dir.is_empty() { "/" } else { dir })
        .map_err(|e| format!("cannot list {}: {e}", root.path(dir).display()))?;
    Ok(names
        .iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| matches(last.as_bytes(), n.as_bytes()) && !n.starts_with('.'))
        .map(|n| format!("{dir}/{n}"))
        .collect())
}

/// Whether `name` matches the pattern of `*` and `?`.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        Some((b'?', rest)) => !name.is_empty() && matches(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && matches(rest, &name[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = tmp.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = Root::at(tmp.path());
        (tmp, root)
    }

    #[test]
    fn gpgdir_is_the_first_in_options_includes_followed() {
        let (_t, root) = root_with(&[
            (
                "/etc/pacman.conf",
                "[core]\nGPGDir = /no\n[options]\nInclude = /etc/p/o-*.conf # x\nGPGDir = /later\n",
            ),
            ("/etc/p/o-2.conf", "GPGDir = /second\n"),
            ("/etc/p/o-1.conf", "# none\n"),
        ]);
        assert_eq!(gpgdir_of(&root).unwrap(), "/second");
        let (_t, root) = root_with(&[("/etc/pacman.conf", "[options]\nGPGDir = relative\n")]);
        assert_eq!(gpgdir_of(&root).unwrap(), DEFAULT);
        let (_t, root) = root_with(&[]);
        assert_eq!(gpgdir_of(&root).unwrap(), DEFAULT);
    }

    #[test]
    fn an_include_datum_cannot_follow_is_refused_with_its_line() {
        let (_t, root) = root_with(&[("/etc/pacman.conf", "[options]\nInclude = /etc/*/x.conf\n")]);
        let err = gpgdir_of(&root).unwrap_err().0;
        assert!(
            err.contains("pacman.conf:2:1: Include = /etc/*/x.conf") && err.contains("hint"),
            "{err}"
        );
        let (_t, root) = root_with(&[(
            "/etc/pacman.conf",
            "[options]\nInclude = /etc/pacman.conf\n",
        )]);
        let err = gpgdir_of(&root).unwrap_err().0;
        assert!(err.contains("more than"), "{err}");
    }

    #[test]
    fn wildcards_match_as_glob_does() {
        assert!(matches(b"datum-*.conf", b"datum-x.conf"));
        assert!(matches(b"o-?.conf", b"o-1.conf"));
        assert!(!matches(b"o-?.conf", b"o-12.conf"));
        assert!(!matches(b"*.conf", b"x.confs"));
    }
}
