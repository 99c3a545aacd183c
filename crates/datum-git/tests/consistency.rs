//! For any committed tree, discovery at the commit equals `DirReader`'s
//! discovery on a checkout of that commit, and so do the files listed below
//! a directory (`templates/`), which paths the `.gitignore` rules ignore,
//! and what reading a `source` payload gives.

mod common;

use common::{Fixture, sorted};
use datum_core::reader::{DirReader, Reader};
use datum_git::Repo;
use proptest::prelude::*;

/// Where the fleet sits in the repository.
const PREFIXES: &[&str] = &["", "fleet", "ops/site/fleet"];

/// Directories inside the fleet.
const DIRS: &[&str] = &[
    "", "a", "a/b", "b", "build", "build/a", "sub", "a/sub", ".h", "a/.h",
];

/// Directories inside the fleet that may hold a `.gitignore` (fewer than
/// [`DIRS`], so that files in nested directories often meet rules from
/// several of them).
const IGNORE_DIRS: &[&str] = &["", "a", "build", "sub", "a/sub"];

/// File names, YAML and not, hidden and not.
const NAMES: &[&str] = &[
    "x.yaml",
    "y.yml",
    "keep.yaml",
    "n.txt",
    ".z.yaml",
    "sub.yml",
    "X.YAML",
    "b",
];

/// Lines a `.gitignore` may hold: plain, anchored, directory-only, globbed,
/// negated, escaped, comments and blanks. Negations name no hidden file:
/// `DirReader` lets a whitelisted hidden name through (see the crate docs),
/// which the specification does not.
const PATTERNS: &[&str] = &[
    "build/",
    "build",
    "/build",
    "*.yml",
    "!keep.yaml",
    "keep.yaml",
    "x.yaml",
    "/x.yaml",
    "a/x.yaml",
    "**/b/",
    "b/**",
    "sub",
    "!sub",
    "!sub/",
    "*.yaml",
    "!y.yml",
    "a/*",
    "!a/keep.yaml",
    "**/sub/*.yaml",
    "fleet",
    "site/",
    "fleet/a/",
    "site/fleet/x.yaml",
    "*",
    "!x.yaml",
    "a/b/",
    "\\#x.yaml",
    "# x.yaml",
    "",
    "[ab]/x.yaml",
    "?.yml",
    "x.yaml/",
    "!build/",
    "*.txt",
    "b",
    "/a",
    "a/**/x.yaml",
];

/// Negations, drawn more often so that a `.gitignore` in a subdirectory
/// often re-includes what one above it ignores.
const NEGATIONS: &[&str] = &[
    "!keep.yaml",
    "!sub",
    "!sub/",
    "!y.yml",
    "!a/keep.yaml",
    "!x.yaml",
    "!build/",
    "!*.yml",
    "!a",
    "!b/",
];

/// Symbolic links that might be committed (never discovered). A
/// `.gitignore` that is a link is read by neither reader.
const LINKS: &[(&str, &str)] = &[
    ("a/.gitignore", "../rules.txt"),
    (".gitignore", "rules.txt"),
    ("l.yaml", "x.yaml"),
    ("a/l.yml", "../y.yml"),
    ("dirlink", "a"),
    ("dirlink.yaml", "a"),
];

#[derive(Debug, Clone)]
struct Tree {
    prefix: &'static str,
    files: Vec<(usize, usize)>,
    /// `.gitignore` contents by directory, fleet-relative or (when starting
    /// with `^`) repository-relative above the fleet.
    ignores: Vec<(String, Vec<&'static str>)>,
    links: Vec<usize>,
}

fn ancestors(prefix: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let parts: Vec<&str> = prefix.split('/').filter(|p| !p.is_empty()).collect();
    for i in 1..parts.len() {
        out.push(parts[..i].join("/"));
    }
    if prefix.is_empty() {
        out.clear();
    }
    out
}

fn tree() -> impl Strategy<Value = Tree> {
    (0..PREFIXES.len()).prop_flat_map(|p| {
        let prefix = PREFIXES[p];
        let mut ignore_dirs: Vec<String> = ancestors(prefix)
            .into_iter()
            .map(|a| format!("^{a}"))
            .collect();
        ignore_dirs.extend(IGNORE_DIRS.iter().map(|d| d.to_string()));
        let n_dirs = ignore_dirs.len();
        (
            proptest::collection::vec((0..DIRS.len(), 0..NAMES.len()), 1..25),
            proptest::collection::vec(
                (
                    0..n_dirs,
                    proptest::collection::vec(
                        prop_oneof![
                            2 => proptest::sample::select(PATTERNS),
                            1 => proptest::sample::select(NEGATIONS),
                        ],
                        1..5,
                    ),
                ),
                0..5,
            ),
            proptest::collection::vec(0..LINKS.len(), 0..3),
        )
            .prop_map(move |(files, ignores, links)| Tree {
                prefix,
                files,
                ignores: ignores
                    .into_iter()
                    .map(|(d, lines)| (ignore_dirs[d].clone(), lines))
                    .collect(),
                links,
            })
    })
}

fn in_fleet(prefix: &str, path: &str) -> String {
    [prefix, path]
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/")
}

fn check(t: &Tree) -> Result<(), TestCaseError> {
    let f = Fixture::new();
    f.write(&in_fleet(t.prefix, "datum.yaml"), "datum: v1alpha1\n");
    // Rules that would hide everything, where neither reader may read them:
    // above the work tree, and behind links named `.gitignore`.
    std::fs::write(f.repo.parent().unwrap().join(".gitignore"), "*\n").unwrap();
    f.write(&in_fleet(t.prefix, "rules.txt"), "*.yaml\n*.yml\n");
    for &(d, n) in &t.files {
        let path = in_fleet(t.prefix, &in_fleet(DIRS[d], NAMES[n]));
        // A name may already be a directory (`b`), or a directory a file.
        let full = f.repo.join(&path);
        if full.is_dir() || full.parent().is_some_and(|p| p.is_file()) {
            continue;
        }
        if let Some(parent) = full.parent()
            && parent.ancestors().any(|a| a.is_file())
        {
            continue;
        }
        f.write(&path, "datum: v1alpha1\n");
    }
    for (dir, lines) in &t.ignores {
        let dir = match dir.strip_prefix('^') {
            Some(above) => above.to_owned(),
            None => in_fleet(t.prefix, dir),
        };
        let path = in_fleet(&dir, ".gitignore");
        if f.repo.join(&dir).ancestors().any(|a| a.is_file()) {
            continue;
        }
        f.write(&path, lines.join("\n") + "\n");
    }
    for &l in &t.links {
        let (path, target) = LINKS[l];
        let path = in_fleet(t.prefix, path);
        let full = f.repo.join(&path);
        if full.symlink_metadata().is_ok() || full.ancestors().skip(1).any(|a| a.is_file()) {
            continue;
        }
        f.symlink(target, &path);
    }
    f.commit_all("tree");

    let fleet = f.repo.join(t.prefix);
    let repo = Repo::discover(&fleet).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let git = repo
        .reader(
            &repo
                .resolve("HEAD")
                .map_err(|e| TestCaseError::fail(e.to_string()))?,
        )
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // Everything was committed, ignored files included, so the work tree is
    // a checkout of HEAD (its `.git` is hidden from DirReader).
    let status = f.git(&[
        "status",
        "--porcelain",
        "--ignored",
        "--untracked-files=all",
    ]);
    prop_assert_eq!(status, "");
    let dir = DirReader::new(&fleet).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let from_git = sorted(
        git.discover()
            .map_err(|e| TestCaseError::fail(e.to_string()))?,
    );
    let from_dir = sorted(
        dir.discover()
            .map_err(|e| TestCaseError::fail(e.to_string()))?,
    );
    if std::env::var_os("DATUM_GIT_SHOW_CASES").is_some() {
        eprintln!(
            "{} ignores, {} discovered: {from_git:?}",
            t.ignores.len(),
            from_git.len()
        );
    }
    prop_assert_eq!(&from_git, &from_dir);
    // Every discovered file reads the same bytes both ways.
    for path in &from_git {
        prop_assert_eq!(git.read(path, 1 << 20).ok(), dir.read(path, 1 << 20).ok());
    }
    same_payloads(&git, &dir)
}

/// The files below each directory (what `templates/` offers), and whether
/// the rules ignore any path, existing or not, are the same both ways.
fn same_payloads(git: &dyn Reader, dir: &dyn Reader) -> Result<(), TestCaseError> {
    for d in DIRS.iter().filter(|d| !d.is_empty()) {
        let listed = |r: &dyn Reader| r.list_payloads(d).map(sorted).map_err(|e| e.to_string());
        prop_assert_eq!(listed(git), listed(dir), "below {}", d);
    }
    for d in DIRS {
        for name in NAMES.iter().chain(&["new.j2"]) {
            let path = in_fleet(d, name);
            prop_assert_eq!(git.is_ignored(&path), dir.is_ignored(&path), "{}", path);
            same_source(git, dir, &path)?;
        }
    }
    for (link, _) in LINKS {
        for below in ["", "/x.yaml", "/keep.yaml"] {
            same_source(git, dir, &format!("{link}{below}"))?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn git_discovery_equals_dir_discovery(t in tree()) {
        check(&t)?;
    }
}

/// A `source` payload reads the same bytes, or fails the same way, both
/// ways: an ignored one is refused even though it was committed.
fn same_source(git: &dyn Reader, dir: &dyn Reader, path: &str) -> Result<(), TestCaseError> {
    let read = |r: &dyn Reader| r.read_source(path, 1 << 20);
    prop_assert_eq!(read(git), read(dir), "source {}", path);
    Ok(())
}

/// The diagnostics of a fleet loaded through `reader`, as printed.
/// `fleet/`: datum.yaml, one host (web-001) and `base.yaml`, a layer
/// matching every host whose `resources:` body is `resources`.
fn base_fleet(f: &Fixture, resources: &str) {
    f.write(
        "fleet/datum.yaml",
        "datum: v1alpha1\ntype: Fleet\nname: t\n",
    );
    f.write(
        "fleet/hosts.yaml",
        "datum: v1alpha1\ntype: Host\nname: web-001\n",
    );
    f.write(
        "fleet/base.yaml",
        format!(
            "datum: v1alpha1\ntype: Layer\nname: base\nprecedence: 0\nmatch: {{}}\nresources:\n{resources}"
        ),
    );
}

fn diagnostics(reader: &dyn Reader) -> String {
    let fleet = datum_core::loader::load(reader).unwrap();
    let mut out = Vec::new();
    for d in &fleet.diagnostics {
        datum_core::present::diagnostic::write(d, &fleet.files, &mut out).unwrap();
    }
    String::from_utf8(out).unwrap()
}

/// A `source` in a directory that does not exist is looked for in the
/// whole fleet, by both readers: the suggestion is the same.
#[test]
fn a_source_in_a_missing_directory_gets_the_same_suggestion_from_both_readers() {
    let f = Fixture::new();
    base_fleet(
        &f,
        "  \
         File[notes]:\n    path: /etc/notes\n    source: file/notes.txt\n",
    );
    f.write("fleet/files/notes.txt", "notes\n");
    f.commit_all("a typo in a directory name");
    let fleet = f.repo.join("fleet");
    let repo = Repo::discover(&fleet).unwrap();
    let git = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    let from_git = diagnostics(&git);
    assert_eq!(from_git, diagnostics(&DirReader::new(&fleet).unwrap()));
    assert!(
        from_git.contains("did you mean `files/notes.txt`?"),
        "{from_git}"
    );
}

/// A template the `.gitignore` ignores is no template, in the working tree
/// as in a commit: whether git left it out (`git add -A`) or it was
/// committed anyway (`git add -f`), both readers refuse the File naming it
/// at its `template` line, saying it is ignored.
#[test]
fn an_ignored_template_is_refused_alike_in_the_work_tree_and_a_commit() {
    for force in [false, true] {
        let f = Fixture::new();
        base_fleet(
            &f,
            "  \
             File[motd]:\n    path: /etc/motd\n    template: templates/motd.j2\n",
        );
        f.write("fleet/templates/motd.j2", "hello {{ host }}\n");
        f.write("fleet/templates/.gitignore", "*.j2\n");
        if force {
            f.commit_all("everything, the ignored template too");
        } else {
            f.git(&["add", "-A"]);
            f.git(&["commit", "-q", "-m", "what git does not ignore"]);
        }
        let fleet = f.repo.join("fleet");
        let repo = Repo::discover(&fleet).unwrap();
        let git = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
        let dir = DirReader::new(&fleet).unwrap();
        let from_git = diagnostics(&git);
        assert_eq!(from_git, diagnostics(&dir), "git add -f: {force}");
        assert!(
            from_git.starts_with(
                "error: template `templates/motd.j2` is ignored by a `.gitignore` file\n"
            ) && from_git.matches("error:").count() == 1
                && from_git.contains("--> base.yaml:9:15")
                && from_git.contains("change the rule that matches `templates/motd.j2`"),
            "{from_git}"
        );
    }
}

/// A `source` payload the `.gitignore` ignores is refused alike in the work
/// tree and a commit, whether git left it out or it was force-added: named
/// directly, or through a link that is not ignored itself. A missing
/// payload suggests no ignored file.
#[test]
fn an_ignored_source_is_refused_alike_in_the_work_tree_and_a_commit() {
    for force in [false, true] {
        let f = Fixture::new();
        base_fleet(
            &f,
            "  \
             File[key]:\n    path: /etc/key\n    source: files/key.pem\n  \
             File[typo]:\n    path: /etc/typo\n    source: files/key.pen\n  \
             File[current]:\n    path: /etc/current\n    source: files/current\n",
        );
        f.write("fleet/files/key.pem", "secret\n");
        f.write("fleet/files/notes.txt", "notes\n");
        f.symlink("key.pem", "fleet/files/current");
        f.write("fleet/files/.gitignore", "*.pem\n");
        if force {
            f.commit_all("everything, the ignored payload too");
        } else {
            f.git(&["add", "-A"]);
            f.git(&["commit", "-q", "-m", "what git does not ignore"]);
        }
        let fleet = f.repo.join("fleet");
        let repo = Repo::discover(&fleet).unwrap();
        let git = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
        let dir = DirReader::new(&fleet).unwrap();
        let from_git = diagnostics(&git);
        assert_eq!(from_git, diagnostics(&dir), "git add -f: {force}");
        let mut expected = vec![
            "error: source `files/key.pem` is ignored by a `.gitignore` file\n",
            "--> base.yaml:9:13",
            "change the rule that matches `files/key.pem`, and commit the file",
            "error: source `files/key.pen` does not exist\n",
        ];
        expected.extend([
            "error: source `files/current` is ignored by a `.gitignore` file\n",
            "--> base.yaml:15:13",
            "`files/current` is a symbolic link to a path a rule matches",
        ]);
        for e in &expected {
            assert!(from_git.contains(e), "{e:?} in {from_git}");
        }
        assert_eq!(from_git.matches("error:").count(), 3, "{from_git}");
        assert!(!from_git.contains("did you mean"), "{from_git}");
    }
}
