//! Which edition to ask zypper for. zypper's `NAME=EDITION` matches a
//! package's epoch only when the edition writes it (`hello=3.0-1` does
//! not select `2:3.0-1`), while Datum's `version` without an epoch
//! matches any (as for dnf). So, for such a version, the editions the
//! repositories offer are read (`zypper --xmlout search --details
//! --match-exact`) and the highest one the version matches is asked for,
//! epoch written.

use super::super::dnf::vercmp::Evr;

/// The `(name, edition)` of each package of `zypper --xmlout search
/// --details` output: its `<solvable ... name="N" edition="E" .../>`
/// elements.
pub fn offered(xml: &str) -> Vec<(String, String)> {
    xml.split("<solvable ")
        .skip(1)
        .filter_map(|element| {
            let element = element.split('>').next()?;
            let kind = attribute(element, "kind");
            if kind.is_some_and(|k| k != "package") {
                return None;
            }
            Some((attribute(element, "name")?, attribute(element, "edition")?))
        })
        .collect()
}

/// The value of `name="..."` in an element's attributes, its entities
/// decoded.
fn attribute(element: &str, name: &str) -> Option<String> {
    let start = element
        .match_indices(&format!("{name}=\""))
        .find(|(at, _)| *at == 0 || element[..*at].ends_with(char::is_whitespace))?
        .0
        + name.len()
        + 2;
    let value = &element[start..];
    let value = &value[..value.find('"')?];
    Some(
        value
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// What to hand `zypper install` for `name` at `version`: `NAME=VERSION`
/// when the version writes its epoch or no offered edition matches it
/// (zypper then says what it cannot find), else `NAME=EDITION` of the
/// highest offered edition the version matches.
pub fn wanted(name: &str, version: &str, offered: &[(String, String)]) -> String {
    if version.contains(':') {
        return format!("{name}={version}");
    }
    let want = Evr::parse(version);
    let best = offered
        .iter()
        .filter(|(n, e)| n == name && want.matches(&Evr::parse(e)))
        .map(|(_, e)| e)
        .max_by(|a, b| Evr::parse(a).compare(&Evr::parse(b)));
    format!("{name}={}", best.map_or(version, String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version='1.0'?>
<stream>
<search-result version="0.0">
<solvable-list>
<solvable status="not-installed" name="hello" kind="package" edition="2:3.0-1" arch="noarch" repository="local"/>
<solvable status="installed" name="hello" kind="package" edition="1.0-1" arch="noarch" repository="(System Packages)"/>
<solvable status="not-installed" name="hello" kind="srcpackage" edition="9.0-1" arch="noarch" repository="local"/>
<solvable status="not-installed" name="a&amp;b" kind="package" edition="1.0-2" arch="noarch" repository="local"/>
</solvable-list>
</search-result>
</stream>
"#;

    #[test]
    fn the_offered_editions_are_read_from_zyppers_xml() {
        assert_eq!(
            offered(XML),
            [
                ("hello".to_owned(), "2:3.0-1".to_owned()),
                ("hello".to_owned(), "1.0-1".to_owned()),
                ("a&b".to_owned(), "1.0-2".to_owned()),
            ]
        );
        assert!(offered("No matching items found.").is_empty());
    }

    #[test]
    fn a_version_without_epoch_asks_for_the_epoch_offered() {
        let offered = offered(XML);
        assert_eq!(wanted("hello", "3.0-1", &offered), "hello=2:3.0-1");
        assert_eq!(wanted("hello", "3.0", &offered), "hello=2:3.0-1");
        assert_eq!(wanted("hello", "1.0", &offered), "hello=1.0-1");
        assert_eq!(wanted("hello", "0:3.0-1", &offered), "hello=0:3.0-1");
        assert_eq!(wanted("hello", "4.0", &offered), "hello=4.0");
        assert_eq!(wanted("other", "3.0-1", &offered), "other=3.0-1");
    }
}
