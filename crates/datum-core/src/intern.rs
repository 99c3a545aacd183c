//! Interned strings: label keys and values compare as integers on the hot path.

use rustc_hash::FxHashMap;

/// An interned string.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub(crate) u32);

#[derive(Debug, Default)]
pub struct Interner {
    map: FxHashMap<Box<str>, Sym>,
    names: Vec<Box<str>>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&sym) = self.map.get(s) {
            return sym;
        }
        let sym = Sym(self.names.len() as u32);
        self.names.push(s.into());
        self.map.insert(s.into(), sym);
        sym
    }

    /// Adds a string that lookups will not find: for values known to be
    /// unique that nothing looks up by text (host names no matcher names).
    pub fn add_unindexed(&mut self, s: &str) -> Sym {
        let sym = Sym(self.names.len() as u32);
        self.names.push(s.into());
        sym
    }

    pub fn reserve(&mut self, additional: usize) {
        self.names.reserve(additional);
    }

    /// The symbol of an indexed string.
    pub fn get(&self, s: &str) -> Option<Sym> {
        self.map.get(s).copied()
    }

    pub fn name(&self, sym: Sym) -> &str {
        &self.names[sym.0 as usize]
    }
}
