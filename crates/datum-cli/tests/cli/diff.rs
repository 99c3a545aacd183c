//! `datum diff` against real git repositories, built here with the `git`
//! CLI in a temporary directory, isolated from the machine's configuration.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, copy_tree, datum, example};

/// A temporary directory holding a repository in `repo/`, whose fleet is
/// at `repo/<prefix>`.
pub(crate) struct Git {
    dir: tempfile::TempDir,
    pub(crate) fleet: PathBuf,
}

impl Git {
    /// A repository holding a copy of `examples/<name>` at `prefix` (or at
    /// the top when empty), committed once.
    pub(crate) fn with_example(name: &str, prefix: &str) -> Git {
        let g = Git::empty(prefix);
        copy_tree(&example(name), &g.fleet);
        g.commit("the example fleet");
        g
    }

    fn empty(prefix: &str) -> Git {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let fleet = if prefix.is_empty() {
            repo.clone()
        } else {
            repo.join(prefix)
        };
        fs::create_dir_all(&fleet).unwrap();
        let g = Git { dir, fleet };
        g.git(&["-c", "init.defaultBranch=main", "init", "-q"]);
        g
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// git's environment, isolated from the machine's configuration.
    fn vars(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let home = self.dir.path();
        vec![
            ("HOME", home.into()),
            ("XDG_CONFIG_HOME", home.into()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
            ("GIT_CONFIG_GLOBAL", home.join("gitconfig").into()),
            ("GIT_AUTHOR_NAME", "Datum Test".into()),
            ("GIT_AUTHOR_EMAIL", "test@datum.invalid".into()),
            ("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z".into()),
            ("GIT_COMMITTER_NAME", "Datum Test".into()),
            ("GIT_COMMITTER_EMAIL", "test@datum.invalid".into()),
            ("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z".into()),
        ]
    }

    const UNSET: [&'static str; 3] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"];

    fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(self.repo()).envs(self.vars());
        for var in Git::UNSET {
            cmd.env_remove(var);
        }
        let out = cmd.output().expect("running git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    fn short(&self, rev: &str) -> String {
        self.git(&["rev-parse", "--short", rev]).trim().to_owned()
    }

    /// Rewrites a file of the fleet.
    fn edit(&self, path: &str, f: impl FnOnce(String) -> String) {
        let full = self.fleet.join(path);
        let text = fs::read_to_string(&full).unwrap_or_default();
        self.write(path, &f(text));
    }

    fn write(&self, path: &str, text: &str) {
        let full = self.fleet.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }

    /// Runs `datum ARGS --fleet FLEET`.
    pub(crate) fn datum(&self, args: &[&str]) -> Run {
        self.datum_in(&self.fleet, args)
    }

    /// Runs `datum ARGS --fleet DIR` with git's environment isolated too.
    fn datum_in(&self, fleet: &Path, args: &[&str]) -> Run {
        let mut cmd = datum();
        cmd.args(args).arg("--fleet").arg(fleet).envs(self.vars());
        for var in Git::UNSET {
            cmd.env_remove(var);
        }
        let run = Run::from(cmd.output().unwrap());
        assert_ne!(run.code, 101, "datum panicked:\n{}", run.stderr);
        run
    }

    /// The text of a run with commit ids replaced, for snapshots.
    fn stable(&self, text: &str, revs: &[&str]) -> String {
        let mut text = text.to_owned();
        for rev in revs {
            text = text.replace(&self.short(rev), "<commit>");
        }
        text
    }
}

/// A template change reaches each host with its own rendering: the
/// working tree is read from disk, HEAD from git, templates included.
#[test]
fn a_template_change_shows_host_by_host() {
    let g = Git::empty("");
    copy_tree(&example("templates"), &g.fleet);
    g.commit("the templates fleet");
    g.edit("templates/resolv.conf.j2", |t| {
        t.replace(
            "nameserver {{ vars.dns }}",
            "nameserver {{ vars.dns }}\noptions rotate",
        )
    });
    let run = g.datum(&["diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(g.stable(&run.stdout, &["HEAD"]), @r##"
    old: HEAD (<commit>)
    new: working tree
    3 hosts change, 0 added, 0 removed, 0 unchanged

    changed: db-001
      ~ File[resolv]  /etc/resolv.conf
          content  +1 -0  base
            --- /etc/resolv.conf (HEAD (<commit>))
            +++ /etc/resolv.conf (working tree)
            @@ -1,4 +1,5 @@
             # db-001 in london, written by datum
             nameserver 10.1.0.53
            +options rotate
             # time from 0.pool.ntp.org
             # time from 1.pool.ntp.org

    changed: web-001
      ~ File[resolv]  /etc/resolv.conf
          content  +1 -0  base
            --- /etc/resolv.conf (HEAD (<commit>))
            +++ /etc/resolv.conf (working tree)
            @@ -1,5 +1,6 @@
             # web-001 in london, written by datum
             search london.example.org
             nameserver 10.1.0.53
            +options rotate
             # time from 0.pool.ntp.org
             # time from 1.pool.ntp.org

    changed: web-002
      ~ File[resolv]  /etc/resolv.conf
          content  +1 -0  base
            --- /etc/resolv.conf (HEAD (<commit>))
            +++ /etc/resolv.conf (working tree)
            @@ -1,5 +1,6 @@
             # web-002 in frankfurt, written by datum
             search example.org
             nameserver 10.2.0.53
            +options rotate
             # time from 0.pool.ntp.org
             # time from 1.pool.ntp.org
    "##);
    // Each host's new content is its own rendering of the new template.
    let run = g.datum(&["diff", "--format", "json"]);
    assert!(
        run.stdout.contains("nameserver 10.2.0.53\\noptions rotate"),
        "{}",
        run.stdout
    );
}

fn set_web_mode(text: String) -> String {
    text.replace("mode: \"0640\"", "mode: \"0644\"")
}

#[test]
fn a_role_mode_change_reaches_only_hosts_without_a_host_override() {
    let g = Git::with_example("fleet", "");
    g.edit("roles/web/layer.yaml", set_web_mode);
    g.commit("web: mode 0644");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    // web-001 sets its own mode (hosts/web-001): it does not change.
    assert_eq!(
        g.stable(&run.stdout, &["HEAD~1", "HEAD"]),
        "old: HEAD~1 (<commit>)\n\
         new: HEAD (<commit>)\n\
         2 hosts change, 0 added, 0 removed, 3 unchanged\n\
         \n\
         changed (2 hosts): web-002, web-003\n  \
         ~ File[nginx-config]  /etc/nginx/nginx.conf\n      \
         mode  0640 → 0644  roles/web\n"
    );
    let json = g.datum(&["diff", "HEAD~1", "HEAD", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let group = &v["groups"][0];
    assert_eq!(group["hosts"], serde_json::json!(["web-002", "web-003"]));
    let field = &group["resources"][0]["fields"][0];
    assert_eq!(field["field"], "mode");
    assert_eq!(field["old"]["value"], "0640");
    assert_eq!(field["new"]["value"], "0644");
    assert_eq!(field["old"]["layers"], serde_json::json!(["roles/web"]));
    // Layers go by path; their names are given once per side.
    let names = &v["layer_names"];
    assert_eq!(names["old"], names["new"]);
    assert_eq!(names["new"].as_array().unwrap().len(), 9, "{names}");
    assert_eq!(
        names["new"][0],
        serde_json::json!({"layer": "base", "name": "base"})
    );
    assert_eq!(
        names["new"][6],
        serde_json::json!({"layer": "roles/web", "name": "role-web"})
    );
    assert_eq!(field["new"]["layers"], serde_json::json!(["roles/web"]));
}

#[test]
fn by_default_head_is_compared_with_the_working_tree() {
    let g = Git::with_example("fleet", "");
    let run = g.datum(&["diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        g.stable(&run.stdout, &["HEAD"]),
        "old: HEAD (<commit>)\nnew: working tree\n0 hosts change, 0 added, 0 removed, 5 unchanged\n"
    );
    // Uncommitted, and an untracked layer: the working tree is what is on disk.
    g.edit("roles/web/layer.yaml", set_web_mode);
    g.write(
        "hosts/web-002/layer.yaml",
        "datum: v1alpha1\ntype: Layer\nname: host-web-002\nprecedence: 100\nmatch:\n  labels:\n    datum/host: web-002\nresources:\n  File[nginx-config]:\n    mode: \"0400\"\n",
    );
    let run = g.datum(&["diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(g.stable(&run.stdout, &["HEAD"]));
    // One revision: that revision against the working tree.
    g.commit("two");
    g.edit("roles/web/layer.yaml", |t| t.replace("0644", "0640"));
    let one = g.datum(&["diff", "HEAD~1"]);
    assert_eq!(
        g.stable(&one.stdout, &["HEAD~1"]),
        "old: HEAD~1 (<commit>)\nnew: working tree\n1 host changes, 0 added, 0 removed, 4 unchanged\n\n\
         changed: web-002\n  layers\n    + hosts/web-002\n  ~ File[nginx-config]  /etc/nginx/nginx.conf\n      \
         mode  0640 → 0400  roles/web → hosts/web-002\n"
    );
}

#[test]
fn a_changed_payload_file_shows_in_the_diff_and_sensitive_ones_say_only_that() {
    let g = Git::with_example("fleet", "");
    g.edit("files/nginx.conf", |t| t + "# tuned\n");
    g.edit("files/redis.conf", |t| {
        t.replace("example-not-a-secret", "another-not-a-secret")
    });
    g.commit("payloads");
    let run = g.datum(&["diff", "HEAD~1", "HEAD", "--exit-code"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let old_sha = sha256_of(&g.git(&["show", "HEAD~1:files/nginx.conf"]));
    let new_sha = sha256_of(&g.git(&["show", "HEAD:files/nginx.conf"]));
    assert_eq!(
        g.stable(&run.stdout, &["HEAD~1", "HEAD"]),
        format!(
            "old: HEAD~1 (<commit>)\n\
             new: HEAD (<commit>)\n\
             4 hosts change, 0 added, 0 removed, 1 unchanged\n\
             \n\
             changed: cache-001\n  \
             ~ File[redis-config]  /etc/redis/redis.conf\n      \
             source_sha256  (sensitive) changed  roles/cache\n\
             \n\
             changed (3 hosts): web-001, web-002, web-003\n  \
             ~ File[nginx-config]  /etc/nginx/nginx.conf\n      \
             source_sha256  +1 -0  roles/web\n        \
             --- /etc/nginx/nginx.conf (HEAD~1 (<commit>))\n        \
             +++ /etc/nginx/nginx.conf (HEAD (<commit>))\n        \
             @@ -14,3 +14,4 @@\n        \
             \x20        root /var/www/current;\n        \
             \x20    }}\n        \
             \x20}}\n        \
             +# tuned\n",
        )
    );
    let json = g.datum(&["diff", "HEAD~1", "HEAD", "--format", "json"]);
    assert!(!json.stdout.contains("secret"));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let redis = &v["groups"][0]["resources"][0]["fields"][0];
    assert_eq!(redis["new"]["redacted"], true);
    assert_eq!(redis["new"]["value"], serde_json::Value::Null);
    let nginx = &v["groups"][1]["resources"][0]["fields"][0];
    assert_eq!(nginx["old"]["value"], old_sha.as_str());
    assert_eq!(nginx["new"]["value"], new_sha.as_str());
}

fn sha256_of(text: &str) -> String {
    let mut cmd = Command::new("sha256sum");
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

const WEB_TLS: &str = "# Written at the precedence of roles/web: on London web hosts, nothing\n\
# says which mode wins.\n\
datum: v1alpha1\ntype: Layer\nname: web-tls\nprecedence: 30\nmatch:\n  labels:\n    role: web\n    site: london\n\
resources:\n  File[nginx-config]:\n    mode: \"0600\"\n";

#[test]
fn an_introduced_conflict_shows_with_its_hosts_and_fails_the_new_side() {
    let g = Git::with_example("fleet", "");
    g.write("roles/web-tls/layer.yaml", WEB_TLS);
    g.commit("tls");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    // Status 1: the new side has hosts that do not resolve, with or
    // without --exit-code (1 comes before 3).
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(g.stable(&run.stdout, &["HEAD~1", "HEAD"]));
    assert_eq!(
        g.stable(&run.stderr, &["HEAD"]),
        "error: the new side, HEAD (<commit>), has 2 hosts that do not resolve\n  = hint: `datum check` on that side lists every problem\n"
    );
    let run = g.datum(&["diff", "HEAD~1", "HEAD", "--exit-code"]);
    assert_eq!(run.code, 1);
    // The other way round the change fixes the conflict: the new side
    // resolves, so --exit-code gives 3 and no option gives 0.
    let back = g.datum(&["diff", "HEAD", "HEAD~1", "--exit-code"]);
    assert_eq!(back.code, 3, "{}", back.stderr);
    assert!(
        back.stdout.contains(
            "resolves now (2 hosts): web-001, web-002\n  fixed: conflicting values for File[nginx-config].mode\n"
        ),
        "{}",
        back.stdout
    );
    assert_eq!(g.datum(&["diff", "HEAD", "HEAD~1"]).code, 0);
    let json = g.datum(&["diff", "HEAD~1", "HEAD", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["failing"], serde_json::json!(["web-001", "web-002"]));
    let group = &v["groups"][0];
    assert_eq!(group["kind"], "breaks");
    let error = &group["errors"]["introduced"][0];
    assert_eq!(error["code"], "conflict");
    assert_eq!(
        error["primary"]["location"],
        serde_json::json!({"path": "roles/web/layer.yaml", "line": 20, "column": 11})
    );
    assert_eq!(error["hosts"], serde_json::json!(["web-001", "web-002"]));
}

#[test]
fn exit_code_is_0_without_changes_and_3_with_them() {
    let g = Git::with_example("fleet", "");
    assert_eq!(g.datum(&["diff", "--exit-code"]).code, 0);
    g.edit("roles/web/layer.yaml", set_web_mode);
    assert_eq!(g.datum(&["diff", "--exit-code"]).code, 3);
    assert_eq!(g.datum(&["diff"]).code, 0);
}

#[test]
fn hosts_added_and_removed() {
    let g = Git::with_example("fleet", "");
    g.edit("inventory/london.yaml", |t| {
        let i = t.find("---\ndatum: v1alpha1\ntype: Host\nname: db-001").unwrap();
        format!(
            "{}---\ndatum: v1alpha1\ntype: Host\nname: web-004\nlabels:\n  role: web\n  site: london\n  environment: production\n",
            &t[..i]
        )
    });
    let run = g.datum(&["diff", "--exit-code"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        g.stable(&run.stdout, &["HEAD"]),
        "old: HEAD (<commit>)\nnew: working tree\n0 hosts change, 1 added, 1 removed, 4 unchanged\n\n\
         added\n  web-004  environment=production  role=web  site=london\n\n\
         removed\n  db-001\n"
    );
}

#[test]
fn a_revision_without_the_fleet_has_no_hosts() {
    let g = Git::empty("fleet");
    fs::write(g.repo().join("README"), "nothing yet\n").unwrap();
    g.commit("empty");
    copy_tree(&example("fleet"), &g.fleet);
    g.commit("the fleet");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        g.stable(&run.stderr, &["HEAD~1"]),
        "note: HEAD~1 (<commit>) has no directory `fleet`, so the fleet does not exist at that revision: every host there counts as absent\n"
    );
    assert!(
        run.stdout
            .contains("0 hosts change, 5 added, 0 removed, 0 unchanged\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn revisions_and_repositories_that_are_not_there_are_bad_usage() {
    let g = Git::with_example("fleet", "deploy/fleet");
    let run = g.datum(&["diff", "nope"]);
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .starts_with("error: `nope` does not name a commit in "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("  = hint: name a commit: HEAD~1, a branch, a tag or an id; in CI, fetch enough history for the base revision (actions/checkout: fetch-depth: 0)\n"),
        "{}",
        run.stderr
    );
    let plain = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), plain.path());
    let run = g.datum_in(plain.path(), &["diff"]);
    assert_eq!(run.code, 64, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: not inside a git repository"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_fleet_in_a_subdirectory_reads_its_own_path_at_each_revision() {
    let g = Git::with_example("fleet", "deploy/fleet");
    g.edit("roles/web/layer.yaml", set_web_mode);
    g.commit("mode");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("changed (2 hosts): web-002, web-003\n"));
    assert!(Path::new(&g.fleet).ends_with("deploy/fleet"));
}

#[test]
fn control_characters_in_names_and_values_are_escaped() {
    let g = Git::with_example("fleet", "");
    let dir = "evil\n    + fake\x1b[2J";
    g.write(
        &format!("{dir}/layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: evil\nprecedence: 35\nmatch:\n  labels:\n    role: web\n\
         resources:\n  File[evil]:\n    path: /etc/evil\n    content: \"a\\e]0;title\\a\\rb\"\n",
    );
    g.commit("a hostile layer");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bad: Vec<char> = run
        .stdout
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(bad.is_empty(), "{bad:?}:\n{}", run.stdout);
    let shown = "evil\\n    + fake\\u{1b}[2J";
    assert!(
        run.stdout
            .contains(&format!("  layers\n    + {shown}\n  + File[evil]")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("content  \"a\\u{1b}]0;title\\u{7}\\rb\""),
        "{}",
        run.stdout
    );
}

#[test]
fn a_host_whose_layer_order_changes_is_changed() {
    let g = Git::with_example("fleet", "");
    // Production's layer now folds after the sites; it sets nothing they set.
    g.edit("environments/production/layer.yaml", |t| {
        t.replace("precedence: 10", "precedence: 25")
    });
    g.commit("production after sites");
    let run = g.datum(&["diff", "HEAD~1", "HEAD", "--exit-code"]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "changed: web-001\n  layers\n    order  base, environments/production, sites/london, roles/web, hosts/web-001 → base, sites/london, environments/production, roles/web, hosts/web-001\n"
        ),
        "{}",
        run.stdout
    );
    let json = g.datum(&["diff", "HEAD~1", "HEAD", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let web = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["hosts"][0] == "web-001")
        .unwrap();
    assert_eq!(web["layers"]["order"]["new"][1], "sites/london");
    assert_eq!(web["resources"], serde_json::json!([]));
}

/// The git reader decides which files are documents by the same rule as
/// the working tree: odd spellings of `datum` are documents, a payload over
/// the document size limit is no problem, and a host without its version
/// line fails the side that has it.
#[test]
fn a_revision_finds_the_same_document_files_as_the_working_tree() {
    use crate::document_files::ODD_HOSTS;
    let g = Git::with_example("fleet", "");
    for (path, text) in ODD_HOSTS {
        g.write(path, text);
    }
    let line = format!("  - {}\n", "x".repeat(76));
    g.write(
        "files/big.yaml",
        &format!("items:\n{}", line.repeat((33 << 20) / line.len())),
    );
    g.commit("odd hosts and a large payload");
    let run = g.datum(&["diff", "--exit-code"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("0 hosts change, 5 added, 0 removed, 5 unchanged"),
        "{}",
        run.stdout
    );
    g.write(
        "inventory/forgot.yaml",
        "type: Host\nname: web-009\nlabels: {role: web, site: london, environment: staging}\n",
    );
    g.commit("a host without its version");
    let run = g.datum(&["diff", "HEAD~1", "HEAD"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("inventory/forgot.yaml:1:1")
            && run
                .stderr
                .contains("this looks like a Datum document but has no `datum:` version"),
        "{}",
        run.stderr
    );
}

/// Three hosts, two in london: a template whose rendering depends only on
/// the site, so the london hosts get the same change.
const MOTD_FLEET: &[(&str, &str)] = &[
    ("datum.yaml", "datum: v1alpha1\ntype: Fleet\nname: motd\n"),
    (
        "hosts.yaml",
        "datum: v1alpha1\ntype: Host\nname: web-001\nlabels: {site: london}\n---\n\
         datum: v1alpha1\ntype: Host\nname: web-002\nlabels: {site: london}\n---\n\
         datum: v1alpha1\ntype: Host\nname: web-003\nlabels: {site: paris}\n",
    ),
    (
        "base.yaml",
        "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {}\n\
         resources:\n  File[motd]:\n    path: /etc/motd\n    template: templates/motd.j2\n",
    ),
    (
        "templates/motd.j2",
        "Welcome to {{ labels.site }}.\none\ntwo\nthree\nfour\nfive\nsix\nseven\n",
    ),
];

#[test]
fn a_template_change_is_a_unified_diff_once_per_group_of_hosts() {
    let g = Git::empty("");
    for (path, text) in MOTD_FLEET {
        g.write(path, text);
    }
    g.commit("motd");
    g.edit("templates/motd.j2", |t| {
        t.replace("six\n", "six and a half\n") + "eight\n"
    });
    let run = g.datum(&["diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Each site renders its own text, but the change draws the same on
    // every host: it is shown once, with the three of them.
    assert_eq!(
        g.stable(&run.stdout, &["HEAD"]),
        "old: HEAD (<commit>)\n\
         new: working tree\n\
         3 hosts change, 0 added, 0 removed, 0 unchanged\n\
         \n\
         changed (3 hosts): web-001, web-002, web-003\n  \
         ~ File[motd]  /etc/motd\n      \
         content  +2 -1  base.yaml\n        \
         --- /etc/motd (HEAD (<commit>))\n        \
         +++ /etc/motd (working tree)\n        \
         @@ -4,5 +4,6 @@\n         \
         three\n         \
         four\n         \
         five\n        \
         -six\n        \
         +six and a half\n         \
         seven\n        \
         +eight\n"
    );
    // The JSON keeps each distinct rendering: two groups.
    let json = g.datum(&["diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["groups"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn content_diffs_escape_control_characters() {
    let g = Git::empty("");
    for (path, text) in MOTD_FLEET {
        g.write(path, text);
    }
    g.commit("motd");
    g.edit("templates/motd.j2", |t| {
        t.replace("two\n", "two\x1b[2J\r\n")
    });
    let run = g.datum(&["diff"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bad: Vec<char> = run
        .stdout
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(bad.is_empty(), "{bad:?}:\n{}", run.stdout);
    assert!(
        run.stdout
            .contains("        -two\n        +two\\u{1b}[2J\\r\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn stat_sums_up_by_layer_and_resource_and_name_only_lists_hosts() {
    let g = Git::with_example("fleet", "");
    g.edit("roles/web/layer.yaml", set_web_mode);
    g.edit("files/nginx.conf", |t| t + "# tuned\n");
    g.edit("inventory/london.yaml", |t| {
        let i = t.find("---\ndatum: v1alpha1\ntype: Host\nname: db-001").unwrap();
        format!(
            "{}---\ndatum: v1alpha1\ntype: Host\nname: web-004\nlabels:\n  role: web\n  site: london\n  environment: production\n",
            &t[..i]
        )
    });
    let run = g.datum(&["diff", "--stat"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "roles/web  File[nginx-config]  3 hosts  mode, source_sha256\n\
         3 hosts change, 1 added, 1 removed, 1 unchanged\n"
    );
    let run = g.datum(&["diff", "--name-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "db-001\nweb-001\nweb-002\nweb-003\nweb-004\n");
    // --exit-code still says whether anything changed.
    assert_eq!(g.datum(&["diff", "--name-only", "--exit-code"]).code, 3);
    // Both are text: with JSON, or with each other, bad usage.
    assert_eq!(g.datum(&["diff", "--stat", "--format", "json"]).code, 64);
    assert_eq!(g.datum(&["diff", "--stat", "--name-only"]).code, 64);
}
