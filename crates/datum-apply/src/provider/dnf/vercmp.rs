//! rpm's version comparison (`rpmvercmp`), and the `[epoch:]version[-release]`
//! it is applied to part by part.
//!
//! A version is split into runs of digits and runs of letters; anything
//! else only separates them. Runs are compared pairwise: numbers as
//! numbers (leading zeros dropped), letters byte by byte, and a number is
//! newer than letters. `~` sorts before everything, even the end of the
//! string (`1.0~rc1` < `1.0`); `^` sorts after the end of the string but
//! before anything else (`1.0` < `1.0^git1` < `1.0.1`).

use std::cmp::Ordering;

/// Compares two version (or release) strings as `rpmvercmp` does.
pub fn rpmvercmp(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (mut one, mut two) = (a.as_bytes(), b.as_bytes());
    let separator = |c: &u8| !c.is_ascii_alphanumeric() && *c != b'~' && *c != b'^';
    loop {
        while one.first().is_some_and(separator) {
            one = &one[1..];
        }
        while two.first().is_some_and(separator) {
            two = &two[1..];
        }
        if one.is_empty() && two.is_empty() {
            return Ordering::Equal;
        }
        match marks(&mut one, &mut two) {
            Some(Ordering::Equal) => continue,
            Some(order) => return order,
            None => {}
        }
        if one.is_empty() || two.is_empty() {
            break;
        }
        let numeric = one[0].is_ascii_digit();
        let class = |c: &u8| {
            if numeric {
                c.is_ascii_digit()
            } else {
                c.is_ascii_alphabetic()
            }
        };
        let len1 = one.iter().take_while(|c| class(c)).count();
        let len2 = two.iter().take_while(|c| class(c)).count();
        let (seg1, seg2) = (&one[..len1], &two[..len2]);
        if seg2.is_empty() {
            // Different kinds of run: a number is newer than letters.
            return if numeric {
                Ordering::Greater
            } else {
                Ordering::Less
            };
        }
        let order = if numeric {
            let strip = |s: &[u8]| -> usize { s.iter().take_while(|&&c| c == b'0').count() };
            let (n1, n2) = (&seg1[strip(seg1)..], &seg2[strip(seg2)..]);
            n1.len().cmp(&n2.len()).then_with(|| n1.cmp(n2))
        } else {
            seg1.cmp(seg2)
        };
        if order != Ordering::Equal {
            return order;
        }
        one = &one[len1..];
        two = &two[len2..];
    }
    // One ran out: the one with something left is newer.
    match (one.is_empty(), two.is_empty()) {
        (true, true) => Ordering::Equal,
        (false, _) => Ordering::Greater,
        (_, false) => Ordering::Less,
    }
}

/// `~` and `^` where either string is at one: the order they decide, or
/// `Equal` when both are at the same mark (stepped over); `None` when
/// neither is at one.
fn marks(one: &mut &[u8], two: &mut &[u8]) -> Option<Ordering> {
    // A tilde sorts before anything, the end of the string included.
    match (one.first() == Some(&b'~'), two.first() == Some(&b'~')) {
        (true, true) => {
            *one = &one[1..];
            *two = &two[1..];
            return Some(Ordering::Equal);
        }
        (false, true) => return Some(Ordering::Greater),
        (true, false) => return Some(Ordering::Less),
        (false, false) => {}
    }
    // A caret sorts after the end of the string, before anything else.
    if one.first() != Some(&b'^') && two.first() != Some(&b'^') {
        return None;
    }
    if one.is_empty() {
        return Some(Ordering::Less);
    }
    if two.is_empty() {
        return Some(Ordering::Greater);
    }
    match (one[0] == b'^', two[0] == b'^') {
        (false, _) => Some(Ordering::Greater),
        (_, false) => Some(Ordering::Less),
        _ => {
            *one = &one[1..];
            *two = &two[1..];
            Some(Ordering::Equal)
        }
    }
}

/// `[epoch:]version[-release]`, as rpm and dnf write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evr<'a> {
    /// `None` when not written: 0 in an order, any epoch to [`Evr::matches`].
    pub epoch: Option<u64>,
    pub version: &'a str,
    pub release: Option<&'a str>,
}

impl<'a> Evr<'a> {
    /// Splits an EVR: the epoch before the first `:` (when it is a
    /// number), the release after the last `-`.
    pub fn parse(s: &'a str) -> Evr<'a> {
        let (epoch, rest) = match s.split_once(':') {
            Some((e, rest)) if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => {
                (Some(e.parse().unwrap_or(u64::MAX)), rest)
            }
            _ => (None, s),
        };
        let (version, release) = match rest.rsplit_once('-') {
            Some((v, r)) => (v, Some(r)),
            None => (rest, None),
        };
        Evr {
            epoch,
            version,
            release,
        }
    }

    /// Orders two EVRs by epoch, then version, then release; a release
    /// missing from either side is not compared (`1.0` matches `1.0-3`),
    /// as rpm does.
    pub fn compare(&self, other: &Evr<'_>) -> Ordering {
        self.epoch
            .unwrap_or(0)
            .cmp(&other.epoch.unwrap_or(0))
            .then_with(|| rpmvercmp(self.version, other.version))
            .then_with(|| match (self.release, other.release) {
                (Some(a), Some(b)) => rpmvercmp(a, b),
                _ => Ordering::Equal,
            })
    }
}

impl Evr<'_> {
    /// Whether `installed` is this wanted version: only the parts written
    /// are compared. A missing release matches any release, and a missing
    /// epoch any epoch, as dnf selects a package (`dnf install
    /// foo-1.0-1` installs `foo-2:1.0-1`) and as Puppet's rpm providers
    /// check one; `0:` asks for no epoch.
    pub fn matches(&self, installed: &Evr<'_>) -> bool {
        let epoch = match self.epoch {
            Some(e) => e == installed.epoch.unwrap_or(0),
            None => true,
        };
        epoch
            && rpmvercmp(self.version, installed.version).is_eq()
            && match (self.release, installed.release) {
                (Some(a), Some(b)) => rpmvercmp(a, b).is_eq(),
                _ => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn rpms_own_examples() {
        // From rpm's test suite (tests/rpmvercmp.at), among others.
        for (a, b, want) in [
            ("1.0", "1.0", Equal),
            ("1.0", "2.0", Less),
            ("2.0.1", "2.0", Greater),
            ("2.0.1a", "2.0.1", Greater),
            ("5.5p1", "5.5p10", Less),
            ("10xyz", "10.1xyz", Less),
            ("xyz10", "xyz10.1", Less),
            ("xyz.4", "8", Less),
            ("1.0010", "1.9", Greater),
            ("1.05", "1.5", Equal),
            ("fc4", "fc.4", Equal),
            ("2a", "2.0", Less),
            ("1.0~rc1", "1.0", Less),
            ("1.0~rc1", "1.0~rc2", Less),
            ("1.0~rc1~git123", "1.0~rc1", Less),
            ("1.0^", "1.0", Greater),
            ("1.0^git1", "1.0", Greater),
            ("1.0^git1", "1.01", Less),
            ("1.0^20160101", "1.0.1", Less),
            ("1.0^20160101^git1", "1.0^20160101", Greater),
            ("1.0~rc1^git1", "1.0~rc1", Greater),
            ("1.0^git1~pre", "1.0^git1", Less),
            ("1.0", "1.0^", Less),
            ("a+", "a_", Equal),
            ("+a", "_a", Equal),
        ] {
            assert_eq!(rpmvercmp(a, b), want, "{a} vs {b}");
            assert_eq!(rpmvercmp(b, a), want.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn a_wanted_version_matches_on_the_parts_it_names() {
        let m = |want, have| Evr::parse(want).matches(&Evr::parse(have));
        assert!(m("0.5-3.el9", "1:0.5-3.el9"));
        assert!(m("0.5", "1:0.5-3.el9"));
        assert!(m("1:0.5", "1:0.5-3.el9"));
        assert!(!m("0:0.5-3.el9", "1:0.5-3.el9"));
        assert!(m("0:0.5-3.el9", "0.5-3.el9"));
        assert!(!m("2:0.5-3.el9", "1:0.5-3.el9"));
        assert!(!m("0.5-4.el9", "1:0.5-3.el9"));
        assert!(!m("0.6", "0.5-3.el9"));
    }

    #[test]
    fn evr_compares_epoch_then_version_then_release() {
        let c = |a, b| Evr::parse(a).compare(&Evr::parse(b));
        assert_eq!(c("1:1.0-1", "2.0-1"), Greater);
        assert_eq!(c("0:1.0-1", "1.0-1"), Equal);
        assert_eq!(c("1.0-2", "1.0-10"), Less);
        assert_eq!(c("1.0", "1.0-10"), Equal);
        assert_eq!(c("1.0-1.el9", "1.0-1.el9_2"), Less);
        assert_eq!(
            Evr::parse("2:1.20.1-1.el9"),
            Evr {
                epoch: Some(2),
                version: "1.20.1",
                release: Some("1.el9")
            }
        );
    }
}
