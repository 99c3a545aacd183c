//! The agent configuration's `git:` and `bundle:` sections: where the
//! host's configuration comes from.

use datum_core::hint::Hinted;
use datum_core::schema::normalise_rel_path;
use datum_core::settings::{Node, Value};

use super::{Cx, HINT_MODE, Keys, Source};
use crate::fetch::GitSource;
use crate::http;

impl Cx {
    pub(super) fn git(&mut self, node: Node<'_, '_>) -> Option<Source> {
        const GIT_KEYS: &[&str] = &["remotes", "branch", "fleet", "max_age", "timeout"];
        let entries = self.mapping("git", node, HINT_MODE)?;
        let mut remotes = None;
        let mut remotes_seen = false;
        let mut branch = ("main".to_owned(), node.span());
        let mut fleet = String::new();
        let mut max_age = None;
        let mut timeout = None;
        let mut ok = true;
        for (key, key_span, value) in entries {
            match key {
                "remotes" => {
                    remotes_seen = true;
                    remotes = self.remotes(value);
                }
                "branch" => match self.text("branch", value) {
                    Some(b) => branch = (b.to_owned(), value.span()),
                    None => ok = false,
                },
                "fleet" => match self
                    .text("fleet", value)
                    .map(|f| (f, normalise_rel_path(f)))
                {
                    Some((".", _)) => {}
                    Some((_, Ok(path))) => fleet = path,
                    Some((f, Err(_))) => {
                        self.error(
                            value.span(),
                            format!("`fleet` must be a path inside the repository, found `{f}`"),
                            "write the fleet's directory relative to the top of the repository, as in `fleet: fleet`",
                        );
                        ok = false;
                    }
                    None => ok = false,
                },
                "max_age" => match self.duration("max_age", value) {
                    Some(d) => max_age = Some(d),
                    None => ok = false,
                },
                "timeout" => match self.duration("timeout", value) {
                    Some(d) => timeout = Some(d),
                    None => ok = false,
                },
                _ => {
                    self.unknown("git", key, key_span, GIT_KEYS);
                    ok = false;
                }
            }
        }
        let Some(remotes) = remotes else {
            if !remotes_seen {
                self.error(
                    node.span(),
                    "`git` has no `remotes`",
                    "list the repository's URLs in order of preference: `remotes: [https://git.example.net/fleet.git]`",
                );
            }
            return None;
        };
        let (branch, branch_span) = branch;
        match GitSource::new(remotes, branch) {
            Ok(source) if ok => Some(Source::Git {
                source: match timeout {
                    Some(t) => source.with_timeout(t),
                    None => source,
                },
                fleet,
                max_age,
            }),
            Ok(_) => None,
            Err(e) => {
                let hint = e.hint().unwrap_or_default();
                self.error(branch_span, e.to_string(), hint);
                None
            }
        }
    }

    fn remotes(&mut self, node: Node<'_, '_>) -> Option<Vec<String>> {
        if node.value() != Value::List {
            let found = node.found();
            self.error(
                node.span(),
                format!("`remotes` must be a list, found {found}"),
                "list the repository's URLs in order of preference: `remotes: [https://git.example.net/fleet.git]`",
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for item in node.items() {
            let Some(remote) = self.text("remotes", item) else {
                ok = false;
                continue;
            };
            let local = !remote.contains("://") && !remote.contains(':');
            if local && !remote.starts_with('/') {
                self.error(
                    item.span(),
                    format!("the remote `{remote}` is a relative path"),
                    "write a local repository's absolute path, as in `/srv/fleet.git`",
                );
                ok = false;
                continue;
            }
            // Checked one by one, so a bad one is shown where it is written.
            if let Err(e) = GitSource::new(vec![remote.to_owned()], "main".to_owned()) {
                let hint = e.hint().unwrap_or_default();
                self.error(item.span(), e.to_string(), hint);
                ok = false;
                continue;
            }
            out.push(remote.to_owned());
        }
        if out.is_empty() && ok {
            self.error(
                node.span(),
                "`remotes` is empty",
                "list at least one: `remotes: [https://git.example.net/fleet.git]`",
            );
            return None;
        }
        ok.then_some(out)
    }

    pub(super) fn bundle(&mut self, node: Node<'_, '_>) -> Option<Source> {
        let entries = self.mapping("bundle", node, HINT_MODE)?;
        let mut url = None;
        let mut url_seen = false;
        for (key, key_span, value) in entries {
            match key {
                "url" => {
                    url_seen = true;
                    let Some(u) = self.text("url", value) else {
                        continue;
                    };
                    // Checked with a stand-in name: the template must expand
                    // and name something the agent can fetch.
                    match http::expand(u, "example").and_then(|e| http::locate(&e)) {
                        Ok(http::Location::File(p)) if !p.is_absolute() => self.error(
                            value.span(),
                            format!("the bundle path `{u}` is relative"),
                            "write an absolute path, a file:// URL or an https:// URL",
                        ),
                        Ok(_) => url = Some(u.to_owned()),
                        Err(e) => self.error(
                            value.span(),
                            e.to_string(),
                            "write it as https://config.example.net/bundles/{host}.bundle",
                        ),
                    }
                }
                _ => self.unknown("bundle", key, key_span, &["url"]),
            }
        }
        match url {
            Some(url) => Some(Source::Bundle { url }),
            None => {
                if !url_seen {
                    self.error(
                        node.span(),
                        "`bundle` has no `url`",
                        "write `url: https://config.example.net/bundles/{host}.bundle`",
                    );
                }
                None
            }
        }
    }

    /// `ca_file` is refused when all it could serve is an `https://` git
    /// remote: git's transport does not read it, so the operator's CA would
    /// silently not be the one trusted. With an `https://` `report_url` it
    /// has that to serve, and is kept.
    pub(super) fn ca_file_reach(&mut self, keys: &Keys, source: Option<&Source>) {
        let (Some((span, Some(_))), Some(Source::Git { source, .. })) = (&keys.ca_file, source)
        else {
            return;
        };
        let https = |url: &str| {
            url.get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        };
        if keys.report_url.as_deref().is_some_and(https) {
            return;
        }
        let Some(remote) = source.remotes().iter().find(|r| https(r)) else {
            return;
        };
        self.error(
            *span,
            format!("`ca_file` is not used for the git remote `{remote}`"),
            "git fetches over its own transport, which `ca_file` does not reach (it serves https:// bundle URLs and `report_url`): give the git server a certificate from a public CA or fetch over ssh://, and remove `ca_file`",
        );
    }
}
