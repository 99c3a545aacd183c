//! OpenSSH pattern lists, as in `namespaces="git,datum-*,!datum-test"`:
//! comma-separated globs (`*` any run, `?` one character), where a match
//! of a `!`-negated pattern refuses whatever the others accept.

/// Whether `text` is matched by the comma-separated `list`.
pub(crate) fn matches_list(text: &str, list: &str) -> bool {
    let mut accepted = false;
    for pattern in list.split(',') {
        match pattern.strip_prefix('!') {
            Some(negated) if glob(text, negated) => return false,
            Some(_) => {}
            None => accepted |= glob(text, pattern),
        }
    }
    accepted
}

/// Whether `text` matches the glob `pattern`, in time proportional to
/// their lengths' product at worst (no exponential backtracking).
fn glob(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    let (mut t, mut p) = (0, 0);
    // Where the last `*` was, and the text position it currently covers up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                t += 1;
                p += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    star = Some((star_p, star_t + 1));
                    p = star_p + 1;
                    t = star_t + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_openssh() {
        assert!(glob("git", "git"));
        assert!(!glob("gitx", "git"));
        assert!(glob("datum-bundle", "datum-*"));
        assert!(glob("datum-", "datum-*"));
        assert!(!glob("datum", "datum-*"));
        assert!(glob("abc", "a?c"));
        assert!(!glob("ac", "a?c"));
        assert!(glob("anything", "*"));
        assert!(glob("", "*"));
        assert!(glob("aXbXc", "a*b*c"));
        assert!(!glob("aXbX", "a*b*c"));
    }

    #[test]
    fn lists_accept_any_and_negations_veto() {
        assert!(matches_list("git", "datum,git"));
        assert!(!matches_list("file", "datum,git"));
        assert!(matches_list("datum-bundle", "datum-*,!datum-test"));
        assert!(!matches_list("datum-test", "datum-*,!datum-test"));
        assert!(
            !matches_list("git", "!datum"),
            "a negation alone accepts nothing"
        );
    }

    #[test]
    fn long_patterns_stay_fast() {
        let text = "a".repeat(5_000);
        let pattern = format!("{}b", "*a".repeat(200));
        assert!(!glob(&text, &pattern));
    }
}
