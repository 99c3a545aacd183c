//! From checked documents to the [`Fleet`]: labels and resource ids
//! interned, layers in fold order, hosts by name, and which hosts each broken
//! document holds back.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::document::{FieldValue, HOST_LABEL, LabelDecl};
use crate::fleet::{
    BrokenKind, Fleet, Host, Layer, LayerField, LayerResource, LayerVar, Setting, cmp_paths,
    display_name, pair_sym,
};
use crate::intern::Sym;
use crate::matcher::{Label, MatchIndex, pair_index};

use super::assemble::{Assembler, PendingLayer, Touch};

/// Which broken documents hold back which hosts (see [`Fleet::blockers`]).
struct Blocked {
    all: Vec<u32>,
    by_host: Vec<Vec<u32>>,
    broken_hosts: BTreeMap<String, Vec<u32>>,
}

impl Assembler {
    pub(super) fn finish(mut self) -> Fleet {
        let layers = self.finish_layers();
        self.resources.finish();
        let (hosts, host_key) = self.finish_hosts();
        let blocked = self.blocked(&hosts);
        let index = MatchIndex::build(
            hosts.iter().map(|h| &h.labels[..]),
            layers.iter().map(|l| &l.matcher[..]),
        );
        let mut diagnostics = std::mem::take(&mut self.diags);
        let files = self.files;
        diagnostics.sort_by(|a, b| a.sort_key(&files).cmp(&b.sort_key(&files)));
        diagnostics.dedup();
        Fleet {
            files,
            name: self.fleet_name,
            declared: self.declared,
            ties: self.ties,
            syms: self.syms,
            hosts,
            layers,
            resources: self.resources,
            sources: self.sources,
            templates: self.templates,
            recipients: self.recipients,
            missing_secrets: self.missing_secrets,
            admins: self.admins,
            rollout: self.rollout,
            source_limit: self.source_limit,
            diagnostics,
            broken: self.broken,
            blocks_all: blocked.all,
            blocks: blocked.by_host,
            broken_hosts: blocked.broken_hosts,
            index,
            host_key,
        }
    }

    /// Layers: the broken ones set aside, the rest in fold order.
    fn finish_layers(&mut self) -> Vec<Layer> {
        let pending = std::mem::take(&mut self.layers);
        let mut layers = Vec::with_capacity(pending.len());
        for l in pending {
            if !l.ok {
                let touch = if l.matcher_sound {
                    Touch::Matcher(l.doc.matcher)
                } else {
                    Touch::All
                };
                self.set_aside(&l.path, BrokenKind::Layer, touch);
                continue;
            }
            if l.doc.resources.iter().any(|r| r.set_aside) {
                self.set_partly_aside(&l.path, Touch::Matcher(l.doc.matcher.clone()));
            }
            layers.push(self.layer(l));
        }
        layers.sort_by(|a, b| {
            a.precedence
                .cmp(&b.precedence)
                .then_with(|| cmp_paths(&a.path, &b.path))
        });
        layers
    }

    fn layer(&mut self, l: PendingLayer) -> Layer {
        let matcher = self.intern_matcher(&l.doc.matcher);
        let resources = l
            .doc
            .resources
            .into_iter()
            .map(|r| LayerResource {
                id: self.resources.intern(&r.id),
                span: r.span,
                set_aside: r.set_aside,
                fields: r
                    .fields
                    .into_iter()
                    .map(|f| LayerField {
                        field: f.field,
                        span: f.span,
                        setting: match f.value {
                            FieldValue::Value(v) => Setting::Value(v),
                            FieldValue::Unset => Setting::Unset,
                            FieldValue::Refs(refs) => Setting::Refs(
                                refs.iter()
                                    .map(|(id, s)| (self.resources.intern(id), *s))
                                    .collect(),
                            ),
                        },
                    })
                    .collect(),
            })
            .collect();
        Layer {
            file: l.file,
            display: display_name(&l.path).to_owned(),
            path: l.path,
            name: l.doc.name,
            name_span: l.doc.name_span,
            precedence: l.doc.precedence,
            precedence_span: l.doc.precedence_span,
            match_span: l.doc.match_span,
            matcher,
            resources,
            vars: l
                .doc
                .vars
                .into_iter()
                .map(|v| LayerVar {
                    name: v.name,
                    name_span: v.name_span,
                    span: v.span,
                    setting: v.setting,
                })
                .collect(),
        }
    }

    fn intern_matcher(&mut self, m: &[LabelDecl]) -> Vec<Label> {
        let mut out: Vec<Label> = m
            .iter()
            .map(|l| Label {
                key: self.syms.intern(&l.key),
                value: self.syms.intern(&l.value),
                key_span: l.key_span,
                value_span: l.value_span,
            })
            .collect();
        out.sort_by_key(|l| l.key);
        out
    }

    /// Hosts, after the matchers: a host name is indexed only when some
    /// matcher names it, so the table of label symbols stays small (and
    /// fast to probe) however many hosts there are. Returns them with the
    /// symbol of `datum/host`.
    fn finish_hosts(&mut self) -> (Vec<Host>, Sym) {
        let host_key = self.syms.intern(HOST_LABEL);
        let pending = std::mem::take(&mut self.hosts);
        let mut hosts = Vec::with_capacity(pending.len());
        self.syms.reserve(pending.len());
        for h in pending.into_iter().filter(|h| h.ok) {
            let mut labels: Vec<Label> = Vec::with_capacity(h.labels.len() + 1);
            labels.extend(h.labels.iter().map(|l| Label {
                key: self.syms.intern(&l.key),
                value: self.syms.intern(&l.value),
                key_span: l.key_span,
                value_span: l.value_span,
            }));
            let name = match self.syms.get(&h.name) {
                Some(sym) => sym,
                None => self.syms.add_unindexed(&h.name),
            };
            labels.push(Label {
                key: host_key,
                value: name,
                key_span: h.name_span,
                value_span: h.name_span,
            });
            labels.sort_by_key(|l| l.key);
            hosts.push(Host {
                name: h.name,
                name_span: h.name_span,
                labels,
                keys: h.keys,
            });
        }
        (hosts, host_key)
    }

    /// What the broken documents touch.
    fn blocked(&mut self, hosts: &[Host]) -> Blocked {
        let mut blocked = Blocked {
            all: Vec::new(),
            by_host: vec![Vec::new(); hosts.len()],
            broken_hosts: BTreeMap::new(),
        };
        let touches = std::mem::take(&mut self.touches);
        let mut hosts_by_pair: Option<FxHashMap<(Sym, Sym), Vec<u32>>> = None;
        for (i, touch) in touches.iter().enumerate() {
            let i = i as u32;
            match touch {
                Touch::All => blocked.all.push(i),
                Touch::Host(name) => {
                    blocked
                        .broken_hosts
                        .entry(name.to_string())
                        .or_default()
                        .push(i);
                    if let Ok(h) = hosts.binary_search_by(|h: &Host| (*h.name).cmp(name)) {
                        blocked.by_host[h].push(i);
                    }
                }
                Touch::Matcher(m) => {
                    for h in self.matched_by(m, hosts, &mut hosts_by_pair) {
                        blocked.by_host[h as usize].push(i);
                    }
                }
            }
        }
        blocked
    }

    /// The hosts a broken document's matcher selects. Only hosts carrying
    /// one of the rarest key's wanted values can match: many broken host
    /// layers must not each scan every host, so the label index is built on
    /// first need. A key listed with several values is alternatives.
    fn matched_by(
        &self,
        m: &[LabelDecl],
        hosts: &[Host],
        by_pair: &mut Option<FxHashMap<(Sym, Sym), Vec<u32>>>,
    ) -> Vec<u32> {
        // Each key with the pairs hosts can carry of its values; a key none
        // of whose values any host carries touches no host.
        let mut wanted: Vec<Vec<(Sym, Sym)>> = Vec::new();
        for group in m.chunk_by(|a, b| a.key == b.key) {
            let pairs: Vec<(Sym, Sym)> = group
                .iter()
                .filter_map(|l| pair_sym(&self.syms, hosts, &l.key, &l.value))
                .collect();
            if pairs.is_empty() {
                return Vec::new();
            }
            wanted.push(pairs);
        }
        let by_pair =
            by_pair.get_or_insert_with(|| pair_index(hosts.iter().map(|h| &h.labels[..])));
        let candidates: Vec<u32> = match wanted
            .iter()
            .map(|pairs| {
                let mut hs: Vec<u32> = pairs
                    .iter()
                    .flat_map(|p| by_pair.get(p).map_or(&[][..], Vec::as_slice))
                    .copied()
                    .collect();
                hs.sort_unstable();
                hs
            })
            .min_by_key(Vec::len)
        {
            Some(c) => c,
            None => (0..hosts.len() as u32).collect(),
        };
        candidates
            .into_iter()
            .filter(|&h| {
                let host = &hosts[h as usize];
                wanted
                    .iter()
                    .all(|pairs| pairs.iter().any(|&(k, v)| host.label(k) == Some(v)))
            })
            .collect()
    }
}
