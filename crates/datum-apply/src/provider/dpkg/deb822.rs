//! apt's deb822 sources files (`*.sources`) as Datum reads them under
//! `--root`: every `URIs` address and `Signed-By` file passed through the
//! caller (which makes them the root's), the fields that skip or weaken
//! apt's signature check refused, disabled sources left out.

use std::fmt::Write as _;

/// A value of a sources file that names something outside it.
pub enum Field {
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

/// What to do with a source's address that is not `file:` (apt could
/// only reach it on the network).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remote {
    /// An error (Datum's own Repositories: their address is Datum's to fix).
    Refuse,
    /// Left out, and said (the root's other sources files): the rest of the
    /// source is read when one of its addresses is `file:`, the source
    /// left out whole, unread, when none is.
    Skip,
}

/// A sources file as apt is given it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    pub text: String,
    /// How many sources it keeps (enabled, with a `file:` address).
    pub sources: usize,
    /// The addresses left out ([`Remote::Skip`]), each with its line
    /// (1-based).
    pub skipped: Vec<(usize, String)>,
}

/// Whether apt reads `uri` from this machine's files.
fn is_local(uri: &str) -> bool {
    uri.starts_with("file:")
}

/// A deb822 sources file with every `URIs` address and `Signed-By` file
/// passed through `relocate`, sources with `Enabled: no` left out (and,
/// with [`Remote::Skip`], addresses that are not `file:`), comments
/// dropped, and everything else as it was; an error names its line. A
/// source carrying a field of [`REFUSED`] is refused.
pub fn rewrite(
    text: &str,
    remote: Remote,
    mut relocate: impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<Rewritten, String> {
    let mut out = Rewritten {
        text: String::with_capacity(text.len()),
        ..Rewritten::default()
    };
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
        start = end + 1;
        let disabled = stanza.iter().any(|(_, l)| {
            l.split_once(':').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("Enabled") && v.trim().eq_ignore_ascii_case("no")
            })
        });
        let uris = uri_values(stanza);
        let local = uris.iter().filter(|(_, u)| is_local(u)).count();
        if remote == Remote::Skip && !disabled {
            let far = uris.iter().filter(|(_, u)| !is_local(u));
            out.skipped
                .extend(far.map(|(n, u)| (n + 1, (*u).to_owned())));
        }
        if !disabled && (local > 0 || remote == Remote::Refuse) {
            write_stanza(&mut out.text, stanza, remote, &mut relocate)?;
            out.sources += usize::from(local > 0);
        }
        out.text.push('\n');
    }
    Ok(out)
}

/// The addresses of a source's `URIs` field, with their line (0-based).
fn uri_values<'t>(stanza: &[(usize, &'t str)]) -> Vec<(usize, &'t str)> {
    let Some(at) = stanza.iter().position(|(_, l)| {
        !l.starts_with([' ', '\t'])
            && l.split_once(':')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("URIs"))
    }) else {
        return Vec::new();
    };
    let first = stanza[at].1.split_once(':').map_or("", |(_, v)| v);
    let continued = stanza[at + 1..]
        .iter()
        .take_while(|(_, l)| l.starts_with([' ', '\t']));
    std::iter::once((stanza[at].0, first))
        .chain(continued.copied())
        .flat_map(|(n, l)| l.split_whitespace().map(move |u| (n, u)))
        .collect()
}

/// One enabled source, its fields checked and relocated, onto `out`.
fn write_stanza(
    out: &mut String,
    stanza: &[(usize, &str)],
    remote: Remote,
    relocate: &mut impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<(), String> {
    let mut k = 0;
    while k < stanza.len() {
        let (number, line) = stanza[k];
        let at = |key: &str, e: String| format!("line {}: `{}`: {e}", number + 1, key.trim());
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
                let values = relocated(field, value, &continued, remote, relocate)
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
    Ok(())
}

/// The values of one `URIs` or `Signed-By` field (its first line's
/// `value`, then its `continued` lines), each passed through `relocate`;
/// a fingerprint in `Signed-By` is kept.
fn relocated(
    field: Field,
    value: &str,
    continued: &[&str],
    remote: Remote,
    relocate: &mut impl FnMut(Field, &str) -> Result<String, String>,
) -> Result<Vec<String>, String> {
    let is_uri = matches!(field, Field::Uri);
    let mut values = Vec::new();
    let all = std::iter::once(value).chain(continued.iter().copied());
    for v in all.flat_map(|v| v.split(|c: char| c.is_whitespace() || (!is_uri && c == ','))) {
        // Left out, and said by the caller.
        if v.is_empty() || (is_uri && remote == Remote::Skip && !is_local(v)) {
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
        let out = rewrite(text, Remote::Refuse, |f, v| {
            Ok(match f {
                Field::Uri => format!("<{v}>"),
                Field::Key => format!("[{v}]"),
            })
        })
        .unwrap()
        .text;
        assert_eq!(
            out,
            "Types: deb\nURIs: <file:///srv/a> <file:/srv/b>\nSuites: ./\nSigned-By: [/etc/apt/keyrings/a.asc]\n\n\nTypes: deb\nURIs: <file:///srv/c>\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n\n"
        );
        let err = rewrite("Types: deb\nURIs: https://x\n", Remote::Refuse, |_, v| {
            Err(format!("no {v}"))
        })
        .unwrap_err();
        assert_eq!(err, "line 2: `URIs`: no https://x");
    }

    fn marked_with(text: &str, remote: Remote) -> Result<Rewritten, String> {
        rewrite(text, remote, |f, v| {
            Ok(match f {
                Field::Uri => format!("<{v}>"),
                Field::Key => format!("[{v}]"),
            })
        })
    }

    fn marked(text: &str) -> Result<String, String> {
        marked_with(text, Remote::Refuse).map(|r| r.text)
    }

    #[test]
    fn addresses_on_the_network_are_left_out_and_said_when_skipping() {
        let text = "Types: deb\nURIs: https://deb.debian.org/debian\nSuites: bookworm\nTrusted: yes\n\nTypes: deb\nURIs: file:///srv/a\n http://x\nSuites: ./\n\nTypes: deb\nURIs: https://y\nEnabled: no\n";
        let out = marked_with(text, Remote::Skip).unwrap();
        assert_eq!(
            out,
            Rewritten {
                text: "\nTypes: deb\nURIs: <file:///srv/a>\nSuites: ./\n\n\n".to_owned(),
                sources: 1,
                skipped: vec![
                    (2, "https://deb.debian.org/debian".to_owned()),
                    (8, "http://x".to_owned())
                ],
            }
        );
        // Nothing but the network: nothing to read.
        let out = marked_with("Types: deb\nURIs: https://x\n", Remote::Skip).unwrap();
        assert_eq!((out.sources, out.skipped.len()), (0, 1));
        // A source that is read is checked as Datum's own are.
        let err = marked_with(
            "Types: deb\nURIs: file:///srv/a https://x\nTrusted: yes\n",
            Remote::Skip,
        )
        .unwrap_err();
        assert!(err.starts_with("line 3: `Trusted`: under --root"), "{err}");
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
