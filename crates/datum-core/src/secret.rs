//! Who receives each secret: for every `secret` a layer names, the hosts
//! whose resolution gives it to them and the layer that set it, read from
//! the resolution (never worked out beside it).
//!
//! The core knows a secret only as a path, the hash of its ciphertext and
//! the text of the `.recipients` file beside it; keys, encryption and the
//! recipients format belong to `datum-secrets`, which reads this.

use std::collections::BTreeMap;

use crate::fleet::{Contrib, Fleet, HostId, ResId};
use crate::resolve::{FleetResolution, Resolution, ResolvedResource};
use crate::schema::{Field, Value};

/// One host receiving one secret.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delivery {
    pub host: HostId,
    /// The File that takes it.
    pub resource: ResId,
    /// The contribution that set `secret` for this host: its layer and place.
    pub by: Contrib,
}

/// Every secret any layer names, by path, with the hosts that receive it
/// (in host order; a secret no host receives has none). Hosts that do not
/// resolve receive nothing here.
pub fn deliveries<'f>(fleet: &'f Fleet, all: &FleetResolution) -> BTreeMap<&'f str, Vec<Delivery>> {
    let mut out: BTreeMap<&str, Vec<Delivery>> = fleet
        .recipients
        .keys()
        .map(|p| (p.as_str(), Vec::new()))
        .collect();
    for h in 0..fleet.hosts.len() {
        let host = HostId(h as u32);
        let Some(res) = all.of(host).filter(|r| r.is_ok()) else {
            continue;
        };
        for (path, resource, by) in of_host(fleet, res) {
            if let Some(list) = out.get_mut(path) {
                list.push(Delivery { host, resource, by });
            }
        }
    }
    out
}

/// The secrets one resolution gives its host: path, File and the
/// contribution that set `secret`, in resource order.
pub fn of_host<'f>(
    fleet: &'f Fleet,
    res: &Resolution,
) -> impl Iterator<Item = (&'f str, ResId, Contrib)> {
    res.resources
        .iter()
        .filter_map(move |r| {
            let f = r.field(Field::Secret)?;
            match f.value(fleet)? {
                Value::Str(path) => Some((&**path, r.id, f.winner())),
                _ => None,
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The `.recipients` file of a secret as read at load: `None` when there is
/// none (or it is not text).
pub fn recipients_text<'f>(fleet: &'f Fleet, secret: &str) -> Option<&'f str> {
    fleet.recipients.get(secret)?.as_deref()
}

/// Who a secret's `.recipients` file says it is encrypted to, for
/// `explain`: (`admin` or the host's name, fingerprint) per line, read
/// leniently (`datum check` reads it strictly). `None` without a file.
pub fn recorded_recipients(fleet: &Fleet, secret: &str) -> Option<Vec<(String, String)>> {
    let text = recipients_text(fleet, secret)?;
    Some(
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                match words.as_slice() {
                    ["admin", fp] => ("admin".to_owned(), (*fp).to_owned()),
                    ["host", name, fp] => ((*name).to_owned(), (*fp).to_owned()),
                    _ => (l.to_owned(), String::new()),
                }
            })
            .collect(),
    )
}

/// The `secret` a resolved File takes, if any.
pub fn secret_of<'f>(fleet: &'f Fleet, r: &ResolvedResource) -> Option<&'f str> {
    r.value(fleet, Field::Secret)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::resolve::resolve_all;
    use crate::testkit::{FLEET, host, layer};

    #[test]
    fn each_secret_names_the_hosts_that_receive_it_and_the_layer_that_set_it() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file(
                "hosts.yaml",
                host("web-001", "{role: web}") + &host("db-001", "{role: db}"),
            )
            .file("secrets/db.age", "ciphertext")
            .file("secrets/db.age.recipients", "# none\n")
            .file("secrets/unused.age", "ciphertext")
            .file(
                "web/layer.yaml",
                layer(
                    30,
                    "{role: web}",
                    "  File[pw]:\n    path: /etc/pw\n    secret: secrets/db.age\n",
                ),
            )
            .file(
                "off/layer.yaml",
                layer(
                    30,
                    "{role: mail}",
                    "  File[u]:\n    path: /etc/u\n    secret: secrets/unused.age\n",
                ),
            );
        let fleet = load(&r).unwrap();
        assert!(!fleet.has_errors(), "{:?}", fleet.diagnostics);
        let all = resolve_all(&fleet);
        let d = deliveries(&fleet, &all);
        assert_eq!(
            d.keys().copied().collect::<Vec<_>>(),
            ["secrets/db.age", "secrets/unused.age"]
        );
        let web = &d["secrets/db.age"];
        assert_eq!(web.len(), 1);
        assert_eq!(&*fleet.host(web[0].host).name, "web-001");
        assert_eq!(fleet.layer(web[0].by.layer).display, "web");
        assert!(d["secrets/unused.age"].is_empty());
        assert_eq!(recipients_text(&fleet, "secrets/db.age"), Some("# none\n"));
        assert_eq!(recipients_text(&fleet, "secrets/unused.age"), None);
        assert_eq!(recorded_recipients(&fleet, "secrets/db.age"), Some(vec![]));
    }
}
