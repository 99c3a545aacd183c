//! "Did you mean": the nearest known name to a mistyped one, by edit distance.

/// The longest text a suggestion is looked for, or offered: nothing that
/// long is a typo of a short name, and comparing two long texts costs the
/// product of their lengths.
pub const COMPARED_MAX: usize = 256;

/// Edit distance where an adjacent swap counts as one edit (`wbe` is one
/// edit from `web`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    distance_within(&a, &b, usize::MAX).unwrap_or(usize::MAX)
}

/// The edit distance of `a` and `b` if it is at most `max`: only the band
/// of the table within `max` of the diagonal is filled, and the work stops
/// at the first row whose every cell is past `max`. Cost O(min(n, m) *
/// max), not O(n * m).
pub(super) fn distance_within(a: &[char], b: &[char], max: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > max {
        return None;
    }
    let far = usize::MAX / 2;
    let band = max.min(n.max(m));
    // Three rows of the optimal-string-alignment table.
    let mut prev2 = vec![far; m + 1];
    let mut prev: Vec<usize> = (0..=m).map(|j| if j <= band { j } else { far }).collect();
    let mut cur = vec![far; m + 1];
    for i in 1..=n {
        let lo = i.saturating_sub(band).max(1);
        let hi = (i + band).min(m);
        cur.fill(far);
        if i <= band {
            cur[0] = i;
        }
        let mut row_min = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[m] <= max).then_some(prev[m])
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
    let w: Vec<char> = word.chars().take(COMPARED_MAX + 1).collect();
    if w.len() > COMPARED_MAX {
        return None;
    }
    let lower = word.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    let mut c_chars: Vec<char> = Vec::new();
    for c in candidates {
        // A candidate of more than COMPARED_MAX characters has more than
        // COMPARED_MAX bytes; most are skipped on the byte count alone.
        if c == word || c.len() > 4 * COMPARED_MAX {
            continue;
        }
        c_chars.clear();
        c_chars.extend(c.chars());
        if c_chars.len() > COMPARED_MAX {
            continue;
        }
        // A difference of case alone is the nearest of all.
        let d = if c.to_lowercase() == lower {
            0
        } else {
            let limit = best.map_or(max, |(d, _)| d.min(max));
            match distance_within(&w, &c_chars, limit) {
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
