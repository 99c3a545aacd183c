//! "Did you mean": the nearest known name to a mistyped one, by edit distance.

/// The longest text a suggestion is looked for, or offered: nothing that
/// long is a typo of a short name, and comparing two long texts costs the
/// product of their lengths.
pub const COMPARED_MAX: usize = 256;

#[cfg(test)]
thread_local! {
    /// Steps of edit distance (characters times characters) computed on
    /// this thread: what the tests count a suggestion's cost in, never time.
    pub(crate) static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Edit distance where an adjacent swap counts as one edit (`wbe` is one
/// edit from `web`): strsim's optimal string alignment distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

/// The edit distance of `a` and `b` (of `n` and `m` characters) if it is
/// at most `max`. Texts whose lengths differ by more than `max` are not
/// compared at all; callers keep both to [`COMPARED_MAX`] characters, so
/// one comparison costs at most `COMPARED_MAX` squared steps.
pub(super) fn distance_within(a: &str, n: usize, b: &str, m: usize, max: usize) -> Option<usize> {
    if n.abs_diff(m) > max {
        return None;
    }
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + (n * m) as u64));
    let d = strsim::osa_distance(a, b);
    (d <= max).then_some(d)
}

/// The candidate nearest to `word`, however far; ties go to the smallest
/// candidate so the answer never depends on the order they came in.
/// Neither a word nor a candidate longer than [`COMPARED_MAX`] characters
/// takes part.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    nearest_within(word, candidates, usize::MAX).map(|(_, c)| c)
}

/// [`nearest`] among the candidates at most `max` edits away, with its
/// distance. Each comparison stops once it is past the best so far.
fn nearest_within<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Option<(usize, &'a str)> {
    let w = word.chars().take(COMPARED_MAX + 1).count();
    if w > COMPARED_MAX {
        return None;
    }
    let lower = word.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        // A candidate of more than COMPARED_MAX characters has more than
        // COMPARED_MAX bytes; most are skipped on the byte count alone.
        if c == word || c.len() > 4 * COMPARED_MAX {
            continue;
        }
        let n = c.chars().count();
        if n > COMPARED_MAX {
            continue;
        }
        // A difference of case alone is the nearest of all.
        let d = if c.to_lowercase() == lower {
            0
        } else {
            let limit = best.map_or(max, |(d, _)| d.min(max));
            match distance_within(word, w, c, n, limit) {
                Some(d) => d,
                None => continue,
            }
        };
        if best.is_none_or(|b| (d, c) < b) {
            best = Some((d, c));
        }
    }
    best
}

/// The nearest candidate when it is close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.chars().count();
    // Close enough means at most a third of the longer text; the found one
    // is at most `d` longer than the word, so `d` is at most half the word.
    let (d, found) = nearest_within(word, candidates, (w / 2).max(1))?;
    let limit = (w.max(found.chars().count()) / 3).max(1);
    (d == 0 || d <= limit).then_some(found)
}
