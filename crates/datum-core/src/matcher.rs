//! Which layers match a host, and why a layer does or does not: the match
//! index built at load time, [`Fleet::matching`] and [`Fleet::check_match`].

use rustc_hash::FxHashMap;

use crate::document::HOST_LABEL;
use crate::fleet::{Fleet, Host, HostId, Layer, LayerId};
use crate::intern::{Interner, Sym};

/// Finds the layers matching a host without looking at every layer: each
/// layer is filed under its rarest label pair, so a host only inspects the
/// layers filed under the pairs it carries.
#[derive(Debug, Default)]
pub(crate) struct MatchIndex {
    always: Vec<LayerId>,
    by_pair: FxHashMap<(Sym, Sym), Vec<LayerId>>,
}

/// Why a layer does or does not match a host, label by label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelCheck {
    pub key: Sym,
    pub wanted: Sym,
    /// What the host carries for the key, if anything.
    pub found: Option<Sym>,
}

impl LabelCheck {
    pub fn holds(&self) -> bool {
        self.found == Some(self.wanted)
    }
}

impl Fleet {
    /// The symbols of a label pair as hosts carry it; `None` when no host
    /// can carry it (a key or value never seen).
    pub fn label_pair(&self, key: &str, value: &str) -> Option<(Sym, Sym)> {
        pair_sym(&self.syms, &self.hosts, key, value)
    }

    /// The layers matching a host, in fold order.
    pub fn matching(&self, id: HostId) -> Vec<LayerId> {
        let host = self.host(id);
        let mut out: Vec<LayerId> = self.index.always.clone();
        for label in &host.labels {
            if let Some(layers) = self.index.by_pair.get(&(label.key, label.value)) {
                out.extend(
                    layers
                        .iter()
                        .filter(|&&l| self.layer_holds(l, host))
                        .copied(),
                );
            }
        }
        out.sort_unstable();
        out
    }

    fn layer_holds(&self, layer: LayerId, host: &Host) -> bool {
        self.layer(layer)
            .matcher
            .iter()
            .all(|m| host.label(m.key) == Some(m.value))
    }

    /// Each label of a layer's matcher against what a host carries.
    pub fn check_match(&self, layer: LayerId, host: HostId) -> Vec<LabelCheck> {
        let host = self.host(host);
        self.layer(layer)
            .matcher
            .iter()
            .map(|m| LabelCheck {
                key: m.key,
                wanted: m.value,
                found: host.label(m.key),
            })
            .collect()
    }
}

/// The symbols of a label pair as hosts carry it, if any host can.
/// `datum/host` values are host names, which are not all indexed.
pub(crate) fn pair_sym(
    syms: &Interner,
    hosts: &[Host],
    key: &str,
    value: &str,
) -> Option<(Sym, Sym)> {
    let k = syms.get(key)?;
    if key == HOST_LABEL {
        let h = hosts.binary_search_by(|h| (*h.name).cmp(value)).ok()?;
        return Some((k, hosts[h].label(k)?));
    }
    Some((k, syms.get(value)?))
}

/// Each label pair with the hosts carrying it.
pub(crate) fn pair_index(hosts: &[Host]) -> FxHashMap<(Sym, Sym), Vec<u32>> {
    let mut map: FxHashMap<(Sym, Sym), Vec<u32>> = FxHashMap::default();
    for (h, host) in hosts.iter().enumerate() {
        for l in &host.labels {
            map.entry((l.key, l.value)).or_default().push(h as u32);
        }
    }
    map
}

/// Files each layer under its rarest label pair (see [`MatchIndex`]).
pub(crate) fn build_index(hosts: &[Host], layers: &[Layer]) -> MatchIndex {
    let mut count: FxHashMap<(Sym, Sym), u32> = FxHashMap::default();
    for h in hosts {
        for l in &h.labels {
            *count.entry((l.key, l.value)).or_default() += 1;
        }
    }
    let mut index = MatchIndex::default();
    for (i, layer) in layers.iter().enumerate() {
        let id = LayerId(i as u32);
        let rarest = layer
            .matcher
            .iter()
            .map(|m| {
                (
                    count.get(&(m.key, m.value)).copied().unwrap_or(0),
                    m.key,
                    m.value,
                )
            })
            .min();
        match rarest {
            None => index.always.push(id),
            Some((_, k, v)) => index.by_pair.entry((k, v)).or_default().push(id),
        }
    }
    index
}
