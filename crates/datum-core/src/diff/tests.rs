//! Fleet diffs of small in-memory fleets, as data, text and JSON.

use super::*;
use crate::emit::write_json;
use crate::loader::load;
use crate::present::diff as text;
use crate::reader::MemReader;
use crate::resolve::resolve_all;
use crate::testkit::{FLEET, host, layer};

const WEB: &str = "  Package[nginx]: {}\n  File[conf]:\n    path: /etc/nginx.conf\n    mode: \"0640\"\n    source: files/nginx.conf\n    requires: Package[nginx]\n";

/// The hosts of [`base`]: web-001, web-002, web-003, db-001.
fn base_hosts() -> String {
    host("web-001", "{role: web}")
        + &host("web-002", "{role: web}")
        + &host("web-003", "{role: web}")
        + &host("db-001", "{role: db}")
}

/// web-001 (with a host override of the mode), web-002, web-003, db-001.
fn base() -> MemReader {
    MemReader::new()
        .file("datum.yaml", FLEET)
        .file("hosts.yaml", base_hosts())
        .file("files/nginx.conf", "worker_processes 1;\n")
        .file("roles/web/layer.yaml", layer(30, "{role: web}", WEB))
        .file(
            "hosts/web-001/layer.yaml",
            layer(
                100,
                "{datum/host: web-001}",
                "  File[conf]:\n    mode: \"0600\"\n",
            ),
        )
        .file(
            "base/layer.yaml",
            layer(
                0,
                "{}",
                "  File[motd]:\n    path: /etc/motd\n    content: hi\n",
            ),
        )
}

struct Loaded {
    fleet: Fleet,
    all: FleetResolution,
}

fn loaded(r: &MemReader) -> Loaded {
    let fleet = load(r).unwrap();
    let all = resolve_all(&fleet);
    Loaded { fleet, all }
}

impl Loaded {
    fn side(&self) -> Side<'_> {
        Side {
            fleet: &self.fleet,
            all: &self.all,
        }
    }
}

fn text_of(old: &MemReader, new: &MemReader) -> String {
    let (a, b) = (loaded(old), loaded(new));
    let d = diff(Some(a.side()), Some(b.side()));
    text::render(&d, "old", "new")
}

fn json_of(old: &MemReader, new: &MemReader) -> String {
    let (a, b) = (loaded(old), loaded(new));
    let d = diff(Some(a.side()), Some(b.side()));
    let mut buf = Vec::new();
    write_json(&mut buf, &json::tree(&d, "old", "new")).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn the_same_fleet_changes_nothing() {
    let (a, b) = (loaded(&base()), loaded(&base()));
    let d = diff(Some(a.side()), Some(b.side()));
    assert!(!d.has_changes());
    assert_eq!(d.unchanged, 4);
    assert!(d.groups.is_empty());
    assert_eq!(
        text::render(&d, "old", "new"),
        "old: old\nnew: new\n0 hosts change, 0 added, 0 removed, 4 unchanged\n"
    );
}

#[test]
fn a_role_change_reaches_only_hosts_without_an_override() {
    let new = base().file(
        "roles/web/layer.yaml",
        layer(30, "{role: web}", &WEB.replace("0640", "0644")),
    );
    assert_eq!(
        text_of(&base(), &new),
        "old: old\nnew: new\n2 hosts change, 0 added, 0 removed, 2 unchanged\n\n\
         changed (2 hosts): web-002, web-003\n  \
         ~ File[conf]  /etc/nginx.conf\n      \
         mode  0640 → 0644  roles/web\n"
    );
}

#[test]
fn responsibility_moving_is_named_on_both_sides() {
    // The override now agrees with nothing and sets a new mode on web-002.
    let new = base().file(
        "hosts/web-002/layer.yaml",
        layer(
            100,
            "{datum/host: web-002}",
            "  File[conf]:\n    mode: \"0400\"\n",
        ),
    );
    let text = text_of(&base(), &new);
    assert!(
        text.contains("changed: web-002\n  layers\n    + hosts/web-002\n  ~ File[conf]  /etc/nginx.conf\n      mode  0640 → 0400  roles/web → hosts/web-002\n"),
        "{text}"
    );
}

#[test]
fn only_provenance_moving_is_no_change() {
    let webs = host("web-001", "{role: web}") + &host("web-002", "{role: web}");
    let old = base().file("hosts.yaml", webs);
    // The mode moves from roles/web down to base, with the same value.
    let new = old
        .clone()
        .file(
            "roles/web/layer.yaml",
            layer(30, "{role: web}", &WEB.replace("    mode: \"0640\"\n", "")),
        )
        .file(
            "base/layer.yaml",
            layer(0, "{}", "  File[motd]:\n    path: /etc/motd\n    content: hi\n  File[conf]:\n    mode: \"0640\"\n"),
        );
    let (a, b) = (loaded(&old), loaded(&new));
    assert!(b.fleet.diagnostics.is_empty());
    let d = diff(Some(a.side()), Some(b.side()));
    assert!(!d.has_changes(), "{}", text::render(&d, "o", "n"));
    assert_eq!(d.unchanged, 2);
}

#[test]
fn a_payload_whose_bytes_change_is_a_change() {
    let new = base().file("files/nginx.conf", "worker_processes 4;\n");
    let text = text_of(&base(), &new);
    assert!(
        text.contains("changed (3 hosts): web-001, web-002, web-003\n  ~ File[conf]  /etc/nginx.conf\n      source_sha256  "),
        "{text}"
    );
    let json = json_of(&base(), &new);
    assert!(json.contains("\"field\": \"source_sha256\""), "{json}");
}

#[test]
fn an_introduced_conflict_is_reported_with_its_hosts_and_a_fixed_one_too() {
    let new = base().file(
        "roles/web-tls/layer.yaml",
        layer(30, "{role: web}", "  File[conf]:\n    mode: \"0600\"\n"),
    );
    let text = text_of(&base(), &new);
    assert_eq!(
        text,
        "old: old\nnew: new\n3 hosts change, 0 added, 0 removed, 1 unchanged, 3 failing\n\n\
         fails to resolve now (3 hosts): web-001, web-002, web-003\n  \
         error: conflicting values for File[conf].mode\n    \
         0640  roles/web      precedence 30\n    \
         0600  roles/web-tls  precedence 30\n    \
         both layers match hosts web-001, web-002, web-003 at equal precedence\n    \
         --> roles/web/layer.yaml:10:11\n       \
         |\n    \
         10 |     mode: \"0640\"\n       \
         |           ^^^^^^\n    \
         --> roles/web-tls/layer.yaml:8:11\n       \
         |\n     \
         8 |     mode: \"0600\"\n       \
         |           ^^^^^^\n    \
         = hint: give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap\n"
    );
    let back = text_of(&new, &base());
    assert!(
        back.contains("resolves now (3 hosts): web-001, web-002, web-003\n  fixed: conflicting values for File[conf].mode\n"),
        "{back}"
    );
}

#[test]
fn an_added_host_that_fails_shows_its_error_with_the_new_sides_lines() {
    // web-004 comes with a layer only it matches, which conflicts with
    // roles/web; the old side has neither, so every line is the new side's.
    let new = base()
        .file(
            "hosts.yaml",
            base_hosts() + &host("web-004", "{role: web, tier: tls}"),
        )
        .file(
            "roles/tls/layer.yaml",
            layer(30, "{tier: tls}", "  File[conf]:\n    mode: \"0600\"\n"),
        );
    let text = text_of(&base(), &new);
    assert_eq!(
        text,
        "old: old\nnew: new\n0 hosts change, 1 added, 0 removed, 4 unchanged, 1 failing\n\n\
         added\n  \
         web-004  role=web  tier=tls\n    \
         does not resolve\n      \
         error: conflicting values for File[conf].mode\n        \
         0600  roles/tls  precedence 30\n        \
         0640  roles/web  precedence 30\n        \
         both layers match host web-004 at equal precedence\n        \
         --> roles/tls/layer.yaml:8:11\n           \
         |\n         \
         8 |     mode: \"0600\"\n           \
         |           ^^^^^^\n        \
         --> roles/web/layer.yaml:10:11\n           \
         |\n        \
         10 |     mode: \"0640\"\n           \
         |           ^^^^^^\n        \
         = hint: give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap\n"
    );
}

#[test]
fn an_error_drawn_in_a_diff_is_escaped() {
    // A conflicting layer in a directory whose name holds ESC and a newline.
    let new = base().file(
        "evil\u{1b}[2J\n/layer.yaml",
        layer(30, "{role: web}", "  File[conf]:\n    mode: \"0600\"\n"),
    );
    let text = text_of(&base(), &new);
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(bad.is_empty(), "{bad:?}:\n{text}");
    assert!(
        text.contains(
            "    --> evil\\u{1b}[2J\\n/layer.yaml:8:11\n       |\n     8 |     mode: \"0600\"\n"
        ),
        "{text}"
    );
}

#[test]
fn requires_entries_resources_labels_and_hosts() {
    // db-001 and web-003 go, web-004 comes, web-002 gains a label.
    let new = base()
        .file(
            "hosts.yaml",
            host("web-001", "{role: web}")
                + &host("web-002", "{role: web, tier: edge}")
                + &host("web-004", "{role: web}"),
        )
        .file(
            "roles/web/layer.yaml",
            layer(
                30,
                "{role: web}",
                &WEB.replace(
                    "requires: Package[nginx]",
                    "requires: [\"Package[openssl]\"]",
                )
                .replace("  Package[nginx]: {}\n", "  Package[openssl]: {}\n"),
            ),
        );
    let text = text_of(&base(), &new);
    assert_eq!(
        text,
        "old: old\nnew: new\n2 hosts change, 1 added, 2 removed, 0 unchanged\n\n\
         added\n  web-004  role=web\n\n\
         removed\n  db-001\n  web-003\n\n\
         changed: web-001\n  \
         ~ File[conf]  /etc/nginx.conf\n      \
         requires  - Package[nginx]    roles/web\n      \
         requires  + Package[openssl]  roles/web\n  \
         - Package[nginx]  nginx  from roles/web\n  \
         + Package[openssl]  openssl  from roles/web\n\n\
         changed: web-002\n  \
         labels\n    \
         tier  (none) → edge\n  \
         ~ File[conf]  /etc/nginx.conf\n      \
         requires  - Package[nginx]    roles/web\n      \
         requires  + Package[openssl]  roles/web\n  \
         - Package[nginx]  nginx  from roles/web\n  \
         + Package[openssl]  openssl  from roles/web\n"
    );
}

#[test]
fn an_added_resource_lists_every_field_with_its_layer() {
    let new = base().file(
        "roles/db/layer.yaml",
        layer(30, "{role: db}", "  Package[postgresql]:\n    ensure: installed\n    version: \"15\"\n  Service[postgresql]:\n    enabled: true\n    requires: Package[postgresql]\n"),
    );
    let text = text_of(&base(), &new);
    assert!(
        text.ends_with(
            "changed: db-001\n  layers\n    + roles/db\n  \
             + Package[postgresql]  postgresql  from roles/db\n      \
             ensure   installed  roles/db\n      \
             version  15         roles/db\n  \
             + Service[postgresql]  postgresql  from roles/db\n      \
             enabled   true                   roles/db\n      \
             requires  + Package[postgresql]  roles/db\n"
        ),
        "{text}"
    );
}

#[test]
fn sensitive_content_is_never_printed() {
    let secret = |v: &str| {
        base().file(
            "roles/db/layer.yaml",
            layer(
                30,
                "{role: db}",
                &format!(
                    "  File[key]:\n    path: /etc/key\n    content: {v}\n    sensitive: true\n"
                ),
            ),
        )
    };
    let (old, new) = (secret("hunter2"), secret("swordfish"));
    for out in [
        text_of(&old, &new),
        json_of(&old, &new),
        text_of(&base(), &new),
        json_of(&base(), &new),
    ] {
        assert!(
            !out.contains("hunter2") && !out.contains("swordfish"),
            "{out}"
        );
    }
    assert!(text_of(&old, &new).contains("      content  (sensitive) changed  roles/db\n"));
    assert!(text_of(&base(), &new).contains("      content    (sensitive)  roles/db\n"));
    // Turning the flag off does not reveal what it hid.
    let revealed = base().file(
        "roles/db/layer.yaml",
        layer(
            30,
            "{role: db}",
            "  File[key]:\n    path: /etc/key\n    content: swordfish\n",
        ),
    );
    let out = text_of(&old, &revealed);
    assert!(
        !out.contains("hunter2") && !out.contains("swordfish"),
        "{out}"
    );
}

#[test]
fn each_pair_of_layer_sets_is_compared_once_and_groups_merge() {
    let mut hosts = String::new();
    for i in 0..300 {
        hosts.push_str(&host(&format!("web-{i:03}"), "{role: web}"));
    }
    let old = base().file("hosts.yaml", hosts.clone());
    let new = old
        .clone()
        .file("files/nginx.conf", "worker_processes 2;\n");
    let (a, b) = (loaded(&old), loaded(&new));
    let d = diff(Some(a.side()), Some(b.side()));
    // web-000..299 share one layer set, web-001 has its own: two pairs,
    // whose changes (the payload digest) are the same: one group.
    assert_eq!(d.outcomes.len(), 1);
    assert_eq!(d.groups.len(), 1);
    assert_eq!(d.groups[0].hosts.len(), 300);
    assert!(text::render(&d, "o", "n").contains(
        "changed (300 hosts): web-000, web-001, web-002, web-003, web-004 and 295 more\n"
    ));
}

#[test]
fn a_side_without_the_fleet_has_no_hosts() {
    let b = loaded(&base());
    let d = diff(None, Some(b.side()));
    assert_eq!(d.added.len(), 4);
    assert!(d.has_changes());
    let d = diff(Some(b.side()), None);
    assert_eq!(d.removed.len(), 4);
    assert_eq!(d.failing(), Vec::<&str>::new());
}

#[test]
fn a_conflict_on_sensitive_content_never_shows_it() {
    let key = |extra: &str| {
        base()
            .file(
                "roles/db/layer.yaml",
                layer(
                    30,
                    "{role: db}",
                    "  File[key]:\n    path: /etc/key\n    content: hunter2\n    sensitive: true\n",
                ),
            )
            .file("extra/layer.yaml", layer(30, "{role: db}", extra))
    };
    let (old, new) = (key(""), key("  File[key]:\n    content: swordfish\n"));
    let text = text_of(&old, &new);
    assert!(
        text.contains("    (sensitive)  extra     precedence 30\n"),
        "{text}"
    );
    for out in [text, json_of(&old, &new), text_of(&new, &old)] {
        assert!(
            !out.contains("hunter2") && !out.contains("swordfish"),
            "{out}"
        );
    }
}

#[test]
fn a_layer_order_change_with_no_field_effect_changes_the_host() {
    // base now folds after roles/web; they set different resources.
    let new = base().file(
        "base/layer.yaml",
        layer(
            40,
            "{}",
            "  File[motd]:\n    path: /etc/motd\n    content: hi\n",
        ),
    );
    let (a, b) = (loaded(&base()), loaded(&new));
    let d = diff(Some(a.side()), Some(b.side()));
    assert!(d.has_changes());
    assert_eq!(
        text::render(&d, "old", "new"),
        "old: old\nnew: new\n3 hosts change, 0 added, 0 removed, 1 unchanged\n\n\
         changed: web-001\n  layers\n    \
         order  base, roles/web, hosts/web-001 → roles/web, base, hosts/web-001\n\n\
         changed (2 hosts): web-002, web-003\n  layers\n    \
         order  base, roles/web → roles/web, base\n"
    );
    let json = json_of(&base(), &new);
    assert!(
        json.contains(
            "\"order\": {\n          \"old\": [\n            \"base\",\n            \"roles/web\"\n          ],\n          \"new\": [\n            \"roles/web\",\n            \"base\"\n          ]\n        }"
        ),
        "{json}"
    );
    // A layer that is only added moves no shared layer: no order line.
    let added = base().file(
        "extra/layer.yaml",
        layer(5, "{role: web}", "  File[x]:\n    path: /x\n"),
    );
    assert!(!text_of(&base(), &added).contains("order"));
}
