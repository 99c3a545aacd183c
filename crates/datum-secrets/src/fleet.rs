//! The recipients each secret of a fleet should have, read from the
//! resolution ([`datum_core::secret::deliveries`]), the keys to encrypt it
//! to, and what `datum check` says when its `.recipients` file disagrees.
//!
//! A secret's wanted recipients are the admins' keys plus every key of
//! every host that receives it. A receiving host that is not among the
//! recorded recipients could not decrypt it: an error. A recorded
//! recipient that no longer receives it still can: a warning (rekey, and
//! rotate the secret if that matters). Both name the layers that bring
//! the secret to its hosts.

use std::collections::{BTreeMap, BTreeSet};

use datum_core::diagnostic::{Code, Diagnostic};
use datum_core::document::KeyDecl;
use datum_core::fleet::{Fleet, HostId};
use datum_core::hint::Hinted;
use datum_core::report::host_list;
use datum_core::resolve::FleetResolution;
use datum_core::secret::{Delivery, deliveries, recipients_text};
use datum_core::source::{Pos, Span};

use crate::key::{KeyError, PublicKey};
use crate::recipients::{Holder, Recipient, Recipients, RecipientsChange, RecipientsError};

/// What the repository records about who a secret is encrypted to.
#[derive(Debug)]
pub enum Stored {
    /// No `.recipients` file beside it.
    Missing,
    /// A `.recipients` file that does not parse.
    Damaged(RecipientsError),
    Read(Recipients),
}

/// One secret: who should be able to read it, and who can.
#[derive(Debug)]
pub struct SecretPlan<'f> {
    pub path: &'f str,
    /// The hosts receiving it, with the layer that set it for each.
    pub deliveries: Vec<Delivery>,
    /// The admins' keys and those of every receiving host.
    pub wanted: Recipients,
    /// The keys behind `wanted`, to encrypt to.
    pub keys: Vec<PublicKey>,
    /// Receiving hosts that declare no usable key.
    pub keyless: Vec<HostId>,
    pub stored: Stored,
}

impl SecretPlan<'_> {
    /// Whether the ciphertext must be encrypted again for the recorded
    /// recipients to be the wanted ones.
    pub fn needs_rekey(&self) -> bool {
        match &self.stored {
            Stored::Read(stored) => *stored != self.wanted,
            Stored::Missing | Stored::Damaged(_) => true,
        }
    }
}

/// Every secret of a fleet, and the problems of its keys.
#[derive(Debug)]
pub struct Plan<'f> {
    /// By path.
    pub secrets: Vec<SecretPlan<'f>>,
    /// `invalid-key` errors, one per key that does not parse.
    pub key_errors: Vec<Diagnostic>,
    /// Hosts with a key that does not parse.
    pub bad_keys: BTreeSet<HostId>,
    /// The keys of `admins` that parse.
    pub admins: Vec<PublicKey>,
}

impl<'f> Plan<'f> {
    /// Reads every key, and every secret's deliveries and recipients file.
    pub fn new(fleet: &'f Fleet, all: &FleetResolution) -> Plan<'f> {
        let mut key_errors = Vec::new();
        let admins = parse_keys(&fleet.admins, "`admins`", &mut key_errors);
        let mut host_keys: BTreeMap<HostId, Vec<PublicKey>> = BTreeMap::new();
        let mut bad_keys = BTreeSet::new();
        for (h, host) in fleet.hosts.iter().enumerate() {
            let before = key_errors.len();
            let keys = parse_keys(
                &host.keys,
                &format!("`keys` of {}", host.name),
                &mut key_errors,
            );
            if key_errors.len() > before {
                bad_keys.insert(HostId(h as u32));
            }
            host_keys.insert(HostId(h as u32), keys);
        }
        let secrets = deliveries(fleet, all)
            .into_iter()
            .map(|(path, deliveries)| {
                let mut wanted = Recipients::new();
                let mut keys = Vec::new();
                for key in &admins {
                    wanted.insert(Holder::Admin, key.fingerprint().clone());
                    keys.push(key.clone());
                }
                let receiving: BTreeSet<HostId> = deliveries.iter().map(|d| d.host).collect();
                let mut keyless = Vec::new();
                for &host in &receiving {
                    let declared = &host_keys[&host];
                    if declared.is_empty() {
                        keyless.push(host);
                    }
                    for key in declared {
                        let name = fleet.host(host).name.to_string();
                        wanted.insert(Holder::Host(name), key.fingerprint().clone());
                        keys.push(key.clone());
                    }
                }
                let stored = match recipients_text(fleet, path) {
                    None => Stored::Missing,
                    Some(text) => match Recipients::parse(text) {
                        Ok(r) => Stored::Read(r),
                        Err(e) => Stored::Damaged(e),
                    },
                };
                SecretPlan {
                    path,
                    deliveries,
                    wanted,
                    keys,
                    keyless,
                    stored,
                }
            })
            .collect();
        Plan {
            secrets,
            key_errors,
            bad_keys,
            admins,
        }
    }

    pub fn get(&self, path: &str) -> Option<&SecretPlan<'f>> {
        self.secrets.iter().find(|s| s.path == path)
    }

    /// The hosts `check` reports a secrets error for: a key of theirs does
    /// not parse, or they receive a secret they could not decrypt (it names
    /// no key of theirs, they declare none, or who it is encrypted to is
    /// unknown: no `.recipients` file, or a damaged one). `bundle`
    /// publishes nothing for them: they would fail on arrival.
    pub fn hosts_in_error(&self, fleet: &Fleet) -> BTreeSet<HostId> {
        let mut out = self.bad_keys.clone();
        for s in &self.secrets {
            out.extend(&s.keyless);
            match &s.stored {
                Stored::Missing | Stored::Damaged(_) => out.extend(s.receiving()),
                Stored::Read(stored) => {
                    let change = stored.compare(&s.wanted);
                    out.extend(s.receiving().filter(|&h| {
                        let name = &*fleet.host(h).name;
                        change
                            .missing
                            .iter()
                            .any(|r| matches!(&r.holder, Holder::Host(n) if n == name))
                    }));
                }
            }
        }
        out
    }

    /// `secret-ciphertext` errors: each secret whose file, as `read` gives
    /// it (`None`: unreadable, which loading reports), has no age header
    /// hosts can read (empty, damaged, past [`crate::ciphertext::MAX_STANZAS`]
    /// or [`crate::ciphertext::MAX_HEADER`], or sealed with a passphrase).
    /// Only the header is read: without a key, that is all there is to check.
    pub fn ciphertext_diagnostics(
        &self,
        fleet: &Fleet,
        read: impl Fn(&str) -> Option<Vec<u8>>,
    ) -> Vec<Diagnostic> {
        self.ciphertext_errors(fleet, read).0
    }

    /// [`Plan::ciphertext_diagnostics`], and the hosts receiving a secret
    /// they report: `bundle` publishes nothing for those, as for
    /// [`Plan::hosts_in_error`] (they would fail on arrival).
    pub fn ciphertext_errors(
        &self,
        fleet: &Fleet,
        read: impl Fn(&str) -> Option<Vec<u8>>,
    ) -> (Vec<Diagnostic>, BTreeSet<HostId>) {
        let mut out = Vec::new();
        let mut reached = BTreeSet::new();
        for s in &self.secrets {
            let Some(bytes) = read(s.path) else {
                continue;
            };
            let Some(why) = ciphertext_problem(&bytes) else {
                continue;
            };
            let hosts: Vec<HostId> = s.receiving().collect();
            reached.extend(&hosts);
            out.push(
                s.placed(
                    fleet,
                    Diagnostic::error(
                        Code::SecretCiphertext,
                        format!("{} is not a secret hosts can decrypt: {why}", s.path),
                    ),
                    &hosts,
                )
                .hint(format!(
                    "write it again with `datum secret encrypt {}` (the plaintext on stdin)",
                    s.path
                )),
            );
        }
        (out, reached)
    }

    /// What `datum check` reports: bad keys, then for each secret the
    /// hosts that cannot decrypt it (errors) and the recipients that should
    /// no longer be able to (warnings).
    pub fn diagnostics(&self, fleet: &Fleet) -> Vec<Diagnostic> {
        let mut out = self.key_errors.clone();
        for s in &self.secrets {
            s.diagnostics(fleet, &mut out);
        }
        out
    }
}

impl SecretPlan<'_> {
    fn diagnostics(&self, fleet: &Fleet, out: &mut Vec<Diagnostic>) {
        let rekey = format!(
            "run `datum secret rekey {}` and commit the secret with its .recipients file",
            self.path
        );
        if !self.keyless.is_empty() {
            out.push(self.keyless_hosts(fleet));
        }
        let stored = match &self.stored {
            Stored::Read(stored) => stored,
            Stored::Missing | Stored::Damaged(_) => {
                out.push(self.recipients_unknown(fleet).hint(rekey));
                return;
            }
        };
        let change = stored.compare(&self.wanted);
        if let Some(d) = self.not_recipients(fleet, &change) {
            out.push(d.hint(rekey.clone()));
        }
        if let Some(d) = self.extra_recipients(fleet, &change) {
            out.push(d.hint(format!(
                "{rekey}; a removed key can still read the old ciphertext in git history, so change the secret itself if that matters"
            )));
        }
    }

    /// Hosts that receive the secret but declare no key.
    fn keyless_hosts(&self, fleet: &Fleet) -> Diagnostic {
        let names = self.names(fleet, &self.keyless);
        self.placed(
            fleet,
            Diagnostic::error(
                Code::SecretNoKey,
                format!(
                    "{} {} {} {} but {} no key to decrypt it with",
                    hosts_word(names.len()),
                    host_list(&names),
                    receives(names.len()),
                    self.path,
                    if names.len() == 1 { "declares" } else { "declare" },
                ),
            ),
            &self.keyless,
        )
        .hint("add the host's public key to its Host document (`keys: [\"ssh-ed25519 AAAA...\"]`, from /etc/ssh/ssh_host_ed25519_key.pub), then rekey")
    }

    /// The `.recipients` file is missing or damaged: who can decrypt is unknown.
    fn recipients_unknown(&self, fleet: &Fleet) -> Diagnostic {
        let why = match &self.stored {
            Stored::Damaged(e) => format!(
                "{}.recipients is damaged ({e}), so who can decrypt {} is unknown",
                self.path, self.path
            ),
            _ => format!(
                "{} has no {}.recipients file, so who can decrypt it is unknown",
                self.path, self.path
            ),
        };
        let hosts: Vec<HostId> = self.deliveries.iter().map(|d| d.host).collect();
        self.placed(
            fleet,
            Diagnostic::error(Code::SecretRecipientsFile, why),
            &hosts,
        )
    }

    /// Receiving hosts the secret is not encrypted to, if any.
    fn not_recipients(&self, fleet: &Fleet, change: &RecipientsChange) -> Option<Diagnostic> {
        let missing_hosts: Vec<HostId> = self
            .receiving()
            .filter(|&h| {
                let name = &*fleet.host(h).name;
                change
                    .missing
                    .iter()
                    .any(|r| matches!(&r.holder, Holder::Host(n) if n == name))
            })
            .collect();
        if missing_hosts.is_empty() {
            return None;
        }
        let names = self.names(fleet, &missing_hosts);
        Some(self.placed(
            fleet,
            Diagnostic::error(
                Code::SecretNotRecipient,
                format!(
                    "{} {} {} {} but {} not among its recipients: {} cannot decrypt it",
                    hosts_word(names.len()),
                    host_list(&names),
                    receives(names.len()),
                    self.path,
                    if names.len() == 1 { "is" } else { "are" },
                    if names.len() == 1 { "it" } else { "they" },
                ),
            ),
            &missing_hosts,
        ))
    }

    /// Recipients the secret should not have (and admin keys it lacks), if any.
    fn extra_recipients(&self, fleet: &Fleet, change: &RecipientsChange) -> Option<Diagnostic> {
        let admins_missing = change
            .missing
            .iter()
            .filter(|r| r.holder == Holder::Admin)
            .count();
        let mut extra: Vec<String> = change.extra.iter().map(describe).collect();
        if admins_missing > 0 {
            extra.push(format!(
                "{admins_missing} admin {} not a recipient",
                if admins_missing == 1 {
                    "key is"
                } else {
                    "keys are"
                }
            ));
        }
        if extra.is_empty() {
            return None;
        }
        let hosts: Vec<HostId> = self.receiving().collect();
        let layers = self.layers(fleet);
        let mut d = Diagnostic::warning(
            Code::SecretExtraRecipient,
            format!(
                "{} is encrypted to recipients it should not have: {}",
                self.path,
                extra.join("; ")
            ),
        );
        d = match layers.is_empty() {
            true => d.note(format!("no layer gives {} to any host now", self.path)),
            false => d.note(format!(
                "it is brought to its hosts by {} only",
                layers.join(", ")
            )),
        };
        Some(self.placed(fleet, d, &hosts))
    }

    fn receiving(&self) -> impl Iterator<Item = HostId> + '_ {
        let set: BTreeSet<HostId> = self.deliveries.iter().map(|d| d.host).collect();
        set.into_iter()
    }

    fn names<'f>(&self, fleet: &'f Fleet, hosts: &[HostId]) -> Vec<&'f str> {
        hosts.iter().map(|&h| &*fleet.host(h).name).collect()
    }

    /// The distinct layers that set this secret for some host, in fold order.
    fn layers(&self, fleet: &Fleet) -> Vec<String> {
        let ids: BTreeSet<_> = self.deliveries.iter().map(|d| d.by.layer).collect();
        ids.into_iter()
            .map(|l| fleet.layer(l).display.clone())
            .collect()
    }

    /// Points `d` at where the secret is set for `hosts`: each distinct
    /// place once, labelled with its layer and the hosts it brings the
    /// secret to.
    fn placed(&self, fleet: &Fleet, d: Diagnostic, hosts: &[HostId]) -> Diagnostic {
        let mut by_place: BTreeMap<(Span, String), Vec<&str>> = BTreeMap::new();
        for delivery in self.deliveries.iter().filter(|x| hosts.contains(&x.host)) {
            let span = fleet.setting(delivery.by).span;
            let layer = fleet.layer(delivery.by.layer).display.clone();
            let list = by_place.entry((span, layer)).or_default();
            let name = &*fleet.host(delivery.host).name;
            if !list.contains(&name) {
                list.push(name);
            }
        }
        let mut d = d;
        for (i, ((span, layer), names)) in by_place.into_iter().enumerate() {
            let label = format!("set by {layer} for {}", host_list(&names));
            d = if i == 0 {
                d.at(span, label)
            } else {
                d.also(span, label)
            };
        }
        d
    }
}

/// What is wrong with a secret's ciphertext, read without a key.
pub fn ciphertext_problem(bytes: &[u8]) -> Option<String> {
    match crate::ciphertext::header(bytes) {
        Ok(h) if h.passphrase => {
            Some("it is encrypted with a passphrase, and hosts decrypt with their keys".to_owned())
        }
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

fn hosts_word(n: usize) -> &'static str {
    if n == 1 { "host" } else { "hosts" }
}

fn receives(n: usize) -> &'static str {
    if n == 1 { "receives" } else { "receive" }
}

fn describe(r: &Recipient) -> String {
    match &r.holder {
        Holder::Admin => format!("admin key {} is no longer in `admins`", r.fingerprint),
        Holder::Host(name) => {
            format!("{name} ({}) no longer receives it", r.fingerprint)
        }
    }
}

/// Parses each key, reporting those that do not parse with their place;
/// repeated keys are kept once.
fn parse_keys(decls: &[KeyDecl], what: &str, errors: &mut Vec<Diagnostic>) -> Vec<PublicKey> {
    let mut keys: Vec<PublicKey> = Vec::new();
    for decl in decls {
        match PublicKey::parse(&decl.text) {
            Ok(key) => {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            Err(e) => errors.push(
                Diagnostic::error(
                    Code::InvalidKey,
                    format!("an entry of {what} is not a usable public key: {e}"),
                )
                .at(within(decl, &e), "here")
                .hint(e.hint().unwrap_or_default()),
            ),
        }
    }
    keys
}

/// The part of a key's place the error is about, when the key is written
/// on one line exactly as read (a plain or simply quoted scalar); else the
/// whole value.
fn within(decl: &KeyDecl, e: &KeyError) -> Span {
    let span = decl.span;
    let text = &*decl.text;
    let chars = text.chars().count() as u32;
    let quoted = span.end.col.checked_sub(span.start.col) == Some(chars + 2);
    let exact = span.end.col.checked_sub(span.start.col) == Some(chars);
    if span.start.line != span.end.line || !(exact || quoted) {
        return span;
    }
    let range = e.span();
    if range.start == range.end && range.start == 0 {
        return span;
    }
    let base = span.start.col + u32::from(quoted);
    let col = |byte: usize| base + text[..byte.min(text.len())].chars().count() as u32;
    Span {
        file: span.file,
        start: Pos {
            line: span.start.line,
            col: col(range.start),
        },
        end: Pos {
            line: span.start.line,
            col: col(range.end),
        },
    }
}
