//! Keeping the first of each entry a fleet writes and telling the repeats
//! apart, in one pass: a list a fleet controls (a matcher's alternatives,
//! an Exec's environment) may hold hundreds of thousands of entries, and
//! comparing each with every earlier one is quadratic.

use std::hash::Hash;

use rustc_hash::FxHashSet;

/// The entries seen so far, by key.
#[derive(Debug)]
pub struct Distinct<K> {
    seen: FxHashSet<K>,
}

impl<K: Hash + Eq> Default for Distinct<K> {
    fn default() -> Self {
        Distinct {
            seen: FxHashSet::default(),
        }
    }
}

impl<K: Hash + Eq> Distinct<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `key` is new: `true` the first time, `false` for a repeat.
    pub fn first(&mut self, key: K) -> bool {
        self.seen.insert(key)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::hash::Hasher;

    use super::*;

    thread_local! {
        static COMPARED: Cell<u64> = const { Cell::new(0) };
    }

    /// A key that counts how often it is compared with another.
    struct Counted(u32);

    impl PartialEq for Counted {
        fn eq(&self, other: &Self) -> bool {
            COMPARED.with(|c| c.set(c.get() + 1));
            self.0 == other.0
        }
    }
    impl Eq for Counted {}
    impl Hash for Counted {
        fn hash<H: Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    #[test]
    fn repeats_are_told_apart_from_first_entries() {
        let mut d = Distinct::new();
        let firsts: Vec<bool> = ["a", "b", "a", "c", "b"]
            .into_iter()
            .map(|k| d.first(k))
            .collect();
        assert_eq!(firsts, [true, true, false, true, false]);
    }

    #[test]
    fn each_entry_is_compared_with_a_few_others_not_with_every_earlier_one() {
        // 20,000 distinct entries then each once again: comparing each with
        // every earlier one would be 300 million comparisons.
        let n = 20_000u32;
        let mut d = Distinct::new();
        COMPARED.with(|c| c.set(0));
        let fresh = (0..n).chain(0..n).filter(|&i| d.first(Counted(i))).count();
        assert_eq!(fresh, n as usize);
        let compared = COMPARED.with(Cell::get);
        assert!(
            compared <= 4 * u64::from(n),
            "{compared} comparisons for {} entries",
            2 * n
        );
    }
}
