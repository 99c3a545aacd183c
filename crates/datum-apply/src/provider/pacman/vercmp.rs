//! pacman's version comparison (libalpm's `alpm_pkg_vercmp`, what the
//! `vercmp` tool prints): `[epoch:]pkgver[-pkgrel]`, epoch first, then
//! the version, then the release when both have one.
//!
//! Versions are split into runs of digits and runs of letters, as rpm
//! does, with two differences: the number of separator characters before
//! a run counts (`1.0` < `1..0`, and `1_0` = `1.0`), and a trailing run
//! of letters is older than nothing at all (`1.0a` < `1.0`, a pre-release),
//! while a trailing number is newer (`1.0.1` > `1.0`). `~` and `^` are
//! separators like any other.

use std::cmp::Ordering;

/// Compares two version strings (no epoch or release) as libalpm does.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut one, mut two) = (0, 0);
    while one < a.len() && two < b.len() {
        let (start1, start2) = (one, two);
        while one < a.len() && !a[one].is_ascii_alphanumeric() {
            one += 1;
        }
        while two < b.len() && !b[two].is_ascii_alphanumeric() {
            two += 1;
        }
        if one == a.len() || two == b.len() {
            break;
        }
        // More separators before a run is newer.
        if one - start1 != two - start2 {
            return (one - start1).cmp(&(two - start2));
        }
        let numeric = a[one].is_ascii_digit();
        let class = |c: u8| {
            if numeric {
                c.is_ascii_digit()
            } else {
                c.is_ascii_alphabetic()
            }
        };
        let end1 = one + a[one..].iter().take_while(|&&c| class(c)).count();
        let end2 = two + b[two..].iter().take_while(|&&c| class(c)).count();
        if end2 == two {
            return if numeric {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        let (mut s1, mut s2) = (&a[one..end1], &b[two..end2]);
        if numeric {
            while s1.first() == Some(&b'0') {
                s1 = &s1[1..];
            }
            while s2.first() == Some(&b'0') {
                s2 = &s2[1..];
            }
            match s1.len().cmp(&s2.len()) {
                Ordering::Equal => {}
                other => return other,
            }
        }
        match s1.cmp(s2) {
            Ordering::Equal => {}
            other => return other,
        }
        one = end1;
        two = end2;
    }
    let (rest1, rest2) = (&a[one..], &b[two..]);
    if rest1.is_empty() && rest2.is_empty() {
        return Ordering::Equal;
    }
    // A remaining run of letters never beats an empty string.
    let alpha = |s: &[u8]| s.first().is_some_and(u8::is_ascii_alphabetic);
    if (rest1.is_empty() && !alpha(rest2)) || alpha(rest1) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// Splits `[epoch:]pkgver[-pkgrel]` as libalpm does: the epoch is the
/// digits before a `:` (0 without), the release what follows the last
/// `-` after it.
fn parse(evr: &str) -> (&str, &str, Option<&str>) {
    let digits = evr.bytes().take_while(u8::is_ascii_digit).count();
    let (epoch, rest) = if evr.as_bytes().get(digits) == Some(&b':') {
        let e = &evr[..digits];
        (if e.is_empty() { "0" } else { e }, &evr[digits + 1..])
    } else {
        ("0", evr)
    };
    match rest.rsplit_once('-') {
        Some((v, r)) => (epoch, v, Some(r)),
        None => (epoch, rest, None),
    }
}

/// Compares two full versions as `vercmp` does.
pub fn vercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (e1, v1, r1) = parse(a);
    let (e2, v2, r2) = parse(b);
    compare_versions(e1, e2)
        .then_with(|| compare_versions(v1, v2))
        .then_with(|| match (r1, r2) {
            (Some(r1), Some(r2)) => compare_versions(r1, r2),
            _ => Ordering::Equal,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn pacmans_own_examples() {
        // From pacman's test suite (test/util/vercmptest.sh).
        for (a, b, want) in [
            ("1.5.0", "1.5.0", Equal),
            ("1.5.1", "1.5.0", Greater),
            ("1.5.1", "1.5", Greater),
            ("1.5.0", "1.5", Greater),
            ("1.0", "1.0a", Greater),
            ("1.0a", "1.0b", Less),
            ("1.0a", "1.0alpha", Less),
            ("1.0alpha", "1.0", Less),
            ("1.0", "1.0.a", Less),
            ("1.0.1", "1.0a", Greater),
            ("1.5_1", "1.5.1", Equal),
            ("1.5.b", "1.5.a", Greater),
            ("1.5-1", "1.5-2", Less),
            ("1.5-1", "1.5", Equal),
            ("1:1.0-1", "2.0-1", Greater),
            ("1:1.0", "0:1.0", Greater),
            ("1:1.0", "1.0", Greater),
            ("1.1", "1.1.1", Less),
            ("1.0..1", "1.0.1", Greater),
            ("1.0", "1..0", Less),
        ] {
            assert_eq!(vercmp(a, b), want, "{a} vs {b}");
            assert_eq!(vercmp(b, a), want.reverse(), "{b} vs {a}");
        }
    }
}
