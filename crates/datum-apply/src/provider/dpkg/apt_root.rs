//! apt under `--root`, from the Repositories Datum manages in the root
//! (`/etc/apt/sources.list.d/datum-*.sources`).
//!
//! apt opens every path its sources name as a path of this machine, and
//! reads the machine's own configuration: so it is given none of either.
//! Its configuration is a file of its own (`APT_CONFIG`, read before any
//! other, which points apt's `/etc/apt` at a scratch directory holding
//! nothing but the rewritten sources); its state, cache and logs are the
//! root's (`/var/lib/apt`, `/var/cache/apt`, `/var/log/apt`), the dpkg
//! database the root's, and dpkg runs with `--root`; what they write there
//! is checked first ([`super::written`]). In the sources:
//!
//! - `URIs` must be `file:` addresses: each is made the root's own
//!   (`file:///srv/repo` is `ROOT/srv/repo`) and checked as a dnf
//!   repository is ([`crate::provider::local_repo`]); an address on the
//!   network is refused (nothing is downloaded from outside the root);
//! - a `Signed-By` key file (on the field's line or continued) is read
//!   inside the root as a regular file, never through a link at its name,
//!   and copied into the scratch directory (an armored key written inline
//!   is kept as it is, as is a fingerprint);
//! - a source with `Trusted` or `Allow-*` (apt would skip or weaken the
//!   signature check) or `InRelease-Path` is refused;
//! - a source with `Enabled: no` is left out.
//!
//! apt runs without network (`unshare --net`), its programs (methods,
//! gpgv) this machine's, never the root's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::provider::Failure;
use crate::provider::command::tool;
use crate::provider::local_repo::{checked, repository_dir, stays_inside};
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

/// The names of the root's `datum-*.sources` files, sorted.
pub fn datum_sources(root: &Root) -> Result<Vec<String>, Failure> {
    stays_inside(root, SOURCES_DIR).map_err(Failure::new)?;
    let names = root.list(SOURCES_DIR).map_err(|e| {
        Failure::new(format!(
            "cannot list {}: {e}",
            root.path(SOURCES_DIR).display()
        ))
    })?;
    Ok(names
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with("datum-") && n.ends_with(".sources"))
        .collect())
}

/// apt's scratch configuration for one run.
pub struct AptRoot {
    dir: tempfile::TempDir,
    root_dir: PathBuf,
}

impl AptRoot {
    /// The scratch directory for the root's `sources` (names in
    /// [`SOURCES_DIR`]), rewritten.
    pub fn new(root: &Root, root_dir: &Path, sources: &[String]) -> Result<AptRoot, Failure> {
        let io = |what: &str, e: &dyn std::fmt::Display| {
            Failure::new(format!("cannot prepare apt's {what}: {e}"))
        };
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
        let mut keys = 0;
        for name in sources {
            let abs = format!("{SOURCES_DIR}/{name}");
            let bytes = root
                .read_small(&abs, LIMIT)
                .map_err(|e| {
                    Failure::new(format!("cannot read {}: {e}", root.path(&abs).display()))
                })?
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            let out = rewrite(&text, |field, value| match field {
                Field::Uri => relocate_uri(root, root_dir, value),
                Field::Key => {
                    keys += 1;
                    copy_key(root, value, &etc.join(format!("keys/{keys}")))
                }
            })
            .map_err(|e| Failure::new(format!("{}: {e}", root.path(&abs).display())))?;
            std::fs::write(etc.join("sources.list.d").join(name), out)
                .map_err(|e| io("sources", &e))?;
        }
        let conf = apt_conf(root_dir, &etc);
        std::fs::write(dir.path().join("apt.conf"), conf).map_err(|e| io("apt.conf", &e))?;
        Ok(AptRoot {
            dir,
            root_dir: root_dir.to_owned(),
        })
    }

    /// apt-get with this configuration only, without network.
    pub fn apt_get(&self) -> Command {
        let mut cmd = tool("unshare");
        cmd.env("APT_CONFIG", self.dir.path().join("apt.conf"))
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["--net", "--", "apt-get"]);
        cmd
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

/// A value of a sources file that names something outside it.
enum Field {
    Uri,
    Key,
}

/// Fields that make apt accept a repository without checking its
/// signature (or with a weak one), or read its release file from another
/// path: refused under `--root`.
const REFUSED: [&str; 5] = [
    "trusted",
    "allow-insecure",
    "allow-weak",
    "allow-downgrade-to-insecure",
    "inrelease-path",
];

/// The first and last line of a key written inline (armored).
const KEY_BEGIN: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
const KEY_END: &str = "-----END PGP PUBLIC KEY BLOCK-----";

/// Whether a `Signed-By` value (its first line, then its continuation
/// lines) is one armored key written inline, which apt reads as a key and
/// never as a path.
fn inline_key(first: &str, continued: &[&str]) -> bool {
    first.trim().is_empty()
        && continued.first().map(|l| l.trim()) == Some(KEY_BEGIN)
        && continued.last().map(|l| l.trim()) == Some(KEY_END)
}

/// Whether `v` names a key by fingerprint (hexadecimal, `!` at the end to
/// mean that very key and no subkey), which apt looks up in its keyrings
/// (empty here) and never opens as a path.
fn fingerprint(v: &str) -> bool {
    let hex = v.strip_suffix('!').unwrap_or(v);
    hex.len() >= 8 && hex.chars().all(|c| c.is_ascii_hexdigit())
}

/// A deb822 sources file with every `URIs` address and `Signed-By` file
/// passed through `relocate`, sources with `Enabled: no` left out, comments
/// dropped, and everything else as it was; an error names its line. A
/// source carrying a field of [`REFUSED`] is refused.
fn rewrite(
    text: &str,
    mut relocate: impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    // apt drops comment lines wherever they are, even between a field and
    // its continuation lines: so are they here, before anything is read.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#'))
        .collect();
    let mut start = 0;
    while start < lines.len() {
        let end = (start..lines.len())
            .find(|&k| lines[k].1.trim().is_empty())
            .unwrap_or(lines.len());
        let stanza = &lines[start..end];
        let disabled = stanza.iter().any(|(_, l)| {
            l.split_once(':').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("Enabled") && v.trim().eq_ignore_ascii_case("no")
            })
        });
        if !disabled {
            let mut k = 0;
            while k < stanza.len() {
                let (number, line) = stanza[k];
                let at =
                    |key: &str, e: String| format!("line {}: `{}`: {e}", number + 1, key.trim());
                let continued: Vec<&str> = stanza[k + 1..]
                    .iter()
                    .map(|(_, l)| *l)
                    .take_while(|l| l.starts_with([' ', '\t']))
                    .collect();
                let Some((key, value)) = line
                    .split_once(':')
                    .filter(|_| !line.starts_with([' ', '\t']))
                else {
                    return Err(format!(
                        "line {}: `{}` is not a field (`Name: value`): apt would read it otherwise than Datum does; fix or remove it",
                        number + 1,
                        line.trim()
                    ));
                };
                let name = key.trim().to_ascii_lowercase();
                if REFUSED.contains(&name.as_str()) {
                    return Err(at(
                        key,
                        "under --root apt checks every repository's signature against its Signed-By key, the same for every source; remove this field (give the Repository the key its repository is signed with)".to_owned(),
                    ));
                }
                let field = match name.as_str() {
                    "uris" => Some(Field::Uri),
                    // An armored key written inline is kept; anything else
                    // continued names files or fingerprints, as one line does.
                    "signed-by" if !inline_key(value, &continued) => Some(Field::Key),
                    _ => None,
                };
                match field {
                    Some(field) => {
                        let values = relocated(field, value, &continued, &mut relocate)
                            .map_err(|e| at(key, e))?;
                        let _ = writeln!(out, "{}: {}", key.trim(), values.join(" "));
                    }
                    None => {
                        let _ = writeln!(out, "{line}");
                        for l in &continued {
                            let _ = writeln!(out, "{l}");
                        }
                    }
                }
                k += 1 + continued.len();
            }
        }
        out.push('\n');
        start = end + 1;
    }
    Ok(out)
}

/// The values of one `URIs` or `Signed-By` field (its first line's
/// `value`, then its `continued` lines), each passed through `relocate`;
/// a fingerprint in `Signed-By` is kept.
fn relocated(
    field: Field,
    value: &str,
    continued: &[&str],
    relocate: &mut impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<Vec<String>, String> {
    let is_uri = matches!(field, Field::Uri);
    let mut values = Vec::new();
    let all = std::iter::once(value).chain(continued.iter().copied());
    for v in all.flat_map(|v| v.split(|c: char| c.is_whitespace() || (!is_uri && c == ','))) {
        if v.is_empty() {
            continue;
        }
        if !is_uri && !v.starts_with('/') {
            // A key named by fingerprint stays: apt finds it in no keyring
            // here, and refuses the source.
            if fingerprint(v) {
                values.push(v.to_owned());
                continue;
            }
            return Err(format!(
                "`{v}` is neither an absolute key file path nor a key's fingerprint (a key written inline starts with `{KEY_BEGIN}` on the line after `Signed-By:`)"
            ));
        }
        let kind = if is_uri { Field::Uri } else { Field::Key };
        values.push(relocate(kind, v)?);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_key_files_are_relocated_and_the_rest_kept() {
        let text = "# x\nTypes: deb\nURIs: file:///srv/a\n file:/srv/b\nSuites: ./\nSigned-By: /etc/apt/keyrings/a.asc\n\nTypes: deb\nURIs: https://example.org\nEnabled: no\n\nTypes: deb\nURIs: file:///srv/c\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n";
        let out = rewrite(text, |f, v| {
            Ok(match f {
                Field::Uri => format!("<{v}>"),
                Field::Key => format!("[{v}]"),
            })
        })
        .unwrap();
        assert_eq!(
            out,
            "Types: deb\nURIs: <file:///srv/a> <file:/srv/b>\nSuites: ./\nSigned-By: [/etc/apt/keyrings/a.asc]\n\n\nTypes: deb\nURIs: <file:///srv/c>\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n\n"
        );
        let err = rewrite("Types: deb\nURIs: https://x\n", |_, v| {
            Err(format!("no {v}"))
        })
        .unwrap_err();
        assert_eq!(err, "line 2: `URIs`: no https://x");
    }

    fn marked(text: &str) -> Result<String, String> {
        rewrite(text, |f, v| {
            Ok(match f {
                Field::Uri => format!("<{v}>"),
                Field::Key => format!("[{v}]"),
            })
        })
    }

    #[test]
    fn a_continued_signed_by_naming_files_is_relocated_as_one_line_is() {
        let text = "Types: deb\nURIs: file:///srv/a\nSigned-By:\n /tmp/hostkey.gpg,\n# apt drops this\n /b.asc ABCDEF0123456789!\n";
        assert_eq!(
            marked(text).unwrap(),
            "Types: deb\nURIs: <file:///srv/a>\nSigned-By: [/tmp/hostkey.gpg] [/b.asc] ABCDEF0123456789!\n\n"
        );
        // A comment does not end the field for apt: nor for Datum.
        let text = "Types: deb\nSigned-By:\n# c\n /tmp/hostkey.gpg\n";
        assert_eq!(
            marked(text).unwrap(),
            "Types: deb\nSigned-By: [/tmp/hostkey.gpg]\n\n"
        );
        // Half a key block, or a relative path, is neither a key nor a file.
        for bad in [
            "Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n /tmp/k.gpg\n",
            "Signed-By: keys/k.gpg\n",
        ] {
            let err = marked(bad).unwrap_err();
            assert!(err.starts_with("line 1: `Signed-By`: "), "{err}");
        }
    }

    #[test]
    fn sources_that_skip_or_weaken_the_signature_check_are_refused() {
        for field in [
            "Trusted: yes",
            "Allow-Insecure: yes",
            "allow-weak: yes",
            "Allow-Downgrade-To-Insecure: yes",
            "InRelease-Path: ../../x",
        ] {
            let text = format!("Types: deb\nURIs: file:///srv/a\n{field}\n");
            let err = marked(&text).unwrap_err();
            let name = field.split_once(':').unwrap().0;
            assert!(
                err.starts_with(&format!("line 3: `{name}`: under --root")),
                "{err}"
            );
        }
        // Left out with its source when disabled.
        assert_eq!(
            marked("Types: deb\nTrusted: yes\nEnabled: no\n").unwrap(),
            "\n"
        );
        // A line that is no field is refused, not passed on.
        let err = marked("Types: deb\n\n Signed-By: /tmp/k.gpg\n").unwrap_err();
        assert!(err.starts_with("line 3: "), "{err}");
    }
}
